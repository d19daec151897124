"""The derivation of a result as mathematics a reviewer can follow, read from its provenance log.

The engine records, with each step of a derivation, the formulas of that step (see
:func:`rdpsym.derive.general_order.regime_integral` and :func:`rdpsym.derive.special_orders.kl_divergence`):
for each piece of the support ``(lo, hi, P, Q, value, discrete)``, for the sum ``(Z, D_alpha)``, and for
a removable order its limit. This module renders those records: the pieces of the support, each
integral ∫ P^alpha Q^(1-alpha) with its value, the sum Z(alpha), the divergence (1/(alpha-1)) log Z in
its simplified form (Mironov 2017, arXiv:1702.07476 v3, Def. 3), the KL pieces ∫ P log(P/Q), and the
limits alpha -> 1, alpha -> oo and at removable orders. A step without a record (an older cached
derivation, or a path that records none) is left out, and the text says so: nothing is made up.
"""

from __future__ import annotations

import re
from typing import Sequence

import sympy as sp

from .. import printing
from .._timeout import StepTimeout, time_limit
from ..derive.result import DivergenceResult, Step, StepName
from ..specify.params import Parameter
from .latex import latex_names
from .paper import LINE_BUDGET, broken_lines, display_form, paper_latex, visual_width

__all__ = ["derivation_latex"]

_ABOVE = "(alpha > 1)"


def _kind(step: Step) -> tuple[str, str]:
    """(pair label, kind of step) from a step's name ``"<label>: <kind>"``."""
    label, _, kind = step.name.rpartition(": ")
    return label, kind


def _shorter(e: sp.Expr, seconds: float = 2.0) -> sp.Expr:
    """``sympy.simplify(e)`` if it finishes within ``seconds`` and is smaller; else ``e`` (display only)."""
    try:
        with time_limit(seconds):
            s = sp.simplify(e)
    except (StepTimeout, Exception):  # noqa: BLE001 - a presentation step: the unsimplified value stands
        return e
    return s if sp.count_ops(s) < sp.count_ops(e) else e


def _tex(e: sp.Expr, names: dict) -> str:
    return printing.latex(e, symbol_names=names, ln_notation=False)


def _rhs(e: sp.Expr, names: dict, parameters, order, lhs: str = "") -> list[str]:
    """The right side of ``lhs = e`` as lines that fit beside ``lhs``."""
    budget = max(24.0, LINE_BUDGET - visual_width(lhs) - 4)
    return broken_lines(display_form(e, parameters, order), names, budget)


def _align(rows: list[tuple[str, list[str]]]) -> str:
    """An ``align*`` block of ``lhs &= rhs`` rows, a long right side continued on indented lines."""
    out = []
    for lhs, lines in rows:
        if out:
            out[-1] += r"\\[0.6ex]"  # room between rows: nested fractions must not touch
        out.append(f"{lhs} &= {lines[0]}")
        out += [rf"&\quad {line}" for line in lines[1:]]
    return "\\begin{align*}\n" + " \\\\\n".join(out) + "\n\\end{align*}"


def _integral(lo, hi, integrand: str, discrete: bool, names) -> str:
    if discrete:
        return rf"\sum_{{x={_tex(lo, names)}}}^{{{_tex(hi, names)}}} {integrand}"
    return rf"\int_{{{_tex(lo, names)}}}^{{{_tex(hi, names)}}} {integrand} \, dx"


def _integrand(lo, hi, P, Q, discrete: bool, names: dict, budget: float) -> list[str]:
    """The integral of (P)^alpha (Q)^(1-alpha) over a piece, as lines within ``budget``: on one line when
    it fits, else the factor Q^(1-alpha) on a line of its own, and a density too wide for a line broken
    inside its parentheses (:func:`rdpsym.report.paper.broken_lines`)."""
    whole = _integral(lo, hi, r"\left(%s\right)^{\alpha} \left(%s\right)^{1 - \alpha}"
                      % (paper_latex(P, names), paper_latex(Q, names)), discrete, names)
    if visual_width(whole) <= budget:
        return [whole]
    head = _integral(lo, hi, "", discrete, names).replace(r" \, dx", "")
    tail = r" \, dx" if not discrete else ""

    def power(density, exponent, lead):
        lines = broken_lines(density, names, max(24.0, budget - visual_width(lead) - 8))
        size = "bigg" if any(r"\frac" in line for line in lines) else "Big"
        lines[0] = lead + r"\%sl(" % size + lines[0]
        lines[-1] += r"\%sr)^{%s}" % (size, exponent)
        return lines

    q = power(Q, r"1 - \alpha", r"\times ")
    q[-1] += tail
    return power(P, r"\alpha", head + " ") + q


