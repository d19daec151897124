"""A running estimate of the rounding error of the closed form's float code (forward error analysis).

Series are expensive (a Taylor-mode series around alpha = 1 costs about a hundred array operations per
point); the closed form is accurate at most points where a series would converge. :class:`_ErrorEmitter`
emits, for an expression, numpy code of an estimate of the absolute error of the code
:class:`~rdpsym.compile.emitter.Emitter` emits for it, by the usual first-order rules (Higham 2002,
*Accuracy and Stability of Numerical Algorithms*, Sect. 3.1): a sum's error is the sum of its terms'
errors plus eps times the sum of their magnitudes; relative errors of factors add; the error of log|S| is
the relative error of S; a log-sum-exp scaled by its largest term (what the emitter writes for a log of
a sum) has the relative error sum_i |t_i| (err_i + eps) / |sum_i t_i|, which is large exactly where the
sum cancels.

The estimate is only ever used to *skip* a series where the closed form is already accurate: an
estimate that is too large costs time (the series is computed as before), never digits.
"""

from __future__ import annotations

import ast

import sympy as sp

from ..numeric.translate import Translator
from ..symbols import alpha as ALPHA
from .emitter import Emitter, fresh_value

__all__ = ["EPS", "ErrorEmitter"]

#: unit roundoff of float64, doubled (one rounding per elementary function call and per operation)
EPS = 2.220446049250313e-16


