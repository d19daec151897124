r"""The certified bracket of a composition: epsilon(delta) or delta(epsilon), from below and above.

For each orientation o (remove, add) the events' pessimistic distributions are composed and so are the
optimistic ones (:mod:`.composition`). With E the error bounds (floating point of the FFTs and the mass
outside the window, and sum count x tau of :mod:`.distribution`):

* **Profiles** (:class:`Profile`): delta(eps) = inf + sum_{l_j > eps} m_j (1 - e^{eps - l_j}) is, on the
  cell l_i <= eps <= l_{i+1}, inf + A_i - e^eps B_i with A_i, B_i the sums of m_j and m_j e^{-l_j} over
  j > i (suffix sums in float, within gamma_n; e^{-l_j} from :mod:`.exps`). An eps an ulp outside its cell
  changes the value by at most (m_i + m_{i+1}) 8 u (|eps| + h), added to the upper bound.
* **Upper** = max_o (pessimistic delta + E). For epsilon at delta: the cell where the upper profile falls
  to delta - E, solved in closed form, log in Arb, rounded up (+inf when the mass at +infinity alone exceeds
  it).
* **Lower** = max_o of the optimistic delta - E, improved by the remainders: the optimistic atoms were
  rounded down to the grid, each by r in [0, h], independently across releases. With R the sum of the n
  remainders (mean m_R, bounded below) and f(s) = (1 - e^{eps - s})_+, non-decreasing with values in
  [0, 1], E f(S + R) >= E f(S + c) - P(R < c), and by Hoeffding's inequality
  P(R < m_R - t) <= exp(-2 t^2 / (n h^2)). So delta_exact(eps) >= delta_opt(eps - c) - eta with
  c = m_R - h sqrt(n log(1/eta) / 2); a few eta (fractions of the target) are tried, the best kept. This
  recovers most of what rounding down loses over many releases (up to h per release).

The true delta(epsilon) of the composition is the larger of the two orientations (Zhu, Dong and Wang 2022,
"Optimal accounting of differential privacy via characteristic function", AISTATS, Sect. 3).
``TightBound.budget`` says what each approximation spent, in units of delta at the target:
``discretisation`` (pessimistic minus optimistic delta), ``truncation`` (mass outside the composition's
window), ``floating_point`` (the FFT and summation bounds) and ``dominance`` (count x tau).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .composition import MAX_POINTS, TAIL, compose
from .distribution import mechanism_pld
from .exps import exp_bounds, exp_grid
from .pairs import ORIENTATIONS
from .pmf import DiscretePLD, identity
from .taylor import PREC, f_down, f_up, gamma

__all__ = ["TightBound", "Profile", "Bracket", "compose_events", "tight_bound", "DEFAULT_STEP"]

U = 2.0 ** -53
#: grid step of the privacy loss (dp_accounting's default value_discretization_interval)
DEFAULT_STEP = 1e-4
#: the fractions of the target tried as the Hoeffding term eta of the lower bound
ETAS = (0.3, 0.1, 0.03, 0.01, 1e-3, 1e-4)


@dataclass(frozen=True)
class TightBound:
    """A certified bracket: ``lower <= exact <= upper`` for epsilon(delta) (``kind="epsilon"``) or
    delta(epsilon) (``kind="delta"``) of the composition; ``upper`` is the guarantee. ``certified`` is
    False when a step of the computation is an estimate (``method`` says which)."""

    kind: str
    target: float
    lower: float
    upper: float
    method: str
    budget: dict = field(default_factory=dict)
    orientation: str = ""
    step: float = DEFAULT_STEP
    detail: str = ""
    certified: bool = True
    #: what the choice of pairs rests on that is not proved (a sampled family, a pair taken as the worst):
    #: the lower bound stays certified (its pairs are real neighbouring pairs), the upper bound does not
    heuristics: tuple = ()

    @property
    def width(self) -> float:
        return self.upper - self.lower

    @property
    def upper_certified(self) -> bool:
        """``upper`` is proved: the masses are certified and the pairs' dominance is proved."""
        return self.certified and not self.heuristics

    def as_dict(self) -> dict:
        other = "delta" if self.kind == "epsilon" else "epsilon"
        return {f"{self.kind}_lower": self.lower, f"{self.kind}_upper": self.upper, other: self.target,
                "method": self.method, "certified": self.certified, "heuristics": list(self.heuristics),
                "budget": dict(self.budget),
                "orientation": self.orientation, "step": self.step, "detail": self.detail}

    def __repr__(self) -> str:
        other = "delta" if self.kind == "epsilon" else "epsilon"
        return (f"TightBound({self.kind} in [{self.lower:.10g}, {self.upper:.10g}] at {other} = {self.target:g}, "
                f"step {self.step:g}{'' if self.certified else ', not certified'})")


