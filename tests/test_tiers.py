"""The test tiers themselves (tests/conftest.py, README "Run the tests"): a unit test that derives fails,
and the registry tests' lists name registered mechanisms."""

import pytest

import rdpsym
from rdpsym import mechanisms

from _builtins import NUMERIC_ONLY, SAME_PATH_AS, SLOW_TO_DERIVE, closed_form_params, warm_up_names


@pytest.mark.unit
def test_a_unit_test_that_derives_fails(_unit_tests_derive_nothing):
    calls = _unit_tests_derive_nothing
    gaussian = mechanisms.get("gaussian")
    with pytest.raises(pytest.fail.Exception, match="unit tests derive nothing"):
        rdpsym.rdp(gaussian)
    # a name bound at import time by another module, and a call deep inside the library
    from rdpsym.derive import mechanism_rdp

    with pytest.raises(pytest.fail.Exception, match="renyi_divergence"):
        mechanism_rdp.renyi_divergence(gaussian.pairs[0].P, gaussian.pairs[0].Q, gaussian.variable, gaussian.support)
    with pytest.raises(pytest.fail.Exception, match="unit tests derive nothing"):
        rdpsym.verify(gaussian, level="quick")
    # a refusal the code under test swallows is recorded, and fails the test at teardown
    assert calls == ["rdp", "renyi_divergence", "rdp"]
    calls.clear()  # this test caught them on purpose


def test_outside_the_unit_tier_nothing_is_refused(_unit_tests_derive_nothing):
    assert _unit_tests_derive_nothing is None
    assert rdpsym.rdp(mechanisms.get("pure_dp")).is_closed_form


@pytest.mark.unit
def test_the_lists_of_built_ins_name_registered_mechanisms():
    names = set(mechanisms.names())
    assert NUMERIC_ONLY <= names and SLOW_TO_DERIVE <= names
    assert set(warm_up_names()) == names - SLOW_TO_DERIVE
    # a mechanism checked in the slow tier has its representative in the default run
    default = {p for p in closed_form_params() if isinstance(p, str)}
    assert set(SAME_PATH_AS) <= names and set(SAME_PATH_AS.values()) <= default
