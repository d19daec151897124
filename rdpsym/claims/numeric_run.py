r"""A claim about a numeric curve: a target without a closed form for the order the claim is about.

The divergence at a point is the result's certified value (:meth:`DivergenceResult.evaluate_with_error`:
an exact piece, or the numeric path on the densities with its error estimate ``e``). With ``t`` that
value, ``c`` the claim's value (exact ``evalf``, or the callable) and ``tol = 10^-digits * scale`` (the
scale of :func:`rdpsym.claims.point.violation`), a point

* **violates** the relation when it fails by more than ``tol + e`` whatever the true divergence in
  ``[t - e, t + e]`` is (``<=``: ``t - e > c + tol``; ``==``: ``|t - c| > tol + e``);
* **agrees** when it holds with the whole interval (``<=``: ``t + e <= c + tol``; ``==``:
  ``|t - c| + e <= tol``);
* is **undecided** otherwise, or when a side has no value (the evaluation raised, did not converge or
  timed out): such a point counts against the claim.

A violation is a refutation only after the divergence there is recomputed by the independent reference
method (:mod:`rdpsym.numeric.reference`) and violates too, and P and Q are shown to be distributions
there. ``confirmed`` needs every point of the grid compared and agreeing, and at least
:data:`~rdpsym.claims.run.MIN_POINTS_PER_REGIME` points in every alpha regime the range reaches. It is
earned at the compared points only: a numeric curve has no certified pass between them, and the
evidence says so. Nothing here is ever ``proved``.

The grid is smaller than for a closed form (a point costs a quadrature, not a compiled expression):
:data:`NUMERIC_ALPHAS` and two typical values plus the edge values of each free parameter, capped at
:data:`MAX_POINTS`. Every point of the grid is evaluated, whatever the machine's speed: the budget is that
count of points. Each point's divergence runs under a hang guard (:data:`POINT_GUARD_SECONDS`) and the
whole grid under another (:data:`GRID_GUARD_SECONDS`), both far above the typical time; a point whose
guard fired, or that a fired grid guard left unevaluated, counts against the claim, and the evidence
names the guard.
"""

from __future__ import annotations

import time

import mpmath
import sympy as sp

from ..symbols import alpha as ALPHA
from .attest import attest_numeric
from .guard import HangGuardFired
from .point import Evaluator
from .run import MIN_POINTS_PER_REGIME, REGIMES, point_product, regime_of, required_regimes
from .search import case_boundaries, parameter_grid
from .verdict import Counterexample, Verdict, format_number, format_values

__all__ = ["check_numeric_claim", "NUMERIC_ALPHAS", "MAX_POINTS", "POINT_GUARD_SECONDS", "GRID_GUARD_SECONDS"]

#: orders of the grid, by regime: (0, 1), near 1, moderate, large
NUMERIC_ALPHAS = tuple(sp.Rational(a) for a in ("1/10", "1/2", "9/10", "1.000001", "1.01", "3/2", "2", "5", "32",
                                                "100", "1000", "1000000"))
#: grid points at most (an even subsample of the product beyond it)
MAX_POINTS = 120
#: hang guards: one point's divergence (typically well under 1 s, up to 20 s on an infinite lattice; its
#: independent recomputation gets twice as long), and the whole grid (typically a few minutes at most)
POINT_GUARD_SECONDS, GRID_GUARD_SECONDS = 300.0, 3600.0


def _alphas(lo, hi, cases=()):
    inside = list(dict.fromkeys(a for a in list(NUMERIC_ALPHAS) + case_boundaries(cases, ALPHA)
                                if (a > lo) is sp.true and (a < hi) is sp.true))
    if len(inside) < 4 and hi != sp.oo:
        lo_r, hi_r = sp.Rational(lo), sp.Rational(hi)
        inside = sorted(set(inside) | {lo_r + (hi_r - lo_r) * sp.Rational(k, 8) for k in range(1, 8)})
    return inside


def _grid(alphas, free, ends=False, cases=()):
    """The grid points, typical parameter values (two each) at every order first, then the edge values
    (tiny and huge scales; with ``ends``, the closed ends of the domains; the claim's case boundaries):
    a refutation at typical values needs no time spent at the edges."""
    typical = [list(p.typical_values(2)) for p in free]
    everything = [list(dict.fromkeys(t + parameter_grid(p, ends=ends, cases=cases))) for t, p in zip(typical, free)]
    first = point_product(alphas, free, typical, limit=MAX_POINTS)
    seen = {(a, tuple(sorted(v.items()))) for a, v in first}
    rest = [pt for pt in point_product(alphas, free, everything, limit=10 * MAX_POINTS)
            if (pt[0], tuple(sorted(pt[1].items()))) not in seen]
    if len(first) + len(rest) > MAX_POINTS:
        step = len(rest) / max(1, MAX_POINTS - len(first))
        rest = [rest[int(i * step)] for i in range(max(0, MAX_POINTS - len(first)))]
    return first + rest


