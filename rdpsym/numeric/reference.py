r"""A second numeric method for D_alpha, independent of the main numeric path: it checks numeric curves.

A result without a closed form takes its values from :func:`rdpsym.numeric.numeric_divergence` (log-space
Gauss-Legendre or Arb quadrature between breakpoints, peak search, tail truncation, term-by-term sums with
geometric tail bounds). Checking such a value against the same method would check nothing, so
verification of numeric curves compares it with this one, which shares no integration or summation code
with it:

* continuous supports: ``mpmath.quad`` (tanh-sinh, Takahasi and Mori 1974) of P^alpha Q^(1-alpha)
  written directly in mpmath numbers (unbounded exponents: no underflow at alpha = 1000), over the
  support split at its ends, at the kinks of P and Q (:func:`rdpsym.numeric.kinks.kinks`: a kink is a
  fact about the densities, not a method) and at the largest of the integrand (the best point of a
  fixed grid refined by golden-section search), where a narrow peak sits; mpmath maps infinite ends to
  finite ones itself;
* discrete supports: direct sums over finite sets, ``mpmath.nsum`` over each infinite progression from
  its first point (with nsum's Richardson/Shanks acceleration where it helps);
* near alpha = 1 the integrand is P expm1((alpha - 1) log(P/Q)), so log I ~ (alpha - 1) KL keeps its
  digits; at alpha = 1 it is P log(P/Q) (the KL, Mironov 2017, arXiv:1702.07476 v3, Def. 3 and Prop. 3).

Each value is computed twice, at ``dps + 10`` and ``dps + 25`` digits with quadrature degrees that
differ; the error estimate is their difference plus mpmath's own estimates, propagated through
log(I)/(alpha - 1). ``converged`` follows the main path's rule (60% of ``dps`` digits). alpha = oo is not
computed here (the engine derives D_inf exactly when it can; its check is against the main path).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from .._optimize import golden_max
from ..specify.support import Support
from .backends.mpmath import lambdify_mpmath
from .inputs import substitute_values
from .kinks import kinks as find_kinks
from .normalisers import NormaliserError, evaluate_normaliser, exact_value, normaliser_atoms
from .quantities import quantity_for
from .value import NumericValue

__all__ = ["reference_divergence"]

#: the most digits the reference method adds to those asked for, for the problem's scale (a work budget,
#: counted, never a time): tanh-sinh at hundreds of digits takes minutes (the Gaussian pair at alpha =
#: 1e50: 142 more, 200 s; at 1e100: 293 more, 344 s; at 1e300 it did not finish in 30 minutes). A
#: problem that needs more is refused, and a check against it is inconclusive, never passed
MAX_EXTRA_DIGITS = 200

#: |alpha - 1| below this uses the expm1 form
_NEAR_ONE = mpmath.mpf(1) / 8


def _lambdified(P, Q, x):
    # the numeric path's lambdify: besseli reflected for negative integer orders, mpmath's binomial,
    # large rationals read at call time
    return _at_mpf(lambdify_mpmath(x, P)), _at_mpf(lambdify_mpmath(x, Q))


def _at_mpf(fn):
    """``fn`` with a lattice point given as a Python int passed as an mpf: with an int, ``lam**k`` of an
    integer ``lam`` is an exact integer power (10001**(10**20) at the mode search's far offsets never
    ends); an mpf holds every int the sums reach (offsets up to 1e20) exactly at their precisions."""
    return lambda t: fn(mpmath.mpf(t) if isinstance(t, int) else t)


def _without_normalisers(P, Q, x, wp):
    """P and Q with each normaliser (a Sum or Integral not in x, parameters substituted) replaced by its
    value (:func:`rdpsym.numeric.normalisers.evaluate_normaliser`), and the largest relative error of
    those values: a normaliser is an input constant of the densities, not part of this method."""
    atoms = set(normaliser_atoms(P, x)) | set(normaliser_atoms(Q, x))
    rel, subs = mpmath.mpf(0), {}
    for atom in atoms:
        value, error, _ = evaluate_normaliser(atom, wp)
        subs[atom] = exact_value(value)
        rel = max(rel, error / abs(value))
    return (P.xreplace(subs), Q.xreplace(subs), rel) if subs else (P, Q, rel)


def _integrand(p, q, a, kind):
    """The function of x to integrate (or sum): P^a Q^(1-a), P expm1((a-1) log P/Q) or P log P/Q."""
    def f(t):
        pv, qv = mpmath.mpf(mpmath.re(p(t))), mpmath.mpf(mpmath.re(q(t)))
        if pv < 0 or qv < 0:
            raise ArithmeticError(f"a density is negative at x = {mpmath.nstr(t, 8)}")
        if pv == 0:
            return mpmath.mpf(0)
        if qv == 0:
            if kind == "power" and a < 1:
                return mpmath.mpf(0)
            raise OverflowError("P > 0 where Q = 0")
        if kind == "power":
            return mpmath.exp(a * mpmath.log(pv) + (1 - a) * mpmath.log(qv))
        if kind == "expm1":
            return pv * mpmath.expm1((a - 1) * (mpmath.log(pv) - mpmath.log(qv)))
        return pv * (mpmath.log(pv) - mpmath.log(qv))
    return f


def _grid(lo, hi):
    """Fixed probe points of [lo, hi] (ends may be infinite): where the integrand's largest value is looked for."""
    scales = [mpmath.mpf(10) ** k for k in range(-4, 9)]
    if lo == -mpmath.inf and hi == mpmath.inf:
        pts = [mpmath.mpf(0)] + [s * m for s in scales for m in (-1, 1, -3, 3)]
    elif hi == mpmath.inf:
        pts = [lo + s * m for s in scales for m in (1, 3)]
    elif lo == -mpmath.inf:
        pts = [hi - s * m for s in scales for m in (1, 3)]
    else:
        pts = [lo + (hi - lo) * mpmath.mpf(i) / 64 for i in range(1, 64)]
    return [t for t in pts if lo < t < hi]


