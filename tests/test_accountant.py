"""rdpsym.Accountant: composition (Mironov 2017 Prop. 1), continuous-alpha conversion, the pure-DP order,
group privacy, fail-closed behaviour, the report, the CLI, and cross-checks with Google's dp_accounting."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

import rdpsym
from rdpsym.accounting import compose, conversion
from rdpsym.accounting.accountant import GOLDEN_ITERATIONS, Accountant
from rdpsym.accounting.conversion import objective_values
from rdpsym.accounting.mathns import NUMPY
from rdpsym.accounting.orders import minimise
from rdpsym.accounting.curve_types import NUMERIC_GRID
from rdpsym.accounting.curves import mechanism_curve
from rdpsym.cli import main

M = rdpsym.mechanisms


def rel(a, b):
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    return abs(a - b) / max(abs(b), mpmath.mpf(10) ** -300)


@pytest.fixture(scope="module")
def mixed():
    """1000 Gaussians, one Laplace, three randomized responses."""
    acct = Accountant()
    acct.add("gaussian", count=1000, sigma=30.0).add("laplace", b=2.0).add("randomized_response", count=3, p=0.75)
    return acct


def exact_curve(alpha):
    """The same composition from the exact results, at 40 digits (rdpsym's engine, no float code)."""
    with mpmath.workdps(40):
        g = rdpsym.rdp(M.get("gaussian")).evaluate(alpha, dps=40, sigma=30, sensitivity=1)
        l = rdpsym.rdp(M.get("laplace")).evaluate(alpha, dps=40, b=2, sensitivity=1)
        r = rdpsym.rdp(M.get("randomized_response")).evaluate(alpha, dps=40, p=sp.Rational(3, 4))
        return 1000 * g + l + 3 * r


# -- composition ------------------------------------------------------------------------------------
def test_curve_is_the_sum_of_the_exact_curves(mixed):
    alphas = [sp.Rational(1, 2), sp.Rational(3, 4), 1, sp.Rational(11, 10), 2, sp.Rational(7, 2), 40, 1000]
    got = mixed.curve(np.array([float(a) for a in alphas]))
    for a, v in zip(alphas, got):
        assert rel(v, exact_curve(a)) <= 1e-12, a
    assert mixed.curve(np.inf) == np.inf and mixed.max_divergence == np.inf  # the Gaussian has D_inf = oo
    # shape and scalars: numpy broadcasting, a 0-d input gives a scalar
    assert mixed.curve(np.full((2, 3), 2.0)).shape == (2, 3) and np.ndim(mixed.curve(2.0)) == 0


def test_pure_dp_part_is_the_sum_of_max_divergences():
    acct = Accountant().add("laplace", count=4, b=2.0).add("randomized_response", count=2, p=0.75)
    # Laplace: sensitivity/b (Mironov 2017, Prop. 6); RR: log(p/(1-p)) (Prop. 5)
    assert rel(acct.max_divergence, 4 * 0.5 + 2 * math.log(3)) <= 1e-15
    assert acct.pure_epsilon == acct.max_divergence


def test_identical_events_merge_and_10000_adds_are_cheap():
    acct = Accountant()
    for _ in range(10_000):
        acct.add("gaussian", sigma=2.0)
    for _ in range(100):
        acct.add(M.get("gaussian"), sigma=2.0, sensitivity=1)  # equal Mechanism objects merge too
    # one event, so an add costs the same however many came before (timed in benchmarks/accounting.py)
    (event,) = acct.events
    assert event.count == 10_100 and dict(event.values) == {"sigma": 2.0, "sensitivity": 1.0}
    one = Accountant().add("gaussian", sigma=2.0)
    a = np.array([1.5, 2.0, 10.0])
    assert np.allclose(acct.curve(a), 10_100 * one.curve(a), rtol=1e-15, atol=0)
    # the mechanism's curve was prepared once (cached per mechanism), not per event
    assert mechanism_curve("gaussian") is mechanism_curve(M.get("gaussian"))


def test_count_zero_adds_nothing_but_is_validated():
    acct = Accountant().add("gaussian", count=0, sigma=1.0)
    assert acct.events == () and acct.curve(2.0) == 0
    with pytest.raises(ValueError, match="sigma"):
        acct.add("gaussian", count=0, sigma=-1.0)


@pytest.mark.parametrize("count", [-1, 1.5, True, "3", None])
def test_count_must_be_a_non_negative_integer(count):
    with pytest.raises(ValueError, match="count must be a non-negative integer"):
        Accountant().add("gaussian", count=count, sigma=1.0)


def test_values_are_validated_with_clear_errors():
    acct = Accountant()
    with pytest.raises(ValueError, match="'sigma' must lie in"):
        acct.add("gaussian", sigma=0.0)
    with pytest.raises(ValueError, match="'p' must lie in"):
        acct.add("randomized_response", p=0.4)
    with pytest.raises(ValueError, match="missing parameter.*sigma"):
        acct.add("gaussian")
    with pytest.raises(ValueError, match="'tau' is not a parameter"):
        acct.add("gaussian", sigma=1.0, tau=2.0)
    with pytest.raises(ValueError, match="not a finite number|not a number"):
        acct.add("gaussian", sigma=float("nan"))
    with pytest.raises(ValueError, match="unknown mechanism"):
        acct.add("no_such_mechanism", x=1)
    with pytest.raises(TypeError, match="mechanism"):
        acct.add(42, sigma=1.0)
    assert acct.events == ()


@pytest.mark.parametrize("bad", [0, -1, float("nan"), -np.inf])
def test_orders_must_be_positive(mixed, bad):
    with pytest.raises(ValueError, match="alpha must be > 0"):
        mixed.curve(np.array([2.0, bad]))


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, float("nan"), "1e-5"])
def test_delta_must_lie_in_0_1(mixed, bad):
    with pytest.raises(ValueError, match="delta"):
        mixed.epsilon(bad)


