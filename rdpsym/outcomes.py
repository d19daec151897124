"""One outcome vocabulary that every report exposes.

Each kind of report keeps its own precise status (a claim is ``proved``, ``confirmed``, ``refuted`` or
``inconclusive``; a verification is ``verified``, ``mismatch`` or ``inconclusive``; a property ``holds``,
``fails`` or is ``inconclusive``), and each exposes the same coarse ``outcome``:

``holds``         everything asked about was checked and agrees (a proof, or evidence at every point);
``fails``         a counterexample or a mismatch was found and confirmed;
``inconclusive``  neither: something could not be computed, timed out or was dropped. It never counts
                  for a claim (a verifier that fails open is worse than none).

:func:`combine` folds several outcomes the only sound way: any ``fails`` fails, else any
``inconclusive`` is inconclusive, else (and only if there was at least one) it holds.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

__all__ = ["Outcome", "Vocabulary", "combine", "outcome_of"]


class Outcome(enum.StrEnum):
    """The coarse outcome of any check (see the module docstring)."""

    HOLDS = "holds"
    FAILS = "fails"
    INCONCLUSIVE = "inconclusive"

    @property
    def ok(self) -> bool:
        return self is Outcome.HOLDS


class Vocabulary(enum.StrEnum):
    """A report's own status words, each member declared with the :class:`Outcome` it amounts to::

        class VerificationStatus(Vocabulary):
            VERIFIED = "verified", Outcome.HOLDS

    A member is its word (``str(member)``, ``==``, JSON, pickling and lookup by value all use the word);
    ``member.outcome`` is the coarse outcome.
    """

    def __new__(cls, word: str, outcome: Outcome):
        member = str.__new__(cls, word)
        member._value_ = word
        member._outcome = Outcome(outcome)
        return member

    @property
    def outcome(self) -> Outcome:
        return self._outcome


def combine(outcomes: Iterable["Outcome"]) -> Outcome:
    """``fails`` if any fails, else ``inconclusive`` if any is (or there are none), else ``holds``."""
    seen = [outcome_of(o) for o in outcomes]
    if not seen:
        return Outcome.INCONCLUSIVE
    if Outcome.FAILS in seen:
        return Outcome.FAILS
    if Outcome.INCONCLUSIVE in seen:
        return Outcome.INCONCLUSIVE
    return Outcome.HOLDS


def outcome_of(report) -> Outcome:
    """The :class:`Outcome` of an outcome, or of any object with an ``outcome`` attribute."""
    if isinstance(report, Outcome):
        return report
    found = getattr(report, "outcome", None)
    if isinstance(found, Outcome):
        return found
    raise TypeError(f"report: expected an Outcome or an object with an 'outcome'; got {type(report).__name__}")
