"""Numerically stable, vectorised float code generated from a derivation result.

``generate_source(result)`` turns the sympy closed form of a :class:`~rdpsym.derive.result.DivergenceResult`
into Python source that imports only numpy; ``to_numpy(result)`` executes that same source and returns the
function, so the code a user pastes and the code rdpsym runs are one text.

Nothing here is written per mechanism. The generator walks the expression tree:

* ``log`` of a sum is emitted as a (signed) log-sum-exp over the logarithms of the summands, each taken
  in log space (``log(alpha * exp(y)) -> log(alpha) + y``, ``log(p**alpha) -> alpha*log(p)``), so
  ``exp((alpha-1)/b)`` never overflows (Mironov 2017, Prop. 6 at b = 1e-4, alpha = 1e6);
  ``log(1 + x)`` becomes ``log1p(x)`` and ``exp(y) - 1`` becomes ``expm1(y)``.
* Where the closed form is 0/0 or loses digits, Taylor series computed by sympy take over:
  - around alpha = 1 (the form ``log(...)/(alpha-1)``; the series starts at the KL divergence),
  - around every exceptional point (Laplace at alpha = 1/2),
  - around each parameter boundary where the divergence tends to 0 (Laplace as b -> oo, randomized
    response as p -> 1/2): there every term of the closed form is O(1) while the value is O(1/b^2), and
    no float evaluation of the closed form can be accurate. The coefficients of these series are
    polynomials in alpha without cancellation.
  At run time a series is used at a point only where its last two terms are below 1e-17 of its value
  (the truncation error is then far below a unit in the last place); elsewhere the closed form is used.
* alpha = 1 routes to ``result.kl``, alpha = oo to ``result.max_divergence``, exceptional orders to their
  limits, and the value is +inf wherever ``result.conditions`` fail. Parameters outside their domains and
  NaN raise ``ValueError`` naming the argument.
* Orders where the closed form is singular and that depend on the parameters (a factor of degree 1 in
  alpha such as alpha (b1 + b2) - b1 for two Laplace scales, see :class:`_Factor`) are found in the
  closed form itself; the factor is evaluated in double-double arithmetic (next to its root its float
  value would be rounding error). Where the singularity is removable, a Taylor series around the
  parameter-dependent root (Taylor-mode arithmetic, the vanishing sums deflated) serves the points
  next to it; where neither the series nor the closed form (by its estimated cancellation error) is
  accurate, the value is NaN and a ``RuntimeWarning`` gives the count: never a wrong finite number.
  Only then is NaN returned.

Accuracy and speed are measured by ``benchmarks/numerics.py``.
"""

from __future__ import annotations

import hashlib
import keyword
import math
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Callable, Sequence

import mpmath
import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from ..derive.result import DivergenceResult, Status
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA
from .latex import result_parameters as _parameters_for

__all__ = ["Series", "generate_source", "to_numpy", "series_expansions", "CodegenError"]

#: A series is used where its last two terms are below this fraction of its value.
SERIES_TOLERANCE = 1e-15
#: Number of Taylor terms kept (orders 0 .. SERIES_TERMS-1).
SERIES_TERMS = 12
_FORMAT = 15


class CodegenError(ValueError):
    """The result cannot be turned into float code (no closed form, or an unsupported expression)."""


@dataclass(frozen=True)
class Series:
    """A truncated Taylor series sum_k coeffs[k] * v**k of one branch of the divergence.

    ``variable`` is the expansion variable as an expression of alpha and the parameters
    (``alpha - 1``, ``1/b``, ``p - 1/2``); ``coeffs`` may depend on alpha and the parameters.
    """

    where: str
    variable: sp.Expr
    coeffs: tuple[sp.Expr, ...]


