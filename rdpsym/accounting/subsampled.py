r"""RDP of the Poisson-subsampled Gaussian mechanism: stable float64 code and an mpmath reference.

With sampling rate q, noise multiplier sigma and sensitivity 1, the adjacent outputs are (Mironov,
Talwar, Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism", arXiv:1908.10530,
Sect. 3)

    P = (1 - q) N(0, sigma^2) + q N(1, sigma^2),      Q = N(0, sigma^2),

and the RDP curve is eps(alpha) = D_alpha(P||Q) = log(A_alpha) / (alpha - 1) with

    A_alpha = E_Q[(P/Q)^alpha] = E_Q[exp(alpha L(X))],  L(x) = log(1 - q + q exp((2x - 1)/(2 sigma^2))).

The reverse direction D_alpha(Q||P) is never larger for alpha >= 1 (MTZ 2019, Sect. 3, stated there for
the SGM; ``tests/test_subsampled_gaussian.py`` re-checks it at 30 digits at test points), so only
D_alpha(P||Q) is computed there. For 0 < alpha < 1 the reverse direction can be larger (alpha = 0.2,
q = 0.5, sigma = 0.5); it is D_alpha(Q||P) = alpha/(1-alpha) D_{1-alpha}(P||Q) (skew symmetry, van
Erven and Harremoës 2014, Prop. 2), and the maximum of the two is returned. Everything below is computed as A_alpha - 1, never as A_alpha, because near
alpha = 1 or for small q the RDP is far below the float64 resolution of A_alpha:

* **Integer orders k >= 2**: with P = (1 - q) Q + q P_1, (P/Q)^k = (1 - q + q P_1/Q)^k expands
  binomially, and E_Q[(P_1/Q)^j] = exp((j - 1) D_j(P_1||Q)) by the definition of D_j. The component
  divergence D_j(P_1||Q) is not typed in: :func:`sampled_component` has the engine derive it from the
  registered densities at q = 1 and generates its float code. The j = 0 and j = 1 terms add up to
  the total mass 1 - (terms j >= 2), so
  A_k - 1 = sum_{j>=2} binom(k, j) (1-q)^(k-j) q^j expm1((j - 1) D_j(P_1||Q)), a sum of positive
  terms, taken as a log-sum-exp. (The engine also derives D_k of the whole mixture symbolically,
  :func:`rdpsym.derive.integer_order.renyi_divergence_at_integer_order`; the tests check this sum
  against it.)
* **Other orders:** since E_Q[e^L] = ∫P = 1, A_alpha - 1 = E_Q[phi_alpha(L)] with
  phi_alpha(L) = e^{alpha L} - 1 - alpha (e^L - 1) = beta g(L) + e^L h(beta L), beta = alpha - 1,
  g(L) = e^L (L - 1) + 1 >= 0 and h(y) = e^y - 1 - y >= 0. For alpha > 1 both terms are non-negative
  (no cancellation anywhere) and are combined in log space; lim phi/beta = g gives the KL at alpha = 1.
  The expectation over N(0, sigma^2) is a composite 20-point Gauss-Legendre rule on panels at most
  sigma wide that shrink where alpha L(x) bends (near the crossover
  z0 = sigma^2 log((1-q)/q) + 1/2, width ~ sigma^2 / sqrt(alpha)), on [-20 sigma, max(alpha, 1) + 20 sigma];
  the integrand at both ends must be below 1e-26 of the total or the result is +inf (fail closed).
  Fractional orders > 1 at the same (q, sigma) share one mesh (that of the largest order within a
  factor 2) and L(x), so a whole curve costs about as much as one order.
  Summing the two-sided series of MTZ 2019 Sect. 3.3 in absolute values instead (as some accountants
  do) overstates the RDP by up to a few percent near alpha = 1.5; the signed series is exact, but in
  float64 it cancels to ~ 1 when A_alpha - 1 is tiny, so it is not used here.
* **Special cases:** q = 0 gives 0; q = 1 gives the component D_alpha(P_1||Q) (:func:`sampled_component`,
  the Gaussian mechanism's divergence); alpha = oo gives +oo
  for q > 0 (log P/Q = L(x) is unbounded above); alpha = 1 gives the KL divergence E_Q[g(L)].

Fail closed: every finite result is rounded outward by the relative margin :data:`OUTWARD` (1e-11,
above the measured float error, see the tests), NaN orders give +inf, and invalid q, sigma or alpha
raise ``ValueError`` naming the argument and the rule.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from .._cache import memoize
from ..derive import engine
from ..derive.cache import cacheable
from ..derive.result import Status
from ..mechanisms.subsampled_gaussian import subsampled_gaussian

__all__ = ["subsampled_gaussian_rdp", "subsampled_gaussian_rdp_mp", "sampled_component", "OUTWARD"]

#: Relative outward rounding of every finite float result (fail closed: never below the true RDP).
OUTWARD = 1e-11

_GL_X, _GL_W = np.polynomial.legendre.leggauss(20)
#: Orders above this (integers) use quadrature instead of the O(k) binomial sum.
_BINOMIAL_MAX = 1 << 20
_TAIL_SIGMAS = 20.0


# --------------------------------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------------------------------
def _validate(alpha, q, sigma):
    a = np.asarray(alpha, dtype=float)
    qq = np.asarray(q, dtype=float)
    s = np.asarray(sigma, dtype=float)
    bad_q = ~((qq >= 0) & (qq <= 1))
    if bad_q.any():
        raise ValueError(f"q must be in [0, 1] (a sampling rate); got {qq[bad_q].ravel()[0]!r}")
    bad_s = ~(np.isfinite(s) & (s > 0))
    if bad_s.any():
        raise ValueError(f"sigma must be a finite number > 0; got {s[bad_s].ravel()[0]!r}")
    bad_a = a <= 0
    if bad_a.any():
        raise ValueError(f"alpha must be > 0; got {a[bad_a].ravel()[0]!r}")
    return np.broadcast_arrays(a, qq, s)


# --------------------------------------------------------------------------------------------------
# stable pieces
# --------------------------------------------------------------------------------------------------
_G_COEF = np.array([(n - 1) / math.factorial(n) for n in range(2, 20)])  # g(L) = sum (n-1)/n! L^n
_H_COEF = np.array([1 / math.factorial(n) for n in range(2, 20)])  # h(y) = sum y^n / n!


def _log_series(coef, z, mask):
    """log(sum_{n>=2} coef[n-2] z^n) = 2 log|z| + log(sum coef[n-2] z^(n-2)) where ``mask`` (|z| < 1/2),
    by Horner's rule on those entries only (no underflow of z^2); 0 elsewhere."""
    out = np.zeros_like(z)
    zs = z[mask]
    acc = np.zeros_like(zs)
    for c in coef[::-1]:
        acc = acc * zs + c
    with np.errstate(divide="ignore"):
        out[mask] = 2 * np.log(np.abs(zs)) + np.log(acc)
    return out


