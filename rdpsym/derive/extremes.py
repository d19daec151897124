"""The maximum of formulas that may be +oo on part of the parameters' domain.

sympy's ``Max`` drops an argument when it can show another one at least as large, and it shows that through
the arguments' assumptions. Those are wrong on Piecewise forms with an infinite branch: with
L = log(mu/(mu + d)) < 0, the two directions' D_oo of Poi(mu) against Poi(mu + d) are
Piecewise((oo, L > 0), (d, True)) = d and Piecewise((oo, L < 0), (-d, True)) = +oo, and sympy finds their
difference positive, so ``Max`` of the two is the finite one. A maximum whose arguments hold an infinity
is therefore built unevaluated and folded into one Piecewise (``piecewise_fold``), whose branches are
maxima of values each finite or infinite as a whole, which sympy compares correctly.
"""

from __future__ import annotations

from typing import Iterable

import sympy as sp

__all__ = ["maximum"]


def maximum(values: Iterable) -> sp.Expr:
    """The largest of ``values`` (at least one) as a sympy expression (module docstring)."""
    values = list(values)
    if len(values) == 1:
        return values[0]
    if any(isinstance(v, sp.Basic) and v.has(sp.oo, -sp.oo) for v in values):
        return sp.piecewise_fold(sp.Max(*values, evaluate=False))
    return sp.Max(*values)
