"""The one one-dimensional optimiser: golden-section search, and a scan that brackets it.

Used by the numeric path (D_inf = sup log P/Q, the maximum of the integrand's log), by the conversions
(minimising over the order alpha) and by the accountant. Works on mpmath numbers, or floats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mpmath

__all__ = ["golden_max", "golden_min", "integer_max_bracket", "refine_scan_min"]


def golden_max(f: Callable, a, b, iters: int):
    """Golden-section search for the maximum of ``f`` on ``[a, b]`` (assumed unimodal there).

    Returns ``(x, f(x))`` for the better of the two final interior points; the bracket shrinks by the
    golden ratio 0.618 each of the ``iters`` steps.
    """
    g = (mpmath.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (c, fc) if fc >= fd else (d, fd)


def integer_max_bracket(f: Callable, lo: int, hi: int) -> tuple[int, int]:
    """Ternary search on the integers for the maximum of ``f`` on ``[lo, hi]`` (assumed unimodal there):
    the bracket ``(lo, hi)`` narrowed to at most three integers around it."""
    while hi - lo > 2:
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if f(m1) < f(m2):
            lo = m1
        else:
            hi = m2
    return lo, hi


def golden_min(f: Callable, a, b, iters: int):
    """Golden-section search for the minimum of ``f`` on ``[a, b]``: :func:`golden_max` of ``-f``."""
    x, neg = golden_max(lambda t: -f(t), a, b, iters)
    return x, -neg


def refine_scan_min(f: Callable, points: Sequence, values: Sequence, iters: int, *, best: int = 3):
    """Refine a scan ``values[i] = f(points[i])`` by golden-section search on the brackets
    ``[points[i-1], points[i+1]]`` of its ``best`` lowest finite local minima; returns ``(x, f(x))`` of
    the lowest found (scan points included), or ``(None, inf)`` when no value is finite."""
    finite = [i for i, v in enumerate(values) if mpmath.isfinite(v)]
    if not finite:
        return None, mpmath.inf
    order = sorted(finite, key=lambda i: values[i])[:best]
    x_best, v_best = points[order[0]], values[order[0]]
    for i in order:
        lo, hi = points[max(i - 1, 0)], points[min(i + 1, len(points) - 1)]
        if lo == hi:
            continue
        x, v = golden_min(f, lo, hi, iters)
        if mpmath.isfinite(v) and v < v_best:
            x_best, v_best = x, v
    return x_best, v_best
