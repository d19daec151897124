"""Safe parsers from formula text (Python-like or LaTeX) to sympy expressions.

Users paste formulas from papers and from other libraries; the text is **untrusted**. Nothing here
evaluates text: there is no ``eval``/``exec``, no ``sympify``/``parse_expr``/``S(str)``, no sympy LaTeX
parser. Both parsers *construct* sympy objects themselves from a whitelist, so no input can trigger an
import, an attribute access, a file access or code execution.

Public API
----------
``parse_formula(text, symbols, *, functions=None)``
    Python-like syntax (what people paste from numpy/math/sympy code); grammar in :mod:`.python`.
``parse_latex(text, symbols, *, functions=None)``
    The LaTeX that papers write; grammar in :mod:`.latex`.
``parse(text, symbols, syntax="auto", *, functions=None)``
    ``"python"``, ``"latex"`` or ``"auto"`` (LaTeX if the text contains a backslash or ``{``).
``as_number(value, name="value")``
    An exact sympy number from a user's value (:func:`rdpsym.specify.text.numbers.exact_number`).

``symbols``, ``functions``, :class:`FormulaError` and the resource limits are described in
:mod:`.common`, which both parsers share.

Layout: :mod:`.common` (limits, error, names, functions, guarded construction), :mod:`.python`,
:mod:`.latex_tokens` and :mod:`.latex`; :mod:`.numbers` reads user numbers (numeric text through
:func:`parse_formula`); this module adds the dispatcher :func:`parse`.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp

from . import common
from .common import *  # noqa: F403  (the limits, FormulaError, names and FUNCTION_NAMES: common.__all__)
from .latex import parse_latex
from .numbers import exact_number
from .python import parse_formula

__all__ = ["as_number", "parse", "parse_formula", "parse_latex"]
__all__ += common.__all__


def parse(
    text: str,
    symbols: Mapping[str, sp.Basic],
    syntax: str = "auto",
    *,
    functions: set[str] | None = None,
) -> sp.Expr:
    """Parse ``text`` as ``"python"``, ``"latex"`` or ``"auto"`` (LaTeX if it has ``\\`` or ``{``)."""
    if syntax not in ("auto", "python", "latex"):
        raise ValueError(f"syntax must be 'auto', 'python' or 'latex'; found {syntax!r}")
    if syntax == "auto":
        syntax = "latex" if isinstance(text, str) and ("\\" in text or "{" in text) else "python"
    if syntax == "latex":
        return parse_latex(text, symbols, functions=functions)
    return parse_formula(text, symbols, functions=functions)


def as_number(value, name: str = "value") -> sp.Expr:
    """An exact sympy number from a user's value: never ``sympify`` (which evaluates strings as code).

    The one reading of user numbers, :func:`rdpsym.specify.text.numbers.exact_number`, under its older name: ints,
    Fractions, floats and numpy floats (at their exact binary value), mpmath mpfs, sympy numbers, and
    numeric strings ("1/3", "2.5", "oo", "sqrt(2)") read by :func:`parse_formula` with no symbols.
    Infinities become ``oo``/``-oo``; NaN, non-numbers and formulas with symbols raise a ``ValueError``
    (:class:`~rdpsym._numbers.ArgumentError`) naming ``name``.
    """
    return exact_number(value, name)
