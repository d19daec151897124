"""Removable (exceptional) orders: where the general expression is singular but the divergence is not.

The singular orders of the expression are found, the divergence is derived there directly with alpha
fixed to the order, and an order is kept when its value equals the limit of the expression (e.g. Laplace
at alpha = 1/2, Mironov 2017, Prop. 6); a disagreement is a :class:`DerivationError`.

An order may depend on the parameters: Laplace(0, b1) against Laplace(1, b2) is singular at
alpha = b1/(b1 + b2), where the integrand is constant between the two locations. Such an order is kept
unless the parameters' domains put it outside (0, 1) u (1, oo) for every admissible value; its value is
the direct derivation at that alpha (the definition, Mironov 2017, Def. 3, with the parameters symbolic),
kept when it equals the exact limit of the general expression at parameter points where that order is
admissible (at least one point, each limit taken by sympy with the parameters as numbers).
"""

from __future__ import annotations

import sympy as sp

from ..symbols import alpha as ALPHA
from .crosscheck import equivalent, is_zero, numeric_equal, sample_values
from .domains import point_within_domains
from .pieces import DerivationError
from .result import ExceptionalPoint
from .sign import decide
from .template import decompose, integrate_template, log_expand
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["singular_orders", "exceptional_points", "direct_at"]


def singular_orders(expr: sp.Expr, params=None) -> list[sp.Expr]:
    """The orders in (0, 1) u (1, oo) where a factor of ``expr`` vanishes under a negative power or a
    log: numbers first (in increasing order), then orders in the parameters (those the parameters'
    domains do not put outside (0, 1) u (1, oo) for every admissible value)."""
    found, symbolic = set(), []
    for node in sp.preorder_traversal(sp.together(expr) if not isinstance(expr, sp.Piecewise) else expr):
        base = None
        if isinstance(node, sp.Pow) and node.exp.is_negative and node.base.has(ALPHA):
            base = node.base
        elif isinstance(node, sp.log) and node.args[0].has(ALPHA):
            base = node.args[0]
        if base is None:
            continue
        try:
            roots = sp.solveset(base, ALPHA, sp.Interval.open(0, sp.oo) - sp.FiniteSet(1))
        except Exception:  # noqa: BLE001
            continue
        if isinstance(roots, sp.FiniteSet):
            found |= {r for r in roots if not r.free_symbols}
        found |= set(_coinciding_exponentials(base))
        if base.free_symbols - {ALPHA}:
            symbolic += [r for r in _parametric_roots(base) if r not in symbolic and _admissible(r, params)]
    return sorted(found, key=lambda r: float(r)) + sorted(symbolic, key=sp.default_sort_key)


def _coinciding_exponentials(base: sp.Expr) -> list[sp.Expr]:
    """Numeric orders where two exponentials of ``base`` coincide and ``base`` vanishes there (checked
    at sample points): a geometric sum's denominator 1 - e^{c(alpha)} summed by the template, written
    as a sum of exponentials in the parameters that solveset cannot solve (the discrete Laplace pair at
    alpha = 1/2, like the continuous one's of Mironov 2017, Prop. 6)."""
    from .crosscheck import numeric_equal, sample_values

    args = sorted({e.args[0] for e in base.atoms(sp.exp) if e.has(ALPHA)}, key=sp.default_sort_key)
    out = []
    for i, u in enumerate(args):
        for v in args[i + 1:]:
            num = sp.numer(sp.together(u - v))
            if not num.is_polynomial(ALPHA):
                continue
            poly = sp.Poly(num, ALPHA)
            if poly.degree() not in (1, 2):
                continue
            for r in sp.roots(poly, multiple=True):
                if r.free_symbols or r in out or not (r.is_positive and r != 1):
                    continue
                points = sample_values(base.free_symbols - {ALPHA}, None, 3)
                if numeric_equal(base.subs(ALPHA, r), sp.Integer(0), points) is True:
                    out.append(r)
    return out


def _parametric_roots(base: sp.Expr) -> list[sp.Expr]:
    """The roots in alpha, with parameters in them, of the factors of ``base`` that are polynomials of
    degree 1 or 2 in alpha (where the order of a template's integrand changes type: its coefficient of
    x vanishes); other factors are left alone (solving them can take long, and sympy cannot place
    their roots)."""
    out = []
    for factor in sp.Mul.make_args(sp.factor_terms(base)):
        if not factor.has(ALPHA) or not factor.is_polynomial(ALPHA):
            continue
        poly = sp.Poly(factor, ALPHA)
        if poly.degree() not in (1, 2):
            continue
        out += [r for r in sp.roots(poly, multiple=True) if r.free_symbols]
    return out


