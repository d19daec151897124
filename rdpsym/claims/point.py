"""One point of a claim check: the divergence and the claim there, and by how much the relation fails.

Everything the stages of a check (:mod:`rdpsym.claims.run`) and a numeric-curve check
(:mod:`rdpsym.claims.numeric_run`) know about a point comes from :class:`Evaluator`, as a :class:`Values`:

* :meth:`Evaluator.fast`: compiled mpmath closures (:func:`rdpsym.claims.fasteval.compile_mp`) of the
  closed form (+oo outside its finiteness conditions) and of the claim, to steer the search (a point costs
  about a millisecond);
* :meth:`Evaluator.exact`: the closed form by :meth:`DivergenceResult.evaluate` (exact substitution and
  ``evalf``) and the claim by ``evalf`` at ``dps`` digits, then at ``2 dps``, then by Arb ball arithmetic
  (:func:`rdpsym.numeric.balls.compile_arb`); what is reported is computed this way;
* a callable claim is called under a time limit (:data:`CALL_SECONDS`, a guard against hangs: a call
  takes microseconds).

:func:`violation` says by how much ``divergence REL claim`` fails, relative to the values' size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import mpmath
import sympy as sp

from .._timeout import StepTimeout, time_limit
from ..symbols import alpha as ALPHA
from .fasteval import compile_mp, compile_real, real_value
from .guard import HangGuardFired, HangGuards
from .orders import point_alpha
from .search import may_jump

__all__ = ["Claim", "Values", "Evaluator", "violation", "exact_divergence", "CALL_SECONDS", "EXACT_GUARD_SECONDS"]

#: seconds a callable claim may take at one point (a guard against hangs: a call takes microseconds)
CALL_SECONDS = 10.0
#: hang guard of one exact evaluation of a point (sympy ``evalf`` of both sides: typically milliseconds)
EXACT_GUARD_SECONDS = 10.0

#: the claim's state at a point when it has no value
OUTSIDE = "outside"      # the callable raised: outside its domain (neither a value nor a refutation)
OVERFLOW = "overflow"    # beyond the fast path's magnitude cap (fasteval.EXPONENT_CAP)
SLOW = "slow"            # the callable did not return within CALL_SECONDS
UNDEFINED = "undefined"  # NaN, complex, not a number or out of range


@dataclass
class Claim:
    """The claim as something to evaluate: a formula (``kind="expr"``) over the target's symbols, or a
    callable (``kind="callable"``) with the expressions its arguments stand for."""

    kind: str  # "expr" or "callable"
    expr: sp.Expr | None = None
    fn: Callable | None = None
    call: str = "keywords"
    arg_names: tuple[str, ...] = ()
    arg_exprs: tuple[sp.Expr, ...] = ()
    used: tuple[str, ...] = ()

    @property
    def may_jump(self) -> bool:
        """Not known to be continuous: a formula built with a function that may jump, or any callable."""
        return self.kind != "expr" or may_jump(self.expr)


@dataclass(frozen=True)
class Values:
    """Both sides at one point: ``divergence`` (an mpf, +oo allowed, or None when it has no value; its
    ``divergence_state`` is ``"finite"``, ``"inf"`` or ``"missing"``), ``claim`` (an mpf or None, with
    ``claim_state`` saying why none), and ``violation`` (None when a side has no value); ``how``: what was
    tried when no method gave both values. Plain data: it pickles (grid tasks)."""

    divergence: Any
    claim: Any
    violation: Any
    divergence_state: str
    claim_state: str = "value"
    how: str = ""


def violation(relation, t, c, dps):
    """How much ``t REL c`` (divergence REL claim) fails, relative to the values' size (> 0: it fails);
    None if a side has no value."""
    if t is None or c is None:
        return None
    if mpmath.isinf(t) or mpmath.isinf(c):
        if t == c:
            return mpmath.mpf(0)
        if relation == "==":
            return mpmath.inf
        if relation == "<=":
            return mpmath.inf if t > c else -mpmath.inf
        return mpmath.inf if c > t else -mpmath.inf
    # values near 0 (equal parameters: D = 0) are compared absolutely, below 10^(-0.4 dps), as the
    # verification module does; otherwise rounding at 10^-dps would count as a relative disagreement.
    scale = max(abs(t), abs(c), mpmath.mpf(10) ** (-int(0.4 * dps)))
    d = (c - t) / scale
    if relation == "==":
        return abs(d)
    return -d if relation == "<=" else d


def exact_divergence(result, order, alpha, values, dps: int):
    """The divergence at the point by ``DivergenceResult.evaluate`` (exact substitution + evalf);
    ``alpha`` is ignored for a claim about one order."""
    return result.evaluate(point_alpha(order, alpha), dps=dps, **dict(values))


def _state(t) -> str:
    return "missing" if t is None else ("inf" if mpmath.isinf(t) else "finite")


class Evaluator:
    """The values of the divergence and of the claim at a point, and the violation of ``relation`` there.

    A point is ``(alpha, values)``: alpha an exact number (ignored for a claim about one order) and ``values``
    the free parameters' exact values by name; the parameters held fixed are added here.
    """

    def __init__(self, tgt, claim: Claim, order, fixed: dict, dps: int, relation: str = "==", names=None,
                 guards: HangGuards | None = None):
        self.tgt, self.c, self.order, self.fixed, self.dps, self.relation = tgt, claim, order, fixed, dps, relation
        self.names = names
        self.guards = guards if guards is not None else HangGuards()
        self.by_name = {p.name: p.symbol for p in tgt.parameters}
        self.exceptional = tgt.exceptional if order is None else set()
        syms = (ALPHA,) + tgt.symbols
        # the closed form with +oo outside its finiteness conditions (those hold for the curve)
        truth = tgt.full_truth(order)
        self._truth = compile_real(truth, syms) if truth is not None else None
        if claim.kind == "expr":
            self._claim_fast = compile_real(claim.expr, syms)
        else:
            self._arg_fast = [compile_mp(e, syms) for e in claim.arg_exprs]
        self._arb = None

    def __reduce__(self):
        # The compiled closures do not pickle (spawned workers, Dask): send what they are compiled
        # from and compile again on arrival; the same expressions give the same closures.
        return Evaluator, (replace(self.tgt, _valid={}), self.c, self.order, self.fixed, self.dps, self.relation,
                           self.names)

    # -- the point ----------------------------------------------------------------------------------
    def point_alpha(self, a):
        """The order of the point: ``a``, or the claim's one order."""
        return point_alpha(self.order, a)

    def all_values(self, values):
        """The free parameters' values with the fixed ones added."""
        return {**values, **self.fixed}

    def distributions_ok(self, values, mass: bool = True) -> bool | None:
        """Whether P and Q are probability distributions at the free parameters' ``values``
        (:meth:`Target.distributions_ok <rdpsym.claims.target.Target.distributions_ok>`, under this check's
        hang guard; ``mass=False``: the signs only)."""
        return self.tgt.distributions_ok(self.all_values(values), self.guards, mass)

    def _env(self, a, values):
        # exact numbers other than rationals (sqrt(2), pi) are evaluated at the working precision
        env = {self.by_name[k]: mpmath.mpf(int(v.p)) / int(v.q) if v.is_Rational
               else mpmath.mpf(sp.Float(v.evalf(mpmath.mp.dps + 5))._mpf_) if isinstance(v, sp.Basic) else mpmath.mpf(v)
               for k, v in self.all_values(values).items()}
        av = self.point_alpha(a)
        env[ALPHA] = mpmath.inf if av == sp.oo else mpmath.mpf(int(av.p)) / int(av.q)
        return env

    def _values(self, t, cl, state="value"):
        return Values(t, cl, violation(self.relation, t, cl, self.dps), _state(t), state)

    # -- fast: the search ---------------------------------------------------------------------------
    def fast(self, a, values) -> Values:
        """Both sides by the compiled closures (the closed form exactly at its removable orders)."""
        with mpmath.workdps(self.dps + 20):
            env = self._env(a, values)
            if a in self.exceptional:
                t = self._exact_truth(a, values, self.dps + 20)
            else:
                try:
                    t = self._truth(env)
                except (ArithmeticError, ValueError, ZeroDivisionError, TypeError):
                    t = None
            cl, state = self._claim_value(env) if self.c.kind == "expr" else self._call(env)
            return self._values(t, cl, state)

    def _claim_value(self, env):
        try:
            v = self._claim_fast(env)
        except OverflowError:
            return None, OVERFLOW
        except (ArithmeticError, ValueError, ZeroDivisionError, TypeError):
            return None, UNDEFINED
        return v, ("value" if v is not None else UNDEFINED)

    def _call(self, env):
        c = self.c
        a = env[ALPHA]
        af = math.inf if mpmath.isinf(a) else float(a)
        if math.isinf(af) and not mpmath.isinf(a):
            return None, OVERFLOW  # an order beyond the float range: a float callable cannot be asked about it
        args = [float(f(env)) for f in self._arg_fast]
        limit = time_limit(CALL_SECONDS, clock="wall")
        try:
            with limit:
                if c.call == "keywords":
                    out = c.fn(af, **dict(zip(c.arg_names, args)))
                elif c.call == "positional":
                    out = c.fn(af, *args)
                else:
                    out = c.fn(dict(zip(c.arg_names, args)), af)
        except StepTimeout as exc:
            if exc.limit_id != limit.id:
                raise  # an enclosing limit: not this call's to handle
            self.guards.note(CALL_SECONDS, "a call of the claim's callable")
            return None, SLOW
        except Exception:  # noqa: BLE001 - a callable outside its domain: not a value
            return None, OUTSIDE
        v = _callable_number(out, c.fn)
        return v, ("value" if v is not None else UNDEFINED)

    # -- exact: what is reported --------------------------------------------------------------------
    def exact(self, a, values) -> Values:
        """Both sides recomputed another way: the closed form exactly at ``dps`` and ``2 dps`` digits
        (each under a hang guard) with the claim by ``evalf`` (a callable is called again), then by ball
        arithmetic; ``violation`` None, with ``how`` saying what was tried, when no method gave both values."""
        notes = []
        for dps in (self.dps, 2 * self.dps):
            try:
                out = self.guards.run(f"the exact evaluation of a point at {dps} digits", EXACT_GUARD_SECONDS,
                                      self._exact_values, a, values, dps)
            except HangGuardFired as exc:
                notes.append(str(exc))
                break
            except Exception as exc:  # noqa: BLE001 - a failed evaluation is no value, never agreement
                notes.append(f"exact evaluation failed: {type(exc).__name__}: {exc}")
                continue
            if out.violation is not None:
                return out
            notes.append(f"exact evaluation at {dps} digits gave no value for the "
                         + ("divergence" if out.divergence is None else "claim"))
        balls = self.balls(a, values)
        if balls is not None and balls.violation is not None:
            return balls
        notes.append("ball arithmetic gave no value" if self.c.kind == "expr" else "no other method for a callable")
        return Values(None, None, None, "missing", UNDEFINED, "; ".join(notes))

    def _exact_values(self, a, values, dps) -> Values:
        wp = dps + 20
        with mpmath.workdps(wp):
            t = self._exact_truth(a, values, wp)
            cl, state = self.claim_at(a, values)
            return self._values(t, cl, state)

    def _exact_truth(self, a, values, wp):
        try:
            return exact_divergence(self.tgt.result, self.order, a, self.all_values(values), wp)
        except (ArithmeticError, ValueError, TypeError):
            return None

    def exact_claim(self, a, values):
        """The claim formula by ``evalf`` at the current working precision (an mpf, +-oo, or None)."""
        subs = {self.by_name[k]: v for k, v in self.all_values(values).items()}
        av = self.point_alpha(a)
        e = self.c.expr
        if av == sp.oo and ALPHA in e.free_symbols:
            e = e.subs(ALPHA, sp.oo)
        else:
            subs[ALPHA] = av
        if e in (sp.oo, sp.S.NegativeInfinity):
            return mpmath.inf if e == sp.oo else -mpmath.inf
        try:
            # The numbers go in through evalf's subs, never by substitution: substituted Floats make sympy
            # evaluate cosh(x) - sinh(x) at their precision (0 for x = 29000, silently), and substituted
            # Rationals make it seek exact roots of huge denominators. strict: evalf raises rather than
            # return digits it does not have.
            val = e.evalf(mpmath.mp.dps, subs=subs, strict=True)
        except (ArithmeticError, ValueError, TypeError, RecursionError):
            return None
        if val.has(sp.nan, sp.zoo) or not val.is_number:
            return None
        if val in (sp.oo, sp.S.NegativeInfinity):  # a Piecewise's +oo branch: no mpf of oo
            return mpmath.inf if val == sp.oo else -mpmath.inf
        re, im = val.as_real_imag()
        return real_value(mpmath.mpc(sp.Float(re, mpmath.mp.dps), sp.Float(im, mpmath.mp.dps)))

    def claim_at(self, a, values):
        """The claim's value for reporting, with its state: exact ``evalf`` for a formula (at the caller's
        working precision), a call for a callable."""
        if self.c.kind == "expr":
            v = self.exact_claim(a, values)
            return v, ("value" if v is not None else UNDEFINED)
        return self._call(self._env(a, values))

    # -- balls: the certified fallback ---------------------------------------------------------------
    def balls(self, a, values) -> Values | None:
        """Both sides as mpf midpoints of Arb balls accurate to the check's digits, or None: the
        certified fallback when sympy's exact evaluation fails (a tie of Max, a huge power)."""
        if self.c.kind != "expr":
            return None
        from ..numeric.balls import Unsupported, arb_rational, compile_arb

        import flint

        if self._arb is None:
            # compiled once per check (retries and candidates call this at many points)
            syms = (ALPHA,) + self.tgt.symbols
            try:
                self._arb = (compile_arb(self.tgt.full_truth(self.order), syms), compile_arb(self.c.expr, syms))
            except Unsupported:
                self._arb = ()
        if not self._arb:
            return None
        f_truth, f_claim = self._arb
        av = self.point_alpha(a)
        old = flint.ctx.prec
        try:
            for bits in (int(3.33 * self.dps) + 64, int(6.7 * self.dps) + 128):
                flint.ctx.prec = bits
                env = {self.by_name[k]: arb_rational(sp.Rational(v)) for k, v in self.all_values(values).items()}
                env[ALPHA] = flint.arb.pos_inf() if av == sp.oo else arb_rational(sp.Rational(av))
                out = [f(env) for f in (f_truth, f_claim)]
                if all(_ball_accurate(b, self.dps) for b in out):
                    with mpmath.workdps(self.dps + 20):
                        return self._values(*(_ball_mpf(b) for b in out))
        finally:
            flint.ctx.prec = old
        return None


