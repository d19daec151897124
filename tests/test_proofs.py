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


def test_a_claim_certificate_that_no_longer_holds_is_a_difference(tmp_path, monkeypatch):
    """Table II's rows carry their claims' certificates (rdpsym-certificate/1): a changed one is reported."""
    import json
    import shutil

    from proofs import _certificate

    for f in _certificate.CERT_DIR.glob("table2_laplace*"):
        shutil.copy(f, tmp_path)
    monkeypatch.setattr(_certificate, "CERT_DIR", tmp_path)
    assert proofs.check("table2_laplace") == []
    path = tmp_path / "table2_laplace.alpha_eq_1.json"
    data = json.loads(path.read_text())
    data["claim"] = f"Mul(Rational(1000001, 1000000), {data['claim']})"
    path.write_text(json.dumps(data))
    found = proofs.check("table2_laplace")
    assert any(d.startswith("claims[alpha = 1]: the certificate does not hold") for d in found), found
    assert any(d.startswith("claims[alpha = 1]: the certificate is about another formula") for d in found), found
    path.unlink()
    assert any("claims[alpha = 1]: no certificate" in d for d in proofs.check("table2_laplace"))
