"""The symbols every derivation shares.

``alpha`` is the Rényi order. It is declared positive only: sympy's assumptions cannot express
``alpha > 1`` directly, so the engine works on the two regimes through substitutions
``alpha = 1 + t`` (``t > 0``) and ``alpha = u`` (``0 < u < 1``), see :mod:`rdpsym.derive.engine`.
"""

from __future__ import annotations

import sympy as sp

#: The order of the Rényi divergence, D_alpha(P||Q) (Mironov 2017, Def. 3).
alpha = sp.Symbol("alpha", positive=True)

#: alpha - 1 in the regime alpha > 1.
t_above = sp.Symbol("t", positive=True)

#: alpha in the regime 0 < alpha < 1 (sympy cannot say "< 1"; the engine keeps that in mind).
u_below = sp.Symbol("u", positive=True)

__all__ = ["alpha", "t_above", "u_below"]