#: the farthest decimal exponent a peak is followed out to along an infinite end (a count of steps:
#: exponents 9, 18, 36, ... 4608), beyond any order's peak the plan's digits could resolve
_FOLLOW_EXPONENT = 4608


def _follow_out(logf, pts, vals, lo, hi):
    """The probe points and values of :func:`_peak` (``vals`` are ``|f|``), with more points along an
    infinite end whose outermost probe holds the largest value: ``c +- 10^e`` for ``e = 9, 18, 36, ...``
    while the values still rise, then golden-section search on the exponent between the neighbours of
    the largest. The Gaussian pair at order 1e20 peaks at x = -1e20: without this the peak was placed at
    the grid's last point, -3e8, the quadrature never saw the integrand's mass, and both precisions
    agreed on 4.998e19 (the value is 5e19). Raises ``ArithmeticError`` when the values still rise at
    ``10^4608`` (:data:`_FOLLOW_EXPONENT`): no peak to integrate around."""
    pts, vals = list(pts), list(vals)
    best = max(range(len(vals)), key=lambda j: vals[j])
    for sgn, end, i_out in ((1, hi, len(pts) - 1), (-1, lo, 0)):
        if not mpmath.isinf(end) or best != i_out or not vals[i_out] > 0:
            continue
        c = lo if not mpmath.isinf(lo) else hi if not mpmath.isinf(hi) else mpmath.mpf(0)

        def along(u, c=c, sgn=sgn):
            return logf(c + sgn * mpmath.mpf(10) ** u)

        us, ws = [mpmath.log10(abs(pts[i_out] - c))], [mpmath.log(vals[i_out])]
        e = 9
        while ws[-1] > -mpmath.inf and (len(ws) == 1 or ws[-1] > ws[-2]):
            if e > _FOLLOW_EXPONENT:
                raise ArithmeticError(f"the integrand still grows at |x| = 1e{_FOLLOW_EXPONENT}: no peak to "
                                      "integrate around")
            us.append(mpmath.mpf(e))
            ws.append(along(e))
            e *= 2
        j = max(range(len(ws)), key=lambda k: ws[k])
        if j == 0:
            continue
        u, _ = golden_max(along, us[j - 1], us[j + 1], 60)
        # the bracket's ends were sampled on the way out; the peak and its two neighbours are new
        new = [(w, along(w)) for w in (u - mpmath.mpf(1) / 64, u, u + mpmath.mpf(1) / 64)]
        for w, lv in [(us[j - 1], ws[j - 1]), *new, (us[j + 1], ws[j + 1])]:
            pts.append(c + sgn * mpmath.mpf(10) ** w)
            vals.append(mpmath.exp(lv))
        order = sorted(range(len(pts)), key=lambda k: pts[k])
        pts, vals = [pts[k] for k in order], [vals[k] for k in order]
    return pts, vals


