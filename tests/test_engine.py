"""Unit tests of the derivation engine on densities that are not built-in mechanisms."""

import mpmath
import pytest
import sympy as sp

from rdpsym import Status, alpha, renyi_divergence
from rdpsym.derive.checks import DensityError
from rdpsym.derive.pieces import split_support
from rdpsym.numeric import numeric_divergence

x = sp.Symbol("x", real=True)
n = sp.Symbol("n", integer=True)
l1, l2 = sp.symbols("l1 l2", positive=True)


def close(a, b, digits=25):
    with mpmath.workdps(digits + 10):
        return abs(mpmath.mpf(a) - mpmath.mpf(b)) <= mpmath.mpf(10) ** -digits * max(1, abs(mpmath.mpf(b)))


def test_exponential_rates_conditions_are_the_natural_parameter_space():
    r = renyi_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo), cache=False)
    assert r.status is Status.CLOSED_FORM
    # finite iff alpha*l1 + (1-alpha)*l2 > 0: here l1 = 1, l2 = 3 gives alpha < 3/2
    assert r.at(sp.Rational(7, 5), l1=1, l2=3).is_finite
    assert r.at(2, l1=1, l2=3) == sp.oo
    assert r.at(sp.Rational(3, 2), l1=1, l2=3) == sp.oo
    with mpmath.workdps(40):
        for a in (sp.Rational(1, 3), sp.Rational(6, 5), 3):
            num = numeric_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo), a, {"l1": 2, "l2": 1}, dps=40)
            assert num.converged, num.detail
            assert close(r.evaluate(a, dps=40, l1=2, l2=1), num.value)


def test_poisson_sum_in_closed_form():
    P = l1**n * sp.exp(-l1) / sp.factorial(n)
    Q = l2**n * sp.exp(-l2) / sp.factorial(n)
    r = renyi_divergence(P, Q, n, sp.S.Naturals0, cache=False)
    assert r.status is Status.CLOSED_FORM
    assert not r.expr.has(sp.Sum)
    for a in (sp.Rational(1, 2), 3):
        num = numeric_divergence(P, Q, n, sp.S.Naturals0, a, {"l1": 3, "l2": 1}, dps=30)
        assert num.converged, num.detail
        assert close(r.evaluate(a, dps=30, l1=3, l2=1), num.value)


def test_disjoint_mass_gives_infinity_for_alpha_at_least_one():
    P = sp.Piecewise((1, (x > 0) & (x < 1)), (0, True))
    Q = sp.Piecewise((sp.Rational(1, 2), (x > sp.Rational(1, 2)) & (x < sp.Rational(5, 2))), (0, True))
    r = renyi_divergence(P, Q, x, sp.S.Reals, cache=False)
    assert r.at(2) == sp.oo and r.kl == sp.oo and r.max_divergence == sp.oo
    # below 1 the divergence is finite: overlap (1/2, 1) has P = 1, Q = 1/2
    expected = sp.log(sp.Rational(1, 2) * sp.Rational(1, 2) ** (1 - sp.Rational(1, 2))) / (sp.Rational(1, 2) - 1)
    assert sp.simplify(r.at(sp.Rational(1, 2)) - expected) == 0


def test_split_support_orders_kinks_with_assumptions():
    b, s = sp.symbols("b s", positive=True)
    pieces = split_support(sp.exp(-sp.Abs(x) / b), sp.exp(-sp.Abs(x - s) / b), x, sp.S.Reals)
    assert [(p.lo, p.hi) for p in pieces] == [(-sp.oo, 0), (0, s), (s, sp.oo)]


def test_unordered_kinks_fall_back_honestly():
    b = sp.Symbol("b", positive=True)
    m = sp.Symbol("m", real=True)  # sign unknown: 0 and m cannot be ordered
    r = renyi_divergence(sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - m) / b) / (2 * b), x, sp.S.Reals, cache=False)
    assert r.status is Status.NUMERIC_ONLY
    assert "order" in r.reason and r.expr is None


def test_density_that_does_not_integrate_to_one_is_an_error():
    with pytest.raises(DensityError, match="P: does not integrate to 1"):
        renyi_divergence(2 * l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo), cache=False)


def test_negative_density_is_an_error():
    with pytest.raises(DensityError, match="negative"):
        # integrates to 1 on [0, 1] but is negative near x = 1
        renyi_divergence(sp.Rational(5, 2) - 3 * x, sp.Integer(1), x, sp.Interval(0, 1), cache=False)


@pytest.mark.parametrize(
    "args, match",
    [
        ((1, sp.Integer(1), x, sp.S.Reals), "P: must be a sympy expression"),
        ((sp.Integer(1), sp.Integer(1), "x", sp.S.Reals), "x: must be a sympy Symbol"),
        ((sp.Integer(1), sp.Integer(1), x, [0, 1]), "support: must be a sympy Set"),
        ((sp.exp(-sp.Symbol("c") * x), sp.Integer(1), x, sp.Interval(0, 1)), "parameter c: needs assumptions"),
        ((sp.Integer(1), sp.Integer(1), sp.Symbol("y"), sp.Interval(0, 1)), "must be declared real"),
    ],
)
def test_bad_input_names_the_argument(args, match):
    with pytest.raises((TypeError, ValueError), match=match):
        renyi_divergence(*args, cache=False)


def test_alpha_must_be_positive():
    r = renyi_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo))
    with pytest.raises(ValueError, match="alpha must be > 0"):
        r.at(0, l1=1, l2=1)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        r.evaluate(-1, l1=1, l2=1)


def test_cache_returns_the_same_result(tmp_path, monkeypatch):
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    from rdpsym.derive.cache import clear_cache

    P, Q = l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x)
    first = renyi_divergence(P, Q, x, sp.Interval(0, sp.oo))
    assert list(tmp_path.glob("*.pickle"))
    second = renyi_divergence(P, Q, x, sp.Interval(0, sp.oo))
    assert second.expr == first.expr and second.conditions == first.conditions
    assert clear_cache() == 1
    monkeypatch.setenv("RDPSYM_NO_CACHE", "1")
    renyi_divergence(P, Q, x, sp.Interval(0, sp.oo))
    assert not list(tmp_path.glob("*.pickle"))


def test_time_limit_gives_an_honest_status():
    # Cauchy location pair: no closed form within a 1 s step limit
    P = 1 / (sp.pi * (1 + x**2))
    Q = 1 / (sp.pi * (1 + (x - 1) ** 2))
    r = renyi_divergence(P, Q, x, sp.S.Reals, step_seconds=1, cache=False, check_density=False)
    assert r.status in (Status.NUMERIC_ONLY, Status.CLOSED_FORM)
    if r.status is Status.NUMERIC_ONLY:
        assert r.expr is None and r.reason


def test_integral_is_never_a_closed_form():
    r = renyi_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo))
    assert r.status is Status.CLOSED_FORM and not r.expr.has(sp.Integral)
