r"""The multivariate Gaussian mechanism with a covariance: correlated 2-D Gaussian noise on an l2 ball.

Noise N(0, Σ) with Σ = σ² [[1, ρ], [ρ, 1]] added to a query in R² of l2 sensitivity Δ (Dwork & Roth 2014,
*The Algorithmic Foundations of Differential Privacy*, Def. 3.8 and Thm. A.1, the l2 sensitivity). For a
shift t, D_α(N(0, Σ) || N(t, Σ)) = α tᵀ Σ⁻¹ t / 2 (Gil, Alajaji & Linder 2013, Inf. Sci. 249, the
multivariate normal entry with equal covariances), and its supremum over ||t||_2 <= Δ is α Δ² λ_max(Σ⁻¹)/2
= α Δ²/(2 σ² (1 - |ρ|)) (Rayleigh-Ritz; the eigenvalues of Σ are σ²(1 ± ρ)). That formula is a claim in
the regression registry: the engine derives the divergence with the shift symbolic
(:mod:`rdpsym.derive.multivariate`) and takes the supremum over the ball (:mod:`rdpsym.derive.balls`).
"""

import sympy as sp

from ..specify.adjacency import AdjacentFamily, ShiftBall
from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register


@register
def multivariate_gaussian() -> Mechanism:
    r"""2-D Gaussian noise of covariance σ² [[1, ρ], [ρ, 1]] added to a query of l2 sensitivity Δ.

    Output densities for adjacent inputs: P(x) = exp(-xᵀ Σ⁻¹ x / 2) / (2π σ² √(1 - ρ²)) and Q(x) = P(x - t)
    for every shift t = (t1, t2) with ||t||_2 <= sensitivity; the RDP is the supremum over the ball
    (Mironov 2017, arXiv:1702.07476 v3, Def. 4, both orders of each pair).
    """
    x1, x2 = sp.symbols("x1 x2", real=True)
    t1, t2 = sp.symbols("t1 t2", real=True)
    sigma = parameter("sigma", typical=(0.5, 5.0), latex=r"\sigma", log_scale=True,
                      meaning="standard deviation of each coordinate of the noise")
    rho = parameter("rho", sp.Interval.open(-1, 1), typical=(-0.5, 0.5), latex=r"\rho",
                    meaning="correlation of the two coordinates of the noise")
    d = parameter("sensitivity", typical=(0.5, 2.0), latex=r"\Delta", meaning="L2 sensitivity of the query")
    s, p = sigma.symbol, rho.symbol

    def normal(m1, m2):
        u1, u2 = x1 - m1, x2 - m2
        return (sp.exp(-(u1**2 - 2 * p * u1 * u2 + u2**2) / (2 * s**2 * (1 - p**2)))
                / (2 * sp.pi * s**2 * sp.sqrt(1 - p**2)))

    return Mechanism(
        name="multivariate_gaussian",
        title="Multivariate Gaussian mechanism (2-D, correlated)",
        variable=(x1, x2),
        support=sp.S.Reals**2,
        pairs=(AdjacentFamily(normal(0, 0), normal(t1, t2), shift=(t1, t2), over=ShiftBall(2, d.symbol),
                              label="f(D) = 0, f(D') = t, ||t||_2 <= sensitivity"),),
        parameters=(sigma, rho, d),
        description="Adds N(0, Σ) noise, Σ = σ²[[1, ρ], [ρ, 1]], to a query in R².",
        references=("Dwork & Roth 2014, Def. 3.8 and Thm. A.1 (l2 sensitivity)",
                    "Gil, Alajaji & Linder 2013 (Inf. Sci. 249), multivariate normal with equal covariances"),
        defaults=(("rho", 0),),
    )