def _peak(f, lo, hi):
    """Where |f| is largest on [lo, hi]: the best point of the fixed grid, refined by golden-section
    search between its neighbours (a peak that moved far out, e.g. to x = -38 for the generalized
    Gaussian at alpha = 20, must be a cut, not stepped over); None when f has no value on the grid."""
    grid = _grid(lo, hi)
    values = []
    for t in grid:
        try:
            values.append(abs(f(t)))
        except (ArithmeticError, ValueError, ZeroDivisionError):
            values.append(mpmath.mpf(-1))
    if not grid or max(values) <= 0:
        return None
    ordered = sorted(range(len(grid)), key=lambda i: grid[i])
    pts, vals = [grid[i] for i in ordered], [values[i] for i in ordered]
    logf = _log_abs(f)
    pts, vals = _follow_out(logf, pts, vals, lo, hi)
    i = max(range(len(pts)), key=lambda j: vals[j])
    a, b = (pts[i - 1] if i > 0 else pts[i]), (pts[i + 1] if i + 1 < len(pts) else pts[i])
    if a == b:
        return pts[i]

    lo, hi = a, b
    t, v = golden_max(logf, lo, hi, 60)
    # a peak narrower than the bracket the search leaves (a Gaussian of scale 1e-30 at x = -999: after 60
    # steps the bracket is 1e-10 wide, 1e20 widths): the search goes on around it down to the working
    # precision. A cut beside such a peak misses its mass, and both precisions of the plan would miss it
    # alike, so a peak still narrower than where the search can place it is refused, not integrated
    h = (hi - lo) * mpmath.mpf("0.618") ** 60
    ulp = mpmath.mpf(2) ** (-mpmath.mp.prec + 4)
    while True:
        near = [logf(t + s * h) for s in (1, -1) if lo <= t + s * h <= hi]
        if not any(abs(u - v) > mpmath.mpf(1) / 2 for u in near):
            return t
        if h <= ulp * max(1, abs(t)):
            if len(near) == 2 and all(v - mpmath.mpf(1) / 2 > u > -mpmath.inf for u in near):
                raise ArithmeticError(f"the integrand's peak at x = {mpmath.nstr(t, 8)} is narrower than the "
                                      "working precision can place it")
            return t  # a jump (a kink, cut there anyway) or an end of the support
        t2, v2 = golden_max(logf, max(lo, t - 2 * h), min(hi, t + 2 * h), 60)
        if v2 > v:
            t, v = t2, v2
        h = 4 * h * mpmath.mpf("0.618") ** 60


def _continuous(f, spans, kinks, degree):
    total, err = mpmath.mpf(0), mpmath.mpf(0)
    for lo, hi in spans:
        cuts = sorted({lo, hi, *[k for k in kinks if lo < k < hi]})
        peak = _peak(f, lo, hi)
        if peak is not None and peak not in cuts:
            cuts = sorted(cuts + [peak])
        v, e = mpmath.quad(f, cuts, error=True, maxdegree=degree)
        total += v
        err += e
    return total, err


class _Pair:
    """log P and log Q at a point from the lambdified densities, for the proved tail bounds of
    :mod:`rdpsym.numeric.ratios` (no Arb balls here: two precisions)."""

    def __init__(self, p, q):
        self.p, self.q = p, q

    def log_balls(self, t):
        return None

    def logpq(self, t):
        pv, qv = mpmath.mpf(mpmath.re(self.p(t))), mpmath.mpf(mpmath.re(self.q(t)))
        return (mpmath.log(pv) if pv > 0 else -mpmath.inf), (mpmath.log(qv) if qv > 0 else -mpmath.inf)


#: the most terms summed per progression (a work budget: a count, never a time)
MAX_TERMS = 200000


