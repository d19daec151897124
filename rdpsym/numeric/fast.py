r"""Fast evaluation for the numeric path: log-densities compiled to Arb (python-flint) functions,
and Gauss-Legendre quadrature with degree doubling.

Why: the numeric path spends nearly all of its time evaluating ``log P`` and ``log Q`` (and the
integrand ``exp(alpha log P + (1-alpha) log Q - L_max)``) at a few hundred to a few thousand points.
Through ``sympy.lambdify(..., "mpmath")`` one evaluation at 40-70 digits costs 50-150 us of pure
Python arithmetic; Arb (Johansson 2017, "Arb: efficient arbitrary-precision midpoint-radius
interval arithmetic", IEEE T-C 66(8)) does the same in C in 2-5 us. Arb is a third implementation,
independent of both sympy (the engine) and mpmath (the closed forms' ``evalf``).

* :func:`compile_log_pair` turns ``log P`` and ``log Q`` (sympy, in ``x`` and the parameters) into a
  tree of Python closures over ``arb`` values, once per symbolic pair; :meth:`Compiled.bind` fixes
  the parameter values and the precision (sub-expressions without ``x`` are folded to one ``arb``
  then). The closures are built by :class:`ArbPoint` and the folded constants by
  :class:`ArbConstant`, two Arb targets of the tree translator (:mod:`rdpsym.numeric.translate`).
  Unsupported functions raise :class:`Unsupported` at compile time: the caller stays with mpmath. At
  run time anything that is not a finite real ball (``log`` of a non-positive number,
  an undecidable ``Piecewise`` condition, a zero density) comes back as ``None``, and the caller
  evaluates that point with mpmath instead: Arb never turns a doubtful value into a number.
* :func:`gauss_legendre` integrates on finite pieces with ``n`` and ``2n`` nodes and returns the
  ``2n`` value with ``|I_n - I_2n|`` as its error estimate (two rules), doubling ``n`` until that
  difference is below the tolerance or a node cap is reached. For a function analytic in a
  Bernstein ellipse of parameter ``rho`` around the piece the ``n``-point error is
  ``O(rho^{-2n})`` (Trefethen, "Approximation Theory and Approximation Practice", Thm. 19.3), so
  ``|I_n - I_2n|`` bounds the error of ``I_2n`` with a wide margin once the rule converges.
  Nodes and weights come from ``arb.legendre_p_root`` (cached per degree and precision).

Precision: every evaluation runs inside ``flint.ctx.workprec`` (restored afterwards); the global
precision of flint and mpmath is never changed.
"""

from __future__ import annotations

import functools
from typing import Callable

import mpmath
import sympy as sp

from .._config import settings
from . import translate
from .translate import DecidedConditions, Translator

try:  # optional: without python-flint the numeric path uses mpmath alone
    import flint
    from flint import arb
except ImportError:  # pragma: no cover - exercised only where python-flint is missing
    flint = None
    arb = None

__all__ = ["available", "Unsupported", "ArbConstant", "ArbPoint", "Compiled", "compile_log_pair", "gauss_legendre",
           "to_arb", "to_mpf"]

def available() -> bool:
    """True when python-flint is importable and the setting lets the Arb backend run
    (``RDPSYM_NUMERIC_BACKEND`` is ``auto`` or ``arb``)."""
    return flint is not None and settings().numeric_backend in ("auto", "arb")


class Unsupported(translate.Unsupported):
    """The expression has a function Arb is not taught here: use mpmath."""


# ----------------------------------------------------------------------------------------------
# conversions
# ----------------------------------------------------------------------------------------------
def to_arb(v) -> "arb":
    """An mpmath mpf (or int) as an exact arb."""
    if isinstance(v, int):
        return arb(v)
    sign, man, exp, _ = v._mpf_
    if not man and exp:  # mpmath's special values (inf, nan) have a zero mantissa
        raise ValueError(f"not a finite number: {v}")
    return arb((-int(man) if sign else int(man), int(exp)))


def to_mpf(v: "arb"):
    """The midpoint of a finite arb as an mpf at mpmath's current precision (None if not finite)."""
    if not v.is_finite():
        return None
    man, exp = v.mid().man_exp()
    return mpmath.mpf((int(man), int(exp)))


# ----------------------------------------------------------------------------------------------
# compiler: two Arb targets of the tree translator
# ----------------------------------------------------------------------------------------------
class _Nan(Exception):
    """Raised inside a compiled function when a value is not a finite real ball."""


