"""The result of a derivation: a closed form together with how it was obtained.

Everything rdpsym exports (LaTeX, tables, float code, certificates) is generated from this one object,
so documents cannot drift from the derivation.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import mpmath
import sympy as sp

from .. import printing
from .._config import settings
from .._numbers import precise
from ..specify.text.numbers import exact_or_symbolic
from ..specify.params import Parameter, check_assumptions
from ..symbols import alpha as ALPHA
from .evaluation import checked_value, decide, exact_at
from .._timeout import StepTimeout, deadline_passed, run_with_time_limit

__all__ = ["Status", "Step", "StepName", "Provenance", "ExceptionalPoint", "DivergenceResult",
           "OPTIONAL_STAGES", "expired_in"]



class Status(enum.StrEnum):
    """How a result was obtained."""

    #: An exact expression without unevaluated integrals or sums (it may be Piecewise in alpha).
    CLOSED_FORM = "closed_form"
    #: A valid upper bound, not the exact value.
    BOUND = "bound"
    #: No closed form was found; values come from numerical integration or summation only.
    NUMERIC_ONLY = "numeric_only"
    #: The divergence of some of the mechanism's neighbouring inputs only (``Mechanism.neighbours ==
    #: "some"``): the mechanism's RDP is at least this. It refutes an upper bound, never confirms one,
    #: and is never accounted with.
    LOWER_BOUND = "lower_bound"
    #: Nothing trustworthy could be produced; ``reason`` says why.
    FAILED = "failed"

    @classmethod
    def worst(cls, statuses: Iterable[Status]) -> Status:
        """The weakest of ``statuses`` (at least one), in the order the members are defined: closed_form <
        bound < numeric_only < lower_bound < failed. A result combined from parts is only as good as its
        weakest part."""
        order = list(cls)
        return max(statuses, key=order.index)


class StepName(enum.StrEnum):
    """The names of the provenance steps that other code reads (a :class:`Step`'s ``name`` is one of
    these, or free text for display only; derived pairs' steps are prefixed ``"<label>: "``)."""

    #: whether a reflection makes the two directions of a pair equal (:func:`rdpsym.derive.mechanism_rdp.rdp`);
    #: ``expr`` is the reflection's centre c (x -> c - x) when one is established, else None
    SYMMETRY = "symmetry"
    #: how a family's supremum over its shift t was taken (:mod:`rdpsym.derive.adjacency`, ``.balls``)
    SUPREMUM_OVER_T = "supremum over t"


@dataclass(frozen=True)
class Step:
    """One step of a derivation, with its duration."""

    name: str
    detail: str
    seconds: float = 0.0
    expr: sp.Basic | None = None

    def __str__(self) -> str:
        return f"{self.name} ({self.seconds:.3f} s): {self.detail}"


#: seconds for the simplification that matches an order to an exceptional point
MATCH_SECONDS = 5.0


def _shown_zero(e: sp.Expr) -> bool:
    """e simplifies to 0 within :data:`MATCH_SECONDS`; False when not shown (the general form is then
    evaluated, and a singular value there raises: fail closed)."""
    try:
        return run_with_time_limit(sp.simplify, e, seconds=MATCH_SECONDS) == 0
    except StepTimeout:
        if deadline_passed():
            raise
        return False


#: the stages whose expiry leaves only a gap the result records (:attr:`Provenance.expired`): the integer
#: orders of a result without a general form (:func:`rdpsym.derive.stages.integer_orders`); the orders not
#: derived in time are evaluated numerically. Such a result is cached with its gap; any other expired
#: stage keeps it out of every cache (:func:`rdpsym.derive.cache.cacheable`).
OPTIONAL_STAGES = frozenset({"integer_orders"})


@dataclass(frozen=True)
class Provenance:
    """How a result came about: inputs, steps, library versions, and checks that ran on it.

    ``expired`` names the stages that did not run to their end for a reason that need not recur: a time
    limit expired in them (or the derivation's budget cut them short), or an unexpected error (memory,
    recursion, a lost worker process, a library's internal error) ended them. The names are the stages
    of :data:`rdpsym.derive.stages.STAGES` (``"general"``, ``"kl"``, ``"integer_orders"``, ...), plus
    ``"symmetry"`` (the reflection search of :func:`rdpsym.rdp`) and ``"derivation"`` (a time limit that
    expired outside a named stage, or an enclosing one). Only those in :data:`OPTIONAL_STAGES` leave a
    result that may be cached.
    """

    steps: tuple[Step, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    versions: tuple[tuple[str, str], ...] = ()
    verifications: tuple[Any, ...] = ()
    expired: tuple[str, ...] = ()

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)

    @property
    def required_expired(self) -> tuple[str, ...]:
        """The expired stages that are not optional: a result with any is never cached."""
        return tuple(s for s in self.expired if s not in OPTIONAL_STAGES)

    def describe(self) -> str:
        lines = [f"{k}: {v}" for k, v in self.inputs]
        lines += [f"- {s}" for s in self.steps]
        lines += [f"verification: {v}" for v in self.verifications]
        if self.expired:
            lines.append("expired stages: " + ", ".join(self.expired)
                         + ("" if self.required_expired else " (optional: the result records the gap)"))
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in self.versions))
        return "\n".join(lines)


