"""Mechanisms that specify some of their neighbouring inputs only (``neighbours="some"``): lower bounds.

The divergence of particular neighbouring inputs bounds the RDP from below. It must refute a claimed
upper bound that it exceeds, and never confirm one, nor be accounted with, composed or bounded by
Prop. 2 as if it were the RDP. The mechanism here is randomized response declared as covering some
inputs, so the lower bound is the RR formula (Mironov 2017, Table II), checked independently below.
"""

import dataclasses

import mpmath as mp
import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms
from rdpsym._numbers import ArgumentError
from rdpsym.claims import Verdict
from rdpsym.derive.result import Status

RR = "(p - 1/2)*0 + 1/(alpha - 1)*log(p**alpha*(1-p)**(1-alpha) + (1-p)**alpha*p**(1-alpha))"


@pytest.fixture(scope="module")
def some():
    m = mechanisms.get("randomized_response")
    return dataclasses.replace(m, name="rr_some", neighbours="some")


def test_status_and_value(some):
    r = rdpsym.rdp(some)
    assert r.status is Status.LOWER_BOUND and "lower bound" in r.reason
    with mp.workdps(30):
        p, a = mp.mpf(3) / 4, mp.mpf(5) / 2
        ref = mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
        assert abs(mp.mpf(r.evaluate(sp.Rational(5, 2), p=sp.Rational(3, 4), dps=30)) - ref) < mp.mpf(10) ** -25


def test_refutes_an_upper_bound_it_exceeds_never_confirms(some):
    exact = rdpsym.check_claim(some, RR, "<=", search=0, certify=False)
    assert exact.verdict is Verdict.INCONCLUSIVE, exact
    assert any("lower bound" in e for e in exact.evidence)
    assert not any("holds for the mechanism" in e for e in exact.evidence), exact.evidence
    low = rdpsym.check_claim(some, RR + "/2", "<=", search=0, certify=False)  # half the true value: wrong
    assert low.verdict is Verdict.REFUTED and low.counterexample is not None
    equal = rdpsym.check_claim(some, RR + "*2", "==", search=0, certify=False)  # above the lower bound
    assert equal.verdict is Verdict.INCONCLUSIVE  # twice L may still be the RDP of the whole mechanism
    assert not any("holds for the mechanism" in e for e in equal.evidence), equal.evidence


def test_a_lower_bound_claim_below_it_holds(some):
    v = rdpsym.check_claim(some, RR + "/2", ">=", search=0, certify=False)
    assert v.verdict in (Verdict.PROVED, Verdict.CONFIRMED), v


def test_never_a_guarantee(some):
    with pytest.raises(ValueError, match="neighbours"):
        rdpsym.Accountant().add(some, p=0.75)
    assert rdpsym.group_privacy(some, 3).status is Status.FAILED
    composed = rdpsym.compose(some, mechanisms.get("randomized_response"))
    assert composed.status is Status.FAILED and composed.kl is None
    assert rdpsym.subsample(some, sp.Rational(1, 10)).neighbours == "some"


def test_bad_value_is_named():
    m = mechanisms.get("randomized_response")
    with pytest.raises(ArgumentError, match="neighbours"):
        dataclasses.replace(m, neighbours="most")


def test_the_worst_status_orders_a_lower_bound_after_numeric_values():
    """A result combined from parts is as weak as its weakest part: closed_form < bound < numeric_only
    < lower_bound < failed (a lower bound is weaker than any value that bounds the RDP from above)."""
    order = [Status.CLOSED_FORM, Status.BOUND, Status.NUMERIC_ONLY, Status.LOWER_BOUND, Status.FAILED]
    assert list(Status) == order
    for i, weaker in enumerate(order):
        for stronger in order[:i + 1]:
            assert Status.worst([stronger, weaker]) is weaker and Status.worst((weaker, stronger)) is weaker
    assert Status.worst(s for s in [Status.BOUND]) is Status.BOUND  # any iterable, one status
    with pytest.raises(ValueError):
        Status.worst([])
