"""The Skellam mechanism (Agarwal, Kairouz and Liu 2021, Sect. 3)."""

import sympy as sp

from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import integer_sensitivity, integer_shift


@register
def skellam() -> Mechanism:
    r"""Skellam noise Poisson(μ) - Poisson(μ) added to an integer query of integer sensitivity Δ.

    Output pmfs on Z for adjacent inputs: :math:`P(k) = e^{-2\mu} I_k(2\mu)` (the Skellam law
    Sk(μ, μ), variance 2μ; :math:`I_k` the modified Bessel function, :math:`I_{-k} = I_k`, DLMF 10.27.1)
    and :math:`Q(k) = P(k - t)` for every integer shift t with |t| <= Δ (Agarwal, Kairouz and Liu 2021,
    "The Skellam Mechanism for Differentially Private Federated Learning", NeurIPS, arXiv:2110.04995,
    Sect. 3). D_alpha has no closed form; op. cit. bounds the RDP (Sect. 3, Thm. 3.5).
    """
    k, t = sp.Symbol("k", integer=True), integer_shift()
    mu = parameter("mu", typical=(1.0, 50.0), latex=r"\mu", meaning="rate of each of the two Poisson variables",
                   log_scale=True)
    d = integer_sensitivity()
    m, ds = mu.symbol, d.symbol
    return Mechanism(
        name="skellam",
        title="Skellam mechanism",
        variable=k,
        support=sp.S.Integers,
        pairs=(AdjacentFamily(sp.exp(-2 * m) * sp.besseli(k, 2 * m), sp.exp(-2 * m) * sp.besseli(k - t, 2 * m),
                              shift=t, over=sp.Interval(-ds, ds),
                              label="f(D) = 0, f(D') = t, integer |t| <= sensitivity"),),
        parameters=(mu, d),
        description="Adds Skellam noise Poisson(mu) - Poisson(mu) to an integer-valued query.",
        references=("Agarwal, Kairouz and Liu 2021 (NeurIPS; arXiv:2110.04995), Sect. 3 and Thm. 3.5",),
        defaults=(("mu", 10), ("sensitivity", 1)),
    )
