r"""Probability preservation and Bayes factors (Mironov 2017, arXiv:1702.07476 v3, Prop. 10 and Table I).

For alpha > 1 and (alpha, eps)-RDP (both directions bounded by eps), for every event A:

.. math::

    P(A) \le \bigl(e^{\varepsilon} Q(A)\bigr)^{(\alpha-1)/\alpha}   \quad\text{(Prop. 10)},\qquad
    P(A) \ge e^{-\varepsilon} Q(A)^{\alpha/(\alpha-1)}              \quad\text{(Table I, from D(Q||P))}.

Bayes factor (Table I): with :math:`R_{post}/R_{prior} = P(Y)/Q(Y)` and :math:`Y \sim Q`,
:math:`E[(R_{post}/R_{prior})^\alpha] \le \exp((\alpha-1)\varepsilon)`; the log Bayes factor's
expectation under P is the KL, at most eps(alpha) for alpha >= 1 (Prop. 9).
"""

from __future__ import annotations

from typing import Sequence

import mpmath
import sympy as sp

from ..specify.text.numbers import mp_number
from .curve import as_curve
from .distributions import infinite_lattice_report, pairs_of
from .report import PropertyReport, report_from_rows

__all__ = ["probability_preservation", "bayes_factor", "default_events", "section_vii_interval"]

REF10 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 10 and Table I"
REF_BF = "Mironov 2017 (arXiv:1702.07476 v3), Table I (Bayes factor)"
ORDERS = (sp.Rational(11, 10), sp.Rational(3, 2), 2, 4, 10, 100)


_mp = mp_number  # the one reading of numbers (rdpsym.specify.text.numbers), at the working precision


def default_events(mechanism=None) -> list[tuple]:
    """Intervals [lo, hi] (threshold sets have an infinite end) around the pair's outputs."""
    if mechanism is not None and mechanism.discrete:
        return [(0, 0), (1, 1)]
    return [(sp.Rational(1, 2), sp.oo), (-sp.oo, 0), (0, 1), (2, sp.oo), (-sp.oo, -2), (sp.Rational(-1, 2), sp.Rational(1, 4))]


def probability_preservation(target, values: dict | None = None, *, events: Sequence[tuple] | None = None,
                             curve=None, orders=ORDERS, dps: int = 30) -> PropertyReport:
    r"""Prop. 10 and its reverse on interval events, in log form, for every pair and direction.

    ``log P(A) <= (alpha-1)/alpha (eps(alpha) + log Q(A))`` and
    ``-eps(alpha) + alpha/(alpha-1) log Q(A) <= log P(A)``, with eps the mechanism's RDP curve (or
    ``curve``). Masses are integrals of the densities (exact sums for pmfs).
    """
    from ..specify.mechanism import Mechanism

    skipped = infinite_lattice_report(target, "probability preservation (Prop. 10)", REF10)
    if skipped is not None:
        return skipped
    events = list(events if events is not None else default_events(target if isinstance(target, Mechanism) else None))
    crv = as_curve(curve if curve is not None else target, values)
    rows = []
    with mpmath.workdps(dps + 10):
        eps = {a: crv.value(a, dps + 10) for a in orders}
        for label, p, q in pairs_of(target, values):
            for lo, hi in events:
                pa, ep = p.mass(_mp(lo), _mp(hi))
                qa, eq = q.mass(_mp(lo), _mp(hi))
                name = f"A=[{lo}, {hi}] {label}"
                if pa <= 0 or qa <= 0:
                    continue
                lp, lq = mpmath.log(pa), mpmath.log(qa)
                err = ep / pa + eq / qa
                for a in orders:
                    am = _mp(a)
                    rows.append((f"{name} alpha={a} upper", lp, (am - 1) / am * (eps[a] + lq), err))
                    rows.append((f"{name} alpha={a} lower", -eps[a] + am / (am - 1) * lq, lp, err))
        tol = mpmath.mpf(10) ** (-(dps - 8))
        return report_from_rows("probability preservation (Prop. 10)", rows, tol, reference=REF10,
                                 target=crv.label, detail="log P(A) within the Prop. 10 bounds")


def bayes_factor(target, values: dict | None = None, *, curve=None, orders=ORDERS, dps: int = 30) -> PropertyReport:
    r"""Table I: :math:`E_{Y\sim Q}[(P/Q)^\alpha] \le e^{(\alpha-1)\varepsilon(\alpha)}` and
    :math:`E_{Y\sim P}[\log P/Q] \le \varepsilon(\alpha)`, the moments computed independently by the
    numeric path (:func:`rdpsym.numeric.maximum.numeric_maximum` of each direction: quadrature of
    :math:`P^\alpha Q^{1-\alpha}`), for every pair and direction."""
    from ..derive.mechanism_rdp import worst_pairs
    from ..numeric.maximum import Direction, numeric_maximum
    from ..specify.mechanism import Mechanism

    if not isinstance(target, Mechanism):
        raise TypeError("target: bayes_factor needs a Mechanism")
    crv = as_curve(curve if curve is not None else target, values)
    rows = []
    with mpmath.workdps(dps + 10):
        for pair in worst_pairs(target):  # a family's pairs at its supremum, where rdp shows it
            for P, Q, d in ((pair.P, pair.Q, "P||Q"), (pair.Q, pair.P, "Q||P")):
                direction = (Direction(P, Q, target.variable, target.support),)
                kl = numeric_maximum(direction, 1, values, dps)
                for a in orders:
                    eps = crv.value(a, dps + 10)
                    nv = numeric_maximum(direction, a, values, dps)
                    am = _mp(a)
                    if not nv.converged:
                        rows.append((f"[{pair.label}] {d} alpha={a}", None, None, 0, "numeric moment did not converge"))
                        continue
                    # log of the moment, (a-1) D, against (a-1) eps
                    rows.append((f"[{pair.label}] {d} log E[(R_post/R_prior)^{a}]", (am - 1) * nv.value, (am - 1) * eps,
                                 (am - 1) * nv.error))
                    rows.append((f"[{pair.label}] {d} E[log BF] <= eps({a})", kl.value, eps, kl.error))
        tol = mpmath.mpf(10) ** (-(dps - 10))
        return report_from_rows("Bayes-factor moments (Table I)", rows, tol, reference=REF_BF, target=crv.label,
                                detail="moments of the Bayes factor vs the RDP curve")


def section_vii_interval(alpha, eps, prob) -> tuple[mpmath.mpf, mpmath.mpf]:
    r"""The interval [lower, upper] that (alpha, eps)-RDP confines P(A) to when Q(A) = ``prob``.

    Upper: :math:`(e^\varepsilon q)^{(\alpha-1)/\alpha}` (Prop. 10 with P, Q). Lower: the largest p with
    :math:`q \le (e^\varepsilon p)^{(\alpha-1)/\alpha}` (Prop. 10 with Q, P), i.e.
    :math:`p = e^{-\varepsilon} q^{\alpha/(\alpha-1)}` (Table I). Mironov 2017, Sec. VII.
    """
    a, e, q = _mp(alpha), _mp(eps), _mp(prob)
    if not a > 1:
        raise ValueError(f"alpha must be > 1; got {alpha}")
    if not 0 < q <= 1:
        raise ValueError(f"prob must be in (0, 1]; got {prob}")
    return mpmath.exp(-e) * q ** (a / (a - 1)), min(mpmath.mpf(1), (mpmath.exp(e) * q) ** ((a - 1) / a))
