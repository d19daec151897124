r"""The supremum of a divergence over a ball of shift vectors (a vector query's neighbouring inputs).

A mechanism releasing ``f(D) + noise`` for a vector query ``f`` with l_p sensitivity Δ has a pair
``(P_t, Q_t)`` for every shift ``t`` with ``||t||_p <= Δ`` (Dwork & Roth 2014, *The Algorithmic
Foundations of Differential Privacy*: the l1 sensitivity, Def. 3.1, calibrates the Laplace mechanism,
Thm. 3.6; the l2 sensitivity, Def. 3.8, the Gaussian mechanism, Thm. A.1). Its RDP is the supremum over
the ball (Mironov 2017, arXiv:1702.07476 v3, Def. 4: the bound holds for *all* neighbouring inputs):

.. math:: \varepsilon(\alpha) = \sup_{\|t\|_p \le \Delta} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr).

:func:`ball_supremum` takes it in closed form for ``D(alpha; t_1..t_d)`` when one of these arguments is
checked mechanically (never assumed), and returns None otherwise:

* **Quadratic form on the l2 ball.** ``D = c t^T M t`` with ``c > 0`` free of ``t`` and ``M`` a
  constant symmetric matrix: ``sup_{||t||_2 <= R} = c R^2 max(lambda_max(M), 0)``, attained at ``R v``
  for a unit eigenvector ``v`` (Rayleigh-Ritz: Horn & Johnson, *Matrix Analysis*, 2nd ed. 2013,
  Thm. 4.2.2). ``M = m I`` (isotropic): ``c m R^2``.
* **Convex function on a polytope ball.** The l1 ball is the convex hull of its ``2d`` vertices
  ``±R e_i``, the l_inf ball of its ``2^d`` corners; a convex function's supremum over the convex hull
  of a set is its supremum over the set (Rockafellar 1970, *Convex Analysis*, Thm. 32.2; attained at an
  extreme point of a polyhedral set, Cor. 32.3.2), so the supremum is the largest vertex value.
  Convexity is shown for a quadratic form with ``M`` positive semidefinite, or for a separable
  ``D = c_0 + sum_i f_i(|t_i|)`` with each ``f_i`` convex and non-decreasing on ``[0, oo)`` (then
  ``f_i(|t_i|)`` is convex: a convex non-decreasing function of the convex ``|t_i|``; Boyd &
  Vandenberghe 2004, *Convex Optimization*, Sec. 3.2.4).
* **Monotone separable function on the l_inf ball.** ``D = c_0 + sum_i f_i(|t_i|)`` with every ``f_i``
  non-decreasing: the coordinates range independently over ``[-R, R]``, so the supremum is
  ``c_0 + sum_i f_i(R)`` at the corner ``(R, ..., R)``.

Monotonicity is shown by :func:`rdpsym.derive.adjacency.nondecreasing`; convexity by :func:`convex`
(the derivative of the slope, term by term, with ``log`` of a sum of exponentials handled exactly).
:func:`numeric_ball_supremum` is the numeric fallback at given values: sampled boundary points and a
local pattern search, a lower estimate of the supremum, never a bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Mapping

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from ..specify.text.numbers import exact_number
from ..numeric.families import FamilySupremum, refine_in_ball
from ..specify.adjacency import AdjacentFamily, ShiftBall
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA
from .adjacency import NOT_SHOWN, FamilyAnalysis, nondecreasing
from .adjacency import _exp_split as _split
from .sign import decide, sign as decided_sign
from sympy.solvers.solveset import NonlinearError
from .regimes import ABOVE, BELOW
from .result import DivergenceResult, Provenance, Status, Step, StepName, expired_in
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["BallSupremum", "ball_supremum", "convex", "numeric_ball_supremum", "ball_family_supremum"]

#: the most corners of an l_inf ball whose values are compared (2^d of them)
MAX_CORNER_DIMENSION = 8


@dataclass(frozen=True)
class BallSupremum:
    """The supremum of an expression over a ball of shifts: ``value`` (closed form), ``argument`` (why,
    for the provenance) and ``at``: shift vectors among which it is attained (the largest value over
    them is the supremum); empty when the expression does not depend on the shifts."""

    value: sp.Expr
    argument: str
    at: tuple[tuple, ...] = ()


# --------------------------------------------------------------------------------------------------
# convexity in u > 0
# --------------------------------------------------------------------------------------------------
def _terms_nonneg(S: sp.Expr) -> bool:
    """``S = sum_i c_i exp(A_i) >= 0`` shown by grouping the terms of equal exponent: each group's
    coefficient non-negative."""
    groups: dict = {}
    for term in sp.Add.make_args(sp.expand(S)):
        c, A = _split(term)
        if A.is_real is not True:
            return False
        groups[A] = groups.get(A, sp.S.Zero) + c
    return all(decide(sp.cancel(sp.together(g)), "nonnegative") for g in groups.values())


def _second_derivative(e: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
    d2 = sign * sp.diff(e, u, 2)
    if _terms_nonneg(d2):
        return "its second derivative is a sum of non-negative terms"
    d = sp.simplify(d2)
    if decide(d, "nonnegative"):
        return f"its second derivative {sp.sstr(sign * d)} has the sign {'>=' if sign > 0 else '<='} 0"
    return None


def _log_convex(g: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
    r"""Why ``sign * log g`` is convex in ``u``: ``(log g)'' = (g g'' - g'^2) / g^2``. For
    ``g = sum_i c_i exp(a_i u + b_i)`` (``c_i``, ``a_i`` free of ``u``)
    ``g g'' - g'^2 = sum_{i<j} c_i c_j (a_i - a_j)^2 exp(A_i + A_j)``, of the sign ``sign`` when every
    ``sign c_i c_j (a_i - a_j)^2`` is non-negative; otherwise ``g g'' - g'^2`` is expanded and decided
    term by term."""
    terms = [_split(term) for term in sp.Add.make_args(g)]
    slopes = [sp.diff(A, u) for _, A in terms]
    if len(terms) > 1 and all(not c.has(u) for c, _ in terms) and all(not a.has(u) for a in slopes):
        pairs = [sign * terms[i][0] * terms[j][0] * (slopes[i] - slopes[j]) ** 2
                 for i in range(len(terms)) for j in range(i + 1, len(terms))]
        if all(decide(sp.factor(p), "nonnegative") for p in pairs):
            return (f"log of a sum of exponentials whose g g'' - g'^2 = sum_(i<j) c_i c_j (a_i - a_j)^2 "
                    f"exp(A_i + A_j) is {'>=' if sign > 0 else '<='} 0 term by term (g = {sp.sstr(g)})")
        return None
    N = sign * (g * sp.diff(g, u, 2) - sp.diff(g, u) ** 2)
    if _terms_nonneg(sp.powsimp(sp.expand(N), combine="exp")):
        return f"log of g with g g'' - g'^2 {'>=' if sign > 0 else '<='} 0 term by term (g = {sp.sstr(g)})"
    return None


def _convex(e: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
    """A reason why ``sign * e`` is convex in ``u > 0`` (``sign = -1``: ``e`` concave), or None."""
    if not e.has(u):
        return f"free of {u}"
    if isinstance(e, sp.Piecewise):
        if any(cond.has(u) for _, cond in e.args):
            return None
        whys = [_convex(branch, u, sign) for branch, _ in e.args]
        return "every branch: " + "; ".join(whys) if all(whys) else None
    if isinstance(e, sp.Add):
        whys = [_convex(a, u, sign) for a in e.args]
        if all(whys):
            return "every term: " + "; ".join(w for w in whys if not w.startswith("free of"))
        return _second_derivative(e, u, sign)
    if isinstance(e, sp.Mul):
        k, rest = e.as_independent(u, as_Add=False)
        s = decided_sign(k) if k != 1 else None
        if s == 1:
            return _convex(rest, u, sign)
        if s == -1:
            return _convex(rest, u, -sign)
    if isinstance(e, sp.log):
        why = _log_convex(e.args[0], u, sign)
        if why is not None:
            return why
    if isinstance(e, sp.exp) and sign > 0:
        why = _convex(e.args[0], u, 1)  # exp is convex and increasing: exp of a convex function is convex
        if why is not None:
            return f"exp of a convex function ({why})"
    return _second_derivative(e, u, sign)


def convex(expr: sp.Expr | None, u: sp.Symbol) -> str | None:
    """A reason why ``expr`` is convex in ``u > 0`` for every order alpha > 0 and every value of the other
    symbols allowed by their assumptions, or None when that is not shown.

    Structural (sums, positive multiples, exp of a convex function, Piecewise in alpha), with ``log g``
    decided by the sign of ``g g'' - g'^2`` term by term, down to second derivatives whose sign sympy
    decides. An expression in alpha not shown for alpha > 0 at once is tried in each regime
    (alpha = 1 + s, alpha = 1/(1 + v); :mod:`rdpsym.derive.regimes`). No time limit of its own.
    """
    if expr is None:
        return None
    if not expr.has(ALPHA):
        return _convex(expr, u, 1)
    # the regimes first: a factor 1/(alpha - 1) has a sign in each, and the structure then decides quickly
    whys = []
    for regime in (ABOVE, BELOW):
        w = _convex(expr.subs(ALPHA, regime.alpha_in_var), u, 1)
        if w is None:
            return _convex(expr, u, 1)
        whys.append(f"{regime.name}: {w}")
    return "; ".join(whys)


# --------------------------------------------------------------------------------------------------
# the arguments
# --------------------------------------------------------------------------------------------------
def _quadratic(expr: sp.Expr, ts: tuple, params=()) -> tuple[sp.Expr, sp.Matrix] | None:
    """``(c, M)`` with ``expr = c t^T M t``, ``c`` free of ``t`` and ``M`` a symmetric matrix free of ``t``
    (its entries may hold parameters: a correlation), normalised so that ``c > 0`` (the sign decided by the
    assumptions or the parameters' domains), or None."""
    try:
        poly = sp.Poly(sp.expand(expr), *ts)
    except sp.PolynomialError:
        return None
    if any(sum(m) != 2 for m in poly.monoms()):
        return None
    d = len(ts)
    A = sp.zeros(d, d)
    for monom, coeff in poly.terms():
        idx = [i for i, k in enumerate(monom) for _ in range(k)]
        i, j = idx
        if i == j:
            A[i, i] += coeff
        else:
            A[i, j] += coeff / 2
            A[j, i] += coeff / 2
    c = next(a for a in A if a != 0)
    M = A.applyfunc(lambda a: sp.cancel(a / c))
    if any(a.has(t) for a in M for t in ts):
        return None
    sign = decided_sign(c, [p for p in params if isinstance(p, Parameter)])
    if sign == -1:
        c, M = -c, -M
    return (c, M) if sign in (1, -1) else None


def _unit(v: sp.Matrix) -> tuple:
    n = sp.sqrt(sum(a**2 for a in v))
    return tuple(sp.radsimp(a / n) for a in v)


def _largest(values: list, params) -> sp.Expr:
    """Max of ``values`` with the arguments the parameters' domains show never larger dropped."""
    def beaten(i, v):
        # another value always at least as large drops v (a tie keeps the first of the two)
        return any(sign == 1 or (sign == 0 and j < i)
                   for j, w in enumerate(values) if j != i for sign in (decided_sign(w - v, params),))

    keep = [v for i, v in enumerate(values) if not beaten(i, v)]
    return sp.Max(*(keep or values[:1]))


def _quadratic_supremum(c, M, ts, ball: ShiftBall, params=()) -> BallSupremum | None:
    d, R = len(ts), ball.radius
    form = f"{sp.sstr(c)} t^T M t with M = {sp.sstr(M.tolist())}"
    if ball.norm == 2:
        if M == M[0, 0] * sp.eye(d):
            m = M[0, 0]
            grows = decide(m, "nonnegative", [p for p in params if isinstance(p, Parameter)])
            if grows is None:
                return None  # the sign of the isotropic factor is not decided: neither form is shown
            value, at = (c * m * R**2, ((R,) + (sp.S.Zero,) * (d - 1),)) if grows else (sp.S.Zero, ((sp.S.Zero,) * d,))
            return BallSupremum(value, f"{form} = {sp.sstr(c * m)} ||t||_2^2 (isotropic): the supremum over the "
                                       f"{ball} is {sp.sstr(value)} on its sphere", at)
        params = [p for p in params if isinstance(p, Parameter)]
        eigs = [sp.factor(e) for e in M.eigenvals()]
        top = _largest(eigs, params)
        if isinstance(top, sp.Max):
            # which eigenvalue is the largest depends on the parameters (the sign of a correlation): the
            # supremum is R^2 times their Max, attained along the eigenvector of whichever is largest
            if not all(decide(e, "nonnegative", params) for e in eigs):
                top = _largest([sp.S.Zero, *eigs], params)
            at = []
            for e in eigs:
                space = (M - e * sp.eye(d)).nullspace(simplify=True)
                if len(space) != 1:
                    return None
                at.append(tuple(R * a for a in _unit(space[0])))
            return BallSupremum(c * top * R**2, f"{form}: sup over the {ball} of t^T M t is R^2 lambda_max(M) = "
                                                f"{sp.sstr(top)} R^2 (Rayleigh-Ritz, Horn & Johnson 2013, Thm. "
                                                "4.2.2), at R times a unit eigenvector of the largest", tuple(at))
        sign = decided_sign(top, params)
        if sign in (-1, 0):
            return BallSupremum(sp.S.Zero, f"{form}, M negative semidefinite: the supremum is 0 at t = 0",
                                ((sp.S.Zero,) * d,))
        if sign is None:
            return None  # the largest eigenvalue's sign is not decided: neither form is shown
        v = (M - top * sp.eye(d)).nullspace()[0]
        at = (tuple(R * a for a in _unit(v)),)
        return BallSupremum(c * top * R**2, f"{form}: sup over the {ball} of t^T M t is R^2 lambda_max(M) = "
                                            f"{sp.sstr(top)} R^2 at R times a unit eigenvector (Rayleigh-Ritz, "
                                            "Horn & Johnson 2013, Thm. 4.2.2)", at)
    if not M.is_positive_semidefinite:
        return None
    if ball.norm is sp.oo and d > MAX_CORNER_DIMENSION:
        return None
    # t and -t have the same value: half the vertices
    vertices = [v for v in ball.vertices(d) if next(a for a in v if a != 0).could_extract_minus_sign() is False]
    return _vertex_max(c, [(v, (sp.Matrix(v).T * M * sp.Matrix(v))[0, 0]) for v in vertices], ball,
                       f"{form}, M positive semidefinite: convex in t")


def _vertex_max(c, values: list, ball: ShiftBall, why: str) -> BallSupremum:
    """The largest of ``c * value`` over the vertices (``values``: (vertex, value) pairs)."""
    distinct: dict = {}
    for v, val in values:
        key = next((k for k in distinct if sp.simplify(k - val) == 0), val)
        distinct.setdefault(key, []).append(v)
    best = sp.Max(*distinct)
    if not isinstance(best, sp.Max):
        at, value = tuple(distinct[next(k for k in distinct if sp.simplify(k - best) == 0)]), best
        how = "the largest vertex value"
    else:
        at, value = tuple(v for vs in distinct.values() for v in vs), best
        how = "the maximum of the vertex values"
    if len(distinct) == 1:
        how = "every vertex has the same value (symmetry across coordinates)"
    return BallSupremum(c * value, f"{why}; a convex function's supremum over the {ball} (the convex hull of its "
                                   f"vertices) is its largest vertex value (Rockafellar 1970, Thm. 32.2, "
                                   f"Cor. 32.3.2): {how}, {sp.sstr(c * value)}", at)


def _separable(expr: sp.Expr, ts: tuple, u: sp.Symbol) -> tuple[sp.Expr, list] | None:
    """``(c_0, [f_1(u), ..., f_d(u)])`` with ``expr = c_0 + sum_i f_i(|t_i|)``, or None."""
    const, parts = sp.S.Zero, [sp.S.Zero] * len(ts)
    for term in sp.Add.make_args(expr):
        used = [i for i, t in enumerate(ts) if term.has(t)]
        if not used:
            const += term
        elif len(used) == 1:
            parts[used[0]] += term
        else:
            return None
    fs = []
    for t, g in zip(ts, parts):
        f = g.subs(sp.Abs(t), u)
        if f.has(t):
            if sp.simplify(g - g.subs(t, -t)) != 0:
                return None  # not a function of |t_i|
            f = g.subs(t, u)
        fs.append(f)
    return const, fs


def _at_zero(f: sp.Expr, u: sp.Symbol) -> sp.Expr | None:
    """``f(0)``, which must be the limit from the right (``f(|t|)`` continuous at 0), or None."""
    f0 = f.subs(u, 0)
    if f0.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    lim = sp.limit(f, u, 0, "+")
    return sp.simplify(f0) if sp.simplify(lim - f0) == 0 else None


def _separable_supremum(expr, ts, ball: ShiftBall, params=()) -> BallSupremum | None:
    u = sp.Dummy("u", positive=True)
    found = _separable(expr, ts, u)
    if found is None:
        return None
    const, fs = found
    d, R = len(ts), ball.radius
    monotone = [nondecreasing(f, u) for f in fs]
    if not all(monotone):
        return None
    if ball.norm is sp.oo:
        value = const + sp.Add(*[f.subs(u, R) for f in fs])
        return BallSupremum(value, f"separable, sum_i f_i(|t_i|) with every f_i non-decreasing in |t_i| "
                                   f"({'; '.join(dict.fromkeys(monotone))}): each coordinate ranges over "
                                   f"[-{sp.sstr(R)}, {sp.sstr(R)}] independently in the {ball}, so the supremum "
                                   f"is sum_i f_i({sp.sstr(R)}) at the corner", ((R,) * d,))
    if ball.norm != 1:
        return None
    convexity = [convex(f, u) for f in fs]
    zeros = [_at_zero(f, u) for f in fs]
    if not all(convexity) or any(z is None for z in zeros):
        return None
    values = []
    for i in range(d):
        vertex = tuple(R if j == i else sp.S.Zero for j in range(d))
        values.append((vertex, const + fs[i].subs(u, R) + sp.Add(*[z for j, z in enumerate(zeros) if j != i])))
    why = (f"separable, sum_i f_i(|t_i|) with every f_i convex ({'; '.join(dict.fromkeys(convexity))}) and "
           f"non-decreasing on [0, oo), continuous at 0: convex in t")
    return _vertex_max(sp.S.One, values, ball, why)


def ball_supremum(expr: sp.Expr, shifts, norm, radius, params=(), *, seconds: float | None = None) -> BallSupremum | None:
    """The supremum of ``expr`` over the ball ``{t : ||t||_norm <= radius}`` of ``shifts``, in closed form
    with the argument (see the module docstring), or None when no argument is shown.

    ``shifts``: a tuple of distinct real Symbols; ``norm``: 1, 2 or ``oo``; ``radius``: a positive
    expression in the parameters (both as :class:`~rdpsym.specify.adjacency.ShiftBall` reads them);
    ``params``: :class:`~rdpsym.specify.params.Parameter` objects or symbols whose assumptions hold (the
    symbols carry them); ``seconds``: the time limit of each argument (default: the step limit). The
    expression must hold for every shift in the ball (the engine's contract: valid for every real
    shift). Raises :class:`~rdpsym._numbers.ArgumentError` naming the bad argument.
    """
    from .._timeout import check_seconds, default_step_seconds

    if not isinstance(expr, sp.Expr):
        raise ArgumentError("expr", "a sympy expression in the shifts", expr)
    ts = _shifts(shifts)
    ball = ShiftBall(norm, radius)
    if any(ball.radius.has(t) for t in ts):
        raise ArgumentError("radius", f"an expression free of the shifts {sp.sstr(ts)}", radius)
    for p in params:
        if not isinstance(p, (Parameter, sp.Symbol)):
            raise ArgumentError("params", "Parameter objects or sympy Symbols", p)
    limit = check_seconds(seconds) if seconds is not None else default_step_seconds()
    if not any(expr.has(t) for t in ts):
        return BallSupremum(expr, f"free of {sp.sstr(ts)}: the same value over the {ball}")
    if expr.has(sp.nan, sp.zoo):
        return None
    for argument in (_infinite_off_points, _quadratic_argument, _separable_supremum):
        try:
            found = run_with_time_limit(argument, expr, ts, ball, params, seconds=limit)
        except StepTimeout:
            found = None
        except (ValueError, TypeError, NotImplementedError, ZeroDivisionError, AttributeError, RecursionError):
            found = None  # sympy could not decide a step: this argument is not shown
        if found is not None:
            return found
    return None


def _point_conditions(cond, ts, params=()) -> bool:
    """True when ``cond`` holds on finitely many shift vectors only: a conjunction of equalities linear in
    the shifts whose matrix is invertible (its determinant's sign decided by the assumptions or the
    parameters' domains), or a disjunction of such."""
    if isinstance(cond, sp.Or):
        return all(_point_conditions(c, ts, params) for c in cond.args)
    parts = cond.args if isinstance(cond, sp.And) else (cond,)
    if not all(isinstance(c, sp.Eq) for c in parts):
        return False
    try:
        A, _ = sp.linear_eq_to_matrix([c.lhs - c.rhs for c in parts], list(ts))
    except (sp.PolynomialError, ValueError, NonlinearError):
        return False
    if A.rows < len(ts) or any(a.has(t) for a in A for t in ts):
        return False
    square = A if A.rows == len(ts) else A.T * A
    return decide(sp.factor(square.det()), "nonzero", [p for p in params if isinstance(p, Parameter)]) is True


def _infinite_off_points(expr, ts, ball, params=()):
    """``Piecewise((f, t = c), ..., (oo, True))``: +oo everywhere but at finitely many shifts (a shared
    covariance's D_inf: log P/Q is affine with a slope that vanishes only at t = 0). A ball of positive
    radius has infinitely many points, so the supremum is +oo, attained at a point off them."""
    if not isinstance(expr, sp.Piecewise) or expr.args[-1] != (sp.oo, sp.true):
        return None
    if not all(_point_conditions(cond, ts, params) for _, cond in expr.args[:-1]):
        return None
    # (R, 0, ..., 0) and (0, R, 0, ...) lie on the boundary of every l_p ball of radius R
    axes = [tuple(ball.radius if j == i else sp.S.Zero for j in range(len(ts))) for i in range(len(ts))]
    at = next((v for v in axes if all(cond.subs(dict(zip(ts, v))) is sp.false for _, cond in expr.args[:-1])), None)
    if at is None:
        return None
    return BallSupremum(sp.oo, f"+oo at every shift but finitely many points, and the {ball} (radius > 0) "
                               "has infinitely many: the supremum is +oo", (at,))


def _quadratic_argument(expr, ts, ball, params=()):
    found = _quadratic(expr, ts, params)
    return None if found is None else _quadratic_supremum(*found, ts, ball, params)


def _shifts(shifts) -> tuple:
    ts = tuple(shifts) if isinstance(shifts, (tuple, list)) else None
    if not ts or any(not isinstance(t, sp.Symbol) or t.is_real is not True for t in ts) or len(set(ts)) != len(ts):
        raise ArgumentError("shifts", "a non-empty tuple of distinct real Symbols", shifts)
    return ts


# --------------------------------------------------------------------------------------------------
# the numeric supremum
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Value:
    value: Any
    error: Any = mpmath.mpf(0)
    converged: bool = True


def numeric_ball_supremum(expr: sp.Expr, shifts, norm, radius, values: Mapping, *, dps: int = 30,
                          interior: int = 12, refine: int = 40) -> FamilySupremum:
    """The largest value of ``expr`` found over the ball at parameter ``values`` (symbol or name ->
    number): the boundary points of :meth:`~rdpsym.specify.adjacency.ShiftBall.points` (axes, diagonals,
    ``interior`` pseudo-random ones), then ``refine`` steps of
    :func:`~rdpsym.numeric.families.refine_in_ball` from the best. A numeric maximisation: a lower
    estimate of the supremum, never a bound (``note`` says so)."""
    if not isinstance(expr, sp.Expr):
        raise ArgumentError("expr", "a sympy expression in the shifts", expr)
    ts = _shifts(shifts)
    ball = ShiftBall(norm, radius)
    if not isinstance(values, Mapping):
        raise ArgumentError("values", "a dict of parameter values", values)
    by_name = {s.name: s for s in expr.free_symbols | ball.free_symbols}
    subs = {}
    for key, v in values.items():
        sym = key if isinstance(key, sp.Symbol) else by_name.get(key)
        if sym is not None:
            subs[sym] = exact_number(v, f"values[{getattr(sym, 'name', key)!r}]", finite=True, real=True)
    e, R = expr.subs(subs), ball.radius.subs(subs)
    missing = (e.free_symbols - set(ts)) | R.free_symbols
    if missing:
        raise ArgumentError("values", f"values for {sorted(map(str, missing))}", values)
    evaluations: list = []

    def at(point):
        val = sp.N(e.subs(dict(zip(ts, point))), dps + 10)
        v = mpmath.mpf(val) if val.is_real else mpmath.mpf("-inf")
        evaluations.append((tuple(point), "expr", _Value(v)))
        return v

    with mpmath.workdps(dps + 10):
        points = ball.points(len(ts), interior, radius=R)
        scan = [at(p) for p in points]
        i = max(range(len(points)), key=lambda j: scan[j])
        if refine:
            refine_in_ball(at, points[i], scan[i], ball, mpmath.mpf(sp.N(R, dps + 10)), refine)
        top = max(evaluations, key=lambda r: r[2].value)
    note = (f"numeric maximisation over the {ball}: {len(points)} sampled shifts and {refine} pattern-search "
            f"steps, {len(evaluations)} evaluations; a lower estimate of the supremum")
    return FamilySupremum(top[2].value, mpmath.mpf(0), True, top[0], tuple(evaluations), note)


# --------------------------------------------------------------------------------------------------
# a family over a ball
# --------------------------------------------------------------------------------------------------
def _sup_result(r: DivergenceResult, ts, ball, params, seconds, label) -> tuple[DivergenceResult | None, str, list]:
    """``r`` with every value replaced by its supremum over the ball, the arguments, the maximisers."""
    if r.conditions.has(*ts) or any(p.condition.has(*ts) for p in r.exceptional_points):
        return None, "its finiteness conditions depend on the shifts", []
    whys, at = [], []

    def sup(name, e):
        if e is None:
            return None
        found = ball_supremum(e, ts, ball.norm, ball.radius, params, seconds=seconds)
        if found is None:
            raise LookupError(f"{name} = {sp.sstr(e)}: no argument for its supremum over the {ball} is shown")
        whys.append(f"{name}: {found.argument}")
        at.extend(found.at)
        return found.value

    try:
        expr, kl, dinf = sup("D_alpha", r.expr), sup("KL", r.kl), sup("D_inf", r.max_divergence)
        points = tuple(replace(p, value=sup(f"the value at alpha = {sp.sstr(p.alpha)}", p.value))
                       for p in r.exceptional_points)
    except LookupError as exc:
        return None, str(exc), []
    symbols = tuple(s for s in r.symbols if s not in ts)
    out = replace(r, expr=expr, kl=kl, max_divergence=dinf, exceptional_points=points, symbols=symbols,
                  domains=tuple((s, dom) for s, dom in r.domains if s not in ts), label=label)
    return out, "; ".join(whys), at


def _placeholder(family: AdjacentFamily, why: str, derived: list) -> DivergenceResult:
    worst = Status.worst([Status.NUMERIC_ONLY] + [r.status for r in derived])
    steps = tuple(replace(s, name=f"{r.label}: {s.name}") for r in derived for s in r.provenance.steps)
    first = derived[0].provenance if derived else Provenance()
    return DivergenceResult(expr=None, status=worst, reason=f"{NOT_SHOWN}: {why}",
                            provenance=Provenance(steps, first.inputs, first.versions, expired=expired_in(derived)),
                            label=f"sup over {sp.sstr(family.shift)} in the {family.over} [{family.label}]")


def ball_family_supremum(family: AdjacentFamily, x, support: sp.Set, params: tuple[Parameter, ...],
                         derive_pair, seconds: float) -> FamilyAnalysis:
    """The supremum of a vector family's divergences over its :class:`ShiftBall` (Mironov 2017, Def. 4).

    The pair is derived with the shifts as real parameters (``derive_pair(P, Q, label, params)``, both
    directions, the engine called with the tuple of output variables ``x``); each value of each result
    (general order, KL, D_inf, exceptional orders) then gets :func:`ball_supremum`, recorded in the
    provenance, and the members are the pairs at the shift vectors where the suprema are attained.
    An engine that cannot derive the pair (a tuple of variables before it accepts them), a derivation not
    in closed form, or an expression with no argument shown gives one ``numeric_only`` placeholder with
    the reason "supremum over t not shown symbolically".
    """
    ts, ball = family.shift, family.over
    steps: list[Step] = []

    def not_shown(why: str, derived=()) -> FamilyAnalysis:
        steps.append(Step(StepName.SUPREMUM_OVER_T, f"[{family.label}] {NOT_SHOWN}: {why}"))
        return FamilyAnalysis(family, False, (_placeholder(family, why, list(derived)),), (), tuple(steps), why)

    shift_params = tuple(Parameter(t.name, t, sp.S.Reals, (-1.0, 1.0), sp.latex(t),
                                   f"coordinate {i + 1} of the shift of family [{family.label}]")
                         for i, t in enumerate(ts))
    try:
        derived, notes = derive_pair(family.P, family.Q, f"{family.label}; shift {sp.sstr(ts)}", params + shift_params)
    except (ValueError, TypeError, NotImplementedError) as exc:
        return not_shown(f"the divergence in the variables {sp.sstr(x)} was not derived ({type(exc).__name__}: {exc})")
    steps.extend(notes)
    bad = [r for r in derived if r.status not in (Status.CLOSED_FORM, Status.BOUND)]
    if bad:
        return not_shown(f"the divergence was not derived in closed form ({bad[0].status}: {bad[0].reason})", derived)
    results, maximisers = [], []
    for r in derived:
        started = time.perf_counter()
        out, why, at = _sup_result(r, ts, ball, params, seconds, f"{r.label} sup over the {ball}")
        if out is None:
            return not_shown(f"{r.label}: {why}", derived)
        steps.append(Step(StepName.SUPREMUM_OVER_T, f"[{family.label}] {r.label} over the {ball} (Mironov 2017, Def. 4: "
                                              f"every neighbour): {why}", time.perf_counter() - started))
        results.append(out)
        maximisers.extend(at)
    if not maximisers:  # nothing depends on the shifts: any member stands for the family
        maximisers = [(ball.radius,) + (sp.S.Zero,) * (len(ts) - 1)]
    members = tuple(family.member(v) for v in dict.fromkeys(maximisers))
    return FamilyAnalysis(family, True, tuple(results), members, tuple(steps))
