"""Fail fast (issue 15, item 3): pairs outside the exponential-family template are reported as
"no closed form" from the structure of their integrands, without running the integrator, and every
derivation keeps to its time budget.

The families are written as a user writes a mechanism file: Cauchy, Student t (nu = 3 and symbolic nu),
the generalised Gaussian exp(-|x/s|**p) (p = 3 and symbolic p) and the Skellam pmf, each against its
own shift. Pairs that the template derives must never be ruled out (the second group). Speed is
measured in benchmarks/derive_fail_fast.py, not here: these tests check what was decided and that the
integrator was not called; the one timed check is marked slow.
"""

from __future__ import annotations

import time

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import Status
from rdpsym.derive import general_order as general_order_module
from rdpsym.derive import stages
from rdpsym.derive.applicability import general_order_obstruction, kl_obstruction
from rdpsym.derive.cache import cacheable
from rdpsym.derive.pieces import split_support
from rdpsym.derive.template import decompose, integrate_template, log_expand
from rdpsym.numeric import numeric_divergence

x = sp.Symbol("x", real=True)
k = sp.Symbol("k", integer=True)
G, D, S, MU, NU, PW = sp.symbols("gamma sensitivity scale mu nu p", positive=True)
R = sp.Rational


def cauchy(m):
    return G / (sp.pi * (G**2 + (x - m) ** 2))


def student_t(m, nu=3):
    nu = sp.Integer(nu) if isinstance(nu, int) else nu
    return sp.gamma((nu + 1) / 2) / (sp.sqrt(nu * sp.pi) * sp.gamma(nu / 2)) * (1 + (x - m) ** 2 / nu) ** (-(nu + 1) / 2)


def gen_gaussian(m, p=3, s=S):
    p = sp.Integer(p) if isinstance(p, int) else p
    return p / (2 * s * sp.gamma(1 / p)) * sp.exp(-sp.Abs((x - m) / s) ** p)


def skellam(shift):
    return sp.exp(-2 * MU) * sp.besseli(k - shift, 2 * MU)


#: name -> (P, Q, variable, support, words the general order's reason must contain, KL ruled out too)
FAMILIES = {
    "cauchy": (cauchy(0), cauchy(D), x, sp.S.Reals, ("product of", "gamma**2 + x**2"), True),
    "student t nu=3": (student_t(0), student_t(D), x, sp.S.Reals, ("product of", "x**2 + 3"), True),
    "student t nu": (student_t(0, NU), student_t(D, NU), x, sp.S.Reals, ("product of", "nu + x**2"), True),
    "generalised gaussian p=3": (gen_gaussian(0), gen_gaussian(D), x, sp.S.Reals, ("polynomial part", "degree 3"), False),
    "generalised gaussian p": (gen_gaussian(0, PW), gen_gaussian(D, PW), x, sp.S.Reals,
                               ("non-integer powers", "linear forms"), True),
    "skellam": (skellam(0), skellam(1), k, sp.S.Integers, ("product of", "besseli(k, 2*mu)", "besseli(k - 1, 2*mu)"), True),
}
FAST_FOUR = ("cauchy", "student t nu=3", "generalised gaussian p=3", "skellam")


@pytest.mark.parametrize("name", FAMILIES)
def test_the_structure_rules_the_family_out(name):
    P, Q, var, support, words, kl_too = FAMILIES[name]
    pieces = split_support(P, Q, var, support)
    reason = general_order_obstruction(pieces, var, 20)
    assert reason is not None
    for word in words:
        assert word in reason, reason
    kl_reason = kl_obstruction(pieces, var, 20)
    assert (kl_reason is not None) is kl_too, kl_reason