# -- profiles of a composed distribution ------------------------------------------------------------------
def _log_ball(num: float, den: float, up: bool) -> float:
    """log(num / den) rounded up (``up``) or down, for floats num, den > 0."""
    import flint

    with flint.ctx.workprec(PREC):
        v = (flint.arb(num) / flint.arb(den)).log()
        return f_up(v) if up else f_down(v)


class Profile:
    """Certified bounds on delta(eps) of a composed distribution for eps >= ``eps_min`` (module docstring),
    and the epsilon at which they cross a target. ``side``: ``"upper"`` (p pessimistic) or ``"lower"``."""

    def __init__(self, p: DiscretePLD, side: str, eps_min: float = 0.0):
        self.h, self.side = p.h, side
        h = p.h
        start = max(0, int(math.floor(eps_min / h)) - p.offset - 2)
        m = np.asarray(p.masses[start:], float)
        self.base = p.offset + start  # loss of m[i] is (base + i) h
        n = len(m)
        self.n = n
        self.m = m
        self.inf = p.inf
        self.err = p.err
        if n:
            e_lo, e_hi = exp_grid(h, -(self.base + n - 1), -self.base + 1)
            em = (e_lo if side == "upper" else e_hi)[::-1]  # e^{-(base + i) h}
            g = gamma(n + 2)
            A = np.concatenate([np.cumsum(m[::-1])[::-1], [0.0]])
            with np.errstate(over="ignore"):
                B = np.concatenate([np.cumsum((m * em)[::-1])[::-1], [0.0]])
            if side == "upper":
                self.A, self.B = A * (1 + g), B * (1 - g) * (1 - 2 * U)
            else:
                self.A, self.B = A * (1 - g), B * (1 + g) * (1 + 2 * U) + n * 1e-300
            self.E_lo, self.E_hi = exp_grid(h, self.base, self.base + n)
        else:
            self.A = self.B = np.zeros(1)
            self.E_lo = self.E_hi = np.zeros(0)

    def _cell(self, eps: float) -> int:
        """The cell index c (terms j >= c + 1), -1 <= c <= n - 1, with l_c <= eps <= l_{c+1} up to an ulp."""
        c = int(math.floor(eps / self.h)) - self.base
        return min(max(c, -1), self.n - 1)

    def _value(self, c: int, e_lo: float, e_hi: float, eps: float) -> float:
        A, B = self.A[c + 1], self.B[c + 1]
        if self.side == "upper":
            prod = (e_lo * B) * (1 - 2 * U)
            d = A - prod
            d = d + 4 * U * abs(d)
            near = sum(self.m[j] for j in (c, c + 1) if 0 <= j < self.n) * 8 * U * (abs(eps) + self.h)
            return self.inf + d + near + 1e-300
        prod = (e_hi * B) * (1 + 2 * U)
        d = A - prod
        d = d - 4 * U * abs(d)
        return self.inf + d - 1e-300

    def delta(self, eps: float) -> float:
        """The bound on delta(eps) (the error ``err`` of the distribution not included)."""
        c = self._cell(eps)
        e_lo, e_hi = exp_bounds(eps)
        v = self._value(c, e_lo, e_hi, eps)
        return max(v, 0.0)

    def _grid(self) -> np.ndarray:
        """The bound at every grid loss l_k (cell k)."""
        A, B = self.A[1:], self.B[1:]
        if self.side == "upper":
            prod = (self.E_lo * B) * (1 - 2 * U)
            d = A - prod
            d = d + 4 * U * np.abs(d)
            near = (self.m + np.concatenate([self.m[1:], [0.0]])) * 8 * U * (np.abs(self.losses()) + self.h)
            return self.inf + d + near + 1e-300
        prod = (self.E_hi * B) * (1 + 2 * U)
        d = A - prod
        d = d - 4 * U * np.abs(d)
        return self.inf + d - 1e-300

    def losses(self) -> np.ndarray:
        return (self.base + np.arange(self.n)) * self.h

    def epsilon(self, target: float, floor: float = 0.0) -> float:
        """Upper side: an eps >= ``floor`` with bound(eps) <= target (the smallest up to rounding; +inf when
        none). Lower side: the largest eps >= ``floor`` with bound(eps) > target (``floor`` when none)."""
        if self.side == "upper":
            if self.delta(floor) <= target:
                return floor
            if self.inf >= target:
                return math.inf
            vals = self._grid()
            ell = self.losses()
            above = np.nonzero((vals > target) & (ell >= floor))[0]
            c = int(above[-1]) if len(above) else self._cell(floor)
            if c >= self.n - 1:
                return math.inf if self.inf + 1e-300 > target else self._solve_up(c, target, floor)
            return self._solve_up(c, target, floor)
        if self.delta(floor) <= target:
            return floor
        if self.inf > target:
            return math.inf  # the mass at +infinity alone exceeds the target at every eps
        vals = self._grid()
        ell = self.losses()
        above = np.nonzero((vals > target) & (ell >= floor))[0]
        c = int(above[-1]) if len(above) else self._cell(floor)
        return self._solve_lo(c, target, floor)

    def _ends(self, c: int) -> tuple[float, float]:
        lo = (self.base + c) * self.h if c >= 0 else -math.inf
        hi = (self.base + c + 1) * self.h if c + 1 < self.n else math.inf
        return lo, hi

    def _solve_up(self, c: int, target: float, floor: float) -> float:
        A, B = self.A[c + 1], self.B[c + 1]
        lo_end, hi_end = self._ends(c)
        span = (abs(self.base) + abs(c) + 2) * self.h + abs(floor)
        near = sum(self.m[j] for j in (c, c + 1) if 0 <= j < self.n) * 8 * U * (span + self.h)
        num = (self.inf + A + near) * (1 + 4 * U) - target
        if B <= 0 or num <= 0:
            eps = max(floor, lo_end)
        else:
            eps = min(max(_log_ball(num, B, up=True), floor, lo_end), hi_end)
        # verify (and nudge up): the bound at the returned eps must be <= target
        for _ in range(16):
            if not math.isfinite(eps) or self.delta(eps) <= target:
                return eps
            eps = math.nextafter(eps, math.inf) + 16 * U * abs(eps)
        last = hi_end if math.isfinite(hi_end) else (self.base + self.n) * self.h
        return last if self.delta(last) <= target else math.inf

    def _solve_lo(self, c: int, target: float, floor: float) -> float:
        A, B = self.A[c + 1], self.B[c + 1]
        lo_end, hi_end = self._ends(c)
        num = (self.inf + A) * (1 - 4 * U) - target
        if B <= 0 or num <= 0:
            eps = max(floor, lo_end)
        else:
            eps = min(max(_log_ball(num, B, up=False), floor, lo_end), hi_end)
        for _ in range(16):
            if eps <= floor or self.delta(eps) > target:
                return max(eps, floor)
            eps = math.nextafter(eps, -math.inf) - 16 * U * abs(eps)
        return floor


