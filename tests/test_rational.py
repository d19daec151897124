"""The residue rule for ∫_R N/B^m dx (rdpsym/derive/rational.py) against mpmath quadrature at 40 digits."""

import mpmath
import pytest
import sympy as sp

from rdpsym.derive.rational import rational_line_integral

pytestmark = pytest.mark.unit

x = sp.Symbol("x", real=True)
gamma = sp.Symbol("gamma", positive=True)
delta = sp.Symbol("Delta", real=True)
nu = sp.Symbol("nu", positive=True)
s = sp.Symbol("s", positive=True)


def _quadrature(integrand, point):
    f = sp.lambdify(x, integrand.subs(point), modules="mpmath")
    return mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf])


@pytest.mark.parametrize("k", [2, 5, 16])
def test_cauchy_order_k_integrand_by_residues_matches_quadrature(k):
    # P^k Q^(1-k) of Cauchy noise against its shift, without the constant gamma/pi
    coeffs = {sp.log(gamma**2 + (x - delta) ** 2): k - 1, sp.log(gamma**2 + x**2): -k}
    value = rational_line_integral(coeffs, x, -sp.oo, sp.oo, False, 60, (gamma, delta), None)
    assert value is not None and not value.has(sp.I, sp.Integral)
    integrand = (gamma**2 + (x - delta) ** 2) ** (k - 1) / (gamma**2 + x**2) ** k
    with mpmath.workdps(40):
        for point in ({gamma: sp.Rational(3, 2), delta: sp.Rational(7, 5)}, {gamma: sp.Rational(1, 3), delta: 2}):
            want = _quadrature(integrand, point)
            got = mpmath.mpf(sp.N(value.subs(point), 40))
            assert abs(got - want) <= mpmath.mpf(10) ** -30 * abs(want)


def test_student_t_root_with_a_square_root_by_residues_matches_quadrature():
    # the upper root i s sqrt(nu) brings sqrt(nu) in as its own generator of the polynomial ring
    k = 4
    coeffs = {sp.log(nu * s**2 + (x - delta) ** 2): k - 1, sp.log(nu * s**2 + x**2): -k}
    value = rational_line_integral(coeffs, x, -sp.oo, sp.oo, False, 60, (nu, s, delta), None)
    assert value is not None and not value.has(sp.I)
    integrand = (nu * s**2 + (x - delta) ** 2) ** (k - 1) / (nu * s**2 + x**2) ** k
    point = {nu: sp.Rational(5, 2), s: sp.Rational(2, 3), delta: sp.Rational(1, 3)}
    with mpmath.workdps(40):
        want = _quadrature(integrand, point)
        got = mpmath.mpf(sp.N(value.subs(point), 40))
        assert abs(got - want) <= mpmath.mpf(10) ** -30 * abs(want)


def test_a_divergent_integral_is_left_to_the_template():
    # deg N = 2m: the integral diverges, and the rule does not say so itself
    coeffs = {sp.log(gamma**2 + (x - delta) ** 2): 3, sp.log(gamma**2 + x**2): -3}
    assert rational_line_integral(coeffs, x, -sp.oo, sp.oo, False, 60, (gamma, delta), None) is None
