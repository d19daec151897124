"""The LaTeX report on one mechanism: a fragment a paper can ``\\input``, or a standalone document.

The fragment is a statement in a theorem-style environment (``rdpsymstatement``, declared by the
fragment itself unless the paper already has it): the mechanism, its parameters by their own LaTeX
symbols, "(alpha, epsilon(alpha))-RDP" (Rényi differential privacy, Mironov 2017, arXiv:1702.07476 v3,
Def. 4), and the curve (:func:`rdpsym.report.curve.curve_display`: a ``cases`` display, or rows when
the formulas are long) with the finiteness conditions and the special orders; the citation closes it.
The mechanism's texts (its title, the meanings of its parameters, the labels of its pairs) are set as
prose with their formulas in mathematics (:mod:`rdpsym.report.prose`). Where the curve is a maximum
over several pairs or directions, the statement names them, the symmetries the engine established and
the candidates shown equal (:mod:`rdpsym.report.branches`). A result without a general closed form says
so and shows only what was derived exactly.
"""

from __future__ import annotations

import re

import sympy as sp

from .. import printing
from ..derive.result import DivergenceResult, Status
from ..specify.mechanism import Mechanism
from .branches import directions_derived, symmetries
from .curve import CurveDisplay, curve_display
from .derivation import derivation_latex
from .latex import escape_text, latex_document, latex_names
from .prose import noun_phrase, prose

__all__ = ["latex_report", "statement_latex", "provenance_latex"]

_ENV = "rdpsymstatement"
_DECLARE = r"\ifcsname %s\endcsname\else\newtheorem{%s}{Proposition}\fi" % (_ENV, _ENV)


#: the longest theorem head, in characters, that fits a column beside "Proposition 1" (a head is one
#: unbreakable box)
HEAD_CHARACTERS = 40


def _head(title: str) -> str:
    """The title in the theorem head: without its parenthetical remarks when it is long (the body
    names the mechanism by its whole title)."""
    if len(title) <= HEAD_CHARACTERS:
        return title
    return re.sub(r"\s*\([^()]*\)", "", title).strip() or title


def _label(m: Mechanism) -> str:
    return "".join(c if c.isalnum() else "-" for c in m.name)


def _symbols(m: Mechanism) -> dict[str, str]:
    """A parameter's name -> its LaTeX symbol, for the formulas inside the mechanism's texts."""
    return {p.name: p.latex for p in m.parameters}


def _with_article(meaning: str) -> str:
    return meaning if re.match(r"(?i)(the|a|an)\s", meaning) else "the " + meaning


def _parameters(m: Mechanism, names: dict) -> str:
    """"$\\lambda \\in (0, \\infty)$ be the scale of the Laplace noise and $\\Delta \\in ...$ be ..."."""
    symbols = _symbols(m)
    parts = []
    for p in m.parameters:
        item = r"$%s \in %s$" % (p.latex, printing.latex(p.domain, symbol_names=names))
        if p.meaning:
            item += " be " + prose(_with_article(p.meaning), symbols)
        parts.append(item)
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else (parts[0] if parts else "")


def _subject(m: Mechanism, names: dict) -> str:
    """"Let $M$ denote the Laplace mechanism and let $\\lambda \\in (0, \\infty)$ be the scale ...." """
    what = prose(noun_phrase(m.title or m.name, m.description), _symbols(m))
    params = _parameters(m, names)
    return rf"Let $M$ denote {what}" + (f" and let {params}." if params else ".")


def _pairs(m: Mechanism) -> str:
    """The labels of the pairs as prose, each in parentheses when there are several (a label is a list)."""
    labels = [prose(p.label, _symbols(m)) for p in m.pairs]
    if len(labels) == 1:
        return labels[0]
    labels = [f"({label})" for label in labels]
    return ", ".join(labels[:-1]) + " and " + labels[-1]


