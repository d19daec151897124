"""The numeric value of a curve is the maximum over its directions, with one convergence rule.

Mironov 2017 (arXiv:1702.07476 v3), Def. 4: a mechanism's RDP curve is the maximum over its adjacent
pairs and both directions. A direction whose value could not be computed (not converged, failed) might
hold that maximum, so it fails the maximum; the one exception is a converged +oo, which is the maximum
whatever the other directions are. Derivation, verification, claim checks and the accountant all take
their numeric values from :func:`rdpsym.numeric.maximum.numeric_maximum`.
"""

from __future__ import annotations

import math
import pickle

import mpmath
import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym.claims.target import Target
from rdpsym.numeric.maximum import Direction, bound_maximum, maximum_of, numeric_maximum
from rdpsym.numeric.value import NumericValue

x = sp.Symbol("x", real=True)


def normal(mean, scale=1):
    return sp.exp(-(x - mean) ** 2 / (2 * scale**2)) / sp.sqrt(2 * sp.pi * scale**2)


#: D_alpha(N(0,1) || N(1,1)) = alpha / 2 (Mironov 2017, Prop. 7): converges
SHIFT = Direction(normal(0), normal(1), x, sp.S.Reals, "shift")
#: P^alpha Q^(1-alpha) = exp(x^2 (alpha/4 - 1/2)) / ... for N(0, 4) against N(0, 1): +oo for alpha >= 2,
#: detected (the integrand grows without bound), so a converged +oo
WIDE = Direction(normal(0, 2), normal(0), x, sp.S.Reals, "wide")
#: a "density" that is negative for x < 5: the numeric path cannot compute it (failed, not converged)
BROKEN = Direction(normal(0) * (x - 5), normal(1), x, sp.S.Reals, "broken")


def value(v, error=0, converged=True):
    return NumericValue(mpmath.mpf(v), mpmath.mpf(error), 30, "test", converged, "detail of the test value")


# -- the rule on evaluations ----------------------------------------------------------------------
def test_every_part_converged_gives_the_largest_value_and_the_largest_error():
    found = maximum_of([("a", value(1, 1e-20)), ("b", value(2, 1e-25))])
    assert found.converged and found.value == 2 and found.error == mpmath.mpf(1e-20)
    assert found.top[0] == "b"


def test_a_part_that_did_not_converge_fails_the_maximum_even_below_a_converged_one():
    # the failed part's value (0) is below the converged one's, and it still counts against the maximum
    found = maximum_of([("converged", value(2, 1e-25)), ("failed", NumericValue.failed(30, "no value"))])
    assert not found.converged
    assert [label for label, _ in found.failures] == ["failed"]
    assert "no value" in found.describe_failures()
    assert found.upper_bound() == math.inf  # the accountant's float: no claim


def test_a_converged_infinity_wins_over_parts_that_did_not_converge():
    found = maximum_of([("failed", NumericValue.failed(30, "no value")), ("infinite", NumericValue.infinite(30, "P > 0 = Q"))])
    assert found.converged and found.value == mpmath.inf and found.error == 0
    assert found.top[0] == "infinite" and found.upper_bound() == math.inf


def test_an_infinity_that_did_not_converge_wins_nothing():
    found = maximum_of([("converged", value(2)), ("inf, not converged", value(mpmath.inf, 0, converged=False))])
    assert not found.converged


def test_a_maximum_over_nothing_is_no_value():
    assert not maximum_of([]).converged


def test_the_float_bound_is_the_largest_value_plus_error_rounded_up():
    found = maximum_of([("a", value(1, mpmath.mpf(2) ** -60)), ("b", value("0.5", "0.25"))])
    bound = found.upper_bound()
    with mpmath.workdps(40):
        assert mpmath.mpf(bound) >= 1 + mpmath.mpf(2) ** -60 and bound == math.nextafter(1.0, math.inf)


def test_float_bounds_of_many_orders_follow_the_same_rule():
    got = bound_maximum([np.array([1.0, np.nan, 3.0]), np.array([2.0, 0.5, np.inf])])
    assert got.tolist() == [2.0, math.inf, math.inf]  # NaN (no value) counts against, +oo wins
    with pytest.raises(ValueError, match="no directions"):
        bound_maximum([])


# -- the rule on directions ------------------------------------------------------------------------
def test_numeric_maximum_fails_when_one_direction_cannot_be_computed():
    alone = numeric_maximum((SHIFT,), 3, {}, 15)
    with mpmath.workdps(30):
        assert alone.converged and abs(alone.value - mpmath.mpf(3) / 2) < mpmath.mpf(10) ** -12
    found = numeric_maximum((SHIFT, BROKEN), 3, {}, 15)
    assert not found.converged and [label for label, _ in found.failures] == ["broken"]


def test_numeric_maximum_is_infinite_when_a_direction_is_a_converged_infinity():
    found = numeric_maximum((BROKEN, SHIFT, WIDE), 3, {}, 15)
    assert found.converged and found.value == mpmath.inf and found.top[0] == "wide"


def test_numeric_maximum_names_its_methods():
    with pytest.raises(ValueError, match="method must be one of"):
        numeric_maximum((SHIFT,), 3, {}, 15, method="quad")


