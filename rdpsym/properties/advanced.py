r"""Advanced composition (Mironov 2017, arXiv:1702.07476 v3, Prop. 4 and Corollary 1), checked on the
n-fold composition of randomized response against the exact composed distribution.

n independent randomized responses with probability p (each eps-DP, eps = log(p/(1-p))) on adjacent
inputs that differ in every bit: the output's likelihood ratio depends only on the number K of reports
agreeing with D, so P = Binomial(n, p) and Q = Binomial(n, 1-p) on K, with log P_k/Q_k = (2k - n) eps.
All sums are exact finite sums at ``dps + 20`` digits.

* Prop. 4: for every event S, :math:`P(S) \le \exp\bigl(2\varepsilon\sqrt{n\log(1/Q(S))}\bigr) Q(S)`;
  checked on every upper set {K >= j}, the likelihood-ratio (tightest) events.
* Corollary 1: if :math:`\log(1/\delta) \ge \varepsilon^2 n`, the composition is
  :math:`(4\varepsilon\sqrt{2n\log(1/\delta)}, \delta)`-DP; checked with the exact
  :math:`\delta(\varepsilon') = \sum_k \max(P_k - e^{\varepsilon'} Q_k, 0)`.
* Prop. 1 (composition) exactly: :math:`D_\alpha(P\|Q) = n\,D_\alpha(\mathrm{RR}_p)` by direct summation.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from ..specify.text import as_number
from .report import PropertyReport, report_from_rows

__all__ = ["binomial_pair", "advanced_composition", "corollary_1", "rr_self_composition"]

REF4 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 4"
REFC1 = "Mironov 2017 (arXiv:1702.07476 v3), Corollary 1"


def _check(p, n):
    p = sp.nsimplify(p)
    if not (sp.Rational(1, 2) < p < 1):
        raise ValueError(f"p must be in (1/2, 1); got {p}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}")
    return p


def binomial_pair(p, n: int):
    """(P_k, Q_k) for k = 0..n as mpmath numbers, and eps = log(p/(1-p))."""
    p = _check(p, n)
    pm = mpmath.mpf(sp.Float(p, mpmath.mp.dps + 5)) if not p.is_Rational else mpmath.mpf(p.p) / p.q
    P = [mpmath.binomial(n, k) * pm**k * (1 - pm) ** (n - k) for k in range(n + 1)]
    Q = [mpmath.binomial(n, k) * (1 - pm) ** k * pm ** (n - k) for k in range(n + 1)]
    return P, Q, mpmath.log(pm / (1 - pm))


def advanced_composition(p, n: int, *, constant=2, dps: int = 30) -> PropertyReport:
    r"""Prop. 4 with ``constant`` (2 in the paper) in log form on every upper set {K >= j}:
    ``log P(S) <= constant * eps * sqrt(n log(1/Q(S))) + log Q(S)``."""
    c = sp.nsimplify(constant)
    rows = []
    with mpmath.workdps(dps + 20):
        P, Q, eps = binomial_pair(p, n)
        cf = mpmath.mpf(sp.Float(c, dps + 20))
        for j in range(n + 1):
            ps, qs = mpmath.fsum(P[j:]), mpmath.fsum(Q[j:])
            rows.append((f"S = {{K >= {j}}}", mpmath.log(ps), cf * eps * mpmath.sqrt(n * mpmath.log(1 / qs)) + mpmath.log(qs)))
        return report_from_rows(f"advanced composition (Prop. 4, constant {sp.sstr(c)})", rows,
                                mpmath.mpf(10) ** (-(dps - 5)), reference=REF4,
                                target=f"{n}-fold randomized response, p = {sp.nsimplify(p)}")


def corollary_1(p, n: int, deltas=(sp.Rational(1, 10**3), sp.Rational(1, 10**6), sp.Rational(1, 10**10)), *,
                constant=4, dps: int = 30) -> PropertyReport:
    r"""Corollary 1 with ``constant`` (4 in the paper): the exact delta at
    ``eps' = constant * eps * sqrt(2 n log(1/delta))`` is at most delta, for each delta satisfying the
    corollary's condition log(1/delta) >= eps^2 n (the others are skipped and noted)."""
    c = sp.nsimplify(constant)
    rows, skipped = [], []
    with mpmath.workdps(dps + 20):
        P, Q, eps = binomial_pair(p, n)
        cf = mpmath.mpf(sp.Float(c, dps + 20))
        for d in deltas:
            dm = mpmath.mpf(sp.Float(sp.nsimplify(d), dps + 20))
            if mpmath.log(1 / dm) < eps**2 * n:
                skipped.append(str(d))
                continue
            e2 = cf * eps * mpmath.sqrt(2 * n * mpmath.log(1 / dm))
            exact = mpmath.fsum(max(pk - mpmath.exp(e2) * qk, 0) for pk, qk in zip(P, Q))
            rows.append((f"delta={d} eps'={mpmath.nstr(e2, 8)}", exact, dm))
        detail = f"skipped (log(1/delta) < eps^2 n): {', '.join(skipped)}" if skipped else ""
        return report_from_rows(f"advanced composition (Corollary 1, constant {sp.sstr(c)})", rows,
                                mpmath.mpf(10) ** (-(dps - 5)), reference=REFC1, detail=detail,
                                target=f"{n}-fold randomized response, p = {sp.nsimplify(p)}")


def rr_self_composition(curve, p, n: int, orders=(sp.Rational(1, 2), sp.Rational(3, 2), 2, 10), *, dps: int = 30) -> PropertyReport:
    r"""Prop. 1 as an equality for independent releases: ``n * curve(alpha)`` (the engine's randomized
    response curve at p) equals D_alpha of the exact n-fold output distribution (two one-sided checks)."""
    from .curve import as_curve

    crv = as_curve(curve, {"p": p})
    rows = []
    with mpmath.workdps(dps + 20):
        P, Q, _ = binomial_pair(p, n)
        for a in orders:
            am = mpmath.mpf(sp.Float(as_number(a, "orders"), dps + 20))
            direct = mpmath.log(mpmath.fsum(pk**am * qk ** (1 - am) for pk, qk in zip(P, Q))) / (am - 1)
            claim = n * crv.value(a, dps + 20)
            rows.append((f"alpha={a} direct <= n eps", direct, claim))
            rows.append((f"alpha={a} n eps <= direct", claim, direct))
        return report_from_rows("composition (Prop. 1), exact n-fold randomized response", rows,
                                mpmath.mpf(10) ** (-(dps - 5)), reference="Mironov 2017 (arXiv:1702.07476 v3), Prop. 1",
                                target=f"{n}-fold randomized response, p = {sp.nsimplify(p)}")
