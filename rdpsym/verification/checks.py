r"""Independent verification of closed forms against high-precision numerics.

A derived closed form is a conjecture until an independent computation agrees with it.
:func:`verify` evaluates the closed form (exactly substituted, then ``evalf``) and the divergence
computed *without* it (:func:`rdpsym.numeric.maximum.numeric_maximum` of the numeric path,
:func:`rdpsym.numeric.numeric_divergence`: mpmath quadrature or summation of
:math:`\frac{1}{\alpha-1}\log\int P^\alpha Q^{1-\alpha}`, Mironov 2017, arXiv:1702.07476 v3, Def. 3)
at the points of :mod:`rdpsym.verification.points`, and compares them inside one ``mpmath.workdps``
context.

For a mechanism the numeric side is the RDP curve's definition (Mironov 2017, Def. 4),

.. math:: \varepsilon(\alpha) = \max_{(P,Q)\ \text{adjacent}} \max\bigl(D_\alpha(P\|Q), D_\alpha(Q\|P)\bigr),

computed numerically over *every* pair and *both* directions, whatever symmetry the derivation used.

A result without a closed form (``numeric_only``) is a numeric curve: at its exact pieces (KL, D_inf,
recorded integer orders) it is checked like a closed form; elsewhere its value comes from the numeric
path, so it is compared with the independent reference method of :mod:`rdpsym.numeric.reference`
(mpmath tanh-sinh quadrature or ``nsum``), never with the path that produced it. A numeric curve that
cannot be evaluated at a point is ``inconclusive`` there (no evidence), not a mismatch.

Per point, with ``n`` the numeric value, ``e`` its error estimate, ``c`` the closed form and
``scale = max(|n|, 10^(-0.4 dps))`` (values near 0 are compared absolutely, as the numeric path's own
convergence rule does):

* ``agree``        both ``+oo``, or ``|c - n| <= max(10^-digits * scale, 4 e)``;
* ``mismatch``     the numerics converged and the values differ by more (or exactly one is ``+oo``,
                   or the closed form cannot be evaluated there). For a ``bound`` result only
                   ``c < n - tolerance`` is a mismatch;
* ``inconclusive`` the numerics did not converge (their error estimate is too large to decide).

A point where P = Q (every adjacent pair's densities coincide with the point's values substituted:
exactly, or by ``simplify`` within a time limit, and at no sampled x do they differ) has divergence 0
whatever the closed form's shape; it verifies nothing, so it is flagged (``PointCheck.p_equals_q``)
and never counted as evidence.

A point whose check did not end (its task raised, ran past :func:`point_seconds`, lost its worker
process or its Dask scheduler, or was cancelled) is ``inconclusive`` with the reason, never dropped and
never agreement; the points after it are not started (``inconclusive``, "not run").

``digits`` defaults to ``0.6 dps`` (30 digits at ``dps = 50``), the accuracy the numeric path
certifies when it reports convergence. The report's status is ``mismatch`` if any point mismatches
(the worst point is reported), else ``inconclusive`` if any point is inconclusive or no point with
P != Q agrees, else ``verified``: "verified" is earned by every point, never assumed. The report
lists the regimes its evidence covers.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._progress import Printer, progress_printer
from ..derive.numeric_values import NumericCurve
from .._timeout import StepExhausted, StepTimeout, deadline_passed, run_in_child, run_with_time_limit, time_limit
from ..derive.result import DivergenceResult, Status
from ..numeric.families import SampledFamily
from ..numeric.maximum import Direction, numeric_maximum
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.params import Parameter, check_assumptions
from ..specify.text import as_number
from ..specify.variables import coordinate_supports, is_multivariate
from .points import Point, infer_parameters, verification_points
from .report import PointCheck, VerificationReport, VerificationStatus, status_of

__all__ = ["VerificationStatus", "PointCheck", "VerificationReport", "verify", "mechanism_target_name",
           "fixed_values", "parse_param_options", "expected_cost"]


# --------------------------------------------------------------------------------------------------
# what is compared
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Target:
    directions: tuple[tuple[sp.Expr, sp.Expr, str], ...]  # (P, Q, label)
    x: sp.Symbol
    support: sp.Set
    params: tuple[Parameter, ...]
    name: str
    #: families of pairs: the numeric side maximises over FAMILY_SHIFTS sampled shifts of each
    families: tuple[AdjacentFamily, ...] = ()


#: the digits at which a pair in several output variables is checked (at most)
MULTIVARIATE_DPS = 20

#: interior shifts sampled per family, besides the two ends of its set of shifts
FAMILY_INTERIOR_SHIFTS = 3


def _sources(target: _Target) -> tuple:
    """The directions of the numeric side: both of every declared pair, and each family at its sampled
    shifts (:class:`~rdpsym.numeric.families.SampledFamily`)."""
    return (tuple(Direction(P, Q, target.x, target.support, label) for P, Q, label in target.directions)
            + tuple(SampledFamily(family, target.x, target.support, interior=FAMILY_INTERIOR_SHIFTS)
                    for family in target.families))


def _numeric_max(target: _Target, point: Point, dps: int, method: str = "numeric"):
    """The numeric maximum over the directions (and sampled shifts of families) by ``method`` (the numeric
    path, or ``"reference"`` for numeric curves), :func:`rdpsym.numeric.maximum.numeric_maximum`:
    (value, error, converged, note)."""
    found = numeric_maximum(_sources(target), point.alpha, point.value_dict, dps, method=method)
    with mpmath.workdps(dps + 10):
        parts = found.parts
        note = "" if len(parts) == 1 else "; ".join(f"{lab}: {mpmath.nstr(nv.value, 12)}" for lab, nv in parts)
        if not found.converged:
            note = (note + "; " if note else "") + found.describe_failures()
    return found.value, found.error, found.converged, note


@functools.lru_cache(maxsize=32)
def _compiled_closed_form(expr: sp.Expr, alpha: sp.Symbol, symbols: tuple[sp.Symbol, ...]):
    """``expr`` lambdified to mpmath once per closed form (and process), or None."""
    if expr.has(sp.Piecewise):  # branch conditions on rounded numbers could pick the wrong branch
        return None
    if not expr.free_symbols <= {alpha, *symbols}:
        return None
    try:
        return sp.lambdify((alpha,) + symbols, expr, modules="mpmath", docstring_limit=0)
    except SYMBOLIC_ERRORS:  # any printer trouble: result.evaluate (sympy evalf) instead
        return None


def _to_mpf(v: sp.Expr, wp: int):
    if v.is_Rational:
        return mpmath.mpf(int(v.p)) / int(v.q)
    return mpmath.mpf(sp.Float(sp.N(v, wp + 10), wp + 10))


def _closed_value(result: DivergenceResult, alpha: sp.Expr, wp: int, values: dict) -> mpmath.mpf:
    """The closed form at a point, as :meth:`DivergenceResult.evaluate` gives it, faster.

    At a general order (not 1, oo or an exceptional point) of a result without finiteness
    conditions and without Piecewise, the closed form is compiled to mpmath once (per result and
    process) and evaluated at ``wp`` and ``wp + 20`` digits; when the two agree to ``wp - 8``
    digits (no cancellation beyond the guard digits) the ``wp + 20`` value is returned. Anything
    else goes through ``result.evaluate`` (sympy ``evalf``, adaptive precision)."""
    a = sp.S(alpha)
    special = a in (sp.Integer(1), sp.oo) or any(p.alpha == a for p in result.exceptional_points)
    if not special and result.conditions is sp.true and result.expr is not None and a.is_Rational and a > 0:
        fn = _compiled_closed_form(result.expr, result.alpha, tuple(result.symbols))
        by_name = {s.name: s for s in result.symbols}
        if fn is not None and set(values) == set(by_name):
            try:
                outs = []
                for prec in (wp, wp + 20):
                    with mpmath.workdps(prec):
                        args = [_to_mpf(a, prec)] + [_to_mpf(sp.S(values[s.name]), prec) for s in result.symbols]
                        v = fn(*args)
                        outs.append(v if isinstance(v, mpmath.mpf) and mpmath.isfinite(v) else None)
                if outs[0] is not None and outs[1] is not None:
                    with mpmath.workdps(wp + 20):
                        if abs(outs[0] - outs[1]) <= mpmath.mpf(10) ** (-(wp - 8)) * max(abs(outs[1]), 1):
                            with mpmath.workdps(wp):
                                return +outs[1]
            except (ArithmeticError, ValueError, TypeError):
                pass
    return result.evaluate(alpha, dps=wp, **values)


#: x values (exact) at which two densities are compared; those inside the support are used
_X_SAMPLES = tuple(sp.Rational(n, 10) for n in (2, -4, 7, -13, 19, -31, 43)) + tuple(sp.Integer(k) for k in range(-3, 7))
#: seconds for ``simplify(P - Q) == 0`` when the sampled values do not tell P from Q
SAME_SECONDS = 3.0


def _sample_x(support: sp.Set) -> list[sp.Expr]:
    if isinstance(support, sp.FiniteSet):
        cands = list(support.args)[:12]
    else:
        cands = []
        if isinstance(support, sp.Interval):
            a, b = support.start, support.end
            if a.is_finite and b.is_finite:
                cands = [a + (b - a) * sp.Rational(k, 7) for k in (1, 3, 4, 6)]
            elif a.is_finite:
                cands = [a + t for t in (sp.Rational(1, 5), sp.Rational(7, 10), sp.Rational(19, 10), sp.Rational(43, 10))]
            elif b.is_finite:
                cands = [b - t for t in (sp.Rational(1, 5), sp.Rational(7, 10), sp.Rational(19, 10), sp.Rational(43, 10))]
        cands += list(_X_SAMPLES)
    out = []
    for c in cands:
        try:
            inside = support.contains(c)
        except (TypeError, ValueError):
            continue
        if inside is sp.true and c not in out:
            out.append(c)
        if len(out) >= 8:
            break
    return out


def _variables(x) -> set:
    """The output variables of a target: one symbol, or the symbols of a tuple."""
    return set(x) if isinstance(x, (tuple, list)) else {x}


def _sample_points(support: sp.Set, x) -> list[dict]:
    """Substitutions {variable: value} at sampled points of the support: for a tuple of variables,
    points combining each coordinate's samples (:func:`_sample_x` per coordinate set)."""
    if not isinstance(x, (tuple, list)):
        return [{x: v} for v in _sample_x(support)]
    try:
        parts = coordinate_supports(support, len(x))
    except ValueError:
        return []
    samples = [_sample_x(part) for part in parts]
    if not all(samples):
        return []
    # staggered combinations: coordinate i takes its (k * (i + 1))-th sample
    return [{v: s[(k * (i + 1)) % len(s)] for i, (v, s) in enumerate(zip(x, samples))} for k in range(8)]


