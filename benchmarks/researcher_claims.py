"""Claims about mechanisms written as a researcher writes them (not the built-ins), with known verdicts.

Run:  python benchmarks/researcher_claims.py [--busy N] [--only TEXT]

The families of the claim audits: a Bernoulli pair whose parameter is declared wider than the
distributions allow (decided where they are), two Poisson laws, two exponential rates, two geometric laws and two
centred Gaussians of different variances, two Laplace scales, a tilted three-outcome pmf and two Gaussians
of different means and variances, each a mechanism of both directions (Mironov 2017,
arXiv:1702.07476 v3, Def. 4: the larger of D(P||Q) and D(Q||P)). Each claim's truth is known by hand or
from the literature (the reason is in the row), independently of rdpsym; a true claim must come back
``proved`` or ``confirmed``, a false one ``refuted``, ``inconclusive`` is a miss and anything else WRONG.
The rows need the prover's routes by monotonicity (the Poisson KLs), by a claim's own finiteness
conditions (a Piecewise per direction), by a Max's branches and by the KL end of a Max curve. The
printing and the busy processes are those of benchmarks/textbook_claims.py.
"""

from __future__ import annotations

import sys

import sympy as sp

from textbook_claims import FALSE, TRUE, main

from rdpsym import AdjacentPair, Mechanism, parameter, renyi_divergence
from rdpsym.symbols import alpha as A

K = sp.Symbol("k", integer=True, nonnegative=True)
X = sp.Symbol("x", real=True)


def _poisson():
    mu, d = parameter("mu", typical=(0.5, 5.0)), parameter("d", typical=(0.5, 2.0))
    m, s = mu.symbol, d.symbol
    P = sp.exp(-m) * m**K / sp.factorial(K)
    Q = sp.exp(-(m + s)) * (m + s) ** K / sp.factorial(K)
    return Mechanism("poisson_shift", K, sp.Range(0, sp.oo), (AdjacentPair(P, Q),), (mu, d))


def _rates():
    a, b = (parameter(n, typical=(0.5, 5.0), log_scale=True) for n in ("a", "b"))
    ra, rb = a.symbol, b.symbol
    pair = AdjacentPair(ra * sp.exp(-ra * X), rb * sp.exp(-rb * X))
    return Mechanism("exponential_rates", X, sp.Interval(0, sp.oo), (pair,), (a, b)), (ra, rb), (a, b)


def _variances():
    s1, s2 = (parameter(n, typical=(0.5, 2.0), log_scale=True) for n in ("s1", "s2"))
    u, w = s1.symbol, s2.symbol
    normal = lambda s: sp.exp(-X**2 / (2 * s**2)) / sp.sqrt(2 * sp.pi * s**2)  # noqa: E731
    return Mechanism("gaussian_variances", X, sp.S.Reals, (AdjacentPair(normal(u), normal(w)),), (s1, s2)), (u, w)


def _shift_and_variances():
    s1, s2 = (parameter(n, typical=(0.5, 2.0), log_scale=True) for n in ("s1", "s2"))
    shift = parameter("D", typical=(0.5, 2.0))
    u, w, d = s1.symbol, s2.symbol, shift.symbol
    P = sp.exp(-X**2 / (2 * u**2)) / sp.sqrt(2 * sp.pi * u**2)
    Q = sp.exp(-(X - d) ** 2 / (2 * w**2)) / sp.sqrt(2 * sp.pi * w**2)
    return Mechanism("gaussian_shift_and_variances", X, sp.S.Reals, (AdjacentPair(P, Q),), (s1, s2, shift))


def _geometric():
    p, q = (parameter(n, sp.Interval.open(0, 1), typical=(0.1, 0.9)) for n in ("p", "q"))
    u, w = p.symbol, q.symbol
    pair = AdjacentPair((1 - u) * u**K, (1 - w) * w**K)
    return Mechanism("geometric_laws", K, sp.Range(0, sp.oo), (pair,), (p, q)), (u, w)


