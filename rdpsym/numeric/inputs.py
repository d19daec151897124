"""Parameter values of a pair for the numeric path: exact numbers, checked against the symbols'
assumptions, substituted into P, Q and the support.

Floats (and mpfs) are taken at their exact binary value, inside P and Q as in the values: sympy would
otherwise fold ``log(0.5)`` to a 15-digit Float, and every digit past the 16th would be wrong while two
evaluations at different precisions agree.
"""

from __future__ import annotations

import numbers
from typing import Any, Mapping

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from ..specify.text.numbers import exact_number
from ..specify.params import check_assumptions

__all__ = ["exact_floats", "exact_parameter", "parameter_substitution", "substitute_values"]


def exact_parameter(v: Any, name: str) -> sp.Expr:
    """A parameter value as an exact finite real sympy number (floats and mpfs at their exact binary
    value), or :class:`ArgumentError` naming ``values[name]``."""
    label = f"values[{name!r}]"
    try:
        return exact_number(v, label, finite=True, real=True)
    except ArgumentError as exc:
        if isinstance(v, (sp.Basic, numbers.Number, mpmath.mpf)) and not isinstance(v, bool):
            raise ArgumentError(label, "a finite real number", v) from None
        raise exc from None


def exact_floats(e: sp.Expr) -> sp.Expr:
    """e with every sympy Float replaced by the Rational of its exact binary value."""
    floats = e.atoms(sp.Float)
    return e.xreplace({f: sp.Rational(f) for f in floats}) if floats else e


def substitute_values(P, Q, x, support, values) -> tuple[sp.Expr, sp.Expr, sp.Set]:
    """P, Q and the support with the parameters replaced by the exact ``values`` (a dict from symbols
    or their names to numbers), each checked against its symbol's assumptions. Raises ``ValueError``
    naming the missing or bad value."""
    if not isinstance(values, Mapping):
        raise ValueError(f"values must be a dict from parameter symbols or names to numbers, found {type(values).__name__}.")
    by_name = {}
    for k, v in values.items():
        key = k.name if isinstance(k, sp.Symbol) else k
        if not isinstance(key, str):
            raise ValueError(f"values keys must be sympy Symbols or str, found {k!r}.")
        by_name[key] = v
    variables = set(x) if isinstance(x, tuple) else {x}  # a tuple: the variables of a multivariate pair
    free = (P.free_symbols | Q.free_symbols | support.free_symbols) - variables
    missing = sorted(s.name for s in free if s.name not in by_name)
    if missing:
        raise ValueError(f"values is missing parameter(s) {', '.join(missing)}: P and Q must depend on {x} only after substitution.")
    sub = {s: exact_parameter(by_name[s.name], s.name) for s in free}
    for sym, v in sub.items():
        check_assumptions(sym, v, f"values[{sym.name!r}]")
    return P.subs(sub), Q.subs(sub), support.subs(sub)


def parameter_substitution(P, Q, x, values) -> dict:
    """The exact values of the parameters of P and Q (symbol -> sympy number), as substitute_values uses."""
    by_name = {(k.name if isinstance(k, sp.Symbol) else k): v for k, v in values.items()}
    free = (P.free_symbols | Q.free_symbols) - {x}
    return {s: exact_parameter(by_name[s.name], s.name) for s in free}