b1, b2, l1, l2, a1, a2, m1, m2 = sp.symbols("b1 b2 l1 l2 a1 a2 m1 m2", positive=True)
c1, c2 = sp.symbols("c1 c2", positive=True)
q1, q2 = sp.symbols("q1 q2", positive=True)
n = sp.Symbol("n", integer=True, positive=True)
TEMPLATE_PAIRS = {
    "laplace location": (sp.exp(-sp.Abs(x) / b1) / (2 * b1), sp.exp(-sp.Abs(x - D) / b1) / (2 * b1), x, sp.S.Reals),
    "gaussian mean and variance": (sp.exp(-x**2 / (2 * b1**2)) / sp.sqrt(2 * sp.pi * b1**2),
                                   sp.exp(-(x - D)**2 / (2 * b2**2)) / sp.sqrt(2 * sp.pi * b2**2), x, sp.S.Reals),
    "gamma": (l1**a1 * x**(a1 - 1) * sp.exp(-l1 * x) / sp.gamma(a1), l2**a2 * x**(a2 - 1) * sp.exp(-l2 * x) / sp.gamma(a2),
              x, sp.Interval(0, sp.oo)),
    "beta": (x**(a1 - 1) * (1 - x)**(a2 - 1) / sp.beta(a1, a2), x**(b1 - 1) * (1 - x)**(b2 - 1) / sp.beta(b1, b2),
             x, sp.Interval(0, 1)),
    "weibull scales": (a1 / l1 * (x / l1)**(a1 - 1) * sp.exp(-(x / l1)**a1), a1 / l2 * (x / l2)**(a1 - 1) * sp.exp(-(x / l2)**a1),
                       x, sp.Interval(0, sp.oo)),
    "inverse gaussian": (sp.sqrt(l1 / (2 * sp.pi * x**3)) * sp.exp(-l1 * (x - m1)**2 / (2 * m1**2 * x)),
                         sp.sqrt(l1 / (2 * sp.pi * x**3)) * sp.exp(-l1 * (x - m2)**2 / (2 * m2**2 * x)), x, sp.Interval(0, sp.oo)),
    "log-normal": (sp.exp(-(sp.log(x) - m1)**2 / 2) / (x * sp.sqrt(2 * sp.pi)), sp.exp(-(sp.log(x) - m2)**2 / 2) / (x * sp.sqrt(2 * sp.pi)),
                   x, sp.Interval(0, sp.oo)),
    "gumbel": (sp.exp(-x / b1 - sp.exp(-x / b1)) / b1, sp.exp(-x / b2 - sp.exp(-x / b2)) / b2, x, sp.S.Reals),
    "poisson": (sp.exp(-l1) * l1**k / sp.factorial(k), sp.exp(-l2) * l2**k / sp.factorial(k), k, sp.S.Naturals0),
    "binomial": (sp.binomial(n, k) * (q1 / (1 + q1))**k * (1 / (1 + q1))**(n - k),
                 sp.binomial(n, k) * (q2 / (1 + q2))**k * (1 / (1 + q2))**(n - k), k, sp.Range(0, n + 1)),
    # left to the integrator on purpose: two binomials b + x**n are two Meijer G-functions, a single
    # power x**3 is a gamma integral, one factor (1 + x**2)**c alone is a beta integral
    "cauchy scales": (c1 / (sp.pi * (c1**2 + x**2)), c2 / (sp.pi * (c2**2 + x**2)), x, sp.S.Reals),
    "generalised gaussian scales p=3": (gen_gaussian(0, 3, b1), gen_gaussian(0, 3, b2), x, sp.S.Reals),
    "pearson VII shapes": ((1 + x**2)**(-a1 - R(1, 2)) * sp.gamma(a1 + R(1, 2)) / (sp.sqrt(sp.pi) * sp.gamma(a1)),
                           (1 + x**2)**(-a2 - R(1, 2)) * sp.gamma(a2 + R(1, 2)) / (sp.sqrt(sp.pi) * sp.gamma(a2)), x, sp.S.Reals),
}


@pytest.mark.parametrize("name", TEMPLATE_PAIRS)
def test_template_families_are_never_ruled_out(name):
    P, Q, var, support = TEMPLATE_PAIRS[name]
    pieces = split_support(P, Q, var, support)
    assert general_order_obstruction(pieces, var, 20) is None
    assert kl_obstruction(pieces, var, 20) is None


