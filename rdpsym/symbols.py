"""The symbols every derivation shares.

``alpha`` is the Rényi order. It is declared positive only: sympy's assumptions cannot express
``alpha > 1`` directly, so the engine works on the two regimes through substitutions
``alpha = 1 + t`` (``t > 0``) and ``alpha = 1/(1 + v)`` (``v > 0``, i.e. ``0 < alpha < 1``), see
:mod:`rdpsym.derive.regimes`.
"""

from __future__ import annotations

import sympy as sp

#: The order of the Rényi divergence, D_alpha(P||Q) (Mironov 2017, Def. 3).
alpha = sp.Symbol("alpha", positive=True)

__all__ = ["alpha"]
