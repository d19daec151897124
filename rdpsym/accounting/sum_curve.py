r"""A float RDP curve for mechanisms whose Rényi divergence is an infinite sum with no closed form.

The discrete Gaussian (theta sums, Canonne, Kamath and Steinke 2020, arXiv:2004.00010, Def. 1) and
the Skellam mechanism (Bessel sums, Agarwal, Kairouz and Liu 2021, arXiv:2110.04995, Sect. 3) have
pmfs on the integers and no closed-form D_alpha. The accountant's curve for any such mechanism is
computed here from its pmfs (:mod:`rdpsym.accounting.sum_forms` reads them node by node; nothing
looks at a name):

    eps(alpha) = max over the worst pairs' directions (:func:`rdpsym.derive.mechanism_rdp.worst_directions`)
                 of  log S(alpha) / (alpha - 1),   S(alpha) = sum_{k in Z} exp(h(k)),

h = alpha log P + (1 - alpha) log Q (Mironov 2017, arXiv:1702.07476 v3, Def. 3 and 4). For each order
the sum is taken in log space over a window around the largest term (log-sum-exp), and the window is
widened until each of its two tails is *proved* below 2^-57 of the window's sum (so both together are
below 1e-16 relative):

**Tail bound.** For k >= K, write r(k) = exp(h(k+1) - h(k)). If some U(K) >= log r(k) for every
k >= K, then sum_{k>K} exp(h(k)) <= exp(h(K)) rbar / (1 - rbar), rbar = exp(U(K)) < 1 (geometric
series: exp(h(K+j)) <= exp(h(K)) rbar^j). With h = c0 + c1 k + c2 k^2 + sum_i a_i log I_{k - s_i}(x_i):

* the polynomial part gives c2 (2k + 1) + c1 exactly, non-increasing when c2 <= 0;
* each Bessel atom gives a_i log rho_n(x), rho_n = I_{n+1}(x)/I_n(x), n = k - s_i >= 0, with
  L_n <= rho_n <= R_n, R_n = x/(2(n+1)), L_n = 1/(2(n+1)/x + x/(2(n+2))). R: termwise comparison of
  the power series of I_{n+1} and I_n (DLMF 10.25.2), each term's ratio is (x/2)/(m+n+1) <= x/(2(n+1)).
  L: 1/rho_n = 2(n+1)/x + rho_{n+1} (the recurrence I_n - I_{n+2} = (2(n+1)/x) I_{n+1}, DLMF
  10.29.1) and rho_{n+1} <= R_{n+1}.
* an atom with a_i > 0 contributes at most a_i log R_n, non-increasing in k;
* at most one atom may have a_i = -m < 0 (alpha > 1: the (1 - alpha) log Q of a Bessel pmf); it is
  paired with a positive atom a_p >= m of the same x:
  a_p log rho_{n_p} - m log rho_{n_m} = (a_p - m) log rho_{n_p} + m log(rho_{n_p}/rho_{n_m})
  <= (a_p - m) log R_{n_p} + m log(R_{n_p}/L_{n_m}), and
  R_{n_p}/L_{n_m} = (n_m + 1)/(n_p + 1) + x^2/(4(n_m + 2)(n_p + 1)), whose first part is monotone in
  k with limit 1 and whose second part decreases: on k >= K it is at most
  max(1, (n_m+1)/(n_p+1)) + x^2/(4(n_m+2)(n_p+1)) at k = K.
* U(K), the sum of these suprema at k = K, bounds log r(k) on the whole tail k >= K (a sum of
  suprema is at least the supremum of the sum); any other shape of atoms (two negative ones, a
  negative one with no partner) proves nothing: no claim.

The left tail is the right tail of h(-k) (c1 -> -c1, s_i -> -s_i, as I_{-n} = I_n). Where a
condition fails the window is widened; past :data:`WINDOW_MAX` terms, or orders beyond the Bessel
table (:data:`rdpsym.accounting.sum_forms.BESSEL_MAX`), the value is +inf (no claim).

**Rounding, outward.** Each term's log carries an error bound (8u times the magnitudes of its parts,
u = 2^-52, plus the Bessel table's and the normalisers' bounds); log S is bracketed by
[log S_w - E, log S_w + E + log1p(tail/S_w)] (E adds the pairwise summation's (log2 m + 2) u) and
eps is the end of the bracket that is larger after the division by alpha - 1. alpha = 1 (the KL)
and alpha = oo are +inf (no claim: no float code for them here; for both built-ins D_inf is +inf),
as is every order where a coefficient is not finite.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import sympy as sp

from ..specify.text.numbers import exact_number
from .._timeout import StepTimeout, default_step_seconds, time_limit
from ..numeric.maximum import bound_maximum
from ..specify.mechanism import Mechanism
from .sum_forms import BESSEL_MAX, Unsupported, log_besseli_table, normaliser_summand, summand

__all__ = ["sum_curve", "log_sum", "WINDOW_MAX", "WINDOW_MAX_BESSEL", "TAIL_LOG2"]

#: the most terms a window holds on each side of its centre before the order gets +inf
WINDOW_MAX = 2**17
#: the same for summands with Bessel atoms, whose windows reach back to order 0 (the ratio bounds
#: hold for n >= 0 only): orders whose largest term lies further out get +inf, for speed
WINDOW_MAX_BESSEL = 2**15
#: each tail must be below 2^TAIL_LOG2 of the window's sum (both: below 1e-16)
TAIL_LOG2 = -57
_U = 2.0**-52
_LOCK = threading.RLock()


class _Tables:
    """log I_n(x) tables by x, grown on demand (never past BESSEL_MAX); at most ``MAX_TABLES`` kept."""

    MAX_TABLES = 64

    def __init__(self):
        self.t: dict = {}

    def get(self, x: float, n: np.ndarray):
        """(log I_|n|(x), error) for integer arrays n; NaN where |n| is past the table's limit."""
        n = np.abs(n)
        top = float(np.nanmax(n)) if n.size else 0.0
        have = self.t.get(x)
        if have is None or len(have[0]) - 1 < min(top, BESSEL_MAX):
            size = int(min(BESSEL_MAX, max(top, 2 * (len(have[0]) - 1) if have is not None else 256)))
            if len(self.t) >= self.MAX_TABLES:
                self.t.clear()
            self.t[x] = have = log_besseli_table(x, size)
        ok = n <= len(have[0]) - 1
        idx = np.where(ok, n, 0).astype(np.int64)
        return np.where(ok, have[0][idx], np.nan), np.where(ok, have[1][idx], np.nan)