def _log_stable(z, coef, above, below):
    """log f(z) for f(z) = sum_{n>=2} coef[n-2] z^n, by the series where |z| < 1/2 (:func:`_log_series`),
    ``above(z)`` where z >= 1/2 and ``below(z)`` where z <= -1/2; each closed form sees only its own
    entries (the others hold a harmless 1 or -1)."""
    small = np.abs(z) < 0.5
    with np.errstate(all="ignore"):
        out = _log_series(coef, z, small)
        pos = z >= 0.5
        out = np.where(pos, above(np.where(pos, z, 1.0)), out)
        neg = z <= -0.5
        out = np.where(neg, below(np.where(neg, z, -1.0)), out)
    return out


def _log_g(L):
    """log(e^L (L - 1) + 1), accurate to a few ulp for every real L (g > 0 except at L = 0)."""
    return _log_stable(L, _G_COEF, lambda u: u + np.log(u + np.expm1(-u)), lambda u: np.log1p(-np.exp(u) * (1 - u)))


def _log_h(y):
    """log(e^y - 1 - y) (h > 0 except at y = 0)."""
    return _log_stable(y, _H_COEF, lambda u: u + np.log1p(-(1 + u) * np.exp(-u)), lambda u: np.log(np.expm1(u) - u))


def _L(x, q, sigma):
    """L(x) = log(1 - q + q exp((2x - 1) / (2 sigma^2))), 0 < q < 1, with relative accuracy near 0."""
    s = (2 * x - 1) / (2 * sigma * sigma)
    with np.errstate(all="ignore"):
        u = q * np.expm1(np.minimum(s, 700.0))  # s is capped only to avoid overflow; such s use `far`
        near = np.log1p(u)
        far = np.logaddexp(math.log1p(-q), math.log(q) + s)
    return np.where((s < 700.0) & (np.abs(u) < 0.5), near, far)


