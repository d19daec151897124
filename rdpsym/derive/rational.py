r"""∫ over the real line of a rational function whose denominator is a power of one quadratic, by residues.

At an integer order k the integrand P^k Q^(1-k) of heavy-tailed location families is rational: for Cauchy
noise gamma/(pi (gamma^2 + x^2)) against its shift by d,

    P^k Q^(1-k) = (gamma/pi) (gamma^2 + (x - d)^2)^(k-1) / (gamma^2 + x^2)^k,

and for Student t with an integer number of degrees of freedom the same with powers of
1 + x^2/(nu s^2). sympy's general rational integration with symbolic parameters runs past its time
limit from k = 5 on; the residue theorem gives the value at once (Ahlfors, *Complex Analysis*, 3rd ed.,
Sect. 5.2.2): for N/B^m with B = a (x - r)(x - conj r) of no real root, Im r > 0, and
deg N <= 2m - 2,

    ∫_R N/B^m dx = 2 pi i Res_{x = r} = 2 pi i [u^(m-1)] N(r + u) / (a^m (u + r - conj r)^m),

the coefficient read off the Taylor coefficients of N at r (truncated products in a polynomial ring) and
the binomial series of (u + r - conj r)^(-m).

The value is accepted only when it is real (no i left after expansion) and equals a 30-digit mpmath
quadrature of the integrand at sample parameter points; otherwise None (the template is used).
"""

from __future__ import annotations

import mpmath
import sympy as sp
from sympy.polys.ring_series import rs_mul, rs_pow

from .._numbers import SYMBOLIC_ERRORS
from .._timeout import StepTimeout, run_with_time_limit
from .crosscheck import sample_values

__all__ = ["rational_line_integral"]


def _parts(coeffs: dict, x: sp.Symbol):
    """(numerator, denominator base, its power) of exp(sum c_j T_j) when every T_j is the log of a
    polynomial in x with an integer c_j and one base has a negative power; else None."""
    num, base, power, const = sp.Integer(1), None, 0, sp.Integer(1)
    for T, c in coeffs.items():
        c = sp.sympify(c)
        if not (isinstance(T, sp.log) and c.is_Integer and T.args[0].is_polynomial(x)):
            return None
        # a polynomial with coefficients in the parameters as (polynomial with polynomial coefficients) /
        # (x-free denominator): the residues are then taken on the polynomial (far cheaper to expand)
        top, bottom = sp.fraction(sp.together(T.args[0]))
        if bottom.has(x):
            return None
        const *= bottom ** (-c)
        if c > 0:
            num *= top ** c
        elif base is not None:
            return None  # several denominators: not this rule
        else:
            base, power = top, int(-c)
    return (const * num, base, power) if base is not None else None


def _powers(num, x: sp.Symbol):
    """``(const, [(base, power), ...])``: N as its x-free factors times positive integer powers of the
    factors in x (a factor that is no such power counts with power 1)."""
    const, powers = sp.Integer(1), []
    for factor in sp.Mul.make_args(num):
        if not factor.has(x):
            const *= factor
        elif factor.is_Pow and factor.exp.is_Integer and factor.exp > 0:
            powers.append((factor.base, int(factor.exp)))
        else:
            powers.append((factor, 1))
    return const, powers


def _taylor_head(num, x: sp.Symbol, r, u: sp.Dummy, n: int):
    """``(ring, u, c, head, const)``: a polynomial ring (its domain as ``sring`` picks it) whose generators are u and
    the parameters; u and c = r - conj r as its elements; ``head``, the part of degree < n in u of N(r + u)
    without its x-free factors; and ``const``, the product of those factors (an expression).

    N is a product of integer powers of polynomials in x. Each factor is shifted on its own (a handful
    of terms) and the powers and products are truncated at u^n as they are formed
    (``sympy.polys.ring_series``): expanding N(r + u) as an expression and reading its coefficients
    costs 10 s at order 32 for Cauchy noise, the truncated products 0.5 s.
    """
    const, powers = _powers(num, x)
    shifted = [sp.expand(base.subs(x, r + u)) for base, _ in powers]
    ring, elements = sp.sring(shifted + [u, r - sp.conjugate(r)])
    u_gen = elements[-2]
    head = ring.one
    for element, (_, power) in zip(elements, powers):
        head = rs_mul(head, rs_pow(element, power, u_gen, n), u_gen, n)
    return ring, u_gen, elements[-1], head, const


