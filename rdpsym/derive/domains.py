"""The parameters' declared domains, written so that sympy's assumptions can read signs over them.

sympy's assumptions on a symbol can say d > 0 but not d < 1; a :class:`~rdpsym.Parameter` with domain
(0, 1) says both. A domain may also relate parameters: the domain (m1, oo) of m2 declares m1 < m2. For
the sign oracle (:mod:`.sign`), each parameter s with a domain is written through a fresh symbol u whose
assumptions sympy does understand (a *sweep*, :func:`sweeps`), and the sign of the result is read from the
assumptions:

    (a, oo):  s = a + u            (-oo, b):  s = b - u            (a, b):  s = (a + b u)/(1 + u)
    [a, b):   s = (a + b u)/(1 + u) with u >= 0,   (a, b]:  s = (b + a u)/(1 + u) with u >= 0,

with u > 0 (u >= 0 at a closed end). Each map sends u's range onto the interval, and a closed bounded
[a, b] is covered by either one-sided map onto [a, oo) or (-oo, b]: every substitution describes a set
that contains the domain, so a sign decided after it holds on the whole domain. Endpoints that are other
parameters are substituted in turn (dependents first); a constraint that would close a cycle is
dropped, which again only enlarges the set. A sign that is not decided this way is not shown, never guessed.

The module also narrows domains for a case split (:func:`relation_domain`) and moves sample points inside
them (:func:`point_within_domains`).
"""

from __future__ import annotations

import itertools
from typing import Iterable, Mapping, Sequence

import sympy as sp

__all__ = ["constraints", "sweeps", "point_within_domains", "relation_domain"]

#: at most this many choices of one interval per parameter are tried (a domain that is an
#: intersection of intervals offers one choice per interval)
_MAX_CHOICES = 16


def _intervals(domain: sp.Set) -> list[tuple]:
    """The constraints a domain puts on its parameter, each ``("in", lo, hi, lo_open, hi_open)`` or
    ``("eq", value)``; every one of them holds on the whole domain (a Range or a Union gives its hull)."""
    if domain == sp.S.Reals or domain is sp.S.EmptySet:
        return []
    if isinstance(domain, sp.Interval):
        lo, hi = domain.start, domain.end
        if lo != -sp.oo and hi != sp.oo and not (domain.left_open or domain.right_open):
            # [a, b] as [a, oo) and (-oo, b]: no map of one open-ended symbol onto it is in sympy's reach
            return [("in", lo, sp.oo, False, True), ("in", -sp.oo, hi, True, False)]
        return [("in", lo, hi, domain.left_open, domain.right_open)]
    if isinstance(domain, sp.Intersection):
        return [c for a in domain.args for c in _intervals(a)]
    if isinstance(domain, sp.FiniteSet) and len(domain) == 1:
        return [("eq", next(iter(domain)))]
    try:
        lo, hi = domain.inf, domain.sup
    except (NotImplementedError, AttributeError, TypeError, ValueError):
        return []
    if lo == -sp.oo and hi == sp.oo:
        return []
    return [("in", lo, hi, False, False)]


def constraints(params: Sequence | None) -> dict[sp.Symbol, list[tuple]]:
    """Each parameter's constraints from its declared domain (see :func:`_intervals`)."""
    out: dict[sp.Symbol, list[tuple]] = {}
    for p in params or ():
        found = _intervals(p.domain)
        if found:
            out.setdefault(p.symbol, []).extend(found)
    return out


def _replacement(c: tuple) -> sp.Expr | None:
    """The expression of a fresh positive (nonnegative at a closed end) symbol that sweeps constraint c."""
    if c[0] == "eq":
        return c[1]
    _, lo, hi, lo_open, hi_open = c

    def fresh(open_end: bool) -> sp.Dummy:
        return sp.Dummy("u", positive=True) if open_end else sp.Dummy("u", nonnegative=True)

    if lo != -sp.oo and hi != sp.oo:
        if hi_open:
            u = fresh(lo_open)  # (a, b) or [a, b): a at u = 0, b as u -> oo
            return (lo + hi * u) / (1 + u)
        if lo_open:
            u = fresh(False)  # (a, b]: b at u = 0, a as u -> oo
            return (hi + lo * u) / (1 + u)
        return lo + fresh(False)
    if lo != -sp.oo:
        return lo + fresh(lo_open)
    if hi != sp.oo:
        return hi - fresh(hi_open)
    return None


