"""Evaluation and peak search for densities in several variables (:mod:`.multivariate`).

:class:`Pair` evaluates ``log P`` and ``log Q`` at a point (a tuple of mpfs): with Arb (python-flint)
where the expression has only ``+ * ^ exp log sqrt Abs`` (:mod:`.fast`'s conversions; a ball that is not
finite or has lost digits falls back), else by mpmath (``sympy.lambdify``), and checks the call's deadline
every 256 evaluations. :func:`find_peak` is the maximum of a function of the point over a product
support: cyclic coordinate ascent (a logarithmic scan per coordinate, :func:`.kinks.scan_points`, then
golden-section search; integer ternary search on discrete coordinates), then Newton steps with a
central-difference Hessian ``H``, accepted only when the value increases; ``Σ = (-H)^-1`` when ``-H`` is
positive definite (the covariance of the Gaussian that matches ``exp(L)`` at its peak).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._optimize import golden_max, integer_max_bracket
from . import fast
from .backends.mpmath import MODULES, compiled_logs, lambdify_mpmath, log_expr, logs_of
from .kinks import scan_points
from .quantities import Form, log_integrand
from .tails import Failed

__all__ = ["MAX_TERMS", "Coordinate", "OutOfTime", "Pair", "find_peak", "log_form", "show"]

#: the most points a discrete coordinate may contribute (finite set or summed progression)
MAX_TERMS = 4000

class OutOfTime(Exception):
    """The call's deadline passed (checked between density evaluations)."""


@dataclass
class Coordinate:
    """One coordinate's support: spans (continuous) or points and progressions (discrete), kinks."""

    continuous: bool
    spans: list = field(default_factory=list)
    points: list = field(default_factory=list)
    progressions: list = field(default_factory=list)
    kinks: list = field(default_factory=list)

    def contains(self, t) -> bool:
        return any(lo <= t <= hi for lo, hi in self.spans) if self.continuous else True


def _fold(e, args, consts):
    """e with every maximal subexpression free of ``args`` (integers aside) replaced by a Dummy
    (recorded in ``consts``); raises TypeError on a function Arb is not taught here."""
    if e in args:
        return e
    if not (e.free_symbols & args):
        if e.is_Integer:
            return e
        d = sp.Dummy()
        consts.append((d, e))
        return d
    if isinstance(e, (sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.Abs)):
        return e.func(*[_fold(a, args, consts) for a in e.args], evaluate=False)
    raise TypeError(f"{type(e).__name__} is not compiled to Arb here")


def arb_function(args, expr, digits):
    """``expr`` (in the symbols ``args`` only) as a function of mpfs evaluated with Arb at the current
    mpmath precision + 30 bits, returning an mpf, or None where the ball is not finite or has fewer
    than ``mpmath.mp.prec`` accurate bits (the caller then uses mpmath); None when Arb is unavailable
    or the expression has other functions (Piecewise, special functions: the mpmath path)."""
    if not fast.available():
        return None
    consts: list = []
    try:
        tree = _fold(expr, frozenset(args), consts)
        with mpmath.workdps(digits):  # the constants at the pair's digits (not mpmath's current 15)
            values = [fast.to_arb(mpmath.mpf(sp.Float(sp.N(c, digits), digits))) for _, c in consts]
        fn = sp.lambdify(tuple(args) + tuple(d for d, _ in consts), tree, docstring_limit=0,
                         modules=[{"exp": lambda z: z.exp(), "log": lambda z: z.log(), "fabs": abs}, "mpmath"])
    except SYMBOLIC_ERRORS:  # anything Arb cannot take: mpmath
        return None
    workprec, to_arb, to_mpf = fast.flint.ctx.workprec, fast.to_arb, fast.to_mpf

    def f(*pt):
        prec = mpmath.mp.prec
        try:
            with workprec(prec + 30):
                v = fn(*[to_arb(t) for t in pt], *values)
        except (ValueError, ZeroDivisionError, TypeError):
            return None
        if not v.is_finite() or v.rad() > v.mid().__abs__() * fast.arb(2) ** -prec + fast.arb(2) ** (-2 * prec):
            return None
        return to_mpf(v)
    return f


