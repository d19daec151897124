"""The maximum of formulas that are +oo on part of the domain (rdpsym.derive.extremes).

sympy's Max compares its arguments through their assumptions, which are wrong on Piecewise forms with an
infinite branch: the maximum of the two directions' D_oo of a Poisson shift came out finite, below D_1000.
"""

from __future__ import annotations

import mpmath
import sympy as sp

import rdpsym
from rdpsym.derive.extremes import maximum
from rdpsym.derive.sign import decide, decide_relation

MU, D = sp.symbols("mu d", positive=True)
L = sp.log(MU / (D + MU))  # < 0
FORWARD = sp.Piecewise((sp.oo, L > 0), (D, True))  # D_oo(Poi(mu) || Poi(mu + d)) = d
BACKWARD = sp.Piecewise((sp.oo, L < 0), (-D, True))  # D_oo(Poi(mu + d) || Poi(mu)) = +oo


def test_sympy_alone_drops_the_infinite_direction():
    """The defect this module works around (if sympy fixes it, this test says so and the workaround can go)."""
    assert sp.Max(FORWARD, BACKWARD) == FORWARD


def test_the_maximum_keeps_the_infinite_direction():
    at = {MU: sp.Rational(1, 2), D: 2}
    assert maximum([FORWARD, BACKWARD]).subs(at) == sp.oo
    assert maximum([BACKWARD, FORWARD]).subs(at) == sp.oo
    assert maximum([D, MU]) == sp.Max(D, MU)  # finite formulas: sympy's Max as it is


def test_the_sign_oracle_reads_no_sign_off_infinite_branches():
    # sympy's assumptions call FORWARD - BACKWARD (= d - oo) positive
    assert (FORWARD - BACKWARD).is_extended_positive is True
    assert decide(FORWARD - BACKWARD, "nonnegative") is None


def test_a_log_is_compared_with_zero_through_its_argument():
    """log(mu/(mu + d)) < 0 because mu/(mu + d) - 1 = -d/(mu + d) < 0 (log is increasing, 0 at 1)."""
    assert decide_relation(L < 0)[0] is True
    assert decide_relation(L > 0)[0] is False
    assert decide_relation(sp.log(MU / D) < 0)[0] is None  # mu/d - 1 has no sign


def test_a_poisson_shift_has_an_infinite_max_divergence():
    """Poi(mu) against Poi(mu + d), both directions (Mironov 2017, Def. 4): Q/P = e^(-d) (1 + d/mu)^k is
    unbounded, so D_oo = +oo, and D_alpha grows without bound (D_1000 at mu = 1/2, d = 2 is about 4.7e695)."""
    mu, d = rdpsym.parameter("mu", typical=(0.5, 5.0)), rdpsym.parameter("d", typical=(0.5, 2.0))
    k = sp.Symbol("k", integer=True, nonnegative=True)
    m, s = mu.symbol, d.symbol
    P = sp.exp(-m) * m**k / sp.factorial(k)
    Q = sp.exp(-(m + s)) * (m + s) ** k / sp.factorial(k)
    r = rdpsym.rdp(rdpsym.Mechanism("poisson_shift", k, sp.Range(0, sp.oo), (rdpsym.AdjacentPair(P, Q),), (mu, d)))
    at = {"mu": sp.Rational(1, 2), "d": 2}
    assert r.max_divergence == sp.oo  # the fold's conditions, log(mu/(mu + d)) < 0 or > 0, hold for every d > 0
    assert r.evaluate(sp.oo, **at) == mpmath.inf
    with mpmath.workdps(30):
        # the reverse direction at alpha = 10 by hand: sum_k Q^10 P^(-9) = e^(-10 (mu + d) + 9 mu) sum_k x^k/k!
        # with x = (mu + d)^10 mu^(-9), and the series is e^x
        a, m0, s0 = 10, mpmath.mpf(1) / 2, mpmath.mpf(2)
        want = (-a * (m0 + s0) + (a - 1) * m0 + (m0 + s0) ** a * m0 ** (1 - a)) / (a - 1)
        got = r.evaluate(10, dps=30, **at)
        assert abs(got - want) <= mpmath.mpf(10) ** -25 * abs(want)