# -- conversion -------------------------------------------------------------------------------------
def test_numpy_objective_is_conversion_objective():
    a = np.array([1.001, 1.5, 3.0, 77.7, 1e6])
    r = np.array([1e-6, 0.3, 2.0, 40.0, 1e3])
    for method in conversion.METHODS:
        for kind, target in (("epsilon", 1e-7), ("delta", 0.9)):
            got = objective_values(method, kind, r, a, target, NUMPY)
            with mpmath.workdps(40):
                for g, ai, ri in zip(got, a, r):
                    want = conversion.objective(method, kind, mpmath.mpf(ri), mpmath.mpf(ai), mpmath.mpf(target))
                    assert rel(g, want) <= 1e-12


@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_epsilon_is_the_continuous_alpha_optimum(mixed, delta):
    """Against rdpsym.accounting.epsilon on the exact composed closed form at 30 digits (mpmath scan,
    golden section and sympy's stationary points): equal to 1e-9, and never below it by more than float
    rounding."""
    composed = compose(M.get("gaussian"), M.get("laplace"), M.get("randomized_response"), counts=[1000, 1, 3])
    values = dict(sigma_1=30, sensitivity_1=1, b_2=2, sensitivity_2=1, p_3=sp.Rational(3, 4))
    ref = conversion.epsilon(composed, delta, dps=30, **values)
    got = mixed.epsilon(delta)
    assert got.status == "optimal" and got.kind == "epsilon"
    assert rel(got.value, ref.value) <= 1e-9
    assert got.value >= float(ref.value) * (1 - 1e-13)
    assert abs(got.alpha - float(ref.alpha)) <= 1e-3 * float(ref.alpha)
    # the reported order really gives the reported epsilon
    with mpmath.workdps(30):
        at = conversion.objective("improved", "epsilon", exact_curve(sp.Float(got.alpha, 30)), mpmath.mpf(got.alpha), mpmath.mpf(delta))
    assert rel(got.value, at) <= 1e-12


def test_mironov_method_and_delta_direction(mixed):
    e_imp = mixed.epsilon(1e-6)
    e_mir = mixed.epsilon(1e-6, method="mironov")
    assert e_mir.value > e_imp.value  # CKS20 Prop. 12 is never worse than Prop. 3
    d = mixed.delta(e_imp.value)
    assert d.kind == "delta" and d.value <= 1e-6 * (1 + 1e-8) and d.value >= 1e-6 * (1 - 1e-6)
    assert mixed.delta(0.0).value <= 1.0