def _record_calls(monkeypatch):
    """Replace the general order's integrator and the direct KL by recorders that fail loudly."""
    calls = []

    def regime_integral(*args, **kwargs):
        calls.append("general order integrated")
        raise AssertionError("the general order was integrated")

    def kl_divergence(*args, **kwargs):
        calls.append("KL integrated")
        raise stages.DerivationError("KL integrated (test recorder)")

    monkeypatch.setattr(general_order_module, "regime_integral", regime_integral)
    monkeypatch.setattr(stages, "kl_divergence", kl_divergence)
    return calls


@pytest.mark.parametrize("name", FAST_FOUR)
def test_the_engine_says_no_closed_form_without_integrating(name, monkeypatch):
    """The stages up to the KL, cold: the general order (and the KL where it is ruled out too) is
    decided from the structure alone, and the reason and the provenance say why."""
    P, Q, var, support, words, kl_too = FAMILIES[name]
    calls = _record_calls(monkeypatch)
    d = stages.Derivation(P, Q, var, support, None, 20.0, False)
    stages.run_stages(d, (stages.split, stages.applicability, stages.general, stages.kl, stages.status))
    assert d.status is Status.NUMERIC_ONLY and d.expr is None
    assert "general order integrated" not in calls
    assert ("KL integrated" in calls) is not kl_too
    reason = "; ".join(d.reasons)
    assert "general order not derived: no closed form: " in reason
    assert all(word in reason for word in words), reason
    if kl_too:
        assert "KL not derived: no closed form: " in reason
    step = next(s for s in d.log.steps if s.name == "applicability (general order)")
    assert step.detail.startswith("no closed form: ")


@pytest.mark.parametrize("name", ("cauchy", "student t nu=3"))
def test_cold_derivation_keeps_d_inf(name, monkeypatch):
    """The public call, cold: numeric_only with the reason, the integrator not called, and D_inf still
    derived, equal to the independent numeric sup of log P/Q."""
    P, Q, var, support, words, _ = FAMILIES[name]
    calls = _record_calls(monkeypatch)
    r = rdpsym.renyi_divergence(P, Q, var, support, cache=False)
    assert r.status is Status.NUMERIC_ONLY and not calls
    assert "no closed form" in r.reason and all(word in r.reason for word in words)
    point = {"gamma": R(3, 2), "sensitivity": R(1, 2)} if name == "cauchy" else {"sensitivity": R(3, 4)}
    with mpmath.workdps(40):
        num = numeric_divergence(P, Q, var, support, sp.oo, point, dps=30)
        assert num.converged, num.detail
        assert abs(r.evaluate(sp.oo, dps=30, **point) - num.value) <= mpmath.mpf(10) ** -18 * max(1, abs(num.value))


@pytest.mark.parametrize("name", ("generalised gaussian p=3", "student t nu=3", "generalised gaussian p"))
def test_a_shifted_density_is_integrated_in_its_own_variable(name):
    """u = x - a (u = a - x left of a): the shifted generalised Gaussian (exp of a cubic in x after
    expansion, or powers of x - D) and the shifted Student t integrate piece by piece, with the
    translation noted, and P and Q to 1 (against mpmath's quadrature at a point)."""
    P, Q = FAMILIES[name][:2]
    point = {S: R(3, 2), D: R(7, 10), PW: R(5, 2)}
    for dens in ("P", "Q"):
        total, notes = sp.Integer(0), []
        for piece in split_support(P, Q, x, sp.S.Reals):
            c0, coeffs = decompose(log_expand(getattr(piece, dens)), x)
            res = integrate_template(coeffs, x, piece.lo, piece.hi, False, 20)
            assert len(res.cases) == 1
            notes += res.notes
            total += sp.exp(c0) * res.cases[0][0]
        assert (dens == "Q") is any(note.startswith("translated") for note in notes), notes
        f = sp.lambdify(x, (P if dens == "P" else Q).subs(point), "mpmath")
        with mpmath.workdps(40):
            value = sp.N(total.subs(point), 35)
            assert abs(value.as_real_imag()[1]) < mpmath.mpf(10) ** -30
            assert abs(value.as_real_imag()[0] - 1) < mpmath.mpf(10) ** -25
            assert abs(mpmath.quad(f, [-mpmath.inf, 0, point[D], mpmath.inf]) - 1) < mpmath.mpf(10) ** -25


