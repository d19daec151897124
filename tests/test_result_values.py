"""DivergenceResult.at / evaluate on bad and extreme inputs: fail closed, name the argument.

Found by an adversarial review: sympy's Rational(nan) is 0, so a NaN parameter used to give a zero
divergence (and epsilon = 0); values outside a parameter's domain gave numbers for mechanisms that do
not exist; parameters rounded to dps + 20 digits lost 1 - p for p = 1 - 1e-60; and evalf returned
log(1 + 1e-60) = 0 at 40 digits.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms


@pytest.fixture(scope="module")
def results():
    return {n: rdpsym.rdp(mechanisms.get(n)) for n in ("laplace", "gaussian", "randomized_response")}


@pytest.mark.parametrize("name, values, match", [
    ("laplace", dict(b=1, sensitivity=float("nan")), "sensitivity must be a number"),
    ("laplace", dict(b=1, sensitivity=np.float64("nan")), "sensitivity must be a number"),
    ("laplace", dict(b=1, sensitivity=float("-inf")), "sensitivity must be finite"),
    ("laplace", dict(b=-1, sensitivity=1), r"b must lie in Interval.open\(0, oo\)"),
    ("laplace", dict(b=float("inf"), sensitivity=1), "b must be finite"),
    ("gaussian", dict(sigma=-1, sensitivity=1), "sigma must lie in"),
    ("gaussian", dict(sigma=1, sensitivity=sp.nan), "sensitivity must be a number"),
    ("randomized_response", dict(p=1), r"p must lie in Interval.open\(1/2, 1\)"),
    ("randomized_response", dict(p="0.5"), r"p must lie in Interval.open\(1/2, 1\)"),
    ("randomized_response", dict(p="x"), "p must be a number"),
    ("laplace", dict(b=1), "no value given for sensitivity"),
])
def test_bad_parameter_values_raise_naming_the_parameter(results, name, values, match):
    r = results[name]
    for call in (lambda: r.evaluate(2, **values), lambda: r.evaluate(1, **values)):
        with pytest.raises(ValueError, match=match):
            call()
    if "no value" not in match:
        with pytest.raises(ValueError, match=match):
            r.at(2, **values)


@pytest.mark.parametrize("alpha, match", [
    (float("nan"), "alpha must be a number"), (np.float64("nan"), "alpha must be a number"),
    (sp.nan, "alpha must be a number"), ("nan", "alpha must be a number"),
    (float("-inf"), "alpha must be > 0"), (0, "alpha must be > 0"), (-1.5, "alpha must be > 0"),
])
def test_bad_orders_raise(results, alpha, match):
    with pytest.raises(ValueError, match=match):
        results["laplace"].evaluate(alpha, b=1, sensitivity=1)
    with pytest.raises(ValueError, match=match):
        results["laplace"].at(alpha, b=1, sensitivity=1)


def test_nan_parameter_never_becomes_a_zero_epsilon(results):
    with pytest.raises(ValueError, match="sensitivity"):
        rdpsym.epsilon(results["gaussian"], 1e-5, sigma=1, sensitivity=float("nan"))


def test_parameters_close_to_a_domain_end_keep_their_digits(results):
    """p = 1 - 1e-60 (exact): randomized response at alpha = 2 is log(p^2/(1-p) + (1-p)^2/p)
    (Mironov 2017, Table II at alpha = 2); at alpha = oo it is log(p/(1-p))."""
    p = 1 - sp.Rational(1, 10**60)
    with mpmath.workdps(80):
        one_minus_p = mpmath.mpf(10) ** -60  # exact; 1 - pm would keep only 20 of 80 digits
        pm = 1 - one_minus_p
        d2 = mpmath.log(pm**2 / one_minus_p + one_minus_p**2 / pm)
        dinf = mpmath.log(pm / one_minus_p)
    with mpmath.workdps(30):
        got2 = results["randomized_response"].evaluate(2, dps=30, p=p)
        got_inf = results["randomized_response"].evaluate(sp.oo, dps=30, p=p)
        assert abs(got2 - d2) <= mpmath.mpf(10) ** -28 * d2
        assert abs(got_inf - dinf) <= mpmath.mpf(10) ** -28 * dinf


def test_tiny_divergences_are_not_rounded_to_zero(results):
    """Laplace at b = 1e30: D_2 = log(2/3 e^(1/b) + 1/3 e^(-2/b)) ~ 1e-60 (Mironov 2017, Table II)."""
    with mpmath.workdps(120):
        b = mpmath.mpf(10) ** 30
        exact = mpmath.log(mpmath.mpf(2) / 3 * mpmath.exp(1 / b) + mpmath.exp(-2 / b) / 3)
    with mpmath.workdps(30):
        got = results["laplace"].evaluate(2, dps=30, b=10**30, sensitivity=1)
        assert got > 0 and abs(got - exact) <= mpmath.mpf(10) ** -28 * exact
        # the KL and the removable point alpha = 1/2 too
        kl = results["laplace"].evaluate(1, dps=30, b=10**30, sensitivity=1)
        assert abs(kl - mpmath.mpf(10) ** -60 / 2) <= mpmath.mpf(10) ** -25 * kl


def test_symbolic_partial_values_still_work(results):
    """at() with some parameters left symbolic is exact algebra, not a number: no error."""
    r = results["laplace"]
    b = r.symbols[0]
    value = r.at(2, sensitivity=1)
    assert value.free_symbols == {b}
    assert math.isclose(float(value.subs(b, 1)), float(r.evaluate(2, b=1, sensitivity=1)), rel_tol=1e-15)


def test_an_exact_zero_evaluates_to_zero():
    """KL(Exp(l1)||Exp(l2)) = log(l1/l2) + l2/l1 - 1 is exactly 0 at l1 = l2; evalf gives digit-less
    Floats there, which must not read as 'still changing' (that broke the registry's exponential KL)."""
    l1, l2 = sp.symbols("l1 l2", positive=True)
    kl = sp.log(l1 / l2) + l2 / l1 - 1
    r = rdpsym.DivergenceResult(expr=rdpsym.alpha * 0 + kl, status=rdpsym.Status.CLOSED_FORM, symbols=(l1, l2), kl=kl)
    assert r.evaluate(1, l1=1.5, l2=1.5) == 0
    assert r.evaluate(2, l1=sp.Rational(3, 2), l2=sp.Rational(3, 2)) == 0
    # and a tiny nonzero value is not mistaken for zero
    with mpmath.workdps(30):
        tiny = r.evaluate(1, l1=sp.Rational(3, 2), l2=sp.Rational(3, 2) + sp.Rational(1, 10**30))
        assert abs(tiny - mpmath.mpf(2) / 9 * mpmath.mpf(10) ** -60) <= mpmath.mpf(10) ** -28 * tiny
