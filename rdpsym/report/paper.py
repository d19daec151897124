"""Formulas as a paper prints them: the shape of Mironov 2017 (arXiv:1702.07476 v3), Table II, and line
breaks that keep a display inside the text width (the curve's display is :mod:`rdpsym.report.curve`).

Everything here is presentation: :func:`display_form` rewrites an expression only into an equal one
(checked at high precision at points spread over the parameters' domains, or the expression is kept),
and :func:`broken_lines` chooses where a line breaks from the expression's own tree (the terms of a
sum, the arguments of a max, the parentheses of a function), never from its text.
"""

from __future__ import annotations

import cmath
import re
from typing import Sequence

import mpmath
import sympy as sp

from .. import printing
from ..specify.params import Parameter

__all__ = ["display_form", "visual_width", "paper_latex", "broken_lines", "LINE_BUDGET"]

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
_WIDE = {"log": 2.6, "exp": 2.6, "tanh": 3.4, "sinh": 3.4, "cosh": 3.4, "coth": 3.4, "max": 3.0, "min": 3.0,
         "sin": 2.6, "cos": 2.6, "tan": 2.6, "infty": 1.4, "quad": 2.0, "qquad": 4.0, "cdot": 1.2, "sqrt": 1.2,
         "left": 0.0, "right": 0.0, "Bigl": 0.2, "Bigr": 0.2, "bigl": 0.0, "bigr": 0.0,
         "biggl": 0.4, "biggr": 0.4, "displaystyle": 0.0,
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
    return "e^{%s}" % printing.latex(e.args[0], symbol_names=names, fold_short_frac=True, ln_notation=False)


def _plain(e: sp.Expr, names: dict) -> str:
    return printing.latex(e, symbol_names=names, ln_notation=False)


def paper_latex(expr: sp.Expr, names: dict) -> str:
    """LaTeX of ``expr`` in the shape of Table II, on one line: ``c log(Z)`` as
    ``\\frac{1}{\\alpha-1} \\log(...)`` (the prefactor first), a term ``c * exp(u)`` as
    ``\\frac{a}{b} e^{u}`` with the exponent folded; anything else as ``sympy.latex`` prints it
    (floats as the decimals the user wrote, :mod:`rdpsym.printing`)."""
    if expr is None:
        return ""
    if expr.is_Add:
        return " ".join(_signed_terms(expr, names))
    return _term_latex(expr, names)


def _signed_terms(expr: sp.Expr, names: dict) -> list[str]:
    """The terms of a sum, each with its sign in front (``+ t`` / ``- t``, the first without ``+``)."""
    return [sign + _term_latex(body, names) for sign, body in _terms(expr)]


def _terms(expr: sp.Expr) -> list[tuple[str, sp.Expr]]:
    """(sign, term without its sign) of each term of a sum, the first sign "" unless it is "- "."""
    terms = sp.Add.make_args(expr)
    # constants last, as a paper writes 1/lambda + e^{-1/lambda} - 1 (Table II), the order otherwise sympy's
    terms = sorted(terms, key=lambda t: t.is_number)
    out = []
    for k, t in enumerate(terms):
        negative = t.could_extract_minus_sign()
        out.append(("- " if negative else ("+ " if k else ""), -t if negative else t))
    return out


def _term_latex(t: sp.Expr, names: dict) -> str:
    factors = sp.Mul.make_args(t)
    exps = [f for f in factors if isinstance(f, sp.exp)]
    if not exps or t.is_Add:
        log = _single_log(t)
        if log is not None:
            rest = sp.Mul(*[f for f in factors if f is not log])
            return _prefactor(rest, names) + r"\log\left(%s\right)" % " ".join(_signed_terms(log.args[0], names))
        return _plain(t, names)
    coeff = sp.Mul(*[f for f in factors if not isinstance(f, sp.exp)])
    tail = " ".join(_exp_latex(f, names) for f in exps)
    if coeff == 1:
        return tail
    head = _plain(coeff, names)
    if coeff.is_Add:
        head = r"\left(%s\right)" % head
    return f"{head} {tail}"


def _single_log(t: sp.Expr):
    """The log factor of a product ``c log(Z)`` with exactly one, else None."""
    if not isinstance(t, sp.Mul) or t.has(sp.Piecewise):
        return None
    logs = [f for f in t.args if isinstance(f, sp.log)]
    return logs[0] if len(logs) == 1 else None


def _prefactor(c: sp.Expr, names: dict) -> str:
    if c == 1:
        return ""
    if c == -1:
        return "-"
    tex = _plain(c, names)
    return (r"\left(%s\right) " % tex) if c.is_Add else tex + " "


# -- line breaks -------------------------------------------------------------------------------------------
def broken_lines(expr: sp.Expr, names: dict, budget: float = LINE_BUDGET, indent: float = 3.0) -> list[str]:
    """``expr`` as display lines, each at most ``budget`` wide where the expression allows (lines after
    the first are meant to be indented by ``indent`` units: they are kept within ``budget - indent``).

    A line breaks where a paper breaks one: between the terms of a sum (each with its sign), inside the
    parentheses of ``c log(...)``, a function or a power, between the arguments of a max or min (each
    on its own line), after the ``\\frac{1}{d}`` of a long quotient, and between the factors of a
    product (the next line begins with ``\\times``). Continued lines all start at the same indentation,
    however deep the break. Parentheses that span lines have a fixed size (``\\left``/``\\right``
    cannot). A part with none of these places that is still too wide stays one line:
    :func:`rdpsym.report.curve.curve_display` names such parts (``A_1 = ...``)."""
    if expr is None:
        return [""]
    return _break(expr, names, max(8.0, budget - indent), budget)


#: the narrowest room, in units, a head (``\\log\\Bigl(``, ``\\frac{1}{d}``) may leave on its own line for
#: what it encloses; with less, what it encloses begins on the next line
MIN_ROOM = 10.0
#: room for a closing parenthesis at the end of a line
_CLOSE = 1.5


def _break(e: sp.Expr, names: dict, width: float, first: float) -> list[str]:
    """Lines of ``e``: the first within ``first``, the others within ``width``."""
    whole = paper_latex(e, names)
    if visual_width(whole) <= first:
        return [whole]
    breaker = next((_BREAKERS[c] for c in type(e).__mro__ if c in _BREAKERS), None)
    lines = breaker(e, names, width, first) if breaker is not None else None
    return lines if lines and len(lines) > 1 else [whole]


def _pack(groups: list[list[str]], width: float, first: float, joiner: str = "") -> list[str]:
    """Fill lines greedily with groups of pieces: a group's first piece joins the current line when it
    fits, its other pieces begin lines of their own; ``joiner`` begins a line a group starts."""
    lines: list[str] = []
    current = ""
    for group in groups:
        for k, piece in enumerate(group):
            trial = (current + " " + piece).strip()
            if k == 0 and (not current or visual_width(trial) <= (width if lines else first)):
                current = trial
                continue
            if current:
                lines.append(current)
            current = (joiner + piece) if k == 0 and joiner else piece
    if current:
        lines.append(current)
    return lines


def _size(lines: list[str]) -> str:
    """Fixed-size delimiters tall enough for what they enclose (display fractions need bigg)."""
    return "bigg" if any(r"\frac" in line for line in lines) else "Big"


def _enclose(head: str, inner, width: float, first: float, tail: str = "") -> list[str] | None:
    """``head(...)tail`` over lines, the enclosed part from ``inner(width, first)``: on the head's line
    when it leaves :data:`MIN_ROOM`, else from the next line."""
    used = visual_width(head) + 1.5
    room = first - used - _CLOSE
    # continued lines all begin at one indentation: only the closing parentheses, which gather on the
    # last line, take room from them
    rest = width - _CLOSE - visual_width(tail) / 2
    lines = inner(rest, room) if room >= MIN_ROOM else None
    alone = lines is None or visual_width(lines[0]) > room  # what it encloses then begins a line
    if alone:
        lines = inner(rest, rest)
    size = _size(lines)
    out = ([head + "\\%sl(" % size] + lines) if alone else [head + "\\%sl(" % size + lines[0]] + lines[1:]
    out[-1] += "\\%sr)" % size + tail
    return out


def _break_sum(e: sp.Expr, names: dict, width: float, first: float) -> list[str]:
    groups = []
    for k, (sign, body) in enumerate(_terms(e)):
        lines = _break(body, names, width, (first if k == 0 else width) - (2 if sign else 0))
        groups.append([sign + lines[0]] + lines[1:])
    return _pack(groups, width, first)


def _break_product(e: sp.Expr, names: dict, width: float, first: float) -> list[str] | None:
    if e.could_extract_minus_sign():
        lines = _break(-e, names, width, first - 1.5)
        return ["- " + lines[0]] + lines[1:]
    log = _single_log(e)
    if log is not None:
        rest = sp.Mul(*[f for f in e.args if f is not log])
        return _enclose(_prefactor(rest, names) + r"\log", lambda w, f: _break(log.args[0], names, w, f), width, first)
    num, den = _quotient(e)
    if den != 1:
        head = r"\frac{1}{%s} " % _plain(den, names)
        if visual_width(head) <= first - MIN_ROOM:
            return _enclose(head, lambda w, f: _break(num, names, w, f), width, first)
    groups = []
    factors = _factors(e)
    if len(factors) > 1 and factors[0].is_Mul and visual_width(_plain(factors[0], names)) > width - 2:
        coeff, tail = factors[0].as_coeff_Mul()  # a coefficient too wide for a line: its own factors
        factors = ([coeff] if coeff != 1 else []) + list(sp.Mul.make_args(tail)) + factors[1:]
    for f in factors:
        tex = _exp_latex(f, names) if isinstance(f, sp.exp) else _plain(f, names)
        if f.is_Add:
            tex = r"\left(%s\right)" % tex
            groups.append([tex] if visual_width(tex) <= width - 2 else
                          _enclose("", lambda w, fw, f=f: _break(f, names, w, fw), width, width - 2))
        else:
            groups.append([tex] if visual_width(tex) <= width - 2 else _break(f, names, width, width - 2))
    return _pack(groups, width, first, joiner=r"\times ")


def _quotient(e: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """(numerator, denominator) of a product, the denominator gathered from its powers with negative
    exponents other than exponentials (e^{-x} stays a factor, as a paper writes it)."""
    num, den = [], []
    for f in sp.Mul.make_args(e):
        if f.is_Pow and f.exp.is_negative:
            den.append(sp.Pow(f.base, -f.exp))
        else:
            num.append(f)
    return sp.Mul(*num), sp.Mul(*den)


def _factors(e: sp.Expr) -> list[sp.Expr]:
    """The factors of a product as a paper groups them: everything but the exponentials as one factor
    (``\\frac{\\alpha}{2 \\alpha - 1}``, Table II's coefficient) when it fits, then each exponential; a
    coefficient too wide is split into its own factors."""
    factors = sp.Mul.make_args(e)
    exps = [f for f in factors if isinstance(f, sp.exp)]
    rest = sp.Mul(*[f for f in factors if not isinstance(f, sp.exp)])
    if rest == 1:
        return exps
    if not exps or not isinstance(rest, sp.Mul):
        coeff, tail = rest.as_coeff_Mul()
        spread = ([coeff] if coeff != 1 else []) + list(sp.Mul.make_args(tail))
        return spread + exps if not exps else [rest] + exps
    return [rest] + exps


def _break_extremum(e: sp.Expr, names: dict, width: float, first: float) -> list[str]:
    """max(a, b, ...) with each argument on lines of its own."""
    name = r"\max" if isinstance(e, sp.Max) else r"\min"
    head = visual_width(name) + 2
    args = [_break(a, names, width - _CLOSE, (first - head if k == 0 else width) - 1) for k, a in enumerate(e.args)]
    lines = []
    for k, arg in enumerate(args):
        lines += arg[:-1] + [arg[-1] + ("," if k < len(args) - 1 else "")]
    size = _size(lines)
    lines[0] = name + "\\%sl(" % size + lines[0]
    lines[-1] += "\\%sr)" % size
    return lines


def _break_function(e: sp.Expr, names: dict, width: float, first: float) -> list[str] | None:
    """f(u) with its argument over lines: log, exp (written exp(...) then: a superscript cannot break),
    tanh, ... ; a function of several arguments is left whole."""
    if len(e.args) != 1:
        return None
    name = e.func.__name__
    head = ("\\" + name) if name in _OPERATORS else r"\operatorname{%s}" % name
    return _enclose(head, lambda w, f: _break(e.args[0], names, w, f), width, first)


def _break_power(e: sp.Expr, names: dict, width: float, first: float) -> list[str] | None:
    """(base)^{exponent} with its base (a sum or product) over lines."""
    if e.exp.is_negative or e.base.is_Atom:
        return None
    tail = "^{%s}" % _plain(e.exp, names)
    return _enclose("", lambda w, f: _break(e.base, names, w, f), width, first, tail)


#: LaTeX's own operator names (``\\log``, ``\\tanh``): a function of another name is an \\operatorname
_OPERATORS = {"log", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "coth", "arcsin", "arccos", "arctan",
              "max", "min"}
#: how each kind of node breaks (the first class of a node's MRO found here)
_BREAKERS = {sp.Add: _break_sum, sp.Mul: _break_product, sp.Max: _break_extremum, sp.Min: _break_extremum,
             sp.Pow: _break_power, sp.Function: _break_function}
