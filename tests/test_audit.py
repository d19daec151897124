"""``rdpsym audit``: the inventories cover every RDP definition of the installed libraries, wrong
callables are refuted, callables that cannot answer are never confirmed, and the CLI's JSON and exit codes."""

import json
import math

import pytest
import sympy as sp
from click.testing import CliRunner

from rdpsym.claims import Verdict
from rdpsym.claims.audit import LIBRARIES, AuditCase, inventory, missing_from, run_case, run_inventory
from rdpsym.cli import main

_MODULES = {"autodp": "autodp", "dp_accounting": "dp_accounting", "opacus": None}


def _inventory_or_skip(library):
    try:
        return inventory(library)
    except ImportError as exc:
        pytest.skip(f"{library} not installed: {exc}")


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_inventory_covers_every_definition_of_the_installed_modules(library):
    inv = _inventory_or_skip(library)
    assert not missing_from(inv)
    new = [u.covers for u in inv.uncovered if "new in this version" in u.reason]
    assert not new, f"{library} {inv.version} defines RDP functions the audit has no entry for: {new}"
    assert len(inv.defined) >= 5 and inv.cases
    # every listed name is a definition of this version, and each case calls something callable
    assert inv.known() <= set(inv.defined)
    assert all(callable(c.fn) for c in inv.cases)


def test_a_new_library_function_is_listed_not_skipped(monkeypatch):
    rdp_bank = pytest.importorskip("autodp.rdp_bank")

    def RDP_brand_new(params, alpha):
        return 0.0

    RDP_brand_new.__module__ = rdp_bank.__name__
    monkeypatch.setattr(rdp_bank, "RDP_brand_new", RDP_brand_new, raising=False)
    inv = inventory("autodp")
    row = next(u for u in inv.uncovered if u.covers == "rdp_bank.RDP_brand_new")
    assert row.kind == "not covered" and "new in this version" in row.reason


def _gauss_case(fn, **kw):
    return AuditCase("test", "gauss", "gaussian", fn, call="params_dict", arguments=("sigma",), **kw)


def test_gaussian_with_a_factor_two_error_is_refuted_with_a_counterexample():
    row = run_case(_gauss_case(lambda params, alpha: alpha / params["sigma"] ** 2), search=0)
    assert row.verdict.verdict is Verdict.REFUTED
    cex = row.verdict.counterexample
    with __import__("mpmath").workdps(30):
        assert abs(cex.claim_value - 2 * cex.divergence) < 1e-12 * abs(cex.divergence)
    assert row.digits is not None and row.digits < 1


def test_a_callable_that_raises_or_returns_nan_somewhere_is_not_confirmed():
    def raises(params, alpha):
        if alpha > 100:
            raise OverflowError("too large")
        return alpha / (2 * params["sigma"] ** 2)

    def nan(params, alpha):
        return math.nan if params["sigma"] < 0.1 else alpha / (2 * params["sigma"] ** 2)

    for fn in (raises, nan):
        row = run_case(_gauss_case(fn), search=0)
        assert row.verdict.verdict is Verdict.INCONCLUSIVE, str(row.verdict)
    right = run_case(_gauss_case(lambda params, alpha: alpha / (2 * params["sigma"] ** 2)), search=0)
    assert right.verdict.verdict is Verdict.CONFIRMED


def test_an_unavailable_mechanism_and_a_spent_budget_are_inconclusive():
    import time

    missing = run_case(AuditCase("test", "x", "no_such_mechanism_here", lambda alpha, b: 0.0))
    assert missing.verdict.verdict is Verdict.INCONCLUSIVE
    assert "not available" in missing.verdict.evidence[0]

    def slow(params, alpha):
        time.sleep(0.02)
        return alpha / (2 * params["sigma"] ** 2)

    row = run_case(_gauss_case(slow), search=0, seconds=1)
    assert row.verdict.verdict is Verdict.INCONCLUSIVE and "time budget" in row.verdict.evidence[0]