def _admissible(order: sp.Expr, params) -> bool:
    """False when the assumptions or the domains show that ``order`` is never in (0, 1) u (1, oo)."""
    if order.is_real is False or decide(order, "nonpositive", params):
        return False
    return decide(order - 1, "zero", params) is not True


def exceptional_points(expr, pieces, x, symbols, params, seconds, log):
    points = []
    for a0 in singular_orders(expr, params):
        if a0.free_symbols:
            point = _parametric_point(a0, expr, pieces, x, symbols, params, seconds, log)
            if point is not None:
                points.append(point)
            continue
        try:
            lim = run_with_time_limit(sp.limit, expr, ALPHA, a0, seconds=seconds)
        except (StepTimeout, Exception) as exc:  # noqa: BLE001
            log.note(f"alpha = {a0}", f"limit not computed ({type(exc).__name__})")
            continue
        if lim.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Limit):
            continue
        lim = sp.simplify(lim)
        direct = direct_at(a0, pieces, x, seconds, log)
        if direct is None:
            log.note(f"alpha = {a0}", "removable singularity; value from the limit (direct derivation failed)")
            points.append(ExceptionalPoint(a0, lim))
            continue
        how = equivalent(lim, direct, sample_values(symbols, params, 3))
        if how:
            log.note(f"alpha = {a0}", f"removable singularity: the limit equals the direct derivation ({how} check)", lim)
            points.append(ExceptionalPoint(a0, lim))
        else:
            raise DerivationError(f"at alpha = {a0} the limit {lim} differs from the direct derivation {direct}")
    return tuple(points)


def _spread_points(symbols, params, n: int = 3):
    """Parameter points whose coordinates come from different typical values (the cross-checks' points
    give every parameter the same position in its range, b1 = b2 at all of them, where an order such as
    b1/(b1 + b2) is always 1/2)."""
    base = sample_values(symbols, params, n)
    ordered = sorted(symbols, key=lambda s: s.name)
    return [point_within_domains({s: base[(i + j) % n][s] for j, s in enumerate(ordered)}, params, i)
            for i in range(n)]


def _parametric_point(a0, expr, pieces, x, symbols, params, seconds, log):
    """The removable order ``a0`` (an expression in the parameters), or None with a note why not."""
    name = f"alpha = {sp.sstr(a0)}"
    direct = direct_at(a0, pieces, x, seconds, log)
    if direct is None or direct.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Integral, sp.Sum):
        log.note(name, "singular order in the parameters: not removable, or not derived there directly")
        return None
    checked = 0
    for point in _spread_points(symbols, params):
        order = a0.subs(point)
        if not (order.is_positive and order != 1):
            continue
        try:
            lim = run_with_time_limit(sp.limit, expr.subs(point), ALPHA, order, seconds=seconds)
        except (StepTimeout, Exception):  # noqa: BLE001 - a limit sympy cannot take checks nothing
            continue
        if lim.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Limit):
            # +oo next to the order there (outside the finiteness conditions): nothing to compare
            continue
        if numeric_equal(lim, direct.subs(point), [{}]) is not True:
            raise DerivationError(f"at alpha = {a0} (parameters {point}) the limit {lim} differs from the "
                                  f"direct derivation {direct}")
        checked += 1
    if not checked:
        log.note(name, "singular order in the parameters: the limit could not be compared at any parameter point")
        return None
    log.note(name, f"removable singularity at an order in the parameters: the direct derivation equals the exact "
                   f"limit at {checked} parameter point{'s' * (checked != 1)} (30 digits)", direct)
    return ExceptionalPoint(a0, direct)


def direct_at(a0, pieces, x, seconds, log):
    """D_{a0}(P||Q) derived with alpha fixed to the number a0."""
    total = sp.Integer(0)
    for piece in pieces:
        if is_zero(piece.P) or is_zero(piece.Q):
            if is_zero(piece.P) or a0 < 1:
                continue
            return sp.oo
        if piece.is_point:
            total += piece.P ** a0 * piece.Q ** (1 - a0)
            continue
        c0, coeffs = decompose(a0 * log_expand(piece.P) + (1 - a0) * log_expand(piece.Q), x)
        try:
            res = integrate_template(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds)
        except DerivationError:
            return None
        if len(res.cases) != 1:
            return None
        total += sp.exp(c0) * res.cases[0][0]
    return sp.simplify(sp.log(total) / (a0 - 1))
