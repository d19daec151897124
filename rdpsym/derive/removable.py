"""Removable (exceptional) orders: where the general expression is singular but the divergence is not.

The singular orders of the expression are found, the divergence is derived there directly with alpha
fixed to the number, and an order is kept when its value equals the limit of the expression (e.g. Laplace
at alpha = 1/2, Mironov 2017, Prop. 6); a disagreement is a :class:`DerivationError`.
"""

from __future__ import annotations

import sympy as sp

from ..symbols import alpha as ALPHA
from .crosscheck import equivalent, is_zero, sample_values
from .pieces import DerivationError
from .result import ExceptionalPoint
from .template import decompose, integrate_template, log_expand
from .timeout import StepTimeout, run_with_time_limit

__all__ = ["singular_orders", "exceptional_points", "direct_at"]


def singular_orders(expr: sp.Expr) -> list[sp.Expr]:
    found = set()
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
    return sorted(found, key=lambda r: float(r))


def exceptional_points(expr, pieces, x, symbols, params, seconds, log):
    points = []
    for a0 in singular_orders(expr):
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
