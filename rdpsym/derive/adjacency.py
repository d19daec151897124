r"""The supremum over a family of adjacent pairs (:class:`~rdpsym.specify.adjacency.AdjacentFamily`).

.. math:: \varepsilon(\alpha) = \sup_{t \in T} \max\bigl(D_\alpha(P_t\|Q_t),\ D_\alpha(Q_t\|P_t)\bigr)
   \qquad \text{(Mironov 2017, arXiv:1702.07476 v3, Def. 4, over all neighbouring inputs)}

How it is taken symbolically (:func:`family_supremum`):

1. **Sides.** ``T = [a, b]`` is split at 0: shifts ``t = +u`` and ``t = -u`` with ``u = |t| > 0`` (the
   signs of the ends must follow from the parameters' assumptions and domains, :mod:`.sign`). When the negative side is the mirror
   image of the positive one (``x -> -x`` maps the support onto itself and ``(P_{-u}, Q_{-u})`` onto
   ``(P_u, Q_u)`` or onto ``(Q_u, P_u)``, which have the same divergences because the reflection preserves
   the measure), one side with ``u`` up to ``max(b, -a)`` stands for both.
2. **Divergence in u.** Each side's pair is derived by the engine with ``u`` a positive parameter
   (both directions, as for any pair), valid for every ``u > 0``.
3. **Monotonicity.** :func:`~rdpsym.derive.shape.nondecreasing` shows that the general-order expression,
   the KL divergence, ``D_inf`` and every exceptional value are non-decreasing in ``u`` (for every order, every parameter
   value in the domains; the finiteness conditions must not depend on ``u``). Then the supremum over the
   side is the value at its largest ``|t|``, ``U``: substituted, and recorded in the provenance. For an
   open end the supremum is the limit there, which is the value at ``U`` (a closed form finite for every
   ``u > 0``, hence continuous in ``u``).
4. **t = 0**, when ``T`` contains it: if ``P_0 = Q_0`` its divergence is 0, below every other value
   (Mironov 2017, Prop. 8: ``D_alpha >= 0``); otherwise the pair at ``t = 0`` is derived as a pair too.

When any of this cannot be shown, the family's contribution is ``numeric_only`` with the reason
"supremum over t not shown symbolically": its values come from
:func:`rdpsym.numeric.families.supremum_over_family`, a numeric maximisation.
"""

from __future__ import annotations

import time
from dataclasses import replace

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .pieces import DerivationError
from .. import _cache
from ..specify.adjacency import AdjacentFamily, AdjacentPair
from ..specify.params import Parameter
from .balls import ball_family_supremum
from .cache import cacheable
from .result import DivergenceResult, Status, Step, StepName
from .shape import nondecreasing
from .sign import decide
from .supremum import FamilyAnalysis, PairDeriver, not_shown_analysis
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["family_supremum"]


def _result_monotone(r: DivergenceResult, u: sp.Symbol) -> tuple[str | None, str]:
    """(reason, what failed) for every value of ``r`` being non-decreasing in u."""
    if r.conditions.has(u):
        return None, f"its finiteness conditions depend on {u}"
    parts = [("D_alpha", r.expr), ("KL", r.kl), ("D_inf", r.max_divergence)]
    parts += [(f"the value at alpha = {sp.sstr(p.alpha)}", p.value) for p in r.exceptional_points]
    if any(p.condition.has(u) for p in r.exceptional_points):
        return None, f"an exceptional point's condition depends on {u}"
    whys = []
    for name, e in parts:
        if e is None:
            continue  # not derived: nothing to take the supremum of (the maximum stays underived)
        w = nondecreasing(e, u)
        if w is None:
            return None, f"{name} = {sp.sstr(e)} is not shown non-decreasing in {u}"
        whys.append(f"{name}: {w}")
    return "; ".join(whys), ""


# --------------------------------------------------------------------------------------------------
# the family
# --------------------------------------------------------------------------------------------------
def _symmetric_support(support: sp.Set) -> bool:
    """True if x -> -x maps the support onto itself."""
    if support in (sp.S.Reals, sp.S.Integers):
        return True
    if isinstance(support, sp.Interval):
        return sp.simplify(support.start + support.end) == 0 and support.left_open == support.right_open
    if isinstance(support, sp.FiniteSet):
        return sp.FiniteSet(*[-a for a in support.args]) == support
    return False


def _same(a: sp.Expr, b: sp.Expr, x: sp.Symbol, support: sp.Set) -> bool:
    if isinstance(support, sp.FiniteSet):
        return all(sp.simplify(a.subs(x, p) - b.subs(x, p)) == 0 for p in support.args)
    return a == b or sp.simplify(a - b) == 0


