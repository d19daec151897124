"""Mechanisms: output densities (or pmfs) for pairs of adjacent inputs, over a support.

A mechanism's RDP at order alpha is

    eps(alpha) = max over adjacent pairs (P, Q) of max(D_alpha(P||Q), D_alpha(Q||P))

(Mironov 2017, Def. 4: both orders of each adjacent pair count). The engine drops the reverse direction
only when it establishes a symmetry mechanically, see :func:`rdpsym.derive.engine.rdp`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from .params import Parameter

__all__ = ["AdjacentPair", "Mechanism", "is_discrete_support"]


def is_discrete_support(support: sp.Set) -> bool:
    """True for countable supports (finite sets, integers, ``Range``), False for intervals."""
    if isinstance(support, (sp.FiniteSet, sp.Range)) or support in (sp.S.Integers, sp.S.Naturals, sp.S.Naturals0):
        return True
    if isinstance(support, sp.Union):
        kinds = {is_discrete_support(a) for a in support.args}
        if len(kinds) == 1:
            return kinds.pop()
        raise ValueError("support: mixing discrete and continuous pieces is not supported")
    if isinstance(support, sp.Interval) or support == sp.S.Reals:
        return False
    if isinstance(support, sp.Intersection) and sp.S.Integers in support.args:
        return True
    raise ValueError(f"support: unsupported set {sp.sstr(support)}; use an Interval, Reals, Integers, Range or FiniteSet")


@dataclass(frozen=True)
class AdjacentPair:
    """Output distributions P = M(D) and Q = M(D') of a mechanism on adjacent inputs D, D'."""

    P: sp.Expr
    Q: sp.Expr
    label: str = "D, D'"


@dataclass(frozen=True)
class Mechanism:
    """A noise mechanism specified by its output densities.

    Attributes
    ----------
    name: registry name (``"laplace"``).
    variable: the output variable ``x`` (a real symbol; integer for pmfs).
    support: a sympy set: ``Reals``, an ``Interval``, ``Integers``, a ``Range`` or a ``FiniteSet``.
    pairs: the adjacent pairs whose divergences bound the mechanism's RDP.
    parameters: the mechanism's parameters, with domains and typical ranges.
    title, description, references: for reports; references cite down to the proposition.
    """

    name: str
    variable: sp.Symbol
    support: sp.Set
    pairs: tuple[AdjacentPair, ...]
    parameters: tuple[Parameter, ...]
    title: str = ""
    description: str = ""
    references: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        if not isinstance(self.support, sp.Set):
            raise TypeError(f"support: must be a sympy Set, got {type(self.support).__name__}")
        if not self.pairs:
            raise ValueError("pairs: a mechanism needs at least one adjacent pair")
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"parameters: duplicate names in {names}")
        known = {p.symbol for p in self.parameters} | {self.variable}
        for pair in self.pairs:
            stray = (pair.P.free_symbols | pair.Q.free_symbols) - known
            if stray:
                raise ValueError(
                    f"pairs: densities use symbols {sorted(map(str, stray))} that are not declared parameters"
                )

    @property
    def params(self) -> dict[str, sp.Symbol]:
        """Parameter names mapped to their sympy symbols."""
        return {p.name: p.symbol for p in self.parameters}

    @property
    def parameter_by_name(self) -> dict[str, Parameter]:
        return {p.name: p for p in self.parameters}

    @property
    def discrete(self) -> bool:
        return is_discrete_support(self.support)

    def substitutions(self, values: dict) -> dict[sp.Symbol, sp.Expr]:
        """Validate ``values`` (name -> number) and map them to symbols; unknown names are an error."""
        by_name = self.parameter_by_name
        subs = {}
        for key, value in values.items():
            if key not in by_name:
                raise ValueError(f"{key!r} is not a parameter of {self.name!r}; its parameters are {sorted(by_name)}")
            by_name[key].validate(value)
            subs[by_name[key].symbol] = sp.Rational(value) if isinstance(value, float) else sp.S(value)
        return subs

    def _repr_markdown_(self) -> str:
        rows = "\n".join(
            f"| `{p.name}` | ${p.latex}$ | ${sp.latex(p.domain)}$ | {p.typical} | {p.meaning} |" for p in self.parameters
        )
        return (
            f"**{self.title or self.name}** — support ${sp.latex(self.support)}$\n\n"
            "| name | symbol | domain | typical | meaning |\n|---|---|---|---|---|\n" + rows
        )
