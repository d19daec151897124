"""Ball arithmetic for claims (rdpsym.numeric.balls, rdpsym.claims.interval): enclosures contain the exact value, and bisection
proves only what holds and refutes only what fails."""

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rdpsym.numeric.balls import Unsupported, compile_arb, compile_arb_condition
from rdpsym.claims.interval import Axis, bisect_relation

a, s, p = sp.symbols("alpha sigma p", positive=True)

EXPRESSIONS = [
    a / (2 * s**2),
    1 / (a - 1) * sp.log(a / (2 * a - 1) * sp.exp((a - 1) / s) + (a - 1) / (2 * a - 1) * sp.exp(-a / s)),
    sp.Max(a, 3 * s) - sp.Min(sp.sqrt(a), s) + sp.Abs(a - 2 * s),
    sp.Piecewise((a * s, a < 2 * s), (sp.exp(-a) + s, True)),
    sp.erfc(a / s) + sp.loggamma(a + s) + sp.tanh(a - s) ** 3,
    (a + s) ** (sp.Rational(1, 3)) * sp.log(1 + s, 10),
]


def _arb(v):
    import flint

    return flint.arb(mpmath.nstr(v, 40))


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.integers(0, len(EXPRESSIONS) - 1), st.floats(1.001, 100), st.floats(0.01, 10))
def test_enclosures_contain_the_exact_value(i, av, sv):
    import flint

    expr = EXPRESSIONS[i]
    f = compile_arb(expr, (a, s))
    ar, sr = sp.Rational(av), sp.Rational(sv)
    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        ball = f({a: _arb_exact(ar), s: _arb_exact(sr)})
    finally:
        flint.ctx.prec = old
    with mpmath.workdps(80):
        exact = mpmath.mpf(sp.N(expr.subs({a: ar, s: sr}), 80))
        mid = mpmath.mpf(ball.mid().str(70, radius=False))
        rad = mpmath.mpf(ball.rad().str(10, radius=False))
        # (the midpoint is printed to 70 digits: its rounding is the 1e-65 allowance)
        assert abs(exact - mid) <= rad * (1 + mpmath.mpf(10) ** -6) + mpmath.mpf(10) ** -65 * max(1, abs(exact)), \
            (expr, av, sv, ball)
        assert rad <= mpmath.mpf(10) ** -40 * max(1, abs(exact))  # and it is a usable enclosure


def _arb_exact(q):
    import flint

    return flint.arb(flint.fmpq(int(q.p), int(q.q)))


def test_a_wide_ball_covers_every_branch_of_a_piecewise_and_of_max():
    import flint

    f = compile_arb(sp.Piecewise((sp.Integer(1), a < 2), (sp.Integer(5), True)), (a,))
    both = f({a: flint.arb(2, 0.5)})
    assert both.contains(1) and both.contains(5)
    assert compile_arb_condition(a < 2)({a: flint.arb(2, 0.5)}) is None
    m = compile_arb(sp.Max(a, 2 - a), (a,))({a: flint.arb(1, 0.25)})
    assert m.contains(1) and m.contains(1.25)


def test_unknown_nodes_are_unsupported():
    with pytest.raises(Unsupported):
        compile_arb(sp.besselj(a, s), (a, s))
    with pytest.raises(Unsupported):
        compile_arb(a + p, (a,))


def _decide(claim, relation, truth=a / (2 * s**2), **kw):
    axes = [Axis("alpha", a, 1e-12, 1e8, "offset", sp.Integer(1), +1), Axis("sigma", s, 0.01, 100, "offset")]
    diff = sp.cancel(sp.expand(claim - truth))
    return bisect_relation(compile_arb(claim, (a, s)), compile_arb(truth, (a, s)), relation, axes, alpha=a,
                           fixed={}, tol=1e-30, floor=1e-20, difference=compile_arb(diff, (a, s)), **kw)


def test_bisection_proves_a_loose_bound_and_refutes_a_narrow_bump():
    assert _decide(a / s**2, "<=").status == "proved"
    assert _decide(a / (4 * s**2), ">=").status == "proved"
    bump = _decide(a / (2 * s**2) - sp.exp(-((a - sp.Rational(5, 2)) * 100) ** 2) / 1000, "<=")
    assert bump.status == "refuted"
    # the certified point really violates the bound (checked at 60 digits by mpmath)
    av, sv = bump.point[a], bump.point[s]
    with mpmath.workdps(60):
        am, sm = mpmath.mpf(av.p) / av.q, mpmath.mpf(sv.p) / sv.q
        truth = am / (2 * sm**2)
        claim = truth - mpmath.exp(-((am - mpmath.mpf(5) / 2) * 100) ** 2) / 1000
        assert (truth - claim) / truth > mpmath.mpf(10) ** -30


def test_bisection_never_proves_a_claim_that_fails_below_its_resolution():
    # wrong by 1e-12 (relative) only for alpha in a band of width 1e-6: far finer than the budget resolves
    claim = a / (2 * s**2) * (1 - sp.exp(-((a - 7) * 10**6) ** 2) / 10**12)
    out = _decide(claim, "<=", max_boxes=300)
    assert out.status in ("partial", "refuted")
    assert out.status != "proved"


def test_equality_is_refuted_or_certified_never_proved():
    assert _decide(a / (2 * s**2), "==").status == "certified"
    assert _decide(a / (2 * s**2) * (1 + sp.Rational(1, 10**20)), "==").status == "refuted"
