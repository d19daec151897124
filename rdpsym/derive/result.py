"""The result of a derivation: a closed form together with how it was obtained.

Everything rdpsym exports (LaTeX, tables, float code, certificates) is generated from this one object,
so documents cannot drift from the derivation.
"""

from __future__ import annotations

import enum
import os
import platform
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import mpmath
import sympy as sp

from ..specify.params import check_assumptions
from ..specify.text import as_number
from ..symbols import alpha as ALPHA

__all__ = ["Status", "Step", "Provenance", "ExceptionalPoint", "DivergenceResult", "library_versions"]


class Status(str, enum.Enum):
    """How a result was obtained."""

    #: An exact expression without unevaluated integrals or sums (it may be Piecewise in alpha).
    CLOSED_FORM = "closed_form"
    #: A valid upper bound, not the exact value.
    BOUND = "bound"
    #: No closed form was found; values come from numerical integration or summation only.
    NUMERIC_ONLY = "numeric_only"
    #: Nothing trustworthy could be produced; ``reason`` says why.
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Step:
    """One step of a derivation, with its duration."""

    name: str
    detail: str
    seconds: float = 0.0
    expr: sp.Basic | None = None

    def __str__(self) -> str:
        return f"{self.name} ({self.seconds:.3f} s): {self.detail}"


def library_versions() -> dict[str, str]:
    import numpy

    from .. import __version__

    return {
        "rdpsym": __version__,
        "sympy": sp.__version__,
        "mpmath": mpmath.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }


@dataclass(frozen=True)
class Provenance:
    """How a result came about: inputs, steps, library versions, and checks that ran on it."""

    steps: tuple[Step, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    versions: tuple[tuple[str, str], ...] = ()
    verifications: tuple[Any, ...] = ()

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)

    def describe(self) -> str:
        lines = [f"{k}: {v}" for k, v in self.inputs]
        lines += [f"- {s}" for s in self.steps]
        lines += [f"verification: {v}" for v in self.verifications]
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in self.versions))
        return "\n".join(lines)


@dataclass(frozen=True)
class ExceptionalPoint:
    """An order alpha0 where the general expression is singular but the divergence is not.

    ``value`` is the limit of the expression as alpha -> alpha0 (e.g. Laplace at alpha = 1/2,
    Mironov 2017, Prop. 6).
    """

    alpha: sp.Expr
    value: sp.Expr
    condition: sp.Basic = sp.true


def _as_exact(value, name: str = "value") -> sp.Expr:
    """``value`` as an exact sympy number (:func:`rdpsym.specify.parse.as_number`), or a sympy
    expression as it is (``at`` may leave parameters symbolic); ``name`` for errors.

    NaN is rejected: sympy's ``Rational(nan)`` is 0, which would turn a NaN parameter into a small
    divergence (fail closed instead). Infinities become ``oo``/``-oo`` for the caller to judge.
    """
    if isinstance(value, sp.Basic):
        if value.has(sp.nan, sp.zoo):
            raise ValueError(f"{name} must be a number; got {value}")
        return value
    return as_number(value, name)


def _no_digits(v: sp.Expr) -> bool:
    """A number evalf could not resolve: a Float (or its real and imaginary parts) with < 8 bits."""
    parts = v.as_real_imag() if not isinstance(v, sp.Float) else (v,)
    return all(isinstance(p, sp.Float) and p._prec < 8 or p == 0 for p in parts) and any(
        isinstance(p, sp.Float) for p in parts)


