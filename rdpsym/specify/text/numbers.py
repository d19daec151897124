"""The one reading of user numbers.

Every public entry point that takes a number from a user (a parameter value, an order, a tolerance, a
count) reads it here, so that the same value means the same thing everywhere: floats and mpmath numbers at
their exact binary value, strings through the safe formula parser (:func:`~rdpsym.specify.text.python.parse_formula`
with no symbols; never ``sympify``, which evaluates text as code), NaN refused (``sympy.Rational(nan)`` is
0, which would turn a NaN into a small divergence).

A refusal is an :class:`~rdpsym._numbers.ArgumentError` (a ``ValueError``) whose message names the
argument and the rule it broke, e.g. ``"values['b'] must be a finite real number; got nan"``.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from ..._numbers import ArgumentError, show_value
from .common import FormulaError
from .python import parse_formula

__all__ = ["exact_number", "exact_or_symbolic", "mp_number"]


def _from_string(text: str, name: str) -> sp.Expr:
    try:
        value = parse_formula(text, {})
    except FormulaError as exc:
        raise ArgumentError(name, "a number", message=f"{name} must be a number; cannot read {text!r}: {exc}") from None
    if value.free_symbols:
        raise ArgumentError(name, "a number", message=f"{name} must be a number; got a formula in "
                                                       f"{sorted(map(str, value.free_symbols))}")
    return value


def exact_number(value: Any, name: str = "value", *, finite: bool = False, real: bool = False) -> sp.Expr:
    """``value`` as an exact sympy number.

    Accepts ints (not bools), Fractions, floats and numpy floats (their exact binary value), mpmath mpfs,
    sympy numbers, and numeric strings ("1/3", "2.5", "oo", "sqrt(2)") read by the safe parser. Infinities
    become ``oo``/``-oo`` unless ``finite``; complex values are refused when ``real``. NaN, ``zoo``,
    booleans, formulas with symbols and other types raise :class:`ArgumentError` naming ``name``.
    """
    if isinstance(value, bool):
        raise ArgumentError(name, "a number", value)
    if isinstance(value, str):
        value = _from_string(value, name)
    if isinstance(value, sp.Basic):
        if not value.is_number or value.has(sp.nan, sp.zoo):
            raise ArgumentError(name, "a number", value)
        out = value
    elif isinstance(value, numbers.Integral):
        out = sp.Integer(int(value))
    elif isinstance(value, Fraction):
        out = sp.Rational(value.numerator, value.denominator)
    elif isinstance(value, mpmath.mpf):
        if mpmath.isnan(value):
            raise ArgumentError(name, "a number", float("nan"))
        if mpmath.isinf(value):
            out = sp.oo if value > 0 else -sp.oo
        else:
            man, exp = value.man_exp
            out = sp.Integer(man) * sp.Integer(2) ** exp
    elif isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            raise ArgumentError(name, "a number", float("nan"))
        out = (sp.oo if v > 0 else -sp.oo) if math.isinf(v) else sp.Rational(v)
    else:
        raise ArgumentError(name, "a number", message=f"{name} must be a number; got {type(value).__name__} "
                                                       f"{show_value(value)}")
    if finite and out.is_finite is False:
        raise ArgumentError(name, "a finite number", value)
    if real and out.is_extended_real is False:
        raise ArgumentError(name, "a real number", value)
    return out


def exact_or_symbolic(value: Any, name: str = "value") -> sp.Expr:
    """A sympy expression with free symbols as it is (a caller may leave parameters symbolic), else
    :func:`exact_number`; NaN and ``zoo`` are refused either way."""
    if isinstance(value, sp.Basic) and not value.is_number:
        if value.has(sp.nan, sp.zoo):
            raise ArgumentError(name, "a number or a formula without NaN", value)
        return value
    return exact_number(value, name)


def mp_number(value: Any, name: str = "value", *, finite: bool = False) -> mpmath.mpf:
    """``value`` as a real mpmath number at the working precision (exact inputs are rounded once)."""
    if isinstance(value, mpmath.mpf):
        if mpmath.isnan(value) or (finite and mpmath.isinf(value)):
            raise ArgumentError(name, "a finite real number" if finite else "a real number", value)
        return value
    if isinstance(value, float) and not isinstance(value, bool):
        if math.isnan(value) or (finite and math.isinf(value)):
            raise ArgumentError(name, "a finite real number" if finite else "a real number", value)
        return mpmath.mpf(value)
    exact = exact_number(value, name, finite=finite, real=True)
    if exact.is_infinite:
        return mpmath.inf if exact > 0 else mpmath.ninf
    return mpmath.mpf(sp.Float(exact, mpmath.mp.dps + 5))
