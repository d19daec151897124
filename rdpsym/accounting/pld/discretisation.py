r"""The privacy loss distribution of one directed pair, bucketed on a grid, and its two discretisations.

For output densities (P || Q) the privacy loss is L(x) = log P(x) - log Q(x), x ~ P. On the grid
eps_b = b h, *bucket* b holds outputs whose loss lies in [b h, (b + 1) h]. What the two discretisations
need of a bucket is a pair of bounds on its masses: (P_hi, Q_lo) for the pessimistic one and (P_lo, Q_hi)
for the optimistic one.

**Why these suffice (the order used throughout).** For a pair of measures write its loss distribution as
the P-mass at each loss l. For any other pair (R, S) and gamma = e^eps,
H_gamma(P x R || Q x S) = int P(dx) phi(e^{-L(x)}) with phi(t) = H_{gamma t}(R || S), a convex,
non-increasing, non-negative function of t. So a distribution w' bounds w from above for every
composition and every epsilon as soon as E_w[phi(e^-L)] <= E_w'[phi(e^-L')] for all such phi, and:

* adding P-mass (at any loss, or at +infinity) or moving it to a larger loss only increases it;
* on a bucket, phi is below its chord over [e^{-(b+1)h}, e^{-bh}], whose mean is that of the two-point
  distribution at b h and (b+1) h keeping the bucket's P and Q masses: *connect the dots* (Doroshenko,
  Ghazi, Kamath, Kumar and Manurangsi 2022, "Connect the dots: tighter discrete approximations of
  privacy loss distributions", PETS, Sect. 3); its upper mass (P - e^{bh} Q)/(1 - e^{-h}) grows with P
  and falls with Q, so (P_hi, Q_lo) give an upper bound;
* by Jensen, E[phi(e^-L) | bucket] >= phi(Q_b / P_b): one atom of the bucket's P-mass at log(P_b / Q_b)
  bounds it from below, and so does any smaller mass at any smaller loss: (P_lo, Q_hi) give a lower bound.

**Continuous pairs (certified).** The outputs where P is not negligible are cut into sub-intervals
(at the kinks of the densities and the support's ends, then by bisection) on each of which
:mod:`.taylor` builds rigorous Taylor models of P, Q and L = :func:`~.logform.loss_form` (Arb balls).
Where the model certifies L' != 0 (|a_1| above the bound on the other terms of L'), L is monotone and the
points where it crosses each grid value are found on the model (Newton) and moved until the model
certifies L <= b h there; between two such points the loss lies in an interval that the models bound,
the masses are the integrals of the models (:func:`~.taylor.integrate`, with their error bounds).
Where L is not shown monotone the interval is split until its loss range fits one bucket. An interval
whose loss range [lo, hi] does not fit one bucket (at most ~1e-12 below its lower grid value: that
sliver is moved up, and its Q-mass lowered to match) is an atom at hi (pessimistic) or at lo
(optimistic). Regions no model covers (an undecided branch on a tiny interval, a spent budget) are left
out: the P-mass outside the modelled region is at most 1 - (the certified lower bound of the mass
inside), because P integrates to 1, and it goes to +infinity in the pessimistic distribution and is
dropped from the optimistic one. An expression :mod:`.taylor` has no series for falls back to
Gauss-Legendre quadrature with an estimated error, and the result says it is not certified.
* **Discrete pairs.** Each support point (the privacy profile's enumeration) is an atom whose P, Q and
  loss are Arb balls (:func:`rdpsym.claims.interval.compile_arb`); the P-mass not enumerated is
  1 - (the mass enumerated).

**Pessimistic** (:func:`pessimistic`): connect the dots on (P_hi, Q_lo), rounded up. **Optimistic**
(:func:`optimistic`): the Jensen atom of each bucket, rounded down to the grid value b h (or (b - 1) h when
the model leaves it below b h), with the *remainder* r_b = log(P_lo / Q_hi) - b h in [0, h] kept (a lower
bound, by log y >= 2 (y - 1)/(y + 1) for y >= 1): :mod:`.bounds` recovers most of what the rounding down
lost over many compositions (Hoeffding's inequality on the sum of the remainders).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

from ..._numbers import ArgumentError
from ...specify.support import Support
from ..profile import NumericPair, _kink_points
from .exps import exp_bounds, exp_grid
from .logform import log_form, loss_form
from .pairs import DirectedPair
from .pmf import DiscretePLD, PLDTooLarge
from .taylor import (SeriesProgram, SeriesUnsupported, Undecided, derivative_rows, gamma, horner, integrate, rows,
                     taylor_model)

__all__ = ["GridProfile", "grid_profile", "pessimistic", "optimistic", "MAX_BUCKETS"]

U = 2.0 ** -53
#: log-density drop (natural log) below the largest value at which the outputs are no longer scanned
WINDOW_DROP = 60.0
#: the most grid values one pair's privacy loss may span (memory guard)
MAX_BUCKETS = 1 << 23
#: the most intervals one pair may be cut into (memory guard)
MAX_INTERVALS = 1 << 24
#: terms of the Taylor models
DEGREE = 20
#: a model is kept when its remainder is below REL_TOL |value at the centre| + ABS_TOL (largest density),
#: and the loss model's below LOSS_TOL
REL_TOL, ABS_TOL, LOSS_TOL = 1e-14, 1e-16, 1e-11
#: the most Taylor models one pair may build (a work budget: what it does not reach is left out)
MAX_MODELS = 20000
#: a loss range may reach this far (relative to h) below its bucket's lower grid value
ALLOW = 1e-6
_CHUNK = 1 << 16


@dataclass(frozen=True)
class GridProfile:
    """Bucketed masses of a directed pair: bucket ``lo + j`` holds outputs with loss in
    [(lo + j) h, (lo + j + 1) h]. ``Ph``/``Ql``: the pessimistic bounds (P-mass from above, Q-mass from
    below); ``Pl``/``Qh``: the optimistic ones. ``p_inf_hi``/``p_inf_lo``: bounds on the P-mass where
    Q = 0; ``outside``: a bound on the P-mass not computed. ``certified``: every bound is proved (False:
    the masses come from quadrature with an estimated error)."""

    h: float
    lo: int
    Ph: np.ndarray
    Ql: np.ndarray
    Pl: np.ndarray
    Qh: np.ndarray
    p_inf_hi: float
    p_inf_lo: float
    outside: float
    label: str
    detail: str
    certified: bool = True
    notes: tuple = field(default=())

    def deltas(self, start: int, stop: int, side: str) -> np.ndarray:
        """delta at eps_i = i h for i in [start, stop) of the pessimistic (``"upper"``) or optimistic
        (``"lower"``) masses, with the mass outside (upper) added: used to compare pairs."""
        idx = np.arange(start, stop)
        n = len(self.Ph)
        if side == "upper":
            P, Q, extra = self.Ph, self.Ql, self.p_inf_hi + self.outside
        else:
            P, Q, extra = self.Pl, self.Qh, self.p_inf_lo
        A = np.concatenate([np.cumsum(P[::-1])[::-1], [0.0]])
        B = np.concatenate([np.cumsum(Q[::-1])[::-1], [0.0]])
        j = np.clip(idx - self.lo, 0, n)
        e_lo, e_hi = exp_grid(self.h, start, stop)
        with np.errstate(over="ignore", invalid="ignore"):
            d = A[j] - (e_lo if side == "upper" else e_hi) * B[j]
        d = np.where(np.isnan(d), 0.0, d)
        slack = gamma(n + 2) * (A[0] + extra) + 1e-300
        return np.maximum(d + extra + slack, 0.0) if side == "upper" else np.maximum(d + extra - slack, 0.0)


# -- the grid, certified ---------------------------------------------------------------------------------
def _g(k: np.ndarray, h: float) -> np.ndarray:
    return k.astype(float) * h


def _glo(k, h):
    """A float <= k h (exact real product)."""
    return np.nextafter(_g(k, h), -np.inf)


def _ghi(k, h):
    """A float >= k h."""
    return np.nextafter(_g(k, h), np.inf)


def _floor_cert(v: np.ndarray, h: float) -> np.ndarray:
    """b with b h <= v (certified), the largest such up to one."""
    with np.errstate(invalid="ignore", over="ignore"):
        b = np.floor(v / h)
    b = np.where(np.isfinite(b), b, 0).astype(np.int64)
    for _ in range(3):
        b = np.where(_ghi(b, h) > v, b - 1, b)
    return b


def _bucket_of_hi(hi: np.ndarray, h: float) -> np.ndarray:
    """The smallest b with hi <= (b + 1) h certified (hi at or just below a grid value k h gives k - 1)."""
    with np.errstate(invalid="ignore", over="ignore"):
        b = np.ceil(hi / h) - 1
    b = np.where(np.isfinite(b), b, 0).astype(np.int64)
    for _ in range(3):
        b = np.where(hi > _glo(b + 1, h), b + 1, b)
    for _ in range(2):
        b = np.where(hi <= _glo(b, h), b - 1, b)
    return b


@dataclass
class _Acc:
    """Accumulated contributions to the buckets."""

    h: float
    pb: list = field(default_factory=list)   # pessimistic bucket, P_hi, Q_lo
    pP: list = field(default_factory=list)
    pQ: list = field(default_factory=list)
    ob: list = field(default_factory=list)   # optimistic bucket, P_lo, Q_hi
    oP: list = field(default_factory=list)
    oQ: list = field(default_factory=list)
    p_inf_hi: float = 0.0
    p_inf_lo: float = 0.0
    inside_lo: float = 0.0
    straddles: int = 0

    def add(self, lo, hi, Pl, Ph, Ql, Qh):
        """Intervals with loss in [lo, hi] (certified) and mass bounds: the generic rule (module docstring)."""
        h = self.h
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        Pl, Ph = np.maximum(np.asarray(Pl, float), 0.0), np.asarray(Ph, float)
        Ql, Qh = np.maximum(np.asarray(Ql, float), 0.0), np.asarray(Qh, float)
        keep = Ph > 0
        if not keep.all():
            lo, hi, Pl, Ph, Ql, Qh = lo[keep], hi[keep], Pl[keep], Ph[keep], Ql[keep], Qh[keep]
        if not len(lo):
            return
        self.inside_lo += float(np.sum(Pl)) * (1 - gamma(len(Pl) + 1))
        inf_hi = np.isposinf(hi) | np.isnan(hi)
        inf_lo = np.isposinf(lo)
        self.p_inf_hi += float(np.sum(Ph[inf_hi])) * (1 + gamma(len(Ph) + 1))
        self.p_inf_lo += float(np.sum(Pl[inf_lo])) * (1 - gamma(len(Pl) + 1))
        fin = ~inf_hi & ~np.isnan(lo)
        b = _bucket_of_hi(np.where(fin, hi, 0.0), h)
        gb = _ghi(b, h)
        below = np.maximum(gb - lo, 0.0)  # an upper bound on b h - lo where lo < b h
        single = fin & np.isfinite(lo) & (below <= ALLOW * h)
        if single.any():
            bs = b[single]
            # the sliver below b h is moved up to b h: its Q-mass falls by at most P e^{-bh} (e^{below} - 1)
            e_lo, _ = _exp_of_grid(bs, h)
            with np.errstate(divide="ignore", over="ignore"):
                em_hi = np.where(e_lo > 0, (1.0 / e_lo) * (1 + 2 * U), np.inf)
            corr = Ph[single] * em_hi * (2.0 * below[single]) * (1 + 4 * U)
            corr = np.where(below[single] > 0, corr, 0.0)
            self.pb.append(bs)
            self.pP.append(Ph[single])
            self.pQ.append(np.maximum(Ql[single] - corr, 0.0) * (1 - 2 * U))
            self.ob.append(bs)
            self.oP.append(Pl[single])
            self.oQ.append(Qh[single])
        strad = fin & ~single
        if strad.any():
            self.straddles += int(np.sum(strad))
            for i in np.nonzero(strad)[0]:
                # pessimistic: the atom at hi (moved up from the interval), into the bucket of hi
                e_lo, _ = exp_bounds(-float(hi[i]))
                self.pb.append(np.array([b[i]]))
                self.pP.append(np.array([Ph[i]]))
                self.pQ.append(np.array([Ph[i] * e_lo * (1 - 2 * U)]))
                # optimistic: the atom at lo with the lower mass
                if np.isfinite(lo[i]) and Pl[i] > 0:
                    bo = _floor_cert(np.array([lo[i]]), h)
                    _, e_hi = exp_bounds(-float(lo[i]))
                    self.ob.append(bo)
                    self.oP.append(np.array([Pl[i]]))
                    self.oQ.append(np.array([Pl[i] * e_hi * (1 + 2 * U)]))

    def profile(self, label: str, detail: str, certified: bool = True, notes=()) -> GridProfile:
        h = self.h
        # inside_lo counts every interval's certified P-mass, those at +infinity included
        outside = max(0.0, 1.0 - self.inside_lo) * (1 + 4 * U) + 4 * U
        if self.inside_lo > 1 + 1e-9:
            raise ArithmeticError(f"{label}: P has certified mass {self.inside_lo!r} > 1 on the "
                                  "computed outputs; a density must integrate to 1 (is it normalised?)")
        pb = np.concatenate(self.pb) if self.pb else np.zeros(0, np.int64)
        ob = np.concatenate(self.ob) if self.ob else np.zeros(0, np.int64)
        if len(pb) == 0 and len(ob) == 0:
            z = np.zeros(1)
            return GridProfile(h, 0, z, z, z, z, self.p_inf_hi, self.p_inf_lo, outside, label, detail, certified,
                               tuple(notes))
        lo = int(min(pb.min() if len(pb) else ob.min(), ob.min() if len(ob) else pb.min()))
        hi = int(max(pb.max() if len(pb) else ob.max(), ob.max() if len(ob) else pb.max()))
        if hi - lo + 1 > MAX_BUCKETS:
            raise PLDTooLarge(f"{label}: the privacy loss spans {hi - lo + 1} grid values of step {h:g} "
                              f"(from {lo * h:g} to {hi * h:g}); at most {MAX_BUCKETS} fit: take a larger step")
        n = hi - lo + 1

        def binned(b, parts, sign):
            if not parts:
                return np.zeros(n)
            v = np.bincount(b - lo, np.concatenate(parts), n)
            # a bucket that sums m parts in float is within gamma_{m-1} of their exact sum
            g = gamma(int(np.bincount(b - lo, None, n).max()) + 1)
            return v * ((1 + g) if sign > 0 else (1 - g))

        Ph = binned(pb, self.pP, +1)
        Ql = binned(pb, self.pQ, -1)
        Pl = binned(ob, self.oP, -1)
        Qh = binned(ob, self.oQ, +1)
        return GridProfile(h, lo, Ph, Ql, Pl, Qh, self.p_inf_hi, self.p_inf_lo, outside, label, detail, certified,
                           tuple(notes))


def _enclose(v, e, R):
    """Floats (lo, hi) around the exact value of a model whose float evaluation is v with rounding bound e
    and remainder R: lo <= f <= hi whatever the rounding of this very computation."""
    s = (e + R) * (1 + 4 * U) + 8 * U * np.abs(v) + 1e-300
    return np.nextafter(v - s, -np.inf), np.nextafter(v + s, np.inf)


def _up(v):
    """v rounded up past one rounding error of its computation (any sign)."""
    return v + 4 * U * np.abs(v) + 1e-300


def _down(v):
    return v - 4 * U * np.abs(v) - 1e-300


def _exp_of_grid(b: np.ndarray, h: float):
    """(lo, hi) bounds on e^{b h} for an array of grid indices (via one table over their range)."""
    if not len(b):
        return np.zeros(0), np.zeros(0)
    b0, b1 = int(b.min()), int(b.max()) + 1
    lo, hi = exp_grid(h, b0, b1)
    return lo[b - b0], hi[b - b0]


# -- windows: where P is not negligible (a choice; the bounds do not depend on it) -----------------------
def _scan(kinks: list[float]) -> np.ndarray:
    offsets = np.concatenate([[0.0], 10.0 ** (np.arange(-64, 65) / 8.0)])
    offsets = np.concatenate([offsets, -offsets[1:]])
    return np.unique(np.concatenate([c + offsets for c in [0.0, *kinks]]))


def _windows(logP_fn, pieces, kinks) -> tuple[list[tuple[float, float]], float]:
    """Intervals of the support where log P is within WINDOW_DROP of its largest value on a scan, and that
    largest value."""
    scan = _scan(kinks)
    spans, best = [], -math.inf
    for lo, hi in pieces:
        lo_f = -math.inf if lo == -mpmath.inf else float(sp.Float(lo, 20))
        hi_f = math.inf if hi == mpmath.inf else float(sp.Float(hi, 20))
        pts = scan[(scan > lo_f) & (scan < hi_f)]
        if math.isfinite(lo_f) and math.isfinite(hi_f):
            pts = np.unique(np.concatenate([pts, np.linspace(lo_f, hi_f, 65)[1:-1]]))
        lp = np.array([logP_fn(float(t)) for t in pts])
        spans.append((lo_f, hi_f, pts, lp))
        if len(lp) and np.isfinite(lp).any():
            best = max(best, float(np.nanmax(np.where(np.isfinite(lp), lp, -np.inf))))
    if not math.isfinite(best):
        raise ArithmeticError("the density P is not positive anywhere on the scan")
    windows = []
    for lo_f, hi_f, pts, lp in spans:
        keep = np.nonzero(np.isfinite(lp) & (lp > best - WINDOW_DROP))[0]
        if not len(keep):
            continue
        i, j = keep[0], keep[-1]
        a = pts[i - 1] if i > 0 else lo_f
        b = pts[j + 1] if j + 1 < len(pts) else hi_f
        if not math.isfinite(a):
            a = pts[i] - max(1.0, abs(pts[i]))
        if not math.isfinite(b):
            b = pts[j] + max(1.0, abs(pts[j]))
        windows.append((float(a), float(b)))
    return windows, best


def _arb_log_fn(expr, x):
    """A float function t -> (midpoint of) expr at x = t, in Arb; NaN where undefined."""
    import flint

    from ...claims.interval import compile_arb

    fn = compile_arb(expr, [x])

    def value(t: float) -> float:
        with flint.ctx.workprec(64):
            v = fn({x: flint.arb(t)})
        if v.is_nan() or not v.is_finite():
            return -math.inf if (not v.is_nan() and v < 0) else math.nan
        return float(v.mid())

    return value


# -- continuous pairs: Taylor models ---------------------------------------------------------------------
def _exact_offsets(a: float, b: float, c: float) -> tuple[float, float]:
    """t_lo >= a - c and t_hi <= b - c (floats, so that [c + t_lo, c + t_hi] lies inside [a, b])."""
    tl, th = a - c, b - c
    C = Fraction(c)
    while Fraction(tl) + C < Fraction(a):
        tl = math.nextafter(tl, math.inf)
    while Fraction(th) + C > Fraction(b):
        th = math.nextafter(th, -math.inf)
    return tl, th


@dataclass
class _Piece:
    c: float
    r: float
    tl: float
    th: float
    model: object
    mono: int  # +1 / -1: L certified strictly increasing / decreasing; 0: not shown
    dl: float  # a lower bound on |L'| (when mono)
    lrange: tuple  # a certified range of L over the piece
    kind: str  # "loss", "p_inf", "none"


def _poly_range(coef: np.ndarray, r: float, R: float) -> tuple[float, float]:
    """A certified range of sum_k coef[k] t^k (+- R) over |t| <= r."""
    tail = float(np.sum(np.abs(coef[1:]) * r ** np.arange(1, len(coef)))) * (1 + gamma(2 * len(coef) + 2))
    a0 = float(coef[0])
    spread = (tail + R) * (1 + 4 * U)
    return a0 - spread - 4 * U * abs(a0), a0 + spread + 4 * U * abs(a0)


def _monotone(coef: np.ndarray, r: float, n: int, R_L: float) -> tuple[int, float]:
    """(sign of L', a lower bound on |L'|) on |t| <= r from the model (module docstring of .taylor: the
    derivative's Taylor expansion has remainder n |b_n| r^(n-1)); (0, 0) when not shown."""
    from .taylor import f_up

    a1 = float(coef[1]) if len(coef) > 1 else 0.0
    k = np.arange(2, len(coef))
    others = float(np.sum(k * np.abs(coef[2:]) * r ** (k - 1))) * (1 + gamma(2 * len(coef) + 2))
    # the coefficients' own errors and the remainder: R_L bounds sum_k |a_k - exact_k| r^k + |b_n| r^n,
    # so the derivative's error terms are at most n R_L / r (k |.| r^(k-1) <= n |.| r^k / r)
    import flint

    with flint.ctx.workprec(64):
        extra = f_up(flint.arb(R_L) * n / flint.arb(r)) if r > 0 else math.inf
    margin = (others + extra) * (1 + 8 * U)
    if abs(a1) > margin:
        return (1 if a1 > 0 else -1), (abs(a1) - margin) * (1 - 4 * U)
    return 0, 0.0


def _model_pieces(program, windows, kinks, h, p_max, label) -> tuple[list[_Piece], int, list[str]]:
    """Cut the windows into pieces with accepted models (module docstring)."""
    stack = []
    for a, b in windows:
        cuts = sorted({a, b, *[k for k in kinks if a < k < b]})
        for u, v in zip(cuts[:-1], cuts[1:]):
            m = max(1, int(math.ceil((v - u) / ((b - a) / 16))))
            edges = np.linspace(u, v, m + 1)
            edges[0], edges[-1] = u, v
            stack += [(float(p), float(q)) for p, q in zip(edges[:-1], edges[1:]) if q > p]
    stack.reverse()
    pieces, built, notes, dropped = [], 0, [], 0
    abs_tol = ABS_TOL * p_max
    while stack:
        a, b = stack.pop()
        if built >= MAX_MODELS:
            dropped += 1
            continue
        c = 0.5 * (a + b)
        if not (a < c < b) or b - a <= 1e-12 * max(1.0, abs(c)):
            dropped += 1  # too small to split further: its mass is left outside
            continue
        tl, th = _exact_offsets(a, b, c)
        r = max(-tl, th)
        built += 1
        try:
            tm = taylor_model(program, c, r, DEGREE, needed={0, 1})
        except Undecided:
            stack += [(c, b), (a, c)]
            continue
        zP, zQ = tm.zero[0], tm.zero[1]
        if zP:
            continue  # no P-mass here
        RP, RQ, RL = tm.R
        ok = RP <= REL_TOL * abs(tm.coef[0, 0]) + abs_tol
        if zQ:
            if ok:
                pieces.append(_Piece(c, r, tl, th, tm, 0, 0.0, (math.inf, math.inf), "p_inf"))
            else:
                stack += [(c, b), (a, c)]
            continue
        ok = ok and RQ <= REL_TOL * abs(tm.coef[1, 0]) + abs_tol and RL <= LOSS_TOL
        if ok:
            mono, dl = _monotone(tm.coef[2], r, DEGREE, RL)
            lr = _poly_range(tm.coef[2], r, RL)
            # a loss not shown monotone: its range must fit one bucket, or be so narrow that treating the
            # piece as one atom (at either end of the range) costs nothing
            if mono == 0 and not (math.floor(lr[0] / h) == math.floor(lr[1] / h) or lr[1] - lr[0] <= 1e-9 * h):
                ok = False
        if not ok:
            stack += [(c, b), (a, c)]
            continue
        pieces.append(_Piece(c, r, tl, th, tm, mono, dl, lr, "loss"))
    if dropped:
        notes.append(f"{dropped} sub-interval(s) left out (mass counted at +infinity)")
    return pieces, built, notes


def _continuous(pair: DirectedPair, h: float) -> GridProfile:
    x = pair.x
    lp = log_form(pair.P, x)
    L = loss_form(pair.P, pair.Q, x)
    program = SeriesProgram([pair.P, pair.Q, L], x)  # SeriesUnsupported: the caller falls back
    with mpmath.workdps(40):
        kinks_mp, knotes = _kink_points(pair.P, pair.Q, x, 40)
    kinks = sorted({float(k) for k in kinks_mp if mpmath.isfinite(k)})
    _, support_pieces = Support.of(pair.support, numbers=True).flattened()
    windows, best = _windows(_arb_log_fn(lp, x), support_pieces, kinks)
    pieces, built, notes = _model_pieces(program, windows, kinks, h, math.exp(min(best, 700.0)), pair.label)
    acc = _Acc(h)
    # pieces where Q = 0: their P-mass is at +infinity
    for pc in (p for p in pieces if p.kind == "p_inf"):
        v, e = integrate(rows(pc.model.coef[0][None, :], np.zeros(1, np.int64)), np.array([pc.tl]), np.array([pc.th]))
        w = (pc.th - pc.tl)
        rem = pc.model.R[0] * w
        acc.add(np.array([math.inf]), np.array([math.inf]), v - e - rem, v + e + rem, np.zeros(1), np.zeros(1))
    loss = [p for p in pieces if p.kind == "loss"]
    if loss:
        _loss_intervals(acc, loss, h, pair.label)
    detail = (f"{len(loss)} Taylor models (degree {DEGREE - 1}, {built} built) over {len(windows)} window(s), "
              f"{acc.straddles} interval(s) straddling a grid value" + ("; " + "; ".join(knotes + notes)
                                                                        if knotes or notes else ""))
    return acc.profile(pair.label, detail, True, tuple(notes))


def _loss_intervals(acc: _Acc, pieces: list[_Piece], h: float, label: str) -> None:
    """Crossing points, intervals, masses and buckets of the pieces with a loss model (module docstring)."""
    n_p = len(pieces)
    CP = np.stack([p.model.coef[0] for p in pieces])
    CQ = np.stack([p.model.coef[1] for p in pieces])
    CL = np.stack([p.model.coef[2] for p in pieces])
    RP = np.array([p.model.R[0] for p in pieces])
    RQ = np.array([p.model.R[1] for p in pieces])
    RL = np.array([p.model.R[2] for p in pieces])
    tl = np.array([p.tl for p in pieces])
    th = np.array([p.th for p in pieces])
    mono = np.array([p.mono for p in pieces])
    dl = np.array([p.dl for p in pieces])
    # the loss at the ends of every piece
    allp = np.arange(n_p)
    Lend_l, el = horner(rows(CL, allp), tl)
    Lend_h, eh = horner(rows(CL, allp), th)
    # grid values strictly inside the loss range of each monotone piece
    lo_end = np.minimum(Lend_l, Lend_h)
    hi_end = np.maximum(Lend_l, Lend_h)
    first = np.where(mono != 0, np.floor(lo_end / h) + 1, 0).astype(np.int64)
    last = np.where(mono != 0, np.ceil(hi_end / h) - 1, -1).astype(np.int64)
    n_cross = np.maximum(last - first + 1, 0)
    total = int(n_cross.sum())
    if total + 2 * n_p > MAX_INTERVALS:
        raise PLDTooLarge(f"{label}: the privacy loss crosses {total} grid values (step {h:g}); at most "
                          f"{MAX_INTERVALS} fit: take a larger step")
    sid = np.repeat(np.arange(n_p), n_cross)
    offs = np.arange(total) - np.repeat(np.cumsum(n_cross) - n_cross, n_cross)
    kk = first[sid] + offs
    target = _g(kk, h)
    t = np.empty(total)
    if total:
        # Newton on the model from the linear interpolation between the ends
        a, b = tl[sid], th[sid]
        fa, fb = Lend_l[sid], Lend_h[sid]
        with np.errstate(all="ignore"):
            t = a + (target - fa) * (b - a) / (fb - fa)
        t = np.clip(np.where(np.isfinite(t), t, 0.5 * (a + b)), a, b)
        C = rows(CL, sid)
        dC = derivative_rows(C)
        for _ in range(6 if C.shape[0] > 2 else 1):
            v, _ = horner(C, t)
            d, _ = horner(dC, t)
            with np.errstate(all="ignore"):
                step = (v - target) / d
            step = np.where(np.isfinite(step), step, 0.0)
            t = np.clip(t - step, a, b)
            if np.all(np.abs(step) <= 1e-12 * (1 + np.abs(t))):
                break
        # move each point until the model certifies L <= k h there
        glo = _glo(kk, h)
        s = mono[sid]
        for _ in range(4):
            v, e = horner(C, t)
            _, up = _enclose(v, e, RL[sid])
            excess = up - glo
            bad = excess > 0
            if not bad.any():
                break
            with np.errstate(all="ignore"):
                move = (excess / dl[sid]) * 1.01 + 4 * U * np.abs(t) + 1e-300
            t = np.where(bad, np.clip(t - s * move, a, b), t)
    # all boundary points per piece, sorted in t; their certified loss enclosures
    pts_t = np.concatenate([tl, th, t])
    pts_s = np.concatenate([np.arange(n_p), np.arange(n_p), sid])
    order = np.lexsort((pts_t, pts_s))
    pts_t, pts_s = pts_t[order], pts_s[order]
    v, e = horner(rows(CL, pts_s), pts_t)
    enc_lo, enc_hi = _enclose(v, e, RL[pts_s])
    same = pts_s[:-1] == pts_s[1:]
    i0 = np.nonzero(same)[0]
    a, b, sp_ = pts_t[i0], pts_t[i0 + 1], pts_s[i0]
    lo = np.minimum(enc_lo[i0], enc_lo[i0 + 1])
    hi = np.maximum(enc_hi[i0], enc_hi[i0 + 1])
    # pieces whose loss is not shown monotone: one interval, the loss range of the whole piece
    nm = mono[sp_] == 0
    if nm.any():
        lr = np.array([p.lrange for p in pieces])
        lo = np.where(nm, lr[sp_, 0], lo)
        hi = np.where(nm, lr[sp_, 1], hi)
    for s0 in range(0, len(a), _CHUNK):
        sl = slice(s0, s0 + _CHUNK)
        A, B, S = a[sl], b[sl], sp_[sl]
        w = np.maximum(B - A, 0.0) * (1 + 2 * U)
        vp, ep = integrate(rows(CP, S), A, B)
        vq, eq = integrate(rows(CQ, S), A, B)
        errp = (ep + RP[S] * w) * (1 + 4 * U)
        errq = (eq + RQ[S] * w) * (1 + 4 * U)
        Ph, Pl = _up(vp + errp), _down(vp - errp)
        Qh, Ql = _up(vq + errq), _down(vq - errq)
        ok = B > A
        acc.add(lo[sl][ok], hi[sl][ok], Pl[ok], Ph[ok], Ql[ok], Qh[ok])


# -- continuous pairs: the estimated fallback (not certified) ---------------------------------------------
_GL16 = np.polynomial.legendre.leggauss(8)
_GL8 = np.polynomial.legendre.leggauss(4)


def _continuous_estimated(pair: DirectedPair, h: float, why: str) -> GridProfile:
    """Gauss-Legendre (8 against 4 points as the error estimate) between crossing points found by
    bisection on a scan, the loss taken monotone between scan points: NOT certified (used only where
    :mod:`.taylor` has no series for the densities)."""
    x = pair.x
    with mpmath.workdps(40):
        kinks_mp, _ = _kink_points(pair.P, pair.Q, x, 40)
    kinks = sorted({float(k) for k in kinks_mp if mpmath.isfinite(k)})
    _, pieces = Support.of(pair.support, numbers=True).flattened()
    fP = sp.lambdify(x, pair.P, modules=["numpy", "scipy"])
    fQ = sp.lambdify(x, pair.Q, modules=["numpy", "scipy"])

    def dens(f, t):
        with np.errstate(all="ignore"):
            v = np.asarray(f(t))
            if np.iscomplexobj(v):
                v = np.where(np.abs(v.imag) <= 1e-12 * np.abs(v.real), v.real, np.nan)
            return np.broadcast_to(v.astype(float), np.shape(t))

    def L(t):
        with np.errstate(all="ignore"):
            return np.log(dens(fP, t)) - np.log(dens(fQ, t))

    def logp(t):
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.log(dens(fP, np.array([t]))[0]))

    windows, _ = _windows(logp, pieces, kinks)
    acc = _Acc(h)
    for wa, wb in windows:
        dense = np.unique(np.concatenate([np.linspace(wa, wb, 2049), [k for k in kinks if wa < k < wb]]))
        Ld = L(dense)
        L0, L1 = Ld[:-1], Ld[1:]
        fin = np.isfinite(L0) & np.isfinite(L1)
        lo_v, hi_v = np.minimum(L0, L1), np.maximum(L0, L1)
        first = np.where(fin, np.floor(lo_v / h) + 1, 0).astype(np.int64)
        last = np.where(fin, np.ceil(hi_v / h) - 1, -1).astype(np.int64)
        n_cross = np.maximum(last - first + 1, 0)
        total = int(n_cross.sum())
        if total + len(dense) > MAX_INTERVALS:
            raise PLDTooLarge(f"{pair.label}: the privacy loss crosses {total} grid values (step {h:g})")
        seg = np.repeat(np.arange(len(L0)), n_cross)
        offs = np.arange(total) - np.repeat(np.cumsum(n_cross) - n_cross, n_cross)
        target = (first[seg] + offs) * h
        za, zb = dense[seg].copy(), dense[seg + 1].copy()
        fa = L0[seg] - target
        for _ in range(80):
            mid = 0.5 * (za + zb)
            fm = L(mid) - target
            left = np.sign(fm) == np.sign(fa)
            za, fa = np.where(left, mid, za), np.where(left, fm, fa)
            zb = np.where(left, zb, mid)
        z = np.unique(np.concatenate([dense, 0.5 * (za + zb)]))
        A, B = z[:-1], z[1:]
        mid, half = 0.5 * (A + B), 0.5 * (B - A)
        res = []
        for f in (fP, fQ):
            v16 = dens(f, mid[:, None] + half[:, None] * _GL16[0][None, :]) @ _GL16[1] * half
            v8 = dens(f, mid[:, None] + half[:, None] * _GL8[0][None, :]) @ _GL8[1] * half
            v16 = np.where(np.isnan(v16), 0.0, v16)
            res.append((v16, np.abs(v16 - np.where(np.isnan(v8), 0.0, v8)) + 1e-15 * v16))
        (p, pe), (q, qe) = res
        lm = L(mid)
        lo = np.floor(lm / h) * h
        lo = np.where(np.isnan(lm), -np.inf, lo)
        hi = np.where(np.isnan(lm), np.inf, lo + 0.5 * h)
        acc.add(lo, hi, p - pe, p + pe, q - qe, q + qe)
    return acc.profile(pair.label, f"estimated (not certified: {why})", False,
                       (f"masses by Gauss-Legendre with an estimated error ({why})",))


