r"""The numeric supremum over a family of adjacent pairs: a maximisation over sampled shifts.

A family (:class:`~rdpsym.specify.adjacency.AdjacentFamily`) stands for one adjacent pair per shift
``t`` in a set ``T`` (Mironov 2017, arXiv:1702.07476 v3, Def. 4: the bound must hold for every
neighbouring input, both orders of each):

.. math:: \varepsilon(\alpha) = \sup_{t \in T} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr).

The engine takes the supremum symbolically where it can show the divergence non-decreasing in ``|t|``
(:mod:`rdpsym.derive.adjacency`). Here it is taken numerically at given parameter values: the largest
value found at sampled shifts (the ends of ``T`` and equally spaced interior shifts, or the boundary
points of a ball of shift vectors), optionally refined by golden-section search
(:mod:`rdpsym._optimize`) or a pattern search in the ball. A numeric maximisation: a lower estimate of
the supremum (exact when the supremum is at an evaluated shift), never an upper bound. Its convergence
follows the one rule of :func:`rdpsym.numeric.maximum.maximum_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from .._optimize import golden_max
from ..specify.adjacency import AdjacentFamily, ShiftBall
from .driver import numeric_divergence
from .maximum import Direction, NumericMaximum, maximum_of

__all__ = ["FailedEvaluation", "FamilySupremum", "SampledFamily", "declared_sources", "maximise_over_family",
           "refine_in_ball", "supremum_over_family"]


@dataclass(frozen=True)
class FamilySupremum:
    """A numeric maximisation over the shifts of a family at given parameter values.

    ``value`` is the largest value found (``+oo`` included), ``error`` the largest error estimate of the
    evaluations, ``converged`` whether the maximum is trustworthy (:func:`~.maximum.maximum_of`: every
    evaluation converged, or a converged ``+oo`` won), ``shift`` the shift where it was found,
    ``evaluations`` every ``(shift, label, evaluation)`` computed (``evaluation`` has ``value``,
    ``error``, ``converged``; ``label`` is ``"P||Q"`` or ``"Q||P"`` for divergences). A numeric
    maximisation: a lower estimate of the supremum (exact when the supremum is at an evaluated shift,
    e.g. an end for a divergence monotone in ``|t|``), never an upper bound.
    """

    value: Any
    error: Any
    converged: bool
    shift: Any
    evaluations: tuple = ()
    note: str = ""


@dataclass(frozen=True)
class FailedEvaluation:
    """An evaluation that raised: not converged, value 0 (it never wins the maximum), reason kept."""

    detail: str
    value: Any = mpmath.mpf(0)
    error: Any = mpmath.inf
    converged: bool = False


def refine_in_ball(f: Callable, start, value, ball: ShiftBall, radius, steps: int):
    """Pattern search for a larger ``f`` in the ball from ``start`` (``f(start) = value``): each step
    tries ``start ± h e_i`` (retracted into the ball) and ``start`` pushed onto the sphere, moves to the
    best improvement, or halves ``h`` (from ``radius / 4``). Returns ``(point, value)``: a local
    improvement, never more than a lower estimate of the supremum."""
    point, best = tuple(mpmath.mpf(sp.N(c, mpmath.mp.dps)) if isinstance(c, sp.Basic) else mpmath.mpf(c)
                        for c in start), value
    R = mpmath.mpf(radius)
    h = R / 4
    for _ in range(steps):
        n = ball.numeric_norm(point)
        trials = [tuple(c * R / n for c in point)] if 0 < n < R else []
        for i in range(len(point)):
            for s in (1, -1):
                trials.append(ball.retract(tuple(c + s * h if j == i else c for j, c in enumerate(point)), R))
        found = [(f(p), p) for p in trials]
        top = max(found, key=lambda e: e[0]) if found else (best, point)
        if top[0] > best:
            best, point = top
        else:
            h /= 2
    return point, best


def maximise_over_family(family: AdjacentFamily, evaluate: Callable, values: Mapping | None = None, *,
                         interior: int = 3, refine: int = 0, dps: int = 30) -> FamilySupremum:
    """The largest of ``evaluate(shift)`` over sampled shifts of ``family`` at parameter ``values``.

    ``evaluate(shift) -> [(label, evaluation), ...]`` computes whatever is maximised (each evaluation
    with ``value``, ``error``, ``converged``) at one exact shift (an mpmath number during refinement).
    Sampled: the ends of ``T`` (an open end too: the supremum is approached there) and ``interior``
    equally spaced interior shifts; with ``refine > 0``, ``refine`` golden-section steps
    (:func:`rdpsym._optimize.golden_max`, which assumes unimodality there) on the bracket around the
    best sampled shift. For a vector family (a :class:`~rdpsym.specify.adjacency.ShiftBall`): the
    boundary points of :meth:`~rdpsym.specify.adjacency.ShiftBall.points` and ``refine`` steps of
    :func:`refine_in_ball` from the best of them. An evaluation that raises
    ``ValueError``/``ArithmeticError`` is kept as not converged. A numeric maximisation: a lower
    estimate of the supremum.
    """
    if not isinstance(family, AdjacentFamily):
        raise ArgumentError("family", "an AdjacentFamily", family)
    if not isinstance(refine, int) or isinstance(refine, bool) or refine < 0:
        raise ArgumentError("refine", "a non-negative int (golden-section steps)", refine)
    evaluations: list = []

    def at(shift_value):
        try:
            found = list(evaluate(shift_value))
        except (ValueError, ArithmeticError) as exc:
            found = [("", FailedEvaluation(str(exc)))]
        evaluations.extend((shift_value, label, ev) for label, ev in found)
        return max(ev.value for _, ev in found)

    points = family.shifts(values or {}, interior)
    coords = [c for p in points for c in (p if family.is_vector else (p,))]
    if not all(c.is_number for c in coords):
        missing = sorted(str(s) for c in coords for s in c.free_symbols)
        over = str(family.over) if family.is_vector else sp.sstr(family.over)
        raise ArgumentError("values", f"values for the parameters of over = {over}", values,
                            message=f"values: no value for {', '.join(dict.fromkeys(missing))}, which the set of "
                                    f"shifts {over} uses")
    with mpmath.workdps(dps + 10):
        scan = [at(p) for p in points]
        if refine and family.is_vector:
            # a local search around the best sampled shift vector (the sphere is not a bracket)
            i = max(range(len(points)), key=lambda j: scan[j])
            R = mpmath.mpf(sp.N(family.over.radius_at(values or {}), dps + 10))
            if scan[i] != mpmath.inf:
                refine_in_ball(at, points[i], scan[i], family.over, R, refine)
        elif refine and len(points) > 2:
            i = max(range(len(points)), key=lambda j: scan[j])
            lo, hi = points[max(i - 1, 0)], points[min(i + 1, len(points) - 1)]
            if scan[i] != mpmath.inf:
                golden_max(at, mpmath.mpf(sp.N(lo, dps + 10)), mpmath.mpf(sp.N(hi, dps + 10)), refine)
        found = maximum_of((i, e[2]) for i, e in enumerate(evaluations))
        shift = evaluations[found.top[0]][0]
        where = (f"{sp.sstr(family.shift)} in the {family.over}" if family.is_vector
                 else f"{family.shift} in {sp.sstr(family.over)}")
        how = "pattern-search steps" if family.is_vector else "golden-section steps"
        note = (f"numeric maximisation over {where}: {len(points)} sampled shifts"
                f"{f' and {refine} {how}' if refine else ''}, {len(evaluations)} evaluations; "
                "a lower estimate of the supremum")
        return FamilySupremum(found.value, found.error, found.converged, shift, tuple(evaluations), note)


def supremum_over_family(family: AdjacentFamily, x: sp.Symbol, support: sp.Set, alpha, values: Mapping, *,
                         dps: int = 30, interior: int = 3, refine: int = 0,
                         directions: tuple[str, ...] = ("P||Q", "Q||P"),
                         divergence: Callable = numeric_divergence) -> FamilySupremum:
    r"""The numeric :math:`\sup_{t \in T} \max(D_\alpha(P_t\|Q_t), D_\alpha(Q_t\|P_t))` at parameter ``values``.

    The numeric divergence (:func:`rdpsym.numeric.numeric_divergence`, or ``divergence`` with its
    signature) in each of ``directions``, maximised over the shifts by :func:`maximise_over_family`
    (the ends, ``interior`` interior shifts, ``refine`` golden-section steps). A numeric maximisation:
    the result is the largest value *found*, a lower estimate of the supremum; every evaluation must
    converge for ``converged`` (unless a converged ``+oo`` wins).
    """
    bad = [d for d in directions if d not in ("P||Q", "Q||P")] if isinstance(directions, tuple) else [directions]
    if bad or not directions:
        raise ArgumentError("directions", "a non-empty tuple of 'P||Q' and 'Q||P'", directions)
    ts = family.shift_symbols
    base = {k: v for k, v in dict(values).items() if not any(k == t or k == t.name for t in ts)}

    def evaluate(shift_value):
        out = []
        for direction in directions:
            P, Q = (family.P, family.Q) if direction == "P||Q" else (family.Q, family.P)
            try:
                out.append((direction, divergence(P, Q, x, support, alpha, {**base, **family.assignment(shift_value)},
                                                  dps=dps)))
            except (ValueError, ArithmeticError) as exc:
                out.append((direction, FailedEvaluation(str(exc))))
        return out

    return maximise_over_family(family, evaluate, base, interior=interior, refine=refine, dps=dps)


@dataclass(frozen=True)
class SampledFamily:
    """A family of adjacent pairs as a source of :func:`rdpsym.numeric.maximum.numeric_maximum`: both
    directions at its sampled shifts (:func:`supremum_over_family` with ``interior`` interior shifts and
    ``refine`` refinement steps), each a part of the maximum; the sampling is in the maximum's notes."""

    family: AdjacentFamily
    x: Any
    support: sp.Set
    interior: int = 3
    refine: int = 0

    def maximum(self, alpha, values: Mapping, dps: int, divergence: Callable = numeric_divergence) -> NumericMaximum:
        found = supremum_over_family(self.family, self.x, self.support, alpha, values, dps=dps,
                                     interior=self.interior, refine=self.refine, divergence=divergence)
        parts = [(f"D({d}) [{self.family.label}] at {self.family.describe(s)}", ev) for s, d, ev in found.evaluations]
        return maximum_of(parts, (f"[{self.family.label}]: {found.note}",))


def declared_sources(pairs, x, support, *, interior: int = 3) -> tuple:
    """The sources of :func:`~rdpsym.numeric.maximum.numeric_maximum` for a mechanism's declared
    ``pairs`` (Mironov 2017, Def. 4: every adjacent pair, both directions): a :class:`Direction` each way
    for an adjacent pair, a :class:`SampledFamily` (``interior`` interior shifts) for a family."""
    out: list = []
    for pair in pairs:
        if isinstance(pair, AdjacentFamily):
            out.append(SampledFamily(pair, x, support, interior=interior))
            continue
        out.append(Direction(pair.P, pair.Q, x, support, f"D(P||Q) [{pair.label}]"))
        out.append(Direction(pair.Q, pair.P, x, support, f"D(Q||P) [{pair.label}]"))
    return tuple(out)
