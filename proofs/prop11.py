"""Prop. 11 (weak triangle inequality) on Gaussian triples at three locations."""
import sympy as sp

from rdpsym import mechanisms
from rdpsym import properties as props

from ._checks import from_reports

CHEAP = False


def prove():
    m = mechanisms.get("gaussian")
    rep = props.weak_triangle(props.mechanism_triples(m)[1:], m.variable, m.support, {"sigma": 1, "sensitivity": 1},
                              forms=[props.general_form(p) for p in (sp.Rational(3, 2), 2, 3)], orders=(sp.Rational(3, 2), 2, 5),
                              target="Gaussians at 0, 1/2, 1")
    return from_reports("prop11", "Prop. 11: weak triangle inequality",
                        r"D_\alpha(P\|Q) \le \frac{\alpha-1/p}{\alpha-1} D_{p\alpha}(P\|R) + D_{q(\alpha-1/p)}(R\|Q)",
                        "Mironov 2017 (arXiv:1702.07476 v3), Prop. 11", [rep])
