"""Formulas as a paper prints them: the shape of Mironov 2017 (arXiv:1702.07476 v3), Table II, line
breaks that keep a display inside the text width, and the ``cases`` display of an RDP curve.

Everything here is presentation: :func:`display_form` rewrites an expression only into an equal one
(checked at high precision at points spread over the parameters' domains, or the expression is kept),
and the renderers choose where a line breaks from the expression's own top-level sum, never from its
text.
"""

from __future__ import annotations

import cmath
import re
from typing import Sequence

import mpmath
import sympy as sp

from ..derive.result import SPECIAL_ORDER_NAMES, DivergenceResult
from ..specify.params import Parameter

__all__ = ["display_form", "visual_width", "paper_latex", "broken_lines", "cases_display", "LINE_BUDGET"]

#: the width, in :func:`visual_width` units (about one math-italic letter: 5.6 pt at 11 pt, 5.1 pt at
#: 10 pt), of one display line: what fits the text width of LaTeX's default article (345 pt at 10 pt),
#: where a fragment is most often \input, with a margin for the estimate's error (the compile tests
#: fail on any overfull box, in a default article and in the standalone document)
LINE_BUDGET = 56.0


# -- equal forms ---------------------------------------------------------------------------------------
def _sample_points(expr: sp.Basic, parameters: Sequence[Parameter], order: sp.Symbol) -> list[dict]:
    """Points spread over the parameters' typical ranges and domains, at orders on both sides of 1."""
    by_symbol = {p.symbol: p for p in parameters}
    orders = (sp.Rational(3, 10), sp.Rational(3, 2), sp.Integer(2), sp.Rational(7, 2), sp.Integer(9))
    columns = {}
    for s in expr.free_symbols:
        if s == order:
            continue
        p = by_symbol.get(s)
        if p is None:
            return []  # a symbol without a domain: no points to check a rewrite at
        values = list(p.typical_values(5))
        lo, hi = p.domain.inf, p.domain.sup
        if lo.is_finite and hi.is_finite:  # near both ends of a bounded domain (e.g. p near 0 and 1)
            values += [lo + (hi - lo) / 100, hi - (hi - lo) / 100]
        columns[s] = values
    points = []
    for i in range(7):
        pt = {order: orders[i % len(orders)]}
        pt.update({s: v[i % len(v)] for s, v in columns.items()})
        points.append(pt)
    return points


def _equal_at(a: sp.Expr, b: sp.Expr, points: list[dict], digits: int = 30) -> bool:
    """True only if ``a`` and ``b`` are finite, real and agree to ``digits`` at every point."""
    if not points:
        return False
    with mpmath.workdps(digits + 20):
        for pt in points:
            try:
                x, y = complex(sp.N(a.subs(pt), digits + 20)), complex(sp.N(b.subs(pt), digits + 20))
            except (TypeError, ValueError):
                return False
            # a non-finite or complex value at any point refuses the rewrite (inf - inf would compare as nan)
            if not (cmath.isfinite(x) and cmath.isfinite(y)) or x.imag or y.imag \
                    or abs(x - y) > 10.0 ** (-digits) * max(1.0, abs(y)):
                return False
    return True


def _log_differences(e: sp.Basic) -> sp.Basic:
    """log(u) - log(v) -> log(u/v) in every sum (the paper's log(p/(1-p)), Table II)."""
    if e.is_Atom:
        return e
    e = e.func(*[_log_differences(a) for a in e.args])
    if not e.is_Add:
        return e
    terms = list(e.args)
    pos = [t for t in terms if isinstance(t, sp.log)]
    neg = [t for t in terms if isinstance(-t, sp.log)]
    if not (pos and neg):
        return e
    u, v = pos[0], -neg[0]
    terms.remove(u)
    terms.remove(neg[0])
    return sp.Add(sp.log(sp.Mul(u.args[0], sp.Pow(v.args[0], -1))), *terms)


