"""The one search over the order alpha > 1, in ``u = log(alpha - 1)``, for the conversions.

Every conversion (:mod:`rdpsym.accounting.conversions`) is valid at each order alpha > 1, so the best
guarantee is the minimum over continuous alpha. Both the exact converter (mpmath, one order at a time)
and the accountant (numpy, vectorised, with a branch-and-bound scan of its own) scan a log-spaced grid
of ``u`` and then use the two steps here:

* :func:`extend_at_top` — while the scan's minimum sits at its top end the curve may still improve
  (pure-DP-like curves): extend the scan upwards in chunks up to a last ``u``;
* :func:`refine_local_minima` — refine the best local minima of the scan (the objective need not be
  unimodal) by golden-section search on their brackets (:func:`rdpsym._optimize.refine_scan_min`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mpmath

from .._optimize import refine_scan_min

__all__ = ["extend_at_top", "refine_local_minima"]


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
