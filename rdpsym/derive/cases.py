"""Case splits: one derivation for each sign of a parameter expression the split could not decide.

Where the order of two kinks, or whether a kink lies inside the support, depends on the parameters in a
way that neither their assumptions nor their declared domains (:mod:`.domains`) decide, the split names
the expression e whose sign it needs (:class:`~.pieces.UndecidedSign`). e is solved for one parameter
s (e linear in s, with a coefficient of known sign), giving a root r, and the divergence is derived
three times (Mironov 2017, Def. 3, on each case):

- s > r and s < r, with s's domain narrowed to (r, oo) and (-oo, r), so that the split, the cross-checks'
  sample points and any further split all see the case;
- s = r, with s replaced by r in P and Q (where r lies in s's domain).

The results are combined into one (every quantity: the general order, its finiteness conditions, the KL,
D_inf and the removable orders):

- in one symmetric form F(r + |s - r|) when the case s < r is the case s > r reflected (its value at
  s = r - t equals F(r + t), t > 0) and F(r) is the boundary case: the Laplace locations m1, m2 give a
  function of |m1 - m2|. Both equalities are checked as the engine checks its simplifications
  (:func:`~.crosscheck.equivalent`: symbolic, else at 30 digits at sample points of the case);
- else Piecewise over the cases, the boundary case folded into s >= r where the form for s > r takes
  its value there (checked the same way).

The split, each case's steps and the way they were combined are recorded in the provenance.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import sympy as sp

from ..specify.params import Parameter
from ..symbols import alpha as ALPHA
from .checks import DensityError
from .crosscheck import equivalent, sample_values
from .domains import relation_domain
from .pieces import DerivationError, UndecidedSign, split_support
from .result import ExceptionalPoint, Status
from .sign import sign
from .._timeout import StepTimeout

__all__ = ["CaseSplit", "case_split", "derive_by_cases", "reflection", "split_with_domains", "note_unsplit", "MAX_DEPTH"]

#: nested case splits allowed (each level derives up to three cases)
MAX_DEPTH = 2


@dataclass(frozen=True)
class CaseSplit:
    """The cases ``symbol > root``, ``symbol < root`` and ``symbol = root`` of the undecided sign of ``expr``."""

    expr: sp.Expr
    symbol: sp.Symbol
    root: sp.Expr

    def relation(self, kind: str) -> sp.Basic:
        s, r = self.symbol, self.root
        return {"gt": sp.Gt(s, r), "lt": sp.Lt(s, r), "eq": sp.Eq(s, r)}[kind]

    def label(self, kind: str) -> str:
        return {"gt": ">", "lt": "<", "eq": "="}[kind].join((f"{self.symbol} ", f" {sp.sstr(self.root)}"))


def _reduced(expr: sp.Expr, params) -> sp.Expr:
    """``expr`` without the factors whose sign is decided (they do not change where its sign changes)."""
    expr = sp.factor_terms(sp.together(expr))
    num, _ = sp.fraction(expr)
    factors = sp.Mul.make_args(sp.factor(num))
    kept = [f for f in factors if f.free_symbols and sign(f, params) not in (1, -1)]
    return sp.Mul(*kept) if kept else sp.Integer(0)


def case_split(expr: sp.Expr, symbols: Sequence[sp.Symbol], params) -> CaseSplit | None:
    """The split on the sign of ``expr``, solved for one parameter; None if no parameter enters it
    linearly with a coefficient of known sign (or the split was already made)."""
    e = _reduced(expr, params)
    if not e.free_symbols:
        return None
    by_symbol = {p.symbol: p for p in params or ()}
    candidates = []
    for s in sorted(e.free_symbols & set(symbols), key=lambda s: s.name, reverse=True):
        poly = sp.Poly(sp.expand(e), s) if e.is_polynomial(s) else None
        if poly is None or poly.degree() != 1:
            continue
        c = poly.coeff_monomial(s)
        if sign(c, params) not in (1, -1):
            continue
        root = sp.simplify(-(sp.expand(e) - c * s) / c)
        if s in root.free_symbols:
            continue
        domain = by_symbol[s].domain if s in by_symbol else sp.S.Reals
        if root in _endpoints(domain):
            return None  # this split was made already: it does not decide the sign
        # a parameter whose own domain is plain (no relation to others) is the clearer one to narrow
        candidates.append((bool(domain.free_symbols), s, root))
    if not candidates:
        return None
    _, s, root = min(candidates, key=lambda c: c[0])
    return CaseSplit(e, s, root)


def _endpoints(domain: sp.Set) -> set:
    if isinstance(domain, sp.Interval):
        return {domain.start, domain.end}
    if isinstance(domain, sp.Intersection):
        return set().union(*(_endpoints(a) for a in domain.args))
    if isinstance(domain, sp.FiniteSet):
        return set(domain.args)
    return set()


def _case_params(params, split: CaseSplit, kind: str) -> tuple[Parameter, ...] | None:
    """The parameters of one case: s's domain narrowed (None if the case is empty)."""
    params = tuple(params or ())
    s = split.symbol
    own = next((p for p in params if p.symbol == s), None) or Parameter.from_symbol(s, strict=False)
    if kind == "eq":
        if own.domain.contains(split.root) is sp.false:
            return None
        # s is replaced by the root in P and Q, and so in the domains that refer to it
        return tuple(replace(p, domain=p.domain.xreplace({s: split.root})) for p in params if p.symbol != s)
    narrowed = sp.Intersection(own.domain, relation_domain(s, kind, split.root))
    if narrowed is sp.S.EmptySet:
        return None
    rest = tuple(p for p in params if p.symbol != s)
    return rest + (replace(own, domain=narrowed),)


