r"""The certified pass of a claim check: ball arithmetic with bisection over the regimes asked about.

For a formula claim and a target with a closed form, :func:`certify` runs
:func:`rdpsym.claims.interval.bisect_relation` on one box per alpha regime:

* alpha in ``[1 + 1e-9, 1e6]`` (clipped to the claim's ``alpha_range``), bisected in ``log(alpha - 1)``:
  the orders next to 1, moderate and large orders in one box;
* alpha in ``[1e-6, 1 - 1e-9]`` when the range reaches below 1, bisected in ``logit(alpha)``;
* no alpha axis for a claim about one special order (``order=1`` or ``oo``);

and, for each free parameter, its typical range widened to the edge values the grid uses (100 times
closer to the ends of the domain), on a log scale for positive parameters and a logit scale for bounded
ones. Integer parameters are held at each of their grid values in turn. Each box either is certified
(the relation holds on all of it), or yields a violating point certified by ball arithmetic, or is left
partly undecided when its budget is spent; the outcome says which, with the box.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import sympy as sp

from ..symbols import alpha as ALPHA
from .interval import Axis, IntervalOutcome, Unsupported, bisect_relation, compile_arb
from .search import parameter_grid

__all__ = ["Certification", "certify", "ALPHA_NEAR_ONE", "ALPHA_MAX", "ALPHA_MIN"]

#: the certified box reaches these orders (the issue's regimes: alpha near 1 down to 1 + 1e-9, large
#: alpha to 1e6, and small orders in (0, 1))
ALPHA_NEAR_ONE = 1e-9
ALPHA_MAX = 1e6
ALPHA_MIN = 1e-6


@dataclass
class Certification:
    """The outcomes of the certified pass, one per box; ``reason`` when there was no pass."""

    outcomes: list[IntervalOutcome] = field(default_factory=list)
    reason: str = ""
    fixed_note: list[str] = field(default_factory=list)

    @property
    def available(self) -> bool:
        return bool(self.outcomes)

    @property
    def refutation(self) -> IntervalOutcome | None:
        return next((o for o in self.outcomes if o.status == "refuted"), None)

    @property
    def proved(self) -> bool:
        return self.available and all(o.status == "proved" for o in self.outcomes)

    @property
    def certified(self) -> bool:
        """Every box certified, exactly or within the tolerance."""
        return self.available and all(o.status in ("proved", "certified") for o in self.outcomes)

    def describe(self) -> list[str]:
        if not self.available:
            return [f"no certified pass: {self.reason}"] if self.reason else []
        lines = []
        for o, note in itertools.zip_longest(self.outcomes, self.fixed_note, fillvalue=""):
            where = o.describe_box() or "the special order"
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
    flo = float(lo)
    fhi = math.inf if hi == sp.oo else float(hi)
    out = []
    if fhi > 1:
        a0 = max(flo, 1 + ALPHA_NEAR_ONE)
        a1 = min(fhi, ALPHA_MAX)
        if a0 < a1:
            out.append(Axis("alpha", ALPHA, a0, a1, "log_above_one"))
    if flo < 1:
        a0 = max(flo, ALPHA_MIN)
        a1 = min(fhi, 1 - ALPHA_NEAR_ONE)
        if a0 < a1:
            out.append(Axis("alpha", ALPHA, a0, a1, "logit", (0.0, 1.0)))
    return out


def _parameter_axis(p) -> Axis | None:
    values = [float(v) for v in parameter_grid(p)]
    if not values:
        return None
    lo, hi = min(values), max(values)
    if not lo < hi:
        return None
    inf, sup = p.domain.inf, p.domain.sup
    if inf.is_finite and sup.is_finite:
        return Axis(p.name, p.symbol, lo, hi, "logit", (float(inf), float(sup)))
    if lo > 0:
        return Axis(p.name, p.symbol, lo, hi, "log")
    return Axis(p.name, p.symbol, lo, hi, "linear")


def certify(tgt, claim: sp.Expr, order, relation: str, fixed: dict, free, alpha_range, *, tol: float,
            dps: int, seconds: float, difference: sp.Expr | None = None) -> Certification:
    """Run the certified pass (module docstring). ``fixed``: name -> exact value; ``free``: Parameters."""
    truth = tgt.truth_expr(order)
    if truth is None:
        return Certification(reason="the target has no closed form for this order")
    if order is None and tgt.result.conditions is not sp.true:
        truth = sp.Piecewise((truth, tgt.result.conditions), (sp.oo, True))
    symbols = (ALPHA,) + tgt.symbols
    try:
        f_truth = compile_arb(truth, symbols)
        f_claim = compile_arb(claim, symbols)
        f_diff = compile_arb(difference, symbols) if difference is not None else None
    except Unsupported as exc:
        return Certification(reason=str(exc))
    by_name = {p.name: p.symbol for p in tgt.parameters}
    from .interval import _arb_rational  # noqa: PLC2701 - same package

    fixed_balls = {by_name[k]: _arb_rational(sp.Rational(v)) for k, v in fixed.items()}
    integer = [p for p in free if p.symbol.is_integer]
    axes = []
    for p in free:
        if p in integer:
            continue
        axis = _parameter_axis(p)
        if axis is None:
            integer.append(p)  # a single grid value: held fixed like an integer parameter
        else:
            axes.append(axis)
    alpha_axes = _alpha_axes(*alpha_range) if order is None else [None]
    combos = list(itertools.product(*[parameter_grid(p) for p in integer])) if integer else [()]
    runs = [(a, combo) for a in alpha_axes for combo in combos]
    if not runs:
        return Certification(reason="the alpha range has no part the certified pass covers")
    floor = 10.0 ** (-int(0.4 * dps))
    cert = Certification()
    budget = seconds / len(runs)
    for alpha_axis, combo in runs:
        held = dict(fixed_balls)
        held.update({p.symbol: _arb_rational(sp.Rational(v)) for p, v in zip(integer, combo)})
        box = ([alpha_axis] if alpha_axis is not None else []) + axes
        outcome = bisect_relation(f_claim, f_truth, relation, box, alpha=ALPHA if alpha_axis is not None else None,
                                  fixed=held, tol=tol, floor=floor, difference=f_diff, seconds=budget,
                                  prec=max(128, int(3.33 * dps) + 64))
        cert.outcomes.append(outcome)
        cert.fixed_note.append(", ".join(f"{p.name} = {sp.sstr(v)}" for p, v in zip(integer, combo)))
        if outcome.status == "refuted":
            outcome.point = {**outcome.point, **{p.symbol: sp.Rational(v) for p, v in zip(integer, combo)}}
            break
    return cert
