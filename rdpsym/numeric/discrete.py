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
from .quantities import KL, FiniteOrder, Form, NearOne, Sup
from .tails import Failed, Infinite, check_end, far

__all__ = ["discrete_once"]


def discrete_once(dens, support: Support, q, a):
    """One evaluation of the quantity ``q`` (order ``a``, an mpf or None) over a discrete support at the
    current precision. Returns (D, error, method, doubts)."""
    near1, kl, sup = isinstance(q, NearOne), isinstance(q, KL), isinstance(q, Sup)
    L = make_L(dens, Form.RATIO if sup else (Form.FINITE if isinstance(q, FiniteOrder) and not near1 else Form.WEIGHT), a)
    doubts = []
    tail_err = mpmath.mpf(0)

    def term_parts(k):
        lp, lq = dens.logpq(mpmath.mpf(k))
        if lp > -mpmath.inf and lq == -mpmath.inf and (kl or sup or a > 1):
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
    check_parts = not (isinstance(q, FiniteOrder) and not near1)
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
    if sup:
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

    if kl:
        def term(k):
            lp, lq = term_parts(k)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            return mpmath.exp(lp - Lmax) * (lp - lq)
    elif near1:
        am1 = a - 1
        def term(k):
            lp, lq = term_parts(k)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            if lq == -mpmath.inf:
                return -mpmath.exp(lp - Lmax)
            return mpmath.exp(lp - Lmax) * mpmath.expm1(am1 * (lp - lq))
    else:
        def term(k):
            v = L(mpmath.mpf(k))
            if v == mpmath.inf:
                raise Infinite(f"P > 0 where Q = 0 (at x = {k}), alpha > 1")
            return mpmath.exp(v - Lmax) if v > -mpmath.inf else mpmath.mpf(0)

    def pterm(k):
        lp, _ = dens.logpq(mpmath.mpf(k))
        return mpmath.exp(lp - Lmax) if lp > -mpmath.inf else mpmath.mpf(0)

    funcs = [term] + ([pterm] if near1 else [])
    sums = [mpmath.mpf(0) for _ in funcs]
    for k in finite_pts:
        for i, f in enumerate(funcs):
            sums[i] += f(k)
    eps = mpmath.eps
    Lbig = make_L(dens, Form.KLABS if kl else Form.FINITE, a)
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
                                    tail_err += bound * mpmath.exp(Lmax)
                                break
                    prev = at
                    j += direction
                    if n > max_terms:
                        doubts.append(f"summation stopped after {n} terms without meeting the tail criterion")
                        break
            sums[i] += S
    scale = mpmath.exp(Lmax)
    if kl:
        return sums[0] * scale, tail_err + eps * abs(sums[0] * scale), "term-by-term sum, KL", doubts
    if near1:
        J, M = sums[0] * scale, sums[1] * scale
        logI = mpmath.log(M) + mpmath.log1p(J / M)
        return logI / (a - 1), (tail_err / M + eps) / abs(a - 1), "term-by-term sum, I = ΣP + ΣP expm1((alpha-1) log P/Q)", doubts
    if sums[0] <= 0:
        raise Failed("the sum is not positive")
    logI = Lmax + mpmath.log(sums[0])
    return logI / (a - 1), (tail_err / (sums[0] * scale) + 4 * eps) / abs(a - 1), "term-by-term sum, log-sum-exp", doubts
