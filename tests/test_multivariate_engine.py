"""The engine on densities in several output variables (issue 16): the Gaussian template, independent
coordinates, the fallback, the inputs, and vector mechanisms.

Closed forms are compared with the published ones (shared covariance: alpha/2 Delta^T Sigma^-1 Delta,
Gil, Alajaji & Linder 2013, Table 2) and with independent mpmath quadratures of the definition
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


def quad_divergence(P, Q, a, values, dps=20):
    """D_a(P||Q) by a 2-D mpmath quadrature of P^a Q^(1-a) over R^2 (independent of the engine)."""
    f = sp.lambdify((x1, x2), (P**a * Q ** (1 - a)).subs(values), "mpmath")
    with mpmath.workdps(dps):
        z = mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf], [-mpmath.inf, 0, mpmath.inf])
        return mpmath.log(z) / (mpmath.mpf(a) - 1)


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


@pytest.mark.parametrize("case", ["independent", "correlated"])
def test_different_covariances_against_2d_quadrature(case):
    if case == "independent":
        P, Q = bivariate((0, 0), s1**2, s1**2, 0), bivariate((m1, 0), s2**2, s2**2, 0)
        params, values = None, {s1: sp.Rational(1), s2: sp.Rational(3, 2), m1: sp.Rational(7, 10)}
    else:
        P, Q = bivariate((0, 0), s1**2, s1**2, rho), bivariate((m1, 0), s2**2, s2**2, rho)
        params, values = [RHO], {s1: sp.Rational(1), s2: sp.Rational(3, 2), m1: sp.Rational(7, 10), rho: sp.Rational(2, 5)}
    r = rdpsym.renyi_divergence(P, Q, (x1, x2), R2, params=params)
    assert r.status is rdpsym.Status.CLOSED_FORM
    # finite iff alpha s2^2 + (1 - alpha) s1^2 > 0 (the positive-definiteness condition), for alpha > 1
    assert r.conditions.has(alpha) and r.conditions.subs(values).subs(alpha, 3) is sp.true
    assert r.at(5, **{str(k): v for k, v in {**values, s1: 2, s2: 1}.items()}) == sp.oo
    named = {str(k): v for k, v in values.items()}
    with mpmath.workdps(20):
        for a in (sp.Rational(1, 2), sp.Rational(3, 2), 3):
            exact = r.evaluate(a, dps=20, **named)
            assert abs(exact - quad_divergence(P, Q, a, values)) < mpmath.mpf(10) ** -12 * max(1, abs(exact))
        # the KL agrees with the limit alpha -> 1 (checked in the derivation) and with the quadrature
        assert abs(r.evaluate(1, dps=20, **named) - quad_divergence(P, Q, 1 + sp.Rational(1, 10**8), values)) < 1e-6


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
        f = sp.lambdify((x1, x2), (P**2 / Q).subs({b1: values["b1"], b2: values["b2"], d: 1}), "mpmath")
        z = mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.inf], [-mpmath.inf, 0, mpmath.inf])
        assert abs(r.evaluate(2, **values) - mpmath.log(z)) < mpmath.mpf(10) ** -15


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
    y = sp.Symbol("y", real=True)
    P, Q = sp.exp(-sp.Abs(y)) / 2, sp.exp(-sp.Abs(y - d)) / 2
    scalar = rdpsym.renyi_divergence(P, Q, y, sp.S.Reals)
    tupled = rdpsym.renyi_divergence(P, Q, (y,), sp.ProductSet(sp.S.Reals))
    assert tupled.expr == scalar.expr and tupled.pair[2] == y


def test_vector_gaussian_mechanism_rdp():
    P, Q = bivariate((0, 0), s1**2, s1**2, rho), bivariate((d1, d2), s1**2, s1**2, rho)
    mech = rdpsym.Mechanism("gaussian2", (x1, x2), R2, (rdpsym.AdjacentPair(P, Q),),
                            (RHO, Parameter("s1", s1, sp.Interval.open(0, sp.oo), (0.5, 2), "s_1"),
                             Parameter("d1", d1, sp.S.Reals, (-1, 1), "d_1"), Parameter("d2", d2, sp.S.Reals, (-1, 1), "d_2")))
    assert mech.discrete is False and mech.variables == (x1, x2)
    r = rdpsym.rdp(mech)
    assert r.status is rdpsym.Status.CLOSED_FORM
    expected = alpha * (d1**2 - 2 * rho * d1 * d2 + d2**2) / (2 * s1**2 * (1 - rho**2))
    values = {"rho": sp.Rational(-1, 3), "s1": sp.Rational(3, 4), "d1": sp.Rational(1, 2), "d2": sp.Rational(2)}
    assert abs(r.evaluate(3, **values) - sp.N(expected.subs({alpha: 3, rho: values["rho"], s1: values["s1"],
                                                             d1: values["d1"], d2: values["d2"]}), 30)) < 1e-25
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