_UNARY = {
    sp.exp: lambda v: v.exp(),
    sp.log: lambda v: v.log(),
    sp.erf: lambda v: v.erf(),
    sp.erfc: lambda v: v.erfc(),
    sp.gamma: lambda v: v.gamma(),
    sp.loggamma: lambda v: v.lgamma(),
    sp.sin: lambda v: v.sin(),
    sp.cos: lambda v: v.cos(),
    sp.tan: lambda v: v.tan(),
    sp.atan: lambda v: v.atan(),
    sp.sinh: lambda v: v.sinh(),
    sp.cosh: lambda v: v.cosh(),
    sp.tanh: lambda v: v.tanh(),
    sp.Abs: abs,
    # factorials as gamma functions (pmfs: Poisson's k!); a pole gives a ball that is not finite, and the
    # point goes to mpmath
    sp.factorial: lambda v: (v + 1).gamma(),
}

#: Bessel functions ``f(nu, z)`` (order first, as sympy writes them). Arb evaluates every real order,
#: negative integers included (``arb_hypgeom_bessel_i`` and its siblings: I_{-n} = I_n, J_{-n} =
#: (-1)^n J_n, DLMF 10.27.1, 10.4.1), and gives a non-finite ball where the value is not real
#: (a negative argument with a non-integer order): such points go to mpmath like any other.
_BINARY = {
    sp.besseli: lambda n, z: z.bessel_i(n),
    sp.besselj: lambda n, z: z.bessel_j(n),
    sp.besselk: lambda n, z: z.bessel_k(n),
    sp.bessely: lambda n, z: z.bessel_y(n),
    # binomial(n, k) = Gamma(n+1) / (Gamma(k+1) Gamma(n-k+1)) (the negative binomial pmf's coefficient)
    sp.binomial: lambda n, k: (n + 1).gamma() / ((k + 1).gamma() * (n - k + 1).gamma()),
}


class ArbConstant(Translator):
    """A sympy expression without the variable -> one arb at the current flint precision, the
    parameters taken from ``vals`` (symbol -> arb). Numbers are exact (a Float is its binary value);
    ``pi``, ``E``, Euler's gamma and ``-oo`` are Arb's; other numbers (``oo``, ``I``, ``zoo``, ``nan``,
    Catalan's constant, ...) are refused."""

    error = Unsupported
    target = "Arb constant"
    unary, binary = _UNARY, _BINARY

    def __init__(self, vals: dict):
        self.vals = vals

    def _translate_Symbol(self, e):
        if e not in self.vals:
            raise Unsupported(f"free symbol {e}")
        return self.vals[e]

    def _translate_Integer(self, e):
        return arb(int(e))

    def _translate_Rational(self, e):
        return arb(int(e.p)) / int(e.q)

    def _translate_Float(self, e):
        sign, man, exp, _ = e._mpf_  # exact binary value, whatever its precision
        return arb((-int(man) if sign else int(man), int(exp)))

    def _translate_Pi(self, e):
        return arb.pi()

    def _translate_Exp1(self, e):
        return arb.const_e()

    def _translate_EulerGamma(self, e):
        return arb.const_euler()

    def _translate_NegativeInfinity(self, e):
        return arb.neg_inf()

    def _translate_Add(self, e):
        s = arb(0)
        for a in e.args:
            s = s + self.translate(a)
        return s

    def _translate_Mul(self, e):
        s = arb(1)
        for a in e.args:
            s = s * self.translate(a)
        return s

    def _translate_Pow(self, e):
        b, n = e.args
        if n.is_Integer:
            return self.translate(b) ** int(n)
        if n == sp.S.Half:
            return self.translate(b).sqrt()
        return self.translate(b) ** self.translate(n)

    def apply(self, op, e):
        return op(*(self.translate(a) for a in e.args))


