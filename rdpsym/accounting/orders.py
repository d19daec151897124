"""The one search over the order alpha > 1, in ``u = log(alpha - 1)``, for the conversions.

Every conversion (:mod:`rdpsym.accounting.conversions`) is valid at each order alpha > 1, so the best
guarantee is the minimum over continuous alpha. :func:`minimise` finds it for the one conversion
procedure (:func:`rdpsym.accounting.conversion.optimise`), over a math namespace
(:mod:`rdpsym.accounting.mathns`: mpmath for the exact converter, numpy for the accountant):

* a scan of ``SCAN_POINTS + 1`` points of ``u`` with ``alpha - 1`` from ``1e-6`` to ``1e6``, evaluated as
  one batch; or, given a cheap lower bound of the objective, a branch-and-bound scan that evaluates the
  objective only where the bound could still win;
* :func:`extend_at_top` — while the scan's minimum sits at its top end the curve may still improve
  (pure-DP-like curves): extend the scan upwards ``EXTEND_CHUNK`` points at a time up to
  ``alpha - 1 = 1e12``;
* :func:`refine_local_minima` — refine the best local minima of the scan (the objective need not be
  unimodal) by golden-section search on their brackets (:func:`rdpsym._optimize.refine_scan_min`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import mpmath

from .._optimize import refine_scan_min
from .mathns import MathNamespace

__all__ = ["minimise", "extend_at_top", "refine_local_minima", "SCAN_LOG10", "SCAN_POINTS", "EXTEND_LOG10",
           "EXTEND_CHUNK", "PRUNE_BATCH"]

#: The scan of u = log(alpha - 1): alpha - 1 from 1e-6 to 1e6 in SCAN_POINTS steps ...
SCAN_LOG10 = (-6.0, 6.0)
SCAN_POINTS = 240
#: ... extended by EXTEND_CHUNK steps at a time up to alpha - 1 = 1e12 while the minimum is at the top.
EXTEND_LOG10 = 12.0
EXTEND_CHUNK = 20
#: Scan points evaluated at a time in the branch-and-bound scan.
PRUNE_BATCH = 8


def _first_argmin(values: Sequence) -> int:
    return min(range(len(values)), key=lambda i: values[i])


def extend_at_top(us: list, values: list, f_many: Callable[[list], Sequence], chunk: int, top) -> int:
    """Extend the scan ``values[i] = f(us[i])`` (in place) by ``chunk`` points of its step at a time while
    its first minimum is its last point and ``us[-1] < top``; ``f_many(points)`` evaluates a chunk.
    Returns the number of evaluations added."""
    added = 0
    while len(values) > 1 and _first_argmin(values) == len(values) - 1 and us[-1] < top:
        step = us[1] - us[0]
        extra = [us[-1] + step * k for k in range(1, chunk + 1)]
        us += extra
        values += list(f_many(extra))
        added += len(extra)
    return added


def refine_local_minima(f: Callable, us: Sequence, values: Sequence, iters: int, best: int = 3):
    """Golden-section refinement of the ``best`` lowest finite local minima of the scan
    ``values[i] = f(us[i])`` on their brackets ``[us[i-1], us[i+1]]``; returns ``(u, f(u))`` of the
    lowest found (scan points included), or ``(None, inf)`` when no value is finite.

    A point is a local minimum when it is no larger than its neighbours (the ends have one); the lowest
    finite point always is one, so a scan with a finite value always has a candidate.
    """
    n = len(values)
    local = [v if mpmath.isfinite(v) and (i == 0 or v <= values[i - 1]) and (i == n - 1 or v <= values[i + 1])
             else mpmath.inf for i, v in enumerate(values)]
    return refine_scan_min(f, us, local, iters, best=best)


def minimise(f_many: Callable[[list], Sequence], m: MathNamespace, iterations: int, *,
             lower_many: Callable[[list], Sequence] | None = None):
    """Minimise an objective over alpha > 1 in ``u = log(alpha - 1)`` (module docstring).

    ``f_many(alphas)`` evaluates the objective at a batch of orders (numbers of the namespace ``m``), one
    value per order, +inf where it makes no claim (never NaN). ``iterations``: golden-section steps per
    refined local minimum (40 shrink a bracket of 0.23 in u to ~1e-9). ``lower_many``, when given, is a
    lower bound of the objective at a batch of orders (the objective of the cheap curves alone): the
    scan evaluates the objective in order of increasing bound and stops when the next bound is no better
    than the best value found, so every skipped point has a value >= the best and the scan's minimum
    (and its neighbours' order) is a full scan's.

    Returns ``(alpha, value, at_edge, evaluations)``: ``alpha`` is None when the objective is +inf
    everywhere; ``at_edge`` says that the minimum lies within one step of the searched range's ends;
    ``evaluations`` counts the orders at which ``f_many`` was asked.
    """
    ln10 = m.log(m.scalar(10))
    lo, hi, n = SCAN_LOG10[0] * ln10, SCAN_LOG10[1] * ln10, SCAN_POINTS
    step = (hi - lo) / n
    us = [lo + k * step for k in range(n)] + [hi]

    def orders(points):
        return list(m.map(lambda u: 1 + m.exp(u), points))

    alphas = orders(us)
    if lower_many is None:
        vals = list(f_many(alphas))
        evaluations = len(us)
    else:
        # Branch and bound over the scan: a conversion's objective is non-decreasing in the curve and the
        # curves left out of the bound are >= 0, so bound <= objective at every order. Evaluating in order
        # of increasing bound and stopping when the next bound is no better than the best value found
        # skips only points whose value is >= the best: the scan's minimum is a full scan's.
        bound = list(lower_many(alphas))
        vals = [m.inf] * len(us)
        ranked = sorted(range(len(us)), key=bound.__getitem__)  # stable, as the scan's ties are
        best_seen, pos, evaluations = math.inf, 0, 0
        while pos < len(ranked) and bound[ranked[pos]] < best_seen:
            batch = ranked[pos:pos + PRUNE_BATCH]
            for i, v in zip(batch, f_many([alphas[i] for i in batch])):
                vals[i] = v
                best_seen = min(best_seen, v)
            evaluations += len(batch)
            pos += PRUNE_BATCH
    evaluations += extend_at_top(us, vals, lambda extra: f_many(orders(extra)), EXTEND_CHUNK,
                                 EXTEND_LOG10 * ln10)
    count = [0]

    def at(u):
        count[0] += 1
        return f_many(orders([m.scalar(u)]))[0]

    best_u, best = refine_local_minima(at, us, vals, iterations)
    evaluations += count[0]
    if best_u is None:
        return None, m.inf, False, evaluations
    best_u = m.scalar(best_u)
    at_edge = bool(best_u <= us[0] + step or best_u >= us[-1] - step)
    return 1 + m.exp(best_u), best, at_edge, evaluations
