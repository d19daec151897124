"""Shared body of the Table II proofs: derive with the engine, compare with the paper's row."""

import sympy as sp

import rdpsym
from rdpsym import mechanisms
from rdpsym.specify.text import parse_formula

from ._certificate import Certificate


def prove_row(slug, name, paper_general, paper_kl, paper_inf, fixed, rename, title, statement):
    mech = mechanisms.get(name)
    curve = rdpsym.rdp(mech)
    subs = {mech.params[k]: v for k, v in fixed.items()}
    general, kl, dinf = (e.subs(subs) if e is not None else None for e in (curve.expr, curve.kl, curve.max_divergence))
    # the paper's symbols (lambda for Laplace) map onto the mechanism's parameters
    syms = {k: mech.params[v] for k, v in rename.items()}
    a = rdpsym.alpha
    paper = [parse_formula(t, symbols={**syms, "alpha": a}) if t != "oo" else sp.oo for t in (paper_general, paper_kl, paper_inf)]
    cert = Certificate(slug, title, statement, "Mironov 2017 (arXiv:1702.07476 v3), Table II")
    verdicts = {}
    for label, ours, theirs in (("alpha > 1", general, paper[0]), ("alpha = 1", kl, paper[1]), ("alpha = oo", dinf, paper[2])):
        same = ours == theirs or sp.simplify(sp.expand_log(ours - theirs, force=True)) == 0
        if not same:  # exact equality at sample points, 40 digits
            pts = [{a: sp.Rational(3, 2), **{s: sp.Rational(7, 10) if "p" == s.name else 2 for s in ours.free_symbols - {a}}}]
            same = all(abs(sp.N((ours - theirs).subs(pt), 40)) < sp.Float(10) ** -35 for pt in pts)
        verdicts[label] = "holds" if same else "fails"
        cert.steps.append(f"- {label}: engine ${sp.latex(ours)}$ vs paper ${sp.latex(theirs)}$: **{verdicts[label]}**")
    cert.formulas = {"general": general, "kl": kl, "max_divergence": dinf}
    # each row as a claim about the mechanism, whose certificate (rdpsym-certificate/1) is written beside
    texts = {"alpha > 1": (paper_general, None), "alpha = 1": (paper_kl, 1), "alpha = oo": (paper_inf, sp.oo)}
    symbols = {k: v for k, v in rename.items() if k != v}
    for (label, (text, order)), ours, theirs in zip(texts.items(), (general, kl, dinf), paper):
        cert.claims[label] = (name, text, order, dict(fixed), symbols, theirs, ours)
    cert.steps += ["", "Derivation steps (engine provenance):", ""]
    cert.steps += [f"- {s.name}: {s.detail}" for s in curve.provenance.steps[:12]]
    cert.verdicts = verdicts
    return cert
