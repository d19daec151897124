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
    # the certified ends carry an outward padding of 1e-12 (1 + |L|) on each loss and pmf value
    # (pld/discretisation.py), which rounds differently on the two grids: for randomized response both
    # grids hold the atoms exactly and the two brackets agree up to that padding (1.3e-12 seen at eps 3.35)
    assert fine.upper - fine.lower <= coarse.upper - coarse.lower + 1e-11 * max(1.0, abs(coarse.upper))
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


# -- certification: the pieces the bracket rests on ---------------------------------------------------------
def _pair(name, **values):
    from rdpsym import mechanisms
    from rdpsym.accounting.pld.pairs import oriented_pairs

    return oriented_pairs(mechanisms.resolve(name), values)


def test_taylor_models_enclose_the_densities_and_the_loss():
    """|f(c + t) - model(t)| <= R + the rounding bound, checked at 50 digits at random points of each model."""
    import sympy as sp

    from rdpsym.accounting.pld.logform import loss_form
    from rdpsym.accounting.pld.taylor import SeriesProgram, horner, rows, taylor_model

    pair = _pair("subsampled_gaussian", q=0.01, sigma=1.1, sensitivity=1.0).upper["remove"][0]
    L = loss_form(pair.P, pair.Q, pair.x)
    prog = SeriesProgram([pair.P, pair.Q, L], pair.x)
    fns = [sp.lambdify(pair.x, e, "mpmath") for e in (pair.P, pair.Q, L)]
    rng = np.random.default_rng(3)
    for c, r in [(-9.0, 0.2), (0.0, 0.5), (4.3, 0.25), (11.0, 0.1)]:
        tm = taylor_model(prog, c, r, 20)
        t = rng.uniform(-r, r, 40)
        for f in range(3):
            v, e = horner(rows(tm.coef[f][None, :], np.zeros(len(t), np.int64)), t)
            with mpmath.workdps(50):
                for ti, vi, ei in zip(t, v, e):
                    exact = fns[f](mpmath.mpf(c) + mpmath.mpf(ti))
                    assert abs(exact - vi) <= tm.R[f] + ei, (c, f, ti)