def _decide(relation, t, e, c, dps, tol):
    """"violates", "agrees" or "undecided", and the violation's size (relative), for divergence t +- e
    and the relative tolerance ``tol``."""
    if t is None or c is None or not isinstance(c, mpmath.mpf):
        return "undecided", None
    if mpmath.isinf(t) or mpmath.isinf(c):
        if t == c:
            return "agrees", mpmath.mpf(0)
        fails = {"==": True, "<=": t > c, ">=": c > t}[relation]
        return ("violates", mpmath.inf) if fails else ("agrees", -mpmath.inf)
    scale = max(abs(t), abs(c), mpmath.mpf(10) ** (-int(0.4 * dps)))
    if relation == "==":
        worst, best = abs(t - c) + e, abs(t - c) - e
    elif relation == "<=":
        worst, best = t + e - c, t - e - c
    else:
        worst, best = c - (t - e), c - (t + e)
    return ("agrees" if worst <= 0 or worst / scale <= tol else
            "violates" if best / scale > tol else "undecided"), best / scale


def check_numeric_claim(tgt, c, relation, order, fixed, free, alpha_range, digits, dps, independent):
    """The verdict fields (as :class:`~rdpsym.claims.verdict.ClaimVerdict` keywords) for a claim about
    a numeric curve (module docstring)."""
    lo, hi = alpha_range
    ev = Evaluator(tgt, c, order, fixed, dps, relation)
    tol = mpmath.mpf(10) ** (-digits)
    truth_dps = max(20, int(digits) + 5)
    cases = [c.expr] if c.kind == "expr" else []
    alphas = [None] if order is not None else _alphas(lo, hi, cases)
    points = _grid(alphas, free, ends=c.may_jump, cases=cases)
    deadline = time.monotonic() + GRID_GUARD_SECONDS
    compared, by_regime, dropped, excluded = 0, {}, [], 0
    compared_values = []  # (alpha, values, divergence, its error) of each compared point, for the certificate
    methods = set()

    def summary():
        return (f"numeric curve (no closed form for this order): checked {len(points)} grid points, compared "
                f"{compared}; values by the " + " and ".join(sorted(f"{m} route" for m in methods or {"numeric"}))
                + f", each certified to {truth_dps} digits")

    def coverage():
        lines = []
        if order is None:
            lines.append(f"alpha range ({format_number(lo)}, {format_number(hi)}); compared points per regime: " + ", ".join(
                f"{r}: {by_regime.get(r, 0)}" for r in REGIMES if r in required_regimes(lo, hi)))
            if hi == sp.oo:
                lines.append(f"orders compared up to {format_number(max(alphas))}: a numeric curve has no limit argument "
                             "beyond them (a closed form's D_oo comparison, Mironov 2017, Prop. 9)")
        if excluded:
            lines.append(f"{excluded} point(s) excluded where P or Q is not a probability distribution")
        return lines + ev.guards.evidence()

    for a, values in points:
        if time.monotonic() > deadline:
            dropped.append(((a, values), f"not evaluated: a hang guard of {GRID_GUARD_SECONDS:g} s fired in the "
                                         "numeric grid"))
            continue
        alpha = ev.point_alpha(a)
        allv = ev.all_values(values)
        try:
            cv = ev.guards.run("the divergence at a point of a numeric curve", POINT_GUARD_SECONDS,
                               lambda: tgt.result.evaluate_with_error(alpha, truth_dps, **allv))
            t, e = cv.value, cv.error
            methods.add("exact" if cv.exact else "numeric")
        except HangGuardFired as exc:
            t, e, why = None, None, str(exc)
        except (ArithmeticError, ValueError, TypeError) as exc:
            t, e, why = None, None, f"the divergence has no certified value: {str(exc)[:160]}"
        with mpmath.workdps(dps + 20):
            cl = ev.claim_at(a, values)[0] if t is not None else None
        if t is None or not isinstance(cl, mpmath.mpf):
            if ev.distributions_ok(values, mass=False) is False:
                excluded += 1
                continue
            dropped.append(((a, values), why if t is None else "the claim has no value here (undefined, raised, "
                                                                 "overflowed or timed out)"))
            continue
        state, size = _decide(relation, t, e, cl, dps, tol)
        if state == "undecided":
            dropped.append(((a, values), f"undecided within the numeric error {mpmath.nstr(e, 3)}"))
            continue
        if state == "violates":
            # resolved at once: one confirmed violation refutes, and the rest of the grid is not needed
            cex = _counterexample(tgt, ev, (a, values), t, cl, relation, dps, tol, independent)
            if isinstance(cex, Counterexample):
                fields = dict(verdict=Verdict.REFUTED, evidence=tuple(
                    [summary(), f"the relation fails by more than 1e-{digits} (relative) beyond the numeric error, "
                     "and the reference method confirms it"] + coverage()), counterexample=cex,
                    points_checked=len(points))
                return {**fields, "certificate": attest_numeric(tgt, ev, fields, [(a, values, t, e)], alpha_range,
                                                                digits, dps)}
            dropped.append(((a, values), f"a violation that could not be confirmed: {cex}"))
            continue
        compared += 1
        compared_values.append((a, values, t, e))
        regime = regime_of(a) if order is None else "the claim's order"
        by_regime[regime] = by_regime.get(regime, 0) + 1

    reasons = []
    if dropped:
        (a, values), why = dropped[0]
        reasons.append(f"{len(dropped)} point(s) could not be decided and count against the claim, e.g. alpha = "
                       f"{format_number(ev.point_alpha(a))}, {format_values(values)}: {why}")
    if compared == 0:
        reasons.append("no point could be compared: nothing supports the claim")
    elif order is None:
        missing = [r for r in required_regimes(lo, hi) if by_regime.get(r, 0) < MIN_POINTS_PER_REGIME]
        if missing:
            reasons.append(f"fewer than {MIN_POINTS_PER_REGIME} compared points in: {', '.join(missing)}")
    if reasons:
        return dict(verdict=Verdict.INCONCLUSIVE, evidence=tuple([summary()] + reasons + coverage()),
                    points_checked=len(points))
    fields = dict(verdict=Verdict.CONFIRMED,
                  evidence=tuple([summary(), f"confirmed at the {compared} compared points only: a numeric curve has "
                                  "no certified pass between them, and no symbolic proof is attempted"] + coverage()),
                  points_checked=len(points))
    return {**fields, "certificate": attest_numeric(tgt, ev, fields, compared_values, alpha_range, digits, dps)}


