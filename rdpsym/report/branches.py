"""The maximum over adjacent pairs and directions, shown as a paper shows it: equal branches once.

A mechanism's RDP is the largest divergence over its adjacent pairs and both directions of each
(Mironov 2017, arXiv:1702.07476 v3, Def. 4), so a result may be ``Max(D_1, ..., D_n)``. Pairs related by
a symmetry give equal divergences, and a paper writes the maximum once and states the symmetry. Here:

* :func:`collapse_equal_branches` keeps one argument of each ``Max``/``Min`` per class of arguments
  *proved* equal: first compared at points spread over the parameters' domains (a disagreement ends it),
  then their difference is reduced to 0 by identities that hold under the symbols' assumptions
  (factored bases of powers, ``(xy)^a = x^a y^a`` and ``log(xy) = log x + log y`` for positive factors,
  cancelled quotients). Nothing is assumed: arguments not shown equal all stay.
* :func:`symmetries` reads the reflections the engine established (the ``symmetry`` steps of the
  provenance, :func:`rdpsym.derive.mechanism_rdp.reflection_symmetry`): a reflection x -> c - x that
  maps the support onto itself and P onto Q makes both directions of that pair equal.

The proof has a time limit that only guards against a hang (:data:`EQUALITY_SECONDS`, far above the
fraction of a second it takes); when it fires the arguments stay apart and the report says nothing of
their equality.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from .._timeout import StepTimeout, run_with_time_limit
from ..derive.result import DivergenceResult, StepName
from ..specify.adjacency import AdjacentPair
from ..specify.mechanism import Mechanism
from ..specify.params import Parameter
from .paper import _equal_at, _sample_points

__all__ = ["EQUALITY_SECONDS", "Collapse", "collapse_equal_branches", "proved_equal", "symmetries"]

#: a hang guard on each symbolic proof of equality (it takes well under a second when it succeeds)
EQUALITY_SECONDS = 30.0


@dataclass(frozen=True)
class Collapse:
    """What :func:`collapse_equal_branches` did: ``before`` arguments of maxima (and minima), ``after``
    of them kept; ``expr`` the expression with the kept ones."""

    expr: sp.Expr
    before: int
    after: int

    @property
    def merged(self) -> bool:
        return self.after < self.before


def _normal_difference(d: sp.Expr) -> sp.Expr:
    """``d`` reduced by identities valid under the symbols' assumptions (never ``force``): bases of
    powers factored, then split over their factors, exponents of exponents joined, logs of products
    split and their arguments cancelled; 0 when ``d`` is identically 0 and the identities show it."""
    for _ in range(2):
        d = d.replace(lambda e: e.is_Pow and not e.exp.is_Integer, lambda e: sp.Pow(sp.factor(e.base), e.exp))
        d = sp.powdenest(sp.expand_power_base(d))
        d = sp.expand_log(d)
        d = d.replace(lambda e: isinstance(e, sp.log), lambda e: sp.log(sp.factor(sp.cancel(sp.expand(e.args[0])))))
        d = sp.expand(sp.expand_log(d))
        if d == 0:
            return d
    return sp.simplify(d)


def proved_equal(a: sp.Expr, b: sp.Expr, parameters: Sequence[Parameter], order: sp.Symbol) -> bool:
    """True when ``a - b`` is shown to be identically 0 (equal at sample points first, then reduced
    to 0 symbolically within :data:`EQUALITY_SECONDS`); False when not shown."""
    if a == b:
        return True
    if not _equal_at(a, b, _sample_points(a - b, parameters, order)):
        return False
    try:
        return run_with_time_limit(_normal_difference, a - b, seconds=EQUALITY_SECONDS) == 0
    except StepTimeout:
        return False
    except Exception:  # noqa: BLE001 - a step sympy cannot do shows nothing: the branches stay apart
        return False


def collapse_equal_branches(expr: sp.Expr | None, parameters: Sequence[Parameter], order: sp.Symbol) -> Collapse:
    """``expr`` with each ``Max``/``Min`` keeping one argument of every class of arguments
    :func:`proved_equal` (the shortest of the class), and the count of arguments before and after."""
    counts = [0, 0]

    def visit(node):
        if node is None or node.is_Atom:
            return node
        args = [visit(a) for a in node.args]
        if not isinstance(node, (sp.Max, sp.Min)):
            return node.func(*args) if args != list(node.args) else node
        kept: list[sp.Expr] = []
        for a in args:
            twin = next((k for k in range(len(kept)) if proved_equal(kept[k], a, parameters, order)), None)
            if twin is None:
                kept.append(a)
            elif sp.count_ops(a) < sp.count_ops(kept[twin]):
                kept[twin] = a
        counts[0] += len(args)
        counts[1] += len(kept)
        return kept[0] if len(kept) == 1 else node.func(*kept)

    out = visit(expr)
    return Collapse(out, counts[0], counts[1])


def symmetries(result: DivergenceResult, mechanism: Mechanism) -> list[tuple[AdjacentPair, sp.Expr]]:
    """(pair, centre c) for each adjacent pair of ``mechanism`` whose two directions the engine showed
    equal by a reflection x -> c - x (recorded in the provenance as a ``symmetry`` step with its centre)."""
    out = []
    steps = [s for s in result.provenance.steps if s.name == StepName.SYMMETRY and s.expr is not None]
    for pair in mechanism.pairs:
        if not isinstance(pair, AdjacentPair):
            continue
        step = next((s for s in steps if s.detail.startswith(f"[{pair.label}] ")), None)
        if step is not None:
            out.append((pair, step.expr))
    return out


def directions_derived(result: DivergenceResult, mechanism: Mechanism) -> int | None:
    """How many divergences the maximum was taken over: one per pair with a reflection, two per pair
    without; None when the mechanism has a family of pairs (its supremum is taken elsewhere)."""
    if any(not isinstance(p, AdjacentPair) for p in mechanism.pairs):
        return None
    reflected = {id(p) for p, _ in symmetries(result, mechanism)}
    return sum(1 if id(p) in reflected else 2 for p in mechanism.pairs)