def _mirror(family: AdjacentFamily, u: sp.Symbol, x: sp.Symbol, support: sp.Set) -> str | None:
    """How the negative side (P_{-u}, Q_{-u}) maps onto the positive one, or None."""
    t = family.shift
    Pp, Qp = family.P.subs(t, u), family.Q.subs(t, u)
    for reflect in (True, False):  # shift families are mirror images under x -> -x, usually
        if reflect and not _symmetric_support(support):
            continue
        Pm, Qm = family.P.subs(t, -u), family.Q.subs(t, -u)
        if reflect:
            Pm, Qm = Pm.subs(x, -x), Qm.subs(x, -x)
        how = "x -> -x maps" if reflect else "the densities make"
        at = f"(P, Q) at {t} = -{u}"
        if _same(Pm, Pp, x, support) and _same(Qm, Qp, x, support):
            return f"{how} {at} onto (P, Q) at {t} = {u}"
        if _same(Pm, Qp, x, support) and _same(Qm, Pp, x, support):
            return f"{how} {at} onto (Q, P) at {t} = {u} (both directions are derived)"
    return None


def _fresh(family: AdjacentFamily, taken: set[str]) -> sp.Symbol:
    name = f"{family.shift.name}_abs"
    while name in taken:
        name += "_"
    # a shift declared integer (a discrete mechanism: neighbouring integer queries) stays one, so the
    # engine splits a pmf on Z at the kink k = u (an integer) and the pmf Q_u stays normalised
    return sp.Symbol(name, positive=True, integer=True) if family.shift.is_integer else sp.Symbol(name, positive=True)


def _at(r: DivergenceResult, u: sp.Symbol, U: sp.Expr, params: tuple[Parameter, ...], label: str) -> DivergenceResult:
    def sub(e):
        return None if e is None else e.subs(u, U)

    points = tuple(replace(p, value=sub(p.value), condition=p.condition.subs(u, U)) for p in r.exceptional_points)
    symbols = tuple(sorted(set(r.symbols) - {u} | (U.free_symbols & {p.symbol for p in params}), key=lambda s: s.name))
    return replace(r, expr=sub(r.expr), kl=sub(r.kl), max_divergence=sub(r.max_divergence),
                   conditions=r.conditions.subs(u, U), exceptional_points=points, symbols=symbols,
                   integer_orders=tuple((k, sub(v)) for k, v in r.integer_orders),
                   domains=tuple((p.symbol, p.domain) for p in params if p.symbol in symbols), label=label,
                   pair=None if r.pair is None else (sub(r.pair[0]), sub(r.pair[1])) + tuple(r.pair[2:]),
                   # the steps' formulas at the supremum too, so a report's derivation shows them there
                   provenance=replace(r.provenance, steps=tuple(replace(s, expr=sub(s.expr)) for s in r.provenance.steps)))