def _counterexample(tgt, ev, point, t, cl, relation, dps, tol, independent):
    """A Counterexample at a violating point, or the reason it is not one."""
    a, values = point
    allv = ev.all_values(values)
    valid = ev.distributions_ok(values)
    if valid is not True:
        return ("P or Q is not a probability distribution here" if valid is False
                else "could not check that P and Q are probability distributions at this point")
    alpha = ev.point_alpha(a)
    numeric = None
    if independent and alpha != sp.oo:
        try:
            got = ev.guards.run("the independent recomputation of a point", 2 * POINT_GUARD_SECONDS,
                                tgt.independent, ev.order, a, allv, 30)
        except HangGuardFired as exc:
            return f"the independent recomputation of the divergence did not finish: {exc}"
        if got is not None:
            value, error, converged, detail = got
            if value is None or not converged:
                return f"the independent method could not confirm the divergence: {detail}"
            with mpmath.workdps(dps):
                state, _ = _decide(relation, value, error, cl, 30, tol)
            if state != "violates":
                return "the independent method does not confirm the violation"
            numeric = got
    # the reported divergence to 30 digits (the grid's values carry only the check's digits + 5)
    shown = min(dps, 30)
    try:
        t = ev.guards.run("the reported divergence of a counterexample", 2 * POINT_GUARD_SECONDS,
                          lambda: tgt.result.evaluate(alpha, shown, **allv))
    except (HangGuardFired, ArithmeticError, ValueError):
        shown = max(20, int(-mpmath.log10(tol)) + 5)
    with mpmath.workdps(shown):
        gap = (cl - t) if not (mpmath.isinf(cl) and mpmath.isinf(t)) else mpmath.mpf(0)
        return Counterexample(alpha=alpha, values=allv, claim_arguments={}, claim_value=+cl, divergence=+t,
                              gap=+gap, relation=relation, dps=shown, numeric=numeric)
