r"""Discrete supports: sums at working precision, cut by proved tail bounds on the summand itself.

Finite supports are summed at working precision. An infinite progression ``k_j = s0 + st j`` is summed
term by term outward from the mode of the summand ``exp(L)`` (``L = alpha log P + (1 - alpha) log Q``
at a finite order), which moves with the order: for Pois(lam + 1) against Pois(lam) at alpha = 1000 it
sits at ``k ~ 2.8e41``, far beyond any fixed scan. The mode is found on a logarithmic grid, followed
out (the exponent doubling) while the grid's largest value is its last, and refined by integer ternary
search.

Each side stops at a point ``J`` where the terms are negligible and the rest is *bounded*: the ratio
test with a term ratio proved non-increasing beyond ``J`` and the ratio at ``J`` bounded in ball
arithmetic (:mod:`.ratios`), applied to the summand itself at its own order (or, for the KL and the
near-one form, to terms ``P^b Q^(1-b)`` that majorise them: :meth:`~.quantities.Quantity.majorants`).
The bound goes into ``error``. Where the ratio's monotonicity cannot be shown symbolically (Bessel
functions: the Skellam pmf), the geometric series of the ratio at ``J`` bounds the rest when the ratios
sampled beyond ``J`` (``J`` to ``2^40 J``) keep decreasing, and the detail says the bound is not
proved.

Refused (a doubt, so not converged): a summand whose significant terms are more than
:data:`MAX_TERMS` (the work budget; a count, never a time), polynomially decaying terms (no tail
acceleration), a tail that no bound could be put on within the budget. D_inf is the maximum of ``log
P/Q`` over the points, the scanned progressions and their far values.
"""

from __future__ import annotations

import math

import mpmath
import sympy as sp

from .._optimize import integer_max_bracket
from ..specify.support import Support
from .densities import make_L
from .quantities import Form
from .ratios import bound_at
from .scales import Unsettled, digits_needed, require_digits
from .tails import Failed, Infinite, check_end, far, far_exponents, ray_limit

__all__ = ["MAX_TERMS", "discrete_once"]

#: the most terms summed per progression and integrand (a work budget, not a time)
MAX_TERMS = 200000
#: the same for polynomially decaying terms (refused anyway: it only bounds the work)
MAX_TERMS_SLOW = 20000
#: the most digits an offset where the summand's mode is searched may have (a count: the ternary search makes
#: about six evaluations per digit)
MAX_MODE_DIGITS = 400
#: the grid of offsets j on which a progression's summand is scanned first
GRID_J = sorted(set([0, 1, 2, 3] + [int(2 ** (e / 2)) for e in range(4, 130)]))