# -- discrete pairs ---------------------------------------------------------------------------------------
def _discrete(pair: DirectedPair, h: float) -> GridProfile:
    import flint

    from ...claims.interval import Unsupported, compile_arb
    from .taylor import PREC, f_down, f_up

    with mpmath.workdps(40):
        num = NumericPair(pair.P, pair.Q, pair.x, pair.support, {}, 30)
        pts = num.discrete_points(lambda t: num.log("P", t), 40)
    try:
        fP, fQ = compile_arb(pair.P, [pair.x]), compile_arb(pair.Q, [pair.x])
    except Unsupported as exc:
        return _discrete_estimated(pair, h, num, pts, str(exc))
    n = len(pts)
    lo, hi = np.empty(n), np.empty(n)
    Pl, Ph, Ql, Qh = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    with flint.ctx.workprec(PREC):
        for i, p in enumerate(pts):
            t = flint.arb(flint.fmpq(int(sp.Rational(p).p), int(sp.Rational(p).q)))
            pv, qv = fP({pair.x: t}), fQ({pair.x: t})
            if pv.is_nan() or qv.is_nan() or not pv.is_finite() or not qv.is_finite():
                Pl[i] = Ph[i] = 0.0  # no information: left outside
                lo[i] = hi[i] = math.inf
                Ql[i] = Qh[i] = 0.0
                continue
            Pl[i], Ph[i] = max(0.0, f_down(pv)), max(0.0, f_up(pv))
            Ql[i], Qh[i] = max(0.0, f_down(qv)), max(0.0, f_up(qv))
            if qv.is_exact() and qv == 0:
                lo[i] = hi[i] = math.inf
            elif pv > 0 and qv > 0:
                Lb = pv.log() - qv.log()
                lo[i], hi[i] = f_down(Lb), f_up(Lb)
            else:
                lo[i], hi[i] = -math.inf, math.inf
    acc = _Acc(h)
    unknown = np.isposinf(lo) & np.isposinf(hi) & (Ph == 0)
    acc.add(lo[~unknown], hi[~unknown], Pl[~unknown], Ph[~unknown], Ql[~unknown], Qh[~unknown])
    return acc.profile(pair.label, f"{n} support points (Arb balls)")


