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


# -- the accountants: each reported value against rdpsym's certified bracket -----------------------------------
def _gauss_eps(delta, mu):
    import mpmath

    with mpmath.workdps(40):
        def d(eps):
            return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)

        lo, hi = mpmath.mpf(0), mpmath.mpf(60)
        for _ in range(150):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
        return float(hi)


def test_accountant_verdicts_follow_the_bracket():
    from rdpsym.claims.audit.accountants import verdict

    assert verdict(0.9, 1.0, 1.1, 0.0, True)[0] == "refuted"
    assert verdict(1.2, 1.0, 1.1, 0.0, True)[0] == "loose"
    assert verdict(1.105, 1.0, 1.1, 0.01, True)[0] == "confirmed"
    assert verdict(math.inf, 1.0, 1.1, 0.0, True)[0] == "loose"
    assert verdict(math.nan, 1.0, 1.1, 0.0, True)[0] == "inconclusive"
    assert verdict(None, 1.0, 1.1, 0.0, True)[0] == "inconclusive"
    # a bracket that is not certified decides nothing; one with a heuristic upper bound only refutes
    assert verdict(0.5, 1.0, 1.1, 0.0, False)[0] == "inconclusive"
    assert verdict(0.5, 1.0, 1.1, 0.0, True, upper_certified=False)[0] == "refuted"
    assert verdict(1.5, 1.0, 1.1, 0.0, True, upper_certified=False)[0] == "inconclusive"


def test_accountant_rows_for_exact_low_high_and_failing_values():
    from rdpsym.claims.audit.accountants import AccountantCase, EventKind, run_accountants, self_compositions

    comp = self_compositions(EventKind.GAUSSIAN, counts=(10,), sigma=2.0)[0]
    exact = _gauss_eps(1e-5, math.sqrt(10) / 2)

    def boom():
        raise RuntimeError("library failure")

    cases = [AccountantCase("test", "exact", comp, "epsilon", 1e-5, lambda: exact),
             AccountantCase("test", "low", comp, "epsilon", 1e-5, lambda: 0.99 * exact),
             AccountantCase("test", "high", comp, "epsilon", 1e-5, lambda: exact + 0.5, 0.1),
             AccountantCase("test", "raises", comp, "epsilon", 1e-5, boom),
             AccountantCase("test", "nan", comp, "delta", 2.0, lambda: math.nan)]
    rows = {r.case.accountant: r for r in run_accountants(cases)}
    assert {k: r.verdict for k, r in rows.items()} == {"exact": "confirmed", "low": "refuted", "high": "loose",
                                                       "raises": "inconclusive", "nan": "inconclusive"}
    assert rows["low"].lower <= exact <= rows["low"].upper and rows["exact"].certified
    assert "library failure" in rows["raises"].reason
    doc = rows["low"].as_json()
    assert doc["verdict"] == "refuted" and doc["lower"] <= exact and doc["neighbouring"] == "add_remove"


def test_dp_accounting_pld_composes_a_self_composed_randomized_response_once():
    """dp_accounting 0.6.0's PLDAccountant ignores the count of a SelfComposedDpEvent around a
    RandomizedResponseDpEvent (pld_privacy_accountant.py, the RandomizedResponseDpEvent branch composes
    one release): the audit must refute it where the count matters, and confirm the single release."""
    pytest.importorskip("dp_accounting")
    from rdpsym.claims.audit import lib_dp_accounting
    from rdpsym.claims.audit.accountants import run_accountants

    cases = [c for c in lib_dp_accounting.accountant_cases() if c.accountant == "PLDAccountant"
             and c.composition.label.startswith("randomized_response") and c.quantity == "epsilon"
             and c.composition.events[0][2] in (1, 10)]
    rows = run_accountants(cases)
    by_count = {}
    for r in rows:
        by_count.setdefault(r.case.composition.events[0][2], []).append(r)
    once = {round(r.value, 6) for r in by_count[1]}
    ten = {round(r.value, 6) for r in by_count[10]}
    refuted = all(r.verdict == "refuted" for r in by_count[10])
    assert refuted == (once == ten)  # refuted exactly when ten releases report what one does
    assert all(r.verdict in ("confirmed", "loose") for r in by_count[1])


def test_accountants_that_cannot_be_imported_are_said_so(monkeypatch):
    from rdpsym.claims import audit as audit_pkg
    from rdpsym.claims.audit import lib_opacus

    def no_torch():
        raise ImportError("No module named 'torch'")

    monkeypatch.setattr(lib_opacus, "accountant_cases", no_torch)
    rows, note = audit_pkg.audit_accountants("opacus")
    assert rows == [] and "torch" in note


def test_cli_audit_reports_the_accountants():
    pytest.importorskip("autodp")
    result = CliRunner().invoke(main, ["audit", "autodp", "--only", "ExactGaussian", "--search", "0", "-q",
                                       "--json", "-"])
    doc = json.loads(result.stdout)
    accs = doc["accountants"]
    assert accs and all(a["accountant"] == "ExactGaussianMechanism" for a in accs)
    keys = {"library", "accountant", "composition", "neighbouring", "quantity", "target", "library_value", "lower",
            "upper", "tolerance", "tolerance_source", "verdict", "certified", "reason", "seconds"}
    assert all(set(a) == keys for a in accs)
    assert doc["accountant_summary"]["refuted"] == sum(a["verdict"] == "refuted" for a in accs)
    verdicts = {a["verdict"] for a in accs}
    expected = 1 if "refuted" in verdicts else (3 if "inconclusive" in verdicts else 0)
    assert result.exit_code == expected
    assert "### Accountants" in result.stderr
    quiet = CliRunner().invoke(main, ["audit", "autodp", "--only", "ExactGaussian", "--search", "0", "-q",
                                      "--no-accountants", "--json", "-"])
    assert "accountants" not in json.loads(quiet.stdout)
