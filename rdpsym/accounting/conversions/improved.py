r"""Canonne, Kamath, Steinke 2020, "The discrete Gaussian for differential privacy", Prop. 12 (equal to
Balle et al. 2020, "Hypothesis testing interpretations and Rényi DP", Thm. 21):

.. math:: \varepsilon = \varepsilon_{RDP}(\alpha) + \log\frac{\alpha-1}{\alpha}
                        - \frac{\log\delta + \log\alpha}{\alpha-1},
          \qquad \delta = \frac{\exp\bigl((\alpha-1)(\varepsilon_{RDP}(\alpha)-\varepsilon)\bigr)}{\alpha}
                          \Bigl(1-\frac1\alpha\Bigr)^{\alpha-1}.

It is never worse than Prop. 3 (:mod:`.mironov`): the difference of the two epsilons at one alpha is
``log(1 - 1/alpha) - log(alpha)/(alpha-1) < 0``. ``log((alpha-1)/alpha)`` is written
``log1p(-1/alpha)``, accurate where alpha is large.
"""

from __future__ import annotations

from . import ConversionRule, register


def epsilon(m, eps_rdp, a, delta):
    """eps_RDP(alpha) + log(1 - 1/alpha) - (log delta + log alpha) / (alpha - 1)."""
    return eps_rdp + m.log1p(-1 / a) - (m.log(delta) + m.log(a)) / (a - 1)


def log_delta(m, eps_rdp, a, epsilon):
    """(alpha - 1)(eps_RDP(alpha) - epsilon) + (alpha - 1) log(1 - 1/alpha) - log alpha."""
    return (a - 1) * (eps_rdp - epsilon) + (a - 1) * m.log1p(-1 / a) - m.log(a)


RULE = register(ConversionRule("improved", "Canonne, Kamath, Steinke 2020, Prop. 12 = Balle et al. 2020, Thm. 21",
                               "RDP, improved (Canonne, Kamath, Steinke 2020)", epsilon, log_delta))
