"""Parameters of a mechanism: a sympy symbol with assumptions, a domain, a typical range.

Modelled on scipy.stats' new distribution infrastructure: every parameter declares where it may live
(``domain``) and where it usually lives (``typical``); the latter is used to draw test values, to
choose plot ranges and to check densities numerically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

import sympy as sp

from .. import printing
from .._numbers import ArgumentError
from .text.numbers import exact_number

__all__ = ["Parameter", "ParameterSet", "parameter"]


def check_assumptions(symbol: sp.Symbol, value: sp.Expr, name: str) -> None:
    """Raise ``ValueError`` naming ``name`` if ``value`` contradicts an assumption of ``symbol``
    (b = -1 for a positive b describes no distribution)."""
    for assumption in ("positive", "nonnegative", "nonzero", "integer", "real"):
        if getattr(symbol, f"is_{assumption}") and getattr(value, f"is_{assumption}") is False:
            raise ValueError(f"{name} must be {assumption}; got {value}")


@dataclass(frozen=True)
class Parameter:
    """One parameter of a mechanism.

    Attributes
    ----------
    name: the public name (``"b"``, ``"sigma"``), also the symbol's name.
    symbol: the sympy symbol, carrying the assumptions implied by ``domain``.
    domain: a sympy ``Interval`` (or ``Range``/``Naturals``) of admissible values. Its endpoints may
        be other parameters' symbols: ``Interval.open(m1, oo)`` as the domain of m2 declares m1 < m2
        (the engine orders kinks by domains, :mod:`rdpsym.derive.domains`).
    typical: ``(low, high)``, a range of values seen in practice, inside ``domain``.
    latex: the LaTeX symbol used in exported formulas.
    meaning: a one-line description.
    log_scale: draw typical values log-uniformly (scales spanning decades).
    """

    name: str
    symbol: sp.Symbol
    domain: sp.Set
    typical: tuple[float, float]
    latex: str
    meaning: str = ""
    log_scale: bool = False

    @classmethod
    def from_symbol(cls, symbol: sp.Symbol, *, strict: bool = True) -> "Parameter":
        """A parameter for a bare sympy symbol, from its assumptions (the one place this is inferred).

        positive -> (0, oo), typical 0.5..5 on a log scale; nonnegative -> [0, oo), typical 0.5..5;
        real -> the real line, typical -2..2; ``integer`` narrows each to the integers (a positive
        integer: 1, 2, ..., typical 1..5). A symbol with no sign or reality assumption cannot be
        sampled: with ``strict`` that is an :class:`~rdpsym._numbers.ArgumentError` asking for values or
        parameters; without, it is taken as real.
        """
        if not isinstance(symbol, sp.Symbol):
            raise ArgumentError("symbol", "a sympy Symbol", symbol)
        integer = bool(symbol.is_integer)
        if symbol.is_positive:
            if integer:
                dom, typ, log = sp.Range(1, sp.oo), (1.0, 5.0), False
            else:
                dom, typ, log = sp.Interval.open(0, sp.oo), (0.5, 5.0), True
        elif symbol.is_nonnegative:
            dom, typ, log = (sp.Range(0, sp.oo) if integer else sp.Interval(0, sp.oo)), (0.5, 5.0), False
        elif symbol.is_real or not strict:
            dom, typ, log = (sp.S.Integers if integer else sp.S.Reals), (-2.0, 2.0), False
        else:
            raise ArgumentError(
                f"parameter {symbol.name!r}", "declared with assumptions (real, positive, ...)",
                message=f"parameter {symbol.name!r} has no assumptions (real, positive, ...): cannot choose "
                        "values to check; pass values={...} or params=[rdpsym.parameter(...), ...]")
        return cls(symbol.name, symbol, dom, typ, sp.latex(symbol), "inferred from the symbol's assumptions", log)

    def validate(self, value) -> None:
        """Raise ``ValueError`` (an :class:`~rdpsym._numbers.ArgumentError`) naming this parameter if
        ``value`` is not a finite number inside its domain. Strings are refused: a parameter value is a
        number, not text (text goes through :mod:`rdpsym.specify.text` first)."""
        arg = f"parameter {self.name!r}"
        if isinstance(value, (str, bytes)) or not isinstance(value, (Real, sp.Expr)):
            raise ArgumentError(arg, "a number", value, message=f"{arg}: {value!r} is not a number")
        if isinstance(value, Real) and not math.isfinite(float(value)):
            raise ArgumentError(arg, "a finite number", value, message=f"{arg}: {value!r} is not a finite number")
        v = exact_number(value, arg) if not isinstance(value, sp.Expr) or value.is_number else value
        if not v.is_number or v.has(sp.nan, sp.zoo):
            raise ArgumentError(arg, "a number", value, message=f"{arg}: {value!r} is not a number")
        inside = self.domain.contains(v)
        if inside is sp.false or inside is False:
            raise ArgumentError(arg, f"lie in {printing.sstr(self.domain)}", value,
                                message=f"{arg} must lie in {printing.sstr(self.domain)}; got {value!r}")

    def typical_values(self, n: int = 5) -> list[sp.Rational]:
        """``n`` exact rational values spread over the typical range (deterministic)."""
        lo, hi = self.typical
        if n == 1:
            pts = [math.sqrt(lo * hi) if self.log_scale else (lo + hi) / 2]
        elif self.log_scale:
            pts = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
        else:
            pts = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
        if self.symbol.is_integer:
            return sorted({sp.Integer(round(p)) for p in pts})
        return [sp.Rational(p).limit_denominator(10**6) for p in pts]

    def _repr_latex_(self) -> str:
        return f"${self.latex} \\in {printing.latex(self.domain)}$"


def _assumptions_for(domain: sp.Set, integer: bool) -> dict:
    assumptions: dict = {"real": True}
    if integer:
        assumptions["integer"] = True
    inf = domain.inf
    # an endpoint that is another parameter (a declared relation, m1 < m2) implies no sign
    if inf.is_number and inf.is_finite:
        if inf > 0 or (inf == 0 and domain.contains(0) is sp.false):
            assumptions["positive"] = True
        elif inf >= 0:
            assumptions["nonnegative"] = True
    return assumptions


def parameter(
    name: str,
    domain: sp.Set = sp.Interval.open(0, sp.oo),
    typical: tuple[float, float] = (0.5, 5.0),
    latex: str | None = None,
    meaning: str = "",
    integer: bool = False,
    log_scale: bool = False,
) -> Parameter:
    """Build a :class:`Parameter`; the symbol's assumptions follow from ``domain``.

    >>> b = parameter("b", typical=(0.1, 10), latex=r"\\lambda", meaning="Laplace scale")
    >>> b.symbol.is_positive
    True
    """
    if not isinstance(domain, sp.Set):
        raise TypeError(f"parameter {name!r}: domain must be a sympy Set, got {type(domain).__name__}")
    lo, hi = typical
    if not lo < hi:
        raise ValueError(f"parameter {name!r}: typical range must satisfy low < high, got {typical}")
    for end in (lo, hi):
        if domain.contains(sp.Rational(end).limit_denominator(10**9)) is sp.false:
            raise ValueError(f"parameter {name!r}: typical value {end} lies outside {printing.sstr(domain)}")
    symbol = sp.Symbol(name, **_assumptions_for(domain, integer))
    return Parameter(
        name=name,
        symbol=symbol,
        domain=domain,
        typical=(float(lo), float(hi)),
        latex=latex if latex is not None else sp.latex(symbol),
        meaning=meaning,
        log_scale=log_scale,
    )


class ParameterSet:
    """The reading of a ``parameters`` tuple shared by every object that declares parameters.

    A :class:`~rdpsym.specify.mechanism.Mechanism` and a
    :class:`~rdpsym.accounting.guarantees.GuaranteeCurve` both declare ``name``, ``parameters`` (a
    tuple of :class:`Parameter`) and ``defaults`` (``(name, value)`` pairs); the accountant and the
    commands read either through these few members, defined once here (a mixin: it adds no fields,
    so it sits under frozen dataclasses unchanged).
    """

    __slots__ = ()
    name: str
    parameters: tuple[Parameter, ...]
    defaults: tuple

    def check_parameter_set(self) -> None:
        """Check (from ``__post_init__``) that the parameter names are distinct and every default names a
        parameter and lies in its domain; the defaults become ``(str, value)`` pairs."""
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"parameters: duplicate names in {names}")
        defaults = tuple((str(k), v) for k, v in self.defaults)
        by_name = self.parameter_by_name
        for key, value in defaults:
            if key not in by_name:
                raise ValueError(f"defaults: {key!r} is not a parameter; the parameters are {sorted(by_name)}")
            by_name[key].validate(value)
        object.__setattr__(self, "defaults", defaults)  # the classes using this are frozen dataclasses

    @property
    def params(self) -> dict[str, sp.Symbol]:
        """Parameter names mapped to their sympy symbols."""
        return {p.name: p.symbol for p in self.parameters}

    @property
    def parameter_by_name(self) -> dict[str, Parameter]:
        """Parameter names mapped to their :class:`Parameter`."""
        return {p.name: p for p in self.parameters}

    @property
    def default_values(self) -> dict[str, Any]:
        """The example parameter values of ``defaults`` as a dict (name -> value)."""
        return dict(self.defaults)

    def substitutions(self, values: dict) -> dict[sp.Symbol, sp.Expr]:
        """Validate ``values`` (name -> number) against the domains and map them to symbols; unknown
        names are an error naming the parameters. The one validation of parameter values."""
        by_name = self.parameter_by_name
        subs = {}
        for key, value in values.items():
            if key not in by_name:
                raise ValueError(f"{key!r} is not a parameter of {self.name!r}; its parameters are {sorted(by_name)}")
            by_name[key].validate(value)
            # the one reading of numbers: floats and mpmath numbers at their exact binary value
            subs[by_name[key].symbol] = exact_number(value, f"parameter {key!r}")
        return subs
