"""LaTeX and Markdown export: conventional symbols, semantic round trips, compiling documents, reports."""

import shutil
import subprocess

import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms
from rdpsym.report.latex import latex_document, parse_back, result_latex
from rdpsym.report.markdown import result_markdown, table_markdown
from rdpsym.report.report import report
from rdpsym.report.table import table_row

NAMES = ("randomized_response", "laplace", "gaussian")


@pytest.fixture(scope="module")
def results():
    return {n: (mechanisms.get(n), rdpsym.rdp(mechanisms.get(n))) for n in NAMES}


def test_conventional_symbols(results):
    assert r"\lambda" in results["laplace"][1].latex() and r"\Delta" in results["laplace"][1].latex()
    assert r"\sigma" in results["gaussian"][1].latex() and r"\alpha" in results["gaussian"][1].latex()
    # the internal names never leak into the formula
    for _, r in results.values():
        assert "sensitivity" not in r.latex() and "b " not in r.latex()
    assert results["laplace"][1]._repr_latex_().startswith("$")


@pytest.mark.parametrize("name", NAMES)
def test_latex_parses_back_to_the_same_expression(results, name):
    mech, r = results[name]
    for expr in (r.expr, r.kl, r.max_divergence):
        if expr is None or expr == sp.oo:
            continue
        text = sp.latex(expr, symbol_names={**{p.symbol: p.latex for p in mech.parameters}, r.alpha: r"\alpha"})
        back = parse_back(text, r)
        assert sp.simplify(back - expr) == 0, (text, back, expr)
    back = parse_back(r.latex(), r)
    assert sp.simplify(back - r.expr) == 0


def test_round_trip_detects_a_tampered_formula(results):
    _, r = results["laplace"]
    text = r.latex().replace(r"2 \alpha - 1", r"3 \alpha - 1", 1)
    assert text != r.latex()
    back = parse_back(text, r)
    assert sp.simplify(back - r.expr) != 0


def test_steps_are_an_aligned_block(results):
    _, r = results["laplace"]
    text = r.latex(steps=True)
    assert text.startswith(r"\begin{aligned}") and text.endswith(r"\end{aligned}")
    assert r"D_{1} &=" in text and r"D_{\infty} &=" in text and "removable" in text
    assert "split support" in text  # a step from the provenance


def test_markdown(results):
    md = result_markdown(results["laplace"][1])
    assert "$$D_\\alpha" in md and "\\lambda" in md and "KL" in md
    rows = [table_row(m, r, 0.0, {"sensitivity": 1} if "sensitivity" in m.params else {}) for m, r in results.values()]
    table = table_markdown(rows)
    assert table.count("\n") == 4 and "\\sigma" in table and "Randomized response" in table
    assert "| Mechanism |" in table


def test_report_sections(results):
    mech, r = results["laplace"]
    text = report(mech, r, "md")
    for needle in ("Statement", "Conditions", "Special orders", "Verification evidence", "References", "Prop. 6"):
        assert needle in text, needle
    tex = report(mech, r, "tex", standalone=True)
    assert tex.startswith(r"\documentclass") and tex.rstrip().endswith(r"\end{document}")
    assert r"\begin{cases}" in tex and "Prop. 6" in tex and r"\usepackage[T1]{fontenc}" in tex


def test_report_rejects_unknown_format(results):
    mech, r = results["gaussian"]
    with pytest.raises(ValueError, match="fmt must be one of"):
        report(mech, r, "html")


def _compile(tex: str, tmp_path):
    src = tmp_path / "doc.tex"
    src.write_text(tex)
    return subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", src.name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_compile_check_catches_broken_latex(tmp_path):
    proc = _compile(latex_document(r"\[ \frac{\alpha}{ \]"), tmp_path)
    assert proc.returncode != 0


def test_result_without_closed_form_latex():
    r = rdpsym.DivergenceResult(expr=None, status=rdpsym.Status.NUMERIC_ONLY, reason="no closed form")
    assert "numeric" in result_latex(r)