def _log_abs_phi(L, alpha):
    """log |phi_alpha(L)| with phi = e^{alpha L} - 1 - alpha (e^L - 1); alpha == 1 gives log g(L)."""
    beta = alpha - 1.0
    if beta == 0:
        return _log_g(L)
    if beta > 0:
        # phi = beta g(L) + e^L h(beta L): two non-negative terms
        return np.logaddexp(math.log(beta) + _log_g(L), L + _log_h(beta * L))
    # 0 < alpha < 1: -phi = sum_{n>=2} (alpha - alpha^n) L^n / n! >= 0
    with np.errstate(all="ignore"):
        small = np.abs(L) < 0.5
        coef = np.array([-alpha * math.expm1((n - 1) * math.log(alpha)) / math.factorial(n) for n in range(2, 20)])
        out = _log_series(coef, L, small)
        big = ~small
        Lb = np.where(big, L, 1.0)
        # two forms of -phi; each is used where its subtraction loses least
        #   direct: e^L (alpha - e^{beta L} + (1 - alpha) e^{-L})        (L > 0)  or  alpha expm1(L) - expm1(alpha L)
        #   beta:   e^L (|beta| (L - 1 + e^{-L}) - h(beta L))
        pos = Lb > 0
        direct = np.where(pos, Lb + np.log(alpha - np.exp(beta * Lb) + (1 - alpha) * np.exp(-Lb)),
                          np.log(alpha * np.expm1(Lb) - np.expm1(alpha * Lb)))
        a1 = -beta * (Lb - 1 + np.exp(-Lb))
        a2 = np.exp(_log_h(beta * Lb))
        via_beta = Lb + np.log(a1 - a2)
        ratio_direct = np.where(pos, np.exp(beta * Lb) / alpha, np.expm1(alpha * Lb) / (alpha * np.expm1(Lb)))
        use_beta = np.abs(1 - a2 / a1) > np.abs(1 - ratio_direct)
        out = np.where(big, np.where(use_beta, via_beta, direct), out)
    return out


# --------------------------------------------------------------------------------------------------
# the sampled component, derived
# --------------------------------------------------------------------------------------------------
def _derivation_kept(value) -> bool:
    return cacheable(value[0])


# memoize, not lru_cache: a derivation or float code made while a time limit expired is not kept
@memoize(accept=_derivation_kept)
def sampled_component():
    """D_alpha(P_1||Q) = D_alpha(N(1, sigma^2)||N(0, sigma^2)), the sampled component, derived by the engine.

    P_1 is the component of the mixture P = (1 - q) Q + q P_1 that carries the sampled record: the
    built-in subsampled Gaussian's base pair (``subsample(gaussian(), q)`` at sensitivity 1) at its
    largest shift t = 1. Its divergence from Q enters this module three times, never typed in:

    * the binomial expansion at integer k: E_Q[(P_1/Q)^j] = exp((j - 1) D_j(P_1||Q)) (Def. 3 of
      Mironov 2017 at the integer order j);
    * q = 1, where the mechanism is P_1 against Q;
    * the bound D_alpha(P||Q) <= D_alpha(P_1||Q) (joint quasi-convexity in the mixture weight, van
      Erven and Harremoes 2014, Thm. 13), used by accounting curves above their largest order.

    Returns ``(result, f)``: the engine's :class:`~rdpsym.derive.result.DivergenceResult` (derived
    from the densities of :func:`rdpsym.mechanisms.subsampled_gaussian`'s base, cached on disk like
    every derivation) and its generated float code ``f(alpha, sigma)``. Raises ``RuntimeError`` if the
    engine does not return a closed form (this module then has nothing to stand on).
    """
    # the built-in factory itself, never whatever is registered under its name
    base = subsampled_gaussian().subsampling.base
    pair = base.pairs[0]
    sigma = base.parameter_by_name["sigma"]
    top = pair.over.sup  # the largest shift, t = 1 (the sensitivity)
    result = engine.renyi_divergence(pair.Q.subs(pair.shift, top), pair.P.subs(pair.shift, top), base.variable, base.support,
                                     params=[sigma], label="D_alpha(P_1||Q), the sampled component (q = 1)")
    if result.status is not Status.CLOSED_FORM:
        raise RuntimeError(f"the engine did not derive the sampled component in closed form ({result.status}: "
                           f"{result.reason}); the subsampled Gaussian's float code needs it")
    code = result.to_numpy(parameters=[sigma])
    return result, (lambda a, s: code(a, sigma=s))


