r"""Continuous supports: quadrature of the log-space integrand between breakpoints.

Breakpoints are the support's ends, the kinks (:mod:`rdpsym.numeric.kinks`), the peak of ``L`` and the
points ``peak ± w 8^k`` (``k = 0..3``, ``w`` = distance at which ``L`` drops by 1), so a narrow peak
sitting on a kink (Laplace with alpha = 1e4, b = 0.01) is resolved. Exponentially decaying tails are
truncated where ``L < L_max - (wp ln 10 + 40)`` (checked to keep falling: ``L(1e8 w)`` or ``L(1e16 w) <
L_max - 1e6``). Other infinite pieces ``[c, oo)`` are integrated in ``u`` with ``x = c + w' u``, which
mpmath maps to ``[0, 1]`` by ``u = 1/t - 1``: a polynomial tail ``|x|^-s`` becomes ``t^(s-2)``, an
algebraic endpoint behaviour that tanh-sinh integrates to full precision (Takahasi and Mori 1974), so
Cauchy, Pareto and Lévy tails need no special case. Divergence is detected by :mod:`.tails`.
D_inf is found by a logarithmic scan, golden-section refinement of the best local maxima, one-sided
limits at kinks and finite ends, and values at ``|x| = 1e8 .. 1e64``; every value of ``log P/Q`` it reads
is computed at the digits its cancellation takes (:meth:`.densities.LogIntegrand._ratio`), so a far
point's rounding is never taken for the supremum.
"""

from __future__ import annotations

import mpmath

from .._optimize import golden_max
from .kinks import breakpoints, scan_points
from .quantities import Form
from .scales import Unsettled, digits_needed, require_digits
from .tails import Failed, Infinite, check_end, far, far_exponents, ray_limit
from .densities import make_L

__all__ = ["continuous_once", "continuous_prepare", "drop_width", "find_peak", "integrate_pieces",
           "sup_continuous"]


