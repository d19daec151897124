"""The RDP curve of a result as a paper displays it, within the text width.

Short curves are one ``cases`` display: the general form where it holds (with the finiteness
conditions and the orders it excludes), ``+\\infty`` where the conditions fail, then each special order
(alpha = 1: KL, alpha = oo: max divergence, removable orders, exact integer orders; Mironov 2017,
arXiv:1702.07476 v3, Def. 3 and Table II). When an entry would need more than :data:`CASES_LINES` lines
beside the condition column, the curve is an ``align*`` instead, one row per case with its condition as
text between the rows, each row over the whole text width.

Every formula is first shown with equal branches of a maximum once (:mod:`rdpsym.report.branches`), in
its display form (:func:`rdpsym.report.paper.display_form`), broken at the places a paper breaks
(:func:`rdpsym.report.paper.broken_lines`). A part that still does not fit (a long exponent, a quotient
of long sums) gets a name, ``A_1``, defined after the display ("where A_1 = ..."): the widest part that
fits a line, the most repeated first, until the display fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import sympy as sp

from .. import printing
from ..derive.result import SPECIAL_ORDER_NAMES, DivergenceResult
from ..specify.params import Parameter
from .branches import Collapse, collapse_equal_branches
from .latex import latex_names
from .paper import LINE_BUDGET, broken_lines, display_form, paper_latex, visual_width

__all__ = ["CurveDisplay", "curve_display", "CASES_LINES", "MAX_NAMES"]

#: the most lines an entry of a ``cases`` display may take before the curve is set as rows instead
CASES_LINES = 2
#: the most parts named (A_1, A_2, ...) in one display
MAX_NAMES = 12
#: a formula longer than this many lines gets names for the parts it repeats (at most MAX_REPEATED of
#: them, each at least MIN_REPEATED_WIDTH wide: a short part is clearer written out)
LONG_LINES, MAX_REPEATED, MIN_REPEATED_WIDTH = 8, 4, 12.0
#: the indentation of a continued line, in :func:`rdpsym.report.paper.visual_width` units (a \quad)
INDENT = 3.0


@dataclass(frozen=True)
class _Row:
    value: sp.Expr | str | None  # an expression, +oo, or a text for a row without a formula
    when: str  # the condition, math
    note: str = ""  # the kind of special order, text
    order: sp.Expr | None = None  # the order of a special row (its left side reads eps(order))


@dataclass(frozen=True)
class CurveDisplay:
    """The display (``latex``: complete, with its ``\\[...\\]`` or ``align*``), the collapses of equal
    branches it made (one per formula shown), the parts it named (``definitions``: (name, expression)
    pairs), and whether it is set as rows (``align*``) rather than ``cases``."""

    latex: str
    collapses: tuple[Collapse, ...] = ()
    definitions: tuple[tuple[str, sp.Expr], ...] = field(default=())
    rows: bool = False

    @property
    def lead(self) -> str:
        """How the sentence before the display ends: a colon before a ``cases`` display; a comma before
        rows, which begin "for alpha in ...:"."""
        return "," if self.rows else ":"

    @property
    def merged(self) -> bool:
        """Whether some argument of a maximum was shown equal to another and shown once."""
        return any(c.merged for c in self.collapses)


def _rows(result: DivergenceResult, names: dict) -> list[_Row]:
    specials = result.special_orders()
    excluded = [o for kind, o, _ in specials if kind in ("removable", "integer")]
    generic = r"\alpha \in (0, 1) \cup (1, \infty)"
    if excluded:
        generic += r",\ \alpha \neq " + ", ".join(printing.latex(o) for o in excluded)
    finite = None if result.conditions is sp.true else printing.latex(result.conditions, symbol_names=names)
    rows = []
    if result.expr is None:
        rows.append(_Row(r"\text{no closed form: numeric values only}", generic))
    else:
        parts = result.expr.args if isinstance(result.expr, sp.Piecewise) else ((result.expr, sp.true),)
        for e, c in parts:
            when = generic if c is sp.true else generic + r",\ " + printing.latex(c, symbol_names=names)
            if finite and e != sp.oo:
                when += r",\ " + finite
            rows.append(_Row(e, when))
        if finite:
            rows.append(_Row(sp.oo, generic + r",\ \text{otherwise}"))
    for kind, order, value in specials:
        rows.append(_Row(value, r"\alpha = %s" % printing.latex(order), SPECIAL_ORDER_NAMES[kind], order))
    return rows


class _Namer:
    """Names parts of formulas that do not fit (A_1, A_2, ...), the same part the same name everywhere."""

    def __init__(self, names: dict):
        taken = set(names.values())
        self.letter = next(c for c in "ABCEFGHKLNRSTUVWXYZ" if c not in taken)
        self.names = names
        self.defs: dict[sp.Expr, sp.Symbol] = {}

    def fit(self, e: sp.Expr, width: float) -> list[str]:
        """Lines of ``e`` within ``width``: parts are named until they fit, then parts that repeat until
        the formula takes at most :data:`LONG_LINES` lines (at most :data:`MAX_NAMES` names in all)."""
        e = e.xreplace(self.defs)
        lines = broken_lines(e, self.names, width, INDENT)
        repeats = 0
        while len(self.defs) < MAX_NAMES:
            overfull = not _fits(lines, width)
            if not overfull and (len(lines) <= LONG_LINES or repeats >= MAX_REPEATED):
                break
            part = self._part(e, width, repeated=not overfull,
                              within=[line for line in lines if visual_width(line) > width - INDENT])
            repeats += not overfull
            if part is None:
                break
            e = e.xreplace({part: self._name(part)})
            lines = broken_lines(e, self.names, width, INDENT)
        return lines

    def _name(self, part: sp.Expr) -> sp.Symbol:
        k = len(self.defs) + 1
        symbol = sp.Dummy(f"{self.letter}{k}")
        self.names[symbol] = "%s_{%d}" % (self.letter, k)
        self.defs[part] = symbol
        return symbol

    def _part(self, e: sp.Expr, width: float, repeated: bool, within: list[str]) -> sp.Expr | None:
        """The part to name: among the proper subexpressions that fit a line of their own (or, for a line
        too wide, break over the lines of a definition), written in one of the lines ``within`` (the
        lines too wide, when there are some), or occurring more than once (when ``repeated``), the one
        whose name saves the most width (its width times its occurrences)."""
        counts: dict[sp.Expr, int] = {}
        for s in sp.preorder_traversal(e):
            if s is not e and not s.is_Atom:
                counts[s] = counts.get(s, 0) + 1
        best, score = None, 0.0
        for s, n in counts.items():
            tex = paper_latex(s, self.names)
            w = visual_width(tex)
            if repeated and (n < 2 or w < MIN_REPEATED_WIDTH):
                continue
            # as the line shows it: in the paper's shape, or as sympy prints it inside a power or a fraction
            shown_as = (tex, printing.latex(s, symbol_names=self.names, ln_notation=False))
            if not repeated and within and not any(t in line for t in shown_as for line in within):
                continue
            if w < 6.0 or w * n <= score:
                continue
            # a part fits a line of its own, or breaks over the lines of its definition
            if w <= width - INDENT or (not repeated and _fits(broken_lines(s, self.names, width, INDENT), width)):
                best, score = s, w * n
        return best

    def definitions(self) -> list[tuple[str, sp.Expr]]:
        return [(self.names[sym], part) for part, sym in sorted(self.defs.items(), key=lambda kv: kv[1].name)]


def _fits(lines: list[str], width: float) -> bool:
    return all(visual_width(line) <= width - (INDENT if k else 0.0) for k, line in enumerate(lines))


def _aligned(lines: list[str]) -> str:
    if len(lines) == 1:
        return lines[0]
    return "\\begin{aligned}[t]\n&" + " \\\\\n&\\quad ".join(lines) + "\n\\end{aligned}"


def curve_display(result: DivergenceResult, parameters: Sequence[Parameter], lhs: str = r"\varepsilon(\alpha)",
                  relation: str = "=", budget: float = LINE_BUDGET) -> CurveDisplay:
    """The curve of ``result`` as a display (see the module docstring): ``lhs relation ...`` with
    ``relation`` one of ``=``, ``\\le``, ``\\ge``."""
    names = latex_names(result.parameters(parameters), result.alpha)
    a = result.alpha
    rows = _rows(result, names)
    collapses = []

    def shown(e):
        c = collapse_equal_branches(e, parameters, a)
        collapses.append(c)
        return display_form(c.expr, parameters, a)

    values = [shown(r.value) if isinstance(r.value, sp.Expr) and r.value != sp.oo else r.value for r in rows]
    conditions, column = _conditions(rows)
    head = f"{lhs} {relation}".strip()
    width = budget - column - visual_width(head) - 4
    cases = _cases(rows, values, conditions, head, names, width)
    if cases is not None:
        return CurveDisplay(cases, tuple(collapses))
    namer = _Namer(dict(names))
    # as rows, a case without a formula (no closed form) is said by the text around the display instead
    kept = [(r, v) for r, v in zip(rows, values) if not isinstance(v, str)]
    body = _rows_display([r for r, _ in kept], [v for _, v in kept], lhs, relation, namer, budget)
    defs = namer.definitions()
    if defs:
        lines = []
        for name, part in defs:
            value = broken_lines(part, namer.names, budget - visual_width(name) - 4, INDENT)
            lines.append(f"{name} &= " + " \\\\\n&\\quad ".join(value))
        body += "\nwhere\n\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}"
    return CurveDisplay(body, tuple(collapses), tuple(defs), rows=True)


def _conditions(rows: list[_Row]) -> tuple[list[str], float]:
    """The condition column of a ``cases`` display and its width: "if alpha = 1 (KL divergence)", the
    note under the condition instead of beside it when that keeps the column narrower."""
    main = [r"\text{if } %s" % r.when for r in rows]
    notes = [r"\text{(%s)}" % r.note if r.note else "" for r in rows]
    beside = [m + (r" \quad " + n if n else "") for m, n in zip(main, notes)]
    wide = max(visual_width(b) for b in beside)
    narrow = max(max(visual_width(m) for m in main), max(visual_width(n) for n in notes))
    if wide <= narrow + 2:
        return beside, wide
    return [m if not n else "\\begin{aligned}[t]&%s\\\\ &%s\\end{aligned}" % (m, n)
            for m, n in zip(main, notes)], narrow


def _cases(rows, values, conditions, head, names, width) -> str | None:
    """The ``cases`` display, or None when an entry needs more than :data:`CASES_LINES` lines or does
    not fit."""
    entries = []
    for row, value in zip(rows, values):
        if isinstance(value, str) or value == sp.oo:
            text = value if isinstance(value, str) else r"+\infty"
            if visual_width(text) > width:
                return None
            entries.append(text)
            continue
        if width < 16:
            return None
        lines = broken_lines(value, names, width, INDENT)
        if len(lines) > CASES_LINES or not _fits(lines, width):
            return None
        entries.append(_aligned(lines))
    # display style in each case (cases sets its entries in text style: the fractions would be tiny)
    body = " \\\\[1ex]\n".join(f"\\displaystyle {e} & {c}" for e, c in zip(entries, conditions))
    return f"\\[\n{head}\n\\begin{{cases}}\n{body}\n\\end{{cases}}\n\\]"


def _rows_display(rows, values, lhs, relation, namer: _Namer, budget) -> str:
    """The curve as an ``align*``, one row per case, the condition of each as text before it."""
    out = []
    for k, (row, value) in enumerate(zip(rows, values)):
        at = lhs if row.order is None else lhs.replace(r"(\alpha)", "(%s)" % printing.latex(row.order))
        when = "for $%s$" % row.when if row.order is None else "at $%s$ (the %s)" % (row.when, row.note)
        intro = when + ":"
        if isinstance(value, str):
            lines = [value]
        elif value == sp.oo:
            lines = [r"+\infty"]
        else:
            lines = namer.fit(value, budget - visual_width(at) - 4)
        if k:
            out.append(r"\intertext{%s}" % intro)
        out.append(f"{at} &{relation} " + " \\\\\n&\\quad ".join(lines) + (r" \\" if k < len(rows) - 1 else ""))
        if k == 0:
            out.insert(0, intro + "\n\\begin{align*}")
    return "\n".join(out) + "\n\\end{align*}"