def _simplifies_to_zero(d: sp.Expr) -> bool:
    return sp.simplify(d) == 0


def _float_value(v: sp.Expr, wp: int) -> sp.Expr:
    return sp.Float(v, wp) if v.is_Number and v.is_finite else v


def _compare_samples(values_at: Callable, samples: list, dps: int) -> tuple[bool, int]:
    """(P and Q differ at one of the sampled x, how many samples found them equal); ``values_at(xv)``
    gives (P, Q) there, or raises / gives no number, and then that x tells nothing."""
    compared = 0
    for xv in samples:
        try:
            pv, qv = values_at(xv)
        except SYMBOLIC_ERRORS:  # a density that cannot be evaluated at this x: try the next
            continue
        if not all(isinstance(v, sp.Number) and v.is_extended_real for v in (pv, qv)):
            continue  # no real number (an unevaluated sum, a relation, nan, zoo): this x tells nothing
        if pv.is_infinite or qv.is_infinite:
            if pv != qv:
                return True, compared
            continue
        scale = max(abs(pv), abs(qv))
        if scale != 0 and abs(pv - qv) > sp.Float(10, dps) ** (-(dps // 2)) * scale:
            return True, compared
        compared += 1
    return False, compared


def _same_distribution(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, support: sp.Set, values: Mapping, dps: int,
                       quick: bool = False):
    """Whether P = Q with the parameter ``values`` substituted: True (exactly the same expression, or
    ``simplify(P - Q) == 0`` within :data:`SAME_SECONDS`), False (they differ at a sampled x in the
    support), None (undecided). ``quick`` (for choosing points): no simplify; True also when no
    sampled x tells them apart.

    The values are substituted exactly and evaluated with sympy's adaptive precision, within half of
    :data:`SAME_SECONDS`. A density whose exact value is out of reach (a rational of millions of digits
    from (1 + x^2)^(-10^6), an exact factorial of 10^300 from gamma(nu)) is then sampled in floating
    point instead, at two precisions: there a sample counts only where both precisions agree (a value
    that rounding did not ruin), it can only show P != Q, and "no sample tells them apart" decides
    nothing (floats can round a real difference away). Run it through :func:`_same_distributions`,
    which bounds its time and memory."""
    free = (P.free_symbols | Q.free_symbols | support.free_symbols) - _variables(x)
    subs = {s: sp.S(values[s.name]) for s in free if s.name in values}
    Ps = Qs = None
    try:
        with time_limit(SAME_SECONDS / 2):
            Ps, Qs = P.xreplace(subs), Q.xreplace(subs)
            if Ps == Qs:
                return True
            try:
                sup = support.xreplace(subs)
            except (TypeError, ValueError):
                sup = None
            samples = _sample_points(sup, x) if isinstance(sup, sp.Set) else []
            differ, compared = _compare_samples(
                lambda xv: (sp.N(Ps.xreplace(xv), dps), sp.N(Qs.xreplace(xv), dps)), samples, dps)
        exact = True
    except StepTimeout:
        if deadline_passed():  # an enclosing limit has passed: it wins
            raise
        exact = False
    except (RecursionError, MemoryError, ArithmeticError, ValueError, TypeError):
        exact = False
    if not exact:
        wps = (dps + 10, 2 * dps + 30)
        fsubs = [{s: _float_value(v, wp) for s, v in subs.items()} for wp in wps]
        try:
            sup = support.xreplace(subs)
        except (TypeError, ValueError, RecursionError):
            sup = None
        samples = _sample_points(sup, x) if isinstance(sup, sp.Set) else []

        def stable(xv):
            out = []
            for wp, fs in zip(wps, fsubs):
                at = {**fs, **{v: _float_value(c, wp) for v, c in xv.items()}}
                out.append((sp.N(P.xreplace(at), dps), sp.N(Q.xreplace(at), dps)))
            (p1, q1), (p2, q2) = out
            differ, _ = _compare_samples(lambda _: (p1, p2), [None], dps)
            differ_q, _ = _compare_samples(lambda _: (q1, q2), [None], dps)
            if differ or differ_q:
                raise ArithmeticError("rounding changes the value")
            return p2, q2

        differ, compared = _compare_samples(stable, samples, dps)
        return False if differ else None
    if differ:
        return False
    if quick:
        return compared > 0
    try:
        if run_with_time_limit(_simplifies_to_zero, Ps - Qs, seconds=SAME_SECONDS) is True:
            return True
    except StepTimeout:
        if deadline_passed():  # an enclosing limit has passed: it wins; this test's own limit: undecided
            raise
    except SYMBOLIC_ERRORS:  # simplify fails in many ways: undecided
        pass
    return None


def _same_for_pairs(pairs, x, support, values, dps, quick) -> list:
    return [_same_distribution(P, Q, x, support, values, dps, quick=quick) for P, Q in pairs]


def _same_distributions(pairs: Sequence[tuple[sp.Expr, sp.Expr]], x, support: sp.Set, values: Mapping, dps: int,
                        quick: bool = False) -> tuple[list, str]:
    """:func:`_same_distribution` for every pair, in a child process killed after :data:`SAME_SECONDS`
    (``2 SAME_SECONDS`` with ``simplify``) and bounded in memory (:func:`rdpsym._timeout.run_in_child`):
    (the answers, ``""``), or (every answer None: undecided, why) when the test was abandoned or failed.
    Hostile densities make this test, not the verification, the thing that hangs: it evaluates them
    before any numerics, on the caller's process."""
    seconds = SAME_SECONDS * (1 if quick else 2)
    try:
        return run_in_child(_same_for_pairs, list(pairs), x, support, dict(values), dps, quick, seconds=seconds), ""
    except StepExhausted as exc:
        why = f"the test of P = Q was abandoned: {exc}"
    except StepTimeout as exc:
        if deadline_passed():
            raise
        why = f"the test of P = Q was abandoned: {exc}"
    except Exception as exc:  # noqa: BLE001 - fail-closed: the child failed in any way: undecided
        why = f"the test of P = Q failed: {type(exc).__name__}: {str(exc)[:200]}"
    return [None] * len(pairs), why


def _distinct_pairs(target: _Target) -> list[tuple[sp.Expr, sp.Expr]]:
    """(P, Q) of every direction, and of each family at the two ends of its shifts, once each."""
    pairs = []
    candidates = [(P, Q) for P, Q, _ in target.directions]
    candidates += [(f.P.subs(f.shift, e), f.Q.subs(f.shift, e)) for f in target.families if not f.is_vector
                   for e in f.ends]
    # a vector family at the axis points of its ball (the ball has no ends); without any pair "P = Q at
    # every pair" would hold vacuously and every point would count as verifying nothing
    candidates += [(f.P.xreplace(f.assignment(v)), f.Q.xreplace(f.assignment(v))) for f in target.families
                   if f.is_vector for v in f.over.points(len(f.shift))[:2 * len(f.shift)]]
    for P, Q in candidates:
        if not any({P, Q} == {u, v} for u, v in pairs):
            pairs.append((P, Q))
    return pairs


def _p_equals_q_somewhere(target: _Target, dps: int):
    """``avoid`` for :func:`verification_points`: parameter values where every pair has P = Q (by the
    quick test of :func:`_same_distribution`), cached."""
    pairs = _distinct_pairs(target)
    seen: dict = {}
    abandoned: list[str] = []

    def avoid(values: Mapping[str, sp.Expr]) -> bool:
        key = tuple(sorted(values.items()))
        if key not in seen:
            if not pairs or abandoned:
                # a test abandoned once (out of time or memory) would be abandoned again: the points are
                # kept as they are, and each point's own test of P = Q decides what it is worth
                seen[key] = False
            else:
                found, why = _same_distributions(pairs, target.x, target.support, values, dps, quick=True)
                if why:
                    abandoned.append(why)
                seen[key] = all(f is True for f in found)
        return seen[key]

    return avoid


def _p_equals_q(target: _Target, point: Point, dps: int, num, err) -> tuple[bool, str]:
    """P = Q at ``point`` for every adjacent pair of the target: (flag, how it was found)."""
    values = point.value_dict
    pairs = _distinct_pairs(target)
    found, _ = _same_distributions(pairs, target.x, target.support, values, dps)
    if any(f is False for f in found):
        return False, ""
    if found and all(f is True for f in found):
        return True, "P = Q at this point: it verifies nothing"
    # undecided symbolically and not told apart at the sampled x: the numeric divergence decides
    with mpmath.workdps(dps + 10):
        zero = num != mpmath.inf and abs(num) <= max(4 * err, mpmath.mpf(10) ** (-0.6 * dps))
    return (True, "P = Q at this point (the densities agree where sampled and D = 0): it verifies nothing") \
        if zero else (False, "")


def _check(result: DivergenceResult, target: _Target, point: Point, dps: int, digits: float) -> PointCheck:
    start = time.perf_counter()
    # a numeric curve's value at an order without an exact piece comes from the numeric path: it is
    # checked against the reference method, which shares no quadrature or summation code with it
    numeric_curve = result.expr is None and result.exact_piece(sp.S(point.alpha)) is None
    method = "reference" if numeric_curve else "numeric"
    closed = None
    point_bound = False
    if numeric_curve:
        try:
            cv = result.evaluate_with_error(point.alpha, dps + 10, **point.value_dict)
            closed, point_bound = cv.value, cv.bound  # a value that is a bound is checked as one
        except (ArithmeticError, ValueError, TypeError) as exc:
            # the curve has no value here: nothing to compare, whatever the reference method gives
            return PointCheck(point, None, mpmath.mpf(0), mpmath.inf, mpmath.inf, 0.0, "inconclusive",
                              f"the numeric curve cannot be evaluated here: {exc}", time.perf_counter() - start)
    num, err, conv, note = _numeric_max(target, point, dps, method)
    if numeric_curve:
        note = "numeric curve checked against the reference method" + (f"; {note}" if note else "")
    same, why = _p_equals_q(target, point, dps, num, err)
    if same:
        note = why + (f"; {note}" if note else "")
    wp = dps + 10
    try:
        closed = _closed_value(result, point.alpha, wp, point.value_dict) if closed is None else closed
    except (ArithmeticError, ValueError, TypeError) as exc:
        # a closed form that cannot be evaluated where the numerics have a value is wrong there; a numeric
        # curve whose own evaluation failed has earned nothing at this point
        status = "mismatch" if conv and not numeric_curve else "inconclusive"
        what = "the numeric curve" if numeric_curve else "the closed form"
        return PointCheck(point, None, num, err, mpmath.inf, 0.0, status,
                          f"{what} cannot be evaluated here: {exc}" + (f"; {note}" if note else ""),
                          time.perf_counter() - start, same)
    bound = result.status is Status.BOUND or point_bound
    with mpmath.workdps(wp):
        if closed == mpmath.inf or num == mpmath.inf:
            if closed == num:
                rel, dig, ok = mpmath.mpf(0), math.inf, True
            else:
                rel, dig = mpmath.inf, 0.0
                ok = bound and closed == mpmath.inf
        else:
            scale = max(abs(num), mpmath.mpf(10) ** (-0.4 * dps))
            diff = (num - closed) if bound else abs(closed - num)
            rel = abs(closed - num) / scale
            dig = float(min(dps, -mpmath.log10(rel))) if rel > 0 else float(dps)
            tol = max(mpmath.mpf(10) ** (-digits) * scale, 4 * err)
            ok = diff <= tol
        if not conv:
            status = "inconclusive"
        else:
            status = "agree" if ok else "mismatch"
        return PointCheck(point, +closed, +num, +err, +rel, dig, status, note, time.perf_counter() - start, same)


#: a point's check is abandoned after this many times ``RDPSYM_EVAL_SECONDS`` (450 s by default): a guard
#: against a hang, far above the few seconds a point takes, never a budget that decides a verdict
POINT_EVAL_LIMITS = 1.5


def point_seconds() -> float:
    """The wall-clock limit of one point's check (:data:`POINT_EVAL_LIMITS` x ``RDPSYM_EVAL_SECONDS``)."""
    from .._config import settings

    return POINT_EVAL_LIMITS * settings().eval_seconds


def _not_checked(point: Point, why: str) -> PointCheck:
    """An inconclusive check of a point that was never checked to the end: no evidence either way."""
    return PointCheck(point, None, mpmath.nan, mpmath.inf, mpmath.inf, 0.0, "inconclusive", f"not checked: {why}")


def _enforceable_timeout(executor) -> float | None:
    """:func:`point_seconds`, unless the points run serially outside a main thread, where no time limit can
    be enforced (a serial sweep limits a task with SIGALRM): then each step's own limit is all there is."""
    import threading

    from ..execution import runs_serially

    if runs_serially(executor) and threading.current_thread() is not threading.main_thread():
        return None
    return point_seconds()


def expected_cost(result: DivergenceResult, target: _Target, n_points: int, dps: int) -> str:
    """What a verification will compute, counted (not timed): the points, the numeric divergences per
    point (both directions of every pair; a family at its sampled shifts, both directions; twice for a
    numeric curve, whose values are compared with a second method) and, for several output variables,
    what one divergence costs (densities that factor into coordinates: one-dimensional quadratures, else
    iterated quadrature)."""
    per_point = 2 * len(target.directions)
    for family in target.families:
        if family.is_vector:
            shifts = len(family.over.points(len(family.shift_symbols), FAMILY_INTERIOR_SHIFTS))
        else:
            shifts = 2 + FAMILY_INTERIOR_SHIFTS
        per_point += 2 * shifts
    methods = 2 if result.expr is None else 1
    text = (f"expected cost: {n_points} points x {per_point * methods} numeric divergences at {dps} digits "
            f"({n_points * per_point * methods} in all)")
    if is_multivariate(target.x):
        d = len(target.x)
        text += (f"; in {d} variables each is {d} one-dimensional quadratures where the densities factor into "
                 f"coordinates (seconds), else an iterated {d}-D quadrature (up to a minute or more each)")
    return text


def _check_points(result: DivergenceResult, target: _Target, points: list[Point], dps: int, digits: float,
                  progress, fail_fast: bool, executor) -> list[PointCheck]:
    """:func:`_check` at every point, one task per point on ``executor`` (rdpsym.execution); the checks
    in point order, up to the first mismatch with ``fail_fast`` (as a serial loop would stop).

    A point whose task did not end with a check (it failed, ran past :func:`point_seconds`, lost its
    worker or its scheduler, or was cancelled) is an ``inconclusive`` check saying so: it counts
    against ``verified``, never for it, and never vanishes from the report. Such a point also stops the
    sweep (what defeated it would most likely defeat the next points too): the points not started are
    ``inconclusive``, "not run"."""
    from functools import partial

    from ..execution import TaskStatus, run_tasks

    finished = [0]

    def arrived(entry):  # completion order: progress counts points as they come in
        finished[0] += 1
        if progress is not None and entry.ok:
            progress(finished[0], len(points), entry.result)

    def stop(entry) -> bool:
        return not entry.ok or (fail_fast and entry.result.status == "mismatch")

    sweep = run_tasks(partial(_check, result, target, dps=dps, digits=digits), points, executor=executor,
                      progress=False, on_result=arrived, stop_when=stop, timeout=_enforceable_timeout(executor))
    checks = []
    first_fault = None
    for entry in sweep:
        point = points[entry.index]
        if entry.ok:
            checks.append(entry.result)
            if fail_fast and entry.result.status == "mismatch":
                break  # fail_fast: the points after the first mismatch were not run, by request
            continue
        error = " ".join(entry.error.split())[:300]
        if entry.status is TaskStatus.CANCELLED and first_fault is not None:
            checks.append(_not_checked(point, f"not run: point {first_fault} could not be checked"))
        else:
            what = {TaskStatus.TIMEOUT: "abandoned", TaskStatus.CANCELLED: "cancelled"}.get(entry.status, "failed")
            checks.append(_not_checked(point, f"{what}: {error}"))
            first_fault = entry.index if first_fault is None else first_fault
    return checks


# --------------------------------------------------------------------------------------------------
# the public function
# --------------------------------------------------------------------------------------------------
def _mechanism_target(mech: Mechanism) -> _Target:
    dirs = []
    for pair in mech.pairs:
        if isinstance(pair, AdjacentFamily):
            continue
        dirs.append((pair.P, pair.Q, f"D(P||Q) [{pair.label}]"))
        dirs.append((pair.Q, pair.P, f"D(Q||P) [{pair.label}]"))
    return _Target(tuple(dirs), mech.variable, mech.support, mech.parameters, f"mechanism {mech.name}",
                   mech.families)


def mechanism_target_name(mech: Mechanism) -> str:
    """What a report of :func:`verify` on ``mech`` names as its target."""
    return _mechanism_target(mech).name


def fixed_values(params: Sequence[Parameter], fixed: Mapping[str, object]) -> dict[str, sp.Expr]:
    """``fixed`` (parameter name -> value) checked against ``params``: each value an exact number
    (:func:`rdpsym.specify.text.numbers.exact_number`, never ``sympify``), finite, inside its parameter's domain
    and assumptions. Unknown names and bad or out-of-domain values raise ``ValueError`` naming the
    parameter."""
    by_name = {p.name: p for p in params}
    out = {}
    for name, value in fixed.items():
        if name not in by_name:
            raise ValueError(f"unknown parameter {name!r}; parameters are {sorted(by_name)}")
        param = by_name[name]
        v = as_number(value, f"parameter {name!r}")
        if v.is_finite is False:
            raise ValueError(f"parameter {name!r} must be finite; got {value!r}")
        param.validate(v)
        check_assumptions(param.symbol, v, f"parameter {name!r}")
        out[name] = v
    return out


def parse_param_options(params: Sequence[Parameter], items: Sequence[str]) -> dict[str, sp.Expr]:
    """``NAME=VALUE`` texts (``rdpsym verify --param``) as checked fixed values (:func:`fixed_values`);
    a malformed item, a repeated name, an unknown name or a bad value raises ``ValueError`` naming it."""
    raw: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise ValueError(f"{item!r}: expected NAME=VALUE")
        if name in raw:
            raise ValueError(f"parameter {name!r} given twice")
        raw[name] = value
    return fixed_values(params, raw)


def verify(
    target: DivergenceResult | Mechanism,
    *,
    P: sp.Expr | None = None,
    Q: sp.Expr | None = None,
    x: sp.Symbol | None = None,
    support: sp.Set | None = None,
    mechanism: Mechanism | None = None,
    values: Mapping[str, object] | Sequence[Mapping[str, object]] | None = None,
    fixed: Mapping[str, object] | None = None,
    params: Sequence[Parameter] | None = None,
    points: Sequence[Point] | None = None,
    dps: int = 30,
    digits: float | None = None,
    seed: int = 0,
    level: str = "standard",
    n_typical: int = 6,
    progress: Callable[[int, int, PointCheck], None] | bool | None = None,
    fail_fast: bool = False,
    cache: bool = True,
    executor: object = None,
) -> VerificationReport:
    """Check a closed form against independent high-precision numerics.

    What is checked
    ---------------
    * ``verify(mechanism)``: derives ``rdp(mechanism)`` and checks it against the numeric maximum
      over all adjacent pairs and both directions (Mironov 2017, Def. 4); for a family of pairs, the
      maximum over its sampled shifts (the ends and ``FAMILY_INTERIOR_SHIFTS`` interior ones).
    * ``verify(result, P=..., Q=..., x=..., support=...)``: a ``renyi_divergence`` result against the
      numeric D_alpha(P||Q). (The result keeps its inputs only as text, so they must be passed again.)
    * ``verify(result, mechanism=m)``: an ``rdp`` result against mechanism ``m``; for a result of a
      registered built-in, ``verify(result)`` finds the mechanism by the name in its provenance.

    Where
    -----
    At :func:`rdpsym.verification.points.verification_points`: typical parameter values plus edge regimes
    (alpha -> 1, alpha in (0,1), alpha up to 1000 and oo, exceptional points, the edges of the
    finiteness conditions, tiny and huge scales). Parameters come from the mechanism, from ``params``,
    or are inferred from the symbols' assumptions (positive -> typical 0.5..5). ``values`` is either
    a dict fixing some parameters (``{"sensitivity": 1}``) or a list of dicts giving the parameter
    points explicitly; ``fixed`` (a dict) holds parameters at those values at every point (with a
    list of ``values`` too); fixed values are exact numbers checked against their parameters' domains
    (``ValueError`` naming the parameter). ``points`` overrides everything with explicit
    :class:`Point` objects. Drawn values are generic: parameters of the same kind never share a value
    at a point, so P != Q unless the caller asked for it; points where P = Q anyway are flagged and
    not counted as evidence (only such points: ``inconclusive``).
    ``level``: ``quick`` (about 8 points), ``standard`` (about 25) or ``thorough``. Deterministic:
    the same ``seed`` gives the same points.

    Precision
    ---------
    Numerics at ``dps`` digits; agreement required to ``digits`` (default ``0.6 dps``) relative
    digits, see the module docstring for the exact rule.

    ``progress``: ``None`` (default) prints a line per point on stderr when stderr is a terminal,
    ``True`` always, ``False`` never; a callable ``progress(done, total, check)`` is called after each
    point instead (:mod:`rdpsym._progress`). The printed lines begin with the check's expected cost: the
    points times the numeric divergences each needs (pairs, directions, sampled shifts of families,
    and for a numeric curve both methods), and for several output variables what one such
    divergence costs. ``fail_fast`` stops at the first mismatch (the report then holds the points
    checked so far).

    Each point is one task of :func:`rdpsym.execution.run_tasks`: ``executor`` (default: all local
    cores; ``"serial"``; an int number of processes; a Dask scheduler address or client) says where.
    The report is the same whatever the executor: same points, same order, same verdicts.

    Returns a :class:`VerificationReport`; ``report.result`` is the result with the report appended to
    its ``provenance.verifications``. Raises ``ValueError`` when there is nothing to compare (a failed
    result, or a bound without an expression) or the densities are missing.
    """
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 10:
        raise ValueError(f"dps must be an int >= 10; got {dps!r}")
    explicit_digits = digits
    digits = 0.6 * dps if digits is None else digits
    if not (isinstance(digits, (int, float)) and 0 < digits <= dps):
        raise ValueError(f"digits must be a number in (0, dps={dps}]; got {digits!r}")
    if isinstance(target, Mechanism):
        if mechanism is not None or P is not None:
            raise ValueError("target: pass either a Mechanism or a result with its densities, not both")
        from ..derive.mechanism_rdp import rdp

        mechanism = target
        result = rdp(mechanism, cache=cache)
    elif isinstance(target, DivergenceResult):
        result = target
    else:
        raise TypeError(f"target must be a DivergenceResult or a Mechanism; got {type(target).__name__}")
    # a bound (or lower bound) without an expression has values only when it is a curve of its own (a
    # subsampled mechanism's); the numeric maximum over its pairs is not the bound it states
    own_curve = result.curve is not None and not isinstance(result.curve, NumericCurve)
    if result.status is Status.FAILED or (result.expr is None and result.status is not Status.NUMERIC_ONLY
                                          and not own_curve):
        raise ValueError(f"target has nothing to verify (status {result.status}: {result.reason})")
    if fixed is not None and not isinstance(fixed, Mapping):
        raise TypeError(f"fixed must be a dict of parameter values; got {type(fixed).__name__}")
    pinned = dict(values) if isinstance(values, Mapping) else {}
    for name, v in (fixed or {}).items():
        if name in pinned and as_number(pinned[name], name) != as_number(v, name):
            raise ValueError(f"parameter {name!r}: values= and fixed= give different values")
        pinned[name] = v

    if mechanism is None and all(d is None for d in (P, Q, x, support)) and isinstance(target, DivergenceResult):
        # the objects the result was derived from, never a mechanism found again by its name
        mechanism = result.mechanism
        if mechanism is None and result.pair is not None:
            P, Q, x, support = result.pair
    dens = [P, Q, x, support]
    if any(d is not None for d in dens):
        if any(d is None for d in dens):
            raise ValueError("P, Q, x and support must be given together")
        if mechanism is not None:
            raise ValueError("pass either mechanism= or P, Q, x, support, not both")
        free = (P.free_symbols | Q.free_symbols | support.free_symbols) - _variables(x)
        if params is None:
            known = {s.name: s for s in free}
            params = tuple(infer_parameters(s for n, s in known.items() if n not in pinned))
            # fixed parameters still need a Parameter entry for the point generator
            params += tuple(Parameter(n, s, sp.S.Reals, (0.0, 1.0), n) for n, s in known.items() if n in pinned)
        tgt = _Target(((P, Q, result.label),), x, support, tuple(params), result.label)
    else:
        if mechanism is None:
            raise ValueError("verify needs the densities: pass P=, Q=, x=, support= (or mechanism=) with a result")
        tgt = _mechanism_target(mechanism)
        if params is not None:
            tgt = replace(tgt, params=tuple(params))

    if is_multivariate(tgt.x):
        # several output variables: iterated quadrature costs the square or cube of one dimension's,
        # so fewer points (``standard`` reads as ``quick``) at fewer digits; agreement is still
        # required to 0.6 of the digits computed, or within the numeric error estimate
        dps = min(dps, MULTIVARIATE_DPS)
        digits = min(digits, 0.6 * dps) if explicit_digits is None else min(digits, dps)
        level = "quick" if level == "standard" else level
    if points is None:
        pinned = fixed_values(tgt.params, pinned)
        pp = None if (values is None or isinstance(values, Mapping)) else list(values)
        points = verification_points(
            tgt.params, fixed=pinned or None, parameter_points=pp, conditions=result.conditions,
            exceptional=[p.alpha for p in result.exceptional_points], seed=seed, n_typical=n_typical, level=level,
            avoid=_p_equals_q_somewhere(tgt, dps))
        # orders whose value the result does not hold (kl / max_divergence not derived) are skipped
        # (a numeric curve's KL is computed by both numeric methods; D_inf only by the main one)
        points = [p for p in points if not ((p.alpha == 1 and result.kl is None and result.expr is not None)
                                            or (p.alpha == sp.oo and result.max_divergence is None))]
    report_to = progress_printer(progress, f"verify {tgt.name}")
    if isinstance(report_to, Printer):
        report_to.note(expected_cost(result, tgt, len(points), dps))
    start = time.perf_counter()
    checks = _check_points(result, tgt, list(points), dps, digits, report_to, fail_fast, executor)
    report = VerificationReport(status_of(checks), tuple(checks), dps, float(digits), seed, level,
                                time.perf_counter() - start, tgt.name)
    return replace(report, result=result.with_verification(report))
