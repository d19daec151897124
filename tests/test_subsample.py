"""rdp(subsample(base, q)): the curve of a subsampled mechanism against independent computations.

The references are computed here, independently of rdpsym's numeric path: the mixture divergences by
mpmath.quad split at the kinks, the Gaussian's integer orders by the binomial sum of its moments
E_P[(Q/P)^j] = exp(j (j-1) Delta^2 / (2 sigma^2)) (Mironov, Talwar & Zhang 2019, Sect. 3.3).
"""

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import subsample
from rdpsym.mechanisms.gaussian import gaussian
from rdpsym.mechanisms.laplace import laplace
from rdpsym._numbers import ArgumentError
from rdpsym.derive.result import Status
from rdpsym.specify.params import parameter

ORDERS = (2, 3, 10, sp.Rational(1, 2), sp.Rational(3, 2), sp.Rational(5, 2))


def _laplace_truth(alpha, q, b, d):
    """max over both mixtures and both directions of D_alpha, by mpmath.quad (caller's precision)."""
    a = mpmath.mpf(alpha.p) / alpha.q if isinstance(alpha, sp.Rational) else mpmath.mpf(alpha)

    def P(x):
        return mpmath.exp(-abs(x) / b) / (2 * b)

    def Q(x):
        return mpmath.exp(-abs(x - d) / b) / (2 * b)

    def D(f, g):
        integral = mpmath.quad(lambda x: f(x) ** a * g(x) ** (1 - a), [-mpmath.inf, 0, d, mpmath.inf])
        return mpmath.log(integral) / (a - 1)

    values = []
    for X, Y in ((P, Q), (Q, P)):
        def M(x, X=X, Y=Y):
            return (1 - q) * X(x) + q * Y(x)
        values += [D(M, X), D(X, M)]
    return max(values)


@pytest.fixture(scope="module")
def sub_laplace():
    return rdpsym.rdp(subsample(laplace(), sp.Symbol("q", positive=True)))


@pytest.mark.slow
def test_laplace_matches_quadrature_both_directions(sub_laplace):
    r = sub_laplace
    assert r.status is Status.NUMERIC_ONLY and "binomial" in r.provenance.describe()
    with mpmath.workdps(40):
        q, b, d = mpmath.mpf(3) / 10, mpmath.mpf(7) / 5, mpmath.mpf(1)
        for alpha in ORDERS:
            truth = _laplace_truth(alpha, q, b, d)
            got = r.evaluate(alpha, dps=30, q=sp.Rational(3, 10), b=sp.Rational(7, 5), sensitivity=1)
            assert abs(got - truth) <= mpmath.mpf(10) ** -10 * truth, (alpha, got, truth)


@pytest.mark.slow
def test_laplace_fixed_q_and_without_replacement_bound():
    fixed = rdpsym.rdp(subsample(laplace(), sp.Rational(1, 10)))
    wor = rdpsym.rdp(subsample(laplace(), sp.Rational(1, 10), scheme="without_replacement"))
    assert fixed.status is Status.NUMERIC_ONLY and wor.status is Status.BOUND
    with mpmath.workdps(40):
        for alpha in ORDERS:
            truth = _laplace_truth(alpha, mpmath.mpf(1) / 10, mpmath.mpf(1), mpmath.mpf(1))
            got = fixed.evaluate(alpha, dps=30, b=1, sensitivity=1)
            assert abs(got - truth) <= mpmath.mpf(10) ** -10 * truth, (alpha, got, truth)
            cv = wor.evaluate_with_error(alpha, dps=30, b=1, sensitivity=1)
            assert cv.bound and cv.value >= truth, (alpha, cv.value, truth)


def test_gaussian_integer_orders_are_the_binomial_sum():
    r = rdpsym.rdp(subsample(gaussian(), sp.Symbol("q", positive=True)))
    with mpmath.workdps(30):
        q, sigma, d = mpmath.mpf(1) / 5, mpmath.mpf(3) / 2, mpmath.mpf(1)
        for k in (2, 3, 10):
            s = mpmath.fsum(mpmath.binomial(k, j) * (1 - q) ** (k - j) * q ** j
                            * mpmath.exp(j * (j - 1) * d ** 2 / (2 * sigma ** 2)) for j in range(k + 1))
            truth = mpmath.log(s) / (k - 1)
            got = r.evaluate(k, dps=30, q=sp.Rational(1, 5), sigma=sp.Rational(3, 2), sensitivity=1)
            assert abs(got - truth) <= mpmath.mpf(10) ** -25 * truth, (k, got, truth)
        base = rdpsym.rdp(gaussian())
        for alpha in (2, sp.Rational(5, 2)):  # q = 0: P = Q; q = 1: the base mechanism
            assert r.evaluate(alpha, q=0, sigma=2, sensitivity=1) == 0
            one = r.evaluate(alpha, q=1, sigma=2, sensitivity=1)
            assert abs(one - base.evaluate(alpha, sigma=2, sensitivity=1)) <= mpmath.mpf(10) ** -25


@pytest.mark.slow
def test_verify_checks_the_mixture():
    from rdpsym.verification.points import Point

    r = rdpsym.rdp(subsample(laplace(), sp.Rational(1, 5)))
    values = (("b", sp.Rational(7, 5)), ("sensitivity", sp.Integer(1)))
    points = [Point(a, values, "typical") for a in (2, sp.Rational(5, 2), sp.oo)]
    report = rdpsym.verify(r, points=points, executor="serial")  # the reference method on sampled shifts
    assert report.status == "verified", [(c.point.alpha, c.status, c.note[:200]) for c in report.checks]


def test_bad_arguments_are_named():
    with pytest.raises(ArgumentError, match="^q"):
        subsample(gaussian(), 2)
    with pytest.raises(ArgumentError, match="^q"):
        subsample(gaussian(), "0.1")
    with pytest.raises(ArgumentError, match="^q"):
        subsample(gaussian(), sp.Symbol("q"))  # not known to be real
    with pytest.raises(ArgumentError, match="^q"):
        subsample(gaussian(), parameter("q", sp.Interval(0, 2), typical=(0.1, 0.5)))
    with pytest.raises(ArgumentError, match="^scheme"):
        subsample(gaussian(), sp.Rational(1, 2), scheme="bootstrap")
    with pytest.raises(ArgumentError, match="^neighbouring"):
        subsample(gaussian(), sp.Rational(1, 2), scheme="poisson", neighbouring="replace_one")
    with pytest.raises(ArgumentError, match="^neighbouring"):
        subsample(gaussian(), sp.Rational(1, 2), neighbouring="swap")


def test_location_log_concave_is_shown_structurally():
    from rdpsym.derive.subsampled import location_log_concave

    for mech in (laplace(), gaussian()):
        fam = mech.pairs[0]
        assert location_log_concave(fam, mech.variable, mech.support)
    # a Cauchy location family is not log-concave: the supremum over t is not claimed
    x, t = sp.Symbol("x", real=True), sp.Symbol("t", real=True)
    from rdpsym.specify.adjacency import AdjacentFamily

    cauchy = AdjacentFamily(1 / (sp.pi * (1 + x ** 2)), 1 / (sp.pi * (1 + (x - t) ** 2)), shift=t,
                            over=sp.Interval(-1, 1), label="cauchy")
    assert location_log_concave(cauchy, x, sp.S.Reals) is None
