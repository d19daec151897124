"""The Poisson-subsampled Gaussian: the mechanism, integer orders derived by the engine, the float64 code
against 50-digit mpmath, fail-closed behaviour, input validation, and dp_accounting at integer orders.

The published binomial form sum_j binom(k, j) (1-q)^(k-j) q^j exp(j(j-1)/(2 sigma^2)) (Mironov, Talwar,
Zhang 2019, arXiv:1908.10530, Sect. 3.3, integer alpha) appears here only as the claim to check.
"""

from __future__ import annotations

import itertools
import math
import time
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms
from rdpsym.accounting.subsampled import OUTWARD, subsampled_gaussian_rdp, subsampled_gaussian_rdp_mp
from rdpsym.derive.result import Status

ALPHA = rdpsym.alpha


def published_integer_order(k, q, sigma):
    """MTZ 2019 Sect. 3.3 at integer alpha = k: log(sum_j binom(k,j)(1-q)^(k-j) q^j e^{j(j-1)/(2 sigma^2)})/(k-1)."""
    A = sum(sp.binomial(k, j) * (1 - q) ** (k - j) * q**j * sp.exp(sp.Integer(j * (j - 1)) / (2 * sigma**2))
            for j in range(k + 1))
    return sp.log(A) / (k - 1)


def rel(a, b):
    return abs(a - b) / abs(b)


_REFS: dict = {}


def reference(a, q, s, dps=50):
    """The mpmath reference, computed once per session and point (tests share it)."""
    key = (a, q, s, dps)
    if key not in _REFS:
        _REFS[key] = subsampled_gaussian_rdp_mp(a, q, s, dps=dps)
    return _REFS[key]


# -- the float code against the 50-digit reference -------------------------------------------------------
#: default grid (cheap reference points): alpha in [1, 20.5], q in [1e-4, 0.999], sigma in [0.3, 50]
GRID_QUICK = [
    (1 + 1e-6, 1e-4, 50.0), (1 + 1e-6, 0.5, 0.3), (1.5, 0.01, 1.0), (1.5, 0.1, 0.5), (2.5, 1e-4, 0.3),
    (7.25, 0.999, 2.0), (20.5, 0.02, 5.0), (1.0, 0.1, 1.0),
]
GRID_SLOW = list(itertools.product((1 + 1e-6, 1.5, 3.7, 33.3, 256.0), (1e-4, 1e-2, 0.3, 0.9), (0.3, 1.0, 50.0)))


def _max_rel_error(grid, dps=50):
    """(largest relative error, largest relative error before the outward rounding) over ``grid``."""
    worst = worst_raw = 0.0
    with mpmath.workdps(dps):
        for a, q, s in grid:
            got = mpmath.mpf(float(subsampled_gaussian_rdp(a, q, s)))
            ref, err = reference(a, q, s, dps=dps)
            assert err <= mpmath.mpf(10) ** -30 * abs(ref), (a, q, s, err)
            # fail closed: never below the reference
            assert got >= ref, (a, q, s, got, ref)
            worst = max(worst, float(abs(got - ref) / ref))
            worst_raw = max(worst_raw, float(abs(got / (1 + mpmath.mpf(OUTWARD)) - ref) / ref))
    return worst, worst_raw


def test_float_against_mpmath_quick():
    worst, _ = _max_rel_error(GRID_QUICK)
    assert worst <= 1e-10, worst


@pytest.mark.slow
def test_float_against_mpmath_grid():
    worst, raw = _max_rel_error(GRID_SLOW)
    print(f"max relative error over {len(GRID_SLOW)} points: {worst:.3e} ({raw:.3e} before the outward rounding)")
    assert worst <= 1e-10, worst


def test_outward_rounding_dominates_the_float_error():
    """The raw error (result / (1 + OUTWARD) vs the reference) is far below the margin OUTWARD."""
    with mpmath.workdps(50):
        for a, q, s in GRID_QUICK[:6]:
            raw = mpmath.mpf(float(subsampled_gaussian_rdp(a, q, s))) / (1 + mpmath.mpf(OUTWARD))
            ref, _ = reference(a, q, s)
            assert abs(raw - ref) / ref < OUTWARD / 10, (a, q, s)


