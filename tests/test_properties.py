"""Property checks (Mironov 2017, arXiv:1702.07476 v3, Table I and Appendix) over the registry, and each
check failing on deliberately broken input."""


import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings

import rdpsym
from rdpsym import mechanisms
from rdpsym import properties as props
from rdpsym import strategies as st_rdp
from rdpsym.derive.result import DivergenceResult, Status
from rdpsym.properties import PropertyVerdict
from rdpsym.specify.mechanism import AdjacentPair, Mechanism
from rdpsym.specify.params import parameter

from _builtins import closed_form_params

ALPHA = rdpsym.alpha
# a third of the profile's examples: each example runs several high-precision checks
FEW = max(3, settings().max_examples // 3)
CHEAP_ORDERS = (sp.Rational(1, 2), 1 - sp.Rational(1, 10**6), 1, 1 + sp.Rational(1, 10**6), 2, 10, 1000, sp.oo)


def assert_holds(report):
    assert report.verdict is PropertyVerdict.HOLDS, report.summary()


def assert_fails(report):
    assert report.verdict is PropertyVerdict.FAILS, report.summary()
    assert report.worst_margin < 0


def assert_closed_form(name, curve):
    """The curve properties are checked on a closed form in alpha, which every built-in outside NUMERIC_ONLY
    keeps (tests/test_mechanisms.py checks that the others say numeric_only); for some neighbouring inputs
    only it is a lower bound in closed form: the divergence of those pairs obeys them all."""
    if curve.status is Status.LOWER_BOUND:
        assert mechanisms.get(name).neighbours == "some" and curve.expr is not None, (name, curve.reason)
    else:
        assert curve.status is Status.CLOSED_FORM, (name, curve.status, curve.reason)


def check_mechanism(mechanism, values, curve=None):
    """The one helper for built-in and user mechanisms: every cheap property must hold (or not apply)."""
    suite = props.check_all(mechanism, values, quick=True, dps=25, curve=curve)
    for r in suite.reports:
        assert r.verdict is PropertyVerdict.HOLDS or not r.applicable, r.summary()
    return suite


# -- the registry, over typical parameter ranges ---------------------------------------------------------
@pytest.mark.registry
@pytest.mark.parametrize("name", closed_form_params())
def test_curve_properties_over_typical_ranges(name):
    mech = mechanisms.get(name)
    curve = rdpsym.rdp(mech)
    assert_closed_form(name, curve)
    fixed = {"sensitivity": 1} if "sensitivity" in mech.params else None

    @settings(max_examples=FEW)
    @given(st_rdp.parameters(mech, edges=False, fixed=fixed))
    def run(values):
        for check in (props.non_negativity, props.monotonicity, props.convexity):
            assert_holds(check(curve, values, orders=CHEAP_ORDERS, dps=25))
        assert_holds(props.continuity_at_one(curve, values, dps=30))
        assert_holds(props.continuity_at_infinity(curve, values, dps=30))

    run()


@pytest.mark.registry
@pytest.mark.parametrize("name", closed_form_params())
def test_post_processing_and_probability_over_typical_ranges(name):
    mech = mechanisms.get(name)
    curve = rdpsym.rdp(mech)
    assert_closed_form(name, curve)
    fixed = {"sensitivity": 1} if "sensitivity" in mech.params else None

    @settings(max_examples=max(2, FEW // 4))
    @given(st_rdp.parameters(mech, edges=False, fixed=fixed))
    def run(values):
        assert_holds(props.post_processing(mech, values, curve=curve, orders=(sp.Rational(1, 2), 2, sp.oo), dps=20,
                                           channels=props.default_channels(mech)[:2]))
        assert_holds(props.probability_preservation(mech, values, curve=curve, orders=(2, 10), dps=20,
                                                    events=props.default_events(mech)[:2]))

    run()


def test_check_all_on_a_user_mechanism():
    """A user's own mechanism goes through the same helper: a biased coin against a fairer one."""
    x = sp.Symbol("x", integer=True, nonnegative=True)
    q = parameter("q", sp.Interval.open(sp.Rational(1, 2), 1), typical=(0.6, 0.9))
    s = q.symbol
    mech = Mechanism("user_coin", x, sp.FiniteSet(0, 1),
                     (AdjacentPair(s**x * (1 - s) ** (1 - x), ((1 + s) / 2) ** (1 - x) * ((1 - s) / 2) ** x, "coins"),),
                     (q,))
    suite = check_mechanism(mech, {"q": sp.Rational(3, 4)})
    assert suite.verdict is PropertyVerdict.HOLDS
    assert {r.name for r in suite.reports} >= {"monotonicity in alpha (Prop. 9)", "post-processing (data-processing inequality)"}


def test_check_all_full_on_randomized_response():
    suite = props.check_all(mechanisms.get("randomized_response"), {"p": sp.Rational(3, 5)}, dps=25,
                            only=["curve", "dp-implies-rdp", "bayes-factor", "weak-triangle", "conversion"])
    assert suite.verdict is PropertyVerdict.HOLDS, str(suite)


_SUP_AT_INFINITY = ("the weak triangle inequality (Cor. 4, p -> oo) needs D_oo(P||(P+Q)/2) = log 2 for the "
                    "Gaussian, a supremum reached only as x -> -oo; the numeric path reports such a limit as not "
                    "certified, so the check is inconclusive (strict: it fails once that is certified)")


@pytest.mark.slow
@pytest.mark.registry
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=_SUP_AT_INFINITY))
                                  if n == "gaussian" else n for n in closed_form_params()])
