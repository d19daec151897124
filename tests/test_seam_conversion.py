"""The conversion seam: a new RDP -> (epsilon, delta) conversion is one registered entry.

The entry below is a deliberately weaker variant of Mironov 2017, Prop. 3 (it spends delta/2 where
Prop. 3 spends delta, so it is valid and never better): registered from the test, it is picked up by
the exact converter (``rdpsym.epsilon``/``rdpsym.delta``), the accountant and ``rdpsym account
--method``; its value for the Gaussian is checked against the closed-form optimum computed
independently at 50 digits.
"""

from __future__ import annotations

import mpmath
import pytest
from click.testing import CliRunner

import rdpsym
from rdpsym.accounting import conversions
from rdpsym.accounting.conversions import ConversionRule

SIGMA = 3


# -- the new conversion: one entry ------------------------------------------------------------------
def _epsilon(m, eps_rdp, a, delta):
    """Prop. 3 at delta/2: eps_RDP(alpha) + log(2/delta) / (alpha - 1)."""
    return eps_rdp + m.log(2 / delta) / (a - 1)


def _log_delta(m, eps_rdp, a, epsilon):
    """Prop. 3 doubled: (alpha - 1)(eps_RDP(alpha) - epsilon) + log 2."""
    return (a - 1) * (eps_rdp - epsilon) + m.log(2)


WEAK = ConversionRule("weak_prop3", "Mironov 2017, Prop. 3 at delta/2 (a test's deliberately weaker variant)",
                      "RDP, Prop. 3 at delta/2 (test)", _epsilon, _log_delta)


@pytest.fixture
def weak():
    conversions.register(WEAK)
    try:
        yield WEAK.name
    finally:
        conversions.unregister(WEAK.name)


def _gaussian_optimum(delta) -> mpmath.mpf:
    """min over alpha > 1 of c alpha + log(2/delta)/(alpha - 1), c = 1/(2 sigma^2): at alpha* = 1 +
    sqrt(log(2/delta)/c) the value is c + 2 sqrt(c log(2/delta))."""
    c = mpmath.mpf(1) / (2 * SIGMA**2)
    L = mpmath.log(2 / mpmath.mpf(delta))
    return c + 2 * mpmath.sqrt(c * L)


# -- the consumers ----------------------------------------------------------------------------------
def test_registered_conversion_is_listed_and_removed(weak):
    assert weak in conversions.names() and rdpsym.accounting.METHODS[weak] == WEAK.source
    conversions.unregister(weak)
    assert weak not in rdpsym.accounting.METHODS
    with pytest.raises(ValueError, match="method must be one of"):
        rdpsym.Accountant(method=weak)
    conversions.register(WEAK)


def test_exact_converter_accountant_and_cli_use_it(weak):
    g = rdpsym.rdp(rdpsym.mechanisms.get("gaussian"))
    delta = mpmath.mpf("1e-5")
    exact = rdpsym.epsilon(g, delta, method=weak, dps=30, sigma=SIGMA, sensitivity=1)
    with mpmath.workdps(50):
        want = _gaussian_optimum(delta)
        alpha_star = 1 + mpmath.sqrt(mpmath.log(2 / delta) * 2 * SIGMA**2)
        assert abs(exact.value - want) <= mpmath.mpf(10) ** -25 * want
        assert abs(exact.alpha - alpha_star) <= mpmath.mpf(10) ** -10 * alpha_star
        assert WEAK.source in exact.note
        # weaker than Prop. 3 by construction: the test's entry really is the one used
        prop3 = rdpsym.epsilon(g, delta, method="mironov", dps=30, sigma=SIGMA, sensitivity=1).value
        assert exact.value > prop3
        # the delta direction inverts it
        back = rdpsym.delta(g, exact.value, method=weak, dps=30, sigma=SIGMA, sensitivity=1).value
        assert abs(back - delta) <= mpmath.mpf(10) ** -20 * delta

    acct = rdpsym.Accountant(method=weak).add("gaussian", sigma=float(SIGMA))
    got = acct.epsilon(1e-5)
    assert got.method == weak and got.status == "optimal" and WEAK.source in got.note
    assert abs(got.value - float(want)) <= 1e-9 * float(want)
    assert rdpsym.Accountant().add("gaussian", sigma=float(SIGMA)).epsilon(1e-5, method=weak).value == got.value

    from rdpsym.cli import main

    out = CliRunner().invoke(main, ["account", "--add", f"gaussian:sigma={SIGMA}", "--delta", "1e-5", "--method", weak])
    assert out.exit_code == 0, out.output
    assert f"epsilon = {float(want):.6g}" in out.output and "Prop. 3 at delta/2" in out.output
    assert weak in CliRunner().invoke(main, ["account", "--help"]).output


def test_unregistered_conversion_is_refused_everywhere():
    assert WEAK.name not in conversions.names()
    g = rdpsym.rdp(rdpsym.mechanisms.get("gaussian"))
    with pytest.raises(ValueError, match="method must be one of"):
        rdpsym.epsilon(g, 1e-5, method=WEAK.name, sigma=SIGMA, sensitivity=1)
    from rdpsym.cli import main

    out = CliRunner().invoke(main, ["account", "--add", "gaussian:sigma=3", "--delta", "1e-5", "--method", WEAK.name])
    assert out.exit_code == 2 and "weak_prop3" in out.output
