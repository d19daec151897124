"""The engine's first stage: the inputs are sympy objects of the right kind, with the assumptions the
derivation relies on (a real variable, real parameters, no order symbol in the densities)."""

from __future__ import annotations

import sympy as sp

from ..symbols import alpha as ALPHA

__all__ = ["check_inputs"]


def check_inputs(P, Q, x, support):
    for name, dens in (("P", P), ("Q", Q)):
        if not isinstance(dens, sp.Expr):
            raise TypeError(f"{name}: must be a sympy expression, got {type(dens).__name__}")
    if not isinstance(x, sp.Symbol):
        raise TypeError(f"x: must be a sympy Symbol, got {type(x).__name__}")
    if not isinstance(support, sp.Set):
        raise TypeError(f"support: must be a sympy Set (e.g. S.Reals, Interval(0, oo), S.Integers), got {type(support).__name__}")
    if x.is_real is not True:
        raise ValueError(f"x: the variable {x} must be declared real (Symbol('{x}', real=True))")
    for sym in (P.free_symbols | Q.free_symbols) - {x}:
        if sym == ALPHA:
            raise ValueError("P, Q: densities must not contain rdpsym.alpha (the order is not a parameter)")
        if sym.is_real is not True:
            raise ValueError(
                f"parameter {sym}: needs assumptions; declare it real, or positive for scales "
                f"(Symbol('{sym}', positive=True))"
            )
