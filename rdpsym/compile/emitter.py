"""Stable emission of one expression as numpy code (the printer of :mod:`rdpsym.compile`), the numpy
target of the tree translator (:mod:`rdpsym.numeric.translate`).

``log`` of a sum is emitted as a (signed) log-sum-exp over the logarithms of the summands, each taken in
log space (``log(alpha * exp(y)) -> log(alpha) + y``, ``log(p**alpha) -> alpha*log(p)``), so
``exp((alpha-1)/b)`` never overflows (Mironov 2017, Prop. 6 at b = 1e-4, alpha = 1e6);
``log(1 + x)`` becomes ``log1p(x)`` and ``exp(y) - 1`` becomes ``expm1(y)``.
"""

from __future__ import annotations

import ast
import keyword
import re

import sympy as sp

from ..numeric.translate import Translator
from ..symbols import alpha as ALPHA

__all__ = ["CodegenError", "doc_text", "identifier"]


def fresh_value(node: ast.expr) -> bool:
    """Whether the code ``node`` computes a new array (an operation), rather than naming one (an input,
    a local, a constant or an element): only a new array may be overwritten by the code it goes to."""
    return not isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Subscript))


class CodegenError(ValueError):
    """The result cannot be turned into float code (no closed form, or an unsupported expression)."""


def doc_text(text: str) -> str:
    """``text`` made safe inside the generated module's docstrings and comments.

    Labels, parameter meanings and symbol names are user text; written raw, a label containing
    triple quotes would end the docstring and the rest would run when the module is executed. Line
    breaks and other unprintable characters become spaces (a comment then cannot end early), and
    backslashes and quotes are escaped (inside a docstring they then stay characters).
    """
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'")


def identifier(name: str) -> str:
    """The Python name of the argument for the parameter ``name`` in the generated code (and in the
    float curves built on it): non-word characters become ``_``; a name that is empty, starts with a
    digit or ``_``, is a keyword, or is ``numpy``/``alpha`` gets the prefix ``p_``."""
    ident = re.sub(r"\W", "_", name)
    # every name the generated module uses internally starts with "_" (or is numpy/alpha), so a
    # parameter named m, s1 or v cannot be captured by a local of the same name
    if not ident or ident[0].isdigit() or ident[0] == "_" or keyword.iskeyword(ident) or ident in ("numpy", "alpha"):
        ident = f"p_{ident}"
    return ident