def _mode(logf, start: int, step: int) -> int:
    """The offset of the largest term of a progression: the best of the offsets 10^(e/4) (up to 1e20),
    then bisection on the sign of the difference of neighbouring terms. Raises ArithmeticError when
    the largest sampled term is the last (the mode lies beyond 1e20)."""
    grid = sorted({0, 1, 2, 3} | {int(10 ** (e / 4)) for e in range(4, 81)})
    vals = [logf(start + step * j) for j in grid]
    i = max(range(len(grid)), key=lambda i: vals[i])
    if i == len(grid) - 1:
        raise ArithmeticError("the summand's largest term lies beyond offset 1e20: not summed")
    lo, hi = (grid[i - 1] if i > 0 else 0), grid[i + 1]
    while hi - lo > 1:  # the last offset whose next term is not larger
        mid = (lo + hi) // 2
        if logf(start + step * (mid + 1)) > logf(start + step * mid):
            lo = mid + 1
        else:
            hi = mid
    return max((lo, hi), key=lambda j: logf(start + step * j))


def _discrete(f, logf, support: Support, pair: _Pair, P, Q, x, majorants):
    """The sum of ``f`` over the support: finite points directly; each progression outward from its
    largest term (:func:`_mode`), each side until a term is below the working precision's share of the
    sum and the rest is bounded: proved (:func:`rdpsym.numeric.ratios.bound_at` on ``majorants``,
    terms ``c P^b Q^(1-b)`` above ``|f|``), else the geometric series of the last ratio when the last 32
    ratios decrease (not proved: said in the notes). Returns (sum, bound on what was left off, notes)."""
    from .ratios import bound_at

    total, left, notes = mpmath.mpf(0), mpmath.mpf(0), []
    for t in support.finite_points:
        total += f(int(t) if t.is_Integer else mpmath.mpf(t.p) / t.q if t.is_Rational else mpmath.mpf(sp.Float(t, mpmath.mp.dps + 5)))
    eps = mpmath.eps
    for prog in support.progressions:
        start, step = int(prog.start), int(prog.step)
        m = _mode(logf, start, step)
        S, A, n = mpmath.mpf(0), mpmath.mpf(0), 0
        for direction in (-1, 1):
            j = m if direction > 0 else m - 1
            ratios, prev, attempt_at, attempts = [], None, 0, 0
            while j >= 0:
                t = f(start + step * j)
                S, A, n = S + t, A + abs(t), n + 1
                if prev:
                    ratios.append(abs(t) / prev)
                prev = abs(t)
                if abs(t) <= eps * A and n >= attempt_at:
                    attempt_at, attempts = 2 * n + 8, attempts + 1
                    bounds = [bound_at(pair, P, Q, x, b, start, step, j, 0, direction < 0) for b, _ in majorants]
                    if majorants and all(bd is not None for bd in bounds):
                        rest = sum(mpmath.mpf(int(sp.Rational(c).p)) / int(sp.Rational(c).q) * bd.bound
                                   for (_, c), bd in zip(majorants, bounds))
                        if rest <= eps * A:
                            left += rest
                            notes.append("proved tail bounds (ratio test, monotone ratio)")
                            break
                    tail = ratios[-32:]
                    # the unproved bound only after three proofs failed (each a doubling of the terms)
                    if (direction > 0 and attempts >= 3 and len(tail) == 32 and all(r < 1 for r in tail)
                            and all(u >= v for u, v in zip(tail, tail[1:]))):
                        r = tail[-1]
                        left += abs(t) * r / (1 - r)
                        notes.append("geometric tail bound from decreasing sampled ratios (not proved)")
                        break
                j += direction
                if n > MAX_TERMS:
                    raise ArithmeticError(f"no bound on the rest of the sum after {MAX_TERMS} terms")
        total += S
    return total, left, notes


def _digits_for(f_log, lp_lq, am, peak, width) -> int:
    """Digits beyond the plan's guard (8) that the value near ``peak`` needs: the cancellation in ``a log P
    + (1 - a) log Q`` and, unless ``width`` is None, ``|peak| / width``
    (:func:`rdpsym.numeric.scales.digits_needed`'s measure)."""
    lp, lq = lp_lq
    if not (mpmath.isfinite(lp) and mpmath.isfinite(lq)):
        return 0
    big = abs(am) * abs(lp) + abs(1 - am) * abs(lq)
    scale = max(mpmath.mpf(1), big, abs(peak) / width if width is not None and width > 0 else 1)
    return max(0, int(mpmath.ceil(mpmath.log10(scale))) - 8)