def test_check_all_full(name):
    """Every check on every built-in with a derived curve (the others: tests/test_mechanisms.py)."""
    mech = mechanisms.get(name)
    res = rdpsym.rdp(mech)
    assert_closed_form(name, res)
    suite = props.check_all(mech)
    assert suite.verdict is PropertyVerdict.HOLDS, str(suite)


def test_gaussian_symbolic_checks():
    g = rdpsym.rdp(mechanisms.get("gaussian"))
    for check in (props.monotonicity, props.convexity, props.continuity_at_one, props.continuity_at_infinity):
        r = check(g, {"sigma": 2, "sensitivity": 1})
        assert r.verdict is PropertyVerdict.HOLDS and r.mode == "symbolic", r.summary()


# -- broken inputs: every check must be able to fail ------------------------------------------------------
def fake_curve(expr, kl, dinf, label="broken", symbols=None):
    symbols = tuple(sorted((sp.S(expr).free_symbols | sp.S(kl).free_symbols) - {ALPHA}, key=str)) if symbols is None else symbols
    return DivergenceResult(expr=expr, status=Status.CLOSED_FORM, kl=kl, max_divergence=dinf, label=label, symbols=symbols)


def test_monotonicity_fails_on_a_non_monotone_curve():
    bad = fake_curve(1 + sp.sin(ALPHA), 1 + sp.sin(1), sp.nan)
    r = props.monotonicity(bad, orders=(sp.Rational(1, 2), 1, 2, 3, 5))
    assert r.mode == "numeric"
    assert_fails(r)
    callable_curve = props.Curve("callable", fn=lambda a: 1 / a, kl=1)
    assert_fails(props.monotonicity(callable_curve, orders=(sp.Rational(1, 2), 1, 2)))


def test_non_negativity_and_convexity_fail_on_broken_curves():
    assert_fails(props.non_negativity(fake_curve(sp.log(ALPHA), 0, sp.oo), orders=(sp.Rational(1, 2), 2)))
    concave = fake_curve(sp.sqrt(ALPHA) / (ALPHA - 1), sp.oo, 0)  # (alpha-1) D = sqrt(alpha): concave
    assert_fails(props.convexity(concave, orders=(sp.Rational(1, 2), 2, 3, 5)))


def test_continuity_fails_on_wrong_limits():
    g = rdpsym.rdp(mechanisms.get("laplace"))
    wrong_kl = fake_curve(g.expr, g.kl + sp.Rational(1, 10**6), g.max_divergence)
    assert_fails(props.continuity_at_one(wrong_kl, {"b": 1, "sensitivity": 1}))
    wrong_inf = fake_curve(g.expr, g.kl, g.max_divergence * sp.Rational(99, 100))
    assert_fails(props.continuity_at_infinity(wrong_inf, {"b": 1, "sensitivity": 1}))


