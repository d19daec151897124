r"""The privacy loss distribution of one directed pair, on a grid, and its two discretisations.

For output densities (P || Q) the privacy loss is L(x) = log P(x) - log Q(x), x ~ P, and the privacy
profile is delta(eps) = E_P[(1 - e^{eps - L})_+] (+ the P-mass where Q = 0). On the grid
eps_i = i h the output space is cut at every point where L crosses a grid value, so each *bucket*
b collects the outputs with L in [b h, (b + 1) h):

* **Continuous pairs.** The outputs are scanned where P is not negligible (log P within 90 of its
  largest value on a log-spaced scan around 0 and every kink of the densities, as the privacy profile
  scans, plus 2048 uniform points); between consecutive scan points L is taken to be monotone and the
  points where it crosses a grid value are found by bisection. On every resulting interval the masses
  of P and Q are integrated by 8-point Gauss-Legendre, with the difference to 4 points as the error
  estimate. The P-mass outside the scanned window is 1 - (the mass inside), since the densities
  integrate to 1: the tails are bounded by conservation of mass, never by a formula.
* **Discrete pairs.** Each support point (the privacy profile's enumeration) is an atom, its P and Q
  computed at 30 digits; the P-mass not enumerated is 1 - (the mass enumerated).

Then delta(eps_i) = sum_{b >= i} (P_b - e^{eps_i} Q_b) exactly (every output in a bucket b >= i has
L >= eps_i), and two discretisations on the grid:

* **Pessimistic: connect the dots** (Doroshenko, Ghazi, Kamath, Kumar and Manurangsi 2022, "Connect the
  dots: tighter discrete approximations of privacy loss distributions", PETS, Sect. 3 and Thm. 3.4).
  Bucket b's atom is split between eps_b and eps_{b+1} keeping both its P and Q masses; the result is
  a pair whose profile equals delta at every grid point and is linear in e^eps between them, so it is
  at least delta everywhere (delta is convex in e^eps) and dominates the pair. Masses are rounded up
  and the split towards eps_{b+1}: both only increase E[(1 - e^{eps - L})_+] of any composition.
* **Optimistic: floor rounding.** Bucket b's P-mass at eps_b <= L: a pointwise lower bound on the loss,
  with lower bounds on the masses, so E[(1 - e^{eps - sum L})_+] of any composition is a lower bound.
  Its bias is at most h per step (a composition of k steps may lose up to k h in the loss).

The outside mass and the mass where Q = 0 go to +infinity in the pessimistic distribution and are
dropped (outside) or kept at +infinity (Q = 0) in the optimistic one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

from ..._numbers import ArgumentError
from ...specify.support import Support
from ..profile import NumericPair, _kink_points
from .pairs import DirectedPair
from .pmf import DiscretePLD, PLDTooLarge

__all__ = ["GridProfile", "grid_profile", "pessimistic", "optimistic", "MAX_BUCKETS"]

U = 2.0 ** -53
#: log-density drop (natural log) below the largest value at which the outputs are no longer scanned
WINDOW_DROP = 60.0
UNIFORM_POINTS = 2048
#: the most grid values one pair's privacy loss may span (memory guard)
MAX_BUCKETS = 1 << 23
#: the most interval endpoints one pair may need (memory guard)
MAX_INTERVALS = 1 << 24
_CHUNK = 1 << 15
_GL16 = np.polynomial.legendre.leggauss(8)
_GL8 = np.polynomial.legendre.leggauss(4)


@dataclass(frozen=True)
class GridProfile:
    """Bucketed masses of a directed pair: bucket ``lo + j`` holds the outputs with L in
    [(lo + j) h, (lo + j + 1) h); ``P``/``Q`` their masses, ``errP``/``errQ`` bounds (estimates for the
    quadrature) on the errors; ``p_inf`` the P-mass where Q = 0; ``outside`` a bound on the P-mass not
    computed (the tails)."""

    h: float
    lo: int
    P: np.ndarray
    Q: np.ndarray
    errP: np.ndarray
    errQ: np.ndarray
    p_inf: float
    outside: float
    label: str
    detail: str

    def deltas(self, start: int, stop: int, side: str) -> np.ndarray:
        """delta at eps_i = i h for i in [start, stop): ``side="upper"`` with the errors and the outside
        mass added, ``"lower"`` with them taken off."""
        idx = np.arange(start, stop)
        n = len(self.P)
        if side == "upper":
            P, Q = self.P + self.errP, np.maximum(self.Q - self.errQ, 0)
            extra = self.p_inf + self.outside
        else:
            P, Q = np.maximum(self.P - self.errP, 0), self.Q + self.errQ
            extra = self.p_inf
        A = np.concatenate([np.cumsum(P[::-1])[::-1], [0.0]])
        B = np.concatenate([np.cumsum(Q[::-1])[::-1], [0.0]])
        j = np.clip(idx - self.lo, 0, n)
        with np.errstate(over="ignore", invalid="ignore"):
            d = A[j] - np.exp(idx * self.h) * B[j]
        d = np.where(np.isnan(d), 0.0, d)
        slack = 4 * n * U * (A[0] + extra) + 1e-300
        return np.maximum(d + extra + slack, 0.0) if side == "upper" else np.maximum(d + extra - slack, 0.0)


# -- densities in float ----------------------------------------------------------------------------------
def _log_density(expr: sp.Expr, x: sp.Symbol, probe: np.ndarray):
    """A numpy function for log(expr): the expanded logarithm (accurate in the tails) when it agrees with
    log of the density on ``probe``, else log of the density."""
    direct = sp.lambdify(x, expr, modules=["numpy", "scipy"])

    def log_direct(t):
        with np.errstate(all="ignore"):
            v = np.asarray(direct(t))
            if np.iscomplexobj(v):
                v = np.where(np.abs(v.imag) <= 1e-12 * np.abs(v.real), v.real, np.nan)
            return np.log(np.broadcast_to(v.astype(float), np.shape(t)))

    try:
        expanded = sp.lambdify(x, sp.expand_log(sp.log(expr), force=True), modules=["numpy", "scipy"])
    except Exception:  # noqa: BLE001 - sympy may refuse; the direct form is always there
        return log_direct

    def log_expanded(t):
        with np.errstate(all="ignore"):
            v = np.asarray(expanded(t))
            if np.iscomplexobj(v):
                v = np.where(np.abs(v.imag) <= 1e-12 * (1 + np.abs(v.real)), v.real, np.nan)
            return np.broadcast_to(v.astype(float), np.shape(t))

    a, b = log_direct(probe), log_expanded(probe)
    both = np.isfinite(a) & (a > -600)
    if both.any() and np.allclose(a[both], b[both], rtol=1e-9, atol=1e-9) and not np.isnan(b[both]).any():
        return log_expanded
    return log_direct


def _scan(kinks: list[float]) -> np.ndarray:
    offsets = np.concatenate([[0.0], 10.0 ** (np.arange(-64, 65) / 8.0)])
    offsets = np.concatenate([offsets, -offsets[1:]])
    return np.unique(np.concatenate([c + offsets for c in [0.0, *kinks]]))


#: a crossing point is accepted when the loss there is within this of the grid value (relative to 1 + |L|)
ROOT_TOLERANCE = 1e-15


def _crossings(L, a: np.ndarray, b: np.ndarray, target: np.ndarray, fa: np.ndarray, fb: np.ndarray) -> np.ndarray:
    """Points in [a, b] where the monotone L crosses ``target``: vectorised Illinois (regula falsi with the
    retained end's value halved), then bisection for the few left, to |L - target| <= ROOT_TOLERANCE
    (1 + |target|) or an interval of a few ulps. A point found that far from the exact crossing only moves a
    sliver with |L - eps| <= ROOT_TOLERANCE (1 + |eps|) between two buckets, which the error terms cover."""
    a, b = a.copy(), b.copy()
    fa, fb = fa - target, fb - target
    x = 0.5 * (a + b)
    side = np.zeros(len(a), dtype=np.int8)
    tol = ROOT_TOLERANCE * (1 + np.abs(target))
    act = np.arange(len(a))
    for it in range(100):
        A, B, FA, FB = a[act], b[act], fa[act], fb[act]
        if it < 40:
            with np.errstate(all="ignore"):
                X = B - FB * (B - A) / (FB - FA)
            X = np.where(np.isfinite(X) & (X > A) & (X < B), X, 0.5 * (A + B))
        else:
            X = 0.5 * (A + B)
        FX = L(X) - target[act]
        x[act] = X
        done = (np.abs(FX) <= tol[act]) | (B - A <= 4 * U * np.maximum(np.abs(A), np.abs(B))) | np.isnan(FX)
        same = np.sign(FX) == np.sign(FB)
        S = side[act]
        # Illinois: halve the value kept at the end that stays twice in a row
        FA = np.where(same & (S == 1), FA / 2, FA)
        FB = np.where(~same & (S == -1), FB / 2, FB)
        b[act], fb[act] = np.where(same, X, B), np.where(same, FX, FB)
        a[act], fa[act] = np.where(same, A, X), np.where(same, FA, FX)
        side[act] = np.where(same, 1, -1)
        act = act[~done]
        if not len(act):
            break
    return x


def _continuous(pair: DirectedPair, h: float) -> GridProfile:
    x = pair.x
    with mpmath.workdps(40):
        kinks_mp, notes = _kink_points(pair.P, pair.Q, x, 40)
    kinks = sorted({float(k) for k in kinks_mp if mpmath.isfinite(k)})
    _, pieces = Support.of(pair.support, numbers=True).flattened()
    scan = _scan(kinks)
    logP = _log_density(pair.P, x, scan)
    logQ = _log_density(pair.Q, x, scan)

    def L(t):
        with np.errstate(all="ignore"):
            return logP(t) - logQ(t)

    windows, best = [], -np.inf
    spans = []
    for lo, hi in pieces:
        lo_f = -np.inf if lo == -mpmath.inf else float(sp.Float(lo, 20))
        hi_f = np.inf if hi == mpmath.inf else float(sp.Float(hi, 20))
        pts = scan[(scan > lo_f) & (scan < hi_f)]
        if np.isfinite(lo_f) and np.isfinite(hi_f):
            pts = np.unique(np.concatenate([pts, np.linspace(lo_f, hi_f, 65)[1:-1]]))
        lp = logP(pts)
        lp = np.where(np.isnan(lp), -np.inf, lp)
        spans.append((lo_f, hi_f, pts, lp))
        if len(lp):
            best = max(best, float(np.max(lp)))
    if not np.isfinite(best):
        raise ArithmeticError(f"{pair.label}: the density P is not positive anywhere on the scan")
    for lo_f, hi_f, pts, lp in spans:
        keep = np.nonzero(lp > best - WINDOW_DROP)[0]
        if not len(keep):
            continue
        i, j = keep[0], keep[-1]
        a = pts[i - 1] if i > 0 else lo_f
        b = pts[j + 1] if j + 1 < len(pts) else hi_f
        if not np.isfinite(a):
            a = pts[i] - max(1.0, abs(pts[i]))
        if not np.isfinite(b):
            b = pts[j] + max(1.0, abs(pts[j]))
        inner = pts[(pts > a) & (pts < b)]
        ks = [k for k in kinks if a < k < b]
        windows.append(np.unique(np.concatenate([[a, b], np.linspace(a, b, UNIFORM_POINTS + 1), inner, ks])))
    massP, massQ, errP, errQ, buckets, p_inf, count = [], [], [], [], [], 0.0, 0
    for dense in windows:
        Ld = L(dense)
        L0, L1 = Ld[:-1], Ld[1:]
        fin = np.isfinite(L0) & np.isfinite(L1)
        lo_v, hi_v = np.minimum(L0, L1), np.maximum(L0, L1)
        first = np.where(fin, np.floor(lo_v / h) + 1, 0).astype(np.int64)
        last = np.where(fin, np.ceil(hi_v / h) - 1, -1).astype(np.int64)
        n_cross = np.maximum(last - first + 1, 0)
        total = int(n_cross.sum())
        if total + len(dense) > MAX_INTERVALS:
            raise PLDTooLarge(f"{pair.label}: the privacy loss crosses {total} grid values (step {h:g}); "
                              f"at most {MAX_INTERVALS} fit: take a larger step")
        seg = np.repeat(np.arange(len(L0)), n_cross)
        offs = np.arange(total) - np.repeat(np.cumsum(n_cross) - n_cross, n_cross)
        target = (first[seg] + offs) * h
        cross = _crossings(L, dense[seg], dense[seg + 1], target, L0[seg], L1[seg]) if total else np.empty(0)
        z = np.unique(np.concatenate([dense, cross]))
        count += len(z) - 1
        for s in range(0, len(z) - 1, _CHUNK):
            a, b = z[s:s + _CHUNK + 1][:-1], z[s + 1:s + _CHUNK + 1]
            mid, half = 0.5 * (a + b), 0.5 * (b - a)
            res = []
            for f in (logP, logQ):
                with np.errstate(all="ignore"):
                    v16 = np.exp(f(mid[:, None] + half[:, None] * _GL16[0][None, :])) @ _GL16[1] * half
                    v8 = np.exp(f(mid[:, None] + half[:, None] * _GL8[0][None, :])) @ _GL8[1] * half
                v16 = np.where(np.isnan(v16), 0.0, v16)
                # + a sliver moved across a grid value by an inexact crossing (ROOT_TOLERANCE)
                res.append((v16, np.abs(v16 - np.where(np.isnan(v8), 0.0, v8)) + (8 * U + 4 * ROOT_TOLERANCE) * v16))
            (p16, pe), (q16, qe) = res
            lm = L(mid)
            bad = np.isnan(lm) & (p16 > 1e-300)
            if bad.any():
                raise ArithmeticError(f"{pair.label}: the privacy loss is undefined at x = {mid[bad][0]!r} where P "
                                      "has mass")
            inf = np.isposinf(lm) & (p16 > 0)
            p_inf += float(np.sum(p16[inf]) + np.sum(pe[inf]))
            ok = np.isfinite(lm)
            massP.append(p16[ok]), massQ.append(q16[ok]), errP.append(pe[ok]), errQ.append(qe[ok])
            buckets.append(np.floor(lm[ok] / h).astype(np.int64))
    P, Q = np.concatenate(massP), np.concatenate(massQ)
    eP, eQ, bk = np.concatenate(errP), np.concatenate(errQ), np.concatenate(buckets)
    inside = math.fsum(P) + p_inf
    err_inside = float(np.sum(eP)) + 2 * U
    if inside > 1 + 1e-9 + err_inside or inside < 1e-3:
        raise ArithmeticError(f"{pair.label}: P integrates to {inside!r} on the scanned outputs; a density must "
                              "integrate to 1 (is it normalised?)")
    outside = max(0.0, 1.0 - inside) + err_inside
    detail = f"{count} intervals over {len(windows)} window(s)" + ("; " + "; ".join(notes) if notes else "")
    return _bucketed(h, bk, P, Q, eP, eQ, p_inf, outside, pair.label, detail)


def _bucketed(h, bk, P, Q, eP, eQ, p_inf, outside, label, detail) -> GridProfile:
    if len(bk) == 0:
        z = np.zeros(1)
        return GridProfile(h, 0, z, z, z, z, p_inf, outside, label, detail)
    lo, hi = int(bk.min()), int(bk.max())
    if hi - lo + 1 > MAX_BUCKETS:
        raise PLDTooLarge(f"{label}: the privacy loss spans {hi - lo + 1} grid values of step {h:g} "
                          f"(from {lo * h:g} to {hi * h:g}); at most {MAX_BUCKETS} fit: take a larger step")
    n = hi - lo + 1
    j = bk - lo
    return GridProfile(h, lo, np.bincount(j, P, n), np.bincount(j, Q, n), np.bincount(j, eP, n),
                       np.bincount(j, eQ, n), p_inf, outside, label, detail)


def _discrete(pair: DirectedPair, h: float) -> GridProfile:
    with mpmath.workdps(40):
        num = NumericPair(pair.P, pair.Q, pair.x, pair.support, {}, 30)
        pts = num.discrete_points(lambda t: num.log("P", t), 40)
        Ps, Qs, Ls = [], [], []
        p_inf = mpmath.mpf(0)
        total = mpmath.mpf(0)
        for p in pts:
            t = mpmath.mpf(int(p)) if getattr(p, "is_Integer", False) else mpmath.mpf(sp.Float(p, 45))
            pv, qv = num.density("P", t), num.density("Q", t)
            total += pv
            if pv == 0:
                continue
            if qv == 0:
                p_inf += pv
                continue
            Ps.append(pv), Qs.append(qv), Ls.append(mpmath.log(pv) - mpmath.log(qv))
        if total > 1 + mpmath.mpf(10) ** -20 or total < mpmath.mpf(10) ** -3:
            raise ArithmeticError(f"{pair.label}: P sums to {mpmath.nstr(total, 20)} on the enumerated support; a "
                                  "pmf must sum to 1 (is it normalised?)")
        hm = mpmath.mpf(h)
        bk = np.array([int(mpmath.floor(v / hm)) for v in Ls], dtype=np.int64)
        outside = float(max(1 - total, 0)) + 1e-25
        P = np.array([float(v) for v in Ps])
        Q = np.array([float(v) for v in Qs])
    return _bucketed(h, bk, P, Q, 2 * U * P, 2 * U * Q, float(p_inf) * (1 + 2 * U), outside, pair.label,
                     f"{len(pts)} support points")


def grid_profile(pair: DirectedPair, h: float) -> GridProfile:
    """The bucketed privacy loss of ``pair`` on the grid of step ``h`` (module docstring)."""
    kind = Support.of(pair.support, numbers=True).flattened()[0]
    if kind == "continuous":
        return _continuous(pair, h)
    if kind == "discrete":
        return _discrete(pair, h)
    raise ArgumentError("support", "a continuous or discrete support", pair.support)


# -- the two discretisations -----------------------------------------------------------------------------
def pessimistic(g: GridProfile, extra_inf: float = 0.0) -> DiscretePLD:
    """Connect the dots: bucket b's (P_b, Q_b) split between eps_b and eps_{b+1}, P and Q kept (rounded so
    that the result only grows); the outside mass, the mass where Q = 0 and ``extra_inf`` at +infinity."""
    h = g.h
    eps = (g.lo + np.arange(len(g.P))) * h
    P_up = (g.P + g.errP) * (1 + 4 * U)
    Q_dn = np.maximum(g.Q - g.errQ, 0.0) * (1 - 4 * U)
    width = -math.expm1(-h)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        lam = (P_up - np.exp(eps) * Q_dn) / (P_up * width)
    lam = np.where(P_up > 0, lam, 0.0)
    lam = np.clip(np.where(np.isnan(lam), 1.0, lam) + 16 * U / width, 0.0, 1.0)
    upper = lam * P_up
    lower = np.maximum(P_up - upper, 0.0)
    masses = np.zeros(len(P_up) + 1)
    masses[:-1] += lower
    masses[1:] += upper
    masses *= 1 + 2 * U
    inf = (g.p_inf + g.outside + extra_inf) * (1 + 4 * U)
    return DiscretePLD(h, g.lo, masses, inf, 0.0, True)


def optimistic(g: GridProfile) -> DiscretePLD:
    """Floor rounding: bucket b's P-mass (a lower bound) at eps_b; the mass where Q = 0 at +infinity."""
    masses = np.maximum(g.P - g.errP, 0.0) * (1 - 4 * U)
    return DiscretePLD(g.h, g.lo, masses, g.p_inf * (1 - 4 * U), 0.0, False)