def _discrete_estimated(pair, h, num, pts, why) -> GridProfile:
    with mpmath.workdps(40):
        vals = []
        for p in pts:
            t = mpmath.mpf(int(p)) if getattr(p, "is_Integer", False) else mpmath.mpf(sp.Float(p, 45))
            pv, qv = num.density("P", t), num.density("Q", t)
            Lv = (mpmath.log(pv) - mpmath.log(qv)) if pv > 0 and qv > 0 else (mpmath.inf if pv > 0 else -mpmath.inf)
            vals.append((float(pv), float(qv), float(Lv)))
    a = np.array(vals)
    P, Q, Lv = a[:, 0], a[:, 1], a[:, 2]
    with np.errstate(invalid="ignore"):
        lo = np.where(np.isfinite(Lv), Lv - 1e-12 * (1 + np.abs(Lv)), Lv)
        hi = np.where(np.isfinite(Lv), Lv + 1e-12 * (1 + np.abs(Lv)), Lv)
    acc = _Acc(h)
    acc.add(lo, hi, P * (1 - 1e-12), P * (1 + 1e-12), Q * (1 - 1e-12), Q * (1 + 1e-12))
    return acc.profile(pair.label, f"{len(pts)} support points (estimated: {why})", False,
                       (f"pmf values at 30 digits without error bounds ({why})",))


