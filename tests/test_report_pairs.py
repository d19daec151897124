"""Reports of mechanisms with several adjacent pairs are paper-ready (issue 29).

* branches of a maximum proved equal are shown once, and the symmetries the engine established are
  stated; branches not proved equal all stay;
* long formulas break across lines (or get named parts) so that nothing overfills the column: the
  standalone report of every built-in and of 3-pair user mechanisms compiles without an overfull box;
* the mechanism's texts (labels of pairs, meanings of parameters, its title) read as prose.
"""

import re

import pytest
import sympy as sp

import rdpsym
from rdpsym import Status, mechanisms
from rdpsym.derive.result import Provenance, Step, StepName
from rdpsym.report.branches import collapse_equal_branches, proved_equal, symmetries
from rdpsym.report.curve import curve_display
from rdpsym.report.paper import LINE_BUDGET, broken_lines, visual_width
from rdpsym.report.prose import noun_phrase, prose
from rdpsym.report.report import report
from rdpsym.specify.mechanism import AdjacentPair, Mechanism
from rdpsym.specify.params import parameter

from _builtins import builtin_params
from test_paper_latex import compile_clean, needs_tex

A = rdpsym.alpha


# -- user mechanisms with several pairs ------------------------------------------------------------------
def three_outcome_randomized_response() -> Mechanism:
    """k-RR with k = 3 written as a new user would: the three pairs of true values."""
    x = sp.Symbol("x", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.1, 5.0), latex=r"\varepsilon", meaning="the local DP parameter",
                    log_scale=True)

    def pmf(v):
        return sp.Piecewise((sp.exp(eps.symbol), sp.Eq(x, v)), (1, True)) / (sp.exp(eps.symbol) + 2)

    return Mechanism(name="rr3", title="3-outcome randomized response", variable=x, support=sp.FiniteSet(0, 1, 2),
                     pairs=(AdjacentPair(pmf(0), pmf(1), "true value 0 vs 1"),
                            AdjacentPair(pmf(0), pmf(2), "true value 0 vs 2"),
                            AdjacentPair(pmf(1), pmf(2), "true value 1 vs 2")),
                     parameters=(eps,), references=("Warner 1965 (JASA 60(309))",))


def truncated_geometric(n: int = 2) -> Mechanism:
    """The truncated geometric mechanism on {0, ..., n} (Ghosh, Roughgarden and Sundararajan 2012), with
    the adjacent pairs of inputs (i, i + 1) for every i < n."""
    k = sp.Symbol("k", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.1, 3.0), latex=r"\varepsilon", meaning="privacy parameter", log_scale=True)
    a = sp.exp(-eps.symbol)

    def pmf(i):
        return sp.Piecewise((a ** i / (1 + a), sp.Eq(k, 0)), (a ** (n - i) / (1 + a), sp.Eq(k, n)),
                            ((1 - a) / (1 + a) * a ** sp.Abs(k - i), True))

    return Mechanism(name="truncated_geometric", title="Truncated geometric mechanism", variable=k,
                     support=sp.FiniteSet(*range(n + 1)),
                     pairs=tuple(AdjacentPair(pmf(i), pmf(i + 1), f"f(D) = {i}, f(D') = {i + 1}") for i in range(n)),
                     parameters=(eps,), references=("Ghosh, Roughgarden and Sundararajan 2012 (SIAM J. Comput. 41(6))",))


def _geometric_directions():
    """The two directions of the truncated geometric's pair (0, 1) as the engine derives them (two
    shapes of one function of alpha and epsilon)."""
    e = sp.Symbol("epsilon", positive=True)
    forward = sp.log((sp.exp(A * e) + sp.exp(-e * (A - 1))) / (sp.exp(e) + 1)) / (A - 1)
    backward = (2 * (A - 1) * (-e + sp.log((sp.exp(e) + 1) / (sp.exp(2 * e) + 2 * sp.exp(e) + 1)))
                + sp.log((((sp.exp(e) + 1) ** 2 * sp.exp(e)) ** (A - 1)
                          + (sp.exp(e) + 1) ** (2 * A - 2) * sp.exp(e * (3 * A - 2))) / (sp.exp(e) + 1))) / (A - 1)
    return e, forward, backward


def _hand_result(m: Mechanism, expr, kl, max_divergence, steps=()) -> rdpsym.DivergenceResult:
    return rdpsym.DivergenceResult(expr=expr, status=Status.CLOSED_FORM, mechanism=m, kl=kl,
                                   max_divergence=max_divergence, symbols=tuple(p.symbol for p in m.parameters),
                                   domains=tuple((p.symbol, p.domain) for p in m.parameters),
                                   provenance=Provenance(tuple(steps), ()))