def expired_in(results) -> tuple[str, ...]:
    """The expired stages of several results' provenances, each once, in order (for a result assembled
    from them)."""
    return tuple(dict.fromkeys(name for r in results for name in r.provenance.expired))


@dataclass(frozen=True)
class ExceptionalPoint:
    """An order alpha0 where the general expression is singular but the divergence is not.

    ``value`` is the limit of the expression as alpha -> alpha0 (e.g. Laplace at alpha = 1/2,
    Mironov 2017, Prop. 6).
    """

    alpha: sp.Expr
    value: sp.Expr
    condition: sp.Basic = sp.true


def _guard_fired(label: str, alpha, values, seconds: float) -> str:
    """What an evaluation stopped by its hang guard says: which guard, of how long, and that it is one (the
    numeric path's decisions count terms, digits and boxes; this limit only stops a hang)."""
    return (f"{label}: evaluation at alpha={alpha}, {values} stopped by its hang guard of {seconds:g} s of wall "
            "clock (RDPSYM_EVAL_SECONDS; a guard against a hang, not a budget: no value is taken from it)")


@dataclass(frozen=True)
class DivergenceResult:
    """D_alpha(P||Q) (or a mechanism's RDP curve) with its conditions, special orders and provenance.

    ``expr`` is valid for alpha in (0, 1) and (1, oo) wherever ``conditions`` hold; outside them the
    divergence is +oo. ``kl`` is the order-1 value (KL divergence) and ``max_divergence`` the order-oo
    value (ess sup of log P/Q). Use :meth:`at` for exact values and :meth:`evaluate` for numbers: both
    route alpha = 1, alpha = oo and exceptional points to their limits and return +oo outside
    ``conditions``.
    """

    expr: sp.Expr | None
    status: Status
    reason: str = ""
    conditions: sp.Basic = sp.true
    kl: sp.Expr | None = None
    max_divergence: sp.Expr | None = None
    exceptional_points: tuple[ExceptionalPoint, ...] = ()
    symbols: tuple[sp.Symbol, ...] = ()
    provenance: Provenance = field(default_factory=Provenance)
    label: str = "D_alpha(P||Q)"
    alpha: sp.Symbol = ALPHA
    #: each parameter symbol's domain (from the Parameters it was derived with), checked by at/evaluate
    domains: tuple[tuple[sp.Symbol, sp.Set], ...] = ()
    #: the densities it was derived from, ``(P, Q, x, support)`` as sympy objects (None for a result
    #: assembled otherwise, e.g. a mechanism's maximum over pairs): checks evaluate them directly
    pair: tuple | None = field(default=None, compare=False, repr=False)
    #: the :class:`~rdpsym.specify.mechanism.Mechanism` whose RDP curve this is (None for a result of one
    #: pair of densities, or one assembled otherwise): downstream code uses its densities and parameters
    #: directly instead of finding the mechanism again by name
    mechanism: Any = field(default=None, compare=False, repr=False)
    #: ``(k, D_k)`` for integer orders k >= 2 derived exactly when the general order was not (by the
    #: multinomial expansion, :mod:`rdpsym.derive.integer_order`); :meth:`evaluate` uses them
    integer_orders: tuple[tuple[int, sp.Expr], ...] = ()
    #: for a result without a general form: the curve object :func:`rdpsym.rdp` attached, whose
    #: ``value(result, alpha, values, dps)`` gives the :class:`~rdpsym.derive.numeric_values.CurveValue`
    #: at orders without an exact piece (the numeric maximum over a mechanism's worst pairs,
    #: :class:`~rdpsym.derive.numeric_values.NumericCurve`; a subsampled mechanism's curve,
    #: :class:`~rdpsym.derive.subsampled.SubsampledCurve`). Data only (pairs, densities, results), so it
    #: survives a cache round-trip; None: the numeric path on the result's own densities (``pair``)
    curve: Any = field(default=None, compare=False, repr=False)

    # -- conveniences -----------------------------------------------------------------------------
    @property
    def is_closed_form(self) -> bool:
        return self.status is Status.CLOSED_FORM

    @property
    def is_piecewise(self) -> bool:
        return isinstance(self.expr, sp.Piecewise)

    @property
    def full_expr(self) -> sp.Expr:
        """``expr`` with +oo outside ``conditions``, as one Piecewise."""
        if self.expr is None:
            raise ValueError(f"{self.label} has no expression (status {self.status}: {self.reason})")
        if self.conditions is sp.true:
            return self.expr
        return sp.Piecewise((self.expr, self.conditions), (sp.oo, True))

    def with_verification(self, record) -> "DivergenceResult":
        """A copy whose provenance also holds ``record``."""
        prov = replace(self.provenance, verifications=self.provenance.verifications + (record,))
        return replace(self, provenance=prov)

    def substitutions(self, values: Mapping) -> dict[sp.Symbol, sp.Expr]:
        """Parameter values by symbol, exact, each checked against its domain (or its symbol's
        assumptions when the result has no domains): NaN, infinities and out-of-domain values raise
        ``ValueError`` naming the parameter, instead of giving a number for a mechanism that does not exist."""
        by_name = {s.name: s for s in self.symbols}
        domains = dict(self.domains)
        out = {}
        for key, value in values.items():
            sym = by_name.get(key) if isinstance(key, str) else key
            if sym is None:
                raise ValueError(f"{key!r} is not a parameter of this result; parameters: {sorted(by_name)}")
            name = getattr(sym, "name", str(key))
            v = exact_or_symbolic(value, name)
            if v.is_number:
                if v.is_finite is False:
                    raise ValueError(f"{name} must be finite; got {value}")
                domain = domains.get(sym)
                if domain is not None and domain.contains(v) is sp.false:
                    raise ValueError(f"{name} must lie in {printing.sstr(domain)}; got {value}")
                check_assumptions(sym, v, name)
            out[sym] = v
        for sym, v in out.items():  # a domain relating parameters (m2 in (m1, oo)), at the other values
            domain = domains.get(sym)
            if domain is not None and domain.free_symbols and v.is_number and domain.subs(out).contains(v) is sp.false:
                raise ValueError(f"{sym.name} must lie in {printing.sstr(domain)}; got {printing.sstr(v)} at {printing.sstr(out)}")
        return out

    def _order(self, alpha) -> sp.Expr:
        """alpha as an exact number (oo allowed), checked: > 0."""
        a = exact_or_symbolic(alpha, "alpha")
        if isinstance(a, sp.Float) and a.is_finite:
            # a Float order is its exact binary value: Float(1.0) must route to the KL like 1 does
            # (sympy's Float(1.0) == Integer(1) is False), and Float(0.5) to the removable point
            a = sp.Rational(a)
        if a.is_number and (a.is_extended_positive is False or a is sp.nan):
            raise ValueError(f"alpha must be > 0; got {alpha}")
        return a

    def _require_values(self, expr: sp.Basic, subs: Mapping, alpha, values) -> None:
        missing = sorted(s.name for s in expr.free_symbols - set(subs) - {self.alpha})
        if missing:
            raise ValueError(f"{self.label}: no value given for {', '.join(missing)} "
                             f"(evaluate at alpha={alpha} got {sorted(map(str, values))})")

    # -- values -----------------------------------------------------------------------------------
    def at(self, alpha=None, **values) -> sp.Expr:
        """The exact divergence at order ``alpha`` and parameter ``values`` (names or symbols).

        Routes alpha = 1 to ``kl``, alpha = oo to ``max_divergence`` and exceptional points to their
        limits; returns +oo where the finiteness conditions fail.
        """
        subs = self.substitutions(values)
        if self.expr is None:
            if alpha is not None:
                exact = self.exact_piece(self._order(alpha))
                if exact is not None:
                    return sp.oo if exact == sp.oo else exact_at(exact, subs)
            raise ValueError(f"{self.label} has no closed form at alpha = {alpha} (status {self.status}: "
                             f"{self.reason}); evaluate() gives its certified numeric value")
        if alpha is None:
            return self.full_expr.subs(subs)
        a = self._order(alpha)
        if a == 1:
            return self._special(self.kl, "kl", subs)
        if a == sp.oo:
            return self._special(self.max_divergence, "max_divergence", subs)
        cond = self.conditions.subs(self.alpha, a).subs(subs)
        if cond not in (sp.true, sp.false) and not cond.free_symbols:
            decided = decide(self.conditions, {**subs, self.alpha: a}, 30)
            cond = cond if decided is None else sp.true if decided else sp.false
        if cond is sp.false:
            return sp.oo
        point = self._exceptional_point(a, subs)
        if point is not None:
            return exact_at(point.value, {**subs, self.alpha: a})
        value = exact_at(self.expr, {**subs, self.alpha: a})
        if value.has(sp.nan, sp.zoo):
            raise ArithmeticError(f"{self.label} is singular at alpha={a}, {values}, not a known exceptional point")
        if cond is not sp.true:
            return sp.Piecewise((value, cond), (sp.oo, True))
        return value

    def _exceptional_point(self, a, subs) -> ExceptionalPoint | None:
        """The exceptional point at order ``a`` for the parameter values ``subs``: its alpha (which may
        be an expression in the parameters, b1/(b1 + b2)) equals ``a`` exactly there, and its condition holds."""
        for point in self.exceptional_points:
            at = point.alpha.subs(subs) if point.alpha.free_symbols else point.alpha
            if at == a or (not (at.is_Rational and a.is_Rational) and at.free_symbols == a.free_symbols
                           and _shown_zero(at - a)):
                if (point.condition if point.condition is sp.true else point.condition.subs(subs)) is sp.true:
                    return point
        return None

    def _special(self, expr, name, subs):
        if expr is None:
            raise ValueError(f"{self.label}: the {name} was not derived (status {self.status}: {self.reason})")
        return exact_at(expr, subs)

    def exact_piece(self, a) -> sp.Expr | None:
        """For a result without a general form (``expr`` None): the exact expression for order ``a``: the
        KL, D_inf, a removable order, or an integer order k >= 2 (recorded, else up to k = 32 derived now by
        the multinomial expansion, :func:`rdpsym.derive.integer_order.integer_order_value`, where it gives
        one within the step limit); None when there is none."""
        if a == 1:
            return self.kl
        if a == sp.oo:
            return self.max_divergence
        for point in self.exceptional_points:
            if point.alpha == a:
                return point.value
        if a.is_Integer:
            recorded = dict(self.integer_orders).get(int(a))
            if recorded is not None or a < 2:
                return recorded
            # any other integer order: derived on request by the expansion, where it gives one
            source = integer_order_source()
            return None if source is None else source.value(self, int(a))
        return None

    def evaluate(self, alpha, dps: int = 30, **values) -> mpmath.mpf:
        """The divergence as an mpmath number with ``dps`` digits (+inf outside the conditions).

        The number is a :class:`~rdpsym._numbers.PreciseMpf`: an ``mpmath.mpf`` that prints its ``dps``
        digits (``print(result.evaluate(2, dps=40, ...))`` shows 40 digits, not mpmath's default 15)
        and becomes a sympy Float of ``dps`` digits under ``sympify``; ``float()`` of it is the float.

        For a result without a general closed form (``numeric_only``) the value comes from its exact
        pieces where it has one (KL, D_inf, removable and integer orders) and otherwise from the numeric
        path on its densities, certified to ``dps`` digits (:meth:`evaluate_with_error` says which).
        NaN is never returned: a value that cannot be evaluated raises ``ArithmeticError``.
        """
        if self.expr is None:
            return precise(self.evaluate_with_error(alpha, dps, **values).value, dps)
        from .._timeout import StepTimeout, run_with_time_limit

        limit = settings().eval_seconds  # RDPSYM_EVAL_SECONDS, validated
        a = self._order(alpha)
        subs = self.substitutions(values)  # bad values raise here, before any work
        special = a in (sp.Integer(1), sp.oo) or self._exceptional_point(a, subs) is not None
        try:
            if special:
                number = run_with_time_limit(self._evaluate_special, a, values, dps, seconds=limit, clock="wall")
            else:
                number = run_with_time_limit(self._evaluate_general, a, values, dps, seconds=limit, clock="wall")
        except StepTimeout:
            raise ArithmeticError(_guard_fired(self.label, alpha, values, limit)) from None
        if isinstance(number, sp.Piecewise):
            raise ArithmeticError(f"{self.label}: cannot decide the conditions at alpha={alpha}, {values}")
        if number == sp.oo:
            return mpmath.inf
        if not number.has(sp.nan, sp.zoo) and number.is_real is False and number.is_finite:
            # logs of negative factors whose imaginary parts cancel exactly leave a residue of the
            # working precision when evaluated with Floats: drop it only when it is that small
            re, im = number.as_real_imag()
            if abs(im) <= sp.Float(10) ** (-(dps + 5)) * max(sp.Integer(1), abs(re)):
                number = re
        if number.has(sp.nan, sp.zoo) or not number.is_real:
            raise ArithmeticError(f"{self.label} evaluates to {number} at alpha={alpha}, {values}")
        if number == sp.oo:
            return mpmath.inf
        # The mpf keeps dps digits whatever the caller's context is, and prints them (PreciseMpf).
        with mpmath.workdps(dps):
            return precise(+mpmath.mpf(number), dps)

    def evaluate_with_error(self, alpha, dps: int = 30, **values):
        """:meth:`evaluate` with how the value was obtained: a
        :class:`~rdpsym.derive.numeric_values.CurveValue` (value, absolute error, exact or numeric, method).

        An exact value (closed form, or an exact piece of a ``numeric_only`` result) has the error of its
        rounding to ``dps`` digits; a numeric one the numeric path's estimate, at most ``10^-dps``
        relative (else ``ArithmeticError``). Bounded by ``RDPSYM_EVAL_SECONDS``."""
        from .numeric_values import CurveValue, numeric_value
        from .._timeout import StepTimeout, run_with_time_limit

        a = self._order(alpha)
        subs = self.substitutions(values)  # bad values raise here, before any work

        def rounding(v):
            with mpmath.workdps(dps):
                return mpmath.mpf(0) if mpmath.isinf(v) else abs(v) * mpmath.mpf(10) ** (1 - dps)

        if self.expr is not None:
            v = self.evaluate(alpha, dps, **values)
            return CurveValue(v, rounding(v), dps, str(self.status).replace("_", " "), self.status is Status.CLOSED_FORM)
        if self.status is Status.FAILED:
            raise ArithmeticError(f"{self.label}: nothing could be derived (status failed: {self.reason})")

        def compute():
            exact = self.exact_piece(a)
            if exact is not None:
                if exact == sp.oo:
                    return CurveValue(mpmath.inf, mpmath.mpf(0), dps, "exact piece", True)
                self._require_values(exact, subs, alpha, values)
                number = checked_value(exact, {**subs, self.alpha: a} if a != sp.oo else subs, dps)
                if number == sp.oo:
                    return CurveValue(mpmath.inf, mpmath.mpf(0), dps, "exact piece", True)
                if number.has(sp.nan, sp.zoo) or not number.is_real:
                    raise ArithmeticError(f"{self.label}: the exact value at alpha={alpha} is {number}")
                with mpmath.workdps(dps):
                    v = +mpmath.mpf(number)
                return CurveValue(v, rounding(v), dps, _piece_name(self, a), True)
            named = {s.name: v for s, v in subs.items()}
            partly = self._partly_exact(a, subs, named, dps) if a.is_Integer and a >= 2 else None
            if partly is not None:
                return partly
            if self.curve is not None:
                return self.curve.value(self, a, named, dps)
            return numeric_value(self, a, named, dps)

        limit = settings().eval_seconds
        try:
            return run_with_time_limit(compute, seconds=limit, clock="wall")
        except StepTimeout:
            raise ArithmeticError(_guard_fired(self.label, alpha, values, limit)) from None

    def _partly_exact(self, a, subs, named, dps):
        """D_k at an integer order k where the expansion gives some directions exactly and not others
        (:func:`rdpsym.derive.integer_order.integer_order_parts`): the largest exact part, when it is above
        every other direction's certified numeric value by more than their errors; else None."""
        from .numeric_values import CurveValue, numeric_digits
        from ..numeric.maximum import numeric_maximum

        source = integer_order_source()
        parts = None if source is None else source.parts(self, int(a), named)
        if parts is None or not parts[0] or not parts[1]:
            return None
        exact, rest = parts
        wp = numeric_digits(dps)
        numbers = []
        for e in exact:
            number = sp.oo if e == sp.oo else checked_value(e, {**subs, self.alpha: a}, wp + 10)
            if number != sp.oo and (number.has(sp.nan, sp.zoo) or not number.is_real or isinstance(number, sp.Piecewise)):
                return None
            numbers.append(number)
        if sp.oo in numbers:
            return CurveValue(mpmath.inf, mpmath.mpf(0), dps, _piece_name(self, a), True)
        found = numeric_maximum(rest, a, named, wp)
        with mpmath.workdps(wp + 10):
            top = max(mpmath.mpf(n) for n in numbers)
            if not found.converged or found.value == mpmath.inf or found.value + found.error >= top:
                return None  # a numeric direction may be the maximum: the value is not exact
        with mpmath.workdps(dps):
            v = +top
            return CurveValue(v, abs(v) * mpmath.mpf(10) ** (1 - dps), dps,
                              _piece_name(self, a) + ", above the other directions' numeric values", True,
                              f"the other directions: {mpmath.nstr(found.value, 15)} ± {mpmath.nstr(found.error, 3)}")

    def _floats(self, a, values, dps):
        """The substitutions for ``evalf(subs=...)``: exact numbers. evalf takes them numerically, with
        its adaptive precision, so 1 - p for p = 1 - 10**-60 keeps its digits (values rounded to
        dps + 20 digits first would make it 0) and p**alpha is never expanded exactly."""
        floats = dict(self.substitutions(values))
        if a != sp.oo:
            floats[self.alpha] = a
        return floats

    def _evaluate_special(self, a, values, dps):
        """alpha = 1, oo or an exceptional point: the special value, evaluated with Floats."""
        floats = self._floats(a, values, dps)
        if a == 1:
            target = self._special(self.kl, "kl", {})
        elif a == sp.oo:
            target = self._special(self.max_divergence, "max_divergence", {})
        else:
            cond = self.conditions.subs(floats) if self.conditions is not sp.true else sp.true
            if cond not in (sp.true, sp.false):
                decided = decide(self.conditions, floats, dps)
                cond = cond if decided is None else sp.true if decided else sp.false
            if cond is sp.false:
                return sp.oo
            target = self._exceptional_point(a, self.substitutions(values)).value
        if target == sp.oo:
            return sp.oo
        self._require_values(target, floats, a, values)
        return checked_value(target, floats, dps)

    def _evaluate_general(self, a, values, dps):
        """The general form at a non-special order, by ``evalf`` with the exact values in ``subs``.

        Exact substitution (``subs`` then ``evalf``) would make sympy expand p**alpha for rational p and
        alpha = 10**4 exactly; ``evalf(subs=...)`` evaluates numerically with adaptive precision instead.
        The finiteness conditions are decided exactly (they are cheap).
        """
        if self.expr is None:
            raise ValueError(f"{self.label} has no closed form (status {self.status}: {self.reason})")
        subs = self.substitutions(values)
        self._require_values(self.full_expr, subs, a, values)
        floats = self._floats(a, values, dps)
        cond = self.conditions
        if cond is not sp.true:
            cond = cond.subs(self.alpha, a).subs(subs)
            if cond not in (sp.true, sp.false):
                # at a boundary sympy leaves undecided: each comparison by its sign (numeric, or exact)
                decided = decide(self.conditions, floats, dps)
                cond = cond if decided is None else sp.true if decided else sp.false
            if cond is sp.false:
                return sp.oo
            if cond is not sp.true:
                raise ArithmeticError(f"{self.label}: cannot decide the conditions at alpha={a}, {values}")
        return checked_value(self.expr, floats, dps)

    # -- export (thin delegations to rdpsym.compile and rdpsym.report) ------------------------------------------------
    def to_numpy(self, **kwargs):
        """A stable, vectorised float function ``f(alpha, **params)``; see :func:`rdpsym.compile.to_numpy`."""
        from ..compile import to_numpy

        return to_numpy(self, **kwargs)

    def to_source(self, **kwargs) -> str:
        """Python source (numpy only) of :meth:`to_numpy`; see :func:`rdpsym.compile.generate_source`."""
        from ..compile import generate_source

        return generate_source(self, **kwargs)

    # -- display ----------------------------------------------------------------------------------
    def latex(self, steps: bool = False, **kwargs) -> str:
        """LaTeX of ``expr`` with conventional symbols (alpha, the parameters' ``latex``); with ``steps``,
        an ``aligned`` block with the special orders and derivation steps (:func:`rdpsym.report.latex.result_latex`)."""
        from ..report.latex import result_latex

        return result_latex(self, steps=steps, **kwargs)

    def _repr_latex_(self) -> str:
        """The whole curve as a ``cases`` display (general form under its finiteness conditions, the
        special orders, +oo elsewhere) with the parameters' LaTeX symbols
        (:func:`rdpsym.report.display.result_cases_latex`)."""
        from ..report.display import result_cases_latex

        return f"$${result_cases_latex(self)}$$"

    def _repr_html_(self) -> str:
        from ..report.display import result_html

        return result_html(self)

    def __repr__(self) -> str:
        from ..report.display import result_repr

        return result_repr(self)

    def parameters(self, given: Sequence[Parameter] | None = None) -> tuple[Parameter, ...]:
        """The :class:`~rdpsym.Parameter` of each of :attr:`symbols`: from ``given`` if passed, else from
        the mechanism the result was derived for (:attr:`mechanism`), else a parameter with the domain
        it was derived on (:attr:`domains`) or else the one its symbol's sign assumptions allow ((0, oo),
        [0, oo) or the reals), and typical range 0.5..5 (the middle half of a bounded domain).

        The generated float code checks its inputs against these domains and places its series by them.
        """
        by_symbol: dict = {}
        if given is not None:
            by_symbol.update({p.symbol: p for p in given})
        elif self.mechanism is not None:
            by_symbol.update({p.symbol: p for p in self.mechanism.parameters})
        out = []
        for s in self.symbols:
            if s in by_symbol:
                out.append(by_symbol[s])
                continue
            recorded, typical = dict(self.domains).get(s), (0.5, 5.0)
            if recorded is not None:
                # the domain the result was derived on (its kinks may have been ordered by it)
                dom, lo, hi = recorded, recorded.inf, recorded.sup
                if lo.is_number and hi.is_number and lo.is_finite and hi.is_finite:
                    typical = (float(lo + (hi - lo) / 4), float(hi - (hi - lo) / 4))
            elif s.is_positive:
                dom = sp.Interval.open(0, sp.oo)
            elif s.is_nonnegative:
                dom = sp.Interval(0, sp.oo)
            else:
                dom = sp.S.Reals
            out.append(Parameter(s.name, s, dom, typical, sp.latex(s)))
        return tuple(out)

    def special_orders(self) -> tuple[tuple[str, sp.Expr, sp.Expr], ...]:
        """The orders the general form does not cover, as ``(kind, alpha, value)`` rows in the order
        every presentation shows them: ``("kl", 1, KL)``, ``("max", oo, D_inf)``, then
        ``("removable", a, D_a)`` for each removable order (Mironov 2017, Def. 3 and Table II), then
        ``("integer", k, D_k)`` for the integer orders derived exactly when the general order was not."""
        rows = []
        if self.kl is not None:
            rows.append(("kl", sp.Integer(1), self.kl))
        if self.max_divergence is not None:
            rows.append(("max", sp.oo, self.max_divergence))
        rows += [("removable", p.alpha, p.value) for p in self.exceptional_points]
        rows += [("integer", sp.Integer(k), v) for k, v in self.integer_orders]
        return tuple(rows)

    def __str__(self) -> str:
        parts = [f"{self.label} [{self.status}]"]
        if self.expr is not None:
            parts.append(f"  alpha in (0,1) u (1,oo): {printing.sstr(self.expr)}")
            if self.conditions is not sp.true:
                parts.append(f"  finite where: {printing.sstr(self.conditions)}")
        for kind, order, value in self.special_orders():
            parts.append(f"  alpha = {printing.sstr(order)} ({printing.SPECIAL_ORDER_NAMES[kind]}): {printing.sstr(value)}")
        if self.reason:
            parts.append(f"  note: {self.reason}")
        return "\n".join(parts)