# ------------------------------------------------------------------------------------------------
# Stable emission of one expression
# ------------------------------------------------------------------------------------------------
class _Emitter:
    """Emit numpy code for an expression; ``logabs`` emits (log|e|, sign) without forming e."""

    def __init__(self, names: dict[sp.Symbol, str]):
        self.names = names
        self.printer = NumPyPrinter({"fully_qualified_modules": True, "allow_unknown_functions": False})

    # -- numbers ---------------------------------------------------------------------------------
    @staticmethod
    def number(e: sp.Expr) -> str:
        if e is sp.pi:
            return "numpy.pi"
        if e is sp.E:
            return "numpy.e"
        if e in (sp.oo,):
            return "numpy.inf"
        if e in (-sp.oo,):
            return "(-numpy.inf)"
        if e.is_Integer:
            return f"{int(e)}.0" if abs(int(e)) < 2**53 else repr(float(e))
        value = float(e)
        return repr(value) if value >= 0 else f"({value!r})"

    # -- values ----------------------------------------------------------------------------------
    def value(self, e: sp.Expr) -> str:
        if e.is_Symbol:
            return self.names[e]
        if e in (sp.oo, -sp.oo):
            return self.number(e)
        if e.is_number and not e.has(sp.Symbol):
            if e.is_real is False:
                raise CodegenError(f"non-real constant {e}")
            return self.number(e) if (e.is_Rational or e in (sp.pi, sp.E, sp.oo, -sp.oo)) else repr(float(e))
        if isinstance(e, sp.log):
            return self.logabs(e.args[0])[0]
        if isinstance(e, sp.exp):
            return f"numpy.exp({self.value(e.args[0])})"
        if e.is_Add:
            return self._add(e)
        if e.is_Mul:
            num, den = [], []
            for f in e.args:
                if f.is_Pow and f.exp.is_number and f.exp.is_negative:
                    den.append(self.value(sp.Pow(f.base, -f.exp)))
                else:
                    num.append(self.value(f))
            text = "*".join(f"({t})" for t in num) or "1.0"
            return text if not den else f"{text}/({'*'.join(f'({t})' for t in den)})"
        if e.is_Pow:
            return self._pow(e)
        if isinstance(e, (sp.Max, sp.Min)):
            fn = "numpy.maximum" if isinstance(e, sp.Max) else "numpy.minimum"
            args = [self.value(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = f"{fn}({out}, {a})"
            return out
        if isinstance(e, sp.Abs):
            return f"numpy.abs({self.value(e.args[0])})"
        if isinstance(e, sp.sign):
            return f"numpy.sign({self.value(e.args[0])})"
        if isinstance(e, sp.Piecewise):
            conds = ", ".join(self.condition(c) for _, c in e.args)
            vals = ", ".join(self.value(v) for v, _ in e.args)
            return f"numpy.select([{conds}], [{vals}], numpy.nan)"
        raise CodegenError(f"no stable float code for {type(e).__name__}: {sp.sstr(e)}")

    def _add(self, e: sp.Add) -> str:
        terms = list(e.args)
        parts = []
        # exp(y) - 1 -> expm1(y): keeps the digits of small y (KL of Laplace at large b).
        const = [t for t in terms if t.is_number]
        if const and const[0] == -1:
            for t in terms:
                if isinstance(t, sp.exp):
                    terms.remove(t)
                    terms.remove(const[0])
                    parts.append(f"numpy.expm1({self.value(t.args[0])})")
                    break
        parts += [self.value(t) for t in terms]
        return " + ".join(f"({p})" for p in parts)

    def _pow(self, e: sp.Pow) -> str:
        base, ex = e.base, e.exp
        if ex.is_number:
            if ex == sp.Rational(1, 2):
                return f"numpy.sqrt({self.value(base)})"
            if ex == -1:
                return f"1.0/({self.value(base)})"
            if ex.is_Integer:
                return f"({self.value(base)})**{int(ex)}"
            if base.is_positive:
                return f"numpy.exp({self.number(ex)}*{self.logabs(base)[0]})"
            return f"numpy.power({self.value(base)}, {self.number(ex)})"
        if base is sp.E:
            return f"numpy.exp({self.value(ex)})"
        # a non-constant exponent: exp(ex * log(base)), base > 0 in the real domain
        return f"numpy.exp(({self.value(ex)})*({self.logabs(base)[0]}))"

    def condition(self, c: sp.Basic) -> str:
        if c is sp.true:
            return "True"
        if c is sp.false:
            return "False"
        if isinstance(c, sp.And):
            return "(" + " & ".join(f"({self.condition(a)})" for a in c.args) + ")"
        if isinstance(c, sp.Or):
            return "(" + " | ".join(f"({self.condition(a)})" for a in c.args) + ")"
        if isinstance(c, sp.Not):
            return f"(~({self.condition(c.args[0])}))"
        if isinstance(c, sp.core.relational.Relational):
            op = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}[c.rel_op]
            return f"(({self.value(c.lhs)}) {op} ({self.value(c.rhs)}))"
        raise CodegenError(f"no float code for the condition {sp.sstr(c)}")

    # -- logarithms ------------------------------------------------------------------------------
    def logabs(self, e: sp.Expr) -> tuple[str, str | None]:
        """(code of log|e|, code of sign(e) or None when e > 0 is known)."""
        if e.is_number and not e.has(sp.Symbol):
            v = sp.N(e, 30)
            if v == 0:
                return "(-numpy.inf)", None
            return repr(float(sp.log(abs(v)).evalf(30))), (None if v > 0 else "(-1.0)")
        if isinstance(e, sp.exp):
            return self.value(e.args[0]), None
        if e.is_Pow:
            base, ex = e.base, e.exp
            lb, sb = self.logabs(base)
            sign = None
            if sb is not None and ex.is_integer and ex.is_odd is not False:
                sign = sb if ex.is_odd else f"({sb})**({self.value(ex)})"
            return f"({self.value(ex)})*({lb})", sign
        if e.is_Mul:
            logs, signs = [], []
            factors = list(e.args)
            grouped = self._tilted_powers(factors)
            if grouped is not None:
                code, factors = grouped
                logs.append(f"({code})")
            for f in factors:
                lf, sf = self.logabs(f)
                logs.append(f"({lf})")
                if sf is not None:
                    signs.append(f"({sf})")
            return " + ".join(logs), ("*".join(signs) if signs else None)
        if e.is_Add:
            return self._logabs_add(e)
        if e.is_positive:
            return f"numpy.log({self.value(e)})", None
        v = self.value(e)
        return f"numpy.log(numpy.abs({v}))", f"numpy.sign({v})"

    def _tilted_powers(self, factors: list) -> tuple[str, list] | None:
        """log of prod_i b_i**(c_i + d_i*alpha) as sum_i c_i log b_i + alpha*log1p(B - 1), B = prod_i b_i**d_i.

        The plain sum alpha*log(p) + (1-alpha)*log(1-p) cancels for large alpha and p near 1/2 (both terms
        are large, their sum is not); B - 1, simplified symbolically ((2p-1)/(1-p) for randomized
        response), keeps the digits of log B.
        """
        powers, rest = [], []
        for f in factors:
            base, ex = f.as_base_exp()
            if ex.has(ALPHA) and not base.has(ALPHA) and base.is_positive is not False and sp.Poly(ex, ALPHA).degree() == 1 \
                    if ex.is_polynomial(ALPHA) else False:
                powers.append((base, sp.expand(ex)))
            else:
                rest.append(f)
        if len(powers) < 2:
            return None
        const = [(b, ex.subs(ALPHA, 0)) for b, ex in powers]
        slope = [(b, ex.coeff(ALPHA, 1)) for b, ex in powers]
        if any(d.has(ALPHA) for _, d in slope):
            return None
        B = sp.Mul(*[b**d for b, d in slope])
        ratio_minus_one = sp.factor(sp.together(B - 1))
        parts = [f"({self.value(c)})*({self.logabs(b)[0]})" for b, c in const if c != 0]
        parts.append(f"(alpha)*numpy.log1p({self.value(ratio_minus_one)})")
        return " + ".join(parts), rest

    def _logabs_add(self, e: sp.Add) -> tuple[str, str | None]:
        terms = [self.logabs(t) for t in e.args]
        if all(s is None for _, s in terms):
            # log(sum exp(l_i)) without forming exp(l_i): no overflow, no underflow to log(0).
            out = terms[0][0]
            for lt, _ in terms[1:]:
                out = f"numpy.logaddexp({out}, {lt})"
            return out, None
        const = [t for t in e.args if t.is_number]
        if const and const[0] == 1:
            rest = e - 1
            # log(1 + x) with x of either sign: log1p keeps the digits of small x.
            return f"numpy.log1p({self.value(rest)})", None
        logs = ", ".join(lt for lt, _ in terms)
        signs = ", ".join(s if s is not None else "1.0" for _, s in terms)
        return f"_lse_abs([{logs}], [{signs}])", f"_lse_sign([{logs}], [{signs}])"


class _TaylorEmitter:
    """Emit numpy code that evaluates an expression as a truncated Taylor series in alpha around a0.

    Every node becomes an array of coefficients (orders 0..N-1) computed at run time with the usual
    recurrences for products, quotients, exp, log and powers (Taylor-mode arithmetic), so nothing is
    expanded symbolically. Logarithms of sums are taken in log space (``_t_lse``). A factor
    ``(alpha - a0)**-1`` is applied as a shift of the coefficients; the constant term it removes is
    zero by the limit identity the engine checked (e.g. D_1 = lim D_alpha).
    """

    def __init__(self, emitter: _Emitter, a0: sp.Expr, terms: int):
        self.em, self.a0, self.terms = emitter, a0, terms
        self.lines: list[str] = []
        self.count = 0
        self.seen: dict[str, str] = {}
        #: leading coefficients dropped by divisions by (alpha - a0)**m: the top ones are padding
        self.lost = 0
        #: series name -> the coefficient of log|alpha - a0| it leaves out (see _vanishes); they must
        #: cancel in the whole expression (a removable singularity), else no series is emitted
        self.ltau: dict[str, sp.Expr] = {}

    def _new(self, code: str, ltau: sp.Expr = sp.Integer(0)) -> str:
        # every step is a pure function of earlier ones: a repeated subexpression is computed once
        if code in self.seen:
            return self.seen[code]
        self.count += 1
        name = f"_s{self.count}"
        self.lines.append(f"    {name} = {code}")
        self.seen[code] = name
        if ltau != 0:
            self.ltau[name] = ltau
        return name

    def _lt(self, name: str) -> sp.Expr:
        return self.ltau.get(name, sp.Integer(0))

    def _vanishes(self, e: sp.Expr) -> bool:
        """Whether the sum ``e`` is zero at the centre (only parameter-dependent centres look)."""
        return False

    def const(self, e: sp.Expr) -> str:
        return self._new(f"_t_const({self.em.value(e)} + _z(alpha), _one)")

    def series(self, e: sp.Expr) -> str:
        if not e.has(ALPHA):
            return self.const(e)
        if e == ALPHA:
            return self._new(f"_t_const({self.em.value(self.a0)} + _z(alpha), _one) + _unit")
        if e.is_Add:
            parts = [self.series(t) for t in e.args]
            return self._new(" + ".join(parts), sp.Add(*[self._lt(p) for p in parts]))
        if e.is_Mul:
            shifts = 0
            factors, logged = [], []
            # factors free of alpha scale the series as plain values (one multiply, not a series product)
            scale = sp.Mul(*[f for f in e.args if not f.has(ALPHA)])
            for f in (f for f in e.args if f.has(ALPHA)):
                base, ex = f.as_base_exp()
                if ex.is_Integer and ex < 0 and sp.expand(base - (ALPHA - self.a0)) == 0:
                    shifts += int(-ex)
                elif ex.is_Integer and ex < 0 and sp.expand(base + (ALPHA - self.a0)) == 0:
                    shifts += int(-ex)
                    factors.append(self.const(sp.Integer(-1) ** int(-ex)))
                else:
                    factors.append(self._factor(f))
                    logged += [(factors[-1], f)] if self._lt(factors[-1]) != 0 else []
            if not factors:
                factors.append(self.const(sp.Integer(1)))
            ltau = sp.Integer(0)
            if logged:
                # (L log|alpha - a0|) times the other factors: only one factor may carry it
                if len(logged) > 1 or shifts:
                    raise CodegenError("a product of logarithms that vanish at the expansion point")
                ltau = self._lt(logged[0][0]) * e / logged[0][1]
            out = factors[0]
            for f in factors[1:]:
                out = self._new(f"_t_mul({out}, {f})", ltau)
            if scale != 1:
                out = self._new(f"({self.em.value(scale)}) * {out}", ltau)
            if shifts:
                # divide by (alpha - a0)**shifts: drop the leading (zero) coefficients
                pad = f"numpy.zeros(({shifts},) + {out}.shape[1:])"
                out = self._new(f"numpy.concatenate([{out}[{shifts}:], {pad}])")
                self.lost = max(self.lost, shifts)
            return out
        if e.is_Pow:
            base, ex = e.base, e.exp
            if not ex.has(ALPHA) and ex.is_number:
                if not (ex.is_Integer and ex > 0) and base.is_Add and self._vanishes(base):
                    raise CodegenError("a power of a sum that vanishes at the expansion point")
                b = self.series(base)
                if self._lt(b) != 0:
                    raise CodegenError("a power of a logarithm that vanishes at the expansion point")
                if ex == -1:
                    return self._new(f"_t_div(_t_const(1.0, _one), {b})")
                return self._new(f"_t_pow({b}, {self.em.number(ex)})")
            lb = self.logabs(base)
            if self._lt(lb) != 0:
                raise CodegenError("a power of a sum that vanishes at the expansion point")
            return self._new(f"_t_exp(_t_mul({self.series(ex)}, {lb}))")
        if isinstance(e, sp.exp):
            return self._new(f"_t_exp({self.series(e.args[0])})")
        if isinstance(e, sp.log):
            return self.logabs(e.args[0])
        raise CodegenError(f"no Taylor-mode code for {type(e).__name__}")

    def _factor(self, f: sp.Expr) -> str:
        if f.is_Pow and f.exp.is_Integer and f.exp < 0:
            if f.base.is_Add and self._vanishes(f.base):
                raise CodegenError("a quotient by a sum that vanishes at the expansion point")
            b = self.series(f.base ** -f.exp)
            if self._lt(b) != 0:
                raise CodegenError("a quotient by a logarithm that vanishes at the expansion point")
            return self._new(f"_t_div(_t_const(1.0, _one), {b})")
        return self.series(f)

    def logabs(self, e: sp.Expr) -> str:
        """Series of log|e| (e nonzero at a0), or of log|e / (alpha - a0)| for a sum e that vanishes
        there (a parameter-dependent centre): the left-out log|alpha - a0| is recorded in ``ltau``."""
        if not e.has(ALPHA):
            return self._new(f"_t_const({self.em.logabs(e)[0]} + _z(alpha), _one)")
        if isinstance(e, sp.exp):
            return self.series(e.args[0])
        if e.is_Pow:
            if e.exp.has(ALPHA) or not e.exp.is_number:
                lb = self.logabs(e.base)
                if self._lt(lb) != 0:
                    raise CodegenError("a power of a sum that vanishes at the expansion point")
                return self._new(f"_t_mul({self.series(e.exp)}, {lb})")
            lb = self.logabs(e.base)
            return self._new(f"{self.em.number(e.exp)} * {lb}", e.exp * self._lt(lb))
        if e.is_Mul:
            parts = [self.logabs(f) for f in e.args]
            return self._new(" + ".join(parts), sp.Add(*[self._lt(p) for p in parts]))
        if e.is_Add and self._vanishes(e):
            # e = (alpha - a0) * (e / (alpha - a0)): the plain series of e with its leading (zero)
            # coefficient dropped is the series of e / (alpha - a0); its top coefficient is padding
            parts = [self.series(t) for t in e.args]
            if any(self._lt(p) != 0 for p in parts):
                raise CodegenError("a logarithm inside a sum that vanishes at the expansion point")
            total = self._new(" + ".join(parts))
            self.lost = max(self.lost, 1)
            deflated = self._new(f"numpy.concatenate([{total}[1:], numpy.zeros((1,) + {total}.shape[1:])])")
            return self._new(f"_t_log({deflated})", sp.Integer(1))
        if e.is_Add:
            logs, plain = [], []
            for t in e.args:
                # positive terms are combined in log space; the others (e.g. alpha - 1, zero at
                # alpha = 1) are added as they are
                (logs if t.subs(ALPHA, self.a0).is_positive else plain).append(
                    self.logabs(t) if t.subs(ALPHA, self.a0).is_positive else self.series(t))
            if not logs:
                raise CodegenError("log of a sum that vanishes at the expansion point")
            return self._new(f"_t_lse([{', '.join(logs)}], [{', '.join(plain)}])")
        return self._new(f"_t_log({self.series(e)})")


# ------------------------------------------------------------------------------------------------
# Series
# ------------------------------------------------------------------------------------------------
def _taylor(expr: sp.Expr, var: sp.Symbol, n: int, seconds: float) -> tuple[sp.Expr, ...] | None:
    """Taylor coefficients of expr in var at 0 (orders 0..n-1), or None if not a Taylor series."""
    from ..derive.timeout import StepTimeout, run_with_time_limit

    def work():
        s = sp.series(expr, var, 0, n).removeO()
        s = sp.expand(s)
        if s.has(sp.log(var)) or any(
            t.as_coeff_exponent(var)[1].is_negative or not t.as_coeff_exponent(var)[1].is_integer for t in sp.Add.make_args(s)
        ):
            return None
        # expand + powsimp merges exp(-x)*exp(x): factored forms overflow for small scales
        coeffs = tuple(_tidy(s.coeff(var, k)) for k in range(n))
        if any(c.has(var) or c.has(sp.nan, sp.zoo, sp.oo) for c in coeffs):
            return None
        return coeffs

    try:
        return run_with_time_limit(work, seconds=seconds)
    except (StepTimeout, RuntimeError, NotImplementedError, ValueError, TypeError, ZeroDivisionError):
        return None
    except Exception:  # noqa: BLE001 - sympy's series raises many types; a failed series is just not used
        return None


def evaluation_form(expr: sp.Expr, checks: Sequence[dict] = (), shift: bool = True) -> sp.Expr:
    """An equivalent form of ``expr`` that is cheaper to expand in series and to evaluate in floats.

    Each ``log(X)`` depending on alpha becomes ``a0 + log|n| - log|d|``, where ``X = exp(a0) n / d`` with
    ``n/d`` over a common denominator and one exponential factored out of the sum ``n``. For Laplace,
    ``log(alpha e^{(alpha-1)/b}/(2 alpha-1) + (alpha-1) e^{-alpha/b}/(2 alpha-1))`` becomes
    ``-alpha/b + log(alpha e^{(2 alpha-1)/b} + alpha - 1) - log(2 alpha - 1)`` (the exponential growing
    slowest in alpha is the one factored out): the removable singularity at
    alpha = 1/2 is then a difference of two logs whose series sympy finds in seconds (the other form takes
    minutes). The values agree wherever ``X > 0`` (the generated code takes logs of absolute values); the
    rewrite is kept only if it agrees with ``expr`` at the ``checks`` points (30 digits).

    With ``shift=False`` (the form the closed form is evaluated in) no exponential is factored out and
    each exponent is kept factored: ``log(alpha e^{(alpha-1)/b} + (alpha-1) e^{-alpha/b}) - log(2 alpha - 1)``.
    The log-sum-exp then scales by the largest term point by point, and (alpha - 1)/b is computed as a
    product with an exact alpha - 1. The shifted form computes it as (2 alpha - 1)/b - alpha/b, which
    at alpha = 1 + 6.5e-9 and b = 1.5e-4 loses 3e-8 relative.
    """

    def slope(exponent) -> float:
        # d(exponent)/d(alpha) at a typical point: the exponent growing slowest in alpha is factored out
        try:
            return float(sp.diff(exponent, ALPHA).subs(checks[0])) if checks else 0.0
        except (TypeError, ValueError):
            return 0.0

    def rewrite(e):
        n, d = sp.fraction(sp.together(e.args[0]))
        groups: dict = {}  # exponent -> its coefficient: the sum as sum_k c_k exp(a_k)
        for t in sp.Add.make_args(sp.expand(n)):
            t = sp.powsimp(t, combine="exp")
            exps = [f for f in sp.Mul.make_args(t) if isinstance(f, sp.exp)]
            exponent = sp.expand(sp.Add(*[f.args[0] for f in exps]))
            groups[exponent] = groups.get(exponent, sp.Integer(0)) + t / sp.Mul(*exps)
        if set(groups) == {0} and d == 1:
            return e
        if not shift:
            # exponentials that together() moved into the denominator go back into each term's exponent
            d_exps = [f for f in sp.Mul.make_args(d) if isinstance(f, sp.exp)]
            e_d = sp.Add(*[f.args[0] for f in d_exps])
            d = d / sp.Mul(*d_exps)
            n = sp.Add(*[sp.factor(c) * sp.exp(sp.factor(k - e_d)) for k, c in groups.items()])
            return sp.log(n) - sp.log(d)
        low = min(groups, key=slope)  # 0 (no exponential) is a candidate too
        n = sp.Add(*[sp.factor(c) * sp.exp(sp.expand(k - low)) for k, c in groups.items()])
        return low + sp.log(n) - sp.log(d)

    try:
        out = expr.replace(lambda e: isinstance(e, sp.log) and e.has(ALPHA), rewrite)
    except Exception:  # noqa: BLE001 - a rewrite that sympy cannot do just leaves the form as it is
        return expr
    if out == expr:
        return expr
    with mpmath.workdps(30):
        for point in checks:
            a = complex(sp.N(expr.subs(point), 30))
            b = complex(sp.N(out.subs(point), 30))
            if not (abs(a.imag) < 1e-20 and abs(b.imag) < 1e-20 and abs(a.real - b.real) <= 1e-20 * max(1.0, abs(a.real))):
                return expr
    return out


def _tidy(c: sp.Expr) -> sp.Expr:
    """Factored polynomials (no cancellation near alpha = 1); exp products merged (no overflow)."""
    c = sp.expand(c)
    return sp.powsimp(c) if c.has(sp.exp) else sp.factor(c)


def _singular_at(expr: sp.Expr, a0: sp.Expr) -> bool:
    try:
        v = expr.subs(ALPHA, a0)
    except Exception:  # noqa: BLE001
        return True
    return v.has(sp.nan, sp.zoo) or v is sp.nan


def _has_transcendental(expr: sp.Expr) -> bool:
    return expr.has(sp.log, sp.exp) or any(p.exp.has(sp.Symbol) for p in expr.atoms(sp.Pow))


def _boundaries(param: Parameter) -> list[sp.Expr]:
    dom = param.domain
    out = []
    try:
        inf, sup = dom.inf, dom.sup
    except (AttributeError, NotImplementedError):
        return out
    for end in (inf, sup):
        if end.is_finite or end is sp.oo:
            out.append(end)
    return out


def _tends_to_zero(result: DivergenceResult, expr: sp.Expr, param: Parameter, end: sp.Expr, others: dict) -> bool:
    """Numeric probe: does the branch vanish as ``param`` approaches ``end`` (alpha = 2)?"""
    import mpmath

    sym = param.symbol
    try:
        if end is sp.oo:
            near, mid = sp.Integer(10) ** 12, sp.Integer(10)
        else:
            inside = 1 if (param.domain.contains(end + sp.Rational(1, 10**6)) is sp.true) else -1
            near, mid = end + inside * sp.Rational(1, 10**12), end + inside * sp.Rational(1, 10)
        subs = dict(others)
        vals = []
        for point in (near, mid):
            subs[sym] = point
            v = expr.subs(ALPHA, 2).subs(subs).evalf(40)
            if not v.is_number or v.has(sp.nan, sp.zoo):
                return False
            vals.append(abs(mpmath.mpf(sp.re(v))))
        return vals[0] < sp.Rational(1, 10**9) * vals[1]
    except Exception:  # noqa: BLE001
        return False


def series_expansions(result: DivergenceResult, branch: sp.Expr, parameters: Sequence[Parameter],
                      terms: int = SERIES_TERMS, seconds: float = 120.0) -> tuple[list[Series], list[Series]]:
    """Symbolic Taylor series for ``branch``: (at parameter boundaries, at exceptional points).

    The series at alpha = 1 is computed at run time (Taylor-mode arithmetic, :class:`_TaylorEmitter`).
    The symbolic series take seconds each; they are cached on disk with the derivations.
    """
    import pickle

    key = "\n".join(["series-1", sp.srepr(branch), str(terms),
                     repr([(sp.srepr(p.alpha), sp.srepr(p.value)) for p in result.exceptional_points]),
                     repr([(p.name, sp.srepr(p.symbol), sp.srepr(p.domain), p.log_scale, p.typical) for p in parameters])])
    path = _cache_path(key)
    if path is not None and path.with_suffix(".pickle").is_file():
        try:
            with path.with_suffix(".pickle").open("rb") as fh:
                return pickle.load(fh)
        except Exception:  # noqa: BLE001 - a corrupt entry is recomputed
            pass
    out = _series_expansions(result, branch, parameters, terms, seconds)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as fh:
                pickle.dump(out, fh)
            os.replace(fh.name, path.with_suffix(".pickle"))
        except OSError:
            pass
    return out


def _series_expansions(result, branch, parameters, terms, seconds):
    out: list[Series] = []
    bounds = _boundary_series(result, branch, parameters, terms, seconds)
    tau = sp.Symbol("tau", real=True)
    points = [p.alpha for p in result.exceptional_points]
    for a0 in points:
        if not _singular_at(branch, a0):
            continue
        coeffs = _taylor(branch.subs(ALPHA, a0 + tau), tau, terms, seconds)
        if coeffs is not None:
            out.append(Series(f"alpha near {a0}", ALPHA - a0, coeffs))
    return bounds, out


def _boundary_series(result, branch, parameters, terms, seconds) -> list[Series]:
    out: list[Series] = []
    if not _has_transcendental(branch):
        return out
    u = sp.Symbol("u", positive=True)
    typical = {p.symbol: p.typical_values(1)[0] for p in parameters}
    for param in parameters:
        if param.symbol not in branch.free_symbols or param.symbol.is_integer:
            continue
        bounded = param.domain.inf.is_finite and param.domain.sup.is_finite
        if not (param.log_scale or bounded):
            # scales (log_scale) and bounded parameters only: each series costs seconds of sympy time,
            # and a sensitivity -> 0 series would repeat the scale -> oo one
            continue
        others = {s: v for s, v in typical.items() if s != param.symbol}
        for end in _boundaries(param):
            if not _tends_to_zero(result, branch, param, end, others):
                continue
            if end is sp.oo:
                sub, var = 1 / u, 1 / param.symbol
            else:
                inside = 1 if (param.domain.contains(end + sp.Rational(1, 10**6)) is sp.true) else -1
                sub, var = end + inside * u, inside * (param.symbol - end)
            coeffs = _taylor(branch.subs(param.symbol, sub), u, terms, seconds)
            if coeffs is not None:
                out.append(Series(f"{param.name} near {end}", var, coeffs))
    return out


# ------------------------------------------------------------------------------------------------
# Singular orders that depend on the parameters
# ------------------------------------------------------------------------------------------------
#: Next to a parameter-dependent singular factor D (|D| / sum|terms of D| below this) the closed form
#: is checked: a series around the root is used where it converges, else the closed form where its
#: estimated cancellation error is below MOVING_TRUST of its value, else NaN (with a RuntimeWarning).
MOVING_WINDOW = 0.1
MOVING_TRUST = 1e-13


@dataclass(frozen=True)
class _Factor:
    """A factor D of the closed form, of degree 1 in alpha, whose root a0 depends on the parameters.

    Laplace(0, b1) against Laplace(m, b2) has D = alpha (b1 + b2) - b1: at alpha = b1/(b1 + b2) the
    closed form is 0/0 (``removable``), and the divergence is analytic there. A non-removable factor is an
    edge of the finiteness conditions or a pole (two Gaussian scales: alpha s2^2 + (1 - alpha) s1^2).
    Either way D is evaluated in double-double arithmetic (``symbol`` stands for it in the float code):
    its float value next to its root would be mostly rounding error.
    """

    poly: sp.Expr
    symbol: sp.Symbol
    root: sp.Expr
    removable: bool
    probes: tuple  # typical parameter values at which the root is an order in (0, oo) other than 1


def _degree_one_factors(expr: sp.Expr, syms: set) -> list[sp.Expr]:
    cands: set = set()
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.log) and node.has(ALPHA):
            cands.update(sp.fraction(sp.together(node.args[0])))
        elif node.is_Add and node.has(ALPHA):
            cands.add(node)
        elif node.is_Pow and node.base.has(ALPHA) and node.exp.is_number and node.exp.is_negative:
            cands.add(node.base)
    out = []
    for c in sorted(cands, key=sp.default_sort_key):  # deterministic: the generated text is cached
        if not c.has(ALPHA):
            continue
        parts = sp.Mul.make_args(sp.factor(c) if c.is_polynomial(*syms) else c)
        for f in parts:
            f = f.as_base_exp()[0]
            if not f.has(ALPHA) or not f.is_polynomial(*syms) or not f.free_symbols <= syms:
                continue
            f = sp.expand(f)
            if sp.degree(f, ALPHA) == 1 and len(f.free_symbols) > 1:
                out.append(f)
    return out


