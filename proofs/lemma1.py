"""Lemma 1 (eps-DP => RDP) on the worst-case eps-DP pair, whose curve the engine derives."""
import sympy as sp

from rdpsym import properties as props

from ._checks import from_reports

CHEAP = True


def prove():
    curve = props.worst_case_dp_curve()
    reports = [props.dp_implies_rdp(constant=props.LEMMA_1), props.dp_implies_rdp(constant=props.BUN_STEINKE),
               props.dp_implies_rdp(constant=sp.Rational(1, 4))]
    return from_reports("lemma1", "Lemma 1: eps-DP implies (alpha, 2 alpha eps^2)-RDP",
                        r"D_\infty(P\|Q), D_\infty(Q\|P) \le \varepsilon \Rightarrow D_\alpha(P\|Q) \le 2\alpha\varepsilon^2"
                        r"\ (\text{and} \le \tfrac12\alpha\varepsilon^2,\ \text{Bun--Steinke})",
                        "Mironov 2017 (arXiv:1702.07476 v3), Lemma 1; Bun and Steinke 2016, Prop. 3.3", reports,
                        formulas={"worst_case_curve": curve.expr},
                        notes=["Exact curve of randomized response with p = e^eps/(1+e^eps), derived by the engine:",
                               f"$${sp.latex(curve.expr)}$$", "The constant 1/4 is shown to fail (a control).", ""])