def test_bucket_bounds_bracket_the_exact_gaussian_tails():
    """For the Gaussian pair the loss is linear: the P-mass with loss above b h is a normal tail. The
    pessimistic masses of the buckets >= b (plus the mass left outside) must reach it; the optimistic ones
    must not exceed it (at the grid value, moved down by the allowance)."""
    from rdpsym.accounting.pld.discretisation import ALLOW, grid_profile

    h = 1e-3
    pair = _pair("gaussian", sigma=2.0, sensitivity=1.0).upper["remove"][0]
    g = grid_profile(pair, h)
    assert g.certified and g.outside < 1e-10
    import sympy as sp

    Lf = sp.lambdify(pair.x, sp.log(pair.P) - sp.log(pair.Q), "mpmath")
    with mpmath.workdps(40):
        c0 = Lf(0)
        a = Lf(1) - c0  # L(x) = a x + c0, X ~ N(0, 4)

        def tail(v):  # P(L >= v)
            z = (mpmath.mpf(v) - c0) / a / 2
            return mpmath.ncdf(-z) if a > 0 else mpmath.ncdf(z)

        Ph_tail = np.cumsum(g.Ph[::-1])[::-1]
        Pl_tail = np.cumsum(g.Pl[::-1])[::-1]
        for j in range(0, len(g.Ph), max(1, len(g.Ph) // 200)):
            b = g.lo + j
            assert Ph_tail[j] * (1 + 1e-12) + g.outside >= tail(b * h)
            assert Pl_tail[j] * (1 - 1e-12) <= tail(b * h - ALLOW * h)


def test_exponential_tables_contain_the_exact_values():
    from rdpsym.accounting.pld.exps import exp_bounds, exp_grid

    for h, start, stop in [(1e-4, -60000, -50000), (1e-3, -5, 9000), (0.0123, 100, 700), (-0.7, 0, 300)]:
        lo, hi = exp_grid(h, start, stop)
        with mpmath.workdps(50):
            for j in range(start, stop, max(1, (stop - start) // 97)):
                e = mpmath.exp(mpmath.mpf(h) * j)
                assert lo[j - start] <= e <= hi[j - start]
                assert hi[j - start] - lo[j - start] <= 1e-13 * e + 1e-300
    lo, hi = exp_bounds(-1234.5)
    with mpmath.workdps(50):
        assert lo <= mpmath.exp(mpmath.mpf(-1234.5)) <= hi


def test_families_reduced_by_proof_and_the_others_said_heuristic():
    from rdpsym import mechanisms
    from rdpsym.accounting.pld.pairs import family_reduction

    for name in ("gaussian", "laplace"):
        m = mechanisms.resolve(name)
        red = family_reduction(m.pairs[0], m.variable)
        assert red is not None and red.ends == "upper"  # log-concave, symmetric: one end, one direction
    cauchy = mechanisms.resolve("cauchy")
    assert family_reduction(cauchy.pairs[0], cauchy.variable, {"gamma": 1.0, "sensitivity": 1.0}) is None
    from rdpsym.accounting.pld.bounds import tight_bound

    # (tight_bound directly: an Accountant would also prepare the Cauchy's RDP curve, which is slow)
    b = tight_bound([(cauchy, {"gamma": 1.0, "sensitivity": 1.0}, 2, "cauchy")], "epsilon", 1e-3, 1e-2)
    assert "heuristic" in b.method and "sample" in b.method
    g = Accountant().add("gaussian", count=2, sigma=2.0).tight_epsilon(1e-3, step=1e-3)
    assert "heuristic" not in g.method and g.certified
    # the subsampled Gaussian: one pair per orientation (the mirror family and the interior shifts proved away)
    op = _pair("subsampled_gaussian", q=0.1, sigma=1.0, sensitivity=1.0)
    assert len(op.upper["remove"]) == len(op.upper["add"]) == 1 and not op.heuristics


def test_an_estimate_is_never_called_certified(monkeypatch):
    """Where the densities have no power series the masses are estimated: the result says so."""
    from rdpsym.accounting.pld import discretisation, distribution
    from rdpsym.accounting.pld.taylor import SeriesUnsupported

    def unsupported(*args, **kwargs):
        raise SeriesUnsupported("test: no series")

    monkeypatch.setattr(discretisation, "SeriesProgram", unsupported)
    distribution._CACHE.clear()
    try:
        b = Accountant().add("gaussian", count=4, sigma=2.0).tight_epsilon(1e-3, step=1e-3)
    finally:
        distribution._CACHE.clear()
    assert not b.certified and "NOT CERTIFIED" in b.method and "not certified" in repr(b)
    assert b.as_dict()["certified"] is False
    exact = float(gaussian_epsilon(1e-3, 1.0))
    assert b.lower <= exact <= b.upper


def test_the_remainder_bound_tightens_the_lower_bound(monkeypatch):
    """300 Gaussians: rounding the optimistic atoms down loses up to h per release; the Hoeffding bound on
    the remainders wins most of it back, and both lower bounds stay below the exact value."""
    from rdpsym.accounting.pld import bounds

    acct = Accountant().add("gaussian", count=300, sigma=10.0)
    exact = float(gaussian_epsilon(1e-6, math.sqrt(300) / 10))
    b = acct.tight_epsilon(1e-6, step=1e-3)
    monkeypatch.setattr(bounds, "ETAS", ())
    plain = acct.tight_epsilon(1e-6, step=1e-3)
    assert plain.lower < b.lower <= exact <= b.upper == plain.upper
    assert b.upper - b.lower <= 0.01 * exact < plain.upper - plain.lower


def test_sparse_and_fft_compositions_agree(monkeypatch):
    from rdpsym.accounting.pld import composition
    from rdpsym.accounting.pld.discretisation import grid_profile, pessimistic

    pair = _pair("randomized_response", p=0.8).upper["remove"][0]
    one = pessimistic(grid_profile(pair, 1e-3))
    sparse = composition.compose([(one, 25)], tail=0.0)
    monkeypatch.setattr(composition, "_compose_sparse", lambda parts: None)
    dense = composition.compose([(one, 25)], tail=0.0)
    a = np.zeros(max(sparse.offset + len(sparse.masses), dense.offset + len(dense.masses)) -
                 min(sparse.offset, dense.offset))
    lo = min(sparse.offset, dense.offset)
    a[sparse.offset - lo:sparse.offset - lo + len(sparse.masses)] += sparse.masses
    a[dense.offset - lo:dense.offset - lo + len(dense.masses)] -= dense.masses
    assert float(np.sum(np.abs(a))) <= sparse.err + dense.err
    assert dense.err < 1e-9


@pytest.mark.slow
def test_dp_sgd_ten_thousand_steps_bracket_within_one_percent():
    """The issue's target: DP-SGD (q = 0.01, sigma = 1.1, 10,000 steps, delta = 1e-5), side by side with
    dp_accounting's PLD accountant: upper <= 1.01 x its epsilon, lower <= it, width <= 1% of epsilon."""
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 10000)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(ev)
    theirs = acc.get_epsilon(1e-5)
    b = Accountant.from_dp_event(ev).tight_epsilon(1e-5)
    assert b.certified
    assert b.lower <= theirs and b.upper <= 1.01 * theirs
    assert b.upper - b.lower <= 0.01 * b.upper