def _evalf_checked(expr: sp.Expr, subs: Mapping, dps: int) -> sp.Expr:
    """``expr.evalf(subs=subs)`` to ``dps`` correct digits, or ``ArithmeticError``.

    evalf's own precision tracking misses some losses: log(1 + 1e-60) at 40 digits is 0, though the
    Laplace RDP at b = 1e30 is 1e-60. So the value is recomputed at twice the working precision until
    two agree to dps + 1 digits (four doublings at most), and a value that never settles raises. An
    exact zero (KL of equal distributions) comes out of evalf as digit-less Floats; three of them in a
    row give 0.
    """
    prec = dps + 10
    value = expr.evalf(prec, subs=subs)
    unresolved = 0
    for _ in range(4):
        prec *= 2
        finer = expr.evalf(prec, subs=subs)
        if not (finer.is_number and value.is_number) or finer.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            return finer
        if abs(finer - value) <= sp.Float(10, prec) ** (-(dps + 1)) * abs(finer):
            return finer
        # evalf gives a Float without significant digits ("0.e-160") for a sum that cancels to zero
        # at that precision; three in a row (at 1x, 2x, 4x) bound |value| by 10**-(4 (dps + 10)): zero
        unresolved = unresolved + 1 if _no_digits(finer) and _no_digits(value) else 0
        if unresolved >= 2:
            return sp.Integer(0)
        value = finer
    raise ArithmeticError(f"{expr} could not be evaluated to {dps} digits at {dict(subs)} "
                          f"(still changing at {prec} digits)")


# --------------------------------------------------------------------------------------------------
# values at ties and boundaries of Max / Min / Piecewise / Abs / sign / Heaviside
# --------------------------------------------------------------------------------------------------
#: the nodes whose value depends on a comparison of their arguments
_BRANCHING = (sp.Max, sp.Min, sp.Piecewise, sp.Abs, sp.sign, sp.Heaviside)
#: at most this many undecided branch combinations are evaluated before giving up
_MAX_BRANCHES = 64
#: seconds for an exact zero test of an argument that numerics cannot separate from 0
_ZERO_TEST_SECONDS = 5.0


def _numeric_sign(d: sp.Expr, subs: Mapping, dps: int):
    """The sign of the number ``d`` at ``subs`` when numerics are certain of it: +1 or -1;
    ``"complex"`` for a non-real value; None when undecided (a zero, or closer to it than evalf
    resolves at 4 (dps + 10) digits).

    A sign counts only from ``evalf(strict=True)`` (which raises rather than return a number without
    the requested accuracy) and only when two precisions agree: evalf returns an exact 0 for
    log(1 + 1e-60) at 40 digits, so a zero is never trusted."""
    if d.is_Number:
        if d in (sp.oo, sp.S.Infinity):
            return 1
        if d is sp.S.NegativeInfinity:
            return -1
        if d.has(sp.nan, sp.zoo) or d == 0:
            return None
        return 1 if d > 0 else -1
    if d.free_symbols - set(subs):
        return None
    from sympy.core.evalf import PrecisionExhausted

    last = None
    prec = dps + 10
    for _ in range(3):
        try:
            v = d.evalf(prec, subs=subs, strict=True, maxn=2 * prec)
        except PrecisionExhausted:
            v = None
        except (ValueError, TypeError, ArithmeticError, AttributeError):
            return None
        if v is not None:
            if v == sp.oo:
                return 1
            if v == -sp.oo:
                return -1
            if v.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                return None
            if not isinstance(v, sp.Float):
                re, im = v.as_real_imag()
                if im != 0 and not _no_digits(im) and abs(im) > sp.Float(10, prec) ** (-(dps + 5)) * max(1, abs(re)):
                    return "complex"
                v = re
            if v.is_Number and v != 0 and not _no_digits(v):
                s = 1 if v > 0 else -1
                if v.is_Rational:
                    return s
                if last is not None and last[0] == s and abs(v - last[1]) <= sp.Float(10, prec) ** (-dps) * abs(v):
                    return s
                last = (s, v)
        prec *= 2
    return None


def _exactly_zero(d: sp.Expr, subs: Mapping) -> bool:
    """``d`` at ``subs`` is proven to be exactly 0: by exact substitution (sympy's automatic
    simplification), ``is_zero``, or ``equals(0)`` within :data:`_ZERO_TEST_SECONDS`."""
    from . import timeout

    try:
        e = d.xreplace(dict(subs)) if subs else d
        if e == 0 or e.is_zero is True:
            return True
        if e.free_symbols or e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            return False
        return timeout.run_with_time_limit(_equals_zero, e, seconds=_ZERO_TEST_SECONDS) is True
    except timeout.StepTimeout:
        # this test's own limit: not proven. An enclosing limit that has passed (the evaluation's) wins.
        passed = getattr(timeout, "deadline_passed", None)
        if passed is not None and passed():
            raise
        return False
    except (RuntimeError, ValueError, TypeError, ArithmeticError, AttributeError):
        return False