def _maximum(m: Mechanism, r: DivergenceResult, shown: CurveDisplay) -> str:
    """What the maximum over adjacent pairs and directions came to, when there was one: the pairs, the
    symmetries the engine established, and whether the candidates left are one expression (shown equal
    here, :mod:`rdpsym.report.branches`, or equal or below by the engine's simplification)."""
    derived = directions_derived(r, m)
    if derived is None or derived < 2:
        return ""
    several = len(m.pairs) > 1
    out = [(r"Here $\varepsilon(\alpha)$ is the largest of the divergences of the adjacent pairs %s, each in both"
            r" directions (Mironov 2017, Def.~4)." if several else
            r"Here $\varepsilon(\alpha)$ is the larger of the divergences of the adjacent pair %s in its two"
            r" directions (Mironov 2017, Def.~4).") % _pairs(m)]
    x = printing.latex(m.variable)
    for pair, centre in symmetries(r, m):
        which = f" for ({prose(pair.label, _symbols(m))})" if several else ""
        out.append(rf"The reflection ${x} \mapsto {printing.latex(centre)} - {x}$ maps the support onto itself and"
                   rf" $M(D)$ onto $M(D')${which}, so its two directions have the same divergence.")
    general = shown.collapses[0] if shown.collapses else None
    single = general is not None and not isinstance(general.expr, (sp.Max, sp.Min))
    dropped = r.expr is not None and (len(r.expr.args) if isinstance(r.expr, sp.Max) else 1) < derived
    if single and dropped:
        out.append("Each of these divergences is equal to or below the one expression shown (shown symbolically"
                   " by rdpsym).")
    elif single and shown.merged:
        out.append("These divergences are equal (shown symbolically by rdpsym), so one expression is shown.")
    elif shown.merged:
        out.append("Candidates of the maximum shown equal (symbolically, by rdpsym) appear once.")
    return " ".join(out)


def statement_latex(m: Mechanism, r: DivergenceResult) -> str:
    """The statement of ``m``'s RDP curve as a LaTeX fragment (see the module docstring)."""
    title = prose(_head(m.title or m.name), _symbols(m))
    # break points inside long tokens of a citation (arXiv:1602.06028), which TeX cannot hyphenate
    cite = "; ".join(escape_text(ref).replace(":", r":\allowbreak{}") for ref in m.references) or "derived by rdpsym"
    names = latex_names(m.parameters, r.alpha)
    subject = _subject(m, names)
    rdp = r"$(\alpha, \varepsilon(\alpha))$-R\'{e}nyi differential privacy (Mironov 2017, Def.~4)"
    what = (rf"Then $M$ satisfies {rdp} for every order $\alpha > 0$, where $\varepsilon(\alpha)$, the largest"
            r" R\'{e}nyi divergence $D_{\alpha}(M(D) \| M(D'))$ over adjacent inputs $D, D'$, is")
    out = [f"% rdpsym: the RDP of {m.name}, to \\input into a paper (needs \\usepackage{{amsmath,amssymb}})",
           _DECLARE, rf"\begin{{{_ENV}}}[{title}]", rf"\label{{rdpsym:{_label(m)}}}",
           # room to stretch a line rather than overfill it (a long theorem head is one unbreakable box)
           r"\setlength{\emergencystretch}{3em}%"]
    shown = None
    if r.expr is not None and r.status in (Status.CLOSED_FORM, Status.BOUND):
        bound = r.status is Status.BOUND
        shown = curve_display(r, m.parameters, relation=r"\le" if bound else "=")
        out.append(f"{subject} {what}" + (" at most (an upper bound, not the exact value)" if bound else "") + shown.lead)
        out.append(shown.latex)
    elif r.expr is not None and r.status is Status.LOWER_BOUND:
        shown = curve_display(r, m.parameters, relation=r"\ge")
        out.append(rf"{subject} For the adjacent inputs $D, D'$ given by {_pairs(m)} (some of the adjacent inputs of"
                   r" $M$, not shown to be the worst case), $\varepsilon(\alpha) = D_{\alpha}(M(D) \| M(D'))$ is as"
                   r" follows; the R\'{e}nyi differential privacy of $M$ is \emph{at least} this (a lower bound,"
                   r" not a guarantee)" + shown.lead)
        out.append(shown.latex)
    else:
        # the engine's reason (sympy notation) as a comment for the author, typeset in the provenance
        out += ["% rdpsym's reason: " + line for line in (r.reason or str(r.status)).splitlines()]
        out.append(f"{subject} Then $M$ satisfies {rdp} with $\\varepsilon(\\alpha)$ the largest R\\'{{e}}nyi"
                   r" divergence over adjacent inputs; \emph{no closed form of $\varepsilon(\alpha)$ was derived}"
                   f" for general $\\alpha$ (status: {escape_text(str(r.status).replace('_', ' '))}). Its values at"
                   " each order come from certified numerical integration only.")
        if r.special_orders():
            shown = curve_display(r, m.parameters)
            out.append(r"The orders derived exactly are" + (shown.lead if shown.rows else " as follows:"))
            out.append(shown.latex)
    if shown is not None and r.expr is not None:
        note = _maximum(m, r, shown)
        if note:
            out.append(note)
    # the citation closes the statement (a theorem head is one unbreakable box: a long one overflows)
    out.append(rf"\emph{{Source:}} {cite}.")
    out.append(rf"\end{{{_ENV}}}")
    return "\n".join(out) + "\n"