def test_the_accuracy_check_fails_for_the_absolute_value_series():
    """The MTZ two-sided series summed in absolute values (the field's known bug) overstates the RDP at
    alpha = 1.5 by several percent: the same comparison with the reference rejects it."""

    def abs_series(alpha, q, sigma, terms=2000):
        from scipy import special

        z0 = sigma**2 * math.log(1 / q - 1) + 0.5
        logs = []
        for i in range(terms):
            # log |binom(alpha, i)|: gammaln is log|Gamma|, so the sign of the term is dropped (the bug)
            log_c = special.gammaln(alpha + 1) - special.gammaln(i + 1) - special.gammaln(alpha - i + 1)
            j = alpha - i
            logs.append(log_c + i * math.log(q) + j * math.log1p(-q) + (i * i - i) / (2 * sigma**2)
                        + math.log(0.5 * math.erfc((i - z0) / (math.sqrt(2) * sigma)) + 1e-300))
            logs.append(log_c + j * math.log(q) + i * math.log1p(-q) + (j * j - j) / (2 * sigma**2)
                        + math.log(0.5 * math.erfc((z0 - j) / (math.sqrt(2) * sigma)) + 1e-300))
        return float(special.logsumexp(logs)) / (alpha - 1)

    a, q, s = 1.5, 0.01, 1.0
    with mpmath.workdps(50):
        ref, _ = reference(a, q, s)
        wrong = abs_series(a, q, s)
        assert rel(mpmath.mpf(wrong), ref) > 0.01
        assert rel(mpmath.mpf(float(subsampled_gaussian_rdp(a, q, s))), ref) <= 1e-10


def test_tiny_sampling_rates():
    """q = 1e-20: L(x) ~ q e^s is tiny even where s is large (a capped exponent once broke this);
    q = 1e-300: the RDP (~1e-600) is below the float range and rounds up, never down to 0."""
    with mpmath.workdps(30):
        ref, err = reference(2.5, 1e-20, 0.3, dps=30)
        assert err <= mpmath.mpf(10) ** -20 * ref  # the reference is certain far beyond the 1e-10 compared
        got = mpmath.mpf(float(subsampled_gaussian_rdp(2.5, 1e-20, 0.3)))
        assert got >= ref and rel(got, ref) <= 1e-10
    assert subsampled_gaussian_rdp(2.5, 1e-300, 1.0) > 0
    assert subsampled_gaussian_rdp(3.0, 1e-300, 1.0) > 0


def test_reverse_direction_never_dominates():
    """D_alpha(Q||P) <= D_alpha(P||Q) at alpha >= 1 (MTZ 2019, Sect. 3), re-checked at 30 digits."""
    with mpmath.workdps(30):
        for a, q, s in [(1 + 1e-6, 0.5, 0.3), (1.5, 0.1, 0.5), (2, 0.9, 1.0), (1, 0.3, 0.7)]:
            fwd, _ = subsampled_gaussian_rdp_mp(a, q, s, dps=30)
            rev, _ = subsampled_gaussian_rdp_mp(a, q, s, dps=30, reverse=True)
            assert rev <= fwd, (a, q, s, rev, fwd)
            assert rev > 0


def test_orders_below_one_take_the_larger_direction():
    """Below alpha = 1 the reverse direction can dominate (alpha = 1/4 here); the float code uses skew
    symmetry D_alpha(Q||P) = alpha/(1-alpha) D_{1-alpha}(P||Q), the reference integrates both directly."""
    with mpmath.workdps(30):
        fwd, _ = subsampled_gaussian_rdp_mp(0.25, 0.5, 0.5, dps=30, forward_only=True)
        rev, _ = subsampled_gaussian_rdp_mp(0.25, 0.5, 0.5, dps=30, reverse=True)
        fwd_34, _ = subsampled_gaussian_rdp_mp(0.75, 0.5, 0.5, dps=30, forward_only=True)
        assert rev > fwd * 1.1
        assert rel(rev, fwd_34 / 3) < mpmath.mpf(10) ** -25  # the identity, checked by integration
        got = mpmath.mpf(float(subsampled_gaussian_rdp(0.25, 0.5, 0.5)))
        assert got >= rev and rel(got, rev) <= 1e-10
        # the check can fail: the forward direction alone is far too small
        assert rel(fwd, rev) > 0.1


