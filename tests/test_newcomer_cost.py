"""Issue 29, items 7 and 10: finite pmfs as finite sums (outcomes of equal likelihood ratio merged, pairs
with the same ratio distribution derived once), densities that factor into coordinates as sums of
one-dimensional divergences in the numeric path, and exact integer orders on request, in both directions.

Every value is compared with mpmath computed here from the definition (Mironov 2017, arXiv:1702.07476 v3,
Defs. 3 and 4): direct sums over the pmf, quadrature of P^alpha Q^(1-alpha), at 40 digits inside one
``mpmath.workdps`` block. No test times anything (the speed figures are in benchmarks/newcomer_cost.py).
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import AdjacentPair, Mechanism, Status, parameter
from rdpsym.derive.finite import merge_equal_ratios
from rdpsym.derive.integer_order import renyi_divergence_at_integer_order

N = 4


def truncated_geometric() -> Mechanism:
    """The truncated geometric mechanism on {0, ..., 4} (Ghosh, Roughgarden & Sundararajan 2009), inputs
    0..4, the four pairs of neighbouring inputs, written as a user writes it."""
    x = sp.Symbol("x", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.1, 5.0), meaning="privacy parameter")
    a = sp.exp(-eps.symbol)

    def pmf(i):
        return sp.Piecewise((a**i / (1 + a), sp.Eq(x, 0)), (a ** (N - i) / (1 + a), sp.Eq(x, N)),
                            ((1 - a) / (1 + a) * a ** sp.Abs(x - i), True))

    return Mechanism("truncated_geometric", x, sp.FiniteSet(*range(N + 1)),
                     tuple(AdjacentPair(pmf(i), pmf(i + 1), f"{i} vs {i + 1}") for i in range(N)), (eps,))


def _pmf_values(expr, x, e, eps):
    return [mpmath.mpf(sp.N(expr.subs(x, k).subs(e, eps), 60)) for k in range(N + 1)]


def test_truncated_geometric_is_one_derivation_and_matches_the_direct_sums():
    m = truncated_geometric()
    r = rdpsym.rdp(m)
    assert r.status is Status.CLOSED_FORM
    assert not isinstance(r.expr, sp.Max)  # every pair and direction has the same ratio distribution
    merged = [s for s in r.provenance.steps if s.name.endswith("merge equal ratios")]
    assert merged and "2 distinct likelihood ratios" in merged[0].detail
    e = m.parameters[0].symbol
    with mpmath.workdps(40):
        for eps in (sp.Rational(1, 3), sp.Integer(2)):
            for a in (sp.Rational(1, 4), sp.Rational(5, 2), sp.Integer(7)):
                am = mpmath.mpf(a.p) / a.q
                want = mpmath.mpf(0)
                for pair in m.pairs:
                    p, q = _pmf_values(pair.P, m.variable, e, eps), _pmf_values(pair.Q, m.variable, e, eps)
                    for u, v in ((p, q), (q, p)):
                        want = max(want, mpmath.log(mpmath.fsum(s**am * t ** (1 - am) for s, t in zip(u, v))) / (am - 1))
                got = r.evaluate(a, dps=35, epsilon=eps)
                assert abs(got - want) <= mpmath.mpf(10) ** -32 * want
            # the KL and D_inf too
            kl = mpmath.mpf(0)
            for pair in m.pairs:
                p, q = _pmf_values(pair.P, m.variable, e, eps), _pmf_values(pair.Q, m.variable, e, eps)
                kl = max(kl, mpmath.fsum(s * mpmath.log(s / t) for s, t in zip(p, q)),
                         mpmath.fsum(t * mpmath.log(t / s) for s, t in zip(p, q)))
            assert abs(r.evaluate(1, dps=35, epsilon=eps) - kl) <= mpmath.mpf(10) ** -32 * kl
            assert abs(r.evaluate(sp.oo, dps=35, epsilon=eps) - mpmath.mpf(sp.N(eps, 50))) <= mpmath.mpf(10) ** -32


def test_merging_needs_shown_equal_ratios_and_positive_masses():
    x = sp.Symbol("x", integer=True, nonnegative=True)
    p = sp.Symbol("p", positive=True)
    # binary randomized response: two distinct ratios, nothing to merge
    assert merge_equal_ratios(p**x * (1 - p) ** (1 - x), (1 - p) ** x * p ** (1 - x), x, sp.FiniteSet(0, 1)) is None
    # a mass not shown positive (1 - p with p only positive) leaves the pair as it is
    P = sp.Piecewise((p / 2, sp.Eq(x, 0)), (p / 2, sp.Eq(x, 1)), (1 - p, True))
    Q = sp.Piecewise((sp.Rational(1, 4), sp.Eq(x, 0)), (sp.Rational(1, 4), sp.Eq(x, 1)), (sp.Rational(1, 2), True))
    assert merge_equal_ratios(P, Q, x, sp.FiniteSet(0, 1, 2)) is None
    # numbers: outcomes 0 and 1 have ratio 2, outcome 2 ratio 2/3
    P = sp.Piecewise((sp.Rational(1, 4), sp.Eq(x, 0)), (sp.Rational(1, 4), sp.Eq(x, 1)), (sp.Rational(1, 2), True))
    Q = sp.Piecewise((sp.Rational(1, 8), sp.Eq(x, 0)), (sp.Rational(1, 8), sp.Eq(x, 1)), (sp.Rational(3, 4), True))
    merged = merge_equal_ratios(P, Q, x, sp.FiniteSet(0, 1, 2))
    assert merged is not None and merged.groups == ((2,), (0, 1))
    assert [merged.P.subs(x, k) for k in (0, 1)] == [sp.Rational(1, 2), sp.Rational(1, 2)]
    assert [merged.Q.subs(x, k) for k in (0, 1)] == [sp.Rational(3, 4), sp.Rational(1, 4)]


def test_product_densities_in_two_variables_are_sums_of_one_dimensional_divergences():
    x1, x2 = sp.symbols("x1 x2", real=True)
    b = sp.Symbol("b", positive=True)

    def lap(u):
        return sp.exp(-sp.Abs(u) / b) / (2 * b)

    P, Q = lap(x1) * lap(x2), lap(x1 - sp.Rational(1, 3)) * lap(x2 - sp.Rational(2, 3))
    with mpmath.workdps(40):
        def one(d, a):  # Laplace, scale 1 (Mironov 2017, Table II)
            return mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * d) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * d)) / (a - 1)

        for alpha in (sp.Rational(1, 3), sp.Integer(3), sp.Integer(1), sp.oo):
            v = rdpsym.numeric_divergence(P, Q, (x1, x2), sp.S.Reals**2, alpha, {"b": 1}, dps=30)
            assert v.converged and v.method == "product of one-dimensional divergences"
            d1, d2 = mpmath.mpf(1) / 3, mpmath.mpf(2) / 3
            if alpha == 1:
                want = d1 + mpmath.exp(-d1) - 1 + d2 + mpmath.exp(-d2) - 1
            elif alpha == sp.oo:
                want = d1 + d2
            else:
                am = mpmath.mpf(alpha.p) / alpha.q
                want = one(d1, am) + one(d2, am)
            assert abs(v.value - want) <= mpmath.mpf(10) ** -25 * want
    # not normalised: no factorisation claimed (the iterated quadrature's value, which is no divergence
    # of densities, is not this module's business)
    from rdpsym.numeric.products import product_divergence

    assert product_divergence(2 * P, Q, (x1, x2), sp.S.Reals**2, 3, {"b": 1}, 20, rdpsym.numeric_divergence) is None


def _subsampled_laplace():
    x = sp.Symbol("x", real=True)
    b, q = parameter("b", typical=(0.5, 2.0)), parameter("q", sp.Interval.open(0, 1), typical=(0.01, 0.5))

    def lap(m):
        return sp.exp(-sp.Abs(x - m) / b.symbol) / (2 * b.symbol)

    mix = (1 - q.symbol) * lap(0) + q.symbol * lap(1)
    return Mechanism("subsampled_laplace_user", x, sp.S.Reals, (AdjacentPair(mix, lap(0)),), (b, q)), mix, lap(0)


def _quad_divergence(p, q, a):
    cuts = [-mpmath.inf, 0, 1, mpmath.inf]
    return mpmath.log(mpmath.quad(lambda t: p(t) ** a * q(t) ** (1 - a), cuts)) / (a - 1)


def test_a_negative_power_of_a_mixture_is_refused_never_read_as_divergent():
    m, mix, lap0 = _subsampled_laplace()
    r = renyi_divergence_at_integer_order(lap0, mix, m.variable, m.support, 2, params=m.parameters)
    assert r.status is Status.NUMERIC_ONLY and "no finite multinomial expansion" in r.reason


@pytest.mark.parametrize("k", [2, 4, 7])
def test_subsampled_laplace_integer_orders_are_exact_in_both_directions(k):
    m, _, _ = _subsampled_laplace()
    r = rdpsym.rdp(m)
    got = r.evaluate_with_error(k, dps=35, b=1, q=sp.Rational(1, 10))
    assert got.exact
    with mpmath.workdps(45):
        def lap(t, c):
            return mpmath.exp(-abs(t - c)) / 2

        def mix(t):
            return mpmath.mpf(9) / 10 * lap(t, 0) + lap(t, 1) / 10

        def base(t):
            return lap(t, 0)

        want = max(_quad_divergence(mix, base, k), _quad_divergence(base, mix, k))
        assert abs(got.value - want) <= mpmath.mpf(10) ** -32 * want


def test_progress_option_reports_derivations_and_refuses_what_it_cannot_read(capsys):
    from rdpsym._numbers import ArgumentError
    from rdpsym._progress import Printer, progress_printer

    seen = []
    rdpsym.rdp(truncated_geometric(), progress=lambda done, total, what: seen.append((done, total, what)))
    assert [s[:2] for s in seen] == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    rdpsym.rdp(truncated_geometric(), progress=True)
    err = capsys.readouterr().err
    assert "derive truncated_geometric: 0/4 pair [0 vs 1]" in err and "4/4 pairs derived" in err
    assert progress_printer(None, "x") is None  # stderr is captured here, not a terminal: off by default
    assert progress_printer(False, "x") is None and isinstance(progress_printer(True, "x"), Printer)
    with pytest.raises(ArgumentError, match="progress"):
        progress_printer("yes", "x")


def test_verify_states_the_cost_of_a_two_dimensional_check_up_front():
    from rdpsym.verification.checks import _mechanism_target, expected_cost

    x1, x2 = sp.symbols("x1 x2", real=True)
    t1, t2 = sp.symbols("t1 t2", real=True)
    b, d = parameter("b", typical=(0.5, 2.0)), parameter("sensitivity", typical=(0.5, 2.0))

    def lap(u):
        return sp.exp(-sp.Abs(u) / b.symbol) / (2 * b.symbol)

    family = rdpsym.AdjacentFamily(lap(x1) * lap(x2), lap(x1 - t1) * lap(x2 - t2), shift=(t1, t2),
                                   over=rdpsym.ShiftBall(1, d.symbol))
    m = Mechanism("laplace2d", (x1, x2), sp.S.Reals**2, (family,), (b, d))
    closed = rdpsym.DivergenceResult(expr=rdpsym.alpha, status=Status.CLOSED_FORM)
    shifts = len(family.over.points(2, 3))
    text = expected_cost(closed, _mechanism_target(m), 9, 20)
    assert f"9 points x {2 * shifts} numeric divergences at 20 digits ({9 * 2 * shifts} in all)" in text
    assert "2 one-dimensional quadratures where the densities factor" in text


def _heavy_tailed(name):
    x = sp.Symbol("x", real=True)
    if name == "cauchy":
        g, d = parameter("gamma", typical=(0.5, 2.0)), parameter("sensitivity", typical=(0.5, 2.0))

        def dens(m):
            return g.symbol / (sp.pi * (g.symbol**2 + (x - m) ** 2))

        return Mechanism("cauchy_user", x, sp.S.Reals, (AdjacentPair(dens(0), dens(d.symbol)),), (g, d)), \
            {"gamma": sp.Rational(3, 4), "sensitivity": sp.Integer(1)}
    s = parameter("s", typical=(0.5, 2.0))
    c = sp.gamma(2) / (sp.sqrt(3 * sp.pi) * sp.gamma(sp.Rational(3, 2)))

    def dens(m):
        return c / s.symbol * (1 + ((x - m) / s.symbol) ** 2 / 3) ** -2

    return Mechanism("student_t3_user", x, sp.S.Reals, (AdjacentPair(dens(0), dens(1)),), (s,)), {"s": sp.Rational(5, 4)}


@pytest.mark.parametrize("name, k", [("cauchy", 7), ("student_t", 6)])
def test_heavy_tailed_integer_orders_are_exact_by_residues(name, k):
    m, vals = _heavy_tailed(name)
    r = rdpsym.rdp(m)
    got = r.evaluate_with_error(k, dps=35, **vals)
    assert got.exact, got.method
    at = {p.symbol: vals[p.name] for p in m.parameters}
    P, Q = m.pairs[0].P.subs(at), m.pairs[0].Q.subs(at)
    with mpmath.workdps(45):
        f = sp.lambdify(m.variable, P, modules="mpmath")
        g = sp.lambdify(m.variable, Q, modules="mpmath")
        want = max(_quad_divergence(f, g, k), _quad_divergence(g, f, k))
        assert abs(got.value - want) <= mpmath.mpf(10) ** -32 * want