# -- composition of the accountant's events --------------------------------------------------------------
@dataclass(frozen=True)
class _Composed:
    upper: DiscretePLD
    lower: DiscretePLD
    tau: float  # sum of count x tau


def compose_events(events, h: float, tail: float = TAIL, max_points: int = MAX_POINTS):
    """(orientation -> composed (upper, lower, tau), the mechanisms' PLDs) for ``events``: (mechanism,
    values dict, count, label)."""
    plds = [(mechanism_pld(m, values, h), count, label) for m, values, count, label in events if count]
    symmetric = all(p.symmetric for p, _, _ in plds)
    out = {}
    what = " + ".join(f"{label} x {count}" for _, count, label in plds) or "the composition"
    for o in ORIENTATIONS[:1] if symmetric else ORIENTATIONS:
        if not plds:
            out[o] = _Composed(identity(h, True), identity(h, False), 0.0)
            continue
        up = compose([(p.upper[o], count) for p, count, _ in plds], tail, max_points, what)
        lo = compose([(p.lower[o], count) for p, count, _ in plds], tail, max_points, what)
        out[o] = _Composed(up, lo, sum(count * p.tau[o] for p, count, _ in plds))
    return out, [p for p, _, _ in plds]


def _shifts(lower: DiscretePLD, target: float, h: float) -> list[tuple[float, float]]:
    """(c, eta) pairs of the remainder argument (module docstring), c > 0 only."""
    n = lower.releases
    mean = lower.rem * n * (1 - 4 * U)
    out = []
    if n <= 0 or mean <= 0 or target <= 0:
        return out
    for f in ETAS:
        eta = target * f
        t = h * math.sqrt(n * math.log(1 / eta) / 2) * (1 + 4 * U)
        c = (mean - t) * (1 - 4 * U)
        if c > 0:
            out.append((c, eta))
    return out