class ArbPoint(DecidedConditions, Translator):
    """A log-density in ``x`` -> a closure ``t -> arb`` (``t`` an arb), built once per parameter values:
    subexpressions without ``x`` are folded to one arb by :class:`ArbConstant` (``translate`` returns
    that arb; :meth:`fn` always a closure). At run time a value that is not a finite real ball, an
    undecidable ``Piecewise`` condition or ``Max``/``Min`` of overlapping balls raise ``_Nan``: the
    point goes to mpmath, never as a doubtful number."""

    error = Unsupported
    target = "Arb evaluation"
    unary, binary = _UNARY, _BINARY

    def __init__(self, x: sp.Symbol, vals: dict):
        self.x, self.constant = x, ArbConstant(vals)

    def translate(self, e):
        if not e.has(self.x):
            return self.constant.translate(e)
        return super().translate(e)

    def fn(self, e):
        return _as_fn(self.translate(e))

    def _translate_Symbol(self, e):  # the variable itself (any other symbol is a constant)
        return lambda t: t

    def _translate_Add(self, e):
        fs = [self.fn(a) for a in e.args if a.has(self.x)]
        const = [a for a in e.args if not a.has(self.x)]
        c = self.constant.translate(sp.Add(*const)) if const else None
        if len(fs) == 1:
            f0 = fs[0]
            return (lambda t: f0(t) + c) if c is not None else f0
        if len(fs) == 2:
            f0, f1 = fs
            return (lambda t: f0(t) + f1(t) + c) if c is not None else (lambda t: f0(t) + f1(t))

        def add(t):
            s = fs[0](t)
            for f in fs[1:]:
                s = s + f(t)
            return s + c if c is not None else s
        return add

    def _translate_Mul(self, e):
        fs = [self.fn(a) for a in e.args if a.has(self.x)]
        const = [a for a in e.args if not a.has(self.x)]
        c = self.constant.translate(sp.Mul(*const)) if const else None
        if len(fs) == 1:
            f0 = fs[0]
            return (lambda t: c * f0(t)) if c is not None else f0
        if len(fs) == 2:
            f0, f1 = fs
            return (lambda t: c * f0(t) * f1(t)) if c is not None else (lambda t: f0(t) * f1(t))

        def mul(t):
            s = fs[0](t)
            for f in fs[1:]:
                s = s * f(t)
            return s * c if c is not None else s
        return mul

    def _translate_Pow(self, e):
        b, n = e.args
        fb = self.fn(b)
        if n.is_Integer:
            k = int(n)
            if k == 2:
                return lambda t: (lambda u: u * u)(fb(t))
            if k == -1:
                return lambda t: 1 / fb(t)
            return lambda t: fb(t) ** k
        if n == sp.S.Half:
            return lambda t: fb(t).sqrt()
        if n.has(self.x):
            fn = self.fn(n)
            return lambda t: (fn(t) * fb(t).log()).exp()
        cn = self.constant.translate(n)
        # b ** n for real n: Arb gives NaN for a negative base (never a silent complex value)
        return lambda t: fb(t) ** cn

    def _translate_Piecewise(self, e):
        branches = []
        for val, cond in e.args:
            # -oo (log of a zero density): no real value, the caller falls back
            fv = self.fn(val) if val.has(self.x) or val.is_finite is not False else _nan_fn
            branches.append((self.condition(cond), fv))

        def pw(t):
            for fc, fv in branches:
                if fc(t):
                    return fv(t)
            raise _Nan
        return pw

    def _extremum(self, e, is_max: bool):
        fs = [self.fn(a) for a in e.args]

        def mm(t):
            vs = [f(t) for f in fs]
            best = vs[0]
            for v in vs[1:]:
                if (v > best) if is_max else (v < best):
                    best = v
                elif not ((v <= best) if is_max else (v >= best)):
                    raise _Nan  # overlapping balls: undecidable here
            return best
        return mm

    def _translate_Max(self, e):
        return self._extremum(e, True)

    def _translate_Min(self, e):
        return self._extremum(e, False)

    def apply(self, op, e):
        if len(e.args) == 1:
            f = self.fn(e.args[0])
            return lambda t: op(f(t))
        f0, f1 = (self.fn(a) for a in e.args)
        return lambda t: op(f0(t), f1(t))

    # -- conditions: a closure t -> bool (And, Or, Not: DecidedConditions), raising _Nan when Arb
    # cannot decide a relation
    def relation(self, op, lhs, rhs):
        d = self.fn(lhs - rhs)
        # a relation is decided only when the ball lies on one side of 0 (ties at an exact 0 are
        # decided exactly); otherwise the point goes to mpmath
        if op in ("==", "!="):
            eq = op == "=="

            def releq(t):
                v = d(t)
                if v.is_zero():
                    return eq
                if v > 0 or v < 0:
                    return not eq
                raise _Nan
            return releq
        strict = op in ("<", ">")
        neg = op in ("<", "<=")

        def rel(t):
            v = d(t)
            if v.is_zero():
                return not strict
            if v > 0:
                return not neg
            if v < 0:
                return neg
            raise _Nan
        return rel


class Compiled:
    """``log P`` and ``log Q`` as sympy expressions, with :meth:`bind` to make Arb closures."""

    def __init__(self, lp: sp.Expr, lq: sp.Expr, x: sp.Symbol, params: tuple[sp.Symbol, ...]):
        self.lp, self.lq, self.x, self.params = lp, lq, x, params
        # fail at compile time (not at the first point) on unsupported functions: build once with
        # every parameter at 1
        with flint.ctx.workprec(64):
            probe = ArbPoint(x, {p: arb(1) for p in params})
            probe.translate(lp)
            probe.translate(lq)

    def bind(self, values: dict, prec: int):
        """Closures ``f(t: arb) -> (lp, lq)`` (arb balls, or None when either is not a finite real
        ball) at ``prec`` bits with the parameters fixed to ``values`` (symbol -> exact number)."""
        try:
            with flint.ctx.workprec(prec):
                # exact values may be expressions (sqrt(5), pi/2): evaluated in Arb like constants
                exact = ArbConstant({})
                target = ArbPoint(self.x, {p: exact.translate(sp.S(values[p])) for p in self.params})
                fp = target.translate(self.lp)
                fq = target.translate(self.lq)
        except (Unsupported, ValueError, TypeError, ZeroDivisionError):
            # these values leave Arb's reach (e.g. an unsupported number): every point uses mpmath
            return _nan_fn, _nan_fn
        return fp, fq


