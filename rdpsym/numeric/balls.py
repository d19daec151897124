"""sympy trees as Arb ball enclosures: the ball target of the tree translator (:mod:`rdpsym.numeric.translate`).

:func:`compile_arb` turns an expression into a closure of ``{symbol: arb ball}`` returning a ball that
contains the expression's value at every point of those balls (python-flint's Arb: every operation
returns a ball containing the exact result). Values outside a function's domain give a NaN ball, i.e. no
information, never a wrong enclosure; a node without a method here is :class:`Unsupported`. The
certified pass of a claim check (:mod:`rdpsym.claims.interval`), the certified values at one point
(:mod:`rdpsym.claims.point`) and the privacy-loss distribution's Taylor models and discretisation
(:mod:`rdpsym.accounting.pld`) evaluate through it.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import sympy as sp

from . import translate

__all__ = ["Unsupported", "BallTarget", "arb_rational", "compile_arb", "compile_arb_condition", "flint_module"]


class Unsupported(translate.Unsupported):
    """The expression has a node ball arithmetic is not implemented for here."""


def flint_module():
    """python-flint, imported when ball arithmetic is first needed."""
    import flint

    return flint


# ---------------------------------------------------------------------------------------------------
# sympy -> closures over arb balls (the ball target of the tree translator, rdpsym.numeric.translate)
# ---------------------------------------------------------------------------------------------------
def arb_rational(q: sp.Rational):
    flint = flint_module()
    return flint.arb(flint.fmpq(int(q.p), int(q.q)))


def _nan():
    return flint_module().arb.nan()


def _safe(fn):
    """An arb operation whose failure (a domain error raised by python-flint) is a NaN ball: no information."""

    def run(*args):
        try:
            return fn(*args)
        except (ValueError, ZeroDivisionError, ArithmeticError, TypeError):
            return _nan()

    return run


def _unary(name):
    return lambda v: getattr(v, name)()


_UNARY = {
    sp.exp: _unary("exp"), sp.sin: _unary("sin"), sp.cos: _unary("cos"), sp.tan: _unary("tan"),
    sp.sinh: _unary("sinh"), sp.cosh: _unary("cosh"), sp.tanh: _unary("tanh"), sp.atan: _unary("atan"),
    sp.asin: _unary("asin"), sp.acos: _unary("acos"), sp.asinh: _unary("asinh"),
    sp.erf: _unary("erf"), sp.erfc: _unary("erfc"), sp.gamma: _unary("gamma"), sp.loggamma: _unary("lgamma"),
    sp.digamma: _unary("digamma"), sp.Abs: lambda v: _magnitude(v), sp.sign: _unary("sgn"), sp.floor: _unary("floor"),
    sp.ceiling: _unary("ceil"),
}


def _magnitude(v):
    """|v| for a ball: [0, max |end|] when it straddles 0 (a midpoint-radius abs would reach below 0)."""
    flint = flint_module()
    if v.is_nan() or not (v.lower() < 0 < v.upper()):
        return abs(v)
    return flint.arb(0).union(v.abs_upper())


def _even_power(v, n: int):
    """v**n for even n >= 2: non-negative, and tight when the ball straddles 0 ((0.5 +- 1.5)**2 is [0, 4],
    not the midpoint-radius [-3.5, 4], which after exp(-2500 x) would reach e^8750)."""
    if v.is_nan() or v.is_exact():
        return v ** n
    flint = flint_module()
    lo, hi = v.lower(), v.upper()  # exact ends: each power is then a thin ball
    if lo >= 0:
        return (lo ** n).union(hi ** n)
    if hi <= 0:
        return (hi ** n).union(lo ** n)
    return flint.arb(0).union(lo.abs_upper().max(hi.abs_upper()) ** n)


def compile_arb(expr: sp.Basic, symbols: Sequence[sp.Symbol]) -> Callable[[Mapping], object]:
    """A function of ``{symbol: arb}`` returning an arb ball that contains ``expr``'s value on those balls.

    Values outside a function's domain (log of a ball reaching 0, a real power of a negative ball) give a
    NaN ball, i.e. no information, never a wrong enclosure. Raises :class:`Unsupported` for nodes not
    mapped here (the caller then has no certified path and says so).
    """
    stray = expr.free_symbols - set(symbols)
    if stray:
        raise Unsupported(f"symbols {sorted(map(str, stray))} are not coordinates of the box")
    return _BALLS.translate(expr)


def compile_arb_condition(c) -> Callable[[Mapping], bool | None]:
    """A sympy condition as a three-valued function of balls: True, False or None (undecided)."""
    return _BALLS.condition(c)


def _constant(make) -> Callable:
    return lambda env: make()


def _fold(parts, step):
    """``env -> step(...step(parts[0](env), parts[1](env))..., parts[-1](env))``, NaN where python-flint raises."""

    def fold(env):
        out = parts[0](env)
        for p in parts[1:]:
            out = step(out, p(env))
        return out

    return _safe(fold)


class BallTarget(translate.EnvironmentClosures):
    """sympy -> closures ``env -> arb`` whose ball contains the exact value on the balls of ``env``.

    Every operation is one of Arb's (rigorous), with two tightenings where midpoint-radius arithmetic
    loses the sign: even powers and ``Abs`` of a ball that straddles 0. A ``Piecewise`` unions every
    branch whose condition may hold (three-valued conditions, :func:`_tri`), ``Max``/``Min`` are Arb's
    (rigorous on overlapping balls), and a value outside a function's domain is a NaN ball: no
    information, never a wrong enclosure.
    """

    error = Unsupported
    target = "ball arithmetic"
    unary = _UNARY

    # -- atoms (a symbol reads the environment: EnvironmentClosures) -----------------------------------
    def _translate_Infinity(self, e):
        return _constant(flint_module().arb.pos_inf)

    def _translate_NegativeInfinity(self, e):
        return _constant(flint_module().arb.neg_inf)

    def _translate_NaN(self, e):
        return lambda env: _nan()

    _translate_ComplexInfinity = _translate_ImaginaryUnit = _translate_NaN

    def _translate_Rational(self, e):
        return lambda env, q=e: arb_rational(q)

    def _translate_Float(self, e):
        # a Float is its exact binary value
        return lambda env, q=sp.Rational(e): arb_rational(q)

    def _translate_Pi(self, e):
        return _constant(flint_module().arb.pi)

    def _translate_Exp1(self, e):
        return lambda env: flint_module().arb(1).exp()

    def _translate_EulerGamma(self, e):
        return _constant(flint_module().arb.const_euler)

    # -- arithmetic ----------------------------------------------------------------------------------
    def _translate_Add(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u + v)

    def _translate_Mul(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u * v)

    def _translate_Pow(self, e):
        base, expo = self.translate(e.args[0]), e.args[1]
        if expo.is_Integer:
            n = int(expo)
            if n % 2 == 0 and n > 0:
                return _safe(lambda env: _even_power(base(env), n))
            return _safe(lambda env: base(env) ** n)
        if expo == sp.S.Half:
            return _safe(lambda env: base(env).sqrt())
        ex = self.translate(expo)
        return _safe(lambda env: base(env) ** ex(env))

    def _translate_log(self, e):
        arg = self.translate(e.args[0])
        if len(e.args) == 2:
            b = self.translate(e.args[1])
            return _safe(lambda env: arg(env).log() / b(env).log())
        return _safe(lambda env: arg(env).log())

    def apply(self, op, e):
        arg = self.translate(e.args[0])
        return _safe(lambda env: op(arg(env)))

    def _translate_Max(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u.max(v))

    def _translate_Min(self, e):
        return _fold([self.translate(a) for a in e.args], lambda u, v: u.min(v))

    def _translate_Piecewise(self, e):
        branches = [(self.translate(v), self.condition(c)) for v, c in e.args]

        def piecewise(env):
            # every branch whose condition may hold contributes; the first certainly true one ends it
            out = None
            for value, cond in branches:
                holds = cond(env)
                if holds is False:
                    continue
                v = value(env)
                out = v if out is None else out.union(v)
                if holds is True:
                    return out
            return _nan() if out is None else out.union(_nan())

        return _safe(piecewise)

    def _translate_Heaviside(self, e):
        flint = flint_module()
        arg = self.translate(e.args[0])
        half = sp.Rational(1, 2) if len(e.args) == 1 else e.args[1]

        def heaviside(env):
            v = arg(env)
            if v > 0:
                return flint.arb(1)
            if v < 0:
                return flint.arb(0)
            at0 = arb_rational(half) if half.is_Rational else _nan()
            return flint.arb(0).union(flint.arb(1)) if not v.is_zero() else at0

        return _safe(heaviside)

    # -- three-valued conditions: True, False or None (undecided) --------------------------------------
    def truth(self, value):
        return lambda env: value

    def conjunction(self, parts):
        def conj(env):
            vals = [p(env) for p in parts]
            return False if False in vals else (None if None in vals else True)

        return conj

    def disjunction(self, parts):
        def disj(env):
            vals = [p(env) for p in parts]
            return True if True in vals else (None if None in vals else False)

        return disj

    def negation(self, part):
        def neg(env):
            v = part(env)
            return None if v is None else not v

        return neg

    def relation(self, op, lhs, rhs):
        lhs, rhs = self.translate(lhs), self.translate(rhs)

        def rel(env):
            try:
                return _tri(op, lhs(env), rhs(env))
            except (ValueError, ArithmeticError, TypeError):
                return None

        return rel


_BALLS = BallTarget()


def _tri(op: str, a, b):
    """Certain truth of ``a op b`` for balls: True, False or None (the balls overlap: undecided)."""
    if a.is_nan() or b.is_nan():
        return None
    if op == "<":
        return True if a < b else (False if a >= b else None)
    if op == "<=":
        return True if a <= b else (False if a > b else None)
    if op == ">":
        return _tri("<", b, a)
    if op == ">=":
        return _tri("<=", b, a)
    if op == "==":
        if a.is_exact() and b.is_exact() and a == b:
            return True
        return False if (a < b or a > b) else None
    if op == "!=":
        t = _tri("==", a, b)
        return None if t is None else not t
    raise Unsupported(op)