def derive_by_cases(d, split: CaseSplit, label: str, derive: Callable) -> dict:
    """Derive every case of ``split`` with ``derive(P, Q, x, support, params, seconds, check_density,
    label)`` and store their combination in the :class:`~.stages.Derivation` ``d``.

    A case in which P and Q are not distributions (the density check fails there: a normaliser valid
    only for d < 2, and d > 2 was not excluded by a domain) is left out, and the returned
    ``{symbol: domain}`` narrows the result's domain to the cases kept, so that values in it are refused.

    The case s < r is not derived again when a reflection maps it onto the case s > r
    (:func:`reflection`): its values are those of s > r at the reflected parameters."""
    s, root = split.symbol, split.root
    kinds = [k for k in ("gt", "lt", "eq") if _case_params(d.params, split, k) is not None]
    d.log.note("case split", f"the sign of {sp.sstr(split.expr)} is decided neither by the assumptions nor by "
                             "the declared domains: derived for " + ", ".join(split.label(k) for k in kinds))
    mirror = reflection(d.P, d.Q, d.x, d.support, split, d.params) if {"gt", "lt"} <= set(kinds) else None
    results, left_out = {}, []
    for kind in kinds:
        params = _case_params(d.params, split, kind)
        tag = f"[{split.label(kind)}]"
        if kind == "lt" and mirror is not None and "gt" in results:
            r = _reflected(results["gt"][0], mirror)
            d.log.note(f"{tag} reflection", f"x -> -x with {', '.join(f'{k} -> {sp.sstr(v)}' for k, v in mirror.items())} "
                       f"maps P, Q and the support onto themselves and the case {split.label('gt')} onto this one: "
                       "its values are those of that case at the reflected parameters (checked symbolically)")
        else:
            P, Q = (d.P, d.Q) if kind != "eq" else (d.P.xreplace({s: root}), d.Q.xreplace({s: root}))
            if P.has(sp.zoo, sp.nan) or Q.has(sp.zoo, sp.nan):
                left_out.append((kind, DensityError(f"P or Q is undefined at {split.label(kind)}")))
                continue
            try:
                r = derive(P, Q, d.x, d.support, params, d.seconds, d.check_density, f"{label} {tag}")
            except DensityError as exc:
                left_out.append((kind, exc))
                continue
            d.log.steps.extend(replace(step, name=f"{tag} {step.name}") for step in r.provenance.steps)
            d.expire(*r.provenance.expired)
        results[kind] = (r, params)
        if r.reason:
            d.reasons.append(f"{tag} {r.reason}")
    if not results:
        raise left_out[0][1]
    for kind, exc in left_out:
        d.log.note(f"[{split.label(kind)}] left out", f"P and Q are not distributions in this case ({exc})")
    combiner = _Combiner(split, results, d.symbols)
    worst = Status.worst(r.status for r, _ in results.values())
    d.expr = combiner.value(lambda r: r.expr) if worst is Status.CLOSED_FORM else None
    d.status = worst if d.expr is not None or worst is not Status.CLOSED_FORM else Status.NUMERIC_ONLY
    d.cond = combiner.condition()
    d.kl = combiner.value(lambda r: r.kl)
    d.dinf = combiner.value(lambda r: r.max_divergence)
    d.exceptional = combiner.points() if d.expr is not None else ()
    d.log.note("cases", combiner.summary())
    if not left_out:
        return {}
    # the result holds where P and Q are distributions: values in a case left out are refused
    own = next((p for p in d.params or () if p.symbol == s), None) or Parameter.from_symbol(s, strict=False)
    kept = sp.Union(*[relation_domain(s, k, root) for k in results])
    narrowed = sp.Intersection(own.domain, kept)
    d.log.note("domain", f"{s} in {sp.sstr(narrowed)}: the cases where P and Q are distributions")
    return {s: narrowed}