# -- equal branches ----------------------------------------------------------------------------------------
def test_branches_equal_for_every_parameter_are_proved_equal_and_shown_once():
    m = truncated_geometric()
    e, forward, backward = _geometric_directions()
    assert forward != backward and sp.simplify(forward - backward) != 0  # sympy's simplify alone does not see it
    assert proved_equal(forward, backward, m.parameters, A)
    c = collapse_equal_branches(sp.Max(forward, backward), m.parameters, A)
    assert c.merged and (c.before, c.after) == (2, 1) and not isinstance(c.expr, sp.Max)


def test_branches_not_equal_everywhere_all_stay():
    m = truncated_geometric()
    e, forward, _ = _geometric_directions()
    # equal to 12 digits near epsilon = 0, not equal: nothing is assumed
    close = forward + A * e ** 3 / 10 ** 12
    assert not proved_equal(forward, close, m.parameters, A)
    c = collapse_equal_branches(sp.Max(forward, close, A * e, evaluate=False), m.parameters, A)
    assert not c.merged and (c.before, c.after) == (3, 3) and isinstance(c.expr, sp.Max)


def test_the_statement_states_the_pairs_the_symmetry_and_the_single_expression():
    m = three_outcome_randomized_response()
    e = m.parameters[0].symbol
    _, forward, backward = _geometric_directions()
    forward, backward = forward.subs(sp.Symbol("epsilon", positive=True), e), backward.subs(
        sp.Symbol("epsilon", positive=True), e)
    steps = [Step(StepName.SYMMETRY, "[true value 0 vs 1] none established: both directions derived"),
             Step(StepName.SYMMETRY, "[true value 0 vs 2] x -> 2 - x maps P onto Q and the support onto itself: "
                                     "D(Q||P) = D(P||Q)", expr=sp.Integer(2)),
             Step(StepName.SYMMETRY, "[true value 1 vs 2] none established: both directions derived")]
    r = _hand_result(m, sp.Max(forward, backward), e * sp.tanh(e / 2), e, steps)
    assert [(p.label, c) for p, c in symmetries(r, m)] == [("true value 0 vs 2", 2)]
    tex = report(m, r, "tex")
    text = " ".join(tex.split())
    assert r"\max" not in tex  # the two equal directions are one expression
    assert "Let $M$ denote 3-outcome randomized response" in text and "Then $M$ satisfies" in text
    assert r"(true value 0 vs 1), (true value 0 vs 2) and (true value 1 vs 2), each in both directions" in text
    assert r"The reflection $x \mapsto 2 - x$ maps the support onto itself" in text
    assert "Each of these divergences is equal to or below the one expression shown" in text  # 5 derived, 2 left


def test_a_mechanism_with_one_pair_and_no_maximum_gets_no_such_note():
    m = mechanisms.get("gaussian")
    s, d = m.params["sigma"], m.params["sensitivity"]
    r = _hand_result(m, A * d ** 2 / (2 * s ** 2), d ** 2 / (2 * s ** 2), sp.oo)
    tex = report(m, r, "tex")
    assert "largest of the divergences of the adjacent pairs" not in tex and "Let $M$ denote the Gaussian mechanism" in tex


# -- prose ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", mechanisms.names())
def test_labels_and_meanings_of_every_builtin_read_as_prose(name):
    m = mechanisms.get(name)
    symbols = {p.name: p.latex for p in m.parameters}
    for text in [p.label for p in m.pairs] + [p.meaning for p in m.parameters] + [m.title]:
        out = prose(text, symbols)
        outside = re.sub(r"\$[^$]*\$", "", out)  # the text outside math mode
        assert not re.search(r"<=|>=|!=|\|t\||\^|_", outside), (text, out)
        assert out.count("$") % 2 == 0, out
    if any(p.name == "sensitivity" for p in m.parameters) and "|t| <= sensitivity" in m.pairs[0].label:
        assert r"$|t| \le \Delta$" in prose(m.pairs[0].label, symbols)


@pytest.mark.parametrize("text, expected", [
    ("f(D) = 0, f(D') = t, |t| <= sensitivity", r"$f(D) = 0$, $f(D') = t$, $|t| \le \Delta$"),
    ("true values u != v; outcomes {u}, the k - 2 others, {v}",
     r"true values $u \neq v$; outcomes $\{u\}$, the $k - 2$ others, $\{v\}$"),
    ("f(D) = 0, f(D') = t, ||t||_2 <= sensitivity", r"$f(D) = 0$, $f(D') = t$, $\|t\|_{2} \le \Delta$"),
    ("randomized response with log-odds epsilon", r"randomized response with log-odds $\varepsilon$"),
    ("the multivariate Gaussian mechanism (2-D, correlated)", "the multivariate Gaussian mechanism (2-D, correlated)"),
    ("width u - l of the query's range [l, u], larger than the sensitivity",
     r"width $u - l$ of the query's range $[l, u]$, larger than the sensitivity"),
])
def test_prose_sets_the_formulas_in_a_text_as_mathematics(text, expected):
    assert prose(text, {"sensitivity": r"\Delta", "epsilon": r"\varepsilon"}) == expected


