"""Certified tight composition (rdpsym.accounting.pld): the bracket contains the exact value."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rdpsym import Accountant
from rdpsym._numbers import ArgumentError
from rdpsym.accounting.pld.composition import convolve, fft_error_bound
from rdpsym.accounting.pld.pmf import DiscretePLD, PLDTooLarge


def gaussian_delta(eps, mu):
    """Balle and Wang 2018, Thm. 8: delta(eps) of N(0,1) against N(mu,1), at 40 digits."""
    with mpmath.workdps(40):
        eps, mu = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def gaussian_epsilon(delta, mu):
    with mpmath.workdps(40):
        lo, hi = mpmath.mpf(0), mpmath.mpf(60)
        for _ in range(160):  # delta(eps) decreases: bisection
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gaussian_delta(mid, mu) > delta else (lo, mid)
        return hi


def rr_delta(eps, p, k):
    """delta(eps) of k compositions of randomized response (true bit w.p. p): the binomial enumerated."""
    with mpmath.workdps(40):
        p, eps = mpmath.mpf(p), mpmath.mpf(eps)
        r = mpmath.log(p / (1 - p))
        total = mpmath.mpf(0)
        for j in range(k + 1):  # j outputs agree with the true bit
            loss = (2 * j - k) * r
            mass = mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j)
            if loss > eps:
                total += mass * (1 - mpmath.exp(eps - loss))
        return total


@pytest.mark.parametrize("k,sigma", [(1, 2.0), (10, 3.0)])
def test_gaussian_bracket_contains_exact_epsilon(k, sigma):
    acct = Accountant().add("gaussian", count=k, sigma=sigma)
    mu = math.sqrt(k) / sigma
    for delta in (1e-3, 1e-6):
        b = acct.tight_epsilon(delta, step=1e-3)
        exact = float(gaussian_epsilon(delta, mu))
        assert b.lower <= exact <= b.upper
        assert b.upper - b.lower <= 0.01 * exact
        assert set(b.budget) == {"discretisation", "truncation", "floating_point", "dominance"}


def test_gaussian_bracket_contains_exact_delta():
    acct = Accountant().add("gaussian", count=4, sigma=2.0)
    for eps in (0.0, 0.5, 2.0):
        b = acct.tight_delta(eps, step=1e-3)
        exact = float(gaussian_delta(eps, 1.0))
        assert b.lower <= exact <= b.upper
        assert b.upper - b.lower <= 0.01 * exact


@pytest.mark.parametrize("p,k", [(0.75, 1), (0.6, 10), (0.9, 7)])
def test_randomized_response_bracket_contains_exact(p, k):
    acct = Accountant().add("randomized_response", count=k, p=p)
    for eps in (0.1, 1.0, 2.5):
        b = acct.tight_delta(eps, step=1e-4)
        exact = float(rr_delta(eps, p, k))
        assert b.lower <= exact <= b.upper
        assert b.upper - b.lower <= 0.01 * exact + 1e-12


def test_laplace_pure_dp_composition():
    # k Laplace releases of sensitivity 1 and scale b are (k / b, 0)-DP, and not (eps, 0)-DP below it
    acct = Accountant().add("laplace", count=3, b=2.0)
    at = acct.tight_delta(1.5, step=1e-3)
    assert at.lower == 0.0 and at.upper <= 1e-10  # 0 exactly, up to the stated floating-point bound
    below = acct.tight_delta(1.4, step=1e-3)
    assert below.lower > 0
    eps = acct.tight_epsilon(1e-9, step=1e-3)
    assert eps.lower <= 1.5 + 1e-12 and eps.upper <= 1.5 + 1e-9


@settings(max_examples=12, deadline=None)
@given(p=st.floats(0.55, 0.95), k=st.integers(1, 12), eps=st.floats(0.0, 3.0))
def test_rr_upper_at_least_lower_and_monotone_in_steps(p, k, eps):
    one = Accountant().add("randomized_response", count=k, p=p).tight_delta(eps, step=1e-3)
    more = Accountant().add("randomized_response", count=k + 1, p=p).tight_delta(eps, step=1e-3)
    assert 0 <= one.lower <= one.upper <= 1
    assert one.lower <= float(rr_delta(eps, p, k)) <= one.upper
    # the exact delta grows with the number of steps, so the certified bounds must agree
    assert one.lower <= more.upper


@settings(max_examples=6, deadline=None)
@given(p=st.floats(0.55, 0.95), k=st.integers(1, 8))
def test_bracket_width_shrinks_with_finer_grids(p, k):
    acct = Accountant().add("randomized_response", count=k, p=p)
    coarse, fine = acct.tight_epsilon(1e-4, step=1e-2), acct.tight_epsilon(1e-4, step=1e-3)
    assert fine.upper - fine.lower <= coarse.upper - coarse.lower + 1e-12
    assert max(coarse.lower, fine.lower) <= min(coarse.upper, fine.upper)


def test_subsampled_gaussian_directions_and_bracket():
    acct = Accountant().add("subsampled_gaussian", count=20, q=0.1, sigma=1.0)
    b = acct.tight_epsilon(1e-5, step=1e-3)
    assert 0 < b.lower <= b.upper <= 1.02 * b.lower + 0.05
    assert "remove" in b.method and "add" in b.method


@pytest.mark.parametrize("bad", [0, 1, 1.5, -1e-3, float("nan"), "1e-5", True, None])
def test_bad_delta(bad):
    with pytest.raises(ArgumentError, match="delta"):
        Accountant().add("randomized_response", p=0.7).tight_epsilon(bad)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "1"])
def test_bad_epsilon(bad):
    with pytest.raises(ArgumentError, match="epsilon"):
        Accountant().add("randomized_response", p=0.7).tight_delta(bad)


@pytest.mark.parametrize("bad", [0, -1e-3, 0.5, float("nan")])
def test_bad_step(bad):
    with pytest.raises(ArgumentError, match="step"):
        Accountant().add("randomized_response", p=0.7).tight_delta(1.0, step=bad)


def test_too_heavy_composition_raises_never_a_bound():
    p = DiscretePLD(1e-4, 0, np.full(1000, 1e-3), 0.0, 0.0, True)
    with pytest.raises(PLDTooLarge, match="grid points"):
        convolve(p, p, max_points=1500)


def test_fft_error_bound_holds_against_exact_convolution():
    rng = np.random.default_rng(7)
    for n in (200, 3000, 20000):
        a = rng.random(n) ** 8
        b = rng.random(n // 2) ** 3
        a, b = a / a.sum(), b / b.sum()
        pa = DiscretePLD(1e-4, 0, a, 0.0, 0.0, False)
        pb = DiscretePLD(1e-4, 0, b, 0.0, 0.0, False)
        got = convolve(pa, pb, tail=0.0)
        exact = np.convolve(a.astype(np.longdouble), b.astype(np.longdouble))
        err = float(np.sum(np.abs(got.masses.astype(np.longdouble) - exact)))
        assert err <= got.err
        assert got.err <= 1e-9
    assert fft_error_bound(1 << 20, 1.0, 0.1, 1.0, 0.1) > 0
