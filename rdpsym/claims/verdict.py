"""What :func:`rdpsym.check_claim` returns: the verdict, the evidence it rests on, the counterexample.

The four verdicts (``proved``, ``confirmed``, ``refuted``, ``inconclusive``) and what earns each are
described in :mod:`rdpsym.claims.check`; each maps onto the one outcome vocabulary of
:mod:`rdpsym.outcomes` (``ClaimVerdict.outcome``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import mpmath
import sympy as sp

from .. import printing
from ..outcomes import Outcome, Vocabulary
from .orders import order_name

__all__ = ["Verdict", "Counterexample", "ClaimVerdict"]


class Verdict(Vocabulary):
    """The outcome of :func:`check_claim`: proved and confirmed hold, refuted fails, inconclusive is
    inconclusive."""

    PROVED = "proved", Outcome.HOLDS
    CONFIRMED = "confirmed", Outcome.HOLDS
    REFUTED = "refuted", Outcome.FAILS
    INCONCLUSIVE = "inconclusive", Outcome.INCONCLUSIVE


def format_number(v, digits: int = 20) -> str:
    if v is None:
        return "undefined"
    if isinstance(v, sp.Rational) and max(abs(v.p), v.q).bit_length() > 128:
        # an order like 10^600 - 2 is exact in the verdict's data; in prose its digits say nothing (and
        # Python refuses to print an integer of over 4300 digits)
        with mpmath.workdps(digits):
            return "~" + mpmath.nstr(mpmath.mpf(v.p) / v.q, digits)
    if isinstance(v, sp.Basic):
        return printing.sstr(v)
    if mpmath.isinf(v):
        return "+oo" if v > 0 else "-oo"
    return mpmath.nstr(v, digits)


@dataclass(frozen=True)
class Counterexample:
    """A point where the claim fails, with both values at ``dps`` digits.

    ``values``: the target's parameters (free and fixed); ``claim_arguments``: what the claim's own
    names stood for there (``lambda = 3``); ``gap = claim - divergence``; ``numeric``: the independent
    mpmath value of the divergence ``(value, error, converged, detail)`` or None.
    """

    alpha: sp.Expr
    values: dict[str, sp.Expr]
    claim_arguments: dict[str, sp.Expr]
    claim_value: Any
    divergence: Any
    gap: Any
    relation: str
    dps: int
    numeric: tuple | None = None
    shrunk_from: tuple | None = None

    def __repr__(self) -> str:
        first = self.describe().splitlines()[0]
        return f"<Counterexample {first[:100]}>"

    def describe(self) -> str:
        point = ", ".join([f"alpha = {format_number(self.alpha)}"] + [f"{k} = {format_number(v)}" for k, v in self.values.items()])
        args = ", ".join(f"{k} = {format_number(v)}" for k, v in self.claim_arguments.items())
        lines = [f"at {point}" + (f" (claim's names: {args})" if args else ""),
                 f"  claim      = {format_number(self.claim_value, 30)}",
                 f"  divergence = {format_number(self.divergence, 30)}",
                 f"  gap (claim - divergence) = {format_number(self.gap, 10)}; the claim needs divergence {self.relation} claim"]
        if self.numeric is not None:
            value, error, converged, detail = self.numeric
            lines.append(f"  independent numerics (mpmath): {format_number(value, 20)} +- {format_number(error, 3)}"
                         f" ({'converged' if converged else 'not converged: ' + str(detail)})")
        return "\n".join(lines)


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict on a claim, with everything it rests on (see :func:`check_claim`)."""

    verdict: Verdict
    relation: str
    order: Any
    claim: Any
    divergence: sp.Expr | None
    mapping: str
    inferred: tuple[str, ...]
    evidence: tuple[str, ...]
    counterexample: Counterexample | None = None
    points_checked: int = 0
    digits: float | None = None
    target: str = ""
    #: the :class:`~rdpsym.claims.certificate.Certificate` of a proved, confirmed or refuted verdict on a
    #: formula (None when inconclusive, and for a callable claim: code is not data)
    certificate: Any = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """True for ``proved`` and ``confirmed``."""
        return self.verdict in (Verdict.PROVED, Verdict.CONFIRMED)

    @property
    def outcome(self) -> Outcome:
        """The coarse :class:`~rdpsym.outcomes.Outcome` of the verdict (``holds`` exactly when ``ok``)."""
        return self.verdict.outcome

    def __str__(self) -> str:
        what = order_name(self.order)
        claim = self.claim if isinstance(self.claim, str) else (
            printing.sstr(self.claim) if isinstance(self.claim, sp.Basic) else getattr(self.claim, "__name__", repr(self.claim)))
        lines = [f"{self.verdict.value.upper()}: {what} of {self.target} {self.relation} claim",
                 f"  claim: {claim}"]
        if self.divergence is not None:
            lines.append(f"  derived: {printing.sstr(self.divergence)}")
        if self.mapping:
            lines.append(f"  symbols: {self.mapping}")
        for line in self.evidence:
            lines.append(f"  - {line}")
        if self.counterexample is not None:
            lines.append("  counterexample " + self.counterexample.describe())
        return "\n".join(lines)

    def __repr__(self) -> str:
        from ..report.display import verdict_repr

        return verdict_repr(self)

    def _repr_html_(self) -> str:
        from ..report.display import verdict_html

        return verdict_html(self)


def format_values(values: Mapping) -> str:
    return ", ".join(f"{k} = {format_number(v)}" for k, v in values.items()) or "no free parameters"
