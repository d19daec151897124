r"""The bounded Laplace mechanism: Laplace noise truncated and renormalised to the query's range [l, u].

Holohan, Antonatos, Braghin & Mac Aonghusa 2018, "The bounded Laplace mechanism in differential privacy"
(Journal of Privacy and Confidentiality 10(1), 2020; arXiv:1808.10410), Def. 3.1: the output density for a
query value μ in [l, u] is exp(-|x - μ|/b) / (b C(μ)) on [l, u], with the normaliser
C(μ) = 2 - exp(-(μ - l)/b) - exp(-(u - μ)/b) (their C_q(b)). The normaliser depends on the input, so the
privacy loss carries log C(μ')/C(μ) besides the Laplace term: b = Δ/ε is not ε-DP; their condition for
ε-DP (Sect. 4), b >= Δ/(ε - log ΔC(b)), uses ΔC(b) = C(l + Δ)/C(l), the neighbours at the lower bound.

Here l = 0 and u = ``width`` (only u - l matters: translating the range translates both outputs), and the
neighbouring inputs are the pair at the lower bound, f(D) = 0 and f(D') = sensitivity, where the normaliser
is smallest: the pair of Holohan et al.'s ε condition (both orders), not every pair of positions in
[0, width]. The curve is this pair's divergence (its label says so), a lower bound on the supremum over all
positions (``neighbours="some"``, status ``lower_bound``). (A family over 0 <= t <= sensitivity derives in closed form at each t, but the engine does not
show it non-decreasing in t, and takes about a minute: the single pair is what is shipped.)
"""

import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register


@register
def bounded_laplace() -> Mechanism:
    r"""Laplace noise of scale b truncated to [0, width], on a query in [0, width] of sensitivity Δ < width.

    Output densities on [0, width]: P(x) = exp(-x/b) / (b (1 - exp(-width/b))) for f(D) = 0 and
    Q(x) = exp(-|x - Δ|/b) / (b (2 - exp(-Δ/b) - exp(-(width - Δ)/b))) for f(D') = Δ (Holohan et al. 2018,
    Def. 3.1 with l = 0, u = width), both orders (Mironov 2017, arXiv:1702.07476 v3, Def. 4).
    """
    x = sp.Symbol("x", real=True)
    b = parameter("b", typical=(0.1, 10.0), latex="b", meaning="scale of the Laplace noise before truncation",
                  log_scale=True)
    d = parameter("sensitivity", typical=(0.5, 2.0), latex=r"\Delta", meaning="L1 sensitivity of the query")
    w = parameter("width", sp.Interval.open(d.symbol, sp.oo), typical=(3.0, 10.0), latex="u - l",
                  meaning="width u - l of the query's range [l, u] (the output range), larger than the sensitivity")
    bs, ds, ws = b.symbol, d.symbol, w.symbol

    def density(mean):
        c = 2 - sp.exp(-mean / bs) - sp.exp(-(ws - mean) / bs)
        return sp.exp(-sp.Abs(x - mean) / bs) / (bs * c)

    return Mechanism(
        name="bounded_laplace",
        title="Bounded Laplace mechanism",
        variable=x,
        support=sp.Interval(0, ws),
        pairs=(AdjacentPair(density(0), density(ds),
                            "f(D) = l, f(D') = l + sensitivity (the neighbours at the lower bound, Holohan et al.'s "
                            "worst case of the privacy loss; other positions are not covered)"),),
        parameters=(b, d, w),
        description="Adds Laplace(0, b) noise truncated and renormalised to the query's range [l, u].",
        references=("Holohan et al. 2018 (JPC 10(1); arXiv:1808.10410), Def. 3.1 and Sect. 4",),
        defaults=(("width", 4),),
        neighbours="some",  # one known bad case, not shown to be the worst: a lower bound
    )
