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

from .. import printing
from ..derive.result import SPECIAL_ORDER_NAMES, DivergenceResult
from ..specify.params import Parameter

__all__ = [
    "result_parameters",
    "latex_names",
    "symbol_names",
    "formula",
    "result_latex",
    "escape_text",
    "latex_document",
    "PREAMBLE",
    "parse_back",
]


def result_parameters(result: DivergenceResult, parameters: Sequence[Parameter] | None = None) -> tuple[Parameter, ...]:
    """The :class:`Parameter` of each of ``result.symbols``.

    See :meth:`rdpsym.DivergenceResult.parameters`.
    """
    return result.parameters(parameters)


def latex_names(parameters: Sequence[Parameter], order: sp.Symbol | None = None) -> dict[sp.Symbol, str]:
    """sympy symbol -> LaTeX symbol of each parameter (:attr:`Parameter.latex`), and ``\\alpha`` for
    ``order``: the one table every formula of a report is printed with. A symbol written as several
    tokens (the bounded Laplace width ``u - l``) is set in parentheses, so that a power or a folded
    fraction keeps its meaning (``e^{-(u - l)/b}``, never ``e^{-u - l/b}``)."""
    names = {p.symbol: _atomic(p.latex) for p in parameters}
    if order is not None:
        names[order] = r"\alpha"
    return names


def _atomic(tex: str) -> str:
    """``tex`` as one operand: parenthesized when it holds an operator, a space or a script."""
    tex = tex.strip()
    if re.search(r"[-+*/^ ]|\\(?:cdot|times)", tex) and not (tex.startswith("(") and tex.endswith(")")):
        return f"({tex})"
    return tex


def symbol_names(result: DivergenceResult, parameters: Sequence[Parameter] | None = None) -> dict[sp.Symbol, str]:
    """sympy symbol -> LaTeX symbol, with ``\\alpha`` for the order (:func:`latex_names`)."""
    return latex_names(result_parameters(result, parameters), result.alpha)


def formula(expr: sp.Basic, names: dict[sp.Symbol, str]) -> str:
    """``sp.latex`` with the given symbol names and ``\\log`` (natural log, as in the paper); floats as
    the decimals the user wrote (:mod:`rdpsym.printing`)."""
    return printing.latex(expr, symbol_names=names, ln_notation=False)


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


_ACCENTS = {"é": r"\'{e}", "è": r"\`{e}", "ö": r'\"{o}', "ü": r'\"{u}', "ä": r'\"{a}', "ç": r"\c{c}",
            "É": r"\'{E}", "—": "---", "–": "--", "≤": r"$\le$", "≥": r"$\ge$", "∞": r"$\infty$",
            "ε": r"$\varepsilon$", "∝": r"$\propto$", "’": "'", "×": r"$\times$",
            "²": r"$^2$", "³": r"$^3$"}


def escape_text(text: str) -> str:
    """Escape text for LaTeX text mode (``\\text{...}`` or a paragraph): the special characters, the
    accented letters of names ("Rényi", "Harremoës") as accent commands, a few math signs as math; any
    other non-ASCII character becomes "?" (a fragment must compile under any input encoding)."""
    out = "".join(_TEXT_ESCAPES.get(c, c) for c in text)
    out = out.replace("||", r"$\|$")
    out = "".join(_ACCENTS.get(c, c) for c in out)
    return "".join(c if ord(c) < 128 else _greek(c) for c in out)


def _greek(c: str) -> str:
    """A Greek letter as math (σ -> $\\sigma$), "?" for any other character."""
    import unicodedata

    name = unicodedata.name(c, "")
    if name.startswith("GREEK SMALL LETTER ") and " " not in name[19:]:
        return r"$\%s$" % name[19:].lower().replace("lamda", "lambda")
    if name.startswith("GREEK CAPITAL LETTER ") and " " not in name[21:]:
        return r"$\%s$" % name[21:].capitalize().replace("Lamda", "Lambda")
    return "?"


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
        return printing.latex(result.expr, symbol_names=names, ln_notation=False, **kwargs)
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
        if isinstance(step.expr, sp.Expr):  # a step's value; the pieces' records are derivation_latex's
            line += rf" && {formula(step.expr, names)}"
        rows.append(line)
    return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


#: the preamble of every standalone document: T1 fonts (so "<" and accents print as themselves),
#: Latin Modern (scalable T1 fonts), the AMS packages, booktabs for tables
PREAMBLE = (
    r"\documentclass[11pt]{article}",
    r"\usepackage[T1]{fontenc}",
    r"\usepackage[utf8]{inputenc}",
    r"\usepackage{lmodern}",
    r"\usepackage[a4paper,margin=2.5cm]{geometry}",
    r"\usepackage{amsmath,amssymb,amsthm}",
    r"\usepackage{booktabs}",
    r"\allowdisplaybreaks",
    r"\setlength{\emergencystretch}{3em}",
)


def latex_document(body: str, title: str = "", landscape: bool = False) -> str:
    """A complete, compilable document around ``body`` (article, :data:`PREAMBLE`); ``title`` is LaTeX."""
    head = list(PREAMBLE)
    if landscape:
        head[4] = r"\usepackage[a4paper,margin=2cm,landscape]{geometry}"
    head.append(r"\begin{document}")
    if title:
        head.append(r"\section*{%s}" % title)
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
