r"""Symbol mapping: the names a claim uses (as papers and other libraries write them) -> the target's.

Papers call the Laplace scale ``\lambda``, libraries ``b`` or ``lam``; a claim may even use another
parameterisation (``eps = 1/lambda``). A :class:`SymbolMap` says, for every name a claim may use, which
expression in the target's parameters (and :data:`rdpsym.alpha`) it stands for:

* **explicit** (``symbols={"lambda": "b", "eps": "1/b"}``): the value is a parameter name, a formula
  in the parameters (parsed by the safe parser, :mod:`rdpsym.specify.text`), or a sympy expression;
* **inferred**: each parameter's own name; the name of its LaTeX symbol (``\lambda`` -> ``lambda``,
  ``\sigma`` -> ``sigma``, ``\Delta`` -> ``Delta``); and the common aliases of those names in
  :data:`COMMON_ALIASES` (``lam``, ``lmbda``, ``noise_multiplier``, ...). An alias that would fit two
  parameters is not inferred (it must be mapped explicitly).

Every inference that a claim actually relies on is listed in :attr:`SymbolMap.inferred`, so a report
says exactly what was assumed. ``fixed`` pins parameters to values; a parameter named ``sensitivity``
that the claim never mentions is pinned to 1 (Table II of Mironov 2017 is stated for sensitivity 1),
and that is reported too.
"""

from __future__ import annotations

import re
import numbers
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import sympy as sp

from ..specify.text.numbers import exact_or_symbolic
from ..specify.params import Parameter
from ..specify.text import as_number, parse
from ..symbols import alpha as ALPHA

__all__ = ["SymbolMap", "COMMON_ALIASES", "build_symbol_map"]

#: Aliases under which papers and libraries write a parameter, keyed by the parameter's name or the
#: name of its LaTeX symbol.
COMMON_ALIASES: dict[str, tuple[str, ...]] = {
    "lambda": ("lam", "lmbda", "Lambda"),
    "b": ("lam", "lmbda", "scale"),
    "sigma": ("noise_multiplier", "std", "sd"),
    "Delta": ("Delta_f", "Delta_1", "Delta_2", "sens", "sensitivity"),
    "sensitivity": ("Delta", "Delta_f", "sens"),
    "p": ("p_true",),
}
#: Names under which claims write the order.
ALPHA_NAMES = ("alpha", "order")

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _latex_name(latex: str) -> str | None:
    """``\\lambda`` -> ``lambda``; ``\\sigma_{1}`` -> ``sigma_1``; plain identifiers pass; else None."""
    text = latex.strip().replace("{", "").replace("}", "")
    text = text.lstrip("\\")
    return text if _IDENT.match(text) else None


@dataclass(frozen=True)
class SymbolMap:
    """Which expression each name of a claim stands for, and how that was decided.

    ``names``: claim name -> sympy expression in the target's symbols and ``alpha``;
    ``origin``: claim name -> ``"explicit"``, ``"parameter"`` (the parameter's own name or alpha) or
    an inference note; ``fixed``: parameter name -> value; ``fixed_notes``: why each value was fixed.
    """

    names: dict[str, sp.Expr]
    origin: dict[str, str]
    fixed: dict[str, sp.Expr] = field(default_factory=dict)
    fixed_notes: dict[str, str] = field(default_factory=dict)

    def inferred(self, used: Sequence[str]) -> list[str]:
        """Human-readable lines for the inferences that the names in ``used`` relied on."""
        lines = [f"{n} -> {sp.sstr(self.names[n])} ({self.origin[n]})" for n in used
                 if self.origin.get(n) not in ("explicit", "parameter")]
        return lines

    def describe(self, used: Sequence[str]) -> str:
        parts = []
        for n in used:
            if self.origin[n] != "parameter":
                parts.append(f"{n} = {sp.sstr(self.names[n])} [{self.origin[n]}]")
        for k, v in self.fixed.items():
            parts.append(f"{k} fixed at {sp.sstr(v)} [{self.fixed_notes.get(k, 'explicit')}]")
        return "; ".join(parts)