def test_pure_dp_order_wins_when_smaller():
    acct = Accountant().add("laplace", b=2.0)  # 0.5-DP
    # Prop. 3 adds log(1/delta)/(alpha-1) > log(2)/(alpha-1) ~ 0.5 - eps(alpha): the pure-DP order wins
    e = acct.epsilon(1e-12, method="mironov")
    assert e.status == "pure_dp" and e.alpha == math.inf and e.value == 0.5
    # CKS20 Prop. 12 goes below eps(oo) at large alpha (its log(1 - 1/alpha) - log(alpha)/(alpha-1) < 0)
    imp = acct.epsilon(1e-12)
    assert imp.status == "optimal" and imp.value < 0.5 and imp.alpha > 1e6
    d = acct.delta(0.5)
    assert d.status == "pure_dp" and d.value == 0.0
    assert acct.delta(0.4).value > 0  # below eps(oo): RDP orders only


def test_optimum_beyond_1e6_is_found_or_reported_at_the_edge():
    # a tiny curve: the optimum of the Gaussian's objective is alpha* ~ 1 + sqrt(log(1/delta) * 2 sigma^2)
    acct = Accountant().add("gaussian", sigma=1e4)
    e = acct.epsilon(1e-5)
    assert e.status == "optimal" and e.alpha > 1e4
    ref = conversion.epsilon(rdpsym.rdp(M.get("gaussian")), 1e-5, dps=30, sigma=10**4, sensitivity=1)
    assert rel(e.value, ref.value) <= 1e-9


# -- fail closed (each with the broken behaviour it guards against) -----------------------------------
def _patched(monkeypatch, fn):
    """An accountant with one Gaussian event whose float curve is replaced by fn(alpha)."""
    acct = Accountant().add("gaussian", count=100, sigma=3.0)
    curve = mechanism_curve("gaussian")
    original = curve._fn
    monkeypatch.setattr(curve, "_fn", lambda a, **p: fn(np.asarray(a, dtype=float), original(a, **p)))
    return acct


def test_nan_orders_never_win(monkeypatch):
    good = Accountant().add("gaussian", count=100, sigma=3.0).epsilon(1e-5)
    # NaN exactly where the true optimum is (and everywhere below alpha = 20)
    acct = _patched(monkeypatch, lambda a, v: np.where(a < 20, np.nan, v))
    assert np.isinf(acct.curve(np.array([2.0, good.alpha]))).all()
    e = acct.epsilon(1e-5)
    assert e.value >= good.value and e.alpha >= 20
    # control: had NaN been read as 0 (a broken accountant), the answer would have been far smaller
    a = np.array([good.alpha])
    broken = objective_values("improved", "epsilon", np.nan_to_num(np.where(a < 20, np.nan, 1.0), nan=0.0), a, 1e-5,
                              NUMPY)
    assert broken[0] < good.value < e.value


def test_nan_everywhere_gives_infinite_epsilon_not_zero(monkeypatch):
    acct = _patched(monkeypatch, lambda a, v: np.full(a.shape, np.nan))
    e = acct.epsilon(1e-5)
    assert e.value == math.inf and e.status == "infinite" and e.alpha is None and not e.finite
    assert acct.delta(1.0).value == 1.0


def test_infinite_orders_never_give_epsilon_zero(monkeypatch):
    acct = _patched(monkeypatch, lambda a, v: np.full(a.shape, np.inf))
    e = acct.epsilon(1e-5)
    assert e.value == math.inf and e.status == "infinite"
    # control: the same search with inf read as "skip this order" and an empty minimum read as 0
    a = 1 + np.exp(np.linspace(-13.8, 13.8, 241))
    vals = np.array(objective_values("improved", "epsilon", acct.curve(a), a, 1e-5, NUMPY))
    assert np.isinf(vals).all() and max([0.0, *vals[np.isfinite(vals)]]) == 0.0


def test_infinite_max_divergence_is_not_a_candidate():
    r = Accountant().add("gaussian", sigma=1.0).add("laplace", b=1.0)
    e = r.epsilon(1e-5)
    assert r.curve(np.inf) == np.inf and e.status == "optimal" and math.isfinite(e.alpha) and e.pure_epsilon == np.inf