def _equals_zero(e: sp.Expr) -> bool:
    return e.equals(0) is True


def _sign_of(d: sp.Expr, subs: Mapping, dps: int, exact: bool):
    """+1, -1, 0 (only when proven exactly, with ``exact``), ``"complex"`` or None (undecided) for a
    branch-free ``d``."""
    s = _numeric_sign(d, subs, dps)
    if s is None and exact and _exactly_zero(d, subs):
        return 0
    return s


def _decide(cond: sp.Basic, subs: Mapping, dps: int) -> bool | None:
    """The truth of the condition ``cond`` at ``subs``: True, False, or None when it cannot be decided.

    Exactly first (the substituted condition, when sympy evaluates it to true or false: a boundary
    such as 1/s1**2 - 1/s2**2 > 0 at s1 = s2 is 0 > 0, false); else each comparison by the sign of
    ``lhs - rhs`` (numeric, certain, or an exact zero test when numerics cannot tell it from 0)."""
    cond = sp.sympify(cond) if isinstance(cond, bool) else cond
    if cond is sp.true or cond is sp.false:
        return cond is sp.true
    try:
        exact = cond.xreplace(dict(subs))
        if exact is sp.true or exact is sp.false:
            return exact is sp.true
    except (ValueError, TypeError, ArithmeticError, AttributeError):
        pass
    if isinstance(cond, sp.core.relational.Relational):
        try:
            d = cond.lhs - cond.rhs
        except (TypeError, ValueError):
            return None
        signs = {_sign_of(c, subs, dps, exact=True) for c in _branches(d, subs, dps)}
        if len(signs) != 1:
            return None
        s = signs.pop()
        if s not in (-1, 0, 1):
            return None
        ops = {sp.StrictGreaterThan: s > 0, sp.GreaterThan: s >= 0, sp.StrictLessThan: s < 0,
               sp.LessThan: s <= 0, sp.Eq: s == 0, sp.Ne: s != 0}
        return ops.get(type(cond))
    if isinstance(cond, sp.logic.boolalg.BooleanFunction):
        decided = {}
        for atom in cond.atoms(sp.core.relational.Relational):
            t = _decide(atom, subs, dps)
            if t is not None:
                decided[atom] = sp.true if t else sp.false
        reduced = cond.xreplace(decided)
        if reduced is sp.true or reduced is sp.false:
            return reduced is sp.true
        if reduced is not cond and not reduced.atoms(sp.core.relational.Relational):
            return _decide(reduced, subs, dps)
    return None


def _dedupe(items):
    out = []
    for it in items:
        if not any(it == o for o in out):
            out.append(it)
    return out


def _cap(items, what):
    items = _dedupe(items)
    if len(items) > _MAX_BRANCHES:
        raise ArithmeticError(f"too many undecided branches of {what} (> {_MAX_BRANCHES})")
    return items


def _combinations(lists, what):
    from itertools import product

    n = 1
    for options in lists:
        n *= len(options)
    if n > _MAX_BRANCHES:
        raise ArithmeticError(f"too many undecided branches in {what} (> {_MAX_BRANCHES})")
    return product(*lists)


def _pair_sign(u: sp.Expr, v: sp.Expr, subs: Mapping, dps: int):
    """The sign of u - v (+1, -1, 0 for structurally equal or equal infinities, None undecided)."""
    if u == v:
        return 0
    if u in (sp.oo, -sp.oo) or v in (sp.oo, -sp.oo):
        if u == v:
            return 0
        return 1 if (u == sp.oo or v == -sp.oo) else -1
    try:
        s = _sign_of(u - v, subs, dps, exact=False)
    except (TypeError, ValueError):
        return None
    return s if s in (-1, 1) else None


