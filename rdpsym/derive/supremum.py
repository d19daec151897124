r"""What the supremum of a divergence over a family of adjacent pairs is made of, as data.

.. math:: \varepsilon(\alpha) = \sup_{t \in T} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr)
   \qquad \text{(Mironov 2017, arXiv:1702.07476 v3, Def. 4, over all neighbouring inputs)}

Two arguments take it: over an interval of scalar shifts (:mod:`.adjacency`, by monotonicity in ``|t|``)
and over a ball of shift vectors (:mod:`.balls`, by the ball's geometry). Both answer with a
:class:`FamilyAnalysis`, derive the pairs through a :data:`PairDeriver`, and, where the supremum is not
shown, stand for it by :func:`not_shown_analysis`: one ``numeric_only`` placeholder whose values come
from the numeric maximisation (:func:`rdpsym.numeric.families.supremum_over_family`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import sympy as sp

from ..specify.adjacency import AdjacentFamily, AdjacentPair
from .result import DivergenceResult, Provenance, Status, Step, StepName, expired_in
from .worst import NOT_SHOWN  # the reason of a family whose supremum is left to the numerics

__all__ = ["FamilyAnalysis", "PairDeriver", "not_shown_result", "not_shown_analysis"]

#: ``derive_pair(P, Q, label, params) -> (results, steps)``: one pair derived, both directions, as
#: :func:`rdpsym.derive.mechanism_rdp.rdp` does for a listed pair
PairDeriver = Callable[[sp.Expr, sp.Expr, str, tuple], tuple[list, list]]


@dataclass(frozen=True)
class FamilyAnalysis:
    """What :func:`rdpsym.derive.adjacency.family_supremum` found for one family.

    ``results``: divergence results to take the maximum of (at the supremum when ``shown``, else one
    ``numeric_only`` placeholder); ``members``: the concrete adjacent pairs those results are the
    divergences of (when ``shown``); ``steps``: the provenance of the supremum; ``reason``: why not shown.
    """

    family: AdjacentFamily
    shown: bool
    results: tuple[DivergenceResult, ...]
    members: tuple[AdjacentPair, ...] = ()
    steps: tuple[Step, ...] = ()
    reason: str = ""


def not_shown_result(why: str, derived: list[DivergenceResult], label: str) -> DivergenceResult:
    """The result standing for a family's supremum that was not shown (``why``): no expression, the worst
    status of the pairs' results ``derived`` (at best numeric only) and their steps."""
    worst = Status.worst([Status.NUMERIC_ONLY] + [r.status for r in derived])
    steps = tuple(replace(s, name=f"{r.label}: {s.name}") for r in derived for s in r.provenance.steps)
    first = derived[0].provenance if derived else Provenance()
    return DivergenceResult(expr=None, status=worst, reason=f"{NOT_SHOWN}: {why}",
                            provenance=Provenance(steps, first.inputs, first.versions, expired=expired_in(derived)),
                            label=label)


def not_shown_analysis(family: AdjacentFamily, why: str, derived: Sequence[DivergenceResult], steps: list[Step],
                       label: str) -> FamilyAnalysis:
    """The analysis of a family whose supremum was not shown: ``steps`` (the provenance so far) closed by
    a step saying ``why``, and one placeholder result (:func:`not_shown_result`) labelled ``label``."""
    steps.append(Step(StepName.SUPREMUM_OVER_T, f"[{family.label}] {NOT_SHOWN}: {why}"))
    return FamilyAnalysis(family, False, (not_shown_result(why, list(derived), label),), (), tuple(steps), why)
