"""Tests of the independent numeric path, rdpsym.numeric, against published closed forms.

References (all natural logs, first argument of D raised to the power alpha):
* Gaussian, Laplace, randomized response: Mironov 2017 (arXiv:1702.07476 v3), Props. 5-7.
* Exponential families (exponential, Pareto in log x, Lévy in 1/(x - mu), Poisson, geometric):
  D = [F(a th1 + (1-a) th2) - a F(th1) - (1-a) F(th2)] / (a - 1), finite while
  a th1 + (1-a) th2 is a natural parameter (Liese and Vajda 1987; van Erven and Harremoës 2014).
* Cauchy location family: KL = log(1 + mu^2/(4 g^2)) (Chyzak and Nielsen 2019, arXiv:1905.10965);
  I_alpha = P_{alpha-1}(1 + mu^2/(2 g^2)) with P_nu the Legendre function (checked here by exact
  rational integration for alpha = 2, 3, 4: 3/2, 23/8, 99/16).
* Discrete Laplace / uniform: geometric series and elementary integrals derived in the comments.
All comparisons run inside one mpmath.workdps block.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from rdpsym.numeric import NumericValue, numeric_divergence

x = sp.Symbol("x", real=True)
mu, sigma, b, lam, c, xm, p = sp.symbols("mu sigma b lambda c x_m p", positive=True)
mp = mpmath
DPS = 50


def gauss(m):
    return sp.exp(-(x - m) ** 2 / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)


def laplace(m):
    return sp.exp(-sp.Abs(x - m) / b) / (2 * b)


def cauchy(m, g=1):
    return g / (sp.pi * (g**2 + (x - m) ** 2))


def expo(rate):
    return rate * sp.exp(-rate * x)


def pareto(a):
    return a * xm**a / x ** (a + 1)


def levy(scale):
    return sp.sqrt(scale / (2 * sp.pi)) * sp.exp(-scale / (2 * x)) / x ** sp.Rational(3, 2)


def check(r: NumericValue, ref, digits):
    """Relative agreement of r.value with ref to `digits` digits, and an honest error estimate."""
    assert isinstance(r, NumericValue)
    assert r.converged, r.detail
    assert not mp.isnan(r.value)
    if ref == mp.inf:
        assert r.value == mp.inf, r.detail
        return
    rel = abs(r.value - ref) / max(abs(ref), mp.mpf(10) ** -DPS)
    assert rel < mp.mpf(10) ** (-digits), (mp.nstr(r.value, 40), mp.nstr(ref, 40), r.detail)
    # the reported error must cover the true error (up to the final rounding to dps digits)
    assert abs(r.value - ref) <= r.error + abs(ref) * mp.mpf(10) ** (-DPS + 2) + mp.mpf(10) ** (-DPS)


def num(v):
    """An exact sympy/int number as an mpf at the current precision."""
    v = sp.Rational(v)
    return mp.mpf(int(v.p)) / int(v.q)


def nd(P, Q, support, alpha, values, dps=DPS):
    return numeric_divergence(P, Q, x, support, alpha, values, dps)


# ---------------------------------------------------------------------------------------------
# Gaussian (Prop. 7)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1000, 1 + sp.Rational(1, 10**6), 1])
def test_gaussian(alpha):
    r = nd(gauss(0), gauss(mu), sp.S.Reals, alpha, {"mu": 1, sigma: sp.Rational(3, 2)})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        check(r, a / (2 * mp.mpf(9) / 4), 40)


def test_gaussian_dinf_is_infinite():
    r = nd(gauss(0), gauss(1), sp.S.Reals, sp.oo, {sigma: 1})
    assert r.value == mp.inf


# ---------------------------------------------------------------------------------------------
# Laplace (Prop. 6): kinks at 0 and 1
# ---------------------------------------------------------------------------------------------


def laplace_ref(a, lb):
    if a == 1:
        return 1 / lb + mp.exp(-1 / lb) - 1
    if a == mp.mpf(1) / 2:  # removable singularity: limit of the formula
        return -2 * mp.log((1 + 1 / (2 * lb)) * mp.exp(-1 / (2 * lb)))
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) / lb) + (a - 1) / (2 * a - 1) * mp.exp(-a / lb)) / (a - 1)


@pytest.mark.parametrize(
    "alpha,scale",
    [(2, 1), (sp.Rational(1, 2), 1), (sp.Rational(3, 10), 2), (1000, 1), (3, sp.Rational(1, 10)),
     (1 + sp.Rational(1, 10**6), 1), (1, 1), (1, sp.Rational(1, 4))],
)
def test_laplace(alpha, scale):
    r = nd(laplace(0), laplace(1), sp.S.Reals, alpha, {b: scale})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        lb = num(scale)
        check(r, laplace_ref(a, lb), 30)


def test_laplace_half_limit():
    """alpha = 1/2: the limit of Prop. 6, -2 log((1 + 1/(2b)) e^(-1/(2b))) (Bhattacharyya)."""
    r = nd(laplace(0), laplace(1), sp.S.Reals, sp.Rational(1, 2), {b: 1})
    with mp.workdps(DPS + 10):
        check(r, 1 - 2 * mp.log(mp.mpf(3) / 2), 30)


def test_laplace_dinf():
    r = nd(laplace(0), laplace(1), sp.S.Reals, sp.oo, {b: 2})
    with mp.workdps(DPS + 10):
        check(r, mp.mpf(1) / 2, 30)


# ---------------------------------------------------------------------------------------------
# Heavy tails: Cauchy, Pareto, Lévy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha,ref", [(1, (5, 4)), (2, (3, 2)), (3, (23, 8)), (4, (99, 16))])
def test_cauchy_integer_orders(alpha, ref):
    r = nd(cauchy(0), cauchy(1), sp.S.Reals, alpha, {})
    with mp.workdps(DPS + 10):
        I = mp.mpf(ref[0]) / ref[1]
        check(r, mp.log(I) if alpha == 1 else mp.log(I) / (alpha - 1), 30)


@pytest.mark.parametrize("alpha", [sp.Rational(1, 2), sp.Rational(5, 2)])
def test_cauchy_fractional_orders_legendre(alpha):
    """I_alpha = P_{alpha-1}(1 + mu^2/(2 gamma^2)) (Legendre function), here mu = 3, gamma = 2."""
    r = nd(cauchy(0, 2), cauchy(3, 2), sp.S.Reals, alpha, {})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        I = mp.legenp(a - 1, 0, 1 + mp.mpf(9) / 8, type=3)
        check(r, mp.log(I) / (a - 1), 30)


def test_cauchy_dinf():
    """sup log((1 + (x-1)^2)/(1 + x^2)) is attained at x = (1 - sqrt 5)/2: 2 log(golden ratio)."""
    r = nd(cauchy(0), cauchy(1), sp.S.Reals, sp.oo, {})
    with mp.workdps(DPS + 10):
        check(r, 2 * mp.log((1 + mp.sqrt(5)) / 2), 30)


def test_laplace_steep_peak_on_kink():
    """alpha = 1e4, b = 1/100: the integrand falls by e^(2e6) per unit on both sides of the kink at 0."""
    r = nd(laplace(0), laplace(1), sp.S.Reals, 10**4, {b: sp.Rational(1, 100)})
    with mp.workdps(DPS + 10):
        check(r, laplace_ref(mp.mpf(10**4), mp.mpf(1) / 100), 30)


def test_cauchy_kl_scaled():
    r = nd(cauchy(0, 2), cauchy(3, 2), sp.S.Reals, 1, {})
    with mp.workdps(DPS + 10):
        check(r, mp.log(1 + mp.mpf(9) / 16), 30)


def exp_family_rate_ref(a, l1, l2, k=1):
    """Gamma(k, rate l) pair: k/(a-1) [a log l1 + (1-a) log l2 - log(a l1 + (1-a) l2)]."""
    m = a * l1 + (1 - a) * l2
    if m <= 0:
        return mp.inf
    if a == 1:
        return k * (mp.log(l1 / l2) + l2 / l1 - 1)
    return k * (a * mp.log(l1) + (1 - a) * mp.log(l2) - mp.log(m)) / (a - 1)


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 3), 1, 1 + sp.Rational(1, 10**6), 20])
def test_pareto_equal_scale(alpha):
    """log(x/x_m) ~ Exponential(a): the exponential-family formula with rates a1, a2."""
    sup = sp.Interval(xm, sp.oo)
    r = nd(pareto(sp.Rational(5, 2)), pareto(sp.Rational(3, 2)), sup, alpha, {xm: 3})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        check(r, exp_family_rate_ref(a, mp.mpf(5) / 2, mp.mpf(3) / 2), 30)


def test_pareto_divergent_order_is_infinite():
    # a*a1 + (1-a)*a2 = 2*1 - 3 < 0: the integrand grows like x^0 ... divergent
    sup = sp.Interval(xm, sp.oo)
    r = nd(pareto(1), pareto(3), sup, 2, {xm: 1})
    assert r.value == mp.inf and r.converged, r.detail


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1, 7])
def test_levy_equal_location(alpha):
    """1/x ~ Gamma(1/2, rate c/2): the exponential-family formula with k = 1/2, rates c/2."""
    c1, c2 = sp.Rational(1, 2), sp.Rational(3, 4)
    r = nd(levy(c1), levy(c2), sp.Interval.open(0, sp.oo), alpha, {})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        check(r, exp_family_rate_ref(a, mp.mpf(1) / 4, mp.mpf(3) / 8, k=mp.mpf(1) / 2), 30)


# ---------------------------------------------------------------------------------------------
# Exponential and uniform: supports, Q = 0, divergent integrals
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1, 1000])
def test_exponential(alpha):
    r = nd(expo(lam), expo(3), sp.Interval(0, sp.oo), alpha, {"lambda": 2})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        check(r, exp_family_rate_ref(a, mp.mpf(2), mp.mpf(3)), 30)


def test_exponential_infinite_when_rate_combination_nonpositive():
    # 4*2 + (1-4)*3 = -1 <= 0: the integrand grows exponentially
    r = nd(expo(2), expo(3), sp.Interval(0, sp.oo), 4, {})
    assert r.value == mp.inf and r.converged, r.detail


def test_exponential_dinf():
    # log P/Q = log(2/3) + x: unbounded
    r = nd(expo(2), expo(3), sp.Interval(0, sp.oo), sp.oo, {})
    assert r.value == mp.inf
    # log P/Q = log(3/2) - x: sup at x = 0
    r = nd(expo(3), expo(2), sp.Interval(0, sp.oo), sp.oo, {})
    with mp.workdps(DPS + 10):
        check(r, mp.log(mp.mpf(3) / 2), 30)


U1 = sp.Piecewise((1, x <= 1), (0, True))  # U[0, 1] written on [0, 2]
U2 = sp.Rational(1, 2)  # U[0, 2]


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1, sp.oo, 1000])
def test_uniform_nested_inner_first(alpha):
    """P = U[0,1] inside Q = U[0,2]: D_alpha = log 2 for every alpha."""
    r = nd(U1, U2, sp.Interval(0, 2), alpha, {})
    with mp.workdps(DPS + 10):
        check(r, mp.log(2), 30)


@pytest.mark.parametrize("alpha", [2, 1, sp.oo, 1 + sp.Rational(1, 10**6)])
def test_uniform_nested_outer_first_is_infinite(alpha):
    r = nd(U2, U1, sp.Interval(0, 2), alpha, {})
    assert r.value == mp.inf and r.converged, r.detail


def test_uniform_nested_outer_first_below_one():
    """alpha < 1: ∫_0^1 (1/2)^alpha = 2^-alpha, so D = alpha log 2 / (1 - alpha)."""
    r = nd(U2, U1, sp.Interval(0, 2), sp.Rational(1, 4), {})
    with mp.workdps(DPS + 10):
        check(r, mp.log(2) / 3, 30)


def test_uniform_heaviside_shifted():
    """U[0,1] vs U[1/2, 3/2] written with Heaviside on the reals: disjoint mass -> inf for alpha >= 1,
    and for alpha < 1: ∫_{1/2}^{1} 1 = 1/2, D = log(1/2)/(alpha - 1)."""
    P = sp.Heaviside(x) - sp.Heaviside(x - 1)
    Q = sp.Heaviside(x - sp.Rational(1, 2)) - sp.Heaviside(x - sp.Rational(3, 2))
    assert nd(P, Q, sp.S.Reals, 2, {}).value == mp.inf
    r = nd(P, Q, sp.S.Reals, sp.Rational(1, 2), {})
    with mp.workdps(DPS + 10):
        check(r, 2 * mp.log(2), 30)


# ---------------------------------------------------------------------------------------------
# Discrete: randomized response, discrete Laplace, geometric, Poisson
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1, sp.oo, 1 + sp.Rational(1, 10**6)])
def test_randomized_response(alpha):
    P = sp.Piecewise((p, sp.Eq(x, 1)), (1 - p, True))
    Q = sp.Piecewise((1 - p, sp.Eq(x, 1)), (p, True))
    r = nd(P, Q, sp.FiniteSet(0, 1), alpha, {"p": sp.Rational(3, 4)})
    with mp.workdps(DPS + 10):
        pp = mp.mpf(3) / 4
        if alpha == 1:
            ref = (2 * pp - 1) * mp.log(pp / (1 - pp))
        elif alpha == sp.oo:
            ref = mp.log(pp / (1 - pp))
        else:
            a = num(alpha)
            ref = mp.log(pp**a * (1 - pp) ** (1 - a) + (1 - pp) ** a * pp ** (1 - a)) / (a - 1)
        check(r, ref, 40)


def dlaplace(m, q):
    return (1 - q) / (1 + q) * q ** sp.Abs(x - m)


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1000, 1 + sp.Rational(1, 10**6)])
def test_discrete_laplace(alpha):
    """I = (q^(1-a) + q^a)/(1 + q): geometric series over k <= 0 and k >= 1."""
    q = sp.exp(-sp.Rational(1, 3))
    r = nd(dlaplace(0, q), dlaplace(1, q), sp.S.Integers, alpha, {})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        qq = mp.exp(-mp.mpf(1) / 3)
        check(r, mp.log((qq ** (1 - a) + qq**a) / (1 + qq)) / (a - 1), 30)


def test_discrete_laplace_kl_and_dinf():
    q = sp.exp(-sp.Rational(1, 3))
    with mp.workdps(DPS + 10):
        qq = mp.exp(-mp.mpf(1) / 3)
        # KL = d/da (a-1) D at a=1 = (log q)(q - 1)/(1+q) ... = (1-q)/(1+q) * (1/3)
        check(nd(dlaplace(0, q), dlaplace(1, q), sp.S.Integers, 1, {}), (1 - qq) / (1 + qq) / 3, 30)
        check(nd(dlaplace(0, q), dlaplace(1, q), sp.S.Integers, sp.oo, {}), mp.mpf(1) / 3, 30)


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1, 5])
def test_geometric(alpha):
    """P(k) = (1-q) q^k on N0: I = (1-q1)^a (1-q2)^(1-a) / (1 - q1^a q2^(1-a)) when q1^a q2^(1-a) < 1."""
    q1, q2 = sp.Rational(1, 3), sp.Rational(1, 2)
    r = nd((1 - q1) * q1**x, (1 - q2) * q2**x, sp.S.Naturals0, alpha, {})
    with mp.workdps(DPS + 10):
        a, u, v = num(alpha), mp.mpf(1) / 3, mp.mpf(1) / 2
        if a == 1:
            ref = mp.log((1 - u) / (1 - v)) + u / (1 - u) * mp.log(u / v)
        else:
            ref = mp.log((1 - u) ** a * (1 - v) ** (1 - a) / (1 - u**a * v ** (1 - a))) / (a - 1)
        check(r, ref, 30)


def test_geometric_divergent_is_infinite():
    # q1^a q2^(1-a) = (1/2)^5 (1/3)^-4 = 81/32 > 1
    r = nd(sp.Rational(1, 2) ** (x + 1), sp.Rational(2, 3) * sp.Rational(1, 3) ** x, sp.S.Naturals0, 5, {})
    assert r.value == mp.inf, r.detail


@pytest.mark.parametrize("alpha", [2, sp.Rational(1, 2), 1, 1 + sp.Rational(1, 10**6)])
def test_poisson(alpha):
    """Exponential family with F(th) = e^th: D = (l1^a l2^(1-a) - a l1 - (1-a) l2)/(a - 1)."""
    P = lam**x * sp.exp(-lam) / sp.factorial(x)
    Q = 7**x * sp.exp(-7) / sp.factorial(x)
    r = nd(P, Q, sp.S.Naturals0, alpha, {lam: 3})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        if a == 1:
            ref = 3 * mp.log(mp.mpf(3) / 7) + 7 - 3
        else:
            ref = (3**a * mp.mpf(7) ** (1 - a) - 3 * a - 7 * (1 - a)) / (a - 1)
        check(r, ref, 30)


def test_range_and_union_supports():
    """Binomial(4, 1/2) vs Binomial(4, 1/4) on Range(0, 5) and as a Union of two Ranges."""
    P = sp.binomial(4, x) * sp.Rational(1, 2) ** 4
    Q = sp.binomial(4, x) * sp.Rational(1, 4) ** x * sp.Rational(3, 4) ** (4 - x)
    exact = sp.log(sum(sp.binomial(4, k) ** 1 * sp.Rational(1, 16) ** 2 / (sp.Rational(1, 4) ** k * sp.Rational(3, 4) ** (4 - k)) for k in range(5)))
    for sup in (sp.Range(0, 5), sp.Union(sp.Range(0, 2), sp.Range(2, 5)), sp.FiniteSet(0, 1, 2, 3, 4)):
        r = nd(P, Q, sup, 2, {})
        with mp.workdps(DPS + 10):
            check(r, mp.mpf(sp.N(exact, DPS + 20)), 45)


# ---------------------------------------------------------------------------------------------
# Error paths
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0, -1, float("nan"), sp.Rational(-1, 2)])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        nd(gauss(0), gauss(1), sp.S.Reals, alpha, {sigma: 1})


def test_missing_values_named():
    with pytest.raises(ValueError, match="sigma"):
        nd(gauss(0), gauss(mu), sp.S.Reals, 2, {"mu": 1})


@pytest.mark.parametrize("value, match", [(-1, "must be positive"), (0, "must be positive"),
                                          (sp.nan, "finite real"), (sp.oo, "finite real"), (float("nan"), "finite")])
def test_parameter_values_outside_the_assumptions_are_rejected(value, match):
    """Review finding: sigma = -1 or nan gave a value (0, not converged) instead of an error."""
    with pytest.raises(ValueError, match=match):
        nd(gauss(0), gauss(1), sp.S.Reals, 2, {sigma: value})


def test_support_must_be_a_set():
    with pytest.raises(ValueError, match="support"):
        nd(gauss(0), gauss(1), (-10, 10), 2, {sigma: 1})


def test_mixed_support_rejected():
    with pytest.raises(ValueError, match="support"):
        nd(gauss(0), gauss(1), sp.Union(sp.Interval(0, 1), sp.FiniteSet(5)), 2, {sigma: 1})


def test_values_by_symbol_and_name_agree():
    r1 = nd(gauss(0), gauss(mu), sp.S.Reals, 3, {mu: 2, sigma: 1}, dps=20)
    r2 = nd(gauss(0), gauss(mu), sp.S.Reals, 3, {"mu": 2, "sigma": 1}, dps=20)
    assert r1.value == r2.value and r1.converged


def test_dataclass_is_frozen_and_never_nan():
    r = nd(gauss(0), gauss(1), sp.S.Reals, 2, {sigma: 1}, dps=20)
    with pytest.raises(Exception):
        r.value = 0  # type: ignore[misc]
    bad = nd(-gauss(0), gauss(1), sp.S.Reals, 2, {sigma: 1}, dps=20)  # "density" negative
    assert not bad.converged and not mp.isnan(bad.value) and "negative" in bad.detail


def test_precision_is_not_leaked():
    before = mp.mp.dps
    nd(laplace(0), laplace(1), sp.S.Reals, 2, {b: 1}, dps=40)
    assert mp.mp.dps == before


# ---------------------------------------------------------------------------------------------
# Divergent integrals, unequal variances, singular endpoints, alpha types
# ---------------------------------------------------------------------------------------------


def test_cauchy_vs_gaussian():
    """Q Gaussian, P Cauchy: P^2/Q grows like exp(x^2/2)/x^4 and P log(P/Q) ~ 1/pi: both infinite."""
    assert nd(cauchy(0), gauss(0), sp.S.Reals, 2, {sigma: 1}).value == mp.inf
    r = nd(cauchy(0), gauss(0), sp.S.Reals, 1, {sigma: 1})
    assert r.value == mp.inf, r.detail
    # the other way round everything is finite
    r = nd(gauss(0), cauchy(0), sp.S.Reals, 2, {sigma: 1})
    assert r.converged and mp.isfinite(r.value)


def test_pareto_borderline_order_is_infinite():
    """a a1 + (1-a) a2 = 0 exactly: the integrand is c/x, the integral diverges logarithmically."""
    r = nd(pareto(1), pareto(2), sp.Interval(xm, sp.oo), 2, {xm: 1})
    assert r.value == mp.inf, r.detail


@pytest.mark.parametrize("alpha", [sp.Rational(6, 5), sp.Rational(1, 2), 2])
def test_gaussian_unequal_variances(alpha):
    """N(0, 4) vs N(0, 1): log(s2/s1) + log(s2^2 / s_a^2)/(2(a-1)), s_a^2 = a s2^2 + (1-a) s1^2 > 0
    (Gil, Alajaji and Linder 2013, Table 2); infinite when s_a^2 <= 0 (here for a >= 4/3)."""
    P = sp.exp(-x**2 / 8) / sp.sqrt(8 * sp.pi)
    Q = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)
    r = nd(P, Q, sp.S.Reals, alpha, {})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        va = a * 1 + (1 - a) * 4
        ref = mp.inf if va <= 0 else mp.log(mp.mpf(1) / 2) + mp.log(1 / va) / (2 * (a - 1))
        check(r, ref, 30)


def beta_pdf(a_, b_):
    return x ** (a_ - 1) * (1 - x) ** (b_ - 1) / sp.beta(a_, b_)


@pytest.mark.parametrize("alpha", [sp.Rational(1, 2), 3, 2, 1])
def test_beta_singular_endpoints(alpha):
    """Beta(2, 3/2) vs the arcsine law Beta(1/2, 1/2): exponential family with F = log B(a, b).
    At alpha = 2 and in the reverse order the integrand is too singular: inf."""
    a1, b1, a2, b2 = sp.Rational(2), sp.Rational(3, 2), sp.Rational(1, 2), sp.Rational(1, 2)
    r = nd(beta_pdf(a1, b1), beta_pdf(a2, b2), sp.Interval(0, 1), alpha, {})
    with mp.workdps(DPS + 10):
        a = num(alpha)
        A1, B1, A2, B2 = num(a1), num(b1), num(a2), num(b2)
        if a == 1:
            dg = mp.digamma
            ref = (mp.log(mp.beta(A2, B2) / mp.beta(A1, B1)) + (A1 - A2) * (dg(A1) - dg(A1 + B1))
                   + (B1 - B2) * (dg(B1) - dg(A1 + B1)))
        else:
            Aa, Ba = a * A1 + (1 - a) * A2, a * B1 + (1 - a) * B2
            ref = (mp.log(mp.beta(Aa, Ba)) - a * mp.log(mp.beta(A1, B1)) - (1 - a) * mp.log(mp.beta(A2, B2))) / (a - 1)
        check(r, ref, 30)
    rev = nd(beta_pdf(a2, b2), beta_pdf(a1, b1), sp.Interval(0, 1), 2, {})
    assert rev.value == mp.inf, rev.detail  # 2*(1/2) - 2 = -1 <= 0 at x -> 0


@pytest.mark.parametrize("alpha", [2.0, mp.mpf(2), sp.Float(2.0), 2])
def test_alpha_number_types(alpha):
    r = nd(gauss(0), gauss(1), sp.S.Reals, alpha, {sigma: 1}, dps=20)
    with mp.workdps(30):
        assert abs(r.value - 1) < mp.mpf(10) ** -18


def test_alpha_mpmath_inf():
    r = nd(laplace(0), laplace(1), sp.S.Reals, mp.inf, {b: 1}, dps=20)
    with mp.workdps(30):
        assert abs(r.value - 1) < mp.mpf(10) ** -18


def test_polynomial_discrete_tail_is_reported_not_converged():
    """Zeta-type pmfs (terms ~ k^-3): term-by-term summation cannot reach 50 digits; the result must
    say so (converged False, reason in detail) and never be NaN."""
    P = 1 / (sp.zeta(3) * x**3)
    Q = 1 / (sp.zeta(4) * x**4)
    r = nd(P, Q, sp.S.Naturals, sp.Rational(1, 2), {}, dps=20)
    assert not r.converged and "polynomial" in r.detail
    assert not mp.isnan(r.value) and mp.isfinite(r.value)


@pytest.mark.parametrize("alpha", [3, sp.Rational(1, 2)])
def test_laplace_written_with_sign_and_max(alpha):
    """Same Laplace pair written with sign() and Max(): the kinks must still be found."""
    P = sp.exp(-x * sp.sign(x) / b) / (2 * b)
    Q = sp.exp(-sp.Max(x - 1, 1 - x) / b) / (2 * b)
    r = nd(P, Q, sp.S.Reals, alpha, {b: sp.Rational(1, 3)})
    with mp.workdps(DPS + 10):
        check(r, laplace_ref(num(alpha), mp.mpf(1) / 3), 30)


def test_parametric_piecewise_support():
    """P = U[0, theta] written as a Piecewise with a parameter in the condition, Q = U[0, 2]:
    D_alpha = log(2/theta) for every alpha."""
    th = sp.Symbol("theta", positive=True)
    P = sp.Piecewise((1 / th, x <= th), (0, True))
    r = nd(P, sp.Rational(1, 2), sp.Interval(0, 2), 3, {"theta": sp.Rational(2, 3)})
    with mp.workdps(DPS + 10):
        check(r, mp.log(3), 30)


def test_transcendental_kink_located_numerically():
    """Kinks at the root of x = cos x (Dottie number), which has no closed form: they must be found
    numerically. Reference: a direct mpmath quadrature split at the known kink."""
    P = sp.exp(-sp.Abs(x - sp.cos(x)) - x**2 / 8)
    Q = sp.exp(-sp.Abs(x - sp.cos(x)) - (x - 1) ** 2 / 8)
    r = nd(P, Q, sp.S.Reals, 2, {}, dps=30)
    assert r.converged, r.detail
    assert "numerically (1 found" in r.detail
    with mp.workdps(50):
        k = mp.findroot(lambda t: t - mp.cos(t), 0.7)
        p_ = lambda t: mp.exp(-abs(t - mp.cos(t)) - t**2 / 8)
        q_ = lambda t: mp.exp(-abs(t - mp.cos(t)) - (t - 1) ** 2 / 8)
        I = mp.quad(lambda t: p_(t) ** 2 / q_(t), [-mp.inf, k, mp.inf])
        assert abs(r.value - mp.log(I)) < mp.mpf(10) ** -25


# ---------------------------------------------------------------------------------------------
# Slow tier: high precision sweeps (pytest -m slow)
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [sp.Rational(1, 10), sp.Rational(1, 2), 1 + sp.Rational(1, 10**9), 2, 17, 10**3])
@pytest.mark.parametrize("scale", [sp.Rational(1, 20), 1, 7])
def test_laplace_sweep_100_digits(alpha, scale):
    r = nd(laplace(0), laplace(1), sp.S.Reals, alpha, {b: scale}, dps=100)
    assert r.converged, r.detail
    with mp.workdps(130):
        ref = laplace_ref(num(alpha), num(scale))
        assert abs(r.value - ref) / abs(ref) < mp.mpf(10) ** -60


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [sp.Rational(1, 3), sp.Rational(3, 2), 5])
def test_cauchy_legendre_80_digits(alpha):
    r = nd(cauchy(0, 3), cauchy(2, 3), sp.S.Reals, alpha, {}, dps=80)
    assert r.converged, r.detail
    with mp.workdps(100):
        a = num(alpha)
        ref = mp.log(mp.legenp(a - 1, 0, 1 + mp.mpf(4) / 18, type=3)) / (a - 1)
        assert abs(r.value - ref) / abs(ref) < mp.mpf(10) ** -48


# ---------------------------------------------------------------------------------------------
# The Arb path (python-flint) and its mpmath fallback
# ---------------------------------------------------------------------------------------------


def _uniform(lo, hi):
    return sp.Piecewise((1 / (hi - lo), (x >= lo) & (x <= hi)), (0, True))


ARB_CASES = [
    # (P, Q, support, alpha, values, exact D)
    (gauss(0), gauss(1), sp.S.Reals, sp.Rational(5, 2), {sigma: sp.Rational(3, 2)},
     sp.Rational(5, 2) / (2 * sp.Rational(9, 4))),
    (laplace(0), laplace(1), sp.S.Reals, 7, {b: sp.Rational(1, 3)},
     sp.log(sp.Rational(7, 13) * sp.exp(6 * 3) + sp.Rational(6, 13) * sp.exp(-7 * 3)) / 6),
    (laplace(0), laplace(1), sp.S.Reals, 1, {b: sp.Rational(1, 3)}, 3 + sp.exp(-3) - 1),
    (gauss(0), gauss(1), sp.S.Reals, 1 + sp.Rational(1, 10**6), {sigma: 1}, (1 + sp.Rational(1, 10**6)) / 2),
    # an exact irrational parameter value (verify's typical points are such): bound in Arb too
    (gauss(0), gauss(1), sp.S.Reals, 3, {sigma: sp.sqrt(2)}, sp.Rational(3, 4)),
]


@pytest.mark.parametrize("case", range(len(ARB_CASES)))
def test_arb_path_agrees_with_mpmath_path_and_closed_form(case, monkeypatch):
    """The same divergence by Arb Gauss-Legendre and by the pure-mpmath path: both converge, both
    agree with the closed form (Mironov 2017, Props. 5 and 7) to 30 digits, errors honest."""
    pytest.importorskip("flint")
    P, Q, S, a, vals, ref = ARB_CASES[case]
    r_arb = nd(P, Q, S, a, vals)
    assert "Arb Gauss-Legendre" in r_arb.detail and "n vs 2n" in r_arb.method, r_arb.detail
    assert r_arb.evaluations["mpmath"] == 0 and r_arb.evaluations["arb"] > 0  # no point needed the fallback
    monkeypatch.setenv("RDPSYM_NUMERIC_BACKEND", "mpmath")
    r_mp = nd(P, Q, S, a, vals)
    assert "Arb" not in r_mp.detail, r_mp.detail
    with mp.workdps(DPS + 20):
        exact = mp.mpf(sp.N(ref, DPS + 20))
        check(r_arb, exact, 30)
        check(r_mp, exact, 30)


def test_arb_gauss_legendre_error_estimate_is_honest_and_flags_kinks():
    """n vs 2n nodes: on an analytic integrand the reported error covers the true error; across a
    hidden kink (|t - 1/3| on [-1, 1], not split) the rule does not converge within the cap and
    says so, so the driver cannot take it as converged."""
    pytest.importorskip("flint")
    from flint import arb, ctx

    from rdpsym.numeric import fast

    prec = 200
    with ctx.workprec(prec):
        tol = arb(10) ** -50
        v, e, ok = fast.gauss_legendre(lambda t: (-t * t).exp(), [(arb(-3), arb(0)), (arb(0), arb(2))], prec, tol, 12, 384)
        exact = (arb.pi().sqrt() / 2) * ((arb(3)).erf() + (arb(2)).erf())
        assert ok and abs(v - exact) <= e + arb(10) ** -55
        assert e < arb(10) ** -45
        third = arb(1) / 3
        v, e, ok = fast.gauss_legendre(lambda t: abs(t - third), [(arb(-1), arb(1))], prec, tol, 12, 384)
        exact = (arb(4) / 3) ** 2 / 2 + (arb(2) / 3) ** 2 / 2
        assert not ok
        assert abs(v - exact) <= e  # the (large) error still covers the truth


def test_arb_compiler_falls_back_to_mpmath_where_arb_cannot_decide():
    """Unsupported functions compile to None (mpmath only); values Arb cannot give (log of a zero
    density, log of a negative "density") are never returned as numbers."""
    pytest.importorskip("flint")
    from flint import arb, ctx

    from rdpsym.numeric import fast

    lo = sp.Piecewise((0, x < 0), (-x, True))
    comp = fast.compile_log_pair(lo, sp.airyai(x), x, ())
    assert comp is None  # airyai is not taught to the compiler
    comp = fast.compile_log_pair(sp.log(x), -x, x, ())
    ev = fast.evaluator(*comp.bind({}, 128))
    with ctx.workprec(128):
        assert ev(arb(-1)) is None and ev(arb(0)) is None
        lp, lq = ev(arb(2))
        assert abs(lp - arb(2).log()) < arb(10) ** -35 and abs(lq + 2) < arb(10) ** -35
    # the negative "density" test above (test_dataclass_is_frozen_and_never_nan) runs on the Arb
    # path too: the failure is reported, not a number


def test_uniform_kinks_and_float_densities():
    """Uniform vs uniform (Piecewise, kinks at the support's ends): D_2(U[0,1] || U[0,2]) = log 2.
    ``_uniform(0, 2)`` holds the Python float 0.5: floats in a density are taken at their exact
    binary value (before this was fixed sympy folded log(0.5) to 15 digits, and the result was
    wrong from the 17th digit on while both evaluations agreed). Both backends."""
    assert _uniform(0, 2).has(sp.Float)
    for backend in ("", "mpmath"):
        with pytest.MonkeyPatch.context() as m:
            m.setenv("RDPSYM_NUMERIC_BACKEND", backend)
            r = numeric_divergence(_uniform(0, 1), _uniform(0, 2), x, sp.Interval(0, 2), 2, {})
        with mp.workdps(DPS + 10):
            check(r, mp.log(2), 30)


def test_far_second_mode_is_not_cut_off():
    """A mixture whose second mode (weight 1e-3) lies beyond a valley of depth e^-450: the tail
    cutoff must not truncate it. D_2 = log((1 - w) + w e) (the modes' cross terms are below
    e^-400). Before the scan-sample guard both evaluations cut at the same place and agreed on
    -0.0010005 (converged, wrong)."""
    g = [sp.exp(-(x - m) ** 2 / 2) / sp.sqrt(2 * sp.pi) for m in (0, 60, 61)]
    w = sp.Rational(1, 1000)
    r = nd((1 - w) * g[0] + w * g[1], (1 - w) * g[0] + w * g[2], sp.S.Reals, 2, {}, dps=30)
    with mp.workdps(DPS + 10):
        ref = mp.log(1 - mp.mpf(1) / 1000 + mp.e / 1000)
        assert r.converged, r.detail
        assert abs(r.value - ref) <= mp.mpf(10) ** -28 * abs(ref), (r.value, r.detail)


@pytest.mark.parametrize("alpha", [sp.Rational(1, 3), 1, sp.Rational(7, 4), 3])
def test_peak_at_a_jump_converges(alpha):
    """P = e^{-(x-1)} on x > 1 and Q = e^{-x} on x > 0 as Heaviside factors on the real line: the peak
    of the integrand sits at P's jump. The width next to the jump used to be measured as the distance
    to it (~1e-19), and every rule's error estimate then failed (1e-16 > tolerance): not converged.
    P/Q = e on x > 1, so D_alpha = 1 at every order (and KL = 1)."""
    H = sp.Heaviside
    P, Q = H(x - 1) * sp.exp(-(x - 1)), H(x) * sp.exp(-x)
    r = nd(P, Q, sp.S.Reals, alpha, {}, dps=30)
    assert r.converged, r.detail
    with mp.workdps(30):
        assert abs(r.value - 1) <= mp.mpf(10) ** -25


def test_tail_checks_are_typed_values():
    """A tail check says 'diverges' or 'doubt' as a value, not as a string prefix to parse."""
    from rdpsym.numeric.tails import Infinite, TailCheck, check_end

    with mp.workdps(30):
        # 1/|x| decay at +oo: the integral diverges
        r = check_end(lambda t: -mp.log(abs(t)), mp.mpf(1), 1, mp.mpf(1), True, mp.mpf(0))
        assert isinstance(r, TailCheck) and r.diverges and "diverges" in r.reason
        with pytest.raises(Infinite):
            r.apply([])
        # |x|^-1.02 at +oo: converges, but too slowly to trust the quadrature
        r = check_end(lambda t: -mp.mpf("1.02") * mp.log(abs(t)), mp.mpf(1), 1, mp.mpf(1), True, mp.mpf(0))
        doubts = []
        assert isinstance(r, TailCheck) and not r.diverges
        r.apply(doubts)
        assert doubts == [r.reason]
        # Gaussian decay: fine
        assert check_end(lambda t: -t * t, mp.mpf(1), 1, mp.mpf(1), True, mp.mpf(0)) is None


@pytest.mark.parametrize("alpha", [1, sp.Rational(1000001, 1000000), 2])
def test_far_apart_heavy_tailed_densities_converge(alpha):
    """Cauchy locations 0 and 200 at scale 1/2: the integrand has a feature at each density's mode, and
    the one away from the integrand's peak was stepped over (KL not converged at 34 digits). The modes
    of P and Q are breakpoints now. KL = log(1 + Delta^2/(4 gamma^2)) (Chyzak and Nielsen 2019)."""
    g, d = sp.Rational(1, 2), 200
    P, Q = g / (sp.pi * (g**2 + x**2)), g / (sp.pi * (g**2 + (x - d) ** 2))
    r = nd(P, Q, sp.S.Reals, alpha, {}, dps=34)
    assert r.converged, r.detail
    with mp.workdps(45):
        if alpha == 1:
            ref = mp.log(1 + mp.mpf(d) ** 2 / (4 * (mp.mpf(1) / 2) ** 2))
        else:
            a = mp.mpf(alpha.p) / alpha.q if isinstance(alpha, sp.Rational) else mp.mpf(alpha)
            p = lambda t: (mp.mpf(1) / 2) / (mp.pi * (mp.mpf(1) / 4 + t**2))  # noqa: E731
            q = lambda t: (mp.mpf(1) / 2) / (mp.pi * (mp.mpf(1) / 4 + (t - d) ** 2))  # noqa: E731
            cuts = [-mp.inf, -10, 0, 10, 100, 190, 200, 210, mp.inf]
            if a == 2:
                ref = mp.log(mp.quad(lambda t: p(t) ** 2 / q(t), cuts))
            else:
                ref = mp.log1p(mp.quad(lambda t: p(t) * mp.expm1((a - 1) * mp.log(p(t) / q(t))), cuts)) / (a - 1)
        assert abs(r.value - ref) <= mp.mpf(10) ** -30 * abs(ref), (r.value, ref)
