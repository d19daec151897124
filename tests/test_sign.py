"""The sign oracle (:mod:`rdpsym.derive.sign`): one three-valued decision for the whole engine.

Each decision here is checked against the mathematics it claims: a sign shown (True) or its opposite
shown (False) must hold for every admissible value, and what the assumptions, the declared domains and
the regime cannot decide is None, never an exception. Time limits: a decision cut short by its own limit
is None and not memoised; an enclosing limit that expires is raised.
"""

from __future__ import annotations

import time


import pytest
import sympy as sp

from rdpsym import parameter
from rdpsym._timeout import StepTimeout, time_limit
from rdpsym.derive import sign as oracle
from rdpsym.derive.regimes import ABOVE, BELOW
from rdpsym.derive.sign import decide, decide_relation, sign
from rdpsym.symbols import alpha

x = sp.Symbol("x", real=True)
b = sp.Symbol("b", positive=True)
r = sp.Symbol("r", real=True)


def test_assumptions_and_rewritings():
    assert decide(b, "positive") is True
    assert decide(-b, "positive") is False
    assert decide(-b, "nonpositive") is True
    assert sign(b**2 + 1) == 1
    # r^2 - 2r + 1 >= 0 only once factored: (r - 1)^2
    assert decide(r**2 - 2 * r + 1, "nonnegative") is True
    assert decide(r**2 - 2 * r + 1, "positive") is None  # zero at r = 1
    # exp(1/b) exp(-1/b) - 1 = 0 only after powsimp/simplify
    assert decide(sp.exp(1 / b) * sp.exp(-1 / b) - 1, "zero") is True
    assert sign(r) is None and decide(r, "nonnegative") is None


def test_declared_domains_decide_what_assumptions_cannot():
    p = parameter("p", sp.Interval.open(0, 1), typical=(0.2, 0.8))
    s = p.symbol
    assert decide(1 - s, "positive") is None  # p > 0 alone says nothing about 1 - p
    assert decide(1 - s, "positive", [p]) is True
    assert sign(s - 1, [p]) == -1
    assert decide(s * (1 - s), "positive", [p]) is True
    assert decide(s - sp.Rational(1, 2), "positive", [p]) is None  # both signs occur in (0, 1)
    # a domain relating two parameters: m2 in (m1, oo) declares m1 < m2
    m1 = parameter("m1", sp.S.Reals, typical=(-1, 1))
    m2 = parameter("m2", sp.Interval.open(m1.symbol, sp.oo), typical=(1, 2))
    assert sign(m2.symbol - m1.symbol, [m1, m2]) == 1
    # one parameter with a numeric domain: solveset on it (n^2 - 3n + 3 > 0 everywhere)
    n = parameter("n", sp.Interval(3, 10), typical=(3, 5))
    assert decide(n.symbol**2 - 5 * n.symbol + 6, "nonnegative", [n]) is True


def test_regimes_of_the_order():
    assert decide(alpha - 1, "positive") is None
    assert decide(alpha - 1, "positive", regime=ABOVE) is True
    assert decide(alpha - 1, "negative", regime=BELOW) is True
    assert sign((alpha - 1) * b, regime=BELOW) == -1


def test_numbers_certified_and_exact_zero():
    assert decide(sp.sqrt(2) - sp.Rational(141421356, 10**8), "positive") is True
    # pi - 3.1415926535897932384626433832 = 7.95e-29 and pi - 3.14159265358979323846264338328 = -4.9e-30
    assert decide(sp.pi - sp.Rational(31415926535897932384626433832, 10**28), "positive") is True
    assert decide(sp.pi - sp.Rational(314159265358979323846264338328, 10**29), "positive") is False
    # zero, written so that sympy does not evaluate it: numerics cannot tell it from 0, equals(0) can
    assert sign(sp.log(6) - sp.log(2) - sp.log(3)) == 0
    assert decide(sp.Float(-1.5), "negative") is True


def test_undecidable_is_none_never_an_error():
    assert decide(sp.nan, "positive") is None
    assert decide(sp.zoo + b, "nonnegative") is None
    assert decide(sp.I, "positive") is None and decide(sp.I, "negative") is None
    assert decide(sp.Lt(x, b), "positive") is None  # a relation has no sign
    with pytest.raises(ValueError, match="claim must be one of"):
        decide(b, "big")


def test_relations():
    w = parameter("w", sp.Interval.open(0, sp.oo), typical=(0.5, 2))
    ws = w.symbol
    # the triangular density's condition at a point inside a piece: undecided, with the difference to split on
    truth, pending = decide_relation(sp.Abs(sp.Rational(1, 4)) <= ws, [w])
    assert truth is None and sp.simplify(pending - (sp.Rational(1, 4) - ws)) == 0
    assert decide_relation(sp.Abs(-ws / 2) <= ws, [w]) == (True, None)
    assert decide_relation(sp.Gt(ws, -sp.oo)) == (True, None)
    assert decide_relation(sp.And(ws > 0, ws + 1 > 1)) == (True, None)
    assert decide_relation(sp.Or(ws < 0, ws > -1))[0] is True
    assert decide_relation(sp.Not(ws < 0))[0] is True
    # positive sides compared through their logarithms: exp(-1/b) < 1 iff -1/b < 0
    assert decide_relation(sp.exp(-1 / b) < 1)[0] is True
    assert decide_relation(sp.Eq(r, 0)) == (None, r)