class ErrorEmitter(Translator):
    """Code of an estimate of the absolute rounding error of ``Emitter.value(e)``.

    A numpy target of the tree translator: ``err`` dispatches ``_err_<Class>``, ``err_log``
    ``_errlog_<Class>``. A node without a rule is never refused: its estimate is infinite (the
    series is then always computed), so an unknown node costs time, never digits.
    """

    def __init__(self, em: Emitter):
        self.em = em
        #: the function body: each value the estimate needs, named once (``_e0 = ...``)
        self.lines: list[str] = []
        self._names: dict[str, str] = {}
        self._trees: dict[str, str] = {}  # ast.dump of a named value's code -> its local

    def name(self, code: str) -> str:
        """A local holding ``code`` (one line per distinct value: readable, and computed once)."""
        if code not in self._names:
            self._names[code] = f"_e{len(self._names)}"
            tree = ast.parse(code, mode="eval")
            self._trees.setdefault(ast.dump(tree.body), self._names[code])
            self.lines.append(f"    {self._names[code]} = {self.reuse(code)}")
        return self._names[code]

    def reuse(self, code: str, whole: bool = False) -> str:
        """``code`` with every subexpression already held by a local replaced by that local: the
        emitter writes each value as one nested expression, so without this the estimate would
        evaluate the whole closed form (its log-sum-exps) once per place it appears. Constants and names
        stay as they are."""
        trees = self._trees

        class _Reuse(ast.NodeTransformer):
            def visit(self, node):
                if isinstance(node, ast.expr) and not isinstance(node, (ast.Constant, ast.Name)):
                    local = trees.get(ast.dump(node))
                    if local is not None:
                        return ast.Name(id=local, ctx=ast.Load())
                return self.generic_visit(node)

        body = ast.parse(code, mode="eval").body
        # a value being named is not replaced by its own local (``whole``: the returned estimate may be)
        body = _Reuse().visit(body) if whole else _Reuse().generic_visit(body)
        for node in ast.walk(body):
            # _lse_ratio overwrites a d it is told is fresh: a local (read elsewhere too) is not
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_lse_ratio" \
                    and len(node.args) > 4 and not fresh_value(node.args[1]):
                node.args[4] = ast.Constant(False)
        return ast.unparse(body)

    def _abs(self, e: sp.Expr) -> str:
        return f"numpy.abs({self.name(self.em.value(e))})"

    def err(self, e: sp.Expr) -> str:
        if e.is_Symbol or e.is_number:
            return "0.0"  # inputs are exact; constants are correctly rounded (below the eps terms)
        return self.dispatch("err", e)

    def _err_log(self, e):
        return self.err_log(e.args[0])

    def _err_exp(self, e):
        return f"{self._abs(e)} * ({self.err(e.args[0])} + {EPS!r})"

    def _err_Add(self, e):
        errs = [self.err(t) for t in e.args]
        if len(e.args) == 2 and errs == ["0.0", "0.0"]:
            # two exact floats of opposite signs within a factor 2 of each other: the difference is exact
            # (Sterbenz's lemma, Higham 2002, Thm. 2.5): 2 p - 1 of randomized response next to p = 1/2
            a, b = (self.name(self.em.value(t)) for t in e.args)
            return self.name(f"numpy.where((({a}) * ({b}) <= 0) & (numpy.abs({a}) <= 2.0 * numpy.abs({b})) "
                             f"& (numpy.abs({b}) <= 2.0 * numpy.abs({a})), 0.0, {EPS!r} * (numpy.abs({a}) + numpy.abs({b})))")
        parts = " + ".join(errs)
        mags = " + ".join(self._abs(t) for t in e.args)
        return self.name(f"{parts} + {EPS!r} * ({mags})")

    def _err_Mul(self, e):
        group, factors = self.em.exponential_factors(e)
        # an exact factor that is 0 (log(lam) at lam = 1) adds no error: 0/0 would make the estimate NaN
        rel = [self._relative(err, f) for f in factors if not f.is_number for err in [self.err(f)] if err != "0.0"]
        if group is not None:
            # exp(log|group|): the log's absolute error is the product's relative error, plus exp's rounding
            rel.append(self.name(f"{self.err_log(group)} + {EPS!r}"))
            factors = [group, *factors]
        # one rounding per multiplication or division, none by a power of two (-1, 2, 1/2: exact)
        exact = sum(1 for f in factors if f.is_Rational and f != 0 and _power_of_two(abs(f)))
        roundings = max(len(factors) - 1 - exact, 0)
        if not rel and not roundings:
            return "0.0"  # a product of exact values by powers of two is exact
        return self.name(f"{self._abs(e)} * ({' + '.join(rel) or '0.0'} + {roundings * EPS!r})")

    def _relative(self, err: str, f: sp.Expr) -> str:
        """``err / |f|``, 0 where ``err`` is 0 (an exact value, 0 included, has no relative error)."""
        err = err if err.isidentifier() else self.name(err)
        return self.name(f"numpy.where({err} == 0.0, 0.0, {err} / {self._abs(f)})")

    def _err_Pow(self, e):
        base, ex = e.base, e.exp
        if ex.is_number:
            return f"{self._abs(e)} * ({abs(float(ex))!r} * {self.err(base)} / {self._abs(base)} + {EPS!r})"
        return f"{self._abs(e)} * ({self.err(ex * sp.log(base))} + {EPS!r})"

    def _err_extremum(self, e):
        out = self.err(e.args[0])
        for a in e.args[1:]:
            out = f"numpy.maximum({out}, {self.err(a)})"
        return out

    _err_Max = _err_Min = _err_extremum

    def _err_Abs(self, e):
        return self.err(e.args[0])

    def _err_Piecewise(self, e):
        # the error of the piece the point takes (a form per regime, forms._log_near_one); the
        # conditions are the emitter's, so each point reads the estimate of the value it got
        conds = ", ".join(self.name(self.em.condition(c)) for _, c in e.args)
        errs = ", ".join(self.err(v) for v, _ in e.args)
        return self.name(f"numpy.select([{conds}], [{errs}], numpy.inf)")

    # Hyperbolic functions, value x -> f(x): |f'(x)| err(x) + eps |f(x)| (numpy's are within an ulp or two)
    def _unary(self, e, slope: str) -> str:
        x = self.name(self.em.value(e.args[0]))
        return self.name(f"numpy.abs({slope.format(x=x)}) * ({self.err(e.args[0])}) + {2 * EPS!r} * {self._abs(e)}")

    def _err_tanh(self, e):
        return self._unary(e, "1.0 - numpy.tanh({x})**2")

    def _err_sinh(self, e):
        return self._unary(e, "numpy.cosh({x})")

    def _err_cosh(self, e):
        return self._unary(e, "numpy.sinh({x})")

    def _err_Basic(self, e):
        return f"numpy.inf + 0.0 * {self._abs(e)}"  # unknown node: never trusted without its series

    def err_log(self, x: sp.Expr) -> str:
        """Error of the emitter's log|x| (it never forms x when x is a product, power or exponential)."""
        if x.is_number:
            return "0.0"
        return self.dispatch("errlog", x)

    def _errlog_Symbol(self, x):
        return f"{EPS!r} * numpy.abs(numpy.log({self.em.value(x)}))"

    def _errlog_exp(self, x):
        return self.err(x.args[0])

    def _errlog_Pow(self, x):
        em = self.em
        base, ex = x.base, x.exp
        lb = em.logabs(base)[0]
        if ex.is_number:
            return f"{abs(float(ex))!r} * ({self.err_log(base)}) + {EPS!r} * numpy.abs({lb})"
        return (f"numpy.abs({em.value(ex)}) * ({self.err_log(base)}) + ({self.err(ex)} + {EPS!r} * numpy.abs({em.value(ex)}))"
                f" * numpy.abs({lb})")

    def _errlog_Mul(self, x):
        em = self.em
        factors = list(x.args)
        parts = []
        tilted = em.tilted_parts(factors)
        if tilted is not None:
            # sum_i c_i log b_i + alpha log1p(X), X = B - 1 simplified (see Emitter._tilted_powers): each
            # product and the log1p to their own size, X to its own error (2p - 1 of randomized response
            # is exact next to p = 1/2), the sum to eps of its terms
            const, x, factors = tilted
            terms = []
            for b, c in const:
                if c == 0:
                    continue
                lb = self.name(em.logabs(b)[0])
                terms.append(self.name(f"({em.value(c)}) * {lb}"))
                parts.append(f"numpy.abs({em.value(c)}) * ({self.err_log(b)}) + ({self.err(c)}) * numpy.abs({lb}) "
                             f"+ {EPS!r} * numpy.abs({terms[-1]})")
            xv = self.name(em.value(x))
            l1p = self.name(f"alpha * numpy.log1p({xv})")
            terms.append(l1p)
            parts.append(f"numpy.abs(alpha) * (({self.err(x)}) / numpy.abs(1.0 + {xv})) + {2 * EPS!r} * numpy.abs({l1p})")
            parts.append(f"{EPS!r} * ({' + '.join(f'numpy.abs({t})' for t in terms)})")
        parts += [self.err_log(f) for f in factors]
        return " + ".join(f"({p})" for p in parts) if parts else "0.0"

    def _errlog_Add(self, x):
        em = self.em
        const = [t for t in x.args if t.is_number]
        terms = [em.logabs(t) for t in x.args]
        if not all(s is None for _, s in terms) and const and const[0] == 1:
            rest = x - 1
            return f"({self.err(rest)}) / numpy.abs({em.value(x)}) + {EPS!r}"
        ratio = em._ratio_form(x, terms)
        if ratio is not None:
            return self._err_ratio(x, terms)
        # log|S| = m + log1p(...) (runtime._lse2 for two terms; log of the scaled sum otherwise)
        logs = [self.name(lt) for lt, _ in terms]
        lx = self.name(em.logabs(x)[0])
        m = logs[0]
        for lt in logs[1:]:
            m = f"numpy.maximum({m}, {lt})"
        m = self.name(m)
        one = EPS if len(terms) == 2 else 2 * EPS
        parts = " + ".join(self.name(f"numpy.exp({lt} - {lx}) * ({self.err_log(t)} + {EPS!r})")
                           for lt, t in zip(logs, x.args))
        return self.name(f"{parts} + {EPS!r} * numpy.abs({m}) + {one!r} * (numpy.exp({m} - {lx}) + numpy.abs({lx} - {m}))")

    # Logarithms of hyperbolic functions (runtime._log_tanh, _log_sinh, _log_cosh): |d log|f| / dx| err(x)
    # plus their own rounding. log|tanh| is a difference of two logs of one sign, each to 3 eps of its
    # size, so 4 eps of the value; log|sinh| = |x| + log(1 - e^(-2|x|)) - log 2 adds eps (|x| + 1);
    # log cosh is ~x^2/2 next to 0 with a few eps of relative error either way.
    def _log_slope(self, x: sp.Expr, slope: str, own: str) -> str:
        v = self.name(self.em.value(x))
        return self.name(f"numpy.abs({slope.format(x=v)}) * ({self.err(x)}) + {own.format(x=v)}")

    def _errlog_tanh(self, x):
        # d/dx log|tanh x| = 2 / sinh(2x); numpy.sinh overflows to inf for |x| > 355: then the slope is 0
        return self._log_slope(x.args[0], "2.0 / numpy.sinh(2.0 * {x})", f"{4 * EPS!r} * numpy.abs(_log_tanh({{x}}))")

    _errlog_coth = _errlog_tanh

    def _errlog_sinh(self, x):
        return self._log_slope(x.args[0], "1.0 / numpy.tanh({x})",
                               f"{4 * EPS!r} * (numpy.abs(_log_sinh({{x}})) + numpy.abs({{x}}) + 1.0)")

    _errlog_csch = _errlog_sinh

    def _errlog_cosh(self, x):
        return self._log_slope(x.args[0], "numpy.tanh({x})", f"{8 * EPS!r} * numpy.abs(_log_cosh({{x}}))")

    _errlog_sech = _errlog_cosh

    def _errlog_Basic(self, x):
        return f"{self.err(x)} / {self._abs(x)} + {EPS!r} * (1.0 + numpy.abs({self.name(self.em.logabs(x)[0])}))"

    def _err_ratio(self, x: sp.Add, terms: list) -> str:
        """Error of runtime._lse_ratio(l1, d, s): l1 + log1p(s e^-d) where d >= 0, and l1 - d + log1p(s e^d)
        where d < 0 (d = log|t1/t2| from the ratio's own form). To first order the error is
        err(l1) + w2 err(r) in the first regime and err(l1) + (1 + w1) err(r) in the second, w_i = |t_i|/|S|
        (the derivative of log1p), plus one rounding of the log1p, the exp and the sum. Terms added to
        l1 by the emitter (``Emitter._ratio_form``'s shift) are rounded there instead of after: the
        enclosing sum's estimate counts eps times their magnitudes either way."""
        em = self.em
        t1, t2 = x.args
        q = sp.powsimp(sp.powsimp(t1 / t2, combine="exp"), combine="all")
        l1, l2 = (self.name(lt) for lt, _ in terms)
        lx = self.name(em.logabs(x)[0])
        w1, w2 = self.name(f"numpy.exp({l1} - {lx})"), self.name(f"numpy.exp({l2} - {lx})")
        ed = self.name(f"{self.err_log(q)} + {EPS!r} * numpy.abs({self.name(em.logabs(q)[0])})")
        weight = f"numpy.where({l1} >= {l2}, {w2}, 1.0 + {w1})"
        return self.name(f"({self.err_log(t1)}) + {ed} * ({weight} + {EPS!r}) + {2 * EPS!r} * (numpy.abs({lx}) + {w2} + {w1})")


def _power_of_two(q: sp.Rational) -> bool:
    """Whether the positive rational ``q`` is 2^k for an integer k."""
    p, r = int(q.p), int(q.q)
    return (p & (p - 1)) == 0 and (r & (r - 1)) == 0


def has_alpha(e: sp.Expr) -> bool:
    return e.has(ALPHA)
