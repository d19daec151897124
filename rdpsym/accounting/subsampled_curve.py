r"""The accountant's float curve of any subsampled mechanism (``rdpsym.subsample(base, q)``).

The accountant's dispatcher (:func:`rdpsym.accounting.mechanism_curve`) asks :func:`subsampled_curve`
for every mechanism whose ``subsampling`` is set: that attribute is data
(:class:`~rdpsym.specify.subsampling.Subsampling`: base, rate, scheme, neighbouring relation) and knows
nothing of this module; the mechanism's name is never read. :func:`subsampled_curve` checks that the
mechanism's densities are still the ones :func:`rdpsym.subsample` builds from it (a copy with replaced
densities gets the generic curve) and computes eps(alpha) from the base mechanism's own float curve
eps_b = ``mechanism_curve(base)`` (handed in by the dispatcher) — a supremum over the base's pairs and
both directions (Mironov 2017, arXiv:1702.07476 v3, Def. 4).

With M = (1 - q) P + q Q for a base pair (P, Q) (Mironov, Talwar & Zhang 2019, arXiv:1908.10530, Sect. 3)
and k an integer >= 2, E_P[(Q/P)^j] = exp((j - 1) D_j(Q||P)) <= exp((j - 1) eps_b(j)), so (the j = 0, 1
terms add up to 1 minus the rest)

    A_k - 1 = E_P[(M/P)^k] - 1 = sum_{j>=2} binom(k, j) (1-q)^(k-j) q^j expm1((j - 1) D_j(Q||P))      (B)

is *exact* for D_k(M||P) at the worst base pair. Which formula gives eps(k) = log1p(S_k)/(k - 1):

* **Poisson, Gaussian shift base** (recognised by structure, :mod:`.subsampled_structure`): the sampled
  Gaussian at sigma_eff = sigma / sensitivity read from the densities,
  :func:`rdpsym.accounting.subsampled.subsampled_gaussian_rdp` (exact: binomial form at integer orders,
  quadrature elsewhere, both within 1e-11 of 50-digit mpmath; MTZ 2019, Sect. 3: the reverse
  direction is never larger for alpha >= 1); above ``ALPHA_MAX`` the sampled component D_alpha(P_1||Q)
  (joint quasi-convexity, van Erven & Harremoës 2014, IEEE T-IT 60(7), Thm. 13).
* **Poisson, Laplace shift base**: S_k = (B) with eps_b — exact at integer orders (Zhu & Wang 2019,
  ICML: the exact formula for the Poisson-subsampled Laplace mechanism; the reverse is not larger).
* **Poisson, any other base**: Zhu & Wang 2019 (ICML, PMLR 97), Thm. 6, the general upper bound over
  all neighbours and both directions: S_k = binom(k,2) q^2 (1-q)^(k-2) expm1(eps_b(2))
  + sum_{j>=3} binom(k,j) (1-q)^(k-j) q^j (3 e^{(j-1) eps_b(j)} - 1) (their
  (1-q)^{k-1}(kq - q + 1) + binom(k,2) q^2 (1-q)^{k-2} e^{eps(2)} + 3 sum_{j>=3} ... minus the
  binomial identity sum_j binom(k,j)(1-q)^(k-j) q^j = 1: every term stays positive).
* **Without replacement** (replace-one; the base's curve read as its replace-one RDP): Wang, Balle &
  Kasiviswanathan 2019 (AISTATS, PMLR 89), Thm. 9: S_k = q^2 binom(k,2) min{4 expm1(eps_b(2)),
  e^{eps_b(2)} min{2, expm1(eps_b(oo))^2}} + sum_{j>=3} q^j binom(k,j) e^{(j-1) eps_b(j)}
  min{2, expm1(eps_b(oo))^j}.

Other orders (the bounds hold at every order): between integer orders f < alpha < f + 1 <= ``K_MAX``,
(alpha - 1) eps(alpha) is at most the linear interpolation of (k - 1) eps(k) (it is convex in alpha:
van Erven & Harremoës 2014, Thm. 11); on 0 < alpha <= 2, eps(2) (D_alpha is non-decreasing in alpha,
ibid. Thm. 3; Mironov 2017, Prop. 9); at alpha = oo, log(1 + q expm1(eps_b(oo))) (Li, Qardaji & Su
2012, Thm. 1, for Poisson; the same amplification for a fixed-size subsample under replace-one, Balle,
Barthe & Gaboardi 2018, NeurIPS, Thm. 9). Every value is also capped by eps_b(alpha) (joint
quasi-convexity, ibid. Thm. 13: each subsampled pair is a mixture of pairs of the base) and by the
alpha = oo value; above ``K_MAX`` only these caps remain. q = 0 gives 0, q = 1 the base's curve.

Fail closed: the integer-order sums are computed in log space (log-sum-exp of positive terms) and
rounded outward by :data:`rdpsym.accounting.subsampled.OUTWARD`; NaN or an infinite base value gives
+inf, never a small number; parameter values outside their domain give +inf.
"""

