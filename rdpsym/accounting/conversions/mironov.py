r"""Mironov 2017 (arXiv:1702.07476 v3), Prop. 3: (alpha, eps_RDP)-RDP implies (eps, delta)-DP with

.. math:: \varepsilon = \varepsilon_{RDP}(\alpha) + \frac{\log(1/\delta)}{\alpha-1},
          \qquad \delta = \exp\bigl((\alpha-1)(\varepsilon_{RDP}(\alpha) - \varepsilon)\bigr).

For the Gaussian ``c alpha`` the optimal order is ``alpha* = 1 + sqrt(log(1/delta)/c)``.
"""

from __future__ import annotations

from . import ConversionRule, register


def epsilon(m, eps_rdp, a, delta):
    """eps_RDP(alpha) + log(1/delta) / (alpha - 1)."""
    return eps_rdp + m.log(1 / delta) / (a - 1)


def log_delta(m, eps_rdp, a, epsilon):
    """(alpha - 1)(eps_RDP(alpha) - epsilon)."""
    return (a - 1) * (eps_rdp - epsilon)


RULE = register(ConversionRule("mironov", "Mironov 2017 (arXiv:1702.07476 v3), Prop. 3",
                               "RDP, Prop. 3 (Mironov 2017)", epsilon, log_delta))
