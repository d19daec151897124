"""Deprecated: the safe formula parsers moved to :mod:`rdpsym.specify.text`.

``rdpsym.specify.parse`` re-exports the same names for one release and warns on import. Use
``from rdpsym.specify.text import parse, parse_formula, parse_latex, FormulaError`` instead, and
:func:`rdpsym._numbers.exact_number` (or :func:`rdpsym.specify.text.as_number`) for user numbers.
"""

from __future__ import annotations

import warnings

from .text import (
    FUNCTION_NAMES,
    MAX_COMBINATORIAL_ARG,
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_NUMBER_BITS,
    MAX_POWER_BITS,
    MAX_RADICAND_BITS,
    FormulaError,
    as_number,
    parse,
    parse_formula,
    parse_latex,
)
from .text.common import GREEK, GREEK_COMMANDS, MAX_ARGS, MAX_DECIMAL_EXPONENT, OPERATOR_CHARS

__all__ = [
    "as_number",
    "FormulaError",
    "parse",
    "parse_formula",
    "parse_latex",
    "FUNCTION_NAMES",
    "MAX_LENGTH",
    "MAX_DEPTH",
    "MAX_NUMBER_BITS",
    "MAX_POWER_BITS",
    "MAX_RADICAND_BITS",
    "MAX_COMBINATORIAL_ARG",
    "MAX_DECIMAL_EXPONENT",
    "MAX_ARGS",
    "GREEK",
    "GREEK_COMMANDS",
    "OPERATOR_CHARS",
]

warnings.warn(
    "rdpsym.specify.parse is deprecated; import from rdpsym.specify.text instead "
    "(parse, parse_formula, parse_latex, FormulaError, as_number)",
    DeprecationWarning,
    stacklevel=2,
)
