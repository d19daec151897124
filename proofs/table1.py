"""Table I rows: post-processing, composition, group privacy, Bayes factor (probability: prop10)."""
import sympy as sp

import rdpsym
from rdpsym import mechanisms
from rdpsym import properties as props

from ._checks import from_reports

CHEAP = False


def prove():
    rr, lap, g = (mechanisms.get(n) for n in ("randomized_response", "laplace", "gaussian"))
    reports = [
        props.post_processing(lap, {"b": 1, "sensitivity": 1}, dps=25),
        props.post_processing(rr, {"p": sp.Rational(3, 4)}, dps=25),
        props.rr_self_composition(rdpsym.rdp(rr), sp.Rational(3, 5), 10),
        props.group_privacy_check(g, {"sigma": 2, "sensitivity": 1}, c=1),
        props.group_privacy_check(g, {"sigma": 2, "sensitivity": 1}, c=2),
        props.bayes_factor(rr, {"p": sp.Rational(3, 4)}, dps=25),
    ]
    return from_reports("table1", "Table I: RDP properties",
                        r"\text{post-processing};\ (\alpha, \varepsilon_1+\varepsilon_2);\ (\alpha/2^c, 3^c\varepsilon);\ "
                        r"E[(R_{post}/R_{prior})^\alpha] \le e^{(\alpha-1)\varepsilon}",
                        "Mironov 2017 (arXiv:1702.07476 v3), Table I, Props. 1 and 2", reports,
                        formulas={"gaussian_group_k2": rdpsym.group_privacy(g, 2).expr})