# -- special orders and parameters ------------------------------------------------------------------------
def test_special_cases():
    assert subsampled_gaussian_rdp(3.5, 0.0, 1.0) == 0.0
    assert subsampled_gaussian_rdp(np.inf, 0.0, 1.0) == 0.0
    assert subsampled_gaussian_rdp(np.inf, 1e-9, 100.0) == np.inf
    # q = 1 is the Gaussian mechanism (Mironov 2017, Prop. 7), up to the outward rounding
    assert subsampled_gaussian_rdp(3.5, 1.0, 2.0) == pytest.approx(3.5 / 8, rel=2 * OUTWARD)
    assert subsampled_gaussian_rdp(3.5, 1.0, 2.0) >= 3.5 / 8
    # alpha = 1 is the KL divergence, the limit of the curve
    kl = subsampled_gaussian_rdp(1.0, 0.1, 1.0)
    near = subsampled_gaussian_rdp(1 + 1e-9, 0.1, 1.0)
    assert abs(near - kl) / kl < 1e-7
    with mpmath.workdps(50):
        ref, _ = reference(1.0, 0.1, 1.0)
        assert rel(mpmath.mpf(float(kl)), ref) <= 1e-10


def test_broadcasting_and_monotonicity():
    alphas = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 10.0, 32.0])[:, None]
    qs = np.array([1e-3, 0.1])[None, :]
    out = subsampled_gaussian_rdp(alphas, qs, 1.5)
    assert out.shape == (7, 2)
    assert np.all(np.diff(out, axis=0) > 0)
    assert np.all(out[:, 1] > out[:, 0])
    assert isinstance(subsampled_gaussian_rdp(2.0, 0.1, 1.0), np.floating)


def test_batched_orders_equal_single_orders():
    """A curve's fractional orders share one mesh per factor-2 group: same values as one at a time."""
    orders = np.array([1.05, 1.5, 1.99, 2.5, 3.9, 7.5, 15.5, 100.5])
    for q, s in [(1e-3, 0.8), (0.2, 3.0)]:
        together = subsampled_gaussian_rdp(orders, q, s)
        alone = np.array([subsampled_gaussian_rdp(a, q, s) for a in orders])
        assert np.all(np.abs(together - alone) <= 1e-13 * alone), (q, s)


def test_fail_closed():
    out = subsampled_gaussian_rdp(np.array([np.nan, 2.0, np.inf]), 0.1, 1.0)
    assert out[0] == np.inf and np.isfinite(out[1]) and out[2] == np.inf
    # huge orders overflow nothing and stay finite, non-decreasing
    big = subsampled_gaussian_rdp(np.array([1000.0, 1000.5, 1001.0]), 0.01, 0.5)
    assert np.all(np.isfinite(big)) and np.all(np.diff(big) > 0)


@pytest.mark.parametrize("kwargs, rule", [
    (dict(alpha=2.0, q=1.5, sigma=1.0), "q must be in"),
    (dict(alpha=2.0, q=-0.1, sigma=1.0), "q must be in"),
    (dict(alpha=2.0, q=np.nan, sigma=1.0), "q must be in"),
    (dict(alpha=2.0, q=0.1, sigma=0.0), "sigma must be"),
    (dict(alpha=2.0, q=0.1, sigma=np.inf), "sigma must be"),
    (dict(alpha=2.0, q=0.1, sigma=np.nan), "sigma must be"),
    (dict(alpha=0.0, q=0.1, sigma=1.0), "alpha must be > 0"),
    (dict(alpha=-np.inf, q=0.1, sigma=1.0), "alpha must be > 0"),
])
def test_input_validation(kwargs, rule):
    with pytest.raises(ValueError, match=rule):
        subsampled_gaussian_rdp(**kwargs)
    with pytest.raises(ValueError, match=rule):
        subsampled_gaussian_rdp_mp(**kwargs, dps=20)


# -- the mechanism and the engine -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mech():
    return mechanisms.get("subsampled_gaussian")


def sampled_pair(mech):
    """(P, Q) = ((1 - q) N(0, sigma^2) + q N(1, sigma^2), N(0, sigma^2)) from the registered densities: the
    first subsampled pair (base density, mixture) at its largest shift t = 1, mixture first."""
    family = mech.pairs[0]
    top = family.over.sup
    return SimpleNamespace(P=family.Q.subs(family.shift, top), Q=family.P.subs(family.shift, top))


