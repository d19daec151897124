"""The support of a pair of distributions, classified once.

A support is given as a sympy ``Set``: ``S.Reals``, an ``Interval``, ``S.Integers``, ``S.Naturals0``,
``S.Naturals``, a ``Range``, a ``FiniteSet``, or a ``Union`` of pieces of one kind. :class:`Support`
flattens it into typed pieces once:

* :class:`Span` ``(lo, hi)``: an interval of the reals (ends are sympy numbers or ``±oo``);
* :class:`Progression` ``(start, step)``: ``start, start + step, ...`` without end (``step < 0`` runs
  downward; ``S.Integers`` is the two progressions ``0, 1, ...`` and ``-1, -2, ...``);
* :class:`Points` ``(points)``: finitely many points (a ``FiniteSet`` or a bounded ``Range``).

A support is continuous (spans only) or discrete (progressions and points only); mixing the two is an
error, as is an empty support.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Union

import mpmath
import sympy as sp

__all__ = ["Points", "Progression", "Span", "Support"]


class Span(NamedTuple):
    """An interval ``(lo, hi)`` of the reals; its ends as the set gives them (sympy numbers,
    expressions in the parameters, or ``±oo``)."""

    lo: object
    hi: object


class Progression(NamedTuple):
    """``start, start + step, start + 2 step, ...`` (no end)."""

    start: sp.Expr
    step: object


class Points(NamedTuple):
    """Finitely many support points."""

    points: tuple


Piece = Union[Span, Progression, Points]

_KINDS = "Reals, Interval, Integers, Naturals0, Naturals, Range, FiniteSet or a Union of them"


def _classify(s: sp.Set) -> list[Piece]:
    if s == sp.S.Reals:
        return [Span(sp.S.NegativeInfinity, sp.S.Infinity)]
    if isinstance(s, sp.Interval):
        return [Span(s.start, s.end)]
    if s == sp.S.Integers:
        return [Progression(sp.Integer(0), 1), Progression(sp.Integer(-1), -1)]
    if s == sp.S.Naturals0:
        return [Progression(sp.Integer(0), 1)]
    if s == sp.S.Naturals:
        return [Progression(sp.Integer(1), 1)]
    if isinstance(s, sp.Range):
        step = abs(s.step)
        if s.inf.is_infinite and s.sup.is_infinite:
            return [Progression(sp.Integer(0), step), Progression(-step, -step)]
        if s.sup.is_infinite:
            return [Progression(s.inf, step)]
        if s.inf.is_infinite:
            return [Progression(s.sup, -step)]
        return [Points(tuple(s))]
    if isinstance(s, sp.FiniteSet):
        return [Points(tuple(s.args))]
    if s == sp.S.EmptySet:
        return []
    raise ValueError(f"support piece {s} is not supported (use Reals, Interval, Integers, Naturals0, Naturals, "
                     "Range, FiniteSet or a Union of them).")


@dataclass(frozen=True)
class Support:
    """A support set with its pieces flattened and classified once (see the module docstring).

    Build it with :meth:`of`; ``numbers=True`` also requires the ends of the spans to be numbers (the
    numeric path's case: parameters substituted).
    """

    set: sp.Set
    pieces: tuple

    @classmethod
    def of(cls, support: sp.Set, *, numbers: bool = False) -> "Support":
        if isinstance(support, Support):
            support = support.set
        if not isinstance(support, sp.Set):
            raise ValueError(f"support must be a sympy Set ({_KINDS}), found {type(support).__name__}.")
        parts = list(support.args) if isinstance(support, sp.Union) else [support]
        pieces = [p for s in parts for p in _classify(s)]
        spans = [p for p in pieces if isinstance(p, Span)]
        if spans and len(spans) < len(pieces):
            raise ValueError("support mixes continuous and discrete pieces; the union must be of one kind.")
        if not pieces:
            raise ValueError("support is empty.")
        if numbers:
            for lo, hi in spans:
                for e in (lo, hi):
                    if not (e in (mpmath.inf, -mpmath.inf) or (isinstance(e, sp.Basic) and e.is_number)):
                        raise ValueError(f"support end {e} is not a number after substituting values.")
        return cls(support, tuple(pieces))

    # -- classification -------------------------------------------------------------------------
    @property
    def is_continuous(self) -> bool:
        return isinstance(self.pieces[0], Span)

    @property
    def is_discrete(self) -> bool:
        return not self.is_continuous

    @property
    def kind(self) -> str:
        """``"continuous"`` or ``"discrete"``."""
        return "continuous" if self.is_continuous else "discrete"

    @property
    def spans(self) -> tuple[Span, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Span))

    @property
    def progressions(self) -> tuple[Progression, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Progression))

    @property
    def finite_points(self) -> tuple:
        """The points of the finite pieces, in the order of the pieces (repeats kept)."""
        return tuple(t for p in self.pieces if isinstance(p, Points) for t in p.points)

    @property
    def is_finite(self) -> bool:
        """A discrete support with finitely many points."""
        return self.is_discrete and not self.progressions

    def flattened(self) -> tuple[str, list]:
        """The tagged form ``(kind, pieces)`` of the numeric path before :class:`Support` existed:
        ``("continuous", [(lo, hi), ...])`` or ``("discrete", [("prog", start, step) | ("finite",
        [points]), ...])``, where ``S.Reals`` reads ``(-mpmath.inf, mpmath.inf)``; kept for code that
        reads pieces that way."""
        if self.is_continuous:
            return "continuous", [(-mpmath.inf, mpmath.inf) if (p.lo, p.hi) == (-sp.oo, sp.oo) else (p.lo, p.hi)
                                  for p in self.pieces]
        return "discrete", [("prog", p.start, p.step) if isinstance(p, Progression) else ("finite", list(p.points))
                            for p in self.pieces]