def _width(logf, t0, v0, discrete: bool):
    """The distance from ``t0`` at which ``logf`` has dropped by 1 (the smaller side; 1 on a lattice)."""
    if discrete:
        return mpmath.mpf(1)
    out = []
    for sgn in (1, -1):
        d = mpmath.mpf(1)
        grow = logf(t0 + sgn * d) > v0 - 1
        for _ in range(64):
            nd = d * 2 ** 16 if grow else d / 2 ** 16
            if (logf(t0 + sgn * nd) > v0 - 1) != grow:
                break
            d = nd
        out.append(d)
    return min(out)


def _log_abs(f):
    def logf(t):
        try:
            v = abs(f(t))
        except (ArithmeticError, ValueError, ZeroDivisionError):
            return -mpmath.inf
        return mpmath.log(v) if v > 0 else -mpmath.inf
    return logf


def _extra_digits(p, q, pair: _Pair, a, supp: Support, dps: int) -> int:
    """Digits to add to both of the plan's precisions for this problem (large orders, extreme scales):
    at the largest value of the integrand (:func:`_peak`, :func:`_mode`) the cancellation of ``a log P + (1
    - a) log Q`` and the peak's distance from 0 in widths, found at the plan's first precision."""
    extra = 0
    # on a continuous support twice: first the cancellation alone (at the plan's precision a log of 5e65
    # is known to 1e25, so the peak's place and width are noise there), then the place and the width of
    # the peak at the precision that cancellation takes; a lattice's width is 1
    for with_width in ((False, True) if supp.is_continuous else (True,)):
        with mpmath.workdps(dps + 10 + extra):
            wp = mpmath.mp.dps
            am = mpmath.mpf(a.p) / a.q if a.is_Rational else mpmath.mpf(sp.Float(a, wp + 5))
            f = _integrand(p, q, am, "power")
            logf = _log_abs(f)
            found = 0
            if supp.is_continuous:
                for lo, hi in supp.spans:
                    lo = mpmath.mpf(sp.Float(lo, wp + 5)) if lo.is_finite else -mpmath.inf
                    hi = mpmath.mpf(sp.Float(hi, wp + 5)) if hi.is_finite else mpmath.inf
                    t = _peak(f, lo, hi) if hi > lo else None
                    if t is not None and mpmath.isfinite(logf(t)):
                        width = _width(logf, t, logf(t), False) if with_width else None
                        found = max(found, _digits_for(logf, pair.logpq(t), am, t, width))
            else:
                for prog in supp.progressions:
                    start, step = int(prog.start), int(prog.step)
                    try:
                        k = start + step * _mode(logf, start, step)
                    except ArithmeticError:
                        continue
                    found = max(found, _digits_for(logf, pair.logpq(mpmath.mpf(k)), am, mpmath.mpf(k), mpmath.mpf(1)))
        extra = max(extra, found)
        if extra > MAX_EXTRA_DIGITS:
            break
    return extra