def test_negative_curve_is_an_error(monkeypatch):
    acct = _patched(monkeypatch, lambda a, v: v - 1.0)
    with pytest.raises(ArithmeticError, match="negative"):
        acct.epsilon(1e-5)


def test_partially_infinite_curve_uses_only_finite_orders(monkeypatch):
    # +inf above alpha = 3 (a curve with a finiteness condition): the optimum is inside (1, 3]
    acct = _patched(monkeypatch, lambda a, v: np.where(a > 3, np.inf, v))
    e = acct.epsilon(1e-5)
    assert 1 < e.alpha <= 3 and math.isfinite(e.value)
    assert e.value >= Accountant().add("gaussian", count=100, sigma=3.0).epsilon(1e-5).value


# -- group privacy ----------------------------------------------------------------------------------
def test_group_privacy_exact_for_the_gaussian_bound_for_randomized_response():
    acct = Accountant().add("gaussian", count=10, sigma=4.0).add("randomized_response", p=0.75)
    g2 = acct.group_privacy(2)
    assert g2.group_size == 2 and acct.group_size == 1
    a = np.array([1.5, 2.0, 3.0, 8.0])
    gauss = rdpsym.accounting.group_privacy(M.get("gaussian"), 2)
    rr = rdpsym.accounting.group_privacy(M.get("randomized_response"), 2)
    assert gauss.status is rdpsym.Status.CLOSED_FORM and rr.status is rdpsym.Status.BOUND
    for ai, v in zip(a, g2.curve(a)):
        with mpmath.workdps(30):
            want = 10 * gauss.evaluate(ai, sigma=4, sensitivity=1) + rr.evaluate(ai, p=sp.Rational(3, 4))
        assert (v == math.inf and want == mpmath.inf) or rel(v, want) <= 1e-12
    assert g2.curve(1.5) == np.inf  # Prop. 2 says nothing in (1, 2): +inf, no claim
    # the exact group curve of the Gaussian: k^2 alpha / (2 sigma^2) (Mironov 2017, Prop. 7, shift k)
    assert rel(g2.curve(2.0) - rr.evaluate(2, p=sp.Rational(3, 4)), 10 * 4 * 2 / 32) <= 1e-14
    provs = {e.name: e.provenance for e in g2.events}
    assert provs == {"gaussian": "closed form", "randomized_response": "bound"}
    assert g2.epsilon(1e-5).value > acct.epsilon(1e-5).value
    # pure DP scales by k: the accountant's pure-DP part of a group (the group-2 curve compiled above, no
    # new float code) ...
    rr1 = Accountant().add("randomized_response", p=0.75)
    assert rel(rr1.group_privacy(2).max_divergence, 2 * math.log(3)) <= 1e-15
    # ... and the factor itself, k (not 2^c or 3^c: k = 3 tells them apart), which group_privacy sets
    # symbolically and the float code only evaluates; the accountant at k = 3 (its own float code, about a
    # minute of sympy series) is test_group_privacy_scales_the_pure_dp_part_by_k in the slow run
    with mpmath.workdps(30):
        d3 = rdpsym.accounting.group_privacy(M.get("randomized_response"), 3).evaluate(sp.oo, p=sp.Rational(3, 4))
        assert rel(d3, 3 * mpmath.log(3)) <= 1e-28


@pytest.mark.slow
def test_group_privacy_scales_the_pure_dp_part_by_k():
    rr1 = Accountant().add("randomized_response", p=0.75)
    assert rel(rr1.group_privacy(3).max_divergence, 3 * math.log(3)) <= 1e-15


def test_group_size_is_validated():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="group"):
            Accountant(group_size=bad)
        with pytest.raises(ValueError, match="k must be a positive integer"):
            Accountant().group_privacy(bad)


