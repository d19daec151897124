"""The Gaussian mechanism (Mironov 2017, Prop. 7, Table II)."""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register
from ._densities import normal_pdf


@register
def gaussian() -> Mechanism:
    """Gaussian noise N(0, sigma^2) added to a query of the given (L2) sensitivity.

    Output densities for adjacent inputs: N(0, sigma^2) and N(sensitivity, sigma^2).
    """
    x = sp.Symbol("x", real=True)
    sigma = parameter("sigma", typical=(0.5, 10.0), latex=r"\sigma", meaning="standard deviation of the noise", log_scale=True)
    d = parameter("sensitivity", typical=(0.5, 2.0), latex=r"\Delta", meaning="L2 sensitivity of the query")
    s, ds = sigma.symbol, d.symbol

    def normal(mean):
        return normal_pdf(x, mean, s)

    return Mechanism(
        name="gaussian",
        title="Gaussian mechanism",
        variable=x,
        support=sp.S.Reals,
        pairs=(AdjacentPair(normal(0), normal(ds), "f(D) = 0, f(D') = sensitivity"),),
        parameters=(sigma, d),
        description="Adds N(0, sigma^2) noise to a real-valued query.",
        references=("Mironov 2017 (arXiv:1702.07476 v3), Prop. 7 and Table II",),
        defaults=(("sigma", 1),),  # e.g. rdpsym plot conversion without --param
    )
