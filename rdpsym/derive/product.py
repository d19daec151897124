"""Independent coordinates: the Rényi divergence of product densities is the sum over the coordinates.

When P(x) = prod_i P_i(x_i) and Q(x) = prod_i Q_i(x_i) on a product support S_1 x ... x S_d,

    ∫ P^alpha Q^(1-alpha) = prod_i ∫_{S_i} P_i^alpha Q_i^(1-alpha)   (Fubini/Tonelli)

so D_alpha(P||Q) = sum_i D_alpha(P_i||Q_i) for every order alpha in [0, oo] (additivity of the Rényi
divergence over product distributions: van Erven & Harremoës 2014, IEEE T-IT 60(7), Thm. 28), and the
sum is +oo exactly when one of the terms is. The factors are found by :func:`sympy.separatevars`, else by
expanding log P into a sum of terms each in one coordinate; each factor f_i is normalised by its
integral (sum) Z_i over S_i, computed symbolically under a time limit, so that each one-dimensional
pair (f_i/Z_i, g_i/W_i) is a pair of distributions, derived by the one-dimensional engine (cached).
The constant left over, c_P prod_i Z_i, is the mass of P and must be 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..symbols import alpha as ALPHA
from .pieces import DerivationError
from .result import DivergenceResult, ExceptionalPoint, Status
from .template import log_expand
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["Factorisation", "factorise", "normalise_factor", "combine_parts"]

THEOREM = "additivity over products (van Erven & Harremoës 2014, IEEE T-IT 60(7), Thm. 28)"


@dataclass(frozen=True)
class Factorisation:
    """dens = coeff * prod_i factors[i](variables[i]), ``coeff`` free of the variables."""

    coeff: sp.Expr
    factors: tuple[sp.Expr, ...]
    how: str


def _by_separatevars(dens, variables):
    found = sp.separatevars(dens, symbols=list(variables), dict=True, force=True)
    if not found:
        return None
    factors = tuple(found.get(v, sp.Integer(1)) for v in variables)
    coeff = found.get("coeff", sp.Integer(1))
    if coeff.has(*variables) or any(f.free_symbols & (set(variables) - {v}) for f, v in zip(factors, variables)):
        return None
    return Factorisation(coeff, factors, "separatevars")


def _by_log_expansion(dens, variables):
    """log dens = c + sum_i L_i(x_i): each term of the expanded log in at most one variable."""
    logged = log_expand(dens)
    if logged.has(sp.log) and any(len(a.free_symbols & set(variables)) > 1 for a in logged.atoms(sp.log)):
        return None
    parts = {v: sp.Integer(0) for v in variables}
    const = sp.Integer(0)
    for term in sp.Add.make_args(logged):
        used = term.free_symbols & set(variables)
        if len(used) > 1:
            return None
        if used:
            parts[used.pop()] += term
        else:
            const += term
    return Factorisation(sp.exp(const), tuple(sp.exp(parts[v]) for v in variables), "log expansion")


def factorise(dens: sp.Expr, variables, seconds: float) -> Factorisation | None:
    """``dens`` as a product of one-coordinate factors (:class:`Factorisation`), or None (within ``seconds``)."""
    for method in (_by_separatevars, _by_log_expansion):
        try:
            found = run_with_time_limit(method, dens, variables, seconds=seconds)
        except (StepTimeout, DerivationError, *SYMBOLIC_ERRORS):  # a method that fails is skipped
            continue
        if found is not None:
            return found
    return None


def _range_sum(f, x, start, end):
    return sp.summation(f, (x, start, end))


def total_mass(f: sp.Expr, x: sp.Symbol, support: sp.Set) -> sp.Expr:
    """∫_S f (continuous S) or sum over S (discrete S) in closed form; raises DerivationError if sympy
    leaves it unevaluated or it is not a positive finite quantity."""
    from ..specify.mechanism import is_discrete_support

    if isinstance(support, sp.FiniteSet):
        value = sp.Add(*[f.subs(x, a) for a in support.args])
    elif is_discrete_support(support):
        if support == sp.S.Integers:
            value = _range_sum(f, x, -sp.oo, sp.oo)
        elif support in (sp.S.Naturals0, sp.S.Naturals):
            value = _range_sum(f, x, support.inf, sp.oo)
        elif isinstance(support, sp.Range) and support.step == 1:
            value = _range_sum(f, x, support.inf, support.sup)
        else:
            raise DerivationError(f"sum over {sp.sstr(support)} not taken")
    elif support == sp.S.Reals or isinstance(support, sp.Interval):
        value = sp.integrate(f, (x, support.inf, support.sup), conds="none")
    else:
        raise DerivationError(f"integral over {sp.sstr(support)} not taken")
    value = sp.simplify(value)
    if value.has(sp.Integral, sp.Sum, sp.nan, sp.zoo, sp.oo, -sp.oo) or value.is_positive is False or value.is_finite is False:
        raise DerivationError(f"the mass of {sp.sstr(f)} over {sp.sstr(support)} is not a closed positive number: {sp.sstr(value)}")
    return value


def normalise_factor(f: sp.Expr, x: sp.Symbol, support: sp.Set, seconds: float) -> tuple[sp.Expr, sp.Expr]:
    """(f / Z, Z) with Z = total_mass(f) (within ``seconds``)."""
    Z = run_with_time_limit(total_mass, f, x, support, seconds=seconds)
    return sp.powsimp(f / Z), Z


def _sum(values):
    if any(v is None for v in values):
        return None
    if any(v == sp.oo for v in values):
        return sp.oo
    return sp.Add(*values)


def _value_at(part: DivergenceResult, a0) -> sp.Expr | None:
    """The part's exact value at the order a0 (which may depend on the parameters): its removable
    value there if it has one, else its general form there when that is not singular; None otherwise."""
    for point in part.exceptional_points:
        if point.alpha == a0:
            return point.value
    if part.expr is None:
        return None
    value = part.expr.subs(ALPHA, a0)
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    return value


def _exceptional(parts, notes) -> tuple[ExceptionalPoint, ...]:
    seen, out = [], []
    for part in parts:
        for point in part.exceptional_points:
            if point.alpha in seen:
                continue
            seen.append(point.alpha)
            values = [_value_at(p, point.alpha) for p in parts]
            if any(v is None for v in values):
                notes.append(f"alpha = {sp.sstr(point.alpha)}: not kept as removable (a coordinate has no value there)")
                continue
            cond = sp.And(*[p.condition for q in parts for p in q.exceptional_points if p.alpha == point.alpha])
            out.append(ExceptionalPoint(point.alpha, sp.Add(*values), cond))
    return tuple(out)


def _integer_orders(parts) -> tuple[tuple[int, sp.Expr], ...]:
    """Orders k = 2, 3, ... exact for the sum when every part has an exact value there."""
    ks = sorted({k for p in parts for k, _ in p.integer_orders})
    out = []
    for k in ks:
        values = []
        for p in parts:
            if p.expr is not None:
                try:
                    values.append(p.at(k))
                except (ArithmeticError, ValueError):
                    values = None
                    break
            elif k in dict(p.integer_orders):
                values.append(dict(p.integer_orders)[k])
            else:
                values = None
                break
        if values is not None:
            out.append((k, _sum(values)))
    return tuple(out)


def combine_parts(parts: list[DivergenceResult]) -> dict:
    """The fields of the sum of the parts' divergences: expr (None unless every part has one), conditions
    (all of them), kl, max_divergence, exceptional points, status (the weakest), integer orders, notes."""
    notes: list[str] = []
    status = Status.worst([p.status for p in parts])
    exprs = [p.expr for p in parts]
    expr = None if any(e is None for e in exprs) else sp.Add(*exprs)
    if status is Status.FAILED or (expr is None and status is Status.CLOSED_FORM):
        status = Status.NUMERIC_ONLY if status is not Status.FAILED else status
    return dict(
        expr=expr,
        status=status,
        conditions=sp.And(*[p.conditions for p in parts]),
        kl=_sum([p.kl for p in parts]),
        max_divergence=_sum([p.max_divergence for p in parts]),
        exceptional_points=_exceptional(parts, notes) if expr is not None else (),
        integer_orders=_integer_orders(parts) if expr is None else (),
        notes=notes,
        reason="; ".join(f"{p.label}: {p.reason}" for p in parts if p.reason),
    )
