r"""Neighbouring inputs as data: a family of adjacent pairs indexed by a shift ``t`` in a set ``T``.

A mechanism whose neighbouring inputs differ by a shift ``t`` of the query (``|f(D) - f(D')| <=
sensitivity``, or ``t`` in a user-given interval) has output distributions ``P_t = M(D)`` and ``Q_t =
M(D')`` for every ``t`` in ``T``. Its RDP curve is the supremum over the family (Mironov 2017,
arXiv:1702.07476 v3, Def. 4: the bound must hold for *all* adjacent inputs, both orders of each):

.. math:: \varepsilon(\alpha) = \sup_{t \in T} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr).

:class:`AdjacentFamily` declares such a family; :func:`rdpsym.rdp` derives the divergence with ``t``
symbolic and takes the supremum symbolically when it can show the divergence non-decreasing in ``|t|``
(see :mod:`rdpsym.derive.adjacency`), and numerically otherwise. :func:`supremum_over_family` is that
numeric supremum at given parameter values: a maximisation over sampled shifts, refined by golden-section
search (:mod:`rdpsym._optimize`), hence a lower estimate of the supremum, never a bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import mpmath
import sympy as sp

from .._numbers import ArgumentError, exact_number
from .._optimize import golden_max

__all__ = ["AdjacentFamily", "FamilySupremum", "maximise_over_family", "supremum_over_family"]


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


@dataclass(frozen=True)
class AdjacentFamily:
    r"""A family of adjacent pairs ``(P_t, Q_t)``, one for every shift ``t`` in ``over``.

    .. math:: \varepsilon(\alpha) = \sup_{t \in T} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr)
       \qquad \text{(Mironov 2017, Def. 4, over all neighbouring inputs)}

    Attributes
    ----------
    P, Q: the output densities (pmfs) on the two inputs, sympy expressions in the mechanism's variable,
        its parameters and ``shift``.
    shift: the adjacency parameter ``t``, a real sympy Symbol; it is not a parameter of the mechanism
        (:class:`~rdpsym.specify.mechanism.Mechanism` checks that), it is maximised over.
    over: the set ``T`` of shifts, a bounded sympy ``Interval`` (open or closed ends) whose ends may use
        the mechanism's parameters, e.g. ``Interval(-sensitivity, sensitivity)``; ``start < end`` must
        follow from the parameters' assumptions.
    label: a description for reports (``"f(D) = 0, f(D') = t"``).

    The Gaussian mechanism of sensitivity Δ: ``AdjacentFamily(N(0, σ²), N(t, σ²), shift=t,
    over=Interval(-Δ, Δ))``; its supremum is at ``|t| = Δ``, α Δ²/(2σ²) (Mironov 2017, Prop. 7).
    """

    P: sp.Expr
    Q: sp.Expr
    shift: sp.Symbol
    over: sp.Interval
    label: str = "D, D' at shift t"

    def __post_init__(self):
        for name in ("P", "Q"):
            if not isinstance(getattr(self, name), sp.Expr):
                raise ArgumentError(name, "a sympy expression (a density or pmf)", getattr(self, name))
        t = self.shift
        if not isinstance(t, sp.Symbol):
            raise ArgumentError("shift", "a sympy Symbol (the adjacency parameter t)", t)
        if t.is_real is not True:
            raise ArgumentError("shift", "a real Symbol (Symbol('t', real=True))", t,
                                message=f"shift: the adjacency parameter {t} must be declared real "
                                        f"(Symbol('{t}', real=True))")
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
        if not (self.P.has(t) or self.Q.has(t)):
            raise ArgumentError("shift", "a symbol of P or Q", t,
                                message=f"shift: neither P nor Q depends on {t}; declare an AdjacentPair instead")
        object.__setattr__(self, "label", str(self.label))

    # -- the set of shifts --------------------------------------------------------------------------
    @property
    def ends(self) -> tuple[sp.Expr, sp.Expr]:
        """``(start, end)`` of ``over``."""
        return self.over.start, self.over.end

    @property
    def parameter_symbols(self) -> frozenset:
        """The symbols the family uses besides its shift (the variable and parameters)."""
        return frozenset((self.P.free_symbols | self.Q.free_symbols | self.over.free_symbols) - {self.shift})

    def member(self, value, label: str | None = None):
        """The adjacent pair ``(P_t, Q_t)`` at shift ``t = value`` (an expression in the parameters, or a
        number); ``ArgumentError`` when ``value`` is outside ``over``."""
        from .mechanism import AdjacentPair

        v = value if isinstance(value, sp.Expr) else exact_number(value, "value", finite=True, real=True)
        if self.over.contains(v) is sp.false:
            raise ArgumentError("value", f"a shift in {sp.sstr(self.over)}", value)
        name = label if label is not None else f"{self.label}; {self.shift} = {sp.sstr(v)}"
        return AdjacentPair(self.P.subs(self.shift, v), self.Q.subs(self.shift, v), name)

    def shifts(self, values: Mapping | None = None, interior: int = 0) -> list[sp.Expr]:
        """The ends of ``over`` and ``interior`` equally spaced interior shifts, exact: expressions in the
        parameters, or numbers when ``values`` (symbol or name -> number) gives them. An open end is
        included: the supremum over an interval is approached there."""
        if not isinstance(interior, int) or isinstance(interior, bool) or interior < 0:
            raise ArgumentError("interior", "a non-negative int", interior)
        start, end = self.ends
        if values:
            subs = _symbol_values(self.over.free_symbols, values)
            start, end = start.subs(subs), end.subs(subs)
        n = interior + 1
        return [start] + [start + (end - start) * sp.Rational(k, n) for k in range(1, n)] + [end]

    def subs(self, mapping: Mapping) -> "AdjacentFamily":
        """The family with parameters substituted (``mapping``: symbol -> expression) in ``P``, ``Q`` and
        the ends of ``over``; the shift itself cannot be substituted (that is :meth:`member`)."""
        if not isinstance(mapping, Mapping):
            raise ArgumentError("mapping", "a dict of parameter symbols to expressions", mapping)
        if self.shift in mapping:
            raise ArgumentError("mapping", f"a substitution of parameters, not of the shift {self.shift}", mapping)
        over = sp.Interval(self.over.start.subs(mapping), self.over.end.subs(mapping),
                           self.over.left_open, self.over.right_open)
        return replace(self, P=self.P.subs(mapping), Q=self.Q.subs(mapping), over=over)

    def scaled(self, k) -> "AdjacentFamily":
        """The family over ``k T = {k t : t in T}`` (``k > 0``): for a location family, inputs ``k``
        adjacent steps apart, whose shifts add up to the Minkowski sum ``T + ... + T = k T`` of the
        interval ``T``."""
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


# --------------------------------------------------------------------------------------------------
# the numeric supremum
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FamilySupremum:
    """A numeric maximisation over the shifts of a family at given parameter values.

    ``value`` is the largest value found (``+oo`` included), ``error`` its error estimate, ``converged``
    whether every evaluation converged (else the maximum is not trustworthy), ``shift`` the shift where
    it was found, ``evaluations`` every ``(shift, label, evaluation)`` computed (``evaluation`` has
    ``value``, ``error``, ``converged``; ``label`` is ``"P||Q"`` or ``"Q||P"`` for divergences).
    A numeric maximisation: a lower estimate of the supremum (exact when the supremum is at an
    evaluated shift, e.g. an end for a divergence monotone in ``|t|``), never an upper bound.
    """

    value: Any
    error: Any
    converged: bool
    shift: Any
    evaluations: tuple = ()
    note: str = ""


@dataclass(frozen=True)
class _Failed:
    """An evaluation that raised: not converged, value 0 (it never wins the maximum), reason kept."""

    detail: str
    value: Any = mpmath.mpf(0)
    error: Any = mpmath.inf
    converged: bool = False


def maximise_over_family(family: AdjacentFamily, evaluate: Callable, values: Mapping | None = None, *,
                         interior: int = 3, refine: int = 0, dps: int = 30) -> FamilySupremum:
    """The largest of ``evaluate(shift)`` over sampled shifts of ``family`` at parameter ``values``.

    ``evaluate(shift) -> [(label, evaluation), ...]`` computes whatever is maximised (each evaluation
    with ``value``, ``error``, ``converged``) at one exact shift (an mpmath number during refinement).
    Sampled: the ends of ``T`` (an open end too: the supremum is approached there) and ``interior``
    equally spaced interior shifts; with ``refine > 0``, ``refine`` golden-section steps
    (:func:`rdpsym._optimize.golden_max`, which assumes unimodality there) on the bracket around the
    best sampled shift. An evaluation that raises ``ValueError``/``ArithmeticError`` is kept as not
    converged. A numeric maximisation: a lower estimate of the supremum.
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
            found = [("", _Failed(str(exc)))]
        evaluations.extend((shift_value, label, ev) for label, ev in found)
        return max(ev.value for _, ev in found)

    points = family.shifts(values or {}, interior)
    if not all(p.is_number for p in points):
        missing = sorted(str(s) for p in points for s in p.free_symbols)
        raise ArgumentError("values", f"values for the parameters of over = {sp.sstr(family.over)}", values,
                            message=f"values: no value for {', '.join(dict.fromkeys(missing))}, which the set of "
                                    f"shifts {sp.sstr(family.over)} uses")
    with mpmath.workdps(dps + 10):
        scan = [at(p) for p in points]
        if refine and len(points) > 2:
            i = max(range(len(points)), key=lambda j: scan[j])
            lo, hi = points[max(i - 1, 0)], points[min(i + 1, len(points) - 1)]
            if scan[i] != mpmath.inf:
                golden_max(at, mpmath.mpf(sp.N(lo, dps + 10)), mpmath.mpf(sp.N(hi, dps + 10)), refine)
        top = max(evaluations, key=lambda e: e[2].value)
        converged = all(e[2].converged for e in evaluations)
        if top[2].value == mpmath.inf and top[2].converged:
            converged = True  # +oo wins the maximum whatever the other evaluations' accuracy
        note = (f"numeric maximisation over {family.shift} in {sp.sstr(family.over)}: {len(points)} sampled shifts"
                f"{f' and {refine} golden-section steps' if refine else ''}, {len(evaluations)} evaluations; "
                "a lower estimate of the supremum")
        return FamilySupremum(top[2].value, top[2].error, converged, top[0], tuple(evaluations), note)


