"""Table II of Mironov 2017 comes out of the engine: checked semantically, never by string.

The published formulas below are the reference the engine is tested against; they are never a source
of a result.
"""

import mpmath
import pytest
import sympy as sp

from rdpsym import Status, alpha

P_RR = sp.Symbol("p")  # placeholders, replaced by the mechanism's own symbols


def published(name, mech):
    s = mech.params
    a = alpha
    if name == "randomized_response":
        p = s["p"]
        return (
            1 / (a - 1) * sp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)),
            (2 * p - 1) * sp.log(p / (1 - p)),
            sp.log(p / (1 - p)),
        )
    if name == "laplace":
        lam = s["b"] / s["sensitivity"]  # sensitivity Delta scales like 1/lambda
        return (
            1 / (a - 1) * sp.log(a / (2 * a - 1) * sp.exp((a - 1) / lam) + (a - 1) / (2 * a - 1) * sp.exp(-a / lam)),
            1 / lam + sp.exp(-1 / lam) - 1,
            1 / lam,
        )
    if name == "gaussian":
        return (a * s["sensitivity"] ** 2 / (2 * s["sigma"] ** 2), s["sensitivity"] ** 2 / (2 * s["sigma"] ** 2), sp.oo)
    raise KeyError(name)


def agree(derived, reference, points, digits=30):
    """Symbolic difference 0, or agreement to ``digits`` at every point (one precision context)."""
    if sp.simplify(derived - reference) == 0:
        return True
    with mpmath.workdps(digits + 20):
        for pt in points:
            d = sp.N(derived.subs(pt), digits + 20)
            r = sp.N(reference.subs(pt), digits + 20)
            if abs(d - r) > sp.Float(10) ** (-digits) * max(1, abs(r)):
                return False
    return True


def points_for(mech, alphas=(sp.Rational(3, 2), 2, 7, sp.Rational(1, 3), sp.Rational(3, 4))):
    pts = []
    for i, a in enumerate(alphas):
        pt = {alpha: a}
        for p in mech.parameters:
            vals = p.typical_values(5)
            pt[p.symbol] = vals[i % len(vals)]
        pts.append(pt)
    return pts


@pytest.mark.parametrize("name", ["randomized_response", "laplace", "gaussian"])
def test_table_ii_row_matches_the_paper(table_ii, name):
    mech, result = table_ii[name]
    assert result.status is Status.CLOSED_FORM
    general, kl, dinf = published(name, mech)
    pts = points_for(mech)
    assert agree(result.expr, general, pts)
    assert agree(result.kl, kl, pts)
    if dinf == sp.oo:
        assert result.max_divergence == sp.oo
    else:
        assert agree(result.max_divergence, dinf, pts)


def test_laplace_removable_point_at_one_half(table_ii):
    mech, result = table_ii["laplace"]
    assert [p.alpha for p in result.exceptional_points] == [sp.Rational(1, 2)]
    general, _, _ = published("laplace", mech)
    b, d = mech.params["b"], mech.params["sensitivity"]
    with mpmath.workdps(40):
        for bv in (sp.Rational(1, 3), 2, 7):
            exact = result.at(sp.Rational(1, 2), b=bv, sensitivity=1)
            near = sp.N(general.subs({b: bv, d: 1, alpha: sp.Rational(1, 2) + sp.Rational(1, 10**15)}), 40)
            assert abs(sp.N(exact, 40) - near) < 1e-13
    # evaluation routes to the limit instead of dividing by zero
    assert result.evaluate(sp.Rational(1, 2), b=2, sensitivity=1) > 0


def test_wrong_formula_is_not_accepted_by_the_comparison(table_ii):
    """The semantic comparison used above can fail: a formula off by a factor 4 is rejected."""
    mech, result = table_ii["gaussian"]
    general, _, _ = published("gaussian", mech)
    assert not agree(result.expr, general / 4, points_for(mech))


def test_kl_and_dinf_limits_were_checked(table_ii):
    for name, (_, result) in table_ii.items():
        names = {s.name.split(": ")[-1] for s in result.provenance.steps}
        assert "KL limit check" in names, name
        assert "D_inf limit check" in names or result.max_divergence == sp.oo, name
