"""The Gaussian mechanism (Mironov 2017, Prop. 7, Table II)."""

from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from ._densities import additive_noise_mechanism, normal_pdf


@register
def gaussian() -> Mechanism:
    """Gaussian noise N(0, sigma^2) added to a query of the given (L2) sensitivity.

    Output densities for adjacent inputs: N(0, sigma^2) and N(t, sigma^2) for every shift t of the
    query with |t| <= sensitivity; the RDP is the supremum over t (at |t| = sensitivity).
    """
    sigma = parameter("sigma", typical=(0.5, 10.0), latex=r"\sigma", meaning="standard deviation of the noise",
                      log_scale=True)
    return additive_noise_mechanism(
        "gaussian", "Gaussian mechanism", lambda u: normal_pdf(u, 0, sigma.symbol), (sigma,), sensitivity="L2",
        description="Adds N(0, sigma^2) noise to a real-valued query.",
        references=("Mironov 2017 (arXiv:1702.07476 v3), Prop. 7 and Table II",),
        defaults=(("sigma", 1),),  # e.g. rdpsym plot conversion without --param
    )