class Pair:
    """Evaluators of log P, log Q at a point (a tuple of mpfs), Arb first, with a deadline."""

    def __init__(self, P, Q, xs, digits, deadline):
        self.p = lambdify_mpmath(xs, P)
        self.q = lambdify_mpmath(xs, Q)
        self.deadline, self.count = deadline, 0
        self.arb_lp = self.arb_lq = self.arb_fast = None
        try:
            lp0, lq0 = log_expr(P), log_expr(Q)
            lp, lq = lp0.evalf(digits), lq0.evalf(digits)
            self.lp = lambdify_mpmath(xs, lp)
            self.lq = lambdify_mpmath(xs, lq)
            A, S = sp.Dummy("a"), sp.Dummy("s")
            self.fast = sp.lambdify(tuple(xs) + (A, S), sp.exp(A * lp + (1 - A) * lq - S), modules=MODULES,
                                    docstring_limit=0)
        except SYMBOLIC_ERRORS:  # any sympy trouble: numeric logs of P and Q
            self.lp = self.lq = self.fast = None
            return
        self.arb_lp, self.arb_lq = arb_function(xs, lp0, digits), arb_function(xs, lq0, digits)
        if self.arb_lp is not None and self.arb_lq is not None:
            self.arb_fast = arb_function(tuple(xs) + (A, S), sp.exp(A * lp0 + (1 - A) * lq0 - S), digits)

    def integrand(self, pt, a, S):
        """exp(a log P + (1-a) log Q - S) at pt by the compiled forms, or None (the caller's slow path)."""
        if self.arb_fast is not None:
            v = self.arb_fast(*pt, a, S)
            if v is not None:
                self.tick()
                return v
        if self.fast is not None:
            try:
                v = self.fast(*pt, a, S)
                if type(v) is mpmath.mpf and mpmath.isfinite(v):
                    self.tick()
                    return v
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                pass
        return None

    def integrand_for(self, form: Form, a, S, slow):
        """The shifted integrand ``form`` at a point: for ``FINITE`` the compiled
        ``exp(a log P + (1-a) log Q - S)`` (:meth:`integrand`) where it gives a value, else ``slow``."""
        if form is not Form.FINITE:
            return slow

        def g(pt):
            v = self.integrand(pt, a, S)
            return v if v is not None else slow(pt)
        return g

    def tick(self):
        self.count += 1
        if not self.count & 255 and time.monotonic() > self.deadline:
            raise OutOfTime()

    @staticmethod
    def _real(v, which, pt):
        if isinstance(v, mpmath.mpc):
            if abs(v.imag) > abs(v.real) * mpmath.mpf(2) ** (-mpmath.mp.prec + 8) + mpmath.mpf(2) ** (-2 * mpmath.mp.prec):
                raise Failed(f"{which} at {show(pt)} is not real")
            v = v.real
        v = mpmath.mpf(v)
        if mpmath.isnan(v) or v < 0:
            raise Failed(f"{which} at {show(pt)} is {mpmath.nstr(v, 8)}")
        return v

    def logpq(self, pt):
        self.tick()
        if self.arb_lp is not None and self.arb_lq is not None:
            a, b = self.arb_lp(*pt), self.arb_lq(*pt)
            if a is not None and b is not None:
                return a, b
        if self.lp is not None:
            found = compiled_logs(self.lp, self.lq, *pt)
            if found is not None:
                return found
        try:
            p, q = self.p(*pt), self.q(*pt)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError) as exc:
            raise Failed(f"evaluating P, Q at {show(pt)} failed: {exc}") from None
        return logs_of(self._real(p, "P", pt), self._real(q, "Q", pt))


def show(pt) -> str:
    return "(" + ", ".join(mpmath.nstr(t, 8) for t in pt) + ")"