# -- numeric curves ---------------------------------------------------------------------------------
def test_numeric_curve_is_an_upper_bound_equal_at_the_grid_orders():
    """The numeric curve (no closed form used) of the Gaussian: equal to the closed form at grid orders,
    above it between them (monotone step bound), D_inf above the grid."""
    num = Accountant().add("gaussian", sigma=2.0, curve="numeric")
    closed = Accountant().add("gaussian", sigma=2.0)
    (event,) = num.events
    assert event.provenance == "numeric" and "numeric_divergence" in event.detail
    grid = np.array([2.0, 4.0])
    assert np.allclose(num.curve(grid), closed.curve(grid), rtol=1e-12, atol=0)
    between = np.array([1.9, 3.1])
    assert (num.curve(between) >= closed.curve(between)).all()
    assert np.array_equal(num.curve(between), num.curve(grid))  # the next grid order's value
    assert num.curve(2 * NUMERIC_GRID[-1]) == np.inf  # above the grid: D_inf (= oo for the Gaussian)
    with pytest.raises(ValueError, match="one curve per mechanism"):
        num.add("gaussian", sigma=2.0)


# -- subsampled Gaussian ----------------------------------------------------------------------------
def test_subsampled_gaussian_event_uses_the_subsampled_curve():
    from rdpsym.accounting.subsampled import subsampled_gaussian_rdp

    acct = Accountant().add("subsampled_gaussian", count=1000, q=0.01, sigma=1.1)
    a = np.array([1.5, 2.0, 3.0, 16.0])
    assert np.array_equal(acct.curve(a), 1000 * subsampled_gaussian_rdp(a, 0.01, 1.1))
    assert acct.curve(np.inf) == np.inf
    (event,) = acct.events
    assert event.provenance == "subsampled"
    with pytest.raises(ValueError, match="'q' must lie in"):
        acct.add("subsampled_gaussian", q=1.5, sigma=1.0)
    e = acct.epsilon(1e-5)
    assert e.status == "optimal" and math.isfinite(e.value)
    # groups of 2: Mironov 2017, Prop. 2 on the float curve (3 eps(2 alpha) from alpha = 2 on, no claim below)
    g2 = acct.group_privacy(2)
    assert g2.events[0].provenance == "bound"
    assert g2.curve(1.5) == np.inf and rel(g2.curve(2.0), 3 * 1000 * subsampled_gaussian_rdp(4.0, 0.01, 1.1)) <= 1e-15
    # q = 1 is the Gaussian
    g = Accountant().add("subsampled_gaussian", count=7, q=1.0, sigma=2.0).curve(a)
    assert np.allclose(g, Accountant().add("gaussian", count=7, sigma=2.0).curve(a), rtol=1e-10, atol=0)


# -- report -----------------------------------------------------------------------------------------
def test_report_names_the_dominating_event(mixed):
    rep = mixed.report(delta=1e-5)
    conv = rep.conversion
    contrib = dict((e.label, v) for e, v in mixed.contributions(conv.alpha))
    assert rep.dominant.label == max(contrib, key=contrib.get)
    assert sorted(contrib.values())[-2] < contrib[rep.dominant.label]
    assert rel(sum(contrib.values()), conv.rdp_at_alpha) <= 1e-12
    md = rep.markdown()
    assert f"{conv.value:.6g}" in md and "dominating mechanism" in md and "| laplace(b=2, sensitivity=1) | 1 |" in md
    assert "closed form" in md and "randomized_response(p=0.75)" in str(rep)
    # rich renders it
    from rich.console import Console

    console = Console(record=True, width=160)
    console.print(rep)
    text = console.export_text()
    assert "gaussian(sigma=30" in text and f"dominating mechanism at the optimal alpha: {rep.dominant.label}" in text
    assert rep.as_dict()["dominant"] == rep.dominant.label
    with pytest.raises(ValueError, match="exactly one"):
        mixed.report()


def test_report_changes_dominance_with_the_mix():
    acct = Accountant().add("gaussian", sigma=30.0).add("laplace", count=50, b=1.0)
    assert acct.report(delta=1e-5).dominant.name == "laplace"


