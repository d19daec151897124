"""Regression registry: the shipped registry loads, entries pass, broken entries are caught."""


import json

import pytest
from _helpers import FLIPPED_LAPLACE_KL, GAUSSIAN_ALPHA
from click.testing import CliRunner

from rdpsym.cli import main
from rdpsym.regress import RegistryError, default_registry, load_registry, parse_set, run_registry
from rdpsym.testing import assert_closed_form, assert_registry

BROKEN = FLIPPED_LAPLACE_KL + GAUSSIAN_ALPHA


def test_shipped_registry_covers_table_ii_and_builtins():
    from rdpsym import mechanisms

    entries = load_registry(default_registry())
    names = {e.name for e in entries}
    for mech in ("randomized_response", "laplace", "gaussian"):
        for row in ("alpha", "kl", "max"):
            assert f"{mech}/{row}" in names
    # every built-in with a closed form in alpha has entries; the subsampled Gaussian has none (a mixture:
    # numeric_only), its integer orders are checked against the published binomial form in
    # tests/test_subsampled_gaussian.py
    without_closed_form = {"subsampled_gaussian", "cauchy", "student_t"}  # numeric curves (student_t: no values)
    # lower bounds (neighbours="some": an entry could refute, never pass) and the 2-D Gaussian on an l2 ball
    # (the claim checker's grid over a vector family is inconclusive): their values are tested in
    # tests/test_more_mechanisms.py against mpmath
    no_entry = {"exponential_mechanism", "bounded_laplace", "multivariate_gaussian"}
    assert {e.mechanism for e in entries if e.mechanism} >= set(mechanisms.names()) - without_closed_form - no_entry
    assert sum(1 for e in entries if e.densities) >= 4
    assert all(any(s in e.source for s in ("Mironov", "Gil", "exponential-family", "KL", "Canonne", "Bun and Steinke",
                                          "Agarwal", "Nielsen")) for e in entries)


def test_the_whole_shipped_registry_passes():
    """``rdpsym regress --strict`` on the shipped registry, every entry (issue 33: CI runs it): exit 0, each
    entry passes with a verdict. A certificate that replays decides its entry without a search (the same
    outcome on every machine); one that no longer applies is searched, and the entry must pass anyway."""
    entries = load_registry(default_registry())
    # one process: the test run's own workers already use every core, and each process of a pool derives
    # what the entries share again (cold: 106 s of CPU in one process, 167 s in two)
    out = CliRunner().invoke(main, ["regress", "--strict", "--json", "--search", "20", "--workers", "1"])
    doc = json.loads(out.output)
    rows = {e["name"]: e for e in doc["entries"]}
    assert sorted(rows) == sorted(e.name for e in entries)
    failing = {n: (e["label"], e["verdict"], e["certificate"], e["detail"]) for n, e in rows.items()
               if e["label"] != "pass" or e["verdict"] not in ("proved", "confirmed")}
    assert not failing and out.exit_code == 0, failing
    table_ii = [n for n in rows if n.split("/")[0] in ("randomized_response", "laplace", "gaussian")]
    assert len(table_ii) >= 8 and all(rows[n]["verdict"] == "proved" for n in table_ii), table_ii


def test_density_entry_passes():
    rows = run_registry(only=["exponential-rates/alpha"], search=20, certificates=False)
    assert len(rows) == 1 and rows[0].ok and rows[0].independent.endswith("digits"), rows


def test_a_replayed_entry_is_checked_against_the_densities_at_its_binding_points(monkeypatch):
    """With its certificate replayed, an entry's independent check is the replay's binding points (the closed
    form against the densities' numerics), not a second run of the same numerics; where the replay binds
    nothing the entry is searched and checked as before."""
    def must_not_run(target, order, verdict):
        raise AssertionError("the independent check ran again after a replay")

    monkeypatch.setattr("rdpsym.regress._independent_check", must_not_run)
    (row,) = run_registry(only=["exponential-rates/alpha"], search=20)
    assert row.ok and row.certificate == "replayed", row
    assert "binding point(s) agree with the densities' numerics" in row.independent, row


def test_broken_entry_is_a_regression_and_cli_exits_nonzero(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(BROKEN)
    rows = run_registry([path], search=10)
    by = {r.name: r for r in rows}
    assert not by["laplace/kl-flipped"].ok and by["laplace/kl-flipped"].verdict == "refuted"
    assert by["gaussian/alpha-ok"].ok
    result = CliRunner().invoke(main, ["regress", str(path), "--search", "10"])
    assert result.exit_code == 1, result.output
    assert "REGRESSION" in result.output and "laplace/kl-flipped" in result.output
    with pytest.raises(AssertionError, match="kl-flipped"):
        assert_registry(path, search=10)


@pytest.mark.parametrize("text, rule", [
    ("[[entry]]\nname='a'\nformula='1'\nsource='s'\n", "exactly one of"),
    ("[[entry]]\nname='a'\nmechanism='gaussian'\nformula='1'\nsource='s'\norder='2.5'\n", "order"),
    ("[[entry]]\nname='a'\nmechanism='gaussian'\nformula='1'\nsource='s'\ncolor='red'\n", "unknown keys"),
    ("name = 1\n", "no \\[\\[entry\\]\\]"),
])
def test_malformed_registry(tmp_path, text, rule):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RegistryError, match=rule):
        load_registry(path)


