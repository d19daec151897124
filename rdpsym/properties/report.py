"""The report every property check returns: verdict, evidence, worst margin, and how it was checked.

A check compares a left-hand side with a bound at a set of points (orders, parameter values, events).
Per point the *margin* is the bound minus the value, relative to ``max(1, |bound|)``: non-negative
means the property holds there, negative means it is violated. A point whose margin is within the
check's numerical ``tolerance`` of zero is accepted (numbers carry rounding errors of that size); a
point that could not be evaluated, or whose error estimate exceeds its margin, makes the check
``inconclusive``, never ``holds``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import mpmath

from ..outcomes import Outcome

__all__ = ["PropertyVerdict", "Evidence", "PropertyReport", "margin_of", "report_from_rows"]


#: The verdict of a property check is exactly the one outcome vocabulary: holds / fails / inconclusive.
PropertyVerdict = Outcome


@dataclass(frozen=True)
class Evidence:
    """One point of a check: ``value`` should be <= ``bound`` (``margin`` = relative slack).

    ``error`` is an error estimate of ``value`` or ``bound`` (0 for exact or closed-form numbers);
    ``status`` is this point's own verdict; ``note`` explains an inconclusive point.
    """

    point: str
    value: Any
    bound: Any
    margin: Any
    status: PropertyVerdict
    error: Any = 0
    note: str = ""


@dataclass(frozen=True)
class PropertyReport:
    """The result of one property check.

    ``verdict`` (= ``outcome``): holds / fails / inconclusive. ``mode``: ``"symbolic"`` (proved for all values by
    sympy) or ``"numeric"`` (checked at ``evidence`` points at ``dps`` digits). ``worst_margin``: the
    smallest per-point margin (``+inf`` for a symbolic proof, ``None`` when nothing was evaluated);
    ``tolerance``: the numerical slack accepted below zero. ``reference`` cites the statement checked.
    """

    name: str
    verdict: PropertyVerdict
    mode: str
    evidence: tuple[Evidence, ...] = ()
    worst_margin: Any = None
    tolerance: Any = 0
    detail: str = ""
    reference: str = ""
    target: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def holds(self) -> bool:
        return self.verdict is PropertyVerdict.HOLDS

    @property
    def outcome(self) -> Outcome:
        """The verdict, which is already an :class:`~rdpsym.outcomes.Outcome`."""
        return self.verdict

    @property
    def applicable(self) -> bool:
        """False when the property's hypotheses fail for the target (e.g. Lemma 1 without pure DP)."""
        return self.extra.get("applicable", True)

    @property
    def points_checked(self) -> int:
        return len(self.evidence)

    def __bool__(self) -> bool:
        return self.holds

    def summary(self) -> str:
        margin = "-" if self.worst_margin is None else mpmath.nstr(self.worst_margin, 4)
        return (f"{self.name}: {self.verdict} ({self.mode}, {self.points_checked} points, worst margin {margin})"
                + (f" - {self.detail}" if self.detail and self.verdict is not PropertyVerdict.HOLDS else ""))

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        from ..report.display import property_repr

        return property_repr(self)

    def _repr_html_(self) -> str:
        from ..report.display import property_html

        return property_html(self)


def margin_of(value, bound) -> mpmath.mpf:
    """(bound - value) / max(1, |bound|), with the conventions of +inf (inf <= inf has margin 0)."""
    value, bound = mpmath.mpf(value), mpmath.mpf(bound)
    if mpmath.isnan(value) or mpmath.isnan(bound):
        return mpmath.nan
    if bound == mpmath.inf:
        return mpmath.mpf(0) if value == mpmath.inf else mpmath.inf
    if value == mpmath.inf or bound == -mpmath.inf:
        return -mpmath.inf
    if value == -mpmath.inf:
        return mpmath.inf
    return (bound - value) / max(mpmath.mpf(1), abs(bound))


def report_from_rows(name: str, rows: Iterable[tuple], tolerance, *, mode: str = "numeric", detail: str = "",
                     reference: str = "", target: str = "", extra: dict | None = None) -> PropertyReport:
    """Build a report from rows ``(point, value, bound[, error[, note]])``; ``value``/``bound`` None = not evaluated.

    A row fails when its margin is below ``-tolerance`` (and below minus its relative error), is
    inconclusive when it could not be evaluated or its error estimate is larger than its margin, and
    holds otherwise. The report fails if any row fails, else is inconclusive if any row is, else holds;
    an empty set of rows is inconclusive.
    """
    tol = mpmath.mpf(tolerance)
    evidence = []
    for row in rows:
        point, value, bound = row[0], row[1], row[2]
        error = mpmath.mpf(row[3]) if len(row) > 3 and row[3] is not None else mpmath.mpf(0)
        note = row[4] if len(row) > 4 else ""
        if value is None or bound is None:
            evidence.append(Evidence(str(point), value, bound, None, PropertyVerdict.INCONCLUSIVE, error, note or "not evaluated"))
            continue
        m = margin_of(value, bound)
        rel_err = error / max(mpmath.mpf(1), abs(mpmath.mpf(bound))) if mpmath.isfinite(bound) else mpmath.mpf(0)
        if mpmath.isnan(m):
            status, note = PropertyVerdict.INCONCLUSIVE, note or "NaN"
        elif m >= -tol:
            status = PropertyVerdict.HOLDS if (m + tol >= rel_err or m == mpmath.inf) else PropertyVerdict.INCONCLUSIVE
        elif -m > rel_err:
            status = PropertyVerdict.FAILS
        else:
            status, note = PropertyVerdict.INCONCLUSIVE, note or "violation within the error estimate"
        evidence.append(Evidence(str(point), value, bound, m, status, error, note))
    statuses = {e.status for e in evidence}
    if PropertyVerdict.FAILS in statuses:
        verdict = PropertyVerdict.FAILS
    elif PropertyVerdict.INCONCLUSIVE in statuses or not evidence:
        verdict = PropertyVerdict.INCONCLUSIVE
    else:
        verdict = PropertyVerdict.HOLDS
    margins = [e.margin for e in evidence if e.margin is not None and not mpmath.isnan(e.margin)]
    worst = min(margins) if margins else None
    if verdict is not PropertyVerdict.HOLDS and not detail.endswith("."):
        bad = [e for e in evidence if e.status is not PropertyVerdict.HOLDS][:3]
        detail = (detail + "; " if detail else "") + "; ".join(
            f"{e.point}: {_fmt(e.value)} vs bound {_fmt(e.bound)}{' (' + e.note + ')' if e.note else ''}" for e in bad)
    return PropertyReport(name, verdict, mode, tuple(evidence), worst, tol, detail, reference, target, dict(extra or {}))


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    try:
        return mpmath.nstr(mpmath.mpf(v), 12)
    except (TypeError, ValueError):
        return str(v)
