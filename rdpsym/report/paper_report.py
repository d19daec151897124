"""The LaTeX report on one mechanism: a fragment a paper can ``\\input``, or a standalone document.

The fragment is a statement in a theorem-style environment (``rdpsymstatement``, declared by the
fragment itself unless the paper already has it): the mechanism, its parameters by their own LaTeX
symbols, "(alpha, epsilon(alpha))-RDP" (Rényi differential privacy, Mironov 2017, arXiv:1702.07476 v3,
Def. 4), and the curve as one ``cases`` display (:func:`rdpsym.report.paper.cases_display`) with the
finiteness conditions and the special orders; the citation is the environment's optional argument.
A result without a general closed form says so and shows only what was derived exactly.
"""

from __future__ import annotations

import sympy as sp

from ..derive.result import DivergenceResult, Status
from ..specify.mechanism import Mechanism
from .derivation import derivation_latex
from .latex import escape_text, latex_document
from .paper import cases_display

__all__ = ["latex_report", "statement_latex", "provenance_latex"]

_ENV = "rdpsymstatement"
_DECLARE = r"\ifcsname %s\endcsname\else\newtheorem{%s}{Proposition}\fi" % (_ENV, _ENV)


def _label(m: Mechanism) -> str:
    return "".join(c if c.isalnum() else "-" for c in m.name)


def _subject(m: Mechanism) -> str:
    """"Let lambda in (0, oo) (the scale) and .... Then \\emph{Laplace mechanism}" (the title as a name, so
    "Randomized response" and "Laplace mechanism" read alike), or just the name without parameters."""
    title = r"\emph{%s}" % escape_text(m.title or m.name)
    parts = []
    for p in m.parameters:
        meaning = f" ({escape_text(p.meaning)})" if p.meaning else ""
        parts.append(rf"${p.latex} \in {sp.latex(p.domain)}${meaning}")
    if not parts:
        return title
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"Let {listed}. Then {title}"


def statement_latex(m: Mechanism, r: DivergenceResult) -> str:
    """The statement of ``m``'s RDP curve as a LaTeX fragment (see the module docstring)."""
    title = escape_text(m.title or m.name)
    # break points inside long tokens of a citation (arXiv:1602.06028), which TeX cannot hyphenate
    cite = "; ".join(escape_text(ref).replace(":", r":\allowbreak{}") for ref in m.references) or "derived by rdpsym"
    subject = _subject(m)
    what = (r"satisfies $(\alpha, \varepsilon(\alpha))$-R\'{e}nyi differential privacy (Mironov 2017, Def.~4)"
            r" for every order $\alpha > 0$, where $\varepsilon(\alpha)$, the largest R\'{e}nyi divergence"
            r" $D_{\alpha}(M(D) \| M(D'))$ over adjacent inputs $D, D'$, is")
    out = [f"% rdpsym: the RDP of {m.name}, to \\input into a paper (needs \\usepackage{{amsmath,amssymb}})",
           _DECLARE, rf"\begin{{{_ENV}}}[{title}]", rf"\label{{rdpsym:{_label(m)}}}"]
    if r.expr is not None and r.status in (Status.CLOSED_FORM, Status.BOUND):
        bound = r.status is Status.BOUND
        out.append(f"{subject} {what}"
                   + (" at most (an upper bound, not the exact value):" if bound else ":"))
        lhs = r"\varepsilon(\alpha) \le" if bound else r"\varepsilon(\alpha)"
        out += [r"\[", cases_display(r, m.parameters, lhs=lhs), r"\]"]
    elif r.expr is not None and r.status is Status.LOWER_BOUND:
        pairs = escape_text("; ".join(p.label for p in m.pairs))
        out.append(rf"For the neighbouring inputs {pairs} (some of those of {subject}, not shown to be the worst"
                   r" case), $\varepsilon(\alpha) = D_{\alpha}(M(D) \| M(D'))$ is as follows; the R\'{e}nyi"
                   r" differential privacy of the mechanism is \emph{at least} this (a lower bound, not a"
                   r" guarantee):")
        out += [r"\[", cases_display(r, m.parameters, lhs=r"\varepsilon(\alpha) \ge"), r"\]"]
    else:
        # the engine's reason (sympy notation) as a comment for the author, typeset in the provenance
        out += ["% rdpsym's reason: " + line for line in (r.reason or str(r.status)).splitlines()]
        out.append(f"{subject} satisfies"
                   r" $(\alpha, \varepsilon(\alpha))$-R\'{e}nyi differential privacy (Mironov 2017, Def.~4)"
                   r" with $\varepsilon(\alpha)$ the largest R\'{e}nyi divergence over adjacent inputs;"
                   r" \emph{no closed form of $\varepsilon(\alpha)$ was derived} for general $\alpha$"
                   f" (status: {escape_text(str(r.status).replace('_', ' '))}). Its values at each order"
                   " come from certified numerical integration only.")
        if r.special_orders():
            out.append(r"The orders derived exactly:")
            out += [r"\[", cases_display(r, m.parameters), r"\]"]
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
    title = escape_text(m.title or m.name) + r": R\'{e}nyi differential privacy"
    return latex_document(body, title=title)
