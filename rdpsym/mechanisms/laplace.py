"""The Laplace mechanism (Mironov 2017, Prop. 6, Table II)."""

import sympy as sp

from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register


@register
def laplace() -> Mechanism:
    """Laplace noise of scale b added to a query of the given sensitivity.

    Output densities for adjacent inputs: P(x) = exp(-|x|/b)/(2b), Q(x) = exp(-|x - t|/b)/(2b) for every
    shift t of the query with |t| <= sensitivity; the RDP is the supremum over t (at |t| = sensitivity).
    """
    x = sp.Symbol("x", real=True)
    b = parameter("b", typical=(0.1, 10.0), latex=r"\lambda", meaning="scale of the Laplace noise", log_scale=True)
    d = parameter("sensitivity", typical=(0.5, 2.0), latex=r"\Delta", meaning="L1 sensitivity of the query")
    bs, ds, t = b.symbol, d.symbol, sp.Symbol("t", real=True)
    return Mechanism(
        name="laplace",
        title="Laplace mechanism",
        variable=x,
        support=sp.S.Reals,
        pairs=(AdjacentFamily(sp.exp(-sp.Abs(x) / bs) / (2 * bs), sp.exp(-sp.Abs(x - t) / bs) / (2 * bs), shift=t,
                              over=sp.Interval(-ds, ds), label="f(D) = 0, f(D') = t, |t| <= sensitivity"),),
        parameters=(b, d),
        description="Adds Laplace(0, b) noise to a real-valued query.",
        references=("Mironov 2017 (arXiv:1702.07476 v3), Prop. 6 and Table II",),
        display=(("b", 1 / bs, "1/λ"),),  # plots show 1/lambda, as Mironov 2017, Fig. 1
    )
