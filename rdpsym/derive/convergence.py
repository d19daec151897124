"""Whether the integral (sum) of exp(sum_j k_j T_j(x)) over a piece of the support can be shown to diverge.

The template (:mod:`.template`) asks this when sympy leaves an integral unevaluated or a sign case may
not converge. The answer is a sufficient test: ``True`` only when the integrand (times the distance to
an end) does not tend to 0 at some end; ``False`` means "not shown divergent", never "convergent".
"""

from __future__ import annotations

import sympy as sp

from .sign import sign
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["integrand", "growth_at_infinity", "diverges"]


def integrand(basis: dict[sp.Expr, sp.Expr]) -> sp.Expr:
    """exp(sum_j k_j T_j(x)) with log terms written as powers: log g with coefficient k is g**k."""
    factors = []
    for T, k in basis.items():
        if isinstance(T, sp.log):
            factors.append(T.args[0] ** k)
        else:
            factors.append(sp.exp(k * T))
    return sp.Mul(*factors)


def growth_at_infinity(basis: dict[sp.Expr, sp.Expr], x: sp.Symbol, end) -> bool | None:
    """Whether exp(sum_j k_j T_j(x)) * |x| does not tend to 0 at the infinite ``end``, read from the
    terms' leading behaviour; ``None`` when a term is not a polynomial or the log of one, or a sign is
    undecided.

    log g(x) with g a polynomial of degree m contributes |x|^(m k) (g > 0 near ``end``); polynomial
    terms add up to a polynomial exponent E(x) whose leading term decides when its degree is >= 1. With
    E of degree 0 the integrand is ~ C |x|^p and |x|^(p + 1) tends to 0 iff p < -1. This is the
    asymptotic the integral's convergence turns on; ``sympy.limit`` gets it wrong for products of
    powers with symbolic exponents (it returns oo for x (1 + x^2/nu)^(-(nu+1)(t+1)/2)
    (1 + (x - a)^2/nu)^(t(nu+1)/2), which tends to 0 like x^(-nu)).
    """
    power, exponent = sp.S.Zero, sp.S.Zero
    for T, k in basis.items():
        if isinstance(T, sp.log):
            g = T.args[0]
            if not g.is_polynomial(x):
                return None
            power += sp.degree(g, x) * k
        elif T.is_polynomial(x):
            exponent += k * T
        else:
            return None
    poly = sp.Poly(sp.expand(exponent), x)
    if poly.degree() >= 1:
        lead = poly.LC() * (1 if end == sp.oo else (-1) ** poly.degree())
        s = sign(lead)
        return None if s not in (1, -1) else s == 1
    s = sign(sp.expand(power + 1))
    if s == -1:
        return False
    return True if s in (0, 1) else None


def diverges(basis: dict[sp.Expr, sp.Expr], x: sp.Symbol, lo, hi, discrete: bool, seconds: float) -> bool:
    """A sufficient test for divergence of the integral (sum) of the positive integrand exp(sum k_j T_j).

    At an infinite end e, |x| * f(x) not tending to 0 means f is not O(1/|x|^(1+d)) and the integral
    diverges (compared with ∫ dx/x); at a finite end, |x - e| * f(x) not tending to 0 likewise. For
    sums, terms that do not tend to 0 diverge. At infinite ends of integrals the leading behaviour of
    the terms decides where it can (:func:`growth_at_infinity`); ``sympy.limit`` only where it cannot.
    """
    f = integrand(basis)
    ends = []
    if lo.is_infinite:
        ends.append((lo, -x, "+"))
    elif not discrete:
        ends.append((lo, x - lo, "+"))
    if hi.is_infinite:
        ends.append((hi, x, "-"))
    elif not discrete:
        ends.append((hi, hi - x, "-"))
    for end, weight, direction in ends:
        if end.is_infinite and not discrete:
            try:
                grows = growth_at_infinity(basis, x, end)
            except (sp.PolynomialError, sp.GeneratorsNeeded, ValueError):
                grows = None
            if grows is not None:
                if grows:
                    return True
                continue
        probe = f if discrete else f * weight
        try:
            lim = run_with_time_limit(sp.limit, probe, x, end, direction, seconds=min(seconds, 5))
        except (StepTimeout, Exception):  # noqa: BLE001 - undecided is not divergent
            continue
        if lim == sp.oo or (lim.is_positive and lim.is_finite):
            return True
    return False
