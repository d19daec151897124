r"""The exact privacy profile of a mechanism, computed numerically.

For output distributions P = M(D), Q = M(D') of adjacent inputs, the smallest delta for which the
mechanism is (epsilon, delta)-DP on that pair and direction is the hockey-stick divergence

.. math::

    \delta(\varepsilon) = \int \max\bigl(P(x) - e^\varepsilon Q(x),\, 0\bigr)\,dx
                        = \sup_S \bigl(P(S) - e^\varepsilon Q(S)\bigr)

(Balle and Wang 2018, "Improving the Gaussian mechanism", ICML, Thm. 5; Balle et al. 2020,
"Hypothesis testing interpretations and Rényi DP", AISTATS, Def. 3). The mechanism's profile is the
maximum over its adjacent pairs and both directions; a family of pairs (a pair for every shift t in a set
T, :class:`~rdpsym.specify.adjacency.AdjacentFamily`) contributes the maximum over its sampled shifts
(:func:`~rdpsym.numeric.families.maximise_over_family`: the ends of T and three interior shifts), a
numeric maximisation, exact when the profile is largest at an end. Every conversion RDP -> (epsilon, delta) must
return a delta at least this large: that is the check :func:`rdpsym.accounting.check_conversion` runs.

Method (1-D pairs; all arithmetic inside ``mpmath.workdps``):

* **Continuous supports.** The integrand is positive exactly where ``h(x) = log P - log Q - eps > 0``
  (or ``Q = 0 < P``). The support is split at its ends, at the kinks of ``Abs``, ``sign``,
  ``Heaviside``, ``Max``, ``Min`` and ``Piecewise`` (found by ``sympy.solveset``), at the modes of P
  and Q and at the *crossing points* where ``P = e^eps Q``: sign changes of ``h`` on a log-spaced scan
  (``±10^k``, k = -8..8 in steps of 1/8, around 0 and around every kink), refined by a bracketing root
  finder (``mpmath.findroot``, Illinois method). On each piece where ``h > 0`` the smooth integrand
  ``P - e^eps Q`` is integrated by tanh-sinh quadrature (``mpmath.quad``, with its error estimate).
* **Discrete supports.** Finite supports are summed exactly at working precision; infinite
  progressions are summed outward until the pmf of P falls below ``10^-(dps+20)`` of its largest term
  for 64 consecutive points (valid for tails that decrease from there on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..numeric.backends.mpmath import lambdify_mpmath
from ..numeric.kinks import kink_arguments
from ..numeric.inputs import substitute_values
from ..numeric.families import maximise_over_family
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.support import Support

__all__ = ["ProfileValue", "pair_profile", "privacy_profile"]


@dataclass(frozen=True)
class ProfileValue:
    """delta(epsilon) of a pair (or a mechanism: the worst pair and direction) with an error estimate."""

    value: mpmath.mpf
    error: mpmath.mpf
    epsilon: mpmath.mpf
    dps: int
    detail: str = ""

    def __float__(self) -> float:
        return float(self.value)


def _check_epsilon(epsilon) -> None:
    from .._numbers import ArgumentError
    from ..specify.text.numbers import mp_number

    if isinstance(epsilon, (str, bytes)):  # the profile takes numbers, not text
        raise ValueError(f"epsilon must be a real number >= 0; got {epsilon!r}")
    try:
        with mpmath.workdps(55):  # the sign of a sympy number, read at more digits than any caller asks
            e = mp_number(epsilon, "epsilon")
    except ArgumentError:
        raise ValueError(f"epsilon must be a real number >= 0; got {epsilon!r}") from None
    if not mpmath.isfinite(e) or e < 0:
        raise ValueError(f"epsilon must be a finite real number >= 0; got {epsilon!r}")


def kink_points(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, wp: int) -> tuple[list, list[str]]:
    """Real zeros of the kink arguments (:func:`rdpsym.numeric.kinks.kink_arguments`: Abs, sign,
    Heaviside, Max/Min differences, Piecewise bounds) of P and Q, at ``wp`` digits."""
    points, notes = set(), []
    for arg in dict.fromkeys(kink_arguments(P, x) + kink_arguments(Q, x)):
        try:
            sol = sp.solveset(arg, x, domain=sp.S.Reals)
        except SYMBOLIC_ERRORS as exc:  # sympy raises many things on odd input
            notes.append(f"solveset failed on {arg}: {exc}")
            continue
        if isinstance(sol, sp.FiniteSet):
            points |= {mpmath.mpf(sp.Float(r, wp)) for r in sol if r.is_real}
        elif sol is not sp.S.EmptySet:
            notes.append(f"kinks of {arg} not found in closed form; none used")
    return sorted(points), notes


class NumericPair:
    """A 1-D pair (P, Q) with all parameters substituted, ready for mpmath evaluation.

    Shared by the privacy profile and the composition check: ``logP``/``logQ`` evaluate at the current
    mpmath precision (``-inf`` where a density vanishes), ``kinks`` are the breakpoints of the
    densities, ``kind`` is ``"continuous"`` or ``"discrete"`` and ``pieces`` the support in the form of
    :meth:`rdpsym.specify.support.Support.flattened`.
    """

    def __init__(self, P: sp.Expr, Q: sp.Expr, x: sp.Symbol, support: sp.Set, values: dict | None, dps: int):
        if not isinstance(x, sp.Symbol):
            raise ValueError(f"x must be a sympy Symbol; got {type(x).__name__}")
        P, Q, support = substitute_values(P, Q, x, support, dict(values or {}))
        self.P, self.Q, self.x = P, Q, x
        self.kind, self.pieces = Support.of(support, numbers=True).flattened()
        self._p = lambdify_mpmath(x, P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P)
        self._q = lambdify_mpmath(x, Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q)
        if self.kind == "continuous":
            with mpmath.workdps(dps + 20):
                self.kinks, self.notes = kink_points(P, Q, x, dps + 20)
        else:
            self.kinks, self.notes = [], []

    def density(self, which: str, t) -> mpmath.mpf:
        v = (self._p if which == "P" else self._q)(t)
        v = mpmath.mpmathify(v)
        if isinstance(v, mpmath.mpc):
            if abs(v.imag) > abs(v.real) * mpmath.mpf(10) ** (-mpmath.mp.dps + 5):
                raise ArithmeticError(f"density {which} is not real at x = {t}: {v}")
            v = v.real
        if mpmath.isnan(v) or v < 0:
            raise ArithmeticError(f"density {which} is {v} at x = {t}; densities must be >= 0")
        return v

    def log(self, which: str, t) -> mpmath.mpf:
        v = self.density(which, t)
        return -mpmath.inf if v == 0 else mpmath.log(v)

    # -- grids ----------------------------------------------------------------------------------
    def scan_points(self) -> list:
        """Points of a log-spaced scan inside the (continuous) support, around 0 and every kink."""
        centres = [mpmath.mpf(0)] + list(self.kinks)
        offsets = [mpmath.mpf(0)] + [s * mpmath.mpf(10) ** (mpmath.mpf(k) / 8) for k in range(-64, 65) for s in (-1, 1)]
        pts = {c + o for c in centres for o in offsets}
        out = []
        for lo, hi in self.pieces:
            lo_f = -mpmath.inf if lo == -mpmath.inf else mpmath.mpf(sp.Float(lo, mpmath.mp.dps + 5))
            hi_f = mpmath.inf if hi == mpmath.inf else mpmath.mpf(sp.Float(hi, mpmath.mp.dps + 5))
            inside = sorted(p for p in pts if lo_f < p < hi_f)
            if mpmath.isfinite(lo_f) and mpmath.isfinite(hi_f):
                inside += [lo_f + (hi_f - lo_f) * k / 64 for k in range(1, 64)]
            out.append((lo_f, hi_f, sorted(set(inside))))
        return out

    def discrete_points(self, log_weight: Callable, drop_digits: int, cap: int = 10**6):
        """Support points of a discrete pair whose log-weight is within ``drop_digits`` of the max."""
        pts = []
        drop = drop_digits * mpmath.log(10)
        for piece in self.pieces:
            if piece[0] == "finite":
                pts += [sp.Integer(p) if not isinstance(p, sp.Basic) else p for p in piece[1]]
                continue
            _, start, step = piece
            best, quiet, n, k = -mpmath.inf, 0, 0, start
            while quiet < 64:
                lw = log_weight(mpmath.mpf(int(k)) if k.is_Integer else mpmath.mpf(sp.Float(k, mpmath.mp.dps)))
                pts.append(k)
                if lw > best:
                    best = lw
                quiet = quiet + 1 if lw < best - drop else 0
                k += step
                n += 1
                if n > cap:
                    raise ArithmeticError(f"discrete support: the terms have not become negligible after {cap} points")
        return sorted(set(pts))


def _to_mpf(p) -> mpmath.mpf:
    if isinstance(p, sp.Basic):
        return mpmath.mpf(int(p)) if p.is_Integer else mpmath.mpf(sp.Float(p, mpmath.mp.dps + 5))
    return mpmath.mpf(p)


def _crossings(pair: NumericPair, h: Callable) -> list:
    """Points where h changes sign, from the scan refined by a bracketing root finder."""
    roots = []
    for lo, hi, pts in pair.scan_points():
        vals = []
        for p in pts:
            try:
                v = h(p)
            except (ZeroDivisionError, ValueError):
                v = mpmath.nan
            vals.append(v)
        for (a, fa), (b, fb) in zip(zip(pts, vals), zip(pts[1:], vals[1:])):
            if mpmath.isnan(fa) or mpmath.isnan(fb):
                continue
            if (fa > 0) != (fb > 0):
                if not (mpmath.isfinite(fa) and mpmath.isfinite(fb)):
                    roots.append((a + b) / 2 if fa * 0 == 0 else a)
                    continue
                try:
                    roots.append(mpmath.findroot(h, (a, b), solver="illinois"))
                except (ValueError, ZeroDivisionError):
                    roots.append((a + b) / 2)  # a jump, not a root: a breakpoint is all we need
    return roots


def _pair_profile(pair: NumericPair, epsilon, dps: int) -> tuple[mpmath.mpf, mpmath.mpf, str]:
    with mpmath.workdps(dps + 15):
        eps = _to_mpf(epsilon) if not isinstance(epsilon, float) else mpmath.mpf(epsilon)
        scale = mpmath.exp(eps)

        def gap(t):
            return pair.density("P", t) - scale * pair.density("Q", t)

        if pair.kind == "discrete":
            pts = pair.discrete_points(lambda t: pair.log("P", t), dps + 20)
            total = mpmath.fsum(max(gap(_to_mpf(p)), 0) for p in pts)
            return +total, mpmath.mpf(10) ** (-(dps + 15)) * max(total, 1), f"sum over {len(pts)} points"

        def h(t):
            lp, lq = pair.log("P", t), pair.log("Q", t)
            if lp == -mpmath.inf:
                return -mpmath.inf
            return lp - lq - eps

        breaks = set(pair.kinks) | set(_crossings(pair, h))
        # The modes of P and Q keep tanh-sinh's nodes where the mass is.
        for lo, hi, pts in pair.scan_points():
            for which in ("P", "Q"):
                if pts:
                    breaks.add(max(pts, key=lambda t: pair.log(which, t)))
        total, err, pieces = mpmath.mpf(0), mpmath.mpf(0), 0
        for lo, hi, _ in pair.scan_points():
            cuts = [lo] + sorted(b for b in breaks if lo < b < hi) + [hi]
            for a, b in zip(cuts, cuts[1:]):
                if a == b:
                    continue
                mid = (a + b) / 2 if mpmath.isfinite(a) and mpmath.isfinite(b) else (
                    b - 1 if mpmath.isfinite(b) else (a + 1 if mpmath.isfinite(a) else mpmath.mpf(0)))
                if not h(mid) > 0:
                    continue
                v, e = mpmath.quad(gap, [a, b], error=True)
                total += v
                err += e
                pieces += 1
        return +total, err, f"{pieces} positive pieces, {len(breaks)} breakpoints"


def pair_profile(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, support: sp.Set, epsilon, values: dict | None = None,
                 dps: int = 30) -> ProfileValue:
    r"""delta(epsilon) = ∫ max(P - e^epsilon Q, 0) for one ordered pair (see the module docstring).

    ``values`` maps parameter symbols or names to numbers (floats are taken exactly). Raises
    ``ValueError`` naming the argument for bad input and ``ArithmeticError`` if a density is negative,
    NaN or complex somewhere.
    """
    _check_epsilon(epsilon)
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 10:
        raise ValueError(f"dps must be an int >= 10; got {dps!r}")
    with mpmath.workdps(dps + 15):
        pair = NumericPair(P, Q, x, support, values, dps)
        value, error, detail = _pair_profile(pair, epsilon, dps)
    with mpmath.workdps(dps):
        return ProfileValue(+value, +error, +mpmath.mpf(_to_mpf(epsilon) if not isinstance(epsilon, float) else epsilon), dps, detail)


def privacy_profile(mechanism: Mechanism, epsilon, dps: int = 30, **values) -> ProfileValue:
    r"""The exact privacy profile delta(epsilon) of ``mechanism`` at parameter ``values``.

    The maximum of :func:`pair_profile` over the adjacent pairs and both directions (an
    (epsilon, delta)-DP guarantee must hold for D, D' and for D', D).
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism: expected an rdpsym Mechanism, got {type(mechanism).__name__}")
    mechanism.substitutions(values)
    missing = sorted(set(mechanism.params) - set(values))
    if missing:
        raise ValueError(f"values: missing parameter(s) {', '.join(missing)} of {mechanism.name!r}")
    _check_epsilon(epsilon)  # bad arguments raise here, not inside a family's maximisation
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 10:
        raise ValueError(f"dps must be an int >= 10; got {dps!r}")
    best = None
    for pair in mechanism.pairs:
        if isinstance(pair, AdjacentFamily):
            r, detail = _family_profile(pair, mechanism, epsilon, values, dps)
            if best is None or r.value > best.value:
                best = ProfileValue(r.value, r.error, r.epsilon, dps, detail)
            continue
        for P, Q, direction in ((pair.P, pair.Q, "P||Q"), (pair.Q, pair.P, "Q||P")):
            r = pair_profile(P, Q, mechanism.variable, mechanism.support, epsilon, values, dps)
            if best is None or r.value > best.value:
                best = ProfileValue(r.value, r.error, r.epsilon, dps, f"[{pair.label}] {direction}: {r.detail}")
    return best