from __future__ import annotations

import enum
import math
from fractions import Fraction

from typing import Callable

import numpy as np
import sympy as sp

from ..mechanisms.subsample import is_as_subsampled
from ..specify.mechanism import Mechanism
from .curve_types import MechanismCurve, event_rows, float_curve
from .subsampled import OUTWARD, sampled_component, subsampled_gaussian_rdp
from .subsampled_structure import gaussian_noise_ratio, is_laplace_shift

__all__ = ["subsampled_curve", "integer_order_sums", "SumKind", "K_MAX", "ALPHA_MAX"]


class SumKind(enum.StrEnum):
    """Which integer-order sum :func:`integer_order_sums` takes (its value is the public name)."""

    #: the exact binomial expansion (B) (Poisson subsampling of a Laplace shift)
    BINOMIAL = "binomial"
    #: Zhu & Wang 2019 (ICML), Thm. 6 (Poisson, every neighbour)
    ZHU_WANG = "zhu_wang"
    #: Wang, Balle & Kasiviswanathan 2019 (AISTATS), Thm. 9 (sampling without replacement, replace-one)
    WBK = "wbk"

#: Integer orders up to this get the sums above (O(K_MAX^2) per event, once); above: the caps only.
K_MAX = 1024
#: Above this order the Gaussian route uses the sampled component's D_alpha (quadrature gets slow).
ALPHA_MAX = 512.0
#: Values or tables memoised per prepared curve before the memo is cleared.
MEMO_SIZE = 200_000

_ZW6 = "Zhu & Wang 2019 (ICML), Thm. 6"
_WBK9 = "Wang, Balle & Kasiviswanathan 2019 (AISTATS), Thm. 9"
_CAPS = ("between integer orders the linear interpolation of (alpha - 1) eps (convex in alpha, van Erven & "
         "Harremoës 2014, Thm. 11), eps(2) on alpha <= 2 (monotone, Thm. 3), log(1 + q expm1(eps_base(oo))) "
         "at alpha = oo, everything capped by eps_base(alpha) (quasi-convexity, Thm. 13)")


# --------------------------------------------------------------------------------------------------
# the integer-order sums
# --------------------------------------------------------------------------------------------------
def _log_expm1(c):
    """log(e^c - 1) for c >= 0 (-inf at 0, +inf at +inf), without overflow."""
    c = np.asarray(c, dtype=float)
    with np.errstate(all="ignore"):
        big = c > 1.0
        out = np.where(big, c + np.log1p(-np.exp(-np.where(big, c, 1.0))), np.log(np.expm1(np.where(big, 1.0, c))))
    return np.where(np.isnan(c), np.inf, out)


