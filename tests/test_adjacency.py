"""Neighbouring inputs as data (issue #15, item 5): a family of adjacent pairs over a shift t in T, whose
RDP is the supremum over t (Mironov 2017, Def. 4: every pair of neighbouring inputs counts).

The numbers a closed form is compared with are computed here, independently of rdpsym: mpmath
quadrature of P^alpha Q^(1-alpha) for the Gaussian densities written out, maximised over a grid of shifts.
"""

from dataclasses import replace

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import AdjacentFamily, AdjacentPair, Mechanism, Status, mechanisms
from rdpsym.accounting import group_privacy
from rdpsym.derive.adjacency import NOT_SHOWN, nondecreasing
from rdpsym.derive.mechanism_rdp import worst_pairs
from rdpsym.mechanisms._densities import normal_pdf
from rdpsym.numeric.families import supremum_over_family

x = sp.Symbol("x", real=True)
t = sp.Symbol("t", real=True)
SIGMA = rdpsym.parameter("sigma", typical=(0.5, 4.0), meaning="noise scale")
s = SIGMA.symbol


def gaussian_family(over, mean=t, name="gaussian_family"):
    family = AdjacentFamily(normal_pdf(x, 0, s), normal_pdf(x, mean, s), shift=t, over=over,
                            label="f(D) = 0, f(D') = t")
    return Mechanism(name, x, sp.S.Reals, (family,), (SIGMA,))


def mp_gaussian_divergence(alpha, mean, sigma):
    """D_alpha(N(0, sigma^2) || N(mean, sigma^2)) by quadrature (Mironov 2017, Def. 3), alpha != 1."""
    def p(z):
        return mpmath.npdf(z, 0, sigma)

    def q(z):
        return mpmath.npdf(z, mean, sigma)

    integral = mpmath.quad(lambda z: p(z) ** alpha * q(z) ** (1 - alpha), [-mpmath.inf, 0, mean, mpmath.inf])
    return mpmath.log(integral) / (alpha - 1)


def mp_sup_over_grid(alpha, sigma, lo, hi, n, mean=lambda u: u, both=True):
    """max over n + 1 equally spaced shifts in [lo, hi] of the quadrature (both directions: D(Q||P) for
    N(0), N(m) is D(P||Q) for N(0), N(-m) after the translation x -> x - m)."""
    best = mpmath.mpf("-inf")
    for k in range(n + 1):
        u = mpmath.mpf(lo) + (mpmath.mpf(hi) - lo) * k / n
        m = mean(u)
        best = max([best, mp_gaussian_divergence(alpha, m, sigma)] + ([mp_gaussian_divergence(alpha, -m, sigma)] if both else []))
    return best


@pytest.fixture(scope="module")
def unit_family():
    mech = gaussian_family(sp.Interval(0, 1))
    return mech, rdpsym.rdp(mech)


def test_gaussian_family_over_0_1_is_the_textbook_curve(unit_family):
    mech, r = unit_family
    assert r.status is Status.CLOSED_FORM, r.reason
    assert "supremum over t" in {step.name.split(": ")[-1] for step in r.provenance.steps}
    with mpmath.workdps(30):
        for alpha, sigma in ((2, mpmath.mpf(3) / 2), (mpmath.mpf(1) / 2, mpmath.mpf(1)), (5, mpmath.mpf(4))):
            want = mp_sup_over_grid(alpha, sigma, 0, 1, 4)
            got = r.evaluate(alpha, dps=30, sigma=sp.Rational(str(sigma)))
            assert abs(got - want) <= mpmath.mpf(10) ** -20 * abs(want), (alpha, sigma, got, want)
        # a single member (t = 1/2) is refuted: the supremum is larger
        member = mp_gaussian_divergence(2, mpmath.mpf(1) / 2, 1)
        assert r.evaluate(2, dps=30, sigma=1) > member * 3


