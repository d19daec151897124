"""The general order: ∫ P^alpha Q^(1-alpha) on every piece through the exponential-family template, in both
regimes of alpha, and the divergence (1/(alpha-1)) log of their sum in its chosen form."""

from __future__ import annotations

import time

import sympy as sp

from .._timeout import work_clock
from ..symbols import alpha as ALPHA
from .crosscheck import equivalent, is_zero, sample_values
from .forms import compact, condition_in_alpha, definition_shape, in_alpha
from .pieces import Piece
from .regimes import ABOVE, BELOW, Regime
from .result import Step
from .steplog import StepLog
from .template import decompose, erfc_form, integrate_template, log_expand

__all__ = ["regime_integral", "general_order", "cosmetic_seconds"]


def regime_integral(pieces: list[Piece], x, regime: Regime, seconds: float, log: StepLog):
    """∫ P^alpha Q^(1-alpha) over all pieces in one regime: (value, condition) or 'infinite'."""
    a = regime.alpha_in_var
    total = sp.Integer(0)
    conditions = []
    for piece in pieces:
        p_zero, q_zero = is_zero(piece.P), is_zero(piece.Q)
        if p_zero or (q_zero and regime is BELOW):
            continue
        if q_zero:
            log.note(f"piece {piece.describe()}", "P > 0 where Q = 0: the divergence is +oo for alpha >= 1")
            return "infinite"
        if piece.is_point:
            term = piece.P ** a * piece.Q ** (1 - a)
            # the atom's term, in alpha, for a report's derivation (rdpsym.report.latex.derivation_latex)
            log.note(f"piece {piece.describe()}", f"{regime.name}: P^alpha Q^(1-alpha) at the atom",
                     _record(piece, term, regime))
            total += term
            continue
        L = a * log_expand(piece.P) + (1 - a) * log_expand(piece.Q)
        c0, coeffs = decompose(L, x)
        start = time.perf_counter()
        res = integrate_template(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds)
        detail = (
            f"{regime.name}: integrand exp({sp.sstr(c0)} + "
            + " + ".join(f"({sp.sstr(c)})*{sp.sstr(T)}" for T, c in coeffs.items())
            + f"); {'summed' if piece.discrete else 'integrated'} over {piece.describe()}"
            + (f"; {'; '.join(res.notes)}" if res.notes else "")
        )
        if not res.cases:
            log.steps.append(Step(f"piece {piece.describe()}", detail, time.perf_counter() - start))
            return "infinite"
        if len(res.cases) == 1:
            value, cond = res.cases[0]
        else:
            value = sp.Piecewise(*res.cases)
            cond = res.condition
        log.steps.append(Step(f"piece {piece.describe()}", detail, time.perf_counter() - start,
                              _record(piece, sp.exp(c0) * value, regime)))
        total += sp.exp(c0) * value
        conditions.append(cond)
    if is_zero(total):
        # no piece where both P and Q are positive: ∫ P^alpha Q^(1-alpha) = 0, and D_alpha =
        # log(0)/(alpha - 1) = +oo for alpha in (0, 1) too (Mironov 2017, Def. 3; P and Q are mutually
        # singular), never log(0) = zoo in the form
        log.note("overlap", f"{regime.name}: P and Q are never positive together (∫ P^alpha Q^(1-alpha) = 0): "
                            "the divergence is +oo")
        return "infinite"
    return total, sp.And(*conditions)


def _record(piece: Piece, value: sp.Expr, regime: Regime) -> sp.Tuple:
    """``(lo, hi, P, Q, value, discrete)`` of one piece's integral, the value in alpha: what a report
    shows of the step (the piece, the integrand P^alpha Q^(1-alpha) and its integral)."""
    return sp.Tuple(piece.lo, piece.hi, piece.P, piece.Q, value.subs(regime.var, regime.var_in_alpha),
                    sp.true if piece.discrete else sp.false)


def cosmetic_seconds(seconds: float, deadline: float | None) -> float:
    """The time limit of a step that only rewrites a result already found (simplifying it, or giving it
    the definition's shape): at most an eighth of what is left before ``deadline`` (a
    :func:`~rdpsym._timeout.work_clock` value: work, never wall-clock time), so that a derivation near the end of its time budget keeps its result
    in a longer form rather than losing it. Such a step falls back to the form it was given."""
    if deadline is None:
        return seconds
    return min(seconds, max(0.25, (deadline - work_clock()) / 8))


def general_order(pieces, x, symbols, params, seconds, log, deadline=None):
    """(expr, conditions) for alpha in (0,1) u (1,oo); raises DerivationError if not derivable.

    ``deadline`` (a :func:`~rdpsym._timeout.work_clock` value) bounds the simplification steps, see
    :func:`cosmetic_seconds`; the integrals keep ``seconds``."""
    points = sample_values(symbols, params, 3)
    forms = {}
    for regime in (ABOVE, BELOW):
        got = regime_integral(pieces, x, regime, seconds, log)
        if got == "infinite":
            forms[regime.name] = (sp.oo, sp.true)
            continue
        integral, cond = got
        D = sp.log(integral) / (regime.alpha_in_var - 1)
        var_points = [{**p, regime.var: sp.Rational(7, 10) + i} for i, p in enumerate(points)]
        D = log.timed(f"simplify ({regime.name})", compact, D, var_points, cosmetic_seconds(seconds, deadline),
                      detail=lambda e: f"kept {sp.count_ops(e)} operations")
        alpha_points = [{**{k: v for k, v in p.items() if k != regime.var}, ALPHA: regime.alpha_in_var.subs(regime.var, p[regime.var])}
                        for p in var_points]
        D_alpha = in_alpha(D, regime, alpha_points, cosmetic_seconds(seconds, deadline))
        D_alpha = definition_shape(integral, D_alpha, regime, alpha_points, cosmetic_seconds(seconds, deadline), log)
        D_alpha = erfc_form(D_alpha)
        # the sum of the pieces and the divergence it gives, in alpha, for a report's derivation
        log.note(f"sum ({regime.name})", "Z = the sum of the pieces' integrals; D_alpha = log(Z)/(alpha - 1)",
                 sp.Tuple(integral.subs(regime.var, regime.var_in_alpha), D_alpha))
        forms[regime.name] = (D_alpha, condition_in_alpha(cond, regime))
    above, cond_above = forms[ABOVE.name]
    below, cond_below = forms[BELOW.name]
    if above == sp.oo:
        expr = sp.Piecewise((below, ALPHA < 1), (sp.oo, True))
        return expr, sp.And(cond_below) if cond_below is not sp.true else sp.true
    # the form for alpha > 1 serves for all orders if it equals the other one on (0, 1), where that
    # one is the derivation (the form for alpha < 1 need not even be real beyond 1)
    alpha_points = [{**p, ALPHA: a} for p, a in zip(points, (sp.Rational(3, 10), sp.Rational(1, 2), sp.Rational(4, 5)))]
    same = equivalent(above, below, alpha_points)
    if same:
        log.note("regimes", f"the forms for alpha < 1 and alpha > 1 agree ({same} check)")
        expr = above
        if cond_above == cond_below:
            cond = cond_above
        else:
            cond = sp.Or(sp.And(ALPHA < 1, cond_below), sp.And(ALPHA > 1, cond_above))
    else:
        log.note("regimes", "the forms for alpha < 1 and alpha > 1 differ: Piecewise in alpha")
        expr = sp.Piecewise((below, ALPHA < 1), (above, True))
        cond = sp.Or(sp.And(ALPHA < 1, cond_below), sp.And(ALPHA > 1, cond_above))
    return expr, cond