def display_form(expr: sp.Expr | None, parameters: Sequence[Parameter], order: sp.Symbol) -> sp.Expr | None:
    """``expr`` in the form a paper prints, for display only: log differences combined into the log of a
    quotient. The rewrite is kept only if it is no larger and equals ``expr`` to 30 digits at points
    spread over the parameters' domains (orders on both sides of 1); otherwise ``expr`` is returned."""
    if expr is None or not isinstance(expr, sp.Expr) or expr.has(sp.Piecewise):
        return expr
    candidate = _log_differences(expr)
    if candidate == expr or sp.count_ops(candidate) > sp.count_ops(expr):
        return expr
    return candidate if _equal_at(candidate, expr, _sample_points(expr, parameters, order)) else expr


# -- widths and rendering ------------------------------------------------------------------------------
_WIDE = {"log": 2.6, "exp": 2.6, "infty": 1.4, "quad": 2.0, "qquad": 4.0, "cdot": 1.2, "sqrt": 1.2,
         "left": 0.0, "right": 0.0, "Bigl": 0.0, "Bigr": 0.0, "bigl": 0.0, "bigr": 0.0, "displaystyle": 0.0,
         "operatorname": 0.0, "mathrm": 0.0, "limits": 0.0, "nolimits": 0.0}


def _group(tex: str, i: int) -> tuple[str, int]:
    """The brace group (or single token) starting at ``tex[i]`` and the index after it."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] != "{":
        if tex[i] == "\\":
            m = re.match(r"\\[A-Za-z]+|\\.", tex[i:])
            return m.group(0), i + len(m.group(0))
        return tex[i], i + 1
    depth, j = 0, i
    while j < len(tex):
        depth += {"{": 1, "}": -1}.get(tex[j], 0)
        if depth == 0:
            return tex[i + 1:j], j + 1
        j += 1
    return tex[i + 1:], len(tex)


def visual_width(tex: str) -> float:
    """The printed width of a LaTeX math string in units of about one letter: a fraction is as wide as
    its wider part, scripts count 0.7, binary operators and relations 2 (their spacing), commands by
    what they print. An estimate that decides line breaks, not a typesetter."""
    w, i = 0.0, 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+)|\\(.)", tex[i:])
            name = m.group(1) or m.group(2)
            i += len(m.group(0))
            if name in ("frac", "dfrac", "tfrac"):
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                w += max(visual_width(num), visual_width(den)) + 0.6
            elif name in ("text", "mathrm", "operatorname", "textup"):
                inner, i = _group(tex, i)
                w += 0.9 * len(inner) if name != "mathrm" else visual_width(inner)
            elif name in (",", ";", ":", "!", " "):
                w += {",": 0.3, ";": 0.5, ":": 0.4, "!": -0.3, " ": 0.5}[name]
            elif name in ("{", "}", "|"):
                w += 0.6
            else:
                w += _WIDE.get(name, 1.0 if len(name) > 1 else 0.8)
        elif c in "^_":
            inner, i = _group(tex, i + 1)
            w += 0.7 * visual_width(inner)
        elif c in "{}":
            i += 1
        elif c == " ":
            i += 1
        elif c in "+-=<>":
            w += 2.0
            i += 1
        elif c == "&":
            i += 1
        else:
            w += 1.0
            i += 1
    return w


def _exp_latex(e: sp.Expr, names: dict) -> str:
    """e^{...} with a folded fraction in the exponent, e^{(alpha - 1)/lambda}, as Table II prints it."""
    return "e^{%s}" % sp.latex(e.args[0], symbol_names=names, fold_short_frac=True, ln_notation=False)


def _factor_latex(f: sp.Expr, names: dict) -> str:
    if isinstance(f, sp.exp):
        return _exp_latex(f, names)
    return sp.latex(f, symbol_names=names, ln_notation=False)


def paper_latex(expr: sp.Expr, names: dict) -> str:
    """LaTeX of ``expr`` in the shape of Table II: ``c log(Z)`` as ``\\frac{1}{\\alpha-1} \\log(...)``
    (the prefactor first), a term ``c * exp(u)`` as ``\\frac{a}{b} e^{u}`` with the exponent folded;
    anything else as ``sympy.latex`` prints it."""
    return " ".join(_line_pieces(expr, names, None)) if expr is not None else ""


def _signed_terms(expr: sp.Expr, names: dict) -> list[str]:
    """The terms of a sum, each with its sign in front (``+ t`` / ``- t``, the first without ``+``)."""
    out = []
    terms = sp.Add.make_args(expr) if expr.is_Add else (expr,)
    # constants last, as a paper writes 1/lambda + e^{-1/lambda} - 1 (Table II), the order otherwise sympy's
    terms = sorted(terms, key=lambda t: t.is_number)
    for k, t in enumerate(terms):
        negative = t.could_extract_minus_sign()
        body = _term_latex(-t if negative else t, names)
        out.append(("- " if negative else ("+ " if k else "")) + body)
    return out


def _term_latex(t: sp.Expr, names: dict) -> str:
    factors = sp.Mul.make_args(t)
    exps = [f for f in factors if isinstance(f, sp.exp)]
    if not exps or t.is_Add:
        if isinstance(t, sp.Mul):
            logs = [f for f in factors if isinstance(f, sp.log)]
            if len(logs) == 1:
                rest = sp.Mul(*[f for f in factors if f is not logs[0]])
                return _prefactor(rest, names) + r"\log\left(%s\right)" % " ".join(_signed_terms(logs[0].args[0], names))
        return sp.latex(t, symbol_names=names, ln_notation=False)
    coeff = sp.Mul(*[f for f in factors if not isinstance(f, sp.exp)])
    tail = " ".join(_exp_latex(f, names) for f in exps)
    if coeff == 1:
        return tail
    head = sp.latex(coeff, symbol_names=names, ln_notation=False)
    if coeff.is_Add:
        head = r"\left(%s\right)" % head
    return f"{head} {tail}"


def _prefactor(c: sp.Expr, names: dict) -> str:
    if c == 1:
        return ""
    if c == -1:
        return "-"
    tex = sp.latex(c, symbol_names=names, ln_notation=False)
    return (r"\left(%s\right) " % tex) if c.is_Add else tex + " "


def _line_pieces(expr: sp.Expr, names: dict, budget: float | None) -> list[str]:
    """The pieces of ``expr``'s LaTeX between which a line may break (one piece when ``budget`` is None
    or the whole fits): the terms of a top-level sum, or of the sum inside ``c log(...)``."""
    if isinstance(expr, sp.Mul):
        logs = [f for f in expr.args if isinstance(f, sp.log)]
        if len(logs) == 1 and not expr.has(sp.Piecewise):
            c = sp.Mul(*[f for f in expr.args if f is not logs[0]])
            inner = logs[0].args[0]
            terms = _signed_terms(inner, names)
            head = _prefactor(c, names)
            if budget is None or visual_width(head + r"\log(" + " ".join(terms) + ")") <= budget:
                return [head + r"\log\left(" + " ".join(terms) + r"\right)"]
            # fixed-size parentheses (\left/\right cannot span lines), tall enough for display fractions
            size = "bigg" if any(r"\frac" in t for t in terms) else "Big"
            terms[0] = head + r"\log\%sl(" % size + terms[0]
            terms[-1] += r"\%sr)" % size
            return terms
    if expr.is_Add:
        return _signed_terms(expr, names)
    if isinstance(expr, (sp.Max, sp.Min)) and budget is not None:
        whole = sp.latex(expr, symbol_names=names, ln_notation=False)
        if visual_width(whole) <= budget:
            return [whole]
        name = r"\max" if isinstance(expr, sp.Max) else r"\min"
        args = [paper_latex(e, names) for e in expr.args]
        return [name + r"\biggl(" + args[0] + ","] + [e + "," for e in args[1:-1]] + [args[-1] + r"\biggr)"]
    return [_term_latex(expr, names)]


def broken_lines(expr: sp.Expr, names: dict, budget: float = LINE_BUDGET, indent: float = 3.0) -> list[str]:
    """``expr`` as display lines, each at most ``budget`` wide where the expression allows: the pieces of
    :func:`_line_pieces` filled greedily, lines after the first indented by ``indent`` units."""
    pieces = _line_pieces(expr, names, budget)
    lines, current = [], ""
    for piece in pieces:
        trial = (current + " " + piece).strip()
        room = budget - (indent if lines else 0.0)
        if current and visual_width(trial) > room:
            lines.append(current)
            current = piece
        else:
            current = trial
    lines.append(current)
    return lines


def _aligned(lines: list[str]) -> str:
    if len(lines) == 1:
        return lines[0]
    return "\\begin{aligned}[t]\n&" + " \\\\\n&\\quad ".join(lines) + "\n\\end{aligned}"


def cases_display(result: DivergenceResult, parameters: Sequence[Parameter], lhs: str = r"\varepsilon(\alpha)",
                  budget: float = LINE_BUDGET) -> str:
    """The RDP curve as one ``cases`` display: the general form where it holds (with the finiteness
    conditions and the orders it excludes), +oo where the conditions fail, then each special order
    (alpha = 1: KL, alpha = oo: max divergence, removable orders, exact integer orders). Long entries
    break over lines (an ``aligned`` block inside the case). A result without a general form says so in
    its row instead of showing a formula."""
    names = {p.symbol: p.latex for p in result.parameters(parameters)}
    names[result.alpha] = r"\alpha"
    a = result.alpha
    specials = result.special_orders()
    excluded = [o for kind, o, _ in specials if kind in ("removable", "integer")]
    generic = r"\alpha \in (0, 1) \cup (1, \infty)"
    if excluded:
        generic += r",\ \alpha \neq " + ", ".join(sp.latex(o) for o in excluded)
    finite = None if result.conditions is sp.true else sp.latex(result.conditions, symbol_names=names)
    rows = []
    conditions = [generic + (r",\ " + finite if finite else "")] + [
        r"\alpha = %s \quad \text{(%s)}" % (sp.latex(o), SPECIAL_ORDER_NAMES[k]) for k, o, _ in specials]
    # what the left side, the brace and the condition column (after a quad) leave of the line
    width = max(24.0, budget - max(visual_width(c) for c in conditions) - visual_width(lhs) - 4)
    if result.expr is None:
        rows.append((r"\text{no closed form: numeric values only}", r"\text{if } " + generic))
    else:
        general = result.expr
        parts = general.args if isinstance(general, sp.Piecewise) else ((general, sp.true),)
        for e, c in parts:
            if e == sp.oo:
                rows.append((r"+\infty", r"\text{if } " + generic + (", " + sp.latex(c, symbol_names=names) if c is not sp.true else "")))
                continue
            shown = display_form(e, parameters, a)
            cond = generic if c is sp.true else generic + ", " + sp.latex(c, symbol_names=names)
            if finite:
                cond += r",\ " + finite
            rows.append((_aligned(broken_lines(shown, names, width)), r"\text{if } " + cond))
        if finite:
            rows.append((r"+\infty", r"\text{if } " + generic + r",\ \text{otherwise}"))
    for kind, order, value in specials:
        shown = display_form(value, parameters, a)
        tex = r"+\infty" if shown == sp.oo else _aligned(broken_lines(shown, names, width))
        rows.append((tex, r"\text{if } \alpha = %s \quad \text{(%s)}" % (sp.latex(order), SPECIAL_ORDER_NAMES[kind])))
    # display style in each case (cases sets its entries in text style: the fractions would be tiny)
    body = " \\\\[1ex]\n".join(f"\\displaystyle {e} & {c}" for e, c in rows)
    relation = "" if lhs.rstrip().endswith(("\\le", "\\ge", "=")) else " ="
    return f"{lhs}{relation}\n\\begin{{cases}}\n{body}\n\\end{{cases}}"
