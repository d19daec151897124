"""The numeric path in two and three output variables (issue 16): rdpsym.numeric_divergence with a
tuple of variables over a product support, against formulas typed here, and rdpsym.verify of a result
whose pair has a tuple variable."""

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import numeric_divergence
from rdpsym._numbers import ArgumentError

x1, x2, x3, x4 = sp.symbols("x1 x2 x3 x4", real=True)


def _gauss(xs, mean, cov):
    """The multivariate normal density N(mean, cov) in the symbols xs (exact sympy matrices)."""
    d = sp.Matrix(xs) - sp.Matrix(mean)
    cov = sp.Matrix(cov)
    return sp.exp(-(d.T * cov.inv() * d)[0] / 2) / sp.sqrt((2 * sp.pi) ** len(xs) * cov.det())


def _mp(v):
    v = sp.Rational(v)
    return mpmath.mpf(int(v.p)) / int(v.q)


def _renyi_gauss(a, m1, S1, m2, S2):
    """D_alpha(N(m1, S1) || N(m2, S2)) by Gil, Alajaji and Linder 2013 ("Rényi divergence measures for
    commonly used univariate continuous distributions", Inf. Sci. 249), the multivariate form:
    a/2 Δ^T S_a^-1 Δ - 1/(2(a-1)) log(det S_a / (det S1^(1-a) det S2^a)), S_a = a S2 + (1-a) S1."""
    a = _mp(a)
    S1 = mpmath.matrix([[_mp(v) for v in row] for row in S1])
    S2 = mpmath.matrix([[_mp(v) for v in row] for row in S2])
    dlt = mpmath.matrix([_mp(u) - _mp(v) for u, v in zip(m1, m2)])
    Sa = a * S2 + (1 - a) * S1
    quad = (dlt.T * mpmath.inverse(Sa) * dlt)[0]
    return a / 2 * quad - mpmath.log(mpmath.det(Sa) / (mpmath.det(S1) ** (1 - a) * mpmath.det(S2) ** a)) / (2 * (a - 1))


def _close(nv, exact, dps):
    assert nv.converged, nv.detail
    with mpmath.workdps(dps + 10):
        # the claimed accuracy and the error estimate both hold
        assert abs(nv.value - exact) <= mpmath.mpf(10) ** (-0.6 * dps) * max(abs(exact), 1)
        assert abs(nv.value - exact) <= 10 * nv.error + mpmath.mpf(10) ** (-dps)


RHO = sp.Rational(1, 2)
COV = [[1, RHO], [RHO, 1]]
MP, MQ = [0, 0], [1, sp.Rational(-1, 2)]


@pytest.mark.parametrize("alpha", [pytest.param(sp.Rational(1, 2), marks=pytest.mark.slow),
                                   pytest.param(1 + sp.Rational(1, 10**6), marks=pytest.mark.slow),
                                   pytest.param(1, marks=pytest.mark.slow), 3, 50])
def test_correlated_gaussians_shifted_mean(alpha):
    P, Q = _gauss((x1, x2), MP, COV), _gauss((x1, x2), MQ, COV)
    nv = numeric_divergence(P, Q, (x1, x2), sp.S.Reals**2, alpha, {}, dps=20)
    with mpmath.workdps(40):
        S = mpmath.matrix([[_mp(v) for v in row] for row in COV])
        dlt = mpmath.matrix([_mp(u) - _mp(v) for u, v in zip(MP, MQ)])
        exact = _mp(alpha) * (dlt.T * mpmath.inverse(S) * dlt)[0] / 2  # alpha Δ^T Σ^-1 Δ / 2
        _close(nv, exact, 20)


@pytest.mark.slow
def test_gaussians_different_covariances_gil_alajaji_linder():
    S1, S2 = [[1, sp.Rational(3, 10)], [sp.Rational(3, 10), 1]], [[sp.Rational(3, 2), 0], [0, sp.Rational(6, 5)]]
    P, Q = _gauss((x1, x2), MP, S1), _gauss((x1, x2), MQ, S2)
    nv = numeric_divergence(P, Q, (x1, x2), sp.S.Reals**2, 2, {}, dps=20)
    with mpmath.workdps(40):
        _close(nv, _renyi_gauss(2, MP, S1, MQ, S2), 20)