def _numeric_divergence():
    from ..numeric import numeric_divergence  # the independent numeric path (lazy: it imports specify)

    return numeric_divergence


def supremum_over_family(family: AdjacentFamily, x: sp.Symbol, support: sp.Set, alpha, values: Mapping, *,
                         dps: int = 30, interior: int = 3, refine: int = 0,
                         directions: tuple[str, ...] = ("P||Q", "Q||P"),
                         divergence: Callable | None = None) -> FamilySupremum:
    r"""The numeric :math:`\sup_{t \in T} \max(D_\alpha(P_t\|Q_t), D_\alpha(Q_t\|P_t))` at parameter ``values``.

    The numeric divergence (:func:`rdpsym.numeric.numeric_divergence`, or ``divergence`` with its
    signature) in each of ``directions``, maximised over the shifts by :func:`maximise_over_family`
    (the ends, ``interior`` interior shifts, ``refine`` golden-section steps). A numeric maximisation:
    the result is the largest value *found*, a lower estimate of the supremum; every evaluation must
    converge for ``converged``.
    """
    bad = [d for d in directions if d not in ("P||Q", "Q||P")] if isinstance(directions, tuple) else [directions]
    if bad or not directions:
        raise ArgumentError("directions", "a non-empty tuple of 'P||Q' and 'Q||P'", directions)
    numeric = divergence or _numeric_divergence()
    t = family.shift
    base = {k: v for k, v in dict(values).items() if not (k == t or k == t.name)}

    def evaluate(shift_value):
        out = []
        for direction in directions:
            P, Q = (family.P, family.Q) if direction == "P||Q" else (family.Q, family.P)
            try:
                out.append((direction, numeric(P, Q, x, support, alpha, {**base, t: shift_value}, dps=dps)))
            except (ValueError, ArithmeticError) as exc:
                out.append((direction, _Failed(str(exc))))
        return out

    return maximise_over_family(family, evaluate, base, interior=interior, refine=refine, dps=dps)
