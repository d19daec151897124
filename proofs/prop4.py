"""Prop. 4 (advanced composition, RDP form) on n-fold randomized response, exact binomial sums."""
import sympy as sp

from rdpsym import properties as props

from ._checks import from_reports

CHEAP = True


def prove():
    reports = [props.advanced_composition(sp.Rational(51, 100), 250), props.advanced_composition(sp.Rational(3, 5), 50),
               props.advanced_composition(sp.Rational(3, 5), 50, constant=sp.Rational(1, 2))]
    return from_reports("prop4", "Prop. 4: advanced composition, RDP form",
                        r"P(S) \le \exp\left(2\varepsilon\sqrt{n\log(1/Q(S))}\right) Q(S)",
                        "Mironov 2017 (arXiv:1702.07476 v3), Prop. 4", reports,
                        notes=["P = Bin(n, p), Q = Bin(n, 1-p) on the number of agreeing reports; every upper set "
                               "{K >= j} is checked; constant 1/2 is a control that must fail.", ""])
