"""The engine on densities in several output variables (issue 16): the Gaussian template, independent
coordinates, the fallback, the inputs, and vector mechanisms.

Closed forms are compared with the published ones (shared covariance: alpha/2 Delta^T Sigma^-1 Delta,
Gil, Alajaji & Linder 2013, Information Sciences 249) and with independent mpmath quadratures of the definition
(Mironov 2017, Def. 3) over R^2."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import Parameter
from rdpsym._numbers import ArgumentError
from rdpsym.symbols import alpha

x1, x2 = sp.symbols("x1 x2", real=True)
rho = sp.Symbol("rho", real=True)
d1, d2, m1, m2 = sp.symbols("d1 d2 m1 m2", real=True)
s1, s2, b1, b2, d = sp.symbols("s1 s2 b1 b2 d", positive=True)
RHO = Parameter("rho", rho, sp.Interval.open(-1, 1), (-0.5, 0.5), r"\rho")
R2 = sp.S.Reals**2


def bivariate(mean, var1, var2, r):
    """The bivariate normal density with the given mean, variances and correlation, written out."""
    u, v = (x1 - mean[0]) / sp.sqrt(var1), (x2 - mean[1]) / sp.sqrt(var2)
    q = (u**2 - 2 * r * u * v + v**2) / (1 - r**2)
    return sp.exp(-q / 2) / (2 * sp.pi * sp.sqrt(var1 * var2 * (1 - r**2)))


def _log_integrand(P, Q, a, values):
    return sp.expand(sp.expand_log(a * sp.log(P.subs(values)) + (1 - a) * sp.log(Q.subs(values)), force=True))


def quad_divergence(P, Q, a, values, dps=15, context=mpmath.mp):
    """D_a(P||Q) by a 2-D mpmath quadrature of P^a Q^(1-a) over R^2 (independent of the engine); the
    fast variant uses mpmath's double-precision context ``mpmath.fp`` (an exact point costs about 0.3 s
    there and about 20 s at 10 digits on a loaded machine)."""
    f = sp.lambdify((x1, x2), sp.exp(_log_integrand(P, Q, a, values)), "mpmath" if context is mpmath.mp else "math")
    inf = context.inf
    with mpmath.workdps(dps):
        z = context.quad(f, [-inf, 0, inf], [-inf, 0, inf])
        return context.log(z) / (a - 1)


def test_shared_covariance_gives_alpha_half_mahalanobis():
    P, Q = bivariate((m1, m2), 1, 1, rho), bivariate((m1 + d1, m2 + d2), 1, 1, rho)
    r = rdpsym.renyi_divergence(P, Q, (x1, x2), R2, params=[RHO])
    assert r.status is rdpsym.Status.CLOSED_FORM and r.conditions is sp.true
    expected = alpha * (d1**2 - 2 * rho * d1 * d2 + d2**2) / (2 * (1 - rho**2))
    assert sp.simplify(r.expr - expected) == 0
    assert sp.simplify(r.kl - expected.subs(alpha, 1)) == 0
    # log P/Q is affine with a non-zero slope: unbounded above
    assert r.at(sp.oo, rho=sp.Rational(1, 3), d1=1, d2=0, m1=0, m2=0) == sp.oo
    assert r.at(sp.oo, rho=sp.Rational(1, 3), d1=0, d2=0, m1=0, m2=0) == 0
    assert any("quadratic template" in s.name for s in r.provenance.steps)


GAUSSIAN_CASES = {
    "independent": (bivariate((0, 0), s1**2, s1**2, 0), bivariate((m1, 0), s2**2, s2**2, 0), None,
                    {s1: sp.Rational(1), s2: sp.Rational(3, 2), m1: sp.Rational(7, 10)}),
    "correlated": (bivariate((0, 0), s1**2, s1**2, rho), bivariate((m1, 0), s2**2, s2**2, rho), [RHO],
                   {s1: sp.Rational(1), s2: sp.Rational(3, 2), m1: sp.Rational(7, 10), rho: sp.Rational(2, 5)}),
    "different correlations": (bivariate((0, 0), 1, 1, 0), bivariate((m1, m2), s2**2, 1, rho), [RHO],
                               {s2: sp.Rational(5, 4), m1: sp.Rational(1, 2), m2: sp.Rational(-1, 3),
                                rho: sp.Rational(-3, 10)}),
}


@pytest.mark.parametrize("case", sorted(GAUSSIAN_CASES))
def test_different_covariances_against_2d_quadrature(case):
    P, Q, params, values = GAUSSIAN_CASES[case]
    r = rdpsym.renyi_divergence(P, Q, (x1, x2), R2, params=params)
    assert r.status is rdpsym.Status.CLOSED_FORM
    # finite iff the form alpha A_P + (1 - alpha) A_Q is positive definite: a condition in alpha
    assert r.conditions.has(alpha) and r.conditions.subs(values).subs(alpha, 2) is sp.true
    named = {str(k): v for k, v in values.items()}
    with mpmath.workdps(20):
        for a in (sp.Rational(1, 2), sp.Rational(3, 2), 2):
            exact = r.evaluate(a, dps=20, **named)
            assert abs(exact - quad_divergence(P, Q, a, values, context=mpmath.fp)) < 1e-10 * max(1, abs(exact))
        # the KL (direct E_P[log P/Q], checked against the limit in the derivation) and the quadrature
        near = quad_divergence(P, Q, 1 + sp.Rational(1, 10**6), values, context=mpmath.fp)
        assert abs(r.evaluate(1, dps=20, **named) - near) < 1e-5
    if case != "different correlations":
        # s1 = 2 > s2 = 1: alpha s2^2 + (1 - alpha) s1^2 < 0 at alpha = 5, the divergence is +oo
        assert r.at(5, **{**named, "s1": 2, "s2": 1}) == sp.oo
        assert r.at(sp.oo, **{**named, "s1": 2, "s2": 1}) == sp.oo
        # equal covariances at these values: log P/Q is affine, bounded iff the means agree
        assert r.at(sp.oo, **{**named, "s1": 1, "s2": 1, "m1": 0}) == 0
        assert r.at(sp.oo, **{**named, "s1": 1, "s2": 1}) == sp.oo
    assert any(s.name == "KL limit check" and "equals the direct KL" in s.detail for s in r.provenance.steps)


@pytest.mark.slow
def test_gaussian_against_multiprecision_quadrature():
    P, Q, params, values = GAUSSIAN_CASES["correlated"]
    r = rdpsym.renyi_divergence(P, Q, (x1, x2), R2, params=params)
    with mpmath.workdps(15):
        for a in (sp.Rational(1, 2), 3):
            exact = r.evaluate(a, dps=15, **{str(k): v for k, v in values.items()})
            assert abs(exact - quad_divergence(P, Q, a, values, dps=12)) < mpmath.mpf(10) ** -8


def test_product_of_laplace_coordinates_is_the_sum_of_one_dimensional_divergences():
    P = sp.exp(-sp.Abs(x1) / b1 - sp.Abs(x2) / b2) / (4 * b1 * b2)
    Q = sp.exp(-sp.Abs(x1 - d) / b1 - sp.Abs(x2) / b2) / (4 * b1 * b2)
    r = rdpsym.renyi_divergence(P, Q, (x1, x2), R2)
    assert r.status is rdpsym.Status.CLOSED_FORM
    assert any("Thm. 28" in s.detail for s in r.provenance.steps)
    one = rdpsym.renyi_divergence(sp.exp(-sp.Abs(x1) / b1) / (2 * b1), sp.exp(-sp.Abs(x1 - d) / b1) / (2 * b1),
                                  x1, sp.S.Reals)
    values = {"b1": sp.Rational(3, 2), "b2": sp.Rational(1, 2), "d": sp.Rational(1)}
    with mpmath.workdps(30):
        for a in (sp.Rational(1, 3), sp.Rational(1, 2), 1, 2, sp.oo):
            # the x2 factors are equal: D_alpha is the x1 divergence alone
            assert abs(r.evaluate(a, **values) - one.evaluate(a, b1=values["b1"], d=1)) < mpmath.mpf(10) ** -25
        exponent = _log_integrand(P, Q, 2, {b1: values["b1"], b2: values["b2"], d: 1})
        f = sp.lambdify((x1, x2), sp.exp(exponent), "math")
        inf = mpmath.fp.inf
        z = mpmath.fp.quad(f, [-inf, 0, 1, inf], [-inf, 0, inf])
        assert abs(r.evaluate(2, **values) - mpmath.log(z)) < 1e-10


def test_product_of_two_shifted_laplace_coordinates():
    P = sp.exp(-sp.Abs(x1) / b1 - sp.Abs(x2) / b2) / (4 * b1 * b2)
    Q = sp.exp(-sp.Abs(x1 - d) / b1 - sp.Abs(x2 - d) / b2) / (4 * b1 * b2)
    r = rdpsym.renyi_divergence(P, Q, (x1, x2), sp.ProductSet(sp.S.Reals, sp.S.Reals))
    parts = [rdpsym.renyi_divergence(sp.exp(-sp.Abs(x1) / b) / (2 * b), sp.exp(-sp.Abs(x1 - d) / b) / (2 * b),
                                     x1, sp.S.Reals) for b in (b1, b2)]
    values = {"b1": sp.Rational(3, 2), "b2": sp.Rational(1, 2), "d": sp.Rational(1)}
    with mpmath.workdps(30):
        for a in (sp.Rational(1, 2), sp.Rational(5, 2), 1, sp.oo):
            total = parts[0].evaluate(a, b1=values["b1"], d=1) + parts[1].evaluate(a, b2=values["b2"], d=1)
            assert abs(r.evaluate(a, **values) - total) < mpmath.mpf(10) ** -25
    assert sp.Rational(1, 2) in [p.alpha for p in r.exceptional_points]


def test_neither_product_nor_quadratic_is_numeric_only():
    P = 2 * sp.exp(-(x1**2 + x2**2) ** 2) / sp.pi ** sp.Rational(3, 2)
    Q = P.subs(x1, x1 - d)
    r = rdpsym.renyi_divergence(P, Q, (x1, x2), R2)
    assert r.status is rdpsym.Status.NUMERIC_ONLY and r.expr is None
    assert "neither factor" in r.reason


def test_bad_inputs_name_the_argument():
    P, Q = bivariate((0, 0), 1, 1, 0), bivariate((d, 0), 1, 1, 0)
    with pytest.raises(ArgumentError, match="support"):
        rdpsym.renyi_divergence(P, Q, (x1, x2), sp.S.Reals)
    with pytest.raises(ArgumentError, match="support"):
        rdpsym.renyi_divergence(P, Q, (x1, x2), sp.S.Reals**3)
    with pytest.raises(ArgumentError, match="x"):
        rdpsym.renyi_divergence(P, Q, (x1, x1), R2)
    with pytest.raises(ArgumentError, match="x"):
        rdpsym.renyi_divergence(P, Q, (x1, "x2"), R2)
    with pytest.raises(ArgumentError, match="support"):
        rdpsym.renyi_divergence(P, Q, (x1, x2), "R2")
    with pytest.raises(rdpsym.derive.checks.DensityError):
        rdpsym.renyi_divergence(2 * P, Q, (x1, x2), R2)


def test_a_one_tuple_is_the_scalar_case():
    P, Q = sp.exp(-sp.Abs(x1) / b1) / (2 * b1), sp.exp(-sp.Abs(x1 - d) / b1) / (2 * b1)
    scalar = rdpsym.renyi_divergence(P, Q, x1, sp.S.Reals)
    tupled = rdpsym.renyi_divergence(P, Q, (x1,), sp.ProductSet(sp.S.Reals))
    assert tupled.expr == scalar.expr and tupled.pair[2] == x1 and tupled.pair[3] == sp.S.Reals


def test_vector_gaussian_mechanism_rdp():
    P, Q = bivariate((0, 0), 1, 1, rho), bivariate((d1, d2), 1, 1, rho)
    mech = rdpsym.Mechanism("gaussian2", (x1, x2), R2, (rdpsym.AdjacentPair(P, Q),),
                            (RHO, Parameter("d1", d1, sp.S.Reals, (-1, 1), "d_1"), Parameter("d2", d2, sp.S.Reals, (-1, 1), "d_2")))
    assert mech.discrete is False and mech.variables == (x1, x2)
    r = rdpsym.rdp(mech)
    assert r.status is rdpsym.Status.CLOSED_FORM
    expected = alpha * (d1**2 - 2 * rho * d1 * d2 + d2**2) / (2 * (1 - rho**2))
    values = {"rho": sp.Rational(-1, 3), "d1": sp.Rational(1, 2), "d2": sp.Rational(2)}
    assert sp.simplify(r.expr - expected) == 0
    assert r.evaluate(3, **values) == pytest.approx(float(expected.subs({alpha: 3, rho: values["rho"], d1: values["d1"],
                                                                      d2: values["d2"]})), rel=1e-14)
    assert any("not sought for the vector output" in s.detail for s in r.provenance.steps)


def test_mechanism_product_supports():
    k1, k2 = sp.symbols("k1 k2", integer=True)
    P = sp.Piecewise((sp.Rational(1, 4), True))
    mech = rdpsym.Mechanism("coins", (k1, k2), sp.ProductSet(sp.FiniteSet(0, 1), sp.FiniteSet(0, 1)),
                            (rdpsym.AdjacentPair(P, P),), ())
    assert mech.discrete is True
    mixed = rdpsym.Mechanism("mixed", (x1, k2), sp.ProductSet(sp.S.Reals, sp.S.Integers), (rdpsym.AdjacentPair(P, P),), ())
    assert mixed.discrete is False
    with pytest.raises(ArgumentError, match="support"):
        rdpsym.Mechanism("bad", (x1, x2), sp.S.Reals, (rdpsym.AdjacentPair(P, P),), ())


@pytest.mark.slow
def test_independent_discrete_coordinates():
    k1, k2 = sp.symbols("k1 k2", integer=True)
    p = sp.Symbol("p", positive=True)
    params = [Parameter("p", p, sp.Interval.open(0, sp.Rational(1, 2)), (0.1, 0.4), "p")]
    coin = p**k1 * (1 - p) ** (1 - k1)
    P, Q = coin * coin.subs(k1, k2), coin.subs(k1, 1 - k1) * coin.subs(k1, 1 - k2)
    r = rdpsym.renyi_divergence(P, Q, (k1, k2), sp.ProductSet(sp.FiniteSet(0, 1), sp.FiniteSet(0, 1)), params=params)
    one = rdpsym.renyi_divergence(coin, coin.subs(k1, 1 - k1), k1, sp.FiniteSet(0, 1), params=params)
    with mpmath.workdps(30):
        for a in (sp.Rational(1, 2), 1, 3, sp.oo):
            assert abs(r.evaluate(a, p=sp.Rational(1, 5)) - 2 * one.evaluate(a, p=sp.Rational(1, 5))) < mpmath.mpf(10) ** -25
