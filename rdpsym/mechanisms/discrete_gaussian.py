"""The discrete Gaussian mechanism (Canonne, Kamath and Steinke 2020, Def. 1, Prop. 5 and Cor. 9)."""

import sympy as sp

from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import integer_sensitivity, integer_shift


@register
def discrete_gaussian() -> Mechanism:
    r"""Discrete Gaussian noise N_Z(0, σ²) added to an integer query of integer sensitivity Δ.

    Output pmfs on Z for adjacent inputs (Canonne, Kamath and Steinke 2020, "The Discrete Gaussian for
    Differential Privacy", NeurIPS, arXiv:2004.00010, Def. 1):
    :math:`P(k) = e^{-k^2/(2\sigma^2)} / \sum_{j \in \mathbb Z} e^{-j^2/(2\sigma^2)}` and
    :math:`Q(k) = P(k - t)` for every integer shift t with |t| <= Δ. The normaliser is the theta sum it
    is (a sympy ``Sum``, evaluated by the numeric path); D_alpha is a ratio of theta sums with no closed
    form, bounded by alpha Δ²/(2σ²) (op. cit., Prop. 5 and Cor. 9: (Δ²/(2σ²))-concentrated DP), with
    equality when (alpha - 1) Δ is an integer (then the sum of P^alpha Q^(1-alpha) is a shifted copy of
    the normaliser).
    """
    k, j, t = sp.Symbol("k", integer=True), sp.Symbol("j", integer=True), integer_shift()
    sigma = parameter("sigma", typical=(0.5, 10.0), latex=r"\sigma", meaning="scale of the discrete Gaussian",
                      log_scale=True)
    d = integer_sensitivity()
    s, ds = sigma.symbol, d.symbol
    Z = sp.Sum(sp.exp(-j**2 / (2 * s**2)), (j, -sp.oo, sp.oo))
    return Mechanism(
        name="discrete_gaussian",
        title="Discrete Gaussian mechanism",
        variable=k,
        support=sp.S.Integers,
        pairs=(AdjacentFamily(sp.exp(-k**2 / (2 * s**2)) / Z, sp.exp(-(k - t)**2 / (2 * s**2)) / Z, shift=t,
                              over=sp.Interval(-ds, ds), label="f(D) = 0, f(D') = t, integer |t| <= sensitivity"),),
        parameters=(sigma, d),
        description="Adds discrete Gaussian noise P(k) ∝ exp(-k²/(2σ²)) on the integers to an integer-valued query.",
        references=("Canonne, Kamath and Steinke 2020 (NeurIPS; arXiv:2004.00010), Def. 1, Prop. 5 and Cor. 9",),
        defaults=(("sigma", 1), ("sensitivity", 1)),
    )