def _probe_points(params, root) -> list[dict]:
    import itertools

    grids = [p.typical_values(3) for p in params]
    points = []
    # combinations with distinct values first: b1 = b2 would hide a root that depends on b1/b2
    combos = sorted(itertools.islice(itertools.product(*grids), 81), key=lambda v: -len(set(v)))
    for values in combos:
        point = {p.symbol: v for p, v in zip(params, values)}
        a0 = sp.nsimplify(root.subs(point))
        if a0.is_real and a0.is_finite and a0 > 0 and abs(a0 - 1) > sp.Rational(1, 100):
            points.append(point)
        if len(points) >= 3:
            break
    return points


def _removable_at(branch: sp.Expr, root: sp.Expr, points: list[dict]) -> bool:
    """Numeric probe (80 digits): the branch takes one finite value on both sides of the root, at
    distances 1e-30 and 1e-22 (a logarithmic pole or an edge gives different or complex values)."""
    if not points:
        return False
    for point in points:
        a0 = root.subs(point)
        f = branch.subs(point)
        vals = []
        for h in (sp.Rational(1, 10**30), -sp.Rational(1, 10**30), sp.Rational(1, 10**22)):
            v = f.subs(ALPHA, a0 + h).evalf(80)
            if not v.is_number or v.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or abs(sp.im(v)) > sp.Float(10, 80) ** -60:
                return False
            vals.append(sp.re(v))
        scale = max(abs(v) for v in vals)
        if scale == 0 or any(abs(v - vals[0]) > sp.Float(10, 80) ** -15 * scale for v in vals):
            return False
    return True