def _breakable(text: str) -> str:
    """Escaped text with break points after the separators of sympy-style strings (so a long log line
    wraps instead of running into the margin)."""
    out = escape_text(text)
    for sep in (",", "*", "+", "(", ";", "/", "="):
        out = out.replace(sep, sep + r"\hspace{0pt}")
    return out


def provenance_latex(r: DivergenceResult) -> str:
    """The provenance log (inputs, each step with its time, checks, versions) as a small list."""
    p = r.provenance
    items = [f"{escape_text(k)}: {_breakable(v)}" for k, v in p.inputs]
    if r.reason:
        items.insert(0, f"status {escape_text(str(r.status))}: {_breakable(r.reason)}")
    items += [rf"{_breakable(s.name)} ({s.seconds:.3f}\,s): {_breakable(s.detail)}" for s in p.steps]
    items += [f"verification: {_breakable(str(v))}" for v in p.verifications]
    if p.versions:
        items.append("versions: " + escape_text(", ".join(f"{k} {v}" for k, v in p.versions)))
    body = "\n".join(r"\item " + i for i in items) or r"\item none recorded"
    return "{\\small\\raggedright\n\\begin{itemize}\n" + body + "\n\\end{itemize}\n}"


def latex_report(m: Mechanism, r: DivergenceResult, standalone: bool = False, derivation: bool = False,
                 provenance: bool = False) -> str:
    """The statement, with the derivation and the provenance log when asked; a standalone document
    puts the provenance in an appendix."""
    parts = [statement_latex(m, r)]
    if derivation:
        head = r"\subsection*{Derivation}" if standalone else r"\paragraph{Derivation.}"
        parts += [head, derivation_latex(r, m.parameters, escape_text), ""]
    if provenance:
        if standalone:
            parts += [r"\appendix", r"\section{Provenance of the derivation}"]
        else:
            parts += ["% the provenance log: move it to an appendix", r"\paragraph{Provenance of the derivation.}"]
        parts += [provenance_latex(r), ""]
    body = "\n".join(parts)
    if not standalone:
        return body
    refs = [r"\subsection*{References}", r"\begin{itemize}"]
    refs += [r"\item " + escape_text(x) for x in m.references] or [r"\item none given"]
    refs.append(r"\end{itemize}")
    if provenance:  # the references before the appendix
        i = body.index(r"\appendix")
        body = body[:i] + "\n".join(refs) + "\n" + body[i:]
    else:
        body += "\n" + "\n".join(refs)
    title = prose(m.title or m.name, _symbols(m)) + r": R\'{e}nyi differential privacy"
    return latex_document(body, title=title)
