"""Equality checks the engine relies on: exact zero tests, and comparisons at deterministic sample points.

A simplified form, a limit or a special-order value is accepted only when it is checked equal to what it
replaces: symbolically where sympy decides it within a few seconds, otherwise numerically at 30 digits at
parameter points drawn from the typical ranges (or from the symbols' assumptions).
"""

from __future__ import annotations

import random
from typing import Iterable, Sequence

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..specify.params import Parameter
from .domains import point_within_domains
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["sample_values", "numeric_equal", "equivalent", "is_zero"]


def sample_values(symbols: Iterable[sp.Symbol], params: Sequence[Parameter] | None, n: int, seed: int = 0):
    """Deterministic parameter points for numeric cross-checks.

    Values come from the typical ranges (or the symbols' assumptions); a value outside its parameter's
    domain at the other values (a domain that relates parameters, m2 in (m1, oo), or one case of a
    case split) is then moved inside it (:func:`rdpsym.derive.domains.point_within_domains`)."""
    by_symbol = {p.symbol: p for p in params or ()}
    rng = random.Random(seed)
    points = []
    symbols = sorted(symbols, key=lambda s: s.name)
    for i in range(n):
        point = {}
        for s in symbols:
            if s in by_symbol:
                vals = by_symbol[s].typical_values(5)
                point[s] = vals[(i * 2 + 1) % len(vals)] if len(vals) > 1 else vals[0]
            elif s.is_integer:
                point[s] = sp.Integer(rng.randint(1, 4))
            elif s.is_positive or s.is_nonnegative:
                # in (0, 1/2): valid for scales and rates, and for probabilities (and sums of two)
                # declared only positive
                point[s] = sp.Rational(rng.randint(1, 9), 20)
            else:
                point[s] = sp.Rational(rng.randint(-20, 20), 10)
        points.append(point_within_domains(point, params, i))
    return points


def _value_at(expr: sp.Expr, point, dps: int) -> sp.Expr:
    """``expr`` at ``point`` to ``dps`` digits. The numbers are substituted inside ``evalf`` first:
    ``subs`` rebuilds the expression exactly, and a power of exp(rational) times a rational with a
    rational exponent can send sympy's automatic simplification into minutes of polynomial factoring
    (k-ary randomized response's alpha < 1 form at epsilon = 211377/794905). ``evalf`` with ``subs``
    does not see an exact cancellation (0/0 at a removable order gives a finite number that depends on
    the precision), so its value counts only when it is the same at two precisions; otherwise, and
    where it leaves something unevaluated (a Sum, a function it has no numbers for), the exact
    substitution as before."""
    def clean(v):
        return v.is_Number and v.is_finite and not v.has(sp.nan)

    coarse, fine = expr.evalf(2 * dps, subs=point), expr.evalf(4 * dps, subs=point)
    if clean(coarse) and clean(fine):
        if abs(fine - coarse) <= sp.Float(10, 4 * dps) ** (-dps) * max(abs(fine), sp.Integer(1)):
            return fine.evalf(dps)
    return sp.N(expr.subs(point), dps)


def _finite_real(v: sp.Expr) -> bool:
    return bool(v.is_number and v.is_real is True and v.is_finite is True)


def numeric_equal(a: sp.Expr, b: sp.Expr, points, dps: int = 30) -> bool | None:
    """Equality of two expressions at the points, to ``dps`` digits: False if they differ at a point,
    True if they agree at more than half of the points and differ at none, None otherwise (a value
    cannot be evaluated, or only one of the two is a finite real number).

    Only a point where both values are finite real numbers is evidence. A point where both forms are
    undefined in the same way (NaN, zoo or the same infinity: a singular order of both, such as alpha
    = 1/2 for the Laplace forms) is skipped, never counted as agreement, so two forms that are undefined
    at every point are not equal."""
    points, agreed = list(points), 0
    with mpmath.workdps(dps + 10):
        for point in points:
            try:
                va = _value_at(a, point, dps + 10)
                vb = _value_at(b, point, dps + 10)
            except SYMBOLIC_ERRORS:
                return None
            if not (_finite_real(va) and _finite_real(vb)):
                if va == vb:  # undefined in both: no evidence either way
                    continue
                return None
            scale = max(abs(va), abs(vb), sp.Integer(1))
            if abs(va - vb) > scale * sp.Float(10) ** (-dps):
                return False
            agreed += 1
    return True if 2 * agreed > len(points) else None


def equivalent(a, b, points) -> str | None:
    """'symbolic' or 'numeric' if a == b, None if not (or undecidable)."""
    try:
        diff = run_with_time_limit(lambda: sp.simplify(a - b), seconds=5)
        if diff == 0:
            return "symbolic"
    except StepTimeout:
        pass
    ok = numeric_equal(a, b, points)
    return "numeric" if ok else None



def is_zero(expr) -> bool:
    return expr == 0 or sp.simplify(expr) == 0
