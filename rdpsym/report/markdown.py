"""Markdown for derivation results and Table II style tables (math in ``$...$``, rendered by Jupyter/GitHub)."""

from __future__ import annotations

from typing import Sequence

import sympy as sp

from ..derive.result import SPECIAL_ORDER_NAMES, DivergenceResult
from ..specify.params import Parameter
from .latex import formula, latex_names, symbol_names
from .table import TableRow

__all__ = ["result_markdown", "table_markdown"]


def result_markdown(result: DivergenceResult, parameters: Sequence[Parameter] | None = None) -> str:
    """The result as Markdown: general form, finiteness conditions, special orders, status."""
    names = symbol_names(result, parameters)
    lines = [f"**{result.label}** — status `{result.status}`", ""]
    if result.expr is not None:
        lines.append(f"$$D_\\alpha = {formula(result.expr, names)}\\qquad \\alpha \\in (0,1)\\cup(1,\\infty)$$")
    if result.conditions is not sp.true:
        lines.append(f"- finite where ${formula(result.conditions, names)}$, $+\\infty$ elsewhere")
    for kind, order, value in result.special_orders():
        lines.append(f"- $\\alpha = {formula(order, names)}$ ({SPECIAL_ORDER_NAMES[kind]}): ${formula(value, names)}$")
    if result.reason:
        lines.append(f"- note: {result.reason}")
    return "\n".join(lines)


def table_markdown(rows: list[TableRow]) -> str:
    """Table II of Mironov 2017 in Markdown, with each cell as LaTeX math in the parameters' symbols."""
    head = ("| Mechanism | $\\alpha > 1$ | $\\alpha = 1$ | $\\alpha = \\infty$ | status |\n"
            "|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        names = latex_names(r.mechanism.parameters, r.result.alpha)

        def cell(e):
            return "—" if e is None else f"${formula(e, names)}$"

        lines.append(f"| {r.mechanism.title or r.mechanism.name} | {cell(r.general)} | {cell(r.kl)} | "
                     f"{cell(r.max_divergence)} | {r.result.status} |")
    return "\n".join(lines)
