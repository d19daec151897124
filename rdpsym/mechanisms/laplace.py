"""The Laplace mechanism (Mironov 2017, Prop. 6, Table II)."""

import sympy as sp

from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import additive_noise_mechanism


@register
def laplace() -> Mechanism:
    """Laplace noise of scale b added to a query of the given sensitivity.

    Output densities for adjacent inputs: P(x) = exp(-|x|/b)/(2b), Q(x) = exp(-|x - t|/b)/(2b) for every
    shift t of the query with |t| <= sensitivity; the RDP is the supremum over t (at |t| = sensitivity).
    """
    b = parameter("b", typical=(0.1, 10.0), latex=r"\lambda", meaning="scale of the Laplace noise", log_scale=True)
    bs = b.symbol
    return additive_noise_mechanism(
        "laplace", "Laplace mechanism", lambda u: sp.exp(-sp.Abs(u) / bs) / (2 * bs), (b,),
        description="Adds Laplace(0, b) noise to a real-valued query.",
        references=("Mironov 2017 (arXiv:1702.07476 v3), Prop. 6 and Table II",),
        display=(("b", 1 / bs, "1/λ"),),  # plots show 1/lambda, as Mironov 2017, Fig. 1
    )
