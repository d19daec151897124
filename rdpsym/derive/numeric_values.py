r"""Values of a result that has no closed form: its exact pieces where it has them, else certified numerics.

A result of status ``numeric_only`` (the general order was not derived) is still a curve
alpha -> D_alpha. At an order where something exact was derived it is used:

* alpha = 1 (the KL divergence E_P[log P/Q]), alpha = oo (ess sup log P/Q) and removable orders, derived
  by the engine (:mod:`.special_orders`, :mod:`.removable`);
* an integer order k >= 2, by the multinomial expansion of P^k Q^(1-k) into exponential-family terms
  (:func:`rdpsym.derive.integer_order.renyi_divergence_at_integer_order`), recorded in the result by the
  engine for small k (:func:`rdpsym.derive.integer_order.integer_order_value` derives any other on
  request, within a time limit);

everywhere else the value is the numeric maximum (:func:`rdpsym.numeric.maximum.numeric_maximum`) over
the result's directions, with its error estimate: for a mechanism the curve's definition, the maximum
over its worst pairs and both directions (Mironov 2017, arXiv:1702.07476 v3, Def. 4), which
:func:`rdpsym.rdp` attaches to the result as a :class:`NumericCurve` (data: the pairs, never the
engine); for a result of one pair of densities (``result.pair``), that one direction.

A value is returned only when it meets the accuracy asked for; otherwise ``ArithmeticError`` says why
(never a number with fewer correct digits than requested, never NaN): a direction that did not converge
fails the maximum, unless a converged +oo wins (the rule of :func:`rdpsym.numeric.maximum.maximum_of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from ..numeric.maximum import Direction, numeric_maximum
from ..numeric.value import NumericValue
from .worst import WorstPairs

__all__ = ["CurveValue", "NumericCurve", "directions", "numeric_value", "numeric_digits"]


@dataclass(frozen=True)
class CurveValue:
    """A value of a divergence curve with how it was obtained.

    ``value`` is an ``mpmath.mpf`` (``+inf`` allowed, never NaN) with ``dps`` digits; ``error`` an
    absolute error estimate of ``value`` (for an exact piece, the rounding to ``dps`` digits); ``exact``
    whether it comes from an exact expression (closed form, KL, D_inf, removable or integer order);
    ``method`` names the route and ``detail`` the numeric path's account; ``bound``: the value is an
    upper bound of the divergence, not its value (a subsampled mechanism's curve where its exact value
    is not reached, :mod:`rdpsym.derive.subsampled`).
    """

    value: mpmath.mpf
    error: mpmath.mpf
    dps: int
    method: str
    exact: bool
    detail: str = ""
    bound: bool = False

    def __float__(self) -> float:
        return float(self.value)


def numeric_digits(dps: int) -> int:
    """The numeric path's working digits for ``dps`` correct ones: its convergence rule certifies
    60% of its digits (:mod:`rdpsym.numeric.driver`), so it runs at ``ceil(dps / 0.6)``."""
    return max(10, math.ceil(dps / 0.6))


@dataclass(frozen=True)
class NumericCurve:
    """The numeric fallback :func:`rdpsym.rdp` attaches to a mechanism's result without a closed form: the
    worst pairs (:class:`~.worst.WorstPairs`, data the engine found) over the variable ``x`` and
    ``support``. Its values are :func:`numeric_value` over :meth:`directions`."""

    worst: WorstPairs
    x: Any
    support: sp.Set

    def directions(self, values: Mapping | None = None) -> tuple[Direction, ...]:
        """Both directions of every worst pair at parameter ``values`` (``ArgumentError`` for a family whose
        supremum was not shown and that no finite set of pairs stands for)."""
        return self.worst.directions(self.x, self.support, values)

    def value(self, result, alpha: sp.Expr, values: Mapping, dps: int) -> CurveValue:
        return numeric_value(result, alpha, values, dps)


def directions(result, values: Mapping | None = None) -> tuple[Direction, ...]:
    """The directions whose maximum the result is: those of its :class:`NumericCurve` at parameter
    ``values`` (a family's pairs at the supremum :func:`rdp` shows, or for a family of integer shifts not
    shown its pairs at every integer shift at ``values``; ``ArithmeticError`` otherwise), or its own pair
    of densities. Empty when it has neither."""
    if isinstance(result.curve, NumericCurve):
        try:
            return result.curve.directions(values)
        except ArgumentError as exc:
            # a numeric maximisation over t is a lower estimate of the supremum, never a certified value
            raise ArithmeticError(f"{result.label}: {exc}") from None
    if result.pair is not None:
        P, Q, x, support = result.pair
        return (Direction(P, Q, x, support, result.label),)
    return ()


def numeric_value(result, alpha: sp.Expr, values: Mapping[str, sp.Expr], dps: int) -> CurveValue:
    """D_alpha at ``values`` by the numeric maximum over :func:`directions`, to ``dps`` digits.

    Raises ``ArithmeticError`` when the result has no densities, when a direction did not converge (a
    direction that could not be computed might hold the maximum: it counts against the value, unless a
    converged +oo wins) or when the error estimate exceeds ``10^-dps`` relative (absolute ``10^-dps``
    for values below 1).
    """
    dirs = directions(result, values)
    if not dirs:
        raise ArithmeticError(f"{result.label}: no closed form and no densities to compute it from "
                              f"(status {result.status}: {result.reason})")
    wp = numeric_digits(dps)
    found = numeric_maximum(dirs, alpha, values, wp)
    with mpmath.workdps(wp + 10):
        label, top = found.top
        if not found.converged:
            raise ArithmeticError(f"{result.label}: the numeric path did not converge at alpha = {alpha}, "
                                  f"{dict(values)}: " + found.describe_failures())
        if found.value == mpmath.inf:
            return CurveValue(mpmath.inf, mpmath.mpf(0), dps, "numeric: " + top.method, False, top.detail)
        if found.error > mpmath.mpf(10) ** (-dps) * max(abs(found.value), 1):
            raise ArithmeticError(f"{result.label}: the numeric error {mpmath.nstr(found.error, 3)} at alpha = "
                                  f"{alpha}, {dict(values)} exceeds the {dps} digits asked for")
        detail = "; ".join(f"{lab}: {mpmath.nstr(nv.value, 15)} ({nv.detail})" for lab, nv in found.parts)
    # the value returned at dps digits: its rounding is part of the error stated (NumericValue.rounded)
    rounded = NumericValue.rounded(found.value, found.error, dps, top.method, True, detail)
    return CurveValue(rounded.value, rounded.error, dps, "numeric: " + top.method, False, detail)
