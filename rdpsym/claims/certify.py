r"""The certified pass of a claim check: ball arithmetic with bisection over the regimes asked about.

For a formula claim and a target with a closed form, :func:`certify` runs
:func:`rdpsym.claims.interval.bisect_relation` on one box per alpha regime:

* alpha - 1 in ``[1e-20, 1e12]`` (clipped to the claim's ``alpha_range``), bisected in ``log(alpha - 1)``:
  the orders next to 1, moderate and large orders in one box;
* when the range reaches below 1, alpha in ``[1e-20, 1/2]`` and 1 - alpha in ``[1e-20, 1/2]``;
* no alpha axis for a claim about one special order (``order=1`` or ``oo``);

and, for each free parameter, the grid's range (100 times closer to the ends of the domain than the
typical range) widened a million times more on a log scale, or for a bounded domain both halves down to
1e-15 of its width from each end. An integer parameter's boxes stand for the integers in them.
Each box either is certified (the relation holds on all of it), or yields a violating point certified by
ball arithmetic, or is left partly undecided when its budget is spent; the outcome says which, with the box.
The budget is a number of boxes (:data:`CERTIFY_BOXES` in all, shared evenly by the boxes of the pass), so
the outcome is the same on every machine; a wall-clock limit far above the typical time guards against a
hang only, and the outcome says when it fired.

A certified box is evidence, not a proof of the claim: the claim speaks of every order and every
parameter value, and the box is finite (a bound can be wrong at alpha = 1 + 1e-25 only). So a box that
holds everywhere makes a ``confirmed`` verdict with the box named, never ``proved``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy as sp

from ..symbols import alpha as ALPHA
from ..numeric.balls import Unsupported, arb_rational, compile_arb
from .interval import Axis, IntervalOutcome, bisect_relation
from .search import parameter_grid

__all__ = ["Certification", "certify", "plan", "Run", "ALPHA_NEAR_ONE", "ALPHA_MAX", "CERTIFY_BOXES", "CERTIFY_GUARD_SECONDS"]

#: boxes the certified pass may bisect in all (the work budget that decides how far it gets)
CERTIFY_BOXES = 20000
#: hang guard of the whole pass, in seconds (far above the time the box budget takes)
CERTIFY_GUARD_SECONDS = 600.0

#: the certified box reaches orders this close to 1 (and to 0), and orders up to 1 + ALPHA_MAX
ALPHA_NEAR_ONE = 1e-20
ALPHA_MAX = 1e12
#: parameters: the grid's range (100 times closer to the domain's ends than the typical range) widened
#: this many times more on a log scale, and bounded domains down to this fraction of their width from an end
PARAMETER_WIDENING = 1e6
PARAMETER_NEAR_END = 1e-15


@dataclass
class Certification:
    """The outcomes of the certified pass, one per box; ``reason`` when there was no pass."""

    outcomes: list[IntervalOutcome] = field(default_factory=list)
    reason: str = ""
    fixed_note: list[str] = field(default_factory=list)
    #: per outcome, the exact values of the parameters held on its box (fixed, and integers held at a value)
    held: list[dict] = field(default_factory=list)
    #: what was compared (for a certificate): the truth with +oo outside its conditions, the claim, the
    #: simplified difference claim - truth (or None), the tolerance, the floor and the precision in bits
    truth: sp.Expr | None = None
    claim: sp.Expr | None = None
    difference: sp.Expr | None = None
    tol: float = 0.0
    floor: float = 0.0
    prec: int = 0

    @property
    def available(self) -> bool:
        return bool(self.outcomes)

    @property
    def refutation(self) -> IntervalOutcome | None:
        return next((o for o in self.outcomes if o.status == "refuted"), None)

    @property
    def certified(self) -> bool:
        """Every box certified, exactly or within the tolerance."""
        return self.available and all(o.status in ("proved", "certified") for o in self.outcomes)

    def describe(self) -> list[str]:
        if not self.available:
            return [f"no certified pass: {self.reason}"] if self.reason else []
        lines = []
        for o, note in itertools.zip_longest(self.outcomes, self.fixed_note, fillvalue=""):
            where = o.describe_box() or "the claim's order"
            where += f" ({note})" if note else ""
            if o.status == "proved":
                lines.append(f"interval arithmetic on [{where}]: the relation holds on the whole box ({o.boxes} boxes)")
            elif o.status == "certified":
                lines.append(f"interval arithmetic on [{where}]: no violation larger than the tolerance anywhere "
                             f"on the box ({o.boxes} boxes)")
            elif o.status == "refuted":
                lines.append(f"interval arithmetic on [{where}]: a violating point, certified by ball arithmetic")
            else:
                lines.append(f"interval arithmetic on [{where}]: {100 * o.certified_fraction:.1f}% of the box "
                             f"(in its coordinates) certified, the rest only sampled at {o.boxes} box midpoints; "
                             f"{o.reason}")
        return lines


def _alpha_axes(lo, hi) -> list[Axis]:
    """Segments of the alpha range: above 1 (distance to 1), and below 1 split at 1/2 (distance to 0,
    distance to 1), each reaching ALPHA_NEAR_ONE from its anchor and at most ALPHA_MAX."""
    lo_r = sp.Rational(lo)
    hi_r = sp.oo if hi == sp.oo else sp.Rational(hi)
    out = []

    def add(name_anchor, sign, d_lo, d_hi):
        d_lo, d_hi = max(float(d_lo), ALPHA_NEAR_ONE), min(float(d_hi), ALPHA_MAX)
        if d_lo < d_hi:
            out.append(Axis("alpha", ALPHA, d_lo, d_hi, "offset", sp.Integer(name_anchor), sign))

    if hi_r > 1:
        add(1, +1, max(lo_r - 1, 0), hi_r - 1 if hi_r != sp.oo else ALPHA_MAX)
    if lo_r < 1:
        half = sp.Rational(1, 2)
        add(0, +1, lo_r, min(hi_r, half))            # alpha in (0, 1/2]: distance to 0
        if hi_r > half:
            add(1, -1, 1 - min(hi_r, 1), 1 - max(lo_r, half))  # alpha in [1/2, 1): distance to 1
    return out


def _rational_inside(end, inward: int):
    """A finite irrational end (log 2) as a rational at most 1e-28 inside the domain; others as they are."""
    if end.is_Rational or not end.is_finite:
        return end
    r = sp.Rational(str(sp.N(end, 32)))
    step = sp.Rational(1, 10**28)
    while (inward * (r - end) > 0) is not sp.true:
        r += inward * step
    return r


def _parameter_axes(p) -> list[Axis] | None:
    """Segments for one parameter: its grid range widened PARAMETER_WIDENING times on a log scale towards
    the ends of its domain (a bounded domain in two halves, each in the distance to its end)."""
    values = [float(v) for v in parameter_grid(p)]
    if not values:
        return None
    lo, hi = min(values), max(values)
    if not lo < hi:
        return None
    inf, sup = p.domain.inf, p.domain.sup
    if any(not (e.is_number or e in (sp.oo, -sp.oo)) for e in (inf, sup)):
        return None  # an end that depends on another parameter: held at its grid values (no axis)
    inf, sup = _rational_inside(inf, +1), _rational_inside(sup, -1)
    if p.symbol.is_integer:
        # integers: the box holds the integers in it; the distance starts at 1 from the integer just
        # below the domain, so the first integer is in the box
        if not inf.is_finite:
            return [Axis(p.name, p.symbol, lo - 10 * (hi - lo), hi + 10 * (hi - lo), "linear", integer=True)]
        below = sp.ceiling(inf) - 1 if p.domain.contains(sp.ceiling(inf)) is sp.true else sp.ceiling(inf)
        top = float(sup - below) if sup.is_finite else min((hi - float(below)) * PARAMETER_WIDENING, 1e12)
        return [Axis(p.name, p.symbol, 1.0, max(top, 1.0 + 1e-9), "offset", sp.Integer(below), +1, integer=True)]
    if inf.is_finite and sup.is_finite:
        width = float(sup - inf)
        d_min = width * PARAMETER_NEAR_END
        return [Axis(p.name, p.symbol, d_min, width / 2, "offset", sp.Rational(inf), +1),
                Axis(p.name, p.symbol, d_min, width / 2, "offset", sp.Rational(sup), -1)]
    if inf.is_finite:
        base = float(inf)
        return [Axis(p.name, p.symbol, max((lo - base) / PARAMETER_WIDENING, PARAMETER_NEAR_END),
                     (hi - base) * PARAMETER_WIDENING, "offset", sp.Rational(inf), +1)]
    if sup.is_finite:
        base = float(sup)
        return [Axis(p.name, p.symbol, max((base - hi) / PARAMETER_WIDENING, PARAMETER_NEAR_END),
                     (base - lo) * PARAMETER_WIDENING, "offset", sp.Rational(sup), -1)]
    span = hi - lo
    return [Axis(p.name, p.symbol, lo - 10 * span, hi + 10 * span, "linear")]


def certify(tgt, claim: sp.Expr, order, relation: str, fixed: dict, free, alpha_range, *, tol: float,
            dps: int, boxes: int = CERTIFY_BOXES, guard_seconds: float = CERTIFY_GUARD_SECONDS,
            difference: sp.Expr | None = None) -> Certification:
    """Run the certified pass (module docstring). ``fixed``: name -> exact value; ``free``: Parameters;
    ``boxes``: the budget of boxes for the whole pass; ``guard_seconds``: its hang guard."""
    truth = tgt.full_truth(order)
    if truth is None:
        return Certification(reason="the target has no closed form for this order")
    symbols = (ALPHA,) + tgt.symbols
    try:
        f_truth = compile_arb(truth, symbols)
        f_claim = compile_arb(claim, symbols)
        f_diff = compile_arb(difference, symbols) if difference is not None else None
    except Unsupported as exc:
        return Certification(reason=str(exc))
    by_name = {p.name: p.symbol for p in tgt.parameters}
    fixed_balls = {by_name[k]: arb_rational(sp.Rational(v)) for k, v in fixed.items()}
    runs = plan(free, order, alpha_range)
    if not runs:
        return Certification(reason="the alpha range has no part the certified pass covers")
    floor = 10.0 ** (-int(0.4 * dps))
    prec = max(128, int(3.33 * dps) + 64)
    cert = Certification(truth=truth, claim=claim, difference=difference, tol=tol, floor=floor, prec=prec)
    per_box, guard = max(1, boxes // len(runs)), guard_seconds / len(runs)
    for run in runs:
        held = dict(fixed_balls)
        held.update({s: arb_rational(v) for s, v in run.held.items()})
        outcome = bisect_relation(f_claim, f_truth, relation, run.axes, alpha=ALPHA if run.alpha else None,
                                  fixed=held, tol=tol, floor=floor, difference=f_diff, max_boxes=per_box,
                                  seconds=guard, prec=prec)
        cert.outcomes.append(outcome)
        cert.held.append({**{by_name[k]: sp.Rational(v) for k, v in fixed.items()}, **run.held})
        cert.fixed_note.append(run.note)
        if outcome.status == "refuted":
            outcome.point = {**outcome.point, **run.held}
            break
    return cert


@dataclass(frozen=True)
class Run:
    """One box of the pass: its coordinates (``alpha``: the first is the order), and the values of the
    parameters held on it (a single grid value, or an integer parameter's grid values, one box each)."""

    axes: tuple[Axis, ...]
    alpha: bool
    held: dict
    note: str


def plan(free, order, alpha_range) -> list[Run]:
    """The boxes of the certified pass for the free Parameters ``free`` (module docstring), in order."""
    integer = []  # parameters held at their grid values (a single value: no axis)
    segments = []
    for p in free:
        axes = _parameter_axes(p)
        if axes is None:
            integer.append(p)  # a single grid value: held fixed like an integer parameter
        else:
            segments.append(axes)
    alpha_axes = _alpha_axes(*alpha_range) if order is None else [None]
    combos = list(itertools.product(*[parameter_grid(p) for p in integer])) if integer else [()]
    return [Run(tuple(([a] if a is not None else []) + list(boxes)), a is not None,
                {p.symbol: sp.Rational(v) for p, v in zip(integer, combo)},
                ", ".join(f"{p.name} held at {sp.sstr(v)}" for p, v in zip(integer, combo)))
            for a in alpha_axes for boxes in itertools.product(*segments) for combo in combos]