def _analyse(family: AdjacentFamily, x: sp.Symbol, support: sp.Set, params: tuple[Parameter, ...],
             derive_pair: PairDeriver, seconds: float) -> FamilyAnalysis:
    t, (a, b) = family.shift, family.ends
    T = sp.sstr(family.over)
    steps: list[Step] = []

    def not_shown(why: str, derived=()) -> FamilyAnalysis:
        return not_shown_analysis(family, why, derived, steps,
                                  f"sup over {family.shift} in {sp.sstr(family.over)} [{family.label}]")

    # (sign, U, ends): shifts t = sign * u for u in (0, U]; the ends of T (closure) where |t| = U
    if decide(a, "nonnegative", params):
        sides, zero = [(1, b, [b])], decide(a, "zero", params) is True and not family.over.left_open
    elif decide(b, "nonpositive", params):
        sides, zero = [(-1, -a, [a])], decide(b, "zero", params) is True and not family.over.right_open
    elif decide(a, "negative", params) and decide(b, "positive", params):
        sides, zero = [(1, b, [b]), (-1, -a, [a])], True
    else:
        return not_shown(f"the signs of the ends of {T} do not follow from the parameters' assumptions and domains")
    u = _fresh(family, {p.name for p in params} | {x.name})
    u_param = Parameter(u.name, u, sp.Range(1, sp.oo) if u.is_integer else sp.Interval.open(0, sp.oo),
                        (1.0, 3.0) if u.is_integer else (0.5, 2.0), sp.latex(sp.Abs(t)),
                        f"|{t}|, the size of the shift of family [{family.label}]")
    if len(sides) == 2:
        started = time.perf_counter()
        try:
            how = run_with_time_limit(_mirror, family, u, x, support, seconds=seconds)
        except StepTimeout:
            how = None
        if how is not None:
            U = sp.Max(b, -a)
            sides = [(1, U, [b] if U == b else [a] if U == -a else [a, b])]
            steps.append(Step(StepName.SUPREMUM_OVER_T, f"[{family.label}] {how}: the shifts t and -t have the same "
                                                  f"divergences; |t| ranges up to {sp.sstr(sides[0][1])}",
                              time.perf_counter() - started))
    results: list[DivergenceResult] = []
    members: list[AdjacentPair] = []
    for sign, U, ends in sides:
        side = f"{t} = {'' if sign > 0 else '-'}{u}"
        P, Q = family.P.subs(t, sign * u), family.Q.subs(t, sign * u)
        derived, notes = derive_pair(P, Q, f"{family.label}; {side}", params + (u_param,))
        steps.extend(notes)
        bad = [r for r in derived if r.status not in (Status.CLOSED_FORM, Status.BOUND)]
        started = time.perf_counter()
        order = _by_likelihood_ratio(P, Q, u, x, support, params, seconds) if bad else None
        if bad and order is None:
            return not_shown(f"the divergence at {side} was not derived in closed form ({bad[0].status}: "
                             f"{bad[0].reason}), and no monotone likelihood ratio in {x} was shown", derived)
        where = f"|{t}| = {sp.sstr(U)} ({t} = {', '.join(map(sp.sstr, ends))})"
        for r in derived:
            if order is not None:
                why = order  # every order at once, for the values the engine has and the numeric ones
            else:
                try:
                    why, failed = run_with_time_limit(_result_monotone, r, u, seconds=seconds)
                except StepTimeout:
                    why, failed = None, f"showing it non-decreasing in {u} timed out after {seconds:g} s"
                if why is None:
                    order = _by_likelihood_ratio(P, Q, u, x, support, params, seconds)
                    why = order
            if why is None:
                return not_shown(f"{r.label}: {failed}", derived)
            steps.append(Step(StepName.SUPREMUM_OVER_T, f"[{family.label}] {r.label}: non-decreasing in {u} = |{t}| > 0 "
                                                  f"({why}); the supremum over {T} is at {where}, substituted",
                              time.perf_counter() - started))
            results.append(_at(r, u, U, params, f"{r.label} at {where}"))
        # the pairs at those ends (of the closure: at an open end the supremum is the limit, the
        # divergence of this pair); a mirrored end has the divergences of t = U
        members += [AdjacentPair(family.P.subs(t, e), family.Q.subs(t, e), f"{family.label}; {t} = {sp.sstr(e)}")
                    for e in ends]
    if zero:
        P0, Q0 = family.P.subs(t, 0), family.Q.subs(t, 0)
        try:
            equal = run_with_time_limit(_same, P0, Q0, x, support, seconds=seconds)
        except StepTimeout:
            equal = False
        if equal:
            steps.append(Step(StepName.SUPREMUM_OVER_T, f"[{family.label}] {t} = 0: P = Q, divergence 0, below every other "
                                                  "value (Mironov 2017, Prop. 8: D_alpha >= 0)"))
        else:
            derived, notes = derive_pair(P0, Q0, f"{family.label}; {t} = 0", params)
            steps.extend(notes)
            results.extend(derived)
            members.append(family.member(0))
    return FamilyAnalysis(family, True, tuple(results), tuple(members), tuple(steps))


def _by_likelihood_ratio(P, Q, u, x, support, params, seconds) -> str | None:
    """The likelihood-ratio argument of :mod:`.shift_order` for one side (P = the pair at t = 0), under a
    time limit; None when not shown (an error or a timeout counts against it)."""
    from .shift_order import cauchy_scale_order, likelihood_ratio_order

    for argument, args in ((likelihood_ratio_order, (P, Q, u, x, support, tuple(params))),
                           (cauchy_scale_order, (P, Q, u, x, support))):
        try:
            found = run_with_time_limit(argument, *args, seconds=seconds)
        except (StepTimeout, DerivationError, *SYMBOLIC_ERRORS):  # undecided: the supremum is not shown
            found = None
        if found is not None:
            return found
    return None


def _keep(analysis: FamilyAnalysis) -> bool:
    # a reason that quotes a step that timed out or a derivation its budget cut short (derive/stages.py)
    return all(cacheable(r) for r in analysis.results) and not any(
        words in analysis.reason for words in ("timed out", "cut short"))


_MEMO = _cache.Memo(accept=_keep, maxsize=256)


def family_supremum(family: AdjacentFamily, x: sp.Symbol, support: sp.Set, params: tuple[Parameter, ...],
                    derive_pair: PairDeriver, seconds: float, key: tuple = ()) -> FamilyAnalysis:
    """The supremum of a family's divergence over its shifts (see the module docstring), kept in an
    in-process memo under ``(family, x, support, params, seconds) + key`` (nothing that timed out).

    ``derive_pair(P, Q, label, params) -> (results, steps)`` derives one pair, both directions, as
    :func:`rdpsym.derive.mechanism_rdp.rdp` does for a listed pair. A vector family (shifts over a
    :class:`~rdpsym.specify.adjacency.ShiftBall`) is taken by
    :func:`rdpsym.derive.balls.ball_family_supremum` instead.
    """
    if not isinstance(family, AdjacentFamily):
        raise TypeError(f"family: expected an AdjacentFamily, got {type(family).__name__}")
    analyse = ball_family_supremum if family.is_vector else _analyse  # a ball of shift vectors: its own arguments
    return _MEMO.get_or_compute((family, x, support, tuple(params), seconds) + tuple(key),
                                lambda: analyse(family, x, support, tuple(params), derive_pair, seconds))