def test_the_mechanism_is_the_subsampled_gaussian_at_sensitivity_one(mech):
    """subsample(gaussian(), q) with the sensitivity fixed to 1: the sampled pair of MTZ 2019, Sect. 3."""
    x, q, s = mech.variable, mech.params["q"], mech.params["sigma"]
    assert mech.subsampling is not None and mech.subsampling.scheme == "poisson"
    pair = sampled_pair(mech)
    normal = lambda m: sp.exp(-(x - m) ** 2 / (2 * s**2)) / sp.sqrt(2 * sp.pi * s**2)  # noqa: E731
    assert sp.simplify(pair.P - ((1 - q) * normal(0) + q * normal(1))) == 0
    assert sp.simplify(pair.Q - normal(0)) == 0
    assert sp.simplify(pair.P - ((1 - q) * normal(0) + q * normal(2))) != 0  # the check can fail


@pytest.fixture(scope="module")
def derived_orders(mech):
    from rdpsym.derive.integer_order import renyi_divergence_at_integer_order

    pair = sampled_pair(mech)
    return {k: renyi_divergence_at_integer_order(pair.P, pair.Q, mech.variable, mech.support, k, params=mech.parameters)
            for k in (2, 3, 5)}


def test_mechanism_parameters(mech):
    assert set(mech.params) == {"q", "sigma"}
    assert mechanisms.subsampled_gaussian().name == "subsampled_gaussian"
    with pytest.raises(ValueError, match="'q'"):
        mech.substitutions({"q": 1.5})
    with pytest.raises(ValueError, match="'sigma'"):
        mech.substitutions({"sigma": 0})


def test_general_order_is_numeric_only_with_a_reason(mech):
    """The engine recognises S**alpha of a mixture S at once (no time-outs) and says why; the mechanism's
    curve is the subsampled one (rdpsym.derive.subsampled): exact at integer orders, numeric elsewhere."""
    start = time.perf_counter()
    r = rdpsym.rdp(mech, cache=False)
    elapsed = time.perf_counter() - start
    assert r.status is Status.NUMERIC_ONLY and r.expr is None
    assert "subsampled" in r.reason and "exact at integer orders" in r.reason, r.reason
    pair = mech.pairs[0]
    at = {pair.shift: 1}
    pair_result = rdpsym.renyi_divergence(pair.Q.subs(at), pair.P.subs(at), mech.variable, mech.support, cache=False)
    assert "mixture" in pair_result.reason and "timed out" not in pair_result.reason, pair_result.reason
    assert "integer_order" in pair_result.reason
    # far below one 20 s step limit per direction and step (it takes ~ 6 s on a loaded 2-core machine)
    assert elapsed < 60, elapsed


def test_mixture_detector():
    from rdpsym.derive.template import mixture_log

    x = sp.Symbol("x", real=True)
    q, s = sp.symbols("q s", positive=True)
    mix = sp.log((1 - q) * sp.exp(-x**2 / 2) + q * sp.exp(-(x - 1) ** 2 / 2))
    assert mixture_log(sp.expand(mix), x) is not None
    assert mixture_log(sp.log(x**2 + s**2), x) is None  # Cauchy: a polynomial
    assert mixture_log(sp.log(1 + sp.exp(-x)), x) is None  # logistic: one term in x
    same = sp.log(q * sp.exp(-x / s) + (1 - q) * sp.exp(1 - x / s))  # constant ratio: one exponential
    assert mixture_log(same, x) is None