def test_the_time_budget_cuts_a_derivation_short_with_the_reason():
    """Three step limits in all: Weibull shapes (no closed form, and no structural obstruction either)
    spend them in the integrator; the stages cut short say so."""
    w1, w2 = sp.symbols("w1 w2", positive=True)
    P, Q = w1 * x**(w1 - 1) * sp.exp(-x**w1), w2 * x**(w2 - 1) * sp.exp(-x**w2)
    r = rdpsym.renyi_divergence(P, Q, x, sp.Interval(0, sp.oo), step_seconds=1, cache=False, check_density=False)
    assert r.status is Status.NUMERIC_ONLY and r.expr is None
    assert "cut short: the derivation's work budget of 3 s (90,000 sympy nodes at 30,000 a second) ran out" in r.reason
    assert not cacheable(r)  # a derivation cut short is derived again next time


@pytest.mark.slow
def test_cold_derivations_of_the_four_families_keep_to_the_bound():
    """The public call, cold, for the four families: numeric_only with the reason, within the issue's
    60 s bound (the 10 s target is the benchmark's); the generalised Gaussian keeps its KL, equal to the
    independent numeric KL."""
    for name in FAST_FOUR:
        P, Q, var, support, words, _ = FAMILIES[name]
        start = time.perf_counter()
        r = rdpsym.renyi_divergence(P, Q, var, support, cache=False)
        seconds = time.perf_counter() - start
        assert r.status is Status.NUMERIC_ONLY and "no closed form" in r.reason, r.reason
        assert seconds < 60, f"{name}: {seconds:.1f} s"
        if name == "generalised gaussian p=3":
            point = {"scale": R(3, 2), "sensitivity": R(7, 10)}
            with mpmath.workdps(40):
                num = numeric_divergence(P, Q, var, support, 1, point, dps=30)
                assert num.converged, num.detail
                assert abs(r.evaluate(1, dps=30, **point) - num.value) <= mpmath.mpf(10) ** -18 * max(1, abs(num.value))


def test_divergence_is_read_from_the_leading_behaviour_not_from_sympy_limit():
    """x (1 + x^2/nu)^(-(nu+1)(t+1)/2) (1 + (x-a)^2/nu)^(t(nu+1)/2) tends to 0 like x^(-nu): the Student t
    pair's integrand converges for every order, though sympy.limit returns oo for it (a D = oo closed
    form came out of that before). Related coefficients keep their relation in the test."""
    from rdpsym.derive import convergence

    x = sp.Symbol("x", real=True)
    nu, t, a = sp.symbols("nu t a", positive=True)
    student = {sp.log(1 + x**2 / nu): -(nu + 1) * (t + 1) / 2,
               sp.log(a**2 / nu - 2 * a * x / nu + 1 + x**2 / nu): t * (nu + 1) / 2}
    assert not convergence.diverges(student, x, -sp.oo, sp.oo, False, 5.0)
    # powers whose sum is >= -1 do diverge, and a growing exponential does
    assert convergence.diverges({sp.log(1 + x**2): -(nu + 1) / 2 + nu / 2}, x, -sp.oo, sp.oo, False, 5.0)
    assert convergence.diverges({x: t, x**2: -t, sp.log(1 + x**2): nu}, x, -sp.oo, sp.oo, False, 5.0) is False
    assert convergence.diverges({x**3: t}, x, sp.S.Zero, sp.oo, False, 5.0)
