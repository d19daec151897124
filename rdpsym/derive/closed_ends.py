"""Where a finite-support formula stops being the divergence: the closed ends of the parameters' domains.

Simplification combines powers of one base: p^alpha (p^2)^(1 - alpha) = p^(2 - alpha). That holds for p > 0.
At p = 0 the outcome has probability 0 under both P and Q and contributes nothing to the sum
sum_x P(x)^alpha Q(x)^(1 - alpha) (Mironov 2017, Def. 3: the sum runs over the support), while the
combined power reads 0^0 = 1 at alpha = 2 and 0^(-1) beyond. A parameter whose domain includes such an
end then gets a formula that is wrong there, silently.

:func:`closed_end_domains` compares the derived curve, KL and D_oo with the sums of the densities
themselves at each closed finite end of a parameter's interval domain, the other parameters at a typical
value, at the orders 2 and 3 (exact finite sums of rationals, outcomes with P = 0 left out). Where the
formula gives a number that is not the densities', the end is taken out of the domain the result holds
on, and the derivation says so. (A formula with no value there, 0^(-1) say, is left alone: evaluating
the result there raises instead of giving a number.)
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp

from .. import printing
from .._numbers import SYMBOLIC_ERRORS
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA

__all__ = ["closed_end_domains"]

#: the orders at which the curve is compared with the sums (integer: the sums are exact)
ORDERS = (2, 3)
#: digits of the comparison (the sums are exact; the formula is evaluated to this many)
DPS = 30


def closed_end_domains(P, Q, x, support, expr, kl, dinf, params: Sequence[Parameter] | None,
                       symbols) -> tuple[dict, list[str]]:
    """The domains narrowed to leave out each closed end where the formulas are not the divergence, and
    the reason for each (module docstring). Finite supports only; ``({}, [])`` when every end holds."""
    if not isinstance(support, sp.FiniteSet) or expr is None or not params:
        return {}, []
    params = [p for p in params if p.symbol in symbols]
    narrowed, reasons = {}, []
    for p in params:
        dom = p.domain
        if not isinstance(dom, sp.Interval) or dom.free_symbols:
            continue
        for end, closed in ((dom.inf, not dom.left_open), (dom.sup, not dom.right_open)):
            if not (closed and end.is_finite):
                continue
            values = {q.symbol: q.typical_values(1)[0] for q in params if q is not p} | {p.symbol: end}
            why = _disagreement(P, Q, x, support, expr, kl, dinf, values)
            if why is None:
                continue
            kept = narrowed.get(p.symbol, dom)
            kept = sp.Interval(kept.inf, kept.sup, kept.left_open or end == kept.inf,
                               kept.right_open or end == kept.sup)
            narrowed[p.symbol] = kept
            reasons.append(f"the formula holds for {p.name} in {printing.interval(kept)}: at {p.name} = "
                           f"{printing.sstr(end)} {why}")
    return narrowed, reasons


def _disagreement(P, Q, x, support, expr, kl, dinf, values) -> str | None:
    """How the formulas differ from the sums of the densities at ``values`` (None: they agree, or the
    densities are no distributions there, or nothing could be evaluated)."""
    try:
        pmf = [(P.subs(x, k).subs(values), Q.subs(x, k).subs(values)) for k in support]
    except SYMBOLIC_ERRORS:
        return None
    if not all(a.is_number and b.is_number and a.is_nonnegative and b.is_nonnegative for a, b in pmf):
        return None
    kept = [(a, b) for a, b in pmf if a != 0]
    if not kept:
        return None
    for order in ORDERS:
        truth = (sp.oo if any(b == 0 for _, b in kept)
                 else sp.log(sum(a**order * b ** (1 - order) for a, b in kept)) / (order - 1))
        why = _differs(expr.subs(ALPHA, order), values, truth, f"D_{order}")
        if why:
            return why
    if dinf is not None:
        truth = sp.oo if any(b == 0 for _, b in kept) else sp.Max(*(sp.log(a / b) for a, b in kept))
        why = _differs(dinf, values, truth, "D_oo")
        if why:
            return why
    if kl is not None and not any(b == 0 for _, b in kept):
        why = _differs(kl, values, sum(a * sp.log(a / b) for a, b in kept), "the KL")
        if why:
            return why
    return None


def _differs(formula, values, truth, name) -> str | None:
    """How the formula's value at ``values`` differs from ``truth``: only a number (finite or +-oo) that
    is not the truth counts. A formula with no value there (0^(-1), log 0 inside a Max, nan) gives no
    number: evaluating the result there raises, which is not wrong, so the end is kept."""
    try:
        got = _numeric(formula.subs(values))
        want = _numeric(truth)
    except SYMBOLIC_ERRORS:
        return None
    if got.is_extended_real is not True:  # complex infinity, nan, a complex number: no value
        return None
    if want.is_finite is False or got.is_finite is False:
        return None if want == got else f"the formula gives {name} = {_text(got)}, the densities {_text(want)}"
    if abs(got - want) > sp.Float(10) ** (5 - DPS) * max(1, abs(want)):
        return f"the formula gives {name} = {_text(got)}, the densities {_text(want)}"
    return None


def _numeric(v):
    return sp.N(v, DPS) if v.is_finite else v


def _text(v) -> str:
    return sp.sstr(sp.N(v, 6)) if v.is_finite else printing.sstr(v)

