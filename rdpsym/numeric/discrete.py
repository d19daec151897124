r"""Discrete supports: sums at working precision.

Finite supports are summed at working precision; infinite progressions are summed term by term outward
from the mode of ``L``; summation stops when the term ratio ``r < 1`` and the geometric tail bound ``t r
/ (1 - r)`` is below ``10^-wp`` of the sum; that bound goes into ``error`` (valid when the term ratios
are non-increasing, i.e. log-concave tails). Polynomially decaying terms are reported as not converged
(no tail acceleration yet). D_inf is the maximum of ``log P/Q`` over the points, the scanned
progressions and their far values.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from ..specify.support import Support
from .densities import make_L
from .tails import Failed, Infinite, check_end, far

__all__ = ["discrete_once"]


def discrete_once(dens, support: Support, q, a):
    """One evaluation of the quantity ``q`` (order ``a``, an mpf or None) over a discrete support at the
    current precision. Returns (D, error, method, doubts)."""
    L = make_L(dens, q.peak_form, a)
    doubts = []

    def term_parts(k):
        lp, lq = dens.logpq(mpmath.mpf(k))
        if q.infinite_at(lp, lq, a):
            raise Infinite(f"P > 0 where Q = 0 (at x = {k})")
        return lp, lq

    # collect point lists (finite) and progressions
    finite_pts = [mpmath.mpf(sp.Float(p, mpmath.mp.dps + 5)) if not p.is_Integer else int(p)
                  for p in support.finite_points]
    progs = [(int(pc.start), int(pc.step)) for pc in support.progressions]

    # global shift: max of L over finite points and sampled progression points
    Lmax = -mpmath.inf
    prog_samples = []
    # at a finite order away from 1, L itself is +inf where P > 0 = Q (alpha > 1: the max raises
    # below) and -inf where that point adds nothing (alpha < 1): the separate check is redundant
    check_parts = not q.peak_is_integrand
    for k in finite_pts:
        if check_parts:
            term_parts(k)
        Lmax = max(Lmax, L(mpmath.mpf(k)))
    grid_j = sorted(set([0, 1, 2, 3] + [int(2 ** (e / 2)) for e in range(4, 130)]))
    for s0, st in progs:
        vals = []
        for j in grid_j:
            if check_parts:
                term_parts(s0 + st * j)
            vals.append(L(mpmath.mpf(s0 + st * j)))
        prog_samples.append(vals)
        Lmax = max([Lmax] + vals)
    if q.supremum:
        best = Lmax
        for (s0, st), vals in zip(progs, prog_samples):
            i = max(range(len(vals)), key=lambda i: vals[i])
            lo = grid_j[i - 1] if i > 0 else 0
            hi = grid_j[i + 1] if i + 1 < len(grid_j) else grid_j[i]
            if hi - lo <= 4096:
                best = max([best] + [L(mpmath.mpf(s0 + st * j)) for j in range(lo, hi + 1)])
            far_vals = [far(L, lambda k=k: mpmath.mpf(s0 + st * 10 ** k), k + 10) for k in (8, 16, 32, 64)]
            if far_vals[3] > far_vals[2] > far_vals[1] and (far_vals[3] - far_vals[2]) > (far_vals[2] - far_vals[1]) / 4 and far_vals[3] - far_vals[2] > mpmath.mpf(10) ** -5:
                raise Infinite("log P/Q grows without bound along the support")
            if far_vals[3] > -mpmath.inf:
                best = max(best, far_vals[3])
                if far_vals[3] > far_vals[2] and far_vals[3] - far_vals[2] > mpmath.eps * 16 * (1 + abs(far_vals[3])):
                    if far_vals[3] + 4 * (far_vals[3] - far_vals[2]) >= best - mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
                        doubts.append("log P/Q still increases at 1e64; the supremum is a limit")
        if best == -mpmath.inf:
            raise Failed("P = 0 on the whole support")
        return best, mpmath.mpf(0), "max of log P/Q over the support (discrete)", doubts
    if Lmax == mpmath.inf:
        raise Infinite("P > 0 where Q = 0, alpha > 1")
    if Lmax == -mpmath.inf:
        raise Failed("every term vanishes")

    # the quantity's terms, shifted by exp(-Lmax); P > 0 = Q is checked at every point where the peak
    # log does not show it
    logpq = term_parts if check_parts else (lambda k: dens.logpq(mpmath.mpf(k)))
    funcs = q.integrands(a, Lmax, logpq, lambda k: L(mpmath.mpf(k)))
    sums = [mpmath.mpf(0) for _ in funcs]
    tails = [mpmath.mpf(0) for _ in funcs]  # geometric tail bounds, shifted like the sums
    for k in finite_pts:
        for i, f in enumerate(funcs):
            sums[i] += f(k)
    eps = mpmath.eps
    Lbig = make_L(dens, q.check_form, a)
    for (s0, st), vals in zip(progs, prog_samples):
        # divergence check at the far end
        r = check_end(Lbig, mpmath.mpf(s0), st, 1, True, Lmax)
        if r is not None:
            r.apply(doubts)
        # a polynomial (not exponentially small) tail cannot be summed term by term to full precision
        max_terms = 200000
        if far(Lbig, lambda: mpmath.mpf(s0 + st * 10**8), 18) > Lmax - 10**6:
            doubts.append("the terms decay only polynomially; term-by-term summation cannot reach the "
                          "precision (no tail acceleration implemented)")
            max_terms = 20000
        i = max(range(len(vals)), key=lambda i: vals[i])
        lo = grid_j[i - 1] if i > 0 else 0
        hi = grid_j[i + 1] if i + 1 < len(grid_j) else grid_j[i]
        while hi - lo > 2:  # integer ternary search for the mode
            m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
            if L(mpmath.mpf(s0 + st * m1)) < L(mpmath.mpf(s0 + st * m2)):
                lo = m1
            else:
                hi = m2
        jm = lo
        # last grid index with a non-negligible term: do not stop before it
        cut = Lmax - (mpmath.mp.prec * mpmath.log(2) + 20)
        jlast = max([j for j, v in zip(grid_j, vals) if v > cut] + [jm])
        for i, f in enumerate(funcs):
            S = mpmath.mpf(0)
            # downward j = jm-1, ..., 0
            for direction in (-1, 1):
                j = jm if direction == 1 else jm - 1
                prev = None
                n = 0
                while j >= 0:
                    t = f(s0 + st * j)
                    S += t
                    n += 1
                    at = abs(t)
                    if prev is not None and prev > 0 and n > 3 and (direction < 0 or j > jlast):
                        ratio = at / prev
                        if ratio < 1:
                            bound = at * ratio / (1 - ratio)
                            if bound <= eps * abs(S) or at == 0:
                                if direction > 0:
                                    tails[i] += bound
                                break
                    prev = at
                    j += direction
                    if n > max_terms:
                        doubts.append(f"summation stopped after {n} terms without meeting the tail criterion")
                        break
            sums[i] += S
    return (*q.finish(Lmax, list(zip(sums, tails)), a, "term-by-term sum", "Σ"), doubts)