def _bernoulli_declared_wide():
    p = parameter("p", sp.Interval.open(0, 2), typical=(0.1, 0.9))  # P is a distribution for p <= 1 only
    u = p.symbol
    bernoulli = lambda r: r**K * (1 - r) ** (1 - K)  # noqa: E731
    return Mechanism("bernoulli_halved", K, sp.FiniteSet(0, 1), (AdjacentPair(bernoulli(u), bernoulli(u / 2)),),
                     (p,)), u


def _laplace_scales():
    b1, b2 = (parameter(n, typical=(0.5, 2.0), log_scale=True) for n in ("b1", "b2"))
    laplace = lambda b: sp.exp(-sp.Abs(X) / b) / (2 * b)  # noqa: E731
    return Mechanism("laplace_scales", X, sp.S.Reals, (AdjacentPair(laplace(b1.symbol), laplace(b2.symbol)),),
                     (b1, b2)), (b1.symbol, b2.symbol)


def _tilted_three():
    t = parameter("t", sp.Interval.open(0, 1), typical=(0.1, 0.9))
    u = t.symbol
    P = sp.Piecewise(((1 + u) / 3, sp.Eq(K, 0)), (sp.Rational(1, 3), sp.Eq(K, 1)), ((1 - u) / 3, True))
    Q = sp.Piecewise(((1 - u) / 3, sp.Eq(K, 0)), (sp.Rational(1, 3), sp.Eq(K, 1)), ((1 + u) / 3, True))
    return Mechanism("tilted_three", K, sp.FiniteSet(0, 1, 2), (AdjacentPair(P, Q),), (t,)), u


def _bernoulli_squared():
    p = parameter("p", sp.Interval.open(0, 1), typical=(0.1, 0.9))
    u = p.symbol
    bernoulli = lambda r: r**K * (1 - r) ** (1 - K)  # noqa: E731
    return Mechanism("bernoulli_squared", K, sp.FiniteSet(0, 1), (AdjacentPair(bernoulli(u), bernoulli(u**2)),),
                     (p,)), u


def _binomial_against_half():
    p = parameter("p", sp.Interval.open(0, 1), typical=(0.1, 0.9))
    u = p.symbol
    binomial = lambda r: sp.binomial(3, K) * r**K * (1 - r) ** (3 - K)  # noqa: E731
    return Mechanism("binomial_against_half", K, sp.FiniteSet(0, 1, 2, 3),
                     (AdjacentPair(binomial(u), binomial(sp.Rational(1, 2))),), (p,)), u


def _poisson_doubling():
    lam = parameter("lam", typical=(0.5, 5.0), log_scale=True)
    u = lam.symbol
    poisson = lambda m: sp.exp(-m) * m**K / sp.factorial(K)  # noqa: E731
    return Mechanism("poisson_doubling", K, sp.Range(0, sp.oo), (AdjacentPair(poisson(u), poisson(2 * u)),),
                     (lam,)), u


def _rayleigh_scales():
    s = parameter("s", typical=(0.5, 5.0), log_scale=True)
    u, r = s.symbol, sp.Symbol("r", positive=True)
    rayleigh = lambda w: r / w**2 * sp.exp(-r**2 / (2 * w**2))  # noqa: E731
    return Mechanism("rayleigh_scales", r, sp.Interval(0, sp.oo), (AdjacentPair(rayleigh(u), rayleigh(2 * u)),),
                     (s,)), u


def _shift_and_doubled_variance():
    s = parameter("s", typical=(0.5, 5.0), log_scale=True)
    u = s.symbol
    normal = lambda m, v: sp.exp(-(X - m) ** 2 / (2 * v)) / sp.sqrt(2 * sp.pi * v)  # noqa: E731
    return Mechanism("gaussian_shift_doubled_variance", X, sp.S.Reals,
                     (AdjacentPair(normal(0, u**2), normal(1, 2 * u**2)),), (s,)), u


def _gumbel_shift():
    b = parameter("b", typical=(0.5, 5.0), log_scale=True)
    u = b.symbol
    gumbel = lambda m: sp.exp(-(X - m) / u - sp.exp(-(X - m) / u)) / u  # noqa: E731
    return Mechanism("gumbel_shift", X, sp.S.Reals, (AdjacentPair(gumbel(0), gumbel(1)),), (b,)), u


