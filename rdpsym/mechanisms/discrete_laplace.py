"""The discrete Laplace (two-sided geometric) mechanism (Ghosh, Roughgarden and Sundararajan 2012;
Canonne, Kamath and Steinke 2020, Def. 26)."""

import sympy as sp

from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import integer_sensitivity, integer_shift


@register
def discrete_laplace() -> Mechanism:
    r"""Discrete Laplace noise of scale b added to an integer query of integer sensitivity Δ.

    Output pmfs on Z for adjacent inputs: :math:`P(k) = \frac{1 - e^{-1/b}}{1 + e^{-1/b}} e^{-|k|/b}`
    (the normaliser is :math:`\sum_{j \in \mathbb Z} e^{-|j|/b} = \frac{1 + e^{-1/b}}{1 - e^{-1/b}}
    = \coth(1/(2b))`, two geometric series), and :math:`Q(k) = P(k - t)` for every integer shift t with
    |t| <= Δ. It is (Δ/b)-DP (Ghosh, Roughgarden and Sundararajan 2012, "Universally utility-maximizing
    privacy mechanisms", SIAM J. Comput. 41(6), Def. 2.1 and Thm. 2.2, with alpha = e^{-1/b};
    Canonne, Kamath and Steinke 2020, Def. 26 and Prop. 27).
    """
    k, t = sp.Symbol("k", integer=True), integer_shift()
    b = parameter("b", typical=(0.5, 5.0), latex="b", meaning="scale of the discrete Laplace noise", log_scale=True)
    d = integer_sensitivity()
    bs, ds = b.symbol, d.symbol
    c = sp.tanh(1 / (2 * bs))  # (1 - e^{-1/b})/(1 + e^{-1/b}): the reciprocal of the normaliser
    return Mechanism(
        name="discrete_laplace",
        title="Discrete Laplace mechanism",
        variable=k,
        support=sp.S.Integers,
        pairs=(AdjacentFamily(c * sp.exp(-sp.Abs(k) / bs), c * sp.exp(-sp.Abs(k - t) / bs), shift=t,
                              over=sp.Interval(-ds, ds), label="f(D) = 0, f(D') = t, integer |t| <= sensitivity"),),
        parameters=(b, d),
        description="Adds discrete Laplace noise P(k) ∝ exp(-|k|/b) on the integers to an integer-valued query.",
        references=("Ghosh, Roughgarden and Sundararajan 2012 (SIAM J. Comput. 41(6)), Def. 2.1 and Thm. 2.2",
                    "Canonne, Kamath and Steinke 2020 (NeurIPS; arXiv:2004.00010), Def. 26 and Prop. 27"),
        defaults=(("b", 1), ("sensitivity", 1)),
    )
