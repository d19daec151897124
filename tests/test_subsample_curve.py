"""The accountant's float curve of any subsampled mechanism (rdpsym.accounting.subsampled_curve).

The Laplace divergence is typed in here only as the reference to check against (Mironov 2017,
arXiv:1702.07476 v3, Prop. 6): D_alpha(Lap(0, b)||Lap(d, b)) = log(alpha/(2 alpha - 1) e^{(alpha-1) d/b}
+ (alpha - 1)/(2 alpha - 1) e^{-alpha d/b}) / (alpha - 1). The subsampled references are computed from
the definitions with mpmath: the binomial sum of these moments at integer orders, and a direct
quadrature of the mixture, both directions, at fractional ones.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms as M
from rdpsym.accounting import mechanism_curve
from rdpsym.accounting.subsampled import subsampled_gaussian_rdp
from rdpsym.accounting.subsampled_curve import integer_order_sums, subsampled_curve
from rdpsym.specify.mechanism import AdjacentPair

Q = sp.Symbol("q", real=True)


@pytest.fixture(scope="module")
def sub_laplace():
    return rdpsym.subsample(M.laplace(), Q)


def laplace_moment(j, d, b):
    """E_P[(Q/P)^j] = exp((j - 1) D_j) of the Laplace pair at shift d (Prop. 6 at alpha = j)."""
    j, r = mpmath.mpf(j), mpmath.mpf(d) / mpmath.mpf(b)
    if j in (0, 1):
        return mpmath.mpf(1)
    return j / (2 * j - 1) * mpmath.exp((j - 1) * r) + (j - 1) / (2 * j - 1) * mpmath.exp(-j * r)


def exact_binomial(k, q, d, b):
    """D_k((1-q) P + q Q || P) = log(sum_j binom(k,j) (1-q)^(k-j) q^j E_P[(Q/P)^j]) / (k - 1)."""
    q = mpmath.mpf(q)
    total = mpmath.fsum(mpmath.binomial(k, j) * (1 - q) ** (k - j) * q**j * laplace_moment(j, d, b) for j in range(k + 1))
    return mpmath.log(total) / (k - 1)


def lap(x, m, b):
    return mpmath.exp(-abs(x - m) / b) / (2 * b)


def mixture_divergences(a, q, d, b):
    """(D_a(M||P), D_a(P||M)) with P = Lap(0, b), M = (1-q) P + q Lap(d, b), by quadrature (kinks at 0, d)."""
    a, q, d, b = (mpmath.mpf(v) for v in (a, q, d, b))
    P = lambda x: lap(x, 0, b)  # noqa: E731
    Mx = lambda x: (1 - q) * lap(x, 0, b) + q * lap(x, d, b)  # noqa: E731
    pts = [-mpmath.inf, 0, d, mpmath.inf]
    fwd = mpmath.quad(lambda x: Mx(x) ** a * P(x) ** (1 - a), pts)
    rev = mpmath.quad(lambda x: P(x) ** a * Mx(x) ** (1 - a), pts)
    return mpmath.log(fwd) / (a - 1), mpmath.log(rev) / (a - 1)


CASES = [(0.01, 1.0, 1.0), (0.2, 0.5, 1.0), (0.7, 3.0, 2.0)]  # (q, b, sensitivity)


def test_laplace_integer_orders_are_the_exact_binomial_sum(sub_laplace):
    curve = mechanism_curve(sub_laplace)
    assert curve.provenance == "subsampled" and curve.detail.startswith("exact at integer orders"), curve.detail
    orders = [2, 3, 5, 10, 32]
    with mpmath.workdps(30):
        for q, b, d in CASES:
            got = curve(np.array(orders, dtype=float), q=q, b=b, sensitivity=d)
            for k, g in zip(orders, got):
                ref = exact_binomial(k, q, d, b)
                assert mpmath.mpf(float(g)) >= ref, (k, q, b, d)  # rounded outward, never below
                assert abs(mpmath.mpf(float(g)) - ref) <= 1e-10 * ref, (k, q, b, d, g, ref)
    # the check can fail: the moments e^{j(j-1)/(2 b^2)} of a Gaussian instead are far off
    with mpmath.workdps(30):
        wrong = mpmath.log(mpmath.fsum(mpmath.binomial(3, j) * mpmath.mpf(0.8) ** (3 - j) * mpmath.mpf(0.2) ** j
                                       * mpmath.exp(mpmath.mpf(j * (j - 1)) / (2 * 0.5**2)) for j in range(4))) / 2
        assert abs(curve(3.0, q=0.2, b=0.5, sensitivity=1.0) - float(wrong)) > 1e-3


def test_laplace_curve_bounds_both_directions_of_the_mixture(sub_laplace):
    """Fractional orders (interpolated, eps(2) below 2) lie above a direct quadrature of both directions;
    at an integer order the forward direction is the curve and the reverse is not larger (Zhu & Wang)."""
    curve = mechanism_curve(sub_laplace)
    with mpmath.workdps(30):
        for q, b, d in (CASES[1], CASES[2]):
            for a in (1.5, 7.25) if q < 0.5 else (2.5,):
                fwd, rev = mixture_divergences(a, q, d, b)
                got = mpmath.mpf(float(curve(a, q=q, b=b, sensitivity=d)))
                assert got >= max(fwd, rev), (a, q, b, d, got, fwd, rev)
                assert got <= 2 * max(fwd, rev)  # a bound, not a vacuous one
            fwd, rev = mixture_divergences(4, q, d, b)
            assert rev <= fwd
            assert abs(mpmath.mpf(float(curve(4.0, q=q, b=b, sensitivity=d))) - fwd) <= 1e-9 * fwd


def test_subsampled_gaussian_is_the_sampled_gaussian_at_sigma_over_sensitivity():
    m = rdpsym.subsample(M.gaussian(), Q)
    curve = mechanism_curve(m)
    assert curve.provenance == "subsampled" and curve.detail.startswith("exact"), curve.detail
    a = np.array([1.0, 1.5, 2.0, 3.0, 10.5, 64.0, 300.5])
    for q, s, d in [(0.01, 1.1, 1.0), (0.1, 3.0, 2.0), (0.5, 0.7, 0.25)]:
        got = curve(a, q=q, sigma=s, sensitivity=d)
        np.testing.assert_allclose(got, subsampled_gaussian_rdp(a, q, s / d), rtol=1e-14)
    # the built-in is the same mechanism at sensitivity 1
    built_in = mechanism_curve("subsampled_gaussian")
    np.testing.assert_array_equal(built_in(a, q=0.01, sigma=1.1), subsampled_gaussian_rdp(a, 0.01, 1.1))


def test_accountant_composes_a_subsampled_laplace_with_a_gaussian(sub_laplace):
    acct = rdpsym.Accountant().add(sub_laplace, count=200, q=0.05, b=1.0, sensitivity=1.0)
    acct.add("gaussian", count=10, sigma=5.0, sensitivity=1.0)
    eps = acct.epsilon(1e-5).value
    assert math.isfinite(eps) and eps > 0
    assert {e.provenance for e in acct.events} == {"subsampled", "closed form"}
    # amplification: far below the same composition without subsampling
    plain = rdpsym.Accountant().add("laplace", count=200, b=1.0, sensitivity=1.0)
    plain.add("gaussian", count=10, sigma=5.0, sensitivity=1.0)
    assert eps < plain.epsilon(1e-5).value / 3


def test_general_bound_for_a_base_of_no_known_structure():
    """Randomized response is neither a Gaussian nor a Laplace shift: Zhu & Wang 2019, Thm. 6, which
    lies above both directions of the subsampled pair (computed from the pmfs here)."""
    m = rdpsym.subsample(M.get("randomized_response"), Q)
    curve = mechanism_curve(m)
    assert curve.detail.startswith("bound: Zhu & Wang 2019 (ICML), Thm. 6"), curve.detail
    with mpmath.workdps(30):
        for q, p in [(0.1, 0.75), (0.5, 0.9)]:
            q_, p_ = mpmath.mpf(q), mpmath.mpf(p)
            P, Qd = [p_, 1 - p_], [1 - p_, p_]  # the pmfs of true bits 1 and 0 at x = 1, 0
            for base, other in ((P, Qd), (Qd, P)):
                mix = [(1 - q_) * u + q_ * v for u, v in zip(base, other)]
                for a in (1.5, 2.0, 3.0, 6.5):
                    fwd = mpmath.log(sum(u**a * v ** (1 - a) for u, v in zip(mix, base))) / (a - 1)
                    rev = mpmath.log(sum(v**a * u ** (1 - a) for u, v in zip(mix, base))) / (a - 1)
                    assert mpmath.mpf(float(curve(a, q=q, p=p))) >= max(fwd, rev), (q, p, a)


def test_without_replacement_is_the_wbk_bound_and_no_worse_than_the_base(sub_laplace):
    m = rdpsym.subsample(M.laplace(), Q, scheme="without_replacement")
    curve = mechanism_curve(m)
    assert "Wang, Balle & Kasiviswanathan 2019 (AISTATS), Thm. 9" in curve.detail
    a = np.array([1.5, 2.0, 3.0, 8.0, 2000.0, np.inf])
    got = curve(a, q=0.05, b=1.0, sensitivity=1.0)
    base = mechanism_curve(M.laplace())(a, b=1.0, sensitivity=1.0)
    assert np.all(np.isfinite(got)) and np.all(got <= base) and np.all(got > 0)
    assert got[-1] == pytest.approx(math.log1p(0.05 * math.expm1(1.0)), rel=1e-12)  # eps(oo) amplified


def test_rates_zero_and_one():
    a = np.array([0.5, 1.0, 2.0, 3.5, 40.0, np.inf])
    for m, values in [(rdpsym.subsample(M.laplace(), Q), dict(b=1.0, sensitivity=1.0)),
                      (rdpsym.subsample(M.get("randomized_response"), Q), dict(p=0.8)),
                      (M.get("subsampled_gaussian"), dict(sigma=1.0))]:
        assert np.all(mechanism_curve(m)(a, q=0.0, **values) == 0.0)
    lap_curve = mechanism_curve(rdpsym.subsample(M.laplace(), Q))
    np.testing.assert_array_equal(lap_curve(a, q=1.0, b=1.0, sensitivity=1.0),
                                  mechanism_curve(M.laplace())(a, b=1.0, sensitivity=1.0))
    fixed = rdpsym.subsample(M.laplace(), sp.Rational(1, 100))  # a fixed rate: no parameter q
    np.testing.assert_array_equal(mechanism_curve(fixed)(a, b=1.0, sensitivity=1.0),
                                  lap_curve(a, q=0.01, b=1.0, sensitivity=1.0))


def test_nan_fails_closed():
    nan = math.nan
    for kind in ("binomial", "zhu_wang", "wbk"):
        table = integer_order_sums(np.array([nan, nan, 0.1, nan, 0.3]), 0.1, kind, eps_inf=nan)
        assert np.isposinf(table[3]) and np.isposinf(table[4]), kind  # a NaN moment poisons every later order
        assert np.isfinite(table[2]) or kind == "wbk"
    curve = mechanism_curve(rdpsym.subsample(M.laplace(), Q))
    got = curve(np.array([nan, 2.0]), q=0.1, b=1.0, sensitivity=1.0)
    assert np.isposinf(got[0]) and np.isfinite(got[1])
    fn = curve._fn  # the provider's own function, below the accountant's checks: a NaN rate is +inf
    assert np.isposinf(fn(np.array([2.0]), q=np.array([nan]), b=np.array([1.0]), sensitivity=np.array([1.0]))).all()


def test_replaced_densities_do_not_keep_the_subsampled_curve(sub_laplace):
    x, b = sub_laplace.variable, sub_laplace.params["b"]
    other = dataclasses.replace(sub_laplace, pairs=(AdjacentPair(sp.exp(-abs(x) / b) / (2 * b),
                                                                 sp.exp(-abs(x - 1) / b) / (2 * b)),))
    assert other.subsampling is sub_laplace.subsampling and other.curve_provider is None
    assert subsampled_curve(other, 1, curve_of=mechanism_curve) is None