def log_form(pair, form: Form, a):
    """L at a point (:func:`rdpsym.numeric.quantities.log_integrand`): ``FINITE`` a lp + (1-a) lq,
    ``WEIGHT`` lp, ``RATIO`` lp - lq, ``KLABS`` log|P log P/Q|."""
    def L(pt):
        return log_integrand(*pair.logpq(pt), form, a)
    return L


# ----------------------------------------------------------------------------------------------
# peak search
# ----------------------------------------------------------------------------------------------
def _along(L, x, j):
    def f(t):
        y = list(x)
        y[j] = t
        return L(tuple(y))
    return f


def _start(coords):
    out = []
    for c in coords:
        if c.continuous:
            lo, hi = c.spans[0]
            if lo < 0 < hi:  # strictly inside: an end of the support may be a zero of P or Q
                out.append(mpmath.mpf(0))
            elif mpmath.isinf(lo) or mpmath.isinf(hi):
                out.append(hi - 1 if mpmath.isinf(lo) else lo + 1)
            else:
                out.append((lo + hi) / 2)
        else:
            out.append(mpmath.mpf(c.points[0]) if c.points else mpmath.mpf(c.progressions[0][0]))
    return out


def _ascend(f, c, t0, v0, iters):
    """The best point of coordinate ``c`` for the one-dimensional function ``f`` (from t0, f(t0) = v0)."""
    best = (t0, v0)
    if c.continuous:
        for lo, hi in c.spans:
            extra = [t0 + s * mpmath.mpf(10) ** (mpmath.mpf(k) / 2) for k in range(-10, 11) for s in (1, -1)]
            pts = sorted({*scan_points(lo, hi, c.kinks), *[t for t in extra if lo < t < hi]})
            vals = [f(t) for t in pts]
            i = max(range(len(pts)), key=lambda u: vals[u])
            if vals[i] > best[1]:
                best = (pts[i], vals[i])
            if vals[i] == mpmath.inf:
                return best
            # refine around the scan's best and around t0 (the last sweep's point)
            for t in {pts[i], t0}:
                k = pts.index(t) if t in pts else None
                if k is None:
                    k = min(range(len(pts)), key=lambda u: abs(pts[u] - t))
                a = pts[k - 1] if k > 0 else (lo if not mpmath.isinf(lo) else pts[k])
                b = pts[k + 1] if k + 1 < len(pts) else (hi if not mpmath.isinf(hi) else pts[k])
                if b > a:
                    u, v = golden_max(f, a, b, iters)
                    if v > best[1]:
                        best = (u, v)
        return best
    cands = [mpmath.mpf(p) for p in c.points[:MAX_TERMS]]
    grid = sorted(set([0, 1, 2, 3] + [int(2 ** (e / 2)) for e in range(4, 130)]))
    for s0, st in c.progressions:
        vals = [(j, f(mpmath.mpf(s0 + st * j))) for j in grid]
        i = max(range(len(vals)), key=lambda u: vals[u][1])
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        lo, hi = integer_max_bracket(lambda j: f(mpmath.mpf(s0 + st * j)), lo, hi)  # the mode
        cands += [mpmath.mpf(s0 + st * j) for j in range(lo, hi + 1)]
        if (t0 - s0) / st >= 0:  # the neighbours of the current point
            j0 = int(mpmath.nint((t0 - s0) / st))
            cands += [mpmath.mpf(s0 + st * j) for j in range(max(j0 - 2, 0), j0 + 3)]
    for t in cands:
        v = f(t)
        if v > best[1]:
            best = (t, v)
    return best