def singular_factors(result: DivergenceResult, branches: Sequence[sp.Expr], params, seconds: float = 30.0) -> list[_Factor]:
    """The degree-1 factors of the branches whose roots are parameter-dependent orders (see _Factor).

    Factors come from the Add nodes, the denominators and the logarithms' arguments (over a common
    denominator, factored), within ``seconds``; a factor whose root is never a positive order at the
    typical parameter values is left out.
    """
    from ..derive.timeout import StepTimeout, run_with_time_limit

    syms = {ALPHA, *(p.symbol for p in params)}

    def work():
        found: list[sp.Expr] = []
        for br in branches:
            for f in _degree_one_factors(br, syms):
                if not any(sp.expand(f - g) == 0 or sp.expand(f + g) == 0 for g in found):
                    found.append(f)
        out = []
        for j, f in enumerate(found):
            root = sp.cancel(-f.coeff(ALPHA, 0) / f.coeff(ALPHA, 1))
            if root.is_number or root.is_nonpositive or root.has(ALPHA):
                continue
            points = _probe_points(params, root)
            if not points:
                continue
            removable = all(_removable_at(br, root, points) for br in branches if f.has(ALPHA))
            out.append(_Factor(f, sp.Symbol(f"_f{j}", real=True), root, removable, tuple(points)))
        return out

    try:
        return run_with_time_limit(work, seconds=seconds)
    except Exception:  # noqa: BLE001 - no factor found in time: the code is generated as before
        return []


def _substitute_factors(expr: sp.Expr, factors: Sequence[_Factor]) -> sp.Expr:
    """``expr`` with each sum equal to a constant multiple of a factor replaced by its symbol."""
    if not factors:
        return expr
    memo: dict = {}

    def match(e):
        if e in memo:
            return memo[e]
        out = None
        if e.is_Add and e.has(ALPHA) and not e.has(sp.exp, sp.log):
            for f in factors:
                if e.free_symbols <= f.poly.free_symbols | {ALPHA}:
                    q = sp.cancel(sp.expand(e) / f.poly)
                    if q.is_number and q != 0:
                        out = q * f.symbol
                        break
        memo[e] = out
        return out

    return expr.replace(lambda e: match(e) is not None, match)


class _CentredTaylor(_TaylorEmitter):
    """Taylor-mode series around the parameter-dependent root a0 of a removable factor: sums that
    vanish there (the factor itself, the numerator it cancels with) are deflated inside logarithms."""

    def __init__(self, emitter: _Emitter, factor: _Factor, terms: int):
        super().__init__(emitter, factor.root, terms)
        self.factor = factor
        self._memo: dict = {}

    def _vanishes(self, e: sp.Expr) -> bool:
        if e in self._memo:
            return self._memo[e]
        out = True
        try:
            for point in self.factor.probes:
                a0 = self.factor.root.subs(point)
                terms = [t.subs(point).subs(ALPHA, a0).evalf(60) for t in e.args]
                total = abs(sp.Add(*terms).evalf(60))
                if not bool(total <= sp.Float(10, 60) ** -40 * sum(abs(t) for t in terms)):
                    out = False
                    break
        except (TypeError, ValueError, ArithmeticError):
            out = False
        self._memo[e] = out
        return out


def _dd_code(poly: sp.Expr, em: _Emitter) -> str:
    """Code of the polynomial ``poly`` in double-double arithmetic (its value rounded once)."""
    out = None
    for term in sp.Add.make_args(sp.expand(poly)):
        c, rest = term.as_coeff_Mul()
        hi = float(c)
        lo = float(sp.Rational(c) - sp.Rational(hi)) if c.is_Rational else 0.0
        code = f"({hi!r}, {lo!r})"
        for f in sp.Mul.make_args(rest):
            if f == 1:
                continue
            base, ex = f.as_base_exp()
            if not (base.is_Symbol and ex.is_Integer and ex > 0):
                raise CodegenError(f"no double-double code for {f}")
            for _ in range(int(ex)):
                code = f"_dd_mul({code}, _dd({em.names[base]}))"
        out = code if out is None else f"_dd_add({out}, {code})"
    return f"_dd_value({out})"