# -- CLI --------------------------------------------------------------------------------------------
def test_cli_example_matches_the_api():
    args = ["account", "--add", "gaussian:sigma=1.1", "--count", "1000", "--add", "laplace:b=2", "--delta", "1e-5"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    want = Accountant().add("gaussian", count=1000, sigma=1.1).add("laplace", b=2).epsilon(1e-5)
    assert f"epsilon = {want.value:.6g}" in out.output and f"optimal alpha: {want.alpha:.6g}" in out.output
    assert "dominating mechanism at the optimal alpha: gaussian(sigma=1.1, sensitivity=1) x 1000" in out.output


def test_cli_counts_follow_their_add_and_epsilon_mode():
    runner = CliRunner()
    out = runner.invoke(main, ["account", "--add", "laplace:b=2", "--add", "gaussian:sigma=3,sensitivity=1/2",
                               "--count", "7", "--epsilon", "1", "--markdown"])
    assert out.exit_code == 0, out.output
    assert "| laplace(b=2, sensitivity=1) | 1 |" in out.output and "| gaussian(sigma=3, sensitivity=0.5) | 7 |" in out.output
    want = Accountant().add("laplace", b=2).add("gaussian", count=7, sigma=3, sensitivity=0.5).delta(1.0)
    assert f"delta = {want.value:.6g}" in out.output


@pytest.mark.parametrize("args, message", [
    (["--add", "gaussian:sigma=__import__('os')", "--delta", "1e-5"], "is not a number"),
    (["--add", "gaussian:sigma=1+1", "--delta", "1e-5"], "is not a number"),
    (["--add", "gaussian:sigma=nan", "--delta", "1e-5"], "is not a number"),
    (["--count", "3", "--add", "gaussian:sigma=1", "--delta", "1e-5"], "must follow an --add"),
    (["--add", "gaussian:sigma=1", "--count", "2", "--count", "3", "--delta", "1e-5"], "must follow an --add"),
    (["--add", "gaussian:sigma=-1", "--delta", "1e-5"], "must lie in"),
    (["--add", "gaussian:sigma=1", "--count", "-2", "--delta", "1e-5"], "-2"),
    (["--add", "gaussian:sigma=1"], "exactly one of --delta and --epsilon"),
    (["--add", "gaussian:sigma=1", "--delta", "2"], "delta must lie in"),
    # review finding: Fraction("1e999999999") built a billion-digit integer (a hang); 1e999 overflowed
    (["--add", "gaussian:sigma=1e999999999", "--delta", "1e-5"], "not a finite float64 number"),
    (["--add", "gaussian:sigma=1e999", "--delta", "1e-5"], "not a finite float64 number"),
    (["--add", "gaussian:sigma=1/1e-999", "--delta", "1e-5"], "divides by zero"),
])
def test_cli_rejects_bad_input(args, message):
    out = CliRunner().invoke(main, ["account", *args])
    assert out.exit_code != 0 and message in out.output, out.output


# -- cross-checks with Google's dp_accounting -----------------------------------------------------------
def _dpa():
    return pytest.importorskip("dp_accounting")


def _dpa_rdp(event, orders, relation=None):
    from dp_accounting import rdp

    kw = {} if relation is None else {"neighboring_relation": relation}
    acc = rdp.RdpAccountant(orders=list(orders), **kw)
    acc.compose(event)
    return np.array(acc._rdp)  # noqa: SLF001 - the RDP at the orders is what we compare


def test_dp_accounting_gaussian_laplace_rr_agree_at_its_orders():
    dpa = _dpa()
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS, NeighborRel

    orders = np.array([o for o in DEFAULT_RDP_ORDERS if o > 1], dtype=float)
    cases = [
        # dp_accounting's noise multiplier is sigma / sensitivity; its Laplace event has scale b / sensitivity;
        # its randomized response (REPLACE_ONE, k = 2) reports the truth with probability 1 - noise/2
        (Accountant().add("gaussian", sigma=1.7, sensitivity=1), dpa.GaussianDpEvent(1.7), None),
        (Accountant().add("gaussian", sigma=3.0, sensitivity=2), dpa.GaussianDpEvent(1.5), None),
        (Accountant().add("laplace", b=2.5), dpa.LaplaceDpEvent(2.5), None),
        (Accountant().add("laplace", b=0.3), dpa.LaplaceDpEvent(0.3), None),
        (Accountant().add("randomized_response", p=0.75), dpa.RandomizedResponseDpEvent(0.5, 2),
         NeighborRel.REPLACE_ONE),
        (Accountant().add("randomized_response", p=0.99), dpa.RandomizedResponseDpEvent(0.02, 2),
         NeighborRel.REPLACE_ONE),
    ]
    for acct, event, relation in cases:
        ours, theirs = acct.curve(orders), _dpa_rdp(event, orders, relation)
        assert np.all(np.abs(ours - theirs) <= 1e-9 * np.abs(theirs)), (acct.events, np.max(np.abs(ours / theirs - 1)))


def test_dp_accounting_subsampled_gaussian_agrees_at_integer_orders():
    dpa = _dpa()
    orders = np.arange(2, 65, dtype=float)
    for q, sigma in [(0.01, 1.1), (0.1, 2.0), (0.001, 0.8), (0.5, 4.0)]:
        ours = Accountant().add("subsampled_gaussian", q=q, sigma=sigma).curve(orders)
        theirs = _dpa_rdp(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), orders)
        assert np.all(np.abs(ours - theirs) <= 1e-9 * theirs), (q, sigma, np.max(np.abs(ours / theirs - 1)))


