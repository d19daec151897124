"""Fast high-precision evaluation of sympy expressions with mpmath, without generating code.

A counterexample search evaluates the claim and the derived closed form at hundreds of points; sympy's
``evalf`` takes ~10 ms per point, far too slow. :func:`compile_mp` turns an expression tree into nested
Python closures over mpmath functions once (no ``lambdify``: nothing is printed, ``exec``-ed or
imported, so the claim's text never reaches an interpreter): :class:`MpmathTarget`, the mpmath target
of the tree translator (:mod:`rdpsym.numeric.translate`). Unknown nodes fall back to ``evalf`` of the
node with its arguments substituted, so every expression evaluates, only some more slowly.

Values are computed inside the caller's ``mpmath.workdps``; intermediate results may be complex
(``log`` of a negative number, ``sqrt`` of one), which is how some correct closed forms are written
(``I*sqrt(-x)``). :func:`real_value` turns the final number into a real ``mpf`` or ``None`` when its
imaginary part is not negligible, or when it is NaN.

Reported values (counterexamples, the final evidence) are always recomputed exactly by ``evalf``; this
module only steers the search.
"""

from __future__ import annotations

import operator
from typing import Callable, Sequence

import mpmath
import sympy as sp

from ..numeric.translate import DecidedConditions, EnvironmentClosures

__all__ = ["MpmathTarget", "compile_mp", "compile_real", "compile_condition", "real_value"]

_Fn = Callable[[dict], object]

#: Magnitude cap of the fast path: an exponent (of e, or of a power's base) beyond it raises
#: OverflowError instead of asking mpmath for a number with billions of digits (exp(exp(exp(exp(3))))
#: would never return). The value is then unknown to the fast path, never a made-up one.
EXPONENT_CAP = mpmath.mpf(2) ** 100


def _check_exponent(v) -> None:
    re_v = v.real if isinstance(v, mpmath.mpc) else v
    if isinstance(re_v, (mpmath.mpf, int, float)) and not mpmath.isnan(re_v) and abs(re_v) > EXPONENT_CAP:
        raise OverflowError(f"exponent {mpmath.nstr(re_v, 5)} beyond the fast path's range")


def _exp(v):
    _check_exponent(v)
    return mpmath.exp(v)


def _power(base, ex):
    if base != 0 and not mpmath.isinf(base):
        _check_exponent(ex * mpmath.log(abs(base)) if not isinstance(ex, mpmath.mpc) else abs(ex) * mpmath.log(abs(base)))
    return mpmath.power(base, ex)


def _big_argument(f):
    def run(v):
        _check_exponent(v)
        return f(v)

    return run

_UNARY = {
    sp.exp: _exp,
    sp.sin: mpmath.sin,
    sp.cos: mpmath.cos,
    sp.tan: mpmath.tan,
    sp.tanh: mpmath.tanh,
    sp.erf: mpmath.erf,
    sp.erfc: mpmath.erfc,
    sp.gamma: _big_argument(mpmath.gamma),
    sp.loggamma: _big_argument(mpmath.loggamma),
    sp.factorial: _big_argument(mpmath.factorial),
    sp.sinh: _big_argument(mpmath.sinh),
    sp.cosh: _big_argument(mpmath.cosh),
    sp.floor: mpmath.floor,
    sp.ceiling: mpmath.ceil,
    sp.Abs: lambda v: abs(v),
    sp.sign: lambda v: mpmath.sign(v),
}


def compile_mp(expr: sp.Basic, symbols: Sequence[sp.Symbol]) -> _Fn:
    """A function of ``{symbol: mpmath number}`` that evaluates ``expr`` at the current precision.

    Exact constants (``pi``, ``E``, rationals) are converted at call time, so the precision of the
    caller's ``workdps`` applies to them too.
    """
    known = set(symbols)
    stray = expr.free_symbols - known
    if stray:
        raise ValueError(f"expression has symbols {sorted(map(str, stray))} not in {sorted(map(str, known))}")
    return _MP.translate(expr)


def compile_real(expr: sp.Basic, symbols: Sequence[sp.Symbol]) -> _Fn:
    """:func:`compile_mp` whose value is made real by :func:`real_value` (None when NaN or complex);
    an evaluation that fails raises as in :func:`compile_mp`."""
    f = compile_mp(expr, symbols)
    return lambda env: real_value(f(env))


