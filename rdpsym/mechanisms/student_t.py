r"""The Student t mechanism: Student t noise (ν degrees of freedom, a scale) added to a real-valued query.

Bun & Steinke 2019, "Average-case averages: private algorithms for smooth sensitivity and mean
estimation" (NeurIPS 2019; arXiv:1906.02830), Sect. 3.1 (Student's t noise, with its concentrated-DP
analysis). Its likelihood ratio is bounded (both tails decay as |x|^-(ν+1)), so D_inf is finite: the
mechanism is ε-DP. No closed form of the general order is reached (:mod:`rdpsym.derive.applicability`,
O1): a numeric curve.
"""

import sympy as sp

from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import additive_noise_mechanism


@register
def student_t() -> Mechanism:
    r"""Student t noise with ν degrees of freedom and scale s added to a query of the given sensitivity.

    Output densities for adjacent inputs: P(x) = Γ((ν+1)/2) / (√(νπ) s Γ(ν/2)) (1 + x²/(ν s²))^(-(ν+1)/2)
    and Q(x) the same density at x - t, for every shift t with |t| <= sensitivity; the RDP is the
    supremum over t (Mironov 2017, arXiv:1702.07476 v3, Def. 4). ν = 1 is the Cauchy mechanism with
    γ = s. The density is not log-concave.
    """
    nu = parameter("nu", typical=(1.0, 10.0), latex=r"\nu", log_scale=True, meaning="degrees of freedom of the noise")
    scale = parameter("scale", typical=(0.5, 5.0), latex="s", log_scale=True, meaning="scale of the noise")
    n, s = nu.symbol, scale.symbol

    def noise(u):
        c = sp.gamma((n + 1) / 2) / (sp.sqrt(n * sp.pi) * s * sp.gamma(n / 2))
        return c * (1 + u**2 / (n * s**2)) ** (-(n + 1) / 2)

    return additive_noise_mechanism(
        "student_t", "Student t mechanism", noise, (nu, scale),
        description="Adds Student t noise (nu degrees of freedom, scale s) to a real-valued query.",
        references=("Bun & Steinke 2019 (NeurIPS; arXiv:1906.02830), Sect. 3.1: Student's t noise",),
        defaults=(("nu", 3),),
    )