def grid_profile(pair: DirectedPair, h: float) -> GridProfile:
    """The bucketed privacy loss of ``pair`` on the grid of step ``h`` (module docstring)."""
    if pair.P.has(sp.Sum) or pair.Q.has(sp.Sum):
        # a normalising series (the discrete Gaussian's): evaluated by mpmath, without an error bound
        def series(s):
            (_, a, b), f = s.limits[0], sp.lambdify(s.limits[0][0], s.function, "mpmath")
            with mpmath.workdps(40):
                lo = -mpmath.inf if a == -sp.oo else mpmath.mpf(int(a))
                hi = mpmath.inf if b == sp.oo else mpmath.mpf(int(b))
                return sp.Float(mpmath.nsum(f, [lo, hi]), 40)

        def num(e):
            return e.replace(lambda s: isinstance(s, sp.Sum) and len(s.limits) == 1 and not s.free_symbols, series)

        g = grid_profile(DirectedPair(num(pair.P), num(pair.Q), pair.x, pair.support, pair.label), h)
        note = "a normalising series summed by mpmath without an error bound"
        return GridProfile(g.h, g.lo, g.Ph, g.Ql, g.Pl, g.Qh, g.p_inf_hi, g.p_inf_lo, g.outside, g.label,
                           g.detail + f" ({note})", False, g.notes + (note,))
    kind = Support.of(pair.support, numbers=True).flattened()[0]
    if kind == "continuous":
        try:
            return _continuous(pair, h)
        except SeriesUnsupported as exc:
            return _continuous_estimated(pair, h, f"no power series for the densities: {exc}")
    if kind == "discrete":
        return _discrete(pair, h)
    raise ArgumentError("support", "a continuous or discrete support", pair.support)


