"""Corollary 4's three forms of the weak triangle inequality on Laplace triples (finite D_inf)."""
from rdpsym import mechanisms
from rdpsym import properties as props

from ._checks import from_reports

CHEAP = False


def prove():
    m = mechanisms.get("laplace")
    rep = props.weak_triangle(props.mechanism_triples(m), m.variable, m.support, {"b": 1, "sensitivity": 1},
                              forms=props.COROLLARY_4, orders=(2, 5), target="Laplace triples")
    return from_reports("corollary4", "Corollary 4: three forms of the weak triangle inequality",
                        r"D_\alpha(P\|Q) \le \tfrac{\alpha-1/2}{\alpha-1}D_{2\alpha}(P\|R) + D_{2\alpha-1}(R\|Q);\ "
                        r"\le \tfrac{\alpha}{\alpha-1}D_\infty(P\|R) + D_\alpha(R\|Q);\ \le D_\alpha(P\|R) + D_\infty(R\|Q)",
                        "Mironov 2017 (arXiv:1702.07476 v3), Corollary 4", [rep])