def _extend_ray(L, pts, vals, a, b, magnitude=None):
    """Follow a peak that lies beyond the scan of an infinite end (the Gaussian pair at order 1e300 peaks
    at x = -1e300): while the largest value is the outermost sample of that end, sample ``c ± 10^(2E)``
    (the exponent doubling, up to 10^(2^17)) until the values fall, then locate the largest on the
    exponent by golden-section search. Returns the samples with the new points (sorted).

    With the problem's ``magnitude`` the ray stops at :func:`ray_limit`: every feature of ``L`` lies
    closer (:mod:`.scales`), so a ray still rising there rises for good, and the tail tests, which read
    the same distances, decide what that means (an infinite divergence or supremum, or a doubt). A
    count, never a time: without it the subsampled Gaussian's log-ratio, which grows linearly, was
    followed to ``|x| = 10^4096`` at thousands of digits (minutes) before its values stopped settling."""
    pts, vals = list(pts), list(vals)
    for sgn, end in ((1, b), (-1, a)):
        if not mpmath.isinf(end) or not pts:
            continue
        i_out = len(pts) - 1 if sgn > 0 else 0
        best = max(vals)
        if not (vals[i_out] >= best and vals[i_out] > -mpmath.inf and vals[i_out] < mpmath.inf):
            continue
        c = a if not mpmath.isinf(a) else b if not mpmath.isinf(b) else mpmath.mpf(0)

        def along(u, c=c, sgn=sgn):
            # far values at the precision their cancellation takes (a rounding artefact is no peak)
            try:
                return far(L, lambda: c + sgn * mpmath.mpf(10) ** u, 10)
            except Unsettled:
                return mpmath.nan

        e = mpmath.log10(max(abs(pts[i_out] - c), 1))
        limit = ray_limit(c, magnitude)
        us, ws = [e], [vals[i_out]]
        for _ in range(17):
            if limit is not None and e >= limit:
                break
            e = 2 * e if e >= 1 else e + 1
            if limit is not None:
                e = min(e, mpmath.mpf(limit))
            v = along(e)
            us.append(e)
            ws.append(v)
            # a plateau is not followed: its value is already sampled (a flat log-ratio, the Laplace pair's
            # D_inf on a whole ray, would otherwise be followed out to 10^4096 for nothing)
            if not v > ws[-2] + mpmath.mpf(10) ** (-(mpmath.mp.dps // 2)) * max(1, abs(ws[-2])) or v == mpmath.inf:
                break
        j = max(range(len(ws)), key=lambda i: ws[i])
        new = [(us[i], ws[i]) for i in range(1, len(us))]
        # a ray still rising where its values can no longer be settled has no peak inside to locate
        # (a search there evaluates at thousands of digits for nothing)
        if 0 < j < len(us) - 1 and not mpmath.isnan(ws[j + 1]):
            u, v = golden_max(along, us[j - 1], us[j + 1], 100)
            new += [(u, v)] + [(u + d, along(u + d)) for d in (mpmath.mpf(-1) / 64, mpmath.mpf(1) / 64)]
        for u, v in new:
            pts.append(c + sgn * mpmath.mpf(10) ** u)
            vals.append(v)
    order = sorted(range(len(pts)), key=lambda i: pts[i])
    return [pts[i] for i in order], [vals[i] for i in order]


def find_peak(L, intervals, kinks, refine_iters=60, magnitude=None):
    """Global max of L over the continuous intervals: scan (followed out along an infinite end while it
    still rises, :func:`_extend_ray`, as far as ``magnitude`` says features can be) + golden refinement,
    continued at the working precision where the peak is narrower than the golden bracket. Returns (x,
    L, samples)."""
    best = (None, -mpmath.inf)
    samples = []
    for a, b in intervals:
        pts = scan_points(a, b, kinks)
        vals = [L(t) for t in pts]
        if mpmath.isinf(a) or mpmath.isinf(b):
            pts, vals = _extend_ray(L, pts, vals, a, b, magnitude)
        samples.append((pts, vals))
        for i, v in enumerate(vals):
            if v > best[1]:
                best = (pts[i], v, pts, vals, i, a, b)
    if best[0] is None:
        return None, -mpmath.inf, samples
    t0, v0, pts, vals, i, a, b = best
    if v0 == mpmath.inf:
        return t0, v0, samples
    if any(0 <= j < len(vals) and mpmath.isnan(vals[j]) for j in (i - 1, i + 1)):
        # the largest value is the last one a followed ray could evaluate (the next could not be made
        # to settle): no peak to refine inside, and a search out there evaluates at thousands of digits
        return t0, v0, samples
    lo = pts[i - 1] if i > 0 else (a if not mpmath.isinf(a) else t0)
    hi = pts[i + 1] if i + 1 < len(pts) else (b if not mpmath.isinf(b) else t0)
    if hi > lo:
        t1, v1 = golden_max(L, lo, hi, refine_iters)
        if v1 > v0:
            t0, v0 = t1, v1
        # a peak narrower than the final bracket (a Gaussian of scale 1e-30 away from the scan's points):
        # go on down to the working precision
        h = (hi - lo) * mpmath.mpf("0.618") ** refine_iters
        if h > 0 and any(abs(L(t0 + s * h) - v0) > mpmath.mpf(1) / 2 for s in (1, -1)
                         if lo <= t0 + s * h <= hi):
            t1, v1 = golden_max(L, max(lo, t0 - 2 * h), min(hi, t0 + 2 * h), int(mpmath.mp.prec * 1.5))
            if v1 > v0:
                t0, v0 = t1, v1
    return t0, v0, samples


def drop_width(L, x0, Lref, lo, hi, kinks=()):
    """Distance from x0 at which L falls by 1 below Lref (smaller of the two sides), to a factor 2.

    Found on the exponent (the distance multiplied by 2, 4, 16, ... until L has dropped, then halved
    between the last two): a Laplace pair of scale 1e300 is 1e300 wide and a Gaussian of scale 1e-30
    1e-30. A side that reaches the end of the support before L drops counts only when no side drops.
    So does a side whose drop happens across a kink: next to a jump (a density cut off by a Heaviside
    factor, with the peak at the cut) that distance is the distance to the jump, ~1e-19, not a
    width, and used as one it stretched every later rule until their error estimates failed."""
    widths, fallback = [], []
    resolution = (abs(x0) + mpmath.mpf(2) ** -mpmath.mp.prec) * mpmath.mpf(2) ** (-mpmath.mp.prec + 4)
    for sgn, lim in ((1, hi), (-1, lo)):
        room = abs(lim - x0) if not mpmath.isinf(lim) else mpmath.inf
        if room == 0:
            continue

        def down(d, sgn=sgn):
            return L(x0 + sgn * d) <= Lref - 1

        d = mpmath.mpf(1) if mpmath.isinf(room) else min(room / 2, mpmath.mpf(1))
        dropped = down(d)
        # gallop on the exponent: [near, far] brackets the drop (near: not dropped, far: dropped)
        near = far_ = None
        step = 1
        for _ in range(40):
            nd = d * mpmath.mpf(2) ** (step if not dropped else -step)
            if not dropped and nd >= room:
                # the end of the support comes first: the last chance is half the room
                nd = room / 2
                if nd > d and down(nd):
                    near, far_ = d, nd
                elif nd > d:
                    d = nd
                break
            if dropped and nd < resolution:
                break
            if down(nd) != dropped:
                near, far_ = (d, nd) if not dropped else (nd, d)
                break
            d = nd
            step *= 2
        if near is None:
            if dropped:
                d = max(d, resolution)
        else:
            while far_ / near > 2:  # bisect on the exponent down to a factor 2
                mid = mpmath.sqrt(near * far_)
                if down(mid):
                    far_ = mid
                else:
                    near = mid
            d, dropped = far_, True
        # strictly inside: a peak *at* a kink (Laplace's cusp) has a genuine width on each side
        tiny = mpmath.mpf(10) ** (-30) * (1 + abs(x0))
        across = any(min(x0, x0 + sgn * d) < k < max(x0, x0 + sgn * d) and abs(k - x0) > tiny for k in kinks)
        (widths if dropped and not across else fallback).append(d)
    if widths:
        return min(widths)
    return max(fallback) if fallback else mpmath.mpf(1)



def integrate_pieces(g, intervals, kinks, peak, w, cuts, rule, garb=None, info=None):
    """∫ g over the intervals, splitting at kinks and the peak.

    An infinite end with a cutoff in ``cuts`` (exponentially decaying integrand, see
    :func:`_continuous_prepare`) is truncated there and integrated with ``rule``; other infinite pieces
    use tanh-sinh in ``u`` with ``x = c ± w u``. Finite pieces use ``rule``; with ``garb`` (the same
    integrand as a backend's integrand object, e.g. on Arb balls) and ``rule == "gauss-legendre"`` they
    are integrated by ``garb.integrate`` (Arb: degrees n and 2n compared, doubled until they agree to
    the working precision). ``info`` (a dict) counts the pieces done by mpmath and by the backend
    (key ``"arb"``, the name the driver reads)."""
    total, err = mpmath.mpf(0), mpmath.mpf(0)
    info = {} if info is None else info
    finite_pieces = []
    for k, (a, b) in enumerate(intervals):
        a = cuts.get((k, -1), a) if mpmath.isinf(a) else a
        b = cuts.get((k, 1), b) if mpmath.isinf(b) else b
        bp = breakpoints(a, b, kinks, peak, w)
        for lo, hi in zip(bp[:-1], bp[1:]):
            if lo == hi:
                continue
            if mpmath.isinf(hi) and not mpmath.isinf(lo):
                wt = max(w, abs(lo - peak)) if peak is not None else w
                v, e = mpmath.quad(lambda u, lo=lo: g(lo + wt * u), [0, mpmath.inf], error=True)
                v, e = v * wt, e * wt
            elif mpmath.isinf(lo) and not mpmath.isinf(hi):
                wt = max(w, abs(hi - peak)) if peak is not None else w
                v, e = mpmath.quad(lambda u, hi=hi: g(hi - wt * u), [0, mpmath.inf], error=True)
                v, e = v * wt, e * wt
            elif mpmath.isinf(lo) and mpmath.isinf(hi):
                v, e = mpmath.quad(lambda u: g(w * u), [0, mpmath.inf], error=True)
                v2, e2 = mpmath.quad(lambda u: g(-w * u), [0, mpmath.inf], error=True)
                v, e = (v + v2) * w, (e + e2) * w
            elif garb is not None and rule == "gauss-legendre":
                finite_pieces.append((lo, hi))
                continue
            else:
                # Gauss-Legendre is capped at 3*2^6 = 192 nodes: if it has not converged by then
                # the piece is not analytic enough (endpoint singularity, missed kink) and the
                # driver falls back to tanh-sinh.
                opts = {"maxdegree": 7} if rule == "gauss-legendre" else {}
                v, e = mpmath.quad(g, [lo, hi], error=True, method=rule, **opts)
            total += v
            err += e
            info["mpmath"] = info.get("mpmath", 0) + 1
    if finite_pieces:
        info["arb"] = info.get("arb", 0) + len(finite_pieces)
        info["arb_converged"] = info.get("arb_converged", True)
        v, e, ok = garb.integrate(finite_pieces)
        if v is None or e is None:
            raise Failed("the Arb Gauss-Legendre sum is not finite")
        total += v
        err += e if ok else max(e, abs(v))  # not converged: no digits are claimed
        info["arb_converged"] = info["arb_converged"] and ok
    return total, err


def continuous_prepare(dens, intervals, kinks, q, a):
    """Peak, shift L_max, width w and divergence checks (done once, at the first precision), for the
    quantity ``q`` (not a supremum) at the order ``a`` (an mpf, or None).

    Returns (peak, Lmax, w, doubts, cuts); raises Infinite when the divergence is infinite."""
    Lint = make_L(dens, q.scan_form, a)
    # the function whose tails and singular points decide divergence
    Lchk = make_L(dens, q.check_form, a) if q.check_form is not q.scan_form else Lint
    Lw = make_L(dens, q.peak_form, a) if q.peak_form is not q.scan_form else Lint
    # points where P > 0 = Q make alpha >= 1 infinite
    peak, Lmax, samples = find_peak(Lint, intervals, kinks, magnitude=dens.magnitude)
    if Lmax == mpmath.inf and a is not None and a > 1:
        raise Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(peak, 10)}), alpha > 1")
    if not q.peak_is_integrand:
        for pts, _ in samples:
            for t in pts:
                lp, lq = dens.logpq(t)
                if q.infinite_at(lp, lq, a):
                    raise Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(t, 10)})")
    if Lmax == -mpmath.inf:
        raise Failed("the integrand vanishes at every sample point (P = 0 or Q = 0 everywhere?)")
    scanned = list(samples)
    if Lw is not Lint:
        peak, Lmax, samples_w = find_peak(Lw, intervals, kinks, magnitude=dens.magnitude)
        scanned += samples_w
    lo_all = min(i[0] for i in intervals)
    hi_all = max(i[1] for i in intervals)
    w = drop_width(Lw, peak, Lmax, lo_all, hi_all, kinks)
    # divergence checks at infinite ends and at finite breakpoints (using the alpha integrand), beyond
    # every feature of the problem (:mod:`.scales`)
    mag = getattr(dens, "magnitude", 0)
    doubts = []
    for lo, hi in intervals:
        bp = breakpoints(lo, hi, kinks, None)
        for i, c in enumerate(bp):
            if mpmath.isinf(c):
                continue
            for sgn in (1, -1):
                nb = bp[i + 1] if sgn > 0 and i + 1 < len(bp) else (bp[i - 1] if sgn < 0 and i > 0 else None)
                if nb is None:
                    continue
                dist = abs(nb - c) if not mpmath.isinf(nb) else w
                r = check_end(Lchk, c, sgn, min(dist, w), False, Lmax, mag)
                if r is not None:
                    r.apply(doubts)
        for end, sgn in ((hi, 1), (lo, -1)):
            if mpmath.isinf(end):
                # beyond every breakpoint and the peak (which may lie far out)
                finite_ends = [t for t in bp if not mpmath.isinf(t)] + [peak]
                base = max(finite_ends) if sgn > 0 else min(finite_ends)
                r = check_end(Lchk, base, sgn, w, True, Lmax, mag)
                if r is not None:
                    r.apply(doubts)

    # (after the divergence checks, which settle their own values) the digits the integrand's shape needs at the peak (cancellation, position): more than the working
    # precision has, and the driver starts again with them (large orders, extreme scales)
    lp, lq = dens.logpq(peak)
    if mpmath.isfinite(lp) and mpmath.isfinite(lq) and mpmath.isfinite(Lmax):
        require_digits(digits_needed(lp, lq, a if q.peak_form is Form.FINITE else None, peak, w, Lmax, dens.dps),
                       f"the integrand's peak at x = {mpmath.nstr(peak, 5)} is {mpmath.nstr(w, 3)} wide and its log "
                       f"{mpmath.nstr(Lmax, 5)}")

    # cutoffs for exponentially decaying tails: beyond X the integrand is below
    # exp(-(wp ln 10 + 40)) of its maximum and keeps falling (checked at 1e8 w: below L_max - 1e6)
    cuts = {}
    thr = Lmax - (mpmath.mp.dps * mpmath.log(10) + 40)
    high = [t for pts, vals in scanned for t, v in zip(pts, vals) if v >= thr]  # scan points above it
    for k, (lo, hi) in enumerate(intervals):
        finite = [t for t in breakpoints(lo, hi, kinks, peak) if not mpmath.isinf(t)]
        for end, sgn in ((hi, 1), (lo, -1)):
            if not mpmath.isinf(end):
                continue
            base = (max(finite) if sgn > 0 else min(finite)) if finite else peak
            # exponential decay: L has fallen by 1e6 at 1e8 w, or (a narrow peak, w tiny, on a
            # slower exponential tail) at 1e16 w; a polynomial tail |x|^-s falls by only
            # s ln(1e16) ~ 37 s there, so it is never truncated
            try:
                if not any(far(Lchk, lambda k=k: base + sgn * w * mpmath.mpf(10) ** k, k + 10) < Lmax - 10**6
                           for k in (8, 16)):
                    continue
            except Unsettled:  # no settled value far out: no cut (the tail stays an infinite piece)
                continue
            d = w
            for i in range(200):
                X = base + sgn * d
                if Lw(X) < thr and Lchk(X) < thr:
                    # bisect between the last two distances (to 1/16 of the step): doubling alone
                    # can put the cut up to twice as far out, and the wide tail piece then costs
                    # the quadrature most of its nodes
                    lo_d = d / 2 if i else d
                    for _ in range(4 if i else 0):
                        mid = (lo_d + d) / 2
                        Xm = base + sgn * mid
                        if Lw(Xm) < thr and Lchk(Xm) < thr:
                            d = mid
                        else:
                            lo_d = mid
                    # a cut must not hide mass further out (a second mode beyond a deep valley):
                    # every scan sample beyond it must be below the threshold too, else the tail
                    # stays an infinite piece (tanh-sinh and the two-evaluation estimate)
                    X = base + sgn * d
                    if not any(sgn * (t - X) > 0 for t in high):
                        cuts[(k, sgn)] = (base, d)
                    break
                d *= 2
    return peak, Lmax, w, doubts, cuts


