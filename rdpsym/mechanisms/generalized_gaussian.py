r"""The generalized Gaussian mechanism: noise of density proportional to exp(-(|x|/σ)^p).

Liu 2019, "Generalized Gaussian mechanism for differential privacy" (IEEE TKDE 31(4); arXiv:1602.06028),
Def. 3 (the GG(0, σ, p) noise, p >= 1; its ε-DP condition, Thm. 4); Rinberg, Shumailov, Singhal,
Cummings & Papernot 2025, "Beyond Laplace and Gaussian: exploring the generalized Gaussian mechanism for
private machine learning" (arXiv:2506.12553), Sect. 3 (noise ∝ exp(-(|x|/σ)^β), β >= 1; their β is p here).
p = 1 is the Laplace mechanism with b = σ, p = 2 the Gaussian mechanism with standard deviation σ/√2.
For general p the engine reaches no closed form (:mod:`rdpsym.derive.applicability`, O2/O3): a numeric curve.
"""

import sympy as sp

from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import additive_noise_mechanism


@register
def generalized_gaussian() -> Mechanism:
    r"""Generalized Gaussian noise GG(0, σ, p) added to a query of the given sensitivity.

    Output densities for adjacent inputs: P(x) = p / (2 σ Γ(1/p)) exp(-(|x|/σ)^p) and Q(x) the same
    density at x - t, for every shift t of the query with |t| <= sensitivity; the RDP is the supremum
    over t (Mironov 2017, arXiv:1702.07476 v3, Def. 4). For p >= 1 the density is log-concave, so
    {Q_t} has a monotone likelihood ratio in x and the supremum is at |t| = sensitivity for every order
    (shown by :mod:`rdpsym.derive.shift_order` from the densities).
    """
    sigma = parameter("sigma", typical=(0.5, 5.0), latex=r"\sigma", log_scale=True,
                      meaning="scale of the noise (density ∝ exp(-(|x|/σ)^p))")
    p = parameter("p", sp.Interval(1, sp.oo), typical=(1.0, 4.0), latex="p",
                  meaning="shape of the noise: 1 is Laplace, 2 is Gaussian")
    s, ps = sigma.symbol, p.symbol

    def noise(u):
        return ps / (2 * s * sp.gamma(1 / ps)) * sp.exp(-(sp.Abs(u) / s) ** ps)

    return additive_noise_mechanism(
        "generalized_gaussian", "Generalized Gaussian mechanism", noise, (sigma, p),
        description="Adds generalized Gaussian GG(0, sigma, p) noise to a real-valued query.",
        references=("Liu 2019 (IEEE TKDE 31(4); arXiv:1602.06028), Def. 3 and Thm. 4",
                    "Rinberg et al. 2025 (arXiv:2506.12553), Sect. 3 (beta = p)"),
        defaults=(("p", 2),),
    )