def _symmetric_set(support: sp.Set) -> bool:
    if support in (sp.S.Reals, sp.S.Integers):
        return True
    if isinstance(support, sp.Interval):
        return support.start == -support.end and support.left_open == support.right_open
    return False


def reflection(P, Q, x, support, split: CaseSplit, params) -> dict | None:
    """The parameter map of a reflection x -> -x that maps P and Q onto themselves and the case
    s > r onto s < r: the parameters of the split's expression negated, each with a domain symmetric
    about 0 (then D_alpha at parameters in the case s < r equals D_alpha at their images, which lie in
    the case s > r). None if there is none."""
    if not _symmetric_set(support):
        return None
    by_symbol = {p.symbol: p for p in params or ()}
    sigma = {}
    for t in sorted(split.expr.free_symbols, key=lambda t: t.name):
        domain = by_symbol[t].domain if t in by_symbol else (sp.S.Reals if t.is_real else None)
        if domain is None or not _symmetric_set(domain):
            return None
        sigma[t] = -t
    try:
        if sp.simplify(split.expr.xreplace(sigma) + split.expr) != 0:
            return None
        flip = {x: -x, **sigma}
        if any(sp.simplify(dens.xreplace(flip) - dens) != 0 for dens in (P, Q)):
            return None
    except (TypeError, ValueError, NotImplementedError):
        return None
    return sigma


def _reflected(result, sigma: dict):
    """``result`` (the case s > r) at the reflected parameters: the case s < r."""
    def f(e):
        return None if e is None else e.xreplace(sigma)

    points = tuple(ExceptionalPoint(f(p.alpha), f(p.value), f(p.condition)) for p in result.exceptional_points)
    return replace(result, expr=f(result.expr), conditions=f(result.conditions), kl=f(result.kl),
                   max_divergence=f(result.max_divergence), exceptional_points=points)


