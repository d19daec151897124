"""Randomized response: report the true bit with probability p (Mironov 2017, Prop. 5, Table II)."""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register


@register
def randomized_response() -> Mechanism:
    """Randomized response on one bit.

    Output pmfs on {0, 1} for true bits 1 and 0: P(x) = p^x (1-p)^(1-x), Q(x) = (1-p)^x p^(1-x).
    p is restricted to (1/2, 1): p < 1/2 is the same mechanism with the output flipped.
    """
    x = sp.Symbol("x", integer=True, nonnegative=True)
    p = parameter("p", sp.Interval.open(sp.Rational(1, 2), 1), typical=(0.55, 0.95), latex="p",
                  meaning="probability of reporting the true bit")
    s = p.symbol
    return Mechanism(
        name="randomized_response",
        title="Randomized response",
        variable=x,
        support=sp.FiniteSet(0, 1),
        pairs=(AdjacentPair(s**x * (1 - s) ** (1 - x), (1 - s) ** x * s ** (1 - x), "true bit 1 vs 0"),),
        parameters=(p,),
        description="Reports the true bit with probability p and its negation otherwise.",
        references=("Mironov 2017 (arXiv:1702.07476 v3), Prop. 5 and Table II",),
    )
