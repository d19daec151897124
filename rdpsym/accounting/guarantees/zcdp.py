r"""Zero-concentrated differential privacy (Bun and Steinke 2016, Def. 1.1) as an RDP curve.

A mechanism is (xi, rho)-zCDP when D_alpha(M(x)||M(x')) <= xi + rho alpha for every alpha in (1, oo)
and neighbouring x, x' (Bun and Steinke 2016, "Concentrated Differential Privacy: Simplifications,
Extensions, and Lower Bounds", TCC, arXiv:1605.02065, Def. 1.1); rho-zCDP is xi = 0. As a curve:

* alpha > 1: xi + rho alpha (the definition);
* alpha <= 1 (KL at alpha = 1): xi + rho, the limit from above, by monotonicity in alpha
  (van Erven and Harremoës 2014, Thm. 3);
* alpha = oo: xi when rho = 0 (D_oo = lim D_alpha, van Erven and Harremoës 2014, Thm. 5), else no bound.

Groups of k records: rho-zCDP (xi = 0) implies (k^2 rho)-zCDP (op. cit., Prop. 1.9).
"""

import sympy as sp

from ...specify.params import parameter
from . import ALPHA, GuaranteeCurve, register

GROUP_SOURCE = "Bun and Steinke 2016 (TCC; arXiv:1605.02065), Prop. 1.9 (group privacy of rho-zCDP)"

rho = parameter("rho", sp.Interval(0, sp.oo), typical=(0.001, 1.0), latex=r"\rho", meaning="the zCDP parameter",
                log_scale=True)
xi = parameter("xi", sp.Interval(0, sp.oo), typical=(0.001, 1.0), latex=r"\xi",
               meaning="the additive zCDP parameter (0 for rho-zCDP)", log_scale=True)
r, x = rho.symbol, xi.symbol


def _group(k: int):
    """(k^2 rho)-zCDP for groups of k, stated for xi = 0 only (the curve is +oo where xi > 0: the
    accountant then uses Mironov's Prop. 2 instead)."""
    return (sp.Piecewise((k**2 * r * sp.Max(ALPHA, 1), sp.Eq(x, 0)), (sp.oo, True)),
            sp.Piecewise((0, sp.Eq(r, 0) & sp.Eq(x, 0)), (sp.oo, True)), GROUP_SOURCE)


ZCDP = register(GuaranteeCurve(
    name="zcdp",
    title="(ξ, ρ)-zero-concentrated DP",
    parameters=(rho, xi),
    curve=x + r * sp.Max(ALPHA, 1),
    max_divergence=sp.Piecewise((x, sp.Eq(r, 0)), (sp.oo, True)),
    source="Bun and Steinke 2016 (TCC; arXiv:1605.02065), Def. 1.1",
    defaults=(("xi", 0),),
    group_rule=_group,
))