def _ball_accurate(ball, dps) -> bool:
    if ball.is_nan():
        return False
    if ball.is_exact():
        return True
    return ball.is_finite() and ball.rad() <= ball.abs_lower() * 10.0 ** (-dps)


def _ball_mpf(ball):
    if not ball.is_finite():
        return mpmath.inf if ball > 0 else -mpmath.inf
    return mpmath.mpf(ball.mid().str(mpmath.mp.dps, radius=False))


def _callable_number(out, fn):
    """A callable claim's return value as an mpf, None when NaN or complex; anything that is not a
    number is an error naming the callable (a string "0.5" is not a value to compare)."""
    if isinstance(out, bool) or not (isinstance(out, (int, float, complex, mpmath.mpf, mpmath.mpc))
                                     or _is_numeric_scalar(out)):
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        raise TypeError(f"claim: the callable {name} must return a real number; it returned "
                        f"{type(out).__name__} {out!r:.60}")
    out = complex(out)
    if out.imag != 0 or math.isnan(out.real):
        return None
    return mpmath.mpf(out.real)


def _is_numeric_scalar(out) -> bool:
    """numpy scalars and 0-d arrays, mpmath numbers: numbers that are not Python's built-in types."""
    import numbers

    if isinstance(out, numbers.Number):
        return True
    shape = getattr(out, "shape", None)
    return shape == () and hasattr(out, "dtype") and getattr(out.dtype, "kind", "") in "iufc"