def _h(coefs, atoms, k, tables, lz_err):
    """h(k) and its error bound for a (orders x terms) matrix k; rows are orders."""
    c0, c1, c2 = (c[:, None] for c in coefs)
    val = c0 + c1 * k + c2 * k * k
    mag = np.abs(c0) + np.abs(c1 * k) + np.abs(c2 * k * k)
    err = np.zeros_like(val)
    for a, s, x in atoms:
        li, ei = tables.get(x, k - s)
        val = val + a[:, None] * li
        mag = mag + np.abs(a[:, None] * li)
        err = err + np.abs(a[:, None]) * ei
    return val, err + 8 * _U * mag + lz_err[:, None]


def _ratio_bound(K, coefs, atoms):
    """``(ok, U)``: where ``ok``, U >= log r(k) for every k >= K (module docstring); needs no table."""
    c0, c1, c2 = coefs
    ok = c2 <= 0
    U = c2 * (2 * K + 1) + c1
    negs = [i for i, (a, _, _) in enumerate(atoms) if (a < 0).any()]
    if len(negs) > 1:
        return np.zeros(K.shape, dtype=bool), U
    pair = None
    if negs:
        am, sm, xm = atoms[negs[0]]
        same = [i for i, (a, s, x) in enumerate(atoms) if i != negs[0] and x == xm]
        if not same:
            return np.zeros(K.shape, dtype=bool), U
        # the positive atom of the same x with the largest coefficient pays for the negative one
        pair = max(same, key=lambda i: float(np.min(atoms[i][0])))
    i_neg = negs[0] if negs else -1
    # per row: the atom i_neg is negative where its coefficient is (alpha > 1), an ordinary positive atom
    # elsewhere (alpha < 1); every other atom must be >= 0
    neg_row = atoms[i_neg][0] < 0 if negs else np.zeros(K.shape, dtype=bool)
    for i, (a, s, x) in enumerate(atoms):
        n = K - s
        ok &= n >= 0
        with np.errstate(all="ignore"):
            plain = a * np.log(x / (2 * (n + 1)))
            if i == i_neg:
                U = U + np.where(neg_row, 0.0, plain)
                continue
            ok &= a >= 0
            if i == pair:
                m, nm = -am, K - sm
                ratio = np.maximum(1.0, (nm + 1) / (n + 1)) + x * x / (4 * (nm + 2) * (n + 1))
                paired = (a - m) * np.log(x / (2 * (n + 1))) + m * np.log(ratio)
                ok &= ~neg_row | ((a >= m) & (nm >= 0))
                U = U + np.where(neg_row, paired, plain)
            else:
                U = U + plain
    U = U + 16 * _U * (1 + np.abs(U))  # the rounding of U itself, outward
    return ok & np.isfinite(U) & (U < 0), U


