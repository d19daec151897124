"""rdpsym.strategies: orders and parameter values for users' property tests."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import find, given, settings

import rdpsym
from rdpsym import mechanisms
from rdpsym import strategies as rs
from rdpsym.verification import Point, VerificationStatus, verify

LAPLACE = mechanisms.laplace()
RR = mechanisms.randomized_response()


@given(rs.orders())
def test_orders_stay_in_range_and_avoid_one(a):
    assert isinstance(a, float) and 1e-3 <= a <= 1e3 and a != 1.0


@given(rs.orders(below_one=False, near_one=False, max_value=50))
def test_orders_above_one_only(a):
    assert 1 < a <= 50


@pytest.mark.parametrize("target,where", [
    (1 + 1e-6, "near one"), (1 - 1e-6, "just below one"), (1000.0, "largest order"),
])
def test_orders_reach_the_edge_regimes(target, where):
    assert find(rs.orders(), lambda a: a == target) == target, where


def test_orders_reach_small_exceptional_one_and_infinity():
    s = rs.orders(exceptional=[0.5], include_one=True, include_infinity=True)
    assert find(s, lambda a: 0 < a < 0.01) < 0.01
    assert find(s, lambda a: a == 0.5 + 1e-6) == 0.5 + 1e-6
    assert find(s, lambda a: a == 1.0) == 1.0
    assert find(s, lambda a: a == math.inf) == math.inf


@given(rs.parameters(LAPLACE))
def test_parameter_values_lie_in_domains(values):
    assert set(values) == {"b", "sensitivity"}
    for name, v in values.items():
        assert LAPLACE.parameter_by_name[name].domain.contains(sp.Rational(v)) is sp.true


@given(rs.parameters(RR))
def test_bounded_domain_is_respected(values):
    assert 0.5 < values["p"] < 1


def test_parameters_reach_tiny_and_huge_scales_and_domain_edges():
    s = rs.parameters(LAPLACE)
    assert find(s, lambda v: v["b"] <= 0.001)["b"] == pytest.approx(0.001)
    assert find(s, lambda v: v["b"] >= 1000)["b"] == pytest.approx(1000)
    assert find(rs.parameters(RR), lambda v: v["p"] > 0.999)["p"] < 1
    # without edges, only the typical range
    assert find(rs.parameters(LAPLACE, edges=False), lambda v: True)["b"] >= 0.1


@given(rs.parameters(LAPLACE, fixed={"sensitivity": 1}))
def test_fixed_values_are_pinned(values):
    assert values["sensitivity"] == 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="orders"):
        rs.orders(min_value=0)
    with pytest.raises(ValueError, match="orders"):
        rs.orders(min_value=5, max_value=2)
    with pytest.raises(ValueError, match="fixed"):
        rs.parameters(LAPLACE, fixed={"nope": 1})
    with pytest.raises(ValueError, match="param"):
        rs.parameter_values("b")


@settings(max_examples=6)
@given(rs.points(mechanisms.gaussian(), max_value=200, edges=False))
def test_users_can_verify_at_drawn_points(table_ii, point):
    """The intended use: a property test of a closed form at drawn (alpha, values). (With edges=True
    hypothesis finds sigma = 0.005, sensitivity = 200, alpha = 1 - 1e-5 where the numerics fail:
    see test_verify.py::test_gaussian_extreme_near_one.)"""
    a, values = point
    mech, result = table_ii["gaussian"]
    p = Point(sp.Rational(a), tuple(sorted((k, sp.Rational(v)) for k, v in values.items())), "hypothesis")
    report = verify(result, mechanism=mech, points=[p])
    assert report.status is VerificationStatus.VERIFIED, report.describe()


def test_top_level_attribute():
    assert rdpsym.strategies is rs