class _Combiner:
    """Combines the cases' values: one symmetric form where checked, else Piecewise over the cases."""

    def __init__(self, split: CaseSplit, results: dict, symbols):
        self.split, self.results, self.symbols = split, results, symbols
        self.forms: list[str] = []
        self.t = sp.Dummy("t", positive=True)

    def _points(self, kind):
        r, params = self.results[kind]
        return sample_values(set(self.symbols) | set(r.symbols), params, 3)

    def _same(self, a, b, kind) -> bool:
        if a == b:
            return True
        s, root, t = self.split.symbol, self.split.root, self.t
        # orders on both sides of 1, away from the usual removable order 1/2
        orders = (sp.Rational(3, 10), sp.Rational(7, 4), sp.Rational(5, 2))
        points = [{**p, t: (root - s).subs(p) if kind == "lt" else sp.Integer(0), ALPHA: orders[i % 3]}
                  for i, p in enumerate(self._points(kind))]
        if kind == "lt" and not all(p[t].is_positive for p in points):
            return False
        return equivalent(a, b, points) is not None

    def value(self, get):
        """The combined value of ``get(result)`` over the cases; None if a case has none."""
        values = {k: get(r) for k, (r, _) in self.results.items()}
        if any(v is None for v in values.values()):
            return None
        return self._combine(values)

    def _combine(self, values):
        s, root, t = self.split.symbol, self.split.root, self.t
        gt, lt, eq = values.get("gt"), values.get("lt"), values.get("eq")
        if gt is not None and lt is not None:
            mirrored = gt.xreplace({s: root + t})
            if self._same(mirrored, lt.xreplace({s: root - t}), "lt") and (
                    eq is None or self._same(gt.xreplace({s: root}), eq, "eq")):
                self.forms.append("symmetric")
                # in terms of t = s - r the other parameters often cancel (an identity: kept if shorter)
                shorter = sp.expand_mul(mirrored)
                mirrored = shorter if sp.count_ops(shorter) < sp.count_ops(mirrored) else mirrored
                return mirrored.xreplace({t: sp.Abs(s - root)})
        self.forms.append("piecewise")
        branches = []
        if gt is not None:
            folded = eq is not None and self._same(gt.xreplace({s: root}), eq, "eq")
            branches.append((gt, sp.Ge(s, root) if folded else sp.Gt(s, root)))
            eq = None if folded else eq
        if eq is not None:
            branches.append((eq, sp.Eq(s, root)))
        if lt is not None:
            branches.append((lt, sp.Lt(s, root)))
        if len(branches) == 1:
            return branches[0][0]
        return sp.Piecewise(*branches[:-1], (branches[-1][0], True))

    def condition(self) -> sp.Basic:
        """The finiteness conditions: the cases' own, each where its case holds (one if they agree)."""
        conds = {k: r.conditions for k, (r, _) in self.results.items()}
        distinct = set(conds.values())
        if len(distinct) == 1:
            return distinct.pop()
        return sp.Or(*[sp.And(self.split.relation(k), c) for k, c in conds.items()])

    def points(self) -> tuple[ExceptionalPoint, ...]:
        """Each removable order of any case, with its value combined over the cases (a case without
        that removable order contributes its general form there)."""
        s, root = self.split.symbol, self.split.root
        orders = []
        for kind, (r, _) in self.results.items():  # "eq" comes last: its orders have s = root
            for p in r.exceptional_points:
                known = [o.xreplace({s: root}) for o in orders] if kind == "eq" else orders
                if p.alpha not in known:
                    orders.append(p.alpha)
        out = []
        for a0 in orders:
            values = {}
            for kind, (r, _) in self.results.items():
                at = a0.xreplace({s: root}) if kind == "eq" else a0
                match = next((p.value for p in r.exceptional_points if p.alpha == at), None)
                values[kind] = match if match is not None else r.expr.xreplace({ALPHA: at})
            out.append(ExceptionalPoint(a0, self._combine(values)))
        return tuple(out)

    def summary(self) -> str:
        if self.forms and all(f == "symmetric" for f in self.forms):
            return (f"every case is the case {self.split.label('gt')} reflected, {self.split.symbol} -> "
                    f"{sp.sstr(2 * self.split.root)} - {self.split.symbol}: one form in "
                    f"|{sp.sstr(self.split.symbol - self.split.root)}| (checked)")
        if "symmetric" in self.forms:
            return "some values symmetric in |" + sp.sstr(self.split.symbol - self.split.root) + "|, the others Piecewise over the cases"
        return "Piecewise over the cases"


def split_with_domains(d) -> UndecidedSign | None:
    """The engine's first stage with the parameters' domains: split the support (:mod:`.pieces`); a sign
    neither the assumptions nor the domains decide is returned, for :func:`case_split`."""
    try:
        d.pieces = d.log.timed("split support", split_support, d.P, d.Q, d.x, d.support, d.params, seconds=d.seconds,
                               detail=lambda ps: "pieces: " + ", ".join(p.describe() for p in ps))
    except UndecidedSign as exc:
        return exc
    except (DerivationError, StepTimeout) as exc:
        note_unsplit(d, exc)
    return None


def note_unsplit(d, exc) -> None:
    """The split failed and no case split applies: numeric only, with the split's reason."""
    d.status = Status.NUMERIC_ONLY
    d.reasons.append(f"support not split: {exc}")
    d.done = True
