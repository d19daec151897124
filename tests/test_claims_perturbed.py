"""Wrong claims made by perturbing true ones are never confirmed or proved.

The true formulas are the published ones (Mironov 2017, arXiv:1702.07476 v3, Table II; Gil, Alajaji and
Linder 2013, Table 2 for exponential rates): claims to check, never results. Each is perturbed so that it is
wrong somewhere inside the region a check covers (alpha in (1, 1e6), the parameters' typical ranges):

* a constant factor 1 +- 10^-k (k up to 20: still far above the check's 30 digits);
* a bump of small width (in log(alpha - 1)) at a random order, as narrow as 1% of a decade;
* a regime cut-off: the formula is scaled by 1 - 1e-3 above a large order, or below 1 + 10^-j;
* a wrong constant at a special order (KL, D_oo).

The default run draws a small sample; ``pytest -m slow`` draws 1,000.
"""

import math
from collections import Counter

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rdpsym
from rdpsym import mechanisms
from rdpsym.claims import Verdict, check_claim
from rdpsym.specify.params import parameter
from rdpsym.specify.text import parse_formula

LAPLACE = "1/(alpha-1)*log(alpha/(2*alpha-1)*exp((alpha-1)/b) + (alpha-1)/(2*alpha-1)*exp(-alpha/b))"
RR = "1/(alpha-1)*log(p**alpha*(1-p)**(1-alpha) + (1-p)**alpha*p**(1-alpha))"
EXPONENTIAL = "log(lambda1/lambda2) + 1/(alpha-1)*log(lambda1/(alpha*lambda1 + (1-alpha)*lambda2))"

#: (target name, curve, KL, D_oo or None, names)
TRUTHS = {
    "gaussian": ("alpha/(2*sigma**2)", "1/(2*sigma**2)", None, ("sigma",)),
    "laplace": (LAPLACE, "1/b + exp(-1/b) - 1", "1/b", ("b",)),
    "randomized_response": (RR, "(2*p-1)*log(p/(1-p))", "log(p/(1-p))", ("p",)),
    "exponential": (EXPONENTIAL, "log(lambda1/lambda2) + lambda2/lambda1 - 1", None, ("lambda1", "lambda2")),
}

_TARGETS: dict = {}


def _target(name):
    if name not in _TARGETS:
        if name == "exponential":
            x = sp.Symbol("x", real=True)
            l1 = parameter("lambda1", typical=(0.5, 5.0), log_scale=True)
            l2 = parameter("lambda2", typical=(0.5, 5.0), log_scale=True)
            a, b = l1.symbol, l2.symbol
            result = rdpsym.renyi_divergence(a * sp.exp(-a * x), b * sp.exp(-b * x), x, sp.Interval(0, sp.oo))
            _TARGETS[name] = (result, (l1, l2))
        else:
            _TARGETS[name] = (mechanisms.get(name), None)
    return _TARGETS[name]


ALPHA = sp.Symbol("alpha")


def _formula(text, names):
    return parse_formula(text, {"alpha": ALPHA, **{n: sp.Symbol(n) for n in names}})


@st.composite
def perturbed_claims(draw):
    """(target name, claim expression, relation, order, what was done)."""
    name = draw(st.sampled_from(sorted(TRUTHS)))
    curve, kl, dinf, names = TRUTHS[name]
    kind = draw(st.sampled_from(["factor", "bump", "cutoff_high", "cutoff_near_one", "special"]))
    if kind == "special":
        order, text = draw(st.sampled_from([(1, kl)] + ([(sp.oo, dinf)] if dinf else [])))
        truth = _formula(text, names)
        k = draw(st.integers(1, 20))
        sign = draw(st.sampled_from([-1, 1]))
        additive = draw(st.booleans())
        eps = sp.Integer(10) ** -k
        claim = truth + sign * eps if additive else truth * (1 + sign * eps)
        relation = draw(st.sampled_from(["==", "<=" if sign < 0 else ">="]))
        return name, claim, relation, order, f"{'+' if additive else 'x(1'}{sign:+d}e-{k}{'' if additive else ')'} at order {order}"
    truth = _formula(curve, names)
    if kind == "factor":
        k = draw(st.integers(1, 20))
        sign = draw(st.sampled_from([-1, 1]))
        claim = truth * (1 + sign * sp.Integer(10) ** -k)
        relation = draw(st.sampled_from(["==", "<=" if sign < 0 else ">="]))
        return name, claim, relation, None, f"factor 1{sign:+d}e-{k}"
    if kind == "bump":
        centre = draw(st.floats(-8, math.log(1e5)))  # log(alpha - 1) of the bump's centre
        width = draw(st.floats(0.01, 0.5))  # in log(alpha - 1)
        k = draw(st.integers(3, 15))
        c = sp.Rational(repr(round(centre, 6)))
        w = sp.Rational(repr(round(width, 6)))
        bump = sp.Integer(10) ** -k * sp.exp(-((sp.log(ALPHA - 1) - c) / w) ** 2)
        relation = draw(st.sampled_from(["==", "<=", ">="]))
        claim = truth + bump if relation == ">=" else truth - bump
        return name, claim, relation, None, f"bump 1e-{k} at alpha = 1 + e^{centre:.2f}, width {width:.2f}"
    if kind == "cutoff_high":
        top = sp.Integer(draw(st.integers(2, 100_000)))
        relation = draw(st.sampled_from(["==", "<="]))
        claim = sp.Piecewise((truth, ALPHA < top), (truth * (1 - sp.Rational(1, 1000)), True))
        return name, claim, relation, None, f"scaled by 1 - 1e-3 above alpha = {top}"
    j = draw(st.integers(2, 8))
    relation = draw(st.sampled_from(["==", "<="]))
    claim = sp.Piecewise((truth * (1 - sp.Rational(1, 1000)), ALPHA < 1 + sp.Integer(10) ** -j), (truth, True))
    return name, claim, relation, None, f"scaled by 1 - 1e-3 below alpha = 1 + 1e-{j}"


def _check(case):
    name, claim, relation, order, what = case
    target, params = _target(name)
    v = check_claim(target, claim, relation, order, parameters=params, search=20, certify_seconds=5)
    assert v.verdict not in (Verdict.CONFIRMED, Verdict.PROVED), f"{name}: {what} ({relation})\n{v}"
    return v


def test_true_claims_are_not_refuted():
    """The unperturbed formulas: the test above is about perturbations, not about a checker that refutes all."""
    for name, (curve, kl, dinf, names) in TRUTHS.items():
        target, params = _target(name)
        for order, text in ((None, curve), (1, kl)) + (((sp.oo, dinf),) if dinf else ()):
            v = check_claim(target, _formula(text, names), "==", order, parameters=params, search=20,
                            certify_seconds=5)
            assert v.ok, f"{name} order {order}: {v}"


def _run(examples, capsys):
    tally: Counter = Counter()

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(perturbed_claims())
    def run(case):
        tally[_check(case).verdict.value] += 1

    run()
    with capsys.disabled():
        print(f"\nperturbed claims: {sum(tally.values())} cases, none confirmed or proved: {dict(tally)}")
    return tally


def test_perturbed_claims_are_never_confirmed_sample(capsys):
    assert sum(_run(12, capsys).values()) >= 12


@pytest.mark.slow
def test_perturbed_claims_are_never_confirmed_thousand(capsys):
    assert sum(_run(1000, capsys).values()) >= 1000