class IntegerOrderSource(NamedTuple):
    """Where a result without a closed form gets the integer orders it did not record:
    ``value(result, k)`` (an exact expression or None) and ``parts(result, k, values)`` (the exact
    directions and the others, or None); :mod:`rdpsym.derive.integer_order` registers the engine's
    multinomial expansion."""

    value: Callable
    parts: Callable


_INTEGER_ORDER_SOURCES: list[IntegerOrderSource] = []


def register_integer_order_source(source: IntegerOrderSource) -> None:
    """Register ``source`` (a registry, so that this module, which every layer reads, does not import
    the engine). The last one registered is used."""
    _INTEGER_ORDER_SOURCES.append(source)


def integer_order_source() -> IntegerOrderSource | None:
    """The registered source of integer orders, or None (then the numeric path gives those values)."""
    return _INTEGER_ORDER_SOURCES[-1] if _INTEGER_ORDER_SOURCES else None


def _piece_name(result: DivergenceResult, a) -> str:
    if a == 1:
        return "exact KL (alpha = 1)"
    if a == sp.oo:
        return "exact D_inf (alpha = oo)"
    if any(p.alpha == a for p in result.exceptional_points):
        return f"exact removable order alpha = {a}"
    return f"exact integer order alpha = {a} (multinomial expansion)"
