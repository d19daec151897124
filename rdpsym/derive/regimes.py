"""The two regimes of the order: alpha = 1 + t (t > 0) and alpha = 1/(1 + v) (v > 0, i.e. 0 < alpha < 1).

sympy's assumptions cannot state alpha > 1 or alpha < 1 directly; each regime is a positive symbol and
the substitutions to and from alpha.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..symbols import alpha as ALPHA

__all__ = ["Regime", "ABOVE", "BELOW"]

_T = sp.Dummy("t", positive=True)  # alpha = 1 + t; a Dummy: a parameter named t is another symbol
_V = sp.Dummy("v", positive=True)  # alpha = 1 / (1 + v)


@dataclass(frozen=True)
class Regime:
    name: str
    var: sp.Symbol
    alpha_in_var: sp.Expr
    var_in_alpha: sp.Expr
    interval: sp.Interval


ABOVE = Regime("alpha > 1", _T, 1 + _T, ALPHA - 1, sp.Interval.open(1, sp.oo))
BELOW = Regime("0 < alpha < 1", _V, 1 / (1 + _V), (1 - ALPHA) / ALPHA, sp.Interval.open(0, 1))