class Bracket:
    """The composition of ``events`` ((mechanism, values dict, count, label)) on the grid of step ``h``,
    composed once: :meth:`epsilon` and :meth:`delta` give the certified bracket at any target (module
    docstring). :func:`tight_bound` is one target of one such bracket."""

    def __init__(self, events, h: float = DEFAULT_STEP, tail: float = TAIL, max_points: int = MAX_POINTS):
        self.h, self.tail = h, tail
        self.composed, self.plds = compose_events(events, h, tail, max_points)
        self.certified = all(p.certified for p in self.plds)
        self.heuristics = tuple(sorted({n for p in self.plds for n in p.heuristics}))
        self.method = _method(self.plds, self.composed, h, tail, self.certified)
        self._profiles: dict = {}

    def _profile(self, o: str, side: str, eps_min: float) -> Profile:
        key = (o, side)
        have = self._profiles.get(key)
        if have is None or have[0] > eps_min:
            c = self.composed[o]
            have = (eps_min, Profile(c.upper if side == "upper" else c.lower, side, eps_min))
            self._profiles[key] = have
        return have[1]

    def epsilon(self, delta: float) -> TightBound:
        """The bracket of epsilon at ``delta``."""
        return self._bound("epsilon", float(delta))

    def delta(self, epsilon: float) -> TightBound:
        """The bracket of delta at ``epsilon``."""
        return self._bound("delta", float(epsilon))

    def _bound(self, kind: str, target: float) -> TightBound:
        h = self.h
        best_o, lower, upper, spent, details = "", -math.inf, -math.inf, {}, []
        for o, c in self.composed.items():
            E_up = (c.upper.err + c.tau) * (1 + 4 * U)
            E_lo = c.lower.err * (1 + 4 * U)
            up_p = self._profile(o, "upper", -h)
            if kind == "delta":
                up = min(1.0, up_p.delta(target) + E_up)
                shifts = _shifts(c.lower, up, h)
                lo_p = self._profile(o, "lower", min([target] + [target - s for s, _ in shifts]) - h)
                lo = lo_p.delta(target) - E_lo
                for s, eta in shifts:
                    lo = max(lo, lo_p.delta(target - s) - E_lo - eta)
                lo = max(0.0, lo)
                at = target
            else:
                up = math.inf if target - E_up <= 0 else up_p.epsilon(target - E_up)
                shifts = _shifts(c.lower, target, h)
                lo_p = self._profile(o, "lower", -max([0.0] + [s for s, _ in shifts]) - h)
                lo = lo_p.epsilon(target + E_lo, 0.0)
                for s, eta in shifts:
                    lo = max(lo, s + lo_p.epsilon(target + E_lo + eta, -s))
                at = up if math.isfinite(up) else 0.0
            if up > upper or (up == upper and lo > lower):
                best_o = o
            upper, lower = max(upper, up), max(lower, lo)
            lo_at = self._profile(o, "lower", min(at, 0.0) - h)
            spent[o] = {"discretisation": max(0.0, up_p.delta(at) - lo_at.delta(at)),
                        "truncation": c.upper.truncated + c.lower.truncated,
                        "floating_point": E_up - c.tau + E_lo, "dominance": c.tau}
            details.append(f"{o}: remainder shift {max([0.0] + [s for s, _ in shifts]):.4g} over "
                           f"{c.lower.releases} release(s), composed on {len(c.upper.masses)} grid points")
        if lower > upper:
            raise ArithmeticError(f"internal error: the certified lower bound {lower!r} exceeds the upper bound "
                                  f"{upper!r}; please report it")
        return TightBound(kind, float(target), float(lower), float(upper), self.method, spent.get(best_o, {}),
                          best_o, h, detail="; ".join(details + [f"{o}: {v}" for o, v in spent.items()] +
                                                      [p.detail for p in self.plds]), certified=self.certified,
                          heuristics=self.heuristics)


def tight_bound(events, kind: str, target: float, h: float = DEFAULT_STEP, tail: float = TAIL,
                max_points: int = MAX_POINTS) -> TightBound:
    """The certified bracket of ``kind`` (``"epsilon"`` at delta = target, or ``"delta"`` at epsilon =
    target) for ``events`` (module docstring)."""
    b = Bracket(events, h, tail, max_points)
    return b.epsilon(target) if kind == "epsilon" else b.delta(target)


def _method(plds, composed, h, tail, certified) -> str:
    parts = [f"privacy loss distributions from the densities on a grid of step {h:g}: connect-the-dots "
             "(pessimistic) and Jensen atoms rounded down with a Hoeffding bound on the remainders (optimistic), "
             "composed by FFT with a stated floating-point bound (Higham's radix-2 analysis applied to "
             "pocketfft with log2 N doubled: stated and tested, not proved for its mixed-radix code), composed "
             f"mass beyond a Chernoff window ({tail:g} each side) counted as error"]
    parts.append("bucket masses and losses certified by Taylor models in Arb ball arithmetic, tails by "
                 "conservation of mass" if certified else
                 "NOT CERTIFIED: " + "; ".join(sorted({n for p in plds for n in p.notes if n})))
    heur = sorted({n for p in plds for n in p.heuristics})
    if heur:
        parts.append("heuristic: " + "; ".join(heur))
    parts.append("orientations: " + (", ".join(composed) if len(composed) > 1 else
                                      "remove = add (every event is symmetric)"))
    return "; ".join(parts)


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
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not (0 < float(step) <= 0.1) \
            or not math.isfinite(float(step)):
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
