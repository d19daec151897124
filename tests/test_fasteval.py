"""The claim checks' fast evaluator works in log space where values leave any precision (issue 19)."""

import time

import mpmath
import sympy as sp
import pytest

from rdpsym.claims.fasteval import compile_mp, real_value

B1, B2, M = sp.symbols("b1 b2 m", positive=True)
#: the KL of Laplace(0, b1) against Laplace(m, b2) in the form the engine derives it
DERIVED_KL = (B1 * sp.exp(-M / B1) / B2 - 1 + M / B2
              + sp.exp(-M / B1) * sp.log(B2 ** (B2 * sp.exp(M / B1)) / B1 ** (B2 * sp.exp(M / B1))) / B2)


def test_log_of_a_tower_of_powers_is_taken_in_log_space():
    """At b1 = 1/200, m = 500 the power b2**(b2 exp(m/b1)) has about 10^43425 digits: the value path
    refuses it (magnitude cap), the log path gives log(b2/b1) + (b1 exp(-m/b1) + m)/b2 - 1."""
    f = compile_mp(DERIVED_KL, (B1, B2, M))
    with mpmath.workdps(60):
        b1, b2, m = mpmath.mpf(1) / 200, mpmath.mpf(1) / 2, mpmath.mpf(500)
        started = time.monotonic()
        got = real_value(f({B1: b1, B2: b2, M: m}))
        assert time.monotonic() - started < 1
        exact = mpmath.log(b2 / b1) + (b1 * mpmath.exp(-m / b1) + m) / b2 - 1
        assert got is not None and abs(got - exact) <= mpmath.mpf(10) ** -50 * abs(exact)


def test_log_of_a_negative_product_is_not_made_real():
    """log((-2) * x**(1/2)) is complex: the log-space rule applies to positive factors only."""
    x = sp.Symbol("x", positive=True)
    f = compile_mp(sp.log(sp.Mul(-2, sp.sqrt(x), evaluate=False)), (x,))
    with mpmath.workdps(30):
        assert real_value(f({x: mpmath.mpf(3)})) is None


@pytest.mark.slow
def test_kl_claim_of_two_laplace_scales_is_decided_in_time():
    import rdpsym
    from rdpsym.claims.check import check_claim
    from rdpsym.claims.verdict import Verdict

    x = sp.Symbol("x", real=True)
    r = rdpsym.renyi_divergence(sp.exp(-sp.Abs(x) / B1) / (2 * B1), sp.exp(-sp.Abs(x - M) / B2) / (2 * B2), x, sp.S.Reals)
    started = time.monotonic()
    v = check_claim(r, "log(b2/b1) + (b1*exp(-m/b1) + m)/b2 - 1", "==", order=1)
    assert time.monotonic() - started < 60
    assert v.verdict in (Verdict.PROVED, Verdict.CONFIRMED), str(v)
