"""A parameter declared wider than its pmfs allow (rdpsym.derive.distribution_domain).

P = (1 - p, p) against Q = (1 - p/2, p/2) with p declared in (0, 2): P is a distribution only for p <= 1, and
at p = 1 the derived formulas have no value ((1 - p)**(1 - alpha) is 0**(-1)). The result holds for p in
(0, 1) and says why; claims are decided there (issue 33: "decide the verdict on that part and say so").
Before, the certified pass spent its boxes on p in (1, 2), where nothing can be certified, and the true
D_oo == Max(log 2, log((2 - p)/(2 - 2p))) was inconclusive.
"""

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym.claims import Verdict, check_claim
from rdpsym.derive.distribution_domain import distribution_domains
from rdpsym.specify.mechanism import AdjacentPair, Mechanism
from rdpsym.specify.params import parameter

X = sp.Symbol("x", integer=True, nonnegative=True)
TWO = sp.FiniteSet(0, 1)


def _bernoulli(p):
    return p**X * (1 - p) ** (1 - X)


def _declared_wide():
    p = parameter("p", sp.Interval.open(0, 2), typical=(0.1, 0.9))
    s = p.symbol
    return Mechanism(name="bernoulli_halved", title="bernoulli_halved", variable=X, support=TWO,
                     pairs=(AdjacentPair(_bernoulli(s), _bernoulli(s / 2), "p vs p/2"),), parameters=(p,)), p


@pytest.mark.unit
def test_the_part_where_the_pmfs_are_non_negative_is_solved_exactly():
    _, p = _declared_wide()
    s = p.symbol
    narrowed, why = distribution_domains(_bernoulli(s), _bernoulli(s / 2), X, TWO, [p], {})
    assert narrowed == {s: sp.Interval.Lopen(0, 1)}
    assert "P(0) = 1 - p is negative elsewhere in the declared (0, 2)" in why[0], why
    # the formula (1 - p)**(1 - alpha) has no value at p = 1: that end is left out too, and said
    curve = sp.log(s**rdpsym.alpha * (s / 2) ** (1 - rdpsym.alpha)
                   + (1 - s) ** rdpsym.alpha * (1 - s / 2) ** (1 - rdpsym.alpha)) / (rdpsym.alpha - 1)
    flipped = curve.subs(rdpsym.alpha, 1 - rdpsym.alpha)
    narrowed, why = distribution_domains(_bernoulli(s), _bernoulli(s / 2), X, TWO, [p], {}, (flipped,))
    assert narrowed == {s: sp.Interval.open(0, 1)} and "at p = 1 the formula has no value" in why[0], why
    # a domain that is already right is not touched; nor is a support that is not a small finite set
    assert distribution_domains(_bernoulli(s), _bernoulli(s / 2), X, TWO, [p], {s: sp.Interval.open(0, 1)}) == ({}, [])
    assert distribution_domains(_bernoulli(s), _bernoulli(s / 2), X, sp.Range(0, sp.oo), [p], {}) == ({}, [])


def test_a_parameter_declared_wider_than_the_distributions_is_decided_where_they_are():
    m, _ = _declared_wide()
    r = rdpsym.rdp(m)
    (sym, dom), = r.domains
    assert dom == sp.Interval.open(0, 1), dom
    assert "probability distributions only for p in (0, 1]" in r.reason, r.reason
    with pytest.raises(ValueError, match="p must lie in"):
        r.evaluate(2, p=sp.Rational(3, 2))
    # inside, the formula is the divergence: the sums of the densities, both directions
    with mpmath.workdps(40):
        for p, a in ((sp.Rational(1, 4), 2), (sp.Rational(9, 10), sp.Rational(7, 2))):
            pm = mpmath.mpf(p.p) / p.q
            u, v = [1 - pm, pm], [1 - pm / 2, pm / 2]
            want = max(mpmath.log(mpmath.fsum(x**a * y ** (1 - a) for x, y in zip(f, g))) / (a - 1)
                       for f, g in ((u, v), (v, u)))
            assert abs(mpmath.mpf(r.evaluate(a, p=p, dps=30)) - want) < mpmath.mpf(10) ** -25 * want
    proved = check_claim(m, "Max(log(2), log((2-p)/(2-2*p)))", "==", order=sp.oo)
    assert proved.verdict is Verdict.PROVED, proved
    assert any("decided for p in (0, 1)" in line for line in proved.evidence), proved.evidence
    # at p -> 1 the divergence grows without bound: a constant bound is refuted, with a point inside (0, 1)
    refuted = check_claim(m, "log(2)", "<=", order=sp.oo)
    assert refuted.verdict is Verdict.REFUTED, refuted
    assert 0 < refuted.counterexample.values["p"] < 1, refuted.counterexample