def _scan(L, s0: int, st: int, limit=None):
    """The summand's log on the grid :data:`GRID_J`, followed out while the grid's largest value is its
    last (offsets 2^128, 2^256, ...: the exponent doubling, values settled at the precision they
    need), until it falls, up to ``2^(2^14)`` or to ``10^limit`` (a decimal exponent) when given.
    Returns (offsets, values, rising): ``rising`` when it had not fallen by the last offset it could
    reach."""
    grid = list(GRID_J)
    vals = [L(mpmath.mpf(s0 + st * j)) for j in grid]
    e = 128
    top = 2 ** 14 if limit is None else min(2 ** 14, int(math.ceil(limit * math.log2(10))))
    while vals[-1] >= max(vals) and -mpmath.inf < vals[-1] < mpmath.inf:
        if e > top:
            return grid, vals, True
        j = 2 ** e
        try:
            v = far(L, lambda j=j: mpmath.mpf(s0 + st * j), e // 3 + 10)
        except Unsettled:
            return grid, vals, True
        grid.append(j)
        vals.append(v)
        e *= 2
    return grid, vals, False


def _bends_down(grid, vals) -> bool:
    """The summand's log grows ever more slowly at the last three offsets scanned (its average slope falls,
    or is not positive): a peak may lie ahead. Not so for geometric or faster growth, whose slope stays or
    rises."""
    if len(grid) < 3 or not all(mpmath.isfinite(v) for v in vals[-3:]):
        return True
    (j1, j2, j3), (v1, v2, v3) = grid[-3:], vals[-3:]
    with mpmath.workdps(mpmath.mp.dps + 10):
        first = (v2 - v1) / (mpmath.mpf(j2) - j1)
        second = (v3 - v2) / (mpmath.mpf(j3) - j2)
        return not (first > 0 and second >= first * (1 - mpmath.mpf(10) ** -6))


def _mode(L, grid, vals, s0: int, st: int) -> int:
    """The offset of the summand's largest term: integer ternary search between the grid neighbours of
    the grid's largest value (at the precision that holds the offsets)."""
    i = max(range(len(vals)), key=lambda i: vals[i])
    lo = grid[i - 1] if i > 0 else 0
    hi = grid[i + 1] if i + 1 < len(grid) else grid[i]
    extra = max(0, len(str(hi)) + 10 - mpmath.mp.dps)
    with mpmath.workdps(mpmath.mp.dps + extra):
        def Lj(j):
            return L(mpmath.mpf(s0 + st * j))
        lo, hi = integer_max_bracket(Lj, lo, hi)
        return max(range(lo, hi + 1), key=Lj)


def _reach(L, s0: int, st: int, jm: int, cut, sgn: int, limit: int) -> int:
    """How many offsets from ``jm`` (towards ``sgn``) the summand stays above ``cut``: found on the
    exponent (distances 1, 2, 4, ...), at most ``limit`` (then ``limit + 1``: more than the budget)."""
    d, last_in = 1, 0
    with mpmath.workdps(mpmath.mp.dps + max(0, len(str(jm + limit)) + 10 - mpmath.mp.dps)):
        while d <= limit:
            j = jm + sgn * d
            if j < 0:
                return jm
            if not L(mpmath.mpf(s0 + st * j)) >= cut:
                return d
            last_in, d = d, 2 * d
    return limit + 1 if last_in else d


def _sup(L, progs, prog_samples, Lmax, mag, doubts):
    """D_inf over the progressions: the scan's best, refined near its largest value, and the far values
    (a limit approached at infinity)."""
    best = Lmax
    exps = [*far_exponents(1, 0, mag, True), ray_limit(0, mag)]
    for (s0, st), (grid, vals, _) in zip(progs, prog_samples):
        i = max(range(len(vals)), key=lambda i: vals[i])
        lo = grid[i - 1] if i > 0 else 0
        hi = grid[i + 1] if i + 1 < len(grid) else grid[i]
        if hi - lo <= 4096:
            best = max([best] + [L(mpmath.mpf(s0 + st * j)) for j in range(lo, hi + 1)])
        try:
            far_vals = [far(L, lambda e=e: mpmath.mpf(s0 + st * mpmath.mpf(10) ** e), e + 10) for e in exps]
        except Unsettled:
            doubts.append("log P/Q far out cannot be evaluated to the accuracy needed")
            continue
        if far_vals[3] > far_vals[2] > far_vals[1] and (far_vals[3] - far_vals[2]) > (far_vals[2] - far_vals[1]) / 4 and far_vals[3] - far_vals[2] > mpmath.mpf(10) ** -5:
            raise Infinite("log P/Q grows without bound along the support")
        if far_vals[3] > -mpmath.inf:
            best = max(best, far_vals[3])
            if far_vals[3] > far_vals[2] and far_vals[3] - far_vals[2] > mpmath.eps * 16 * (1 + abs(far_vals[3])):
                if far_vals[3] + 4 * (far_vals[3] - far_vals[2]) >= best - mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
                    doubts.append(f"log P/Q still increases at 1e{exps[-1]}; the supremum is a limit")
    if best == -mpmath.inf:
        raise Failed("P = 0 on the whole support")
    return best


def _sampled_decrease(dens, b, s0, st, J) -> bool:
    """The term ratios of ``P^b Q^(1-b)`` at offsets ``J, 2J, 4J, ..., 2^40 J`` (settled values) are below 1
    and do not increase: the unproved fallback's check (module docstring)."""
    Lb = make_L(dens, Form.FINITE, mpmath.mpf(int(sp.Rational(b).p)) / int(sp.Rational(b).q))
    prev = None
    for m in range(41):
        j = max(J, 1) * 2 ** m
        try:
            r = (far(Lb, lambda j=j: mpmath.mpf(s0 + st * (j + 1)), len(str(j)) + 10)
                 - far(Lb, lambda j=j: mpmath.mpf(s0 + st * j), len(str(j)) + 10))
        except Unsettled:
            return False
        if not r < 0 or (prev is not None and r > prev + mpmath.mpf(10) ** (-mpmath.mp.dps // 2)):
            return False
        prev = r
    return True


def _tail(dens, q, majorants, s0, st, J, S, downward: bool, fallback_ratio):
    """A bound on the terms left off beyond ``J`` (``downward``: below it) in units of ``exp(-S)``, and
    how it was obtained: proved (:func:`.ratios.bound_at` on every majorant), else, upward only, the
    geometric series of ``fallback_ratio`` (the ratio of the last two absolute terms) when the sampled
    ratios keep decreasing (not proved); None when neither applies."""
    P, Q, k = dens.P, dens.Q, dens.x
    total, hows = mpmath.mpf(0), []
    for b, c in majorants:
        found = bound_at(dens, P, Q, k, b, s0, st, J, S, downward)
        if found is None:
            break
        total += mpmath.mpf(int(sp.Rational(c).p)) / int(sp.Rational(c).q) * found.bound
        hows.append(found.how)
    else:
        if majorants:
            return total, "proved", "; ".join(dict.fromkeys(hows))
    if downward or fallback_ratio is None or not fallback_ratio < 1:
        return None
    if all(_sampled_decrease(dens, b, s0, st, J) for b, _ in majorants):
        return None, "sampled", ("geometric series of the last ratio (the ratio's decrease sampled at J to "
                                 "2^40 J, not proved)")
    return None


def _ends_first(points: list) -> list:
    """The points from both ends inwards: where P > 0 = Q makes the sum +oo, it is mostly at an end of the
    support (a binomial against its shift: x = 0 one way, x = n + 1 the other), found there without
    evaluating the n points between (10 s at n = 10^5)."""
    order = []
    lo, hi = 0, len(points) - 1
    while lo <= hi:
        order.append(points[lo])
        if hi != lo:
            order.append(points[hi])
        lo, hi = lo + 1, hi - 1
    return order


def discrete_once(dens, support: Support, q, a):
    """One evaluation of the quantity ``q`` (order ``a``, an mpf or None) over a discrete support at the
    current precision. Returns (D, error, method, doubts)."""
    L = make_L(dens, q.peak_form, a)
    doubts: list[str] = []
    notes: list[str] = []
    mag = dens.magnitude

    def term_parts(k):
        lp, lq = dens.logpq(mpmath.mpf(k))
        if q.infinite_at(lp, lq, a):
            raise Infinite(f"P > 0 where Q = 0 (at x = {k})")
        return lp, lq

    finite_pts = [mpmath.mpf(sp.Float(p, mpmath.mp.dps + 5)) if not p.is_Integer else int(p)
                  for p in support.finite_points]
    progs = [(int(pc.start), int(pc.step)) for pc in support.progressions]

    # at a finite order away from 1, L itself is +inf where P > 0 = Q (alpha > 1: the max raises
    # below) and -inf where that point adds nothing (alpha < 1): the separate check is redundant
    check_parts = not q.peak_is_integrand
    Lmax = -mpmath.inf
    for k in _ends_first(finite_pts):
        if check_parts:
            term_parts(k)
        Lmax = max(Lmax, L(mpmath.mpf(k)))
        if Lmax == mpmath.inf and not q.supremum:
            raise Infinite(f"P > 0 where Q = 0, alpha > 1 (at x = {k})")
    prog_samples = []
    for s0, st in progs:
        if check_parts:
            for j in GRID_J:
                term_parts(s0 + st * j)
        # the log-ratio's features are algebraic in the problem's numbers: none lies beyond the far
        # values D_inf reads (ray_limit), while the summand's mode at a finite order moves with the order
        # (exponentially: Poisson's at alpha = 1000 sits at k ~ 2.8e41) and is followed on
        grid, vals, rising = _scan(L, s0, st, ray_limit(mpmath.mpf(s0), mag) if q.supremum else None)
        prog_samples.append((grid, vals, rising))
        Lmax = max([Lmax] + vals)
    if q.supremum:
        return _sup(L, progs, prog_samples, Lmax, mag, doubts), mpmath.mpf(0), \
            "max of log P/Q over the support (discrete)", doubts
    if Lmax == mpmath.inf:
        raise Infinite("P > 0 where Q = 0, alpha > 1")
    if Lmax == -mpmath.inf:
        raise Failed("every term vanishes")

    # the modes, then divergence checks at the far ends, beyond the mode and every feature of the
    # problem (the mode moves with the order: its position is no algebraic combination of the numbers)
    Lbig = make_L(dens, q.check_form, a)
    modes = []
    for (s0, st), (grid, vals, rising) in zip(progs, prog_samples):
        if rising:
            # the summand had not fallen by the last offset the scan reached, so its tail was not seen. A log
            # that still grows at least linearly there (geometric or faster growth, log k! against 2k log 2)
            # grows without end, as check_end's slopes say; one that bends down has its peak beyond
            # (Poi(mu + d) against Poi(mu) at alpha = 1000, mu = 11/4, d = 200: k log(c) - log k!, peaking near
            # k ~ 10^1865), and a slope read before that peak proves no divergence
            r = check_end(Lbig, mpmath.mpf(s0), st, 1, True, Lmax, mag)
            if r is not None and r.diverges and not _bends_down(grid, vals):
                r.apply(doubts)  # raises Infinite
            raise Failed(f"refused: the summand still grows at k ~ {mpmath.nstr(mpmath.mpf(s0 + st * grid[-1]), 5)}, "
                         "the last offset the scan reached (a peak beyond it is not told from growth without end)")
        top = max(range(len(vals)), key=lambda i: vals[i])
        if len(str(grid[min(len(grid) - 1, top + 1)])) > MAX_MODE_DIGITS:
            # the mode's search costs ~6 evaluations per digit of the offset (Pois(811/4) against Pois(11/4) at
            # alpha = 1000 peaks near 10^1865: 28000 Arb gammas, half a minute), and a summand that smooth has
            # far more significant terms there than the term budget
            raise Failed(f"refused: the summand's mode may lie beyond k ~ 10^{MAX_MODE_DIGITS} (its largest "
                         f"value scanned is at k ~ {mpmath.nstr(mpmath.mpf(s0 + st * grid[top]), 5)}); offsets that "
                         "large are not followed")
        jm = _mode(L, grid, vals, s0, st)
        modes.append(jm)
        Lmax = max(Lmax, L(mpmath.mpf(s0 + st * jm)))
        r = check_end(Lbig, mpmath.mpf(s0 + st * jm), st, 1, True, Lmax, mag)
        if r is not None:
            r.apply(doubts)
    # the digits the terms need at the mode (cancellation in a lp + (1 - a) lq, offsets that must stay
    # integers): the driver starts again with them
    for (s0, st), jm in zip(progs, modes):
        k = mpmath.mpf(s0 + st * jm)
        lp, lq = dens.logpq(k)
        if mpmath.isfinite(lp) and mpmath.isfinite(lq):
            require_digits(digits_needed(lp, lq, a if q.peak_is_integrand else None, k, 1, Lmax, dens.dps),
                           f"the summand's mode is at k = {mpmath.nstr(k, 5)} with log {mpmath.nstr(Lmax, 5)}")

    logpq = term_parts if check_parts else (lambda k: dens.logpq(mpmath.mpf(k)))
    funcs = q.integrands(a, Lmax, logpq, lambda k: L(mpmath.mpf(k)))
    majorants = q.majorants()
    sums = [mpmath.mpf(0) for _ in funcs]
    tails = [mpmath.mpf(0) for _ in funcs]  # proved bounds of what was left off, shifted like the sums
    for k in finite_pts:
        for i, f in enumerate(funcs):
            sums[i] += f(k)
    eps = mpmath.eps
    cut = Lmax - (mpmath.mp.prec * mpmath.log(2) + 20)
    for (s0, st), (grid, vals, _), jm in zip(progs, prog_samples, modes):
        budget = MAX_TERMS
        try:
            slow = far(Lbig, lambda: mpmath.mpf(s0 + st * mpmath.mpf(10) ** 8), 18) > Lmax - 10**6
        except Unsettled:
            slow = True
        if slow:
            doubts.append("the terms decay only polynomially; term-by-term summation cannot reach the "
                          "precision (no tail acceleration implemented)")
            budget = MAX_TERMS_SLOW
        # a summand with more significant terms than the budget is refused, not cut short
        width = _reach(L, s0, st, jm, cut, 1, budget) + min(jm, _reach(L, s0, st, jm, cut, -1, budget))
        if width > budget:
            raise Failed(f"refused: {doubts[-1] + '; ' if slow else ''}the summand's significant terms around its mode k ~ "
                         f"{mpmath.nstr(mpmath.mpf(s0 + st * jm), 5)} number more than {budget} (the term "
                         f"budget); term-by-term summation cannot reach the precision")
        # last grid offset with a non-negligible term: an unproved bound never stops before it
        jlast = max([j for j, v in zip(grid, vals) if v > cut] + [jm])
        for i, f in enumerate(funcs):
            S, A = mpmath.mpf(0), mpmath.mpf(0)  # the sum and the sum of absolute values
            for direction in (-1, 1):
                j = jm if direction == 1 else jm - 1
                n, prev, attempt_at, attempts = 0, None, 0, 0
                while j >= 0:
                    t = f(s0 + st * j)
                    S += t
                    A += abs(t)
                    n += 1
                    at = abs(t)
                    if at <= eps * A and n >= attempt_at:
                        # attempts at doubling counts (few symbolic proofs); the unproved bound only
                        # after three proofs failed
                        attempt_at, attempts = 2 * n + 8, attempts + 1
                        ratio = at / prev if prev and attempts >= 3 else None
                        got = _tail(dens, q, majorants[i] if i < len(majorants) else (), s0, st, j, Lmax,
                                    direction < 0, ratio)
                        if got is not None:
                            bound, kind, how = got
                            if kind == "sampled" and direction > 0 and j > jlast:
                                bound = at * ratio / (1 - ratio)
                            if bound is not None and bound <= eps * A:
                                tails[i] += bound
                                notes.append(how)
                                break
                    prev = at
                    j += direction
                    if n > budget:
                        doubts.append(f"summation stopped after {n} terms without a bound on the rest")
                        break
            sums[i] += S
    D, err, method = q.finish(Lmax, list(zip(sums, tails)), a, "term-by-term sum", "Σ")
    if notes:
        method += "; tails: " + "; ".join(dict.fromkeys(notes))
    return D, err, method, doubts
