"""k-ary randomized response (Warner 1965; Kairouz, Oh and Viswanath 2016, Sect. 2)."""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register


@register
def k_randomized_response() -> Mechanism:
    r"""k-ary randomized response: report the true value of k with probability e^ε/(e^ε + k - 1), each
    other value with probability 1/(e^ε + k - 1) (Kairouz, Oh and Viswanath 2016, "Discrete distribution
    estimation under local privacy", ICML, arXiv:1602.07387, Sect. 2, k-RR).

    Neighbouring inputs are two different true values u != v. The k outcomes are merged into three:
    {u}, the k - 2 others and {v}, with masses P = (e^ε, k - 2, 1)/(e^ε + k - 1) and
    Q = (1, k - 2, e^ε)/(e^ε + k - 1) on {0, 1, 2} (so Q(x) = P(2 - x): the engine derives one direction
    and gets the other by this reflection). This is exact for every divergence: each of the k - 2
    other outcomes has P = Q = 1/(e^ε + k - 1) (likelihood ratio 1), and merging outcomes with equal
    ratio p_i/q_i = r leaves every term sum_i q_i (p_i/q_i)^alpha = r^alpha sum_i q_i unchanged, so
    D_alpha (every alpha, KL and D_inf) is that of the merged pair. The pair does not depend on u, v:
    every pair of neighbouring inputs is this one up to relabelling. Here k >= 3; k = 2 (no middle
    outcome) is binary randomized response, the built-in ``pure_dp``.
    """
    x = sp.Symbol("x", integer=True, nonnegative=True)
    kk = parameter("k", sp.Range(3, sp.oo), typical=(3, 10), latex="k", meaning="number of possible values",
                   integer=True)
    eps = parameter("epsilon", typical=(0.1, 5.0), latex=r"\varepsilon", meaning="the local DP parameter",
                    log_scale=True)
    k, e = kk.symbol, eps.symbol
    n = sp.exp(e) + k - 1

    def pmf(first, last):
        return sp.Piecewise((first, sp.Eq(x, 0)), (k - 2, sp.Eq(x, 1)), (last, True)) / n

    return Mechanism(
        name="k_randomized_response",
        title="k-ary randomized response",
        variable=x,
        support=sp.FiniteSet(0, 1, 2),
        pairs=(AdjacentPair(pmf(sp.exp(e), 1), pmf(1, sp.exp(e)),
                            "true values u != v; outcomes {u}, the k - 2 others, {v}"),),
        parameters=(kk, eps),
        description="Reports the true one of k values with probability e^ε/(e^ε + k - 1), else a uniform other one.",
        references=("Kairouz, Oh and Viswanath 2016 (ICML; arXiv:1602.07387), Sect. 2 (k-RR)",
                    "Warner 1965 (JASA 60(309)), randomized response"),
        defaults=(("k", 4), ("epsilon", 1)),
    )