def integer_order_sums(eps_base, q: float, kind: SumKind | str, eps_inf: float = math.inf) -> np.ndarray:
    """eps(k) for k = 0..K of a subsampled mechanism (entries 0, 1 are unused: NaN), from ``eps_base[j]``,
    the base's RDP at the integer orders j = 0..K (entries 0, 1 unused), for 0 < q < 1.

    ``kind`` (a :class:`SumKind` or its value): ``"binomial"`` (the exact expansion (B), Poisson),
    ``"zhu_wang"`` (Zhu & Wang 2019, Thm. 6) or ``"wbk"`` (Wang, Balle & Kasiviswanathan 2019, Thm. 9,
    which also uses ``eps_inf``, the base's eps(oo)). Returns log1p(S_k)/(k - 1) (module docstring)
    before any outward rounding; +inf where a needed base value is infinite or NaN.
    """
    try:
        kind = SumKind(kind)
    except ValueError:
        raise ValueError(f"kind must be 'binomial', 'zhu_wang' or 'wbk'; got {kind!r}") from None
    eps_base = np.asarray(eps_base, dtype=float)
    K = len(eps_base) - 1
    out = np.full(K + 1, np.nan)
    if K < 2:
        return out
    j = np.arange(2, K + 1, dtype=float)
    e = np.where(np.isnan(eps_base[2:]), np.inf, eps_base[2:])
    lm = _log_expm1((j - 1) * e)  # log expm1((j - 1) eps(j))
    if kind is SumKind.BINOMIAL:
        w = lm
    elif kind is SumKind.ZHU_WANG:
        # j = 2: expm1(eps(2)); j >= 3: 3 e^{(j-1) eps(j)} - 1 = 2 + 3 expm1(...)
        w = np.where(j == 2, lm, np.logaddexp(math.log(2), math.log(3) + lm))
    else:  # SumKind.WBK
        le = float(_log_expm1(np.nan if math.isnan(eps_inf) else eps_inf))
        w2 = min(math.log(4) + lm[0], e[0] + min(math.log(2), 2 * le))
        w = np.where(j == 2, w2, (j - 1) * e + np.minimum(math.log(2), j * le))
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, K + 1, dtype=float)))))
    k = np.arange(2, K + 1)[:, None]
    jj = np.arange(2, K + 1)[None, :]
    inside = jj <= k
    kk, jc = np.broadcast_arrays(k, jj)
    log_binom = log_fact[kk] - log_fact[jc] - log_fact[np.where(inside, kk - jc, 0)]
    terms = log_binom + jj * math.log(q) + w[None, :]
    if kind is not SumKind.WBK:
        terms = terms + np.where(inside, kk - jc, 0) * math.log1p(-q)
    terms = np.where(inside, terms, -np.inf)
    with np.errstate(all="ignore"):
        top = terms.max(axis=1)
        finite_top = np.where(np.isfinite(top), top, 0.0)
        log_s = finite_top + np.log(np.exp(terms - finite_top[:, None]).sum(axis=1))
        log_s = np.where(np.isposinf(top), np.inf, np.where(np.isneginf(top), -np.inf, log_s))
        out[2:] = np.logaddexp(0.0, log_s) / (np.arange(2, K + 1) - 1)
    out[2:] = np.where(np.isnan(out[2:]), np.inf, out[2:])
    return out


