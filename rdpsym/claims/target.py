"""What a claim is checked against: a derived result, its parameters, and (when known) the densities.

The *truth* at a point is the engine's closed form (:class:`~rdpsym.DivergenceResult`), evaluated fast
(to steer the counterexample search) or exactly (for everything that is reported) by
:mod:`rdpsym.claims.point`.

When the densities are known (a :class:`~rdpsym.Mechanism` target or a registry entry) a reported point
is also checked against the independent mpmath path, the numeric maximum
(:func:`rdpsym.numeric.maximum.numeric_maximum`) over the directions; for a mechanism that is the RDP
curve's definition, the maximum over adjacent pairs and both directions (Mironov 2017,
arXiv:1702.07476 v3, Def. 4).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import mpmath
import sympy as sp

from .. import printing
from ..derive.result import DivergenceResult, Status
from ..numeric.inputs import one_distribution
from ..specify.mechanism import Mechanism
from ..specify.params import Parameter
from .fasteval import compile_mp, real_value
from .guard import DISTRIBUTION_SECONDS, HangGuardFired, HangGuards
from .orders import conditions_at, curve_at, point_alpha
from .search import affine_in

__all__ = ["Target", "make_target", "parameters_from_symbols", "truth_at", "usable"]

#: a density counts as negative below this (rounding of an exact zero at 30 digits stays above it)
_NEGATIVE = mpmath.mpf(10) ** -25
#: |log total mass| above this: not normalised (the numeric path's mass is good to far better)
_MASS_TOLERANCE = mpmath.mpf(10) ** -8


def _sample_points(support: sp.Set, discrete: bool) -> list[sp.Expr]:
    """Points of the support at which a density is checked for being non-negative and defined."""
    if isinstance(support, sp.FiniteSet):
        return list(support)[:200]
    if discrete:
        lo = support.inf if support.inf.is_finite else sp.Integer(-20)
        pts = [lo + k for k in range(41)]
        return [p for p in pts if support.contains(p) is sp.true]
    lo, hi = support.inf, support.sup
    if lo.is_infinite and hi.is_infinite:
        return [sp.Rational(k, 2) for k in range(-20, 21)]
    if lo.is_infinite:
        return [hi - sp.Rational(k, 2) for k in range(1, 41)]
    if hi.is_infinite:
        return [lo + sp.Rational(k, 2) for k in range(1, 41)]
    return [lo + (hi - lo) * sp.Rational(k, 40) for k in range(1, 40)]


def _mp(point):
    return mpmath.mpf(int(point.p)) / int(point.q) if point.is_Rational else mpmath.mpf(point)


def _support_points(support: sp.Set, variables: tuple) -> list[tuple]:
    """Points of the support (one value per variable) at which a density is checked: for a vector
    variable on a product of supports, the product of seven sample points of each factor."""
    from ..specify.mechanism import is_discrete_support

    if len(variables) == 1:
        return [(p,) for p in _sample_points(support, is_discrete_support(support))]
    if not isinstance(support, sp.ProductSet) or len(support.sets) != len(variables):
        return []  # a support that is no product: only the mass check below
    axes = []
    for factor in support.sets:
        pts = _sample_points(factor, is_discrete_support(factor))
        axes.append([pts[int(i * (len(pts) - 1) / 6)] for i in range(7)] if len(pts) > 7 else pts)
    return list(itertools.product(*axes))


_MASS_MEMO: dict = {}


def symbolic_mass(dens: sp.Expr, x, support: sp.Set) -> sp.Expr:
    """The total mass of ``dens`` over ``support`` in closed form, as a function of the parameters: a sum
    over an integer range (sympy's ``summation``: Poisson's sum lam**k exp(-lam)/k! is 1 for every lam),
    an integral over an interval, or ``nan`` where sympy leaves it unevaluated, states a convergence
    condition, or answers with an infinity (it sums a geometric pmf over a ratio g > 0 as 1 - g**oo), or the
    variable is a vector. Remembered per density; the caller's hang guard bounds the work, and a step cut
    short is never stored."""
    key = (dens, x, support)
    if key not in _MASS_MEMO:
        total = _total(dens, x, support) if isinstance(x, sp.Symbol) else None
        if total is None or total.has(sp.Sum, sp.Integral, sp.Piecewise, sp.oo, -sp.oo, sp.zoo, sp.nan):
            # convergence conditions or an unevaluated sum: the numeric check decides
            _MASS_MEMO[key] = sp.nan
        else:
            _MASS_MEMO[key] = sp.simplify(total)
    return _MASS_MEMO[key]


def _total(dens, x, support):
    """The sum over an integer range or the integral over an interval of ``dens``; None for another support."""
    if support == sp.S.Integers:
        support = sp.Range(-sp.oo, sp.oo)
    if isinstance(support, sp.Range) and support.step == 1:
        return _lattice_sum(dens, x, support.inf, support.sup)
    if isinstance(support, sp.Interval):
        return sp.integrate(dens, (x, support.inf, support.sup))
    return None


def _lattice_sum(dens, x, lo, hi):
    """``sum(dens, (x, lo, hi))``, cut where an ``Abs`` of an expression linear in ``x`` changes sign and at 0
    on a two-sided range. Each piece has its ``Abs`` resolved by its sign there and runs from 0 upwards, expanded:
    sympy sums exp(-eps*k) for k = 0..oo, but neither the same series from -oo to 0 nor exp(-eps*(k - 1))
    from 1 (the discrete Laplace pmf exp(-eps*|k - 1|)/Z sums to 1 that way, for every eps)."""
    kinks = set()
    for a in dens.atoms(sp.Abs):
        if not a.has(x):
            continue
        line = affine_in(a.args[0], x)
        if line is None or line[0] == 0 or not all(c.is_number and c.is_real for c in line):
            return sp.summation(dens, (x, lo, hi))
        slope, offset = line
        kinks.add(sp.floor(-offset / slope))
    if lo == -sp.oo:
        kinks.add(sp.Integer(-1))
    if not kinks:
        return sp.summation(dens, (x, lo, hi))
    cuts = sorted(c for c in kinks if (lo == -sp.oo or c >= lo) and (hi == sp.oo or c < hi))
    bounds = [lo] + [v for c in cuts for v in (c, c + 1)] + [hi]
    total = sp.Integer(0)
    for a, b in zip(bounds[::2], bounds[1::2]):
        inside = [v for v in (a, b, a + 1, b - 1) if v.is_finite]
        signs = {}
        for ab in (a for a in dens.atoms(sp.Abs) if a.has(x)):
            values = [ab.args[0].subs(x, v) for v in inside]
            nonzero = [v for v in values if v != 0]
            if not nonzero:
                return sp.summation(dens, (x, lo, hi))
            signs[ab] = ab.args[0] if nonzero[0] > 0 else -ab.args[0]
        piece = dens.xreplace(signs)
        piece, end = (piece.subs(x, x + a), b - a) if a.is_finite else (piece.subs(x, b - x), sp.oo)
        total += _sum_from_zero(piece, x, end)
    return total


def _sum_from_zero(expr, x, end):
    """``sum(expr, (x, 0, end))`` term by term: a term c*exp(a*x + d) with a < 0 up to oo is the geometric
    series c*exp(d)/(1 - exp(a)), which sympy leaves unevaluated for a = -1/b (it cannot tell that
    exp(-1/b) < 1); any other term is sympy's summation."""
    total = sp.Integer(0)
    # the factors free of x stay outside (expanded with the rest, a normaliser puts x into denominators)
    outside, inside = expr.as_independent(x, as_Add=False)
    for term in sp.Add.make_args(sp.expand(inside)):
        coef, dep = term.as_independent(x, as_Add=False)
        dep = sp.powsimp(dep)
        line = affine_in(dep.args[0], x) if end == sp.oo and isinstance(dep, sp.exp) else None
        if line is not None and line[0].is_negative:
            slope, offset = line
            total += coef * sp.exp(offset) / (1 - sp.exp(slope))
            continue
        total += sp.summation(term, (x, 0, end))
    return outside * total