def compile_condition(c: sp.Basic) -> Callable[[dict], bool]:
    """A boolean sympy condition (relations, And, Or, Not, true, false) as a function of the values."""
    return _MP.condition(c)


_RELATIONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


def _constant(value) -> _Fn:
    return lambda env: value


class MpmathTarget(DecidedConditions, EnvironmentClosures):
    """sympy -> closures ``env -> mpmath number`` (see the module docstring).

    Unlike the other targets it does not refuse a node it has no method for: :meth:`refuse` evaluates
    that node by sympy's ``evalf`` with its arguments substituted (slow, and exact to the precision).
    """

    error = ValueError
    target = "fast mpmath evaluation"
    unary = _UNARY

    # -- atoms (a symbol reads the environment: EnvironmentClosures) -----------------------------------
    def _translate_Rational(self, e):
        return lambda env, q=e: mpmath.mpf(int(q.p)) / int(q.q)

    def _translate_Float(self, e):
        return lambda env, e=e: mpmath.mpf(sp.Float(e, mpmath.mp.dps + 5))

    def _translate_Infinity(self, e):
        return _constant(mpmath.inf)

    def _translate_NegativeInfinity(self, e):
        return _constant(-mpmath.inf)

    def _translate_ImaginaryUnit(self, e):
        return lambda env: mpmath.mpc(0, 1)

    def _translate_NaN(self, e):
        return _constant(mpmath.nan)

    _translate_ComplexInfinity = _translate_NaN

    def _translate_Pi(self, e):
        return lambda env: +mpmath.pi

    def _translate_Exp1(self, e):
        return lambda env: mpmath.e + 0

    # -- arithmetic ----------------------------------------------------------------------------------
    def _translate_Add(self, e):
        parts = [self.translate(a) for a in e.args]
        return lambda env: mpmath.fsum(p(env) for p in parts)

    def _translate_Mul(self, e):
        parts = [self.translate(a) for a in e.args]

        def mul(env):
            out = mpmath.mpf(1)
            for p in parts:
                out = out * p(env)
            return out

        return mul

    def _translate_Pow(self, e):
        base, expo = self.translate(e.args[0]), e.args[1]
        if expo.is_Integer:
            n = int(expo)
            return lambda env: _power(base(env), n) if abs(n) > 64 else base(env) ** n
        if expo == sp.S.Half:
            return lambda env: mpmath.sqrt(base(env))
        ex = self.translate(expo)
        return lambda env: _power(base(env), ex(env))

    def _translate_log(self, e):
        if len(e.args) == 2:
            arg, b = self.translate(e.args[0]), self.translate(e.args[1])
            return lambda env: mpmath.log(arg(env)) / mpmath.log(b(env))
        return self.dispatch("log", e.args[0])

    def apply(self, op, e):
        arg = self.translate(e.args[0])
        return lambda env: op(arg(env))

    def _extremum(self, e, pick):
        parts = [self.translate(a) for a in e.args]
        return lambda env: pick(_realify(p(env)) for p in parts)

    def _translate_Max(self, e):
        return self._extremum(e, max)

    def _translate_Min(self, e):
        return self._extremum(e, min)

    def _translate_Piecewise(self, e):
        branches = [(self.translate(v), self.condition(c)) for v, c in e.args]

        def piecewise(env):
            for value, cond in branches:
                if cond(env):
                    return value(env)
            return mpmath.nan

        return piecewise

    def _translate_binomial(self, e):
        n, k = (self.translate(a) for a in e.args)
        return lambda env: mpmath.binomial(n(env), k(env))

    def _translate_beta(self, e):
        if len(e.args) != 2:
            return self.refuse(e)
        a, b = (self.translate(x) for x in e.args)
        return lambda env: mpmath.beta(a(env), b(env))

    # -- log(e) in log space -------------------------------------------------------------------------
    # log(b**x) = x log(b), log(x*y) = log(x) + log(y), log(exp(x)) = x, applied at a point only where
    # the bases and factors are positive reals there (the identities hold for positive reals; elsewhere
    # the plain log of the value). The KL of two Laplace scales contains
    # log(b2**(b2*exp(m/b1)) / b1**(b2*exp(m/b1))): as a value that is b2**(a number of 40,000 digits),
    # which no precision holds (the magnitude cap refuses it); in log space it is b2 exp(m/b1) log(b2/b1).
    def _log_Basic(self, e):
        plain = self.translate(e)
        return lambda env: mpmath.log(plain(env))

    def _log_exp(self, e):
        inner, plain_log = self.translate(e.args[0]), self._log_Basic(e)

        def log_exp(env):
            v = inner(env)
            return v if isinstance(v, mpmath.mpf) and not mpmath.isnan(v) else plain_log(env)

        return log_exp

    def _log_Pow(self, e):
        if e.exp.is_Integer and abs(int(e.exp)) <= 64:
            return self._log_Basic(e)
        base, ex, plain_log = self.translate(e.base), self.translate(e.exp), self._log_Basic(e)
        log_base = self.dispatch("log", e.base)

        def log_pow(env):
            b, x = base(env), ex(env)
            if _positive(b) and isinstance(x, mpmath.mpf) and mpmath.isfinite(x):
                return x * log_base(env)
            return plain_log(env)

        return log_pow

    def _log_Mul(self, e):
        factors = [(self.translate(f), self.dispatch("log", f)) for f in e.args]
        plain_log = self._log_Basic(e)

        def log_mul(env):
            values = [f(env) for f, _ in factors]
            if all(_positive(v) for v in values):
                return mpmath.fsum(lf(env) for _, lf in factors)
            return plain_log(env)

        # the factors' values are computed first: a factor too large for a value (the magnitude cap)
        # is then taken in log space by the Pow rule above, not refused
        def log_mul_safe(env):
            try:
                return log_mul(env)
            except OverflowError:
                return mpmath.fsum(lf(env) for _, lf in factors)

        return log_mul_safe

    # -- the fallback: evalf of the node itself (slow path for functions not mapped here) ---------------
    def refuse(self, e, family="translate"):
        if family == "condition":
            raise ValueError(f"cannot evaluate the condition {sp.sstr(e)}")
        syms = sorted(e.free_symbols, key=str)

        def slow(env):
            subs = {s: sp.Float(env[s], mpmath.mp.dps) if not isinstance(env[s], mpmath.mpc) else
                    sp.Float(env[s].real, mpmath.mp.dps) for s in syms}
            value = e.evalf(mpmath.mp.dps, subs=subs)
            if value.is_real is False or value.has(sp.I):
                re, im = value.as_real_imag()
                return mpmath.mpc(sp.Float(re, mpmath.mp.dps), sp.Float(im, mpmath.mp.dps))
            if value in (sp.oo, sp.S.NegativeInfinity):
                return mpmath.inf if value is sp.oo else -mpmath.inf
            if not value.is_number or value.has(sp.nan, sp.zoo):
                return mpmath.nan
            return mpmath.mpf(value)

        return slow

    # -- conditions (And, Or, Not: DecidedConditions) ------------------------------------------------
    def relation(self, op, lhs, rhs):
        test, lhs, rhs = _RELATIONS[op], self.translate(lhs), self.translate(rhs)
        return lambda env: bool(test(_realify(lhs(env)), _realify(rhs(env))))


_MP = MpmathTarget()


def _positive(v) -> bool:
    return isinstance(v, mpmath.mpf) and v > 0 and not mpmath.isinf(v)


def _realify(v):
    if isinstance(v, mpmath.mpc):
        if v.imag == 0:
            return v.real
        raise ArithmeticError("complex argument of Max/Min")
    return v


def real_value(v) -> mpmath.mpf | None:
    """``v`` as a real mpf (``+-inf`` allowed), or None if NaN or genuinely complex.

    An imaginary part below ``10^(10 - dps)`` times the modulus is rounding noise of a complex
    intermediate (``I*sqrt(-x)``) and is dropped.
    """
    if isinstance(v, mpmath.mpc):
        if mpmath.isnan(v.real) or mpmath.isnan(v.imag):
            return None
        tol = mpmath.mpf(10) ** (10 - mpmath.mp.dps) * max(abs(v), 1)
        if abs(v.imag) > tol:
            return None
        v = v.real
    try:
        v = mpmath.mpf(v)
    except (TypeError, ValueError):
        return None
    if mpmath.isnan(v):
        return None
    return v