@pytest.mark.parametrize("k", [2, 3, 5])
def test_integer_order_derived_matches_published_binomial_form(mech, derived_orders, k):
    r = derived_orders[k]
    assert r.status is Status.CLOSED_FORM, r.reason
    q, s = mech.params["q"], mech.params["sigma"]
    value = r.at(k)
    claim = published_integer_order(k, q, s)
    assert sp.simplify(sp.exp((k - 1) * value) - sp.exp((k - 1) * claim)) == 0
    # the check can fail: j**2 instead of j(j-1) in the exponent is rejected
    wrong = sum(sp.binomial(k, j) * (1 - q) ** (k - j) * q**j * sp.exp(sp.Integer(j * j) / (2 * s**2)) for j in range(k + 1))
    assert sp.simplify(sp.exp((k - 1) * value) - wrong) != 0
    assert any(st.name.startswith("expand P^") for st in r.provenance.steps)
    # valid at alpha = k only: any other order raises instead of answering
    with pytest.raises(ArithmeticError):
        r.evaluate(k + sp.Rational(1, 2), q=0.1, sigma=1)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_float_integer_orders_against_the_derived_form(derived_orders, k):
    r = derived_orders[k]
    with mpmath.workdps(40):
        for q, s in [(1e-4, 0.3), (0.01, 1.0), (0.3, 5.0), (0.999, 50.0), (1.0, 2.0)]:
            exact = r.evaluate(k, dps=40, q=sp.Float(q, 40), sigma=sp.Float(s, 40))
            got = subsampled_gaussian_rdp(float(k), q, s)
            assert got >= exact and rel(mpmath.mpf(float(got)), exact) <= 1e-10, (k, q, s)


def test_integer_order_engine_on_a_plain_gaussian_pair():
    """The same entry point on a non-mixture: k/(2 sigma^2) (Mironov 2017, Prop. 7) at k = 3."""
    from rdpsym.derive.integer_order import renyi_divergence_at_integer_order

    x = sp.Symbol("x", real=True)
    s = sp.Symbol("s", positive=True)
    normal = lambda m: sp.exp(-(x - m) ** 2 / (2 * s**2)) / sp.sqrt(2 * sp.pi * s**2)  # noqa: E731
    r = renyi_divergence_at_integer_order(normal(1), normal(0), x, sp.S.Reals, 3)
    assert r.status is Status.CLOSED_FORM
    assert sp.simplify(r.at(3) - sp.Rational(3, 2) / s**2) == 0
    assert sp.simplify(r.at(3) - 1 / s**2) != 0


@pytest.mark.parametrize("order", [1, 2.5, True, "2", 0])
def test_integer_order_validation(order):
    from rdpsym.derive.integer_order import renyi_divergence_at_integer_order

    x = sp.Symbol("x", real=True)
    with pytest.raises(ValueError, match="order must be an integer >= 2"):
        renyi_divergence_at_integer_order(sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi), sp.exp(-(x - 1) ** 2 / 2) / sp.sqrt(2 * sp.pi),
                                          x, sp.S.Reals, order)


# -- dp_accounting (optional) -----------------------------------------------------------------------------
def _dp_accounting_rdp():
    rdp_mod = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    return rdp_mod._compute_rdp_poisson_subsampled_gaussian


def test_dp_accounting_agrees_at_integer_orders():
    dp_rdp = _dp_accounting_rdp()
    orders = [2, 3, 4, 5, 8, 16, 32, 64, 128, 256]
    for q, s in [(1e-4, 0.5), (0.01, 1.1), (0.1, 0.8), (0.5, 2.0), (0.9, 5.0)]:
        theirs = dp_rdp(q, s, orders)
        ours = subsampled_gaussian_rdp(np.array(orders, dtype=float), q, s)
        assert np.all(np.abs(ours - theirs) <= 1e-9 * np.abs(theirs)), (q, s, ours, theirs)
    # the comparison can fail: a 1e-8 relative perturbation is caught
    assert not np.all(np.abs(ours * (1 + 1e-8) - theirs) <= 1e-9 * np.abs(theirs))


def test_fractional_orders_where_dp_accounting_differs():
    """At fractional orders dp_accounting sums the MTZ series in absolute values: it overstates the RDP
    (here by > 1 %) or gives up (inf); ours agrees with the 50-digit reference."""
    dp_rdp = _dp_accounting_rdp()
    with mpmath.workdps(50):
        for a, q, s in [(1.5, 0.01, 1.0), (2.5, 1e-4, 0.3)]:
            ref, _ = reference(a, q, s)
            ours = subsampled_gaussian_rdp(a, q, s)
            assert rel(mpmath.mpf(float(ours)), ref) <= 1e-10
            theirs = float(dp_rdp(q, s, [a])[0])
            assert theirs >= float(ref) * (1 - 1e-9)  # an overstatement at worst (safe, not tight)