def _to_expr(name: str, value, base: Mapping[str, sp.Expr]) -> sp.Expr:
    if isinstance(value, str):
        if value in base:
            return base[value]
        try:
            return parse(value, dict(base))
        except ValueError as exc:
            raise ValueError(f"symbols[{name!r}]: cannot read {value!r} as a formula in "
                             f"{sorted(base)}: {exc}") from None
    if isinstance(value, sp.Basic):
        if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise ValueError(f"symbols[{name!r}] must be finite; got {value}")
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # as_number, not Rational: Rational(nan) is 0, which read a NaN constant as 0 (a "proved" claim)
        number = as_number(value, f"symbols[{name!r}]")
        if not number.is_finite:
            raise ValueError(f"symbols[{name!r}] must be finite; got {value}")
        return number
    raise TypeError(f"symbols[{name!r}] must be a parameter name, a formula string or a sympy expression; "
                    f"got {type(value).__name__}")


def build_symbol_map(
    parameters: Sequence[Parameter],
    symbols: Mapping[str, object] | None = None,
    fixed: Mapping[str, object] | None = None,
) -> SymbolMap:
    """The names a claim about a target with ``parameters`` may use (see the module docstring)."""
    base: dict[str, sp.Expr] = {p.name: p.symbol for p in parameters}
    names: dict[str, sp.Expr] = dict(base)
    origin = {p.name: "parameter" for p in parameters}
    for a in ALPHA_NAMES:
        if a not in names:
            names[a], origin[a] = ALPHA, "parameter" if a == "alpha" else "the order alpha"
    base_with_alpha = {**base, "alpha": ALPHA}

    # Inferred aliases: LaTeX names and common aliases; an alias claimed by two parameters is dropped.
    candidates: dict[str, list[tuple[Parameter, str]]] = {}
    for p in parameters:
        keys = [p.name]
        ln = _latex_name(p.latex)
        if ln and ln != p.name:
            candidates.setdefault(ln, []).append((p, f"inferred from the LaTeX symbol {p.latex} of {p.name!r}"))
            keys.append(ln)
        for key in keys:
            for alias in COMMON_ALIASES.get(key, ()):
                candidates.setdefault(alias, []).append((p, f"inferred: common alias of {key!r}"))
    for alias, found in candidates.items():
        if alias in names:
            continue
        params = {id(p) for p, _ in found}
        if len(params) == 1:
            p, why = found[0]
            names[alias], origin[alias] = p.symbol, why

    for key, value in (symbols or {}).items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"symbols: keys must be non-empty names; got {key!r}")
        names[key], origin[key] = _to_expr(key, value, base_with_alpha), "explicit"

    by_name = {p.name: p for p in parameters}
    fixed_values: dict[str, sp.Expr] = {}
    notes: dict[str, str] = {}
    for key, value in (fixed or {}).items():
        if key not in by_name:
            raise ValueError(f"fixed: {key!r} is not a parameter; parameters: {sorted(by_name)}")
        by_name[key].validate(value)
        if isinstance(value, str) or not isinstance(value, (numbers.Real, sp.Basic)):
            raise TypeError(f"fixed[{key!r}] must be a number; got {type(value).__name__}")
        fixed_values[key] = exact_or_symbolic(value, f"fixed[{key!r}]")
        notes[key] = "explicit"
    return SymbolMap(names, origin, fixed_values, notes)


def default_fixed(smap: SymbolMap, parameters: Sequence[Parameter], used_params: set[str],
                  fixed_given: bool) -> SymbolMap:
    """Pin an unmentioned ``sensitivity`` to 1 (reported), unless the caller passed ``fixed``."""
    if fixed_given:
        return smap
    fixed = dict(smap.fixed)
    notes = dict(smap.fixed_notes)
    for p in parameters:
        if p.name == "sensitivity" and p.name not in used_params and p.name not in fixed:
            if p.domain.contains(1) is sp.true:
                fixed[p.name] = sp.Integer(1)
                notes[p.name] = ("not named in the claim: fixed at 1 as in Table II of Mironov 2017; "
                                 "pass fixed={} to check every sensitivity")
    return SymbolMap(smap.names, smap.origin, fixed, notes)
