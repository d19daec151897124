"""The logistic pair logistic(0, s) against logistic(Delta, s) (issue #29, item 2).

With u = e^(-x/s), ∫ P^alpha Q^(1-alpha) is a beta-type integral, and D_alpha is elementary for every
alpha > 0: [(1 - alpha) Delta/s + log((e^((2 alpha - 1) Delta/s) - 1)/((2 alpha - 1)(e^(Delta/s) - 1)))]/(alpha - 1),
with a removable singularity at alpha = 1/2 (the Bhattacharyya coefficient e^(d/2) d/(e^d - 1), d = Delta/s).
The formula in independent coefficient symbols has a pole there (Gamma(1 - k s) at k s = 1); the engine
integrates with the actual coefficients instead and keeps the general form with its limit.

Every value is checked against mpmath quadrature of the definition (Mironov 2017, Def. 3), computed
here, inside one ``mpmath.workdps`` block.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym.derive.result import Status
from rdpsym.derive.template import decompose, integrate_template, log_expand

x = sp.Symbol("x", real=True)
S_VALUE, DELTA_VALUE = sp.Rational(13, 10), sp.Rational(7, 10)


def _density(mean, s):
    z = sp.exp(-(x - mean) / s)
    return z / (s * (1 + z) ** 2)


def _mechanism() -> rdpsym.Mechanism:
    s = rdpsym.parameter("s", typical=(0.5, 3.0), meaning="scale")
    delta = rdpsym.parameter("Delta", typical=(0.5, 2.0), meaning="sensitivity")
    pair = rdpsym.AdjacentPair(_density(0, s.symbol), _density(delta.symbol, s.symbol))
    return rdpsym.Mechanism(name="logistic", variable=x, support=sp.S.Reals, pairs=(pair,), parameters=(s, delta))


def _mp_density(t, mean, s):
    z = mpmath.exp(-(t - mean) / s)
    return z / (s * (1 + z) ** 2)


def _quadrature(alpha) -> mpmath.mpf:
    """D_alpha (alpha = 1: the KL) at S_VALUE, DELTA_VALUE by quadrature; call inside workdps."""
    s, d = mpmath.mpf(S_VALUE.p) / S_VALUE.q, mpmath.mpf(DELTA_VALUE.p) / DELTA_VALUE.q

    def p(t, mean):
        return _mp_density(t, mean, s)

    ends = [-mpmath.inf, 0, d, mpmath.inf]
    if alpha == 1:
        return mpmath.quad(lambda t: p(t, 0) * (mpmath.log(p(t, 0)) - mpmath.log(p(t, d))), ends)
    a = mpmath.mpf(alpha.p) / alpha.q
    return mpmath.log(mpmath.quad(lambda t: p(t, 0) ** a * p(t, d) ** (1 - a), ends)) / (a - 1)


def test_half_order_integral_with_the_actual_coefficients():
    """∫ sqrt(P Q) by the template at alpha = 1/2: the formula in independent coefficients has a pole there
    (the u-integrand u**(k s - 1)/((1 + u)(1 + c u)) at k s = 1); the value comes with the actual ones."""
    s, delta = sp.symbols("s Delta", positive=True)
    P, Q = _density(0, s), _density(delta, s)
    half = sp.Rational(1, 2)
    c0, coeffs = decompose(half * log_expand(P) + half * log_expand(Q), x)
    res = integrate_template(coeffs, x, -sp.oo, sp.oo, False, 20)
    assert len(res.cases) == 1
    value = sp.exp(c0) * res.cases[0][0]
    assert not value.has(sp.zoo, sp.nan, sp.Integral, sp.meijerg)
    with mpmath.workdps(40):
        sv, dv = mpmath.mpf(13) / 10, mpmath.mpf(7) / 10
        truth = mpmath.quad(lambda t: mpmath.sqrt(_mp_density(t, 0, sv) * _mp_density(t, dv, sv)),
                            [-mpmath.inf, 0, dv, mpmath.inf])
        got = mpmath.mpf(str(sp.N(value.subs({s: S_VALUE, delta: DELTA_VALUE}), 40)))
        assert abs(got - truth) <= mpmath.mpf(10) ** -30 * truth


@pytest.mark.slow
def test_logistic_pair_has_a_closed_form_for_every_order():
    # a step limit above the default: the check is of the mathematics, not of this machine's load
    r = rdpsym.rdp(_mechanism(), step_seconds=40, cache=False)
    assert r.status is Status.CLOSED_FORM, r.provenance.describe()
    assert not r.expr.has(sp.zoo, sp.nan, sp.Integral, sp.meijerg)
    assert [p.alpha for p in r.exceptional_points] == [sp.Rational(1, 2)]
    assert not any(p.value.has(sp.zoo, sp.nan) for p in r.exceptional_points)
    values = {"s": S_VALUE, "Delta": DELTA_VALUE}
    with mpmath.workdps(40):
        for alpha in (sp.Rational(1, 2), sp.Rational(3, 10), sp.Integer(2), sp.Rational(15, 2), sp.Integer(1)):
            truth = _quadrature(alpha)
            got = r.evaluate(alpha, dps=40, **values)
            assert abs(got - truth) <= mpmath.mpf(10) ** -25 * abs(truth), (alpha, got, truth)
        # the closed form itself next to the removable order (not only the stored limit)
        near = sp.Rational(1, 2) + sp.Rational(1, 10**6)
        truth = _quadrature(near)
        got = r.evaluate(near, dps=40, **values)
        assert abs(got - truth) <= mpmath.mpf(10) ** -25 * abs(truth)
