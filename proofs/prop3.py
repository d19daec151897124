"""Prop. 3 (RDP -> (eps, delta)) and the improved conversion against the exact privacy profile."""
import sympy as sp

from rdpsym import mechanisms
from rdpsym import properties as props

from ._checks import from_reports

CHEAP = False


def prove():
    m = mechanisms.get("gaussian")
    v = {"sigma": 2, "sensitivity": 1}
    reports = [props.conversion(m, v, method=meth, epsilons=(sp.Rational(1, 2), 1), deltas=(sp.Rational(1, 10**5),))
               for meth in ("mironov", "improved")]
    return from_reports("prop3", "Prop. 3: from RDP to (eps, delta)-DP",
                        r"(\alpha,\varepsilon)\text{-RDP} \Rightarrow \left(\varepsilon + \frac{\log 1/\delta}{\alpha-1}, \delta\right)\text{-DP}",
                        "Mironov 2017 (arXiv:1702.07476 v3), Prop. 3; Canonne, Kamath, Steinke 2020, Prop. 12", reports)
