"""The orders alpha = 1 and alpha = oo, derived directly:

    D_1 = KL(P||Q) = E_P[log P/Q],      D_oo = ess sup over {P > 0} of log P/Q      (Mironov 2017, Def. 3).

When E_P[log P/Q] is not integrated (a binomial sum over [0, n]) the KL is taken as lim_{alpha -> 1-} D_alpha
= d/dalpha log Z at 1 (:func:`kl_from_below`), checked at 100 digits.
"""

from __future__ import annotations

from dataclasses import replace

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..symbols import alpha as ALPHA
from .crosscheck import is_zero, numeric_equal
from .extremes import maximum
from .forms import compact
from .pieces import DerivationError, Piece
from .sign import sign
from .template import decompose, log_expand, mixture_log
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["kl_divergence", "kl_from_below", "max_divergence"]


def _log_ratios(pieces):
    """``[(piece, log P - log Q)]`` over the pieces where P > 0, or ``None`` when Q = 0 on one of them
    (then P is not absolutely continuous with respect to Q, and KL = D_inf = +oo)."""
    out = []
    for piece in pieces:
        if is_zero(piece.P):
            continue
        if is_zero(piece.Q):
            return None
        out.append((piece, sp.expand(log_expand(piece.P) - log_expand(piece.Q))))
    return out


def kl_divergence(pieces, x, seconds, log) -> sp.Expr:
    """KL = E_P[log P/Q] = sum over pieces of ∫ P (log P - log Q)."""
    ratios = _log_ratios(pieces)
    if ratios is None:
        return sp.oo
    total = sp.Integer(0)
    for piece, g in ratios:
        if piece.is_point:
            total += piece.P * g
            continue
        mixture = mixture_log(g, x)
        if mixture is not None and (not piece.discrete or piece.lo.is_infinite or piece.hi.is_infinite):
            # E_P[log S] for a mixture S has no closed form in general; say so instead of timing out
            raise DerivationError(f"log P/Q contains {sp.sstr(mixture)}, the log of a mixture, on {piece.describe()}")
        integrand = sp.expand(piece.P * g)
        if piece.discrete:
            fn = lambda: _sum_piece(integrand, x, piece.lo, piece.hi)  # noqa: E731
        else:
            fn = lambda: sp.integrate(integrand, (x, piece.lo, piece.hi), conds="none")  # noqa: E731
        value = log.timed(f"KL piece {piece.describe()}", fn, seconds=seconds,
                          detail=lambda v: "E_P[log P/Q] " + ("summed" if piece.discrete else "integrated"))
        if value.has(sp.Integral, sp.Sum):
            raise DerivationError(f"KL: sympy left the integral over {piece.describe()} unevaluated")
        # the piece, its integrand P log(P/Q) and its value, for a report's derivation
        log.steps[-1] = replace(log.steps[-1], expr=sp.Tuple(piece.lo, piece.hi, piece.P, piece.Q, value,
                                                             sp.true if piece.discrete else sp.false))
        total += value
    return total


def kl_from_below(expr, points, seconds) -> sp.Expr:
    """KL = lim_{alpha -> 1-} D_alpha, from the general form on (0, 1).

    D_alpha is left-continuous at 1 for every pair (van Erven & Harremoës 2014, Thm. 5), and for
    alpha < 1 the form is (1/(alpha-1)) log Z(alpha) with Z(1) = 1, so the limit is the derivative
    d/dalpha log Z at 1 (the mean of the sufficient statistic log P/Q under P: the exponential-family
    identity E[T] = grad log-normaliser). Used only when E_P[log P/Q] itself was not integrated
    (e.g. a binomial sum over [0, n]). The derivative is accepted only if log Z(1) = 0 and the form
    at alpha = 1 - 10**-30 agrees with it to 12 digits at every sample point (100-digit arithmetic).
    """
    below = expr
    if isinstance(expr, sp.Piecewise):
        below = expr.args[0][0] if expr.args[0][1] == (ALPHA < 1) else None
    if below is None or below.has(sp.oo, sp.zoo, sp.nan):
        raise DerivationError("no general form on (0, 1)")
    logZ = (ALPHA - 1) * below
    if numeric_equal(logZ.subs(ALPHA, 1), sp.Integer(0), points) is not True:
        raise DerivationError("log Z(1) is not 0")
    candidate = sp.diff(logZ, ALPHA).subs(ALPHA, 1)
    candidate = compact(sp.simplify(candidate), points, seconds)
    if candidate.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Derivative, sp.Subs):
        raise DerivationError(f"d/dalpha log Z at 1 is not a finite closed form: {candidate}")
    near = sp.Float(1 - sp.Rational(1, 10**30), 130)
    for point in points:
        with mpmath.workdps(120):
            g = sp.N(below.subs(point).subs(ALPHA, near), 100)
            c = sp.N(candidate.subs(point), 100)
        if not (g.is_real and c.is_real and g.is_number and c.is_number) or abs(g - c) > sp.Float(10) ** -12 * max(1, abs(c)):
            raise DerivationError(f"the form next to alpha = 1 ({g}) differs from d/dalpha log Z ({c}) at {point}")
    return candidate


