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
  With one pair per orientation (a family reduced by proof, :func:`~.pairs.family_reduction`) there is
  nothing to compare and tau = 0.
* **Lower (optimistic).** With a known orientation (Poisson subsampling), the realisable pair of that
  orientation with the largest profile. When the worst pair's reverse is proved to be its mirror image,
  that pair (realisable in both orientations). Otherwise the worst pair X and its reverse are both
  realisable in one orientation or the other: the element-wise minimum of their optimistic masses lies
  below both, whatever the orientation (its remainders are not used).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ...specify.mechanism import Mechanism
from .discretisation import GridProfile, grid_profile, optimistic, pessimistic
from .pairs import ORIENTATIONS, oriented_pairs
from .pmf import DiscretePLD, PLDTimeout, identity

__all__ = ["MechanismPLD", "mechanism_pld"]


@dataclass(frozen=True)
class MechanismPLD:
    """``upper[o]``, ``lower[o]``: the distributions of orientation o; ``tau[o]``: what one release may
    add to the composed delta beyond ``upper[o]`` (module docstring); ``symmetric``: both orientations
    are the same; ``detail``: how each was obtained; ``certified``: every bucket bound is proved;
    ``notes``: why not; ``heuristics``: what the choice of pairs rests on that is not proved."""

    upper: dict
    lower: dict
    tau: dict
    symmetric: bool
    detail: str
    certified: bool = True
    notes: tuple = ()
    heuristics: tuple = ()


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
    # (the remainders of the two are not combined: the minimum keeps none, which is valid)
    return DiscretePLD(a.h, lo + int(nz[0]), m[nz[0]:nz[-1] + 1], min(a.inf, b.inf), 0.0, False, 0.0, 0.0)


#: wall-clock guard on building one mechanism's distributions (against hangs only: the work itself is
#: bounded by counts, discretisation.MAX_MODELS and the memory guards)
PLD_SECONDS = 300.0
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
    from ..._timeout import StepTimeout, time_limit

    try:
        with time_limit(PLD_SECONDS, clock="wall"):
            result = _mechanism_pld(mechanism, values, h)
    except StepTimeout:
        raise PLDTimeout(f"{mechanism.name}: building its privacy loss distribution did not finish within "
                         f"{PLD_SECONDS:g} s (a wall-clock guard against hangs, far above the usual second or two; "
                         "not a verdict): no bound") from None
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
        if len(gs) == 1:
            best, tau[o] = 0, 0.0
        else:
            start = min(g.lo for g in gs) - 1
            stop = max(g.lo + len(g.Ph) for g in gs) + 2
            ups = [g.deltas(start, stop, "upper") for g in gs]
            best = int(np.argmax([float(np.sum(d)) for d in ups]))
            tau[o] = max(0.0, max(float(np.max(d - ups[best])) for d in ups))
        upper[o] = pessimistic(gs[best])
        if oriented.known:
            cands = [profile(p) for p in oriented.lower[o]]
            if len(cands) == 1:
                lower[o] = optimistic(cands[0])
            else:
                start = min(g.lo for g in cands) - 1
                stop = max(g.lo + len(g.Pl) for g in cands) + 2
                lows = [_total(g, start, stop, "lower") for g in cands]
                lower[o] = optimistic(cands[int(np.argmax(lows))])
        elif oriented.mirrored:
            lower[o] = optimistic(gs[best])
        else:
            x = pairs[best]
            lower[o] = _align_min(optimistic(gs[best]), optimistic(profile(x.reversed())))
        notes.append(f"{o}: {pairs[best].label} ({gs[best].detail})" + (f", tau = {tau[o]:.3g}" if tau[o] else ""))
    symmetric = (_same(upper["remove"], upper["add"]) and _same(lower["remove"], lower["add"])
                 and tau["remove"] == tau["add"])
    certified = all(g.certified for g in profiles.values())
    why = tuple(dict.fromkeys(n for g in profiles.values() if not g.certified for n in g.notes))
    heur = tuple(oriented.heuristics) + (("dominance of the sampled pairs over each other bounded on the grid "
                                          "(tau)",) if any(tau.values()) else ())
    return MechanismPLD(upper, lower, tau, symmetric, "; ".join(notes), certified, why, heur)


def _same(a: DiscretePLD, b: DiscretePLD) -> bool:
    return (a is b) or (a.offset == b.offset and a.inf == b.inf and a.rem == b.rem
                        and np.array_equal(a.masses, b.masses))