def test_stated_domain_must_match_mechanism(tmp_path):
    path = tmp_path / "dom.toml"
    path.write_text("[[entry]]\nname='g'\nmechanism='gaussian'\n"
                    "formula='alpha/(2*sigma**2)'\nsource='s'\ndomains={sigma='(1, oo)'}\n")
    rows = run_registry([path], search=5)
    assert not rows[0].ok and "declares" in rows[0].detail


def test_hostile_density_is_refused(tmp_path):
    path = tmp_path / "evil.toml"
    path.write_text("[[entry]]\nname='e'\nformula='1'\nsource='s'\nparameters={}\n"
                    "densities={P=\"__import__('os').system('touch /tmp/rdpsym_pwned')\", Q='1', variable='x', support='[0, 1]'}\n")
    rows = run_registry([path], search=5)
    assert not rows[0].ok and "error" == rows[0].verdict
    import os
    assert not os.path.exists("/tmp/rdpsym_pwned")


def test_parse_set():
    import sympy as sp
    assert parse_set("(0, oo)") == sp.Interval.open(0, sp.oo)
    assert parse_set("[0, 1]") == sp.Interval(0, 1)
    assert parse_set("{0, 1}") == sp.FiniteSet(0, 1)
    assert parse_set("Naturals0") == sp.S.Naturals0
    with pytest.raises(RegistryError):
        parse_set("open('x')")


def test_assert_closed_form_helper():
    assert assert_closed_form("gaussian", "1/(2*sigma**2)", order=1).ok
    with pytest.raises(AssertionError, match="refuted"):
        assert_closed_form("gaussian", "1/(4*sigma**2)", order=1)


def test_check_cli_exit_codes():
    runner = CliRunner()
    ok = runner.invoke(main, ["check", "laplace", "--claim", "1/lambda + exp(-1/lambda) - 1", "--order", "1"])
    assert ok.exit_code == 0, ok.output
    assert "PROVED" in ok.output or "CONFIRMED" in ok.output
    bad = runner.invoke(main, ["check", "randomized_response", "--claim", "p/(1-p)", "--order", "oo"])
    assert bad.exit_code == 1 and "REFUTED" in bad.output and "counterexample" in bad.output
    latex = runner.invoke(main, ["check", "gaussian", "--claim", r"\frac{\alpha}{2\sigma^2}", "--latex"])
    assert latex.exit_code == 0, latex.output
    err = runner.invoke(main, ["check", "gaussian", "--claim", "__import__('os')"])
    assert err.exit_code == 2 and "error" in err.output


KL_ENTRY = """[[entry]]
name = "laplace/kl"
mechanism = "laplace"
order = "1"
formula = "1/lambda + exp(-1/lambda) - 1"
fixed = { sensitivity = 1 }
source = "Mironov 2017, Table II"
"""


def test_certificates_are_written_replayed_and_searched_again_when_stale(tmp_path):
    from rdpsym.regress import certificate_path

    path = tmp_path / "mine.toml"
    path.write_text(KL_ENTRY)
    (entry,) = load_registry(path)
    cert = certificate_path(entry)
    assert cert == tmp_path / "mine.certificates" / "laplace--kl.json"
    (missing,) = run_registry([path], search=10, executor="serial")
    assert missing.ok and missing.certificate == "missing" and not cert.exists()
    out = CliRunner().invoke(main, ["regress", str(path), "--search", "10", "--workers", "1", "--write-certificates"])
    assert out.exit_code == 0 and cert.exists(), out.output
    (replayed,) = run_registry([path], search=10, executor="serial")
    assert replayed.ok and replayed.certificate == "replayed" and replayed.verdict == "proved", replayed
    assert replayed.report.points_checked == 0  # no search
    # a certificate about another formula (the entry now writes the KL another way): searched, and said so
    path.write_text(KL_ENTRY.replace('"1/lambda + exp(-1/lambda) - 1"', '"(lambda*exp(-1/lambda) + 1 - lambda)/lambda"'))
    (changed,) = run_registry([path], search=10, executor="serial")
    assert changed.ok and changed.certificate.startswith("stale: it is about another check"), changed.certificate
    # a certificate that does not hold (tampered): searched
    path.write_text(KL_ENTRY)
    data = cert.read_text().replace('"relation": "=="', '"relation": "<="')
    cert.write_text(data)
    (tampered,) = run_registry([path], search=10, executor="serial")
    assert tampered.ok and tampered.certificate.startswith("stale"), tampered.certificate
    cert.write_text("{not json")
    (unreadable,) = run_registry([path], search=10, executor="serial")
    assert unreadable.ok and unreadable.certificate.startswith("stale: unreadable"), unreadable.certificate
    doc = json.loads(CliRunner().invoke(main, ["regress", str(path), "--search", "10", "--workers", "1",
                                               "--json"]).output)
    assert doc["entries"][0]["certificate"].startswith("stale: unreadable")