def _is_distribution(dens, x, support, values, params, mass: bool = True) -> bool | None:
    from ..numeric.maximum import Direction, numeric_maximum

    by_name = {p.name: p.symbol for p in params}
    subs = {by_name[k]: v for k, v in values.items() if k in by_name}
    full_dens, full_support = dens, support
    dens = dens.subs(subs)
    if dens == 0:
        return False  # no mass at all (a geometric pmf with ratio 1)
    support = support.subs(subs)  # U[0, theta]: sample inside [0, theta] at this theta
    variables = tuple(x) if isinstance(x, (tuple, list, sp.Tuple)) else (x,)
    # the sign test only: a normalising constant written as a Sum of positive terms (the discrete Gaussian's)
    # is positive, so 1 in its place keeps the sign (the mass check below sums the density as it is)
    positive_sums = {t: sp.Integer(1) for t in dens.atoms(sp.Sum)
                     if not t.free_symbols and t.function.is_positive}
    fn = compile_mp(dens.xreplace(positive_sums), variables)
    with mpmath.workdps(30):
        for point in _support_points(support, variables):
            try:
                v = real_value(fn({xi: _mp(pi) for xi, pi in zip(variables, point)}))
            except (ArithmeticError, ValueError, TypeError, ZeroDivisionError, OverflowError):
                v = None
            if v is None:
                return None  # undefined at a sample point: cannot tell (0/0 at a corner)
            if v < -_NEGATIVE:
                return False  # certainly negative: not a distribution
    if not mass or len(variables) > 1:
        # the signs only (asked for), or a vector density, whose mass is a quadrature in several dimensions,
        # seconds at each point the search visits (its sign is checked at the product of sample points above)
        return True
    try:
        # D_2(P||P/2) = log(2 * P's total mass): log 2 for a distribution. (Against P itself the numerics
        # would see P = Q and answer 0 without summing anything.)
        nv = numeric_maximum((Direction(dens, dens / 2, x, support),), 2, dict(values), 12)
    except (ArithmeticError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        nv = None
    if nv is None or not nv.converged:
        # too many terms to sum (Pois(10^10)): the mass in closed form, 1 for every value of the parameters
        return True if symbolic_mass(full_dens, x, full_support) == 1 else None
    # a mass that is not 1 only makes the point undecided: excluding a point is failing open, so only a
    # density that is certainly negative (or identically 0) excludes it
    return True if abs(nv.value - mpmath.log(2)) <= _MASS_TOLERANCE else None


def parameters_from_symbols(symbols: Sequence[sp.Symbol]) -> tuple[Parameter, ...]:
    """Parameters for a bare result: :meth:`Parameter.from_symbol` of each symbol, a symbol without
    assumptions taken as real (``strict=False``)."""
    return tuple(Parameter.from_symbol(s, strict=False) for s in symbols)


@dataclass
class Target:
    """A derived result with its parameters and, optionally, the directions (P, Q, x, support)."""

    result: DivergenceResult
    parameters: tuple[Parameter, ...]
    directions: tuple[tuple[sp.Expr, sp.Expr, sp.Symbol, sp.Set], ...] = ()
    label: str = ""
    #: ``(density, x, support)`` of every distribution involved, for :meth:`distributions_ok`
    distributions: tuple[tuple[sp.Expr, sp.Symbol, sp.Set], ...] = ()
    #: a mechanism with a family of integer shifts: its directions depend on the values (:meth:`directions_at`)
    mechanism: Mechanism | None = None
    _valid: dict = field(default_factory=dict)

    @property
    def exceptional(self) -> set:
        """Orders where the general expression is singular (evaluated exactly, never fast)."""
        return {p.alpha for p in self.result.exceptional_points}

    @property
    def symbols(self) -> tuple[sp.Symbol, ...]:
        return tuple(p.symbol for p in self.parameters)

    def truth_expr(self, order) -> sp.Expr | None:
        """The divergence the claim is compared with: the curve (``order`` None) or its value at the one
        order (:func:`truth_at`); None where the result has none."""
        return truth_at(self.result, order)

    def full_truth(self, order) -> sp.Expr | None:
        """The truth for ``order`` with +oo outside its finiteness conditions
        (:func:`~rdpsym.claims.orders.conditions_at`)."""
        expr = self.truth_expr(order)
        conditions = conditions_at(self.result.conditions, order)
        if expr is not None and conditions is not sp.true:
            expr = sp.Piecewise((expr, conditions), (sp.oo, True))
        return expr

    def independent(self, order, alpha, values: Mapping[str, sp.Expr], dps: int = 30):
        """The numeric maximum over the directions at the point (:func:`rdpsym.numeric.maximum.numeric_maximum`;
        by the reference method for a numeric curve, :mod:`rdpsym.numeric.reference`), or None without
        densities. A direction that did not converge fails the maximum (unless a converged +oo wins): it
        might hold the maximum.

        Returns ``(value, error, converged, detail)``.
        """
        if not self.directions:
            return None
        from ..numeric.maximum import Direction, numeric_maximum

        a = point_alpha(order, alpha)
        # a numeric curve's value at an order without an exact piece IS the numeric path's: the
        # independent check is then the reference method, which shares no quadrature code with it
        numeric_curve = self.result.expr is None and a != sp.oo and self.result.exact_piece(sp.S(a)) is None
        sources = [Direction(P, Q, x, support) for P, Q, x, support in self.directions_at(values)]
        try:
            found = numeric_maximum(sources, a, dict(values), dps, method="reference" if numeric_curve else "numeric")
        except Exception as exc:  # noqa: BLE001 - reported as evidence, never raised
            return (None, None, False, f"the numeric maximum failed: {exc}")
        detail = found.top[1].detail if found.converged else f"not converged: {found.describe_failures()}"
        return (found.value, found.error, found.converged, detail)

    def one_distribution_at(self, values: Mapping[str, sp.Expr]) -> bool:
        """Every direction's P and Q are one distribution at ``values``: every divergence is 0 there
        (Prop. 8), so the point ties no formula to the densities."""
        return all(one_distribution(P, Q, x, support, values) for P, Q, x, support in self.directions_at(values))

    def directions_at(self, values: Mapping[str, sp.Expr]) -> tuple:
        """The directions at parameter ``values``: for a mechanism with a family of integer shifts, both
        directions at every integer shift |t| <= Δ there (the supremum over a finite set is its maximum);
        else :attr:`directions`."""
        if self.mechanism is None:
            return self.directions
        return _mechanism_directions(self.mechanism, True, values)

    def distributions_ok(self, values: Mapping[str, sp.Expr], guards: HangGuards | None = None,
                         mass: bool = True) -> bool | None:
        """Whether P and Q of every direction are probability distributions at these parameter values.

        True: non-negative at sample points of the support and of total mass 1 (to 1e-8, by the
        numeric path; a density of a vector variable: its signs only, at a product of sample points); False: certainly not (negative at a sample point, or identically 0); None:
        undecided (undefined somewhere, another mass, the mass did not converge, the check's hang guard
        fired: recorded in ``guards``). Excluding a point fails open, so only a certain False excludes it.
        Without densities there is nothing to check (True). Parameters inferred from bare symbols have
        domains wider than the distributions' (a geometric ratio g in (0, oo)): a counterexample must
        never come from such a point.

        ``mass=False``: the signs only, for a caller that acts on False alone (excluding a point): a mass
        check never answers False, and it sums the density at each point the search visits.
        """
        if not self.distributions:
            return True
        key = (tuple(sorted(values.items())), mass)
        if key not in self._valid:
            try:
                self._valid[key] = (guards or HangGuards()).run(
                    "the check that P and Q are distributions at a point", DISTRIBUTION_SECONDS,
                    self._distributions_ok, dict(values), mass)
            except HangGuardFired:
                return None  # not remembered: a step that did not finish is never stored
        return self._valid[key]

    def _distributions_ok(self, values, mass: bool = True) -> bool | None:
        verdict: bool | None = True
        for dens, x, support in self.distributions:
            ok = _is_distribution(dens, x, support, values, self.parameters, mass)
            if ok is False:
                return False
            if ok is None:
                verdict = None
        return verdict


_RDP_MEMO: dict = {}


def _distinct_distributions(directions) -> tuple:
    out = []
    for P, Q, x, support in directions:
        for dens in (P, Q):
            if (dens, x, support) not in out:
                out.append((dens, x, support))
    return tuple(out)


def _integer_shifts(mech: Mechanism) -> bool:
    """Whether ``mech`` has a family whose shift is declared integer (a discrete mechanism's neighbouring
    integer queries): its directions then depend on the parameter values (the integers |t| <= Δ)."""
    from ..specify.adjacency import AdjacentFamily

    return any(isinstance(p, AdjacentFamily) and not p.is_vector and p.shift.is_integer for p in mech.pairs)


def _mechanism_directions(mech: Mechanism, cache: bool, values: Mapping | None = None) -> tuple:
    """Both directions ``(P, Q, x, support)`` of every pair of ``mech``; a family's pairs at the supremum
    :func:`rdpsym.rdp` shows, or for a family of integer shifts at parameter ``values`` its pairs at
    every integer shift there (:func:`~rdpsym.derive.mechanism_rdp.worst_pairs`). Without ``values``,
    such a family whose supremum is not shown stands for its pairs at the mechanism's defaults (its
    densities, for :meth:`Target.distributions_ok`; :meth:`Target.directions_at` gives the pairs at a
    point)."""
    from .._numbers import ArgumentError
    from ..derive.mechanism_rdp import worst_directions

    try:
        found = worst_directions(mech, cache=cache, values=values)
    except ArgumentError:
        if values is not None:
            raise
        if not _integer_shifts(mech):
            # a family whose supremum over neighbours is not shown: no finite set of pairs stands for the
            # mechanism, so there are no densities to compare with (a claim about it is inconclusive, with
            # the curve's reason, instead of an error)
            return ()
        found = worst_directions(mech, cache=cache, values=dict(mech.defaults))
    return tuple((d.P, d.Q, d.x, d.support) for d in found)


def make_target(target, parameters: Sequence[Parameter] | None = None, *, cache: bool = True) -> Target:
    """A :class:`Target` from a Mechanism (derived with :func:`rdpsym.rdp`) or a DivergenceResult."""
    if isinstance(target, Target):
        return target
    if isinstance(target, Mechanism):
        from ..derive.mechanism_rdp import rdp

        # rdp() re-simplifies even on a disk-cache hit (~1-3 s); keep this process's results.
        result = _RDP_MEMO.get(target) if cache else None
        if result is None:
            result = rdp(target, cache=cache)
            if cache:
                _RDP_MEMO[target] = result
        directions = _mechanism_directions(target, cache)
        return Target(result, tuple(target.parameters), directions, label=target.name,
                      distributions=_distinct_distributions(directions),
                      mechanism=target if _integer_shifts(target) else None)
    if isinstance(target, DivergenceResult) and target.mechanism is not None and parameters is None:
        # a mechanism's curve: its own parameters and every direction of its pairs, never found by name
        mech = target.mechanism
        directions = _mechanism_directions(mech, cache)
        return Target(target, tuple(mech.parameters), directions, label=target.label,
                      distributions=_distinct_distributions(directions),
                      mechanism=mech if _integer_shifts(mech) else None)
    if isinstance(target, DivergenceResult):
        if parameters is None:
            params = parameters_from_symbols(target.symbols)
        else:
            params = tuple(parameters)
            missing = set(target.symbols) - {p.symbol for p in params}
            if missing:
                raise ValueError(f"parameters: no Parameter for the result's symbols {sorted(map(str, missing))}")
        # a result is one direction, D(P||Q): the independent check evaluates exactly that one
        directions = (tuple(target.pair),) if target.pair is not None else ()
        return Target(target, params, directions, label=target.label,
                      distributions=_distinct_distributions(directions))
    raise TypeError(f"target: expected a Mechanism or a DivergenceResult, got {type(target).__name__}")


def within_formula_domains(tgt: Target) -> tuple[Target, tuple[str, ...]]:
    """``tgt`` with each parameter's domain narrowed to where the derived formula holds (the result's
    ``domains``, narrower where a closed end was found not to fit the densities,
    :mod:`rdpsym.derive.closed_ends`), and a note for each narrowed one; ``(tgt, ())`` when none is."""
    held = dict(tgt.result.domains)
    params, notes = [], []
    for p in tgt.parameters:
        dom = held.get(p.symbol, p.domain)
        if dom != p.domain and isinstance(dom, sp.Interval) and sp.Intersection(dom, p.domain) == dom:
            params.append(dataclasses.replace(p, domain=dom))
            notes.append(f"decided for {p.name} in {printing.interval(dom)}, where the derived formula holds (declared: "
                         f"{printing.interval(p.domain)}; {_why_excluded(tgt.result.reason, p.name)})")
        else:
            params.append(p)
    if not notes:
        return tgt, ()
    return dataclasses.replace(tgt, parameters=tuple(params), _valid={}), tuple(notes)


def _why_excluded(reason: str, name: str) -> str:
    key = f"the formula holds for {name} in "
    found = [part.split(key, 1)[1].split(": ", 1)[-1] for part in reason.split("; ") if key in part]
    return found[0] if found else "see the derivation's reason"


def truth_at(result: DivergenceResult, order) -> sp.Expr | None:
    """The divergence a claim about ``order`` is compared with, or None where the result has none.

    ``order`` None: the curve ``result.expr``. 1: the KL, ``result.kl``; oo: ``result.max_divergence``.
    Another order a: the curve at a, a formula in the parameters: the removable order's limit where a is
    one (an :class:`~rdpsym.derive.result.ExceptionalPoint` at a fixed order), else ``expr`` at alpha = a;
    like the curve's formula it holds where the finiteness conditions at a hold
    (:func:`~rdpsym.claims.orders.conditions_at`; :meth:`Target.full_truth` adds +oo where they fail). For
    a result without a general form: its exact piece at a (:meth:`DivergenceResult.exact_piece`: an integer
    order derived by the multinomial expansion), else None (the numeric curve's value there is then the truth).
    """
    if order is None:
        return result.expr
    if order == 1:
        return result.kl
    if order == sp.oo:
        return result.max_divergence
    a = sp.S(order)
    if result.expr is None:
        return result.exact_piece(a) if result.status is not Status.FAILED else None
    return curve_at(result.expr, a, removable_orders(result), result.conditions)


def removable_orders(result: DivergenceResult) -> tuple:
    """``(alpha, value)`` of the result's removable orders that hold for every parameter value (a certificate
    keeps these as ``exceptional``)."""
    return tuple((p.alpha, p.value) for p in result.exceptional_points if p.condition is sp.true)


def usable(result: DivergenceResult, order) -> tuple[bool, str]:
    """Whether the result has the closed form needed for ``order``, and why not."""
    if result.status is Status.FAILED or (result.status in (Status.NUMERIC_ONLY, Status.LOWER_BOUND)
                                          and order is None and result.expr is None):
        return False, f"the target has no closed form (status {result.status}: {result.reason})"
    if truth_at(result, order) is None:
        what = {None: "curve", 1: "KL (alpha = 1)"}.get(order, "max divergence (alpha = oo)" if order == sp.oo
                                                        else f"divergence at alpha = {sp.sstr(order)}")
        return False, f"the {what} was not derived ({result.reason or 'no formula at that order'})"
    return True, ""
