r"""The Cauchy mechanism: Cauchy (Lorentz) noise added to a real-valued query.

No closed form of the general order is reached by the engine (the integrand (γ² + x²)^-α (γ² + (x - t)²)^(α-1)
is outside the exponential-family template: :mod:`rdpsym.derive.applicability`, O1), so the curve is
numeric. Published closed forms, kept as claims in the regression registry: the KL divergence
log(1 + Δ²/(4γ²)) (Chyzak & Nielsen 2019, arXiv:1905.10965, Eq. (1) with equal scales) and the
Legendre form D_α = log P_{α-1}(1 + Δ²/(2γ²)) / (α - 1) (Nielsen & Okamura 2023, "On f-divergences
between Cauchy distributions", IEEE T-IT 69(5), Sect. on Rényi divergences; at α = 2 it is
log(1 + Δ²/(2γ²)), the chi-square form).
"""

import sympy as sp

from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import additive_noise_mechanism


@register
def cauchy() -> Mechanism:
    r"""Cauchy noise of scale gamma added to a query of the given sensitivity.

    Output densities for adjacent inputs: P(x) = γ / (π (γ² + x²)) and Q(x) = γ / (π (γ² + (x - t)²))
    for every shift t of the query with |t| <= sensitivity; the RDP is the supremum over t
    (Mironov 2017, arXiv:1702.07476 v3, Def. 4). The Cauchy density is not log-concave, so the
    likelihood-ratio argument of :mod:`rdpsym.derive.shift_order` does not apply to it.
    """
    g = parameter("gamma", typical=(0.5, 5.0), latex=r"\gamma", log_scale=True,
                  meaning="scale (half width at half maximum) of the Cauchy noise")
    gs = g.symbol

    def noise(u):
        return gs / (sp.pi * (gs**2 + u**2))

    return additive_noise_mechanism(
        "cauchy", "Cauchy mechanism", noise, (g,),
        description="Adds Cauchy(0, gamma) noise to a real-valued query.",
        references=("Chyzak & Nielsen 2019 (arXiv:1905.10965), Eq. (1): the KL divergence",
                    "Nielsen & Okamura 2023 (IEEE T-IT 69(5); arXiv:2101.12459), Rényi divergence via Legendre "
                    "functions (stated in the registry as a claim)"),
    )
