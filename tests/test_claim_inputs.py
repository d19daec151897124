"""Claims on mechanisms whose inputs used to end a check in an error: vector outputs, domain ends that are
no rational number or depend on another parameter, a family whose supremum is not shown, a normaliser
written as a Sum, a support that depends on a parameter. Each ends in a verdict (issue: no claim ends in
an error), and each verdict is checked against the truth computed here."""

from __future__ import annotations

import mpmath
import sympy as sp

from rdpsym import AdjacentPair, Mechanism, mechanisms, parameter
from rdpsym.claims import Verdict, check_claim

x = sp.Symbol("x", real=True)


def test_a_false_claim_on_a_vector_mechanism_is_refuted():
    """2-D Laplace shifted by (1, 1): D_alpha is twice the one-dimensional Laplace curve (independent
    coordinates), so Table II once is below it."""
    x1, x2 = sp.symbols("x1 x2", real=True)
    b = parameter("b", typical=(0.3, 5.0), log_scale=True)

    def dens(m1, m2):
        return sp.exp(-(sp.Abs(x1 - m1) + sp.Abs(x2 - m2)) / b.symbol) / (4 * b.symbol**2)

    m = Mechanism("laplace_2d", (x1, x2), sp.S.Reals**2, (AdjacentPair(dens(0, 0), dens(1, 1), "shift (1, 1)"),),
                  (b,), title="2-D Laplace, shift (1, 1)")
    once = "log(alpha/(2*alpha-1)*exp((alpha-1)/b) + (alpha-1)/(2*alpha-1)*exp(-alpha/b))/(alpha-1)"
    v = check_claim(m, once, "<=", fixed={"b": 1})
    assert v.verdict is Verdict.REFUTED, str(v)
    ce = v.counterexample
    with mpmath.workdps(30):
        a, bv = mpmath.mpf(sp.Rational(ce.alpha).p) / sp.Rational(ce.alpha).q, mpmath.mpf(1)
        one = mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) / bv) + (a - 1) / (2 * a - 1) * mpmath.exp(-a / bv)) / (a - 1)
        assert 2 * one > one > 0


def test_domain_ends_that_are_no_rational_number_or_depend_on_another_parameter():
    """Gaussian noise N(0, s^2) against N(d, s^2) with d in (0, log 2) and s in (d, oo): D_2 = d^2/s^2."""
    d = parameter("d", sp.Interval.open(0, sp.log(2)), typical=(0.1, 0.6))
    s = parameter("s", sp.Interval.open(d.symbol, sp.oo), typical=(1, 4))

    def dens(m):
        return sp.exp(-(x - m) ** 2 / (2 * s.symbol**2)) / sp.sqrt(2 * sp.pi * s.symbol**2)

    m = Mechanism("gauss_log2", x, sp.S.Reals, (AdjacentPair(dens(0), dens(d.symbol), "shift d"),), (d, s))
    assert check_claim(m, "d**2/s**2", "==", order=2).verdict in (Verdict.PROVED, Verdict.CONFIRMED)
    v = check_claim(m, "d**2/(2*s**2)", "<=", order=2)
    assert v.verdict is Verdict.REFUTED, str(v)


def test_a_family_whose_supremum_is_not_shown_is_inconclusive_not_an_error():
    v = check_claim(mechanisms.get("student_t"), "1", "==", order=sp.oo)
    assert v.verdict is Verdict.INCONCLUSIVE and "not shown" in " ".join(v.evidence), str(v)


def test_a_normaliser_written_as_a_sum_does_not_stop_a_refutation():
    """Discrete Gaussian at sigma = 1/2, order 5/2: the continuous Gaussian's 5 Delta^2/(4 sigma^2) = 5 is
    not its divergence (by the sums here)."""
    v = check_claim(mechanisms.get("discrete_gaussian"), "5/(4*sigma**2)", "==", order="5/2")
    assert v.verdict is Verdict.REFUTED, str(v)
    sigma = mpmath.mpf(sp.Rational(v.counterexample.values["sigma"]).p) / sp.Rational(v.counterexample.values["sigma"]).q
    with mpmath.workdps(30):
        a = mpmath.mpf(5) / 2
        z = mpmath.nsum(lambda k: mpmath.exp(-k**2 / (2 * sigma**2)), [-mpmath.inf, mpmath.inf])
        total = mpmath.nsum(lambda k: mpmath.exp(-(a * k**2 + (1 - a) * (k - 1) ** 2) / (2 * sigma**2)),
                            [-mpmath.inf, mpmath.inf]) / z
        truth = mpmath.log(total) / (a - 1)
        assert abs(truth - 5 / (4 * sigma**2)) > 1e-6


def test_a_support_that_depends_on_a_parameter_is_sampled_at_its_value():
    """U[0, 1] against U[0, theta]: the mechanism's two directions, one of them +oo (theta > 1), so no finite
    claim holds."""
    th = parameter("theta", sp.Interval.open(1, sp.oo), typical=(1.2, 5.0))
    P = sp.Piecewise((1, x <= 1), (0, True))
    m = Mechanism("uniform_scale", x, sp.Interval(0, th.symbol), (AdjacentPair(P, 1 / th.symbol, "U[0,1] vs U[0,theta]"),),
                  (th,))
    v = check_claim(m, "log(theta)", "<=")
    assert v.verdict is Verdict.REFUTED, str(v)
