r"""Finite supports: outcomes with the same likelihood ratio merged before the derivation.

On a finite support every Rényi divergence depends on P and Q only through the distribution of the
likelihood ratio r = P/Q: for alpha in (0, 1) u (1, oo) (Mironov 2017, arXiv:1702.07476 v3, Def. 3)

    sum_x P(x)^alpha Q(x)^(1-alpha) = sum_x Q(x) r(x)^alpha = sum_r (sum_{x: r(x) = r} Q(x)) r^alpha,

likewise the KL sum_x P(x) log r(x) = sum_r (sum_{r(x) = r} P(x)) log r and D_inf = log max r. So the
outcomes with equal ratio can be merged into one whose masses are the sums of theirs, and the divergence of
the merged pair, on as many outcomes as there are distinct ratios, is that of the pair (merging is the
sufficient statistic r; data processing holds with equality, van Erven and Harremoës 2014, Thm. 9 and the
remark on sufficient statistics). This is the argument the built-in k-ary randomized response states for
its own k - 2 outcomes of ratio 1, made here mechanically for any finite pmf.

It matters for cost: a mechanism's pairs (and both directions of each) often have the same ratio
distribution, up to relabelling the outcomes (the truncated geometric mechanism on {0, ..., n}: every
pair of neighbouring inputs has ratios e^eps and e^-eps with masses 1/(1 + e^-eps) and e^-eps/(1 + e^-eps)).
The merged pair is written canonically (groups ordered by their ratio, on the first atoms of the
support), so such directions are one derivation, shared through the derivation cache.

Merging happens only where it is shown: every mass positive (a zero or undecided mass leaves the pair
as it is) and two ratios equal symbolically, each step under a time limit; otherwise the outcomes stay apart.
"""

from __future__ import annotations

from typing import NamedTuple

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._timeout import StepTimeout, run_with_time_limit
from .crosscheck import sample_values
from .pieces import finite_points

__all__ = ["MergedPair", "merge_equal_ratios", "MAX_ATOMS"]

#: the work budget of the merge: supports of at most this many atoms are looked at
MAX_ATOMS = 256
#: seconds for each symbolic step of the merge (a step that runs out only leaves outcomes apart)
MERGE_SECONDS = 5.0


class MergedPair(NamedTuple):
    """The pair with outcomes of equal likelihood ratio merged: ``P``, ``Q`` on ``support`` (the first atoms
    of the original support, one per ratio, in increasing order of the ratio), and ``groups``, the
    original atoms of each merged outcome."""

    P: sp.Expr
    Q: sp.Expr
    support: sp.FiniteSet
    groups: tuple[tuple[sp.Expr, ...], ...]

    def describe(self) -> str:
        shown = "; ".join("{" + ", ".join(map(str, g)) + "}" for g in self.groups)
        return (f"{sum(map(len, self.groups))} outcomes, {len(self.groups)} distinct likelihood ratios P/Q: "
                f"outcomes of equal ratio merged ({shown}); every D_alpha, the KL and D_inf depend only on the "
                "distribution of P/Q")


def _canonical(expr: sp.Expr) -> sp.Expr:
    return sp.factor(sp.cancel(sp.powsimp(expr, combine="exp")))


def _limited(fn, *args):
    try:
        return run_with_time_limit(fn, *args, seconds=MERGE_SECONDS)
    except (StepTimeout, *SYMBOLIC_ERRORS):  # not shown: the outcomes stay apart
        return None


def _positive(value: sp.Expr, params) -> bool:
    if value.is_positive:
        return True
    from .sign import decide

    return decide(value, "positive", params, seconds=MERGE_SECONDS) is True


def _numbers(expr: sp.Expr, points) -> tuple | None:
    out = []
    for point in points:
        try:
            v = expr.evalf(30, subs=point)
        except SYMBOLIC_ERRORS:
            return None
        if not (v.is_Number and v.is_finite):
            return None
        out.append(v)
    return tuple(out)


def _close(u: tuple, v: tuple) -> bool:
    return all(abs(a - b) <= sp.Float(10, 30) ** -25 * max(1, abs(a), abs(b)) for a, b in zip(u, v))


def merge_equal_ratios(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, support: sp.Set, params=None) -> MergedPair | None:
    """The pair with its outcomes of equal ratio P/Q merged (see the module docstring), or None when the
    support is not a finite set of numbers (of at most :data:`MAX_ATOMS`), a mass is not shown positive, or
    no two outcomes are shown to have the same ratio."""
    atoms = finite_points(support) if isinstance(support, (sp.FiniteSet, sp.Range)) else None
    if not atoms or len(atoms) < 2 or len(atoms) > MAX_ATOMS or not all(a.is_number for a in atoms):
        return None
    atoms = sorted(atoms)
    masses = []
    for a in atoms:
        p, q = P.subs(x, a), Q.subs(x, a)
        if p.has(x, sp.Piecewise) or q.has(x, sp.Piecewise) or not all(_positive(v, params) for v in (p, q)):
            return None
        masses.append((p, q))
    symbols = sorted(set().union(*(p.free_symbols | q.free_symbols for p, q in masses)), key=lambda s: s.name)
    points = sample_values(symbols, params, 2)
    ratios = []
    for p, q in masses:
        r = _limited(_canonical, p / q)
        values = _numbers(r, points) if r is not None else None
        if values is None:
            return None
        ratios.append((r, values))
    groups: list[list[int]] = []
    for i, (r, values) in enumerate(ratios):
        for g in groups:
            r0, v0 = ratios[g[0]]
            if _close(values, v0) and (r == r0 or _limited(lambda: sp.simplify(r - r0) == 0)):
                g.append(i)
                break
        else:
            groups.append([i])
    if len(groups) == len(atoms):
        return None
    groups.sort(key=lambda g: (ratios[g[0]][1], sp.default_sort_key(ratios[g[0]][0])))
    merged = []
    for g in groups:
        p = sp.Add(*[masses[i][0] for i in g])
        q = sp.Add(*[masses[i][1] for i in g])
        merged.append((_limited(_canonical, p) or p, _limited(_canonical, q) or q))
    new_atoms = atoms[:len(groups)]

    def pmf(which: int) -> sp.Expr:
        cases = [(m[which], sp.Eq(x, a)) for m, a in zip(merged[:-1], new_atoms)]
        return sp.Piecewise(*cases, (merged[-1][which], True))

    return MergedPair(pmf(0), pmf(1), sp.FiniteSet(*new_atoms),
                      tuple(tuple(atoms[i] for i in g) for g in groups))