def _abs_scale_code(poly: sp.Expr, em: _Emitter) -> str:
    """Code of sum_i |t_i| over the terms of ``poly`` (the size its cancellation is measured against)."""
    return " + ".join(f"numpy.abs({em.value(t)})" for t in sp.Add.make_args(sp.expand(poly)))


def _cancellation_code(direct: sp.Expr, factor: _Factor, em: _Emitter, vanishes) -> str | None:
    """Code of an estimate of the closed form's absolute error from the sums in its logarithms that
    vanish at the factor's root: eps * (8 + 4 max_i |l_i|) * sum_i |t_i| / |sum_i t_i| times the
    coefficient of that logarithm, with l_i = log|t_i| (rounding in the exponents is eps |l_i|)."""
    logs = [n for n in direct.atoms(sp.log) if n.args[0].is_Add and n.args[0].has(ALPHA) and vanishes(n.args[0])]
    if not logs:
        return None
    parts = []
    for n in logs:
        lam = sp.Dummy("lam")
        coeff = sp.diff(direct.subs(n, lam), lam)
        if coeff.has(lam):
            return None
        terms = [em.logabs(t)[0] for t in n.args[0].args]
        signed = em.logabs(n.args[0])[0]
        plain = f"_lse_abs([{', '.join(terms)}], [{', '.join('1.0' for _ in terms)}])"
        lmax = f"numpy.abs({terms[0]})"
        for t in terms[1:]:
            lmax = f"numpy.maximum({lmax}, numpy.abs({t}))"
        parts.append(f"numpy.abs({em.value(coeff)}) * 2.220446049250313e-16 * (8.0 + 4.0 * ({lmax}))"
                     f" * numpy.exp(({plain}) - ({signed}))")
    return " + ".join(parts)


# ------------------------------------------------------------------------------------------------
# The generated module
# ------------------------------------------------------------------------------------------------
_HELPERS = '''
def _z(like):
    """Zeros of the shape of ``like``: broadcasts constants (0 * alpha would be NaN at alpha = inf)."""
    return numpy.zeros(numpy.shape(like))

_BLOCK = 1 << 16

def _whole(fn, args, out):
    """fn(*args), broadcast into ``out``, in one call."""
    out[...] = fn(*args)
    return out

def _blockwise(fn, args, out):
    """fn(*args), broadcast into ``out``, evaluated in blocks of about _BLOCK elements along the first
    axis. Every temporary then stays in cache instead of being allocated (and page-faulted) at full
    size; this halves the time on a 1000 x 1000 grid. Inputs keep their own shapes within a block."""
    shape = out.shape
    if len(shape) == 0 or shape[0] == 1 or out.size <= 2 * _BLOCK:
        out[...] = fn(*args)
        return out
    args = [numpy.reshape(a, (1,) * (len(shape) - numpy.ndim(a)) + numpy.shape(a)) for a in args]
    step = max(1, (_BLOCK * shape[0]) // out.size)
    for i in range(0, shape[0], step):
        out[i:i + step] = fn(*(a[i:i + step] if a.shape[0] > 1 else a for a in args))
    return out

def _scaled_sum(logs, signs):
    """(m, t) with sum_i s_i exp(l_i) = t exp(m) and m the largest l_i: nothing overflows. Inputs keep
    their own shapes; each term costs one exp and one in-place add on the broadcast shape."""
    if len(logs) > 2:
        # Terms at small shapes (order-only, parameter-only, constants) are summed first at their own
        # broadcast shape, as one term t exp(m): on a grid the full shape then pays for fewer exps.
        size = max(numpy.size(l) for l in logs)
        small = [i for i, l in enumerate(logs) if 4 * numpy.size(l) <= size]
        if 2 <= len(small) < len(logs) and 4 * numpy.size(numpy.broadcast(*[logs[i] for i in small])) <= size:
            gm, gt = _scaled_sum([logs[i] for i in small], [signs[i] for i in small])
            logs = [gm] + [l for i, l in enumerate(logs) if i not in small]
            signs = [gt] + [s for i, s in enumerate(signs) if i not in small]
    m = numpy.asarray(logs[0], dtype=float)
    for l in logs[1:]:
        m = numpy.maximum(m, l)
    finite = numpy.isfinite(m)
    if not finite.all():
        m = numpy.where(finite, m, 0.0)
    # Each step writes into the fresh array of the step before: allocating (and page-faulting) a new
    # temporary per operation costs more than the exp itself.
    total = None
    for l, s in zip(logs, signs):
        t = numpy.subtract(l, m)  # a fresh array (or a numpy scalar for 0-d inputs)
        owned = isinstance(t, numpy.ndarray) and t.ndim > 0
        t = numpy.exp(t, out=t) if owned else numpy.exp(t)
        if not isinstance(s, float):
            if owned and t.shape == numpy.broadcast_shapes(t.shape, numpy.shape(s)):
                numpy.multiply(t, s, out=t)
            else:
                t = s * t
        elif s < 0:
            t = numpy.negative(t, out=t) if owned else -t
        if total is None:
            total = t
        elif isinstance(total, numpy.ndarray) and total.shape == numpy.broadcast_shapes(total.shape, numpy.shape(t)):
            numpy.add(total, t, out=total)
        else:
            total = total + t
    return m, total


def _lse_abs(logs, signs):
    """log|sum_i s_i exp(l_i)|, scaled by the largest l_i (no overflow)."""
    m, total = _scaled_sum(logs, signs)
    if isinstance(total, numpy.ndarray) and total.ndim > 0:  # total is a fresh array: reuse it
        numpy.abs(total, out=total)
        numpy.log(total, out=total)
        if total.shape == numpy.broadcast_shapes(total.shape, numpy.shape(m)):
            return numpy.add(total, m, out=total)
        return total + m
    return m + numpy.log(numpy.abs(total))


def _lse_sign(logs, signs):
    """The sign of sum_i s_i exp(l_i)."""
    return numpy.sign(_scaled_sum(logs, signs)[1])


# -- double-double arithmetic (pairs hi + lo, Dekker 1971): a singular factor's exact float value ------
def _dd(a):
    return (a, 0.0 * a)


def _dd_split(a):
    c = 134217729.0 * a
    hi = c - (c - a)
    return hi, a - hi


def _dd_two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _dd_mul(x, y):
    p = x[0] * y[0]
    ah, al = _dd_split(x[0])
    bh, bl = _dd_split(y[0])
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return _dd_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def _dd_add(x, y):
    s, e = _dd_two_sum(x[0], y[0])
    return _dd_two_sum(s, e + (x[1] + y[1]))


def _dd_value(x):
    """hi + lo rounded; where the splitting overflowed (|a| > 1e300) the plain sum hi."""
    v = x[0] + x[1]
    return numpy.where(numpy.isfinite(v), v, x[0]) if numpy.ndim(v) else (v if numpy.isfinite(v) else x[0])


def _series(coeffs, v):
    """Horner sum of the Taylor series and an estimate of its truncation error."""
    value = numpy.zeros_like(v)
    for c in reversed(coeffs):
        value = value * v + c
    n = len(coeffs)
    # the next terms extrapolated geometrically from the last two pairs of terms (pairs, because
    # odd or even coefficients may vanish); a series that is not decreasing is never used
    last = numpy.abs(coeffs[-1] * v ** (n - 1)) + numpy.abs(coeffs[-2] * v ** (n - 2))
    prev = numpy.abs(coeffs[-3] * v ** (n - 3)) + numpy.abs(coeffs[-4] * v ** (n - 4))
    ratio = numpy.where(prev > 0, last / numpy.where(prev > 0, prev, 1.0), 0.0)
    tail = numpy.where((last <= prev) | (last == 0), last * ratio / numpy.maximum(1.0 - ratio, 1e-300), numpy.inf)
    return value, tail


# -- truncated Taylor series in tau, coefficients along axis 0 (orders 0..N-1) ---------------------
def _t_const(c, like):
    out = numpy.zeros_like(like)
    out[0] = c
    return out


# The recurrences below are vectorised over the coefficient axis: one numpy operation per order k
# (a dot product over j) instead of one per (j, k) pair, which is what made series slow.
def _t_dot(x, y):
    """sum_j x[j] * y[j] over the leading (coefficient) axis."""
    return (x * y).sum(axis=0)


def _t_mul(a, b):
    n = a.shape[0]
    out = numpy.zeros_like(a * b)
    for j in range(n):
        out[j:] += a[j] * b[:n - j]
    return out


def _t_div(a, b):
    out = numpy.zeros_like(a * b)
    out[0] = a[0] / b[0]
    for k in range(1, out.shape[0]):
        out[k] = (a[k] - _t_dot(b[1:k + 1], out[k - 1::-1])) / b[0]
    return out


def _t_weights(a):
    """j * a[j] along the coefficient axis."""
    return numpy.arange(a.shape[0]).reshape((-1,) + (1,) * (a.ndim - 1)) * a


def _t_exp(a):
    out = numpy.zeros_like(a)
    out[0] = numpy.exp(a[0])
    ja = _t_weights(a)
    for k in range(1, a.shape[0]):
        out[k] = _t_dot(ja[1:k + 1], out[k - 1::-1]) / k
    return out


def _t_log(a):
    """log|a| as a series (a[0] != 0)."""
    out = numpy.zeros_like(a)
    out[0] = numpy.log(numpy.abs(a[0]))
    for k in range(1, a.shape[0]):
        # sum_{j=1}^{k-1} j out[j] a[k-j]
        inner = _t_dot(_t_weights(out[:k])[1:], a[k - 1:0:-1]) if k > 1 else 0.0
        out[k] = (a[k] - inner / k) / a[0]
    return out


def _t_pow(a, c):
    """a**c for a constant exponent c (a[0] > 0)."""
    out = numpy.zeros_like(a)
    out[0] = a[0] ** c
    ja = _t_weights(a)
    for k in range(1, a.shape[0]):
        # sum_{j=1}^{k} ((c + 1) j - k) a[j] out[k-j]
        rev = out[k - 1::-1]
        out[k] = ((c + 1) * _t_dot(ja[1:k + 1], rev) - k * _t_dot(a[1:k + 1], rev)) / (k * a[0])
    return out


def _t_lse(logs, plain):
    """log|sum_i exp(L_i) + sum_j P_j| for series L_i (in log space) and P_j (plain, zero at tau = 0).

    Scaled by the largest constant term, so exp((alpha-1)/b) never overflows."""
    m = logs[0][0]
    for l in logs[1:]:
        m = numpy.maximum(m, l[0])
    total = sum(_t_exp(l - _t_const(m, l)) for l in logs)
    for p in plain:
        total = total + p * numpy.exp(-m)
    out = _t_log(total)
    out[0] = out[0] + m
    return out
'''