def test_post_processing_that_peeks_at_the_input_fails():
    mech = mechanisms.get("laplace")
    values = {"b": 1, "sensitivity": 1}
    assert_holds(props.post_processing(mech, values, dps=20, orders=(2, sp.oo)))
    peeking = props.InputDependent(props.Threshold(-3), props.Threshold(4))  # P's samples mostly 1, Q's mostly 0
    assert_fails(props.post_processing(mech, values, channels=[peeking], dps=20, orders=(2,)))


def test_threshold_masses_match_the_normal_cdf():
    mech = mechanisms.get("gaussian")
    _, p, q = props.postprocessing.pairs_of(mech, {"sigma": 2, "sensitivity": 1})[0]
    with mpmath.workdps(40):
        out = props.Threshold(sp.Rational(1, 2)).apply(q, "Q")
        assert abs(out.atoms[1] - mpmath.ncdf((1 - mpmath.mpf(1) / 2) / 2)) < mpmath.mpf(10) ** -30
        clipped = props.Clip(-1, 2).apply(p, "P")
        assert abs(clipped.atoms["low"] - mpmath.ncdf(-mpmath.mpf(1) / 2)) < mpmath.mpf(10) ** -30


def test_probability_and_bayes_factor_fail_with_a_too_small_curve():
    mech = mechanisms.get("gaussian")
    g = rdpsym.rdp(mech)
    small = fake_curve(g.expr / 8, g.kl / 8, g.max_divergence)
    values = {"sigma": 1, "sensitivity": 1}
    assert_fails(props.probability_preservation(mech, values, curve=small, dps=20, orders=(2, 10)))
    assert_fails(props.bayes_factor(mech, values, curve=small, dps=20, orders=(2,)))


def test_section_vii_example():
    """Mironov 2017, Sec. VII: (10, 0.1)-RDP keeps an event of probability 0.5 within [0.419, 0.586]."""
    lo, hi = props.section_vii_interval(10, sp.Rational(1, 10), sp.Rational(1, 2))
    assert (round(float(lo), 3), round(float(hi), 3)) == (0.419, 0.586)
    lo, hi = props.section_vii_interval(10, sp.Rational(1, 10), sp.Rational(1, 1000))
    assert (round(float(lo), 5), round(float(hi), 5)) == (0.00042, 0.00218)


def test_dp_implies_rdp_constants():
    assert_holds(props.dp_implies_rdp(constant=props.BUN_STEINKE))
    assert_holds(props.dp_implies_rdp(constant=props.LEMMA_1))
    assert_fails(props.dp_implies_rdp(constant=sp.Rational(1, 4)))  # too small a constant
    # Laplace is (1/b)-DP: its curve obeys both
    assert_holds(props.dp_implies_rdp(rdpsym.rdp(mechanisms.get("laplace")), {"b": 2, "sensitivity": 1}))


def test_weak_triangle_and_a_broken_coefficient():
    mech = mechanisms.get("gaussian")
    triples = props.mechanism_triples(mech)[1:]
    values = {"sigma": 1, "sensitivity": 1}
    assert_holds(props.weak_triangle(triples, mech.variable, mech.support, values, orders=(2,), dps=20))
    broken = props.TriangleForm("coefficient 1", lambda a: sp.Integer(1), lambda a: 2 * a, lambda a: 2 * a - 1)
    assert_fails(props.weak_triangle(triples, mech.variable, mech.support, values, forms=[broken], orders=(2,), dps=20))


def test_advanced_composition_and_too_small_constants():
    assert_holds(props.advanced_composition(sp.Rational(3, 5), 20))
    assert_fails(props.advanced_composition(sp.Rational(3, 5), 20, constant=sp.Rational(1, 2)))
    assert_holds(props.corollary_1(sp.Rational(11, 20), 100))
    assert_fails(props.corollary_1(sp.Rational(11, 20), 100, constant=sp.Rational(1, 2)))


