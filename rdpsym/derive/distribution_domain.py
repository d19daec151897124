"""Where P and Q are probability distributions: a parameter declared wider than its pmfs allow.

A Rényi divergence is defined between probability distributions (Mironov 2017, Def. 3). A parameter's
declared domain can be wider than that: P = (1 - p, p) with p declared in (0, 2) is a distribution only
for p <= 1. The derived formula then speaks of the part where P and Q are distributions, and a claim
about it is decided there (the claim checker narrows to ``DivergenceResult.domains``); on the rest the
"divergence" is of signed measures, and a certified pass over it can only fail.

:func:`distribution_domains` reads, for a finite support, each parameter that is the only free symbol of
some pmf values, and solves ``P(x) >= 0`` and ``Q(x) >= 0`` for it exactly (sympy's
``solve_univariate_inequality``) where those values are rational functions of it of low degree (a bounded
amount of work: no search, no time limit needed). The domain is narrowed only to an interval, and the
reason names an outcome whose probability is negative beyond it.
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp

from .. import printing
from .._numbers import SYMBOLIC_ERRORS
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA

__all__ = ["distribution_domains"]

#: the largest degree (numerator or denominator) of a pmf value solved for its parameter
MAX_DEGREE = 4
#: the largest finite support read (outcomes)
MAX_OUTCOMES = 64


def distribution_domains(P, Q, x, support, params: Sequence[Parameter] | None, domains: dict,
                         formulas: Sequence[sp.Expr | None] = ()) -> tuple[dict, list[str]]:
    """``({symbol: narrowed domain}, [reason, ...])`` for the parameters whose declared domain (in
    ``domains``, else the parameter's own) holds values where a pmf value of P or Q is negative; ``({}, [])``
    when there is none or the support is not a small finite set.

    A new closed end (p = 1 of (0, 1]) where one of ``formulas`` (the curve, the KL, D_oo) has no value (the
    curve's (1 - p)**(1 - alpha) at p = 1) is left out too: the formula does not speak of it, and a claim
    decided there could only be undecided."""
    if not isinstance(support, sp.FiniteSet) or len(support) > MAX_OUTCOMES or not params:
        return {}, []
    narrowed, reasons = {}, []
    for p in params:
        s, dom = p.symbol, domains.get(p.symbol, p.domain)
        if not isinstance(dom, sp.Interval) or dom.free_symbols:
            continue
        kept, witness = dom, None
        for name, dens in (("P", P), ("Q", Q)):
            for k in support:
                value = _value(dens, x, k)
                if value is None or value.free_symbols != {s} or not _small_rational(value, s):
                    continue
                try:
                    where = sp.solve_univariate_inequality(value >= 0, s, relational=False, domain=kept)
                except (*SYMBOLIC_ERRORS, NotImplementedError):
                    continue
                if where != kept and isinstance(where, sp.Interval) and not where.is_empty:
                    kept, witness = where, (name, k, value)
        if witness is None:
            continue
        where = kept
        kept = _open_where_valueless(kept, dom, s, formulas, {q.symbol: q.typical_values(1)[0] for q in params if q is not p})
        narrowed[s] = kept
        name, k, value = witness
        valueless = [e for e in (where.inf, where.sup) if e in where and e not in kept]
        reasons.append(f"the formula holds for {p.name} in {printing.interval(kept)}: P and Q are probability "
                       f"distributions only for {p.name} in {printing.interval(where)} ({name}({printing.sstr(k)}) = "
                       f"{printing.sstr(value)} is negative elsewhere in the declared {printing.interval(dom)})"
                       + "".join(f", and at {p.name} = {printing.sstr(e)} the formula has no value" for e in valueless))
    return narrowed, reasons


def _open_where_valueless(kept: sp.Interval, declared: sp.Interval, s, formulas, others: dict) -> sp.Interval:
    """``kept`` without each closed end that is not one of ``declared`` and where a formula has no value."""
    for end, closed in ((kept.inf, not kept.left_open), (kept.sup, not kept.right_open)):
        if not closed or declared.contains(end) is sp.true and end in (declared.inf, declared.sup):
            continue
        if any(not _has_value(f, {s: end} | others) for f in formulas if f is not None):
            kept = sp.Interval(kept.inf, kept.sup, kept.left_open or end == kept.inf, kept.right_open or end == kept.sup)
    return kept


def _has_value(formula, values) -> bool:
    """Whether ``formula`` at ``values`` (at alpha = 2 and 3 for a curve) is a real number or +-oo."""
    for order in (2, 3) if formula.has(ALPHA) else (None,):
        try:
            v = formula.subs(values) if order is None else formula.subs(values).subs(ALPHA, order)
            v = sp.N(v, 15) if v.is_finite else v
        except SYMBOLIC_ERRORS:
            return False
        if v.is_extended_real is not True:
            return False
    return True


def _value(dens, x, k):
    try:
        return dens.subs(x, k)
    except SYMBOLIC_ERRORS:
        return None


def _small_rational(value, s) -> bool:
    """Whether ``value`` is a rational function of ``s`` of degree at most :data:`MAX_DEGREE`."""
    if not value.is_rational_function(s):
        return False
    num, den = sp.fraction(sp.cancel(value))
    try:
        return max(sp.degree(num, s), sp.degree(den, s)) <= MAX_DEGREE
    except SYMBOLIC_ERRORS:
        return False