def test_gaussians_d_inf_is_infinite_and_indefinite_order_diverges():
    P, Q = _gauss((x1, x2), MP, COV), _gauss((x1, x2), MQ, COV)
    nv = numeric_divergence(P, Q, (x1, x2), sp.S.Reals**2, sp.oo, {}, dps=20)
    assert nv.value == mpmath.inf and nv.converged  # log P/Q is linear: unbounded
    # alpha S_Q + (1 - alpha) S_P = 3 I - 2 * 2 I is not positive definite: the integral diverges
    P2, Q2 = _gauss((x1, x2), MP, [[2, 0], [0, 2]]), _gauss((x1, x2), MP, [[1, 0], [0, 1]])
    nv = numeric_divergence(P2, Q2, (x1, x2), sp.S.Reals**2, 3, {}, dps=20)
    assert nv.value == mpmath.inf and nv.converged, nv.detail


def _laplace_1d(a, d):
    """D_alpha of Laplace(0, 1) || Laplace(d, 1) (Mironov 2017, arXiv:1702.07476, Prop. 6)."""
    return mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * d) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * d)) / (a - 1)


@pytest.mark.parametrize("alpha", [pytest.param(sp.Rational(1, 3), marks=pytest.mark.slow), sp.oo])
def test_product_of_laplace_is_the_sum_of_coordinates(alpha):
    lap = lambda x, m, b: sp.exp(-sp.Abs(x - m) / b) / (2 * b)  # noqa: E731
    P = lap(x1, 0, 1) * lap(x2, 0, 2)
    Q = lap(x1, 1, 1) * lap(x2, sp.Rational(1, 2), 2)
    nv = numeric_divergence(P, Q, (x1, x2), sp.S.Reals**2, alpha, {}, dps=20)
    with mpmath.workdps(40):
        if alpha == sp.oo:
            exact = 1 + mpmath.mpf(1) / 4  # sum of |Δ| / b
        else:
            exact = _laplace_1d(_mp(alpha), 1) + _laplace_1d(_mp(alpha), mpmath.mpf(1) / 4)
        _close(nv, exact, 20)


@pytest.mark.slow
def test_product_of_geometric_pmfs_on_naturals0_squared():
    p, q = sp.Rational(1, 2), sp.Rational(1, 3)
    G = lambda x, r: r * (1 - r) ** x  # noqa: E731
    P, Q = G(x1, p) * G(x2, q), G(x1, q) * G(x2, p)
    nv = numeric_divergence(P, Q, (x1, x2), sp.S.Naturals0**2, 2, {}, dps=15)
    with mpmath.workdps(40):
        def geo(a, u, v):  # D_a(Geom(u) || Geom(v)) summed in closed form (geometric series)
            return mpmath.log(u**a * v ** (1 - a) / (1 - (1 - u) ** a * (1 - v) ** (1 - a))) / (a - 1)
        a, mp_, mq = mpmath.mpf(2), _mp(p), _mp(q)
        _close(nv, geo(a, mp_, mq) + geo(a, mq, mp_), 15)


def test_mixed_interval_times_finite_set():
    # x1 uniform on [0, 1] vs density x1 + 1/2; x2 in {0, 1} with pmfs (1/4, 3/4) vs (1/2, 1/2)
    P = sp.Piecewise((sp.Rational(1, 4), sp.Eq(x2, 0)), (sp.Rational(3, 4), True))
    Q = (x1 + sp.Rational(1, 2)) / 2
    support = sp.ProductSet(sp.Interval(0, 1), sp.FiniteSet(0, 1))
    nv = numeric_divergence(P, Q, (x1, x2), support, 2, {}, dps=20)
    with mpmath.workdps(40):
        # ∑ p(x2)^2 / (1/2) * ∫ 1 / (x1 + 1/2) dx1 = (1/16 + 9/16) * 2 * log 3
        _close(nv, mpmath.log(mpmath.mpf(5) / 4 * mpmath.log(3)), 20)


