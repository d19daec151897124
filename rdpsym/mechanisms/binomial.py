r"""The binomial mechanism: Bin(n, 1/2) noise added to an integer-valued query of sensitivity 1.

Dwork, Kenthapadi, McSherry, Mironov & Naor 2006 ("Our data, ourselves: privacy via distributed noise
generation", EUROCRYPT 2006, Sect. 3: binomial noise from fair coins) and Agarwal, Suresh, Yu, Kumar &
McMahan 2018 ("cpSGD: communication-efficient and differentially-private distributed SGD", NeurIPS 2018,
arXiv:1805.10559, Thm. 1: the binomial mechanism is (ε, δ)-DP with δ > 0, never pure DP).

The supports {0, ..., n} and {1, ..., n + 1} of neighbouring outputs differ: the output 0 has probability
2^-n under M(D) and 0 under M(D'), so D_α(M(D)||M(D')) = +oo for every α >= 1 (van Erven & Harremoës
2014, IEEE T-IT 60(7), Thm. 8: for α >= 1, D_α < oo needs P << Q): there is no finite RDP. For
0 < α < 1 the divergence is finite, a sum over the overlap {1, ..., n}; the engine reaches no closed
form of it (a sum of C(n, x)^α C(n, x - 1)^(1-α)), so those values are numeric (finite sums).
"""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register


@register
def binomial() -> Mechanism:
    r"""Bin(n, 1/2) noise added to an integer query of sensitivity 1 (a count).

    Output pmfs for adjacent inputs with f(D) = 0, f(D') = 1: P(x) = C(n, x)/2^n on {0, ..., n} and
    Q(x) = P(x - 1), both written on {0, ..., n + 1} (0 outside their own supports). The neighbours of a
    sensitivity-1 integer query have t in {-1, 1}, and by translation D_α(P_0||P_{-1}) = D_α(P_1||P_0),
    so this pair in both orders (Mironov 2017, arXiv:1702.07476 v3, Def. 4) is the whole neighbouring
    relation. n >= 3 (declared) lets the engine split the support into {0}, {1}, [2, n - 1], {n}, {n + 1}.
    """
    x = sp.Symbol("x", integer=True)
    n = parameter("n", sp.Range(3, sp.oo), typical=(4.0, 100.0), latex="n", integer=True, log_scale=True,
                  meaning="number of fair coins (the noise is Bin(n, 1/2)), n >= 3")
    ns = n.symbol

    def pmf(mean):
        return sp.Piecewise((sp.binomial(ns, x - mean) / 2**ns, (x - mean >= 0) & (x - mean <= ns)), (0, True))

    return Mechanism(
        name="binomial",
        title="Binomial mechanism",
        variable=x,
        support=sp.Range(0, ns + 2),
        pairs=(AdjacentPair(pmf(0), pmf(1), "f(D) = 0, f(D') = 1 (sensitivity 1)"),),
        parameters=(n,),
        description="Adds Bin(n, 1/2) noise to an integer-valued query of sensitivity 1.",
        references=("Dwork et al. 2006 (EUROCRYPT), Sect. 3: binomial noise",
                    "Agarwal et al. 2018 (NeurIPS; arXiv:1805.10559), Thm. 1: cpSGD's binomial mechanism"),
        defaults=(("n", 16),),
    )
