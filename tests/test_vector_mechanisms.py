"""Vector mechanisms end to end (issue 16): densities in (x1, x2), neighbours a ball of shift vectors.

The engine derives each pair with the shift symbolic (rdpsym.derive.multivariate) and takes the supremum
over the ball (rdpsym.derive.balls); the values are compared with the formulas typed here:
alpha Delta^2 lambda_max(Sigma^-1)/2 for Gaussian noise of covariance Sigma on an l2 ball (Rayleigh-Ritz),
and the one-dimensional Laplace divergence at the radius for a product of Laplace coordinates on an l1
ball (Mironov 2017, Prop. 6; the vertex argument)."""

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import AdjacentFamily, Mechanism, ShiftBall, Status, parameter

x1, x2 = sp.symbols("x1 x2", real=True)
t1, t2 = sp.symbols("t1 t2", real=True)
SIGMA = parameter("sigma", typical=(0.5, 5.0), log_scale=True)
RHO = parameter("rho", sp.Interval.open(-1, 1), typical=(-0.5, 0.5))
DELTA = parameter("sensitivity", typical=(0.5, 2.0))


def correlated_gaussian() -> Mechanism:
    s, p = SIGMA.symbol, RHO.symbol

    def normal(m1, m2):
        u1, u2 = x1 - m1, x2 - m2
        return sp.exp(-(u1**2 - 2 * p * u1 * u2 + u2**2) / (2 * s**2 * (1 - p**2))) / (2 * sp.pi * s**2 * sp.sqrt(1 - p**2))

    return Mechanism(name="correlated_gaussian", variable=(x1, x2), support=sp.S.Reals**2,
                     pairs=(AdjacentFamily(normal(0, 0), normal(t1, t2), shift=(t1, t2), over=ShiftBall(2, DELTA.symbol)),),
                     parameters=(SIGMA, RHO, DELTA))


def test_correlated_gaussian_on_an_l2_ball():
    r = rdpsym.rdp(correlated_gaussian(), cache=False)
    assert r.status is Status.CLOSED_FORM, r.reason
    assert r.max_divergence == sp.oo
    with mpmath.workdps(30):
        for rho in (sp.Rational(-1, 2), 0, sp.Rational(3, 5)):
            for a in (sp.Rational(1, 2), 2, 10):
                want = a * sp.Rational(3, 2) ** 2 / (2 * 2**2 * (1 - abs(rho)))  # lambda_max(Sigma^-1) = 1/(s^2 (1 - |rho|))
                got = r.evaluate(a, dps=25, sigma=2, rho=rho, sensitivity=sp.Rational(3, 2))
                assert mpmath.almosteq(got, mpmath.mpf(sp.Float(want, 40)), rel_eps=mpmath.mpf(10) ** -22), (rho, a, got)
            kl = r.evaluate(1, dps=25, sigma=2, rho=rho, sensitivity=sp.Rational(3, 2))
            assert mpmath.almosteq(kl, mpmath.mpf(sp.Float(sp.Rational(9, 4) / (8 * (1 - abs(rho))), 40)),
                                   rel_eps=mpmath.mpf(10) ** -22)


def test_the_supremum_is_attained_in_the_ball():
    """The worst pairs are members of the family: the largest divergence over them is the supremum."""
    m = correlated_gaussian()
    pairs = rdpsym.derive.mechanism_rdp.worst_pairs(m)
    values = {SIGMA.symbol: 1, RHO.symbol: sp.Rational(1, 2), DELTA.symbol: 1}
    best = max(rdpsym.renyi_divergence(p.P.subs(values), p.Q.subs(values), (x1, x2), sp.S.Reals**2).at(2)
               for p in pairs)
    assert sp.simplify(best - 2) == 0  # alpha Delta^2/(2 sigma^2 (1 - rho)) at alpha = 2


@pytest.mark.slow
def test_laplace_product_on_an_l1_ball_is_the_one_dimensional_laplace():
    b = parameter("b", typical=(0.5, 5.0), log_scale=True)
    bs, d = b.symbol, DELTA.symbol

    def lap(m1, m2):
        return sp.exp(-(sp.Abs(x1 - m1) + sp.Abs(x2 - m2)) / bs) / (4 * bs**2)

    m = Mechanism(name="laplace_2d", variable=(x1, x2), support=sp.S.Reals**2,
                  pairs=(AdjacentFamily(lap(0, 0), lap(t1, t2), shift=(t1, t2), over=ShiftBall(1, d)),),
                  parameters=(b, DELTA))
    r = rdpsym.rdp(m, cache=False)
    one = rdpsym.rdp(rdpsym.mechanisms.laplace())
    assert r.status is Status.CLOSED_FORM, r.reason
    with mpmath.workdps(30):
        for a in (sp.Rational(1, 3), 1, 3, sp.oo):
            assert mpmath.almosteq(r.evaluate(a, b=2, sensitivity=1), one.evaluate(a, b=2, sensitivity=1),
                                   rel_eps=mpmath.mpf(10) ** -25)
