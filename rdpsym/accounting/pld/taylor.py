r"""Rigorous Taylor models of a pair's densities and privacy loss (Arb balls, python-flint), evaluated in
numpy with stated error bounds.

**Models.** For f analytic on the ball X = [c - r, c + r], Taylor's theorem with the Lagrange remainder gives
f(c + t) = sum_{k<n} f^(k)(c)/k! t^k + f^(n)(xi)/n! t^n for some xi in X. Arb's power series of f at the thin
ball c enclose the f^(k)(c)/k!; its series at the ball X has as coefficient n a ball containing
f^(n)(xi)/n! for every xi in X (every Arb operation contains the exact result for every point of its input
balls). With a_k the float coefficients kept,

    |f(c + t) - sum_k a_k t^k| <= sum_k |a_k - f^(k)(c)/k!| r^k + |f^(n)(X)/n!| r^n =: R      (|t| <= r),

computed in Arb and rounded up. Branches (``Abs``, ``sign``, ``Heaviside``, ``Max``, ``Min``,
``Piecewise``) are decided on the whole ball X, or the model is :class:`Undecided` (the caller splits X).

**Float evaluation.** Only IEEE double +, -, *, / (correctly rounded, round to nearest; no library
function), so each bound below is a theorem about the computed numbers (Higham 2002, "Accuracy and
Stability of Numerical Algorithms", 2nd ed., Sect. 3.1 and Eq. 5.7, gamma_m = m u / (1 - m u)):

* Horner: |fl(p(t)) - p(t)| <= gamma_{2n} sum_k |a_k| |t|^k.
* The integral over [a, b] of p: (b - a) sum_k a_k/(k+1) D_k(a, b), D_k = sum_{j<=k} a^j b^(k-j) (no
  cancellation between F(b) and F(a)); every monomial passes through at most 3n + 6 roundings, so the
  error is at most gamma_{3n+6} |b - a| sum_k |a_k|/(k+1) D_k(|a|, |b|).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ...numeric import translate

__all__ = ["SeriesUnsupported", "Undecided", "SeriesProgram", "TaylorModel", "taylor_model", "horner",
           "integrate", "rows", "derivative_rows", "PREC", "f_up", "f_down", "gamma"]

U = 2.0 ** -53
#: working precision of the Arb evaluations, in bits
PREC = 106


def gamma(m: int) -> float:
    """gamma_m = m u / (1 - m u) (Higham 2002, Lemma 3.1), rounded up."""
    return (m * U / (1 - m * U)) * (1 + 4 * U)


def f_up(a) -> float:
    """A float >= every point of the ball ``a`` (+inf when it is not finite)."""
    if a.is_nan() or not a.is_finite():
        return math.inf
    v = float(a.upper())
    return math.nextafter(v, math.inf)


def f_down(a) -> float:
    """A float <= every point of the ball ``a`` (-inf when it is not finite)."""
    if a.is_nan() or not a.is_finite():
        return -math.inf
    v = float(a.lower())
    return math.nextafter(v, -math.inf)


class SeriesUnsupported(translate.Unsupported):
    """An expression node with no power-series arithmetic here."""


class Undecided(ArithmeticError):
    """A branch (Abs, Piecewise, ...) is not decided on the ball, or a value is not finite there."""


def _flint():
    import flint

    return flint


# -- sympy -> a program of Arb series operations ------------------------------------------------------
_SP_UNARY = {sp.exp: "exp", sp.log: "log", sp.erf: "erf", sp.erfc: "erfc", sp.sin: "sin", sp.cos: "cos",
             sp.tan: "tan", sp.atan: "atan", sp.asin: "asin", sp.acos: "acos", sp.gamma: "gamma",
             sp.loggamma: "lgamma"}


def _const0(v):
    """The value of a series (or scalar) at t = 0: an arb ball."""
    flint = _flint()
    if isinstance(v, flint.arb):
        return v
    c = v.coeffs()
    return c[0] if c else flint.arb(0)


class SeriesProgram(translate.Translator):
    """Several sympy expressions in one variable ``x``, compiled to a tape of Arb operations on truncated
    power series (shared subexpressions computed once). :meth:`run` evaluates them at ``x = X + t``.

    The compiler is a target of the tree translator (:mod:`rdpsym.numeric.translate`): a
    ``_translate_<Class>`` method returns a node's operation, its operands' slots already on the tape, and
    :meth:`translate` puts each distinct subexpression on the tape once and returns its slot. A condition
    is a tuple (``("rel", op, slot of lhs - rhs)`` and the combinators'), read by :meth:`_holds`.
    Branches are not taken here: :meth:`run` decides them on the ball.
    """

    error = SeriesUnsupported
    target = "power-series arithmetic"
    unary = _SP_UNARY

    def __init__(self, exprs, x: sp.Symbol):
        from ...claims.interval import Unsupported, compile_arb

        self.x = x
        self._compile_arb, self._unsupported = compile_arb, Unsupported
        self.tape: list[tuple] = []
        self._slot: dict = {}
        self.outputs = [self.translate(sp.sympify(e)) for e in exprs]

    # compile
    def _emit(self, key, op) -> int:
        self.tape.append(op)
        self._slot[key] = len(self.tape) - 1
        return len(self.tape) - 1

    def translate(self, e) -> int:
        """The slot of ``e`` on the tape (its operation appended once, after its operands')."""
        if e in self._slot:
            return self._slot[e]
        if not e.has(self.x):
            try:
                fn = self._compile_arb(e, [])
            except self._unsupported as exc:
                raise SeriesUnsupported(str(exc)) from None
            return self._emit(e, ("const", fn))
        if e == self.x:
            return self._emit(e, ("x",))
        return self._emit(e, self.dispatch("translate", e))

    def _translate_Add(self, e):
        return ("add", [self.translate(a) for a in e.args])

    def _translate_Mul(self, e):
        return ("mul", [self.translate(a) for a in e.args])

    def _translate_Pow(self, e):
        base, expo = e.args
        if expo.is_Integer:
            return ("ipow", self.translate(base), int(expo))
        if expo == sp.S.Half:
            return ("un", "sqrt", self.translate(base))
        if expo == -sp.S.Half:
            return ("un", "rsqrt", self.translate(base))
        # b**e = exp(e log b), b > 0 on the ball (else log gives NaN: Undecided)
        return ("pow", self.translate(base), self.translate(expo))

    def apply(self, op, e):
        return ("un", op, self.translate(e.args[0]))

    # the hyperbolic functions are written with exp (python-flint has no series of them)
    def _through_exp(self, e, form):
        return ("alias", self.translate(form(sp.exp(e.args[0]), sp.exp(-e.args[0]))))

    def _translate_sinh(self, e):
        return self._through_exp(e, lambda ep, em: (ep - em) / 2)

    def _translate_cosh(self, e):
        return self._through_exp(e, lambda ep, em: (ep + em) / 2)

    def _translate_tanh(self, e):
        return self._through_exp(e, lambda ep, em: (ep - em) / (ep + em))

    def _translate_Abs(self, e):
        return ("abs", self.translate(e.args[0]))

    def _translate_sign(self, e):
        return ("sign", self.translate(e.args[0]))

    def _translate_Heaviside(self, e):
        return ("heaviside", self.translate(e.args[0]))

    def _translate_Max(self, e):
        return ("max", [self.translate(a) for a in e.args])

    def _translate_Min(self, e):
        return ("min", [self.translate(a) for a in e.args])

    def _translate_Piecewise(self, e):
        return ("piecewise", [(self.translate(v), self.condition(c)) for v, c in e.args])

    # conditions: the base's condition methods build them from these
    def truth(self, value):
        return ("true",) if value else ("false",)

    def conjunction(self, parts):
        return ("and", list(parts))

    def disjunction(self, parts):
        return ("or", list(parts))

    def negation(self, part):
        return ("not", part)

    def relation(self, op, lhs, rhs):
        return ("rel", op, self.translate(lhs - rhs))

    # run
    def run(self, X, n: int, decisions: dict | None = None):
        """The outputs at x = X + t as series of length ``n`` (arb scalars for constants). ``decisions``:
        the branch choices of a run on a ball containing X (reused so that both runs follow the same
        branches); None: decide them here on X and return them too."""
        flint = _flint()
        deciding = decisions is None
        dec = {} if deciding else decisions
        vals: list = [None] * len(self.tape)
        xs = flint.arb_series([X, 1], prec=n)
        for i, op in enumerate(self.tape):
            kind = op[0]
            try:
                vals[i] = self._op(kind, op, vals, xs, X, dec, i, deciding, n)
            except (ValueError, ZeroDivisionError, ArithmeticError, TypeError) as exc:
                if isinstance(exc, (Undecided, SeriesUnsupported)):
                    raise
                raise Undecided(f"{kind}: {exc}") from None
        return [vals[o] for o in self.outputs], dec

    def _decide(self, i, dec, deciding, fn):
        if deciding:
            dec[i] = fn()
        return dec[i]

    def _op(self, kind, op, vals, xs, X, dec, i, deciding, n):
        flint = _flint()
        if kind == "const":
            return op[1]({})
        if kind == "x":
            return xs
        if kind == "alias":
            return vals[op[1]]
        if kind == "add":
            out = vals[op[1][0]]
            for j in op[1][1:]:
                out = out + vals[j]
            return out
        if kind == "mul":
            out = vals[op[1][0]]
            for j in op[1][1:]:
                out = out * vals[j]
            return out
        if kind == "ipow":
            v, k = vals[op[1]], op[2]
            if k < 0:
                if _const0(v).contains(0):
                    raise Undecided("a negative power of a ball reaching 0")
                inv = 1 / v if isinstance(v, flint.arb) else v.inv()
                return inv if k == -1 else inv ** (-k)
            return v ** k
        if kind == "pow":
            b, e = vals[op[1]], vals[op[2]]
            return (e * b.log()).exp()
        if kind == "un":
            return getattr(vals[op[2]], op[1])()
        if kind == "abs":
            v = vals[op[1]]

            def sign():
                c = _const0(v)
                if c >= 0:
                    return 1
                if c <= 0:
                    return -1
                raise Undecided("the argument of Abs changes sign on the ball")

            return v if self._decide(i, dec, deciding, sign) == 1 else -v
        if kind in ("sign", "heaviside"):
            v = vals[op[1]]

            def sgn():
                c = _const0(v)
                if c > 0:
                    return 1
                if c < 0:
                    return -1
                if c.is_exact() and c == 0 and not isinstance(v, flint.arb_series):
                    return 0
                raise Undecided(f"the argument of {kind} reaches 0 on the ball")

            s = self._decide(i, dec, deciding, sgn)
            if kind == "sign":
                return flint.arb(s)
            return flint.arb(1 if s > 0 else 0)
        if kind in ("max", "min"):
            args = [vals[j] for j in op[1]]

            def pick():
                c = [_const0(a) for a in args]
                for a_i, ci in enumerate(c):
                    if all((ci >= cj) if kind == "max" else (ci <= cj) for j, cj in enumerate(c) if j != a_i):
                        return a_i
                raise Undecided(f"{kind} is not decided on the ball")

            return args[self._decide(i, dec, deciding, pick)]
        if kind == "piecewise":
            branches = op[1]

            def pick():
                for b_i, (_, cond) in enumerate(branches):
                    holds = self._holds(cond, vals)
                    if holds is True:
                        return b_i
                    if holds is None:
                        raise Undecided("a Piecewise condition is not decided on the ball")
                raise Undecided("no Piecewise branch holds")

            return vals[branches[self._decide(i, dec, deciding, pick)][0]]
        raise SeriesUnsupported(kind)  # pragma: no cover

    def _holds(self, cond, vals):
        kind = cond[0]
        if kind == "true":
            return True
        if kind == "false":
            return False
        if kind in ("and", "or"):
            vs = [self._holds(c, vals) for c in cond[1]]
            if kind == "and":
                return False if False in vs else (None if None in vs else True)
            return True if True in vs else (None if None in vs else False)
        if kind == "not":
            v = self._holds(cond[1], vals)
            return None if v is None else not v
        op, d = cond[1], _const0(vals[cond[2]])
        if d.is_nan():
            return None
        if op == "<":
            return True if d < 0 else (False if d >= 0 else None)
        if op == "<=":
            return True if d <= 0 else (False if d > 0 else None)
        if op == ">":
            return True if d > 0 else (False if d <= 0 else None)
        if op == ">=":
            return True if d >= 0 else (False if d < 0 else None)
        if op == "==":
            if d.is_exact() and d == 0:
                return True
            return False if (d > 0 or d < 0) else None
        v = self._holds(("rel", "==", cond[2]), vals)
        return None if v is None else not v


# -- Taylor models ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaylorModel:
    """``coef[f]``: float coefficients of output f in t = x - c; ``R[f]``: the bound on the remainder for
    |t| <= r; ``ball[f]``: f's series at the whole ball (its value and derivatives enclosed there);
    ``zero[f]``: f is exactly 0 on the ball."""

    c: float
    r: float
    coef: np.ndarray
    R: np.ndarray
    ball: list
    zero: tuple


def taylor_model(program: SeriesProgram, c: float, r: float, n: int, needed=None) -> TaylorModel:
    """The Taylor models of ``program``'s outputs on [c - r, c + r] with n terms (module docstring).
    ``needed``: indices of outputs that must be finite (others, e.g. the loss where Q = 0, may be NaN)."""
    flint = _flint()
    cap = flint.ctx.cap
    flint.ctx.cap = max(cap, n + 2)  # python-flint truncates every series operation to ctx.cap terms
    try:
        with flint.ctx.workprec(PREC):
            X = flint.arb(c, r)
            ball, dec = program.run(X, n + 1)
            centre, _ = program.run(flint.arb(c), n, dec)
            return _model(flint, ball, centre, c, r, n, needed)
    finally:
        flint.ctx.cap = cap


def _model(flint, ball, centre, c, r, n, needed) -> TaylorModel:
    m = len(centre)
    coef = np.zeros((m, n))
    R = np.zeros(m)
    zero = []
    rr = flint.arb(r)
    for f in range(m):
        b, a = ball[f], centre[f]
        if isinstance(b, flint.arb):  # a constant output
            b_coeffs, a_coeffs = [b], [a]
        else:
            if b.prec < n + 1 or a.prec < n:  # truncated (ctx.cap): the missing terms are not zeros
                raise Undecided("a series was truncated below the requested length")
            b_coeffs, a_coeffs = b.coeffs(), a.coeffs()
        is_zero = all(bc.is_exact() and bc == 0 for bc in b_coeffs)
        zero.append(is_zero)
        if is_zero:
            continue
        bn = b_coeffs[n] if len(b_coeffs) > n else flint.arb(0)
        total = bn.abs_upper() * rr ** n
        bad = bn.is_nan() or not bn.is_finite()
        for k in range(min(n, len(a_coeffs))):
            ak = a_coeffs[k]
            fk = float(ak.mid()) if ak.is_finite() else math.nan
            if ak.is_nan() or not math.isfinite(fk):
                bad = True
                break
            coef[f, k] = fk
            total += (flint.arb(fk) - ak).abs_upper() * rr ** k
        if bad:
            if needed is None or f in needed:
                raise Undecided(f"output {f} is not finite on the ball")
            R[f] = math.inf
            continue
        R[f] = f_up(total)
    return TaylorModel(float(c), float(r), coef, R, ball, tuple(zero))


# -- float evaluation with bounds ------------------------------------------------------------------------
def _trim(C: np.ndarray) -> np.ndarray:
    """C without its trailing all-zero columns (at least one column kept)."""
    nz = np.nonzero(np.any(C != 0, axis=0))[0]
    return C[:, : (int(nz[-1]) + 1 if len(nz) else 1)]


def rows(C: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The coefficients of the polynomials ``C[index]`` as a (terms, points) array, trailing zero terms
    dropped: the layout :func:`horner` and :func:`integrate` read row by row."""
    CT = np.ascontiguousarray(_trim(C).T)
    return CT[:, index]


def horner(CT: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p(t) = sum_k CT[k] t^k pointwise (CT: (n, N) from :func:`rows`) and a bound on the rounding error
    (module docstring; the bound is for the n terms given)."""
    n = CT.shape[0]
    v = CT[n - 1].copy()
    w = np.abs(v)
    at = np.abs(t)
    for k in range(n - 2, -1, -1):
        v *= t
        v += CT[k]
        w *= at
        w += np.abs(CT[k])
    g = gamma(2 * n + 2)
    return v, w * (g / (1 - g))


def derivative_rows(CT: np.ndarray) -> np.ndarray:
    n = CT.shape[0]
    if n == 1:
        return np.zeros_like(CT)
    return CT[1:] * np.arange(1, n, dtype=float)[:, None]


def integrate(CT: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The integral of the polynomials sum_k CT[k] t^k over [a, b] (pointwise) and a bound on its rounding
    error (module docstring)."""
    n = CT.shape[0]
    aa, ab = np.abs(a), np.abs(b)
    D = np.ones_like(a)
    Dabs = np.ones_like(a)
    ap = np.ones_like(a)
    apa = np.ones_like(a)
    S = CT[0].copy()
    Sabs = np.abs(S)
    for k in range(1, n):
        ck = CT[k] / (k + 1)  # one more rounding: counted in gamma_{3n+6}
        ap *= a
        apa *= aa
        D *= b
        D += ap
        Dabs *= ab
        Dabs += apa
        S += ck * D
        Sabs += np.abs(ck) * Dabs
    w = b - a
    g = gamma(3 * n + 6)
    return w * S, np.abs(w) * Sabs * (g / (1 - g)) * (1 + 8 * U)
