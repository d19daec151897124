"""Mechanisms: output densities (or pmfs) for pairs of adjacent inputs, over a support.

A mechanism's RDP at order alpha is

    eps(alpha) = max over adjacent pairs (P, Q) of max(D_alpha(P||Q), D_alpha(Q||P))

(Mironov 2017, Def. 4: both orders of each adjacent pair count). A pair may be a whole family
(:class:`~rdpsym.specify.adjacency.AdjacentFamily`): pairs (P_t, Q_t) for every shift t in a set T, whose
contribution is the supremum over t. The engine drops the reverse direction only when it establishes a
symmetry mechanically, see :func:`rdpsym.derive.mechanism_rdp.rdp`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import sympy as sp

from .._numbers import ArgumentError
from .adjacency import AdjacentFamily, AdjacentPair
from .params import Parameter, ParameterSet
from .variables import as_variables, coordinate_supports, is_multivariate

__all__ = ["AdjacentPair", "AdjacentFamily", "Mechanism", "is_discrete_support"]


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


#: What a mechanism's ``pairs`` cover: all neighbouring inputs (the RDP) or some (a lower bound).
NEIGHBOURS = ("all", "some")


@dataclass(frozen=True)
class Mechanism(ParameterSet):
    """A noise mechanism specified by its output densities.

    Attributes
    ----------
    name: registry name (``"laplace"``).
    variable: the output variable ``x`` (a real symbol; integer for pmfs), or a tuple ``(x1, ..., xd)``
        of them for a vector output (read by :func:`rdpsym.specify.variables.as_variables`; a tuple of one
        becomes its symbol, over its one coordinate set).
    support: a sympy set: ``Reals``, an ``Interval``, ``Integers``, a ``Range`` or a ``FiniteSet``; for a
        tuple ``variable``, a ``ProductSet`` of such sets, one per variable (``S.Reals**2``).
    pairs: the adjacent pairs whose divergences bound the mechanism's RDP: :class:`AdjacentPair`
        objects, and :class:`~rdpsym.specify.adjacency.AdjacentFamily` objects (a pair for every shift
        t in a set; the RDP takes the supremum over t). ``families`` lists the latter.
    parameters: the mechanism's parameters, with domains and typical ranges.
    title, description, references: for reports; references cite down to the proposition.
    defaults: ``(name, value)`` pairs, example values a command uses for parameters the user gave no
        value for (``rdpsym plot conversion``); validated like any value.
    display: ``(name, expression, label)`` triples, how plots show a parameter: the value of
        ``expression`` (in that parameter's symbol) under ``label``. The Laplace mechanism's scale b is
        shown as 1/λ (Mironov 2017, Fig. 1): ``("b", 1/b, "1/λ")``.
    curve_provider: ``None`` or a callable ``provider(mechanism, group)`` returning the accountant's
        float curve (a :class:`rdpsym.accounting.MechanismCurve`) for groups of ``group``, or ``None``
        to use the generic one (derived closed form, else numeric). It is asked by
        :func:`rdpsym.accounting.mechanism_curve` (``method="auto"``) instead of any name. Use a
        module-level function: it pickles by reference (process pools, Dask) and compares by identity,
        so a mechanism with a provider is never equal to (never shares a cached curve with) one without.

    neighbours: ``"all"`` (default) when ``pairs`` are every pair of neighbouring inputs up to
        symmetry, or pairs shown to dominate them, so the divergence is the mechanism's RDP; ``"some"``
        when they are particular neighbouring inputs (a known bad case, with no argument that it is the
        worst): the divergence is then only a lower bound on the RDP, status ``lower_bound``, never
        used as a guarantee.
    subsampling: ``None``, or the :class:`~rdpsym.specify.subsampling.Subsampling` this mechanism was
        made by (:func:`rdpsym.subsample`): its base mechanism, rate, scheme and neighbouring relation.
        The derivation and the accountant read it; the pairs are then the subsampled output densities.

    Behaviour is chosen by these attributes, never by ``name``: a user's mechanism that happens to share
    a built-in's name gets its own curve.
    """

    name: str
    variable: sp.Symbol | tuple[sp.Symbol, ...]
    support: sp.Set
    pairs: tuple[AdjacentPair | AdjacentFamily, ...]
    parameters: tuple[Parameter, ...]
    title: str = ""
    description: str = ""
    references: tuple[str, ...] = field(default_factory=tuple)
    defaults: tuple[tuple[str, Any], ...] = ()
    display: tuple[tuple[str, sp.Expr, str], ...] = ()
    curve_provider: Callable[..., Any] | None = field(default=None, repr=False)
    subsampling: Any = field(default=None, repr=False)
    neighbours: str = "all"

    def __post_init__(self):
        if not isinstance(self.support, sp.Set):
            raise TypeError(f"support: must be a sympy Set, got {type(self.support).__name__}")
        if not self.pairs:
            raise ValueError("pairs: a mechanism needs at least one adjacent pair")
        if self.neighbours not in NEIGHBOURS:
            raise ArgumentError("neighbours", f"one of {NEIGHBOURS}", self.neighbours)
        self.check_parameter_set()
        names = [p.name for p in self.parameters]
        object.__setattr__(self, "pairs", tuple(self.pairs))
        if is_multivariate(self.variable):
            variables = as_variables(self.variable, "variable")
            coords = coordinate_supports(self.support, len(variables), "support")
            # a tuple of one is the scalar case: its symbol over its one coordinate set
            object.__setattr__(self, "variable", variables if len(variables) > 1 else variables[0])
            if len(variables) == 1:
                object.__setattr__(self, "support", coords[0])
        known = {p.symbol for p in self.parameters} | set(self.variables)
        for pair in self.pairs:
            if not isinstance(pair, (AdjacentPair, AdjacentFamily)):
                raise ArgumentError("pairs", "AdjacentPair or AdjacentFamily objects", pair)
            shift = set(pair.shift_symbols) if isinstance(pair, AdjacentFamily) else set()
            if isinstance(pair, AdjacentFamily):
                self._check_family(pair, known, names)
            stray = (pair.P.free_symbols | pair.Q.free_symbols) - known - shift
            if stray:
                raise ValueError(
                    f"pairs: densities use symbols {sorted(map(str, stray))} that are not declared parameters"
                )
        by_name = self.parameter_by_name
        display = []
        for entry in self.display:
            try:
                key, expr, label = entry
            except (TypeError, ValueError):
                raise ValueError(f"display: expected (name, expression, label) triples; got {entry!r}") from None
            if key not in by_name:
                raise ValueError(f"display: {key!r} is not a parameter; the parameters are {sorted(by_name)}")
            if not isinstance(expr, sp.Expr):
                raise TypeError(f"display: the expression for {key!r} must be a sympy expression, got {type(expr).__name__}")
            if not expr.free_symbols <= {by_name[key].symbol}:
                raise ValueError(f"display: the expression for {key!r} may use only its symbol; got {sp.sstr(expr)}")
            display.append((key, expr, str(label)))
        object.__setattr__(self, "display", tuple(display))
        if self.subsampling is not None:
            from .subsampling import Subsampling

            if not isinstance(self.subsampling, Subsampling):
                raise ArgumentError("subsampling", "None or a Subsampling", self.subsampling)
        if self.curve_provider is not None and not callable(self.curve_provider):
            raise TypeError(f"curve_provider: must be callable or None, got {type(self.curve_provider).__name__}")

    def _check_family(self, family: AdjacentFamily, known: set, names: list[str]) -> None:
        variables = set(self.variables)
        for t in family.shift_symbols:
            if t in known or t.name in names or t.name in {v.name for v in variables}:
                raise ArgumentError(f"pairs [{family.label}]", "a family whose shift is not a parameter or the variable",
                                    t, message=f"pairs [{family.label}]: the shift {t} is maximised over, so it must "
                                               f"not be a parameter or the variable; the parameters are {sorted(names)}")
        stray = family.over.free_symbols - (known - variables)
        if stray:
            raise ArgumentError(f"pairs [{family.label}]", "a family whose set of shifts uses only parameters",
                                family.over, message=f"pairs [{family.label}]: over = {sp.sstr(family.over)} uses "
                                                     f"{sorted(map(str, stray))}, which are not declared parameters")

    @property
    def families(self) -> tuple[AdjacentFamily, ...]:
        """The :class:`~rdpsym.specify.adjacency.AdjacentFamily` entries of ``pairs``."""
        return tuple(p for p in self.pairs if isinstance(p, AdjacentFamily))

    def shown(self, name: str, value) -> tuple[float, str | None]:
        """How plots show parameter ``name`` at ``value``: ``(shown value, label)``; label ``None`` when
        the mechanism gives no display rule for it (the value is shown as it is)."""
        for key, expr, label in self.display:
            if key == name:
                symbol = self.parameter_by_name[name].symbol
                return float(expr.subs(symbol, value)), label
        return value, None

    @property
    def variables(self) -> tuple[sp.Symbol, ...]:
        """The output variables as a tuple: ``(x,)`` for one symbol."""
        return self.variable if isinstance(self.variable, tuple) else (self.variable,)

    @property
    def discrete(self) -> bool:
        """Whether the outputs are countable: for a product support, whether every coordinate set is
        (a product with a continuous coordinate, R x Z, is not discrete)."""
        if isinstance(self.variable, tuple):
            return all(is_discrete_support(s) for s in coordinate_supports(self.support, len(self.variable)))
        return is_discrete_support(self.support)

    def _repr_markdown_(self) -> str:
        rows = "\n".join(
            f"| `{p.name}` | ${p.latex}$ | ${sp.latex(p.domain)}$ | {p.typical} | {p.meaning} |" for p in self.parameters
        )
        return (
            f"**{self.title or self.name}** — support ${sp.latex(self.support)}$\n\n"
            "| name | symbol | domain | typical | meaning |\n|---|---|---|---|---|\n" + rows
        )