def test_dp_accounting_epsilon_is_never_tighter_than_ours():
    """Same events; dp_accounting minimises over its default orders, we over continuous alpha: our epsilon
    is at most theirs (up to float rounding) and at least the exact continuous optimum."""
    dpa = _dpa()
    from dp_accounting import rdp

    events = [("gaussian", dict(sigma=1.1), 1000, dpa.GaussianDpEvent(1.1)),
              ("laplace", dict(b=20.0), 300, dpa.LaplaceDpEvent(20.0))]
    acct, theirs = Accountant(), rdp.RdpAccountant()
    for name, vals, n, ev in events:
        acct.add(name, count=n, **vals)
        theirs.compose(ev, n)
    for delta in (1e-5, 1e-8):
        ours = acct.epsilon(delta)
        eps_t, order_t = theirs.get_epsilon_and_optimal_order(delta)
        assert ours.value <= eps_t * (1 + 1e-12)
        composed = compose(M.get("gaussian"), M.get("laplace"), counts=[1000, 300])
        ref = conversion.epsilon(composed, delta, dps=30, sigma_1=sp.Rational(11, 10), sensitivity_1=1, b_2=20,
                                 sensitivity_2=1)
        assert rel(ours.value, ref.value) <= 1e-9
        assert eps_t >= float(ref.value)  # a grid of orders can only lose


def test_branch_and_bound_scan_finds_the_full_scan_optimum():
    """With an expensive curve (here the numeric one) the scan skips orders where the cheap curves alone
    already lose; the optimum must be the one a full scan finds, with fewer evaluations of the costly curve."""
    acct = Accountant().add("laplace", count=30, b=3.0).add("gaussian", count=2, sigma=5.0, curve="numeric")

    def objective(alphas):
        return objective_values("improved", "epsilon", acct.curve(np.asarray(alphas)), alphas, 1e-5, NUMPY)

    full = minimise(objective, NUMPY, GOLDEN_ITERATIONS)
    got = acct.epsilon(1e-5)
    assert got.evaluations < full[3]
    assert got.value == pytest.approx(full[1], rel=1e-13, abs=0) and got.alpha == pytest.approx(full[0], rel=1e-9)
    assert got.value >= Accountant().add("laplace", count=30, b=3.0).add("gaussian", count=2, sigma=5.0).epsilon(1e-5).value


def test_delta_of_a_useless_guarantee_is_one_not_an_overflow():
    """Review finding: log delta > 709 overflowed math.exp (sigma = 1e-5 at epsilon = 0)."""
    acc = rdpsym.Accountant().add("gaussian", sigma=1e-5)
    res = acc.delta(0.0)
    assert res.value == 1.0
    out = CliRunner().invoke(main, ["account", "--add", "gaussian:sigma=1e-5", "--epsilon", "0"])
    assert out.exit_code == 0 and "delta = 1" in out.output, out.output


@pytest.mark.parametrize("count, match", [(2**53 + 1, "at most 2"), (10**400, "at most 2"), (1.5, "non-negative integer")])
def test_counts_must_be_exact(count, match):
    with pytest.raises(ValueError, match=match):
        rdpsym.Accountant().add("gaussian", count, sigma=1.0)