def _hessian(L, x, h, free):
    """Central-difference gradient and Hessian of L at x over the coordinates ``free`` (steps h), or None."""
    n = len(free)
    f0 = L(tuple(x))

    def at(shifts):
        y = list(x)
        for j, s in shifts:
            y[j] += s
        return L(tuple(y))

    g, H = mpmath.matrix(n, 1), mpmath.matrix(n, n)
    for a, i in enumerate(free):
        fp, fm = at([(i, h[i])]), at([(i, -h[i])])
        g[a] = (fp - fm) / (2 * h[i])
        H[a, a] = (fp - 2 * f0 + fm) / h[i] ** 2
        for b in range(a):
            k = free[b]
            H[a, b] = H[b, a] = (at([(i, h[i]), (k, h[k])]) - at([(i, h[i]), (k, -h[k])]) - at([(i, -h[i]), (k, h[k])])
                                 + at([(i, -h[i]), (k, -h[k])])) / (4 * h[i] * h[k])
    if not all(mpmath.isfinite(v) for v in list(g) + list(H)):
        return None
    return g, H


def _width(f, t0, v0, c):
    """Distance from t0 at which f drops by 1 (either side, the smaller one), or 1."""
    out = []
    for sgn in (1, -1):
        d = mpmath.mpf(1)
        for _ in range(120):
            t = t0 + sgn * d
            if not c.contains(t):
                break
            if f(t) < v0 - 1:
                while d > mpmath.mpf(10) ** -40 and c.contains(t0 + sgn * d / 2) and f(t0 + sgn * d / 2) < v0 - 1:
                    d /= 2
                out.append(d)
                break
            d *= 2
    return min(out) if out else mpmath.mpf(1)


def find_peak(L, coords, sweeps, iters):
    """Maximum of L over the product support: coordinate ascent, then Newton with a numeric Hessian.
    Returns (x, L(x), widths, Σ or None, directions of positive curvature of L at x)."""
    d = len(coords)
    x = _start(coords)
    v = L(tuple(x))
    for _ in range(sweeps):
        before = v
        for j in range(d):
            t, v = _ascend(_along(L, x, j), coords[j], x[j], v, iters)
            x[j] = t
            if v == mpmath.inf:
                return x, v, [mpmath.mpf(1)] * d, None, []
        if v == -mpmath.inf or v - before <= mpmath.eps * 64 * (1 + abs(v)):
            break
    if not mpmath.isfinite(v):
        return x, v, [mpmath.mpf(1)] * d, None, []
    widths = [_width(_along(L, x, j), x[j], v, coords[j]) for j in range(d)]
    free = [j for j in range(d) if coords[j].continuous]
    h = [w * mpmath.mpf(10) ** (-mpmath.mp.dps / 4) for w in widths]
    sigma = None
    for _ in range(8):
        try:
            found = _hessian(L, x, h, free) if free else None
        except Failed:
            found = None
        if found is None:
            break
        g, H = found
        try:
            step = mpmath.lu_solve(-H, g)
        except ZeroDivisionError:
            break
        y = list(x)
        for a, j in enumerate(free):
            y[j] += step[a]
        if not all(coords[j].contains(y[j]) for j in free):
            break
        vy = L(tuple(y))
        if not vy > v:
            break
        x, v = y, vy
    try:
        found = _hessian(L, x, h, list(range(d)))
    except Failed:  # a discrete coordinate's pmf has no value between its points
        found = None
    growth = []
    if found is not None:
        H = found[1]
        try:  # directions of positive curvature: L may grow without bound along them
            ev, vecs = mpmath.eigsy(H)
            growth = [[vecs[i, k] for i in range(d)] for k in range(d) if ev[k] > 0]
        except (ValueError, ZeroDivisionError, mpmath.libmp.NoConvergence):
            pass
        # the quadratic model is used only where it matches the drops of L along each axis (within a
        # factor 2): at a kink (Laplace's cusp) the difference quotients are not a curvature
        if all(H[j, j] < 0 and abs(mpmath.sqrt(2 / -H[j, j]) / widths[j] - 1) < 1 for j in range(d)):
            try:
                mpmath.cholesky(-H)  # -H positive definite: a Gaussian matches exp(L) at the peak
                sigma = mpmath.inverse(-H)
            except (ValueError, ZeroDivisionError):
                sigma = None
    return x, v, widths, sigma, growth


