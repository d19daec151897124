r"""Composition of RDP curves (Mironov 2017, arXiv:1702.07476 v3, Prop. 1).

If f is (alpha, eps1)-RDP and g (alpha, eps2)-RDP, releasing both outputs is (alpha, eps1 + eps2)-RDP.
For *independent* releases the joint output density is the product P1(x1) P2(x2), and the Rényi
divergence of product distributions is additive at every order (van Erven and Harremoës 2014, IEEE
T-IT 60(7), Thm. 28):

.. math:: D_\alpha(P_1\times P_2 \| Q_1\times Q_2) = D_\alpha(P_1\|Q_1) + D_\alpha(P_2\|Q_2),

so for product distributions Prop. 1 is an equality; for adaptive compositions it is an upper bound.
The engine is one-dimensional, so the product density is not integrated symbolically: :func:`compose`
sums the derived curves, and :func:`check_composition` checks the equality against a direct
two-dimensional numerical computation of the product divergence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import mpmath
import sympy as sp

from ..specify.text.numbers import mp_number
from ..derive.engine import renyi_divergence
from ..derive.mechanism_rdp import family_analysis, rdp, worst_pairs
from ..derive.result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step, StepName
from .._version import library_versions
from ..specify.mechanism import Mechanism
from .profile import NumericPair

__all__ = ["CheckReport", "compose", "check_composition", "composable_exactly"]

PROP1 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 1"


@dataclass(frozen=True)
class CheckReport:
    """The outcome of a numerical property check.

    ``verdict`` is True when every point passed; ``points`` holds one tuple per point checked
    (``(alpha, claimed, computed, discrepancy)``); ``worst_margin`` is the largest relative discrepancy
    ``|claimed - computed| / max(1, |computed|)``, to compare with ``tolerance``; ``mode`` says
    ``"numeric"`` or ``"symbolic"``; ``detail`` explains the method and any failure.
    """

    name: str
    verdict: bool
    points: tuple
    worst_margin: mpmath.mpf
    tolerance: mpmath.mpf
    mode: str
    detail: str = ""

    def __bool__(self) -> bool:
        return self.verdict


def composable_exactly(result: DivergenceResult) -> bool:
    """Whether summing ``result`` with other curves gives the exact curve of the product mechanism.

    True for the divergence of one ordered pair (the product pair's divergence is the sum), and for a
    mechanism's RDP curve that :func:`rdpsym.rdp` reduced to one pair whose two directions it proved
    equal (a reflection symmetry). Otherwise the curve is a maximum over pairs or directions, and the
    sum of maxima is only an upper bound on the maximum of sums.
    """
    if result.label.startswith("D_alpha("):
        return True
    notes = [s for s in result.provenance.steps if s.name == StepName.SYMMETRY]
    # the one symmetry step carries the reflection's centre when one was established (its expr)
    return len(notes) == 1 and notes[0].expr is not None


def _validate_counts(counts, n: int) -> list[int]:
    if counts is None:
        return [1] * n
    if isinstance(counts, int) and not isinstance(counts, bool):
        counts = [counts] * n
    if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence):
        raise ValueError(f"counts must be a non-negative int or a sequence of them; got {counts!r}")
    if len(counts) != n:
        raise ValueError(f"counts must have one entry per mechanism ({n}); got {len(counts)}")
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise ValueError(f"counts must be non-negative integers; got {c!r}")
    if not any(counts):
        raise ValueError("counts: at least one count must be positive")
    return list(counts)


def _rename(result: DivergenceResult, index: int) -> tuple[DivergenceResult, dict]:
    """``result`` with every parameter ``s`` renamed ``s_index`` (same assumptions)."""
    mapping = {s: sp.Symbol(f"{s.name}_{index}", **s.assumptions0) for s in result.symbols}

    def sub(e):
        return None if e is None else e.xreplace(mapping)

    points = tuple(ExceptionalPoint(p.alpha, sub(p.value), sub(p.condition)) for p in result.exceptional_points)
    renamed = replace(
        result, expr=sub(result.expr), conditions=sub(result.conditions), kl=sub(result.kl),
        max_divergence=sub(result.max_divergence), exceptional_points=points,
        symbols=tuple(mapping[s] for s in result.symbols),
    )
    return renamed, mapping


def compose(*items, counts=None, step_seconds: float | None = None, cache: bool = True) -> DivergenceResult:
    r"""The RDP curve of releasing the outputs of several mechanisms together (Mironov 2017, Prop. 1).

    Parameters
    ----------
    *items: :class:`~rdpsym.Mechanism` objects (their curves are derived with :func:`rdpsym.rdp`) or
        :class:`~rdpsym.DivergenceResult` curves, in any mix.
    counts: how many times each item is released: ``None`` (once each), one int for all items, or a
        sequence of non-negative ints, one per item.

    Returns a :class:`~rdpsym.DivergenceResult` whose ``expr`` is ``sum_i counts[i] * eps_i(alpha)``,
    ``kl`` and ``max_divergence`` the same sums, ``conditions`` the conjunction, exceptional points the
    union (the value there is the sum of each curve's value at that order), and ``status`` the worst
    of the items' statuses.

    Repetitions of one item share its parameters: ``compose(gaussian, counts=k)`` is ``k * eps(alpha)``
    in ``sigma``. Different items are different releases with their own parameters: with two or more
    items every parameter ``s`` of the i-th item (1-based) is renamed ``s_i`` (``sigma_1``,
    ``sigma_2``), keeping its assumptions.

    Exactness: the sum is the exact curve of the product mechanism (independent releases; Prop. 1 is
    then an equality) when only one item is released, or when every item is a single pair's divergence
    or a mechanism curve with one adjacent pair and a proven symmetry (:func:`composable_exactly`).
    Otherwise a ``closed_form`` sum is reported as ``bound``: the sum of per-mechanism maxima over
    pairs or directions bounds the product mechanism's maximum from above. For adaptive composition
    the sum is always an upper bound (Prop. 1).
    """
    if not items:
        raise ValueError("compose needs at least one mechanism or result")
    counts = _validate_counts(counts, len(items))
    curves = []
    for i, item in enumerate(items):
        if isinstance(item, Mechanism):
            curves.append(rdp(item, step_seconds=step_seconds, cache=cache))
        elif isinstance(item, DivergenceResult):
            curves.append(item)
        else:
            raise TypeError(f"items[{i}]: expected a Mechanism or DivergenceResult, got {type(item).__name__}")
    if len(curves) > 1:
        curves = [_rename(c, i + 1)[0] for i, c in enumerate(curves)]
    used = [(k, c) for k, c in zip(counts, curves) if k > 0]

    status = Status.worst([c.status for _, c in used])
    reasons = [f"{c.label}: {c.reason}" for _, c in used if c.reason]
    if status is Status.LOWER_BOUND:
        # a lower bound summed with others is a lower bound only beside exact curves; fail closed instead
        status = Status.FAILED
        reasons.append("an item's curve is only a lower bound on its RDP: the sum is no guarantee")
    if status is Status.CLOSED_FORM and len(used) > 1 and not all(composable_exactly(c) for _, c in used):
        status = Status.BOUND
        reasons.append("an item's curve is a maximum over adjacent pairs or directions: the sum of maxima "
                       f"bounds the product mechanism's curve from above ({PROP1})")

    def total(values):
        if any(v is None for _, v in values):
            return None
        return sp.Add(*[k * v for k, v in values])

    expr = total([(k, c.expr) for k, c in used]) if status in (Status.CLOSED_FORM, Status.BOUND) else None
    kl = total([(k, c.kl) for k, c in used]) if status is not Status.FAILED else None
    dinf = total([(k, c.max_divergence) for k, c in used]) if status is not Status.FAILED else None
    points = []
    for a0 in sorted({p.alpha for _, c in used for p in c.exceptional_points}, key=sp.default_sort_key):
        try:
            points.append(ExceptionalPoint(a0, sp.Add(*[k * c.at(a0) for k, c in used])))
        except (ValueError, ArithmeticError) as exc:
            reasons.append(f"exceptional order alpha = {a0} could not be evaluated: {exc}")
    terms = " + ".join(f"{k} x [{c.label}]" for k, c in used)
    step = Step("compose", f"{PROP1}: the curve of the joint release is the sum {terms}; equality for "
                           "independent (product) releases, an upper bound for adaptive ones")
    steps = (step,) + tuple(replace(s, name=f"{c.label}: {s.name}") for _, c in used for s in c.provenance.steps)
    prov = Provenance(steps, (("composition", terms),), tuple(library_versions().items()))
    symbols = tuple(s for _, c in used for s in c.symbols)
    return DivergenceResult(
        expr=expr, status=status, reason="; ".join(reasons), conditions=sp.And(*[c.conditions for _, c in used]),
        kl=kl, max_divergence=dinf, exceptional_points=tuple(points), symbols=tuple(dict.fromkeys(symbols)),
        provenance=prov, label=f"composition of {terms}",
        domains=tuple(dict.fromkeys(d for _, c in used for d in c.domains)),
    )


# -- the numerical check ---------------------------------------------------------------------------
def _one_pair(item: Mechanism, name: str):
    """The one adjacent pair of ``item`` whose divergence is its RDP (a family's pair at its supremum,
    :func:`rdpsym.derive.mechanism_rdp.worst_pairs`)."""
    pairs = worst_pairs(item)
    if len(pairs) != 1:
        raise ValueError(f"{name}: check_composition needs a mechanism with one adjacent pair; "
                         f"{item.name!r} has {len(pairs)}")
    return pairs[0]


def _as_pair(item, name: str):
    """(P, Q, x, support) of a one-pair Mechanism, or the 4-tuple itself."""
    if isinstance(item, Mechanism):
        pair = _one_pair(item, name)
        return pair.P, pair.Q, item.variable, item.support
    if isinstance(item, tuple) and len(item) == 4:
        return item
    raise ValueError(f"{name}: expected a Mechanism or a tuple (P, Q, x, support); got {type(item).__name__}")


def _gauss_legendre(degree: int):
    from mpmath.calculus.quadrature import GaussLegendre

    return GaussLegendre(mpmath.mp).calc_nodes(degree, mpmath.mp.prec)


class _Axis:
    """Quadrature nodes and weights along one axis of the product (or the points of a discrete axis)."""

    def __init__(self, pair: NumericPair, line, peak, drop_digits: int):
        self.pair, self.line = pair, line  # line(t): the joint log-integrand along this axis
        self.peak = peak
        self.drop = drop_digits * mpmath.log(10)

    def box(self):
        """The interval around the peak outside which the integrand is below exp(-drop) of its max."""
        top = self.line(self.peak)
        ends = []
        for sign in (-1, 1):
            lim = None
            for lo, hi, _ in self.pair.scan_points():
                if lo <= self.peak <= hi:
                    lim = lo if sign < 0 else hi
            d = mpmath.mpf(10) ** -3 * max(1, abs(self.peak))
            while True:
                t = self.peak + sign * d
                if (sign < 0 and t <= lim) or (sign > 0 and t >= lim):
                    ends.append(lim)
                    break
                if self.line(t) < top - self.drop:
                    ends.append(t)
                    break
                d *= 2
                if d > 10**12:
                    raise ArithmeticError("the product integrand does not decay fast enough for the box rule "
                                          "(heavy tails); the composition check is inconclusive")
        return ends[0], ends[1]

    def rule(self, degree: int, segments: int = 12):
        if self.pair.kind == "discrete":
            pts = self.pair.discrete_points(self.line, int(self.drop / mpmath.log(10)) + 5)
            return [(mpmath.mpf(int(p)) if p.is_Integer else mpmath.mpf(sp.Float(p, mpmath.mp.dps)), 1) for p in pts]
        lo, hi = self.box()
        cuts = {lo, hi, self.peak} | {k for k in self.pair.kinks if lo < k < hi}
        cuts |= {lo + (hi - lo) * j / segments for j in range(1, segments)}
        cuts = sorted(cuts)
        nodes = _gauss_legendre(degree)
        out = []
        for a, b in zip(cuts, cuts[1:]):
            half, mid = (b - a) / 2, (a + b) / 2
            out += [(mid + half * t, half * w) for t, w in nodes]
        return out


def _find_peak(line, pair: NumericPair):
    if pair.kind == "discrete":
        cands = [p for piece in pair.pieces for p in (piece[1] if piece[0] == "finite" else
                                                        [piece[1] + piece[2] * j for j in range(64)])]
        vals = [(mpmath.mpf(int(p)), line(mpmath.mpf(int(p)))) for p in cands if p.is_Integer]
        return max(vals, key=lambda pv: pv[1])[0] if vals else None
    best = None
    for lo, hi, pts in pair.scan_points():
        for p in pts:
            v = line(p)
            if best is None or v > best[1]:
                best = (p, v)
    p0 = best[0]
    # Golden-section refinement between the scan neighbours keeps the nodes centred on the mass.
    span = max(abs(p0), 1) * mpmath.mpf(10) ** (-mpmath.mpf(1) / 8) / 4
    a, b = p0 - span, p0 + span
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(80):
        c, d = b - g * (b - a), a + g * (b - a)
        if line(c) >= line(d):
            b = d
        else:
            a = c
    m = (a + b) / 2
    return m if line(m) >= best[1] else p0


def _product_divergence(pair1: NumericPair, pair2: NumericPair, a, dps: int, segments: int = 12):
    """D_a(P1 x P2 || Q1 x Q2) from the *joint* densities by a 2-D tensor rule; returns (value, error).

    Each axis of the box is cut at the kinks and into ``segments`` equal panels of degree-4 Gauss-Legendre."""

    def ell(u, v):
        lp = pair1.log("P", u) + pair2.log("P", v)
        lq = pair1.log("Q", u) + pair2.log("Q", v)
        if lp == -mpmath.inf:
            return -mpmath.inf
        if lq == -mpmath.inf:
            if a > 1:
                raise _InfiniteOrder
            return -mpmath.inf
        return a * lp + (1 - a) * lq

    # Coordinate ascent to the peak of the joint log-integrand (x first at y = 0, then y, then x again).
    x0 = _find_peak(lambda t: ell(t, mpmath.mpf(0)), pair1)
    y0 = _find_peak(lambda t: ell(x0, t), pair2)
    x0 = _find_peak(lambda t: ell(t, y0), pair1)
    drop = dps + 20
    ax1, ax2 = _Axis(pair1, lambda t: ell(t, y0), x0, drop), _Axis(pair2, lambda t: ell(x0, t), y0, drop)
    top = ell(x0, y0)
    if top == -mpmath.inf:
        raise ArithmeticError("the product integrand vanishes at its scanned peak")
    rules, error = [], mpmath.mpf(0)
    for ax in (ax1, ax2):
        rule = ax.rule(4, segments)
        if ax.pair.kind == "continuous":
            # The accuracy of the rule along the axis through the peak (degree 4 against degree 5).
            ref = ax.line(ax.peak)
            s4 = mpmath.fsum(w * mpmath.exp(ax.line(t) - ref) for t, w in rule)
            s5 = mpmath.fsum(w * mpmath.exp(ax.line(t) - ref) for t, w in ax.rule(5, segments))
            error += abs(s4 - s5) / s5
        # log P and log Q of the joint density at (u, v) are these per-node values added up.
        rules.append([(t, w, ax.pair.log("P", t), ax.pair.log("Q", t)) for t, w in rule])
    terms = []
    for u, w1, lp1, lq1 in rules[0]:
        for v, w2, lp2, lq2 in rules[1]:
            lp, lq = lp1 + lp2, lq1 + lq2
            if lp == -mpmath.inf:
                continue
            if lq == -mpmath.inf:
                if a > 1:
                    raise _InfiniteOrder
                continue
            terms.append(w1 * w2 * mpmath.exp(a * lp + (1 - a) * lq - top))
    total = mpmath.fsum(terms)
    value = (top + mpmath.log(total)) / (a - 1)
    error = (error + mpmath.mpf(10) ** (-drop) * 4) / abs(a - 1)  # rule error plus the truncated box
    return value, error


class _InfiniteOrder(Exception):
    pass


def check_composition(first, second, values_first: dict | None = None, values_second: dict | None = None,
                      alphas=(sp.Rational(3, 2), 2, 5), dps: int = 30, claimed: DivergenceResult | None = None,
                      ) -> CheckReport:
    r"""Check Prop. 1 numerically: D_alpha of the product pair equals the composed (summed) curve.

    ``first`` and ``second`` are one-pair mechanisms or tuples ``(P, Q, x, support)`` of 1-D densities
    (or pmfs); ``values_first``/``values_second`` their parameter values. The claimed curve is
    ``compose(D(P1||Q1), D(P2||Q2))`` derived by the engine (or ``claimed``, a composed result whose
    parameters are the renamed ``name_1``/``name_2``). The computed value is
    ``D_alpha(P1(x) P2(y) || Q1(x) Q2(y))`` evaluated from the joint densities by a tensor Gauss-Legendre
    rule over a box around the peak of the integrand (split at the densities' kinks, truncated where the
    integrand falls below ``10^-(dps+20)`` of its peak; error from two rule degrees), or an exact sum for
    discrete supports. A point passes when ``|claimed - computed| <= 10^-(dps-5) max(1, |computed|)``
    and the error estimate is below that tolerance.
    """
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 10:
        raise ValueError(f"dps must be an int >= 10; got {dps!r}")
    p1, p2 = _as_pair(first, "first"), _as_pair(second, "second")
    values_first, values_second = dict(values_first or {}), dict(values_second or {})
    if claimed is None:
        derived = []
        for item, pair in ((first, p1), (second, p2)):
            if isinstance(item, Mechanism) and item.families:
                # D(P||Q) at the family's supremum, as rdp(item) derived it (shared, cached)
                derived.append(family_analysis(item, item.families[0]).results[0])
            elif isinstance(item, Mechanism):
                # The label rdp() uses, so the derivation is shared with (and cached like) rdp(item).
                derived.append(renyi_divergence(*pair, params=item.parameters,
                                                label=f"D_alpha(P||Q) [{item.pairs[0].label}]"))
            else:
                derived.append(renyi_divergence(*pair))
        claimed = compose(*derived)
    renamed = {f"{k.name if isinstance(k, sp.Symbol) else k}_1": v for k, v in values_first.items()}
    renamed |= {f"{k.name if isinstance(k, sp.Symbol) else k}_2": v for k, v in values_second.items()}
    tol = mpmath.mpf(10) ** (-(dps - 5))
    points, worst, ok, notes = [], mpmath.mpf(0), True, []
    with mpmath.workdps(dps + 15):
        pair1 = NumericPair(*p1, values_first, dps)
        pair2 = NumericPair(*p2, values_second, dps)
        for a in alphas:
            if isinstance(a, (str, bytes)):  # orders are numbers; text is never read (nsimplify would sympify it)
                raise ValueError(f"alphas must be finite orders > 0 other than 1; got {a!r}")
            a_mp = mp_number(a, "alphas")
            if a_mp <= 0 or a_mp == 1 or not mpmath.isfinite(a_mp):
                raise ValueError(f"alphas must be finite orders > 0 other than 1; got {a!r}")
            claim = claimed.evaluate(sp.nsimplify(a), dps=dps + 10, **renamed)
            try:
                # finer panels until the rule's own error estimate certifies the digits asked for
                # (Laplace x Laplace at 30 digits needs 24 panels per axis; most pairs need 12)
                for segments in (12, 24, 48):
                    value, err = _product_divergence(pair1, pair2, a_mp, dps, segments)
                    if err <= tol * max(1, abs(value)):
                        break
            except _InfiniteOrder:
                value, err = mpmath.inf, mpmath.mpf(0)
            if value == mpmath.inf or claim == mpmath.inf:
                disc = mpmath.mpf(0) if value == claim else mpmath.inf
            else:
                disc = abs(claim - value) / max(1, abs(value))
            good = disc <= tol and err <= tol * max(1, abs(value) if mpmath.isfinite(value) else 1)
            if not good:
                ok = False
                notes.append(f"alpha = {a}: claimed {mpmath.nstr(claim, 20)}, product {mpmath.nstr(value, 20)} "
                             f"(error estimate {mpmath.nstr(err, 3)})")
            worst = max(worst, disc)
            points.append((a, claim, value, disc))
    detail = (f"{PROP1}: D_alpha(P1xP2 || Q1xQ2) by a 2-D rule on the joint density vs the sum of the "
              f"derived curves, {dps} digits" + ("; failures: " + "; ".join(notes) if notes else ""))
    return CheckReport("composition (Prop. 1)", ok, tuple(points), worst, tol, "numeric", detail)