def _at_orders(a: np.ndarray, table: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """The integer-order table extended to the orders ``a`` (module docstring), then capped by ``cap``."""
    K = len(table) - 1
    out = np.full(a.shape, np.inf)
    with np.errstate(all="ignore"):
        low = np.isfinite(a) & (a <= 2)
        out[low] = table[2]
        mid = np.isfinite(a) & (a > 2) & (a <= K)
        if mid.any():
            am = a[mid]
            f = np.floor(am).astype(int)
            c = np.minimum(f + 1, K)
            frac = am - f
            cgf = (1 - frac) * (f - 1) * table[f] + frac * (c - 1) * table[c]
            out[mid] = np.where(frac == 0, table[f], cgf / (am - 1))
        out = np.where(np.isnan(out), np.inf, out)
        out = np.where(np.isfinite(out), out * (1 + OUTWARD), out)
    return np.minimum(out, cap)


# --------------------------------------------------------------------------------------------------
# the provider
# --------------------------------------------------------------------------------------------------
def _rate_of(spec, p: dict) -> np.ndarray | float:
    return float(spec.value) if spec.value is not None else p[spec.rate.name]


def subsampled_curve(mechanism: Mechanism, group: int, *,
                     curve_of: Callable[[Mechanism], MechanismCurve]) -> MechanismCurve | None:
    """The accountant's float curve of a subsampled mechanism, chosen by ``mechanism.subsampling``.

    Returns ``None`` (the accountant then uses the generic route) unless ``mechanism.subsampling`` is set
    and the mechanism's variable, support, pairs and parameter symbols are exactly those
    :func:`rdpsym.subsample` builds from it. ``curve_of(base)`` is the base mechanism's float curve (the
    dispatcher :func:`rdpsym.accounting.mechanism_curve` hands itself in). The curve is described in the
    module docstring; its provenance is ``"subsampled"`` and its ``detail`` says exact or bound and which
    theorem. Groups: Mironov 2017, Prop. 2 around it (:func:`rdpsym.accounting.curve_types.float_curve`).
    """
    spec = mechanism.subsampling
    if not is_as_subsampled(mechanism):
        return None
    base = spec.base
    ratios = gaussian_noise_ratio(base) if spec.scheme == "poisson" else None
    if ratios is not None:
        return float_curve(mechanism, group, "subsampled", _gaussian_detail(), _gaussian_fn(spec, ratios, base))
    base_curve = curve_of(base)
    base_names = [p.name for p in base.parameters]
    names = [p.name for p in mechanism.parameters]
    if spec.scheme == "poisson" and is_laplace_shift(base):
        kind = SumKind.BINOMIAL
        detail = ("exact at integer orders: the binomial expansion of E_P[(M/P)^k] over the base's moments "
                  "e^{(j-1) eps_base(j)} (the base is a Laplace shift: Zhu & Wang 2019, ICML, the exact "
                  "formula; the reverse direction is not larger); bound elsewhere: ")
    elif spec.scheme == "poisson":
        kind, detail = SumKind.ZHU_WANG, f"bound: {_ZW6} at integer orders (every neighbour, both directions); "
    else:
        kind, detail = SumKind.WBK, f"bound: {_WBK9} at integer orders (replace-one); "
    detail += f"{_CAPS}; base curve: {base_curve.provenance} ({base_curve.detail})"
    return float_curve(mechanism, group, "subsampled", detail, _generic_fn(spec, kind, base_curve, base_names, names))


def _base_values(base_curve, a: np.ndarray, one: dict, base_names) -> np.ndarray:
    """The base's curve at orders ``a`` for one event; +inf at NaN orders (never handed to the base)."""
    out = np.full(a.shape, np.inf)
    ok = ~np.isnan(a)
    if ok.any():
        out[ok] = base_curve.values(a[ok], {n: np.array([one[n]]) for n in base_names})[:, 0]
    return out


def _valid_rate(q: float) -> bool:
    return not math.isnan(q) and 0 <= q <= 1


def _generic_fn(spec, kind: SumKind, base_curve, base_names, names):
    memo: dict = {}

    def table_for(one: dict, q: float, need: int) -> np.ndarray:
        key = (tuple(sorted(one.items())), q)
        have = memo.get(key)
        if have is not None and len(have) - 1 >= need:
            return have
        K = min(K_MAX, max(need, 2 * (len(have) - 1) if have is not None else 64))
        eps_int = np.full(K + 1, np.nan)
        eps_int[2:] = _base_values(base_curve, np.arange(2, K + 1, dtype=float), one, base_names)
        eps_inf = float(_base_values(base_curve, np.array([np.inf]), one, base_names)[0])
        table = integer_order_sums(eps_int, q, kind, eps_inf)
        if len(memo) > MEMO_SIZE // K_MAX:
            memo.clear()
        memo[key] = table
        return table

    def fn(a, params):
        shape, flat_a, rows = event_rows(a, params, names)
        out = np.empty(flat_a.shape)
        for sel, one in rows:
            q = _rate_of(spec, one)
            aa = flat_a[sel]
            if not _valid_rate(q):
                out[sel] = np.inf
                continue
            if q == 0:
                out[sel] = np.where(np.isnan(aa), np.inf, 0.0)
                continue
            base_at = _base_values(base_curve, aa, one, base_names)
            if q == 1:
                out[sel] = base_at
                continue
            eps_inf = float(_base_values(base_curve, np.array([np.inf]), one, base_names)[0])
            top = math.log1p(q * math.expm1(eps_inf)) if math.isfinite(eps_inf) else math.inf
            cap = np.minimum(np.where(np.isnan(base_at), np.inf, base_at), top)
            finite = aa[np.isfinite(aa)]
            need = int(min(K_MAX, max(2, math.ceil(float(finite.max())) if finite.size else 2)))
            res = _at_orders(aa, table_for(one, q, need), cap)
            res[np.isposinf(aa)] = top
            res[np.isnan(aa)] = np.inf  # fail closed: a NaN order makes no claim
            out[sel] = res
        return out.reshape(shape)

    return fn


def _gaussian_detail() -> str:
    return ("exact: the base is a Gaussian shift (normal densities, affine log-likelihood ratio), so the "
            "Poisson-subsampled pair is the sampled Gaussian at sigma_eff = sigma / sensitivity read from the "
            "densities: rdpsym.accounting.subsampled.subsampled_gaussian_rdp (exact binomial expansion at integer "
            "orders, quadrature of A_alpha - 1 elsewhere; MTZ 2019, Sect. 3: the reverse direction is never "
            f"larger at alpha >= 1); above alpha = {ALPHA_MAX:g} the bound D_alpha(P_1||Q) of the sampled "
            "component (quasi-convexity, van Erven and Harremoes 2014, Thm. 13)")


def _sigma_eff(ratios, base, one: dict, cache: dict) -> float:
    """The smallest sigma_eff over the base's pairs at one event's values (exact substitution, 30 digits)."""
    key = tuple(sorted(one.items()))
    if key not in cache:
        subs = {p.symbol: sp.Rational(Fraction(one[p.name])) for p in base.parameters if p.name in one}
        values = []
        for r in ratios:
            if r in subs:  # sigma_eff is a parameter itself: its float value as given
                values.append(float(subs[r]))
                continue
            v = sp.N(r.subs(subs), 30)
            values.append(float(v) if v.is_real and v.is_finite else math.nan)
        s = min(values) if values and not any(math.isnan(v) for v in values) else math.nan
        if len(cache) > MEMO_SIZE:
            cache.clear()
        cache[key] = s
    return cache[key]


def _gaussian_fn(spec, ratios, base):
    base_names = [p.name for p in base.parameters]
    names = base_names + ([spec.rate.name] if spec.value is None else [])
    memo: dict = {}
    sigmas: dict = {}

    def fn(a, params):
        shape, flat_a, rows = event_rows(a, params, names)
        out = np.empty(flat_a.shape)
        for sel, one in rows:
            q = _rate_of(spec, one)
            s = _sigma_eff(ratios, base, {n: one[n] for n in base_names}, sigmas)
            aa = flat_a[sel]
            if not _valid_rate(q) or not (math.isfinite(s) and s > 0):
                out[sel] = np.inf  # fail closed
                continue
            res = np.empty(aa.shape)
            todo = []
            for i, av in enumerate(aa.tolist()):
                v = memo.get((av, q, s))
                if v is None:
                    todo.append(i)
                else:
                    res[i] = v
            if todo:
                ka = aa[todo]
                high = np.isfinite(ka) & (ka > ALPHA_MAX) & (q > 0)
                vals = np.empty(len(todo))
                vals[high] = sampled_component()[1](ka[high], s)
                if (~high).any():
                    vals[~high] = np.asarray(subsampled_gaussian_rdp(ka[~high], q, s), dtype=float)
                if len(memo) > MEMO_SIZE:
                    memo.clear()
                for i, v in zip(todo, vals.tolist()):
                    memo[(float(aa[i]), q, s)] = res[i] = v
            out[sel] = res
        return out.reshape(shape)

    return fn