def test_sampled_component_is_derived_from_the_registered_densities(mech):
    """The component divergence D_alpha(P_1||Q) the float code stands on comes from the engine."""
    from rdpsym.accounting.subsampled import sampled_component

    result, f = sampled_component()
    assert result.status is Status.CLOSED_FORM and result.provenance.steps
    s = mech.params["sigma"]
    # Mironov 2017, Prop. 7 (sensitivity 1): alpha / (2 sigma^2); a wrong claim (alpha / sigma^2) is not equal
    assert sp.simplify(result.expr - rdpsym.alpha / (2 * s**2)) == 0
    assert sp.simplify(result.expr - rdpsym.alpha / s**2) != 0
    with mpmath.workdps(30):
        exact = result.evaluate(sp.Rational(7, 2), dps=30, sigma=2)
        assert rel(mpmath.mpf(float(f(3.5, 2.0))), exact) <= 1e-15
        # q = 1 and the bound above the accountant's largest order use it
        assert rel(mpmath.mpf(float(subsampled_gaussian_rdp(3.5, 1.0, 2.0))), exact) <= 2 * OUTWARD
    curve = rdpsym.Accountant().add("subsampled_gaussian", q=0.01, sigma=2.0).curve([1000.0])
    assert curve[0] == pytest.approx(float(f(1000.0, 2.0)), rel=1e-15)


def test_log_likelihood_ratio_matches_the_registered_densities(mech):
    """The quadrature's L(x) = log P/Q (float code) is the registered densities' log ratio."""
    from rdpsym.accounting.subsampled import _L

    pair, x = sampled_pair(mech), mech.variable
    q, s = mech.params["q"], mech.params["sigma"]
    ratio = sp.log(pair.P / pair.Q)
    with mpmath.workdps(40):
        for xv, qv, sv in [(-3.0, 0.01, 1.0), (0.25, 0.5, 0.7), (4.0, 0.9, 2.0), (30.0, 1e-4, 3.0)]:
            exact = ratio.subs({x: sp.Float(xv, 40), q: sp.Float(qv, 40), s: sp.Float(sv, 40)}).evalf(40)
            got = float(_L(np.array([xv]), qv, sv)[0])
            assert abs(mpmath.mpf(got) - mpmath.mpf(str(exact))) <= 1e-14 * max(1, abs(mpmath.mpf(str(exact)))), (xv, qv, sv)


@pytest.mark.parametrize("a, q, s", [(1.5, 0.1, 1.0), (2.5, 0.5, 2.0), (7.25, 0.01, 0.8), (0.5, 0.2, 1.0)])
def test_fractional_orders_against_the_independent_numeric_path(mech, a, q, s):
    """Fractional orders against rdpsym.numeric (Arb/mpmath quadrature of the definition on the registered
    densities): independent of this module's A_alpha - 1 quadrature and of its mpmath reference. Below
    alpha = 1 the RDP is the larger of the two directions."""
    from rdpsym.numeric import numeric_divergence

    pair, x = sampled_pair(mech), mech.variable
    values = {"q": sp.Float(q, 40), "sigma": sp.Float(s, 40)}
    with mpmath.workdps(30):
        fwd = numeric_divergence(pair.P, pair.Q, x, mech.support, sp.Float(a, 40), values, dps=30)
        assert fwd.converged, fwd
        exact = fwd.value
        if a < 1:
            rev = numeric_divergence(pair.Q, pair.P, x, mech.support, sp.Float(a, 40), values, dps=30)
            assert rev.converged, rev
            exact = max(exact, rev.value)
        got = mpmath.mpf(float(subsampled_gaussian_rdp(a, q, s)))
        assert got >= exact, (got, exact)  # rounded outward, never below
        assert rel(got, exact) <= 2 * OUTWARD, (got, exact)