def test_the_supremum_is_at_the_largest_shift_not_at_an_end_chosen_blindly():
    mech = gaussian_family(sp.Interval(-1, 2))
    r = rdpsym.rdp(mech)
    assert r.status is Status.CLOSED_FORM, r.reason
    details = " ".join(step.detail for step in r.provenance.steps)
    assert "x -> -x maps" in details and "at |t| = 2 (t = 2)" in details
    with mpmath.workdps(30):
        want = mp_sup_over_grid(3, mpmath.mpf(5) / 4, -1, 2, 12)
        got = r.evaluate(3, dps=30, sigma=sp.Rational(5, 4))
        assert abs(got - want) <= mpmath.mpf(10) ** -20 * abs(want), (got, want)
        # the end t = -1 alone would be four times smaller
        assert got > 3 * mp_gaussian_divergence(3, -1, mpmath.mpf(5) / 4)
    member = mech.pairs[0].member(2)
    assert [(p.P, p.Q) for p in worst_pairs(mech)] == [(member.P, member.Q)]
    # the largest |t| at the other, open end: the pair there (its closure), not its mirror image outside T
    other = gaussian_family(sp.Interval.Lopen(-3, 1))
    end = AdjacentPair(other.pairs[0].P.subs(t, -3), other.pairs[0].Q.subs(t, -3))
    assert [(p.P, p.Q) for p in worst_pairs(other)] == [(end.P, end.Q)]
    with mpmath.workdps(30):
        want = mp_gaussian_divergence(3, -3, mpmath.mpf(5) / 4)
        got = rdpsym.rdp(other).evaluate(3, dps=30, sigma=sp.Rational(5, 4))
        assert abs(got - want) <= mpmath.mpf(10) ** -20 * abs(want), (got, want)


def test_a_family_not_shown_monotone_is_numeric_only_and_the_numeric_supremum_finds_its_peak():
    mech = gaussian_family(sp.Interval(0, 3), mean=sp.sin(t), name="sine_shift")
    r = rdpsym.rdp(mech)
    assert r.status is Status.NUMERIC_ONLY and r.expr is None and r.kl is None
    assert NOT_SHOWN in r.reason, r.reason
    with pytest.raises(ValueError, match=NOT_SHOWN):
        worst_pairs(mech)
    # a numeric curve (issue 15), but its values need the supremum over t, which a numeric maximisation
    # only estimates from below: no point gets a certified value, so nothing is verified
    report = rdpsym.verify(mech, level="quick", executor="serial")
    assert str(report.status) == "inconclusive" and not report.evidence, report.describe()
    assert all(NOT_SHOWN in c.note for c in report.checks if c.closed is None), report.describe()
    family = mech.pairs[0]
    sigma = sp.Rational(3, 2)
    sampled = supremum_over_family(family, x, sp.S.Reals, 2, {"sigma": sigma}, dps=20)
    refined = supremum_over_family(family, x, sp.S.Reals, 2, {"sigma": sigma}, dps=20, refine=25, directions=("P||Q",))
    assert sampled.converged and refined.converged
    with mpmath.workdps(25):
        grid = mp_sup_over_grid(2, mpmath.mpf(sigma), 0, 3, 30, mean=mpmath.sin, both=False)
        ends = max(mp_sup_over_grid(2, mpmath.mpf(sigma), 0, 3, 1, mean=mpmath.sin), mpmath.mpf(0))
        assert ends < sampled.value < grid  # the peak is inside T, between the sampled shifts
        tol = mpmath.mpf(10) ** -15
        assert refined.value >= grid - tol * grid  # at least the best of 31 members
        assert abs(refined.shift - mpmath.pi / 2) < mpmath.mpf(10) ** -4
    assert "lower estimate" in refined.note


def test_verification_checks_the_supremum_not_one_member(unit_family):
    mech, r = unit_family
    assert rdpsym.verify(mech, level="quick", executor="serial").status == "verified"
    half = replace(r, expr=r.expr / 4, kl=r.kl / 4)  # the member at t = 1/2, not the supremum
    assert rdpsym.verify(half, mechanism=mech, level="quick", executor="serial").status == "mismatch"


def test_nondecreasing_decides_only_what_it_shows():
    u = sp.Symbol("u", positive=True)
    b = sp.Symbol("b", positive=True)
    a = rdpsym.alpha
    laplace = sp.log(a * sp.exp(u * (a - 1) / b) / (2 * a - 1) + (a - 1) * sp.exp(-a * u / b) / (2 * a - 1)) / (a - 1)
    assert nondecreasing(laplace, u)
    assert nondecreasing(-1 + sp.exp(-u / b) + u / b, u)
    assert nondecreasing(a * u**2 / b, u)
    for bad in (sp.sin(u), -u, sp.exp(-u), (u - 1) ** 2, sp.Max(u, 2 - u)):
        assert nondecreasing(bad, u) is None, bad


