r"""The dominating pairs of a mechanism, oriented: which output densities a privacy loss distribution is
taken of.

For the neighbouring relation of a composition, every mechanism sees the same two inputs D, D'. Under
add/remove the two *orientations* are ``"remove"`` (D holds the record D' lacks) and ``"add"`` (the
reverse); the composed delta(epsilon) is the larger of the two compositions (Zhu, Dong and Wang 2022,
"Optimal accounting of differential privacy via characteristic function", AISTATS, Sect. 3 and Thm. 10
for Poisson subsampling; dp_accounting composes the two the same way).

* **Poisson subsampling, add/remove** (a mechanism made by :func:`rdpsym.subsample`, recognised by its
  ``subsampling`` record, :func:`rdpsym.mechanisms.subsample.is_as_subsampled`): each pair is
  ``(base, (1 - q) base + q other)``; ``remove`` is (mixture || base), ``add`` is (base || mixture).
* **Sampling without replacement, replace-one** (the same record, ``scheme="without_replacement"``): the
  base must be a location family ``f(x - t)``, ``|t| <= sensitivity``; the pair is
  ``((1 - q) f(x) + q f(x - s), (1 - q) f(x) + q f(x + s))`` with s the sensitivity: the record in the
  sample is replaced, shifting the query by at most s either way, and with probability 1 - q the
  replaced record is not in the sample (Balle, Barthe and Gaboardi 2018, "Privacy amplification by
  subsampling", NeurIPS, Thm. 9 and Sect. 5; Zhu, Dong and Wang 2022, Thm. 11). The relation is
  symmetric: both directions go into both orientations.
* **Any other mechanism**: its adjacent pairs are all neighbouring inputs up to symmetry, so both
  directions of every pair go into both orientations (the upper bound takes their worst). The lower
  bound needs one *realisable* pair per orientation: the worst pair X with its reverse (the element-wise
  minimum of their optimistic distributions, :mod:`.distribution`), or X alone when its reverse is its
  mirror image (below).

**Families of pairs, reduced by proof** (:func:`family_reduction`). A family ``(f(x), f(x - t))``,
``t in [-D, D]``, with ``log f`` concave is dominated by its ends: the likelihood ratio is monotone, the
Neyman-Pearson tests are thresholds, and the trade-off curve ``T_t(a) = F(F^{-1}(1 - a) - t)`` falls as
``t`` grows (Dong, Roth and Su 2022, "Gaussian differential privacy", JRSS-B, Sect. 2 and Prop. 2.2 on
post-processing: a pair with a lower trade-off curve is a garbling away), so every interior shift is a
post-processing of an end and composes below it; the same kernel maps the Poisson mixtures
``(1 - q) f + q f_D`` to ``(1 - q) f + q f_t``, so subsampling keeps the reduction. When ``f`` is also
symmetric, ``x -> t - x`` maps the pair at ``t`` to its reverse and ``x -> -x`` maps ``-D`` to ``D``: one
directed pair stands for the whole family, both directions and both ends. Each premise is checked
symbolically (sympy) on the mechanism's own densities, with its parameters as symbols: the location
form ``Q = P(x - t)``, ``T`` symmetric, ``d^2/dx^2 log f <= 0`` term by term (Dirac deltas with
non-positive weights allowed: the kinks of ``-|x|``), ``f(-x) = f(x)``.

A family that is not reduced is sampled as the privacy profile samples it
(:meth:`rdpsym.specify.adjacency.AdjacentFamily.shifts`: the ends of T and three interior shifts): a
heuristic (a supremum between the samples is not seen), and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..._numbers import ArgumentError
from ...numeric.driver import substitute_values
from ...specify.adjacency import AdjacentFamily
from ...specify.mechanism import Mechanism

__all__ = ["DirectedPair", "OrientedPairs", "ORIENTATIONS", "oriented_pairs"]

ORIENTATIONS = ("remove", "add")
#: interior shifts sampled in a family of pairs (as the privacy profile does)
INTERIOR_SHIFTS = 3


@dataclass(frozen=True)
class DirectedPair:
    """Output densities (P || Q) with every parameter replaced by a number: the privacy loss is
    log P(x) - log Q(x) for x drawn from P."""

    P: sp.Expr
    Q: sp.Expr
    x: sp.Symbol
    support: sp.Set
    label: str

    def reversed(self) -> "DirectedPair":
        return DirectedPair(self.Q, self.P, self.x, self.support, f"reverse of {self.label}")


@dataclass(frozen=True)
class OrientedPairs:
    """``upper[o]``: the directed pairs whose worst bounds orientation o; ``lower[o]``: the realisable
    candidates for the lower bound in orientation o; ``known`` is False when the orientation of the
    mechanism's pairs is not known (then the lower bound needs a pair whose two directions agree).
    ``mirrored``: each pair's reverse is proved to be its mirror image (same distribution);
    ``heuristics``: what the pairs rest on that is not proved."""

    upper: dict
    lower: dict
    known: bool
    relation: str
    mirrored: bool = False
    heuristics: tuple = ()


@dataclass(frozen=True)
class Reduction:
    """A family proved to be dominated by its ends: ``ends`` (``"both"`` or ``"upper"`` when the base is
    symmetric: one end stands for both)."""

    ends: str
    why: str


_REDUCTIONS: dict = {}


def _is_zero(e) -> bool:
    try:
        return sp.simplify(e) == 0
    except Exception:  # noqa: BLE001 - sympy may fail on odd input: then nothing is proved
        return False


def _concave_terms(d2) -> bool:
    """Every term of the (distributional) second derivative is <= 0: sympy's sign facts, Dirac deltas with
    non-positive weights allowed."""
    terms = d2.args if isinstance(d2, sp.Add) else (d2,)
    for term in terms:
        if term.is_nonpositive:
            continue
        deltas = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.DiracDelta)]
        if len(deltas) == 1 and len(deltas[0].args) == 1:
            coeff = sp.Mul(*[f for f in sp.Mul.make_args(term) if f is not deltas[0]])
            if coeff.is_nonpositive:
                continue
        return False
    return True


def family_reduction(family: AdjacentFamily, x: sp.Symbol, values: dict | None = None) -> Reduction | None:
    """The proved reduction of ``family`` to its ends (module docstring), or None. Proved with the
    parameters as symbols when sympy can; otherwise at ``values`` (a proof for those values only)."""
    found = _reduction(family, x)
    if found is None and values:
        try:
            subs = {s: sp.nsimplify(values[s.name]) if not isinstance(values[s.name], sp.Basic) else values[s.name]
                    for s in family.P.free_symbols | family.Q.free_symbols | family.over.free_symbols
                    if s.name in values and s != x and s != family.shift}
            found = _reduction(family.subs(subs), x) if subs else None
        except Exception:  # noqa: BLE001 - a failed proof proves nothing
            found = None
    return found


def _reduction(family: AdjacentFamily, x: sp.Symbol) -> Reduction | None:
    from .logform import log_form

    key = (family, x)
    if key in _REDUCTIONS:
        return _REDUCTIONS[key]
    out = None
    t = family.shift
    try:
        ok = (not family.is_vector and not family.P.has(t) and isinstance(family.over, sp.Interval)
              and _is_zero(family.over.start + family.over.end)
              and _is_zero(family.Q - family.P.subs(x, x - t)))
        if ok:
            g = log_form(family.P, x)
            if not g.has(sp.log) or all(not a.has(x) for a in g.atoms(sp.log)):
                if _concave_terms(sp.diff(g, x, 2)):
                    sym = _is_zero(family.P.subs(x, -x) - family.P)
                    out = Reduction("upper" if sym else "both",
                                    "location family with log-concave" + (" symmetric" if sym else "") + " base")
    except Exception:  # noqa: BLE001 - a failed proof proves nothing
        out = None
    _REDUCTIONS[key] = out
    return out


def _members(pair, values: dict, x, support, reduced: Reduction | None = None) -> list[tuple]:
    """(P, Q, label, support) of a pair, or of the shifts of a family (its ends when ``reduced``, else the sampled
    shifts), with the parameters substituted."""
    if isinstance(pair, AdjacentFamily):
        if pair.is_vector:
            raise ArgumentError("mechanism", "a mechanism with one output coordinate (the privacy loss "
                                "distribution is computed for 1-D outputs)", "a vector family")
        out = []
        shifts = pair.shifts(values, INTERIOR_SHIFTS)
        if reduced is not None:
            shifts = [shifts[-1]] if reduced.ends == "upper" else [shifts[0], shifts[-1]]
        for shift in shifts:
            P, Q, S = substitute_values(pair.P.subs(pair.shift, shift), pair.Q.subs(pair.shift, shift), x, support,
                                        values)
            if P == Q:
                continue  # the shift 0 of a location family: no privacy loss
            out.append((P, Q, f"{pair.label} at {sp.sstr(pair.shift)} = {sp.sstr(shift)}", S))
        return out
    P, Q, S = substitute_values(pair.P, pair.Q, x, support, values)
    return [(P, Q, pair.label, S)]


def _location_shift(base: Mechanism, values: dict):
    """(f(x), f(x - s), f(x + s)) of a location-family base with sensitivity s, or None."""
    for pair in base.pairs:
        if isinstance(pair, AdjacentFamily) and not pair.is_vector:
            lo, hi = pair.shifts(values, 0)
            if sp.simplify(lo + hi) != 0 or pair.P.has(pair.shift):
                continue
            if sp.simplify(pair.Q.subs(pair.shift, 0) - pair.P) != 0:
                continue
            return pair.P, pair.Q.subs(pair.shift, hi), pair.Q.subs(pair.shift, lo)
    return None


_SAMPLED = ("a family of pairs not reduced by proof: its supremum over the shifts is taken over the ends and "
            f"{INTERIOR_SHIFTS} interior shifts (a sample)")
_WOR = ("sampling without replacement: the replaced record's contributions at +s and -s taken as the worst "
        "pair (Balle, Barthe and Gaboardi 2018, Thm. 9; the supremum over other pairs is not proved here)")
_MIRRORS: dict = {}


def _mirror(other: AdjacentFamily, first: AdjacentFamily, x: sp.Symbol) -> bool:
    """``other`` at shift t is ``first`` at t reflected by x -> t - x (proved symbolically)."""
    key = (other, first, x)
    if key not in _MIRRORS:
        t = first.shift
        ok = (other.shift == t and _is_zero(other.P.subs(x, t - x) - first.P)
              and _is_zero(other.Q.subs(x, t - x) - first.Q))
        _MIRRORS[key] = ok
    return _MIRRORS[key]


def oriented_pairs(mechanism: Mechanism, values: dict) -> OrientedPairs:
    """The oriented dominating pairs of ``mechanism`` at parameter ``values`` (module docstring)."""
    from ...mechanisms.subsample import is_as_subsampled

    if not isinstance(mechanism, Mechanism):
        raise ArgumentError("mechanism", "an rdpsym Mechanism", mechanism)
    if isinstance(mechanism.variable, tuple):
        raise ArgumentError("mechanism", "a mechanism with one output coordinate (the privacy loss distribution "
                            "is computed for 1-D outputs)", mechanism.name)
    if mechanism.neighbours != "all":
        raise ArgumentError("mechanism", "a mechanism whose pairs are all neighbouring inputs (neighbours='all'); "
                            f"{mechanism.name!r} lists only some, so no guarantee follows", mechanism.name)
    x, support = mechanism.variable, mechanism.support
    spec = mechanism.subsampling
    if spec is not None and is_as_subsampled(mechanism):
        rate = {spec.rate.name: values[spec.rate.name]} if spec.value is None else {}
        q = spec.rate.symbol if spec.value is None else spec.value
        base = spec.base
        base_fams = [p for p in base.pairs if isinstance(p, AdjacentFamily)]
        red = (family_reduction(base_fams[0], base.variable, values) if len(base.pairs) == 1 and base_fams
               else None)
        if spec.scheme == "poisson":
            fams = list(mechanism.pairs)
            heur = ()
            if red is None:
                heur = (_SAMPLED,) if any(isinstance(f, AdjacentFamily) for f in fams) else ()
            elif red.ends == "upper":
                first = [f for f in fams if isinstance(f, AdjacentFamily) and not f.P.has(f.shift)]
                others = [f for f in fams if f not in first]
                if first and all(isinstance(o, AdjacentFamily) and any(_mirror(o, f1, x) for f1 in first)
                                 for o in others):
                    fams = first
            remove, add = [], []
            for pair in fams:
                for P, Q, label, S in _members(pair, values, x, support, red):
                    add.append(DirectedPair(P, Q, x, S, f"add: {label}"))
                    remove.append(DirectedPair(Q, P, x, S, f"remove: {label}"))
            return OrientedPairs({"remove": tuple(remove), "add": tuple(add)},
                                 {"remove": tuple(remove), "add": tuple(add)}, True, "add_remove", False, heur)
        base_values = {k: v for k, v in values.items() if k not in rate}
        found = _location_shift(base, base_values)
        if found is None:
            raise ArgumentError("mechanism", "a subsampled mechanism whose base is a location family f(x - t), "
                                "|t| <= sensitivity (sampling without replacement under replace-one is analysed "
                                "for those)", mechanism.name)
        f0, fplus, fminus = found
        # the rate stays a symbol when it is a parameter: substitute_values replaces it with the rest
        A = (1 - q) * f0 + q * fplus
        B = (1 - q) * f0 + q * fminus
        P, Q, S = substitute_values(A, B, x, support, values)
        pair = DirectedPair(P, Q, x, S, "replace-one: the record in the sample replaced, shift +s against -s")
        # a symmetric base: x -> -x maps the pair to its reverse
        mirrored = red is not None and red.ends == "upper"
        both = (pair,) if mirrored else (pair, pair.reversed())
        return OrientedPairs({"remove": both, "add": both}, {"remove": both, "add": both}, False, "replace_one",
                             mirrored, (_WOR,))
    directed, heur, mirrored = [], [], True
    for pair in mechanism.pairs:
        red = (family_reduction(pair, x, values) if isinstance(pair, AdjacentFamily) and not pair.is_vector
               else None)
        if isinstance(pair, AdjacentFamily) and red is None:
            heur.append(_SAMPLED)
        for P, Q, label, S in _members(pair, values, x, support, red):
            d = DirectedPair(P, Q, x, S, label)
            if red is not None and red.ends == "upper":
                directed.append(d)  # its reverse is its mirror image
            else:
                directed += [d, d.reversed()]
                mirrored = False
    if not directed:
        # every pair has P = Q: the mechanism releases nothing about the record
        return OrientedPairs({"remove": (), "add": ()}, {"remove": (), "add": ()}, True, "any")
    both = tuple(directed)
    return OrientedPairs({"remove": both, "add": both}, {"remove": both, "add": both}, False, "any", mirrored,
                         tuple(dict.fromkeys(heur)))