def test_the_audit_refutes_exactly_where_autodp_disagrees_with_the_known_value():
    """pRDP_expfamily's KL branch and RDP_noisy_screen's alpha = oo branch, compared with the values computed
    here independently (Gaussian KL 1/(2 sigma^2); Bernoulli D_oo log(p/(1-p))): refuted iff they differ."""
    pytest.importorskip("autodp")
    from autodp import rdp_bank

    inv = inventory("autodp")
    rows = run_inventory(inv, only=("pRDP_expfamily", "RDP_noisy_screen"), search=0)
    kl = next(r for r in rows if r.checked and r.covers.endswith("pRDP_expfamily") and r.case.order == 1)
    lib = rdp_bank.pRDP_expfamily({"eta1": 0.0, "eta2": 1.0, "A": lambda e: e * e / 2, "mu": 0.0}, 1)
    assert (kl.verdict.verdict is Verdict.REFUTED) == (abs(lib - 0.5) > 1e-6), str(kl.verdict)
    oo = next(r for r in rows if r.checked and r.covers.endswith("RDP_noisy_screen") and r.case.order == sp.oo)
    lib = rdp_bank.RDP_noisy_screen({"logp": math.log(0.75), "logq": math.log(0.25)}, math.inf)
    assert (oo.verdict.verdict is Verdict.REFUTED) == (abs(lib - math.log(3)) > 1e-6), str(oo.verdict)


def test_cli_json_schema_and_exit_code():
    pytest.importorskip("autodp")
    result = CliRunner().invoke(main, ["audit", "autodp", "--only", "RDP_gaussian", "--search", "0", "-q",
                                       "--json", "-"])
    doc = json.loads(result.stdout)
    assert doc["schema"] == "rdpsym-audit/1" and doc["library"] == "autodp" and doc["version"]
    keys = {"library", "covers", "function", "mechanism", "status", "verdict", "relation", "order", "alpha_range",
            "mapping", "digits", "points_checked", "seconds", "reason", "evidence", "counterexample"}
    assert doc["rows"] and all(set(r) == keys for r in doc["rows"])
    checked = [r for r in doc["rows"] if r["status"] == "checked"]
    assert {r["order"] for r in checked} == {None, "1", "oo"}
    verdicts = {r["verdict"] for r in checked}
    expected = 1 if "refuted" in verdicts else (3 if "inconclusive" in verdicts else 0)
    assert result.exit_code == expected
    assert verdicts <= {"confirmed", "proved"}  # autodp's Gaussian RDP is alpha/(2 sigma^2)


def test_cli_refuted_row_has_the_counterexample(tmp_path):
    pytest.importorskip("autodp")
    out = tmp_path / "a.json"
    md = tmp_path / "a.md"
    result = CliRunner().invoke(main, ["audit", "autodp", "--only", "pRDP_expfamily", "--search", "0", "-q",
                                       "--json", str(out), "--markdown", str(md)])
    doc = json.loads(out.read_text())
    refuted = [r for r in doc["rows"] if r["verdict"] == "refuted"]
    assert result.exit_code == (1 if refuted else 0)
    for r in refuted:
        cex = r["counterexample"]
        assert {"point", "library_value", "rdpsym_value", "gap", "direction"} <= set(cex) and "alpha" in cex["point"]
    assert "pRDP_expfamily" in md.read_text()


def test_cli_library_not_installed(monkeypatch):
    import rdpsym.claims.audit as audit_pkg

    def missing(library):
        raise ImportError("no module")

    monkeypatch.setattr(audit_pkg, "inventory", missing)
    result = CliRunner().invoke(main, ["audit", "opacus", "-q"])
    assert result.exit_code == 2 and "not installed" in result.stderr


def test_cli_lists_every_library():
    from rdpsym.cli import audit_commands

    assert tuple(audit_commands._LIBRARIES) == tuple(LIBRARIES)