def _degree(num, x: sp.Symbol) -> int:
    """The degree in x of a product of integer powers of polynomials, read factor by factor (expanding a
    power of order 32 to read its degree costs seconds)."""
    return sum(power * sp.Poly(base, x).degree() for base, power in _powers(num, x)[1])


def _value(num, base, m, x):
    poly = sp.Poly(sp.expand(base), x)
    if poly.degree() != 2:
        return None
    roots = sp.roots(poly)
    if sum(roots.values()) != 2 or len(roots) != 2:
        return None
    upper = [r for r in roots if sp.im(r).is_positive]
    lower = [r for r in roots if sp.im(r).is_negative]
    if len(upper) != 1 or len(lower) != 1:
        return None
    if _degree(num, x) > 2 * m - 2:
        return None  # the integral diverges: not for this rule to say
    r, rbar = upper[0], lower[0]
    if sp.expand(sp.conjugate(r) - rbar) != 0:
        return None  # the roots are not read as conjugates: not for this rule to say
    # the coefficient of u^(m-1) in N(r + u) / (a^m (u + c)^m), c = r - conj r: Taylor coefficients N_i of
    # N at r times those of (u + c)^(-m) = sum_j binomial(-m, j) u^j c^(-m-j); over the common denominator
    # c^(2m-1) the sum is the polynomial sum_j N_(m-1-j) binomial(-m, j) c^(m-1-j)
    u = sp.Dummy("u")
    ring, u_gen, c, head, const = _taylor_head(num, x, r, u, m)
    u_index = ring.gens.index(u_gen)
    coefficients = [ring.zero] * m
    for monom, coeff in head.terms():
        coefficients[monom[u_index]] += ring({monom[:u_index] + (0,) + monom[u_index + 1:]: coeff})
    numerator = ring.zero
    for j in range(m):
        numerator += coefficients[m - 1 - j] * int(sp.binomial(-m, j)) * c ** (m - 1 - j)
    residue = const * numerator.as_expr() / (c.as_expr() ** (2 * m - 1) * poly.LC() ** m)
    value = sp.factor(sp.cancel(sp.expand(2 * sp.pi * sp.I * residue)))
    return None if value.has(sp.I) else value


def _agrees(value, num, base, m, x, points) -> bool:
    checked = 0
    for point in points:
        f = sp.lambdify(x, (num / base**m).subs(point), modules="mpmath")
        with mpmath.workdps(40):
            want = mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf])
            got = sp.N(value.subs(point), 40)
            if not got.is_real or abs(mpmath.mpf(got) - want) > mpmath.mpf(10) ** -30 * abs(want):
                return False
        checked += 1
    return checked > 0


def rational_line_integral(coeffs: dict, x: sp.Symbol, lo, hi, discrete: bool, seconds: float, symbols=(),
                           params=None) -> sp.Expr | None:
    """∫_R exp(sum_j c_j T_j(x)) dx by residues (module docstring), or None where the rule does not apply,
    does not finish within ``seconds`` or is not confirmed numerically at parameter points of ``symbols``."""
    if discrete or lo != -sp.oo or hi != sp.oo:
        return None
    parts = _parts(coeffs, x)
    if parts is None:
        return None
    num, base, m = parts
    try:
        value = run_with_time_limit(_value, num, base, m, x, seconds=seconds)
    except (StepTimeout, *SYMBOLIC_ERRORS):  # the template decides
        return None
    if value is None:
        return None
    points = sample_values(tuple(symbols), params, 2)
    try:
        return value if _agrees(value, num, base, m, x, points) else None
    except (TypeError, ValueError, ZeroDivisionError, *SYMBOLIC_ERRORS):  # not confirmed: not used
        return None
