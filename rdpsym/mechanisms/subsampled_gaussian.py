"""The Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang 2019, arXiv:1908.10530)."""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register
from ._densities import normal_pdf


@register
def subsampled_gaussian() -> Mechanism:
    """Gaussian noise N(0, sigma^2) on a sum query of sensitivity 1 over a Poisson subsample (rate q).

    Output densities for adjacent inputs (the differing record is included with probability q):
    P = (1 - q) N(0, sigma^2) + q N(1, sigma^2) and Q = N(0, sigma^2).
    """
    x = sp.Symbol("x", real=True)
    q = parameter("q", sp.Interval(0, 1), typical=(0.001, 0.5), latex="q", meaning="Poisson sampling rate", log_scale=True)
    sigma = parameter("sigma", typical=(0.5, 10.0), latex=r"\sigma", meaning="noise multiplier (std / sensitivity)", log_scale=True)
    qs, s = q.symbol, sigma.symbol

    def normal(mean):
        return normal_pdf(x, mean, s)

    return Mechanism(
        name="subsampled_gaussian",
        title="Poisson-subsampled Gaussian mechanism",
        variable=x,
        support=sp.S.Reals,
        pairs=(AdjacentPair((1 - qs) * normal(0) + qs * normal(1), normal(0), "record sampled with probability q"),),
        parameters=(q, sigma),
        description="Samples each record with probability q, then adds N(0, sigma^2) noise to a sum of sensitivity 1.",
        references=("Mironov, Talwar, Zhang 2019 (arXiv:1908.10530), Sect. 3",),
    )
