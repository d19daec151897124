r"""eps-DP implies RDP (Mironov 2017, arXiv:1702.07476 v3, Lemma 1; Bun and Steinke 2016, Prop. 3.3).

If :math:`D_\infty(P\|Q) \le \varepsilon` and :math:`D_\infty(Q\|P) \le \varepsilon`, then for alpha >= 1

.. math:: D_\alpha(P\|Q) \le 2\alpha\varepsilon^2 \ \text{(Lemma 1)}, \qquad
          D_\alpha(P\|Q) \le \tfrac12 \alpha\varepsilon^2 \ \text{(Bun–Steinke)}.

The worst-case eps-DP pair is randomized response with p = e^eps / (1 + e^eps): P(x) = e^{eps x}/(1+e^eps),
Q(x) = e^{eps(1-x)}/(1+e^eps) on {0, 1}. :func:`worst_case_dp_curve` derives its exact curve with the
engine (from the pmfs, not typed in); :func:`dp_implies_rdp` checks a bound ``constant * alpha * eps^2``
against it (or against a mechanism's own curve with eps = its D_inf).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from ..derive.cache import memoize_derivation
from ..derive.engine import renyi_divergence
from ..derive.result import DivergenceResult
from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from ..specify.text import as_number
from .curve import as_curve
from .report import PropertyReport, report_from_rows

__all__ = ["worst_case_dp_mechanism", "worst_case_dp_curve", "dp_implies_rdp", "LEMMA_1", "BUN_STEINKE"]

#: The constants c in D_alpha <= c alpha eps^2.
LEMMA_1 = sp.Integer(2)
BUN_STEINKE = sp.Rational(1, 2)
REF = "Mironov 2017 (arXiv:1702.07476 v3), Lemma 1; Bun and Steinke 2016 (arXiv:1605.02065), Prop. 3.3"
ORDERS = (1, sp.Rational(101, 100), sp.Rational(3, 2), 2, 4, 10, 100, 1000)
EPSILONS = (sp.Rational(1, 100), sp.Rational(1, 10), sp.Rational(1, 2), 1, 2, 5)


def worst_case_dp_mechanism() -> Mechanism:
    """Randomized response parametrised by eps: reports the true bit with probability e^eps/(1+e^eps)."""
    x = sp.Symbol("x", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.01, 5.0), latex=r"\varepsilon", meaning="pure DP level", log_scale=True)
    e = eps.symbol
    P = sp.exp(e * x) / (1 + sp.exp(e))
    Q = sp.exp(e * (1 - x)) / (1 + sp.exp(e))
    return Mechanism("worst_case_dp", x, sp.FiniteSet(0, 1), (AdjacentPair(P, Q, "true bit 1 vs 0"),), (eps,),
                     title="Randomized response at level eps (the worst-case eps-DP pair)",
                     references=("Mironov 2017 (arXiv:1702.07476 v3), Prop. 5",))


@memoize_derivation  # not lru_cache: a timed-out derivation is not kept
def worst_case_dp_curve() -> DivergenceResult:
    """D_alpha of the worst-case eps-DP pair, derived by the engine (one direction; the pair is symmetric)."""
    m = worst_case_dp_mechanism()
    pair = m.pairs[0]
    return renyi_divergence(pair.P, pair.Q, m.variable, m.support, params=m.parameters,
                            label="D_alpha of the worst-case eps-DP pair")


def dp_implies_rdp(target=None, values: dict | None = None, *, constant=BUN_STEINKE, epsilons=EPSILONS,
                   orders=ORDERS, dps: int = 30) -> PropertyReport:
    r"""Check :math:`D_\alpha \le c\,\alpha\,\varepsilon^2` for alpha >= 1 (``c = constant``).

    ``target=None``: the exact curve of the worst-case eps-DP pair at each of ``epsilons``. A Mechanism
    or DivergenceResult: its curve at ``values`` with eps = its D_inf (the report is inconclusive when
    D_inf is infinite: the mechanism is not eps-DP and the lemma does not apply).
    """
    c = sp.nsimplify(constant)
    name = f"eps-DP implies RDP: D_alpha <= {sp.sstr(c)} alpha eps^2"
    rows = []
    with mpmath.workdps(dps + 10):
        if target is None:
            curve = worst_case_dp_curve()
            cases = [(f"eps={sp.sstr(e)}", as_curve(curve, {"epsilon": e}), mpmath.mpf(sp.Float(e, dps + 10))) for e in epsilons]
            label = curve.label
        else:
            crv = as_curve(target, values)
            eps = crv.value(sp.oo, dps + 10)
            label = crv.label
            if not mpmath.isfinite(eps):
                out = report_from_rows(name, [("D_inf", None, None, 0, "D_inf is infinite: not eps-DP")], 0,
                                       reference=REF, target=label, detail="not applicable: D_inf is infinite, so the "
                                       "curve is not eps-DP for any eps.", extra={"applicable": False})
                return out
            cases = [(f"eps=D_inf={mpmath.nstr(eps, 8)}", crv, eps)]
        cf = mpmath.mpf(sp.Float(c, dps + 10))
        for lab, crv, eps in cases:
            for a in orders:
                am = mpmath.mpf(sp.Float(as_number(a, "orders"), dps + 10))
                rows.append((f"{lab} alpha={a}", crv.value(a, dps + 10), cf * am * eps**2))
        return report_from_rows(name, rows, mpmath.mpf(10) ** (-(dps - 8)), reference=REF, target=label)