def _pieces(lo_hi: list[tuple], names: dict) -> str:
    def one(lo, hi, discrete):
        lo, hi = _tex(lo, names), _tex(hi, names)
        if discrete:
            return rf"\{{{lo}\}}" if lo == hi else rf"\{{{lo}, \dots, {hi}\}}"
        return f"({lo}, {hi})"
    return "$, $".join(one(*x) for x in lo_hi)


def _check(detail: str) -> str:
    """The kind of check a limit step records ("symbolic check", "numeric, 100 digits ..."), or the
    detail itself when the check did not pass (it is then quoted, never dressed up)."""
    m = re.search(r"\(([^()]*check[^()]*)\)\s*$", detail)
    if detail.startswith("lim") and m:
        return m.group(1).replace("_", " ")
    return "not confirmed: " + detail


def _group(result: DivergenceResult, label: str, steps: list[Step], names: dict, parameters, esc) -> list[str]:
    a = result.alpha
    out = []
    pieces = [(s, s.expr) for s in steps if _kind(s)[1].startswith("piece ") and s.detail.startswith("alpha > 1")
              and isinstance(s.expr, sp.Tuple)]
    total = next((s.expr for s in steps if _kind(s)[1] == "sum " + _ABOVE and isinstance(s.expr, sp.Tuple)), None)
    if not pieces or total is None:
        out.append("The general order of this pair was not derived through recorded integrals"
                   " (see the provenance).")
        return out
    spans = [(lo, hi, bool(d)) for _, (lo, hi, _p, _q, _v, d) in pieces]
    out.append(r"The support splits into the pieces $%s$, on each of which $P$ and $Q$ are smooth. For"
               r" $\alpha > 1$, the integral $\int P^{\alpha} Q^{1-\alpha}$ on each piece is:" % _pieces(spans, names))
    rows = []
    for _, (lo, hi, P, Q, value, discrete) in pieces:
        if discrete and lo == hi:
            lhs = r"x = %s:\quad P(x)^{\alpha} Q(x)^{1-\alpha}" % _tex(lo, names)
            rows.append((lhs, _rhs(_shorter(value), names, parameters, a, lhs)))
            continue
        lhs = _integral(lo, hi, r"P^{\alpha} Q^{1-\alpha}", discrete, names)
        rows.append((lhs, _integrand(lo, hi, P, Q, discrete, names, LINE_BUDGET - visual_width(lhs) - 4)))
        rows.append(("", _rhs(_shorter(value), names, parameters, a, lhs)))
    out.append(_align(rows))
    Z, D = total
    out.append(r"Their sum $Z(\alpha)$, and the divergence it gives (Mironov 2017, Def. 3), simplified:")
    lhs = r"D_{\alpha}(P \| Q) = \frac{1}{\alpha - 1} \log Z(\alpha)"
    rows = [("Z(\\alpha)", _rhs(_shorter(Z), names, parameters, a, lhs)), (lhs, _rhs(D, names, parameters, a, lhs))]
    out.append(_align(rows))
    regimes = next((s for s in steps if _kind(s)[1] == "regimes"), None)
    if regimes is not None:
        how = re.search(r"\(([^()]*)\)\s*$", regimes.detail)
        if "agree" in regimes.detail:
            out.append(r"The same computation for $0 < \alpha < 1$ gives a form equal to this one (%s)."
                       % esc(how.group(1) if how else "checked"))
        else:
            out.append(r"For $0 < \alpha < 1$ the computation gives another form: the result is piecewise in $\alpha$.")
    kl = [s.expr for s in steps if _kind(s)[1].startswith("KL piece ") and isinstance(s.expr, sp.Tuple)]
    if kl:
        out.append(r"At $\alpha = 1$, the KL divergence $D_1(P \| Q) = \int P \log(P/Q)$, piece by piece:")
        rows = []
        for lo, hi, P, Q, value, discrete in kl:
            lhs = _integral(lo, hi, r"P \log\frac{P}{Q}", bool(discrete), names)
            rows.append((lhs, _rhs(_shorter(value), names, parameters, a, lhs)))
        if len(kl) > 1 and result.kl is not None and len(derived_pairs(result)) == 1:
            rows.append((r"D_1(P \| Q)", _rhs(result.kl, names, parameters, a, lhs)))
        out.append(_align(rows))
    return out


