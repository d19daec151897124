"""Composition (Mironov 2017, Prop. 1; Prop. 7 for the Gaussian) and its numerical check."""

from dataclasses import replace

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym.accounting import check_composition, compose
from rdpsym.derive.result import Provenance

M = rdpsym.mechanisms


@pytest.fixture(scope="module")
def rdps():
    return {n: rdpsym.rdp(M.get(n)) for n in ("gaussian", "laplace", "randomized_response")}


def test_self_composition_is_k_times_the_curve(rdps):
    for name, base in rdps.items():
        c = rdpsym.compose(M.get(name), counts=5)
        assert c.status is rdpsym.Status.CLOSED_FORM
        assert sp.simplify(c.expr - 5 * base.expr) == 0
        assert sp.simplify(c.kl - 5 * base.kl) == 0
        assert c.symbols == base.symbols  # repetitions share the parameters


def test_prop7_n_fold_gaussian_equals_one_gaussian_with_sigma_over_sqrt_n(rdps):
    g = M.get("gaussian")
    sigma = g.params["sigma"]
    for n in (2, 7, 100):
        composed = rdpsym.compose(g, counts=n)
        assert sp.simplify(composed.expr - rdps["gaussian"].expr.subs(sigma, sigma / sp.sqrt(n))) == 0
        with mpmath.workdps(30):
            for a in (sp.Rational(3, 2), 4, 1):
                lhs = composed.evaluate(a, sigma=3, sensitivity=1)
                rhs = rdps["gaussian"].evaluate(a, sigma=3 / sp.sqrt(n), sensitivity=1)
                assert abs(lhs - rhs) <= mpmath.mpf(10) ** -28 * abs(rhs)
    # and it fails when the scaling is wrong
    assert sp.simplify(rdpsym.compose(g, counts=4).expr - rdps["gaussian"].expr.subs(sigma, sigma / 4)) != 0


def test_heterogeneous_composition_renames_and_sums(rdps):
    c = rdpsym.compose(M.get("gaussian"), M.get("laplace"), M.get("gaussian"), counts=[2, 1, 3])
    assert [s.name for s in c.symbols] == ["sigma_1", "sensitivity_1", "b_2", "sensitivity_2", "sigma_3", "sensitivity_3"]
    assert all(s.is_positive for s in c.symbols)
    g, lap = rdps["gaussian"], rdps["laplace"]
    with mpmath.workdps(30):
        for a in (sp.Rational(3, 2), 2, 1, sp.Rational(1, 2), sp.oo):
            got = c.evaluate(a, sigma_1=2, sensitivity_1=1, b_2=3, sensitivity_2=1, sigma_3=5, sensitivity_3=2)
            want = (2 * g.evaluate(a, sigma=2, sensitivity=1) + lap.evaluate(a, b=3, sensitivity=1)
                    + 3 * g.evaluate(a, sigma=5, sensitivity=2))
            assert got == want == mpmath.inf if want == mpmath.inf else abs(got - want) <= mpmath.mpf(10) ** -28 * want
    # the Laplace removable point alpha = 1/2 survives composition
    assert [p.alpha for p in c.exceptional_points] == [sp.Rational(1, 2)]
    assert "Prop. 1" in c.provenance.describe()


def test_unknown_structure_makes_the_sum_a_bound(rdps):
    opaque = replace(rdps["gaussian"], provenance=Provenance())  # no proof that one direction suffices
    assert rdpsym.compose(opaque, rdps["laplace"]).status is rdpsym.Status.BOUND
    assert rdpsym.compose(opaque, counts=3).status is rdpsym.Status.CLOSED_FORM  # self-composition stays exact


def test_compose_validates_its_input():
    g = M.get("gaussian")
    for bad in ([-1], [1, 2], 1.5, True, [0], "2"):
        with pytest.raises(ValueError, match="counts"):
            compose(g, counts=bad)
    with pytest.raises(ValueError, match="at least one"):
        compose()
    with pytest.raises(TypeError, match="items"):
        compose(g, "laplace")


def test_check_composition_discrete_exact_sum():
    rr = M.get("randomized_response")
    rep = check_composition(rr, rr, {"p": sp.Rational(3, 4)}, {"p": sp.Rational(3, 5)}, alphas=(sp.Rational(3, 2), 2, 7))
    assert rep.verdict, rep.detail
    assert rep.worst_margin <= rep.tolerance


def test_check_composition_continuous_2d():
    rep = check_composition(M.get("laplace"), M.get("gaussian"), {"b": 1, "sensitivity": 1},
                            {"sigma": 2, "sensitivity": 1}, alphas=(2,))
    assert rep.verdict, rep.detail
    assert rep.worst_margin <= rep.tolerance


def test_check_composition_catches_a_wrong_sum():
    rr = M.get("randomized_response")
    pair = (rr.pairs[0].P, rr.pairs[0].Q, rr.variable, rr.support)
    r = rdpsym.renyi_divergence(*pair, params=rr.parameters, label=f"D_alpha(P||Q) [{rr.pairs[0].label}]")
    right = compose(r, r)
    off_by_a_bit = replace(right, expr=right.expr * sp.Rational(1001, 1000))
    max_not_sum = replace(right, expr=sp.Max(*right.expr.args))
    vals = ({"p": sp.Rational(3, 4)}, {"p": sp.Rational(2, 3)})
    assert check_composition(rr, rr, *vals, claimed=right).verdict
    for wrong in (off_by_a_bit, max_not_sum):
        rep = check_composition(rr, rr, *vals, claimed=wrong)
        assert not rep.verdict and rep.worst_margin > rep.tolerance


@pytest.mark.slow
@pytest.mark.parametrize("first, second, v1, v2", [
    ("gaussian", "gaussian", {"sigma": 1, "sensitivity": 1}, {"sigma": 2, "sensitivity": 1}),
    ("laplace", "laplace", {"b": sp.Rational(1, 2), "sensitivity": 1}, {"b": 3, "sensitivity": 2}),
    ("laplace", "gaussian", {"b": 1, "sensitivity": 1}, {"sigma": sp.Rational(1, 2), "sensitivity": 1}),
])
def test_check_composition_sweep(first, second, v1, v2):
    rep = check_composition(M.get(first), M.get(second), v1, v2, alphas=(sp.Rational(1, 2), sp.Rational(3, 2), 2, 5))
    assert rep.verdict, rep.detail
