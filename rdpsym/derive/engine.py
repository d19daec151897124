"""The derivation engine: from two symbolic densities to the Rényi divergence in closed form.

    D_alpha(P||Q) = 1/(alpha-1) log ∫ P^alpha Q^(1-alpha)          (Mironov 2017, Def. 3)

Pipeline (each step timed and recorded in the provenance):

1. split the support at the kinks of P and Q (:mod:`.pieces`);
2. for each alpha regime, alpha = 1 + t (t > 0) and alpha = 1/(1 + v) (v > 0, i.e. 0 < alpha < 1),
   write the log-integrand alpha log P + (1-alpha) log Q on every piece as c0 + sum_j c_j T_j(x) and
   integrate or sum exp(sum_j c_j T_j) through the exponential-family template (:mod:`.template`),
   which also yields the finiteness conditions (the natural parameter space);
3. simplify log(∑ pieces)/(alpha - 1), keeping the most compact form that is checked equivalent,
   or the definition's shape (1/(alpha-1)) log Z with Z gathered by exponentials when that is at most
   a quarter longer;
4. derive alpha = 1 directly as E_P[log P/Q] and alpha = oo directly as ess sup log P/Q, and check both
   against the limits of the general expression (the KL against the limit from below when
   D_alpha = +oo for all alpha > 1). When E_P[log P/Q] is not integrated (a binomial sum over [0, n]),
   the KL is taken as lim_{alpha -> 1-} D_alpha = d/dalpha log Z at 1 and checked at 100 digits;
5. find the singular orders of the expression, derive the divergence there directly, and keep those
   whose value equals the limit as removable (exceptional) points.

Each step is a stage of :mod:`.stages` (in that order: :data:`~rdpsym.derive.stages.STAGES`), with its
mathematics in its own module: :mod:`.inputs`, :mod:`.checks`, :mod:`.pieces`, :mod:`.general_order` (with
:mod:`.template`, :mod:`.regimes` and :mod:`.forms`), :mod:`.special_orders`, :mod:`.removable` and
:mod:`.limits`. This module is the driver: :func:`renyi_divergence` checks the inputs, consults the cache
and runs the stages.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Sequence

import sympy as sp

from .. import printing
from .._cache import unexcused_timeouts
from ..specify.params import Parameter
from .cache import cached_derivation
from .closed_ends import closed_end_domains
from .distribution_domain import distribution_domains
from .finite import merge_equal_ratios
from . import integer_order  # noqa: F401 - registers the integer orders a result derives on request
from .inputs import check_inputs
from .multivariate import derive_multivariate, read_variables
from .pieces import DerivationError
from .cases import MAX_DEPTH, case_split, derive_by_cases, note_unsplit, split_with_domains
from .result import OPTIONAL_STAGES, DivergenceResult, Provenance, Status, Step
from .._version import library_versions
from .stages import STAGES, Derivation, run_stages, split
from .._timeout import check_seconds, deadline_passed, default_step_seconds

__all__ = ["renyi_divergence", "derive_uncached", "DerivationError"]


def renyi_divergence(
    P: sp.Expr,
    Q: sp.Expr,
    x: sp.Symbol,
    support: sp.Set,
    *,
    params: Sequence[Parameter] | None = None,
    step_seconds: float | None = None,
    check_density: bool = True,
    cache: bool = True,
    label: str = "D_alpha(P||Q)",
) -> DivergenceResult:
    """Derive D_alpha(P||Q) = 1/(alpha-1) log ∫ P^alpha Q^(1-alpha) in closed form.

    Parameters
    ----------
    P, Q: densities (continuous ``support``) or pmfs (discrete ``support``) as sympy expressions in
        ``x``; they may contain Abs, Max, Min, Piecewise, Heaviside, sign, gamma and beta functions.
        Their parameters must carry assumptions (real, positive, integer).
    x: the output variable, a real symbol; or a tuple ``(x1, ..., xd)`` of them for a vector output
        (:mod:`.multivariate`; a tuple of one is the scalar case).
    support: a sympy set: ``S.Reals``, an ``Interval``, ``S.Integers``, ``S.Naturals0``, a ``Range``
        or a ``FiniteSet``; for a tuple ``x``, a ``ProductSet`` of such sets, one per variable
        (``S.Reals**2``).
    params: optional :class:`~rdpsym.Parameter` objects; their typical ranges give the points of the
        numeric cross-checks, and their domains decide the order of kinks that the assumptions leave
        open (d in (0, 1) is below 1; the domain ``Interval.open(m1, oo)`` of m2 declares m1 < m2).
        Where neither decides, the result is Piecewise over the cases (or one form symmetric in them),
        with the case split in the provenance.
    step_seconds: budget per symbolic step, in seconds of work (default ``RDPSYM_STEP_SECONDS`` or 20 s): it
        counts sympy nodes built (:data:`rdpsym._timeout.NODES_PER_SECOND` per second), so the same
        derivation gives up at the same point on any machine; a wall-clock hang guard sits at 10x.
    check_density: check that P and Q are non-negative and integrate (sum) to 1.
    cache: reuse a cached derivation of the same inputs (see :mod:`rdpsym.derive.cache`).

    Returns
    -------
    DivergenceResult with ``expr`` (in :data:`rdpsym.alpha`), ``conditions``, ``kl``,
    ``max_divergence``, ``exceptional_points``, ``status`` and ``provenance``.

    References: Mironov 2017, Def. 3 (Rényi divergence), Props. 5-7 (Table II).
    """
    x, support = read_variables(x, support)
    if isinstance(x, tuple):
        check_inputs(P, Q, x[0], support[0])
        support = sp.ProductSet(*support)
    else:
        check_inputs(P, Q, x, support)
    seconds = check_seconds(step_seconds) if step_seconds is not None else default_step_seconds()
    started = time.perf_counter()
    merged = None if isinstance(x, tuple) else merge_equal_ratios(P, Q, x, support, params)
    if merged is not None:
        step = Step("merge equal ratios", merged.describe(), time.perf_counter() - started)
        return _merged_derivation(P, Q, x, support, merged, step, params, step_seconds, check_density, cache, label)
    if isinstance(x, tuple) and not cache:
        # the one-dimensional parts of independent coordinates are then derived afresh too
        result = derive_multivariate(P, Q, x, support, read_variables(x, support)[1], params, seconds,
                                     check_density, False, label, renyi_divergence)
    elif cache:
        # the cache is handed the derivation to run on a miss (it never imports the engine)
        result = cached_derivation(derive_uncached, P, Q, x, support, params, seconds, check_density, label)
    else:
        result = derive_uncached(P, Q, x, support, params, seconds, check_density, label)
    result = _where_distributions(result, P, Q, x, support, params)
    return replace(result, pair=(P, Q, x, support)) if result.pair is None else result


def _where_distributions(result: DivergenceResult, P, Q, x, support, params) -> DivergenceResult:
    """``result`` held to the parameter values where P and Q are distributions (:mod:`.distribution_domain`;
    read from the pair as given, before outcomes are merged: a merged sum can be non-negative where one of
    its outcomes is not)."""
    held = dict(result.domains)
    expr = result.expr if result.status is Status.CLOSED_FORM else None
    narrowed, why = distribution_domains(P, Q, x, support, params, held, (expr, result.kl, result.max_divergence))
    if not narrowed:
        return result
    for s, dom in narrowed.items():
        held[s] = sp.Intersection(held.get(s, dom), dom)
    # a new closed end (p = 1 of (0, 1]) is checked against the densities like a declared one
    narrowed_params = [replace(p, domain=held[p.symbol]) if p.symbol in narrowed else p for p in params]
    ends, ends_why = closed_end_domains(P, Q, x, support, expr, result.kl, result.max_divergence, narrowed_params,
                                        result.symbols)
    for s, dom in ends.items():
        held[s] = sp.Intersection(held[s], dom) if s in held else dom
    why += [w for w in ends_why if w not in result.reason]  # a declared end's reason is there already
    reason = "; ".join(r for r in (result.reason, *why) if r)
    return replace(result, domains=tuple(held.items()), reason=reason)


def _merged_derivation(P, Q, x, support, merged, step, params, step_seconds, check_density, cache, label):
    """D_alpha(P||Q) on a finite support as the divergence of the pair with its outcomes of equal
    likelihood ratio merged (:mod:`.finite`). The merged pair is derived under one label, so that
    directions with the same ratio distribution (other pairs of the mechanism, the reverse direction)
    share one derivation through the cache; the result carries this pair, its label and the merge as its
    first step."""
    result = renyi_divergence(merged.P, merged.Q, x, merged.support, params=params, step_seconds=step_seconds,
                              check_density=check_density, cache=cache)
    prov = result.provenance
    inputs = (("P", printing.sstr(P)), ("Q", printing.sstr(Q)), ("x", str(x)), ("support", printing.sstr(support)),
              ("merged P", printing.sstr(merged.P)), ("merged Q", printing.sstr(merged.Q)),
              ("merged support", printing.sstr(merged.support)))
    prov = replace(prov, steps=(step,) + tuple(prov.steps), inputs=inputs)
    return replace(result, label=label, provenance=prov, pair=(P, Q, x, support))


#: the stages after the split, which :func:`derive_uncached` makes with the parameters' domains
AFTER_SPLIT = tuple(stage for stage in STAGES if stage is not split)


def derive_uncached(P, Q, x, support, params, seconds, check_density, label, depth: int = 0) -> DivergenceResult:
    """The derivation itself (no cache, inputs already checked): the :data:`~.stages.STAGES` in order,
    with the provenance of every step. :func:`renyi_divergence` is the public entry point.

    The split uses the parameters' declared domains where their assumptions do not decide (:mod:`.domains`);
    where neither decides, the divergence is derived case by case (:mod:`.cases`, ``depth`` nested
    splits so far) and the cases combined."""
    if isinstance(x, tuple):
        # several output variables: the Gaussian template or independent coordinates (.multivariate)
        coords = read_variables(x, support)[1]
        return derive_multivariate(P, Q, x, support, coords, params, seconds, check_density, True, label,
                                   renyi_divergence)
    d = Derivation(P, Q, x, support, params, seconds, check_density)
    inputs = (("P", printing.sstr(P)), ("Q", printing.sstr(Q)), ("x", str(x)), ("support", printing.sstr(support)))
    started, unexcused = time.perf_counter(), unexcused_timeouts()
    undecided, narrowed = split_with_domains(d), {}
    if undecided is not None:
        cases = case_split(undecided.expr, d.symbols, params) if depth < MAX_DEPTH else None
        if cases is None:
            note_unsplit(d, undecided)
        else:
            narrowed = derive_by_cases(d, cases, label, lambda *args: derive_uncached(*args, depth=depth + 1))
            d.done = True
    if not d.done:
        run_stages(d, AFTER_SPLIT)
    if (unexcused_timeouts() > unexcused or deadline_passed()) and not any(s not in OPTIONAL_STAGES for s in d.expired):
        d.expire("derivation")  # a time limit expired outside the stages that record it (the split, say)
    ends, why = closed_end_domains(P, Q, x, support, d.expr if d.status is Status.CLOSED_FORM else None, d.kl,
                                   d.dinf, params, d.symbols)
    for s, dom in ends.items():
        narrowed[s] = sp.Intersection(narrowed.get(s, dom), dom)
    for reason in why:
        d.log.note("domain", reason)
    d.log.note("total", f"{time.perf_counter() - started:.3f} s")
    prov = Provenance(tuple(d.log.steps), inputs, tuple(library_versions().items()), expired=tuple(d.expired))
    domains = {p.symbol: p.domain for p in (params or ()) if p.symbol in d.symbols} | narrowed
    domains = tuple(domains.items())
    return DivergenceResult(
        expr=d.expr,
        status=d.status,
        reason="; ".join(list(d.reasons) + why),
        conditions=d.cond,
        kl=d.kl,
        max_divergence=d.dinf,
        exceptional_points=d.exceptional,
        symbols=d.symbols,
        provenance=prov,
        label=label,
        domains=domains,
        integer_orders=d.integer_orders,
    )
