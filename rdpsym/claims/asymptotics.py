"""Exponential sums at alpha -> oo, where sympy's limit gives up.

The Rényi divergence of two pmfs on finitely many outcomes is ``log(sum_i p_i**alpha q_i**(1 - alpha))/(alpha - 1)``:
a log of a sum of exponentials ``c_i exp(s_i alpha)``, whose limit at alpha -> oo is the largest slope
``s_i = log(p_i/q_i)``, i.e. D_oo (Mironov 2017, Prop. 9 with the log-sum-exp bound). sympy's Gruntz algorithm
stops on such sums with rational bases (``Not sure of sign of -1 + (2 log 3 - log 10)/(log 19 - log 20)``).
Here the slopes are compared by the sign of their difference, read from strict evalf at two precisions
(:func:`rdpsym.derive.sign.numeric_sign`), a difference with no numeric sign counting as 0 only when sympy shows
it is exactly 0 (else no answer), so that an answer is exact:

* :func:`dominant` -- the sign and slope of the leading group of ``sum_i c_i exp(s_i alpha)`` (equal slopes
  combined): the sign of the sum for every large alpha;
* :func:`log_sum_limit` -- the limit of an expression linear in logs of such sums with coefficients of finite
  limit: each ``log(S)`` is ``s alpha + log(C) + o(1)``, and the ``o(1)`` times a bounded coefficient vanishes.
"""

from __future__ import annotations

import functools

import sympy as sp

from ..derive.sign import numeric_sign
from .search import affine_in

__all__ = ["exponential_terms", "dominant", "log_sum_limit"]

#: working digits at which two slopes or a coefficient are told apart from each other or from 0
_DIGITS = 60


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
        slope = offset = sp.Integer(0)
        for f in sp.Mul.make_args(dep):
            if isinstance(f, sp.exp):
                base, power = sp.E, f.args[0]
            elif isinstance(f, sp.Pow):
                base, power = f.base, f.exp
            else:
                return None
            line = affine_in(power, x)
            if (not (base.is_number and base.is_positive) or line is None
                    or not all(c.is_number and c.is_real for c in line)):
                return None
            slope, offset = slope + line[0] * sp.log(base), offset + line[1] * sp.log(base)
        out.append((coef * sp.exp(offset), slope))
    return out


def _sign(value) -> int | None:
    """-1, 0 or 1 for a real number: its numeric sign where evalf is certain of it, 0 where sympy shows it is
    exactly 0, else None."""
    s = numeric_sign(value, {}, _DIGITS)
    if s in (1, -1):
        return s
    if s == "complex":
        return None
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
    groups: list[list] = []  # [slope, total coefficient], slopes pairwise of a decided, nonzero difference
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
    # every pair's order is the sign of its difference, decided above (a total order: those signs are exact)
    order = sorted(groups, key=functools.cmp_to_key(lambda g, h: _sign(h[0] - g[0])))
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
