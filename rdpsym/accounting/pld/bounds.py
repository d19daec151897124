r"""The certified bracket of a composition: epsilon(delta) or delta(epsilon), from below and above.

For each orientation o (remove, add) the events' pessimistic distributions are composed (each
self-composed by repeated squaring, then convolved together) and so are the optimistic ones
(:mod:`.composition`). Then, with E the error bounds (floating point of the FFTs and of the sums,
and count x tau of :mod:`.distribution`):

* ``delta`` at epsilon: upper = max_o (delta of the pessimistic composition + E), lower = max_o (delta
  of the optimistic composition - E), clipped to [0, 1]. The true delta(epsilon) of the composition is
  the larger of the two orientations (Zhu, Dong and Wang 2022, Sect. 3).
* ``epsilon`` at delta: upper = max_o of the smallest epsilon >= 0 with (pessimistic delta + E) <= delta
  (+inf when none: the mass at +infinity alone exceeds delta); lower = max_o of the largest epsilon at
  which (optimistic delta - E) still exceeds delta (0 when none), so every smaller epsilon fails too.

``TightBound.budget`` says, in units of delta at the target, what each approximation spent:
``discretisation`` (pessimistic minus optimistic delta), ``truncation`` (mass moved to +infinity or
dropped by the truncations), ``floating_point`` (the FFT and summation bounds) and ``dominance``
(count x tau).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .composition import MAX_POINTS, TAIL, convolve, self_compose
from .distribution import mechanism_pld
from .pairs import ORIENTATIONS
from .pmf import DiscretePLD, identity

__all__ = ["TightBound", "compose_events", "tight_bound", "DEFAULT_STEP"]

#: grid step of the privacy loss (dp_accounting's default value_discretization_interval)
DEFAULT_STEP = 1e-4


@dataclass(frozen=True)
class TightBound:
    """A certified bracket: ``lower <= exact <= upper`` for epsilon(delta) (``kind="epsilon"``) or
    delta(epsilon) (``kind="delta"``) of the composition; ``upper`` is the guarantee."""

    kind: str
    target: float
    lower: float
    upper: float
    method: str
    budget: dict = field(default_factory=dict)
    orientation: str = ""
    step: float = DEFAULT_STEP
    detail: str = ""

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def as_dict(self) -> dict:
        other = "delta" if self.kind == "epsilon" else "epsilon"
        return {f"{self.kind}_lower": self.lower, f"{self.kind}_upper": self.upper, other: self.target,
                "method": self.method, "budget": dict(self.budget), "orientation": self.orientation,
                "step": self.step, "detail": self.detail}

    def __repr__(self) -> str:
        other = "delta" if self.kind == "epsilon" else "epsilon"
        return (f"TightBound({self.kind} in [{self.lower:.10g}, {self.upper:.10g}] at {other} = {self.target:g}, "
                f"step {self.step:g})")


@dataclass(frozen=True)
class _Composed:
    upper: DiscretePLD
    lower: DiscretePLD
    tau: float  # sum of count x tau


def compose_events(events, h: float, tail: float = TAIL, max_points: int = MAX_POINTS) -> dict:
    """orientation -> composed (upper, lower, tau) for ``events``: (mechanism, values dict, count, label)."""
    plds = [(mechanism_pld(m, values, h), count, label) for m, values, count, label in events if count]
    symmetric = all(p.symmetric for p, _, _ in plds)
    out = {}
    for o in ORIENTATIONS[:1] if symmetric else ORIENTATIONS:
        up, lo, tau = identity(h, True), identity(h, False), 0.0
        for p, count, label in plds:
            what = f"{label} x {count}"
            up = convolve(up, self_compose(p.upper[o], count, tail, max_points, what), tail, max_points, what)
            lo = convolve(lo, self_compose(p.lower[o], count, tail, max_points, what), tail, max_points, what)
            tau += count * p.tau[o]
        out[o] = _Composed(up, lo, tau)
    return out


def _crossing(p: DiscretePLD, target: float) -> tuple[float, float]:
    """(lo, hi) with p.delta(lo) > target >= p.delta(hi), hi - lo a few ulps: the smallest epsilon >= 0 with
    delta <= target lies in (lo, hi]; (0, 0) when delta(0) <= target already, (x, inf) when no epsilon
    reaches it (the mass at +infinity alone exceeds the target). The grid gives a first guess by cumulative
    sums, solved in closed form on its interval; bisection on checked values makes it safe."""
    if p.delta(0.0)[0] <= target:
        return 0.0, 0.0
    if p.inf >= target:
        return float(p.losses[-1]) if len(p.masses) else 0.0, math.inf
    ell, m = p.losses, p.masses
    keep = ell > 0
    ell, m = ell[keep], m[keep]
    if not len(m):
        return 0.0, 0.0
    A = np.cumsum(m[::-1])[::-1]
    with np.errstate(over="ignore"):
        B = np.cumsum((m * np.exp(-ell))[::-1])[::-1]
    A1, B1 = np.append(A[1:], 0.0), np.append(B[1:], 0.0)
    dj = p.inf + A1 - np.exp(ell) * B1  # delta at eps = ell_j
    j = int(np.argmax(dj <= target)) if np.any(dj <= target) else len(ell) - 1
    s1, s2 = math.fsum(m[j:]), math.fsum(m[j:] * np.exp(-ell[j:]))
    guess = math.log((p.inf + s1 - target) / s2) if s2 > 0 and p.inf + s1 > target else float(ell[j])
    lo, hi = 0.0, float(ell[-1]) + 1.0
    for x in (float(ell[j - 1]) if j > 0 else 0.0, guess * (1 - 1e-13), guess * (1 + 1e-13), float(ell[j])):
        if lo < x < hi:
            if p.delta(x)[0] <= target:
                hi = x
            else:
                lo = x
    for _ in range(200):
        if hi - lo <= 4e-16 * max(1.0, abs(hi)):
            break
        mid = 0.5 * (lo + hi)
        if p.delta(mid)[0] <= target:
            hi = mid
        else:
            lo = mid
    return lo, hi


def _err(p: DiscretePLD) -> float:
    return p.err + 4 * 2.0 ** -53 * (float(np.sum(np.abs(p.masses))) + p.inf) + 1e-300


def tight_bound(events, kind: str, target: float, h: float = DEFAULT_STEP, tail: float = TAIL,
                max_points: int = MAX_POINTS) -> TightBound:
    """The certified bracket of ``kind`` (``"epsilon"`` at delta = target, or ``"delta"`` at epsilon =
    target) for ``events`` (module docstring)."""
    composed = compose_events(events, h, tail, max_points)
    best_o, lower, upper, spent = "", -math.inf, -math.inf, {}
    for o, c in composed.items():
        E_up = _err(c.upper) + c.tau
        E_lo = _err(c.lower)
        if kind == "delta":
            up = min(1.0, c.upper.delta(target)[0] + E_up)
            lo = max(0.0, c.lower.delta(target)[0] - E_lo)
        else:
            up = math.inf if target - E_up <= 0 else _crossing(c.upper, target - E_up)[1]
            # every eps <= lo has optimistic delta - E > target, so the exact epsilon(delta) is at least lo
            lo = _crossing(c.lower, target + E_lo)[0]
        if up > upper or (up == upper and lo > lower):
            best_o = o
        upper, lower = max(upper, up), max(lower, lo)
        at = target if kind == "delta" else (up if math.isfinite(up) else 0.0)
        spent[o] = {"discretisation": max(0.0, c.upper.delta(at)[0] - c.lower.delta(at)[0]),
                    "truncation": c.upper.truncated + c.lower.truncated,
                    "floating_point": E_up - c.tau + E_lo, "dominance": c.tau}
    method = (f"privacy loss distributions from the densities on a grid of step {h:g}: connect-the-dots "
              f"(pessimistic) and floor rounding (optimistic), composed by FFT (repeated squaring) with a stated "
              f"floating-point bound, tails of {tail:g} truncated per convolution; orientations: "
              + (", ".join(composed) if len(composed) > 1 else "remove = add (every event is symmetric)"))
    return TightBound(kind, float(target), float(lower), float(upper), method, spent.get(best_o, {}), best_o, h,
                      detail="; ".join(f"{o}: {v}" for o, v in spent.items()))


def _check_target(kind: str, target) -> float:
    from ..._numbers import ArgumentError

    name = "delta" if kind == "epsilon" else "epsilon"
    if isinstance(target, (str, bytes, bool)) or not isinstance(target, (int, float, np.integer, np.floating)):
        raise ArgumentError(name, "a real number" + (" in (0, 1)" if name == "delta" else " >= 0"), target)
    t = float(target)
    if name == "delta" and not (0 < t < 1):
        raise ArgumentError(name, "a number in (0, 1) (not NaN)", target)
    if name == "epsilon" and not (math.isfinite(t) and t >= 0):
        raise ArgumentError(name, "a finite number >= 0 (not NaN)", target)
    return t


def accountant_bound(acct, kind: str, target, step: float = DEFAULT_STEP) -> TightBound:
    """:meth:`rdpsym.accounting.Accountant.tight_epsilon` / ``tight_delta``: the bracket of the accountant's
    events (each mechanism at its values, released ``count`` times)."""
    from ..._numbers import ArgumentError
    from ...specify.mechanism import Mechanism

    t = _check_target(kind, target)
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not (0 < float(step) <= 0.1):
        raise ArgumentError("step", "a number in (0, 0.1] (the grid step of the privacy loss)", step)
    if acct.group_size != 1:
        raise ArgumentError("group_size", "1 for the tight bounds (privacy loss distributions of groups are not "
                            "computed)", acct.group_size)
    if getattr(acct, "non_private", False):
        value = math.inf if kind == "epsilon" else 1.0
        return TightBound(kind, t, value, value, "a non-private event: no guarantee", {}, "", float(step))
    events = []
    for mid, bucket in acct._events.items():
        m = acct._mechs[mid]
        if not isinstance(m, Mechanism):
            raise ArgumentError("events", "mechanisms with densities (a stated guarantee such as zCDP has no privacy "
                                "loss distribution)", getattr(m, "name", m))
        for vals, count in bucket.items():
            values = dict(vals)
            label = f"{m.name}({', '.join(f'{k}={v:g}' for k, v in vals)})"
            events.append((m, values, count, label))
    return tight_bound(events, kind, t, float(step))
