"""Where a claim is tested: a grid over typical ranges and edge regimes, a hypothesis-guided search for
the largest violation, and shrinking of a counterexample to a simple point.

Edge regimes are where published RDP formulas break (Mironov 2017, arXiv:1702.07476 v3, Sec. VI and the
field since): orders next to 1 (cancellation in 1/(alpha-1) log(...)), large orders (overflow of
exp((alpha-1)/b)), orders in (0, 1), and parameters 100 times closer to the ends of their domain than
their typical range (tiny and huge scales, p next to 1/2 or 1).

All points are exact sympy numbers (Rationals), so the claim, the closed form and the numerics see the
same point.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from fractions import Fraction
from typing import Callable, Sequence

import sympy as sp

from ..specify.params import Parameter
from ..symbols import alpha as ALPHA

__all__ = ["alpha_grid", "parameter_grid", "case_boundaries", "closed_ends", "exact_rational", "affine_in", "linear_relation",
           "may_jump", "JUMPS", "guided_search", "numeric_end", "shrink", "simple_candidates"]

#: functions that may jump: a claim built with one is not known to be continuous, so what holds next to a
#: closed end of a parameter's domain need not hold at the end
JUMPS = (sp.sign, sp.Heaviside, sp.floor, sp.ceiling, sp.frac, sp.Mod, sp.Piecewise, sp.DiracDelta,
         sp.KroneckerDelta, sp.arg)

_ABOVE = ["1.000000001", "1.0000001", "1.000001", "1.001", "1.01", "1.1", "3/2", "2", "3", "5", "10", "32",
          "100", "1000", "10000", "1000000"]
_BELOW = ["1/1000", "1/10", "1/4", "1/2", "3/4", "9/10", "0.999999"]


def _rat(text: str) -> sp.Rational:
    return sp.Rational(Fraction(text))


def alpha_grid(lo, hi, cases: Sequence = ()) -> list[sp.Rational]:
    """Grid orders inside the open interval (lo, hi): the fixed orders of every regime, and for a narrow
    range (fewer than four of them inside) its quarter points too, so every range gets compared points;
    with ``cases`` (expressions), the :func:`case_boundaries` of their Piecewise conditions in alpha."""
    pts = [_rat(t) for t in _BELOW + _ABOVE] + case_boundaries(cases, ALPHA)
    out = list(dict.fromkeys(a for a in pts if (a > lo) is sp.true and (a < hi) is sp.true))
    if len(out) < 4 and hi != sp.oo:
        lo_r, hi_r = sp.Rational(lo), sp.Rational(hi)
        out = sorted(set(out) | {lo_r + (hi_r - lo_r) * sp.Rational(k, 8) for k in range(1, 8)})
    return out


def exact_rational(v) -> sp.Rational:
    """``v`` as an exact rational: itself, or its 30-digit rational (an end at log 2 gives an irrational
    edge)."""
    return v if v.is_Rational else sp.Rational(str(sp.N(v, 30)))


def _inside(param: Parameter, v) -> bool:
    """``v`` lies in the domain, or may: an end that depends on another parameter (a width above the
    sensitivity) is decided at each point, where P and Q are checked to be distributions."""
    return param.domain.contains(v) is not sp.false


def edge_values(param: Parameter) -> list[sp.Rational]:
    """Values 100 times closer to the ends of the domain than the typical range."""
    lo, hi = (sp.Rational(Fraction(str(v))) for v in param.typical)
    dom = param.domain
    out = []
    start, end = dom.inf, dom.sup
    # an end that depends on another parameter (a width above the sensitivity) has no value here: no edge
    if start.is_number and start.is_finite:
        out.append(start + (lo - start) / 100)
    elif start == -sp.oo:
        out.append(lo - 100 * (hi - lo))
    if end.is_number and end.is_finite:
        out.append(end - (end - hi) / 100)
    elif end == sp.oo:
        out.append(hi * 100 if hi > 0 else hi + 100 * (hi - lo))
    if param.symbol.is_integer:
        out = [sp.Integer(math.floor(v)) for v in out]
    # exact rationals (an end at log 2 gives an irrational edge: its 30-digit rational, 1% inside the end)
    out = [exact_rational(v) for v in out]
    return [v for v in out if _inside(param, v)]


def numeric_end(end) -> float:
    """A domain's end as a float: +-inf for an infinite end, the end's value for a number (log 2), and NaN
    for an end that depends on another parameter (a width above the sensitivity), where the typical range
    bounds the draws instead."""
    if end in (sp.oo, -sp.oo):
        return float(end)
    return float(end) if end.is_number and end.is_finite else math.nan


def may_jump(expr) -> bool:
    """``expr`` is not known to be continuous: it is built with a function that may jump (:data:`JUMPS`), or
    with a power whose base may be 0 and whose exponent varies (0**q is 1 at q = 0 and 0 after)."""
    if not isinstance(expr, sp.Basic):
        return False
    return expr.has(*JUMPS) or any(not pw.exp.is_number and pw.base.is_positive is not True
                                   for pw in expr.atoms(sp.Pow))


def closed_ends(param: Parameter) -> list[sp.Rational]:
    """The rational ends of an interval domain that belong to it (q = 0 and q = 1 for q in [0, 1])."""
    dom = param.domain
    if not isinstance(dom, sp.Interval):
        return []
    return [e for e in (dom.inf, dom.sup) if e.is_Rational and dom.contains(e) is sp.true]


#: how far either side of a case boundary the grid looks (relative to max(|r|, 1)): a jump at r shows on
#: one side of it, and a boundary that is itself excluded (c < 10**10) is still approached
BOUNDARY_STEP = sp.Rational(1, 10**6)


def affine_in(expr: sp.Expr, symbol: sp.Symbol) -> tuple[sp.Expr, sp.Expr] | None:
    """``(slope, offset)`` with ``expr = slope*symbol + offset``, both free of ``symbol`` (the slope may be 0);
    None where ``expr`` is not of that form."""
    if not expr.is_polynomial(symbol):
        return None
    poly = sp.Poly(expr, symbol)
    if poly.degree() > 1:
        return None
    return tuple(poly.all_coeffs()) if poly.degree() == 1 else (sp.Integer(0), sp.expand(expr))


def linear_relation(rel: sp.Basic, symbol: sp.Symbol) -> tuple[sp.Expr, sp.Expr] | None:
    """``(slope, value at 0)`` of lhs - rhs of the relational ``rel`` in ``symbol`` alone, when it is linear
    in ``symbol`` with numeric coefficients (``c < 10**10``, ``2*alpha - 3 >= 0``); None otherwise."""
    if not isinstance(rel, sp.core.relational.Relational) or rel.free_symbols != {symbol}:
        return None
    line = affine_in(sp.expand(rel.lhs - rel.rhs), symbol)
    if line is None or not line[0].is_number or line[0] == 0:
        return None
    return line


def _roots_in(rel: sp.Basic, symbol: sp.Symbol) -> list[sp.Expr]:
    """Where the relational ``rel`` in ``symbol`` alone changes truth value (:func:`linear_relation`)."""
    line = linear_relation(rel, symbol)
    if line is None:
        return []
    root = -line[1] / line[0]
    return [root] if root.is_number and root.is_real else []


def case_boundaries(exprs: Sequence, symbol: sp.Symbol, integer: bool = False) -> list[sp.Rational]:
    """Exact points at and next to the case boundaries in ``symbol`` of the Piecewise conditions in
    ``exprs`` (the claim and the closed form): a claim that is right on one side of its own case split and
    wrong on the other (``Piecewise((c - 1 - log(c), c < 10**10), (0, True))``) is compared on both sides,
    wherever the split lies, not only where the typical range reaches (boundary-value testing)."""
    roots: set = set()
    for expr in exprs:
        if not isinstance(expr, sp.Basic):
            continue
        for pw in expr.atoms(sp.Piecewise):
            for _, cond in pw.args:
                if isinstance(cond, sp.Basic):
                    for rel in cond.atoms(sp.core.relational.Relational):
                        roots.update(_roots_in(rel, symbol))
    out: list[sp.Rational] = []
    for r in sorted(roots, key=lambda v: float(v)):
        r = exact_rational(r)
        if integer:
            near = [sp.floor(r) - 1, sp.floor(r), sp.ceiling(r), sp.ceiling(r) + 1]
        else:
            step = max(abs(r), sp.Integer(1)) * BOUNDARY_STEP
            near = [r - step, r, r + step]
        out.extend(v for v in near if v not in out)
    return out


def parameter_grid(param: Parameter, n_typical: int = 3, ends: bool = False, cases: Sequence = ()) -> list[sp.Rational]:
    """Typical values and :func:`edge_values`; with ``ends``, the closed ends of the domain too (for a claim
    that may jump there, where values next to the end say nothing about the end itself); with ``cases``
    (expressions), the :func:`case_boundaries` of their Piecewise conditions in this parameter."""
    vals = (list(param.typical_values(n_typical)) + edge_values(param) + (closed_ends(param) if ends else [])
            + case_boundaries(cases, param.symbol, integer=bool(param.symbol.is_integer)))
    seen, out = set(), []
    for v in vals:
        if v not in seen and _inside(param, v):
            seen.add(v)
            out.append(v)
    return out


# ---------------------------------------------------------------------------------------------------
# hypothesis-guided search
# ---------------------------------------------------------------------------------------------------
def _param_strategy(param: Parameter):
    from hypothesis import strategies as st

    lo, hi = param.typical
    dom_lo, dom_hi = (numeric_end(e) for e in (param.domain.inf, param.domain.sup))
    parts = []
    if param.log_scale and lo > 0:
        a, b = math.log10(lo) - 2, math.log10(hi) + 2
        parts.append(st.floats(a, b).map(lambda u: 10.0**u))
    parts.append(st.floats(lo, hi))
    if math.isfinite(dom_lo):
        w = lo - dom_lo
        if w > 0:
            parts.append(st.floats(-4, 0).map(lambda u, s=dom_lo, w=w: s + w * 10.0**u))
    if math.isfinite(dom_hi):
        w = dom_hi - hi
        if w > 0:
            parts.append(st.floats(-4, 0).map(lambda u, s=dom_hi, w=w: s - w * 10.0**u))
    elif not param.log_scale and not math.isnan(dom_hi):
        parts.append(st.floats(math.log10(max(hi, 1e-3)), math.log10(max(hi, 1e-3)) + 2).map(lambda u: 10.0**u))
    strat = st.one_of(*parts)
    if param.symbol.is_integer:
        strat = strat.map(lambda v: float(math.floor(v)))
    # an end that depends on another parameter is not known here: the typical range is the bound on that side
    if math.isnan(dom_lo):
        lo_ok = lambda v: v >= lo  # noqa: E731
    else:
        lo_ok = (lambda v: v >= dom_lo) if param.domain.contains(param.domain.inf) is sp.true else (lambda v: v > dom_lo)
    if math.isnan(dom_hi):
        hi_ok = lambda v: v <= hi  # noqa: E731
    else:
        hi_ok = (lambda v: v <= dom_hi) if param.domain.contains(param.domain.sup) is sp.true else (lambda v: v < dom_hi)
    return strat.filter(lambda v: math.isfinite(v) and lo_ok(v) and hi_ok(v))


def _alpha_strategy(lo, hi):
    """Orders in the open interval (lo, hi), log-spaced towards 1 from both sides and towards 0 and oo."""
    from hypothesis import strategies as st

    flo = float(lo)
    fhi = math.inf if hi == sp.oo else float(hi)
    parts = []
    if fhi > 1:
        top = min(fhi, 1e12) - 1
        bottom = max(flo - 1, 1e-12)
        if bottom < top:
            parts.append(st.floats(math.log10(bottom), math.log10(top)).map(lambda u: 1 + 10.0**u))
    if flo < 1:
        a0, a1 = max(flo, 1e-12), min(fhi, 1.0)
        if a0 < a1:
            parts.append(st.floats(math.log10(a0), math.log10(a1)).map(lambda u: 10.0**u))
            d0, d1 = max(1 - a1, 1e-12), 1 - a0
            if d0 < d1:
                parts.append(st.floats(math.log10(d0), math.log10(d1)).map(lambda u: 1 - 10.0**u))
    if not parts:
        return None
    # alpha = 1 is the KL (order=1), not a point of the curve's formula
    return st.one_of(*parts).filter(lambda a: flo < a < fhi and a != 1)


def guided_search(
    params: Sequence[Parameter],
    alpha_range,
    violation: Callable[[sp.Expr | None, dict], float | None],
    max_examples: int,
) -> tuple[tuple | None, float, int]:
    """Maximise ``violation(alpha, values)`` with hypothesis' ``target()``.

    ``alpha_range`` is ``None`` for claims about one special order. Returns the best point
    ``(alpha, values)``, its violation and the number of points tried. Deterministic (derandomized).
    """
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import strategies as st

    fields = {p.name: _param_strategy(p) for p in params}
    if alpha_range is not None:
        alpha_strategy = _alpha_strategy(*alpha_range)
        if alpha_strategy is None:
            return None, -math.inf, 0  # a range no float order lies in (1, 1 + 1e-13): the grid covers it
        fields["__alpha__"] = alpha_strategy
    best: dict = {"point": None, "v": -math.inf, "n": 0}
    if not fields:
        return None, -math.inf, 0

    @settings(max_examples=max_examples, database=None, deadline=None, derandomize=True,
              phases=[Phase.generate, Phase.target], suppress_health_check=list(HealthCheck))
    @given(st.fixed_dictionaries(fields))
    def run(draw):
        values = {k: sp.Rational(v) for k, v in draw.items() if k != "__alpha__"}
        a = sp.Rational(draw["__alpha__"]) if "__alpha__" in draw else None
        v = violation(a, values)
        best["n"] += 1
        if v is None:
            return
        # hypothesis.target needs a finite observation: a claim of +oo as an upper bound has violation -oo
        fv = min(max(float(v), -1e300), 1e300)
        target(fv, label="violation")
        if fv > best["v"]:
            best["point"], best["v"] = (a, values), fv

    from hypothesis.errors import Unsatisfiable

    try:
        with _private_hypothesis_home():
            run()
    except Unsatisfiable:
        pass  # too few drawable points in a narrow range: the grid and the certified pass still cover it
    return best["point"], best["v"], best["n"]


@contextlib.contextmanager
def _private_hypothesis_home():
    """Hypothesis keeps files (a cache of the constants in the caller's modules) under ``.hypothesis/`` in
    the working directory; a claim check must leave nothing there. Its home directory is a temporary one
    for the search, unless the user chose one (``HYPOTHESIS_STORAGE_DIRECTORY`` or
    ``set_hypothesis_home_dir``), and is restored after."""
    from hypothesis import configuration

    chosen = getattr(configuration, "__hypothesis_home_directory", None)
    if chosen is not None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or not hasattr(
            configuration, "set_hypothesis_home_dir"):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="rdpsym-hypothesis-") as home:
        configuration.set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(None)


# ---------------------------------------------------------------------------------------------------
# shrinking
# ---------------------------------------------------------------------------------------------------
_DENOMINATORS = (1, 2, 3, 4, 5, 8, 10, 16, 20, 50, 100, 1000, 10**4, 10**6)


def simple_candidates(v: sp.Rational, ok: Callable[[sp.Rational], bool], integer: bool = False) -> list[sp.Rational]:
    """Simple numbers near ``v`` (and small integers), simplest first, that satisfy ``ok``.

    Simplicity is (denominator, |numerator|): 2 before 3/2 before 7/4.
    """
    cands = set()
    for n in range(1, 11):
        cands.add(sp.Integer(n))
        if not integer:
            cands.add(sp.Rational(1, n))
    for d in ((1,) if integer else _DENOMINATORS):
        n = int(sp.floor(v * d))
        for m in (n - 1, n, n + 1, n + 2):
            cands.add(sp.Rational(m, d))
    good = [c for c in cands if ok(c)]
    return sorted(good, key=lambda c: (int(c.q), abs(int(c.p)), abs(float(c - v))))


def shrink(
    point: tuple,
    params: Sequence[Parameter],
    alpha_ok: Callable[[sp.Rational], bool] | None,
    refutes: Callable[[sp.Expr | None, dict], bool],
    rounds: int = 2,
) -> tuple:
    """Replace each coordinate of a refuting ``point`` by the simplest nearby number that still refutes."""
    a, values = point
    values = dict(values)
    by_name = {p.name: p for p in params}
    for _ in range(rounds):
        changed = False
        if a is not None and alpha_ok is not None:
            for c in simple_candidates(a, alpha_ok):
                if c == a:
                    break
                if refutes(c, values):
                    a, changed = c, True
                    break
        for name in list(values):
            p = by_name[name]
            cur = values[name]
            for c in simple_candidates(cur, lambda v, p=p: _inside(p, v), bool(p.symbol.is_integer)):
                if c == cur:
                    break
                trial = {**values, name: c}
                if refutes(a, trial):
                    values, changed = trial, True
                    break
        if not changed:
            break
    return a, values