def test_a_mass_too_spread_to_sum_is_taken_in_closed_form():
    """Pois(10^10) has ~10^5 significant terms, past the numeric check's budget; its mass
    sum lam^k exp(-lam)/k! = 1 for every lam is sympy's summation, read at the point. Twice the pmf is no
    distribution, and is never called one."""
    from rdpsym.claims.target import _is_distribution, symbolic_mass

    k = sp.Symbol("k", integer=True, nonnegative=True)
    lam = parameter("lam", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
    pmf = lam.symbol**k * sp.exp(-lam.symbol) / sp.factorial(k)
    support = sp.Range(0, sp.oo)
    assert symbolic_mass(pmf, k, support) == 1
    assert _is_distribution(pmf, k, support, {"lam": sp.Integer(10**10)}, (lam,)) is True
    assert _is_distribution(2 * pmf, k, support, {"lam": sp.Integer(10**10)}, (lam,)) is not True
    # a geometric pmf summed over a ratio declared wider than (0, 1): a conditional sum is no closed form
    g = parameter("g", domain=sp.Interval.open(0, sp.oo), typical=(0.1, 0.9))
    assert symbolic_mass((1 - g.symbol) * g.symbol**k, k, support) is sp.nan


@pytest.mark.unit
def test_a_two_sided_lattice_pmf_with_a_kink_is_summed_in_closed_form():
    """A discrete Laplace pmf exp(-eps |k - 1|)/Z over the integers: sympy sums neither the series from -oo nor
    exp(-(k - 1)/b) from 1. Cut at the kink and at 0, each piece running from 0 upwards, its terms geometric
    series, the mass is 1 for every eps (at eps = 1e-4 the numeric check would need ~10^6 terms). A wrong
    normaliser is not 1."""
    from rdpsym import mechanisms
    from rdpsym.claims.target import _is_distribution, symbolic_mass

    k = sp.Symbol("k", integer=True)
    eps = parameter("eps", domain=sp.Interval.open(0, sp.oo), typical=(0.1, 5), log_scale=True)
    e = eps.symbol
    z = (1 + sp.exp(-e)) / (1 - sp.exp(-e))
    for shift in (0, 1, -3):
        assert symbolic_mass(sp.exp(-e * sp.Abs(k - shift)) / z, k, sp.Range(-sp.oo, sp.oo)) == 1
    assert symbolic_mass(sp.exp(-e * sp.Abs(k - 1)) / (2 * z), k, sp.Range(-sp.oo, sp.oo)) == sp.Rational(1, 2)
    pmf = sp.exp(-e * sp.Abs(k - 1)) / z
    assert _is_distribution(pmf, k, sp.S.Integers, {"eps": sp.Rational(1, 10**4)}, (eps,)) is True
    assert _is_distribution(2 * pmf, k, sp.S.Integers, {"eps": sp.Rational(1, 10**4)}, (eps,)) is not True
    dl = mechanisms.get("discrete_laplace")  # exp(-|k|/b) tanh(1/(2b)) over the integers
    assert symbolic_mass(dl.pairs[0].P, dl.variable, dl.support) == 1
    # a tail from 5 on: exp(-eps (k - 2)) (1 - exp(-eps)) sums to exp(-3 eps)
    assert sp.simplify(symbolic_mass(sp.exp(-e * sp.Abs(k - 2)) * (1 - sp.exp(-e)), k, sp.Range(5, sp.oo))
                       - sp.exp(-3 * e)) == 0
