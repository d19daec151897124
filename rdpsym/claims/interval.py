r"""Certified verdicts by ball arithmetic: a relation between a claim and a closed form on a whole box.

A claim ``D REL C`` (``<=``: C is an upper bound of the divergence D; ``>=``: a lower bound; ``==``)
is decided on a box of orders and parameter values with Arb's ball arithmetic (python-flint): every
operation returns a ball that contains the exact result, so

* if ``lower(C) >= upper(D)`` on a box, ``D <= C`` holds at *every* point of the box (certified);
* if at one point ``lower(D) - upper(C)`` exceeds the tolerance, the claim fails there (certified).

The box is bisected adaptively, the box with the largest possible violation first, until every box is
certified, a certified violating point is found, or the budget of boxes is spent (a count of work, so the
outcome is the same on every machine; a wall-clock limit far above the typical time only guards against a
hang, and the outcome says when it fired). Random points
cannot find a bound that is wrong only for alpha in a band of width 1e-2, or only next to alpha = 1 + 1e-7,
or only above alpha = 5000; bisection that always refines the worst box does.

The divergence enclosure uses, besides the closed form on the box, monotonicity in the order: D_alpha is
non-decreasing in alpha (Mironov 2017, arXiv:1702.07476 v3, Prop. 9; van Erven and Harremoës 2014,
Thm. 3), so on ``[a0, a1] x Theta`` it lies between ``D(a0, Theta)`` and ``D(a1, Theta)``, point
evaluations in alpha that avoid the cancellation of ``1/(alpha-1) log(...)`` over a wide alpha ball.

Coordinates: orders above 1 are bisected in ``log(alpha - 1)``,
orders in (0, 1) in the log of their distance to 0 or to 1, positive parameters on a log scale, bounded
ones in the log of their distance to the nearer end, others linearly (:class:`Axis`); so the box reaches
every regime at a cost logarithmic in its extent.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import sympy as sp

from ..numeric.balls import arb_rational, flint_module
from .partition import Partition

__all__ = ["Axis", "IntervalOutcome", "bisect_relation", "replay_partition"]


# ---------------------------------------------------------------------------------------------------
# coordinates
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Axis:
    """One coordinate of the box.

    ``scale="offset"``: the value is ``anchor + sign * d`` with the distance ``d`` in ``[lo, hi]``, bisected in
    ``log d`` and added to the anchor in exact arithmetic, so orders reach ``1 + 1e-20`` and scales
    ``1e-12`` without floating-point rounding eating them (``alpha - 1``, ``1 - alpha``, ``sigma - 0``,
    ``1 - p``). ``scale="linear"``: the value itself in ``[lo, hi]``.
    """

    name: str
    symbol: sp.Symbol
    lo: float
    hi: float
    scale: str = "offset"
    anchor: sp.Rational = sp.Integer(0)
    sign: int = 1
    #: an integer parameter: a box stands for the integers in it (none: nothing to check there)
    integer: bool = False

    @property
    def u_range(self) -> tuple[float, float]:
        if self.scale == "offset":
            return math.log(self.lo), math.log(self.hi)
        return self.lo, self.hi

    def _distance(self, u: float) -> float:
        return math.exp(u) if self.scale == "offset" else u

    def _integers(self, u0: float, u1: float):
        """The first and last integer value in the box, or None when it holds none."""
        v0, v1 = (sp.Rational(self.anchor) + self.sign * sp.Rational(self._distance(u)) if self.scale == "offset"
                  else sp.Rational(u) for u in (u0, u1))
        first, last = sp.ceiling(min(v0, v1)), sp.floor(max(v0, v1))
        return (first, last) if first <= last else None

    def ball(self, u0: float, u1: float):
        """(ball of the values, ball at the lower value end, ball at the upper value end); None for an
        integer axis whose box holds no integer."""
        flint = flint_module()
        if self.integer:
            ends = self._integers(u0, u1)
            if ends is None:
                return None
            first, last = (arb_rational(sp.Rational(e)) for e in ends)
            return first.union(last), first, last
        d0, d1 = self._distance(u0), self._distance(u1)
        if self.scale != "offset":
            return flint.arb(d0).union(flint.arb(d1)), flint.arb(d0), flint.arb(d1)
        anchor = arb_rational(sp.Rational(self.anchor))
        e0, e1 = anchor + self.sign * flint.arb(d0), anchor + self.sign * flint.arb(d1)
        lower, upper = (e0, e1) if self.sign > 0 else (e1, e0)
        return lower.union(upper), lower, upper

    def point_in(self, u0: float, u1: float) -> sp.Rational | None:
        """The box's midpoint as an exact number (for an integer axis the integer nearest to it)."""
        mid = self.point((u0 + u1) / 2)
        if not self.integer:
            return mid
        ends = self._integers(u0, u1)
        if ends is None:
            return None
        return min(max(sp.Integer(sp.floor(mid + sp.Rational(1, 2))), ends[0]), ends[1])

    def point(self, u: float) -> sp.Rational:
        """The exact number at coordinate ``u`` (12 significant digits of the distance: readable, exact)."""
        d = self._distance(u)
        d_exact = sp.Rational(sp.Float(d, 12)) if d != 0 else sp.Integer(0)
        return sp.Rational(self.anchor) + self.sign * d_exact if self.scale == "offset" else d_exact

    def describe(self) -> str:
        if self.scale != "offset":
            return f"{self.name} in [{self.lo:.6g}, {self.hi:.6g}]"
        if self.anchor == 0 and self.sign > 0:
            return f"{self.name} in [{self.lo:.3g}, {self.hi:.3g}]"
        what = f"{self.name} - {sp.sstr(self.anchor)}" if self.sign > 0 else f"{sp.sstr(self.anchor)} - {self.name}"
        return f"{what} in [{self.lo:.3g}, {self.hi:.3g}]"


