r"""Whether the exponential-family template can apply at all: a cheap structural test run first.

On a smooth piece the general order integrates

    P^alpha Q^(1-alpha) = exp(c0 + sum_j c_j(alpha) T_j(x))                     (Mironov 2017, Def. 3)

through the template of :mod:`.template` (the exponential-family form of Nielsen & Nock 2011, "On
Rényi and Tsallis entropies and divergences for exponential families"). Its families: powers of linear
forms x - a (gamma, beta, Pareto), exp of a polynomial of degree <= 2 (Gaussian), a single power x**p
or 1/x in the exponent (Weibull, Lévy, inverse Gaussian), log x (log-normal), exp(c x) (Gumbel), and
factorials, gamma functions and binomial coefficients of the integer variable. sympy's fallback for
symbolic exponents, the Meijer G method, integrates one G-function or a product of two whose
arguments are powers a*x**b (``sympy.integrals.meijerint._rewrite2``, the theorem of Prudnikov,
Brychkov & Marichev, Integrals and Series Vol. 3 (1990), Sect. 2.24.1): (b + x**n)**c is one such
factor, (x**2 - 2 D x + D**2 + g**2)**c is not.

This module reads the *structure* of the decomposition (which T_j occur, which coefficients depend
on alpha) and names an obstruction that puts the integrand outside all of these, so the engine can say
"no closed form" at once instead of spending its time limits on an integral sympy cannot do:

O1  two or more distinct factors h**c(alpha) with h a polynomial in x of degree >= 2 (irreducible over
    the rationals) or a special function of x (a Bessel function of order x, ...), at least one of them
    not a binomial b + x**n: Cauchy and Student t location pairs, the Skellam pair;
O2  exp of a polynomial of degree >= 3 with at least three non-constant terms (not c (x - a)**n),
    some coefficient depending on alpha: generalised Gaussian location pairs with p = 3, 4, ...;
O3  non-integer powers (x - a)**p of two or more different linear forms in the exponent, some
    coefficient depending on alpha: generalised Gaussian location pairs with p not an integer;
O4  on a range of the integers unbounded on a side, exp of a polynomial of degree 2 in the variable with
    a coefficient depending on alpha: sum_k exp(-a k^2 + b k) over the integers is a Jacobi theta
    function (DLMF 20.2.3), which sympy does not sum: discrete Gaussian location pairs.

For alpha = 1 the same reading of E_P[log P/Q] = sum_j c_j ∫ P T_j applies to each term: ∫ P log h with
P containing another such factor (K1), or ∫ P (x - a)**p with P's exponent holding a power of another
linear form (K3), or sum_k P k^n over an unbounded range of the integers with P holding exp(c k^2) (K4: a
derivative of a theta function). For alpha = oo, the critical points of log P/Q are not located when it
holds a special function of the integer variable such as I_k (D1: the Skellam pair). Every test is one-sided: when it cannot decide (an expression it does not recognise,
a step that runs out of time) it reports no obstruction and the engine integrates as before.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .pieces import DerivationError
from ..symbols import alpha as ALPHA
from .crosscheck import is_zero
from .template import decompose, log_expand
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["general_order_obstruction", "integer_order_obstruction", "max_divergence_obstruction", "kl_obstruction", "CHECK_SECONDS"]

#: the structural test's own time limit: it is a shortcut, never a step that may cost the derivation time
CHECK_SECONDS = 5.0

#: gamma functions and their ratios in the variable (the template sums them in Poisson, binomial and negative
#: binomial pmfs): never counted as an obstruction
_DISCRETE_TEMPLATE = (sp.factorial, sp.factorial2, sp.gamma, sp.loggamma, sp.beta, sp.binomial, sp.RisingFactorial,
                      sp.FallingFactorial)


def _nonzero(c: sp.Expr) -> bool:
    return not (c == 0 or is_zero(c))


def _factors(h: sp.Expr, x: sp.Symbol) -> list[tuple[sp.Expr, int]]:
    """The x-dependent factors of ``h`` with their multiplicities; polynomials are factored over the
    rationals (in x, the parameters in the coefficient domain) and made monic, so that one factor
    written two ways is one key."""
    if h.is_polynomial(x):
        try:
            _, parts = sp.factor_list(h, x)
            return [(sp.Poly(f, x).monic().as_expr(), int(m)) for f, m in parts if f.has(x)]
        except (sp.PolificationFailed, sp.polys.polyerrors.PolynomialError, NotImplementedError):
            pass
    return [(h.as_independent(x, as_Add=False)[1], 1)]


class FactorKind(enum.Enum):
    """How a factor f (of f**c in the integrand) the template cannot take as it is looks."""

    #: b + x**n, n >= 2 (a Meijer G-function)
    BINOMIAL = "binomial"
    #: any other polynomial of degree >= 2
    POLYNOMIAL = "polynomial"
    #: a special function of x
    SPECIAL = "special"


def _kind(f: sp.Expr, x: sp.Symbol) -> FactorKind | None:
    """How a factor f (of f**c in the integrand) stands to the template: None when the template or the
    Meijer G method can take it (a linear form, a known function of the integer variable, or anything
    not recognised here), else its :class:`FactorKind`."""
    if f.is_polynomial(x):
        poly = sp.Poly(f, x)
        if poly.degree() < 2:
            return None
        return FactorKind.BINOMIAL if sum(1 for m in poly.monoms() if m[0] > 0) == 1 else FactorKind.POLYNOMIAL
    for node in sp.preorder_traversal(f):
        if isinstance(node, sp.Function) and node.has(x) and not isinstance(node, (sp.exp, sp.log, sp.Abs) + _DISCRETE_TEMPLATE):
            return FactorKind.SPECIAL
    return None


def _linear_key(base: sp.Expr, x: sp.Symbol) -> sp.Expr | None:
    """x - r for a base linear in x (r its root), else None."""
    if not base.is_polynomial(x):
        return None
    poly = sp.Poly(base, x)
    return poly.monic().as_expr() if poly.degree() == 1 else None


@dataclass(frozen=True)
class _Structure:
    """What the exponent of one piece's integrand is made of, as (coefficient in log P, in log Q) pairs:
    the factors f**e of the basis functions log h (of a kind the template cannot take), the terms
    (x - r)**p with p not an integer, and the terms x**n with n a positive integer."""

    factors: dict  # f -> (e_P, e_Q, kind)
    powers: dict  # x - r -> [(c_P, c_Q)]
    polynomial: dict  # n -> (c_P, c_Q)


def _structure(piece, x) -> _Structure:
    sides = [decompose(log_expand(d), x, simplify=False)[1] for d in (piece.P, piece.Q)]
    factors: dict = {}
    powers: dict = {}
    polynomial: dict = {}
    for T in sorted(set(sides[0]) | set(sides[1]), key=sp.default_sort_key):
        cs = (sides[0].get(T, sp.Integer(0)), sides[1].get(T, sp.Integer(0)))
        if isinstance(T, sp.log):
            for f, m in _factors(T.args[0], x):
                old = factors.get(f, (0, 0))
                factors[f] = (old[0] + m * cs[0], old[1] + m * cs[1])
        elif T == x:
            polynomial[1] = cs
        elif isinstance(T, sp.Pow) and T.base == x and T.exp.is_Integer and T.exp > 0:
            polynomial[int(T.exp)] = cs
        elif isinstance(T, sp.Pow) and T.base.has(x) and not T.exp.has(x) and T.exp.is_integer is not True:
            key = _linear_key(T.base, x)
            if key is not None:
                powers.setdefault(key, []).append(cs)
    kinds = {f: _kind(f, x) for f in factors}
    return _Structure({f: (*e, kinds[f]) for f, e in factors.items() if kinds[f] is not None}, powers, polynomial)


#: the order while the tests compute (a parameter of the densities may be called alpha too)
_ORDER = sp.Dummy("alpha", positive=True)


def _exponent(e_P, e_Q):
    """alpha e_P + (1 - alpha) e_Q, the exponent in P^alpha Q^(1-alpha)."""
    return sp.factor(sp.expand(_ORDER * e_P + (1 - _ORDER) * e_Q))


def _sstr(expr) -> str:
    """An expression of the reason's text, with the order shown as alpha."""
    return sp.sstr(expr.xreplace({_ORDER: ALPHA}) if isinstance(expr, sp.Basic) else expr)


