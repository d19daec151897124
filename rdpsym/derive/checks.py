"""Checks on the input densities: non-negative, and integrating (summing) to 1.

The check is symbolic where sympy can do it within the step's time limit, and numeric otherwise,
at parameter values drawn from the typical ranges (or from the assumptions).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from .crosscheck import is_zero, numeric_equal, sample_values
from .pieces import DerivationError
from .template import decompose, integrate_template, log_expand
from .timeout import StepTimeout, run_with_time_limit

__all__ = ["DensityError", "check_densities"]


class DensityError(ValueError):
    """A density or pmf given to the engine is not a probability distribution."""


def _piece_mass(piece, dens, x, seconds):
    if piece.is_point:
        return dens
    if is_zero(dens):
        return sp.Integer(0)
    c0, coeffs = decompose(log_expand(dens), x)
    res = integrate_template(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds)
    if len(res.cases) != 1:
        raise DerivationError("normalisation not decided symbolically")
    return sp.exp(c0) * res.cases[0][0]


def check_densities(P, Q, x, support, pieces, symbols, params, seconds, log) -> None:
    points = sample_values(symbols, params, 2)
    for name, attr in (("P", "P"), ("Q", "Q")):
        for piece in pieces:
            for point in points:
                _check_nonnegative(name, getattr(piece, attr).subs(point), x, piece, point, seconds)
        try:
            mass = sp.Add(*[_piece_mass(p, getattr(p, attr), x, seconds) for p in pieces])
            mass = sp.simplify(mass)
            how = "symbolically" if mass == 1 else None
            if how is None:
                ok = numeric_equal(mass, sp.Integer(1), points)
                if ok is False:
                    raise DensityError(
                        f"{name}: does not {'sum' if pieces and pieces[0].discrete else 'integrate'} to 1 "
                        f"(total mass {sp.sstr(mass)})"
                    )
                how = "numerically at typical parameters"
        except DensityError:
            raise
        except (StepTimeout, Exception):  # noqa: BLE001 - fall back to quadrature
            try:
                how = run_with_time_limit(_numeric_mass_check, name, getattr, pieces, attr, x, points,
                                          seconds=seconds)
            except StepTimeout:
                how = f"NOT CHECKED: quadrature of the total mass exceeded {seconds:g} s"
        log.note(f"density {name}", f"non-negative at test points; total mass 1 ({how})")


def _check_nonnegative(name, dens, x, piece, point, seconds) -> None:
    """Raise DensityError if ``dens`` (numeric parameters) is negative somewhere on ``piece``."""
    xs = [piece.lo] if piece.is_point else _interior(piece)
    for xv in xs:
        value = sp.N(dens.subs(x, xv), 30)
        if value.is_real and value < 0:
            raise DensityError(f"{name}: negative value {value} at x = {xv}, parameters {point}")
    if piece.is_point or dens.free_symbols != {x}:
        return
    domain = sp.Interval.open(piece.lo, piece.hi)
    try:
        bad = run_with_time_limit(sp.solveset, dens < 0, x, domain, seconds=min(seconds, 5))
    except (StepTimeout, Exception):  # noqa: BLE001 - undecided: the grid above is the check
        return
    if piece.discrete:
        bad = sp.Intersection(bad, sp.S.Integers)
    if bad is not sp.S.EmptySet and not isinstance(bad, sp.ConditionSet):
        where = bad.inf if bad.inf.is_finite else bad.sup
        raise DensityError(f"{name}: negative on {sp.sstr(bad)} (e.g. near x = {where}), parameters {point}")


def _interior(piece):
    lo, hi = piece.lo, piece.hi
    if lo.is_infinite and hi.is_infinite:
        return [sp.Integer(-3), sp.Integer(0), sp.Integer(3)]
    if lo.is_infinite:
        return [hi - 1, hi - 5]
    if hi.is_infinite:
        return [lo + 1, lo + 5] if not piece.discrete else [lo, lo + 3]
    return [lo + (hi - lo) * sp.Rational(k, 4) for k in (1, 2, 3)] if not piece.discrete else [lo, hi]


def _numeric_mass_check(name, _getattr, pieces, attr, x, points) -> str:
    for point in points:
        with mpmath.workdps(30):
            total = mpmath.mpf(0)
            for piece in pieces:
                d = getattr(piece, attr).subs(point)
                if piece.is_point:
                    total += mpmath.mpf(sp.N(d, 30))
                    continue
                f = sp.lambdify(x, d, "mpmath")
                lo = mpmath.mpf(sp.N(piece.lo.subs(point), 30)) if piece.lo.is_finite or not piece.lo.is_infinite else (mpmath.ninf if piece.lo == -sp.oo else mpmath.inf)
                hi = mpmath.mpf(sp.N(piece.hi.subs(point), 30)) if not piece.hi.is_infinite else mpmath.inf
                if piece.discrete:
                    total += mpmath.nsum(f, [lo, hi])
                else:
                    total += mpmath.quad(f, [lo, hi])
            # quadrature of endpoint singularities (beta with shapes < 1) is good to ~1e-12 only:
            # a tolerance of 1e-8 still rejects every density that is not normalised
            if abs(total - 1) > mpmath.mpf(10) ** -8:
                raise DensityError(f"{name}: total mass {mpmath.nstr(total, 15)} != 1 at parameters {point}")
    return "by quadrature at typical parameters"