def test_sampled_component_comes_from_the_built_in_mechanism_not_the_registry_name():
    """The float curve above ALPHA_MAX (D_alpha(P_1||Q)) is derived from the built-in mechanism's own
    densities: a different mechanism registered under the name "subsampled_gaussian" (sensitivity 2
    here) must not change it, and an unregistered name must not break it."""
    from rdpsym.accounting import subsampled
    from rdpsym.mechanisms.subsampled_gaussian import subsampled_gaussian

    def other():
        m = subsampled_gaussian()
        x = m.variable
        q, sigma = (p.symbol for p in m.parameters)
        shifted = m.pairs[0].P.subs(x, x - 1)  # the sampled record moves the sum by 2
        return rdpsym.Mechanism(**{**m.__dict__, "pairs": (rdpsym.AdjacentPair(shifted, m.pairs[0].Q),),
                                   "curve_provider": None})

    builtin = mechanisms.unregister("subsampled_gaussian")
    subsampled.sampled_component.cache_clear()
    try:
        mechanisms.register(other, name="subsampled_gaussian")
        result, f = subsampled.sampled_component()
        # D_2(N(1, s^2) || N(0, s^2)) = 2 / (2 s^2) = 1 at s = 1 (the sensitivity-2 pair would give 4)
        assert abs(float(f(np.array([2.0]), np.array([1.0]))[0]) - 1.0) < 1e-12
        mechanisms.unregister("subsampled_gaussian")
        subsampled.sampled_component.cache_clear()
        assert abs(float(subsampled.sampled_component()[1](np.array([3.0]), np.array([2.0]))[0]) - 3 / 8) < 1e-12
    finally:
        if "subsampled_gaussian" in mechanisms.names():
            mechanisms.unregister("subsampled_gaussian")
        mechanisms.register(builtin, name="subsampled_gaussian")
        subsampled.sampled_component.cache_clear()


def test_sampled_component_keeps_nothing_computed_while_a_time_limit_expired(monkeypatch, expire_a_time_limit):
    """The derived sampled component is memoised like every derivation (rdpsym._cache.memoize): a
    value computed while a time limit expired (a fallback after a caught StepTimeout) is returned, not
    kept for the rest of the process (functools.lru_cache kept it)."""
    import rdpsym.derive.engine as engine
    from rdpsym.accounting import subsampled

    real, calls = engine.renyi_divergence, []

    def slow_step_then_result(*args, **kwargs):
        calls.append(1)
        expire_a_time_limit()
        return real(*args, **kwargs)

    subsampled.sampled_component.cache_clear()
    monkeypatch.setattr(engine, "renyi_divergence", slow_step_then_result)
    try:
        subsampled.sampled_component()
        subsampled.sampled_component()
        assert len(calls) == 2
        monkeypatch.setattr(engine, "renyi_divergence", real)
        first = subsampled.sampled_component()
        assert subsampled.sampled_component() is first
    finally:
        subsampled.sampled_component.cache_clear()


@pytest.mark.parametrize("alpha", [10**6])
def test_large_integer_orders_are_computed_and_right(alpha):
    """Above BINOMIAL_MAX_ORDER an integer order goes to the certified quadrature, not a sum of alpha + 1
    exact terms (at alpha = 10^6 that sum never finished within the 60 s hang guard). The value is checked
    against quadrature of E_P[(1 - q + q Q/P)^alpha] around its peak, which sits near x = alpha (sigma = 10)."""
    from rdpsym.derive.subsampled import BINOMIAL_MAX_ORDER

    assert alpha > BINOMIAL_MAX_ORDER
    r = rdpsym.rdp(mechanisms.get("subsampled_gaussian"))
    q, sigma = sp.Rational(1, 2), 10
    got = r.evaluate_with_error(alpha, dps=25, q=q, sigma=sigma)
    with mpmath.workdps(40):
        a, qm, s = mpmath.mpf(alpha), mpmath.mpf(1) / 2, mpmath.mpf(sigma)

        def integrand(x):  # P = N(0, s^2), the mixture's ratio to it: 1 - q + q exp((2x - 1)/(2 s^2))
            return mpmath.npdf(x, 0, s) * (1 - qm + qm * mpmath.exp((2 * x - 1) / (2 * s**2))) ** a
        peak = a  # the log-integrand -x^2/(2 s^2) + a x/s^2 + ... is maximal near x = a
        points = [-mpmath.inf, 0, 1, peak - 200 * s, peak - 20 * s, peak, peak + 20 * s, peak + 200 * s, mpmath.inf]
        truth = mpmath.log(mpmath.quad(integrand, sorted(set(points)))) / (a - 1)
        assert abs(got.value - truth) <= got.error + mpmath.mpf(10) ** -20 * truth
