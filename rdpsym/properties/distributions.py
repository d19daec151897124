"""Numeric handling of output distributions at fixed parameters: event masses and divergences of
processed (post-processed, discretised) outputs, all in mpmath at the caller's precision.

Masses of intervals are integrals of the density (``mpmath.quad``, tanh-sinh, split at the density's
kinks and at 0 so the nodes see every corner) or exact finite sums for pmfs. A processed output is a
finite set of atoms, optionally with a density part on an interval (the interior of a clipped
output); its Rényi divergence is computed from those pieces directly (Mironov 2017,
arXiv:1702.07476 v3, Def. 3: sums over atoms plus the integral over the continuous part).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..numeric.backends.mpmath import lambdify_mpmath
from ..numeric.kinks import kink_arguments
from ..specify.mechanism import Mechanism, is_discrete_support
from ..specify.text import as_number

__all__ = ["NumericDensity", "Processed", "divergence_of", "pairs_of"]


def _kink_points(expr: sp.Expr, x: sp.Symbol) -> list:
    """Real zeros of the kink arguments of ``expr`` (:func:`rdpsym.numeric.kinks.kink_arguments`: Abs,
    sign, Heaviside, Max/Min differences, the relations inside Piecewise conditions, also compound ones)."""
    args = kink_arguments(expr, x)
    pts = set()
    for a in args:
        if not a.has(x):
            continue
        try:
            sol = sp.solveset(a, x, sp.S.Reals)
        except SYMBOLIC_ERRORS:  # a kink we cannot find only costs quadrature accuracy
            continue
        if isinstance(sol, sp.FiniteSet):
            pts |= {s for s in sol if s.is_number}
    return sorted(pts, key=float)


def _finite_discrete(support) -> bool:
    """A discrete support the processed distributions are computed on: finitely many points, listed or a
    finite range."""
    return isinstance(support, (sp.FiniteSet, sp.Range)) and support.is_finite_set is True


class NumericDensity:
    """One density or pmf ``expr`` in ``x`` with every parameter substituted."""

    def __init__(self, expr: sp.Expr, x: sp.Symbol, support: sp.Set, subs: dict):
        if not isinstance(expr, sp.Expr):
            raise TypeError(f"densities must be sympy expressions (read text with rdpsym.specify.text); got {type(expr).__name__}")
        self.expr = expr.subs(subs)
        stray = self.expr.free_symbols - {x}
        if stray:
            raise ValueError(f"values: missing parameter(s) {sorted(map(str, stray))}")
        self.x, self.support = x, support
        self.discrete = is_discrete_support(support)
        self._f = lambdify_mpmath(x, self.expr.rewrite(sp.Piecewise) if self.expr.has(sp.Heaviside) else self.expr)
        self.kinks = [] if self.discrete else [mpmath.mpf(sp.Float(k, 60)) for k in _kink_points(self.expr, x)]
        if self.discrete:
            if not _finite_discrete(support):
                raise ValueError(f"support: only finite discrete supports are handled here; got {sp.sstr(support)}")
            self.points = [mpmath.mpf(int(p)) if sp.S(p).is_Integer else mpmath.mpf(sp.Float(p, 60)) for p in support]
        else:
            sup = support if support != sp.S.Reals else sp.Interval(-sp.oo, sp.oo)
            if not isinstance(sup, sp.Interval):
                raise ValueError(f"support: expected Reals or an Interval; got {sp.sstr(support)}")
            self.lo = -mpmath.inf if sup.start == -sp.oo else mpmath.mpf(sp.Float(sup.start, 60))
            self.hi = mpmath.inf if sup.end == sp.oo else mpmath.mpf(sp.Float(sup.end, 60))

    def __call__(self, t) -> mpmath.mpf:
        v = mpmath.mpmathify(self._f(t))
        if isinstance(v, mpmath.mpc):
            v = v.real
        if mpmath.isnan(v) or v < 0:
            raise ArithmeticError(f"density {sp.sstr(self.expr)} is {v} at x = {t}")
        return v

    def cuts(self, lo, hi) -> list:
        inner = sorted({k for k in self.kinks + [mpmath.mpf(0)] if lo < k < hi})
        return [lo] + inner + [hi]

    def mass(self, lo, hi) -> tuple[mpmath.mpf, mpmath.mpf]:
        """(mass of [lo, hi], error estimate); lo/hi may be -inf/+inf."""
        if self.discrete:
            return mpmath.fsum(self(p) for p in self.points if lo <= p <= hi), mpmath.mpf(0)
        lo, hi = max(lo, self.lo), min(hi, self.hi)
        if lo >= hi:
            return mpmath.mpf(0), mpmath.mpf(0)
        v, e = mpmath.quad(self, self.cuts(lo, hi), error=True)
        return max(v, mpmath.mpf(0)), e


@dataclass
class Processed:
    """A processed output: ``atoms`` (label -> mass) plus an optional density part on ``interval``."""

    atoms: dict
    density: NumericDensity | None = None
    interval: tuple | None = None
    error: mpmath.mpf = mpmath.mpf(0)


def _atom_terms(P: Processed, Q: Processed):
    labels = set(P.atoms) | set(Q.atoms)
    return [(P.atoms.get(k, mpmath.mpf(0)), Q.atoms.get(k, mpmath.mpf(0))) for k in sorted(labels, key=str)]


def divergence_of(P: Processed, Q: Processed, a) -> mpmath.mpf:
    r"""D_a(P||Q) of two processed outputs (a > 0, ``mpmath.inf`` allowed; a = 1 is the KL)."""
    terms = _atom_terms(P, Q)
    cont = P.density is not None
    if a == mpmath.inf:
        best = -mpmath.inf
        for p, q in terms:
            if p > 0:
                best = max(best, mpmath.inf if q == 0 else mpmath.log(p / q))
        if cont:
            lo, hi = P.interval
            grid = [lo + (hi - lo) * k / 400 for k in range(1, 400)]
            for t in grid:
                p, q = P.density(t), Q.density(t)
                if p > 0:
                    best = max(best, mpmath.inf if q == 0 else mpmath.log(p / q))
        return best
    if a == 1:
        total = mpmath.fsum(p * (mpmath.log(p) - mpmath.log(q)) if q > 0 else (mpmath.inf if p > 0 else 0)
                            for p, q in terms if p > 0)
        if cont:
            def f(t):
                p, q = P.density(t), Q.density(t)
                if p == 0:
                    return mpmath.mpf(0)
                return mpmath.inf if q == 0 else p * (mpmath.log(p) - mpmath.log(q))
            total += mpmath.quad(f, P.density.cuts(*P.interval))
        return total

    def term(p, q):
        if p == 0 or q == 0:
            if p > 0 and a > 1:
                return mpmath.inf
            return mpmath.mpf(0)
        return mpmath.exp(a * mpmath.log(p) + (1 - a) * mpmath.log(q))

    total = mpmath.fsum(term(p, q) for p, q in terms)
    if cont:
        total += mpmath.quad(lambda t: term(P.density(t), Q.density(t)), P.density.cuts(*P.interval))
    if total == mpmath.inf:
        return mpmath.inf
    if total == 0:
        return mpmath.inf  # disjoint supports (possible for a < 1)
    return mpmath.log(total) / (a - 1)


def infinite_lattice_report(target, name: str, reference: str):
    """The not-applicable report of a check that computes processed distributions term by term, for a
    mechanism whose discrete support is infinite (Poisson or geometric noise); None otherwise. The check is
    not run, and says why, instead of raising (a check that raised counts as an error of the suite)."""
    from .report import report_from_rows

    support = getattr(target, "support", None)
    if not (isinstance(support, sp.Set) and is_discrete_support(support)) or _finite_discrete(support):
        return None
    why = f"the distributions are handled on finite supports only; the support is {sp.sstr(support)}"
    return report_from_rows(name, [("support", None, None, 0, why)], 0, reference=reference,
                            target=str(getattr(target, "name", "pair")), detail=f"not applicable: {why}",
                            extra={"applicable": False})


def pairs_of(target, values: dict | None = None):
    """[(label, P, Q)] numeric densities for every adjacent pair and both directions of a Mechanism, or
    for a tuple ``(P, Q, x, support)`` (one direction, as given)."""
    values = dict(values or {})
    if isinstance(target, Mechanism):
        subs = target.substitutions(values)
        missing = sorted(set(target.params) - set(values))
        if missing:
            raise ValueError(f"values: missing parameter(s) {', '.join(missing)} of {target.name!r}")
        from ..derive.mechanism_rdp import worst_pairs

        out = []
        for pair in worst_pairs(target):  # a family's pairs at its supremum, where rdp shows it
            p = NumericDensity(pair.P, target.variable, target.support, subs)
            q = NumericDensity(pair.Q, target.variable, target.support, subs)
            out += [(f"[{pair.label}] P||Q", p, q), (f"[{pair.label}] Q||P", q, p)]
        return out
    if isinstance(target, tuple) and len(target) == 4:
        P, Q, x, support = target
        subs = {}
        for k, v in values.items():
            sym = k if isinstance(k, sp.Symbol) else next((s for s in (getattr(P, "free_symbols", set()) | getattr(Q, "free_symbols", set()))
                                                           if s.name == k), None)
            if sym is None:
                raise ValueError(f"values: {k!r} is not a symbol of the densities")
            subs[sym] = as_number(v, f"values[{sym.name!r}]")
        return [("P||Q", NumericDensity(P, x, support, subs), NumericDensity(Q, x, support, subs))]
    raise TypeError(f"target: expected a Mechanism or a tuple (P, Q, x, support); got {type(target).__name__}")