def _shown(factors) -> str:
    return " and ".join(f"({sp.sstr(f)})**({_sstr(e)})" for f, e in factors)


def _o1(st: _Structure) -> str | None:
    moving = [(f, kind, _exponent(eP, eQ)) for f, (eP, eQ, kind) in st.factors.items() if _nonzero(eP - eQ)]
    if len(moving) >= 2 and any(kind is not FactorKind.BINOMIAL for _, kind, _ in moving):
        return (f"the integrand is a product of {_shown((f, e) for f, _, e in moving)} (polynomials of degree "
                ">= 2 or special functions of the variable, not all binomials b + x**n, with exponents depending "
                "on alpha): no exponential-family or Meijer G form")
    return None


def _o2(st: _Structure, x) -> str | None:
    poly = {n: _exponent(*cs) for n, cs in st.polynomial.items() if _nonzero(cs[0]) or _nonzero(cs[1])}
    if len(poly) < 3 or max(poly) < 3 or not any(_nonzero(cP - cQ) for cP, cQ in st.polynomial.values()):
        return None
    d = max(poly)
    a = -poly.get(d - 1, 0) / (d * poly[d])
    if all(not _nonzero(poly.get(n, 0) - poly[d] * sp.binomial(d, n) * (-a) ** (d - n)) for n in range(1, d)):
        return None  # c*(x - a)**d: u = x - a makes it a single power
    shown = _sstr(sp.Add(*[c * x**n for n, c in poly.items()]))
    return (f"the exponent has the polynomial part {shown} of degree {d} with {len(poly)} terms in the "
            "variable: no gamma-type integral (only a single power c*(x - a)**n is one)")


