"""What a verification found: the status of a point and of a whole report.

The statuses and the rules that decide them are described in :mod:`rdpsym.verification.checks`.
Every report also exposes the coarse :class:`~rdpsym.outcomes.Outcome` (``verified`` holds,
``mismatch`` fails, ``inconclusive`` is inconclusive).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mpmath

from ..derive.result import DivergenceResult
from ..outcomes import Outcome, Vocabulary
from .points import Point

__all__ = ["VerificationStatus", "PointCheck", "VerificationReport", "status_of"]


class VerificationStatus(Vocabulary):
    """Outcome of a verification: verified holds, mismatch fails, inconclusive is inconclusive."""

    VERIFIED = "verified", Outcome.HOLDS
    MISMATCH = "mismatch", Outcome.FAILS
    INCONCLUSIVE = "inconclusive", Outcome.INCONCLUSIVE


@dataclass(frozen=True)
class PointCheck:
    """The comparison at one point.

    ``closed`` and ``numeric`` are mpmath numbers (``+inf`` allowed; ``closed`` is None when the
    closed form could not be evaluated); ``error`` the numeric error estimate; ``rel_diff`` the
    difference relative to ``scale`` (see the module docstring); ``digits`` the digits of agreement
    (``inf`` when both are ``+oo``); ``status`` ``agree`` / ``mismatch`` / ``inconclusive``;
    ``p_equals_q``: P = Q at this point (for every adjacent pair), so the divergence is 0 whatever
    the closed form: an agreement there is no evidence.
    """

    point: Point
    closed: mpmath.mpf | None
    numeric: mpmath.mpf
    error: mpmath.mpf
    rel_diff: mpmath.mpf
    digits: float
    status: str
    note: str = ""
    seconds: float = 0.0
    p_equals_q: bool = False

    @property
    def is_evidence(self) -> bool:
        """An agreement at a point where P != Q."""
        return self.status == "agree" and not self.p_equals_q

    @property
    def outcome(self) -> Outcome:
        """Evidence holds, a mismatch fails; an agreement at P = Q verifies nothing (inconclusive)."""
        if self.status == "mismatch":
            return Outcome.FAILS
        return Outcome.HOLDS if self.is_evidence else Outcome.INCONCLUSIVE

    def __repr__(self) -> str:
        return f"<PointCheck {self.describe()[:120]}>"

    def describe(self) -> str:
        c = "n/a" if self.closed is None else mpmath.nstr(self.closed, 15)
        tag = self.status + (", P = Q" if self.p_equals_q else "")
        return (f"[{tag}] {self.point.regime}: {self.point.describe()}: closed {c}, numeric "
                f"{mpmath.nstr(self.numeric, 15)} ± {mpmath.nstr(self.error, 2)}, rel. diff "
                f"{mpmath.nstr(self.rel_diff, 3)} ({_digits_str(self.digits)} digits)"
                + (f"; {self.note}" if self.note else ""))


def status_of(checks) -> VerificationStatus:
    """The status of a report with these checks: ``mismatch`` if any point mismatches, else
    ``inconclusive`` if any point is inconclusive or no point is evidence (a point where P = Q verifies
    nothing: with no agreement at P != Q there is no evidence at all), else ``verified``."""
    statuses = {c.status for c in checks}
    if "mismatch" in statuses:
        return VerificationStatus.MISMATCH
    if "inconclusive" in statuses or not any(c.is_evidence for c in checks):
        return VerificationStatus.INCONCLUSIVE
    return VerificationStatus.VERIFIED


def _digits_str(d: float) -> str:
    return "all" if d == math.inf else f"{d:.1f}"


@dataclass(frozen=True)
class VerificationReport:
    """What :func:`verify` found.

    ``status`` (a :class:`VerificationStatus`), ``checks`` (one :class:`PointCheck` per point),
    ``worst`` (the mismatching point with the largest difference, else the inconclusive point, else
    the point with the fewest digits of agreement), ``dps``, ``digits`` (required agreement), ``seed``,
    ``level``, ``seconds``, ``target`` (what was checked) and ``result``: the verified
    :class:`~rdpsym.DivergenceResult`, whose provenance now holds this report (without ``result``).
    """

    status: VerificationStatus
    checks: tuple[PointCheck, ...]
    dps: int
    digits: float
    seed: int
    level: str
    seconds: float
    target: str
    result: DivergenceResult | None = field(default=None, compare=False, repr=False)

    @property
    def worst(self) -> PointCheck | None:
        for status in ("mismatch", "inconclusive"):
            bad = [c for c in self.checks if c.status == status]
            if bad:
                return max(bad, key=lambda c: c.rel_diff if status == "mismatch" else c.error)
        return min(self.checks, key=lambda c: c.digits) if self.checks else None

    @property
    def min_digits(self) -> float:
        """Fewest digits of agreement over the points that are evidence (agree, P != Q; ``inf`` if
        all were +oo)."""
        agree = [c.digits for c in self.checks if c.is_evidence]
        return min(agree) if agree else 0.0

    @property
    def evidence(self) -> tuple[PointCheck, ...]:
        """The checks that count: agreement at a point where P != Q."""
        return tuple(c for c in self.checks if c.is_evidence)

    @property
    def p_equals_q(self) -> tuple[PointCheck, ...]:
        """The checks at points where P = Q (no evidence whatever their status)."""
        return tuple(c for c in self.checks if c.p_equals_q)

    @property
    def regimes(self) -> tuple[str, ...]:
        """The regimes (``typical``, ``alpha -> 1``, ...) with at least one point of evidence, in order."""
        out: list[str] = []
        for c in self.evidence:
            if c.point.regime not in out:
                out.append(c.point.regime)
        return tuple(out)

    @property
    def regimes_without_evidence(self) -> tuple[str, ...]:
        """Regimes that were checked but have no point of evidence (only P = Q, or not agreeing)."""
        covered = set(self.regimes)
        out: list[str] = []
        for c in self.checks:
            if c.point.regime not in covered and c.point.regime not in out:
                out.append(c.point.regime)
        return tuple(out)

    @property
    def counts(self) -> dict[str, int]:
        out = {"agree": 0, "mismatch": 0, "inconclusive": 0}
        for c in self.checks:
            out[c.status] += 1
        return out

    @property
    def outcome(self) -> Outcome:
        """The coarse outcome of the whole report (see :class:`VerificationStatus`)."""
        return self.status.outcome

    def __bool__(self) -> bool:
        return self.status is VerificationStatus.VERIFIED

    def __str__(self) -> str:
        n = self.counts
        same = len(self.p_equals_q)
        s = (f"{self.status} ({self.target}): {n['agree']} of {len(self.checks)} points agree"
             + (f", {same} of them at P = Q (not evidence)" if same else "")
             + f" (min {_digits_str(self.min_digits)} digits, required {self.digits:g}) at dps {self.dps},"
             f" seed {self.seed}, level {self.level}, {self.seconds:.1f} s")
        s += "; regimes covered: " + (", ".join(self.regimes) if self.regimes else "none")
        if self.regimes_without_evidence:
            s += "; no evidence for: " + ", ".join(self.regimes_without_evidence)
        if self.checks and not self.evidence and not n["mismatch"] and not n["inconclusive"]:
            s += "; every point has P = Q: nothing was verified"
        elif self.status is not VerificationStatus.VERIFIED and self.worst is not None:
            s += f"; worst: {self.worst.describe()}"
        return s

    def __repr__(self) -> str:
        from ..report.display import verification_repr

        return verification_repr(self)

    def _repr_html_(self) -> str:
        from ..report.display import verification_html

        return verification_html(self)

    def describe(self) -> str:
        """Every point, one a line."""
        return "\n".join([str(self)] + [c.describe() for c in self.checks])
