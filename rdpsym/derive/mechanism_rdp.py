"""A mechanism's RDP curve: the maximum of the divergences over adjacent pairs and both directions.

    eps(alpha) = max over pairs (P, Q) of max(D_alpha(P||Q), D_alpha(Q||P))   (Mironov 2017, Def. 4)

A family of pairs (:class:`~rdpsym.specify.adjacency.AdjacentFamily`) contributes its supremum over the
shift t, taken by :mod:`rdpsym.derive.adjacency` (symbolically when the divergence is shown
non-decreasing in |t|, else ``numeric_only``); a vector family (a tuple of shifts over a
:class:`~rdpsym.specify.adjacency.ShiftBall`, the engine called with the tuple of output variables) by
:mod:`rdpsym.derive.balls` (Mironov 2017, Def. 4: the supremum over the whole ball).

Each pair's two directions come from :func:`rdpsym.derive.pairs.pair_results` (the reverse one skipped
only when a reflection symmetry is established mechanically). A subsampled mechanism's curve is taken
from its base's by :mod:`rdpsym.derive.subsampled`, which is handed :func:`rdp` for the base.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._progress import progress_printer
from ..numeric.maximum import Direction
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import Parameter
from .adjacency import family_supremum
from .supremum import FamilyAnalysis
from .crosscheck import sample_values
from .numeric_values import NumericCurve
from .pairs import pair_results
from .subsampled import subsampled_rdp, worst_mixture_pairs
from .result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step, expired_in
from .extremes import maximum
from .sign import decide, decide_relation
from .worst import NotShown, WorstPairs, both_directions

__all__ = ["rdp", "simplify_with_domains", "family_analysis", "worst_pair_data", "worst_pairs",
           "worst_directions"]


#: seconds for the sign decision of a dominance test (a Max argument kept is never wrong, only longer):
#: two steps of 5 s, a rewriting and a solveset, as the test took before the sign oracle did it
DOMINANCE_SECONDS = 10.0


def _dominates(a: sp.Expr, b: sp.Expr, params: tuple[Parameter, ...]) -> bool:
    """True if a >= b for every parameter value in the declared domains (the sign oracle, :mod:`.sign`).

    False when not shown: first where a < b at a sample point inside the domains (cheap, and then
    certainly not), then when the sign oracle does not show ``a - b >= 0`` within :data:`DOMINANCE_SECONDS`."""
    diff = a - b
    free = diff.free_symbols
    for point in sample_values(free, params, 3):
        try:
            value = diff.evalf(30, subs=point)
        except SYMBOLIC_ERRORS:  # a point without a value decides nothing
            continue
        if value.is_Number and value.is_finite and value < -sp.Float(10, 30) ** -20 * (1 + abs(value)):
            return False
    return decide(diff, "nonnegative", params, seconds=DOMINANCE_SECONDS) is True


def simplify_with_domains(expr: sp.Expr | None, params: tuple[Parameter, ...]) -> sp.Expr | None:
    """Drop Piecewise branches whose conditions the parameters' domains decide (a false one goes; a true one
    is the last: the two Poisson directions' D_oo fold into +oo where log(mu/(mu + d)) < 0 or > 0, which
    holds for every d > 0), then Max/Min arguments they make irrelevant."""
    if expr is None:
        return None
    expr = expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: _decided_branches(e, params))
    return expr.replace(lambda e: isinstance(e, (sp.Max, sp.Min)), lambda e: _undominated(e, params))


def _decided_branches(node: sp.Piecewise, params) -> sp.Expr:
    """The Piecewise without the branches the sign oracle shows never taken, cut at one shown always taken."""
    kept, last = [], False
    for value, condition in node.args:
        truth = decide_relation(condition, params, seconds=DOMINANCE_SECONDS)[0]
        if truth is False:
            continue
        last = truth is True
        kept.append((value, True if last else condition))
        if last:
            break
    if not kept:
        return node  # no branch shown to hold: left as it is
    return kept[0][0] if len(kept) == 1 and last else sp.Piecewise(*kept)


def _undominated(node, params) -> sp.Expr:
    """A Max (Min) without the arguments another one always beats (ties keep the first)."""
    args = list(node.args)
    if isinstance(node, sp.Max):
        def beats(u, v):
            return _dominates(u, v, params)
    else:
        def beats(u, v):
            return _dominates(v, u, params)
    keep = [a for i, a in enumerate(args)
            if not any(beats(b, a) and (not beats(a, b) or j < i) for j, b in enumerate(args) if j != i)]
    keep = keep or args[:1]
    return keep[0] if len(keep) == 1 else node.func(*keep)


def family_analysis(mechanism: Mechanism, family: AdjacentFamily, *, step_seconds: float | None = None,
                    cache: bool = True) -> FamilyAnalysis:
    """The supremum over ``family`` (one of ``mechanism.pairs``), as :func:`rdp` takes it: see
    :func:`rdpsym.derive.adjacency.family_supremum` (kept in an in-process memo)."""
    from .._timeout import check_seconds, default_step_seconds

    seconds = check_seconds(step_seconds) if step_seconds is not None else default_step_seconds()
    x, support = mechanism.variable, mechanism.support

    def derive_pair(P, Q, label, params):
        return pair_results(P, Q, label, x, support, params, step_seconds, cache)

    return family_supremum(family, x, support, mechanism.parameters, derive_pair, seconds, key=(cache,))


def _as_subsampled(mechanism: Mechanism) -> bool:
    """The mechanism is what :func:`rdpsym.subsample` built (a copy with other densities is not)."""
    from ..mechanisms.subsample import is_as_subsampled

    return is_as_subsampled(mechanism)


def _worst_items(item, found: FamilyAnalysis | None) -> tuple:
    """What stands for one declared ``item`` in :class:`~.worst.WorstPairs`: an adjacent pair itself, a
    family's pairs at its supremum when ``found`` shows it, else the family as :class:`~.worst.NotShown`."""
    if found is None:
        return (item,)
    return tuple(found.members) if found.shown else (NotShown(item, found.reason),)


