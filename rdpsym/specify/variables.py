"""Output variables: one real symbol, or a tuple of them over a product support.

A mechanism that releases a vector has densities in several variables ``(x1, ..., xd)`` and a support
that is a sympy ``ProductSet`` of one-dimensional sets (``S.Reals**2``, ``ProductSet(Interval(0, 1),
S.Integers)``): the coordinate sets are each what a one-dimensional support may be (see
:mod:`.support`). This module is the one reading of such a variable and support; the engine, the
numeric path and :class:`~rdpsym.specify.mechanism.Mechanism` all go through it.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from .._numbers import ArgumentError

__all__ = ["as_variables", "coordinate_supports", "is_multivariate"]

#: the largest number of output variables the numeric path integrates over
MAX_DIMENSION = 3


def is_multivariate(x: Any) -> bool:
    """True when ``x`` is a tuple or list of variables (even of one), False for a single symbol."""
    return isinstance(x, (tuple, list))


def as_variables(x: Any, argument: str = "x") -> tuple[sp.Symbol, ...]:
    """``x`` as a tuple of distinct real symbols: ``(x,)`` for one symbol, the tuple for a tuple or list.

    Raises :class:`~rdpsym._numbers.ArgumentError` naming ``argument`` for anything else: a non-symbol
    entry, a repeated symbol, a symbol not declared real, or an empty tuple.
    """
    if isinstance(x, sp.Symbol):
        variables = (x,)
    elif isinstance(x, (tuple, list)):
        variables = tuple(x)
        if not variables:
            raise ArgumentError(argument, "a sympy Symbol or a non-empty tuple of them", x)
    else:
        raise ArgumentError(argument, "a sympy Symbol or a tuple of them", x,
                            message=f"{argument}: must be a sympy Symbol or a tuple of them, got {type(x).__name__}")
    for v in variables:
        if not isinstance(v, sp.Symbol):
            raise ArgumentError(argument, "a tuple of sympy Symbols", x,
                                message=f"{argument}: every variable must be a sympy Symbol, got {type(v).__name__}")
        if v.is_real is not True:
            raise ArgumentError(argument, "real symbols", v,
                                message=f"{argument}: the variable {v} must be declared real (Symbol('{v}', real=True))")
    if len(set(variables)) != len(variables):
        raise ArgumentError(argument, "distinct symbols", x,
                            message=f"{argument}: a variable is repeated in {tuple(map(str, variables))}")
    return variables


def _flatten(support: sp.Set) -> list[sp.Set]:
    if isinstance(support, sp.ProductSet):
        return [s for part in support.args for s in _flatten(part)]
    return [support]


def coordinate_supports(support: Any, n: int, argument: str = "support") -> tuple[sp.Set, ...]:
    """The ``n`` coordinate sets of a product support, nested products flattened.

    For ``n == 1`` a one-dimensional set is returned as it is (a ``ProductSet`` of one set is read as
    that set). For ``n >= 2`` the support must be a ``ProductSet`` with ``n`` factors after flattening
    (``S.Reals**2`` is ``ProductSet(Reals, Reals)``). Raises
    :class:`~rdpsym._numbers.ArgumentError` naming ``argument`` otherwise.
    """
    if not isinstance(support, sp.Set):
        raise ArgumentError(argument, "a sympy Set", support,
                            message=f"{argument}: must be a sympy Set (e.g. S.Reals, S.Reals**2), "
                                    f"got {type(support).__name__}")
    parts = _flatten(support)
    if len(parts) != n:
        if n == 1:
            rule = "a one-dimensional set for one variable"
        else:
            rule = f"a ProductSet of {n} sets, one per variable (e.g. S.Reals**{n})"
        raise ArgumentError(argument, rule, support,
                            message=f"{argument}: {sp.sstr(support)} has {len(parts)} coordinate set(s) but "
                                    f"there are {n} variable(s); use {rule}")
    return tuple(parts)
