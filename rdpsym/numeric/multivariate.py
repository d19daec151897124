r"""Rényi divergences of densities in two or three output variables: iterated quadrature and sums.

For densities (or pmfs, or a mixture: density in some coordinates, pmf in others) ``P``, ``Q`` of
``x = (x_1, ..., x_d)``, ``d <= 3``, on a product support ``S_1 x ... x S_d``, this computes (Mironov
2017, arXiv:1702.07476 v3, Def. 3; van Erven and Harremoës 2014, IEEE T-IT 60(7), Thms. 5 and 6)
:math:`D_\alpha = \frac{1}{\alpha-1}\log\int P^\alpha Q^{1-\alpha}`, the KL at ``alpha = 1`` and
:math:`D_\infty = \sup_{P>0}\log P/Q` at ``alpha = oo``, by the method of the one-dimensional path
(:mod:`rdpsym.numeric.driver`), coordinate by coordinate:

* **Log space.** The integrand is ``exp(L - L_max)``, ``L = alpha log P + (1-alpha) log Q`` (mpmath
  numbers: no underflow at alpha = 1000); near alpha = 1 (``|alpha - 1| < 1/8``) the expm1 form
  ``I = ∫P + ∫P expm1((alpha-1) log P/Q)`` (:mod:`.quantities`), retried in plain log space when
  ``|(alpha-1) D| >= 1``; KL as ``E_P[log P/Q]``.
* **Peak.** Cyclic coordinate ascent (each coordinate: a logarithmic scan, :func:`.kinks.scan_points`,
  then golden-section search; integer ternary search on discrete coordinates), then Newton steps with a
  central-difference Hessian ``H`` (accepted only when ``L`` increases). When ``-H`` is positive
  definite, ``Σ = (-H)^-1`` is the covariance of the Gaussian that matches ``exp(L)`` at its peak.
* **Breakpoints per coordinate.** The coordinate's support ends, the zeros of the kink arguments
  (``Abs``, ``sign``, ``Heaviside``, ``Max``/``Min``, ``Piecewise``) that depend on that coordinate
  alone (:func:`.kinks.kinks`), and the centre ``c`` of the integrand in that coordinate given the
  outer ones (the Gaussian regression ``c = x*_j + Σ_jO Σ_OO^-1 (x_O - x*_O)``) with ``c ± w 8^k``,
  ``k = 0..2`` (``w = sqrt(2)`` times the conditional standard deviation, the distance at which ``L``
  drops by 1). A kink along a curve in several coordinates (``|x_1 - x_2|``) is not a breakpoint; the
  error estimate then shows whether the quadrature resolved it.
* **Truncation.** An infinite end of coordinate ``j`` is cut where ``L`` along the ridge
  ``x* + t Σ e_j / Σ_jj`` (the maximum of ``L`` over the other coordinates, for a Gaussian) and along
  ``x* + t e_j`` falls below ``L_max - (wp ln 10 + 40)``, when ``L`` decays exponentially there (fallen
  by 1e6 at ``1e8 w`` or ``1e16 w``); otherwise the end stays infinite and mpmath's tanh-sinh maps it.
  ``L`` still growing far out (above ``L_max + 1e6`` and increasing at ``1e8 w``, ``1e16 w``) gives
  ``inf``; a slower-than-exponential tail is a doubt (not converged: divergence in several variables is
  not decided from a polynomial slope).
* **Quadrature.** Iterated one-dimensional ``mpmath.quad`` over the continuous coordinates (inner
  breakpoints depend on the outer values), the discrete coordinates outermost and summed: finite sets
  exactly, progressions outward from the mode until past the truncation and the geometric tail bound
  ``t r / (1 - r)`` is below ``10^-wp`` of the sum (the bound enters ``error``).
* **Error estimate.** Two evaluations, at ``dps + 10`` and ``dps + 20`` digits, the second with every
  width and cut scaled by 1.37 (so the node sets differ): Gauss-Legendre on finite pieces (tanh-sinh on
  infinite ones) first, with 12, 24 then 48 nodes per piece, then a tanh-sinh pair. ``error = max(10
  |D1 - D2|, mpmath's estimates of tanh-sinh pieces, the largest relative estimate of the inner ones
  (positive integrands), tail bounds)``; the factor 10 because both evaluations use one rule (their
  difference underestimated the error of the second by up to 7 times on 2-D Gaussians at alpha = 50), propagated through ``log I / (alpha - 1)``. ``converged`` follows the driver's rule.
* **D_inf.** Coordinate ascent and Newton on ``log P/Q`` at both precisions, values along rays at
  ``1e8 .. 1e64`` widths: growing without bound gives ``inf``; still increasing is a doubt.
* **Time.** Every call is bounded by ``RDPSYM_EVAL_SECONDS`` (:mod:`rdpsym._config`): an alarm
  (:func:`rdpsym._timeout.time_limit`) in the main thread and a deadline checked at every 256th density
  evaluation in any thread; a call out of time returns ``failed`` (not converged), never a value.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import mpmath
import sympy as sp

from .._config import settings
from .._numbers import ArgumentError
from .._timeout import StepTimeout, deadline_passed, time_limit
from ..specify.support import Support
from ..specify.variables import MAX_DIMENSION, as_variables, coordinate_supports
from .inputs import substitute_values
from .kinks import kink_arguments
from .kinks import kinks as find_kinks
from .multipeak import MAX_TERMS, Coordinate, OutOfTime, Pair, find_peak, log_form, show
from .quantities import Form, quantity_for
from .tails import Failed, Infinite, far
from .value import NumericValue

__all__ = ["multivariate_divergence"]

#: factor of the second evaluation's widths and cuts (as in the one-dimensional driver)
JITTER = mpmath.mpf("1.37")
#: Gauss-Legendre degrees tried (mpmath's degree m has 3 * 2^(m-1) nodes per piece): then tanh-sinh
GL_DEGREES = (3, 4, 5)
_GL = mpmath.calculus.quadrature.GaussLegendre(mpmath.mp)


def _gl_nodes(degree):
    """Gauss-Legendre nodes and weights on [-1, 1] at the current precision (mpmath's, cached)."""
    return _GL.get_nodes(-1, 1, degree, mpmath.mp.prec)


# ----------------------------------------------------------------------------------------------
# the shape of the integrand: conditional centres and widths, cuts, tails
# ----------------------------------------------------------------------------------------------
@dataclass
class _Shape:
    """What one evaluation needs to know about the integrand (the peak and the Gaussian model)."""

    peak: list
    Lmax: object
    widths: list          # per coordinate: conditional width given all outer coordinates
    slopes: list          # per coordinate: {outer coordinate: regression slope}
    cuts: dict            # (coordinate, ±1) -> distance from the peak (exponential tails)
    doubts: list


def _regression(sigma, order, widths):
    """Per coordinate j (position k in ``order``): slopes of its conditional centre on the outer
    coordinates and its conditional width sqrt(2 (Σ_jj - Σ_jO Σ_OO^-1 Σ_Oj)), from the Gaussian model."""
    d = len(order)
    slopes, conds = [dict() for _ in range(d)], list(widths)
    if sigma is None:
        return slopes, conds
    for k, j in enumerate(order):
        outer = order[:k]
        if not outer:
            conds[j] = mpmath.sqrt(2 * sigma[j, j])
            continue
        S_oo = mpmath.matrix([[sigma[a, b] for b in outer] for a in outer])
        S_oj = mpmath.matrix([sigma[a, j] for a in outer])
        try:
            beta = mpmath.lu_solve(S_oo, S_oj)
        except ZeroDivisionError:
            continue
        var = sigma[j, j] - sum(beta[i] * S_oj[i] for i in range(len(outer)))
        if var > 0:
            slopes[j] = {a: beta[i] for i, a in enumerate(outer)}
            conds[j] = mpmath.sqrt(2 * var)
    return slopes, conds


def _directions(j, coords, sigma):
    """Directions along which coordinate j's extent is probed: e_j, and the ridge Σ e_j / Σ_jj when every
    other coordinate it moves is a continuous one over the whole real line."""
    d = len(coords)
    out = [[mpmath.mpf(int(i == j)) for i in range(d)]]
    if sigma is not None and sigma[j, j] > 0:
        ridge = [sigma[i, j] / sigma[j, j] for i in range(d)]
        if all(i == j or ridge[i] == 0 or (coords[i].continuous and coords[i].spans == [(-mpmath.inf, mpmath.inf)])
               for i in range(d)):
            out.append(ridge)
    return out


def _infinite_directions(c) -> list[int]:
    """The signs (+1, -1) of the directions in which coordinate ``c``'s set is unbounded: an infinite
    end of one of its spans (continuous) or an unending progression (discrete), once per such end."""
    ends = [(hi, 1) for _, hi in c.spans] + [(lo, -1) for lo, _ in c.spans] if c.continuous else \
        [(mpmath.inf if st > 0 else -mpmath.inf, 1 if st > 0 else -1) for _, st in c.progressions]
    return [sgn for end, sgn in ends if mpmath.isinf(end)]


def _shape(pair, coords, order, q, a, sweeps, iters):
    """Peak, shift, widths, regression slopes, exponential-tail cuts and tail doubts (raises Infinite)."""
    # an order's own integrand is +oo where P > 0 = Q and alpha > 1: scanned first for that
    Lint = log_form(pair, q.scan_form, a) if a is not None else None
    Lw = log_form(pair, q.peak_form, a)
    Lchk = log_form(pair, q.check_form, a)
    if Lint is not None:
        x, v, _, _, _ = find_peak(Lint, coords, 2, 30)
        if v == mpmath.inf and a > 1:
            raise Infinite(f"P > 0 where Q = 0 (at x = {show(x)}), alpha > 1")
    peak, Lmax, widths, sigma, growth = find_peak(Lw, coords, sweeps, iters)
    if Lmax == -mpmath.inf:
        raise Failed("the integrand vanishes at every sample point (P = 0 or Q = 0 everywhere?)")
    if Lmax == mpmath.inf:
        raise Infinite(f"P > 0 where Q = 0 (at x = {show(peak)}), alpha > 1")
    if not q.peak_is_integrand:
        lp, lq = pair.logpq(tuple(peak))
        if q.infinite_at(lp, lq, a):
            raise Infinite(f"P > 0 where Q = 0 (at x = {show(peak)})")
    # L curving upward at its best point: an indefinite quadratic (Gaussians with alpha S_Q + (1 - alpha)
    # S_P not positive definite) grows without bound along such a direction
    scale = max(widths)
    for u in growth:
        for sgn in (1, -1):
            def line(t, u=u, sgn=sgn):
                return tuple(peak[i] + sgn * t * u[i] for i in range(len(coords)))
            if all(coords[i].continuous and coords[i].spans == [(-mpmath.inf, mpmath.inf)]
                   for i in range(len(coords)) if u[i] != 0):
                fw = [far(Lchk, lambda k=k: line(scale * mpmath.mpf(10) ** k), k + 10) for k in (8, 16)]
                if fw[0] > Lmax + 10**6 and fw[1] > fw[0]:
                    raise Infinite("the integrand grows without bound along a direction of positive curvature")
    slopes, conds = _regression(sigma, order, widths)
    conds = [max(u, v) for u, v in zip(conds, widths)]
    thr = Lmax - (mpmath.mp.dps * mpmath.log(10) + 40)
    cuts, doubts = {}, []
    for j, c in enumerate(coords):
        for sgn in _infinite_directions(c):
            w = max(widths[j], conds[j])
            best = None
            for u in _directions(j, coords, sigma):
                def ray(t, u=u, sgn=sgn):
                    return tuple(peak[i] + sgn * t * u[i] for i in range(len(coords)))
                fw = [far(lambda pt: Lchk(pt), lambda k=k: ray(w * mpmath.mpf(10) ** k), k + 10) for k in (8, 16)]
                if fw[0] > Lmax + 10**6 and fw[1] > fw[0]:
                    raise Infinite(f"the integrand grows without bound along x{j + 1} -> {'+' if sgn > 0 else '-'}oo")
                if not any(v < Lmax - 10**6 for v in fw):
                    doubts.append(f"the integrand does not decay exponentially along x{j + 1} -> "
                                  f"{'+' if sgn > 0 else '-'}oo: divergence in several variables is not decided "
                                  "from a polynomial tail")
                    best = None
                    break
                dist = w
                for _ in range(300):
                    pt = ray(dist)
                    if Lw(pt) < thr and Lchk(pt) < thr:
                        break
                    dist *= 2
                else:
                    best = None
                    break
                best = dist if best is None else max(best, dist)
            if best is not None:
                cuts[(j, sgn)] = best
    return _Shape(peak, Lmax, widths, slopes, cuts, doubts), conds


def _centre(shape, j, pt):
    c = shape.peak[j]
    for i, s in shape.slopes[j].items():
        c += s * (pt[i] - shape.peak[i])
    return c


def _pieces(shape, coords, conds, j, pt, jitter):
    """Breakpoint lists, one per span of coordinate j, given the outer values in ``pt``."""
    c, w = _centre(shape, j, pt), conds[j] * jitter
    out = []
    for lo, hi in coords[j].spans:
        if mpmath.isinf(lo) and (j, -1) in shape.cuts:
            lo = shape.peak[j] - shape.cuts[(j, -1)] * jitter + min(c - shape.peak[j], 0)
        if mpmath.isinf(hi) and (j, 1) in shape.cuts:
            hi = shape.peak[j] + shape.cuts[(j, 1)] * jitter + max(c - shape.peak[j], 0)
        if not hi > lo:
            continue
        pts = {lo, hi, *[k for k in coords[j].kinks if lo < k < hi]}
        tol = w * mpmath.mpf(10) ** -3
        fixed = set(pts) - {lo, hi} | {e for e in (lo, hi) if e in coords[j].spans[0] or e in
                                       [b for span in coords[j].spans for b in span]}
        for t in [c] + [c + s * w * 4**k for k in range(1, 4) for s in (1, -1)]:
            if lo < t < hi and all(abs(t - u) > tol for u in pts):
                pts.add(t)
        fixed.add(c)
        pts = sorted(pts)
        if jitter != 1:
            # the second evaluation must not repeat the first one's rule on a piece whose ends the
            # scaling does not move (support ends, kinks, the centre): such a piece is split
            pts = sorted(set(pts) | {u + (v - u) / jitter for u, v in zip(pts[:-1], pts[1:])
                                     if u in fixed and v in fixed and not (mpmath.isinf(u) or mpmath.isinf(v))})
        out.append(pts)
    return out


# ----------------------------------------------------------------------------------------------
# iterated integration and summation
# ----------------------------------------------------------------------------------------------
class _Nest:
    """∫ g over the product support by iterated quadrature (discrete coordinates summed, outermost)."""

    def __init__(self, g, coords, order, shape, conds, rule, jitter, positive):
        self.g, self.coords, self.order, self.shape, self.conds = g, coords, order, shape, conds
        self.jitter, self.positive = jitter, positive
        self.rule, self.degree = rule if isinstance(rule, tuple) else (rule, None)
        self.rel = mpmath.mpf(0)     # largest relative error estimate of an inner quadrature
        self.tail = mpmath.mpf(0)    # geometric tail bounds of the sums (absolute, at the outer level)
        self.doubts = []

    def run(self):
        pt = list(self.shape.peak)
        v, e = self._level(0, pt)
        return v, e + self.tail + self.rel * abs(v)

    def _level(self, k, pt):
        if k == len(self.order):
            return self.g(tuple(pt)), mpmath.mpf(0)
        j = self.order[k]
        c = self.coords[j]

        def inner(t):
            pt[j] = t
            v, e = self._level(k + 1, pt)
            if self.positive and e and v:
                self.rel = max(self.rel, e / abs(v))
            return v

        if not c.continuous:
            return self._sum(inner, j, k)
        total, err = mpmath.mpf(0), mpmath.mpf(0)
        for bp in _pieces(self.shape, self.coords, self.conds, j, pt, self.jitter):
            for lo, hi in zip(bp[:-1], bp[1:]):
                if self.rule != "tanh-sinh" and not (mpmath.isinf(lo) or mpmath.isinf(hi)):
                    # a fixed Gauss-Legendre rule: its error shows in the second evaluation, whose
                    # pieces (scaled widths and cuts) and precision differ
                    h, m = (hi - lo) / 2, (hi + lo) / 2
                    total += h * mpmath.fsum(wt * inner(m + h * u) for u, wt in _gl_nodes(self.degree))
                    continue
                v, e = mpmath.quad(inner, [lo, hi], method="tanh-sinh", error=True)
                total += v
                err += e
        return total, err

    def _sum(self, term, j, k):
        c = self.coords[j]
        total = mpmath.fsum(term(mpmath.mpf(p)) for p in c.points)
        eps = mpmath.eps
        for s0, st in c.progressions:
            # from the mode outward; never stop before the truncation distance of the tail
            j0 = max(int(mpmath.nint((self.shape.peak[j] - s0) / st)), 0)
            reach = self.shape.cuts.get((j, 1 if st > 0 else -1))
            jlast = j0 + (int(reach * self.jitter / abs(st)) + 1 if reach is not None else 0)
            S = mpmath.mpf(0)
            for direction in (-1, 1):
                i = j0 if direction > 0 else j0 - 1
                prev, n = None, 0
                while i >= 0:
                    t = term(mpmath.mpf(s0 + st * i))
                    S += t
                    n += 1
                    if prev is not None and prev > 0 and n > 3 and (direction < 0 or i > jlast):
                        r = abs(t) / prev
                        if r < 1:
                            bound = abs(t) * r / (1 - r)
                            if bound <= eps * abs(S) or t == 0:
                                if direction > 0 and k == 0:
                                    self.tail += bound
                                elif direction > 0 and S:
                                    self.rel = max(self.rel, bound / abs(S))
                                break
                    prev = abs(t)
                    i += direction
                    if n > MAX_TERMS:
                        self.doubts.append(f"the sum over x{j + 1} stopped after {n} terms without meeting "
                                           "the tail criterion")
                        break
            total += S
        return total, mpmath.mpf(0)


def _once(pair, coords, order, q, a, shape, conds, rule, jitter):
    """One evaluation of q at the current precision: (D, error, method, doubts)."""
    rule_name = rule if isinstance(rule, str) else f"Gauss-Legendre ({3 * 2 ** (rule[1] - 1)} nodes per piece)"
    S = shape.Lmax
    doubts = list(shape.doubts)
    slow = q.integrands(a, S, pair.logpq, log_form(pair, q.peak_form, a), show)
    integrals = []
    for form, g in zip(q.forms, slow):
        nest = _Nest(pair.integrand_for(form, a, S, g), coords, order, shape, conds, rule, jitter, form.positive)
        integrals.append(nest.run())
        doubts += nest.doubts
    D, err, method = q.finish(S, integrals, a, f"iterated {rule_name}")
    return D, err, method, doubts


def _sup(pair, coords, jitter):
    """D_inf = sup log P/Q: coordinate ascent + Newton, then rays from the best point (raises Infinite)."""
    R = log_form(pair, Form.RATIO, None)
    iters = int(mpmath.mp.prec * 1.5)
    x, v, widths, _, _ = find_peak(R, coords, 40, iters)
    if v == mpmath.inf:
        raise Infinite(f"P > 0 where Q = 0 (at x = {show(x)})")
    if v == -mpmath.inf:
        raise Failed("P = 0 at every sample point")
    doubts, d = [], len(coords)
    for j, c in enumerate(coords):
        for sgn in _infinite_directions(c):
            vs = [far(R, lambda k=k: tuple(x[i] + (sgn * jitter * mpmath.mpf(10) ** k if i == j else 0) for i in range(d)),
                      k + 10) for k in (8, 16, 32, 64)]
            if any(u == mpmath.inf for u in vs):
                raise Infinite(f"P > 0 where Q = 0 far out along x{j + 1}")
            if vs[3] > vs[2] > vs[1] and vs[3] - vs[2] > (vs[2] - vs[1]) / 4 and vs[3] - vs[2] > mpmath.mpf(10) ** -5:
                raise Infinite(f"log P/Q grows without bound as x{j + 1} -> {'+' if sgn > 0 else '-'}oo")
            if vs[3] > -mpmath.inf:
                if vs[3] > vs[2] and vs[3] - vs[2] > mpmath.eps * 16 * (1 + abs(vs[3])):
                    doubts.append(f"log P/Q still increases at |x{j + 1}| = 1e64: the supremum may be a limit")
                v = max(v, vs[3])
    return v, mpmath.mpf(0), "coordinate ascent + Newton sup of log P/Q", doubts


# ----------------------------------------------------------------------------------------------
# the entry point (called by rdpsym.numeric.numeric_divergence for a tuple of variables)
# ----------------------------------------------------------------------------------------------
def _coordinates(support, xs, P, Q, wp):
    parts = coordinate_supports(support, len(xs))
    coords = []
    for j, part in enumerate(parts):
        s = Support.of(part, numbers=True)
        if s.is_continuous:
            spans = []
            for lo, hi in s.spans:
                lo = -mpmath.inf if lo == -sp.oo else mpmath.mpf(sp.Float(lo, wp + 5))
                hi = mpmath.inf if hi == sp.oo else mpmath.mpf(sp.Float(hi, wp + 5))
                if hi > lo:
                    spans.append((lo, hi))
            if not spans:
                raise ArgumentError("support", "a product of sets with interior points",
                                    message=f"support: coordinate {xs[j]} has no interval of positive length")
            coords.append(Coordinate(True, spans=spans))
        else:
            pts = [mpmath.mpf(sp.Float(p, wp + 5)) if not p.is_Integer else int(p) for p in s.finite_points]
            if len(pts) > MAX_TERMS:
                raise ArgumentError("support", f"at most {MAX_TERMS} points per finite coordinate set", part)
            coords.append(Coordinate(False, points=pts,
                                      progressions=[(int(pc.start), int(pc.step)) for pc in s.progressions]))
    return coords


def _kinks(P, Q, xs, coords, wp, notes):
    """Per continuous coordinate, the zeros of the kink arguments that depend on it alone."""
    for j, x in enumerate(xs):
        if not coords[j].continuous:
            continue
        found = set()
        for arg in dict.fromkeys(kink_arguments(P, x) + kink_arguments(Q, x)):
            if arg.free_symbols & set(xs) == {x}:
                roots, more = find_kinks(sp.Abs(arg), sp.S.One, x, wp, coords[j].spans)
                found.update(roots)
                notes.extend(more)
            else:
                notes.append(f"the kink of {arg} is not along one coordinate: not a breakpoint")
        coords[j].kinks = sorted(found)


def multivariate_divergence(P, Q, x, support, alpha, values, dps: int = 50):
    r""":math:`D_\alpha(P\|Q)` of densities (pmfs) in the variables ``x = (x1, ..., xd)``, ``2 <= d <=``
    :data:`~rdpsym.specify.variables.MAX_DIMENSION`, over the product set ``support``, by the method of the
    module docstring; a :class:`~rdpsym.numeric.NumericValue` as the one-dimensional path returns.
    Arguments as for :func:`rdpsym.numeric.numeric_divergence` (which calls this for a tuple ``x``)."""
    xs = as_variables(x)
    if len(xs) > MAX_DIMENSION:
        raise ArgumentError("x", f"at most {MAX_DIMENSION} variables", x,
                            message=f"x: {len(xs)} variables {tuple(map(str, xs))}; the numeric path integrates "
                                    f"over at most {MAX_DIMENSION}")
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 5:
        raise ArgumentError("dps", "an int >= 5", dps)
    quantity = quantity_for(alpha)
    for name, e in (("P", P), ("Q", Q)):
        if not isinstance(e, sp.Expr):
            raise ArgumentError(name, f"a sympy expression in {tuple(map(str, xs))}", e)
        if e.has(sp.Sum, sp.Integral):
            raise ArgumentError(name, "free of Sum and Integral in several variables", e,
                                message=f"{name}: normalisers written as a Sum or Integral are not evaluated "
                                        "for densities in several variables; give them in closed form")
    coordinate_supports(support, len(xs))  # the argument error first
    P = P.xreplace({f: sp.Rational(f) for f in P.atoms(sp.Float)})
    Q = Q.xreplace({f: sp.Rational(f) for f in Q.atoms(sp.Float)})
    P, Q, support = substitute_values(P, Q, xs, support, values)
    P = P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P
    Q = Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q
    seconds = settings().eval_seconds
    try:
        with time_limit(seconds, clock="wall"):
            return _compute(P, Q, xs, support, quantity, dps, time.monotonic() + seconds)
    except StepTimeout:
        if deadline_passed():  # an enclosing limit expired: it wins
            raise
        return NumericValue.failed(dps, f"time limit of {seconds:g} s (RDPSYM_EVAL_SECONDS) exceeded")


def _compute(P, Q, xs, support, quantity, dps, deadline):
    wp1, wp2 = dps + 3, dps + 8
    notes: list[str] = []
    with mpmath.workdps(dps + 35):
        coords = _coordinates(support, xs, P, Q, dps + 35)
        _kinks(P, Q, xs, coords, dps + 35, notes)
    pair = Pair(P, Q, xs, dps + 45, deadline)
    order = [j for j, c in enumerate(coords) if not c.continuous] + [j for j, c in enumerate(coords) if c.continuous]

    def tolerance(v):
        return mpmath.mpf(10) ** (-0.6 * dps) * max(abs(v), mpmath.mpf(10) ** (-0.4 * dps))

    def attempt(q):
        shapes = {}
        plans = ([] if q.supremum else [("gauss-legendre", m) for m in GL_DEGREES]) + ["tanh-sinh"]
        try:
            for rule in plans:
                results = []
                for wp, jitter in ((wp1, mpmath.mpf(1)), (wp2, JITTER)):
                    with mpmath.workdps(wp):
                        a = q.order()
                        if q.supremum:
                            results.append(_sup(pair, coords, jitter))
                            continue
                        if wp not in shapes:
                            sweeps, iters = (8, 40)
                            shapes[wp] = _shape(pair, coords, order, q, a, sweeps, iters)
                        shape, conds = shapes[wp]
                        results.append(_once(pair, coords, order, q, a, shape, conds, rule, jitter))
                with mpmath.workdps(dps + 30):
                    (D1, e1, method, d1), (D2, e2, _, d2) = results
                    # the two evaluations use one rule on different pieces: their difference
                    # estimates the error of either only up to a factor (7 seen): 10 is used
                    error = max(10 * abs(D1 - D2), e1, e2)
                    if error <= tolerance(D2):
                        break
        except Infinite as exc:
            return NumericValue.infinite(dps, str(exc))
        except OutOfTime:
            return NumericValue.failed(dps, f"time limit of {settings().eval_seconds:g} s (RDPSYM_EVAL_SECONDS) exceeded")
        except Failed as exc:
            return NumericValue.failed(dps, str(exc))
        except (ArithmeticError, ValueError, TypeError, mpmath.libmp.NoConvergence) as exc:
            return NumericValue.failed(dps, f"numeric failure: {type(exc).__name__}: {exc}")
        with mpmath.workdps(dps + 30):
            tol = tolerance(D2)
            doubts = sorted(set(d1 + d2))
            converged = bool(error <= tol) and not doubts and mpmath.isfinite(D2)
            detail = (f"{method} over {len(xs)} variables; two evaluations at {wp1} and {wp2} digits differ by "
                      f"{mpmath.nstr(abs(D1 - D2), 3)}")
            if notes:
                detail += "; " + "; ".join(dict.fromkeys(notes))
            if doubts:
                detail += "; NOT TRUSTED: " + "; ".join(doubts)
            elif not converged:
                detail += f"; NOT CONVERGED: error {mpmath.nstr(error, 3)} > tolerance {mpmath.nstr(tol, 3)}"
        if not mpmath.isfinite(D2):
            return NumericValue(mpmath.mpf(0), mpmath.inf, dps, method, converged, detail)
        return NumericValue.rounded(D2, error, dps, method, converged, detail)

    out = attempt(quantity)
    if not out.converged and quantity.retry() is not None:
        retry = attempt(quantity.retry())
        if retry.converged:
            out = NumericValue(retry.value, retry.error, dps, retry.method, True,
                               retry.detail + "; plain log-space form (the near-1 form did not converge: "
                               + out.detail + ")")
    return NumericValue(out.value, out.error, dps, out.method, out.converged, out.detail,
                        {"mpmath": pair.count})
