"""Where a closed form is checked: parameter values and orders alpha, by regime.

A closed form for D_alpha(P||Q) (Mironov 2017, arXiv:1702.07476 v3, Def. 3) is checked at points
``(alpha, values)`` chosen to catch the failures seen in the field:

* ``typical``: parameters drawn (seeded) from each parameter's typical range, at ordinary orders;
* ``alpha -> 1``: alpha = 1 +- 1e-6, where 1/(alpha-1) log(...) cancels catastrophically, and
  alpha = 1 itself (the KL divergence, Mironov 2017, Prop. 3 / van Erven-Harremoës Thm. 5);
* ``alpha in (0,1)``: alpha = 1e-3, 1/4, 3/4;
* ``large alpha``: alpha = 100, 1000 (overflow of exp((alpha-1)/b) in float code), and alpha = oo
  (the max-divergence, van Erven-Harremoës Thm. 6);
* ``exceptional``: every removable singular order alpha0 of the closed form and alpha0 +- 1e-6;
* ``finiteness edge``: the orders b (1 -+ 1/10) around each order b where the finiteness
  conditions switch, just inside and just outside (outside, both sides must say +oo). Closer than
  10% a polynomial tail decays like |x|^(-1-small) and no quadrature certifies 30 digits;
* ``tiny scale`` / ``huge scale`` / ``domain edge``: each parameter pushed 100 times closer to the
  ends of its domain than its typical range, at alpha = 2, 1 + 1e-6 and 1000.

Points are generic: parameters of the same kind (the same domain) never share a value at a point
(:func:`distinct_values` staggers a repeated value deterministically, the second of two scales at
1.7 times the first, within the typical range), so no point has P = Q because two scales or two
locations happen to coincide. Only values the caller pins (``fixed``, ``parameter_points``) are kept
as given, even when they coincide.

Everything is exact (sympy Rationals): the closed form and the numerics then see the same numbers.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import sympy as sp

from .. import printing
from ..specify.text.numbers import exact_or_symbolic
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA

__all__ = ["Point", "edge_values", "central_values", "distinct_values", "infer_parameters", "verification_points",
           "TYPICAL_ORDERS", "NEAR_ONE", "SMALL_ORDERS", "LARGE_ORDERS", "STAGGER"]

NEAR_ONE = (1 + sp.Rational(1, 10**6), 1 - sp.Rational(1, 10**6))
TYPICAL_ORDERS = (sp.Rational(3, 2), sp.Integer(2), sp.Integer(3), sp.Integer(5), sp.Integer(10), sp.Integer(32))
SMALL_ORDERS = (sp.Rational(1, 1000), sp.Rational(1, 4), sp.Rational(3, 4))
LARGE_ORDERS = (sp.Integer(100), sp.Integer(1000))
#: relative distance of the "just inside / just outside" orders from a finiteness boundary
EDGE_OFFSET = sp.Rational(1, 10)
#: factor between repeated values of same-kind log-scale (or positive) parameters at one point
STAGGER = sp.Rational(17, 10)


@dataclass(frozen=True)
class Point:
    """One place to compare: an order ``alpha`` (exact, possibly ``oo``), parameter ``values``
    (name -> exact number) and the ``regime`` it stands for."""

    alpha: sp.Expr
    values: tuple[tuple[str, sp.Expr], ...]
    regime: str

    @property
    def value_dict(self) -> dict[str, sp.Expr]:
        return dict(self.values)

    def describe(self) -> str:
        vals = ", ".join(f"{k}={_short(v)}" for k, v in self.values)
        return f"alpha={_short(self.alpha)}" + (f", {vals}" if vals else "")


def _short(v: sp.Expr) -> str:
    if v == sp.oo:
        return "oo"
    if isinstance(v, sp.Rational) and v.q > 1000 and printing.float_decimal(v) is None:
        return sp.sstr(sp.Float(v, 8))
    return printing.sstr(v)


def _exact(v, name: str = "parameter value") -> sp.Expr:
    """An exact number (:func:`rdpsym.specify.text.numbers.exact_or_symbolic`: never sympify user text), finite; a
    sympy expression with free symbols is kept as it is."""
    out = exact_or_symbolic(v, name)
    if out.is_number and out.is_finite is False:
        raise ValueError(f"{name} must be a finite number; got {v!r}")
    return out


def _kind(param: Parameter):
    """Parameters of one kind can make P = Q when they coincide (two scales, two locations)."""
    return sp.srepr(param.domain)


def _stagger_candidates(param: Parameter, v: sp.Expr):
    """Deterministic alternatives to the value ``v`` of ``param``: v * 1.7**k, v / 1.7**k on a log
    scale (or for a positive parameter), v +- k w (w a sixth of the typical range) otherwise,
    v +- k for integers."""
    lo, hi = param.typical
    if param.symbol.is_integer:
        for k in range(1, 25):
            yield v + k
            yield v - k
        return
    if (param.log_scale or (param.domain.inf == 0 and v > 0)) and v > 0:
        for k in range(1, 13):
            yield v * STAGGER**k
            yield v / STAGGER**k
    w = _nice((hi - lo) / 6, False) or sp.Rational(1, 10)
    for k in range(1, 13):
        yield v + k * w
        yield v - k * w


def _close(param: Parameter, v: sp.Expr, u: sp.Expr) -> bool:
    """``v`` and ``u`` as good as equal for ``param``: within 5% of each other for a scale, within
    1/50 of the typical range otherwise (a point there is nearly P = Q and verifies little)."""
    if v == u:
        return True
    lo, hi = param.typical
    if (param.log_scale or param.domain.inf == 0) and v > 0 and u > 0:
        return abs(v - u) <= max(v, u) / 20
    return abs(float(v - u)) <= (hi - lo) / 50


def distinct_values(params: Sequence[Parameter], values: Mapping[str, sp.Expr],
                    keep: Iterable[str] = ()) -> dict[str, sp.Expr]:
    """``values`` with no two parameters of the same kind (domain) at the same value.

    Parameters named in ``keep`` (pinned by the caller, or the one a regime pushes to an edge) keep
    their value; any other parameter whose value is already taken (:func:`_close`: within 5% for a
    scale) by one of its kind moves to the
    first of :func:`_stagger_candidates` that is free, inside its typical range if possible, else
    inside its domain. Deterministic: the same values give the same result."""
    out = dict(values)
    keep = set(keep)
    groups: dict[str, list[Parameter]] = {}
    for p in params:
        if p.name in out:
            groups.setdefault(_kind(p), []).append(p)
    for members in groups.values():
        if len(members) < 2:
            continue
        used = [out[p.name] for p in members if p.name in keep]
        for p in members:
            if p.name in keep:
                continue
            v = out[p.name]
            if any(_close(p, v, u) for u in used):
                lo, hi = p.typical
                inside = None
                for c in _stagger_candidates(p, v):
                    if any(_close(p, c, u) for u in used) or p.domain.contains(c) is not sp.true:
                        continue
                    if lo <= float(c) <= hi:
                        inside = c
                        break
                    if inside is None:
                        inside = ("domain", c)
                if isinstance(inside, tuple):
                    inside = inside[1]
                if inside is not None:
                    v = inside
                out[p.name] = v
            used.append(v)
    return out


def _nice(v: float, integer: bool) -> sp.Expr:
    if integer:
        return sp.Integer(round(v))
    # two significant digits: readable reports, exact thereafter
    if v == 0:
        return sp.Integer(0)
    e = math.floor(math.log10(abs(v))) - 1
    return sp.Rational(round(v / 10**e)) * sp.Rational(10) ** e


def central_values(params: Sequence[Parameter]) -> dict[str, sp.Expr]:
    """The middle of each typical range (geometric mean for log-scale parameters)."""
    return {p.name: p.typical_values(1)[0] for p in params}


def edge_values(param: Parameter) -> list[tuple[str, sp.Expr]]:
    """Values of ``param`` 100 times closer to the ends of its domain than its typical range.

    Scales (domain (0, oo)) get ``tiny scale`` = low/100 and ``huge scale`` = high*100; a finite end
    ``e`` of the domain gets ``e + (low - e)/100`` (resp. ``e - (e - high)/100``).
    """
    lo, hi = param.typical
    integer = bool(param.symbol.is_integer)
    out = []
    inf, sup = param.domain.inf, param.domain.sup
    if inf.is_finite:
        v = float(inf) + (lo - float(inf)) / 100
        out.append(("tiny scale" if inf == 0 else "domain edge (low)", _nice(v, integer)))
    else:
        out.append(("huge scale (negative)", _nice(lo - 100 * (hi - lo), integer)))
    if sup.is_finite:
        v = float(sup) - (float(sup) - hi) / 100
        out.append(("domain edge (high)", _nice(v, integer) if integer else sp.Rational(v).limit_denominator(10**9)))
    else:
        out.append(("huge scale", _nice(hi * 100 if hi > 0 else hi + 100 * (hi - lo), integer)))
    keep = []
    for regime, v in out:
        if param.domain.contains(v) is sp.true and v not in [u for _, u in keep]:
            keep.append((regime, v))
    return keep


def infer_parameters(symbols: Iterable[sp.Symbol]) -> list[Parameter]:
    """Parameters for bare sympy symbols, from their assumptions (:meth:`Parameter.from_symbol`, in
    name order).

    positive -> (0, oo), typical 0.5..5 on a log scale; nonnegative -> [0, oo), typical 0.5..5;
    real -> the real line, typical -2..2; integer narrows each to integers. A symbol with no sign or
    reality assumption cannot be sampled: ``ValueError`` asks for ``values=`` or ``params=``.
    """
    return [Parameter.from_symbol(s) for s in sorted(symbols, key=lambda s: s.name)]


def _avoiding(params: Sequence[Parameter], values: dict[str, sp.Expr], keep: set[str],
              avoid: Callable[[Mapping[str, sp.Expr]], bool] | None) -> dict[str, sp.Expr]:
    """``values``, or the first deterministic variation of its free (not ``keep``) parameters for
    which ``avoid`` (e.g. "P = Q here") is false; ``values`` itself if none is found."""
    if avoid is None or not avoid(values):
        return values
    for p in params:
        if p.name in keep or p.name not in values:
            continue
        lo, hi = p.typical
        for c in _stagger_candidates(p, values[p.name]):
            if p.domain.contains(c) is not sp.true or not lo <= float(c) <= hi:
                continue
            trial = distinct_values(params, {**values, p.name: c}, keep=keep | {p.name})
            if not avoid(trial):
                return trial
    return values


def _finiteness_edges(conditions: sp.Basic, values: Mapping[str, sp.Expr]) -> list[tuple[str, sp.Expr]]:
    """Orders just inside and just outside the boundary of the finiteness conditions at ``values``."""
    if conditions in (sp.true, sp.false) or not conditions.has(ALPHA):
        return []
    subs = {s: values[s.name] for s in conditions.free_symbols if s.name in values}
    cond = conditions.subs(subs)
    if cond in (sp.true, sp.false):
        return []
    try:
        region = sp.solveset(cond, ALPHA, sp.Interval.open(0, sp.oo))
        ends = [b for b in region.boundary if b.is_number and b.is_finite and b > 0 and b != 1] \
            if isinstance(region.boundary, sp.FiniteSet) else []
    except Exception:  # noqa: BLE001 - solveset fails in many ways; no edge points then
        return []
    out = []
    for b in sorted(ends, key=float):
        b = sp.nsimplify(b) if not b.is_Rational else b
        for a in (b * (1 - EDGE_OFFSET), b * (1 + EDGE_OFFSET)):
            a = sp.Rational(sp.Float(a, 30)).limit_denominator(10**12) if not a.is_Rational else a
            inside = cond.subs(ALPHA, a)
            out.append((f"finiteness edge ({'inside' if inside is sp.true else 'outside'})", a))
    return out


def verification_points(
    params: Sequence[Parameter],
    *,
    fixed: Mapping[str, object] | None = None,
    parameter_points: Sequence[Mapping[str, object]] | None = None,
    conditions: sp.Basic = sp.true,
    exceptional: Sequence[sp.Expr] = (),
    seed: int = 0,
    n_typical: int = 6,
    level: str = "standard",
    avoid: Callable[[Mapping[str, sp.Expr]], bool] | None = None,
) -> list[Point]:
    """The deterministic list of points at which a closed form is checked (see the module docstring).

    ``fixed`` pins parameters (e.g. ``{"sensitivity": 1}``); ``parameter_points`` replaces the drawn
    parameter values by explicit ones (each must give every non-fixed parameter). ``level`` is
    ``"quick"`` (one point per order regime, no scale edges), ``"standard"`` or ``"thorough"`` (every
    edge value at every edge order). The same ``seed`` always gives the same points.

    ``avoid(values) -> bool`` marks parameter values to stay away from (``verify`` passes "P = Q
    there"): a drawn point (never a pinned value) where it is true moves to the first deterministic
    variation of its free parameters where it is false, so every regime keeps a point that can
    verify something (a single p in (0, 1) with typical range centred on 1/2 would otherwise put every
    order regime at p = 1/2, where randomized response has P = Q).
    """
    if level not in ("quick", "standard", "thorough"):
        raise ValueError(f"level must be 'quick', 'standard' or 'thorough'; got {level!r}")
    if not isinstance(seed, int):
        raise ValueError(f"seed must be an int; got {seed!r}")
    rng = random.Random(seed)
    names = {p.name for p in params}
    unknown = set(fixed or {}) - names
    if unknown:
        raise ValueError(f"fixed values for unknown parameters {sorted(unknown)}; parameters are {sorted(names)}")
    fixed = {k: _exact(v, k) for k, v in (fixed or {}).items()}
    free = [p for p in params if p.name not in fixed]
    points: list[Point] = []
    pinned = set(fixed) | (set().union(*(set(pp) for pp in parameter_points)) if parameter_points else set())

    def add(a, vals, regime, moved=()):
        full = {k: _exact(v, k) for k, v in {**vals, **fixed}.items()}
        # generic: no two same-kind parameters share a value unless the caller pinned both
        full = distinct_values(params, full, keep=pinned | set(moved))
        full = _avoiding(params, full, pinned | set(moved), avoid)
        pt = Point(sp.S(a), tuple(sorted(full.items())), regime)
        if pt not in points:
            points.append(pt)

    if parameter_points is not None:
        bases = []
        for i, pp in enumerate(parameter_points):
            missing = {p.name for p in free} - set(pp)
            if missing:
                raise ValueError(f"values[{i}] does not give parameter(s) {sorted(missing)}")
            bases.append({k: _exact(v, k) for k, v in pp.items()})
        if not bases:
            raise ValueError("values: an empty list of parameter points")
    else:
        centre = central_values(free)
        grids = {p.name: p.typical_values(5) for p in free}
        bases = [centre]
        for _ in range(n_typical - 1 if level != "quick" else 1):
            bases.append({n: rng.choice(g) for n, g in grids.items()})
    # the centre is used for every order regime: make it generic once, here
    bases = [_avoiding(params, distinct_values(params, {**b, **fixed}, keep=pinned), pinned, avoid) for b in bases]
    bases = [{k: v for k, v in b.items() if k not in fixed} for b in bases]
    centre = bases[0]

    # typical: ordinary orders at every base point (orders rotate, seeded)
    orders = list(TYPICAL_ORDERS)
    for i, vals in enumerate(bases):
        add(orders[(i + rng.randrange(len(orders))) % len(orders)], vals, "typical")
    # the order regimes at the centre
    add(2, centre, "typical")
    add(1, centre, "alpha = 1 (KL)")
    add(sp.oo, centre, "alpha = oo")
    near = NEAR_ONE if level != "quick" else NEAR_ONE[:1]
    for a in near:
        add(a, centre, "alpha -> 1")
    small = SMALL_ORDERS if level != "quick" else SMALL_ORDERS[1:2]
    for a in small:
        add(a, centre, "alpha in (0,1)")
    large = LARGE_ORDERS if level != "quick" else LARGE_ORDERS[1:]
    for a in large:
        add(a, centre, "large alpha")
    for a0 in exceptional:
        if not (a0.is_number and a0.is_finite and a0 > 0):
            continue
        add(a0, centre, "exceptional point")
        if level != "quick":
            for d in (sp.Rational(1, 10**6), -sp.Rational(1, 10**6)):
                if a0 + d > 0 and a0 + d != 1:
                    add(a0 + d, centre, "near exceptional point")
    for regime, a in _finiteness_edges(conditions, {**centre, **fixed}):
        add(a, centre, regime)
    if parameter_points is None and level != "quick":
        edge_orders = (sp.Integer(2), NEAR_ONE[0], sp.Integer(1000)) if level == "thorough" else (sp.Integer(2),)
        for p in free:
            for regime, v in edge_values(p):
                vals = {**centre, p.name: v}
                for a in edge_orders:
                    add(a, vals, f"{regime} ({p.name})", moved=(p.name,))
                if level == "standard":
                    # one extreme order per edge value, alternating, keeps the count small
                    add(rng.choice((NEAR_ONE[0], sp.Integer(1000))), vals, f"{regime} ({p.name})", moved=(p.name,))
    return points
