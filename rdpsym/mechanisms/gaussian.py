"""The Gaussian mechanism (Mironov 2017, Prop. 7, Table II)."""

import sympy as sp

from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import gaussian_noise


@register
def gaussian() -> Mechanism:
    """Gaussian noise N(0, sigma^2) added to a query of the given (L2) sensitivity.

    Output densities for adjacent inputs: N(0, sigma^2) and N(t, sigma^2) for every shift t of the
    query with |t| <= sensitivity; the RDP is the supremum over t (at |t| = sensitivity).
    """
    x, sigma, normal = gaussian_noise("standard deviation of the noise")
    d = parameter("sensitivity", typical=(0.5, 2.0), latex=r"\Delta", meaning="L2 sensitivity of the query")
    ds, t = d.symbol, sp.Symbol("t", real=True)
    return Mechanism(
        name="gaussian",
        title="Gaussian mechanism",
        variable=x,
        support=sp.S.Reals,
        pairs=(AdjacentFamily(normal(0), normal(t), shift=t, over=sp.Interval(-ds, ds),
                              label="f(D) = 0, f(D') = t, |t| <= sensitivity"),),
        parameters=(sigma, d),
        description="Adds N(0, sigma^2) noise to a real-valued query.",
        references=("Mironov 2017 (arXiv:1702.07476 v3), Prop. 7 and Table II",),
        defaults=(("sigma", 1),),  # e.g. rdpsym plot conversion without --param
    )
