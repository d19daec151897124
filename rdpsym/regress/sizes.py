"""Sizes of the derived forms against the registry's published formulas (issue 18, item 2).

A paper prints one of many equivalent forms; the engine's form should be about as short. For every
registry entry stating an equality (a ``<=`` bound is another function) whose derivation has a closed
form for the entry's order, :func:`registry_sizes` gives
sympy ``count_ops`` of the derived form, with the entry's ``fixed`` values substituted (what the claim
check compares, :func:`rdpsym.check_claim`), and of the published formula read by the safe parser with
the entry's symbol mapping. ``benchmarks/forms.py`` prints the table and ``tests/test_forms.py`` holds
every row to :data:`TARGET` times the published size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import sympy as sp

from ..claims.orders import order_from_key
from ..claims.target import truth_at
from . import build_target, default_registry, load_registry

__all__ = ["SizeRow", "TARGET", "entry_forms", "registry_sizes"]

#: the largest accepted ratio of derived to published ``count_ops`` (issue 18)
TARGET = 1.25


@dataclass(frozen=True)
class SizeRow:
    """``derived`` is None when the entry's order has no closed form (``note`` says why)."""

    name: str
    published: int
    derived: int | None
    note: str = ""
    derived_expr: sp.Expr | None = None
    published_expr: sp.Expr | None = None

    @property
    def ratio(self) -> float | None:
        return None if self.derived is None else self.derived / max(self.published, 1)


def entry_forms(entry) -> tuple[sp.Expr, sp.Expr | None, str]:
    """(published formula, derived form or None, note) of one entry, in the target's symbols, with the
    entry's fixed values (and the claim check's default: an unmentioned sensitivity is 1) substituted."""
    from ..claims.mapping import build_symbol_map, default_fixed
    from ..claims.target import make_target
    from ..specify.text import parse

    target = make_target(build_target(entry))
    params = target.parameters
    smap = build_symbol_map(params, entry.symbols or None, entry.fixed)
    placeholders = {name: sp.Dummy(name) for name in smap.names}
    published = parse(entry.formula, placeholders)
    back = {d: smap.names[n] for n, d in placeholders.items()}
    published = published.xreplace(back)
    by_symbol = {p.symbol: p.name for p in params}
    used = {by_symbol[s] for s in published.free_symbols if s in by_symbol}
    smap = default_fixed(smap, params, used, entry.fixed is not None)
    values = {p.symbol: smap.fixed[p.name] for p in params if p.name in smap.fixed}
    published = published.subs(values)
    result = target.result
    derived = truth_at(result, order_from_key(entry.order))
    if derived is None:
        return published, None, f"no closed form ({result.status})"
    return published, derived.subs(values), ""


def registry_sizes(paths: Sequence = (), only: Sequence[str] = ()) -> list[SizeRow]:
    """One :class:`SizeRow` per entry of the registry files (default: the shipped registry) whose name
    contains one of ``only`` (all entries if empty)."""
    rows = []
    for path in paths or [default_registry()]:
        for entry in load_registry(Path(path)):
            if only and not any(o in entry.name for o in only):
                continue
            if entry.relation != "==":  # a published bound is another function, not a form of this one
                continue
            published, derived, note = entry_forms(entry)
            rows.append(SizeRow(entry.name, int(sp.count_ops(published)),
                                None if derived is None else int(sp.count_ops(derived)), note, derived, published))
    return rows
