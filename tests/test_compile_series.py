"""Symbolic series of the float code (rdpsym.compile.series): Taylor-mode arithmetic, and the float code of
randomized response on three values (issue 19: its series as p -> 1/3 took sympy's series over 120 s)."""

import time

import mpmath
import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym import AdjacentPair, Mechanism, parameter
from rdpsym.compile import series as series_module
from rdpsym.symbols import alpha

u = sp.Symbol("u", positive=True)


def _rr2_branch():
    # randomized response at p = 1/2 + u (Mironov 2017, Table II): a test input, not a result
    p = sp.Rational(1, 2) + u
    return sp.log(p**alpha * (1 - p) ** (1 - alpha) + p ** (1 - alpha) * (1 - p) ** alpha) / (alpha - 1)


def test_taylor_mode_coefficients_of_randomized_response():
    """Taylor-mode coefficients of a sum of powers with symbolic exponents, against the math by hand:
    D_alpha is even in u (p <-> 1 - p swaps P and Q's outcomes) and D_alpha ~ alpha chi^2 / 2 with
    chi^2 = sum (P - Q)^2 / Q = 2 (2u)^2 / (1/2) = 16 u^2 to leading order."""
    got = series_module._taylor_mode(_rr2_branch(), u, 4)
    assert got[0] == 0 and got[1] == 0 and got[3] == 0
    assert sp.simplify(got[2] - 8 * alpha) == 0


def test_taylor_mode_refuses_a_node_that_vanishes_at_the_centre():
    """A pole or a log of a vanishing argument is not a Taylor series of its nodes: no coefficients,
    so _taylor falls back to sympy's series (which finds the Laurent part and refuses it)."""
    with pytest.raises(series_module._NotTaylorMode):
        series_module._taylor_mode(sp.log(u + u**2), u, 4)
    with pytest.raises(series_module._NotTaylorMode):
        series_module._taylor_mode(sp.exp(u) / u, u, 4)
    assert series_module._taylor(sp.exp(u) / u, u, 4, seconds=20) is None
    # a removable 0/0 at the centre is left to sympy's series, which finds it
    got = series_module._taylor(sp.sin(u) / u, u, 4, seconds=20)
    assert got is not None and [sp.nsimplify(c) for c in got] == [1, 0, sp.Rational(-1, 6), 0]


def test_a_series_that_disagrees_with_its_expression_is_not_used():
    """The check at a point catches wrong coefficients (here: one coefficient changed)."""
    expr = sp.log(1 + u * sp.exp(alpha * u)) / (1 + u) ** alpha
    coeffs = list(series_module._taylor_mode(expr, u, 12))
    point = {alpha: sp.Rational(5, 2)}
    assert series_module._agrees(expr, u, tuple(coeffs), point)
    coeffs[3] += sp.Rational(1, 10**6)
    assert not series_module._agrees(expr, u, tuple(coeffs), point)


def _rr3():
    x = sp.Symbol("x", integer=True, nonnegative=True)
    p = parameter("p", sp.Interval.open(sp.Rational(1, 3), 1), typical=(0.4, 0.9), latex="p",
                  meaning="probability of reporting the true value")

    def pmf(true_value):
        return sp.Piecewise((p.symbol, sp.Eq(x, true_value)), ((1 - p.symbol) / 2, True))

    return Mechanism("rr3", x, sp.FiniteSet(0, 1, 2), (AdjacentPair(pmf(0), pmf(1), "true value 0 vs 1"),), (p,),
                     title="Randomized response on three values",
                     references=("Mironov 2017 (arXiv:1702.07476 v3), Def. 4 (RDP of a mechanism)",))


@pytest.fixture(scope="module")
def rr3_compiled():
    result = rdpsym.rdp(_rr3())
    start = time.monotonic()
    f = result.to_numpy()
    return result, f, time.monotonic() - start


def _worst(result, f, alphas, ps):
    A, P = (m.ravel() for m in np.meshgrid(alphas, ps, indexing="ij"))
    got = f(A, p=P)
    worst = 0.0
    with mpmath.workdps(50):
        for a, pv, g in zip(A, P, got):
            exact = result.evaluate(sp.Float(float(a), 60), dps=50, p=sp.Float(float(pv), 60))
            worst = max(worst, float(abs(mpmath.mpf(float(g)) - exact) / abs(exact)) if np.isfinite(g) else np.inf)
    return worst


@pytest.mark.slow
def test_three_outcome_randomized_response_float_code(rr3_compiled):
    """Cold code generation takes seconds (was ~120 s, with the series as p -> 1/3 missing), the series
    is built (the module is complete) and the float code is within 1e-12 of 50 digits on an extreme
    grid: alpha from 1 + 1e-12 to 1e6, p from 1e-4 inside each end (p -> 1/3: D ~ 27 alpha u^2 / 4)."""
    result, f, seconds = rr3_compiled
    assert not f.source.startswith("# INCOMPLETE")
    assert "p near 1/3" in f.source
    # cold only when the cache is empty: then the bound is the issue's
    assert seconds < 60, seconds
    alphas = [1 + 1e-12, 1 + 1e-6, 1.5, 2.0, 10.0, 50.0, 1e4, 1e6]
    lo, hi = 1 / 3, 1.0
    ps = [lo + (hi - lo) * t for t in (1e-4, 1e-3, 1e-1, 0.5, 0.9, 1 - 1e-4)]
    assert _worst(result, f, alphas, ps) <= 1e-12


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="known gap (issue 19): at p - 1/3 ~ 1e-4 and alpha ~ 1e3 the 12-term series "
                   "in p - 1/3 has not converged (its radius is ~0.4/alpha) and the closed form's log-sum-exp of "
                   "terms 2**(2 alpha) ... loses ~eps*alpha absolutely: ~7e-12 relative")
def test_three_outcome_randomized_response_between_series_and_closed_form(rr3_compiled):
    result, f, _ = rr3_compiled
    ps = [1 / 3 + (2 / 3) * 1e-4]
    assert _worst(result, f, [311.0, 1000.0], ps) <= 1e-12