def _o3(st: _Structure) -> str | None:
    if len(st.powers) >= 2 and any(_nonzero(cP - cQ) for cs in st.powers.values() for cP, cQ in cs):
        return (f"the exponent holds non-integer powers of {len(st.powers)} different linear forms "
                f"({', '.join(sp.sstr(k) for k in st.powers)}): no substitution makes it one gamma integral")
    return None


def _k1(st: _Structure) -> str | None:
    in_p = {f: kind for f, (eP, _, kind) in st.factors.items() if _nonzero(eP)}
    for h, (eP, eQ, kind) in st.factors.items():
        if not _nonzero(eP - eQ):
            continue
        # two binomials b + x**n are two G-functions: sympy's Meijer G method may still integrate them
        others = [f for f, k in in_p.items() if f != h and not (k is kind is FactorKind.BINOMIAL)]
        if others:
            return (f"E_P[log P/Q] needs the integral of P*log({sp.sstr(h)}) with P containing the factor "
                    f"{sp.sstr(others[0])}: no exponential-family or Meijer G form")
    return None


def _k3(st: _Structure) -> str | None:
    in_p = [k for k, cs in st.powers.items() if any(_nonzero(cP) for cP, _ in cs)]
    for key, cs in st.powers.items():
        others = [k for k in in_p if k != key]
        if others and any(_nonzero(cP - cQ) for cP, cQ in cs):
            return (f"E_P[log P/Q] needs the integral of P times a non-integer power of {sp.sstr(key)} with P "
                    f"holding a power of {sp.sstr(others[0])}: no gamma-type integral")
    return None


def _unbounded_sum(piece) -> bool:
    return piece.discrete and (piece.lo == -sp.oo or piece.hi == sp.oo)


def _o4(st: _Structure, piece) -> str | None:
    if not _unbounded_sum(piece) or set(st.polynomial) - {1, 2} or 2 not in st.polynomial:
        return None
    if not any(_nonzero(cP - cQ) for cP, cQ in st.polynomial.values()):
        return None
    shown = _sstr(sp.Add(*[_exponent(*cs) * sp.Symbol("k")**n for n, cs in st.polynomial.items()]))
    # at an order where the shift of the square is an integer the sum is the normaliser again (Canonne,
    # Kamath and Steinke 2020, Prop. 5's equality case); the template does not use that
    return (f"the summand is exp({shown}) (times constants) over an unbounded range of the integers: a Jacobi "
            "theta function (DLMF 20.2.3), which the template does not sum in closed form")


def _k4(st: _Structure, piece) -> str | None:
    cP2 = st.polynomial.get(2, (0, 0))[0]
    if not _unbounded_sum(piece) or not _nonzero(cP2) or set(st.polynomial) - {1, 2}:
        return None
    if not any(_nonzero(cP - cQ) for cP, cQ in st.polynomial.values()):
        return None
    return ("E_P[log P/Q] needs sums of k**n exp(c k**2) over an unbounded range of the integers (derivatives "
            "of a Jacobi theta function, DLMF 20.2.3): not summed in closed form")


def _pieces_to_check(pieces):
    """The pieces whose integral the general order and the KL need (P and Q both non-zero). Only
    structural zeros are left out: the pieces have their kink constructs resolved, so a zero density
    is the number 0 there (and a piece wrongly kept can only make the test find nothing)."""
    return [p for p in pieces if not p.is_point and p.P != 0 and p.Q != 0]