def _right_tail(K, coefs, atoms, hK, eK):
    """log of the proved bound on sum_{k>K} exp(h(k)) per row (+inf where no bound is proved)."""
    ok, U = _ratio_bound(K, coefs, atoms)
    with np.errstate(all="ignore"):
        log_tail = hK + eK + U - np.log(-np.expm1(U))
    return np.where(ok, log_tail, np.inf)


def _reflected(coefs, atoms):
    """h(-k): c1 -> -c1 and I_{-k-s} = I_{k+s} (integer orders, DLMF 10.27.1)."""
    return [coefs[0], -coefs[1], coefs[2]], [(a, -s, x) for a, s, x in atoms]


def _first_width(centre, coefs, atoms, max_window):
    """Per row the smallest 2^j (64 <= 2^j <= max_window) with a proved ratio bound at centre + 2^j;
    0 where there is none (no claim). Costs no table: it decides the window before it is summed."""
    width = np.zeros(centre.shape)
    j = 6
    while 2**j <= max_window:
        ok, _ = _ratio_bound(centre + 2.0**j, coefs, atoms)
        width = np.where((width == 0) & ok, 2.0**j, width)
        if (width > 0).all():
            break
        j += 1
    return width


def _window(centre, wl, wr, co, at, tables, le):
    """The window [centre - wl, centre + wr] summed, its tails bounded: (good, bad, (lo, hi))."""
    offs = np.arange(-wl, wr + 1, dtype=float)
    k = centre[:, None] + offs[None, :]
    H, E = _h(co, at, k, tables, le)
    bad = np.isnan(H).any(axis=1) | np.isnan(E).any(axis=1) | np.isposinf(H).any(axis=1)
    Hs = np.where(np.isnan(H), -np.inf, H)
    mx = Hs.max(axis=1)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(all="ignore"):
        log_w = safe + np.log(np.exp(Hs - safe[:, None]).sum(axis=1))
        r_tail = _right_tail(k[:, -1], co, at, H[:, -1], E[:, -1])
        rc, ra = _reflected(co, at)
        l_tail = _right_tail(-k[:, 0], rc, ra, H[:, 0], E[:, 0])
        # sum_k e^(h_k - E_k) <= S_w <= sum_k e^(h_k + E_k): the weighted error, not the worst term's;
        # then the pairwise summation's rounding, (log2 m + 2) u relative
        Ee = np.where(np.isfinite(E), E, np.inf)
        log_up = safe + np.log(np.exp(Hs + Ee - safe[:, None]).sum(axis=1))
        log_dn = safe + np.log(np.exp(Hs - Ee - safe[:, None]).sum(axis=1))
        rnd = (math.log2(k.shape[1]) + 2) * _U
        rel = np.logaddexp(r_tail, l_tail) - log_dn
        small = TAIL_LOG2 * math.log(2)
        fine = ~bad & np.isfinite(mx)
        good_l, good_r = fine & (l_tail - log_w <= small), fine & (r_tail - log_w <= small)
        return (good_l, good_r), bad, (log_dn - rnd, log_up + rnd + np.log1p(np.exp(rel)))


