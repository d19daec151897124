r"""Certified verdicts by ball arithmetic: a relation between a claim and a closed form on a whole box.

A claim ``D REL C`` (``<=``: C is an upper bound of the divergence D; ``>=``: a lower bound; ``==``)
is decided on a box of orders and parameter values with Arb's ball arithmetic (python-flint): every
operation returns a ball that contains the exact result, so

* if ``lower(C) >= upper(D)`` on a box, ``D <= C`` holds at *every* point of the box (certified);
* if at one point ``lower(D) - upper(C)`` exceeds the tolerance, the claim fails there (certified).

The box is bisected adaptively, the box with the largest possible violation first, until every box is
certified, a certified violating point is found, or the budget (boxes, seconds) is spent. Random points
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

from ..numeric import translate

__all__ = ["Unsupported", "BallTarget", "arb_rational", "compile_arb", "compile_arb_condition", "Axis", "IntervalOutcome", "bisect_relation"]


class Unsupported(translate.Unsupported):
    """The expression has a node ball arithmetic is not implemented for here."""


def _flint():
    import flint

    return flint


# ---------------------------------------------------------------------------------------------------
# sympy -> closures over arb balls (the ball target of the tree translator, rdpsym.numeric.translate)
# ---------------------------------------------------------------------------------------------------
def arb_rational(q: sp.Rational):
    flint = _flint()
    return flint.arb(flint.fmpq(int(q.p), int(q.q)))


def _nan():
    return _flint().arb.nan()


def _safe(fn):
    """An arb operation whose failure (a domain error raised by python-flint) is a NaN ball: no information."""

    def run(*args):
        try:
            return fn(*args)
        except (ValueError, ZeroDivisionError, ArithmeticError, TypeError):
            return _nan()

    return run


def _unary(name):
    return lambda v: getattr(v, name)()


_UNARY = {
    sp.exp: _unary("exp"), sp.sin: _unary("sin"), sp.cos: _unary("cos"), sp.tan: _unary("tan"),
    sp.sinh: _unary("sinh"), sp.cosh: _unary("cosh"), sp.tanh: _unary("tanh"), sp.atan: _unary("atan"),
    sp.asin: _unary("asin"), sp.acos: _unary("acos"), sp.asinh: _unary("asinh"),
    sp.erf: _unary("erf"), sp.erfc: _unary("erfc"), sp.gamma: _unary("gamma"), sp.loggamma: _unary("lgamma"),
    sp.digamma: _unary("digamma"), sp.Abs: lambda v: _magnitude(v), sp.sign: _unary("sgn"), sp.floor: _unary("floor"),
    sp.ceiling: _unary("ceil"),
}


def _magnitude(v):
    """|v| for a ball: [0, max |end|] when it straddles 0 (a midpoint-radius abs would reach below 0)."""
    flint = _flint()
    if v.is_nan() or not (v.lower() < 0 < v.upper()):
        return abs(v)
    return flint.arb(0).union(v.abs_upper())


def _even_power(v, n: int):
    """v**n for even n >= 2: non-negative, and tight when the ball straddles 0 ((0.5 +- 1.5)**2 is [0, 4],
    not the midpoint-radius [-3.5, 4], which after exp(-2500 x) would reach e^8750)."""
    if v.is_nan() or v.is_exact():
        return v ** n
    flint = _flint()
    lo, hi = v.lower(), v.upper()  # exact ends: each power is then a thin ball
    if lo >= 0:
        return (lo ** n).union(hi ** n)
    if hi <= 0:
        return (hi ** n).union(lo ** n)
    return flint.arb(0).union(lo.abs_upper().max(hi.abs_upper()) ** n)


def compile_arb(expr: sp.Basic, symbols: Sequence[sp.Symbol]) -> Callable[[Mapping], object]:
    """A function of ``{symbol: arb}`` returning an arb ball that contains ``expr``'s value on those balls.

    Values outside a function's domain (log of a ball reaching 0, a real power of a negative ball) give a
    NaN ball, i.e. no information, never a wrong enclosure. Raises :class:`Unsupported` for nodes not
    mapped here (the caller then has no certified path and says so).
    """
    stray = expr.free_symbols - set(symbols)
    if stray:
        raise Unsupported(f"symbols {sorted(map(str, stray))} are not coordinates of the box")
    return _BALLS.translate(expr)


def compile_arb_condition(c) -> Callable[[Mapping], bool | None]:
    """A sympy condition as a three-valued function of balls: True, False or None (undecided)."""
    return _BALLS.condition(c)


def _constant(make) -> Callable:
    return lambda env: make()


def _fold(parts, step):
    """``env -> step(...step(parts[0](env), parts[1](env))..., parts[-1](env))``, NaN where python-flint raises."""

    def fold(env):
        out = parts[0](env)
        for p in parts[1:]:
            out = step(out, p(env))
        return out

    return _safe(fold)


class BallTarget(translate.EnvironmentClosures):
    """sympy -> closures ``env -> arb`` whose ball contains the exact value on the balls of ``env``.

    Every operation is one of Arb's (rigorous), with two tightenings where midpoint-radius arithmetic
    loses the sign: even powers and ``Abs`` of a ball that straddles 0. A ``Piecewise`` unions every
    branch whose condition may hold (three-valued conditions, :func:`_tri`), ``Max``/``Min`` are Arb's
    (rigorous on overlapping balls), and a value outside a function's domain is a NaN ball: no
    information, never a wrong enclosure.
    """

    error = Unsupported
    target = "ball arithmetic"
    unary = _UNARY

    # -- atoms (a symbol reads the environment: EnvironmentClosures) -----------------------------------
    def _translate_Infinity(self, e):
        return _constant(_flint().arb.pos_inf)

    def _translate_NegativeInfinity(self, e):
        return _constant(_flint().arb.neg_inf)

    def _translate_NaN(self, e):
        return lambda env: _nan()

    _translate_ComplexInfinity = _translate_ImaginaryUnit = _translate_NaN

    def _translate_Rational(self, e):
        return lambda env, q=e: arb_rational(q)

    def _translate_Float(self, e):
        # a Float is its exact binary value
        return lambda env, q=sp.Rational(e): arb_rational(q)

    def _translate_Pi(self, e):
        return _constant(_flint().arb.pi)

    def _translate_Exp1(self, e):
        return lambda env: _flint().arb(1).exp()

    def _translate_EulerGamma(self, e):
        return _constant(_flint().arb.const_euler)

    # -- arithmetic ----------------------------------------------------------------------------------
    def _translate_Add(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u + v)

    def _translate_Mul(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u * v)

    def _translate_Pow(self, e):
        base, expo = self.translate(e.args[0]), e.args[1]
        if expo.is_Integer:
            n = int(expo)
            if n % 2 == 0 and n > 0:
                return _safe(lambda env: _even_power(base(env), n))
            return _safe(lambda env: base(env) ** n)
        if expo == sp.S.Half:
            return _safe(lambda env: base(env).sqrt())
        ex = self.translate(expo)
        return _safe(lambda env: base(env) ** ex(env))

    def _translate_log(self, e):
        arg = self.translate(e.args[0])
        if len(e.args) == 2:
            b = self.translate(e.args[1])
            return _safe(lambda env: arg(env).log() / b(env).log())
        return _safe(lambda env: arg(env).log())

    def apply(self, op, e):
        arg = self.translate(e.args[0])
        return _safe(lambda env: op(arg(env)))

    def _translate_Max(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u.max(v))

    def _translate_Min(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u.min(v))

    def _translate_Piecewise(self, e):
        branches = [(self.translate(v), self.condition(c)) for v, c in e.args]

        def piecewise(env):
            # every branch whose condition may hold contributes; the first certainly true one ends it
            out = None
            for value, cond in branches:
                holds = cond(env)
                if holds is False:
                    continue
                v = value(env)
                out = v if out is None else out.union(v)
                if holds is True:
                    return out
            return _nan() if out is None else out.union(_nan())

        return _safe(piecewise)

    def _translate_Heaviside(self, e):
        flint = _flint()
        arg = self.translate(e.args[0])
        half = sp.Rational(1, 2) if len(e.args) == 1 else e.args[1]

        def heaviside(env):
            v = arg(env)
            if v > 0:
                return flint.arb(1)
            if v < 0:
                return flint.arb(0)
            at0 = arb_rational(half) if half.is_Rational else _nan()
            return flint.arb(0).union(flint.arb(1)) if not v.is_zero() else at0

        return _safe(heaviside)

    # -- three-valued conditions: True, False or None (undecided) --------------------------------------
    def truth(self, value):
        return lambda env: value

    def conjunction(self, parts):
        def conj(env):
            vals = [p(env) for p in parts]
            return False if False in vals else (None if None in vals else True)

        return conj

    def disjunction(self, parts):
        def disj(env):
            vals = [p(env) for p in parts]
            return True if True in vals else (None if None in vals else False)

        return disj

    def negation(self, part):
        def neg(env):
            v = part(env)
            return None if v is None else not v

        return neg

    def relation(self, op, lhs, rhs):
        lhs, rhs = self.translate(lhs), self.translate(rhs)

        def rel(env):
            try:
                return _tri(op, lhs(env), rhs(env))
            except (ValueError, ArithmeticError, TypeError):
                return None

        return rel


_BALLS = BallTarget()


def _tri(op: str, a, b):
    """Certain truth of ``a op b`` for balls: True, False or None (the balls overlap: undecided)."""
    if a.is_nan() or b.is_nan():
        return None
    if op == "<":
        return True if a < b else (False if a >= b else None)
    if op == "<=":
        return True if a <= b else (False if a > b else None)
    if op == ">":
        return _tri("<", b, a)
    if op == ">=":
        return _tri("<=", b, a)
    if op == "==":
        if a.is_exact() and b.is_exact() and a == b:
            return True
        return False if (a < b or a > b) else None
    if op == "!=":
        t = _tri("==", a, b)
        return None if t is None else not t
    raise Unsupported(op)


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
        flint = _flint()
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

    def describe_box(self) -> str:
        return ", ".join(a.describe() for a in self.axes)


def bisect_relation(
    claim: Callable, divergence: Callable, relation: str, axes: Sequence[Axis], *,
    alpha: sp.Symbol | None, fixed: Mapping[sp.Symbol, object], tol: float, floor: float,
    difference: Callable | None = None, monotone_alpha: bool = True, max_boxes: int = 20000,
    seconds: float = 15.0, prec: int = 192,
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
    when every box is exact, ``"certified"`` when every box is at least within tolerance.
    """
    flint = _flint()
    started = time.monotonic()
    old_prec = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        return _Bisection(flint, claim, divergence, difference, relation, tuple(axes), alpha, dict(fixed), tol,
                          floor, monotone_alpha).run(max_boxes, seconds, started)
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
        lower, upper = self._bounds(self.divergence(self.env(box)))
        if self.alpha_index is not None:
            # D_alpha is non-decreasing in alpha (Prop. 9): the ends of the alpha range bound the box
            lo_end, hi_end = self.divergence(self.env(box, "lo")), self.divergence(self.env(box, "hi"))
            if not lo_end.is_nan():
                lower = lower.max(lo_end.lower())
            if not hi_end.is_nan():
                upper = upper.min(hi_end.upper())
        return lower, upper

    def margin_bounds(self, box):
        """Bounds of the margin (>= 0: the relation holds; for ``==`` the margin is -|claim - D|) and of
        the scale the tolerance is relative to."""
        inf = self.flint.arb.pos_inf()
        dl, du = self.divergence_bounds(box)
        cl, cu = self._bounds(self.claim(self.env(box)))
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
        return lo, hi, scale

    # -- one box -------------------------------------------------------------------------------------
    def classify(self, box):
        """(state, potential): state "exact" | "within" | "open"; potential = worst relative violation."""
        if self.env(box) is None:
            return "exact", 0.0  # no point of the parameter space in this box (no integer)
        lo, hi, scale = self.margin_bounds(box)
        if self.relation != "==" and bool(lo >= 0):
            return "exact", 0.0
        if bool(-lo <= self.tol * scale):
            return "within", 0.0
        try:
            v = float((-lo / scale).upper().mid())
        except (ValueError, ZeroDivisionError, OverflowError):
            v = math.inf
        return "open", (v if math.isfinite(v) else math.inf)

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
            settled = sum(1 for state, _ in classified if state != "open")
            worst = max(potential for _, potential in classified)
            key = (settled, -worst, (u1 - u0) / self.widths0[k])
            if best_key is None or key > best_key:
                best, best_key = list(zip(children, classified)), key
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

        def push(box, classified=None):
            state, potential = classified or self.classify(box)
            vol = math.prod((u1 - u0) / w for (u0, u1), w in zip(box, self.widths0))
            if state != "open":
                tally[state] += vol
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

        push(tuple(self.spans))
        boxes, undecided, unsplittable, turn = 1, 0, 0, 0
        while len(done) < counter[0]:
            if boxes >= max_boxes or time.monotonic() - started > seconds:
                why = "box budget" if boxes >= max_boxes else "time budget"
                return outcome("partial", reason=f"{why} spent after {boxes} boxes")
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
            for child, classified in split:
                push(child, classified)
                boxes += 1
        if unsplittable:
            return outcome("partial", reason=f"{unsplittable} box(es) too small to split further stayed undecided")
        return outcome("proved" if tally["within"] == 0 else "certified")


def _smallest_magnitude(lo, hi):
    """A lower bound of |v| for v in [lo, hi] (exact arb endpoints; infinite or NaN ones give 0)."""
    flint = _flint()
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