def worst_pair_data(mechanism: Mechanism, *, step_seconds: float | None = None, cache: bool = True) -> WorstPairs:
    """The pairs standing for the mechanism's supremum over neighbouring inputs, as data
    (:class:`~.worst.WorstPairs`): its :class:`AdjacentPair` entries and each family's pairs at the
    shift(s) where :func:`rdp` shows its supremum; a family not shown as :class:`~.worst.NotShown`. A
    subsampled mechanism's mixtures at its base's worst shifts (:func:`~.subsampled.worst_mixture_pairs`,
    ``ArgumentError`` when its supremum over neighbours is not shown)."""
    if mechanism.subsampling is not None and _as_subsampled(mechanism):  # the mixtures at the base's worst shifts
        return WorstPairs(mechanism.name, worst_mixture_pairs(mechanism, step_seconds=step_seconds, cache=cache))
    items: list = []
    for item in mechanism.pairs:
        found = (family_analysis(mechanism, item, step_seconds=step_seconds, cache=cache)
                 if isinstance(item, AdjacentFamily) else None)
        items += _worst_items(item, found)
    return WorstPairs(mechanism.name, tuple(items))


def worst_pairs(mechanism: Mechanism, *, step_seconds: float | None = None, cache: bool = True,
                values=None) -> tuple[AdjacentPair, ...]:
    """Concrete adjacent pairs whose divergences are the mechanism's RDP: its :class:`AdjacentPair` entries,
    and for each family the pairs at the shift(s) where :func:`rdp` shows its supremum (the largest
    ``|t|``; for the built-ins ``t = sensitivity``), so code written for pairs works on families too.

    A family whose shift is declared integer (neighbouring integer queries of a discrete mechanism)
    and whose supremum is not shown stands, at parameter ``values`` (name -> number), for the finite
    set of its pairs at every integer shift in ``over`` (at most :data:`~.worst.MAX_INTEGER_SHIFTS`).

    Raises :class:`~rdpsym._numbers.ArgumentError` for any other family whose supremum is not shown
    symbolically: no finite set of pairs is known to stand for it (use
    :func:`rdpsym.numeric.families.supremum_over_family` for numbers).
    """
    return worst_pair_data(mechanism, step_seconds=step_seconds, cache=cache).at(values)


def worst_directions(mechanism: Mechanism, *, step_seconds: float | None = None, cache: bool = True,
                     values=None) -> tuple[Direction, ...]:
    """Both directions of every pair of :func:`worst_pairs` (the directions whose maximum the mechanism's
    RDP is, Mironov 2017, Def. 4), as :class:`~rdpsym.numeric.maximum.Direction` objects."""
    pairs = worst_pairs(mechanism, step_seconds=step_seconds, cache=cache, values=values)
    return both_directions(pairs, mechanism.variable, mechanism.support)


