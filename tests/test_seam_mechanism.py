"""The mechanism seam: a mechanism with its own float curve is one file's worth of code.

The mechanism below (Gaussian noise, under its own name) carries a hand-written float curve as its
``curve_provider``; registered from the test and unregistered after, it is derived by ``rdpsym.rdp``
like any mechanism, and the curve dispatcher (``mechanism_curve``) and the accountant use its own
curve, not a derived one — and a look-alike without the provider, under the same name, does not get it
(nothing chooses by a mechanism's name).
"""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym.accounting import curves
from rdpsym.accounting.curve_types import float_curve
from rdpsym.accounting.curves import mechanism_curve

CALLS = []


# -- the new mechanism and its float curve ----------------------------------------------------------
def seam_gaussian() -> rdpsym.Mechanism:
    """N(0, sigma^2) against N(1, sigma^2); its own float curve alpha / (2 sigma^2) (Mironov 2017, Prop. 7)."""
    x = sp.Symbol("x", real=True)
    sigma = rdpsym.parameter("sigma", typical=(0.5, 10.0), meaning="standard deviation of the noise")
    s = sigma.symbol

    def normal(mean):
        return sp.exp(-(x - mean) ** 2 / (2 * s**2)) / (sp.sqrt(2 * sp.pi) * s)

    return rdpsym.Mechanism(name="seam_gaussian", variable=x, support=sp.S.Reals,
                            pairs=(rdpsym.AdjacentPair(normal(0), normal(1), "f(D) = 0, f(D') = 1"),),
                            parameters=(sigma,), curve_provider=hand_written_curve)


def hand_written_curve(mechanism, group):
    def base(a, params):
        CALLS.append(np.size(a))
        a = np.asarray(a, dtype=float)
        return np.where(np.isinf(a), np.inf, a / (2 * np.asarray(params["sigma"], dtype=float) ** 2))

    return float_curve(mechanism, group, "hand-written", "alpha / (2 sigma^2), Mironov 2017, Prop. 7", base)


@pytest.fixture
def registered():
    rdpsym.mechanisms.register(seam_gaussian)
    curves.clear_cache()
    try:
        yield "seam_gaussian"
    finally:
        rdpsym.mechanisms.unregister("seam_gaussian")
        curves.clear_cache()


# -- its consumers ----------------------------------------------------------------------------------
def test_rdp_dispatcher_and_accountant_use_its_curve(registered):
    m = rdpsym.mechanisms.get(registered)
    assert registered in rdpsym.mechanisms.names()
    exact = rdpsym.rdp(m)  # derived from the densities like any mechanism's
    assert exact.status is rdpsym.Status.CLOSED_FORM

    curve = mechanism_curve(registered)
    assert curve.provenance == "hand-written" and curve.result is None
    CALLS.clear()
    a = np.array([1.5, 2.0, 10.0, 100.0])
    got = curve(a, sigma=2.0)
    assert CALLS, "the dispatcher did not call the mechanism's own curve"
    with mpmath.workdps(40):
        for ai, gi in zip(a, got):
            want = exact.evaluate(sp.Float(ai, 40), dps=40, sigma=2)
            assert abs(gi - want) <= 1e-14 * want

    acct = rdpsym.Accountant().add(registered, count=10, sigma=2.0)
    (event,) = acct.events
    assert event.provenance == "hand-written"
    CALLS.clear()
    eps = acct.epsilon(1e-5)
    assert CALLS and eps.status == "optimal"
    # against the exact converter on the derived closed form, 10 releases = 10 x the curve
    ref = rdpsym.epsilon(lambda t: 10 * exact.evaluate(sp.Float(t, 40), dps=40, sigma=2), 1e-5, dps=20)
    assert abs(eps.value - float(ref.value)) <= 1e-8 * float(ref.value)

    # groups of 2: the Prop. 2 bound around the mechanism's own curve
    assert mechanism_curve(registered, 2).provenance == "bound"


def test_a_look_alike_without_the_provider_gets_the_derived_curve(registered):
    twin = dataclasses.replace(rdpsym.mechanisms.get(registered), curve_provider=None)
    assert twin.name == registered
    assert mechanism_curve(twin).provenance == "closed form"


def test_unregistered_after():
    assert "seam_gaussian" not in rdpsym.mechanisms.names()
    with pytest.raises(ValueError, match="unknown mechanism"):
        rdpsym.Accountant().add("seam_gaussian", sigma=1.0)
