"""RDP -> (epsilon, delta) conversions (Mironov 2017 Prop. 3; Canonne-Kamath-Steinke 2020 Prop. 12) and
the exact privacy profile they are checked against."""

import math

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym.accounting import check_conversion, pair_profile, privacy_profile

M = rdpsym.mechanisms


@pytest.fixture(scope="module")
def curves():
    return {n: (M.get(n), rdpsym.rdp(M.get(n))) for n in ("gaussian", "laplace", "randomized_response")}


GAUSS = {"sigma": 2, "sensitivity": 1}
LAPLACE = {"b": 1, "sensitivity": 1}
RR = {"p": sp.Rational(3, 4)}


# -- the exact profile -------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma, sens, eps", [(1, 1, "0.5"), (2, 1, "0.1"), ("0.5", 2, 1), (10, 1, "0.01"), (1, 3, 2)])
def test_gaussian_profile_matches_balle_wang(sigma, sens, eps):
    g = M.get("gaussian")
    with mpmath.workdps(30):
        s, d, e = mpmath.mpf(sp.Rational(sigma)), mpmath.mpf(sens), mpmath.mpf(eps)
        r = privacy_profile(g, e, sigma=sp.Rational(sigma), sensitivity=sens)
        # Balle and Wang 2018, Thm. 8
        bw = mpmath.ncdf(d / (2 * s) - e * s / d) - mpmath.exp(e) * mpmath.ncdf(-d / (2 * s) - e * s / d)
        assert abs(r.value - bw) <= mpmath.mpf(10) ** -28 * max(bw, 1)


def test_laplace_and_rr_profiles_match_closed_forms():
    with mpmath.workdps(30):
        for eps in ("0.1", "0.5", "0.9"):
            e = mpmath.mpf(eps)
            lap = privacy_profile(M.get("laplace"), e, b=1, sensitivity=1).value
            assert abs(lap - (1 - mpmath.exp((e - 1) / 2))) < mpmath.mpf(10) ** -28
            rr = privacy_profile(M.get("randomized_response"), e, p=sp.Rational(3, 4)).value
            assert abs(rr - (mpmath.mpf(3) / 4 - mpmath.exp(e) / 4)) < mpmath.mpf(10) ** -28
        # Laplace is 1/b-DP: the profile vanishes from epsilon = 1 on
        assert privacy_profile(M.get("laplace"), 1, b=1, sensitivity=1).value < mpmath.mpf(10) ** -28


def test_profile_validates_epsilon():
    g = M.get("gaussian")
    for bad in (-1, float("nan"), float("inf"), "1"):
        with pytest.raises(ValueError, match="epsilon"):
            privacy_profile(g, bad, **GAUSS)
    x = sp.Symbol("x", real=True)
    with pytest.raises(ValueError, match="missing"):
        pair_profile(sp.exp(-x**2 / (2 * sp.Symbol("s", positive=True)**2)), sp.exp(-x**2), x, sp.S.Reals, 1)


# -- closed-form optimum and basic values --------------------------------------------------------------
def test_gaussian_mironov_optimum_in_closed_form(curves):
    _, g = curves["gaussian"]
    for sigma, d in ((2, "1e-5"), (1, "1e-9"), (5, "1e-3")):
        with mpmath.workdps(30):
            r = rdpsym.epsilon(g, mpmath.mpf(d), method="mironov", sigma=sigma, sensitivity=1)
            assert r.alpha_closed_form is not None and "sympy" in r.note
            c = mpmath.mpf(1) / (2 * sigma**2)
            L = -mpmath.log(mpmath.mpf(d))
            assert abs(r.alpha - (1 + mpmath.sqrt(L / c))) < mpmath.mpf(10) ** -25
            assert abs(r.value - (c + 2 * mpmath.sqrt(c * L))) < mpmath.mpf(10) ** -25


def test_improved_never_worse_than_mironov(curves):
    for name, vals in (("gaussian", GAUSS), ("laplace", LAPLACE), ("randomized_response", RR)):
        _, c = curves[name]
        for d in ("1e-3", "1e-6", "1e-10"):
            imp = rdpsym.epsilon(c, mpmath.mpf(d), method="improved", **vals).value
            mir = rdpsym.epsilon(c, mpmath.mpf(d), method="mironov", **vals).value
            assert imp <= mir, (name, d)
        for e in ("0.5", "2"):
            assert rdpsym.delta(c, mpmath.mpf(e), **vals).value <= rdpsym.delta(c, mpmath.mpf(e), method="mironov", **vals).value


def test_continuous_alpha_beats_a_grid(curves):
    _, g = curves["gaussian"]
    fine = [1 + x / 10 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512]  # dp_accounting's default orders
    coarse = [2, 4, 8, 16, 32, 64]
    with mpmath.workdps(30):
        delta = mpmath.mpf("1e-5")
        for method in ("improved", "mironov"):
            best = rdpsym.epsilon(g, delta, method=method, **GAUSS).value

            def on(grid):
                return min(rdpsym.accounting.conversion.objective(method, "epsilon", mpmath.mpf(a) / 8, mpmath.mpf(a), delta)
                           for a in grid)

            assert best < on(fine)
            assert best < on(coarse) - mpmath.mpf(10) ** -3