def _discrete_laplace_eps():
    eps = parameter("eps", typical=(0.1, 5.0), log_scale=True)
    e, j = eps.symbol, sp.Symbol("j", integer=True)
    z = (1 + sp.exp(-e)) / (1 - sp.exp(-e))
    return Mechanism("discrete_laplace_eps", j, sp.Range(-sp.oo, sp.oo),
                     (AdjacentPair(sp.exp(-e * sp.Abs(j)) / z, sp.exp(-e * sp.Abs(j - 1)) / z),), (eps,)), e


def _binomial_halved():
    p = parameter("p", sp.Interval.open(0, 1), typical=(0.1, 0.9))
    u = p.symbol
    binomial = lambda r: sp.binomial(3, K) * r**K * (1 - r) ** (3 - K)  # noqa: E731
    return Mechanism("binomial_halved", K, sp.Range(0, 4), (AdjacentPair(binomial(u), binomial(u / 2)),), (p,)), u


def rows():
    poisson = _poisson()
    halved, b = _bernoulli_declared_wide()
    rates, (ra, rb), rate_params = _rates()
    variances, (s1, s2) = _variances()
    geometric, (p, q) = _geometric()
    doubling, lam = _poisson_doubling()
    rayleigh, _ = _rayleigh_scales()
    gumbel, gb = _gumbel_shift()
    dlap, de = _discrete_laplace_eps()
    bin_halved, hp = _binomial_halved()
    doubled, sv = _shift_and_doubled_variance()

    def rates_direction(u, w, condition):  # Gil, Alajaji and Linder 2013, Table 2 (exponential), per direction
        return sp.Piecewise((sp.log(u / w) + sp.log(u / (A * u + (1 - A) * w)) / (A - 1), condition), (sp.oo, True))

    def variances_direction(u, w):  # Gil, Alajaji and Linder 2013, Table 2 (normal, equal means)
        return sp.Piecewise((sp.log(w / u) + sp.log(w**2 / (A * w**2 + (1 - A) * u**2)) / (2 * (A - 1)),
                             A * w**2 + (1 - A) * u**2 > 0), (sp.oo, True))

    def geometric_direction(u, w):  # the geometric series of ((1 - u) u^k)^alpha ((1 - w) w^k)^(1 - alpha)
        return sp.Piecewise((sp.log((1 - u) ** A * (1 - w) ** (1 - A) / (1 - u**A * w ** (1 - A))) / (A - 1),
                             u**A * w ** (1 - A) < 1), (sp.oo, True))

    kl_12 = sp.log(s2 / s1) + s1**2 / (2 * s2**2) - sp.Rational(1, 2)
    kl_21 = sp.log(s1 / s2) + s2**2 / (2 * s1**2) - sp.Rational(1, 2)
    scales, (l1, l2) = _laplace_scales()
    three, t = _tilted_three()
    shift_var = _shift_and_variances()
    squared, sq = _bernoulli_squared()
    binomial, bp = _binomial_against_half()
    v1, v2, dd = (p.symbol for p in shift_var.parameters)
    one_direction = renyi_divergence(ra * sp.exp(-ra * X), rb * sp.exp(-rb * X), X, sp.Interval(0, sp.oo),
                                     params=list(rate_params))
    return [
        (poisson, "(mu + d)*log((mu + d)/mu) - d", "==", 1, TRUE,
         "KL(Poi(mu + d) || Poi(mu)) is the larger direction: (2 + u) log(1 + u) >= 2u, u = d/mu"),
        (poisson, "mu*log(mu/(mu + d)) + d", "==", 1, FALSE, "KL(Poi(mu) || Poi(mu + d)), the smaller direction"),
        (poisson, "(mu + d)*log((mu + d)/mu) - d", ">=", None, TRUE,
         "D_alpha >= KL for alpha > 1 (Mironov 2017, Prop. 9)"),
        (rates, sp.Max(rates_direction(ra, rb, A * ra + (1 - A) * rb > 0),
                       rates_direction(rb, ra, A * rb + (1 - A) * ra > 0)), "==", None, TRUE,
         "Gil, Alajaji and Linder 2013, Table 2, both directions with their finiteness conditions"),
        (rates, sp.Max(rates_direction(ra, rb, A * rb - ra > 0),
                       rates_direction(rb, ra, A * rb + (1 - A) * ra > 0)), "==", None, FALSE,
         "a wrong finiteness condition: +oo where the divergence is finite (alpha b <= a < alpha a)"),
        (one_direction, sp.Piecewise((sp.log(ra / rb), ra >= rb), (sp.oo, True)), "==", sp.oo, TRUE,
         "sup_x log(a e^(-a x)/(b e^(-b x))) is log(a/b) when a >= b, +oo otherwise", {"parameters": rate_params}),
        (variances, sp.Max(variances_direction(s1, s2), variances_direction(s2, s1)), "==", None, TRUE,
         "Gil, Alajaji and Linder 2013, Table 2, both directions with their finiteness conditions"),
        (variances, sp.Max(kl_12, kl_21), ">=", None, TRUE, "D_alpha >= KL in each direction (Prop. 9)"),
        (variances, sp.Max(kl_12, kl_21) + sp.Rational(1, 10), ">=", None, FALSE, "at s1 = s2 the divergence is 0"),
        (geometric, sp.Max(geometric_direction(p, q), geometric_direction(q, p)), "==", None, TRUE,
         "the geometric series, both directions, finite where p^alpha q^(1 - alpha) < 1"),
        (halved, sp.Max(sp.log(2), sp.log((2 - b) / (2 - 2 * b))), "==", sp.oo, TRUE,
         "max of the likelihood ratios over both directions, where P and Q are distributions (p < 1)"),
        (halved, sp.log(2), "<=", sp.oo, FALSE, "D_oo grows without bound as p -> 1"),
        (scales, (l1 - l2) ** 2 / (l1 * l2), "<=", 1, TRUE,
         "each direction's gap is r - 1 - log r >= 0, r the ratio of the scales (smallest at r = 1)"),
        (scales, (l1 - l2) ** 2 / (l1 * l2) - sp.Rational(1, 100), "<=", 1, FALSE, "below 0 where b1 = b2 (P = Q)"),
        (three, sp.log(((1 + t) ** A * (1 - t) ** (1 - A) + 1 + (1 - t) ** A * (1 + t) ** (1 - A)) / 3) / (A - 1), "==",
         None, TRUE, "the sum over the three outcomes of P^alpha Q^(1 - alpha)"),
        (shift_var, sp.Max(*(sp.Piecewise((sp.log(w / u) + sp.log(w**2 / (2 * w**2 - u**2)) / 2 + dd**2 / (2 * w**2 - u**2),
                                           2 * w**2 - u**2 > 0), (sp.oo, True)) for u, w in ((v1, v2), (v2, v1)))),
         "==", 2, TRUE, "Gil, Alajaji and Linder 2013, Table 2 (normal) at alpha = 2, both directions"),
        (shift_var, sp.Max(*(sp.Piecewise((sp.log(w / u) + sp.log(w**2 / (2 * w**2 - u**2)) / 2 + dd**2 / (2 * w**2 - u**2),
                                           2 * w**2 - u**2 > 0), (0, True)) for u, w in ((v1, v2), (v2, v1)))),
         "==", 2, FALSE, "0 where the divergence is +oo (2 s2^2 <= s1^2)"),
        (squared, sp.log(sp.Max(1 / sq, 1 + sq)), "==", sp.oo, TRUE,
         "likelihood ratios 1/p, 1/(1 + p) one way and p, 1 + p the other: the largest are 1/p and 1 + p"),
        (squared, sp.log(sp.Max(1 / sq, 1 + sq / 2)), "==", sp.oo, FALSE, "1 + p/2 is below the ratio 1 + p"),
        (binomial, 3 * sp.log(sp.Max(1 / (2 * bp), 1 / (2 * (1 - bp)))), "==", sp.oo, TRUE,
         "the largest ratio is at k = 0 or k = 3 of Bin(3, 1/2) against Bin(3, p): (2 min(p, 1 - p))^(-3)"),
        (binomial, -sp.Rational(3, 2) * sp.log(4 * bp * (1 - bp)), "==", 1, TRUE,
         "KL(Bin(3, 1/2) || Bin(3, p)) is the larger direction: their gap has one minimum, 0 at p = 1/2"),
        (binomial, 3 * (bp * sp.log(2 * bp) + (1 - bp) * sp.log(2 * (1 - bp))), "==", 1, FALSE,
         "KL(Bin(3, p) || Bin(3, 1/2)), the smaller direction (0.392 against 0.432 at p = 1/4)"),
        (doubling, lam * (2**A - A - 1) / (A - 1), "==", None, TRUE,
         "Poi(2 lam) || Poi(lam) is the larger direction for alpha > 1: 2^a - 2^(1-a) - 2a + 1 >= 0, 0 at a = 1, convex"),
        (doubling, lam * (2 ** (1 - A) + A - 2) / (A - 1), "==", None, FALSE,
         "Poi(lam) || Poi(2 lam), the smaller direction (lam (3/2 - 1) against lam (4 - 3) at alpha = 2)"),
        (doubling, sp.Piecewise((lam * (2**A - A - 1) / (A - 1), lam < 10**9), (0, True)), "<=", None, FALSE,
         "0 from lam = 10^9 on, far beyond the typical range: its own case split is looked at from both sides"),
        (rayleigh, sp.Piecewise((-sp.log(4 ** (A - 1) * (4 - 3 * A)) / (A - 1), A < sp.Rational(4, 3)), (sp.oo, True)),
         "==", None, TRUE, "Rayleigh(2s) || Rayleigh(s) = log(4^alpha/(4 (4 - 3 alpha)))/(alpha - 1) for alpha < 4/3, "
         "above the other direction log(4^alpha/(3 alpha + 1))/(alpha - 1) there"),
        (rayleigh, sp.Piecewise((-sp.log(4 ** (A - 1) * sp.Abs(4 - 3 * A)) / (A - 1), A < sp.Rational(3, 2)), (sp.oo, True)),
         "==", None, FALSE, "finite for alpha in [4/3, 3/2), where the divergence is +oo"),
        (doubled, sp.Piecewise((A / (2 * sv**2 * (2 - A)) - sp.log(2 ** (A - 1) * (2 - A)) / (2 * (A - 1)), A < 2),
                               (sp.oo, True)), "==", None, TRUE,
         "N(1, 2 s^2) || N(0, s^2), finite for alpha < 2 (Gil, Alajaji and Linder 2013, Table 2), the larger direction"),
        (doubled, sp.Piecewise((A / (2 * sv**2 * (2 - A)), A < 2), (sp.oo, True)), ">=", None, TRUE,
         "its log term -log(2^(alpha - 1) (2 - alpha))/(2 (alpha - 1)) is >= 0 on (1, 2)"),
        (doubled, sp.Piecewise((A / (2 * sv**2 * (2 - A)) - sp.log(2 ** (A - 1) * (2 - A)) / (2 * (A - 1)) + sp.Rational(1, 100), A < 2),
                               (sp.oo, True)), ">=", None, FALSE, "1/100 above the divergence"),
        (gumbel, sp.exp(-1 / gb) - 1 + 1 / gb, "==", 1, FALSE,
         "KL(Gumbel(1, b) || Gumbel(0, b)), the smaller direction (1/e against e - 2 at b = 1); its largest relative "
         "violations lie at b < 0.01, where the mass cannot be checked numerically"),
        (dlap, sp.Min(A, 10**4) * de**2 / 2, "<=", None, FALSE,
         "D_alpha -> D_oo = eps, above 5000 eps^2 for alpha > 10^4 once eps < 2e-4 (9.3e-5 against 5e-5 at "
         "eps = 1e-4, alpha = 1e5)"),
        (bin_halved, sp.Max(*(3 * sp.log(r**A * s ** (1 - A) + (1 - r) ** A * (1 - s) ** (1 - A)) / (A - 1)
                          for r, s in ((hp, hp / 2), (hp / 2, hp)))), ">=", None, TRUE,
         "the Max of both directions of Bin(3, p) against Bin(3, p/2), written out (tensorisation of Bernoulli)"),
        (_shift_and_variances(), sp.oo, "==", sp.oo, TRUE,
         "the likelihood ratio of N(0, s1^2) and N(D, s2^2) is unbounded for every s1, s2, D (s1 = s2: the shift)"),
    ]


if __name__ == "__main__":
    sys.exit(main(rows=rows()))
