"""Taylor-mode arithmetic emitted as numpy code: series in alpha computed at run time.

Around alpha = 1 (the form ``log(...)/(alpha-1)``; the series starts at the KL divergence) and around
the parameter-dependent removable orders (:mod:`rdpsym.compile.factors`) the closed form is 0/0; the
series there are not expanded symbolically but evaluated with the recurrences of
:mod:`rdpsym.compile.runtime` (``_t_mul``, ``_t_div``, ``_t_exp``, ``_t_log``, ``_t_pow``, ``_t_lse``).
"""

from __future__ import annotations

import sympy as sp

from ..numeric.translate import Translator
from ..symbols import alpha as ALPHA
from .emitter import CodegenError, Emitter


class TaylorEmitter(Translator):
    """Emit numpy code that evaluates an expression as a truncated Taylor series in alpha around a0.

    Every node becomes an array of coefficients (orders 0..N-1) computed at run time with the usual
    recurrences for products, quotients, exp, log and powers (Taylor-mode arithmetic), so nothing is
    expanded symbolically. Logarithms of sums are taken in log space (``_t_lse``). A factor
    ``(alpha - a0)**-1`` is applied as a shift of the coefficients; the constant term it removes is
    zero by the limit identity the engine checked (e.g. D_1 = lim D_alpha).

    A numpy target of the tree translator: ``series`` dispatches ``_series_<Class>``, ``logabs``
    ``_logabs_<Class>``; a node with no rule is refused (:class:`CodegenError`): no series there.
    """

    error = CodegenError
    target = "Taylor-mode code"

    def __init__(self, emitter: Emitter, a0: sp.Expr, terms: int):
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
        return self.dispatch("series", e)

    def refuse(self, e, family: str = "series"):
        raise CodegenError(f"no Taylor-mode code for {type(e).__name__}")

    def _series_Add(self, e):
        parts = [self.series(t) for t in e.args]
        return self._new(" + ".join(parts), sp.Add(*[self._lt(p) for p in parts]))

    def _series_Mul(self, e):
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

    def _series_Pow(self, e):
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

    def _series_exp(self, e):
        return self._new(f"_t_exp({self.series(e.args[0])})")

    def _series_log(self, e):
        return self.logabs(e.args[0])

    # A hyperbolic function of alpha is its exponential form: the rules above then apply
    def _series_hyperbolic(self, e):
        return self.series(e.rewrite(sp.exp))

    _series_tanh = _series_sinh = _series_cosh = _series_coth = _series_sech = _series_csch = _series_hyperbolic

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
        return self.dispatch("logabs", e)

    def _logabs_exp(self, e):
        return self.series(e.args[0])

    def _logabs_Pow(self, e):
        if e.exp.has(ALPHA) or not e.exp.is_number:
            lb = self.logabs(e.base)
            if self._lt(lb) != 0:
                raise CodegenError("a power of a sum that vanishes at the expansion point")
            return self._new(f"_t_mul({self.series(e.exp)}, {lb})")
        lb = self.logabs(e.base)
        return self._new(f"{self.em.number(e.exp)} * {lb}", e.exp * self._lt(lb))

    def _logabs_Mul(self, e):
        parts = [self.logabs(f) for f in e.args]
        return self._new(" + ".join(parts), sp.Add(*[self._lt(p) for p in parts]))

    def _logabs_Add(self, e):
        if self._vanishes(e):
            # e = (alpha - a0) * (e / (alpha - a0)): the plain series of e with its leading (zero)
            # coefficient dropped is the series of e / (alpha - a0); its top coefficient is padding
            parts = [self.series(t) for t in e.args]
            if any(self._lt(p) != 0 for p in parts):
                raise CodegenError("a logarithm inside a sum that vanishes at the expansion point")
            total = self._new(" + ".join(parts))
            self.lost = max(self.lost, 1)
            deflated = self._new(f"numpy.concatenate([{total}[1:], numpy.zeros((1,) + {total}.shape[1:])])")
            return self._new(f"_t_log({deflated})", sp.Integer(1))
        logs, plain = [], []
        for t in e.args:
            # positive terms are combined in log space; the others (e.g. alpha - 1, zero at
            # alpha = 1) are added as they are
            (logs if t.subs(ALPHA, self.a0).is_positive else plain).append(
                self.logabs(t) if t.subs(ALPHA, self.a0).is_positive else self.series(t))
        if not logs:
            raise CodegenError("log of a sum that vanishes at the expansion point")
        return self._new(f"_t_lse([{', '.join(logs)}], [{', '.join(plain)}])")

    def _logabs_hyperbolic(self, e):
        return self.logabs(e.rewrite(sp.exp))

    _logabs_tanh = _logabs_sinh = _logabs_cosh = _logabs_coth = _logabs_sech = _logabs_csch = _logabs_hyperbolic

    def _logabs_Basic(self, e):
        return self._new(f"_t_log({self.series(e)})")
