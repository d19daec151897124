"""Values of the divergence and of a claim at one point: fast (compiled mpmath) for the search, exact
(sympy ``evalf``) or by ball arithmetic (Arb) for what is reported, and a callable claim called under a
time limit. :func:`_violation` says by how much the relation fails there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import mpmath
import sympy as sp

from .._timeout import StepTimeout, time_limit
from ..symbols import alpha as ALPHA
from .fasteval import compile_mp, real_value
from .target import Target


@dataclass
class _Claim:
    kind: str  # "expr" or "callable"
    expr: sp.Expr | None = None
    fn: Callable | None = None
    call: str = "keywords"
    arg_names: tuple[str, ...] = ()
    arg_exprs: tuple[sp.Expr, ...] = ()
    used: tuple[str, ...] = ()
    _fast: Any = None
    _arg_fast: tuple = ()


#: Marker: the callable raised at this point (outside its domain; neither a value nor a refutation).
_OUTSIDE = object()
#: Marker: the claim's value is beyond the fast path's magnitude cap (fasteval.EXPONENT_CAP).
_OVERFLOW = object()
#: Marker: the callable did not return within CALL_SECONDS.
_SLOW = object()
#: seconds a callable claim may take at one point
CALL_SECONDS = 10.0


def _t_state(t) -> str:
    return "missing" if t is None else ("inf" if mpmath.isinf(t) else "finite")


def _c_state(cl) -> str:
    if cl is _OUTSIDE:
        return "outside"
    if cl is _OVERFLOW:
        return "overflow"
    if cl is _SLOW:
        return "slow"
    return "undefined" if cl is None else "value"


def _violation(relation, t, c, dps):
    """How much ``t REL c`` (divergence REL claim) fails, relative to the values' size (> 0: it fails); None if undefined."""
    if t is None or c is None or c is _OUTSIDE or c is _OVERFLOW or c is _SLOW:
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


