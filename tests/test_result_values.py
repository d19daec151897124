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


@pytest.mark.parametrize("b_exponent", [50, 200])
def test_divergences_far_below_the_working_precision_are_never_an_exact_zero(results, b_exponent):
    """Laplace at alpha = 5, sensitivity 5/4, b = 1e50 (D ~ 3.9e-100) and 1e200 (~ 3.9e-400): the closed
    form cancels below evalf's first precisions, where it returns an exact 0 twice in a row."""
    a, s = 5, mpmath.mpf(5) / 4
    with mpmath.workdps(2 * b_exponent + 100):
        b = mpmath.mpf(10) ** b_exponent
        exact = mpmath.log(a / mpmath.mpf(2 * a - 1) * mpmath.exp(s * (a - 1) / b)
                           + (a - 1) / mpmath.mpf(2 * a - 1) * mpmath.exp(-a * s / b)) / (a - 1)
        got = results["laplace"].evaluate(a, dps=30, b=10**b_exponent, sensitivity=sp.Rational(5, 4))
        assert got > 0 and abs(got - exact) <= mpmath.mpf(10) ** -28 * exact
        value = results["laplace"].evaluate_with_error(a, dps=30, b=10**b_exponent, sensitivity=sp.Rational(5, 4))
        assert abs(value.value - exact) <= value.error and value.error <= mpmath.mpf(10) ** -28 * exact


def test_randomized_response_next_to_one_half_is_not_zero(results):
    """p = 1/2 + 1e-60: D_3 ~ 4e-120 (Mironov 2017, Table II), an exact 0 from evalf at 40 and 80 digits."""
    p = sp.Rational(1, 2) + sp.Rational(1, 10**60)
    with mpmath.workdps(400):
        pm = mpmath.mpf(p.p) / p.q
        exact = mpmath.log(pm**3 * (1 - pm) ** -2 + (1 - pm) ** 3 * pm**-2) / 2
        got = results["randomized_response"].evaluate(3, dps=30, p=p)
        assert got > 0 and abs(got - exact) <= mpmath.mpf(10) ** -28 * exact


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


# --------------------------------------------------------------------------------------------------
# ties and boundaries of Max / Min / Piecewise / Abs: the value there (issue 13), never an error or a
# guessed branch. A mechanism with two scales has RDP Max(D(P||Q), D(Q||P)); at equal scales P = Q,
# the two directions tie at 0, and evalf used to raise "The argument '0.e-173' is not comparable".
# --------------------------------------------------------------------------------------------------
X = sp.Symbol("x", real=True)


def _two_scales(kind):
    """The RDP of a two-scale pair, written as a user would: P with scale s1, Q with scale s2."""
    names = {"gaussian": ("sigma1", "sigma2"), "laplace": ("b1", "b2")}[kind]
    p1, p2 = (rdpsym.parameter(n, typical=(0.5, 5.0), log_scale=True) for n in names)
    a, b = p1.symbol, p2.symbol
    if kind == "gaussian":
        P = sp.exp(-X**2 / (2 * a**2)) / sp.sqrt(2 * sp.pi * a**2)
        Q = sp.exp(-X**2 / (2 * b**2)) / sp.sqrt(2 * sp.pi * b**2)
    else:
        P, Q = sp.exp(-sp.Abs(X) / a) / (2 * a), sp.exp(-sp.Abs(X) / b) / (2 * b)
    mech = rdpsym.Mechanism(f"two_{kind}_scales", X, sp.S.Reals, (rdpsym.AdjacentPair(P, Q),), (p1, p2))
    return names, rdpsym.rdp(mech)


def _rr_unit_interval():
    """Randomized response with p in (0, 1): D_oo = Max(log(p/(1-p)), log((1-p)/p)), a tie at p = 1/2."""
    xi = sp.Symbol("x", integer=True, nonnegative=True)
    p = rdpsym.parameter("p", sp.Interval.open(0, 1), typical=(0.1, 0.9))
    s = p.symbol
    pair = rdpsym.AdjacentPair(s**xi * (1 - s) ** (1 - xi), (1 - s) ** xi * s ** (1 - xi))
    return rdpsym.rdp(rdpsym.Mechanism("rr_unit_interval", xi, sp.FiniteSet(0, 1), (pair,), (p,)))


@pytest.fixture(scope="module")
def tie_results():
    return {"gaussian": _two_scales("gaussian"), "laplace": _two_scales("laplace"), "rr": _rr_unit_interval()}


