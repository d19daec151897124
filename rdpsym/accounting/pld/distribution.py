r"""The privacy loss distributions of one mechanism at its parameter values: per orientation, a
pessimistic and an optimistic one on the grid of step h.

* **Upper (pessimistic).** Of the directed pairs that bound an orientation
  (:func:`~rdpsym.accounting.pld.pairs.oriented_pairs`), the one with the largest profile on the grid,
  X, is discretised by connect-the-dots. Another pair Y of the orientation may exceed X somewhere:
  tau = max over the grid of delta_Y - delta_X (both with their error bounds, so delta_Y is at most the
  chord of X plus tau at every epsilon, since both are convex in e^epsilon). For a product pair the
  profile is an average of the factors' profiles (delta_{Y x Z}(eps) = E_{Z_1}[delta_Y(eps - L_Z)]), so
  each release of the mechanism adds at most tau to the composed delta: ``tau`` is reported and the
  accountant adds count x tau to its upper bound.
* **Lower (optimistic).** With a known orientation (Poisson subsampling), the realisable pair of that
  orientation with the largest profile, floor-rounded. Otherwise the larger pair X and its reverse
  are both realisable in one orientation or the other: the element-wise minimum of their floor-rounded
  masses lies below both, whatever the orientation.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ...specify.mechanism import Mechanism
from .discretisation import GridProfile, grid_profile, optimistic, pessimistic
from .pairs import ORIENTATIONS, oriented_pairs
from .pmf import DiscretePLD, identity

__all__ = ["MechanismPLD", "mechanism_pld"]


@dataclass(frozen=True)
class MechanismPLD:
    """``upper[o]``, ``lower[o]``: the distributions of orientation o; ``tau[o]``: what one release may
    add to the composed delta beyond ``upper[o]`` (module docstring); ``symmetric``: both orientations
    are the same; ``detail``: how each was obtained."""

    upper: dict
    lower: dict
    tau: dict
    symmetric: bool
    detail: str


def _total(g: GridProfile, start: int, stop: int, side: str) -> float:
    return float(np.sum(g.deltas(start, stop, side)))


def _align_min(a: DiscretePLD, b: DiscretePLD) -> DiscretePLD:
    lo = min(a.offset, b.offset)
    hi = max(a.offset + len(a.masses), b.offset + len(b.masses))
    A, B = np.zeros(hi - lo), np.zeros(hi - lo)
    A[a.offset - lo:a.offset - lo + len(a.masses)] = a.masses
    B[b.offset - lo:b.offset - lo + len(b.masses)] = b.masses
    m = np.minimum(A, B)
    nz = np.nonzero(m)[0]
    if not len(nz):
        return DiscretePLD(a.h, 0, np.zeros(1), min(a.inf, b.inf), 0.0, False)
    return DiscretePLD(a.h, lo + int(nz[0]), m[nz[0]:nz[-1] + 1], min(a.inf, b.inf), 0.0, False)


_CACHE: "OrderedDict[tuple, MechanismPLD]" = OrderedDict()
_CACHE_SIZE = 32


def mechanism_pld(mechanism: Mechanism, values: dict, h: float) -> MechanismPLD:
    """The distributions of ``mechanism`` at ``values`` (name -> number) on the grid of step ``h``."""
    key = (mechanism, tuple(sorted(values.items())), h)
    try:
        hit = _CACHE.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    result = _mechanism_pld(mechanism, values, h)
    if key is not None:
        _CACHE[key] = result
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


def _mechanism_pld(mechanism: Mechanism, values: dict, h: float) -> MechanismPLD:
    oriented = oriented_pairs(mechanism, values)
    profiles: dict = {}

    def profile(pair) -> GridProfile:
        if pair not in profiles:
            profiles[pair] = grid_profile(pair, h)
        return profiles[pair]

    upper, lower, tau, notes = {}, {}, {}, []
    for o in ORIENTATIONS:
        pairs = oriented.upper[o]
        if not pairs:
            upper[o], lower[o], tau[o] = identity(h, True), identity(h, False), 0.0
            continue
        gs = [profile(p) for p in pairs]
        start = min(g.lo for g in gs) - 1
        stop = max(g.lo + len(g.P) for g in gs) + 2
        ups = [g.deltas(start, stop, "upper") for g in gs]
        best = int(np.argmax([float(np.sum(d)) for d in ups]))
        t = max((float(np.max(d - ups[best])) for d in ups), default=0.0)
        tau[o] = max(t, 0.0)
        upper[o] = pessimistic(gs[best])
        if oriented.known:
            cands = [profile(p) for p in oriented.lower[o]]
            lows = [_total(g, start, stop, "lower") for g in cands]
            lower[o] = optimistic(cands[int(np.argmax(lows))])
        else:
            x = pairs[best]
            lower[o] = _align_min(optimistic(gs[best]), optimistic(profile(x.reversed())))
        notes.append(f"{o}: {pairs[best].label} ({gs[best].detail})" + (f", tau = {tau[o]:.3g}" if tau[o] else ""))
    symmetric = all(np.array_equal(upper["remove"].masses, upper["add"].masses) and
                    upper["remove"].offset == upper["add"].offset and
                    np.array_equal(lower["remove"].masses, lower["add"].masses) and
                    lower["remove"].offset == lower["add"].offset for _ in (0,))
    return MechanismPLD(upper, lower, tau, symmetric, "; ".join(notes))
