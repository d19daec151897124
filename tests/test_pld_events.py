"""Accountant.from_dp_event (dp_accounting's DpEvent trees) and `rdpsym account --tight`."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from rdpsym import Accountant
from rdpsym._numbers import ArgumentError
from rdpsym.cli import main

dpa = pytest.importorskip("dp_accounting")


def _events(acct):
    return {(e.mechanism.name, e.values, e.count) for e in acct.events}


def test_gaussian_laplace_composed_and_self_composed():
    ev = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(3.0), 10), dpa.NoOpDpEvent(),
                              dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(10.0), 5)])
    acct = Accountant.from_dp_event(ev)
    assert _events(acct) == {("gaussian", (("sigma", 3.0), ("sensitivity", 1.0)), 10),
                             ("laplace", (("b", 10.0), ("sensitivity", 1.0)), 5)}


def test_replace_one_doubles_the_sensitivity_and_the_epsilon_grows():
    ev = dpa.GaussianDpEvent(4.0)
    ar, ro = Accountant.from_dp_event(ev), Accountant.from_dp_event(ev, "replace_one")
    assert _events(ro) == {("gaussian", (("sigma", 4.0), ("sensitivity", 2.0)), 1)}
    assert ro.tight_epsilon(1e-5, step=1e-3).lower > ar.tight_epsilon(1e-5, step=1e-3).upper


def test_randomized_response_replace_one():
    acct = Accountant.from_dp_event(dpa.RandomizedResponseDpEvent(0.5, 2), "replace_one")
    assert _events(acct) == {("randomized_response", (("p", 0.75),), 1)}
    b = acct.tight_epsilon(1e-5)
    exact = math.log(3 * (1 - 1e-5 / 0.75))  # one step: delta(eps) = 0.75 (1 - e^eps / 3)
    assert b.lower <= exact <= b.upper


@pytest.mark.slow  # adding k-ary randomized response derives its RDP curve first (minutes on a cold cache)
def test_k_ary_randomized_response_replace_one():
    k3 = Accountant.from_dp_event(dpa.RandomizedResponseDpEvent(0.3, 4), "replace_one")
    (name, values, _), = _events(k3)
    assert name == "k_randomized_response" and dict(values)["k"] == 4
    assert dict(values)["epsilon"] == pytest.approx(math.log((1 - 0.3 + 0.3 / 4) / (0.3 / 4)))


def test_sampled_events():
    acct = Accountant.from_dp_event(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0)), 3))
    (e,) = acct.events
    assert e.mechanism.subsampling.scheme == "poisson" and e.count == 3
    wor = Accountant.from_dp_event(dpa.SampledWithoutReplacementDpEvent(100, 10, dpa.GaussianDpEvent(1.0)),
                                   "replace_one")
    (e,) = wor.events
    assert e.mechanism.subsampling.scheme == "without_replacement"
    b = wor.tight_epsilon(1e-5, step=1e-3)
    assert 0 < b.lower <= b.upper < math.inf


def test_non_private_gives_no_guarantee():
    acct = Accountant.from_dp_event(dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.NonPrivateDpEvent()]))
    b = acct.tight_epsilon(1e-5)
    assert b.lower == b.upper == math.inf
    assert Accountant.from_dp_event(dpa.GaussianDpEvent(0.0)).tight_delta(1.0).upper == 1.0


@pytest.mark.parametrize("event,neighbouring,match", [
    (dpa.ZCDpEvent(0.1), "add_remove", "ZCDpEvent"),
    (dpa.RandomizedResponseDpEvent(0.5, 2), "add_remove", "RandomizedResponseDpEvent"),
    (dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0)), "replace_one", "PoissonSampledDpEvent"),
    (dpa.SampledWithoutReplacementDpEvent(100, 10, dpa.GaussianDpEvent(1.0)), "add_remove",
     "SampledWithoutReplacementDpEvent"),
    (dpa.PoissonSampledDpEvent(0.1, dpa.ZCDpEvent(0.1)), "add_remove", "ZCDpEvent"),
])
def test_unreadable_events_are_named(event, neighbouring, match):
    with pytest.raises(ValueError, match=match):
        Accountant.from_dp_event(event, neighbouring)


def test_bad_arguments():
    with pytest.raises(ArgumentError, match="neighbouring"):
        Accountant.from_dp_event(dpa.GaussianDpEvent(1.0), "add_or_remove")
    with pytest.raises(ArgumentError, match="event"):
        Accountant.from_dp_event("GaussianDpEvent")


def test_cli_tight_json_keys():
    runner = CliRunner()
    args = ["account", "--add", "randomized_response:p=0.75", "--count", "3", "--tight", "--json"]
    out = json.loads(runner.invoke(main, args + ["--delta", "1e-5"]).output)
    assert out["epsilon_lower"] <= out["epsilon_upper"] and out["delta"] == 1e-5
    out = json.loads(runner.invoke(main, args + ["--epsilon", "1"]).output)
    assert 0 <= out["delta_lower"] <= out["delta_upper"] <= 1
    res = runner.invoke(main, args[:-1] + ["--delta", "1.5"])
    assert res.exit_code != 0 and "delta" in res.output


def test_non_private_events_give_no_rdp_guarantee_either():
    acct = Accountant.from_dp_event(dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.NonPrivateDpEvent()]))
    conv = acct.epsilon(1e-5)
    assert conv.value == math.inf and conv.status.value == "infinite" and not conv.finite
    assert "non-private" in conv.note
    d = acct.delta(1.0)
    assert d.value == 1.0 and d.status.value == "infinite"
    with pytest.raises(ValueError, match="delta"):
        acct.epsilon(1.5)
    # without the non-private event the same accountant gives a finite epsilon
    assert math.isfinite(Accountant.from_dp_event(dpa.GaussianDpEvent(1.0)).epsilon(1e-5).value)
