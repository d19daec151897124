"""How rdpsym shows sympy objects to people: :func:`sstr` (text) and :func:`latex` (LaTeX).

User numbers are read at their exact value (:func:`rdpsym.specify.text.numbers.exact_number`): a float
is its exact binary value, so ``q = 0.01`` is 5764607523034235/576460752303423488 inside, and every
computation uses that value. Shown to a person, the same number is the decimal the user wrote: the
shortest decimal that reads back as that float (Python's ``repr``; Steele and White 1990, Gay 1990),
which denotes the same binary value when it is read as a float.

The rule, written once here for every presenter (reports, descriptions, results, verdicts): a rational
is shown as a decimal exactly when it *is* a float's value (a power-of-two denominator and at most 53
significant bits) and its shortest decimal is not itself exact. So 1/2 stays 1/2 and 1/3 stays 1/3, and
1 - q stays the fraction it is (it is no float's value). Only the printed text changes, never an
expression: the decimal is a printing-only symbol substituted into a copy for the printer.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import sympy as sp

__all__ = ["float_decimal", "shown", "sstr", "latex", "SPECIAL_ORDER_NAMES"]

#: what each kind of :meth:`rdpsym.DivergenceResult.special_orders` row is, as every presentation names it
SPECIAL_ORDER_NAMES = {"kl": "KL divergence", "max": "max divergence", "removable": "removable singularity",
                       "integer": "integer order, exact"}


def float_decimal(value: Any) -> str | None:
    """The shortest decimal of the float whose exact value is ``value`` (``"0.01"``), or None when
    ``value`` is not a float's exact value or that decimal is exact (``1/2`` is ``0.5`` exactly: the
    rational is shown as it is)."""
    if not isinstance(value, sp.Rational) or value.is_Integer:
        return None
    q = int(value.q)
    if q & (q - 1):  # not a power of two: no float has this value
        return None
    f = float(value)
    if not math.isfinite(f) or f == 0.0 or Fraction(f) != Fraction(int(value.p), q):
        return None
    text = repr(f)
    return None if Fraction(text) == Fraction(int(value.p), q) else text


class _Decimal(sp.Symbol):
    """A float's decimal in place of its exact value, for printing only (never computed with)."""

    @classmethod
    def class_key(cls):
        return 1, 0, "Number"  # ordered as a number: a coefficient first in a product

    def _sympystr(self, printer) -> str:
        return self.name

    def _latex(self, printer) -> str:
        mantissa, _, exponent = self.name.partition("e")
        if not exponent:
            return mantissa
        power = r"10^{%d}" % int(exponent)
        return power if mantissa in ("1", "1.0") else rf"{mantissa} \cdot {power}"

    _pretty = None  # the pretty printer shows the name (a Symbol's default)


def shown(expr: Any) -> Any:
    """A copy of ``expr`` for printing, each float-valued rational replaced by its decimal
    (:func:`float_decimal`); ``expr`` itself when there is none, or it cannot be rebuilt so."""
    if not isinstance(expr, sp.Basic):
        return expr
    swap = {}
    for r in expr.atoms(sp.Rational):
        text, inverse = float_decimal(abs(r)), None
        if text is None and not r.is_Integer:
            inverse = float_decimal(1 / abs(r))  # b/q: its coefficient 1/q is no float's value, q is
        if text is not None or inverse is not None:
            d = _Decimal(text, positive=True) if text is not None else 1 / _Decimal(inverse, positive=True)
            swap[r] = d if r > 0 else -d
    if not swap:
        return expr
    try:
        return expr.xreplace(swap)
    except (TypeError, ValueError):  # a constructor that insists on numbers (Range): the exact value
        return expr


def sstr(expr: Any, **settings) -> str:
    """``sympy.sstr`` with floats shown as their decimals (:func:`shown`)."""
    return sp.sstr(shown(expr), **settings)


def interval(iv: sp.Interval) -> str:
    """An interval as a paper writes it: (0, 1/2], [0, 1)."""
    return ("(" if iv.left_open else "[") + f"{sstr(iv.inf)}, {sstr(iv.sup)}" + (")" if iv.right_open else "]")


def latex(expr: Any, **settings) -> str:
    """``sympy.latex`` with floats shown as their decimals (:func:`shown`)."""
    return sp.latex(shown(expr), **settings)
