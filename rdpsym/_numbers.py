"""The one reading of user numbers, and the one argument error.

Every public entry point that takes a number from a user (a parameter value, an order, a tolerance, a
count) reads it here, so that the same value means the same thing everywhere: floats and mpmath numbers at
their exact binary value, strings through the safe formula parser (never ``sympify``, which evaluates
text as code), NaN refused (``sympy.Rational(nan)`` is 0, which would turn a NaN into a small divergence).

A refusal is an :class:`ArgumentError` (a ``ValueError``) whose message names the argument and the rule it
broke, e.g. ``"values['b'] must be a finite real number; got nan"``.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

__all__ = ["ArgumentError", "exact_number", "exact_or_symbolic", "mp_number", "PreciseMpf", "precise"]

_MISSING = object()


class ArgumentError(ValueError):
    """A user argument that breaks a rule: ``argument`` names it, ``rule`` says what it must be.

    ``str(error)`` reads ``"<argument> must be <rule>; got <value>"`` (or with ``message=`` a full text).
    It is a ``ValueError``, so callers that catch ``ValueError`` keep working.
    """

    def __init__(self, argument: str, rule: str, value: Any = _MISSING, *, message: str | None = None):
        self.argument = argument
        self.rule = rule
        self.value = None if value is _MISSING else value
        if message is None:
            message = f"{argument} must be {rule}"
            if value is not _MISSING:
                message += f"; got {_show(value)}"
        super().__init__(message)


def _show(value: Any) -> str:
    text = value if isinstance(value, str) and not value.strip() else repr(value)
    if isinstance(value, float) and math.isnan(value):
        text = "nan"
    return text if len(text) <= 120 else text[:117] + "..."


def _from_string(text: str, name: str) -> sp.Expr:
    from .specify.text import FormulaError, parse_formula  # the safe parser (lazy: a leaf module)

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
                                                       f"{_show(value)}")
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


class PreciseMpf(mpmath.mpf):
    """An ``mpmath.mpf`` that remembers the ``dps`` digits it was computed with and prints them.

    A plain mpf prints at the *current* mpmath precision (15 digits by default), so
    ``result.evaluate(alpha, dps=40)`` showed 15 digits of a 40-digit value. This subclass keeps the
    value bit for bit (its ``_mpf_`` is rounded to ``dps`` digits once, when made), prints ``dps``
    digits with ``str``/``repr``, becomes a sympy ``Float`` of ``dps`` digits under ``sympify`` and
    pickles with its digits. Arithmetic returns plain mpf numbers at the working precision, as any mpf's.
    """

    __slots__ = ("dps",)

    def __new__(cls, value, dps: int):
        with mpmath.workdps(dps):
            self = mpmath.mpf.__new__(cls, value)
        self.dps = int(dps)
        return self

    def __reduce__(self):
        return (PreciseMpf, (self._mpf_, self.dps))

    def __str__(self) -> str:
        return mpmath.nstr(self, self.dps)

    def __repr__(self) -> str:
        return f"mpf('{mpmath.nstr(self, self.dps)}')"

    def _sympy_(self):
        return sp.Float(self, self.dps)  # the bits as they are, shown with dps digits


def precise(value, dps: int) -> mpmath.mpf:
    """``value`` as a :class:`PreciseMpf` of ``dps`` digits; infinities and NaN as plain mpmath numbers."""
    with mpmath.workdps(dps):
        v = mpmath.mpf(value)
    if not mpmath.isfinite(v):
        return v
    return PreciseMpf(v._mpf_, dps)


def _register_sympy_converter():
    # sympify finds mpmath's own converter (15 digits at the default precision) through the class's MRO
    # before it looks for ``_sympy_``: register this class itself, which comes first in its MRO
    from sympy.core.sympify import converter

    converter[PreciseMpf] = PreciseMpf._sympy_


_register_sympy_converter()
