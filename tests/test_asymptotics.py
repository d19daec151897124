"""Exponential sums at alpha -> oo (rdpsym.claims.asymptotics), where sympy's limit gives up, and the claim
checker's use of them: the eventual branch of a claim's cases, and the limit of a log of such a sum."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from rdpsym.claims.asymptotics import dominant, exponential_terms, log_sum_limit
from rdpsym.claims.run import _eventually, _limit_beyond_every_case
from rdpsym.symbols import alpha as A

pytestmark = pytest.mark.unit
R = sp.Rational


def _binomial_divergence(p, q, n=3):
    """D_alpha of Bin(n, p) against Bin(n, q) as a paper writes it: a log of a sum of exponentials in alpha."""
    return n * sp.log(p**A * q**(1 - A) + (1 - p) ** A * (1 - q) ** (1 - A)) / (A - 1)


def test_the_leading_term_of_an_exponential_sum_decides_its_sign():
    # (19/20)^alpha (9/10)^(1 - alpha) grows like (19/18)^alpha: minus 1 it is eventually positive
    lead = dominant(R(19, 20) ** A * R(9, 10) ** (1 - A) - 1, A)
    assert lead is not None and lead[0] == 1
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(sp.N(lead[1], 30)) - mpmath.log(mpmath.mpf(19) / 18)) < mpmath.mpf(10) ** -25
    # the same with the bases swapped decays: the constant -1 leads
    assert dominant(R(9, 10) ** A * R(19, 20) ** (1 - A) - 1, A)[0] == -1
    # equal slopes written differently are combined before the sign is read: 2^a - exp(a log 2) + 3 -> 3
    assert dominant(sp.exp(A * sp.log(2)) - 2**A + 3, A)[:1] == (1,)
    assert dominant(4**A - 2 * 2 ** (2 * A), A)[0] == -1
    # not an exponential sum: no answer
    assert dominant(A**2 - 1, A) is None and exponential_terms(sp.log(A), A) is None


def test_the_eventual_truth_of_a_case_condition_in_exponentials():
    """Geometric pmfs: Piecewise((f, (1 - q)^alpha (1 - p)^(1 - alpha) < 1), (oo, True)) is +oo for all large
    alpha; sympy's limit did not decide the condition, and the claim counted as unevaluated at alpha -> oo."""
    p, q = R(1, 10), R(1, 20)
    cond = (1 - q) ** A * (1 - p) ** (1 - A) < 1
    assert _eventually(cond) is sp.false
    assert _eventually((1 - p) ** A * (1 - q) ** (1 - A) < 1) is sp.true
    claim = sp.Piecewise((sp.log(1 - (1 - q) ** A * (1 - p) ** (1 - A)) / (A - 1), cond), (sp.oo, True))
    assert _limit_beyond_every_case(claim) == sp.oo


@pytest.mark.parametrize("p, q", [(R(1, 10), R(1, 20)), (R(9, 10), R(9, 20)), (R(1, 2), R(1, 3))])
def test_the_limit_of_a_log_of_an_exponential_sum_is_its_largest_slope(p, q):
    """D_alpha of Bin(3, p) against Bin(3, q) tends to 3 max(log(p/q), log((1 - p)/(1 - q))) = D_oo (Prop. 9);
    sympy's Gruntz algorithm raised on it ("Not sure of sign of ...")."""
    d = _binomial_divergence(p, q)
    got = log_sum_limit(d, A)
    want = 3 * sp.Max(sp.log(p / q), sp.log((1 - p) / (1 - q)))
    assert got is not None and abs(sp.N(got - want, 60)) < 1e-50, (got, want)
    with mpmath.workdps(40):  # and the curve itself, far out, is close to it (mpmath: sympy would expand p**(10**6))
        a, pm, qm = mpmath.mpf(10) ** 6, mpmath.mpf(p.p) / p.q, mpmath.mpf(q.p) / q.q
        far = 3 * mpmath.log(pm**a * qm ** (1 - a) + (1 - pm) ** a * (1 - qm) ** (1 - a)) / (a - 1)
        assert abs(far - mpmath.mpf(sp.N(want, 40))) < mpmath.mpf(10) ** -5
    # a Max of two directions: the Max of the limits
    both = _limit_beyond_every_case(sp.Max(d, _binomial_divergence(q, p)))
    other = 3 * sp.Max(sp.log(q / p), sp.log((1 - q) / (1 - p)))
    assert both is not None and abs(sp.N(both - sp.Max(want, other), 60)) < 1e-50, both


def test_a_log_whose_coefficient_grows_is_not_replaced_by_its_leading_terms():
    """log(S) = s alpha + log C + o(1) is used only where the o(1) is multiplied by a bounded coefficient:
    alpha*log(2^alpha + 1) - alpha^2 log 2 -> 0 needs the o(1) itself, so no answer is given from the form."""
    e = A * sp.log(2**A + 1) - A**2 * sp.log(2)
    assert log_sum_limit(e, A) is None
    # a leading coefficient that is not positive has no log: no answer either
    assert log_sum_limit(sp.log(1 - 2**A) / (A - 1), A) is None