def _component(alpha, sigma):
    """D_alpha(P_1||Q) as floats (see :func:`sampled_component`)."""
    return sampled_component()[1](alpha, sigma)


# --------------------------------------------------------------------------------------------------
# integer orders: the binomial expansion
# --------------------------------------------------------------------------------------------------
def _log_expm1(c):
    return np.where(c > 1.0, c + np.log1p(-np.exp(-np.maximum(c, 1.0))), np.log(np.expm1(np.minimum(c, 1.0))))


def _integer_order(k: int, q: float, sigma: float) -> float:
    """D_k for an integer k >= 2 and 0 < q < 1: log1p(sum_{j>=2} ...)/(k - 1), all terms positive."""
    j = np.arange(2, k + 1, dtype=float)
    log_binom = math.lgamma(k + 1) - np.array([math.lgamma(v + 1) for v in j]) - np.array([math.lgamma(k - v + 1) for v in j])
    # log E_Q[(P_1/Q)^j] = (j - 1) D_j(P_1||Q); the j-th term carries expm1 of it (see the module docstring)
    log_moment = (j - 1) * np.asarray(_component(j, sigma), dtype=float)
    terms = log_binom + (k - j) * math.log1p(-q) + j * math.log(q) + _log_expm1(log_moment)
    top = terms.max()
    log_am1 = top + math.log(np.exp(terms - top).sum())
    return float(np.logaddexp(0.0, log_am1)) / (k - 1)


# --------------------------------------------------------------------------------------------------
# other orders: quadrature of E_Q[phi]
# --------------------------------------------------------------------------------------------------
def _mesh(alpha: float, q: float, sigma: float):
    """Quadrature nodes x and weights (including the N(0, sigma^2) density) for E_Q[.]."""
    a_eff = max(alpha, 1.0)
    lo, hi = -_TAIL_SIGMAS * sigma, a_eff + _TAIL_SIGMAS * sigma
    z0 = sigma * sigma * math.log((1 - q) / q) + 0.5
    root = math.sqrt(a_eff)

    # t(x) = x/sigma + sqrt(alpha) gd((x - z0)/(2 sigma^2)): panel width 1 in t is <= sigma, and
    # <= 2 sigma^2 cosh(.)/sqrt(alpha) where alpha L'' = alpha sigmoid'(s)/sigma^4 is large.
    def t_of(x):
        return x / sigma + root * 2 * np.arctan(np.tanh((x - z0) / (4 * sigma * sigma)))

    t_lo, t_hi = float(t_of(np.array(lo))), float(t_of(np.array(hi)))
    n = int(math.ceil(t_hi - t_lo))
    t_edges = t_lo + (t_hi - t_lo) * np.arange(n + 1) / n
    # panel edges in x: invert the increasing t(x) by bisection (only the n + 1 edges)
    a, b = np.full_like(t_edges, lo), np.full_like(t_edges, hi)
    for _ in range(52):
        m = (a + b) / 2
        below = t_of(m) < t_edges
        a, b = np.where(below, m, a), np.where(below, b, m)
    edges = (a + b) / 2
    edges[0], edges[-1] = lo, hi
    # composite Gauss-Legendre in x on those panels
    mid, half = (edges[:-1] + edges[1:]) / 2, (edges[1:] - edges[:-1]) / 2
    x = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
    w = (half[:, None] * _GL_W[None, :]).ravel()
    log_w = np.log(w) - x * x / (2 * sigma * sigma) - math.log(sigma * math.sqrt(2 * math.pi))
    return x, log_w, lo, hi