def _sup_candidates(g, x, piece: Piece, seconds):
    """Values whose maximum is sup g on the piece: limits at the ends and values at critical points."""
    if not g.has(x):
        return [g]
    candidates = []
    lo, hi = piece.lo, piece.hi
    for end, direction in ((lo, "+"), (hi, "-")):
        if end.is_infinite:
            candidates.append(run_with_time_limit(sp.limit, g, x, end, seconds=seconds))
        elif piece.discrete:
            candidates.append(g.subs(x, end))
        else:
            candidates.append(run_with_time_limit(sp.limit, g, x, end, direction, seconds=seconds))
    crit = run_with_time_limit(sp.solveset, sp.diff(g, x), x, sp.Interval.open(lo, hi), seconds=seconds)
    if isinstance(crit, sp.FiniteSet):
        for c in crit:
            if piece.discrete:
                candidates += [g.subs(x, sp.floor(c)), g.subs(x, sp.ceiling(c))]
            else:
                candidates.append(g.subs(x, c))
    elif isinstance(crit, sp.ConditionSet) or not (crit is sp.S.EmptySet or isinstance(crit, sp.FiniteSet)):
        raise DerivationError(f"D_inf: cannot locate the critical points of log P/Q on {piece.describe()}")
    for c in candidates:
        if c.has(sp.nan, sp.zoo, sp.AccumBounds, sp.Limit, sp.sign):
            raise DerivationError(f"D_inf: undecided limit or value {c} on {piece.describe()}")
    return candidates


def _sum_piece(integrand, x, lo, hi):
    """Sum over an integer range through the template's shift-and-ratio rewriting (geometric forms)."""
    from .template import integrate_once

    got = integrate_once(integrand, x, lo, hi, True)
    if got is None:
        return sp.Sum(integrand, (x, lo, hi))
    value, cond = got
    if cond is not sp.true:
        return sp.Piecewise((value, cond), (sp.Sum(integrand, (x, lo, hi)), True))
    return value


def _sup_on_piece(g, x, piece: Piece, seconds, max_unknown: int = 2):
    """sup g on the piece; coefficients of undecided sign are case-split (negative, positive, zero).

    As in the template, g = c0 + sum_j c_j T_j(x) is rewritten with fresh signed symbols k_j for the
    coefficients c_j, so that limits and critical points are taken with known signs; the cases
    become a Piecewise in the parameters.
    """
    if not g.has(x):
        return g
    c0, coeffs = decompose(g, x)
    known, unknown = {}, []
    for T, c in coeffs.items():
        sgn = None if c.is_number else sign(c)
        if c.is_number:
            known[T] = c
        elif sgn == 1:
            known[T] = sp.Dummy("k", positive=True)
        elif sgn == -1:
            known[T] = sp.Dummy("k", negative=True)
        else:
            unknown.append(T)
    if len(unknown) > max_unknown:
        raise DerivationError(f"D_inf: {len(unknown)} coefficients of undecided sign on {piece.describe()}")
    back = {k: coeffs[T] for T, k in known.items() if isinstance(k, sp.Dummy)}
    cases = []
    import itertools

    for signs in itertools.product((-1, 1, 0), repeat=len(unknown)):
        symbols = dict(known)
        conds = []
        for T, sgn in zip(unknown, signs):
            if sgn == 0:
                symbols[T] = sp.Integer(0)
                conds.append(sp.Eq(coeffs[T], 0))
            else:
                symbols[T] = sp.Dummy("k", negative=True) if sgn < 0 else sp.Dummy("k", positive=True)
                conds.append(coeffs[T] < 0 if sgn < 0 else coeffs[T] > 0)
        g_case = c0 + sp.Add(*[k * T for T, k in symbols.items()])
        cands = _sup_candidates(g_case, x, piece, seconds)
        sub = dict(back)
        sub.update({symbols[T]: coeffs[T] for T in unknown if isinstance(symbols[T], sp.Dummy)})
        value = sp.oo if any(c == sp.oo for c in cands) else sp.Max(*cands)
        cases.append((value.subs(sub), sp.And(*conds)))
    if len(cases) == 1:
        return cases[0][0]
    # the all-zero case is last and holds otherwise
    *first, last = cases
    merged = []
    for value, cond in first:
        if value == last[0]:
            continue
        for entry in merged:
            if entry[0] == value:
                entry[1] = sp.Or(entry[1], cond)
                break
        else:
            merged.append([value, cond])
    return sp.Piecewise(*[(v, c) for v, c in merged], (last[0], True))


def max_divergence(pieces, x, seconds, log) -> sp.Expr:
    """D_inf = ess sup over {P > 0} of log P/Q (Mironov 2017, Def. 3 and Table II)."""
    ratios = _log_ratios(pieces)
    if ratios is None:
        return sp.oo
    sups = [_sup_on_piece(g, x, piece, seconds) for piece, g in ratios]
    if any(c == sp.oo for c in sups):
        return sp.oo
    value = maximum(sups)
    try:
        return run_with_time_limit(sp.simplify, value, seconds=seconds)
    except (StepTimeout, *SYMBOLIC_ERRORS):
        return value