# -- the two discretisations -----------------------------------------------------------------------------
def _one_minus_exp_neg_h(h: float) -> float:
    """A float <= 1 - e^{-h}."""
    from .exps import expm1_bounds

    lo, hi = expm1_bounds(-h)
    return -hi


def pessimistic(g: GridProfile, extra_inf: float = 0.0) -> DiscretePLD:
    """Connect the dots on (P_hi, Q_lo) (module docstring), rounded up; the mass outside, where Q = 0 and
    ``extra_inf`` at +infinity."""
    h = g.h
    n = len(g.Ph)
    e_lo, _ = exp_grid(h, g.lo, g.lo + n)
    width = _one_minus_exp_neg_h(h) * (1 - 2 * U)
    Ph = g.Ph
    with np.errstate(over="ignore", invalid="ignore"):
        y = (e_lo * g.Ql) * (1 - 2 * U)
        y = np.where(np.isnan(y), 0.0, y)
        num = Ph - y  # <= the exact P - e^{bh} Q (up to one rounding: covered below)
        upper = np.where(num > 0, (num / width) * (1 + 4 * U), 0.0)
    upper = np.minimum(np.where(np.isfinite(upper), upper, Ph), Ph)
    lower = np.maximum(Ph - upper, 0.0) * (1 + 2 * U)
    masses = np.zeros(n + 1)
    masses[:-1] += lower
    masses[1:] += upper
    masses *= 1 + 2 * U
    inf = (g.p_inf_hi + g.outside + extra_inf) * (1 + 4 * U)
    return DiscretePLD(h, g.lo, masses, inf, 0.0, True)


