r"""Certified bounds on e^{j h} for runs of integers j, and on e^v for single floats (Arb, python-flint).

numpy's ``exp`` carries no error bound, so every exponential the bracket depends on comes from here.
A run j = start .. stop - 1 is cut into blocks of K (about sqrt(n), at most 4096): the block's anchor e^{j0 h} and the steps e^{i h},
i < K, are Arb balls (``exp`` of the exact products j h: h is a float, a dyadic rational), rounded to
floats a and s with relative errors e_a, e_s bounded in Arb; the float product fl(a s) is then within
relative e_a + e_s + e_a e_s + u of the exact value, and the bounds returned are that product scaled by
(1 -+ (that + 4u)). Results beyond the float range are +inf (upper) and the largest float (lower);
below it, 0 (lower) and the smallest subnormal (upper).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .taylor import PREC, f_down, f_up

__all__ = ["exp_grid", "exp_bounds", "log_bounds", "expm1_bounds"]

U = 2.0 ** -53
K_MAX = 4096
_TINY = 5e-324


def _flint():
    import flint

    return flint


def _rel(ball, value: float) -> float:
    """An upper bound on |value - x| / |x| over the ball x (inf when the ball reaches 0 or is not finite)."""
    flint = _flint()
    if not ball.is_finite() or ball.contains(0) or not math.isfinite(value):
        return math.inf
    return f_up((flint.arb(value) - ball).abs_upper() / ball.abs_lower())


@lru_cache(maxsize=64)
def _steps(h: float, K: int) -> tuple[np.ndarray, float]:
    flint = _flint()
    with flint.ctx.workprec(PREC):
        hh = flint.arb(h)
        vals = np.empty(K)
        err = 0.0
        for i in range(K):
            b = (hh * i).exp()
            v = float(b.mid())
            vals[i] = v
            err = max(err, _rel(b, v))
    return vals, err


def exp_grid(h: float, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi): floats with lo <= e^{j h} <= hi for j = start .. stop - 1 (module docstring)."""
    flint = _flint()
    n = max(0, stop - start)
    if n == 0:
        return np.empty(0), np.empty(0)
    # blocks of K: about 2 sqrt(n) Arb exponentials in all (the steps are kept per h for the runs of a grid)
    K = K_MAX if n > K_MAX * 16 else max(16, 1 << max(4, (int(math.isqrt(n)) - 1).bit_length()))
    steps, e_s = _steps(float(h), K)
    blocks = (n + K - 1) // K
    anchors = np.empty(blocks)
    e_a = np.empty(blocks)
    with flint.ctx.workprec(PREC):
        hh = flint.arb(h)
        for b in range(blocks):
            ball = (hh * (start + b * K)).exp()
            v = float(ball.mid())
            anchors[b] = v
            e_a[b] = _rel(ball, v) if math.isfinite(v) and v > 0 else math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        prod = (anchors[:, None] * steps[None, :]).ravel()[:n]
        rel = (e_a[:, None] + e_s + e_a[:, None] * e_s + 5 * U) * np.ones((1, K))
        rel = rel.ravel()[:n]
        lo = prod * (1 - rel)
        hi = prod * (1 + rel)
    big = ~np.isfinite(prod) | ~np.isfinite(rel) | (rel >= 0.5)
    if big.any():  # out of the float range (or an anchor of no accuracy): the exact values, one by one
        with flint.ctx.workprec(PREC):
            for i in np.nonzero(big)[0]:
                ball = (flint.arb(h) * int(start + i)).exp()
                lo[i], hi[i] = max(0.0, f_down(ball)), f_up(ball)
        lo = np.where(np.isfinite(lo), lo, np.finfo(float).max)
    lo = np.maximum(lo, 0.0)
    hi = np.maximum(hi, _TINY)
    return lo, hi


def exp_bounds(v: float) -> tuple[float, float]:
    """(lo, hi) with lo <= e^v <= hi."""
    flint = _flint()
    if v == -math.inf:
        return 0.0, 0.0
    if v == math.inf:
        return np.finfo(float).max, math.inf
    with flint.ctx.workprec(PREC):
        b = flint.arb(v).exp()
        return max(0.0, f_down(b)), max(f_up(b), _TINY)


def expm1_bounds(v: float) -> tuple[float, float]:
    """(lo, hi) with lo <= e^v - 1 <= hi."""
    flint = _flint()
    with flint.ctx.workprec(PREC):
        b = flint.arb(v).expm1()
        return f_down(b), f_up(b)


def log_bounds(v) -> tuple[float, float]:
    """(lo, hi) with lo <= log(v) <= hi for a float or an arb ball v > 0 (-inf/+inf where not defined)."""
    flint = _flint()
    with flint.ctx.workprec(PREC):
        b = v if isinstance(v, flint.arb) else flint.arb(v)
        if not (b > 0):
            return -math.inf, (math.inf if not (b <= 0) else -math.inf)
        r = b.log()
        return f_down(r), f_up(r)