def reference_divergence(P, Q, x, support, alpha, values, dps: int = 30) -> NumericValue:
    """D_alpha(P||Q) (alpha > 0, alpha = 1 the KL; not alpha = oo) by the method of the module docstring,
    a :class:`~rdpsym.numeric.NumericValue` with its error estimate. Arguments as for
    :func:`rdpsym.numeric.numeric_divergence`."""
    if isinstance(x, (tuple, list)) and len(x) > 1:
        # not implemented for several variables: no evidence, so a numeric curve is inconclusive there
        return NumericValue.failed(dps, method="reference: failed", detail="the reference method integrates over one variable only")
    if isinstance(x, (tuple, list)):
        x, support = x[0], support.args[0] if isinstance(support, sp.ProductSet) else support
    a = sp.S(alpha) if not isinstance(alpha, mpmath.mpf) else sp.Rational(str(alpha))
    if a == sp.oo or not a.is_number or not a.is_positive:
        raise ValueError(f"alpha must be a finite number > 0 for the reference method; got {alpha!r}")
    P, Q, sup = substitute_values(P, Q, x, support, values)
    if P == Q:
        return NumericValue.identical(dps)
    P = P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P
    Q = Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q
    supp = Support.of(sup, numbers=True)
    outs, notes = [], []
    quantity = quantity_for(a)
    majorants = quantity.majorants()[0] if quantity.majorants() else ()
    try:
        P, Q, norm_rel = _without_normalisers(P, Q, x, dps + 25)
        p, q = _lambdified(P, Q, x)
        pair = _Pair(p, q)
        extra = _extra_digits(p, q, pair, a, supp, dps)
        if extra > MAX_EXTRA_DIGITS:
            raise ArithmeticError(f"refused: the problem's scale (a large order or an extreme parameter) needs "
                                  f"{extra} more digits, more than the reference method's {MAX_EXTRA_DIGITS}")
        for wp, degree in ((dps + 10 + extra, 8), (dps + 25 + extra, 10)):
            with mpmath.workdps(wp):
                am = mpmath.mpf(a.p) / a.q if a.is_Rational else mpmath.mpf(sp.Float(a, wp + 5))
                kind = "kl" if am == 1 else "expm1" if abs(am - 1) < _NEAR_ONE else "power"
                f = _integrand(p, q, am, kind)
                if supp.is_continuous:
                    spans = [(mpmath.mpf(sp.Float(lo, wp + 5)) if lo.is_finite else -mpmath.inf,
                              mpmath.mpf(sp.Float(hi, wp + 5)) if hi.is_finite else mpmath.inf)
                             for lo, hi in supp.spans]
                    kinks, _ = find_kinks(P, Q, x, wp, [s for s in spans if s[1] > s[0]])
                    value, err = _continuous(f, spans, kinks, degree)
                else:
                    value, err, found = _discrete(f, _log_abs(f), supp, pair, P, Q, x, majorants)
                    notes += found
                if kind == "kl":
                    D, e = value, err
                elif kind == "expm1":
                    D, e = mpmath.log1p(value) / (am - 1), err / abs((1 + value) * (am - 1))
                else:
                    if value <= 0:
                        raise ArithmeticError(f"the integral is {mpmath.nstr(value, 5)}")
                    D, e = mpmath.log(value) / (am - 1), err / abs(value * (am - 1))
                # normalisers off by a relative r scale P and Q by (1 + r): log I moves by at most
                # (|a| + |1 - a|) r, the KL by (|KL| + 2) r (the mass of P and both logarithms)
                e += ((abs(D) + 2) if kind == "kl" else (abs(am) + abs(1 - am)) / abs(am - 1)) * norm_rel
                outs.append((D, e))
    except OverflowError as exc:
        if a >= 1:
            return NumericValue.infinite(dps, str(exc), method="reference: tanh-sinh / nsum")
        return NumericValue.failed(dps, method="reference: failed", detail=str(exc))
    except (ArithmeticError, ValueError, ZeroDivisionError, TypeError, NormaliserError,
            mpmath.libmp.NoConvergence) as exc:
        return NumericValue.failed(dps, method="reference: failed", detail=f"{type(exc).__name__}: {exc}")
    with mpmath.workdps(dps + 25):
        (D1, e1), (D2, e2) = outs
        if not (mpmath.isfinite(D1) and mpmath.isfinite(D2)):
            return NumericValue.failed(dps, method="reference: failed", detail="a non-finite value")
        error = abs(D1 - D2) + e1 + e2
        tol = mpmath.mpf(10) ** (-0.6 * dps) * max(abs(D2), mpmath.mpf(10) ** (-0.4 * dps))
        converged = bool(error <= tol)
        detail = (f"mpmath {'quad (tanh-sinh)' if supp.is_continuous else 'sums from the largest term'} at "
                  f"{dps + 10 + extra} and {dps + 25 + extra} digits differ by {mpmath.nstr(abs(D1 - D2), 3)}")
        if notes:
            detail += "; " + "; ".join(dict.fromkeys(notes))
        if not converged:
            detail += f"; NOT CONVERGED: error {mpmath.nstr(error, 3)} > tolerance {mpmath.nstr(tol, 3)}"
    return NumericValue.rounded(D2, error, dps, "reference: " + ("tanh-sinh" if supp.is_continuous else "direct sums"),
                                converged, detail)
