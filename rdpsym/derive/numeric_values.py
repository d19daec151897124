r"""Values of a result that has no closed form: its exact pieces where it has them, else certified numerics.

A result of status ``numeric_only`` (the general order was not derived) is still a curve
alpha -> D_alpha. At an order where something exact was derived it is used:

* alpha = 1 (the KL divergence E_P[log P/Q]), alpha = oo (ess sup log P/Q) and removable orders, derived
  by the engine (:mod:`.special_orders`, :mod:`.removable`);
* an integer order k >= 2, by the multinomial expansion of P^k Q^(1-k) into exponential-family terms
  (:func:`rdpsym.derive.integer_order.renyi_divergence_at_integer_order`), recorded in the result by the
  engine for small k (:func:`integer_order_value` derives any other on request, within a time limit);

everywhere else the value is the numeric path's (:func:`rdpsym.numeric.numeric_divergence`) on the
densities the result was derived from, with its error estimate. For a mechanism that is the curve's
definition, the maximum over adjacent pairs and both directions (Mironov 2017, arXiv:1702.07476 v3,
Def. 4); the error of a maximum is at most the largest error of its arguments, since
|max_i a_i - max_i b_i| <= max_i |a_i - b_i|.

A value is returned only when it meets the accuracy asked for; otherwise ``ArithmeticError`` says why
(never a number with fewer correct digits than requested, never NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import mpmath
import sympy as sp

from .._cache import Memo
from .._config import settings

__all__ = ["CurveValue", "directions", "numeric_value", "integer_order_value", "recorded_integer_orders",
           "numeric_digits", "INTEGER_ORDERS_RECORDED"]

#: integer orders the engine derives and records when the general order was not derived (if the time
#: allows: :data:`INTEGER_ORDERS_SECONDS` for all of them)
INTEGER_ORDERS_RECORDED = (2, 3)
#: total seconds for the recorded integer orders of one derivation
INTEGER_ORDERS_SECONDS = 6.0


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


def directions(result, values: Mapping | None = None) -> tuple[tuple[sp.Expr, sp.Expr, sp.Symbol, sp.Set, str], ...]:
    """``(P, Q, x, support, label)`` of every direction whose maximum the result is: both directions of
    every adjacent pair of its mechanism (a family's pairs at the supremum :func:`rdp` shows; for a
    family of integer shifts not shown, its pairs at every integer shift at parameter ``values``,
    :func:`~rdpsym.derive.mechanism_rdp.worst_pairs`; ``ArithmeticError`` otherwise), or its own pair
    of densities. Empty when it has neither."""
    mech = getattr(result, "mechanism", None)
    if mech is not None:
        from .._numbers import ArgumentError
        from .mechanism_rdp import worst_pairs

        try:
            # a family of pairs stands for its supremum over the shift t: the pairs where rdp shows it
            pairs = worst_pairs(mech, values=values)
        except ArgumentError as exc:
            # a numeric maximisation over t is a lower estimate of the supremum, never a certified value
            raise ArithmeticError(f"{result.label}: {exc}") from None
        out = []
        for pair in pairs:
            out.append((pair.P, pair.Q, mech.variable, mech.support, f"D(P||Q) [{pair.label}]"))
            out.append((pair.Q, pair.P, mech.variable, mech.support, f"D(Q||P) [{pair.label}]"))
        return tuple(out)
    if result.pair is not None:
        P, Q, x, support = result.pair
        return ((P, Q, x, support, result.label),)
    return ()


def numeric_value(result, alpha: sp.Expr, values: Mapping[str, sp.Expr], dps: int) -> CurveValue:
    """D_alpha at ``values`` by the numeric path, to ``dps`` digits, maximised over :func:`directions`.

    Raises ``ArithmeticError`` when the result has no densities, when a direction did not converge (a
    direction that could not be computed might hold the maximum: it counts against the value) or when
    the error estimate exceeds ``10^-dps`` relative (absolute ``10^-dps`` for values below 1).
    """
    from ..numeric import numeric_divergence

    dirs = directions(result, values)
    if not dirs:
        raise ArithmeticError(f"{result.label}: no closed form and no densities to compute it from "
                              f"(status {result.status}: {result.reason})")
    wp = numeric_digits(dps)
    parts = []
    for P, Q, x, support, label in dirs:
        by_name = {s.name for s in (P.free_symbols | Q.free_symbols | support.free_symbols) - {x}}
        nv = numeric_divergence(P, Q, x, support, alpha, {k: v for k, v in values.items() if k in by_name}, dps=wp)
        parts.append((label, nv))
    with mpmath.workdps(wp + 10):
        infinite = [nv for _, nv in parts if nv.value == mpmath.inf and nv.converged]
        if infinite:
            return CurveValue(mpmath.inf, mpmath.mpf(0), dps, "numeric: " + infinite[0].method, False,
                              infinite[0].detail)
        bad = [(label, nv) for label, nv in parts if not nv.converged]
        if bad:
            raise ArithmeticError(f"{result.label}: the numeric path did not converge at alpha = {alpha}, "
                                  f"{dict(values)}: " + "; ".join(f"{lab}: {nv.detail}" for lab, nv in bad))
        top = max(parts, key=lambda u: u[1].value)[1]
        error = max(nv.error for _, nv in parts)
        if error > mpmath.mpf(10) ** (-dps) * max(abs(top.value), 1):
            raise ArithmeticError(f"{result.label}: the numeric error {mpmath.nstr(error, 3)} at alpha = {alpha}, "
                                  f"{dict(values)} exceeds the {dps} digits asked for")
        detail = "; ".join(f"{lab}: {mpmath.nstr(nv.value, 15)} ({nv.detail})" for lab, nv in parts)
    with mpmath.workdps(dps):
        return CurveValue(+top.value, +error, dps, "numeric: " + top.method, False, detail)


def _accept(expr) -> bool:
    return expr is not None


_INTEGER_ORDERS = Memo(accept=_accept, maxsize=512)


def _direction_integer_order(P, Q, x, support, k, params, seconds):
    from .integer_order import renyi_divergence_at_integer_order
    from .result import Status

    r = renyi_divergence_at_integer_order(P, Q, x, support, k, params=params, step_seconds=seconds)
    if r.status is not Status.CLOSED_FORM or r.expr is None:
        return None
    value = r.expr.args[0][0] if isinstance(r.expr, sp.Piecewise) else r.expr
    if value.has(sp.nan, sp.zoo, sp.Integral, sp.Sum):
        return None
    if r.conditions is not sp.true:
        value = sp.Piecewise((value, r.conditions.subs(r.alpha, k)), (sp.oo, True))
    return value


def recorded_integer_orders(P, Q, x, support, params, seconds: float) -> tuple[tuple[int, sp.Expr], ...]:
    """``(k, D_k(P||Q))`` for k in :data:`INTEGER_ORDERS_RECORDED`, as many as are derived within
    ``seconds`` in all (the engine records them when the general order was not derived)."""
    import time

    out = []
    deadline = time.monotonic() + seconds
    for k in INTEGER_ORDERS_RECORDED:
        left = deadline - time.monotonic()
        if left <= 0.5:
            break
        value = _INTEGER_ORDERS.get_or_compute(
            (P, Q, x, support, k), lambda: _direction_integer_order(P, Q, x, support, k, params, left))
        if value is None:
            break  # a higher order expands into more terms: it will not derive either
        out.append((k, value))
    return tuple(out)


def integer_order_value(result, k: int, seconds: float | None = None) -> sp.Expr | None:
    """D_k at the integer order ``k`` >= 2 as an exact expression in the parameters (the maximum over
    :func:`directions`), or None when some direction was not derived within ``seconds`` each.

    Derived by the multinomial expansion (:func:`~rdpsym.derive.integer_order.renyi_divergence_at_integer_order`);
    recorded orders (``result.integer_orders``) are returned as they are. A derivation that failed or
    timed out is not kept (asking again tries again)."""
    for order, value in getattr(result, "integer_orders", ()):
        if order == k:
            return value
    dirs = directions(result)
    if not dirs:
        return None
    seconds = settings().step_seconds if seconds is None else seconds
    params = tuple(result.parameters()) if result.symbols else ()
    values = []
    for P, Q, x, support, _ in dirs:
        key = (P, Q, x, support, int(k))
        v = _INTEGER_ORDERS.get_or_compute(
            key, lambda: _direction_integer_order(P, Q, x, support, int(k), params, seconds))
        if v is None:
            return None
        values.append(v)
    return values[0] if len(values) == 1 else sp.Max(*values)
