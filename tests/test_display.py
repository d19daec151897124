"""What a person sees (issue 18, items 4-7): notebook display, CI output, plots on the user's Axes, digits.

* reprs are one short line (no multi-kilobyte dataclass reprs, no object addresses) and ``_repr_html_``
  is well-formed, escaped HTML;
* a result's LaTeX keeps its finiteness conditions and special orders and the parameters' symbols;
* every command's ``--json`` is one object with the schema keys (docs/json.md); ``regress --junit``
  writes JUnit XML with one testcase per entry; tables off a terminal are never cut;
* ``evaluate(dps=40)`` prints 40 digits.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import mpmath
import pytest
import sympy as sp
from _helpers import FLIPPED_LAPLACE_KL, GAUSSIAN_KL
from click.testing import CliRunner

import rdpsym
from rdpsym import mechanisms
from rdpsym.cli import main

VOID = {"br", "hr", "img", "meta", "input", "link"}


class _Balance(HTMLParser):
    """Fails on a closing tag that does not match the innermost open one; records the text."""

    def __init__(self):
        super().__init__()
        self.stack, self.text = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]!r}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def well_formed(html: str) -> str:
    p = _Balance()
    p.feed(html)
    p.close()
    assert not p.stack, f"unclosed tags {p.stack}"
    return "".join(p.text)


@pytest.fixture(scope="module")
def laplace():
    m = mechanisms.get("laplace")
    return m, rdpsym.rdp(m)


def test_result_repr_is_one_line_and_latex_keeps_its_conditions_and_orders(laplace):
    m, r = laplace
    assert "\n" not in repr(r) and len(repr(r)) < 160 and "closed_form" in repr(r)
    tex = r._repr_latex_()
    # the declared symbols (lambda for b, Delta for the sensitivity), every special order of the result
    assert r"\lambda" in tex and r"\Delta" in tex and "b" not in re.sub(r"\\[a-z]+", "", tex)
    for _, order, _ in r.special_orders():
        assert rf"\alpha = {sp.latex(order)}" in tex
    text = well_formed(r._repr_html_())
    assert "closed_form" in text and "$$" in text
    # a result with finiteness conditions shows them and +oo elsewhere
    x = sp.Symbol("x", positive=True)
    l1, l2 = sp.symbols("l1 l2", positive=True)
    res = rdpsym.renyi_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo))
    assert res.conditions is not sp.true  # finite only where alpha l1 + (1 - alpha) l2 > 0
    cases = res._repr_latex_()
    assert r"\begin{cases}" in cases and r"+\infty & \text{otherwise}" in cases
    assert sp.latex(res.conditions, symbol_names={res.alpha: r"\alpha"}, ln_notation=False) in cases


def test_reports_verdicts_conversions_and_the_accountant_have_short_reprs_and_html(laplace):
    m, r = laplace
    gauss = mechanisms.get("gaussian")
    report = rdpsym.verify(rdpsym.rdp(gauss), mechanism=gauss, level="quick", dps=15, executor="serial")
    verdict = rdpsym.check_claim(m, "1/b + exp(-1/b) - 1", "==", 1)
    prop = rdpsym.properties.curve.non_negativity(r, {"b": 1, "sensitivity": 1}, dps=20)
    conv = rdpsym.epsilon(r, 1e-5, b=1, sensitivity=1)
    acct = rdpsym.Accountant().add("gaussian", count=10, sigma=2.0)
    acct_conv = acct.epsilon(1e-5)
    acct_report = acct.report(delta=1e-5)
    for obj in (report, report.checks[0], verdict, prop, conv, acct, acct_conv, acct_report):
        text = repr(obj)
        assert "\n" not in text and len(text) < 200, text
        assert not re.search(r"0x[0-9a-f]{6,}", text), text  # never an object address
    for obj, words in ((report, ["verified"]), (verdict, ["proved"]), (prop, ["holds"]),
                       (conv, ["epsilon"]), (acct, ["gaussian"]), (acct_report, ["epsilon"])):
        text = well_formed(obj._repr_html_())
        assert all(w in text for w in words), text


def test_html_escapes_what_it_shows():
    from rdpsym.report.display import block

    html = block("<script>alert(1)</script>", "holds", [("a & b", "<b>")])
    assert "<script>" not in html and "&lt;script&gt;" in html
    well_formed(html)


def test_evaluate_with_dps_prints_its_digits():
    r = rdpsym.rdp(mechanisms.get("gaussian"))
    v = r.evaluate(2, dps=40, sigma=3, sensitivity=1)
    with mpmath.workdps(60):
        truth = mpmath.mpf(2) / 18
        assert abs(v - truth) < mpmath.mpf(10) ** -39
    assert str(v).startswith("0.1111111111111111111111111111111111111") and len(str(v)) >= 41
    assert sp.sympify(v)._prec >= 130  # a sympy Float of 40 digits, not 15
    import pickle

    assert str(pickle.loads(pickle.dumps(v))) == str(v)


# -- --json on every command ---------------------------------------------------------------------
def _json(args, *, code=0):
    out = CliRunner().invoke(main, [*args, "--json"])
    assert out.exit_code == code, (out.output, out.exception)
    doc = json.loads(out.stdout)
    assert doc["schema"] == "rdpsym/1" and doc["exit_code"] == code
    return doc


def test_json_of_derive_list_cache_codegen_and_account(tmp_path, monkeypatch):
    doc = _json(["derive", "laplace"])
    assert doc["command"] == "derive" and doc["result"]["status"] == "closed_form"
    assert {o["kind"] for o in doc["result"]["special_orders"]} >= {"kl", "max"}
    doc = _json(["report", "laplace", "--format", "tex"])
    assert doc["command"] == "report" and doc["result"]["status"] == "closed_form" and "\\begin{cases}" in doc["text"]
    doc = _json(["list"])
    assert doc["command"] == "list" and "gaussian" in {m["name"] for m in doc["mechanisms"]}
    doc = _json(["codegen", "gaussian"])
    assert doc["command"] == "codegen" and "def " in doc["source"]
    doc = _json(["account", "--add", "gaussian:sigma=2", "--count", "10", "--delta", "1e-5"])
    assert doc["command"] == "account" and doc["kind"] == "epsilon" and doc["value"] > 0 and doc["events"]
    doc = _json(["cache", "path"])
    assert doc["command"] == "cache path" and doc["directory"]
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    doc = _json(["cache", "clear"])
    assert doc["command"] == "cache clear" and doc["removed"] == 0


def test_json_of_verify_check_and_properties():
    doc = _json(["verify", "gaussian", "--level", "quick", "--dps", "15", "--workers", "1"])
    assert doc["command"] == "verify" and doc["status"] == "verified"
    assert doc["verification"]["checks"] and all("point" in c for c in doc["verification"]["checks"])
    doc = _json(["check", "laplace", "--claim", "1/lambda + exp(-1/lambda) - 1", "--order", "1", "--workers", "1"])
    assert doc["command"] == "check" and doc["verdict"] in ("proved", "confirmed")
    doc = _json(["properties", "gaussian", "--quick", "--only", "curve", "--workers", "1"])
    assert doc["command"] == "properties" and doc["checks"] and doc["verdict"] == "holds"


def test_json_of_the_plots(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    doc = _json(["plot", "figure2", "--n-max", "5", "-o", str(tmp_path / "f2.png")])
    assert doc["command"] == "plot figure2" and doc["format"] == "png" and (tmp_path / "f2.png").stat().st_size > 1000
    doc = _json(["plot", "curves", "--alpha-max", "3", "-o", str(tmp_path / "c.svg")])
    assert doc["command"] == "plot curves" and (tmp_path / "c.svg").is_file()
    from matplotlib.figure import Figure

    from rdpsym.report import plots

    seen = {}

    def fake(mech, **values):  # the document, not the (slow) exact privacy profile, is under test here
        seen.update(values)
        return Figure()

    monkeypatch.setattr(plots, "conversion_plot", fake)
    doc = _json(["plot", "conversion", "laplace", "--param", "b=2", "-o", str(tmp_path / "v.pdf")])
    assert doc["command"] == "plot conversion" and doc["values"]["b"] == 2 and seen["b"] == 2


REGISTRY = FLIPPED_LAPLACE_KL + GAUSSIAN_KL


def test_regress_json_and_junit(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(REGISTRY)
    junit = tmp_path / "r.xml"
    doc = _json(["regress", str(path), "--search", "5", "--workers", "1", "--junit", str(junit)], code=1)
    assert doc["command"] == "regress" and doc["counts"] == {"pass": 1, "inconclusive": 0, "fail": 1}
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["laplace/kl-flipped", "gaussian/kl"]
    assert cases[0].find("failure") is not None and cases[1].find("failure") is None
    assert suite.get("tests") == "2" and suite.get("failures") == "1"


def test_junit_marks_an_inconclusive_entry_as_an_error():
    from rdpsym.cli._junit import junit_xml
    from rdpsym.regress import RegressionRow

    rows = [RegressionRow("a", "s", "closed_form", "proved", "30 digits", 1.0, True),
            RegressionRow("b", "s", "closed_form", "confirmed", "not converged", 2.0, False, "no answer",
                          inconclusive=True)]
    suite = junit_xml(rows).getroot().find("testsuite")
    a, b = suite.findall("testcase")
    assert a.find("error") is None and a.find("failure") is None
    assert b.find("error") is not None and suite.get("errors") == "1"


def test_tables_off_a_terminal_are_never_cut():
    """CliRunner's stdout is not a terminal: every point of the table is printed whole."""
    out = CliRunner().invoke(main, ["verify", "gaussian", "--level", "quick", "--dps", "15", "--workers", "1",
                                    "--all-points"])
    assert out.exit_code == 0, out.output
    assert "…" not in out.output
    assert re.search(r"alpha=\S+, sensitivity=\S+, sigma=\S+", out.output), out.output
