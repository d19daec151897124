r"""The exponential mechanism over k outcomes (report-noisy-max with Gumbel noise), as a bounded-range pair.

The exponential mechanism with privacy parameter ε selects outcome y with probability proportional to
exp(ε u(D, y)/(2Δ)) for a utility u of sensitivity Δ (McSherry & Talwar 2007); report-noisy-max with
Gumbel noise of scale 2Δ/ε is the same mechanism. Durfee & Rogers 2019 ("Practical differentially private
top-k selection with pay-what-you-get composition", NeurIPS 2019, arXiv:1905.04273, Def. 4 and Lemma 4.2)
show it is ε-bounded-range (BR): the privacy loss log P(y)/Q(y) takes values in an interval of length ε.
Cesar & Rogers 2021 ("Bounding, concentrating, and truncating: unifying privacy loss composition for data
analytics", ALT 2021, arXiv:2004.07223, Lemma 3.2) bound every ε-BR mechanism by (ε²/8)-zCDP,
D_α <= α ε²/8; that bound is a claim in the regression registry, never this file's result.
"""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register


@register
def exponential_mechanism() -> Mechanism:
    r"""The exponential mechanism with parameter ε over k outcomes, at the neighbouring pair where every
    utility of D is equal and D' raises the utility of one outcome by Δ and lowers the other k - 1 by Δ.

    Then M(D) is uniform on the k outcomes and M(D') gives the raised outcome probability
    e^ε/(e^ε + k - 1) and each other 1/(e^ε + k - 1): the privacy loss takes the two values
    log((e^ε + k - 1)/(k e^ε)) and log((e^ε + k - 1)/k), an interval of length exactly ε (the largest a
    bounded-range ε allows). On the k - 1 lowered outcomes both pmfs are constant, so merging them into
    one outcome is a sufficient statistic and loses nothing (van Erven & Harremoës 2014, IEEE T-IT 60(7),
    Thm. 9, data processing with equality): the pair is written on {0, 1}, 0 the raised outcome and 1
    the merged others,

    P(x) = (k-1)^x / k,   Q(x) = e^(ε(1-x)) (k-1)^x / (e^ε + k - 1),

    with both orders of the pair (Mironov 2017, arXiv:1702.07476 v3, Def. 4). This is one instance of
    the mechanism (``neighbours="some"``), so its D_α is a lower bound on the supremum over all inputs
    (status ``lower_bound``: it can refute a claimed bound, never confirm one); over all utilities the
    supremum is that of the binary bounded-range pairs (Cesar & Rogers 2021, Sect. 3), which the ε²α/8
    bound covers.
    """
    x = sp.Symbol("x", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.1, 5.0), latex=r"\varepsilon", log_scale=True,
                    meaning="privacy parameter: probabilities ∝ exp(ε u/(2Δ)) (ε-DP and ε-BR)")
    k = parameter("k", sp.Interval(2, sp.oo), typical=(2.0, 100.0), latex="k", integer=True, log_scale=True,
                  meaning="number of outcomes")
    e, ks = eps.symbol, k.symbol
    P = (ks - 1) ** x / ks
    Q = sp.exp(e * (1 - x)) * (ks - 1) ** x / (sp.exp(e) + ks - 1)
    return Mechanism(
        name="exponential_mechanism",
        title="Exponential mechanism (report-noisy-max) over k outcomes",
        variable=x,
        support=sp.FiniteSet(0, 1),
        pairs=(AdjacentPair(P, Q, "uniform vs one outcome raised by Δ, the others lowered by Δ "
                                  "(the lowered outcomes merged)"),),
        parameters=(eps, k),
        description="Selects one of k outcomes with probability ∝ exp(ε u/(2Δ)) (report-noisy-max with Gumbel noise).",
        references=("Durfee & Rogers 2019 (NeurIPS; arXiv:1905.04273), Lemma 4.2: the exponential mechanism is ε-BR",
                    "Cesar & Rogers 2021 (ALT; arXiv:2004.07223), Lemma 3.2: ε-BR implies (ε²/8)-zCDP"),
        defaults=(("epsilon", 1), ("k", 10)),
        neighbours="some",  # one known bad case, not shown to be the worst: a lower bound
    )