def _mp_two_scales(kind, alpha, s1, s2):
    """max of both directions, by the textbook formulas (independent of rdpsym), at the caller's dps."""
    def one(a, b):
        if kind == "gaussian":
            if alpha == 1:
                return mpmath.log(b / a) + a**2 / (2 * b**2) - mpmath.mpf(1) / 2
            v = alpha * b**2 + (1 - alpha) * a**2
            return mpmath.inf if v <= 0 else (mpmath.log(a ** (1 - alpha) * b**alpha / mpmath.sqrt(v))) / (alpha - 1)
        if alpha == 1:
            return mpmath.log(b / a) + a / b - 1
        v = alpha / a - (alpha - 1) / b
        return mpmath.inf if v <= 0 else mpmath.log(a ** (-alpha) * b ** (alpha - 1) / v) / (alpha - 1)
    return max(one(s1, s2), one(s2, s1))


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_evaluate_at_a_tie_of_two_scales(tie_results, kind):
    (n1, n2), r = tie_results[kind]
    assert r.status is rdpsym.Status.CLOSED_FORM and r.kl.has(sp.Max)
    s = sp.Rational(3, 2)
    # at s1 = s2, P = Q: every order gives 0 (the KL's Max used to raise at this tie)
    for a in (1, 2, sp.Rational(1, 4), sp.Rational(1, 2), 1 + sp.Rational(1, 10**6), 1000, sp.oo):
        assert r.evaluate(a, **{n1: s, n2: s}) == 0, a
        assert r.at(a, **{n1: s, n2: s}) == 0, a
    # next to the tie the Max is decided numerically: 28 digits of an O(eps^2) value
    for eps in (sp.Rational(1, 10**12), sp.Rational(1, 10**40)):
        s2 = s * (1 + eps)
        for a in (sp.Integer(1), sp.Integer(2), sp.Rational(1, 4)):
            with mpmath.workdps(200):
                ref = _mp_two_scales(kind, mpmath.mpf(a.p) / a.q if a != 1 else 1, mpmath.mpf(3) / 2,
                                     mpmath.mpf(3) / 2 * (1 + mpmath.mpf(eps.p) / eps.q))
                got = r.evaluate(a, dps=30, **{n1: s, n2: s2})
                assert ref > 0 and abs(got - ref) <= mpmath.mpf(10) ** -28 * ref, (kind, a, eps, got, ref)


def test_evaluate_randomized_response_max_at_p_one_half(tie_results):
    r = tie_results["rr"]
    assert r.max_divergence.has(sp.Max)
    half = sp.Rational(1, 2)
    for a in (sp.oo, 1, 2, sp.Rational(1, 4)):
        assert r.evaluate(a, p=half) == 0, a
    assert r.at(sp.oo, p=half) == 0
    # just off the tie: D_oo = |log(p/(1-p))| (Mironov 2017, Table II), ~4e-40
    p = half + sp.Rational(1, 10**40)
    with mpmath.workdps(120):
        pm = mpmath.mpf(1) / 2 + mpmath.mpf(10) ** -40
        ref = abs(mpmath.log(pm / (1 - pm)))
        got = r.evaluate(sp.oo, dps=30, p=p)
        assert abs(got - ref) <= mpmath.mpf(10) ** -28 * ref
        got = r.evaluate(sp.oo, dps=30, p=1 - p)  # the other argument of the Max wins
        assert abs(got - ref) <= mpmath.mpf(10) ** -28 * ref


def test_evaluate_laplace_with_abs_and_max_at_ties():
    """A Laplace location pair written with Abs and Max: P = Lap(0, b), Q = Lap(mu, b), mu real.
    D_alpha is Laplace's (Mironov 2017, Table II) in |mu|; the KL and D_oo are the Max over both
    directions, each direction in the form its own derivation gave. At mu = 0 every order is 0 (the
    Max of the two forms, which cancel to 0 only numerically, used to raise)."""
    b = sp.Symbol("b", positive=True)
    mu = sp.Symbol("mu", real=True)
    A = rdpsym.alpha
    d = sp.Abs(mu)
    expr = sp.log(A / (2 * A - 1) * sp.exp((A - 1) * d / b) + (A - 1) / (2 * A - 1) * sp.exp(-A * d / b)) / (A - 1)
    r = rdpsym.DivergenceResult(
        expr=expr, status=rdpsym.Status.CLOSED_FORM, symbols=(b, mu),
        kl=sp.Max(d / b - 1 + sp.exp(-d / b), (sp.Abs(-mu) - b + b * sp.exp(-sp.Abs(-mu) / b)) / b),
        max_divergence=sp.Max(sp.log(b * sp.exp(d / b)) - sp.log(b), mu / b, -mu / b),
        exceptional_points=(rdpsym.derive.result.ExceptionalPoint(sp.Rational(1, 2), -sp.log((2 * b + d) ** 2 * sp.exp(-d / b) / (4 * b**2))),))
    for a in (2, 1, sp.oo, sp.Rational(1, 2), sp.Rational(1, 4)):
        assert r.evaluate(a, b=sp.Rational(3, 2), mu=0) == 0, a
    with mpmath.workdps(150):
        for m in (sp.Rational(-7, 10), sp.Rational(1, 10**30)):
            mm, bb = mpmath.mpf(m.p) / m.q, mpmath.mpf(3) / 2
            ref_kl = abs(mm) / bb - 1 + mpmath.exp(-abs(mm) / bb)
            got = r.evaluate(1, dps=30, b=sp.Rational(3, 2), mu=m)
            assert abs(got - ref_kl) <= mpmath.mpf(10) ** -28 * ref_kl
            assert abs(r.evaluate(sp.oo, dps=30, b=sp.Rational(3, 2), mu=m) - abs(mm) / bb) <= mpmath.mpf(10) ** -28 * abs(mm) / bb
    # exact values: the branch, not an unevaluated Max of two equal numbers
    assert r.at(sp.oo, b=sp.Rational(3, 2), mu=sp.Rational(-7, 10)) == sp.Rational(7, 15)
    assert r.at(1, b=sp.Rational(3, 2), mu=0) == 0