@dataclass(frozen=True)
class _Computed:
    profile: ProfileValue
    converged: bool = True  # pair_profile raises rather than return an unconverged value

    @property
    def value(self):
        return self.profile.value

    @property
    def error(self):
        return self.profile.error


def _family_profile(family: AdjacentFamily, mechanism: Mechanism, epsilon, values: dict, dps: int):
    """The largest pair profile over the sampled shifts of ``family`` (both directions), and its detail;
    a shift where the profile cannot be computed raises, as :func:`pair_profile` does."""
    t = family.shift

    def evaluate(shift):
        return [(direction, _Computed(pair_profile(P, Q, mechanism.variable, mechanism.support, epsilon,
                                                   {**values, t: shift}, dps)))
                for P, Q, direction in ((family.P, family.Q, "P||Q"), (family.Q, family.P, "Q||P"))]

    found = maximise_over_family(family, evaluate, values, dps=dps)
    failed = [(s, e) for s, _, e in found.evaluations if not e.converged]
    if failed:
        raise ArithmeticError(f"[{family.label}] at {t} = {sp.sstr(failed[0][0])}: {failed[0][1].detail}")
    shift, direction, top = max(found.evaluations, key=lambda e: e[2].value)
    return top.profile, f"[{family.label}] {direction} at {t} = {sp.sstr(shift)}: {top.profile.detail}; {found.note}"
