r"""Truncated concentrated differential privacy (Bun, Dwork, Rothblum and Steinke 2018, Def. 1).

A mechanism is omega-truncated rho-CDP, (rho, omega)-tCDP, when D_alpha(M(x)||M(x')) <= rho alpha for
every alpha in (1, omega) and neighbouring x, x' (Bun, Dwork, Rothblum and Steinke 2018, "Composable
and Versatile Privacy via Truncated CDP", STOC, Def. 1). As a curve:

* 1 < alpha < omega: rho alpha (the definition);
* alpha <= 1 (KL at alpha = 1): rho, the limit from above, by monotonicity in alpha (van Erven and
  Harremoës 2014, Thm. 3);
* alpha >= omega: no bound (+oo); alpha = oo: 0 when rho = 0 (then D_alpha = 0 for some alpha, so
  P = Q), else no bound.

omega = oo is rho-zCDP. Groups: Mironov 2017, Prop. 2 on the curve (the accountant's default).
"""

import sympy as sp

from ...specify.params import parameter
from . import ALPHA, GuaranteeCurve, register

rho = parameter("rho", sp.Interval(0, sp.oo), typical=(0.001, 1.0), latex=r"\rho", meaning="the tCDP parameter",
                log_scale=True)
omega = parameter("omega", sp.Interval.Lopen(1, sp.oo), typical=(2.0, 100.0), latex=r"\omega",
                  meaning="the truncation order (the bound holds for 1 < alpha < omega)", log_scale=True)
r, w = rho.symbol, omega.symbol

TCDP = register(GuaranteeCurve(
    name="tcdp",
    title="ω-truncated ρ-concentrated DP",
    parameters=(rho, omega),
    curve=sp.Piecewise((r * sp.Max(ALPHA, 1), ALPHA < w), (sp.oo, True)),
    max_divergence=sp.Piecewise((0, sp.Eq(r, 0)), (sp.oo, True)),
    source="Bun, Dwork, Rothblum and Steinke 2018 (STOC), Def. 1",
))
