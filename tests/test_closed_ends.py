"""A finite-support formula at the closed ends of a parameter's domain (rdpsym.derive.closed_ends).

P = (1 - p, p) against Q = (1 - p^2, p^2), p in [0, 1/2]: simplification writes p^alpha (p^2)^(1 - alpha) as
p^(2 - alpha), which is right for p > 0 only. At p = 0 both are (1, 0) and every divergence is 0, while the
formula reads log 2 at alpha = 2. The result must hold on (0, 1/2] only and say so; values inside are
checked against the sums of the densities themselves.
"""

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym.claims import Verdict, check_claim
from rdpsym.specify.mechanism import AdjacentPair, Mechanism
from rdpsym.specify.params import parameter

X = sp.Symbol("x", integer=True, nonnegative=True)


def _pair_mechanism(P, Q, p, name):
    return Mechanism(name=name, title=name, variable=X, support=sp.FiniteSet(0, 1),
                     pairs=(AdjacentPair(P, Q, "P vs Q"),), parameters=(p,))


@pytest.fixture(scope="module")
def vanishing():
    p = parameter("p", sp.Interval(0, sp.Rational(1, 2)), typical=(0.05, 0.4))
    s = p.symbol
    return _pair_mechanism(s**X * (1 - s) ** (1 - X), s ** (2 * X) * (1 - s**2) ** (1 - X), p, "vanishing_mass")


def _direct(pmf_p, pmf_q, a):
    """max of D_a(P||Q) and D_a(Q||P) by the sum over the outcomes where the first has mass."""
    def one(u, v):
        return mpmath.log(mpmath.fsum(x**a * y ** (1 - a) for x, y in zip(u, v) if x != 0)) / (a - 1)
    return max(one(pmf_p, pmf_q), one(pmf_q, pmf_p))


def test_the_end_where_the_formula_fails_is_left_out_and_said(vanishing):
    r = rdpsym.rdp(vanishing)
    (sym, dom), = r.domains
    assert dom == sp.Interval.Lopen(0, sp.Rational(1, 2)), dom
    assert "the formula holds for p in (0, 1/2]" in r.reason and "at p = 0" in r.reason, r.reason
    with pytest.raises(ValueError, match="p must lie in"):
        r.evaluate(2, p=0)
    with mpmath.workdps(40):
        for p, a in ((sp.Rational(1, 4), sp.Integer(2)), (sp.Rational(1, 2), sp.Rational(7, 2)),
                     (sp.Rational(1, 100), sp.Integer(3))):
            pm, am = mpmath.mpf(p.p) / p.q, mpmath.mpf(a.p) / a.q
            want = _direct([1 - pm, pm], [1 - pm**2, pm**2], am)
            got = mpmath.mpf(r.evaluate(a, p=p, dps=30))
            assert abs(got - want) < mpmath.mpf(10) ** -25 * abs(want), (p, a, got, want)


def test_an_end_where_the_formula_holds_is_kept():
    """P = (1 - p, p) against uniform: at p = 0, p^alpha is 0 and the formula gives log 2, which is right."""
    p = parameter("p", sp.Interval(0, sp.Rational(1, 2)), typical=(0.05, 0.4))
    s = p.symbol
    r = rdpsym.rdp(_pair_mechanism(s**X * (1 - s) ** (1 - X), sp.Rational(1, 2) + 0 * X, p, "to_uniform"))
    assert dict(r.domains)[s] == p.domain and "the formula holds" not in r.reason, (r.domains, r.reason)


def test_a_claim_is_decided_where_the_formula_holds_and_says_so(vanishing):
    v = check_claim(vanishing, "log(1/p)", "==", order=sp.oo)
    assert v.verdict is Verdict.PROVED, v
    assert any(e.startswith("decided for p in (0, 1/2]") for e in v.evidence), v.evidence
    assert v.certificate.check().holds
    held = check_claim(vanishing, "log(2)", ">=", order=2, fixed={"p": 0})
    assert held.verdict is Verdict.INCONCLUSIVE and held.certificate is None, held
    assert "p = 0 lies where the derived formula is not the divergence" in held.evidence[0], held.evidence