def log_sum(coefs, atoms, tables, lz_err, max_window: int | None = None):
    """``(lo, hi)``: bounds on log sum_k exp(h(k)) per order (rows of ``coefs``); +inf/-inf where not proved.

    ``coefs`` = (c0, c1, c2) arrays over orders, ``atoms`` = [(a (array), s, x)], ``lz_err`` the
    normalisers' error per order. The window's centre is found by a search for the largest term
    (a coarse scan over 0, ±2^i, then integer ternary search); correctness rests on the tail bounds
    alone, not on the centre."""
    n = len(coefs[0])
    lo_out, hi_out = np.full(n, -np.inf), np.full(n, np.inf)
    finite = np.all([np.isfinite(c) for c in coefs], axis=0)
    for a, _, _ in atoms:
        finite &= np.isfinite(a)
    rows = np.flatnonzero(finite)
    if rows.size == 0:
        return lo_out, hi_out
    co = [c[rows] for c in coefs]
    at = [(a[rows], s, x) for a, s, x in atoms]
    le = lz_err[rows]
    if max_window is None:
        max_window = WINDOW_MAX_BESSEL if atoms else WINDOW_MAX
    reach = min(BESSEL_MAX, 2 * max_window) if atoms else 2**50

    def hv(k):
        v, _ = _h(co, at, k, tables, le)
        return np.where(np.isnan(v), -np.inf, v)

    # coarse scan outward (limited to 2^12 first for Bessel tables, wider only if needed)
    top = min(reach, 2**12) if atoms else reach
    while True:
        pts = np.array([0.0] + [s * 2.0**i for i in range(int(math.log2(top)) + 1) for s in (1, -1)])
        vals = hv(np.broadcast_to(pts, (len(rows), len(pts))))
        best = np.argmax(vals, axis=1)
        edge = np.abs(pts[best]) >= top
        if not edge.any() or top >= reach:
            break
        top = min(reach, top * 16)
    order = np.argsort(pts)
    sp_pts, rank = pts[order], np.argsort(order)[best]
    lo = sp_pts[np.maximum(rank - 1, 0)].copy()
    hi = sp_pts[np.minimum(rank + 1, len(pts) - 1)].copy()
    for _ in range(200):
        wide = hi - lo > 2
        if not wide.any():
            break
        m1 = np.floor(lo + (hi - lo) / 3)
        m2 = np.ceil(hi - (hi - lo) / 3)
        v = hv(np.stack([m1, m2], axis=1))
        left = v[:, 0] < v[:, 1]
        lo = np.where(wide & left, m1, lo)
        hi = np.where(wide & ~left, m2, hi)
    centre = np.round((lo + hi) / 2)

    # the window's two ends: where a ratio bound is first proved on each side, then doubled while the
    # tails are not yet below 2^TAIL_LOG2 of the window's sum
    wr = _first_width(centre, co, at, max_window)
    rc, ra = _reflected(co, at)
    wl = _first_width(-centre, rc, ra, max_window)
    todo = np.flatnonzero((wr > 0) & (wl > 0))
    while todo.size:
        for key in np.unique(np.stack([wl[todo], wr[todo]], axis=1), axis=0):
            grp = todo[(wl[todo] == key[0]) & (wr[todo] == key[1])]
            (good_l, good_r), bad, res = _window(centre[grp], key[0], key[1], [c[grp] for c in co],
                                                 [(a[grp], s, x) for a, s, x in at], tables, le[grp])
            good = good_l & good_r
            lo_out[rows[grp[good]]] = res[0][good]
            hi_out[rows[grp[good]]] = res[1][good]
            # a side whose tail is not yet small enough is widened; a NaN in the window (past the
            # table) will not heal: no claim
            wl[grp[~good_l & ~bad]] *= 2
            wr[grp[~good_r & ~bad]] *= 2
            wl[grp[good | bad]] = 0
        todo = todo[(wl[todo] > 0) & (wl[todo] <= max_window) & (wr[todo] <= max_window)]
    return lo_out, hi_out


