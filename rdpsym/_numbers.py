"""The one argument error, and numbers that keep their digits.

A refusal of a user argument is an :class:`ArgumentError` (a ``ValueError``) whose message names the
argument and the rule it broke, e.g. ``"values['b'] must be a finite real number; got nan"``.
:class:`PreciseMpf` is an mpmath number that prints the digits it was computed with.

User numbers themselves (floats at their exact binary value, numeric text through the safe formula
parser, NaN refused) are read by :mod:`rdpsym.specify.text.numbers`, beside the parser it needs.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import sympy as sp

__all__ = ["ArgumentError", "PreciseMpf", "SYMBOLIC_ERRORS", "precise", "show_value"]

_MISSING = object()

#: What a symbolic or numeric step raises when sympy, mpmath or python-flint cannot do it: the exceptions
#: a fallback (another rewriting, another method, "not shown") catches. ``RuntimeError`` also covers
#: sympy's ``NotImplementedError`` and ``RecursionError`` and a step that failed in a forked child
#: (:func:`rdpsym._timeout.run_with_time_limit` reports it so); ``LookupError`` and ``AssertionError``
#: come from sympy's internals (``KeyError`` in the assumptions, asserts in ``gruntz`` and ``meijerint``).
#: Never :class:`~rdpsym._timeout.StepTimeout` (a ``BaseException``): a fallback that turns a time limit
#: into "not shown" names it.
SYMBOLIC_ERRORS: tuple[type[Exception], ...] = (
    ArithmeticError, ValueError, TypeError, AttributeError, LookupError, RuntimeError, AssertionError,
    sp.polys.polyerrors.BasePolynomialError, sp.core.function.PoleError, sp.matrices.exceptions.MatrixError,
    mpmath.libmp.NoConvergence,
)


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
                message += f"; got {show_value(value)}"
        super().__init__(message)


def show_value(value: Any) -> str:
    """``value`` as an error message shows it: ``repr``, ``nan`` for a float NaN, at most 120 characters."""
    text = value if isinstance(value, str) and not value.strip() else repr(value)
    if isinstance(value, float) and math.isnan(value):
        text = "nan"
    return text if len(text) <= 120 else text[:117] + "..."


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
