"""LaTeX for derivation results: formulas with conventional symbols, derivation steps, documents.

Symbols come from each :class:`~rdpsym.specify.params.Parameter`'s ``latex`` (``\\lambda`` for the
Laplace scale ``b``, ``\\sigma``, ``\\Delta`` for the sensitivity), and the order is ``\\alpha``, as in
Mironov 2017 (arXiv:1702.07476 v3), Table II. The output compiles with plain ``pdflatex`` and
``amsmath``; :func:`parse_back` reads a formula back with :func:`rdpsym.specify.text.parse_latex` so
tests can compare it semantically with the result it came from.
"""

from __future__ import annotations

import re
from typing import Sequence

import sympy as sp

from ..derive.result import SPECIAL_ORDER_NAMES, DivergenceResult
from ..specify.params import Parameter

__all__ = [
    "result_parameters",
    "symbol_names",
    "formula",
    "result_latex",
    "escape_text",
    "latex_document",
    "parse_back",
]


def result_parameters(result: DivergenceResult, parameters: Sequence[Parameter] | None = None) -> tuple[Parameter, ...]:
    """The :class:`Parameter` of each of ``result.symbols``.

    See :meth:`rdpsym.DivergenceResult.parameters`.
    """
    return result.parameters(parameters)


def symbol_names(result: DivergenceResult, parameters: Sequence[Parameter] | None = None) -> dict[sp.Symbol, str]:
    """sympy symbol -> LaTeX symbol, with ``\\alpha`` for the order."""
    names = {p.symbol: p.latex for p in result_parameters(result, parameters)}
    names[result.alpha] = r"\alpha"
    return names


def formula(expr: sp.Basic, names: dict[sp.Symbol, str]) -> str:
    """``sp.latex`` with the given symbol names and ``\\log`` (natural log, as in the paper)."""
    return sp.latex(expr, symbol_names=names, ln_notation=False)


_TEXT_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def escape_text(text: str) -> str:
    """Escape text for LaTeX text mode (``\\text{...}`` or a paragraph); non-ASCII is transliterated."""
    text = text.replace("—", "--").replace("–", "--").replace("é", "\u00e9")
    out = "".join(_TEXT_ESCAPES.get(c, c) for c in text)
    out = out.replace("\u00e9", r"\'e").replace("||", r"$\|$")
    return "".join(c if ord(c) < 128 else "?" for c in out)


def result_latex(result: DivergenceResult, steps: bool = False, parameters: Sequence[Parameter] | None = None,
                 **kwargs) -> str:
    """LaTeX of the result with conventional symbols.

    Without ``steps``: the formula of ``result.expr`` only (what ``result.latex()`` returns). With
    ``steps``: an ``aligned`` environment with the general form, the special orders (alpha = 1, oo,
    exceptional points), the finiteness conditions, and the derivation steps from the provenance.
    """
    names = symbol_names(result, parameters)
    if result.expr is None:
        return r"\text{%s}" % escape_text(str(result.status))
    if not steps:
        return sp.latex(result.expr, symbol_names=names, ln_notation=False, **kwargs)
    D = r"D_{\alpha}"
    rows = [rf"{D} &= {formula(result.expr, names)} && \alpha \in (0, 1) \cup (1, \infty)"]
    if result.conditions is not sp.true:
        rows.append(rf"&\text{{finite where }} {formula(result.conditions, names)} && \text{{else }} +\infty")
    notes = SPECIAL_ORDER_NAMES
    for kind, order, value in result.special_orders():
        rows.append(rf"D_{{{formula(order, names)}}} &= {formula(value, names)} && \text{{{notes[kind]}}}")
    for step in result.provenance.steps:
        text = escape_text(f"{step.name}: {step.detail}")
        if len(text) > 150:
            text = text[:147].rsplit(" ", 1)[0] + "..."
        line = rf"&\text{{{text}}}"
        if step.expr is not None:
            line += rf" && {formula(step.expr, names)}"
        rows.append(line)
    return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


def latex_document(body: str, title: str = "") -> str:
    """A complete, compilable document around ``body`` (article class, amsmath)."""
    head = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[margin=2cm,landscape]{geometry}",
        r"\usepackage{amsmath,amssymb}",
        r"\allowdisplaybreaks",
        r"\begin{document}",
    ]
    if title:
        head.append(r"\section*{%s}" % escape_text(title))
    return "\n".join(head + [body, r"\end{document}", ""])


def parse_back(text: str, result: DivergenceResult, parameters: Sequence[Parameter] | None = None) -> sp.Expr:
    """Parse a formula produced by :func:`result_latex` (without steps) back into sympy.

    The LaTeX symbol of each parameter maps back to its sympy symbol, so the parsed expression can be
    compared with ``result.expr`` semantically.
    """
    from ..specify.text import parse_latex

    names = symbol_names(result, parameters)
    table = {}
    for sym, tex in names.items():
        key = tex.lstrip("\\")
        table[key] = sym
    # sympy writes e^{x} for exp(x); the parser reads e as Euler's number when told so
    text = re.sub(r"\\left|\\right", "", text)
    return parse_latex(text, table)