def _quadrature(alpha: float, q: float, sigma: float) -> float:
    x, log_w, lo, hi = _mesh(alpha, q, sigma)
    logs = _log_abs_phi(_L(x, q, sigma), alpha) + log_w
    finite = np.isfinite(logs)
    if np.isnan(logs).any() or not finite.any():
        return math.inf
    top = logs[finite].max()
    log_e = top + math.log(np.exp(logs[finite] - top).sum())
    # the integrand at the ends of the range must be negligible (else: fail closed)
    ends = _log_abs_phi(_L(np.array([lo, hi]), q, sigma), alpha) - np.array([lo, hi]) ** 2 / (2 * sigma * sigma)
    if np.nanmax(ends) > log_e - 60 or not math.isfinite(log_e):
        return math.inf
    beta = alpha - 1.0
    if beta == 0:
        return math.exp(log_e)
    if beta > 0:
        return float(np.logaddexp(0.0, log_e)) / beta
    if log_e >= 0:
        return math.inf
    return -math.log1p(-math.exp(log_e)) / -beta


def _quadrature_batch(alphas: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """D_alpha for many orders alpha > 1 at one (q, sigma): one mesh (that of the largest order, valid
    for all smaller ones: it covers their range and is at least as fine), L(x) computed once."""
    x, log_w, lo, hi = _mesh(float(alphas.max()), q, sigma)
    step = max(1, 4_000_000 // len(x))  # bounded memory: orders x nodes <= 4e6 per pass
    if len(alphas) > step:
        return np.concatenate([_batch_on_mesh(alphas[i:i + step], q, sigma, x, log_w, lo, hi)
                               for i in range(0, len(alphas), step)])
    return _batch_on_mesh(alphas, q, sigma, x, log_w, lo, hi)


def _batch_on_mesh(alphas, q, sigma, x, log_w, lo, hi) -> np.ndarray:
    beta = (alphas - 1.0)[:, None]
    L = _L(x, q, sigma)[None, :]
    logs = np.logaddexp(np.log(beta) + _log_g(L), L + _log_h(beta * L)) + log_w[None, :]
    with np.errstate(all="ignore"):
        top = np.max(np.where(np.isfinite(logs), logs, -np.inf), axis=1)
        log_e = top + np.log(np.sum(np.exp(logs - top[:, None]), axis=1))
        ends_x = np.array([lo, hi])
        Le = _L(ends_x, q, sigma)[None, :]
        ends = np.logaddexp(np.log(beta) + _log_g(Le), Le + _log_h(beta * Le)) - ends_x**2 / (2 * sigma * sigma)
        value = np.logaddexp(0.0, log_e) / beta[:, 0]
    bad = np.isnan(logs).any(axis=1) | ~np.isfinite(log_e) | (np.nanmax(ends, axis=1) > log_e - 60)
    return np.where(bad, np.inf, value)


def _one(alpha: float, q: float, sigma: float) -> float:
    if math.isnan(alpha):
        return math.inf
    if q == 0:
        return 0.0
    if math.isinf(alpha):
        return math.inf
    if q == 1:
        value = float(_component(alpha, sigma))
    elif alpha == int(alpha) and 2 <= alpha <= _BINOMIAL_MAX:
        value = _integer_order(int(alpha), q, sigma)
    elif alpha < 1:
        # below 1 the reverse direction can dominate: by skew symmetry (van Erven and Harremoës 2014,
        # IEEE T-IT 60(7), Prop. 2) D_alpha(Q||P) = alpha/(1-alpha) D_{1-alpha}(P||Q)
        value = max(_quadrature(alpha, q, sigma), alpha / (1 - alpha) * _quadrature(1 - alpha, q, sigma))
    else:
        value = _quadrature(alpha, q, sigma)
    return _finish(value)


def _batched(alpha: float, q: float, sigma: float) -> bool:
    """Orders that go through :func:`_quadrature_batch` (fractional alpha > 1, 0 < q < 1)."""
    return (math.isfinite(alpha) and alpha > 1 and 0 < q < 1
            and not (alpha == int(alpha) and alpha <= _BINOMIAL_MAX))


def _finish(value: float) -> float:
    """Fail closed and round outward (see OUTWARD)."""
    if math.isnan(value) or value < 0:
        # impossible for a divergence: fail closed
        return math.inf
    if value == 0:
        # q > 0: the RDP is positive; below the float range it rounds up to the least positive float
        return math.ulp(0.0)
    return value * (1 + OUTWARD)


def subsampled_gaussian_rdp(alpha, q, sigma):
    """RDP eps(alpha) of the Poisson-subsampled Gaussian mechanism (sensitivity 1), float64.

    ``alpha``, ``q``, ``sigma`` broadcast against each other (numpy rules); the result is a numpy array
    of that shape (a numpy scalar for scalar input), +inf where the RDP is infinite or not computed.
    Exact binomial expansion at integer alpha >= 2, quadrature of A_alpha - 1 elsewhere (see the module
    docstring); every finite value is rounded up by the relative margin ``OUTWARD``.

    Raises ``ValueError`` for q outside [0, 1], sigma not a finite number > 0, or alpha <= 0; a NaN
    alpha gives +inf (fail closed).

    References: Mironov, Talwar, Zhang 2019 (arXiv:1908.10530), Sect. 3 (A_alpha, its binomial form
    at integer alpha and the two-sided series at fractional alpha); Mironov 2017 (arXiv:1702.07476 v3),
    Def. 3 (Rényi divergence) and Prop. 7 (the Gaussian, q = 1).
    """
    a, qq, s = _validate(alpha, q, sigma)
    out = np.empty(a.shape, dtype=float)
    flat = out.reshape(-1)
    keys = list(zip(a.ravel().tolist(), qq.ravel().tolist(), s.ravel().tolist()))
    cache: dict = {}
    # fractional orders > 1 sharing (q, sigma) are integrated together, in groups of orders within a
    # factor 2 of each other (the shared mesh is the largest order's)
    groups: dict = {}
    for key in set(keys):
        if _batched(*key):
            groups.setdefault((key[1], key[2], math.floor(math.log2(key[0]))), []).append(key[0])
        else:
            cache[key] = _one(*key)
    for (qv, sv, _), orders in groups.items():
        values = _quadrature_batch(np.array(orders), qv, sv)
        for av, v in zip(orders, values.tolist()):
            cache[(av, qv, sv)] = _finish(v)
    for i, key in enumerate(keys):
        flat[i] = cache[key]
    return out[()]


# --------------------------------------------------------------------------------------------------
# mpmath reference
# --------------------------------------------------------------------------------------------------
def _mp_parts(a, q, s, reverse: bool):
    """Integrand of A_alpha - 1 over N(0, s^2) as an mpmath function of x (precision of the caller).

    Each integrand is F(L) = sum_{n>=2} c_n L^n / n! (it vanishes to second order at L = 0):
    forward c_n = alpha^n - alpha (at alpha = 1: n - 1, the KL's e^L (L - 1) + 1), reverse
    c_n = (1 - alpha)^n + alpha - 1 (at alpha = 1: 1, i.e. e^L - 1 - L). For |L| < 1/8 the series is
    summed (no cancellation, however small L is); otherwise the closed expression is evaluated.
    """
    beta = a - 1
    norm = 1 / (s * mpmath.sqrt(2 * mpmath.pi))
    eps = mpmath.mpf(2) ** (-mpmath.mp.prec - 10)

    if reverse:
        coef = (lambda n: 1) if beta == 0 else (lambda n: (-beta) ** n + beta)
        closed = (lambda ell: mpmath.expm1(ell) - ell) if beta == 0 else (
            lambda ell: mpmath.expm1(-beta * ell) + beta * mpmath.expm1(ell))
    else:
        coef = (lambda n: n - 1) if beta == 0 else (lambda n: a**n - a)
        closed = (lambda ell: mpmath.exp(ell) * (ell - 1) + 1) if beta == 0 else (
            lambda ell: mpmath.expm1(a * ell) - a * mpmath.expm1(ell))

    def F(ell):
        if abs(ell) >= mpmath.mpf(1) / 8:
            return closed(ell)
        total, power, n = mpmath.mpf(0), ell * ell / 2, 2
        while True:
            term = coef(n) * power
            total += term
            if abs(term) <= eps * abs(total) and n > 4 or power == 0:
                return total
            n += 1
            power = power * ell / n

    def f(x):
        ell = mpmath.log1p(q * mpmath.expm1((2 * x - 1) / (2 * s * s)))
        return F(ell) * norm * mpmath.exp(-x * x / (2 * s * s))

    return f


def subsampled_gaussian_rdp_mp(alpha, q, sigma, dps: int = 50, *, reverse: bool = False, forward_only: bool = False):
    """Reference value (mpmath) of the subsampled Gaussian RDP and an error estimate: ``(value, error)``.

    A_alpha - 1 = E_Q[e^{alpha L} - 1 - alpha (e^L - 1)] (see the module docstring) is integrated with
    mpmath's tanh-sinh rule at ``dps + 25`` digits (the integrand cancels to ~ (alpha - 1) L^2 near
    alpha = 1) between the breakpoints -oo, 0, z0, 1, alpha, +oo and the points 15 sigma around 0 and
    max(alpha, 1); a second evaluation splits every finite interval at its midpoint (other nodes), and
    ``error`` is the larger of the two values' difference and tanh-sinh's own estimate, propagated to the divergence. alpha = 1 is the KL
    divergence E_Q[e^L (L - 1) + 1]; alpha = oo is +inf for q > 0. Below alpha = 1 the value is the
    larger of both directions, each integrated directly. With ``reverse``, D_alpha(Q||P) only; with
    ``forward_only``, D_alpha(P||Q) only (for checking which direction dominates).

    ``alpha``, ``q``, ``sigma``: numbers (ints, floats, strings, mpf); validated like
    :func:`subsampled_gaussian_rdp`. Returns mpmath ``mpf`` values at ``dps`` digits.
    """
    if not isinstance(dps, int) or dps < 15:
        raise ValueError(f"dps must be an integer >= 15; got {dps!r}")
    q_in = q
    with mpmath.workdps(dps + 25):
        a, q, s = mpmath.mpf(alpha), mpmath.mpf(q), mpmath.mpf(sigma)
        if not (0 <= q <= 1):
            raise ValueError(f"q must be in [0, 1] (a sampling rate); got {q}")
        if not (mpmath.isfinite(s) and s > 0):
            raise ValueError(f"sigma must be a finite number > 0; got {s}")
        if mpmath.isnan(a) or not a > 0:
            raise ValueError(f"alpha must be > 0; got {a}")
        if q == 0:
            return mpmath.mpf(0), mpmath.mpf(0)
        if mpmath.isinf(a):
            return mpmath.inf, mpmath.mpf(0)
        if q == 1 and not reverse:
            # the sampled component alone: the engine's closed form at dps digits
            return sampled_component()[0].evaluate(a, dps=dps, sigma=s), mpmath.mpf(0)
        if q == 1:
            raise ValueError("reverse: q = 1 is the plain Gaussian, symmetric in the two directions")
        f = _mp_parts(a, q, s, reverse)
        z0 = s * s * mpmath.log((1 - q) / q) + mpmath.mpf(1) / 2
        top = max(a, mpmath.mpf(1))
        pts = {mpmath.mpf(0), z0, mpmath.mpf(1), a, -15 * s, 15 * s, top - 15 * s, top + 15 * s}
        inner = sorted(p for p in pts if -40 * s <= p <= top + 40 * s)
        points = [mpmath.ninf, *inner, mpmath.inf]
        if a < 1 and not reverse and not forward_only:
            # the RDP is the larger direction below alpha = 1 (integrated directly, not by skew symmetry)
            fwd = subsampled_gaussian_rdp_mp(alpha, q_in, sigma, dps, forward_only=True)
            rev = subsampled_gaussian_rdp_mp(alpha, q_in, sigma, dps, reverse=True)
            return max(fwd, rev, key=lambda vr: vr[0])
        e1, err1 = mpmath.quad(f, points, error=True, method="tanh-sinh")
        # second evaluation on a different split (midpoints added): other nodes, same rule
        split = [points[0], *sorted(inner + [(u + v) / 2 for u, v in zip(inner, inner[1:])]), points[-1]]
        e2 = mpmath.quad(f, split, method="tanh-sinh")
        err_e = max(abs(e1 - e2), abs(err1))
        beta = a - 1
        if beta == 0:
            value, err = e1, err_e
        else:
            value = mpmath.log1p(e1) / beta
            err = err_e / (abs(1 + e1) * abs(beta)) if 1 + e1 > 0 else mpmath.inf
        # no estimate below the working precision
        err = max(err, abs(value) * mpmath.mpf(10) ** -(dps + 20))
    with mpmath.workdps(dps):
        return +value, +err