def _slow_then_factor(e):
    """The factored form, after 20,000 sympy nodes of work: more than a 0.2 s budget (6,000), less
    than a 5 s one."""
    for _ in range(20_000):
        sp.Dummy()  # a new node each time (a Symbol of a name seen before comes from sympy's cache)
    return sp.factor(e)


def test_a_decision_cut_short_is_none_and_not_memoised(monkeypatch):
    monkeypatch.setattr(oracle, "_REWRITINGS", (_slow_then_factor,))
    e = r**2 + 4 * r + 4  # (r + 2)^2: needs the factored form
    assert decide(e, "nonnegative", seconds=0.2) is None
    assert decide(e, "nonnegative", seconds=5) is True  # asked again: decided, not the memoised None


def test_a_decision_whose_work_ran_out_is_not_worked_out_again_with_the_same_budget(monkeypatch):
    """The budget counts nodes: the same question with the same budget is cut short at the same point,
    so it is answered "not shown" at once when asked again; a bigger budget is another question."""
    calls = []

    def counted(e):
        calls.append(e)
        return _slow_then_factor(e)

    monkeypatch.setattr(oracle, "_REWRITINGS", (counted,))
    e = r**2 + 8 * r + 16
    assert decide(e, "nonnegative", seconds=0.2) is None and len(calls) == 1
    assert decide(e, "nonnegative", seconds=0.2) is None and len(calls) == 1
    assert decide(e, "nonnegative", seconds=5) is True and len(calls) == 2


def test_a_decision_stopped_by_its_hang_guard_is_not_remembered(monkeypatch):
    """A hang guard (wall-clock) says nothing about the work: asked again, the decision is tried again."""
    calls = []

    def sleeps(e):
        calls.append(e)
        time.sleep(0.5)
        return e

    monkeypatch.setattr(oracle, "_REWRITINGS", (sleeps,))
    e = r**2 + 10 * r + 25
    assert decide(e, "nonnegative", seconds=0.02) is None
    assert decide(e, "nonnegative", seconds=0.02) is None and len(calls) == 2


def test_an_enclosing_limit_is_raised(monkeypatch):
    monkeypatch.setattr(oracle, "_REWRITINGS", (_slow_then_factor,))
    e = r**2 + 6 * r + 9
    with pytest.raises(StepTimeout):
        with time_limit(0.2):
            decide(e, "nonnegative", seconds=5)


def test_factor_is_not_tried_on_an_expression_larger_than_its_cap(monkeypatch):
    """factor's polynomial arithmetic builds no nodes the work budget counts; the oracle gives it only
    expressions of at most FACTOR_MAX_OPS operations (the second derivative of a two-outcome curve, 1,304
    operations, took 11 s in factor alone)."""
    q = sp.Symbol("q", positive=True)
    # an expression of undecided sign in symbolic powers, larger than the cap
    big = sum((q**alpha * (1 - q) ** (1 - alpha) - (k + 1) * q ** (alpha / (k + 2))) ** 2 * sp.log(q + k)
              for k in range(80)) - sp.Rational(1, 3)
    assert sp.count_ops(big) > oracle.FACTOR_MAX_OPS
    small = (q - 1) ** 2 * q**alpha - q
    assert sp.count_ops(small) <= oracle.FACTOR_MAX_OPS
    given = []
    real_factor = sp.factor

    def factor(e, *args, **kwargs):
        given.append(sp.count_ops(e))
        return real_factor(e, *args, **kwargs)

    monkeypatch.setattr(sp, "factor", factor)
    assert decide(big, "nonnegative", seconds=2, effort="rewritings") is None
    assert all(n <= oracle.FACTOR_MAX_OPS for n in given), given
    decide(small, "nonnegative", seconds=2, effort="rewritings")
    assert given  # below the cap, factor is tried


@pytest.mark.unit
def test_contradictions_and_tautologies_are_decided_without_signing_the_difference():
    """Two Gaussians of different variances: D_oo came as Piecewise((finite, x > 0 & x < 0), (oo, True)) with
    x = 1/s2^2 - 1/s1^2, whose sign no oracle can know (it has both). The condition is false for every x, so
    D_oo is +oo; ``D_oo == oo`` was inconclusive after 0 rewrite attempts (found in an audit)."""
    s1, s2 = sp.symbols("s1 s2", positive=True)
    x = 1 / s2**2 - 1 / s1**2
    assert decide_relation((x > 0) & (x < 0)) == (False, None)
    assert decide_relation((x > 0) & (-x >= 0)) == (False, None)  # one difference, up to its sign
    assert decide_relation(sp.Eq(x, 0) & (x < 0)) == (False, None)
    assert decide_relation((x > 0) | (x <= 0)) == (True, None)
    assert decide_relation((x > 0) | sp.Ne(x, 0) | sp.Eq(x, 0)) == (True, None)
    # consistent conditions stay undecided, with the difference to split on
    assert decide_relation((x > 0) & (x >= 0)) == (None, x)
    assert decide_relation((x >= 0) & (x <= 0))[0] is None  # x = 0 admits both
    assert decide_relation((x > 0) | (x < 0))[0] is None  # x = 0 admits neither
