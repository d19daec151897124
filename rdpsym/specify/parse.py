"""Deprecated: the safe formula parsers moved to :mod:`rdpsym.specify.text`.

``rdpsym.specify.parse`` re-exports the same names for one release and warns on import. Use
``from rdpsym.specify.text import parse, parse_formula, parse_latex, FormulaError`` instead, and
:func:`rdpsym._numbers.exact_number` (or :func:`rdpsym.specify.text.as_number`) for user numbers.
"""

from __future__ import annotations

import warnings

from .text import *  # noqa: F403  (the same public names as before the move)
from .text import __all__  # noqa: F401

warnings.warn(
    "rdpsym.specify.parse is deprecated; import from rdpsym.specify.text instead "
    "(parse, parse_formula, parse_latex, FormulaError, as_number)",
    DeprecationWarning,
    stacklevel=2,
)
