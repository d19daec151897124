r"""Densities that factor into coordinates: a divergence in several variables as a sum of one-dimensional ones.

When ``P(x) = c_P prod_i f_i(x_i)`` and ``Q(x) = c_Q prod_i g_i(x_i)`` on a product support (numbers
substituted for the parameters), the integral of the Rényi divergence factors (Fubini; van Erven and
Harremoës 2014, IEEE T-IT 60(7), Thm. 28, additivity for product distributions):

    log ∫ P^alpha Q^(1-alpha) = alpha log c_P + (1 - alpha) log c_Q + sum_i log ∫ f_i^alpha g_i^(1-alpha),

and D_inf = log(c_P/c_Q) + sum_i sup log f_i/g_i (a sum of functions of separate coordinates). With the
factors normalised, ``p_i = f_i/m_i`` and ``q_i = g_i/n_i`` (masses ``m_i = ∫ f_i`` integrated
symbolically, within a time limit), and P, Q densities (``c_P prod m_i = c_Q prod n_i = 1``, checked), every
order is the sum D_alpha(P||Q) = sum_i D_alpha(p_i||q_i), the KL (alpha = 1) and D_inf included. Where a
mass is not integrated, or the check fails, the iterated quadrature is used instead. Each one-dimensional integral is the one-dimensional numeric path's
(:func:`rdpsym.numeric.numeric_divergence`): what an iterated quadrature in d dimensions does with
(its node count)^d evaluations costs d quadratures in one. A coordinate whose factors are equal
contributes 0 exactly. Errors add; the sum converges when every part does (a converged +oo wins).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._timeout import StepTimeout, run_with_time_limit
from ..specify.variables import coordinate_supports
from .inputs import substitute_values
from .quantities import quantity_for
from .value import NumericValue

__all__ = ["product_divergence", "MASS_SECONDS"]

#: seconds for the symbolic mass of one factor
MASS_SECONDS = 5.0


def _factors(expr: sp.Expr, xs) -> tuple[sp.Expr, list[sp.Expr]] | None:
    try:
        parts = sp.separatevars(sp.expand_power_exp(expr), symbols=list(xs), dict=True)
    except SYMBOLIC_ERRORS:
        return None
    if not parts:
        return None
    coeff = sp.sympify(parts.get("coeff", 1), strict=True)
    factors = [sp.sympify(parts.get(x, 1), strict=True) for x in xs]
    if coeff.free_symbols or not coeff.is_positive:
        return None
    return coeff, factors


def _mass(f: sp.Expr, x: sp.Symbol, support: sp.Set) -> sp.Expr | None:
    if not isinstance(support, sp.Interval) and support != sp.S.Reals:
        return None
    lo, hi = (-sp.oo, sp.oo) if support == sp.S.Reals else (support.start, support.end)
    try:
        m = run_with_time_limit(lambda: sp.integrate(f, (x, lo, hi)), seconds=MASS_SECONDS)
    except (StepTimeout, *SYMBOLIC_ERRORS):  # not integrated: no factorisation
        return None
    return m if m.is_number and m.is_finite and m.is_positive else None


def product_divergence(P, Q, xs, support, alpha, values, dps: int, divergence) -> NumericValue | None:
    """D_alpha(P||Q) at the parameter ``values`` as the sum over coordinates (module docstring), or None when
    P and Q do not both factor into the coordinates ``xs`` of the product set ``support``, a factor's mass
    is not integrated, P or Q is not normalised, or the arguments are bad (the iterated
    quadrature then says why). ``divergence`` is the one-dimensional numeric path."""
    try:
        quantity_for(alpha)  # a bad order: the iterated quadrature names it
        coords = coordinate_supports(support, len(xs))
        P = P.xreplace({f: sp.Rational(f) for f in P.atoms(sp.Float)})
        Q = Q.xreplace({f: sp.Rational(f) for f in Q.atoms(sp.Float)})
        P, Q, support = substitute_values(P, Q, xs, support, values)
        coords = coordinate_supports(support, len(xs))
    except (ValueError, TypeError):
        return None
    if any(e.has(sp.Sum, sp.Integral) for e in (P, Q)):
        return None
    fp, fq = _factors(P, xs), _factors(Q, xs)
    if fp is None or fq is None:
        return None
    (cp, ps), (cq, qs) = fp, fq
    masses = []
    for f, g, x, s in zip(ps, qs, xs, coords):
        m, n = _mass(f, x, s), _mass(g, x, s)
        if m is None or n is None:
            return None
        masses.append((m, n))
    # normalised factors; the densities are their products when the constants times the masses are 1
    ps = [f / m for f, (m, _) in zip(ps, masses)]
    qs = [g / n for g, (_, n) in zip(qs, masses)]
    for c in (cp * sp.Mul(*[m for m, _ in masses]), cq * sp.Mul(*[n for _, n in masses])):
        if abs(sp.N(c - 1, dps + 10)) > sp.Float(10, dps + 10) ** (-dps - 5):
            return None  # not normalised: the divergence is not the sum of the coordinates'
    parts = []
    for f, g, x, s in zip(ps, qs, xs, coords):
        if f == g:
            parts.append((x, NumericValue(mpmath.mpf(0), mpmath.mpf(0), dps, "exact: equal factors", True,
                                          f"the factors in {x} are equal")))
            continue
        parts.append((x, divergence(f, g, x, s, alpha, {}, dps)))
    with mpmath.workdps(dps + 10):
        infinite = [v for _, v in parts if v.converged and v.value == mpmath.inf]
        detail = "product densities: the sum of one-dimensional divergences (van Erven & Harremoës 2014, Thm. 28): " + \
                 "; ".join(f"{x}: {mpmath.nstr(v.value, 15)} ({v.method})" for x, v in parts)
        if infinite:
            return NumericValue.infinite(dps, detail, "product of one-dimensional divergences")
        converged = all(v.converged for _, v in parts)
        value = mpmath.fsum(v.value for _, v in parts)
        error = mpmath.fsum(v.error for _, v in parts)
        evaluations: dict = {}
        for _, v in parts:
            for k, n in v.evaluations.items():
                evaluations[k] = evaluations.get(k, 0) + n
        return NumericValue(value, error, dps, "product of one-dimensional divergences", converged, detail,
                            evaluations)
