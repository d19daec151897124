"""The partition that shows a relation on a box, as data: which boxes were halved, and what holds on the rest.

The certified pass (:func:`rdpsym.claims.interval.bisect_relation`) halves boxes along one coordinate at
a time until every box is settled: the relation holds on it exactly, or no violation on it can exceed the
tolerance. The outcome is a binary tree over the root box; its leaves are the settled boxes. A
:class:`Partition` keeps that tree in preorder (:attr:`Partition.shape`: the coordinate a box was halved
along, or :data:`LEAF`) with each leaf's state and the Arb enclosures of the claim and of the divergence
on it. Every box is determined by the root and the shape (a half is ``(u0, (u0 + u1) / 2)`` or
``((u0 + u1) / 2, u1)`` in IEEE arithmetic), so the leaves cover the root box by construction.

:meth:`Partition.replay` settles each leaf again with the same enclosures (no search) and checks that the
recomputed enclosures overlap the stored ones: both contain the same exact values, so enclosures that do
not meet come from another claim or another divergence.

Enclosures are written as exact text (:func:`ball_text`): the midpoint and the radius as dyadic numbers
``m*2^e``, the midpoint rounded to 64 bits with the rounding added to the radius.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

__all__ = ["Partition", "LEAF", "ball_text", "ball_from_text", "BallTextError", "meets"]

#: the shape's mark of a settled box (a split is the coordinate's index, >= 0)
LEAF = -1
#: bits kept of an enclosure's midpoint when it is written
MID_BITS = 64
_DYADIC = re.compile(r"(-?\d{1,400})\*2\^(-?\d{1,12})")


class BallTextError(ValueError):
    """Text that is not an enclosure written by :func:`ball_text`."""


def _flint():
    import flint

    return flint


def _dyadic(m: int, e: int) -> str:
    return f"{m}*2^{e}"


def _ceil_bits(m: int, e: int, bits: int) -> tuple[int, int]:
    """``m 2^e`` (m >= 0) rounded up to ``bits`` bits of mantissa."""
    extra = m.bit_length() - bits
    return (m, e) if extra <= 0 else (-(-m >> extra), e + extra)


def ball_text(ball) -> dict | None:
    """An Arb ball as ``{"mid": "m*2^e", "rad": "m*2^e"}`` (exact; the midpoint rounded towards zero to
    :data:`MID_BITS` bits and the radius grown by the rounding), ``{"mid": "nan"}`` (no information) or
    ``{"mid": "+inf"}`` / ``{"mid": "-inf"}``; None for None."""
    if ball is None:
        return None
    if ball.is_nan() or (not ball.is_finite() and ball.mid().is_finite()):
        return {"mid": "nan"}  # NaN, or a finite midpoint with an infinite radius: the whole line
    if not ball.is_finite():
        return {"mid": "+inf" if ball.mid() > 0 else "-inf"}
    m, e = (int(v) for v in ball.mid().man_exp()) if not ball.mid().is_zero() else (0, 0)
    r, f = (int(v) for v in ball.rad().man_exp()) if not ball.rad().is_zero() else (0, 0)
    extra = abs(m).bit_length() - MID_BITS
    if extra > 0:
        m, e = (-1 if m < 0 else 1) * (abs(m) >> extra), e + extra
        # |dropped part| < 2^e: the radius r 2^f + 2^e, exactly at the smaller exponent
        g = min(f, e) if r else e
        r, f = (r << (f - g) if r else 0) + (1 << (e - g)), g
    r, f = _ceil_bits(r, f, MID_BITS)
    return {"mid": _dyadic(m, e), "rad": _dyadic(r, f)}


def _number(text: str, field: str):
    flint = _flint()
    m = _DYADIC.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise BallTextError(f"{field}: expected an exact dyadic number 'm*2^e', got {str(text)[:40]!r}")
    mant, ex = int(m.group(1)), int(m.group(2))
    if abs(ex) > 10**7:
        raise BallTextError(f"{field}: exponent {ex} out of range")
    return flint.arb((mant, ex))


def ball_from_text(data, field: str = "enclosure"):
    """The ball written by :func:`ball_text` (a ball containing it: Arb rounds a radius up)."""
    flint = _flint()
    if data is None:
        return None
    if not isinstance(data, dict) or "mid" not in data:
        raise BallTextError(f"{field}: expected {{'mid': ..., 'rad': ...}}")
    mid = data["mid"]
    if mid == "nan":
        return flint.arb.nan()
    if mid in ("+inf", "-inf"):
        return flint.arb.pos_inf() if mid == "+inf" else flint.arb.neg_inf()
    if set(data) != {"mid", "rad"}:
        raise BallTextError(f"{field}: expected the keys 'mid' and 'rad'")
    rad = _number(data["rad"], f"{field}.rad")
    if rad < 0:
        raise BallTextError(f"{field}.rad: a negative radius")
    return flint.arb(_number(mid, f"{field}.mid"), rad)


def meets(a, b) -> bool:
    """Whether two enclosures can hold the same value (a NaN enclosure holds anything)."""
    if a is None or b is None:
        return a is None and b is None
    if a.is_nan() or b.is_nan():
        return True
    if a.is_finite() and b.is_finite():
        return a.overlaps(b)
    if a.is_finite() or b.is_finite():
        return False
    return bool((a > 0) == (b > 0))


@dataclass(frozen=True)
class Partition:
    """A partition of ``root`` (one ``(u0, u1)`` per coordinate) into settled boxes (module docstring).

    ``shape``: preorder, a coordinate index for a box halved along it, :data:`LEAF` for a settled one;
    ``leaves``: per settled box in the same order, ``(state, claim ball, divergence ball)`` with state
    ``"exact"`` (the relation holds exactly) or ``"within"`` (no violation beyond the tolerance); balls
    are None for a box with no point of the parameter space (no integer).
    """

    root: tuple
    shape: tuple
    leaves: tuple

    @classmethod
    def from_search(cls, root, splits: dict, settled: dict) -> "Partition":
        """The partition of a finished search: ``splits`` maps each halved box to its coordinate,
        ``settled`` each settled box to ``(state, (claim ball, divergence ball) or None)``."""
        shape, leaves, stack = [], [], [root]
        while stack:
            box = stack.pop()
            if box in splits:
                k = splits[box]
                shape.append(k)
                low, high = _halves(box, k)
                stack += [high, low]
            else:
                state, balls = settled[box]
                shape.append(LEAF)
                leaves.append((state,) + (tuple(balls) if balls is not None else (None, None)))
        return cls(tuple(root), tuple(shape), tuple(leaves))

    def boxes(self) -> Iterator[tuple]:
        """The settled boxes, in preorder (the order of :attr:`leaves`)."""
        stack = [self.root]
        for k in self.shape:
            box = stack.pop()
            if k == LEAF:
                yield box
            else:
                low, high = _halves(box, k)
                stack += [high, low]

    def replay(self, bisection, exact_only: bool) -> tuple[bool, str]:
        """Settle every leaf again with ``bisection.classify`` (:func:`~rdpsym.claims.interval.bisect_relation`
        in replay mode): ``(True, summary)`` when every leaf is settled again (exactly, when
        ``exact_only``) and its enclosures meet the stored ones; else ``(False, the first failure)``."""
        n = 0
        for i, (box, (state, claim_ball, divergence_ball)) in enumerate(zip(self.boxes(), self.leaves)):
            got, _, balls = bisection.classify(box)
            if got == "open" or (exact_only and got != "exact"):
                return False, f"box {i + 1} of {len(self.leaves)} is not settled when its enclosures are recomputed"
            if (balls is None) != (claim_ball is None):
                return False, f"box {i + 1}: it holds no point of the parameter space on one side only"
            if balls is not None:
                if not meets(balls[0], claim_ball):
                    return False, f"box {i + 1}: the claim's enclosure does not meet the stored one (another claim)"
                if not meets(balls[1], divergence_ball):
                    return False, (f"box {i + 1}: the divergence's enclosure does not meet the stored one "
                                   "(another divergence)")
            n += 1
        if n != len(self.leaves):
            return False, f"the shape has {n} leaves, the certificate {len(self.leaves)}"
        return True, f"{n} boxes settled again"

    # -- data ----------------------------------------------------------------------------------------
    def to_data(self) -> dict:
        return {"root": [list(span) for span in self.root], "shape": list(self.shape),
                "leaves": [[state, ball_text(c), ball_text(d)] for state, c, d in self.leaves]}

    def __reduce__(self):
        # Arb balls do not pickle: a partition crosses a process boundary (a regress entry's task, a
        # sweep's worker) as the exact data its certificate's JSON holds
        return (Partition.from_data, (self.to_data(),))

    @classmethod
    def from_data(cls, data, field: str = "partition") -> "Partition":
        """A partition from :meth:`to_data`'s output, checked (:class:`BallTextError` naming the field)."""
        if not isinstance(data, dict) or set(data) != {"root", "shape", "leaves"}:
            raise BallTextError(f"{field}: expected the keys 'root', 'shape' and 'leaves'")
        root = data["root"]
        if not (isinstance(root, list) and root and all(
                isinstance(s, list) and len(s) == 2 and all(isinstance(u, (int, float)) and not isinstance(u, bool)
                                                            for u in s) and s[0] < s[1] for s in root)):
            raise BallTextError(f"{field}.root: expected [[u0, u1], ...] with u0 < u1")
        shape = data["shape"]
        if not (isinstance(shape, list) and all(type(k) is int and LEAF <= k < len(root) for k in shape)):
            raise BallTextError(f"{field}.shape: expected coordinate indices in [0, {len(root)}) or {LEAF}")
        leaves = data["leaves"]
        if not isinstance(leaves, list) or len(leaves) != sum(1 for k in shape if k == LEAF):
            raise BallTextError(f"{field}.leaves: expected one entry per leaf of the shape")
        # the shape must be a complete preorder tree: every split has two subtrees, nothing left over
        open_slots = 1
        for k in shape:
            if open_slots == 0:
                raise BallTextError(f"{field}.shape: entries after the tree is complete")
            open_slots += 1 if k != LEAF else -1
        if open_slots != 0:
            raise BallTextError(f"{field}.shape: an incomplete tree")
        out = []
        for i, leaf in enumerate(leaves):
            where = f"{field}.leaves[{i}]"
            if not (isinstance(leaf, list) and len(leaf) == 3 and leaf[0] in ("exact", "within")):
                raise BallTextError(f"{where}: expected [\"exact\" or \"within\", claim, divergence]")
            out.append((leaf[0], ball_from_text(leaf[1], f"{where}.claim"),
                        ball_from_text(leaf[2], f"{where}.divergence")))
        return cls(tuple(tuple(float(u) for u in s) for s in root), tuple(shape), tuple(out))


def _halves(box, k):
    u0, u1 = box[k]
    mid = (u0 + u1) / 2
    return box[:k] + ((u0, mid),) + box[k + 1:], box[:k] + ((mid, u1),) + box[k + 1:]
