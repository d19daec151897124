r"""The log-summand of a discrete mechanism's Rényi sum, read off its pmfs, as float code.

For a pair of pmfs P, Q on the integers, D_alpha(P||Q) = log S(alpha) / (alpha - 1) with
S(alpha) = sum_k exp(h(k)), h = alpha log P + (1 - alpha) log Q (Mironov 2017, arXiv:1702.07476 v3,
Def. 3). :func:`log_form` turns a pmf into log space by what its sympy nodes are — never by a
mechanism's name:

* a product is the sum of its factors' logs, a power ``b**e`` (``e`` free of k) is ``e log b``;
* ``exp(u)`` is ``u``, which must be a polynomial of degree <= 2 in k;
* ``besseli(±k + c, x)`` (x free of k) is an atom ``log I_{k - s}(x)`` (integer orders:
  I_{-n} = I_n, DLMF 10.27.1), evaluated by :func:`log_besseli_table`;
* a ``Sum`` over all integers free of k (a normaliser) is a symbol ``log Z``, evaluated by the same
  float summation (:mod:`rdpsym.accounting.sum_curve`) once per parameter values;
* any other factor free of k is ``log`` of its float value (non-finite: no claim).

Anything else (a k-dependent sum of terms, a k in an exponent) is :class:`Unsupported`: the accountant
then keeps its other routes. :func:`summand` expands ``alpha log P + (1 - alpha) log Q`` symbolically,
so the polynomial parts cancel exactly (for the discrete Gaussian h is one quadratic in k, not the
difference of two large ones) and the float code is well-conditioned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

__all__ = ["Unsupported", "LogForm", "Summand", "log_form", "compile_form", "summand", "normaliser_summand",
           "log_besseli_table", "BESSEL_MAX"]


class Unsupported(ValueError):
    """A pmf whose log is not of the forms this module evaluates (the message says which node)."""


@dataclass
class LogForm:
    """log f(k) = ``poly`` (a polynomial of degree <= 2 in k) + sum of ``coef * log I_{k - shift}(x)``."""

    poly: sp.Expr
    atoms: list  # of (coef, shift, x), sympy expressions free of k

    def scaled(self, c) -> "LogForm":
        return LogForm(c * self.poly, [(c * a, s, x) for a, s, x in self.atoms])

    def plus(self, other: "LogForm") -> "LogForm":
        return LogForm(self.poly + other.poly, self.atoms + other.atoms)


def log_form(expr: sp.Expr, k: sp.Symbol, normalisers: dict) -> LogForm:
    """log of the pmf ``expr`` in ``k`` as a :class:`LogForm`; ``normalisers`` maps each Sum met (free of
    k, over all integers) to the symbol standing for its log (filled in here)."""
    if isinstance(expr, int):
        expr = sp.Integer(expr)
    if not isinstance(expr, sp.Basic):  # a pmf is a sympy expression; text is never sympified here
        raise Unsupported(f"not a sympy expression: {type(expr).__name__}")
    if isinstance(expr, sp.Sum):
        if k in expr.free_symbols:
            raise Unsupported(f"a sum depending on {k}: {sp.sstr(expr)}")
        (var, lo, hi), = expr.limits if len(expr.limits) == 1 else (None,)
        if var is None or lo != -sp.oo or hi != sp.oo:
            raise Unsupported(f"a sum not over all integers: {sp.sstr(expr)}")
        if expr not in normalisers:
            normalisers[expr] = sp.Symbol(f"_logZ{len(normalisers)}", real=True)
        return LogForm(normalisers[expr], [])
    if expr.is_Mul:
        out = LogForm(sp.Integer(0), [])
        for factor in expr.args:
            out = out.plus(log_form(factor, k, normalisers))
        return out
    if expr.is_Pow:
        base, e = expr.args
        if k in e.free_symbols:
            raise Unsupported(f"{k} in an exponent: {sp.sstr(expr)}")
        if base is sp.E:  # exp(u) printed as a power of E
            return log_form(sp.exp(e), k, normalisers)
        return log_form(base, k, normalisers).scaled(e)
    if isinstance(expr, sp.exp):
        u = sp.expand(expr.args[0])
        if k in u.free_symbols:
            try:
                poly = sp.Poly(u, k)
            except sp.PolynomialError:
                raise Unsupported(f"exp of a non-polynomial in {k}: {sp.sstr(expr)}") from None
            if poly.degree() > 2 or any(k in c.free_symbols for c in poly.coeffs()):
                raise Unsupported(f"exp of a polynomial of degree > 2 in {k}: {sp.sstr(expr)}")
        return LogForm(u, [])
    if isinstance(expr, sp.besseli):
        nu, x = expr.args
        if k in x.free_symbols:
            raise Unsupported(f"besseli with {k} in its argument: {sp.sstr(expr)}")
        for sign in (1, -1):
            c = sp.expand(nu - sign * k)
            if k not in c.free_symbols:
                # I_{k + c} = I_{k - s} with s = -c; I_{-k + c} = I_{k - c} (integer orders, DLMF 10.27.1)
                return LogForm(sp.Integer(0), [(sp.Integer(1), -c if sign == 1 else c, x)])
        raise Unsupported(f"besseli of an order not ±{k} + constant: {sp.sstr(expr)}")
    if k not in expr.free_symbols and not expr.has(sp.Sum, sp.Integral):
        return LogForm(sp.log(expr), [])
    raise Unsupported(f"a factor this float evaluator does not take the log of: {sp.sstr(expr)}")


@dataclass
class Summand:
    """h(k) = c0 + c1 k + c2 k^2 + sum_i coef_i log I_{k - s_i}(x_i), coefficients as float functions of
    (alpha, *params, *log-normalisers) — ``args`` names them in order; ``lz_coefs`` the coefficient of
    each log-normaliser in c0 (its error enters h with that weight)."""

    coeffs: tuple  # three callables
    atoms: tuple  # (coef, shift, x) callables
    args: tuple
    normalisers: dict  # Sum -> symbol
    lz_coefs: tuple  # callables, one per normaliser
    exprs: tuple  # the sympy c0, c1, c2 (for the record)


def compile_form(h: LogForm, k: sp.Symbol, alpha: sp.Symbol, params: tuple, normalisers: dict) -> Summand:
    """Float code for the log-summand ``h`` (raises :class:`Unsupported`)."""
    poly = sp.expand(h.poly)
    cs = [poly.coeff(k, i) for i in (1, 2)]
    c0 = sp.expand(poly - cs[0] * k - cs[1] * k**2)
    if k in c0.free_symbols or any(k in c.free_symbols for c in cs):
        raise Unsupported(f"the summand's polynomial part is not of degree <= 2 in {k}: {sp.sstr(poly)}")
    # atoms of one (shift, x) merge: alpha log I + (1 - alpha) log I of the same Bessel function is log I
    merged: dict = {}
    for coef, s, x in h.atoms:
        key = (sp.simplify(s), sp.simplify(x))
        merged[key] = merged.get(key, 0) + coef
    atoms = [(sp.expand(c), s, x) for (s, x), c in merged.items() if sp.expand(c) != 0]
    args = (alpha,) + tuple(params) + tuple(normalisers.values())
    for e in [c0, *cs] + [a for atom in atoms for a in atom]:
        extra = e.free_symbols - set(args)
        if extra:
            raise Unsupported(f"free symbols {sorted(map(str, extra))} beyond the parameters in {sp.sstr(e)}")
        if e.has(sp.Sum, sp.Integral, sp.besseli):
            raise Unsupported(f"a coefficient that is not elementary: {sp.sstr(e)}")
    lz = tuple(sp.lambdify(args, sp.diff(c0, z), modules="numpy") for z in normalisers.values())
    return Summand(tuple(sp.lambdify(args, e, modules="numpy") for e in (c0, *cs)),
                   tuple(tuple(sp.lambdify(args, e, modules="numpy") for e in atom) for atom in atoms),
                   args, dict(normalisers), lz, (c0, *cs))


def summand(P: sp.Expr, Q: sp.Expr, k: sp.Symbol, alpha: sp.Symbol, params: tuple, normalisers: dict) -> Summand:
    """The log-summand h = alpha log P + (1 - alpha) log Q of S(alpha) for D(P||Q), compiled."""
    fp, fq = log_form(P, k, normalisers), log_form(Q, k, normalisers)
    return compile_form(fp.scaled(alpha).plus(fq.scaled(1 - alpha)), k, alpha, params, normalisers)


def normaliser_summand(total: sp.Sum, alpha: sp.Symbol, params: tuple) -> Summand:
    """The log-summand of a normaliser ``Sum(f(j), (j, -oo, oo))`` (its own sums are not taken)."""
    (j, _, _), = total.limits
    nested: dict = {}
    form = log_form(total.function, j, nested)
    if nested:
        raise Unsupported(f"a normaliser with a normaliser inside: {sp.sstr(total)}")
    return compile_form(form, j, alpha, params, nested)


#: the largest Bessel argument and order the table evaluates (beyond: no claim)
BESSEL_MAX = 2**20
_U = 2.0**-52


def log_besseli_table(x: float, n_max: int) -> tuple[np.ndarray, np.ndarray]:
    r"""``(log I_n(x), error bound)`` for n = 0..n_max, x > 0, in float.

    log I_0(x) from mpmath (30 digits, rounded once). The ratios rho_n = I_{n+1}(x)/I_n(x) by the
    backward recurrence 1/rho_{n-1} = 2n/x + rho_n (DLMF 10.29.1), which is stable downward (the
    error of rho_n is multiplied by about rho_{n-1}^2 < 1 per step: the minimal solution), started at
    M = max(n_max, x) + 64 from rho_M = x / (M + 1 + sqrt((M + 1)^2 + x^2)) (which lies between the
    bounds x/(2(M+1)+x) <= rho_M <= x/(2(M+1)) used by the tail bound; any start in (0, 1) converges,
    and 64 steps at rho <= 1/(1+sqrt 2) damp its error below 1e-48). log I_n = log I_0 + sum_{j<n} log
    rho_j; the error bound adds 4u (1 + |log rho_j|) per step (u = 2^-52) to the anchor's 2u(1+|log I_0|).
    """
    if not (x > 0 and math.isfinite(x)) or x > BESSEL_MAX or n_max > BESSEL_MAX:
        raise ArithmeticError(f"log I_n(x) not evaluated at x = {x}, n <= {n_max} (limits: 0 < x, n <= {BESSEL_MAX})")
    M = int(max(n_max, x)) + 64
    rho = [0.0] * (M + 1)
    r = x / (M + 1 + math.sqrt((M + 1) ** 2 + x * x))
    rho[M] = r
    for n in range(M, 0, -1):
        r = 1.0 / (2.0 * n / x + r)
        rho[n - 1] = r
    with mpmath.workdps(30):
        log_i0 = float(mpmath.log(mpmath.besseli(0, x)))
    lr = np.log(np.array(rho[:n_max], dtype=float))
    out = np.empty(n_max + 1)
    out[0] = log_i0
    out[1:] = log_i0 + np.cumsum(lr)
    err = np.empty(n_max + 1)
    err[0] = 2 * _U * (1 + abs(log_i0))
    err[1:] = err[0] + np.cumsum(4 * _U * (1 + np.abs(lr))) + 4 * _U * np.abs(out[1:])
    return out, err
