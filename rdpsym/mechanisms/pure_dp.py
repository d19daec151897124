"""The worst-case pair of an epsilon-DP mechanism (Bun and Steinke 2016, Prop. 3.3)."""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register


@register
def pure_dp() -> Mechanism:
    r"""Binary randomized response with privacy ε: the pair that attains the RDP of ε-DP.

    Output pmfs on {0, 1}: :math:`P = (e^\varepsilon, 1)/(1 + e^\varepsilon)`,
    :math:`Q = (1, e^\varepsilon)/(1 + e^\varepsilon)`, i.e. :math:`P(x) = e^{\varepsilon(1-x)}/(1+e^\varepsilon)`,
    :math:`Q(x) = e^{\varepsilon x}/(1+e^\varepsilon)`. Every ε-DP mechanism's pair of neighbouring output
    laws is a post-processing of this pair (Kairouz, Oh and Viswanath 2015, "The composition theorem for
    differential privacy", ICML, Thm. 2.1/Cor. 2.3), so by data processing its D_alpha bounds every
    ε-DP mechanism's; Bun and Steinke 2016 ("Concentrated Differential Privacy", TCC, arXiv:1605.02065,
    Prop. 3.3) bound it by ε²α/2 (ε-DP implies (ε²/2)-zCDP).
    """
    x = sp.Symbol("x", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.1, 5.0), latex=r"\varepsilon", meaning="the pure DP parameter",
                    log_scale=True)
    e = eps.symbol
    return Mechanism(
        name="pure_dp",
        title="Pure ε-DP (worst-case pair)",
        variable=x,
        support=sp.FiniteSet(0, 1),
        pairs=(AdjacentPair(sp.exp(e * (1 - x)) / (1 + sp.exp(e)), sp.exp(e * x) / (1 + sp.exp(e)),
                            "randomized response with log-odds epsilon"),),
        parameters=(eps,),
        description="The two-point pair (e^ε, 1)/(1 + e^ε) vs (1, e^ε)/(1 + e^ε): the worst case of ε-DP.",
        references=("Bun and Steinke 2016 (TCC; arXiv:1605.02065), Prop. 3.3",
                    "Kairouz, Oh and Viswanath 2015 (ICML; arXiv:1311.0776), Thm. 2.1"),
        defaults=(("epsilon", 1),),
    )
