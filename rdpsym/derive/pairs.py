"""One adjacent pair's divergences: both directions, unless a reflection shows them equal.

    max(D_alpha(P||Q), D_alpha(Q||P))          (Mironov 2017, Def. 4: both directions of every pair)

The reverse direction is skipped only when a symmetry is established mechanically: a reflection
x -> c - x that maps the support onto itself and P onto Q (then it maps Q onto P too, and the two
divergences are equal because the reflection preserves the measure). :func:`pair_results` is what
:func:`rdpsym.derive.mechanism_rdp.rdp` does for a listed pair, for the pairs of a family
(:mod:`.adjacency`, :mod:`.balls`) and for the base pairs of a subsampled mechanism (:mod:`.subsampled`).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .engine import renyi_divergence
from .pieces import DerivationError, finite_points, symbolic_kinks
from .result import Step, StepName
from .._timeout import StepTimeout, deadline_passed, run_with_time_limit

__all__ = ["REFLECTION_SECONDS", "reflection_symmetry", "pair_results"]


#: seconds for each symbolic step of the reflection search (a symmetry not shown costs only the other
#: direction's derivation, never a wrong result)
REFLECTION_SECONDS = 5.0


class _Attempts:
    """Runs the reflection search's symbolic steps on user densities, each within
    :data:`REFLECTION_SECONDS`; a step that fails or runs out of time gives None (not shown: fail
    closed) and a timeout is remembered, so the step recorded says so and nothing computed is cached
    (the pair's result records the stage ``"symmetry"`` as expired, so no cache keeps it, and memos keep
    nothing computed while a limit expired). A StepTimeout of an enclosing limit is not ours to turn into
    a fallback: it propagates."""

    def __init__(self):
        self.timed_out = False

    def __call__(self, fn, *args):
        try:
            return run_with_time_limit(fn, *args, seconds=REFLECTION_SECONDS)
        except StepTimeout:
            if deadline_passed():
                raise
            self.timed_out = True
        except (DerivationError, *SYMBOLIC_ERRORS):  # a step that cannot be done shows nothing
            pass
        return None


def _mode(density: sp.Expr, x: sp.Symbol) -> sp.Set:
    """The stationary points of log density (the candidates for its mode)."""
    return sp.solveset(sp.diff(sp.expand_log(sp.log(density), force=True), x), x, sp.S.Reals)


def _kinks(P: sp.Expr, Q: sp.Expr, x: sp.Symbol) -> list[sp.Expr]:
    kp, kq = symbolic_kinks(P, 0 * x, x), symbolic_kinks(Q, 0 * x, x)
    return [a + b for a in kp for b in kq]


def _reflection_candidates(P, Q, x, support, attempt: _Attempts) -> list[sp.Expr]:
    atoms = finite_points(support) if isinstance(support, (sp.FiniteSet, sp.Range)) else None
    if atoms:
        return [min(atoms) + max(atoms)] if all(a.is_number for a in atoms) else []
    cands = list(attempt(_kinks, P, Q, x) or [])
    mp, mq = attempt(_mode, P, x), attempt(_mode, Q, x)
    if isinstance(mp, sp.FiniteSet) and isinstance(mq, sp.FiniteSet) and len(mp) == len(mq) == 1:
        cands.append(next(iter(mp)) + next(iter(mq)))
    return cands


def _simplified(expr: sp.Expr) -> sp.Expr:
    return sp.simplify(expr)


def _is_zero(attempt: _Attempts, expr: sp.Expr) -> bool:
    """expr simplifies to 0 within the time limit (False when not shown)."""
    return attempt(_simplified, expr) == 0


def _support_invariant(support: sp.Set, c: sp.Expr, attempt: _Attempts) -> bool:
    if support in (sp.S.Reals,):
        return True
    if support == sp.S.Integers:
        return bool(c.is_integer)
    if isinstance(support, sp.FiniteSet):
        return sp.FiniteSet(*[c - a for a in support.args]) == support
    if isinstance(support, sp.Interval):
        return support.left_open == support.right_open and _is_zero(attempt, support.start + support.end - c)
    return False


def _reflection(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, support: sp.Set) -> tuple[sp.Expr | None, bool]:
    """(the centre of :func:`reflection_symmetry` or None, whether a step of the search timed out)."""
    attempt = _Attempts()
    for c in _reflection_candidates(P, Q, x, support, attempt):
        if not _support_invariant(support, c, attempt):
            continue
        atoms = finite_points(support) if isinstance(support, sp.FiniteSet) else None
        if atoms is not None:
            same = all(_is_zero(attempt, P.subs(x, c - a) - Q.subs(x, a)) for a in atoms)
        else:
            same = _is_zero(attempt, P.subs(x, c - x) - Q)
        if same:
            return c, attempt.timed_out
    return None, attempt.timed_out


def reflection_symmetry(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, support: sp.Set) -> sp.Expr | None:
    """The centre c of a reflection x -> c - x mapping P onto Q and the support onto itself, or None.

    None also when it is not shown: each symbolic step (kinks, modes, simplifications) runs within
    :data:`REFLECTION_SECONDS`, and one that times out or fails shows nothing."""
    return _reflection(P, Q, x, support)[0]


def pair_results(P, Q, label, x, support, params, step_seconds, cache) -> tuple[list, list]:
    """D(P||Q), and D(Q||P) unless :func:`reflection_symmetry` proves it equal: (results, steps)."""
    kw = dict(params=params, step_seconds=step_seconds, cache=cache)
    results = [renyi_divergence(P, Q, x, support, label=f"D_alpha(P||Q) [{label}]", **kw)]
    if isinstance(x, tuple):
        # vector outputs: no reflection search in several variables (yet), so both directions count
        notes = [Step(StepName.SYMMETRY, f"[{label}] not sought for the vector output {tuple(map(str, x))}: "
                                  "both directions derived")]
        results.append(renyi_divergence(Q, P, x, support, label=f"D_alpha(Q||P) [{label}]", **kw))
        return results, notes
    centre, timed_out = _reflection(P, Q, x, support)
    if centre is not None:
        # the centre rides along as the step's expr: what composition reads (rdpsym.accounting.compose)
        notes = [Step(StepName.SYMMETRY, f"[{label}] x -> {sp.sstr(centre)} - x maps P onto Q and the support onto "
                                         "itself: D(Q||P) = D(P||Q)", expr=centre)]
    else:
        why = (f" (a step of the search timed out after {REFLECTION_SECONDS:g} s: not shown)" if timed_out
               else "")
        notes = [Step(StepName.SYMMETRY, f"[{label}] none established{why}: both directions derived")]
        results.append(renyi_divergence(Q, P, x, support, label=f"D_alpha(Q||P) [{label}]", **kw))
        if timed_out:  # the search may find the symmetry next time: no cache keeps this result
            prov = results[0].provenance
            results[0] = replace(results[0], provenance=replace(prov, expired=prov.expired + (StepName.SYMMETRY.value,)))
    return results, notes
