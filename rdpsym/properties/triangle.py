r"""The weak triangle inequality (Mironov 2017, arXiv:1702.07476 v3, Prop. 11 and Corollary 4).

For alpha > 1 and p, q > 1 with 1/p + 1/q = 1:

.. math:: D_\alpha(P\|Q) \le \frac{\alpha - 1/p}{\alpha-1} D_{p\alpha}(P\|R) + D_{q(\alpha-1/p)}(R\|Q).

Corollary 4's three forms: p = q = 2; p -> oo (coefficient alpha/(alpha-1), D_inf(P||R) and
D_alpha(R||Q)); q -> oo (D_alpha(P||R) + D_inf(R||Q)). Every divergence is computed independently by
the numeric path (:func:`rdpsym.numeric.maximum.numeric_maximum` of one direction) on explicit triples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import mpmath
import sympy as sp

from ..numeric.maximum import Direction, numeric_maximum
from ..specify.mechanism import Mechanism
from .report import PropertyReport, report_from_rows

__all__ = ["TriangleForm", "general_form", "COROLLARY_4", "weak_triangle", "mechanism_triples"]

REF = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 11 and Corollary 4"
oo = sp.oo


@dataclass(frozen=True)
class TriangleForm:
    """``D_a(P||Q) <= coef(a) * D_{first(a)}(P||R) + D_{second(a)}(R||Q)`` (orders may be sp.oo)."""

    name: str
    coef: Callable
    first: Callable
    second: Callable


def general_form(p) -> TriangleForm:
    """Prop. 11 with exponent ``p > 1`` (q = p/(p-1))."""
    p = sp.nsimplify(p)
    if not p > 1:
        raise ValueError(f"p must be > 1; got {p}")
    q = p / (p - 1)
    return TriangleForm(f"Prop. 11, p = {p}", lambda a: (a - 1 / p) / (a - 1), lambda a: p * a, lambda a: q * (a - 1 / p))


COROLLARY_4 = (
    general_form(2),
    TriangleForm("Cor. 4, p -> oo", lambda a: a / (a - 1), lambda a: oo, lambda a: a),
    TriangleForm("Cor. 4, q -> oo", lambda a: sp.Integer(1), lambda a: a, lambda a: oo),
)


def _div(P, Q, x, support, a, values, dps):
    nv = numeric_maximum((Direction(P, Q, x, support),), a, values, dps)
    return nv.value, nv.error, nv.converged


def weak_triangle(triples: Sequence[tuple], x, support, values: dict | None = None, *,
                  forms: Sequence[TriangleForm] = COROLLARY_4 + (general_form(3),),
                  orders=(sp.Rational(3, 2), 2, 5), dps: int = 30, target: str = "") -> PropertyReport:
    r"""Check each form on each triple ``(label, P, R, Q)`` at each order ``alpha > 1``."""
    values = dict(values or {})
    rows = []
    cache = {}
    with mpmath.workdps(dps + 10):
        def D(A, B, a):
            key = (sp.srepr(A), sp.srepr(B), a)
            if key not in cache:
                cache[key] = _div(A, B, x, support, a, values, dps)
            return cache[key]

        for label, P, R, Q in triples:
            for a in orders:
                a = sp.nsimplify(a)
                lhs, e0, c0 = D(P, Q, a)
                for form in forms:
                    k = form.coef(a)
                    d1, e1, c1 = D(P, R, form.first(a))
                    d2, e2, c2 = D(R, Q, form.second(a))
                    point = f"{label} {form.name} alpha={a}"
                    if not (c0 and c1 and c2):
                        rows.append((point, None, None, 0, "a numeric divergence did not converge"))
                        continue
                    kf = mpmath.mpf(sp.Float(k, dps + 10))
                    rhs = kf * d1 + d2 if mpmath.isfinite(d1) and mpmath.isfinite(d2) else mpmath.inf
                    rows.append((point, lhs, rhs, e0 + kf * e1 + e2))
        tol = mpmath.mpf(10) ** (-(dps - 10))
        return report_from_rows("weak triangle inequality (Prop. 11, Cor. 4)", rows, tol, reference=REF,
                                target=target, detail="forms: " + ", ".join(f.name for f in forms))


def mechanism_triples(mechanism: Mechanism) -> list[tuple]:
    """Triples (P, R, Q) from each adjacent pair: R the even mixture (P + Q)/2, and, for a mechanism
    with a ``sensitivity`` parameter, R = Q at half the sensitivity (three locations)."""
    out = []
    sens = mechanism.params.get("sensitivity")
    from ..derive.mechanism_rdp import worst_pairs

    for pair in worst_pairs(mechanism):  # a family's pairs at its supremum
        out.append((f"[{pair.label}] R = (P+Q)/2", pair.P, (pair.P + pair.Q) / 2, pair.Q))
        if sens is not None:
            out.append((f"[{pair.label}] R = midpoint", pair.P, pair.Q.subs(sens, sens / 2), pair.Q))
    return out
