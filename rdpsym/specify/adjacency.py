r"""Neighbouring inputs as data: one adjacent pair (:class:`AdjacentPair`), or a family of adjacent pairs
indexed by a shift ``t`` in a set ``T`` (:class:`AdjacentFamily`).

A mechanism whose neighbouring inputs differ by a shift ``t`` of the query (``|f(D) - f(D')| <=
sensitivity``, or ``t`` in a user-given interval) has output distributions ``P_t = M(D)`` and ``Q_t =
M(D')`` for every ``t`` in ``T``. Its RDP curve is the supremum over the family (Mironov 2017,
arXiv:1702.07476 v3, Def. 4: the bound must hold for *all* adjacent inputs, both orders of each):

.. math:: \varepsilon(\alpha) = \sup_{t \in T} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr).

:class:`AdjacentFamily` declares such a family; :func:`rdpsym.rdp` derives the divergence with ``t``
symbolic and takes the supremum symbolically when it can show the divergence non-decreasing in ``|t|``
(see :mod:`rdpsym.derive.adjacency`), and numerically otherwise. The numeric supremum at given parameter
values, a maximisation over sampled shifts (a lower estimate of the supremum, never a bound), is the
numeric path's: :func:`rdpsym.numeric.families.supremum_over_family`. This module is the model only.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, replace
from typing import Any, Mapping

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from .text.numbers import exact_number

__all__ = ["AdjacentPair", "AdjacentFamily", "ShiftBall"]


@dataclass(frozen=True)
class AdjacentPair:
    """Output distributions P = M(D) and Q = M(D') of a mechanism on adjacent inputs D, D'."""

    P: sp.Expr
    Q: sp.Expr
    label: str = "D, D'"


def _real_end(value: Any, which: str) -> sp.Expr:
    if not isinstance(value, sp.Expr):
        raise ArgumentError(f"over ({which} end)", "a sympy expression", value)
    if value.has(sp.oo, -sp.oo, sp.zoo, sp.nan) or value.is_finite is False:
        raise ArgumentError("over", "a bounded Interval (a neighbour's shift is bounded, e.g. by the sensitivity)",
                            value, message=f"over: the {which} end {sp.sstr(value)} is not finite; the shifts of "
                                           "neighbouring inputs must be bounded (e.g. by the sensitivity)")
    if value.is_real is False or any(s.is_real is not True for s in value.free_symbols):
        raise ArgumentError("over", "an Interval whose ends are real (real parameters)", value,
                            message=f"over: the {which} end {sp.sstr(value)} is not real: its symbols must be real parameters")
    return value


# --------------------------------------------------------------------------------------------------
# balls of shift vectors
# --------------------------------------------------------------------------------------------------
def _norm_order(norm: Any) -> sp.Expr:
    if isinstance(norm, bool):
        raise ArgumentError("norm", "1, 2 or oo (the l1, l2 or l_inf norm)", norm)
    if isinstance(norm, float) and math.isinf(norm) and norm > 0:
        return sp.oo
    if isinstance(norm, (int, sp.Integer)) and int(norm) in (1, 2):
        return sp.Integer(int(norm))
    if norm is sp.oo:
        return sp.oo
    raise ArgumentError("norm", "1, 2 or oo (the l1, l2 or l_inf norm)", norm,
                        message=f"norm: must be 1, 2 or sympy.oo (the l1, l2 or l_inf norm of the shift vector), "
                                f"got {norm!r}")


@dataclass(frozen=True)
class ShiftBall:
    r"""The ball ``{t in R^d : ||t||_p <= radius}`` of shift vectors, ``p`` in ``{1, 2, oo}``.

    The neighbouring inputs of a vector query ``f`` with ``||f(D) - f(D')||_p <= Δ`` (its l_p
    sensitivity; Dwork & Roth 2014, *The Algorithmic Foundations of Differential Privacy*, Def. 3.1 for
    l1, used by the Laplace mechanism, Thm. 3.6; Def. 3.8 and Thm. A.1 for l2, used by the Gaussian
    mechanism): ``ShiftBall(norm=2, radius=Δ)``. Its dimension is that of the family's tuple of shifts.

    Attributes
    ----------
    norm: 1, 2 or ``sympy.oo`` (a float infinity is read as ``oo``).
    radius: a positive finite real expression (a number, or in the mechanism's parameters, e.g. the
        sensitivity); ``radius > 0`` must follow from the parameters' assumptions.
    """

    norm: Any
    radius: Any

    def __post_init__(self):
        object.__setattr__(self, "norm", _norm_order(self.norm))
        r = self.radius if isinstance(self.radius, sp.Expr) else exact_number(self.radius, "radius", finite=True, real=True)
        if r.has(sp.oo, -sp.oo, sp.zoo, sp.nan) or r.is_finite is False:
            raise ArgumentError("radius", "a finite positive expression (the sensitivity)", self.radius)
        if any(s.is_real is not True for s in r.free_symbols):
            raise ArgumentError("radius", "an expression in real parameters", self.radius,
                                message=f"radius: {sp.sstr(r)} uses symbols not declared real")
        if r.is_positive is not True:
            raise ArgumentError("radius", "positive for every parameter value", self.radius,
                                message=f"radius: cannot tell that {sp.sstr(r)} > 0 from the parameters' "
                                        "assumptions; declare them positive")
        object.__setattr__(self, "radius", r)

    @property
    def name(self) -> str:
        """``"l1"``, ``"l2"`` or ``"l_inf"``."""
        return {1: "l1", 2: "l2"}.get(self.norm, "l_inf") if self.norm is not sp.oo else "l_inf"

    @property
    def free_symbols(self) -> set:
        return self.radius.free_symbols

    def __str__(self) -> str:
        return f"{self.name} ball of radius {sp.sstr(self.radius)}"

    def norm_of(self, vector) -> sp.Expr:
        """``||vector||_p`` as a sympy expression."""
        v = [sp.sympify(c) if isinstance(c, (int, sp.Basic)) else exact_number(c, "vector") for c in vector]
        if self.norm == 1:
            return sp.Add(*[sp.Abs(c) for c in v])
        if self.norm == 2:
            return sp.sqrt(sp.Add(*[c**2 for c in v]))
        return sp.Max(*[sp.Abs(c) for c in v])

    def has_vertices(self) -> bool:
        """True for the polytopes (l1: cross-polytope, l_inf: cube); the l2 ball has no vertices."""
        return self.norm != 2

    def vertices(self, dimension: int) -> list[tuple]:
        """The extreme points of a polytope ball: ``±radius e_i`` (l1), ``radius (±1, ..., ±1)`` (l_inf)."""
        d = _dimension(dimension)
        R = self.radius
        if self.norm == 1:
            return [tuple(s * R if j == i else sp.S.Zero for j in range(d)) for i in range(d) for s in (1, -1)]
        if self.norm is sp.oo:
            return [tuple(s * R for s in signs) for signs in itertools.product((1, -1), repeat=d)]
        raise ArgumentError("norm", "1 or oo for vertices (the l2 ball has none)", self.norm)

    def subs(self, mapping: Mapping) -> "ShiftBall":
        return replace(self, radius=self.radius.subs(mapping))

    def scaled(self, k) -> "ShiftBall":
        """``k B`` (``k > 0``): the Minkowski sum of ``k`` copies of a convex ball ``B`` of radius ``r``
        is the ball of radius ``k r`` (inputs ``k`` adjacent steps apart)."""
        kk = exact_number(k, "k", finite=True, real=True)
        if not kk.is_positive:
            raise ArgumentError("k", "a positive number", k)
        return replace(self, radius=kk * self.radius)

    def points(self, dimension: int, interior: int = 0, radius=None) -> list[tuple]:
        """Exact boundary points to sample: the axis points ``±R e_i``, the diagonals scaled onto the
        sphere (every sign pattern up to dimension 3, else the two constant ones), and ``interior``
        pseudo-random boundary points (a fixed seed: the same points every run). ``radius`` replaces
        the radius (its value at given parameters)."""
        d = _dimension(dimension)
        R = self.radius if radius is None else radius
        out = [tuple(s * R if j == i else sp.S.Zero for j in range(d)) for i in range(d) for s in (1, -1)]
        signs = itertools.product((1, -1), repeat=d) if d <= 3 else [(1,) * d, (-1,) * d]
        directions = [tuple(sp.Integer(s) for s in sg) for sg in signs] if d > 1 else []
        rng = random.Random(20170307 + d)
        directions += [tuple(sp.Rational(rng.randint(-64, 64), 64) for _ in range(d)) for _ in range(interior)]
        for v in directions:
            n = self.norm_of(v)
            if n != 0:
                out.append(tuple(sp.nsimplify(c) * R / n for c in v))
        return list(dict.fromkeys(out))

    def numeric_norm(self, vector):
        """``||vector||_p`` of a vector of mpmath numbers, at the current precision."""
        if self.norm == 1:
            return mpmath.fsum(abs(c) for c in vector)
        if self.norm == 2:
            return mpmath.sqrt(mpmath.fsum(c**2 for c in vector))
        return max(abs(c) for c in vector)

    def retract(self, vector, radius):
        """``vector`` (mpmath numbers) scaled into the ball of the given numeric radius when outside it."""
        n = self.numeric_norm(vector)
        return tuple(c * radius / n for c in vector) if n > radius else tuple(vector)

    def radius_at(self, values: Mapping) -> sp.Expr:
        """The radius with the parameters in ``values`` (symbol or name -> number) substituted."""
        return self.radius.subs(_symbol_values(self.free_symbols, values or {}))


def _dimension(d) -> int:
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise ArgumentError("dimension", "a positive int", d)
    return d


@dataclass(frozen=True)
class AdjacentFamily:
    r"""A family of adjacent pairs ``(P_t, Q_t)``, one for every shift ``t`` in ``over``.

    .. math:: \varepsilon(\alpha) = \sup_{t \in T} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr)
       \qquad \text{(Mironov 2017, Def. 4, over all neighbouring inputs)}

    Attributes
    ----------
    P, Q: the output densities (pmfs) on the two inputs, sympy expressions in the mechanism's variable,
        its parameters and ``shift``.
    shift: the adjacency parameter ``t``, a real sympy Symbol, or for a vector query a tuple
        ``(t1, ..., td)`` of distinct real Symbols; it is not a parameter of the mechanism
        (:class:`~rdpsym.specify.mechanism.Mechanism` checks that), it is maximised over.
    over: the set ``T`` of shifts. For one shift, a bounded sympy ``Interval`` (open or closed ends)
        whose ends may use the mechanism's parameters, e.g. ``Interval(-sensitivity, sensitivity)``;
        ``start < end`` must follow from the parameters' assumptions. For a tuple of shifts, a
        :class:`ShiftBall` (the l1, l2 or l_inf ball of the query's sensitivity).
    label: a description for reports (``"f(D) = 0, f(D') = t"``).

    The Gaussian mechanism of sensitivity Δ: ``AdjacentFamily(N(0, σ²), N(t, σ²), shift=t,
    over=Interval(-Δ, Δ))``; its supremum is at ``|t| = Δ``, α Δ²/(2σ²) (Mironov 2017, Prop. 7).
    Its vector form: ``shift=(t1, t2), over=ShiftBall(norm=2, radius=Δ)`` with the product densities.
    """

    P: sp.Expr
    Q: sp.Expr
    shift: Any
    over: Any
    label: str = "D, D' at shift t"

    def __post_init__(self):
        for name in ("P", "Q"):
            if not isinstance(getattr(self, name), sp.Expr):
                raise ArgumentError(name, "a sympy expression (a density or pmf)", getattr(self, name))
        if isinstance(self.shift, (tuple, list)):
            object.__setattr__(self, "shift", tuple(self.shift))
            self._check_vector()
        else:
            self._check_scalar()
        if not any(self.P.has(t) or self.Q.has(t) for t in self.shift_symbols):
            raise ArgumentError("shift", "a symbol of P or Q", self.shift,
                                message=f"shift: neither P nor Q depends on {sp.sstr(self.shift)}; declare an "
                                        "AdjacentPair instead")
        object.__setattr__(self, "label", str(self.label))

    def _check_real_symbol(self, t, where: str = "") -> None:
        if not isinstance(t, sp.Symbol):
            raise ArgumentError("shift", "a sympy Symbol (the adjacency parameter t) or a tuple of them", t,
                                message=f"shift: {where}expected a sympy Symbol, got {t!r}")
        if t.is_real is not True:
            raise ArgumentError("shift", "a real Symbol (Symbol('t', real=True))", t,
                                message=f"shift: the adjacency parameter {t} must be declared real "
                                        f"(Symbol('{t}', real=True))")

    def _check_vector(self) -> None:
        ts = self.shift
        if not ts:
            raise ArgumentError("shift", "a non-empty tuple of real Symbols", ts)
        for i, t in enumerate(ts):
            self._check_real_symbol(t, f"entry {i} of the tuple: ")
            if t.is_nonnegative or t.is_nonpositive:
                raise ArgumentError("shift", "real Symbols without a sign (a ball has shifts of both signs)", t,
                                    message=f"shift: {t} is declared of one sign, but every coordinate of a ball "
                                            "takes both signs; declare it Symbol(..., real=True)")
        if len(set(ts)) != len(ts):
            raise ArgumentError("shift", "distinct Symbols", ts,
                                message=f"shift: a symbol is repeated in {sp.sstr(ts)}")
        if not isinstance(self.over, ShiftBall):
            raise ArgumentError("over", "a ShiftBall for a tuple of shifts", self.over,
                                message=f"over: a tuple of shifts {sp.sstr(ts)} ranges over a ball: pass "
                                        f"ShiftBall(norm=1|2|oo, radius=...), got {self.over!r}")
        used = [t for t in ts if self.over.radius.has(t)]
        if used:
            raise ArgumentError("over", f"a radius that does not use the shifts {sp.sstr(ts)}", self.over)

    def _check_scalar(self) -> None:
        t = self.shift
        self._check_real_symbol(t)
        if isinstance(self.over, ShiftBall):
            raise ArgumentError("over", "an Interval for one shift (a ShiftBall is for a tuple of shifts)",
                                self.over, message=f"over: one shift {t} ranges over an Interval, e.g. "
                                                   f"Interval(-{sp.sstr(self.over.radius)}, {sp.sstr(self.over.radius)}); "
                                                   "a ShiftBall needs shift=(t1, ..., td)")
        if not isinstance(self.over, sp.Interval):
            raise ArgumentError("over", "a sympy Interval of shifts, e.g. Interval(-sensitivity, sensitivity)",
                                self.over, message=f"over: expected a sympy Interval of shifts with start < end, got "
                                                   f"{sp.sstr(self.over) if isinstance(self.over, sp.Basic) else repr(self.over)}"
                                                   " (for one shift declare an AdjacentPair)")
        start, end = (_real_end(self.over.start, "start"), _real_end(self.over.end, "end"))
        if start.has(t) or end.has(t):
            raise ArgumentError("over", f"an Interval whose ends do not use the shift {t}", self.over)
        if (end - start).is_positive is not True:
            raise ArgumentError("over", "an Interval with start < end for every parameter value", self.over,
                                message=f"over: cannot tell that {sp.sstr(start)} < {sp.sstr(end)} from the "
                                        "parameters' assumptions; the set of shifts must be a proper interval")
        wrong = ("nonnegative", start) if t.is_nonnegative and start.is_negative else \
            ("nonpositive", end) if t.is_nonpositive and end.is_positive else None
        if wrong is not None:
            raise ArgumentError("shift", f"a Symbol whose assumptions allow every shift in {sp.sstr(self.over)}", t,
                                message=f"shift: {t} is declared {wrong[0]} but over = {sp.sstr(self.over)} "
                                        f"contains shifts of the other sign (near {sp.sstr(wrong[1])})")

    # -- the set of shifts --------------------------------------------------------------------------
    @property
    def is_vector(self) -> bool:
        """True for a tuple of shifts over a :class:`ShiftBall`."""
        return isinstance(self.shift, tuple)

    @property
    def shift_symbols(self) -> tuple[sp.Symbol, ...]:
        """The shift symbols, a tuple (of one for a scalar family)."""
        return self.shift if self.is_vector else (self.shift,)

    @property
    def ends(self) -> tuple[sp.Expr, sp.Expr]:
        """``(start, end)`` of ``over`` (a scalar family's Interval)."""
        if self.is_vector:
            raise ArgumentError("family", "a family over an Interval (a ball of shifts has no ends)", self.label,
                                message=f"family [{self.label}]: its shifts range over the {self.over}, which has "
                                        "no ends; use over.vertices or over.points")
        return self.over.start, self.over.end

    @property
    def parameter_symbols(self) -> frozenset:
        """The symbols the family uses besides its shift (the variable and parameters)."""
        return frozenset((self.P.free_symbols | self.Q.free_symbols | self.over.free_symbols) - set(self.shift_symbols))

    def assignment(self, value) -> dict:
        """``{shift symbol: value}``: one entry for a scalar family, one per coordinate for a vector one."""
        if not self.is_vector:
            return {self.shift: value}
        if not isinstance(value, (tuple, list)) or len(value) != len(self.shift):
            raise ArgumentError("value", f"a tuple of {len(self.shift)} shifts, one per symbol of {sp.sstr(self.shift)}",
                                value)
        return dict(zip(self.shift, value))

    def describe(self, value) -> str:
        """``"t = v"`` or ``"(t1, t2) = (v1, v2)"`` for reports."""
        def show(v):  # a sampled shift is exact (sympy) or, during refinement, an mpmath number
            if isinstance(v, sp.Basic) and v.is_number and not v.is_Rational:
                v = mpmath.mpf(sp.N(v, 20))
            return mpmath.nstr(v, 8) if isinstance(v, mpmath.mpf) else sp.sstr(v)
        if self.is_vector:
            return f"({', '.join(map(str, self.shift))}) = ({', '.join(show(v) for v in value)})"
        return f"{self.shift} = {show(value)}"

    def member(self, value, label: str | None = None):
        """The adjacent pair ``(P_t, Q_t)`` at shift ``t = value`` (an expression in the parameters, or a
        number; a tuple for a vector family); ``ArgumentError`` when ``value`` is outside ``over``."""
        if self.is_vector:
            vs = tuple(v if isinstance(v, sp.Expr) else exact_number(v, "value", finite=True, real=True)
                       for v in self.assignment(value).values())
            inside = sp.simplify(self.over.radius - self.over.norm_of(vs))
            if inside.is_negative:
                raise ArgumentError("value", f"a shift vector in the {self.over}", value)
            subs = dict(zip(self.shift, vs))
            name = label if label is not None else f"{self.label}; {self.describe(vs)}"
            return AdjacentPair(self.P.subs(subs), self.Q.subs(subs), name)
        v = value if isinstance(value, sp.Expr) else exact_number(value, "value", finite=True, real=True)
        if self.over.contains(v) is sp.false:
            raise ArgumentError("value", f"a shift in {sp.sstr(self.over)}", value)
        name = label if label is not None else f"{self.label}; {self.shift} = {sp.sstr(v)}"
        return AdjacentPair(self.P.subs(self.shift, v), self.Q.subs(self.shift, v), name)

    def shifts(self, values: Mapping | None = None, interior: int = 0) -> list:
        """The ends of ``over`` and ``interior`` equally spaced interior shifts, exact: expressions in the
        parameters, or numbers when ``values`` (symbol or name -> number) gives them. An open end is
        included: the supremum over an interval is approached there. For a vector family, the boundary
        points of :meth:`ShiftBall.points` (``interior`` pseudo-random ones besides the axes and diagonals)."""
        if not isinstance(interior, int) or isinstance(interior, bool) or interior < 0:
            raise ArgumentError("interior", "a non-negative int", interior)
        if self.is_vector:
            R = self.over.radius
            if values:
                R = R.subs(_symbol_values(self.over.free_symbols, values))
            return self.over.points(len(self.shift), interior, radius=R)
        start, end = self.ends
        if values:
            subs = _symbol_values(self.over.free_symbols, values)
            start, end = start.subs(subs), end.subs(subs)
        n = interior + 1
        return [start] + [start + (end - start) * sp.Rational(k, n) for k in range(1, n)] + [end]

    def subs(self, mapping: Mapping) -> "AdjacentFamily":
        """The family with parameters substituted (``mapping``: symbol -> expression) in ``P``, ``Q`` and
        ``over``; the shift itself cannot be substituted (that is :meth:`member`)."""
        if not isinstance(mapping, Mapping):
            raise ArgumentError("mapping", "a dict of parameter symbols to expressions", mapping)
        if any(t in mapping for t in self.shift_symbols):
            raise ArgumentError("mapping", f"a substitution of parameters, not of the shift {sp.sstr(self.shift)}", mapping)
        if self.is_vector:
            return replace(self, P=self.P.subs(mapping), Q=self.Q.subs(mapping), over=self.over.subs(mapping))
        over = sp.Interval(self.over.start.subs(mapping), self.over.end.subs(mapping),
                           self.over.left_open, self.over.right_open)
        return replace(self, P=self.P.subs(mapping), Q=self.Q.subs(mapping), over=over)

    def scaled(self, k) -> "AdjacentFamily":
        """The family over ``k T = {k t : t in T}`` (``k > 0``): for a location family, inputs ``k``
        adjacent steps apart, whose shifts add up to the Minkowski sum ``T + ... + T = k T`` of the
        convex set ``T`` (an interval or a ball)."""
        if self.is_vector:
            return replace(self, over=self.over.scaled(k))
        kk = exact_number(k, "k", finite=True, real=True)
        if not kk.is_positive:
            raise ArgumentError("k", "a positive number", k)
        over = sp.Interval(kk * self.over.start, kk * self.over.end, self.over.left_open, self.over.right_open)
        return replace(self, over=over)


def _symbol_values(symbols, values: Mapping) -> dict:
    by_name = {s.name: s for s in symbols}
    out = {}
    for key, v in values.items():
        sym = key if isinstance(key, sp.Symbol) else by_name.get(key)
        if sym is not None and sym in symbols:
            out[sym] = v if isinstance(v, sp.Expr) else exact_number(v, f"values[{sym.name!r}]", finite=True, real=True)
    return out
