"""Tables in the style of Mironov 2017, Table II, generated from derivation results."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..derive.result import DivergenceResult
from ..specify.mechanism import Mechanism

__all__ = ["TableRow", "table_row", "markdown_table", "latex_table"]


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
    """The row of ``mechanism`` with parameters in ``fixed`` (name -> value) substituted exactly."""
    subs = mechanism.substitutions(fixed or {})

    def sub(e):
        return None if e is None else sp.simplify(e.subs(subs))

    return TableRow(mechanism, result, sub(result.expr), sub(result.kl), sub(result.max_divergence), seconds, verification)


def _symbol_names(mechanism: Mechanism) -> dict:
    from ..symbols import alpha

    names = {p.symbol: p.latex for p in mechanism.parameters}
    names[alpha] = r"\alpha"
    return names


def _cell_md(e):
    return "—" if e is None else f"`{sp.sstr(e)}`"


def markdown_table(rows: list[TableRow]) -> str:
    head = "| Mechanism | alpha > 1 | alpha = 1 | alpha = oo | status | verification | time (s) |\n|---|---|---|---|---|---|---|"
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r.mechanism.title or r.mechanism.name} | {_cell_md(r.general)} | {_cell_md(r.kl)} | "
            f"{_cell_md(r.max_divergence)} | {r.result.status} | {r.verification or 'not run'} | {r.seconds:.2f} |"
        )
    return "\n".join(lines)


def latex_table(rows: list[TableRow]) -> str:
    lines = [
        r"\begin{tabular}{llll}",
        r"\hline",
        r"Mechanism & $\alpha > 1$ & $\alpha = 1$ & $\alpha = \infty$ \\",
        r"\hline",
    ]
    for r in rows:
        names = _symbol_names(r.mechanism)

        def cell(e):
            return r"\text{---}" if e is None else sp.latex(e, symbol_names=names)

        lines.append(
            f"{r.mechanism.title or r.mechanism.name} & ${cell(r.general)}$ & ${cell(r.kl)}$ & ${cell(r.max_divergence)}$ \\\\"
        )
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines)