def test_ties_and_boundaries_of_hand_written_branches(monkeypatch):
    """Max/Min ties with nonzero values, a Piecewise condition at its boundary (decided exactly: the
    reflection formula makes gamma(s) gamma(1-s) sin(pi s) - pi exactly 0), and at() returning the
    branch instead of an unevaluated Max."""
    s, t = sp.symbols("s t", positive=True)
    A = rdpsym.alpha
    refl = sp.gamma(s) * sp.gamma(1 - s) * sp.sin(sp.pi * s) - sp.pi

    def R(e):
        return rdpsym.DivergenceResult(expr=A * 0 + e, status=rdpsym.Status.CLOSED_FORM, symbols=(s, t),
                                       kl=e, max_divergence=e)

    third = sp.Rational(1, 3)
    with mpmath.workdps(50):
        log3 = mpmath.log(3)
        # Min of two equal arguments (log(s) - log(t) = log(s/t) = 0 at s = t) plus a nonzero part
        r = R(sp.Min(sp.log(s) - sp.log(t), sp.log(t / s)) + sp.log(1 / s))
        assert abs(r.evaluate(2, s=third, t=third) - log3) <= mpmath.mpf(10) ** -28 * log3
        assert abs(r.evaluate(1, s=third, t=third) - log3) <= mpmath.mpf(10) ** -28 * log3
    # at the boundary of a Piecewise condition: refl > 0 is false (refl = 0 exactly). sympy's first
    # equals() in a process loads its simplification machinery (6-7 s on a loaded machine, over the 5 s
    # limit of one zero test, which then fails safe with "cannot decide"): load it on another instance
    # of the identity, so the limit measures this decision
    fifth = sp.Rational(1, 5)
    assert (sp.gamma(fifth) * sp.gamma(1 - fifth) * sp.sin(sp.pi * fifth) - sp.pi).equals(0)
    r = R(sp.Piecewise((1, refl > 0), (2, True)))
    assert r.evaluate(2, s=third, t=third) == 2
    # at(): the tie of Max(2 log s, log s**2) is 2 log s, not an unevaluated Max
    r = R(sp.Max(2 * sp.log(s), sp.log(s**2)))
    v = r.at(2, s=third, t=1)
    assert not v.has(sp.Max) and sp.simplify(v - 2 * sp.log(third)) == 0
    # a boundary that cannot be decided raises, never a number from a guessed branch
    import rdpsym.derive.evaluation as evaluation

    monkeypatch.setattr(evaluation, "exactly_zero", lambda d, subs: False)
    with pytest.raises(ArithmeticError, match="cannot decide"):
        R(sp.Piecewise((1, refl > 0), (2, True))).evaluate(2, s=third, t=third)
    # ... while a continuous node (Max) at the same undecidable tie still has its value
    assert R(sp.Max(refl, -refl) + 1).evaluate(2, s=third, t=third) == 1


@pytest.mark.unit
def test_an_evaluation_stopped_by_its_hang_guard_says_it_was_a_hang_guard(monkeypatch):
    """RDPSYM_EVAL_SECONDS is a wall-clock guard against a hang, not a budget: when it fires the error says
    which guard, how long, and that no value was taken from it."""
    import time

    class HangingCurve:
        def value(self, result, alpha, values, dps):
            time.sleep(5)
            raise AssertionError("the guard did not fire")

    monkeypatch.setenv("RDPSYM_EVAL_SECONDS", "0.3")
    r = rdpsym.DivergenceResult(expr=None, status=rdpsym.Status.NUMERIC_ONLY, curve=HangingCurve(), label="hangs")
    with pytest.raises(ArithmeticError, match=r"stopped by its hang guard of 0\.3 s of wall clock \(RDPSYM_EVAL_SECONDS"):
        r.evaluate(sp.Rational(5, 2))