class Emitter(Translator):
    """Emit numpy code for an expression; ``logabs`` emits (log|e|, sign) without forming e.

    The numpy target of :class:`~rdpsym.numeric.translate.Translator`: ``value`` (``_translate_<Class>``)
    writes a value, ``condition`` a boolean array, ``logabs`` (``_logabs_<Class>``) the log of a
    magnitude and its sign, ``number`` (``_number_<Class>``) a constant's literal. A constant
    subexpression (no symbol) is one float literal.
    """

    error = CodegenError
    target = "stable float code"

    def __init__(self, names: dict[sp.Symbol, str]):
        self.names = names
        #: the exact value of each inexact constant written, by the text of its magnitude (a literal
        #: standing for two values maps to None): the double-double code reads them (compile.doubled)
        self.constants: dict[str, sp.Expr | None] = {}

    def _float(self, e: sp.Expr, value: float | None = None) -> float:
        """The nearest float of the real constant ``e`` (or ``value``, its float as computed by the
        caller), recorded in :attr:`constants` when inexact."""
        value = float(e) if value is None else value
        exact = abs(sp.Rational(value)) if value == value and abs(value) != float("inf") else None
        if exact is not None and (e.is_Rational and abs(e) == exact):
            return value
        key = repr(abs(value))
        seen = self.constants.get(key, 0)
        if seen == 0:
            self.constants[key] = abs(e)
        elif seen is not None and sp.simplify(seen - abs(e)) != 0:
            self.constants[key] = None
        return value

    def refuse(self, e, family: str = "translate"):
        if family == "condition":
            raise CodegenError(f"no float code for the condition {sp.sstr(e)}")
        raise CodegenError(f"no stable float code for {type(e).__name__}: {sp.sstr(e)}")

    # -- numbers ---------------------------------------------------------------------------------
    def number(self, e: sp.Expr) -> str:
        """A constant's literal (``pi``, ``E``, infinities and integers exactly; others as a float)."""
        return self.dispatch("number", e)

    def _number_Pi(self, e):
        return "numpy.pi"

    def _number_Exp1(self, e):
        return "numpy.e"

    def _number_Infinity(self, e):
        return "numpy.inf"

    def _number_NegativeInfinity(self, e):
        return "(-numpy.inf)"

    def _number_Integer(self, e):
        return f"{int(e)}.0" if abs(int(e)) < 2**53 else repr(self._float(e))

    def _number_Basic(self, e):
        value = self._float(e)
        return repr(value) if value >= 0 else f"({value!r})"

    # a constant in a value: exact literals for these classes, one float for any other real constant
    _constant_Rational = _constant_Pi = _constant_Exp1 = _constant_Infinity = _constant_NegativeInfinity = number

    def _constant_Basic(self, e):
        if e.is_real is False:
            raise CodegenError(f"non-real constant {e}")
        return repr(self._float(e))

    # -- values ----------------------------------------------------------------------------------
    def translate(self, e: sp.Expr) -> str:
        if e.is_number and not e.has(sp.Symbol):
            return self.dispatch("constant", e)
        return self.dispatch("translate", e)

    value = translate

    def _translate_Symbol(self, e):
        return self.names[e]

    def _translate_log(self, e):
        return self.logabs(e.args[0])[0]

    def _translate_exp(self, e):
        return f"numpy.exp({self.value(e.args[0])})"

    @staticmethod
    def exponential_factors(e: sp.Mul) -> tuple[sp.Expr | None, list]:
        """(the product of the factors of ``e`` that are powers with a variable exponent or exponentials,
        the other factors), the product None unless it has at least two factors.

        Such a product is written as one ``exp`` of the sum of its factors' logarithms: its factors may
        overflow and underflow where it does not (Poisson noise at alpha = 1000:
        mu**(1 - alpha) * (mu + d)**alpha is 1e-1010 times 1e1051, the product 3e41), and the sum of
        logs is no less accurate than the product of exps it replaces (each factor is an exp already).
        """
        group = [f for f in e.args if isinstance(f, sp.exp)
                 or (f.is_Pow and not f.exp.is_number and f.base.is_positive)]
        if len(group) < 2:
            return None, list(e.args)
        return sp.Mul(*group, evaluate=False), [f for f in e.args if f not in group]

    def _translate_Mul(self, e):
        group, factors = self.exponential_factors(e)
        num, den = [], []
        if group is not None:
            num.append(f"numpy.exp({self.logabs(group)[0]})")
        for f in factors:
            if f.is_Pow and f.exp.is_number and f.exp.is_negative:
                den.append(self.value(sp.Pow(f.base, -f.exp)))
            else:
                num.append(self.value(f))
        text = "*".join(f"({t})" for t in num) or "1.0"
        return text if not den else f"{text}/({'*'.join(f'({t})' for t in den)})"

    def _extremum(self, e, fn: str) -> str:
        args = [self.value(a) for a in e.args]
        out = args[0]
        for a in args[1:]:
            out = f"{fn}({out}, {a})"
        return out

    def _translate_Max(self, e):
        return self._extremum(e, "numpy.maximum")

    def _translate_Min(self, e):
        return self._extremum(e, "numpy.minimum")

    def _translate_Abs(self, e):
        return f"numpy.abs({self.value(e.args[0])})"

    def _translate_sign(self, e):
        return f"numpy.sign({self.value(e.args[0])})"

    # Hyperbolic functions: numpy's values are within an ulp or two; their logarithms (below) are taken
    # without forming the function. The engine writes the discrete Laplace normaliser as tanh(1/(2b)).
    def _translate_tanh(self, e):
        return f"numpy.tanh({self.value(e.args[0])})"

    def _translate_sinh(self, e):
        return f"numpy.sinh({self.value(e.args[0])})"

    def _translate_cosh(self, e):
        return f"numpy.cosh({self.value(e.args[0])})"

    def _translate_coth(self, e):
        return f"1.0/numpy.tanh({self.value(e.args[0])})"

    def _translate_sech(self, e):
        return f"1.0/numpy.cosh({self.value(e.args[0])})"

    def _translate_csch(self, e):
        return f"1.0/numpy.sinh({self.value(e.args[0])})"

    # Integer parts and remainders are exact in floats (an integer parameter's domain, Range(3, oo),
    # reads Mod(k, 1) = 0).
    def _translate_Mod(self, e):
        return f"numpy.mod({self.value(e.args[0])}, {self.value(e.args[1])})"

    def _translate_floor(self, e):
        return f"numpy.floor({self.value(e.args[0])})"

    def _translate_ceiling(self, e):
        return f"numpy.ceil({self.value(e.args[0])})"

    def _translate_Piecewise(self, e):
        conds = ", ".join(self.condition(c) for _, c in e.args)
        vals = ", ".join(self.value(v) for v, _ in e.args)
        return f"numpy.select([{conds}], [{vals}], numpy.nan)"

    #: a polynomial sum is factored only up to this size (sympy's factor is fast there)
    FACTOR_OPS = 40

    def _factored(self, e: sp.Add) -> sp.Expr | None:
        """``e`` as a product of at least two non-constant factors, when it is a small polynomial that
        factors so. 2 rho^2 sigma^2 - 2 sigma^2 loses eps/(1 - rho^2) relative as rho -> +-1 (3e-8 at
        rho = 1 - 1e-9); 2 sigma^2 (rho - 1)(rho + 1) keeps every digit (rho - 1 is exact there)."""
        if e.free_symbols and not e.has(sp.exp, sp.log) and e.is_polynomial() and sp.count_ops(e) <= self.FACTOR_OPS:
            factored = sp.factor(e)
            if factored.is_Mul and sum(1 for f in factored.args if not f.is_number) >= 2:
                return factored
        return None

    def _translate_Add(self, e):
        factored = self._factored(e)
        if factored is not None:
            return self.value(factored)
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
        # c + log|t1 + t2| -> _lse_ratio(c + log|t1|, ...): the other terms join log|t1| (see _ratio_form)
        logs = [t for t in terms if _log_of_two_terms(t)]
        if logs and len(terms) > 1:
            x = logs[0].args[0]
            rest = [t for t in terms if t is not logs[0]]
            shift = " + ".join(f"({p})" for p in parts + [self.value(t) for t in rest])
            ratio = self._ratio_form(x, [self.logabs(a) for a in x.args], shift)
            if ratio is not None:
                return ratio[0]
        parts += [self.value(t) for t in terms]
        return " + ".join(f"({p})" for p in parts)

    def _translate_Pow(self, e):
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

    # -- conditions: boolean arrays ----------------------------------------------------------------
    def truth(self, value: bool) -> str:
        return "True" if value else "False"

    def conjunction(self, parts) -> str:
        return "(" + " & ".join(f"({p})" for p in parts) + ")"

    def disjunction(self, parts) -> str:
        return "(" + " | ".join(f"({p})" for p in parts) + ")"

    def negation(self, part) -> str:
        return f"(~({part}))"

    def relation(self, op, lhs, rhs) -> str:
        return f"(({self.value(lhs)}) {op} ({self.value(rhs)}))"

    # -- logarithms ------------------------------------------------------------------------------
    def logabs(self, e: sp.Expr) -> tuple[str, str | None]:
        """(code of log|e|, code of sign(e) or None when e > 0 is known)."""
        if e.is_number and not e.has(sp.Symbol):
            v = sp.N(e, 30)
            if v == 0:
                return "(-numpy.inf)", None
            return repr(self._float(sp.log(abs(e)), float(sp.log(abs(v)).evalf(30)))), (None if v > 0 else "(-1.0)")
        return self.dispatch("logabs", e)

    def _logabs_exp(self, e):
        return self.value(e.args[0]), None

    def _logabs_Pow(self, e):
        base, ex = e.base, e.exp
        lb, sb = self.logabs(base)
        sign = None
        if sb is not None and ex.is_integer and ex.is_odd is not False:
            sign = sb if ex.is_odd else f"({sb})**({self.value(ex)})"
        return f"({self.value(ex)})*({lb})", sign

    def _logabs_Mul(self, e):
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

    def _odd_sign(self, x: sp.Expr) -> str | None:
        """The sign of an odd function of ``x`` that has the sign of ``x`` (tanh, sinh, their reciprocals)."""
        if x.is_positive:
            return None
        return "(-1.0)" if x.is_negative else f"numpy.sign({self.value(x)})"

    def _logabs_tanh(self, e):
        # log|tanh x| = log(1 - e^(-2|x|)) - log1p(e^(-2|x|)): -2 e^(-2x) keeps its digits as x -> oo
        return f"_log_tanh({self.value(e.args[0])})", self._odd_sign(e.args[0])

    def _logabs_coth(self, e):
        return f"(-_log_tanh({self.value(e.args[0])}))", self._odd_sign(e.args[0])

    def _logabs_sinh(self, e):
        return f"_log_sinh({self.value(e.args[0])})", self._odd_sign(e.args[0])

    def _logabs_csch(self, e):
        return f"(-_log_sinh({self.value(e.args[0])}))", self._odd_sign(e.args[0])

    def _logabs_cosh(self, e):
        # log cosh x = log1p(expm1(|x|)^2 / (2 e^|x|)): ~x^2/2 keeps its digits as x -> 0
        return f"_log_cosh({self.value(e.args[0])})", None

    def _logabs_sech(self, e):
        return f"(-_log_cosh({self.value(e.args[0])}))", None

    def _logabs_Basic(self, e):
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
        parts = self.tilted_parts(factors)
        if parts is None:
            return None
        const, ratio_minus_one, rest = parts
        code = [f"({self.value(c)})*({self.logabs(b)[0]})" for b, c in const if c != 0]
        code.append(f"(alpha)*numpy.log1p({self.value(ratio_minus_one)})")
        return " + ".join(code), rest

    def tilted_parts(self, factors: list) -> tuple[list, sp.Expr, list] | None:
        """The pieces of :meth:`_tilted_powers`: ([(b_i, c_i)], B - 1 simplified, the other factors), or None."""
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
        return const, sp.factor(sp.together(B - 1)), rest

    def _logabs_Add(self, e: sp.Add) -> tuple[str, str | None]:
        terms = [self.logabs(t) for t in e.args]
        ratio = self._ratio_form(e, terms)
        if ratio is not None:
            return ratio
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

    def _ratio_form(self, e: sp.Add, terms: list, shift: str | None = None) -> tuple[str, str | None] | None:
        """log|t1 + t2| as log|t1| + log1p(t2/t1) with the log of the ratio t1/t2 simplified symbolically
        (the issue's "one form per regime", see runtime._lse_ratio): for Laplace
        log|t1/t2| = log(alpha/(alpha-1)) + (2 alpha - 1)/b, for randomized response
        (2 alpha - 1) log(p/(1-p)); numpy then never subtracts two large logs, and the float code needs
        one exp and one log1p per point. ``shift`` (code) is added to log|t1| first, where its terms in
        alpha alone meet those of log|t1| before any term on the whole grid (the generated code sums
        left to right): ``c + log|t1 + t2|`` then costs no operation on the grid of its own. None (the
        general log-sum-exp) for sums of another shape, or when the ratio is not simpler than the two
        terms."""
        if len(e.args) != 2 or any(t.is_number for t in e.args):
            return None
        t1, t2 = e.args
        try:
            # t1/t2, not t2/t1: the forms sympy finds differ in rounding (randomized response's t2/t1
            # holds 1 - (2p - 1)/p^2, which loses all digits of (1 - p)^2 as p -> 1)
            q = sp.powsimp(sp.powsimp(t1 / t2, combine="exp"), combine="all")
            if sp.count_ops(q) > sp.count_ops(t1) + sp.count_ops(t2):
                return None
            ld, sd = self.logabs(q)
        except (CodegenError, TypeError, ValueError, sp.PolynomialError):
            return None
        # _lse_ratio may overwrite d only where it is the value of an operation written here (never an
        # input, a constant or a subscript); the error estimate's common subexpressions turn it back
        # into a local read elsewhere, and ErrorEmitter.reuse then drops the flag
        fresh = fresh_value(ast.parse(ld, mode="eval").body)
        (l1, s1), (l2, s2) = terms
        if s1 is None and s2 is None:
            general, sign = f"numpy.logaddexp({l1}, {l2})", None
        else:
            logs = f"{l1}, {l2}"
            signs = f"{s1 if s1 is not None else '1.0'}, {s2 if s2 is not None else '1.0'}"
            general, sign = f"_lse_abs([{logs}], [{signs}])", f"_lse_sign([{logs}], [{signs}])"
        if shift is not None:
            l1, general = f"({shift}) + {l1}", f"({shift}) + ({general})"
        return f"_lse_ratio({l1}, {ld}, {sd if sd is not None else '1.0'}, lambda: {general}, {fresh})", sign


def _log_of_two_terms(t: sp.Expr) -> bool:
    """Whether ``t`` is ``log(t1 + t2)``."""
    return isinstance(t, sp.log) and t.args[0].is_Add and len(t.args[0].args) == 2