def _doc_text(text: str) -> str:
    """``text`` made safe inside the generated module's docstrings and comments.

    Labels, parameter meanings and symbol names are user text; written raw, a label containing
    triple quotes would end the docstring and the rest would run when the module is executed. Line
    breaks and other unprintable characters become spaces (a comment then cannot end early), and
    backslashes and quotes are escaped (inside a docstring they then stay characters).
    """
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'")


def _identifier(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    # every name the generated module uses internally starts with "_" (or is numpy/alpha), so a
    # parameter named m, s1 or v cannot be captured by a local of the same name
    if not ident or ident[0].isdigit() or ident[0] == "_" or keyword.iskeyword(ident) or ident in ("numpy", "alpha"):
        ident = f"p_{ident}"
    return ident


def _branches(expr: sp.Expr) -> tuple[str, list[sp.Expr]]:
    if isinstance(expr, (sp.Max, sp.Min)):
        return ("numpy.maximum" if isinstance(expr, sp.Max) else "numpy.minimum"), list(expr.args)
    return "", [expr]


def _check_points(params) -> list[dict]:
    """Orders on both sides of 1 and of 1/2, at the parameters' typical values."""
    typical = [{p.symbol: sp.nsimplify(v) for p, v in zip(params, values)}
               for values in zip(*(p.typical_values(2) for p in params))] or [{}]
    return [{ALPHA: a, **t} for a in (sp.Rational(1, 3), sp.Rational(3, 4), sp.Rational(5, 2), 7) for t in typical]


def _cache_path(key_text: str):
    from ..derive.cache import cache_dir, cache_enabled

    if not cache_enabled():
        return None
    from ..derive.cache import source_fingerprint
    from ..derive.result import library_versions

    # the generator's own source is part of the key: a changed generator never serves stale code
    generator = source_fingerprint(__file__)
    key = hashlib.sha256((key_text + repr(sorted(library_versions().items())) + generator).encode()).hexdigest()
    return cache_dir() / f"codegen-{key}.py"


def generate_source(result: DivergenceResult, name: str | None = None, parameters: Sequence[Parameter] | None = None,
                    *, cache: bool = True) -> str:
    """Python source (importing only numpy) of a vectorised, stable float function for ``result``.

    The function is ``name(alpha, <param>=..., ...)``; arguments broadcast with numpy rules. See the
    module docstring for the stabilisations. Raises :class:`CodegenError` if the result has no closed form.
    """
    if not isinstance(result, DivergenceResult):
        raise TypeError(f"result: expected a DivergenceResult, got {type(result).__name__}")
    if result.expr is None or result.status not in (Status.CLOSED_FORM, Status.BOUND):
        raise CodegenError(
            f"{result.label} has no closed form (status {result.status}: {result.reason}); "
            "use result.evaluate() or rdpsym.numeric instead"
        )
    params = _parameters_for(result, parameters)
    mech = dict(result.provenance.inputs).get("mechanism")
    name = _identifier(name or (f"rdp_{mech}" if mech else "renyi_divergence"))
    key_text = "\n".join([str(_FORMAT), name, sp.srepr(result.expr), sp.srepr(result.conditions), sp.srepr(result.kl),
                          sp.srepr(result.max_divergence), repr([(sp.srepr(p.alpha), sp.srepr(p.value)) for p in result.exceptional_points]),
                          repr([(p.name, sp.srepr(p.symbol), sp.srepr(p.domain)) for p in params]), str(result.status)])
    path = _cache_path(key_text) if cache else None
    if path is not None and path.is_file():
        return path.read_text()
    source = _generate(result, name, params)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as fh:
                fh.write(source)
            os.replace(fh.name, path)
        except OSError:
            pass
    return source


def _generate(result: DivergenceResult, name: str, params: tuple[Parameter, ...]) -> str:
    args = [_identifier(p.name) for p in params]
    names = {ALPHA: "alpha", **{p.symbol: a for p, a in zip(params, args)}}
    em = _Emitter(names)
    arglist = ", ".join(["alpha", *args])
    lines = ['"""Generated by rdpsym from a derived closed form; only numpy is needed."""', "", "import numpy", _HELPERS]

    # one function per piece, called on the subset of points it serves
    factor_symbols: dict = {}  # placeholder -> its double-double function (see _Factor)

    def prelude(expr) -> list[str]:
        return [f"    {em.names[f]} = {factor_symbols[f]}({arglist})" for f in sorted(expr.free_symbols & set(factor_symbols), key=str)]

    def fn(fname: str, expr: sp.Expr) -> str:
        lines.append(f"def {fname}({arglist}):")
        # an expression in alpha broadcasts by itself; a constant needs alpha's shape
        pad = "" if ALPHA in expr.free_symbols or expr.free_symbols & set(factor_symbols) else " + _z(alpha)"
        lines.extend(prelude(expr))
        lines.append(f"    return {em.value(expr)}{pad}")
        lines.append("")
        return fname

    def horner(c: sp.Expr) -> sp.Expr:
        """Polynomials in alpha in Horner form: fewer operations than powers (speed), same accuracy."""
        def is_poly(e):
            try:
                return e.is_Add and e.has(ALPHA) and e.is_polynomial(ALPHA) and sp.degree(e, ALPHA) >= 2
            except sp.PolynomialError:
                return False
        return c.replace(is_poly, lambda e: sp.horner(e, wrt=ALPHA))

    def emit_series(fname: str, s: Series) -> str:
        s = Series(s.where, s.variable, tuple(horner(c) for c in s.coeffs))
        lines.append(f"def {fname}({arglist}):")
        lines.append(f"    # Taylor series, {_doc_text(s.where)}")
        lines.append(f"    _v = {em.value(s.variable)} + _z(alpha)")
        coeffs = ", ".join(f"{em.value(c)} + _z(_v)" for c in s.coeffs)
        lines.append(f"    return _series([{coeffs}], _v)")
        lines.append("")
        nonzero = [k for k, c in enumerate(s.coeffs) if c != 0]
        n = len(s.coeffs)
        if nonzero and n >= 4:
            # a cheap screen (leading and last two terms only) before the full series
            k = nonzero[0]
            # In logs, |c_j v^j| <= 5e-9 |c_k v^k| is log|v| <= (log(5e-9) - log|c_j/c_k|) / (j - k) for
            # j > k: a threshold on log|v| computed at the coefficients' own shape (an order-only
            # column) and one comparison with log|v| (a parameter-only row) on the grid.
            lines.append(f"def {fname}_pre({arglist}):")
            lines.append(f"    _lv = numpy.log(numpy.abs({em.value(s.variable)}))")
            lines.append(f"    _lead = numpy.log(numpy.abs({em.value(s.coeffs[k])}))")
            lines.append("    _top = numpy.where(numpy.isfinite(_lead), numpy.inf, -numpy.inf)")
            for j in (n - 1, n - 2):
                ratio = f"numpy.log(numpy.abs({em.value(s.coeffs[j])})) - _lead"
                if j > k:
                    lines.append(f"    _top = numpy.minimum(_top, ({math.log(5e-9)!r} - ({ratio})) / {float(j - k)!r})")
                else:  # j == k: the screen asks |c_k| <= 5e-9 |c_k|, never true
                    lines.append("    _top = numpy.minimum(_top, -numpy.inf)")
            lines.append("    return _lv < _top  # strict: v = 0 (log = -inf) passes unless the lead is not finite")
            lines.append("")
            lines.append(f"{fname}.pre = {fname}_pre")
            lines.append("")
        return fname

    combine, branches = _branches(result.expr)
    checks = _check_points(params)
    originals = branches
    branches = [evaluation_form(br, checks) for br in branches]
    # singular orders that depend on the parameters (see _Factor): each factor in double-double
    factors = singular_factors(result, originals, params)
    for j, f in enumerate(factors):
        em.names[f.symbol] = f"_f{j}"
        factor_symbols[f.symbol] = f"_dd_f{j}"
        lines.append(f"def _dd_f{j}({arglist}):")
        lines.append(f"    # {_doc_text(sp.sstr(f.poly))} (zero at alpha = {_doc_text(sp.sstr(f.root))}), in double-double")
        lines.append(f"    return {_dd_code(f.poly, em)}")
        lines.append("")
    branch_code = []
    for i, br in enumerate(branches):
        direct_form = evaluation_form(originals[i], checks, shift=False)
        direct = fn(f"_direct_{i}", _substitute_factors(direct_form, factors))
        moving = []
        for j, f in enumerate(factors):
            if not f.removable:
                continue
            lines.append(f"def _rel_{i}_{j}({arglist}):")
            lines.append(f"    return numpy.abs(_dd_f{j}({arglist})) / ({_abs_scale_code(f.poly, em)})")
            lines.append("")
            series_name = "None"
            try:
                te = _CentredTaylor(em, f, SERIES_TERMS)
                top = te.series(br)
                keep = SERIES_TERMS - te.lost
                if keep < 4 or sp.simplify(te._lt(top)) != 0:
                    raise CodegenError("no series around the parameter-dependent order")
                series_name = f"_series_{i}_m{j}"
                lines.append(f"def {series_name}({arglist}):")
                lines.append(f"    # Taylor series around alpha = {_doc_text(sp.sstr(f.root))} by Taylor-mode arithmetic")
                lines.append(f"    _one = numpy.zeros(({SERIES_TERMS},) + alpha.shape)")
                lines.append("    _unit = numpy.zeros_like(_one)")
                lines.append("    _unit[1] = 1.0")
                lines.extend(te.lines)
                lines.append(f"    return _series(list({top}[:{keep}]), alpha - ({em.value(f.root)}))")
                lines.append("")
            except CodegenError:
                te = _CentredTaylor(em, f, SERIES_TERMS)
            cfe = _cancellation_code(direct_form, f, em, te._vanishes)
            lines.append(f"def _cfe_{i}_{j}({arglist}):")
            lines.append("    # estimated absolute error of the closed form (cancellation next to the order)")
            lines.append(f"    return {cfe if cfe is not None else 'numpy.inf'} + _z(alpha)")
            lines.append("")
            moving.append(f"(_rel_{i}_{j}, {series_name}, _cfe_{i}_{j})")
        bounds, points = series_expansions(result, br, params)
        boundary_names = [f"({emit_series(f'_series_{i}_b{j}', s)}, None)" for j, s in enumerate(bounds)]
        point_names = [f"({emit_series(f'_series_{i}_e{j}', s)}, {em.number(ALPHA - s.variable)})"
                       for j, s in enumerate(points)]
        near_one = []
        if _singular_at(br, sp.Integer(1)):
            try:
                te = _TaylorEmitter(em, sp.Integer(1), SERIES_TERMS)
                top = te.series(br)
                # a division by (alpha - 1)**m shifts the coefficients down and pads the top m with
                # zeros: those are not coefficients, and the truncation estimate must not read them
                keep = SERIES_TERMS - te.lost
                if keep < 4:
                    raise CodegenError("too few Taylor terms left around alpha = 1")
                lines.append(f"def _series_{i}_one({arglist}):")
                lines.append("    # Taylor series around alpha = 1 by Taylor-mode arithmetic (starts at the KL divergence)")
                lines.append(f"    _one = numpy.zeros(({SERIES_TERMS},) + alpha.shape)")
                lines.append("    _unit = numpy.zeros_like(_one)")
                lines.append("    _unit[1] = 1.0")
                lines.extend(te.lines)
                lines.append(f"    return _series(list({top}[:{keep}]), alpha - 1.0)")
                lines.append("")
                near_one = [f"(_series_{i}_one, 1.0)"]
            except CodegenError:
                near_one = []
        # removable singular orders of this branch: (centre, the exact order's function or None, whether
        # a series serves it); the values at the centre are the result's, so they only apply to a
        # single branch
        centres = []
        if _singular_at(br, sp.Integer(1)):
            at_one = "_order_one" if len(branches) == 1 and result.kl is not None else "None"
            centres.append(f"(1.0, {at_one}, {bool(near_one)})")
        for k, ep in enumerate(result.exceptional_points):
            a0 = float(ep.alpha)
            served = any(sp.simplify(ALPHA - s.variable - ep.alpha) == 0 for s in points)
            at_a0 = f"_exceptional_{k}" if len(branches) == 1 else "None"
            centres.append(f"({a0!r}, {at_a0}, {served})")
        # cancellation-free boundary series first, then the expansions in alpha
        branch_code.append((direct, boundary_names + near_one + point_names, boundary_names, centres, moving))

    # The branch evaluator: series where accurate, the closed form elsewhere. Inputs keep their own
    # shapes (numpy broadcasts lazily), so a grid of orders x parameter values evaluates each
    # order-only or parameter-only subexpression once per row or column, not once per cell. Every
    # local name starts with "_": parameter names never do (see _identifier), so none is captured.
    lines.append(f"def _branch({arglist}, _direct, _expansions, _centres=(), _moving=(), _notes=None):")
    lines.append(f"    _shape = numpy.broadcast_shapes({', '.join(f'numpy.shape({a})' for a in ['alpha', *args])})")
    lines.append("    if _shape == ():  # boolean masks below need an axis")
    lines.append(f"        return _branch(*(numpy.reshape(_a, (1,)) for _a in ({arglist},)), _direct, _expansions, _centres, _moving, _notes)[0]")
    lines.append("    if not _expansions and not _centres and not _moving:")
    lines.append(f"        return numpy.broadcast_to(_direct({arglist}), _shape)")
    # The closed form everywhere first (lazy broadcasting, no gathers), then series values overwrite
    # it where they are accurate: the series serve few points, so gathering the rest would cost more.
    lines.append(f"    _out = _direct({arglist})")
    lines.append("    if not (isinstance(_out, numpy.ndarray) and _out.shape == _shape and _out.dtype == float")
    lines.append(f"            and not any(numpy.may_share_memory(_out, _a) for _a in ({arglist},))):")
    lines.append("        _out = numpy.array(numpy.broadcast_to(_out, _shape), dtype=float)  # a writable copy")
    lines.append("    _todo = numpy.ones(_shape, dtype=bool)")
    lines.append("    for _s, _center in _expansions:")
    lines.append("        # expansions in alpha are only tried close to their centre")
    lines.append("        if _center is None:")
    lines.append("            _near = _todo")
    lines.append("        else:")
    lines.append("            _window = numpy.abs(alpha - _center) < 0.25  # at alpha's own shape: cheap")
    lines.append("            if not _window.any():")
    lines.append("                continue")
    lines.append("            _near = _todo & _window")
    lines.append("        if not _near.any():")
    lines.append("            continue")
    lines.append("        _pre = getattr(_s, 'pre', None)")
    lines.append("        if _pre is not None and _center is None:")
    lines.append(f"            _near = _near & _pre({arglist})  # a cheap screen, at the inputs' own shapes")
    lines.append("        elif _pre is not None:")
    lines.append(f"            _keep = _pre(*(numpy.broadcast_to(_a, _shape)[_near] for _a in ({arglist},)))")
    lines.append("            _near = _near.copy()")
    lines.append("            _near[_near] = _keep")
    lines.append("        if not _near.any():")
    lines.append("            continue")
    lines.append(f"        _sub = tuple(numpy.broadcast_to(_a, _shape)[_near] for _a in ({arglist},))")
    lines.append("        _value, _tail = _s(*_sub)")
    lines.append(f"        _ok = numpy.isfinite(_value) & (_tail <= {SERIES_TOLERANCE!r} * numpy.abs(_value))")
    lines.append("        if _center is not None:")
    lines.append("            # Taylor coefficients computed in floats can be rounding noise (large parameters");
    lines.append("            # ratios), and noise can pass the truncation test: a series value must also agree")
    lines.append("            # with the closed form within the closed form's cancellation error, ~1e-12/|alpha - c|")
    lines.append("            _d = _out[_near]")
    lines.append("            _ok &= numpy.abs(_value - _d) <= (1e-3 + 1e-12 / numpy.abs(_sub[0] - _center)) * numpy.abs(_d)")
    lines.append("        _idx = numpy.flatnonzero(_near)[_ok]")
    lines.append("        _out.flat[_idx] = _value[_ok]")
    lines.append("        _todo.flat[_idx] = False")
    lines.append("    for _c, _at_c, _guarded in _centres:")
    lines.append("        # next to a removable singular point the closed form is 0/0: where no series was accepted")
    lines.append("        # it must at least agree with the value at the point itself, and with no series at")
    lines.append("        # all it is not used closer than 1e-4 (fail closed: raise, never a wrong number)")
    lines.append("        _close = _todo & (numpy.abs(alpha - _c) < (1e-3 if _guarded else 1e-4))")
    lines.append("        if not _close.any():")
    lines.append("            continue")
    lines.append("        if not _guarded:")
    lines.append("            raise ArithmeticError(f'no stable float code this close to alpha = {_c} (the closed form cancels and '")
    lines.append("                                  'no series could be built); use the exact result instead')")
    lines.append(f"        _sub = tuple(numpy.broadcast_to(_a, _shape)[_close] for _a in ({arglist},))")
    lines.append("        if _at_c is None:")
    lines.append("            continue")
    lines.append("        _ref = numpy.broadcast_to(_at_c(*_sub), _sub[0].shape)")
    lines.append("        if not numpy.all(numpy.abs(_out[_close] - _ref) <= 1e-2 * numpy.abs(_ref) + 1e-300):")
    lines.append("            raise ArithmeticError(f'the float code cancels next to alpha = {_c} and no series converged '")
    lines.append("                                  'there; use the exact result instead')")
    lines.append("    for _rel, _s, _cfe in _moving:")
    lines.append("        # next to an order that depends on the parameters (a root of a factor of the closed form):")
    lines.append("        # the series around it where it converges, else the closed form where its estimated")
    lines.append("        # cancellation error is small, else NaN (counted in _notes: fail closed, never a wrong number)")
    lines.append(f"        _near = _todo & (_rel({arglist}) < {MOVING_WINDOW!r})")
    lines.append("        if not _near.any():")
    lines.append("            continue")
    lines.append(f"        _sub = tuple(numpy.broadcast_to(_a, _shape)[_near] for _a in ({arglist},))")
    lines.append("        _idx = numpy.flatnonzero(_near)")
    lines.append("        _d = _out.flat[_idx]")
    lines.append("        _err = _cfe(*_sub)")
    lines.append("        _good = numpy.zeros(_d.shape, dtype=bool)")
    lines.append("        if _s is not None:")
    lines.append("            _value, _tail = _s(*_sub)")
    lines.append(f"            _good = numpy.isfinite(_value) & (_tail <= {SERIES_TOLERANCE!r} * numpy.abs(_value))")
    lines.append("            # rounding-noise coefficients can pass the truncation test: the series must also agree")
    lines.append("            # with the closed form within the closed form's own error (where that is a number)")
    lines.append("            _good &= ~numpy.isfinite(_d) | (numpy.abs(_value - _d) <= 1e-3 * numpy.abs(_d) + 10.0 * _err)")
    lines.append("            _out.flat[_idx[_good]] = _value[_good]")
    lines.append(f"        _bad = ~_good & ~(numpy.isfinite(_d) & (_err <= {MOVING_TRUST!r} * numpy.abs(_d)))")
    lines.append("        if _bad.any():")
    lines.append("            _out.flat[_idx[_bad]] = numpy.nan")
    lines.append("            if _notes is not None:")
    lines.append("                _notes.append(int(_bad.sum()))")
    lines.append("        _todo.flat[_idx] = False")
    lines.append("    return _out")
    lines.append("")

    def special(fname, expr):
        if expr is None:
            lines.append(f"def {fname}({arglist}):")
            lines.append("    raise ArithmeticError('this order was not derived')")
            lines.append("")
            return fname
        return fn(fname, expr)

    special("_order_one", result.kl)
    special("_order_inf", result.max_divergence)
    exceptional = [(float(p.alpha), fn(f"_exceptional_{k}", p.value)) for k, p in enumerate(result.exceptional_points)]
    conditions = _substitute_factors(result.conditions, factors) if factors else result.conditions
    lines.append(f"def _conditions({arglist}):")
    lines.extend(prelude(conditions))
    lines.append(f"    return numpy.asarray({em.condition(conditions)})")
    lines.append("")

    # parameter validation
    checks = []
    for p, a in zip(params, args):
        # a symbol without assumptions: with p.symbol (positive) sympy would reduce 0 < b to True
        free = sp.Symbol(f"_{a}")
        em.names[free] = a
        rel = p.domain.as_relational(free)
        checks.append((a, em.condition(rel), sp.sstr(p.domain)))

    doc_params = "\n".join(f"    {a}: {_doc_text(p.meaning or p.name)}, in {_doc_text(sp.sstr(p.domain))}"
                           for p, a in zip(params, args))
    def combined(kind):
        parts = [kind(d, s, b, c, mv) for d, s, b, c, mv in branch_code]
        value = parts[0]
        for p in parts[1:]:
            value = f"{combine}({value}, {p})"
        return value

    # the general orders of every branch, combined; evaluated block by block
    lines.append(f"def _general({arglist}, _notes=None):")
    lines.append(f"    _sub = ({arglist},)")
    lines.append(f"    return {combined(lambda d, s, b, c, mv: f'_branch(*_sub, {d}, [{chr(44).join(s)}], [{chr(44).join(c)}], [{chr(44).join(mv)}], _notes)')}")
    lines.append("")
    lines.append(f"def {name}({arglist}):")
    lines.append(f'    """{_doc_text(result.label)}, vectorised over numpy arrays (broadcasting).')
    lines.append("")
    lines.append("    Closed form (derived by rdpsym, status %s):" % result.status)
    lines.append(f"        {_doc_text(sp.sstr(result.expr))}")
    lines.append("    alpha = 1 gives the KL divergence, alpha = inf the max divergence; +inf where the")
    lines.append("    closed form's finiteness conditions fail.")
    lines.append("")
    lines.append("    alpha: the Renyi order, > 0 (inf allowed)")
    lines.append(doc_params)
    lines.append('    """')
    lines.append(f"    alpha, {', '.join(args)} = (" if args else "    (alpha,) = (")
    lines.append("        " + ", ".join(f"numpy.asarray({a}, dtype=float)" for a in ["alpha", *args]) + ",)")
    lines.append(f"    _shape = numpy.broadcast_shapes({', '.join(f'{a}.shape' for a in ['alpha', *args])})")
    lines.append("    with numpy.errstate(invalid='ignore'):")
    lines.append("        if not numpy.all(alpha > 0):")
    lines.append("            raise ValueError(f'alpha must be > 0 (and not NaN); got {alpha[~(alpha > 0)].ravel()[:3]}')")
    for a, cond, dom in checks:
        lines.append(f"        _ok = {cond.replace(' & (True)', '')}")
        lines.append(f"        if not numpy.all(_ok):")
        # the domain's text goes in as a Python literal (repr), never into the f-string itself
        lines.append(f"            raise ValueError('{a} must lie in ' + {dom!r} + f'; got {{numpy.broadcast_to({a}, _ok.shape)[~numpy.asarray(_ok)].ravel()[:3]}}')")
    lines.append("    _out = numpy.full(_shape, numpy.nan)")
    lines.append(f"    _full = lambda _m: tuple(numpy.broadcast_to(_a, _shape)[_m] for _a in ({arglist},))  # noqa: E731")
    lines.append("    with numpy.errstate(all='ignore'):")
    lines.append("        _rest = numpy.isfinite(alpha) & (alpha != 1.0)")
    for a0, f in exceptional:
        lines.append(f"        _rest &= alpha != {a0!r}")
    lines.append("        _rest = numpy.broadcast_to(_rest, _shape)")
    # Blocks pay off when a point costs many array operations (series screens, log-sum-exp); a
    # one-line formula such as the Gaussian's is fastest on the whole grid at once.
    heavy = any(series or mv for _, series, _, _, mv in branch_code) or any("_lse_" in line for line in lines[4:])
    blockwise = "_blockwise" if heavy else "_whole"
    guarded = any(mv for *_, mv in branch_code)
    general = "_general"
    if guarded:
        # points next to a parameter-dependent singular order where nothing is accurate are NaN
        lines.append("        _notes = []")
        lines.append("        _gen = lambda *_a: _general(*_a, _notes=_notes)  # noqa: E731")
        general = "_gen"
    lines.append("        if _rest.all():")
    lines.append("            # every order is a general one: no copies, lazy broadcasting")
    lines.append(f"            {blockwise}({general}, ({arglist},), _out)")
    lines.append("        elif _rest.any():")
    lines.append("            _sub = _full(_rest)")
    lines.append(f"            _out[_rest] = {blockwise}({general}, _sub, numpy.empty(_sub[0].shape))")
    # alpha = 1, oo and exceptional orders: their own closed forms, or a boundary series where that
    # closed form cancels (KL of Laplace at large b)
    one = ("_branch(*_sub, _order_one, [%s])" % ", ".join(branch_code[0][2]) if len(branch_code) == 1
           else "_order_one(*_sub)")
    lines.append("        _m = numpy.broadcast_to(alpha == 1.0, _shape)")
    lines.append("        if _m.any():")
    lines.append("            _sub = _full(_m)")
    lines.append(f"            _out[_m] = {one}")
    lines.append("        _m = numpy.broadcast_to(numpy.isinf(alpha), _shape)")
    lines.append("        if _m.any():")
    lines.append("            _out[_m] = _order_inf(*_full(_m))")
    for a0, f in exceptional:
        call = ("_branch(*_sub, %s, [%s])" % (f, ", ".join(branch_code[0][2])) if len(branch_code) == 1
                else f"{f}(*_sub)")
        lines.append(f"        _m = numpy.broadcast_to(alpha == {a0!r}, _shape)")
        lines.append("        if _m.any():")
        lines.append("            _sub = _full(_m)")
        lines.append(f"            _out[_m] = {call}")
    if result.conditions != sp.true:
        # the finiteness conditions are those of the general order's integral: like DivergenceResult.at,
        # they apply to general and exceptional orders, not to the KL (alpha = 1) or D_oo
        lines.append("        _general_orders = numpy.broadcast_to(numpy.isfinite(alpha) & (alpha != 1.0), _shape)")
        lines.append(f"        _out[_general_orders & ~numpy.broadcast_to(_conditions({arglist}), _shape)] = numpy.inf")
    if guarded:
        lines.append("    _failed = int(numpy.isnan(_out).sum())")
        lines.append("    if _failed > sum(_notes):")
        lines.append(f"        raise ArithmeticError('{name}: the float code produced NaN; use the exact result instead')")
        lines.append("    if _failed:")
        lines.append("        warnings.warn(f'" + name + ": {_failed} point(s) next to an order where the closed form is 0/0 '")
        lines.append("                      'and no series converged are NaN (fail closed); use the exact result there',")
        lines.append("                      RuntimeWarning, stacklevel=2)")
    else:
        lines.append("    if numpy.isnan(_out).any():")
        lines.append(f"        raise ArithmeticError('{name}: the float code produced NaN; use the exact result instead')")
    lines.append("    if (_out < 0).any():")
    lines.append("        # a Renyi divergence is >= 0 (Mironov 2017, Sect. III): a negative float is lost digits")
    lines.append(f"        raise ArithmeticError('{name}: the float code produced a negative value; use the exact result instead')")
    lines.append("    return _out[()] if _out.ndim == 0 else _out")
    lines.append("")
    if guarded:
        lines.insert(3, "import warnings")
    return "\n".join(lines)


def to_numpy(result: DivergenceResult, name: str | None = None, parameters: Sequence[Parameter] | None = None,
             *, cache: bool = True) -> Callable:
    """The function whose source is :func:`generate_source` (same text), ready to call.

    The returned function has a ``source`` attribute with its source code.
    """
    source = generate_source(result, name, parameters, cache=cache)
    namespace: dict = {"__name__": "rdpsym_generated"}
    # The source is generated by rdpsym from a sympy tree (never user text), so executing it is safe.
    exec(compile(source, "<rdpsym generated>", "exec"), namespace)  # noqa: S102
    fname = re.search(r"^def (\w+)\(alpha", source[source.rfind("\ndef "):], re.M).group(1)
    f = namespace[fname]
    f.source = source
    return f