def derived_pairs(result: DivergenceResult) -> list[tuple[str, list[Step]]]:
    """The pairs whose general order was derived through recorded integrals: (label, their steps)."""
    groups: dict[str, list[Step]] = {}
    for s in result.provenance.steps:
        groups.setdefault(_kind(s)[0], []).append(s)
    return [(label, g) for label, g in groups.items() if any(_kind(s)[1] == "sum " + _ABOVE for s in g)]


def derivation_latex(result: DivergenceResult, parameters: Sequence[Parameter], esc) -> str:
    """The derivation of ``result`` as LaTeX paragraphs and ``align*`` displays (``esc`` escapes text).

    One part per derived adjacent pair with recorded integrals, then the special orders and the limit
    checks from the provenance. A result without recorded integrals gets a sentence saying so."""
    names = latex_names(result.parameters(parameters), result.alpha)
    out = [r"By definition (Mironov 2017, Def.~3), for $\alpha \in (0, 1) \cup (1, \infty)$,"
           r"\[ D_{\alpha}(P \| Q) = \frac{1}{\alpha - 1} \log \int P(x)^{\alpha} Q(x)^{1-\alpha} \, dx, \]"
           r"and $\varepsilon(\alpha)$ is its largest value over adjacent inputs (Def.~4)."]
    steps = result.provenance.steps
    if any(StepName.SUPREMUM_OVER_T in (_kind(s)[1], s.name) for s in steps):
        out.append("The divergence is non-decreasing in the size of the shift between adjacent outputs, so the"
                   " supremum is attained at the largest shift (the argument is in the provenance); $P$ and $Q$"
                   " below are that pair.")
    derived = derived_pairs(result)
    if not derived:
        out.append("No integral of this derivation was recorded in closed form, so there is no derivation of the"
                   " general order to show (the engine's reason is in the statement and the provenance).")
    for k, (label, g) in enumerate(derived):
        if len(derived) > 1:
            out.append(r"\paragraph{Adjacent pair %d of %d.}" % (k + 1, len(derived)))
        out += _group(result, label, g, names, parameters, esc)
    a = result.alpha
    rows = []
    if result.max_divergence is not None:
        lhs = r"D_{\infty}(P \| Q) = \operatorname*{ess\,sup}_x \log\frac{P(x)}{Q(x)}"
        rows.append((lhs, _rhs(result.max_divergence, names, parameters, a, lhs)))
    for p in result.exceptional_points:
        lhs = r"D_{%s}(P \| Q) = \lim_{\alpha \to %s} D_{\alpha}(P \| Q)" % (printing.latex(p.alpha), printing.latex(p.alpha))
        rows.append((lhs, _rhs(p.value, names, parameters, a, lhs)))
    if rows:
        out.append(r"The orders the general form leaves out:")
        out.append(_align(rows))
    last = {}  # the final verdict of each check of each pair (a symbolic attempt may precede a numeric one)
    for s in steps:
        label, kind = _kind(s)
        if kind in ("KL limit check", "D_inf limit check"):
            last[(label, kind)] = s
    checks = []
    for (_, kind), s in last.items():
        lhs = r"$\lim_{\alpha \to 1} D_{\alpha} = D_1$" if kind == "KL limit check" else \
            r"$\lim_{\alpha \to \infty} D_{\alpha} = D_{\infty}$"
        checks.append(f"{lhs} ({esc(_check(s.detail))})")
    if checks:
        out.append("Limits checked: " + "; ".join(dict.fromkeys(checks)) + ".")
    return "\n\n".join(out)
