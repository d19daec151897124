"""Notebook display of rdpsym's objects: ``_repr_html_``, ``_repr_latex_`` and one-line ``__repr__`` texts.

Every class that a notebook user holds (a :class:`~rdpsym.DivergenceResult`, a verification report, a
claim verdict, a property report, a conversion, the Accountant) delegates its rich display here, so the
look is written once. The HTML is a small self-contained fragment: a heading with the outcome (green
holds, red fails, amber inconclusive), a table of the facts, the formula as ``$$...$$`` (typeset by the
notebook's MathJax) and the long evidence folded in a ``<details>`` element. Everything shown is
escaped with :func:`html.escape`: a mechanism's title or a claim's text never becomes markup.

A result's formula (:func:`result_cases_latex`) is the whole curve, not only its general form: a
``cases`` display with the general form on (0, 1) and (1, oo) under its finiteness conditions, each
special order (alpha = 1, oo, removable and exact integer orders; Mironov 2017, Def. 3 and Table II)
and ``+infinity`` elsewhere, written with the parameters' declared LaTeX symbols
(:attr:`rdpsym.Parameter.latex`).
"""

from __future__ import annotations

import html
import math
from typing import Any, Iterable, Sequence

import mpmath
import sympy as sp

from .. import printing

__all__ = ["short", "number", "result_cases_latex", "result_html", "verification_html", "verdict_html",
           "property_html", "suite_html", "conversion_html", "accountant_html", "accountant_report_html",
           "regression_html", "block"]

#: the colour of each coarse outcome (rdpsym.outcomes.Outcome values and the words of each vocabulary)
_COLOURS = {"holds": "#1a7f37", "fails": "#cf222e", "inconclusive": "#9a6700"}
_WORDS = {"verified": "holds", "proved": "holds", "confirmed": "holds", "pass": "holds", "agree": "holds",
          "closed_form": "holds", "mismatch": "fails", "refuted": "fails", "fail": "fails", "failed": "fails",
          "bound": "inconclusive", "numeric_only": "inconclusive"}
#: longest text a one-line repr or a table cell shows before it is cut with "..."
SHORT = 80