def optimistic(g: GridProfile) -> DiscretePLD:
    """The Jensen atoms of the buckets rounded down to the grid, with the mean remainder (module docstring)."""
    h = g.h
    n = len(g.Pl)
    _, e_hi = exp_grid(h, g.lo, g.lo + n)
    Pl = g.Pl
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        den = (g.Qh * e_hi) * (1 + 2 * U)
        y = (Pl / den) * (1 - 2 * U)  # <= P_lo / (Q_hi e^{bh}) <= P_b / (Q_b e^{bh})
    y = np.where(np.isnan(y), 0.0, y)
    at_b = y >= 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.where(np.isfinite(y), 2.0 * (y - 1.0) / (y + 1.0), 2.0) * (1 - 4 * U)
    r = np.where(at_b, np.clip(r, 0.0, h), 0.0)
    masses = np.zeros(n + 1)  # index 0 is the grid value lo - 1
    masses[1:] += np.where(at_b, Pl, 0.0)
    masses[:-1] += np.where(at_b, 0.0, Pl)
    masses *= 1 - 2 * U
    inf = g.p_inf_lo * (1 - 4 * U)
    total = float(np.sum(masses)) * (1 + gamma(n + 2)) + inf
    rem_sum = float(np.sum(np.where(at_b, Pl, 0.0) * r)) * (1 - gamma(n + 4))
    rem = rem_sum / total * (1 - 4 * U) if total > 0 else 0.0
    nz = np.nonzero(masses)[0]
    if not len(nz):
        return DiscretePLD(h, 0, np.zeros(1), inf, 0.0, False, rem=0.0)
    return DiscretePLD(h, g.lo - 1 + int(nz[0]), masses[nz[0]:nz[-1] + 1], inf, 0.0, False, rem=max(0.0, rem))
