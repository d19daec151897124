"""Table II of Mironov 2017 (arXiv:1702.07476 v3), generated from derivation results.

Each row is derived with the mechanism's symbolic parameters (the sensitivity too) and the table's
values (sensitivity 1) are substituted afterwards, exactly and without re-simplifying, so the cells
keep the shape the derivation gave them: Laplace reads
``1/(alpha-1) log(alpha/(2alpha-1) e^((alpha-1)/lambda) + (alpha-1)/(2alpha-1) e^(-alpha/lambda))``
as in the paper, not the form a fresh simplification of the substituted expression would pick.
Presentation rewrites (:func:`rdpsym.report.paper.display_form`: log p - log(1-p) -> log(p/(1-p)))
are kept only where they equal the substituted cell at high precision.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import sympy as sp

from .. import printing
from ..derive.result import DivergenceResult
from ..specify.mechanism import Mechanism
from .latex import latex_names
from .paper import broken_lines, display_form

__all__ = ["TableRow", "table_row", "markdown_table", "latex_table", "json_rows", "table_document"]


@dataclass(frozen=True)
class TableRow:
    mechanism: Mechanism
    result: DivergenceResult
    general: sp.Expr | None
    kl: sp.Expr | None
    max_divergence: sp.Expr | None
    seconds: float
    verification: str = ""


def table_row(mechanism: Mechanism, result: DivergenceResult, seconds: float, fixed: dict | None = None,
              verification: str = "") -> TableRow:
    """The row of ``mechanism`` with parameters in ``fixed`` (name -> value) substituted exactly into the
    derived expressions (no re-simplification: the derivation's shape is kept), each then in its
    display form (an equal expression, see :func:`rdpsym.report.paper.display_form`)."""
    subs = mechanism.substitutions(fixed or {})
    free = [p for p in mechanism.parameters if p.symbol not in subs]

    def sub(e):
        return None if e is None else display_form(e.subs(subs), free, result.alpha)

    return TableRow(mechanism, result, sub(result.expr), sub(result.kl), sub(result.max_divergence), seconds, verification)


def _symbol_names(mechanism: Mechanism) -> dict:
    from ..symbols import alpha

    return latex_names(mechanism.parameters, alpha)


def _cell_md(e):
    return "—" if e is None else f"`{printing.sstr(e)}`"


def markdown_table(rows: list[TableRow]) -> str:
    head = "| Mechanism | alpha > 1 | alpha = 1 | alpha = oo | status | verification | time (s) |\n|---|---|---|---|---|---|---|"
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r.mechanism.title or r.mechanism.name} | {_cell_md(r.general)} | {_cell_md(r.kl)} | "
            f"{_cell_md(r.max_divergence)} | {r.result.status} | {r.verification or 'not run'} | {r.seconds:.2f} |"
        )
    return "\n".join(lines)


#: the width (:func:`rdpsym.report.paper.visual_width` units) of the alpha > 1 column: what a 16 cm text
#: width leaves beside the mechanism's name, the DP column and the KL column
GENERAL_WIDTH = 26.0


def _cell_tex(e, names, width: float) -> str:
    """A cell in display style, broken over lines (an ``aligned`` block) when wider than ``width``."""
    if e is None:
        return "---"
    if e == sp.oo:
        return r"$\infty$"
    lines = broken_lines(e, names, width)
    if len(lines) == 1:
        return rf"$\displaystyle {lines[0]}$"
    return r"$\displaystyle \begin{aligned}[t] &" + r" \\ &\quad ".join(lines) + r"\end{aligned}$"


def latex_table(rows: list[TableRow]) -> str:
    """Table II in the paper's layout: a booktabs ``tabular`` with the columns Mechanism, DP
    (alpha = oo), alpha > 1 and alpha = 1, every cell in display style, the rows apart."""
    lines = [
        r"\begin{tabular}{@{}llll@{}}",
        r"\toprule",
        r"Mechanism & DP ($\alpha = \infty$) & R\'{e}nyi DP, $\alpha > 1$ & $\alpha = 1$ (KL) \\",
        r"\midrule",
    ]
    for k, r in enumerate(rows):
        names = _symbol_names(r.mechanism)
        title = (r.mechanism.title or r.mechanism.name).replace("&", r"\&")
        if k:
            lines.append(r"\addlinespace[2.5ex]")
        lines.append(f"{title} & {_cell_tex(r.max_divergence, names, 14)} & "
                     f"{_cell_tex(r.general, names, GENERAL_WIDTH)} & {_cell_tex(r.kl, names, 20)} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def table_document(rows: list[TableRow]) -> str:
    """:func:`latex_table` in a complete document (the paper's caption), for ``pdflatex``."""
    from .latex import latex_document

    body = "\n".join([r"\begin{table}[h]", r"\centering", latex_table(rows),
                      r"\caption{The RDP of basic mechanisms, as in Mironov 2017, Table II,"
                      r" derived by rdpsym; sensitivity $\Delta = 1$.}", r"\end{table}"])
    return latex_document(body)


def json_rows(rows: list[TableRow]) -> str:
    """One JSON object per row with the keys ``mechanism``, ``general``, ``kl``, ``max_divergence``
    (sympy strings; null where not derived) and ``verification`` (the cell check, "" when not run)."""
    def text(e):
        return None if e is None else sp.sstr(e)

    return json.dumps([{"mechanism": r.mechanism.name, "general": text(r.general), "kl": text(r.kl),
                        "max_divergence": text(r.max_divergence), "verification": r.verification}
                       for r in rows], indent=2, ensure_ascii=False)