def short(text: Any, limit: int = SHORT) -> str:
    """``text`` on one line, at most ``limit`` characters (cut with "...")."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def number(v: Any, digits: int = 6) -> str:
    """A number as a short text: mpmath/float/sympy alike, ``+oo`` for infinity, ``n/a`` for None."""
    if v is None:
        return "n/a"
    if isinstance(v, sp.Basic):
        return short(printing.sstr(v), 40)
    try:
        f = mpmath.mpf(v)
    except (TypeError, ValueError):
        return short(v, 40)
    if mpmath.isinf(f):
        return "+oo" if f > 0 else "-oo"
    if mpmath.isnan(f):
        return "nan"
    return mpmath.nstr(f, digits)


def _outcome_word(word: Any) -> str:
    w = str(getattr(word, "value", word))
    outcome = getattr(word, "outcome", None)
    if outcome is not None:
        return str(getattr(outcome, "value", outcome))
    return _WORDS.get(w, w if w in _COLOURS else "inconclusive")


def block(title: str, status: Any = None, rows: Iterable[tuple[str, Any]] = (), *, math_tex: str | None = None,
          table: tuple[Sequence[str], Sequence[Sequence[Any]]] | None = None, details: str | None = None,
          details_title: str = "details") -> str:
    """The one HTML layout: a heading (with ``status`` coloured by its outcome), ``rows`` of
    (name, value) facts, an optional display formula, an optional table (header, rows) and an optional
    preformatted ``details`` text folded away. Every text is escaped."""
    e = html.escape
    head = f"<strong>{e(str(title))}</strong>"
    if status is not None:
        colour = _COLOURS.get(_outcome_word(status), _COLOURS["inconclusive"])
        head += f' <span style="color:{colour};font-weight:bold">{e(str(getattr(status, "value", status)))}</span>'
    parts = [f'<div class="rdpsym">{head}']
    if math_tex:
        parts.append(f"<div>$${e(math_tex)}$$</div>")
    facts = [(k, v) for k, v in rows if v not in (None, "")]
    if facts:
        parts.append('<table style="text-align:left">' + "".join(
            f'<tr><th style="text-align:left">{e(str(k))}</th><td style="text-align:left">{e(str(v))}</td></tr>'
            for k, v in facts) + "</table>")
    if table is not None:
        header, body = table
        parts.append('<table style="text-align:left"><thead><tr>' + "".join(f"<th>{e(str(h))}</th>" for h in header)
                     + "</tr></thead><tbody>" + "".join(
                         "<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>" for r in body)
                     + "</tbody></table>")
    if details:
        parts.append(f"<details><summary>{e(details_title)}</summary><pre>{e(details)}</pre></details>")
    parts.append("</div>")
    return "\n".join(parts)


# -- results ---------------------------------------------------------------------------------------
def _names(result) -> dict:
    from .latex import latex_names

    return latex_names(result.parameters(), result.alpha)


def _tex(expr, names) -> str:
    return printing.latex(expr, symbol_names=names, ln_notation=False)


def result_cases_latex(result) -> str:
    r"""The whole curve as ``D_\alpha = \begin{cases} ... \end{cases}`` with the parameters' LaTeX symbols:
    the general form on alpha in (0, 1) u (1, oo) where the finiteness conditions hold, the special
    orders (each with its own row), and ``+\infty`` where the conditions fail. A result without a general
    form shows its exact pieces and says that the other orders are numeric."""
    names = _names(result)
    rows = []
    if result.expr is not None:
        where = r"\alpha \in (0, 1) \cup (1, \infty)"
        if result.conditions is not sp.true:
            where += r",\ " + _tex(result.conditions, names)
        rows.append(rf"{_tex(result.expr, names)} & {where}")
    for kind, order, value in result.special_orders():
        rows.append(rf"{_tex(value, names)} & \alpha = {_tex(order, names)}")
    if result.expr is not None and result.conditions is not sp.true:
        rows.append(r"+\infty & \text{otherwise}")
    elif result.expr is None:
        rows.append(r"\text{%s} & \text{other orders}" % (
            "numeric (certified values)" if str(result.status) == "numeric_only" else str(result.status).replace("_", " ")))
    lhs = r"D_{\alpha}" if str(result.status) != "bound" else r"D_{\alpha} \le"
    lhs = lhs if lhs.endswith("le") else lhs + " ="
    return lhs + r" \begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"


def result_repr(result) -> str:
    form = "no general form" if result.expr is None else short(printing.sstr(result.expr), 60)
    return f"<DivergenceResult {result.label} [{result.status}]: {form}>"


def result_html(result) -> str:
    names = ", ".join(f"{p.name} ({p.latex})" for p in result.parameters())
    steps = result.provenance.steps
    return block(f"{result.label}", result.status,
                 [("parameters", names), ("note", result.reason),
                  ("derivation", f"{len(steps)} steps, {result.provenance.seconds:.2f} s" if steps else "")],
                 math_tex=result_cases_latex(result), details=result.provenance.describe() if steps else None,
                 details_title="provenance")


# -- verification ----------------------------------------------------------------------------------
def verification_repr(report) -> str:
    n = report.counts
    return (f"<VerificationReport {report.status} ({short(report.target, 40)}): {n['agree']}/{len(report.checks)}"
            f" agree, {n['mismatch']} mismatch, {n['inconclusive']} inconclusive>")


def verification_html(report) -> str:
    worst = sorted(report.checks, key=lambda c: ({"mismatch": 0, "inconclusive": 1}.get(c.status, 2), c.digits))[:12]
    table = (("regime", "point", "curve", "numeric", "digits", "status"),
             [(c.point.regime, short(c.point.describe(), 60), number(c.closed, 12), number(c.numeric, 12),
               "all" if c.digits == math.inf else f"{c.digits:.1f}", c.status + (", P = Q" if c.p_equals_q else ""))
              for c in worst])
    n = report.counts
    return block(f"Verification of {report.target}", report.status,
                 [("points", f"{n['agree']} agree, {n['mismatch']} mismatch, {n['inconclusive']} inconclusive "
                             f"of {len(report.checks)}" + ("" if len(worst) == len(report.checks) else " (worst 12 shown)")),
                  ("regimes covered", ", ".join(report.regimes) or "none"),
                  ("no evidence for", ", ".join(report.regimes_without_evidence)),
                  ("settings", f"dps {report.dps}, {report.digits:g} digits required, seed {report.seed}, "
                               f"level {report.level}, {report.seconds:.1f} s")],
                 table=table, details=report.describe(), details_title="every point")


# -- claims ----------------------------------------------------------------------------------------
def _claim_text(v) -> str:
    c = v.claim
    return c if isinstance(c, str) else (printing.sstr(c) if isinstance(c, sp.Basic) else getattr(c, "__name__", repr(c)))


def verdict_repr(v) -> str:
    return f"<ClaimVerdict {v.verdict}: {short(v.target, 30)} {v.relation} {short(_claim_text(v), 50)}>"


def verdict_html(v) -> str:
    return block(f"Claim on {v.target}", v.verdict,
                 [("claim", f"D {v.relation} {_claim_text(v)}"),
                  ("order", "alpha" if v.order is None else v.order),
                  ("derived", None if v.divergence is None else short(printing.sstr(v.divergence), 200)),
                  ("symbols", v.mapping), ("points checked", v.points_checked or None),
                  ("digits", None if v.digits is None else f"{v.digits:.1f}")],
                 table=(("evidence",), [(line,) for line in v.evidence]) if v.evidence else None,
                 details=None if v.counterexample is None else v.counterexample.describe(),
                 details_title="counterexample")


# -- properties ------------------------------------------------------------------------------------
def property_repr(r) -> str:
    margin = "-" if r.worst_margin is None else number(r.worst_margin, 4)
    return f"<PropertyReport {r.name}: {r.verdict} ({r.mode}, {r.points_checked} points, worst margin {margin})>"


def property_html(r) -> str:
    table = (("point", "value", "bound", "margin", "status"),
             [(short(e.point, 60), number(e.value, 10), number(e.bound, 10), number(e.margin, 4), str(e.status))
              for e in r.evidence[:20]]) if r.evidence else None
    return block(f"Property {r.name}" + (f" of {r.target}" if r.target else ""), r.verdict,
                 [("mode", r.mode), ("points", r.points_checked),
                  ("worst margin", None if r.worst_margin is None else number(r.worst_margin, 4)),
                  ("applicable", None if r.applicable else "no"), ("reference", r.reference),
                  ("detail", short(r.detail, 400))], table=table)


def suite_repr(s) -> str:
    return f"<SuiteReport {s.mechanism}: {s.verdict} ({len(s.reports)} checks, {len(s.failures)} failing)>"


def suite_html(s) -> str:
    table = (("property", "verdict", "mode", "points", "worst margin"),
             [(r.name, str(r.verdict) + ("" if r.applicable else " (n/a)"), r.mode, r.points_checked,
               "-" if r.worst_margin is None else number(r.worst_margin, 4)) for r in s.reports])
    values = ", ".join(f"{k} = {v}" for k, v in s.values.items())
    return block(f"Properties of {s.mechanism}", s.verdict, [("at", values)], table=table)


# -- accounting ------------------------------------------------------------------------------------
def _alpha_text(a) -> str:
    if a is None:
        return "none (no finite order)"
    return "oo (pure DP)" if (isinstance(a, (float, mpmath.mpf)) and mpmath.isinf(a)) or a == sp.oo else number(a, 6)


def conversion_repr(c) -> str:
    other = "delta" if c.kind == "epsilon" else "epsilon"
    return (f"<{type(c).__name__} {c.kind} = {number(c.value, 6)} at {other} = {number(c.target, 6)}, "
            f"alpha = {_alpha_text(c.alpha)}, {c.method}>")


def conversion_html(c) -> str:
    other = "delta" if c.kind == "epsilon" else "epsilon"
    status = getattr(c, "status", None)
    word = None if status is None else ("inconclusive" if status == "edge" else "fails" if status == "infinite" else "holds")
    return block(f"{c.kind} = {number(c.value, 8)} at {other} = {number(c.target, 6)}",
                 None if word is None else _Status(status, word),
                 [("optimal alpha", _alpha_text(c.alpha)), ("method", c.method), ("note", c.note),
                  ("closed form of alpha", None if getattr(c, "alpha_closed_form", None) is None
                   else printing.sstr(c.alpha_closed_form))])


class _Status:
    """A status word shown with the colour of ``outcome`` (an accountant's ``edge`` is a valid bound
    that may not be the infimum: amber, not green)."""

    def __init__(self, value, outcome):
        self.value, self.outcome = value, outcome

    def __str__(self):
        return str(self.value)


def accountant_repr(a) -> str:
    events = a.events
    names = ", ".join(dict.fromkeys(e.name for e in events)) or "no events"
    group = f", groups of {a.group_size}" if a.group_size > 1 else ""
    return (f"<Accountant {len(events)} event(s), {sum(e.count for e in events)} release(s) of {short(names, 50)};"
            f" method {a.method}{group}>")


def accountant_html(a) -> str:
    rows = [(e.label, e.count, e.provenance) for e in a.events]
    return block("Accountant", None, [("method", a.method), ("group size", a.group_size if a.group_size > 1 else None),
                                      ("releases", sum(r[1] for r in rows))],
                 table=(("event", "count", "curve"), rows) if rows else None)


def accountant_report_html(r) -> str:
    head, rows = r._table()
    lines = r._headline()
    c = r.conversion
    word = "fails" if c.status == "infinite" else "inconclusive" if c.status == "edge" else "holds"
    return block(lines[0], _Status(c.status, word), [(line.split(":", 1)[0], line.split(":", 1)[1].strip())
                                                     for line in lines[1:] if ":" in line], table=(head, rows))


# -- regression rows -------------------------------------------------------------------------------
def regression_html(rows) -> str:
    return block("rdpsym regress", None, table=(("entry", "derivation", "verdict", "independent", "label"),
                                                [(r.name, r.status, r.verdict, r.independent, r.label) for r in rows]))
