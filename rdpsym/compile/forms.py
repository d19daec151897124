"""Equivalent forms of a closed form for float evaluation, and the points they are checked at.

``evaluation_form`` rewrites each logarithm of alpha so that its series are cheap and its float value
does not overflow; a rewrite is kept only where it agrees with the original at 30 digits.
"""

from __future__ import annotations

from collections.abc import Sequence

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..symbols import alpha as ALPHA
from .series import exact_linear, split_into_primes

__all__ = ["evaluation_form"]


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
    at alpha = 1 + 6.5e-9 and b = 1.5e-4 loses 3e-8 relative. Where the denominator holds powers in
    alpha (2**(alpha + 1)), they go into each term of the sum instead (:func:`_push_scale`): the terms
    are then O(1) where the value is, and each is one power B**alpha with B - 1 kept exact.
    """

    def slope(exponent) -> float:
        # d(exponent)/d(alpha) at a typical point: the exponent growing slowest in alpha is factored out
        try:
            return float(sp.diff(exponent, ALPHA).subs(checks[0])) if checks else 0.0
        except (TypeError, ValueError):
            return 0.0

    def rewrite(e):
        n, d = sp.fraction(sp.together(e.args[0]))
        # as written first: together() moves e^(-eps (alpha - 1)) into the denominator, a product
        near_one = _log_near_one(*sp.fraction(e.args[0])) or _log_near_one(n, d)
        if near_one is not None:
            if shift:
                return near_one
            return sp.Piecewise((near_one, sp.Abs(near_one.args[0] - 1) <= sp.Rational(1, 2)), (plain(e, n, d), True))
        return plain(e, n, d)

    def plain(e, n, d):
        groups: dict = {}  # exponent -> its coefficient: the sum as sum_k c_k exp(a_k)
        for t in sp.Add.make_args(sp.expand(n)):
            t = sp.powsimp(t, combine="exp")
            exps = [f for f in sp.Mul.make_args(t) if isinstance(f, sp.exp)]
            exponent = sp.expand(sp.Add(*[f.args[0] for f in exps]))
            groups[exponent] = groups.get(exponent, sp.Integer(0)) + t / sp.Mul(*exps)
        if set(groups) == {0} and d == 1:
            return e
        if not shift:
            pushed = _push_scale(n, d)
            if pushed is not None:
                return pushed
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
    except SYMBOLIC_ERRORS:  # a rewrite that sympy cannot do just leaves the form as it is
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



def _symbolic_terms(e: sp.Expr) -> int:
    return sum(1 for t in sp.Add.make_args(sp.expand(e)) if not t.is_number)


def _log_near_one(n: sp.Expr, d: sp.Expr) -> sp.Expr | None:
    """``log(1 + (n - d)/d)`` for ``log(n/d)`` where terms of the sums ``n`` and ``d`` cancel in ``n - d``, else None.

    k-ary randomized response has log((k - 2 + e^(alpha eps) + e^(-eps (alpha - 1)))/(k - 1 + e^eps)): as
    k -> oo, as alpha -> 1 and as alpha -> 0 the ratio tends to 1, and log(n) - log(d) keeps only
    eps * log(k) of the value's digits (at k = 1e12 the float code was 7e-4 off). Here k cancels in
    n - d = e^(alpha eps) + e^(-eps (alpha - 1)) - e^eps - 1, and log1p of (n - d)/d keeps every digit; its
    Taylor series around those centres then starts exactly at 0. Where the ratio is far from 1 the
    other form is the accurate one (log1p(X) next to X = -1): the closed form's evaluation form picks
    one per point."""
    if not (n.is_Add and d.is_Add):
        return None
    diff = sp.expand(n - d)
    if diff == 0 or _symbolic_terms(diff) >= _symbolic_terms(n) + _symbolic_terms(d):
        return None
    return sp.log(1 + diff / d)


def _alpha_power(f: sp.Expr) -> bool:
    """A power with an exponent in alpha and a base free of alpha (2**(alpha + 1), p**(1 - alpha))."""
    return bool(f.is_Pow and f.exp.has(ALPHA) and not f.base.has(ALPHA) and f.base.is_positive is not False)


def _push_scale(n: sp.Expr, d: sp.Expr) -> sp.Expr | None:
    """``log(n/d)`` with the powers in alpha of ``d`` pushed into each term of ``n``, or None.

    Randomized response on three values has ``log(2**(-alpha-1) (2**alpha (1-p) + 2 p**(1-alpha) (1-p)**alpha
    + (4p)**alpha (1-p)**(1-alpha)))``: written as ``log(n) - log(2**(alpha+1))`` the terms of n are
    ~2**alpha while their log-sum-exp is ~alpha (27 alpha u^2 / 4 with u = p - 1/3), so the float code loses
    ~eps*alpha absolutely (7e-12 relative at alpha = 311, u = 7e-5). With the scale inside, each term is
    O(1): ``(1-p)/2 + (1-p)/2 (1 + (3p-1)/(1-p))**alpha + p (1 - (3p-1)/(2p))**alpha``, and each
    power is written as one ``B**alpha`` with ``B - 1`` simplified (:func:`_tilted_term`).
    None where ``d`` has no such power or a term holds an exponential (the form is then left as it was).
    """
    scale = [f for f in sp.Mul.make_args(d) if _alpha_power(f)]
    if not scale or n.has(sp.exp) or d.has(sp.exp):
        return None
    s = sp.Mul(*scale)
    groups: dict = {}  # the powers in alpha of a term -> its coefficient
    for t in sp.Add.make_args(sp.expand(n)):
        t = sp.powsimp(split_into_primes(t / s))
        powers = sp.Mul(*[f for f in sp.Mul.make_args(t) if _alpha_power(f)])
        rest = sp.Mul(*[f for f in sp.Mul.make_args(t) if not _alpha_power(f)])  # t / powers may not cancel
        groups[powers] = groups.get(powers, sp.Integer(0)) + rest
    terms = [_tilted_term(sp.factor_terms(sp.expand(c)), powers) for powers, c in groups.items()]
    if any(t is None for t in terms):
        return None
    rest = sp.Mul(*[f for f in sp.Mul.make_args(d) if not _alpha_power(f)])
    return sp.log(sp.Add(*terms)) - sp.log(rest)


def _tilted_term(c: sp.Expr, powers: sp.Expr) -> sp.Expr | None:
    """``c * prod_i b_i**(c_i + d_i alpha)`` as ``c * prod_i b_i**c_i * (1 + X)**alpha`` with
    ``X = prod_i b_i**d_i - 1`` over a common denominator and each linear factor of its numerator in
    the form of :func:`exact_linear`: at p = 1/3 + u, ``(2p/(1-p))**alpha`` has X = (3p - 1)/(1 - p),
    and 3p - 1 computed as ``3*p - 1`` carries an error eps/(3u) relative, which the sum of the terms
    amplifies by ~1/(alpha u) (5e-12 relative at u = 7e-5, alpha = 311). None where an exponent is not
    of degree <= 1 in alpha with a numeric slope."""
    if powers == 1:
        return c
    const, ratio = sp.Integer(1), sp.Integer(1)
    for f in sp.Mul.make_args(powers):
        b, ex = f.as_base_exp()
        ex = sp.expand(ex)
        if not ex.is_polynomial(ALPHA) or sp.degree(ex, ALPHA) > 1 or not ex.coeff(ALPHA, 1).is_number:
            return None
        const *= b ** ex.subs(ALPHA, 0)
        ratio *= b ** ex.coeff(ALPHA, 1)
    x = sp.factor(sp.together(ratio - 1))
    if x == 0:
        return c * const
    num, den = sp.fraction(x)
    parts = []
    for g, k in (f.as_base_exp() for f in sp.Mul.make_args(num)):
        a, exact = exact_linear(g)
        parts.append(exact**k)
        den = den / a**k  # a number times a sum is distributed by sympy: the sum would round again
    # factor_terms: a number times a sum, (1 - p)/2, is distributed by sympy into 1/2 - p/2 (two terms)
    return sp.Mul(sp.factor_terms(c * const), sp.Pow(1 + sp.Mul(*parts) / den, ALPHA))


def max_min_branches(expr: sp.Expr) -> tuple[str, list[sp.Expr]]:
    if isinstance(expr, (sp.Max, sp.Min)):
        return ("numpy.maximum" if isinstance(expr, sp.Max) else "numpy.minimum"), list(expr.args)
    return "", [expr]


def check_points(params) -> list[dict]:
    """Orders on both sides of 1 and of 1/2, at the parameters' typical values."""
    typical = [{p.symbol: sp.nsimplify(v) for p, v in zip(params, values)}
               for values in zip(*(p.typical_values(2) for p in params))] or [{}]
    return [{ALPHA: a, **t} for a in (sp.Rational(1, 3), sp.Rational(3, 4), sp.Rational(5, 2), 7) for t in typical]
