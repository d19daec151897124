"""Prop. 10 (probability preservation) and the Section VII example."""
import sympy as sp

from rdpsym import mechanisms
from rdpsym import properties as props

from ._checks import from_reports

CHEAP = True


def prove():
    lo5, hi5 = props.section_vii_interval(10, sp.Rational(1, 10), sp.Rational(1, 2))
    lo3, hi3 = props.section_vii_interval(10, sp.Rational(1, 10), sp.Rational(1, 1000))
    reports = [props.probability_preservation(mechanisms.get("randomized_response"), {"p": sp.Rational(3, 4)})]
    return from_reports("prop10", "Prop. 10: probability preservation",
                        r"P(A) \le \left(e^{D_\alpha(P\|Q)} Q(A)\right)^{(\alpha-1)/\alpha},\quad "
                        r"P(A) \ge e^{-\varepsilon} Q(A)^{\alpha/(\alpha-1)}",
                        "Mironov 2017 (arXiv:1702.07476 v3), Prop. 10, Table I, Sec. VII", reports,
                        numbers={"sec7_q0.5_low": (lo5, 3), "sec7_q0.5_high": (hi5, 3),
                                 "sec7_q1e-3_low": (lo3, 2), "sec7_q1e-3_high": (hi3, 3)},
                        notes=[f"Section VII, (10, 0.1)-RDP: Q(A) = 0.5 gives [{float(lo5):.3f}, {float(hi5):.3f}]; "
                               f"Q(A) = 1e-3 gives [{float(lo3):.5f}, {float(hi3):.5f}] (paper: [0.419, 0.586], "
                               "[0.00042, 0.00218]).", ""])