def test_support_mismatch_diverges():
    # Q vanishes on x1 < 0 where P does not: D_alpha = oo for alpha >= 1
    P = _gauss((x1, x2), MP, [[1, 0], [0, 1]])
    Q = sp.Piecewise((2 * _gauss((x1, x2), MP, [[1, 0], [0, 1]]), x1 >= 0), (0, True))
    for alpha in (2, 1):
        nv = numeric_divergence(P, Q, (x1, x2), sp.S.Reals**2, alpha, {}, dps=15)
        assert nv.value == mpmath.inf and nv.converged, nv.detail


def test_one_tuple_is_the_scalar_path():
    P, Q = _gauss((x1,), [0], [[1]]), _gauss((x1,), [1], [[1]])
    a = numeric_divergence(P, Q, (x1,), sp.ProductSet(sp.S.Reals), 2, {}, dps=20)
    b = numeric_divergence(P, Q, x1, sp.S.Reals, 2, {}, dps=20)
    assert a == b


@pytest.mark.slow
@pytest.mark.xfail(reason="3-D iterated quadrature (about 10^6 density evaluations in mpmath) runs past the "
                          "60 s evaluation limit and returns 'failed' (fail closed); a faster 3-D rule is open work",
                   strict=False)
def test_three_dimensional_gaussians():
    cov = [[1, sp.Rational(1, 4), 0], [sp.Rational(1, 4), 1, sp.Rational(1, 5)], [0, sp.Rational(1, 5), 2]]
    m2 = [sp.Rational(1, 2), 0, -1]
    P, Q = _gauss((x1, x2, x3), [0, 0, 0], cov), _gauss((x1, x2, x3), m2, cov)
    nv = numeric_divergence(P, Q, (x1, x2, x3), sp.S.Reals**3, 2, {}, dps=15)
    with mpmath.workdps(40):
        _close(nv, _renyi_gauss(2, [0, 0, 0], cov, m2, cov), 15)


@pytest.mark.parametrize("x, support, argument", [
    ((x1, x2, x3, x4), sp.S.Reals**4, "x"),
    ((x1, x1), sp.S.Reals**2, "x"),
    ((x1, x2), sp.S.Reals, "support"),
    ((x1, x2), sp.S.Reals**3, "support"),
])
def test_bad_input_names_the_argument(x, support, argument):
    P = sp.exp(-sum(v**2 for v in set(x)))
    with pytest.raises(ArgumentError) as info:
        numeric_divergence(P, P, x, support, 2, {}, dps=15)
    assert info.value.argument == argument


def test_missing_parameter_is_named():
    s = sp.Symbol("s", positive=True)
    P = _gauss((x1, x2), MP, [[s, 0], [0, 1]])
    with pytest.raises(ValueError, match="s"):
        numeric_divergence(P, P, (x1, x2), sp.S.Reals**2, 2, {}, dps=15)


def _bivariate_result(expr_scale):
    """A DivergenceResult for N((0,0), s^2 I) || N((1, 0), s^2 I): D = expr_scale * alpha / (2 s^2)."""
    s = sp.Symbol("s", positive=True)
    a = rdpsym.symbols.alpha
    P = _gauss((x1, x2), MP, [[s**2, 0], [0, s**2]])
    Q = _gauss((x1, x2), [1, 0], [[s**2, 0], [0, s**2]])
    return rdpsym.DivergenceResult(expr=expr_scale * a / (2 * s**2), status=rdpsym.Status.CLOSED_FORM,
                                   symbols=(s,), kl=expr_scale / (2 * s**2), pair=(P, Q, (x1, x2), sp.S.Reals**2))


@pytest.mark.slow
def test_verify_a_bivariate_result():
    good = rdpsym.verify(_bivariate_result(1), level="quick", executor="serial")
    assert good.status == "verified", [(c.point.describe(), c.status, c.note) for c in good.checks]
    assert good.dps <= 20
    wrong = rdpsym.verify(_bivariate_result(sp.Rational(101, 100)), level="quick", executor="serial",
                          fail_fast=True)
    assert wrong.status == "mismatch"