def _general(pieces, x) -> str | None:
    for piece in _pieces_to_check(pieces):
        st = _structure(piece, x)
        reason = _o1(st) or _o2(st, x) or _o3(st) or _o4(st, piece)
        if reason:
            return f"on {piece.describe()}, {reason}"
    return None


def _kl(pieces, x) -> str | None:
    for piece in _pieces_to_check(pieces):
        st = _structure(piece, x)
        reason = _k1(st) or _k3(st) or _k4(st, piece)
        if reason:
            return f"on {piece.describe()}, {reason}"
    return None


def _checked(fn, pieces, x, seconds) -> str | None:
    try:
        return run_with_time_limit(fn, pieces, x, seconds=min(seconds, CHECK_SECONDS))
    except (StepTimeout, DerivationError, *SYMBOLIC_ERRORS):  # an undecided test never skips a derivation
        return None


def general_order_obstruction(pieces, x, seconds: float) -> str | None:
    """Why no piece-wise integral ∫ P^alpha Q^(1-alpha) can come out of the template (O1-O3 of the module
    docstring), or None when nothing rules it out."""
    return _checked(_general, pieces, x, seconds)


def kl_obstruction(pieces, x, seconds: float) -> str | None:
    """Why E_P[log P/Q] cannot be integrated in closed form piece by piece (K1, K3 of the module
    docstring), or None when nothing rules it out."""
    return _checked(_kl, pieces, x, seconds)


def _integer(pieces, x, k) -> str | None:
    for piece in _pieces_to_check(pieces):
        st = _structure(piece, x)
        # O2 and O3 do not depend on alpha being an integer; O1 does: at an integer order the factors
        # h**(k e_P + (1 - k) e_Q) with integer exponents make a rational integrand (residues), so O1
        # stands only when some exponent there is not an integer
        # O4 too: at an integer order the summand is still exp of a quadratic (a theta function)
        reason = _o2(st, x) or _o3(st) or _o4(st, piece)
        if reason is None:
            moving = [(f, kind, sp.expand(k * eP + (1 - k) * eQ)) for f, (eP, eQ, kind) in st.factors.items()
                      if _nonzero(eP - eQ)]
            # a special function of the variable (I_k) with integer exponents is no rational function:
            # no residues either
            if (len(moving) >= 2 and any(kind is not FactorKind.BINOMIAL for _, kind, _ in moving)
                    and any(e.is_integer is not True or kind is FactorKind.SPECIAL for _, kind, e in moving)):
                reason = (f"at alpha = {k} the integrand is a product of {_shown((f, e) for f, _, e in moving)}, "
                          "not all with integer exponents: no exponential-family or Meijer G form")
        if reason:
            return f"on {piece.describe()}, {reason}"
    return None


def integer_order_obstruction(pieces, x, k: int, seconds: float) -> str | None:
    """Why ∫ P^k Q^(1-k) at the integer order ``k`` cannot come out of the template either (O2, O3, or O1
    with an exponent that is not an integer at alpha = k), or None when nothing rules it out."""
    try:
        return run_with_time_limit(_integer, pieces, x, k, seconds=min(seconds, CHECK_SECONDS))
    except (StepTimeout, DerivationError, *SYMBOLIC_ERRORS):  # an undecided test never skips a derivation
        return None


def _dinf(pieces, x) -> str | None:
    for piece in _pieces_to_check(pieces):
        st = _structure(piece, x)
        reason = _o3(st)
        if reason:
            return (f"on {piece.describe()}, the critical points of log P/Q solve an equation in non-integer "
                    f"powers of different linear forms ({reason}): not located symbolically")
        special = [f for f, (eP, eQ, kind) in st.factors.items() if kind is FactorKind.SPECIAL and _nonzero(eP - eQ)]
        if special and piece.discrete:
            return (f"on {piece.describe()}, log P/Q holds {sp.sstr(special[0])}, a special function of the "
                    "integer variable: its supremum over the variable is not located symbolically")
    return None


def max_divergence_obstruction(pieces, x, seconds: float) -> str | None:
    """Why the critical points of log P/Q (for D_inf = ess sup log P/Q) cannot be located by sympy's
    solvers: O3 (non-integer powers of two linear forms, e.g. |x|**p - |x - t|**p with p symbolic), or
    None when nothing rules it out."""
    try:
        return run_with_time_limit(_dinf, pieces, x, seconds=min(seconds, CHECK_SECONDS))
    except (StepTimeout, DerivationError, *SYMBOLIC_ERRORS):  # an undecided test never skips a derivation
        return None