def _substitute(expr: sp.Expr, chosen: Mapping[sp.Symbol, tuple]) -> sp.Expr:
    """``expr`` with every constrained parameter replaced by its sweep, dependents first."""
    pending = {s: _replacement(c) for s, c in chosen.items()}
    pending = {s: r for s, r in pending.items() if r is not None}
    done: set = set()
    while True:
        present = [s for s in expr.free_symbols if s in pending and s not in done]
        if not present:
            return expr
        # a parameter that the replacement of another one present refers to waits until that one is
        # substituted (m2 -> m1 + u before m1 -> -u'); a parameter that reappears after its own
        # substitution keeps only its assumptions, which describes a larger set again
        free = [s for s in present if not any(s in pending[t].free_symbols for t in present if t != s)]
        if not free:
            # a cycle of relations: drop one of them (the set described only grows)
            done.add(sorted(present, key=lambda s: s.name)[0])
            continue
        s = sorted(free, key=lambda s: s.name)[0]
        expr = expr.xreplace({s: pending[s]})
        done.add(s)


def _choices(found: Mapping[sp.Symbol, list[tuple]], symbols: Iterable[sp.Symbol]):
    relevant = {s: found[s] for s in symbols if s in found}
    # the endpoints' parameters count too: m2 in (m1, oo) needs m1's own domain
    frontier = list(relevant)
    while frontier:
        s = frontier.pop()
        for c in relevant[s]:
            for t in (c[1].free_symbols if c[0] == "eq" else c[1].free_symbols | c[2].free_symbols):
                if t in found and t not in relevant:
                    relevant[t] = found[t]
                    frontier.append(t)
    if not relevant:
        return
    keys = sorted(relevant, key=lambda s: s.name)
    for combo in itertools.islice(itertools.product(*(relevant[k] for k in keys)), _MAX_CHOICES):
        yield dict(zip(keys, combo))


def sweeps(expr: sp.Expr, params: Sequence | None):
    """``expr`` with the parameters written through their sweeps (module docstring), one expression for
    each choice of one constraint per parameter (at most :data:`_MAX_CHOICES`). A sign that sympy's
    assumptions read off one of them holds on the whole domain (:mod:`.sign` reads them)."""
    found = constraints(params)
    for chosen in _choices(found, expr.free_symbols):
        yield _substitute(expr, chosen)


def relation_domain(symbol: sp.Symbol, kind: str, root: sp.Expr) -> sp.Set:
    """The set of ``symbol`` values with ``symbol > root`` (kind ``"gt"``), ``< root`` (``"lt"``) or
    ``= root`` (``"eq"``): a case of a case split, as a domain."""
    if kind == "gt":
        return sp.Interval.open(root, sp.oo)
    if kind == "lt":
        return sp.Interval.open(-sp.oo, root)
    return sp.FiniteSet(root)


def point_within_domains(point: dict, params: Sequence | None, index: int = 0) -> dict:
    """``point`` (parameter values) with each value that lies outside its parameter's domain, evaluated
    at the other values, moved inside it (deterministically, by ``index``); values inside are kept.

    Domains that refer to other parameters (a declared m1 < m2, or a case of a case split) are
    evaluated after those parameters' values are settled."""
    by_symbol = {p.symbol: p for p in params or () if p.symbol in point}
    settled = {s for s in point if s not in by_symbol or not (by_symbol[s].domain.free_symbols & set(point))}
    out = dict(point)
    order = [s for s in sorted(point, key=lambda s: s.name) if s in settled]
    waiting = [s for s in sorted(point, key=lambda s: s.name) if s not in settled]
    while waiting:
        ready = [s for s in waiting if not (by_symbol[s].domain.free_symbols & set(waiting))]
        ready = ready or waiting[:1]
        order += ready
        waiting = [s for s in waiting if s not in ready]
    for s in order:
        if s not in by_symbol:
            continue
        p = by_symbol[s]
        domain = p.domain.subs({t: out[t] for t in p.domain.free_symbols if t in out})
        if domain.free_symbols or domain.contains(out[s]) is not sp.false:
            continue
        inside = _inside(domain, p.typical, index)
        if inside is not None:
            out[s] = inside
    return out


def _inside(domain: sp.Set, typical, index: int):
    """A rational value inside a numeric domain (its hull's interior, or its one element), or None."""
    if isinstance(domain, sp.FiniteSet):
        return next(iter(domain)) if len(domain) == 1 else None
    try:
        lo, hi = domain.inf, domain.sup
    except (NotImplementedError, AttributeError, TypeError, ValueError):
        return None
    if domain is sp.S.EmptySet or lo == hi or not (lo.is_number and hi.is_number):
        return None
    width = sp.Rational(typical[1] - typical[0]).limit_denominator(10**6) if typical else sp.Integer(1)
    step = width / 4 * (index + 1)
    if lo != -sp.oo and hi != sp.oo:
        value = lo + (hi - lo) * sp.Rational(index + 1, index + 3)
    elif lo != -sp.oo:
        value = lo + step
    elif hi != sp.oo:
        value = hi - step
    else:
        return None
    if isinstance(value, sp.Float):
        value = sp.Rational(value).limit_denominator(10**9)
    return value if domain.contains(value) is sp.true else None
