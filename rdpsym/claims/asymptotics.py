"""Exponential sums at alpha -> oo, where sympy's limit gives up.

The Rényi divergence of two pmfs on finitely many outcomes is ``log(sum_i p_i**alpha q_i**(1 - alpha))/(alpha - 1)``:
a log of a sum of exponentials ``c_i exp(s_i alpha)``, whose limit at alpha -> oo is the largest slope
``s_i = log(p_i/q_i)``, i.e. D_oo (Mironov 2017, Prop. 9 with the log-sum-exp bound). sympy's Gruntz algorithm
stops on such sums with rational bases (``Not sure of sign of -1 + (2 log 3 - log 10)/(log 19 - log 20)``).
Here the slopes are compared as numbers at 60 digits, a difference that vanishes numerically counting as
equal only when sympy shows it is exactly 0 (else no answer), so that an answer is exact:

* :func:`dominant` -- the sign and slope of the leading group of ``sum_i c_i exp(s_i alpha)`` (equal slopes
  combined): the sign of the sum for every large alpha;
* :func:`log_sum_limit` -- the limit of an expression linear in logs of such sums with coefficients of finite
  limit: each ``log(S)`` is ``s alpha + log(C) + o(1)``, and the ``o(1)`` times a bounded coefficient vanishes.
"""

from __future__ import annotations

import mpmath
import sympy as sp

__all__ = ["exponential_terms", "dominant", "log_sum_limit"]

#: working digits at which two slopes or a coefficient are told apart from each other or from 0
_DIGITS = 60
_TINY = sp.Rational(1, 10**40)


def exponential_terms(expr, x) -> list[tuple[sp.Expr, sp.Expr]] | None:
    """``expr`` as ``[(c_i, s_i)]`` with ``expr = sum_i c_i exp(s_i x)`` and numbers ``c_i``, ``s_i``; None where it
    is not a sum of products of powers of positive numbers with exponents linear in ``x``."""
    out = []
    for term in sp.Add.make_args(sp.expand(expr)):
        coef, dep = term.as_independent(x, as_Add=False)
        if not coef.is_number:
            return None
        if dep == 1:
            out.append((coef, sp.Integer(0)))
            continue
        factors = sp.Mul.make_args(dep)
        exponent = sp.Integer(0)
        for f in factors:
            if isinstance(f, sp.exp):
                base, power = sp.E, f.args[0]
            elif isinstance(f, sp.Pow):
                base, power = f.base, f.exp
            else:
                return None
            if not (base.is_number and base.is_positive) or base.has(x):
                return None
            if not power.is_polynomial(x):
                return None
            line = sp.Poly(power, x)
            if line.degree() > 1 or not all(c.is_number and c.is_real for c in line.all_coeffs()):
                return None
            exponent += power * sp.log(base)
        line = sp.Poly(sp.expand(exponent), x)
        slope, offset = (line.all_coeffs() if line.degree() == 1 else (sp.Integer(0), line.as_expr()))
        out.append((coef * sp.exp(offset), slope))
    return out


def _sign(value) -> int | None:
    """-1, 0 or 1 for a real number: told from 0 at :data:`_DIGITS` digits, or shown to be 0 exactly."""
    with mpmath.workdps(_DIGITS):
        try:
            v = sp.N(value, _DIGITS)
        except (TypeError, ValueError, ArithmeticError):
            return None
        if not v.is_real:
            return None
        if abs(v) > _TINY:
            return 1 if v > 0 else -1
    try:
        return 0 if sp.simplify(value) == 0 else None
    except (TypeError, ValueError, ArithmeticError, NotImplementedError):
        return None


def dominant(expr, x) -> tuple[int, sp.Expr, sp.Expr] | None:
    """``(sign, slope, coefficient)`` of the leading group of ``expr = sum_i c_i exp(s_i x)`` at x -> oo (terms of
    equal slope combined, a group whose coefficients cancel exactly skipped); ``(0, 0, 0)`` for the zero sum;
    None where the form does not apply or a comparison cannot be decided."""
    terms = exponential_terms(expr, x)
    if terms is None:
        return None
    groups: list[list] = []  # [slope, total coefficient], in descending slope once sorted
    for coef, slope in terms:
        for g in groups:
            s = _sign(slope - g[0])
            if s is None:
                return None
            if s == 0:
                g[1] += coef
                break
        else:
            groups.append([slope, coef])
    order = []
    for g in groups:
        # insertion by exact comparisons (each decided above or here)
        i = 0
        while i < len(order):
            s = _sign(g[0] - order[i][0])
            if s is None:
                return None
            if s > 0:
                break
            i += 1
        order.insert(i, g)
    for slope, coef in order:
        s = _sign(coef)
        if s is None:
            return None
        if s != 0:
            return s, slope, coef
    return 0, sp.Integer(0), sp.Integer(0)


def log_sum_limit(expr, x):
    """The limit of ``expr`` at x -> oo when it is linear in logs of exponential sums (positive leading
    coefficient), each with a coefficient of finite limit: each ``log(S)`` replaced by ``s x + log(C)``, the
    rest is sympy's limit. None where that does not apply."""
    logs = [lg for lg in expr.atoms(sp.log) if lg.has(x)]
    if not logs:
        return None
    stand_ins = {lg: sp.Dummy("L") for lg in logs}
    body = expr.xreplace(stand_ins)
    replaced = body
    for lg, d in stand_ins.items():
        if body.diff(d, 2) != 0:
            return None
        coefficient = body.diff(d)
        if coefficient.has(*stand_ins.values()):
            return None
        lead = dominant(lg.args[0], x)
        if lead is None or lead[0] <= 0:
            return None
        c_lim = sp.limit(coefficient, x, sp.oo)
        if not (c_lim.is_number and c_lim.is_finite):
            return None
        _, slope, coef = lead
        replaced = replaced.xreplace({d: slope * x + sp.log(coef)})
    if replaced.has(*stand_ins.values()):
        return None
    return sp.limit(replaced, x, sp.oo)