# --------------------------------------------------------------------------------------------------
# the curve
# --------------------------------------------------------------------------------------------------
def _pair_templates(mechanism: Mechanism):
    return [(item.P, item.Q) for item in mechanism.pairs]


def sum_curve(mechanism: Mechanism, group: int):
    """The float curve of a mechanism on the integers whose pmfs :mod:`.sum_forms` reads, or None.

    Provenance ``"numeric sum"``; groups: Mironov 2017, Prop. 2 around it
    (:func:`rdpsym.accounting.curve_types.float_curve`). None (the accountant's other routes) when the
    support is not the integers or a pmf has a factor of another form."""
    from ..symbols import alpha as ALPHA
    from .curve_types import event_rows, float_curve

    if mechanism.support != sp.S.Integers:
        return None
    k = mechanism.variable
    symbols = tuple(p.symbol for p in mechanism.parameters)
    shifts = tuple(getattr(item, "shift", None) for item in mechanism.pairs)
    extra = tuple(s for s in shifts if isinstance(s, sp.Symbol))
    limit = time_limit(default_step_seconds(), clock="wall")
    try:
        # sympy on the user's pmfs: under the step time limit (a timeout: the other routes)
        with limit:
            for P, Q in _pair_templates(mechanism):
                summand(P, Q, k, ALPHA, symbols + extra, {})
    except Unsupported:
        return None
    except StepTimeout as exc:
        if exc.limit_id != limit.id:
            raise  # an enclosing limit: not this step's to handle
        return None
    names = [p.name for p in mechanism.parameters]
    compiled: dict = {}
    pairs_memo: dict = {}
    norm_memo: dict = {}
    norm_forms: dict = {}  # a normaliser's compiled summand: by the normaliser alone, not per event
    tables = _Tables()

    def directions(one: dict):
        from ..derive.mechanism_rdp import worst_directions

        key = tuple(sorted(one.items()))
        with _LOCK:
            if key not in pairs_memo:
                limit = time_limit(default_step_seconds(), clock="wall")
                try:
                    with limit:
                        found = worst_directions(mechanism, values={n: exact_number(v, f"parameter {n!r}")
                                                                    for n, v in one.items()})
                        out = []
                        for d in found:
                            if (d.P, d.Q) not in compiled:
                                compiled[(d.P, d.Q)] = summand(d.P, d.Q, k, ALPHA, symbols, {})
                            out.append(compiled[(d.P, d.Q)])
                except (ValueError, ArithmeticError):
                    # no certified set of worst pairs at these values (ArgumentError) or a pair of another
                    # form (Unsupported): no claim for this event (not memoised)
                    return None
                except StepTimeout as exc:
                    if exc.limit_id != limit.id:
                        raise  # an enclosing limit: not this step's to handle
                    return None  # out of time: no claim for this event (not memoised)
                if len(pairs_memo) > 4096:
                    pairs_memo.clear()
                pairs_memo[key] = out
            return pairs_memo[key]

    def log_normaliser(total, values: tuple, one: dict):
        key = (total, tuple(sorted(one.items())))
        if key not in norm_memo:
            if total not in norm_forms:
                limit = time_limit(default_step_seconds(), clock="wall")
                try:
                    with limit:  # sympy on the user's pmf
                        norm_forms[total] = normaliser_summand(total, ALPHA, symbols)
                except StepTimeout as exc:
                    if exc.limit_id != limit.id:
                        raise
                    raise ArithmeticError("the normaliser's sum was not compiled in time") from None
            s = norm_forms[total]
            args = [np.ones(1)] + list(values)
            coefs = [np.broadcast_to(np.asarray(c(*args), dtype=float), (1,)).copy() for c in s.coeffs]
            atoms = [(np.broadcast_to(np.asarray(a(*args), dtype=float), (1,)).copy(), float(sh(*args)), float(x(*args)))
                     for a, sh, x in s.atoms]
            lo, hi = log_sum(coefs, _checked(atoms), tables, np.zeros(1))
            if len(norm_memo) > 4096:
                norm_memo.clear()
            norm_memo[key] = (float(lo[0]), float(hi[0]))
        return norm_memo[key]

    def one_direction(s, a, one: dict):
        values = [float(one[n]) for n in names]
        try:
            zs = [log_normaliser(total, tuple(values), one) for total in s.normalisers]
        except (ArithmeticError, Unsupported):  # no claim: +inf
            return np.full(a.shape, np.inf)
        if any(not (math.isfinite(lo) and math.isfinite(hi)) for lo, hi in zs):
            return np.full(a.shape, np.inf)
        args = [a] + values + [(lo + hi) / 2 for lo, hi in zs]
        lz_err = np.zeros(a.shape)
        for (lo, hi), c in zip(zs, s.lz_coefs):
            lz_err = lz_err + np.abs(np.broadcast_to(np.asarray(c(*args), dtype=float), a.shape)) * ((hi - lo) / 2 + 4 * _U * abs(hi))
        with np.errstate(all="ignore"):
            coefs = [np.broadcast_to(np.asarray(c(*args), dtype=float), a.shape).copy() for c in s.coeffs]
            atoms = [(np.broadcast_to(np.asarray(c(*args), dtype=float), a.shape).copy(), float(sh(*args)), float(x(*args)))
                     for c, sh, x in s.atoms]
        try:
            atoms = _checked(atoms)
        except ArithmeticError:
            return np.full(a.shape, np.inf)
        lo, hi = log_sum(coefs, atoms, tables, lz_err)
        with np.errstate(all="ignore"):
            return np.where(a > 1, hi / (a - 1), lo / (a - 1))

    def base(alpha, params):
        shape, flat_a, rows = event_rows(alpha, params, names)
        out = np.full(flat_a.shape, np.inf)
        for sel, one in rows:
            aa = flat_a[sel]
            ok = np.isfinite(aa) & (aa > 0) & (aa != 1)
            if not ok.any():
                continue
            found = directions(one)
            if not found:  # no certified pair (or none at all): no claim, +inf (never a maximum over nothing)
                continue
            vals = np.full(aa.shape, np.inf)
            # the numeric maximum's rule on float bounds (a direction without a value is +inf there); an
            # upper bound below 0 (outward rounding of D = 0) is raised to 0, D_alpha >= 0 (Prop. 8)
            vals[ok] = np.maximum(bound_maximum(one_direction(s, aa[ok], one) for s in found), 0.0)
            out[sel] = vals
        return out.reshape(shape)

    detail = ("float log-space sum of h = alpha log P + (1 - alpha) log Q read off the pmfs, over the worst pairs "
              "(rdpsym.derive.mechanism_rdp.worst_pairs) and both directions; each tail proved below 2^-57 of the "
              "window's sum (geometric bound on the term ratios: rdpsym.accounting.sum_curve), rounding outward; "
              "+inf (no claim) at alpha = 1, alpha = oo and where the window or the Bessel table would be too large")
    return float_curve(mechanism, group, "numeric sum", detail, base)


def _checked(atoms):
    """Bessel atoms need an integer shift and x > 0 (the recurrence and the bounds are for those)."""
    for _, s, x in atoms:
        if not (math.isfinite(s) and float(s).is_integer() and 0 < x <= BESSEL_MAX):
            raise ArithmeticError(f"a Bessel atom at shift {s}, argument {x}: not evaluated")
    return atoms