# -- the callers -----------------------------------------------------------------------------------
def test_a_result_whose_direction_cannot_be_computed_raises_instead_of_returning_a_number():
    P, Q = BROKEN.P, BROKEN.Q
    r = rdpsym.DivergenceResult(expr=None, status=rdpsym.Status.NUMERIC_ONLY, pair=(P, Q, x, sp.S.Reals))
    with pytest.raises(ArithmeticError, match="did not converge"):
        r.evaluate(sp.Rational(5, 2), dps=10)
    # at an integer order the exact piece is derived on request: a "density" negative somewhere gives no
    # real value there either, and that is an error too, never a number
    with pytest.raises(ArithmeticError, match="exact value at alpha=3"):
        r.evaluate(3, dps=10)


def test_a_claim_check_does_not_keep_the_other_direction_when_one_did_not_converge():
    """Claims used to keep the largest value among the directions and report it converged when that
    one had: a direction that did not converge was dropped, and the check failed open."""
    result = rdpsym.DivergenceResult(expr=sp.Integer(0), status=rdpsym.Status.CLOSED_FORM)
    both = Target(result, (), ((SHIFT.P, SHIFT.Q, x, sp.S.Reals), (BROKEN.P, BROKEN.Q, x, sp.S.Reals)))
    v, _, converged, detail = both.independent(None, sp.Integer(3), {}, dps=15)
    assert converged is False and "negative" in detail
    alone = Target(result, (), ((SHIFT.P, SHIFT.Q, x, sp.S.Reals),))
    v, _, converged, _ = alone.independent(None, sp.Integer(3), {}, dps=15)
    with mpmath.workdps(30):
        assert converged is True and abs(v - mpmath.mpf(3) / 2) < mpmath.mpf(10) ** -12


def test_directions_are_data_that_survive_pickling():
    found = pickle.loads(pickle.dumps(SHIFT)).maximum(2, {}, 15)
    with mpmath.workdps(30):
        assert found.converged and abs(found.value - 1) < mpmath.mpf(10) ** -12


def test_the_shift_that_changes_nothing_is_an_exact_zero_and_the_family_maximum_converges():
    """At t = 0 the family's pair is P = P, whose divergence is exactly 0; quadrature only approaches 0
    and never meets a relative tolerance there, which used to fail the whole maximum next to alpha = 1
    (the Gaussian's sensitivity family at alpha = 1 + 1.4e-10, drawn by a property test)."""
    import sympy as sp

    from rdpsym import mechanisms
    from rdpsym.numeric.families import supremum_over_family

    m = mechanisms.get("gaussian")
    (family,) = m.families
    a = 1 + sp.Rational(1374987, 10**16)
    found = supremum_over_family(family, m.variable, m.support, a, {"sigma": 1, "sensitivity": 1})
    at_zero = [ev for shift, _, ev in found.evaluations if shift == 0]
    assert len(at_zero) == 2 and all(ev.converged and ev.value == 0 and ev.error == 0 for ev in at_zero)
    assert found.converged
    with mpmath.workdps(40):
        exact = mpmath.mpf(a.p) / a.q / 2  # alpha * sensitivity**2 / (2 sigma**2) at |t| = 1
        assert abs(found.value - exact) <= 1e-25 * exact


def test_a_pair_that_is_one_distribution_at_the_values_is_an_exact_zero_in_both_methods():
    """Poisson(mu1) against Poisson(mu2) at mu1 = mu2: the KL sum's terms are all exactly 0, and the term-by-
    term sum never met its relative tail criterion (the regression registry's poisson/kl certificate had
    no binding point and was searched again on every run). Both methods, every order, give 0 exactly."""
    import sympy as sp

    from rdpsym.numeric import numeric_divergence
    from rdpsym.numeric.reference import reference_divergence

    k = sp.Symbol("k", integer=True, nonnegative=True)
    mu1, mu2 = sp.symbols("mu1 mu2", positive=True)
    P, Q = mu1**k * sp.exp(-mu1) / sp.factorial(k), mu2**k * sp.exp(-mu2) / sp.factorial(k)
    same = {"mu1": sp.Rational(1, 2), "mu2": sp.Rational(1, 2)}
    for a in (sp.Integer(1), sp.Rational(1, 3), sp.Integer(7), sp.oo):
        got = numeric_divergence(P, Q, k, sp.Naturals0, a, same, dps=30)
        assert got.converged and got.value == 0 and got.error == 0, (a, got)
        if a != sp.oo:
            ref = reference_divergence(P, Q, k, sp.Naturals0, a, same, dps=30)
            assert ref.converged and ref.value == 0 and ref.error == 0, (a, ref)
    # the identity is structural: distinct values are still summed, and the value is positive
    got = numeric_divergence(P, Q, k, sp.Naturals0, sp.Integer(1), {"mu1": sp.Rational(1, 2), "mu2": sp.Rational(3, 2)}, dps=30)
    with mpmath.workdps(40):
        exact = mpmath.mpf(1) / 2 * mpmath.log(mpmath.mpf(1) / 3) + 1
        assert got.converged and abs(got.value - exact) <= mpmath.mpf(10) ** -25 * exact