@pytest.mark.parametrize("kwargs, argument", [
    (dict(shift=sp.Symbol("t")), "shift"),                               # no assumptions
    (dict(shift=sp.Symbol("t", real=True) + 1), "shift"),                # not a Symbol
    (dict(over=sp.FiniteSet(-1, 1)), "over"),                            # not an Interval
    (dict(over=sp.Interval(0, sp.oo)), "over"),                          # unbounded
    (dict(over=sp.Interval(sp.Symbol("a", real=True), 1)), "over"),      # start < end undecidable
    (dict(shift=sp.Symbol("t", positive=True), over=sp.Interval(-1, 1)), "shift"),  # assumptions vs T
    (dict(Q=normal_pdf(x, 1, s)), "shift"),                              # P, Q do not depend on t
    (dict(P="exp(-x**2)"), "P"),                                         # text, never parsed
])
def test_bad_family_declarations_are_named(kwargs, argument):
    base = dict(P=normal_pdf(x, 0, s), Q=normal_pdf(x, kwargs.get("shift", t), s), shift=t, over=sp.Interval(-1, 1))
    if isinstance(kwargs.get("shift"), sp.Symbol):
        base["Q"] = normal_pdf(x, kwargs["shift"], s)
    with pytest.raises(ValueError) as err:
        AdjacentFamily(**{**base, **kwargs})
    assert err.value.argument == argument, str(err.value)


def test_bad_families_in_a_mechanism_are_named():
    sigma_named_t = rdpsym.Parameter("t", t, sp.S.Reals, (0.5, 1.0), "t")
    family = AdjacentFamily(normal_pdf(x, 0, s), normal_pdf(x, t, s), shift=t, over=sp.Interval(-1, 1))
    with pytest.raises(ValueError, match="must not be a parameter"):
        Mechanism("m", x, sp.S.Reals, (family,), (SIGMA, sigma_named_t))
    stray = replace(family, over=sp.Interval(-sp.Symbol("d", positive=True), 1))
    with pytest.raises(ValueError, match="not declared parameters"):
        Mechanism("m", x, sp.S.Reals, (stray,), (SIGMA,))
    with pytest.raises(ValueError, match="AdjacentPair or AdjacentFamily"):
        Mechanism("m", x, sp.S.Reals, ((normal_pdf(x, 0, s), normal_pdf(x, 1, s)),), (SIGMA,))
    with pytest.raises(ValueError, match="shift in"):
        family.member(2)
    with pytest.raises(AttributeError):
        family.over = sp.Interval(0, 1)  # immutable


@pytest.mark.parametrize("name", ["gaussian", pytest.param("laplace", marks=pytest.mark.slow)])
def test_built_ins_declare_a_family_and_their_curves_are_unchanged(name):
    mech = mechanisms.get(name)
    (family,) = mech.pairs
    sens = mech.params["sensitivity"]
    assert isinstance(family, AdjacentFamily) and family.over == sp.Interval(-sens, sens)
    old = replace(mech, pairs=(family.member(sens, label="f(D) = 0, f(D') = sensitivity"),), name=f"{name}_pair")
    new, before = rdpsym.rdp(mech), rdpsym.rdp(old)
    assert new.status is before.status is Status.CLOSED_FORM
    for a, b in ((new.expr, before.expr), (new.kl, before.kl), (new.max_divergence, before.max_divergence)):
        assert a == b or sp.simplify(a - b) == 0, (a, b)
    assert [p.alpha for p in new.exceptional_points] == [p.alpha for p in before.exceptional_points]
    for p, q in zip(new.exceptional_points, before.exceptional_points):
        assert sp.simplify(p.value - q.value) == 0
    assert new.conditions == before.conditions
    assert [(p.P, p.Q) for p in worst_pairs(mech)] == [(p.P, p.Q) for p in old.pairs]


def test_group_privacy_of_a_family_takes_k_times_the_shifts():
    mech = mechanisms.get("gaussian")
    g = group_privacy(mech, 3)
    assert g.status is Status.CLOSED_FORM, g.reason
    with mpmath.workdps(30):
        for alpha, sigma, sens in ((2, 2, sp.Rational(1, 2)), (sp.Rational(3, 2), 5, 1)):
            want = mp_gaussian_divergence(mpmath.mpf(alpha), 3 * mpmath.mpf(sens), sigma)  # inputs 3 steps apart
            got = g.evaluate(alpha, dps=30, sigma=sigma, sensitivity=sens)
            assert abs(got - want) <= mpmath.mpf(10) ** -20 * abs(want), (got, want)


def test_randomized_response_keeps_its_pairs_and_subsampled_gaussian_subsamples_a_family():
    mech = mechanisms.get("randomized_response")
    assert mech.pairs and all(isinstance(p, AdjacentPair) for p in mech.pairs) and not mech.families
    # subsample(gaussian(), q) at sensitivity 1: both subsampled pairs of the base's family, over |t| <= 1
    mech = mechanisms.get("subsampled_gaussian")
    assert len(mech.families) == len(mech.pairs) == 2
    assert all(f.over == sp.Interval(-1, 1) for f in mech.families)
