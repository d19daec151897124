"""Corollary 1 on n-fold randomized response against the exact composed privacy profile."""
import sympy as sp

from rdpsym import properties as props

from ._checks import from_reports

CHEAP = True


def prove():
    reports = [props.corollary_1(sp.Rational(11, 20), 100), props.corollary_1(sp.Rational(51, 100), 250),
               props.corollary_1(sp.Rational(11, 20), 100, constant=sp.Rational(1, 2))]
    return from_reports("corollary1", "Corollary 1: (4 eps sqrt(2 n log(1/delta)), delta)-DP",
                        r"\log(1/\delta) \ge \varepsilon^2 n \Rightarrow \left(4\varepsilon\sqrt{2n\log(1/\delta)}, \delta\right)\text{-DP}",
                        "Mironov 2017 (arXiv:1702.07476 v3), Corollary 1", reports,
                        notes=["Exact delta(eps') = sum_k max(P_k - e^eps' Q_k, 0) over the binomial pair; "
                               "constant 1/2 is a control that must fail.", ""])