# ---------------------------------------------------------------------------------------------------
# bisection
# ---------------------------------------------------------------------------------------------------
@dataclass
class IntervalOutcome:
    """What bisection established on the box.

    ``status``: ``"proved"`` (the relation holds exactly on every sub-box), ``"certified"`` (on every
    sub-box no violation can exceed the tolerance), ``"refuted"`` (``point`` violates the relation,
    certified by ball arithmetic), ``"partial"`` (budget spent; ``certified_fraction`` of the box's volume
    in its coordinates is certified, the rest was only sampled at box midpoints) or ``"unavailable"``.
    """

    status: str
    axes: tuple[Axis, ...] = ()
    boxes: int = 0
    certified_fraction: float = 0.0
    point: dict | None = None  # symbol -> exact Rational
    claim_ball: object = None
    divergence_ball: object = None
    reason: str = ""
    seconds: float = 0.0
    undecided_points: int = 0
    extra: dict = field(default_factory=dict)
    #: for a ``"proved"`` or ``"certified"`` box: the partition that shows it (:class:`Partition`)
    partition: Partition | None = None

    def describe_box(self) -> str:
        return ", ".join(a.describe() for a in self.axes)


def bisect_relation(
    claim: Callable, divergence: Callable, relation: str, axes: Sequence[Axis], *,
    alpha: sp.Symbol | None, fixed: Mapping[sp.Symbol, object], tol: float, floor: float,
    difference: Callable | None = None, monotone_alpha: bool = True, max_boxes: int = 20000,
    seconds: float = 600.0, prec: int = 192,
) -> IntervalOutcome:
    """Decide ``divergence REL claim`` on the box spanned by ``axes`` (see the module docstring).

    ``claim``/``divergence``: compiled by :func:`compile_arb` (the divergence already +oo outside its
    finiteness conditions); ``difference``: optionally ``claim - divergence`` compiled from a simplified
    sympy form (a perturbation of the truth then has a tight enclosure; it is intersected with the
    difference of the two enclosures, both being valid); ``fixed``: balls of the parameters held fixed;
    ``tol``: relative size of a violation that counts (the check's ``10^-digits``); ``floor``: values below
    it are compared absolutely.

    A box is *exact* when the relation holds on it with no tolerance (``lower(claim - D) >= 0`` for
    ``<=``) and *within tolerance* when no violation on it can exceed ``tol``; ``status`` is ``"proved"``
    when every box is exact, ``"certified"`` when every box is at least within tolerance; the outcome
    then holds the :class:`Partition` of the box into the settled boxes.

    ``max_boxes`` is the budget: the search stops after that many boxes (``"partial"``). ``seconds`` is
    only a guard against a hang (far above the time ``max_boxes`` take); when it fires the outcome is
    ``"partial"`` and its reason says so.
    """
    return _with_precision(prec, lambda search: search.run(max_boxes, seconds, time.monotonic()), claim,
                           divergence, difference, relation, axes, alpha, fixed, tol, floor, monotone_alpha)


