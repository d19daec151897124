r"""A translation u = x - a that centres a template integrand: the location a of a shifted density.

The density of a location family, f(x - a), expands into an integrand that sympy integrates far worse
than f itself: exp(-(x - a)**3) becomes exp(-x**3 + 3 a x**2 - 3 a**2 x + a**3), whose terms no single
substitution turns into a gamma integral, and (1 + (x - a)**2/3)**-2 becomes a rational function in
which every partial fraction carries a. Since

    ∫_lo^hi f(x) dx = ∫_(lo-a)^(hi-a) f(u + a) du,

the template integrates in u when all x-dependent parts of the integrand share one centre a: the
polynomial part sum_n c_n x**n of the exponent and every polynomial h of a factor h**c have the mean of
their roots at a (for a polynomial of degree d with coefficients p_d, p_(d-1): a = -p_(d-1)/(d p_d)).
It is used only where the integrand is otherwise hard (an exponent of degree >= 3, a non-integer power
(x - a)**p in the exponent, or a factor h**c of degree >= 2), so that the template's usual forms
(Gaussian, gamma, beta, Weibull) are untouched.
"""

from __future__ import annotations

import sympy as sp

from .crosscheck import is_zero

__all__ = ["centre"]


def _mean_root(coefficients: dict[int, sp.Expr]) -> sp.Expr | None:
    d = max(coefficients)
    if d < 1 or is_zero(coefficients[d]):
        return None
    return -coefficients.get(d - 1, sp.Integer(0)) / (d * coefficients[d])


def centre(coeffs: dict[sp.Expr, sp.Expr], x: sp.Symbol) -> sp.Expr | None:
    """The common centre a != 0 of the integrand exp(sum_j c_j T_j(x)) when it is hard in x and a
    function of x - a is simpler (module docstring), else None."""
    polynomial: dict[int, sp.Expr] = {}
    centres: list[sp.Expr] = []
    hard = False
    for T, c in coeffs.items():
        if T == x:
            polynomial[1] = c
        elif isinstance(T, sp.Pow) and T.base == x and T.exp.is_Integer and T.exp > 0:
            polynomial[int(T.exp)] = c
        elif isinstance(T, sp.log) and T.args[0].is_polynomial(x):
            poly = sp.Poly(T.args[0], x)
            a = _mean_root(dict(zip((m[0] for m in poly.monoms()), poly.coeffs())))
            if a is None:
                return None
            centres.append(a)
            hard = hard or poly.degree() >= 2
        elif isinstance(T, sp.Pow) and not T.exp.has(x) and T.base.is_polynomial(x) and sp.degree(T.base, x) == 1:
            # (b1 x + b0)**p with p not an integer (integer powers are expanded): centred at -b0/b1, and
            # hard unless it is x**p itself (the template's u = x**p takes that one)
            poly = sp.Poly(T.base, x)
            centres.append(_mean_root(dict(zip((m[0] for m in poly.monoms()), poly.coeffs()))))
            hard = True
        else:
            return None  # another kind of basis function: its own substitutions apply
    if polynomial:
        a = _mean_root(polynomial)
        if a is None:
            return None
        centres.append(a)
        hard = hard or max(polynomial) >= 3
    if not hard or not centres or any(a.has(x) for a in centres):
        return None
    first = centres[0]
    if is_zero(first) or any(not is_zero(a - first) for a in centres[1:]):
        return None
    return first
