"""The committed certificates in proofs/certificates match what the code produces now (semantically:
formulas parsed back and compared with sympy, verdicts and rounded numbers compared exactly)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import proofs  # noqa: E402
from proofs._certificate import differences  # noqa: E402

CHEAP = [s for s in proofs.PROOFS if getattr(proofs.load(s), "CHEAP", False)]
SLOW = [s for s in proofs.PROOFS if s not in CHEAP]


@pytest.mark.parametrize("slug", CHEAP)
def test_cheap_certificate_is_up_to_date(slug):
    assert proofs.check(slug) == []


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLOW)
def test_slow_certificate_is_up_to_date(slug):
    assert proofs.check(slug) == []


def test_comparison_detects_a_changed_formula_and_verdict_but_not_whitespace():
    base = {"formulas": {"f": "alpha/(2*sigma**2)"}, "verdicts": {"v": "holds"}, "numbers": {"n": "0.419"}}
    same = {"formulas": {"f": "alpha / (2 * sigma ** 2)"}, "verdicts": {"v": "holds"}, "numbers": {"n": "0.419"}}
    assert differences(base, same) == []
    equal_math = {**same, "formulas": {"f": "alpha*sigma**(-2)/2"}}
    assert differences(base, equal_math) == []
    assert differences(base, {**same, "formulas": {"f": "alpha/sigma**2"}})
    assert differences(base, {**same, "verdicts": {"v": "fails"}})
    assert differences(base, {**same, "numbers": {"n": "0.420"}})