def test_pure_dp_order(curves):
    _, lap = curves["laplace"]
    r = rdpsym.delta(lap, 1, **LAPLACE)  # Laplace with b = 1 is 1-DP
    assert r.value == 0 and r.alpha == mpmath.inf
    assert rdpsym.delta(lap, "0.5" and mpmath.mpf("0.5"), **LAPLACE).value > 0
    assert rdpsym.epsilon(lap, 1e-12, **LAPLACE).value <= 1


# -- the profile check -------------------------------------------------------------------------------
# one parameter point per mechanism in the default run; a second Gaussian noise level checks the same code path
# (the exact profile by quadrature, ~8 s of CPU for both methods) in the slow tier
@pytest.mark.parametrize("name, vals", [("gaussian", GAUSS),
                                        pytest.param("gaussian", {"sigma": sp.Rational(1, 2), "sensitivity": 1},
                                                     marks=pytest.mark.slow),
                                        ("laplace", LAPLACE), ("randomized_response", RR)])
@pytest.mark.parametrize("method", ["improved", "mironov"])
def test_converted_delta_never_below_exact_profile(curves, name, vals, method):
    mech, curve = curves[name]
    rep = check_conversion(mech, curve=curve, epsilons=(mpmath.mpf("0.25"), 1, 3), deltas=(mpmath.mpf("1e-6"),),
                           method=method, **vals)
    assert rep.verdict, rep.detail
    assert rep.worst_margin >= -rep.tolerance


def test_wrong_conversion_is_caught(curves):
    mech, curve = curves["gaussian"]

    def forgets_log_delta(c, target, kind, **values):
        # Prop. 3 without the log(1/delta)/(alpha-1) term: just the smallest curve value over alpha > 1.
        assert kind == "epsilon"
        return min(c.evaluate(1 + mpmath.mpf(10) ** (-k), **values) for k in range(1, 6))

    rep = check_conversion(mech, curve=curve, deltas=(mpmath.mpf("1e-5"),), converter=forgets_log_delta, **GAUSS)
    assert not rep.verdict and rep.worst_margin < 0

    def delta_without_alpha(c, target, kind, **values):
        # the improved delta with the 1/alpha (1-1/alpha)^(alpha-1) factor squared: too small
        r = rdpsym.delta(c, target, **values)
        return r.value * r.value if r.value < 1 else r.value

    rep = check_conversion(mech, curve=curve, epsilons=(1,), converter=delta_without_alpha, **GAUSS)
    assert not rep.verdict


# -- fail closed -------------------------------------------------------------------------------------
def test_nan_and_inf_orders_never_win():
    c = mpmath.mpf(1) / 8
    honest = rdpsym.epsilon(lambda a: c * a, 1e-5)
    holes = rdpsym.epsilon(lambda a: mpmath.nan if 5 < a < 20 else c * a, 1e-5)
    inf_holes = rdpsym.epsilon(lambda a: mpmath.inf if 5 < a < 20 else c * a, 1e-5)
    float_nan = rdpsym.epsilon(lambda a: float("nan") if 5 < a < 20 else float(c * a), 1e-5)
    for r in (holes, inf_holes, float_nan):
        assert r.value >= honest.value - mpmath.mpf(10) ** -25
        assert not 5 < r.alpha < 20
    # a curve that is NaN exactly at the orders a grid would use still cannot win
    assert rdpsym.epsilon(lambda a: mpmath.nan if a > 2 else c * a, 1e-5).value > honest.value


@pytest.mark.parametrize("bad", [lambda a: mpmath.inf, lambda a: mpmath.nan, lambda a: float("nan"), lambda a: float("inf")])
def test_curve_infinite_everywhere_gives_no_guarantee(bad):
    r = rdpsym.epsilon(bad, 1e-5)
    assert r.value == mpmath.inf and r.alpha is None
    for method in ("improved", "mironov"):
        assert rdpsym.delta(bad, 1, method=method).value == 1


def test_curve_that_raises_or_is_negative_is_an_error():
    def boom(a):
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        rdpsym.epsilon(boom, 1e-5)
    with pytest.raises(ValueError, match="negative"):
        rdpsym.epsilon(lambda a: -a, 1e-5)


def test_arguments_are_validated(curves):
    _, g = curves["gaussian"]
    for bad in (0, 1, -0.1, 1.5, float("nan"), "1e-5", True):
        with pytest.raises(ValueError, match="delta"):
            rdpsym.epsilon(g, bad, **GAUSS)
    for bad in (-1, float("inf"), float("nan"), None):
        with pytest.raises(ValueError, match="epsilon"):
            rdpsym.delta(g, bad, **GAUSS)
    with pytest.raises(ValueError, match="method"):
        rdpsym.epsilon(g, 1e-5, method="grid", **GAUSS)
    with pytest.raises(ValueError, match="values"):
        rdpsym.epsilon(g, 1e-5, sigma=2)
    with pytest.raises(ValueError, match="curve"):
        rdpsym.epsilon(42, 1e-5)
    assert math.isclose(float(rdpsym.epsilon(g, 1e-5, **GAUSS)), 2.1657155451754851, rel_tol=1e-15)
