"""zCDP and truncated CDP as curves the accountant composes with derived ones (rdpsym.accounting.guarantees).

The references are independent of the guarantee code: the Gaussian mechanism's curve is derived by the
engine from its densities (it is exactly (Δ²/(2σ²))-zCDP: Bun and Steinke 2016, Prop. 1.6), and the
zCDP -> (eps, delta) figure is checked against Bun and Steinke 2016, Prop. 1.3 (a looser bound).
"""

import math

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

from rdpsym._numbers import ArgumentError
from rdpsym.accounting import TCDP, ZCDP, Accountant
from rdpsym.accounting import guarantees
from rdpsym.cli import main

ORDERS = np.array([0.5, 1.0, 1.5, 2.0, 7.25, 64.0, 1e4])


def test_zcdp_curve_is_the_gaussian_curve_derived_from_densities():
    sigma, delta_q = 1.7, 1.3
    rho = delta_q**2 / (2 * sigma**2)
    gauss = Accountant().add("gaussian", sigma=sigma, sensitivity=delta_q).curve(ORDERS)
    zcdp = Accountant().add(ZCDP, rho=rho).curve(ORDERS)
    # below 1 the zCDP curve is the monotone bound rho (the Gaussian's own value is smaller there)
    above = ORDERS >= 1
    np.testing.assert_allclose(zcdp[above], gauss[above], rtol=1e-13)
    assert np.all(zcdp[~above] >= gauss[~above]) and np.all(zcdp[~above] == rho)
    eps_z = Accountant().add("zcdp", rho=rho, count=50).epsilon(1e-6)
    eps_g = Accountant().add("gaussian", sigma=sigma, sensitivity=delta_q, count=50).epsilon(1e-6)
    assert eps_z.value == pytest.approx(eps_g.value, rel=1e-9)
    assert eps_z.value <= 50 * rho + 2 * math.sqrt(50 * rho * math.log(1e6))  # Bun and Steinke, Prop. 1.3


def test_composes_with_derived_curves():
    acct = Accountant().add("laplace", b=2.0).add(ZCDP, rho=0.01, count=3).add(TCDP, rho=0.02, omega=8.0)
    lap = Accountant().add("laplace", b=2.0).curve(ORDERS)
    want = lap + 3 * 0.01 * np.maximum(ORDERS, 1) + np.where(ORDERS < 8, 0.02 * np.maximum(ORDERS, 1), np.inf)
    np.testing.assert_allclose(acct.curve(ORDERS), want, rtol=1e-13)
    assert acct.max_divergence == math.inf  # zCDP with rho > 0 states no pure-DP bound
    conv = acct.epsilon(1e-5)
    assert conv.alpha < 8 and math.isfinite(conv.value)  # the optimum stays where tCDP states a bound
    assert {e.provenance for e in acct.events} == {"closed form", "guarantee"}


def test_exact_values_and_infinity():
    assert ZCDP.epsilon(3, rho=sp.Rational(1, 2)) == sp.Rational(3, 2)
    assert ZCDP.epsilon(sp.Rational(1, 2), rho=1, xi=sp.Rational(1, 10)) == sp.Rational(11, 10)
    assert ZCDP.epsilon(sp.oo, rho=0, xi=sp.Rational(1, 4)) == sp.Rational(1, 4)
    assert ZCDP.epsilon(sp.oo, rho=sp.Rational(1, 100)) == sp.oo
    assert TCDP.epsilon(5, rho=1, omega=5) == sp.oo and TCDP.epsilon(4, rho=1, omega=5) == 4
    curve = Accountant().add(TCDP, rho=0.1, omega=3.0).curve([2.999, 3.0, 50.0, np.inf])
    assert curve[0] == pytest.approx(0.2999) and np.all(np.isinf(curve[1:]))
    assert Accountant().add(ZCDP, rho=0.0).max_divergence == 0.0


def test_group_privacy_k_squared_and_prop2_elsewhere():
    k, rho = 3, 0.1
    g = Accountant(group_size=k).add(ZCDP, rho=rho)
    np.testing.assert_allclose(g.curve([2.0, 5.0]), [k**2 * rho * 2, k**2 * rho * 5], rtol=1e-14)  # Prop. 1.9
    # xi > 0: Prop. 1.9 says nothing; Mironov's Prop. 2 (c = 2): 3^2 (xi + rho 2^2 alpha) at alpha >= 2
    g = Accountant(group_size=k).add(ZCDP, rho=rho, xi=0.01)
    np.testing.assert_allclose(g.curve([2.0]), [9 * (0.01 + rho * 8)], rtol=1e-14)
    assert np.isinf(g.curve([1.5]))  # Prop. 2 makes no claim between 1 and 2
    t = Accountant(group_size=2).add(TCDP, rho=rho, omega=20.0)
    np.testing.assert_allclose(t.curve([2.0, 9.0]), [3 * rho * 4, 3 * rho * 18], rtol=1e-14)
    assert np.isinf(t.curve([11.0]))  # 2 alpha beyond omega: no claim


@pytest.mark.parametrize("values, name", [({"rho": -0.1}, "rho"), ({"rho": float("nan")}, "rho"),
                                          ({"rho": 0.1, "omega": 1.0}, "omega")])
def test_bad_values_name_the_parameter(values, name):
    g = TCDP if "omega" in values else ZCDP
    with pytest.raises(ValueError, match=name):
        Accountant().add(g, **values)


def test_registry_and_cli():
    assert {"zcdp", "tcdp"} <= set(guarantees.names())
    with pytest.raises(ArgumentError, match="zcdp"):
        guarantees.get("nope")
    out = CliRunner().invoke(main, ["account", "--add", "zcdp:rho=0.5", "--delta", "1e-5"])
    assert out.exit_code == 0, out.output
    want = Accountant().add(ZCDP, rho=0.5).epsilon(1e-5).value
    assert f"{want:.6g}" in out.output


def test_a_guarantee_reads_its_parameters_as_a_mechanism_does():
    """One reading of a parameter set (rdpsym.specify.params.ParameterSet) for guarantees and mechanisms:
    the same validation, the same errors, and defaults checked when the object is made."""
    from rdpsym import mechanisms
    from rdpsym.specify.mechanism import Mechanism
    from rdpsym.specify.params import ParameterSet, parameter

    assert isinstance(ZCDP, ParameterSet) and isinstance(mechanisms.get("gaussian"), ParameterSet)
    assert type(ZCDP).substitutions is Mechanism.substitutions
    assert ZCDP.substitutions({"rho": 0.5}) == {ZCDP.params["rho"]: sp.Rational(1, 2)}  # 0.5 exactly
    with pytest.raises(ValueError, match="'sigma' is not a parameter of 'zcdp'"):
        ZCDP.substitutions({"sigma": 1})
    rho = parameter("rho", sp.Interval(0, sp.oo), typical=(0.1, 1.0))
    alpha = guarantees.ALPHA
    with pytest.raises(ArgumentError, match="parameter 'rho' must lie in"):
        guarantees.GuaranteeCurve("mine", "t", (rho,), rho.symbol * alpha, sp.oo, "s", defaults=(("rho", -1),))
    with pytest.raises(ValueError, match="defaults: 'xi' is not a parameter"):
        guarantees.GuaranteeCurve("mine", "t", (rho,), rho.symbol * alpha, sp.oo, "s", defaults=(("xi", 0),))
    with pytest.raises(ValueError, match="duplicate names"):
        guarantees.GuaranteeCurve("mine", "t", (rho, rho), rho.symbol * alpha, sp.oo, "s")