def test_rr_self_composition_is_exact():
    rr = rdpsym.rdp(mechanisms.get("randomized_response"))
    assert_holds(props.rr_self_composition(rr, sp.Rational(3, 5), 7))
    doubled = fake_curve(2 * rr.expr, 2 * rr.kl, 2 * rr.max_divergence)
    assert_fails(props.rr_self_composition(doubled, sp.Rational(3, 5), 7))


def test_group_privacy_with_too_small_constant_fails():
    mech = mechanisms.get("gaussian")
    values = {"sigma": 2, "sensitivity": 1}
    assert_holds(props.group_privacy_check(mech, values, dps=20))
    assert_fails(props.group_privacy_check(mech, values, constant=sp.Rational(19, 10), dps=20))


def test_wrong_conversion_fails():
    mech = mechanisms.get("randomized_response")
    values = {"p": sp.Rational(3, 4)}
    assert_holds(props.conversion(mech, values, dps=20, epsilons=(sp.Rational(1, 2),), deltas=(sp.Rational(1, 10**3),)))

    def forgets_delta(curve, target, kind, **vals):  # eps_RDP(2) alone: drops log(1/delta)/(alpha-1)
        return curve.evaluate(2, **vals) if kind == "epsilon" else mpmath.mpf(10) ** -12

    assert_fails(props.conversion(mech, values, converter=forgets_delta, dps=20, epsilons=(sp.Rational(1, 2),),
                                  deltas=(sp.Rational(1, 10**3),)))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="step"):
        props.Round(0)
    with pytest.raises(ValueError, match="matrix row"):
        props.Kernel((0,), ((1, 0), (sp.Rational(1, 2), sp.Rational(1, 3))))
    with pytest.raises(ValueError, match="n must be"):
        props.advanced_composition(sp.Rational(3, 5), 0)
    with pytest.raises(ValueError, match="missing"):
        props.check_all(mechanisms.get("gaussian"), {"sigma": 1})


def test_numeric_density_cuts_at_compound_piecewise_conditions():
    """The post-processing densities find their kinks with rdpsym.numeric.kinks.kink_arguments: a
    Piecewise whose condition is an And of two relations (a uniform density) has its jumps as cuts, so
    its mass is 1 to quadrature accuracy (the copy that read only a bare relation found no kink: 1.007)."""
    import mpmath

    from rdpsym.properties.distributions import NumericDensity

    x = sp.Symbol("x", real=True)
    lo, hi = sp.Rational(1, 7), sp.Rational(22, 7)
    uniform = sp.Piecewise((1 / (hi - lo), (x >= lo) & (x <= hi)), (0, True))
    d = NumericDensity(uniform, x, sp.S.Reals, {})
    assert d.kinks == [mpmath.mpf(sp.Float(lo, 60)), mpmath.mpf(sp.Float(hi, 60))]
    mass, _ = d.mass(-10, 10)
    assert abs(mass - 1) < mpmath.mpf(10) ** -12


@pytest.mark.unit
def test_checks_on_finite_supports_say_they_do_not_apply_to_an_infinite_lattice():
    """Post-processing and probability preservation build the processed distributions outcome by outcome:
    on Poisson noise (support 0, 1, 2, ...) they are not applicable and say so, where they raised, which
    made `rdpsym properties` exit 1 (a failed property) with every property holding or inconclusive."""
    from rdpsym.properties.postprocessing import post_processing
    from rdpsym.properties.probability import probability_preservation

    mu = rdpsym.parameter("mu", typical=(0.5, 5.0))
    k = sp.Symbol("k", integer=True, nonnegative=True)
    m = mu.symbol
    pair = rdpsym.AdjacentPair(sp.exp(-m) * m**k / sp.factorial(k), sp.exp(-m - 1) * (m + 1) ** k / sp.factorial(k))
    mech = rdpsym.Mechanism("poisson_unit_shift", k, sp.Range(0, sp.oo), (pair,), (mu,))
    for check in (post_processing, probability_preservation):
        report = check(mech, {"mu": 2})
        assert not report.applicable and "finite supports only" in report.detail, report