def _nan_fn(t):
    raise _Nan


def _as_fn(v):
    if callable(v):
        return v
    return lambda t: v


@functools.lru_cache(maxsize=64)
def compile_log_pair(lp: sp.Expr, lq: sp.Expr, x: sp.Symbol, params: tuple[sp.Symbol, ...]) -> Compiled | None:
    """Compiled log-densities, or None when python-flint is missing or a function is unsupported."""
    if flint is None:
        return None
    try:
        return Compiled(lp, lq, x, params)
    except (Unsupported, TypeError, ValueError, ZeroDivisionError):
        return None


def evaluator(fp, fq, prec: int | None = None) -> Callable:
    """``t -> (lp, lq)`` arb balls, or None where either is not a finite real ball, or (given the
    precision ``prec`` they are evaluated at) where a ball's radius exceeds ``2^-(prec-40) (1 +
    |mid|)``: the callers use midpoints, so a ball widened by cancellation goes to mpmath instead
    of passing as an accurate number."""
    tol = arb(2) ** (-(prec - 40)) if prec is not None else None

    def ev(t):
        try:
            lp = fp(t)
            lq = fq(t)
        except (_Nan, ZeroDivisionError, ValueError, TypeError):
            return None
        if lp.is_finite() and lq.is_finite():
            if tol is not None and not (lp.rad() <= (abs(lp.mid()) + 1) * tol and lq.rad() <= (abs(lq.mid()) + 1) * tol):
                return None
            return lp, lq
        return None

    return ev


# ----------------------------------------------------------------------------------------------
# Gauss-Legendre with degree doubling
# ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _gl_nodes(n: int, prec: int):
    """Gauss-Legendre nodes and weights on [-1, 1] (n points) at prec bits, as arb pairs.

    Nodes come in symmetric pairs; Arb computes the roots of P_n and the weights
    2 / ((1 - x^2) P_n'(x)^2) with rigorous enclosures."""
    with flint.ctx.workprec(prec + 20):
        out = []
        for k in range(n):
            xk, wk = arb.legendre_p_root(n, k, weight=True)
            out.append((xk.mid(), wk.mid()))
    return tuple(out)


def _gl_sum(g, c, h, n, prec, counts):
    s = arb(0)
    for xk, wk in _gl_nodes(n, prec):
        s += wk * g(c + h * xk)
    if counts is not None:
        counts["quad_nodes"] += n
    return s * h


def gauss_legendre(g, pieces, prec: int, rel_tol, n0: int, n_max: int, counts=None):
    """∫ g over finite pieces [(lo, hi), ...] (arb ends) at ``prec`` bits.

    Each piece is integrated with n0 and 2 n0 nodes; pieces whose two values differ by more than
    ``rel_tol * |total| / len(pieces)`` are redone with doubled degrees (previous 2n becomes n) up
    to ``n_max``. Returns (total, error, converged): the sum of the higher-degree values, the sum
    of the per-piece differences (plus the balls' radii), and whether every piece met the
    tolerance. ``g`` maps an arb to an arb (finite); it may raise to abort. ``counts`` (a dict, optional)
    has its ``"quad_nodes"`` entry increased by the number of integrand evaluations."""
    with flint.ctx.workprec(prec):
        state = []
        for lo, hi in pieces:
            c, h = (lo + hi) / 2, (hi - lo) / 2
            a = _gl_sum(g, c, h, n0, prec, counts)
            b = _gl_sum(g, c, h, 2 * n0, prec, counts)
            state.append([c, h, 2 * n0, b, abs(a - b)])
        converged = True
        while True:
            total = arb(0)
            for st in state:
                total += st[3]
            tol = abs(total.mid()) * rel_tol / len(state)
            todo = [st for st in state if not st[4].mid() <= tol]
            if not todo:
                break
            if any(st[2] * 2 > n_max for st in todo):
                converged = False
                break
            for st in todo:
                c, h, n, b, _ = st
                b2 = _gl_sum(g, c, h, 2 * n, prec, counts)
                st[2], st[3], st[4] = 2 * n, b2, abs(b - b2)
        err = arb(0)
        for st in state:
            err += st[4]
        err = err.mid() + err.rad() + total.rad()
        return total.mid(), err, converged