def _branches(expr: sp.Basic, subs: Mapping, dps: int) -> list:
    """The branch-free expressions ``expr`` can equal at ``subs``: every Max, Min, Piecewise, Abs, sign
    and Heaviside is replaced by the argument (branch) it takes there.

    A comparison numerics decide picks one branch. One they cannot decide keeps every possible branch:
    for Max and Min (and Abs, kept as it is) these are the tied arguments, which have the same value;
    a sign, Heaviside or Piecewise condition at its boundary is decided exactly when it can be
    (:func:`_decide`), else all its branches stay and the caller compares their values."""
    if not isinstance(expr, sp.Basic) or expr.is_Atom or not expr.has(*_BRANCHING):
        return [expr]
    if isinstance(expr, sp.Piecewise):
        out = []
        for e, c in expr.args:
            t = _decide(c, subs, dps)
            if t is False:
                continue
            out.extend(_branches(e, subs, dps))
            if t is True:
                break
        else:
            out.append(sp.nan)  # no condition certainly holds: possibly undefined here
        return _cap(out, "a Piecewise")
    if isinstance(expr, (sp.Max, sp.Min)):
        want = 1 if isinstance(expr, sp.Max) else -1
        out = []
        for combo in _combinations([_branches(a, subs, dps) for a in expr.args], expr.func.__name__):
            for i, ai in enumerate(combo):
                beaten = False
                for j, aj in enumerate(combo):
                    if i == j:
                        continue
                    s = _pair_sign(aj, ai, subs, dps)
                    if s == want or (s == 0 and j < i):  # an exact tie keeps the first argument
                        beaten = True
                        break
                if not beaten:
                    out.append(ai)
        return _cap(out, expr.func.__name__)
    if isinstance(expr, (sp.Abs, sp.sign, sp.Heaviside)):
        out = []
        rest = expr.args[1:]
        for c in _branches(expr.args[0], subs, dps):
            s = _sign_of(c, subs, dps, exact=not isinstance(expr, sp.Abs))
            if isinstance(expr, sp.Abs):
                out.append(c if s == 1 else -c if s == -1 else sp.Integer(0) if s == 0 else sp.Abs(c))
            elif s == "complex":
                out.append(expr.func(c, *rest))
            elif isinstance(expr, sp.sign):
                out.extend([sp.Integer(s)] if s in (-1, 0, 1) else [sp.Integer(-1), sp.Integer(0), sp.Integer(1)])
            else:
                at0 = sp.Heaviside(0, *rest)
                out.extend([sp.Integer(1)] if s == 1 else [sp.Integer(0)] if s == -1 else [at0] if s == 0
                           else [sp.Integer(0), at0, sp.Integer(1)])
        return _cap(out, expr.func.__name__)
    lists = [_branches(a, subs, dps) for a in expr.args]
    if all(len(options) == 1 and options[0] is a for options, a in zip(lists, expr.args)):
        return [expr]
    return _cap([expr.func(*combo) for combo in _combinations(lists, str(expr.func))], str(expr.func))


def _agree(u: sp.Expr, v: sp.Expr, dps: int) -> bool:
    if u == v:
        return True
    if any(w.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for w in (u, v)):
        return False
    try:
        return bool(abs(u - v) <= sp.Float(10, dps + 10) ** (-dps) * max(abs(u), abs(v)))
    except TypeError:
        return False


def _value(expr: sp.Expr, subs: Mapping, dps: int) -> sp.Expr:
    """``expr`` at ``subs`` to ``dps`` digits (:func:`_evalf_checked`), also at a tie or a boundary of
    its Max, Min, Piecewise, Abs, sign and Heaviside nodes (:func:`_branches`): a tie of Max(a, b) has
    the value a = b; a value that depends on a branch that cannot be decided raises ``ArithmeticError``
    (never a number from a guessed branch)."""
    candidates = _branches(expr, subs, dps)
    if len(candidates) == 1 and not candidates[0].has(sp.nan):
        return _evalf_checked(candidates[0], subs, dps)
    if any(c.has(sp.nan) for c in candidates):
        raise ArithmeticError(f"{expr}: no branch certainly holds at {dict(subs)}")
    values = [_evalf_checked(c, subs, dps) for c in candidates]
    for c, v in zip(candidates[1:], values[1:]):
        if not _agree(values[0], v, dps):
            raise ArithmeticError(
                f"{expr}: cannot decide which branch holds at {dict(subs)}: {candidates[0]} gives "
                f"{sp.N(values[0], 15)}, {c} gives {sp.N(v, 15)}")
    return values[0]