def rdp(mechanism: Mechanism, *, step_seconds: float | None = None, cache: bool = True,
        progress=None) -> DivergenceResult:
    """The RDP curve eps(alpha) of ``mechanism``, derived by the engine from its densities.

    The maximum over adjacent pairs and both directions (Mironov 2017, Def. 4); a direction is skipped
    only when :func:`~rdpsym.derive.pairs.reflection_symmetry` proves it equal to the other (for a vector
    output, a tuple ``mechanism.variable``, no symmetry is sought and both directions are derived). A family of pairs contributes
    its supremum over the shift (:func:`family_analysis`): at the largest ``|t|`` when shown
    non-decreasing in ``|t|`` (recorded in the provenance), else ``numeric_only`` with the reason
    "supremum over t not shown symbolically".

    ``progress``: ``None`` (default) prints a line per adjacent pair on stderr when stderr is a terminal,
    ``True`` always, ``False`` never; a callable ``progress(done, total, what)`` is called instead
    (:mod:`rdpsym._progress`).
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism: expected an rdpsym Mechanism, got {type(mechanism).__name__}")
    if mechanism.subsampling is not None and _as_subsampled(mechanism):  # by what it is: a mixture
        return as_covered(subsampled_rdp(mechanism, rdp, step_seconds=step_seconds, cache=cache), mechanism)
    x, support, params = mechanism.variable, mechanism.support, mechanism.parameters
    results: list[DivergenceResult] = []
    notes: list[Step] = []
    worst: list = []
    report = progress_printer(progress, f"derive {mechanism.name}")
    for done, pair in enumerate(mechanism.pairs):
        if report is not None:
            report(done, len(mechanism.pairs), f"pair [{pair.label}]")
        if isinstance(pair, AdjacentFamily):
            found = family_analysis(mechanism, pair, step_seconds=step_seconds, cache=cache)
            results.extend(found.results)
            notes.extend(found.steps)
            worst += _worst_items(pair, found)
            continue
        more, steps = pair_results(pair.P, pair.Q, pair.label, x, support, params, step_seconds, cache)
        results.extend(more)
        notes.extend(steps)
        worst += _worst_items(pair, None)
    if report is not None:
        report(len(mechanism.pairs), len(mechanism.pairs), "pairs derived")
    result = replace(_combine(mechanism, results, notes), mechanism=mechanism)
    if result.expr is None and result.status is not Status.FAILED:
        # no closed form: the values are the numeric maximum over the worst pairs, which the result
        # carries as data (it never calls the engine again)
        result = replace(result, curve=NumericCurve(WorstPairs(mechanism.name, tuple(worst)), x, support))
    return as_covered(result, mechanism)


def as_covered(result: DivergenceResult, mechanism: Mechanism) -> DivergenceResult:
    """``result`` as what the mechanism's pairs make it: unchanged when they cover every neighbouring
    input; when they are some of them (``neighbours == "some"``), an exact or numeric divergence is a
    lower bound on the RDP (status ``lower_bound``), and an upper bound on those pairs bounds nothing
    (``failed``)."""
    if mechanism.neighbours == "all" or result.status is Status.FAILED:
        return result
    pairs = "; ".join(p.label for p in mechanism.pairs)
    if result.status is Status.BOUND:
        return replace(result, status=Status.FAILED, expr=None, kl=None, max_divergence=None,
                       reason=f"an upper bound for some neighbouring inputs only ({pairs}) bounds nothing: "
                              f"{result.reason}")
    why = (f"lower bound: the divergence of some of {mechanism.name}'s neighbouring inputs ({pairs}), not "
           "shown to be the worst case; the RDP is at least this")
    return replace(result, status=Status.LOWER_BOUND, reason=f"{why}; {result.reason}" if result.reason else why)


def _combine(mechanism: Mechanism, results: list[DivergenceResult], notes: list[Step]) -> DivergenceResult:
    params = mechanism.parameters
    label = f"RDP of {mechanism.name}"
    symbols = tuple(p.symbol for p in params)
    steps = tuple(notes) + tuple(
        replace(s, name=f"{r.label}: {s.name}") for r in results for s in r.provenance.steps
    )
    first = results[0]
    worst = Status.worst(r.status for r in results)
    reason = "; ".join(f"{r.label}: {r.reason}" for r in results if r.reason)

    def combine(values):
        if any(v is None for v in values):
            return None
        return simplify_with_domains(maximum(values), params)

    expr = combine([r.expr for r in results]) if worst is Status.CLOSED_FORM else None
    exceptional = {}
    for r in results:
        for pt in r.exceptional_points:
            exceptional.setdefault(pt.alpha, [])
    # an integer order is exact for the curve when every direction has it
    common = [k for k, _ in first.integer_orders if all(k in dict(r.integer_orders) for r in results)]
    integer_orders = tuple((k, combine([dict(r.integer_orders)[k] for r in results])) for k in common)
    points = []
    for a0 in exceptional:
        try:
            values = [r.at(a0) for r in results]
        except (ArithmeticError, ValueError) as exc:
            # another direction has no exact value there (its form is singular at a0 and a0 was not
            # recorded for it): the maximum is not known exactly at a0, and evaluating there raises
            steps += (Step("removable order", f"alpha = {sp.sstr(a0)} not kept for the maximum: {exc}"),)
            continue
        points.append(ExceptionalPoint(a0, combine(values)))
    return DivergenceResult(
        expr=expr,
        status=worst,
        reason=reason,
        conditions=sp.And(*[r.conditions for r in results]),
        kl=combine([r.kl for r in results]),
        max_divergence=combine([r.max_divergence for r in results]),
        exceptional_points=tuple(points),
        symbols=symbols,
        provenance=Provenance(steps, first.provenance.inputs + (("mechanism", mechanism.name),),
                              first.provenance.versions, expired=expired_in(results)),
        label=label,
        # a direction's formula may hold on less than the declared domain (:mod:`.closed_ends`): the maximum too
        domains=tuple((p.symbol, sp.Intersection(p.domain, *(dict(r.domains).get(p.symbol, p.domain) for r in results)))
                      for p in params),
        integer_orders=integer_orders if expr is None else (),
    )
