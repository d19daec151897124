r"""The adjacent pairs that stand for a mechanism's supremum over neighbouring inputs, as data.

A mechanism's RDP curve is the maximum over its adjacent pairs and both directions (Mironov 2017,
arXiv:1702.07476 v3, Def. 4). Which concrete pairs stand for that maximum is the engine's knowledge
(:func:`rdpsym.derive.mechanism_rdp.worst_pairs`): a declared :class:`AdjacentPair` stands for itself, a
family whose supremum over its shift was shown stands for its pairs at the shifts where it is taken
(:mod:`rdpsym.derive.adjacency`). A family whose supremum was not shown stands for nothing concrete,
except a family of *integer* shifts (neighbouring integer queries of a discrete mechanism): at given
parameter values it is the finite set of its pairs at every integer shift in its set, and the supremum
over a finite set is their maximum, exact, not a lower estimate.

:class:`WorstPairs` records that knowledge once, as data (sympy expressions and the mechanism's own
pair objects, no code), so a result can carry it (:class:`rdpsym.derive.numeric_values.NumericCurve`)
and expand it at parameter values without calling the engine again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import sympy as sp

from .._numbers import ArgumentError
from ..specify.text.numbers import exact_number
from ..numeric.maximum import Direction
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import AdjacentPair

__all__ = ["MAX_INTEGER_SHIFTS", "NOT_SHOWN", "NotShown", "WorstPairs", "both_directions", "integer_members"]

#: at most this many integer shifts are enumerated for a family of integer shifts
MAX_INTEGER_SHIFTS = 129

#: why a computation that needs concrete pairs cannot use a family whose supremum was not shown
NOT_SHOWN = "supremum over t not shown symbolically"


def integer_members(family: AdjacentFamily, values: Mapping | None) -> list[AdjacentPair] | None:
    """The pairs at every integer shift in ``over`` at parameter ``values`` (name -> number), for a family
    whose shift is declared integer; None when it is not, or ``over`` has no numeric ends at ``values``,
    or it holds more than :data:`MAX_INTEGER_SHIFTS` integers. The supremum over them is a maximum over
    a finite set: evaluated at every member it is exact, not a lower estimate."""
    if values is None or family.is_vector or not family.shift.is_integer:
        return None
    by_name = {s.name: s for s in family.over.free_symbols}
    subs = {by_name[k]: exact_number(v, f"parameter {k!r}") for k, v in dict(values).items() if k in by_name}
    start, end = (e.subs(subs) for e in family.ends)
    if not (start.is_number and end.is_number and start.is_finite and end.is_finite):
        return None
    lo = sp.ceiling(start) + (1 if family.over.left_open and start.is_integer else 0)
    hi = sp.floor(end) - (1 if family.over.right_open and end.is_integer else 0)
    if hi - lo + 1 > MAX_INTEGER_SHIFTS:
        return None
    members = [family.member(sp.Integer(v)) for v in range(int(lo), int(hi) + 1)]
    # a member with P = Q (t = 0 of a shift family) has divergence 0, below every other (Mironov 2017,
    # Prop. 8: D_alpha >= 0); it is left out when another remains (its numerics would chase a zero)
    others = [m for m in members if m.P != m.Q]
    return others or members


@dataclass(frozen=True)
class NotShown:
    """A family whose supremum over its shift was not shown, with the engine's reason."""

    family: AdjacentFamily
    reason: str


@dataclass(frozen=True)
class WorstPairs:
    """The pairs standing for the supremum over neighbouring inputs of the mechanism named ``mechanism``:
    ``items`` in the order of its declared pairs, each an :class:`AdjacentPair` or a :class:`NotShown`
    family (expanded by :meth:`at`)."""

    mechanism: str
    items: tuple = ()

    def at(self, values: Mapping | None = None) -> tuple[AdjacentPair, ...]:
        """The concrete pairs at parameter ``values`` (name -> number; None: symbolic parameters). A
        family whose supremum was not shown stands for its pairs at every integer shift when its shift is
        integer and ``values`` fix its set of shifts; otherwise :class:`~rdpsym._numbers.ArgumentError`:
        no finite set of pairs is known to stand for it (use
        :func:`rdpsym.numeric.families.supremum_over_family` for numbers)."""
        out: list[AdjacentPair] = []
        for item in self.items:
            if not isinstance(item, NotShown):
                out.append(item)
                continue
            members = integer_members(item.family, values)
            if members is None:
                raise ArgumentError(f"mechanism {self.mechanism!r}", "a mechanism whose families have a supremum "
                                    "shown at known shifts",
                                    message=f"mechanism {self.mechanism!r}: family [{item.family.label}]: "
                                            f"{NOT_SHOWN}: {item.reason}; this computation needs concrete adjacent "
                                            "pairs")
            out.extend(members)
        return tuple(out)

    def directions(self, x, support: sp.Set, values: Mapping | None = None) -> tuple[Direction, ...]:
        """Both directions of every pair of :meth:`at` (``ArgumentError`` as there)."""
        return both_directions(self.at(values), x, support)


def both_directions(pairs, x, support: sp.Set) -> tuple[Direction, ...]:
    """``D(P||Q)`` and ``D(Q||P)`` of every adjacent pair, labelled by the pair."""
    return tuple(d for pair in pairs for d in (Direction(pair.P, pair.Q, x, support, f"D(P||Q) [{pair.label}]"),
                                               Direction(pair.Q, pair.P, x, support, f"D(Q||P) [{pair.label}]")))