def replay_partition(partition: Partition, claim: Callable, divergence: Callable, relation: str,
                     axes: Sequence[Axis], *, alpha: sp.Symbol | None, fixed: Mapping[sp.Symbol, object], tol: float,
                     floor: float, difference: Callable | None = None, monotone_alpha: bool = True, prec: int = 192,
                     exact_only: bool = False) -> tuple[bool, str]:
    """Settle every box of ``partition`` again with the enclosures of :func:`bisect_relation` (same
    arguments), without searching: :meth:`Partition.replay`."""
    return _with_precision(prec, lambda search: partition.replay(search, exact_only), claim, divergence, difference,
                           relation, axes, alpha, fixed, tol, floor, monotone_alpha)


def _with_precision(prec, task, claim, divergence, difference, relation, axes, alpha, fixed, tol, floor, monotone):
    flint = flint_module()
    old_prec = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        return task(_Bisection(flint, claim, divergence, difference, relation, tuple(axes), alpha, dict(fixed), tol,
                               floor, monotone))
    finally:
        flint.ctx.prec = old_prec


class _Bisection:
    def __init__(self, flint, claim, divergence, difference, relation, axes, alpha, fixed, tol, floor, monotone):
        self.flint, self.claim, self.divergence, self.difference = flint, claim, divergence, difference
        self.relation, self.axes, self.fixed = relation, axes, fixed
        self.tol, self.floor = flint.arb(tol), flint.arb(floor)
        self.spans = [a.u_range for a in axes]
        self.widths0 = [max(u1 - u0, 1e-300) for u0, u1 in self.spans]
        self.alpha_index = next((i for i, a in enumerate(axes) if a.symbol == alpha), None) if monotone else None

    # -- enclosures ----------------------------------------------------------------------------------
    def env(self, box, thin_alpha=None):
        env = dict(self.fixed)
        for i, (axis, (u0, u1)) in enumerate(zip(self.axes, box)):
            balls = axis.ball(u0, u1)
            if balls is None:
                return None  # an integer coordinate with no integer in the box
            ball, lo, hi = balls
            env[axis.symbol] = ball if (i != self.alpha_index or thin_alpha is None) else (lo if thin_alpha == "lo" else hi)
        return env

    def _bounds(self, ball):
        if ball.is_nan():
            return self.flint.arb.neg_inf(), self.flint.arb.pos_inf()
        return ball.lower(), ball.upper()

    def divergence_bounds(self, box):
        """Bounds of D on the box, and its enclosure by the closed form alone."""
        plain = self.divergence(self.env(box))
        lower, upper = self._bounds(plain)
        if self.alpha_index is not None:
            # D_alpha is non-decreasing in alpha (Prop. 9): the ends of the alpha range bound the box
            lo_end, hi_end = self.divergence(self.env(box, "lo")), self.divergence(self.env(box, "hi"))
            if not lo_end.is_nan():
                lower = lower.max(lo_end.lower())
            if not hi_end.is_nan():
                upper = upper.min(hi_end.upper())
        return lower, upper, plain

    def margin_bounds(self, box):
        """Bounds of the margin (>= 0: the relation holds; for ``==`` the margin is -|claim - D|), of the
        scale the tolerance is relative to, and the enclosures ``(claim, divergence)`` on the box."""
        inf = self.flint.arb.pos_inf()
        dl, du, d_ball = self.divergence_bounds(box)
        c_ball = self.claim(self.env(box))
        cl, cu = self._bounds(c_ball)
        lo, hi = cl - du, cu - dl  # claim - D
        lo, hi = (-inf if lo.is_nan() else lo), (inf if hi.is_nan() else hi)
        if self.difference is not None:
            diff = self.difference(self.env(box))
            if not diff.is_nan():
                lo, hi = lo.max(diff.lower()), hi.min(diff.upper())
        if self.relation == ">=":
            lo, hi = -hi, -lo
        elif self.relation == "==":
            # -|claim - D|: its upper end is 0 when the range straddles 0
            worst = lo.abs_upper().max(hi.abs_upper())
            best = self.flint.arb(0) if (lo <= 0 and hi >= 0) or lo.is_nan() else lo.abs_lower().min(hi.abs_lower())
            lo, hi = -worst, -best
        # the smallest |value| anywhere on the box (0 when the range straddles 0): relative violations
        # are measured against it, so a wide box never looks better than its worst point
        scale = self.floor.max(_smallest_magnitude(dl, du)).max(_smallest_magnitude(cl, cu))
        return lo, hi, scale, (c_ball, d_ball)

    # -- one box -------------------------------------------------------------------------------------
    def classify(self, box):
        """(state, potential, enclosures): state "exact" | "within" | "open"; potential = worst relative
        violation; enclosures = (claim ball, divergence ball) on the box, None for a box with no point."""
        if self.env(box) is None:
            return "exact", 0.0, None  # no point of the parameter space in this box (no integer)
        lo, hi, scale, balls = self.margin_bounds(box)
        if self.relation != "==" and bool(lo >= 0):
            return "exact", 0.0, balls
        if bool(-lo <= self.tol * scale):
            return "within", 0.0, balls
        try:
            v = float((-lo / scale).upper().mid())
        except (ValueError, ZeroDivisionError, OverflowError):
            v = math.inf
        return "open", (v if math.isfinite(v) else math.inf), balls

    def point_check(self, box):
        """The box midpoint as exact numbers, and whether the relation certainly fails there (None: undecided)."""
        point = {axis.symbol: axis.point_in(u0, u1) for axis, (u0, u1) in zip(self.axes, box)}
        if any(v is None for v in point.values()):
            return point, False, None, None
        env = dict(self.fixed)
        env.update({s: arb_rational(v) for s, v in point.items()})
        d, c = self.divergence(env), self.claim(env)
        if d.is_nan() or c.is_nan():
            return point, None, d, c
        if not (d.is_finite() and c.is_finite()):
            return point, _infinite_fails(self.relation, d, c), d, c
        gap = c - d
        if self.difference is not None:
            diff = self.difference(env)
            if not diff.is_nan() and diff.rad() < gap.rad():
                gap = diff
        violation = -gap if self.relation == "<=" else (gap if self.relation == ">=" else abs(gap))
        scale = d.abs_upper().max(c.abs_upper()).max(self.floor)
        if bool(violation > self.tol * scale):
            return point, True, d, c
        if bool(violation <= self.tol * d.abs_lower().max(c.abs_lower()).max(self.floor)):
            return point, False, d, c
        return point, None, d, c

    def _best_split(self, box):
        """The two halves of ``box`` along the coordinate whose split settles the most of it (certified
        volume, then the smaller worst potential, then the relatively widest coordinate), classified; None
        when no coordinate can be split in floats. Splitting a coordinate the enclosures do not depend on
        would only double the boxes: a band of width 1e-5 in alpha needs alpha split, not the scale."""
        best, best_key = None, None
        for k in range(len(box)):
            u0, u1 = box[k]
            mid = (u0 + u1) / 2
            if not (u0 < mid < u1):
                continue
            children = [box[:k] + (half,) + box[k + 1:] for half in ((u0, mid), (mid, u1))]
            classified = [self.classify(c) for c in children]
            settled = sum(1 for state, _, _ in classified if state != "open")
            worst = max(potential for _, potential, _ in classified)
            key = (settled, -worst, (u1 - u0) / self.widths0[k])
            if best_key is None or key > best_key:
                best, best_key = (k, list(zip(children, classified))), key
            if len(box) == 1:
                break
        return best

    # -- the search ----------------------------------------------------------------------------------
    def run(self, max_boxes, seconds, started) -> IntervalOutcome:
        # Two orders over the open boxes: the largest possible violation first (where a counterexample
        # hides), and the largest box first (so the certified part grows even when the worst region,
        # a bound tight as alpha -> oo, would absorb every split). The search alternates between them.
        by_potential: list = []
        by_volume: list = []
        done: set = set()
        tally = {"exact": 0.0, "within": 0.0}
        counter = [0]
        # the partition: the coordinate each split box was halved along, and the settled boxes
        splits: dict = {}
        settled: dict = {}

        def push(box, classified=None):
            state, potential, balls = classified or self.classify(box)
            vol = math.prod((u1 - u0) / w for (u0, u1), w in zip(box, self.widths0))
            if state != "open":
                tally[state] += vol
                settled[box] = (state, balls)
                return
            counter[0] += 1
            # a box whose enclosures bound a large violation is a better lead than one about which
            # nothing is known (NaN enclosures: overflow, a log of a ball reaching 0); those still come
            # up in the volume order
            known = 0 if math.isfinite(potential) else 1
            heapq.heappush(by_potential, (known, -potential, -vol, counter[0], box))
            heapq.heappush(by_volume, (-vol, known, -potential, counter[0], box))

        def pop(turn):
            first, second = (by_potential, by_volume) if turn % 2 == 0 else (by_volume, by_potential)
            for heap in (first, second):
                while heap:
                    entry = heapq.heappop(heap)
                    if entry[-2] not in done:
                        done.add(entry[-2])
                        return entry[-1]
            return None

        def outcome(status, **kw):
            return IntervalOutcome(status, self.axes, boxes, tally["exact"] + tally["within"],
                                   seconds=time.monotonic() - started, undecided_points=undecided,
                                   extra={"exact_fraction": tally["exact"]}, **kw)

        root = tuple(self.spans)
        push(root)
        boxes, undecided, unsplittable, turn = 1, 0, 0, 0
        while len(done) < counter[0]:
            if boxes >= max_boxes:
                return outcome("partial", reason=f"box budget spent after {boxes} boxes")
            if time.monotonic() - started > seconds:
                return outcome("partial", reason=f"a hang guard of {seconds:g} s fired in the certified pass "
                                                 f"after {boxes} boxes")
            box = pop(turn)
            turn += 1
            if box is None:
                break
            point, fails, d, c = self.point_check(box)
            if fails:
                return outcome("refuted", point=point, claim_ball=c, divergence_ball=d)
            undecided += fails is None
            split = self._best_split(box)
            if split is None:
                unsplittable += 1  # too small to split in floats: this box stays undecided
                continue
            splits[box] = split[0]
            for child, classified in split[1]:
                push(child, classified)
                boxes += 1
        if unsplittable:
            return outcome("partial", reason=f"{unsplittable} box(es) too small to split further stayed undecided")
        return outcome("proved" if tally["within"] == 0 else "certified",
                       partition=Partition.from_search(root, splits, settled))


def _smallest_magnitude(lo, hi):
    """A lower bound of |v| for v in [lo, hi] (exact arb endpoints; infinite or NaN ones give 0)."""
    flint = flint_module()
    if lo.is_nan() or hi.is_nan():
        return flint.arb(0)
    if bool(lo > 0) and lo.is_finite():
        return lo
    if bool(hi < 0) and hi.is_finite():
        return -hi
    return flint.arb(0)


def _infinite_fails(relation, d, c) -> bool | None:
    """The relation at a point where a side is infinite (balls of +-inf), or None if undecided."""
    d_inf, c_inf = not d.is_finite(), not c.is_finite()
    pos = lambda b: bool(b > 0)  # noqa: E731
    if d_inf and c_inf:
        return None if not (pos(d) and pos(c)) else False
    if relation == "<=":
        return pos(d) if d_inf else (not pos(c))
    if relation == ">=":
        return (not pos(d)) if d_inf else pos(c)
    return True