@pytest.mark.parametrize("title, phrase", [
    ("Truncated geometric mechanism", "the truncated geometric mechanism"),
    ("Laplace mechanism", "the Laplace mechanism"), ("Randomized response", "randomized response"),
    ("Bounded Laplace mechanism", "the bounded Laplace mechanism"), ("k-ary randomized response", "k-ary randomized response"),
    ("Exponential mechanism (report-noisy-max) over k outcomes", "the exponential mechanism (report-noisy-max) over k outcomes"),
    ("Staircase mechanism", "the staircase mechanism"), ("RAPPOR", "RAPPOR"),
])
def test_a_title_becomes_the_noun_phrase_of_a_sentence(title, phrase):
    assert noun_phrase(title) == phrase


def test_a_capital_the_description_writes_inside_a_sentence_is_kept():
    assert noun_phrase("Wang mechanism", "Adds the noise of Wang's construction.") == "the Wang mechanism"


# -- fitting the column --------------------------------------------------------------------------------------
def test_a_long_maximum_breaks_between_and_inside_its_arguments():
    m = truncated_geometric()
    names = {m.parameters[0].symbol: r"\varepsilon", A: r"\alpha"}
    e, forward, backward = _geometric_directions()
    expr = sp.Max(forward, backward + A * e)
    lines = broken_lines(expr, names, 40)
    assert len(lines) >= 3 and all(visual_width(line) <= 40 for line in lines)
    assert lines[0].startswith(r"\max\biggl(") and lines[-1].endswith(r"\biggr)")


def test_a_part_that_cannot_break_is_named_and_defined_after_the_display():
    m = mechanisms.get("laplace")
    b = m.params["b"]
    wide = b ** sum(sp.Symbol(f"y{k}", positive=True) * A ** k for k in range(30))  # a long exponent: no break
    r = rdpsym.DivergenceResult(expr=wide, status=Status.CLOSED_FORM, mechanism=m, symbols=(b,))
    shown = curve_display(r, [m.parameters[0]] + [parameter(f"y{k}", latex=f"y_{{{k}}}") for k in range(30)])
    assert shown.rows and shown.definitions and "where" in shown.latex
    assert all(visual_width(line.split("&", 1)[-1]) <= LINE_BUDGET
               for line in shown.latex.splitlines() if "&" in line)


# -- compiled ---------------------------------------------------------------------------------------------------
@needs_tex
@pytest.mark.parametrize("name", builtin_params())
def test_the_report_of_every_builtin_fits_the_page(name, tmp_path):
    """The standalone report, and the fragment with its derivation \\input into LaTeX's default article
    (345 pt column)."""
    m = mechanisms.get(name)
    r = rdpsym.rdp(m)
    compile_clean(report(m, r, "tex", standalone=True), tmp_path, name)
    (tmp_path / "frag.tex").write_text(report(m, r, "tex", derivation=True))
    compile_clean("\n".join([r"\documentclass{article}", r"\usepackage{amsmath,amssymb}", r"\begin{document}",
                             r"\input{frag}", r"\end{document}"]), tmp_path, "paper")


@needs_tex
def test_the_report_of_a_hand_built_three_pair_result_fits_the_page(tmp_path):
    m = three_outcome_randomized_response()
    e = m.parameters[0].symbol
    _, forward, backward = _geometric_directions()
    sub = {sp.Symbol("epsilon", positive=True): e}
    r = _hand_result(m, sp.Max(forward.subs(sub), backward.subs(sub), forward.subs(sub) * (1 + e)), e * sp.tanh(e / 2), e)
    compile_clean(report(m, r, "tex", standalone=True), tmp_path, "hand")


@pytest.mark.slow
@needs_tex
@pytest.mark.parametrize("make", [three_outcome_randomized_response, truncated_geometric,
                                  lambda: truncated_geometric(3)], ids=["rr3", "truncated_geometric", "truncated_geometric_3"])
def test_the_reports_of_user_mechanisms_with_several_pairs_fit_the_page(make, tmp_path):
    m = make()
    r = rdpsym.rdp(m)
    tex = report(m, r, "tex", standalone=True, derivation=True, provenance=True)
    assert r"\max" not in tex.split(r"\end{rdpsymstatement}")[0]  # their maxima are one expression
    assert "largest of the divergences of the adjacent pairs" in tex
    compile_clean(tex, tmp_path, m.name)