@pytest.mark.parametrize("alpha", ["2", b"2", ["2", "3"], None])
def test_curve_orders_must_be_numbers(alpha):
    with pytest.raises(ValueError, match="alpha must be a number"):
        rdpsym.Accountant().add("gaussian", sigma=1.0).curve(alpha)


def test_a_curve_prepared_while_a_time_limit_expired_is_not_kept(monkeypatch, expire_a_time_limit):
    """mechanism_curve caches prepared curves per process; one prepared while a time limit expired (a
    derivation that fell back to the numeric curve) must be prepared again next time, like every cache."""
    from rdpsym.accounting import curves

    real, calls = curves._prepare, []

    def slow_then_real(*args):
        calls.append(1)
        expire_a_time_limit()
        return real(*args)

    curves.clear_cache()
    monkeypatch.setattr(curves, "_prepare", slow_then_real)
    try:
        curves.mechanism_curve("gaussian")
        curves.mechanism_curve("gaussian")
        assert len(calls) == 2
        monkeypatch.setattr(curves, "_prepare", real)
        assert curves.mechanism_curve("gaussian") is curves.mechanism_curve("gaussian")
    finally:
        curves.clear_cache()


@pytest.mark.slow  # about 7 minutes cold, generating the discrete Laplace float code; hyperbolic float code
# is in the default run (tests/test_codegen_accuracy.py::test_hyperbolic_values_and_their_logs_have_float_code)
def test_discrete_laplace_accounts_with_its_closed_form_and_the_optimal_epsilon():
    """Issue 30, item 5: the discrete Laplace pmfs' closed form (tanh of its normaliser) has float code,
    so the accountant composes the derived curve, not the numeric grid (which, between its orders, is
    the next order's value: 1.2e-4 above the optimum for 1,000 steps at b = 10). Checked independently:
    D_alpha as the mpmath sum of its definition over the lattice Z (shift 1, the worst pair), the
    conversion of Canonne, Kamath and Steinke 2020, Prop. 12, and its minimum over alpha by a
    golden-section search in log(alpha - 1), all at 50 digits."""
    b, count, delta = 10.0, 1000, 1e-5
    acc = Accountant().add(rdpsym.mechanisms.get("discrete_laplace"), count, b=b, sensitivity=1)
    assert mechanism_curve(rdpsym.mechanisms.get("discrete_laplace")).provenance == "closed form"
    e = acc.epsilon(delta)
    assert np.isfinite(e.value) and e.status == "optimal"

    def d_alpha(a):
        c = mpmath.tanh(1 / (2 * mpmath.mpf(b)))

        def term(k):
            return (c * mpmath.exp(-abs(k) / b)) ** a * (c * mpmath.exp(-abs(k - 1) / b)) ** (1 - a)
        return mpmath.log(mpmath.nsum(term, [-mpmath.inf, 0]) + mpmath.nsum(term, [1, mpmath.inf])) / (a - 1)

    def eps_at(u):
        a = 1 + mpmath.exp(u)
        return count * d_alpha(a) + mpmath.log1p(-1 / a) - (mpmath.log(delta) + mpmath.log(a)) / (a - 1)

    with mpmath.workdps(50):
        a = mpmath.mpf(e.alpha)
        rdp_exact = count * d_alpha(a)
        assert abs(e.rdp_at_alpha - rdp_exact) <= 1e-12 * rdp_exact
        assert abs(e.value - eps_at(mpmath.log(a - 1))) <= 1e-12 * e.value
        us = [mpmath.mpf(-10) + mpmath.mpf(i) / 2 for i in range(49)]
        i = min(range(49), key=lambda j: eps_at(us[j]))
        lo, hi, g = us[max(i - 1, 0)], us[min(i + 1, 48)], (mpmath.sqrt(5) - 1) / 2
        for _ in range(50):  # the bracket shrinks to 1e-10: the minimum to far below 1e-9
            x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
            lo, hi = (lo, x2) if eps_at(x1) < eps_at(x2) else (x1, hi)
        best = eps_at((lo + hi) / 2)
        assert best * (1 - 1e-12) <= e.value <= best * (1 + 1e-9), (e.value, best)