def _exact_at(expr: sp.Expr, subs: Mapping) -> sp.Expr:
    """``expr.subs(subs)``, with Max/Min/Piecewise/... replaced by the branch they take when every
    parameter has a value (a tie of Max(2 log s, log s**2) is 2 log s, not an unevaluated Max). A tie
    that is not proven exactly stays an (exact) unevaluated node."""
    if not expr.has(*_BRANCHING) or expr.free_symbols - set(subs):
        return expr.subs(subs)
    try:
        candidates = _branches(expr, subs, 30)
    except ArithmeticError:
        candidates = None
    if candidates and not any(c.has(sp.nan) for c in candidates):
        exact = _dedupe([c.subs(subs) for c in candidates])
        if len(exact) == 1 or all(_exactly_zero(e - exact[0], {}) for e in exact[1:]):
            return exact[0]
    try:
        return expr.subs(subs)
    except (ValueError, TypeError) as exc:
        raise ArithmeticError(f"{expr}: cannot decide which branch holds at {dict(subs)}: {exc}") from None


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

    def _symbol_map(self, values: Mapping) -> dict[sp.Symbol, sp.Expr]:
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
            v = _as_exact(value, name)
            if v.is_number:
                if v.is_finite is False:
                    raise ValueError(f"{name} must be finite; got {value}")
                domain = domains.get(sym)
                if domain is not None and domain.contains(v) is sp.false:
                    raise ValueError(f"{name} must lie in {sp.sstr(domain)}; got {value}")
                check_assumptions(sym, v, name)
            out[sym] = v
        return out

    def _order(self, alpha) -> sp.Expr:
        """alpha as an exact number (oo allowed), checked: > 0."""
        a = _as_exact(alpha, "alpha")
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
        if self.expr is None:
            raise ValueError(f"{self.label} has no closed form (status {self.status}: {self.reason})")
        subs = self._symbol_map(values)
        if alpha is None:
            return self.full_expr.subs(subs)
        a = self._order(alpha)
        if a == 1:
            return self._special(self.kl, "kl", subs)
        if a == sp.oo:
            return self._special(self.max_divergence, "max_divergence", subs)
        cond = self.conditions.subs(self.alpha, a).subs(subs)
        if cond not in (sp.true, sp.false) and not cond.free_symbols:
            decided = _decide(self.conditions, {**subs, self.alpha: a}, 30)
            cond = cond if decided is None else sp.true if decided else sp.false
        if cond is sp.false:
            return sp.oo
        for point in self.exceptional_points:
            if point.alpha == a:
                return _exact_at(point.value, {**subs, self.alpha: a})
        value = _exact_at(self.expr, {**subs, self.alpha: a})
        if value.has(sp.nan, sp.zoo):
            raise ArithmeticError(f"{self.label} is singular at alpha={a}, {values}, not a known exceptional point")
        if cond is not sp.true:
            return sp.Piecewise((value, cond), (sp.oo, True))
        return value

    def _special(self, expr, name, subs):
        if expr is None:
            raise ValueError(f"{self.label}: the {name} was not derived (status {self.status}: {self.reason})")
        return _exact_at(expr, subs)

    def evaluate(self, alpha, dps: int = 30, **values) -> mpmath.mpf:
        """The divergence as an mpmath number with ``dps`` digits (+inf outside the conditions).

        NaN is never returned: a value that cannot be evaluated raises ``ArithmeticError``.
        """
        from .timeout import StepTimeout, check_seconds, run_with_time_limit

        limit = check_seconds(os.environ.get("RDPSYM_EVAL_SECONDS", "60"), "RDPSYM_EVAL_SECONDS")
        a = self._order(alpha)
        self._symbol_map(values)  # bad values raise here, before any work
        special = a in (sp.Integer(1), sp.oo) or any(p.alpha == a for p in self.exceptional_points)
        try:
            if special:
                number = run_with_time_limit(self._evaluate_special, a, values, dps, seconds=limit)
            else:
                number = run_with_time_limit(self._evaluate_general, a, values, dps, seconds=limit)
        except StepTimeout:
            raise ArithmeticError(f"{self.label}: evaluation at alpha={alpha}, {values} exceeded its time limit") from None
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
        # The mpf keeps dps digits whatever the caller's context is.
        with mpmath.workdps(dps):
            return +mpmath.mpf(number)

    def _floats(self, a, values, dps):
        """The substitutions for ``evalf(subs=...)``: exact numbers. evalf takes them numerically, with
        its adaptive precision, so 1 - p for p = 1 - 10**-60 keeps its digits (values rounded to
        dps + 20 digits first would make it 0) and p**alpha is never expanded exactly."""
        floats = dict(self._symbol_map(values))
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
                decided = _decide(self.conditions, floats, dps)
                cond = cond if decided is None else sp.true if decided else sp.false
            if cond is sp.false:
                return sp.oo
            target = next(p.value for p in self.exceptional_points if p.alpha == a)
        if target == sp.oo:
            return sp.oo
        self._require_values(target, floats, a, values)
        return _value(target, floats, dps)

    def _evaluate_general(self, a, values, dps):
        """The general form at a non-special order, by ``evalf`` with the exact values in ``subs``.

        Exact substitution (``subs`` then ``evalf``) would make sympy expand p**alpha for rational p and
        alpha = 10**4 exactly; ``evalf(subs=...)`` evaluates numerically with adaptive precision instead.
        The finiteness conditions are decided exactly (they are cheap).
        """
        if self.expr is None:
            raise ValueError(f"{self.label} has no closed form (status {self.status}: {self.reason})")
        subs = self._symbol_map(values)
        self._require_values(self.full_expr, subs, a, values)
        floats = self._floats(a, values, dps)
        cond = self.conditions
        if cond is not sp.true:
            cond = cond.subs(self.alpha, a).subs(subs)
            if cond not in (sp.true, sp.false):
                # at a boundary sympy leaves undecided: each comparison by its sign (numeric, or exact)
                decided = _decide(self.conditions, floats, dps)
                cond = cond if decided is None else sp.true if decided else sp.false
            if cond is sp.false:
                return sp.oo
            if cond is not sp.true:
                raise ArithmeticError(f"{self.label}: cannot decide the conditions at alpha={a}, {values}")
        return _value(self.expr, floats, dps)

    # -- export (thin delegations to rdpsym.export) ------------------------------------------------
    def to_numpy(self, **kwargs):
        """A stable, vectorised float function ``f(alpha, **params)``; see :func:`rdpsym.export.codegen.to_numpy`."""
        from ..compile import to_numpy

        return to_numpy(self, **kwargs)

    def to_source(self, **kwargs) -> str:
        """Python source (numpy only) of :meth:`to_numpy`; see :func:`rdpsym.export.codegen.generate_source`."""
        from ..compile import generate_source

        return generate_source(self, **kwargs)

    # -- display ----------------------------------------------------------------------------------
    def latex(self, steps: bool = False, **kwargs) -> str:
        """LaTeX of ``expr`` with conventional symbols (alpha, the parameters' ``latex``); with ``steps``,
        an ``aligned`` block with the special orders and derivation steps (:func:`rdpsym.export.latex.result_latex`)."""
        from ..report.latex import result_latex

        return result_latex(self, steps=steps, **kwargs)

    def _repr_latex_(self) -> str:
        return f"${self.latex()}$"

    def __str__(self) -> str:
        parts = [f"{self.label} [{self.status}]"]
        if self.expr is not None:
            parts.append(f"  alpha in (0,1) u (1,oo): {sp.sstr(self.expr)}")
            if self.conditions is not sp.true:
                parts.append(f"  finite where: {sp.sstr(self.conditions)}")
        if self.kl is not None:
            parts.append(f"  alpha = 1 (KL): {sp.sstr(self.kl)}")
        if self.max_divergence is not None:
            parts.append(f"  alpha = oo: {sp.sstr(self.max_divergence)}")
        for p in self.exceptional_points:
            parts.append(f"  alpha = {p.alpha} (removable): {sp.sstr(p.value)}")
        if self.reason:
            parts.append(f"  note: {self.reason}")
        return "\n".join(parts)