def continuous_once(dens, intervals, kinks, q, a, prep, scale_jitter, rule, info=None):
    """One evaluation of the quantity ``q`` at the current precision. Returns (D, error, method, doubts)."""
    if q.supremum:
        return sup_continuous(dens, intervals, kinks)
    peak, Lmax, w, doubts, cuts = prep
    peak, Lmax, w = +peak, +Lmax, w * scale_jitter
    notes = {key: base + key[1] * d * scale_jitter for key, (base, d) in cuts.items()}
    slow = q.integrands(a, Lmax, dens.logpq, make_L(dens, q.peak_form, a), lambda t: mpmath.nstr(t, 10))
    integrals = []
    for form, g in zip(q.forms, slow):
        # the backend's own integrand object (Arb balls) for its quadrature, mpmath's one-expression
        # integrand (with the quantity's pointwise one as fallback) for everything else
        garb = dens.backend_integrand(form, a, Lmax, g)
        integrals.append(integrate_pieces(dens.integrand(form, a, Lmax, g), intervals, kinks, peak, w, notes, rule,
                                          garb, info))
    D, err, method = q.finish(Lmax, integrals, a, rule)
    return D, err, method, doubts


def sup_continuous(dens, intervals, kinks):
    """D_inf = sup_{P>0} log P/Q by scan, golden refinement and limits at the ends."""
    R = make_L(dens, Form.RATIO, None)
    peak, Rmax, samples = find_peak(R, intervals, kinks, refine_iters=int(mpmath.mp.prec * 1.5),
                                    magnitude=dens.magnitude)
    if Rmax == mpmath.inf:
        raise Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(peak, 10)})")
    if Rmax == -mpmath.inf:
        raise Failed("P = 0 at every sample point")
    # refine every local maximum of the scan, and approach every kink / finite end
    cands = [Rmax]
    local = []
    for pts, vals in samples:
        for i in range(1, len(pts) - 1):
            if vals[i] >= vals[i - 1] and vals[i] >= vals[i + 1] and vals[i] > -mpmath.inf:
                if vals[i] > vals[i - 1] or vals[i] > vals[i + 1]:  # skip flat stretches
                    local.append((vals[i], pts[i - 1], pts[i + 1]))
    for v0, lo, hi in sorted(local, key=lambda u: -u[0])[:4]:  # refine the best few
        _, v = golden_max(R, lo, hi, int(mpmath.mp.prec * 1.5))
        cands.append(max(v, v0))
    doubts = []
    mag = getattr(dens, "magnitude", 0)
    near_exps = [(10 + mag) * m for m in (1, 2, 4)]  # 10^-10, 10^-20, 10^-40 for ordinary numbers
    far_exps = [*far_exponents(1, 0, mag, True), ray_limit(0, mag)]
    for a, b in intervals:
        bp = breakpoints(a, b, kinks, None)
        for i, c in enumerate(bp):
            for sgn in (1, -1):
                if mpmath.isinf(c):
                    continue
                if (sgn > 0 and (i + 1 >= len(bp))) or (sgn < 0 and i == 0):
                    continue
                try:
                    vs = [far(R, lambda e=e: c + sgn * mpmath.mpf(10) ** (-e),
                              e + 10 + max(0, int(mpmath.log10(1 + abs(c))))) for e in near_exps]
                except Unsettled:
                    doubts.append(f"log P/Q next to x = {mpmath.nstr(c, 10)} cannot be evaluated to the accuracy needed")
                    continue
                vs = [v for v in vs if v > -mpmath.inf]
                if len(vs) == 3:
                    if vs[2] == mpmath.inf:
                        raise Infinite(f"log P/Q is unbounded as x -> {mpmath.nstr(c, 10)}")
                    cands.append(vs[2])
                    if abs(vs[2] - vs[1]) > abs(vs[1] - vs[0]) * 2 and vs[2] > vs[1] + 1:
                        raise Infinite(f"log P/Q grows without bound as x -> {mpmath.nstr(c, 10)}")
        for end, sgn in ((b, 1), (a, -1)):
            if not mpmath.isinf(end):
                continue
            try:
                vs = [far(R, lambda e=e: sgn * mpmath.mpf(10) ** e, 10) for e in far_exps]
            except Unsettled:
                doubts.append(f"log P/Q as x -> {'+' if sgn > 0 else '-'}oo cannot be evaluated to the accuracy needed")
                continue
            if any(v == mpmath.inf for v in vs):
                raise Infinite("P > 0 where Q = 0 far out")
            if vs[3] > vs[2] > vs[1] and (vs[3] - vs[2]) > (vs[2] - vs[1]) / 4 and vs[3] - vs[2] > mpmath.mpf(10) ** -5:
                raise Infinite(f"log P/Q grows without bound as x -> {'+' if sgn > 0 else '-'}oo")
            if vs[3] > -mpmath.inf:
                cands.append(vs[3])
                if vs[3] > vs[2] and vs[3] - vs[2] > mpmath.eps * 16 * (1 + abs(vs[3])):
                    # still increasing far out: the limit matters only if it can reach the best value
                    lim = vs[3] + 4 * (vs[3] - vs[2])
                    if lim >= max(cands) - mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
                        doubts.append(f"log P/Q still increases at |x| = 1e{far_exps[-1]} (by "
                                      f"{mpmath.nstr(vs[3] - vs[2], 5)}); the supremum is a limit")
                        cands.append(vs[3] + (vs[3] - vs[2]))
    return max(cands), mpmath.mpf(0), "scan + golden-section sup of log P/Q", doubts

