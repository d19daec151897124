"""Group privacy: exact group curves of additive mechanisms, Mironov 2017 Prop. 2 bounds otherwise."""

from dataclasses import replace

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import alpha
from rdpsym.accounting import group_privacy, is_location_family
from rdpsym.numeric import numeric_divergence

M = rdpsym.mechanisms


def test_gaussian_group_curve_is_exact():
    g = M.get("gaussian")
    sigma, d = g.params["sigma"], g.params["sensitivity"]
    for k in (2, 3):
        r = group_privacy(g, k)
        assert r.status is rdpsym.Status.CLOSED_FORM
        assert sp.simplify(r.expr - k**2 * alpha * d**2 / (2 * sigma**2)) == 0  # Mironov 2017, Prop. 7, mu = k*sensitivity


def test_laplace_group_curve_matches_numeric_shifted_pair():
    lap = M.get("laplace")
    r = group_privacy(lap, 3)
    assert r.status is rdpsym.Status.CLOSED_FORM and is_location_family(lap)
    x, b = lap.variable, lap.params["b"]
    P = sp.exp(-sp.Abs(x) / b) / (2 * b)
    Q = sp.exp(-sp.Abs(x - 3) / b) / (2 * b)
    with mpmath.workdps(30):
        for a in (sp.Rational(3, 2), 4):
            got = r.evaluate(a, b=2, sensitivity=1)
            ref = numeric_divergence(P, Q, x, sp.S.Reals, a, {"b": 2}, dps=30).value
            assert abs(got - ref) <= mpmath.mpf(10) ** -25 * ref
        assert r.evaluate(sp.oo, b=2, sensitivity=1) == mpmath.mpf(3) / 2  # pure DP: k/b


def test_randomized_response_gets_the_prop2_bound():
    rr = M.get("randomized_response")
    base = rdpsym.rdp(rr)
    for k, c in ((2, 1), (3, 2), (4, 2), (5, 3)):
        r = group_privacy(rr, k)
        assert r.status is rdpsym.Status.BOUND and "Prop. 2" in r.reason
        assert sp.simplify(r.expr - 3**c * base.expr.subs(alpha, 2**c * alpha)) == 0
        with mpmath.workdps(30):
            assert r.evaluate(sp.Rational(3, 2), p=sp.Rational(3, 4)) == mpmath.inf  # no claim below alpha = 2
            v = r.evaluate(3, p=sp.Rational(3, 4))
            assert abs(v - 3**c * base.evaluate(3 * 2**c, p=sp.Rational(3, 4))) <= mpmath.mpf(10) ** -28 * v


def test_bound_holds_against_exact_group_curves_and_a_too_small_constant_fails():
    for name, vals, ks in (("gaussian", {"sigma": 2, "sensitivity": 1}, (2, 3)), ("laplace", {"b": 1, "sensitivity": 1}, (3,))):
        mech = M.get(name)
        for k in ks:
            exact = group_privacy(mech, k)
            bound = group_privacy(rdpsym.rdp(mech), k)  # a bare curve always gets Prop. 2
            c = (k - 1).bit_length()
            weak = replace(bound, expr=bound.expr / 3**c * 2**c / 2)  # constant (2^c)/2 instead of 3^c
            violated = False
            with mpmath.workdps(30):
                for a in (2, 3, 8, 32):
                    e = exact.evaluate(a, **vals)
                    assert bound.evaluate(a, **vals) >= e
                    violated |= weak.evaluate(a, **vals) < e
            assert violated, (name, k)


def test_k_is_validated():
    g = M.get("gaussian")
    for bad in (0, -1, 1.5, True, "2", None):
        with pytest.raises(ValueError, match="k must"):
            group_privacy(g, bad)
    assert group_privacy(g, 1).expr == rdpsym.rdp(g).expr
    with pytest.raises(TypeError, match="mechanism"):
        group_privacy("gaussian", 2)
