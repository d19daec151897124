"""A report on one mechanism's RDP curve: statement, conditions, special orders, evidence, citations.

Everything in it is generated from the :class:`~rdpsym.derive.result.DivergenceResult` the engine
derives, so the document cannot drift from the derivation. Formats: Markdown (``"md"``) and LaTeX
(``"tex"``: a fragment for a paper, or a standalone document that compiles with ``pdflatex``; see
:mod:`rdpsym.report.paper_report`).
"""

from __future__ import annotations

import sympy as sp

from .. import printing
from ..derive.result import DivergenceResult
from ..specify.mechanism import Mechanism
from .latex import formula, symbol_names
from .markdown import result_markdown

__all__ = ["report", "FORMATS"]

FORMATS = ("md", "tex")


def _evidence(result: DivergenceResult) -> list[str]:
    checks = [f"{s.name}: {s.detail}" for s in result.provenance.steps
              if any(w in s.name for w in ("check", "regimes", "symmetry", "density"))]
    return checks + [str(v) for v in result.provenance.verifications]


def report(mechanism: Mechanism | str, result: DivergenceResult | None = None, fmt: str = "md", *,
           standalone: bool = False, derivation: bool = False, provenance: bool = False) -> str:
    """The report of ``mechanism`` (a Mechanism or a registered name) in format ``fmt`` ("md" or "tex").

    ``result`` defaults to ``rdpsym.rdp(mechanism)``. For ``"tex"``: a fragment to ``\\input`` into a
    paper (a statement with the mechanism's symbols, the ``cases`` display of the curve, the citation;
    it needs ``amsmath`` and ``amssymb``), or with ``standalone`` a complete document (T1 fonts,
    amsmath, amssymb) that compiles with ``pdflatex``. ``derivation`` adds the derivation as mathematics
    (:func:`rdpsym.report.derivation.derivation_latex`); ``provenance`` adds the provenance log (in an
    appendix of a standalone document). Markdown always holds all of it.
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}; got {fmt!r}")
    if isinstance(mechanism, str):
        from .. import mechanisms

        mechanism = mechanisms.get(mechanism)
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism: expected a Mechanism or a registered name, got {type(mechanism).__name__}")
    if result is None:
        from ..derive.mechanism_rdp import rdp

        result = rdp(mechanism)
    if fmt == "md":
        return _markdown(mechanism, result)
    from .paper_report import latex_report

    return latex_report(mechanism, result, standalone=standalone, derivation=derivation, provenance=provenance)


def _markdown(m: Mechanism, r: DivergenceResult) -> str:
    names = symbol_names(r, m.parameters)
    out = [f"# {m.title or m.name}: Rényi differential privacy", ""]
    if m.description:
        out += [m.description, ""]
    out += ["## Statement", "",
            f"The mechanism `{m.name}` satisfies $(\\alpha, \\varepsilon(\\alpha))$-RDP with "
            "$\\varepsilon(\\alpha)$ the maximum of $D_\\alpha(P\\|Q)$ over its adjacent pairs "
            "(Mironov 2017, Def. 4), derived by rdpsym:", "",
            result_markdown(r, m.parameters), "",
            "## Parameters", "", "| name | symbol | domain | meaning |", "|---|---|---|---|"]
    out += [f"| `{p.name}` | ${p.latex}$ | ${printing.latex(p.domain)}$ | {p.meaning} |" for p in m.parameters]
    out += ["", "## Conditions", ""]
    out.append("Finite for every order." if r.conditions is sp.true
               else f"Finite where ${formula(r.conditions, names)}$; $+\\infty$ elsewhere.")
    out += ["", "## Special orders", ""]
    out.append(f"- $\\alpha = 1$: {'$' + formula(r.kl, names) + '$' if r.kl is not None else 'not derived'}")
    out.append(f"- $\\alpha = \\infty$: {'$' + formula(r.max_divergence, names) + '$' if r.max_divergence is not None else 'not derived'}")
    for p in r.exceptional_points:
        out.append(f"- $\\alpha = {formula(p.alpha, names)}$ (removable singularity): ${formula(p.value, names)}$")
    out += ["", "## Verification evidence", ""]
    out += [f"- {e}" for e in _evidence(r)] or ["- none recorded"]
    out += ["", "## Derivation", "", "```", r.provenance.describe(), "```", "", "## References", ""]
    out += [f"- {ref}" for ref in m.references] or ["- none given"]
    return "\n".join(out) + "\n"
