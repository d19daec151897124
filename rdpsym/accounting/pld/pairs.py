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
  bound needs one *realisable* pair per orientation: the pair with the largest profile, used in both
  orientations only when its two directions have the same profile (checked on the grid); otherwise the
  lower bound uses no privacy loss for this mechanism (valid, and said so in the method).

A family of pairs over shifts t is sampled as the privacy profile samples it
(:meth:`rdpsym.specify.adjacency.AdjacentFamily.shifts`: the ends of T and three interior shifts).
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
    mechanism's pairs is not known (then the lower bound needs a pair whose two directions agree)."""

    upper: dict
    lower: dict
    known: bool
    relation: str


def _members(pair, values: dict, x, support) -> list[tuple[sp.Expr, sp.Expr, str]]:
    """(P, Q, label) of a pair, or of the sampled shifts of a family, with the parameters substituted."""
    if isinstance(pair, AdjacentFamily):
        if pair.is_vector:
            raise ArgumentError("mechanism", "a mechanism with one output coordinate (the privacy loss "
                                "distribution is computed for 1-D outputs)", "a vector family")
        out = []
        for shift in pair.shifts(values, INTERIOR_SHIFTS):
            P, Q, _ = substitute_values(pair.P.subs(pair.shift, shift), pair.Q.subs(pair.shift, shift), x, support,
                                        values)
            if P == Q:
                continue  # the shift 0 of a location family: no privacy loss
            out.append((P, Q, f"{pair.label} at {sp.sstr(pair.shift)} = {sp.sstr(shift)}"))
        return out
    P, Q, _ = substitute_values(pair.P, pair.Q, x, support, values)
    return [(P, Q, pair.label)]


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
        if spec.scheme == "poisson":
            remove, add = [], []
            for pair in mechanism.pairs:
                for P, Q, label in _members(pair, values, x, support):
                    add.append(DirectedPair(P, Q, x, support, f"add: {label}"))
                    remove.append(DirectedPair(Q, P, x, support, f"remove: {label}"))
            return OrientedPairs({"remove": tuple(remove), "add": tuple(add)},
                                 {"remove": tuple(remove), "add": tuple(add)}, True, "add_remove")
        base_values = {k: v for k, v in values.items() if k not in rate}
        found = _location_shift(spec.base, base_values)
        if found is None:
            raise ArgumentError("mechanism", "a subsampled mechanism whose base is a location family f(x - t), "
                                "|t| <= sensitivity (sampling without replacement under replace-one is analysed "
                                "for those)", mechanism.name)
        f0, fplus, fminus = found
        # the rate stays a symbol when it is a parameter: substitute_values replaces it with the rest
        A = (1 - q) * f0 + q * fplus
        B = (1 - q) * f0 + q * fminus
        P, Q, _ = substitute_values(A, B, x, support, values)
        pair = DirectedPair(P, Q, x, support, "replace-one: the record in the sample replaced, shift +s against -s")
        both = (pair, pair.reversed())
        return OrientedPairs({"remove": both, "add": both}, {"remove": both, "add": both}, False, "replace_one")
    directed = []
    for pair in mechanism.pairs:
        for P, Q, label in _members(pair, values, x, support):
            d = DirectedPair(P, Q, x, support, label)
            directed += [d, d.reversed()]
    if not directed:
        # every pair has P = Q: the mechanism releases nothing about the record
        return OrientedPairs({"remove": (), "add": ()}, {"remove": (), "add": ()}, True, "any")
    both = tuple(directed)
    return OrientedPairs({"remove": both, "add": both}, {"remove": both, "add": both}, False, "any")