class _Evaluator:
    """Values of the divergence and of the claim at a point, fast (search) or exact (reports)."""

    def __init__(self, tgt: Target, c: _Claim, order, fixed: dict, dps: int):
        self.tgt, self.c, self.order, self.fixed, self.dps = tgt, c, order, fixed, dps
        self.by_name = {p.name: p.symbol for p in tgt.parameters}
        syms = (ALPHA,) + tgt.symbols
        self.truth = tgt.fast(order)
        if c.kind == "expr":
            self.claim_fast = compile_mp(c.expr, syms)
        else:
            self.arg_fast = [compile_mp(e, syms) for e in c.arg_exprs]

    def __reduce__(self):
        # The compiled closures do not pickle (spawned workers, Dask): send what they are compiled
        # from and compile again on arrival; the same expressions give the same closures.
        from dataclasses import replace

        return _rebuild_evaluator, (replace(self.tgt, _compiled={}), replace(self.c, _fast=None, _arg_fast=()),
                                    self.order, self.fixed, self.dps, getattr(self, "names", None))

    def point_alpha(self, a):
        if self.order is None:
            return a
        return sp.Integer(1) if self.order == 1 else sp.oo

    def env(self, a, values):
        # exact numbers other than rationals (sqrt(2), pi) are evaluated at the working precision
        env = {self.by_name[k]: mpmath.mpf(int(v.p)) / int(v.q) if v.is_Rational
               else mpmath.mpf(sp.Float(v.evalf(mpmath.mp.dps + 5))._mpf_) if isinstance(v, sp.Basic) else mpmath.mpf(v)
               for k, v in {**values, **self.fixed}.items()}
        av = self.point_alpha(a)
        env[ALPHA] = mpmath.inf if av == sp.oo else mpmath.mpf(int(av.p)) / int(av.q)
        return env

    def all_values(self, values):
        return {**values, **self.fixed}

    def values(self, a, values, exact=False, dps=None):
        """(divergence, claim) at the point as mpf (or None / ``_OUTSIDE``), fast or exactly at ``dps``."""
        wp = (dps or self.dps) + 20
        with mpmath.workdps(wp):
            env = self.env(a, values)
            if exact or (self.order is None and a in self.tgt.exceptional):
                try:
                    t = self.tgt.exact(self.order, a, self.all_values(values), wp)
                except (ArithmeticError, ValueError, TypeError):
                    t = None
            else:
                t = self.truth(env)
            cl = self._claim(a, values, env, exact)
            return t, cl

    def _claim(self, a, values, env, exact):
        c = self.c
        if c.kind == "expr":
            if exact:
                subs = {self.by_name[k]: v for k, v in self.all_values(values).items()}
                av = self.point_alpha(a)
                e = c.expr
                if av == sp.oo and ALPHA in e.free_symbols:
                    e = e.subs(ALPHA, sp.oo)
                else:
                    subs[ALPHA] = av
                if e in (sp.oo, sp.S.NegativeInfinity):
                    return mpmath.inf if e == sp.oo else -mpmath.inf
                try:
                    # The numbers go in through evalf's subs, never by substitution: substituted Floats
                    # make sympy evaluate cosh(x) - sinh(x) at their precision (0 for x = 29000, silently),
                    # and substituted Rationals make it seek exact roots of huge denominators. strict:
                    # evalf raises rather than return digits it does not have.
                    val = e.evalf(mpmath.mp.dps, subs=subs, strict=True)
                except (ArithmeticError, ValueError, TypeError, RecursionError):
                    return None
                if val.has(sp.nan, sp.zoo) or not val.is_number:
                    return None
                re, im = val.as_real_imag()
                return real_value(mpmath.mpc(sp.Float(re, mpmath.mp.dps), sp.Float(im, mpmath.mp.dps)))
            try:
                return real_value(self.claim_fast(env))
            except OverflowError:
                return _OVERFLOW
            except (ArithmeticError, ValueError, ZeroDivisionError, TypeError):
                return None
        return self._call(env)

    def _call(self, env):
        c = self.c
        a = env[ALPHA]
        af = math.inf if mpmath.isinf(a) else float(a)
        args = [float(f(env)) for f in self.arg_fast]
        limit = time_limit(CALL_SECONDS)
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
            return _SLOW
        except Exception:  # noqa: BLE001 - a callable outside its domain: not a value
            return _OUTSIDE
        return _callable_number(out, c.fn)

    def balls(self, a, values):
        """(divergence, claim) as mpf midpoints of Arb balls accurate to the check's digits, or None:
        the certified fallback when sympy's exact evaluation fails (a tie of Max, a huge power)."""
        if self.c.kind != "expr":
            return None
        from .interval import Unsupported, _arb_rational, compile_arb  # noqa: PLC2701 - same package

        import flint

        if not hasattr(self, "_arb"):
            # compiled once per check (retries and candidates call this at many points)
            syms = (ALPHA,) + self.tgt.symbols
            try:
                self._arb = (compile_arb(self.tgt.full_truth(self.order), syms), compile_arb(self.c.expr, syms))
            except Unsupported:
                self._arb = None
        if self._arb is None:
            return None
        f_truth, f_claim = self._arb
        av = self.point_alpha(a)
        old = flint.ctx.prec
        try:
            for bits in (int(3.33 * self.dps) + 64, int(6.7 * self.dps) + 128):
                flint.ctx.prec = bits
                env = {self.by_name[k]: _arb_rational(sp.Rational(v)) for k, v in self.all_values(values).items()}
                env[ALPHA] = flint.arb.pos_inf() if av == sp.oo else _arb_rational(sp.Rational(av))
                out = [f(env) for f in (f_truth, f_claim)]
                if all(_ball_accurate(b, self.dps) for b in out):
                    with mpmath.workdps(self.dps + 20):
                        return tuple(_ball_mpf(b) for b in out)
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


def _rebuild_evaluator(tgt, c, order, fixed, dps, names) -> "_Evaluator":
    ev = _Evaluator(tgt, c, order, fixed, dps)
    if names is not None:
        ev.names = names
    return ev
