"""The symbolic prover's rules, one at a time, on the expressions a derivation gives (no derivation here).

Each rule must prove what is true and nothing that is not: every test pairs a proof with a near miss.
"""

from __future__ import annotations

import pytest
import sympy as sp

from rdpsym.claims.prove import proof_context, prove
from rdpsym.claims.rewrite import abs_as_max, limit_from_above, log_coefficient_out
from rdpsym.specify.params import parameter
from rdpsym.symbols import alpha as A

SIGMA1 = parameter("sigma1", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
SIGMA2 = parameter("sigma2", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
S1, S2 = SIGMA1.symbol, SIGMA2.symbol
# D_alpha of N(0, s1^2) against N(0, s2^2), as the engine derives it, finite iff alpha s2^2 + (1-alpha) s1^2 > 0
DIVERGENCE = sp.log(S1 ** (1 - A) * S2**A / sp.sqrt(-A * S1**2 + A * S2**2 + S1**2)) / (A - 1)
FINITE = (A < 1) | ((A > 1) & ((A * S2**2 + S1**2 * (1 - A)) / (2 * S1**2 * S2**2) > 0))


def _prove(claim, truth, relation, order, fixed, params, conditions, alpha_range, seconds):
    """The proof's text, or None."""
    proof, _ = prove(proof_context(claim, truth, relation, order, fixed, params, conditions, alpha_range),
                     seconds=seconds)
    return proof.text if proof else None


def _proof(claim, truth=DIVERGENCE, conditions=FINITE, params=(SIGMA1, SIGMA2)):
    return _prove(claim, truth, "==", None, {}, params, conditions, (0, sp.oo), seconds=30)


def test_logs_of_arguments_positive_where_the_divergence_is_finite_are_expanded():
    # Gil, Alajaji and Linder 2013, Table 2: the same function written with other logs
    claim = sp.log(S2 / S1) + sp.log(S2**2 / (A * S2**2 + (1 - A) * S1**2)) / (2 * (A - 1))
    proof = _proof(claim)
    assert proof and "finiteness conditions" in proof, proof


def test_a_wrong_exponent_inside_the_log_is_not_proved():
    claim = sp.log(S2 / S1) + sp.log(S2**3 / (A * S2**2 + (1 - A) * S1**2)) / (2 * (A - 1))
    assert _proof(claim) is None


def test_logs_of_arguments_of_unknown_sign_are_not_expanded():
    # x real: log(x**2)/2 = log|x|, not log(x); with no finiteness condition to make x positive, no proof
    xp = parameter("x", domain=sp.Interval(-sp.oo, sp.oo), typical=(-2, 2))
    x = xp.symbol
    truth = sp.log(x**2) / 2 + A * 0
    assert _prove(sp.log(x) + A * 0, truth, "==", None, {}, (xp,), sp.true, (0, sp.oo), seconds=30) is None


def test_the_zcdp_route_needs_both_directions():
    """eps-DP bounds D_oo both ways. For P = N(0, 1) against Q = N(0, r^2), r > 1, only D_oo(P||Q) = log r is
    finite, and D_2(P||Q) > log(r)^2 (at r = 3/2: 0.18455 against 0.16440 by quadrature): no proof."""
    import dataclasses

    import mpmath

    from rdpsym.derive.engine import renyi_divergence

    r_param = parameter("r", domain=sp.Interval.open(1, sp.oo), typical=(1.5, 5))
    r = r_param.symbol
    x = sp.Symbol("x", real=True)
    P = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)
    Q = sp.exp(-x**2 / (2 * r**2)) / sp.sqrt(2 * sp.pi * r**2)
    res = renyi_divergence(P, Q, x, sp.S.Reals, params=[r_param])
    d2 = res.expr.subs(A, 2)
    context = proof_context(sp.log(r) ** 2, d2, "<=", sp.Integer(2), {}, [r_param], sp.true, (1, sp.oo),
                            max_divergence=res.max_divergence, of_distributions=True)
    proof, _ = prove(context)
    assert proof is None
    # the same context stated for a mechanism (D_oo bounding both directions) is what the route proves
    both, _ = prove(dataclasses.replace(context, both_directions=True))
    assert both is not None and both.route == "pure_dp_zcdp"
    with mpmath.workdps(30):
        rr = mpmath.mpf(3) / 2
        truth = mpmath.log(mpmath.quad(lambda t: mpmath.npdf(t, 0, 1) ** 2 / mpmath.npdf(t, 0, rr), [-mpmath.inf, mpmath.inf]))
        assert truth > mpmath.log(rr) ** 2


Q_RATE = parameter("q", domain=sp.Interval(0, 1), typical=(0.01, 0.5))
SCALE = parameter("b", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
# D_oo of the Poisson-subsampled Laplace, as the engine derives it: log of a convex combination of e^(1/b) and 1
SUBSAMPLED_D_OO = sp.log(Q_RATE.symbol * sp.exp(1 / SCALE.symbol) - Q_RATE.symbol + 1)


def _prove_at_oo(claim, relation, truth=SUBSAMPLED_D_OO):
    return _prove(claim, truth, relation, sp.oo, {}, (Q_RATE, SCALE), sp.true, (0, sp.oo), seconds=30)


def test_a_log_of_a_convex_combination_is_bounded_through_exp():
    """log(q e^(1/b) + 1 - q) <= 1/b: exp of the gap is (1 - q)(e^(1/b) - 1) >= 0."""
    proof = _prove_at_oo(1 / SCALE.symbol, "<=")
    assert proof and "exp is increasing" in proof, proof
    # and from below: log(q e^(1/b) + 1 - q) >= 0, by the same route or by non-negativity's sign
    assert _prove_at_oo(sp.Integer(0) * SCALE.symbol, ">=")


def test_exp_of_two_unrelated_orders_is_not_proved():
    """1/(2b) is below D_oo at q = 1 (it is 1/(2b) against 1/b): e^(1/(2b)) and e^(1/b) become two
    independent positive symbols, and nothing is proved."""
    assert _prove_at_oo(1 / (2 * SCALE.symbol), "<=") is None
    assert _prove_at_oo(1 / SCALE.symbol, ">=") is None  # false for q < 1


def test_exp_of_a_complex_argument_is_no_positive_symbol():
    from rdpsym.claims.rewrite import exp_as_positive_symbols

    b = SCALE.symbol
    out = exp_as_positive_symbols(sp.exp(sp.I * b) + sp.exp(b) + sp.exp(-b) + sp.exp(sp.Symbol("x", real=True)))
    assert out.has(sp.exp(sp.I * b)) and not out.has(sp.exp(b)) and not out.has(sp.exp(-b))
    names = {str(s) for s in out.free_symbols}
    assert {"w_exp1", "w_exp2", "w_exp3"} <= names
    # a new symbol never takes the name of one already in the expression
    taken = sp.Symbol("w_exp1", positive=True)
    assert exp_as_positive_symbols(sp.exp(b) + taken).free_symbols == {taken, sp.Symbol("w_exp2", positive=True)}


def test_a_substitution_variable_never_shares_a_parameter_name():
    """alpha = 1 + t over a parameter called t would make the proof cover the diagonal alpha = 1 + t only;
    the claim below equals the divergence there and nowhere else (at t = 37/10, alpha = 2 the bump makes it
    negative), so it must not be proved."""
    tp = parameter("t", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
    t = tp.symbol
    truth = A / (2 * t**2)
    bump = (A - 1 - t) ** 2 / (1 + A**2) * sp.exp(-10**8 * (t - sp.Rational(37, 10)) ** 2)
    assert _prove(truth - bump, truth, "<=", None, {}, (tp,), sp.true, (1, sp.oo), seconds=30) is None
    assert _prove(truth + bump, truth, "<=", None, {}, (tp,), sp.true, (1, sp.oo), seconds=30)  # true: proved


def test_a_proof_covers_the_closed_ends_of_a_domain():
    """0**q is 1 at q = 0 and 0 for q > 0: 1/b - 5*0**q lies below D_oo = 0 at q = 0, so no proof; over an
    open substitution q = 1/(1 + s), s > 0, it would read 1/b and be proved."""
    assert _prove_at_oo(1 / SCALE.symbol - 5 * sp.Integer(0) ** Q_RATE.symbol, "<=") is None
    # the closed-interval variable reaches both ends: q = 4s/(1 + s)^2 is 0 at s = 0 and 1 at s = 1
    from rdpsym.claims.prove import proof_context

    x = proof_context(1 / SCALE.symbol, SUBSAMPLED_D_OO, "<=", sp.oo, {}, (Q_RATE, SCALE), sp.true, (0, sp.oo))
    q = x.subs[Q_RATE.symbol]
    (s,) = q.free_symbols
    assert s.is_nonnegative and q.subs(s, 0) == 0 and q.subs(s, 1) == 1


# -- theorems and parts: the KL end, branches of a Min or a Max, cases on each side of a kink --------------
EPS = parameter("epsilon", domain=sp.Interval.open(0, sp.oo), typical=(0.1, 5))
E = EPS.symbol
# randomized response with eps-DP (Mironov 2017, Table II), as the engine derives it; D_oo = eps both ways
PURE_DP = sp.log((sp.exp(A * E) + sp.exp(-E * (A - 1))) / (sp.exp(E) + 1)) / (A - 1)


def _theorem_proof(claim, truth, relation, alpha_range=(1, sp.oo), params=(EPS,), conditions=sp.true,
                   of_distributions=True):
    proof, _ = prove(proof_context(claim, truth, relation, None, {}, params, conditions, alpha_range,
                                   max_divergence=E if truth is PURE_DP else None,
                                   of_distributions=of_distributions, both_directions=of_distributions),
                     seconds=30)
    return proof


def test_each_branch_of_a_min_is_proved_by_its_own_theorem():
    """min(eps, alpha eps^2/2) bounds eps-DP: eps by D_oo (Prop. 9), alpha eps^2/2 by zCDP (Bun and Steinke
    2016, Prop. 3.3). A branch below either bound, or divergences not of distributions, give no proof."""
    proof = _theorem_proof(sp.Min(E, A * E**2 / 2), PURE_DP, "<=")
    assert proof and proof.route == "branches" and "Prop. 9" in proof.text and "Prop. 3.3" in proof.text, proof
    assert [s.inputs[1] for s in proof.steps if s.rule == "route_choice"] == [
        sp.Symbol("max_divergence"), sp.Symbol("pure_dp_zcdp")]
    assert _theorem_proof(sp.Min(E, A * E**2 / 3), PURE_DP, "<=") is None
    assert _theorem_proof(sp.Min(E * 9 / 10, A * E**2 / 2), PURE_DP, "<=") is None
    assert _theorem_proof(sp.Min(E, A * E**2 / 2), PURE_DP, "<=", of_distributions=False) is None


def test_a_max_of_formulas_is_compared_branch_by_branch():
    """Max(d1, d2) <= c needs c above both; c <= Max(d1, d2) needs c below one."""
    x = EPS.symbol
    truth = sp.Max(A * x, A * x / 2 + 1)
    assert _theorem_proof(A * x + 1, truth, "<=", of_distributions=False)
    assert _theorem_proof(A * x, truth, "<=", of_distributions=False) is None  # below the second branch at x -> 0
    assert _theorem_proof(A * x / 2, truth, ">=", of_distributions=False)
    assert _theorem_proof(2 * A * x, truth, ">=", of_distributions=False) is None


LAPLACE_B = parameter("b", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
B = LAPLACE_B.symbol
# Laplace with sensitivity 1 (Mironov 2017, Table II), and its KL
LAPLACE = sp.log(A * sp.exp((A - 1) / B) / (2 * A - 1) + (A - 1) * sp.exp(-A / B) / (2 * A - 1)) / (A - 1)
LAPLACE_KL = 1 / B + sp.exp(-1 / B) - 1


def test_a_claim_at_most_the_kl_is_at_most_every_higher_order():
    """D_alpha >= KL for alpha > 1 (Prop. 9 and the limit at alpha -> 1); a claim a hair above the KL is not."""
    proof = _theorem_proof(LAPLACE_KL, LAPLACE, ">=", params=(LAPLACE_B,))
    assert proof and proof.route == "order_end" and "KL" in proof.text, proof
    assert _theorem_proof(LAPLACE_KL + sp.Rational(1, 10**9), LAPLACE, ">=", params=(LAPLACE_B,)) is None
    # without P and Q known to be distributions, Prop. 9 is no rule; the gap may still be signed by calculus
    # (its derivative in b over a positive denominator, then that numerator's), never through the theorem
    bare = _theorem_proof(LAPLACE_KL, LAPLACE, ">=", params=(LAPLACE_B,), of_distributions=False)
    assert bare is None or (bare.route != "order_end" and "KL" not in bare.text), bare


TILT = parameter("t", domain=sp.Interval.open(0, 1), typical=(0.1, 0.9))
T = TILT.symbol
# P = ((1 + t)/3, 1/3, (1 - t)/3) against its mirror image, as derived; its KL is (2t/3) log((1 + t)/(1 - t))
TILTED_THREE = sp.log((1 - T**2) ** (1 - A) * ((1 - T) ** (2 * A - 1) + (1 - T**2) ** (A - 1) + (T + 1) ** (2 * A - 1))
                      / 3) / (A - 1)
TILTED_KL = 2 * T * sp.log((1 + T) / (1 - T)) / 3


def test_the_kl_end_of_a_curve_sympys_limit_misses():
    """sympy's limit of the three-outcome curve at alpha -> 1+ is oo*sign(log(...)) with the log's argument 1
    (the parameter written as 1/(t_s + 1)): no value, and D_alpha >= KL was inconclusive (found in an audit).
    l'Hôpital's rule on the 0/0 quotient gives the KL; it is taken only where the numerator is analytic."""
    s = sp.Symbol("s", positive=True)
    kl = limit_from_above(TILTED_THREE.subs(T, 1 / (s + 1)), A, 1)
    assert sp.simplify(kl - TILTED_KL.subs(T, 1 / (s + 1))) == 0, kl
    proof = _theorem_proof(TILTED_KL, TILTED_THREE, ">=", params=(TILT,))
    assert proof and proof.route == "order_end" and "KL" in proof.text, proof
    assert _theorem_proof(TILTED_KL + sp.Rational(1, 10**9), TILTED_THREE, ">=", params=(TILT,)) is None
    # |alpha - 1| is not analytic at 1: no rule (sympy's own answer stands)
    assert limit_from_above(sp.log(1 + sp.Abs(A - 1)) / (A - 1), A, 1) == 1


def test_a_kl_bound_tight_at_an_end_is_proved_through_monotonicity():
    """The three-outcome KL (2t/3) log((1 + t)/(1 - t)) <= 4t^2/(3(1 - t^2)), tight as t -> 0 (inconclusive before:
    found in an audit). The gap's derivative is a polynomial times a log plus a polynomial; over the log's
    positive coefficient its derivative is rational. A bound too low at either end is not proved."""
    proof, _ = prove(proof_context(4 * T**2 / (3 * (1 - T**2)), TILTED_KL, "<=", 1, {}, (TILT,), sp.true, (1, sp.oo)),
                     seconds=30)
    # the gap over its positive factors (sign_part) is 2 (s + 1)/(s (s + 2)) - log((s + 2)/s) over t = 1/(1 + s),
    # with the derivative -4/(s (s + 2))^2; or its derivative over the log's positive coefficient is rational
    assert proof and proof.route == "monotone", proof
    assert any(s.rule in ("sign_part", "log_coefficient_out") for s in proof.steps), proof
    u = sp.Symbol("u", positive=True)
    assert log_coefficient_out(((u**2 + 1) * sp.log(u) - u) / (u + 3)) == sp.log(u) - u / (u**2 + 1)
    for low in (4 * T**2 / (3 * (1 - T**2 / 3)), 4 * T**2 / 3):
        assert prove(proof_context(low, TILTED_KL, "<=", 1, {}, (TILT,), sp.true, (1, sp.oo)), seconds=30)[0] is None


def test_a_max_of_absolute_values_pairs_with_both_directions():
    """A spike P = (t, (1-t)/3, (1-t)/3, (1-t)/3) against the uniform pmf: D_oo over both directions is derived
    as Max(-log 4t, log 4t, log(3/(4(1 - t))), log(4/3 - 4t/3)), and a paper writes it with absolute values
    (inconclusive before: found in an audit). Abs(u) is Max(u, -u) for a real u, and the branches pair off."""
    derived = sp.Max(-sp.log(4 * T), sp.log(4 * T), sp.log(3 / (4 * (1 - T))), sp.log(sp.Rational(4, 3) - 4 * T / 3))
    claim = sp.Max(sp.Abs(sp.log(4 * T)), sp.Abs(sp.log(4 * (1 - T) / 3)))
    proof, _ = prove(proof_context(claim, derived, "==", sp.oo, {}, (TILT,), sp.true, (1, sp.oo)), seconds=30)
    assert proof and proof.route == "branches" and "pair off" in proof.text, proof
    assert any(s.rule == "abs_as_max" for s in proof.steps)
    wrong = sp.Max(sp.Abs(sp.log(4 * T)), sp.Abs(sp.log(4 * (1 - T) / 5)))
    assert prove(proof_context(wrong, derived, "==", sp.oo, {}, (TILT,), sp.true, (1, sp.oo)), seconds=30)[0] is None
    z = sp.Symbol("z")  # of no known sign: |z| is not Max(z, -z) for a complex z
    with pytest.raises(ValueError, match="not shown real"):
        abs_as_max(sp.Abs(z))


RATIO = parameter("p", domain=sp.Interval.open(0, 1), typical=(0.1, 0.9))
# geometric noise (1 - p) p^k against its shift by one, both directions, as derived: finite for alpha < 1 only
SHIFTED_GEOMETRIC = sp.Piecewise((sp.Max(sp.log(RATIO.symbol**A) / (A - 1), sp.log(RATIO.symbol ** (1 - A)) / (A - 1)),
                                  A < 1), (sp.oo, True))


def _below_one(claim, relation):
    return prove(proof_context(claim, SHIFTED_GEOMETRIC, relation, None, {}, (RATIO,), RATIO.symbol < 1, (0, 1)),
                 seconds=30)[0]


def test_a_curve_finite_below_order_one_is_compared_there_branch_by_branch():
    """Over orders in (0, 1) the curve is its first Piecewise branch, a Max; the branch routes see that Max
    (they saw the Piecewise, and two true claims were inconclusive: found in an audit). A factor shown
    non-negative goes into a Max: Max(alpha/(1 - alpha), 1) log(1/p) is Max(alpha log(1/p)/(1 - alpha), log(1/p))."""
    p = RATIO.symbol
    proof = _below_one(sp.log(1 / p) / (1 - A), "<=")
    assert proof and proof.route == "branches" and "every branch" in proof.text, proof
    assert _below_one(sp.Rational(9, 10) * sp.log(1 / p) / (1 - A), "<=") is None  # below log(1/p) as alpha -> 0
    proof = _below_one(sp.Max(A / (1 - A), 1) * sp.log(1 / p), "==")
    assert proof and "pair off" in proof.text and any(s.rule == "extreme_times_nonnegative" for s in proof.steps), proof
    assert _below_one(sp.Max(A / (1 - A), 1) * sp.log(1 / p) * sp.Rational(11, 10), "==") is None
    assert _below_one(sp.Max(A / (1 - A), 2) * sp.log(1 / p), "==") is None


def test_the_order_end_route_is_only_the_lower_end():
    """c >= lim(alpha -> 3-) D_alpha would bound D on (1, 3), but sympy's limit at a large upper end runs into
    its hang guard (randomized response at alpha -> 10^7): the route takes the lower end only, and a claim
    about alpha * x on (1, 3) is proved by its sign, not by the end."""
    x = EPS.symbol
    proof = _theorem_proof(3 * x, A * x, "<=", alpha_range=(1, 3))
    assert proof is None or proof.route != "order_end", proof


SIGMA = parameter("sigma", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
RHO = parameter("rho", domain=sp.Interval.open(-1, 1), typical=(-0.9, 0.9))
R = RHO.symbol
# N(0, Sigma) against N(v, Sigma), unit correlation rho, the worse of v = (1, 1) and (1, -1), as derived
CORRELATED = -A * sp.Max(1 - R, 1 + R) / (2 * R**2 * SIGMA.symbol**2 - 2 * SIGMA.symbol**2)


def test_a_kink_inside_a_domain_is_proved_case_by_case():
    """alpha/(2 sigma^2 (1 - |rho|)) is the Max form on both sides of rho = 0; with 1 - rho it is right for
    rho >= 0 only, and is not proved."""
    claim = A / (2 * SIGMA.symbol**2 * (1 - sp.Abs(R)))
    x = proof_context(claim, CORRELATED, "==", None, {}, (SIGMA, RHO), sp.true, (1, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and proof.route == "cases" and "(-1, 0)" in proof.text and "[0, 1)" in proof.text, proof
    wrong = proof_context(A / (2 * SIGMA.symbol**2 * (1 - R)), CORRELATED, "==", None, {}, (SIGMA, RHO), sp.true,
                          (1, sp.oo))
    assert prove(wrong, seconds=30)[0] is None
    # the replay follows the recorded pieces and routes; another route recorded for a piece is a mismatch
    from rdpsym.claims.prove import replay
    from rdpsym.claims.rewrite import ReplayMismatch, Step

    assert "case by case" in replay(proof.route, proof.steps, x)
    i = next(k for k, s in enumerate(proof.steps) if s.rule == "route_choice")
    forged = list(proof.steps)
    forged[i] = Step("route_choice", (forged[i].inputs[0], sp.Symbol("exponential")), sp.true)
    with pytest.raises(ReplayMismatch):
        replay(proof.route, tuple(forged), x)
    with pytest.raises(ReplayMismatch):
        replay(proof.route, proof.steps[:2], x)  # one piece only


GAMMA = parameter("gamma", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
DELTA = parameter("sensitivity", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
G, D = GAMMA.symbol, DELTA.symbol
_ROOT = sp.sqrt(4 * G**2 + D**2)
# D_oo of Cauchy(0, gamma) against Cauchy(D, gamma) as derived: the log-ratio's maximum over its critical points
CAUCHY_LOG_A = sp.log((2 * G**2 + D**2 / 2 + D * _ROOT / 2) / (G**2 + (D - _ROOT) ** 2 / 4))
CAUCHY_LOG_B = sp.log((2 * G**2 + D**2 / 2 - D * _ROOT / 2) / (G**2 + (D + _ROOT) ** 2 / 4))
CAUCHY_D_OO = sp.Max(0, CAUCHY_LOG_A, CAUCHY_LOG_B)


def test_a_claim_equal_to_the_largest_branch_of_a_max():
    """2 log((D + sqrt(D^2 + 4 gamma^2))/(2 gamma)) is log A (exp of both agree), and above 0 and log B; log B,
    whose argument is positive only through its conjugate, is real. The smaller branch is not the Max."""
    x = proof_context(2 * sp.log((D + _ROOT) / (2 * G)), CAUCHY_D_OO, "==", sp.oo, {}, (GAMMA, DELTA), sp.true,
                      (0, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and proof.route == "branches" and "equals one branch" in proof.text, proof
    relations = [str(s.inputs[0][1]) for s in proof.steps if s.rule == "route_choice"]
    assert sorted(relations) == ["<=", "<=", "=="], relations
    smaller = proof_context(CAUCHY_LOG_B, CAUCHY_D_OO, "==", sp.oo, {}, (GAMMA, DELTA), sp.true, (0, sp.oo))
    assert prove(smaller, seconds=30)[0] is None
    half = proof_context(sp.log((D + _ROOT) / (2 * G)), CAUCHY_D_OO, "==", sp.oo, {}, (GAMMA, DELTA), sp.true,
                         (0, sp.oo))
    assert prove(half, seconds=30)[0] is None


def test_a_log_argument_positive_through_its_conjugate():
    from rdpsym.claims.rewrite import RULES

    assert RULES["both_real_with_exp_as_positive"](CAUCHY_LOG_B, sp.Integer(0)) is sp.true
    # D - sqrt(4 gamma^2 + D^2) is negative (its conjugate is positive, their product -4 gamma^2): not real
    assert RULES["both_real_with_exp_as_positive"](sp.log(D - _ROOT), sp.Integer(0)) is sp.false


def test_a_conjugate_is_not_trusted_over_roots_of_negative_numbers():
    """radsimp reads sqrt(x) sqrt(y) as sqrt(x y), false for x, y < 0: 1 + sqrt(x) sqrt(y) - sqrt(x y) is
    1 - 2 sqrt(x y) there, negative for x y > 1/4, and the claim below is D + 2 pi i at m1 = m2 = -1, alpha = 2.
    Its logs are not real by the assumptions, so neither relation is proved."""
    m1 = parameter("m1", domain=sp.Reals, typical=(-2, 2))
    m2 = parameter("m2", domain=sp.Reals, typical=(-2, 2))
    x, y = m1.symbol, m2.symbol
    truth = A * (x - y) ** 2 / 2
    e = sp.sqrt(x) * sp.sqrt(y) - sp.sqrt(x * y)
    claim = truth + sp.log(1 + e) + sp.log(3 + 2 * e) - sp.log((1 + e) * (3 + 2 * e))
    assert sp.N(claim.subs({x: -1, y: -1, A: 2}) - 2).as_real_imag()[1] != 0  # complex there indeed
    for relation in ("<=", ">="):
        context = proof_context(claim, truth, relation, None, {}, (m1, m2), sp.true, (1, sp.oo), of_distributions=True)
        assert prove(context, seconds=30)[0] is None


def test_a_kl_in_hyperbolic_form_is_compared_through_exp():
    """eps tanh(eps/2) is pure DP's KL, which the limit gives as (eps e^eps - eps)/(e^eps + 1)."""
    proof = _theorem_proof(E * sp.tanh(E / 2), PURE_DP, ">=")
    assert proof and proof.route == "order_end", proof
    assert _theorem_proof(E * sp.tanh(E / 2) * (1 + sp.Rational(1, 10**9)), PURE_DP, ">=") is None


MU = parameter("mu", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
SHIFT = parameter("d", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 2))
M_, S_ = MU.symbol, SHIFT.symbol
# KL(Poi(mu + d) || Poi(mu)) and KL(Poi(mu) || Poi(mu + d))
POISSON_KL_UP = (M_ + S_) * sp.log((M_ + S_) / M_) - S_
POISSON_KL_DOWN = M_ * sp.log(M_ / (M_ + S_)) + S_


def test_a_transcendental_inequality_is_proved_through_monotonicity():
    """KL(Poi(mu + d) || Poi(mu)) >= KL(Poi(mu) || Poi(mu + d)): (2 mu + d) log(1 + d/mu) >= 2d, which sympy's
    assumptions cannot see; the difference and its first derivative vanish at an end, and the second derivative
    is a ratio of positive terms. The reverse relation, and the bound with 2d replaced by 2.001d, are not."""
    from rdpsym.claims.prove import replay
    from rdpsym.claims.rewrite import ReplayMismatch, Step

    x = proof_context(POISSON_KL_UP, POISSON_KL_DOWN, "<=", sp.Integer(1), {}, (MU, SHIFT), sp.true, (1, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and proof.route == "monotone", proof
    assert "derivative" in proof.text and "non-negative" in proof.text
    assert replay(proof.route, proof.steps, x).startswith("proved")
    # a recorded end that is not the one the proof used is a mismatch
    i = next(k for k, s in enumerate(proof.steps) if s.rule == "monotone_choice")
    h, v, end = proof.steps[i].inputs
    forged = list(proof.steps)
    forged[i] = Step("monotone_choice", (h, v, sp.oo if end == 0 else sp.S.Zero), sp.true)
    with pytest.raises(ReplayMismatch):
        replay(proof.route, tuple(forged), x)
    reverse = proof_context(POISSON_KL_UP, POISSON_KL_DOWN, ">=", sp.Integer(1), {}, (MU, SHIFT), sp.true, (1, sp.oo))
    assert prove(reverse, seconds=30)[0] is None
    # 2.001 d: false for small d/mu (the difference is -0.001 d + O(d^3/mu^2))
    tighter = proof_context(POISSON_KL_UP - S_ / 1000, POISSON_KL_DOWN, "<=", sp.Integer(1), {}, (MU, SHIFT), sp.true,
                            (1, sp.oo))
    assert prove(tighter, seconds=30)[0] is None


def test_monotonicity_is_not_read_across_a_pole():
    """-1/(v - 1) has a derivative 1/(v - 1)^2 >= 0 and the limit 1 at v -> 0+, but it is -1 at v = 2: the
    route needs the expression continuous on the whole range, and a pole is a node that is not finite."""
    vp = parameter("v", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
    v = vp.symbol
    x = proof_context(-1 / (v - 1), sp.Integer(0) * A, "<=", None, {}, (vp,), sp.true, (1, sp.oo))
    assert prove(x, seconds=30)[0] is None
    from rdpsym.claims.rewrite import continuous_everywhere

    assert not continuous_everywhere(sp.sin(1 / (v - 1)))
    assert not continuous_everywhere(sp.Max(v, 1))
    assert continuous_everywhere(sp.log(1 + v) - v / (1 + v))


RATE_A = parameter("a", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
RATE_B = parameter("b", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
RA, RB = RATE_A.symbol, RATE_B.symbol


def _rates(u, w):
    """D_alpha(Exp(u) || Exp(w)) as the engine derives it, finite iff alpha u + (1 - alpha) w > 0."""
    return sp.log(u**A * w ** (1 - A) / (A * u + (1 - A) * w)) / (A - 1)


RATES = sp.Max(_rates(RA, RB), _rates(RB, RA))
RATES_FINITE = (((A < 1) | ((A > 1) & (A * RA + (1 - A) * RB > 0)))
                & ((A < 1) | ((A > 1) & (A * RB + (1 - A) * RA > 0))))


def _stated(u, w, condition):
    """A direction as a paper states it, with its own finiteness condition."""
    return sp.Piecewise((sp.log(u / w) + sp.log(u / (A * u + (1 - A) * w)) / (A - 1), condition), (sp.oo, True))


def test_a_claim_that_states_its_finiteness_conditions_is_proved_where_they_hold():
    """Max of Piecewise((f, alpha u + (1 - alpha) w > 0), (oo, True)) over both directions equals the derived
    Max where the divergence is finite: there its conditions make each first condition hold. A first
    condition they do not imply, or a wrong formula, is not proved."""
    claim = sp.Max(_stated(RA, RB, A * RA + (1 - A) * RB > 0), _stated(RB, RA, A * RB + (1 - A) * RA > 0))
    x = proof_context(claim, RATES, "==", None, {}, (RATE_A, RATE_B), RATES_FINITE, (1, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and proof.route == "pieces_where_finite" and "where the divergence is finite" in proof.text, proof
    from rdpsym.claims.prove import replay

    assert replay(proof.route, proof.steps, x).startswith("proved")
    loose = sp.Max(_stated(RA, RB, A * RB - RA > 0), _stated(RB, RA, A * RB + (1 - A) * RA > 0))
    assert prove(proof_context(loose, RATES, "==", None, {}, (RATE_A, RATE_B), RATES_FINITE, (1, sp.oo)),
                 seconds=30)[0] is None
    wrong = sp.Max(_stated(RA, RB, A * RA + (1 - A) * RB > 0),
                   sp.Piecewise((2 * sp.log(RB / RA), A * RB + (1 - A) * RA > 0), (sp.oo, True)))
    assert prove(proof_context(wrong, RATES, "==", None, {}, (RATE_A, RATE_B), RATES_FINITE, (1, sp.oo)),
                 seconds=30)[0] is None


def test_a_stated_claim_must_be_infinite_where_the_divergence_is():
    """At order 2 the rates' divergence is +oo where 2u - w <= 0. A claim that states its conditions is equal to
    it only if it is +oo there too: with (0, True) in place of (oo, True), or with a first condition that also
    holds where the divergence is infinite, it is not proved (before, both were: a proof where the divergence
    is finite said nothing of where it is not)."""
    two = sp.Integer(2)

    def stated(u, w, condition, rest=sp.oo):
        return sp.Piecewise((sp.log(u / w) + sp.log(u / (2 * u - w)), condition), (rest, True))

    def proved(claim):
        x = proof_context(claim, RATES, "==", two, {}, (RATE_A, RATE_B), RATES_FINITE, (1, sp.oo))
        return prove(x, seconds=30)[0]

    assert proved(sp.Max(stated(RA, RB, 2 * RA - RB > 0), stated(RB, RA, 2 * RB - RA > 0)))
    assert proved(sp.Max(stated(RA, RB, 2 * RA - RB > 0, 0), stated(RB, RA, 2 * RB - RA > 0))) is None
    assert proved(sp.Max(stated(RA, RB, 4 * RA - RB > 0), stated(RB, RA, 2 * RB - RA > 0))) is None


def test_two_maxes_pair_off_branch_by_branch():
    """Max(g1, g2) = Max(f1, f2) when g1 = f2 and g2 = f1, each in another form; a pair that is not equal is
    not proved."""
    from rdpsym.claims.guard import HangGuards
    from rdpsym.claims.prove import ROUTES
    from rdpsym.claims.rewrite import Chain

    def forms(u, w):
        return sp.log(u / w) + sp.log(u / (A * u + (1 - A) * w)) / (A - 1)

    claim = sp.Max(forms(RB, RA), forms(RA, RB))
    x = proof_context(claim, RATES, "==", None, {}, (RATE_A, RATE_B), RATES_FINITE, (1, sp.oo))
    chain = Chain(HangGuards(), 30)
    text = ROUTES["branches"](chain, x)
    assert text and "pair off" in text, text
    pairs = [s.inputs[0] for s in chain.steps if s.rule == "route_choice"]
    assert len(pairs) == 2 and {p[1] for p in pairs} == set(x.t_free.args)
    wrong = sp.Max(forms(RB, RA), 2 * forms(RA, RB))
    y = proof_context(wrong, RATES, "==", None, {}, (RATE_A, RATE_B), RATES_FINITE, (1, sp.oo))
    assert ROUTES["branches"](Chain(HangGuards(), 30), y) is None


def test_a_claim_below_both_kls_minus_a_constant_is_below_every_order():
    """Max(KL_1, KL_2) - 1/2 <= D_alpha (both directions of two Gaussian variances): Max(a, b) - 1/2 is
    Max(a - 1/2, b - 1/2), each branch at most its direction's KL, the limit of D at alpha -> 1+ being the
    Max of both; the same with + 1/2 is above both KLs for s1 = s2 and is not proved."""
    kl_12 = sp.log(S2 / S1) + S1**2 / (2 * S2**2) - sp.Rational(1, 2)
    kl_21 = sp.log(S1 / S2) + S2**2 / (2 * S1**2) - sp.Rational(1, 2)
    both = sp.Max(DIVERGENCE, DIVERGENCE.subs({S1: S2, S2: S1}, simultaneous=True))
    finite = FINITE & FINITE.subs({S1: S2, S2: S1}, simultaneous=True)
    claim = sp.Max(kl_12 + sp.Rational(1, 2), kl_21 + sp.Rational(1, 2)) - sp.Rational(1, 2)
    x = proof_context(claim, both, ">=", None, {}, (SIGMA1, SIGMA2), finite, (1, sp.oo), of_distributions=True)
    proof, _ = prove(x, seconds=30)
    assert proof and proof.route == "branches" and "KL" in proof.text, proof
    from rdpsym.claims.prove import replay

    assert replay(proof.route, proof.steps, x).startswith("proved")
    above = sp.Max(kl_12 + sp.Rational(1, 2), kl_21 + sp.Rational(1, 2)) + sp.Rational(1, 2)
    y = proof_context(above, both, ">=", None, {}, (SIGMA1, SIGMA2), finite, (1, sp.oo), of_distributions=True)
    assert prove(y, seconds=30)[0] is None


def test_a_claim_that_jumps_where_two_parameters_meet_is_proved_on_each_side():
    """D_oo(Exp(a) || Exp(b)) is log(a/b) for a >= b and +oo below: the kink a - b splits a at b (a = b/(1 + s)
    on one side, b + s on the other, the point itself on the second only). With a > b in the claim, a = b
    gives +oo where the divergence is 0: not proved."""
    truth = sp.Piecewise((sp.oo, RA < RB), (sp.log(RA / RB), True))
    claim = sp.Piecewise((sp.log(RA / RB), RA >= RB), (sp.oo, True))
    x = proof_context(claim, truth, "==", sp.oo, {}, (RATE_A, RATE_B), sp.true, (0, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and proof.route == "cases" and "a = b" in proof.text, proof
    from rdpsym.claims.prove import replay

    assert replay(proof.route, proof.steps, x).startswith("proved")
    strict = sp.Piecewise((sp.log(RA / RB), RA > RB), (sp.oo, True))
    assert prove(proof_context(strict, truth, "==", sp.oo, {}, (RATE_A, RATE_B), sp.true, (0, sp.oo)),
                 seconds=30)[0] is None


def test_the_first_branch_is_the_claims_own_in_every_regime():
    """Piecewise((D, alpha < 1), (0, alpha a + (1 - alpha) b > 0), (oo, True)) over alpha > 1: substituting
    alpha = 1 + t drops the first branch, and the second's condition is implied; the claim is 0 there, not D
    (at a = 3/2, b = 1, alpha = 2 both directions are finite and D > 0.1). Found by review."""
    truth = _rates(RA, RB)
    finite = (A < 1) | ((A > 1) & (A * RA + (1 - A) * RB > 0))
    claim = sp.Piecewise((truth, A < 1), (0, A * RA + (1 - A) * RB > 0), (sp.oo, True))
    for relation in ("==", ">="):
        x = proof_context(claim, truth, relation, None, {}, (RATE_A, RATE_B), finite, (1, sp.oo))
        assert prove(x, seconds=30)[0] is None, relation


def test_a_condition_that_allows_zero_makes_nothing_positive():
    """Finite where 2 - mu >= 0: at mu = 2 the divergence alpha mu^2/2 is finite, and a claim that is +oo
    unless 2 - mu > 0 is +oo there. Found by review."""
    truth = A * M_**2 / 2
    claim = sp.Piecewise((truth, 2 - M_ > 0), (sp.oo, True))
    for relation in ("==", ">="):
        x = proof_context(claim, truth, relation, None, {}, (MU,), sp.Ge(2 - M_, 0), (1, sp.oo))
        assert prove(x, seconds=30)[0] is None, relation


def test_orders_below_one_count_whatever_type_the_range_has():
    """alpha_range (0, oo) in Python ints: the regime alpha < 1 is taken too (0 < 1 is Python's True, not
    sympy's). The claim is D above 1 and 10 below: false at alpha = 1/2. Found by review."""
    gap = A * S2**2 + (1 - A) * S1**2
    claim = sp.Piecewise((DIVERGENCE, (A - 1) * gap > 0), (10, True))
    for relation in ("==", ">="):
        x = proof_context(claim, DIVERGENCE, relation, None, {}, (SIGMA1, SIGMA2), FINITE, (0, sp.oo))
        assert prove(x, seconds=30)[0] is None, relation


def test_a_claim_that_jumps_at_order_one_is_not_proved_over_a_range_that_holds_it():
    """Piecewise((D, (alpha - 1)^2 > 0), (oo, True)) is D everywhere but at alpha = 1, where D is the KL and the
    claim +oo; the routes look at alpha < 1 and alpha > 1 only, so no proof (nor a replay) over (0, oo)."""
    from rdpsym.claims.prove import replay
    from rdpsym.claims.rewrite import ReplayMismatch

    claim = sp.Piecewise((DIVERGENCE, (A - 1) ** 2 > 0), (sp.oo, True))
    x = proof_context(claim, DIVERGENCE, "==", None, {}, (SIGMA1, SIGMA2), FINITE, (0, sp.oo))
    assert prove(x, seconds=30)[0] is None
    with pytest.raises(ReplayMismatch):
        replay("log_expansion", (), x)


def test_monotonicity_is_not_read_in_an_integer_variable():
    """1/(n - 3/2) is finite at every integer n, with a pole between 1 and 2: the route takes no integer
    variable (found by review). (2 + n) log(1 + n) >= 2n, which it proves for a real n, is not proved through
    n when n is an integer, and a certificate that records n as the variable does not replay."""
    from rdpsym.claims.prove import replay
    from rdpsym.claims.rewrite import ReplayMismatch

    real = parameter("n", domain=sp.Interval.open(0, sp.oo), typical=(1, 5))
    whole = parameter("n", domain=sp.Interval.open(0, sp.oo), typical=(1, 5), integer=True)
    proofs = {}
    for p in (real, whole):
        n = p.symbol
        x = proof_context((2 + n) * sp.log(1 + n), 2 * n, "<=", sp.Integer(2), {}, (p,), sp.true, (1, sp.oo))
        proofs[p.symbol.is_integer] = (x, prove(x, seconds=30)[0])
    x, proof = proofs[None]
    assert proof and proof.route == "monotone", proof
    x_int, proof_int = proofs[True]
    assert proof_int is None or proof_int.route != "monotone", proof_int
    from rdpsym.claims.rewrite import Step

    swap = {real.symbol: whole.symbol}
    forged = tuple(Step(s.rule, tuple(i.xreplace(swap) if isinstance(i, sp.Basic) else i for i in s.inputs),
                        s.output.xreplace(swap))
                   for s in proof.steps)
    with pytest.raises(ReplayMismatch, match="no end of a variable"):
        replay("monotone", forged, x_int)


SCALE1 = parameter("b1", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 2))
SCALE2 = parameter("b2", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 2))
B1, B2 = SCALE1.symbol, SCALE2.symbol
#: KL between Laplace laws of scales b1 and b2, both directions (Gil, Alajaji and Linder 2013, Table 3)
LAPLACE_SCALES_KL = sp.Max(B1 / B2 + sp.log(B2 / B1) - 1, B2 / B1 + sp.log(B1 / B2) - 1)


def test_a_gap_smallest_at_one_turning_point_is_proved_there():
    """KL(Lap(b1) || Lap(b2)) <= (b1 - b2)^2/(b1 b2) (inconclusive before: found in an audit). Each branch's gap
    is r - 1 - log r in r = b2/b1: +oo at both ends of b1, so neither end gives monotonicity. Its derivative is
    (b1 - b2)/b1^2, one linear factor times a positive one: smallest at b1 = b2, where it is 0. The replay
    follows the recorded turning point; a bound 1/100 lower, negative at b1 = b2, is not proved, nor is one
    whose turning point lies outside the range."""
    from rdpsym.claims.prove import TURNING_POINT, replay

    claim = (B1 - B2) ** 2 / (B1 * B2)
    x = proof_context(claim, LAPLACE_SCALES_KL, "<=", 1, {}, (SCALE1, SCALE2), sp.true, (1, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and "smallest at" in proof.text, proof
    assert any(s.rule == "monotone_choice" and s.inputs[2] == TURNING_POINT for s in proof.steps)
    assert replay(proof.route, proof.steps, x).startswith("proved")
    lower = proof_context(claim - sp.Rational(1, 100), LAPLACE_SCALES_KL, "<=", 1, {}, (SCALE1, SCALE2), sp.true,
                          (1, sp.oo))
    assert prove(lower, seconds=30)[0] is None
    vp = parameter("v", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
    v = vp.symbol

    def below(claim):  # 0 <= claim, the divergence 0 at order 2
        return prove(proof_context(claim, sp.Integer(0) * A, "<=", 2, {}, (vp,), sp.true, (1, sp.oo)), seconds=30)[0]

    # v - 2 log v turns at v = 2, where it is 2 - 2 log 2 > 0; one less is negative there
    proof = below(v - 2 * sp.log(v))
    assert proof and "smallest at v = 2" in proof.text, proof
    assert below(v - 2 * sp.log(v) - 1) is None
    # v + 1/v - 2: its derivative (v - 1)(v + 1)/v^2 has a second linear factor, positive over the range
    proof = below(v + 1 / v - 2)
    assert proof and "smallest at v = 1" in proof.text, proof
    # (v - 1)(v - 3) turns twice: no single turning point
    assert below((v - 1) ** 2 * (v - 3) ** 2 / v - sp.Rational(1, 10)) is None


def test_a_log_of_a_sum_equal_once_power_bases_are_split_into_factors():
    """The three-outcome pmf's D_alpha as derived, log((1 - t^2)^(1 - alpha) ((1 - t)^(2 alpha - 1) + (1 - t^2)^(alpha
    - 1) + (1 + t)^(2 alpha - 1))/3)/(alpha - 1), against the sum a paper writes (inconclusive before: found in
    an audit). Only with (1 - t^2)^(1 - alpha) = (1 - t)^(1 - alpha) (1 + t)^(1 - alpha) (t in (0, 1)) do the log
    arguments agree. The same sum with a wrong exponent is not proved."""
    from rdpsym.claims.prove import replay

    derived = TILTED_THREE
    paper = sp.log(((1 + T) ** A * (1 - T) ** (1 - A) + 1 + (1 - T) ** A * (1 + T) ** (1 - A)) / 3) / (A - 1)
    x = proof_context(paper, derived, "==", None, {}, (TILT,), sp.true, (1, sp.oo))
    proof, _ = prove(x, seconds=60)
    assert proof and any(s.rule == "positive_bases_split" for s in proof.steps), proof
    assert replay(proof.route, proof.steps, x).startswith("proved")
    wrong = paper.subs((1 - T) ** (1 - A), (1 - T) ** (2 - A))
    assert wrong != paper
    assert prove(proof_context(wrong, derived, "==", None, {}, (TILT,), sp.true, (1, sp.oo)), seconds=60)[0] is None


def test_positive_bases_are_split_only_into_positive_factors():
    from rdpsym.claims.rewrite import positive_bases_split

    x = sp.Symbol("x", real=True)
    # x real: x^2 - 1 has factors of unknown sign, so (x^2 - 1)^alpha stays whole
    assert positive_bases_split((x**2 - 1) ** A) == (x**2 - 1) ** A
    s = sp.Symbol("s", positive=True)
    assert positive_bases_split((s**2 + 3 * s + 2) ** A) == (s + 1) ** A * (s + 2) ** A
    # (1 - s)(1 + s) with 1 - s > 0 given: the factor s - 1 is taken with its sign turned
    assert positive_bases_split((1 - s**2) ** A, 1 - s) == (1 - s) ** A * (1 + s) ** A


def test_an_exponent_is_real_where_its_denominator_has_a_known_sign():
    """positive_where reads exp(u) as positive when u is real; sympy leaves D^2/(2 s2^2 - s1^2) undecided (its
    denominator could vanish), the finiteness condition 2 s2^2 - s1^2 > 0 decides it (two Gaussians' D_2)."""
    from rdpsym.claims.rewrite import positive_where

    d = sp.Symbol("D", positive=True)
    e = sp.exp(d**2 / (2 * S2**2 - S1**2)) / sp.sqrt(2 * S2**2 - S1**2)
    assert positive_where(e, 2 * S2**2 - S1**2)
    assert not positive_where(e)


def test_a_lower_bound_below_one_branch_of_the_kl_is_proved_through_the_order_end():
    """D_alpha(N(0, s1^2), N(D, s2^2)) over both directions >= D^2/(2 s2^2) for alpha > 1: the claim is at most
    one direction's KL, log(s2/s1) + (s1^2 + D^2)/(2 s2^2) - 1/2, a gap smallest at s1 = s2 (a turning point),
    and D_alpha >= KL (Prop. 9). Before, only a gap of a sign sympy's assumptions see was taken at the order
    end (an audit's D^2/(2 min(s1, s2)^2), on each side of s1 = s2, is this twice). The curve is written as a
    paper writes it; a claim 1/100 higher (above the divergence where s1 = s2 and alpha -> 1) is not proved."""
    s1p, s2p = (parameter(n, domain=sp.Interval.open(0, sp.oo), typical=(0.5, 2)) for n in ("s1", "s2"))
    dp = parameter("D", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 2))
    u, w, d = s1p.symbol, s2p.symbol, dp.symbol

    def direction(a, b):  # D_alpha(N(0, a^2) || N(D, b^2)), finite iff alpha b^2 + (1 - alpha) a^2 > 0
        v = A * b**2 + (1 - A) * a**2
        return sp.log(b / a) + sp.log(b**2 / v) / (2 * (A - 1)) + A * d**2 / (2 * v)

    curve = sp.Max(direction(u, w), direction(w, u))
    finite = ((A < 1) | ((A > 1) & (A * w**2 + (1 - A) * u**2 > 0))) & ((A < 1) | ((A > 1) & (A * u**2 + (1 - A) * w**2 > 0)))

    def context(c):  # the curve of a mechanism: D_alpha is non-decreasing in alpha
        return proof_context(c, curve, ">=", None, {}, (s1p, s2p, dp), finite, (1, sp.oo), of_distributions=True)

    claim = d**2 / (2 * w**2)
    proof, _ = prove(context(claim), seconds=60)
    assert proof and "a branch of lim(alpha -> 1+) D_alpha" in proof.text and "largest at s1 = s2" in proof.text, proof
    from rdpsym.claims.prove import replay

    assert replay(proof.route, proof.steps, context(claim)).startswith("proved")
    assert prove(context(claim + sp.Rational(1, 100)), seconds=60)[0] is None


def test_a_hyperbolic_derivative_is_signed_with_exp_and_its_reciprocal_as_one_symbol():
    """The Gumbel shift's KL over both directions, Max(e^(-1/b) + 1/b - 1, e^(1/b) - 1 - 1/b), equals its second
    branch (inconclusive before: a held-out audit): the gap 2 sinh(1/b) - 2/b falls to 0 as b -> oo, its
    derivative (2 - 2 cosh(1/b))/b^2 is non-positive because, with e^(1/b) = 1 + w, 2 - w' - 1/w' is
    -w^2/(1 + w). The first branch is not the Max."""
    bp = parameter("b", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
    b = bp.symbol
    kl = sp.Max(sp.exp(-1 / b) + 1 / b - 1, sp.exp(1 / b) - 1 - 1 / b)

    def proved(claim):
        return prove(proof_context(claim, kl, "==", 1, {}, (bp,), sp.true, (1, sp.oo)), seconds=30)[0]

    proof = proved(sp.exp(1 / b) - 1 - 1 / b)
    assert proof and any(s.rule == "exps_as_positive_symbols" for s in proof.steps), proof
    assert proved(sp.exp(-1 / b) + 1 / b - 1) is None
    from rdpsym.claims.rewrite import exps_as_positive_symbols

    assert exps_as_positive_symbols(2 - 2 * sp.cosh(1 / b)).could_extract_minus_sign()
    assert exps_as_positive_symbols(sp.exp(b) - sp.exp(-b) - 2 * sp.sinh(b)) == 0


# -- a paper's D_oo with a log of a Max, outcomes a paper leaves out, a turning point at a numerator's root ---
P_RATE = parameter("p", domain=sp.Interval.open(0, 1), typical=(0.1, 0.9))
PR = P_RATE.symbol


def _bernoulli_d_oo():
    """D_oo of Bern(p) against Bern(p^2), both directions, one branch per outcome as the derivation writes it."""
    ratios = (1 / PR, (1 - PR) / (1 - PR**2), PR, (1 - PR**2) / (1 - PR))
    return sp.Max(*(sp.log(r) for r in ratios))


def test_a_log_of_a_max_is_compared_as_the_max_of_its_logs():
    """log(Max(1/p, 1 + p)) as a paper writes D_oo of Bern(p) against Bern(p^2): log commutes with a Max of
    positive branches, and the derivation's two other outcomes (1/(1 + p) and p) are below a claim branch.
    A near miss, Max(1/p, 1 + p/2), is below the divergence at every p and is not proved."""
    proof = _prove(sp.log(sp.Max(1 / PR, 1 + PR)), _bernoulli_d_oo(), "==", sp.oo, {}, (P_RATE,), sp.true,
                   (0, sp.oo), seconds=30)
    assert proof and "each other branch of the divergence is at most a claim branch" in proof, proof
    assert _prove(sp.log(sp.Max(1 / PR, 1 + PR / 2)), _bernoulli_d_oo(), "==", sp.oo, {}, (P_RATE,), sp.true,
                  (0, sp.oo), seconds=30) is None


def test_log_of_extreme_needs_positive_branches():
    from rdpsym.claims.rewrite import log_of_extreme

    x = sp.Symbol("x", real=True)
    assert log_of_extreme(3 * sp.log(sp.Max(1 / PR, 1 + PR) ** 2)) == 3 * sp.Max(2 * sp.log(1 / PR), 2 * sp.log(1 + PR))
    with pytest.raises(ValueError):
        log_of_extreme(sp.log(sp.Max(x, 1)))  # x may be <= 0: log(x) is no branch of the log


def test_a_rational_kink_cuts_the_domain_and_each_piece_is_proved():
    """D_oo of Bin(3, p) against Bin(3, 1/2) is 3 log(Max(1/(2p), 1/(2(1-p)))) as a paper writes it; the
    derivation's Max has more branches: here the extreme outcomes k = 0, 3 of both directions and the dominated
    k = 1 of one. The claim's kink 1/(2p) - 1/(2(1-p)) is rational, cut where its numerator 1 - 2p vanishes; on
    each side one claim branch dominates every outcome. A claim with 1/(3(1-p)) for the second branch is not
    proved."""
    outcomes = [8 * PR**k * (1 - PR) ** (3 - k) for k in range(4)]
    truth = sp.Max(sp.log(outcomes[1]), *(sp.log(outcomes[k]) for k in (0, 3)), *(-sp.log(outcomes[k]) for k in (0, 3)))
    claim = 3 * sp.log(sp.Max(1 / (2 * PR), 1 / (2 * (1 - PR))))
    proof = _prove(claim, truth, "==", sp.oo, {}, (P_RATE,), sp.true, (0, sp.oo), seconds=30)
    assert proof and "on each side of p = 1/2" in proof, proof
    near = 3 * sp.log(sp.Max(1 / (2 * PR), 1 / (3 * (1 - PR))))
    assert _prove(near, truth, "==", sp.oo, {}, (P_RATE,), sp.true, (0, sp.oo), seconds=30) is None


def _binomial_kls():
    """KL(Bin(3, p) || Bin(3, 1/2)) and KL(Bin(3, 1/2) || Bin(3, p)): equal and 0 at p = 1/2 only."""
    forward = 3 * (PR * sp.log(2 * PR) + (1 - PR) * sp.log(2 * (1 - PR)))
    backward = -sp.Rational(3, 2) * sp.log(4 * PR * (1 - PR))
    return forward, backward


def test_a_gap_whose_derivative_has_a_monotone_numerator_is_smallest_at_its_root():
    """The backward KL is the larger direction: their gap's derivative (over p = 1/(1 + s)) has the numerator
    3 s^2 - 6 s log s - 3, no linear factor, which rises through 0 at s = 1 (its derivative 6 (s - 1 - log s)
    is smallest, 0, at s = 1). So the gap is smallest at p = 1/2, where it is 0. The forward KL claimed as the
    Max is not proved (it is the smaller one everywhere but p = 1/2)."""
    from rdpsym.claims.prove import MONOTONE_ROOT, replay
    from rdpsym.claims.rewrite import ReplayMismatch, Step

    forward, backward = _binomial_kls()
    truth = sp.Max(forward, backward)
    x = proof_context(backward, truth, "==", 1, {}, (P_RATE,), sp.true, (0, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and "over the positive" in proof.text and "is 0 at" in proof.text, proof
    assert any(s.rule == "monotone_choice" and s.inputs[2] == MONOTONE_ROOT for s in proof.steps)
    assert replay(proof.route, proof.steps, x).startswith("proved")
    # a certificate that moves the root: the numerator is not 0 there, and the replay says so
    moved = tuple(Step(s.rule, s.inputs[:2] + (s.inputs[2] + 1,), s.output) if s.rule == "root_choice" else s
                  for s in proof.steps)
    with pytest.raises(ReplayMismatch):
        replay(proof.route, moved, x)
    assert _prove(forward, truth, "==", 1, {}, (P_RATE,), sp.true, (0, sp.oo), seconds=30) is None
    # the same gap shifted down by 1/1000 is negative at p = 1/2: no proof through its root
    assert _prove(backward - sp.Rational(1, 1000), truth, "==", 1, {}, (P_RATE,), sp.true, (0, sp.oo),
                  seconds=30) is None


def test_a_numerator_root_is_found_only_where_it_is_the_same_for_every_parameter():
    from rdpsym.claims.prove import _rational_root

    s, lam = sp.symbols("s lam", positive=True)
    assert _rational_root(3 * s**2 - 6 * s * sp.log(s) - 3, s) == 1
    assert _rational_root(lam * (s - sp.Rational(2, 3)), s) == sp.Rational(2, 3)
    assert _rational_root(s - lam, s) is None  # the root moves with lam
    assert _rational_root(s**2 + 1, s) is None


def test_a_large_multiple_in_an_exponent_is_factored_as_a_symbol():
    """sympy's polynomials write exp(740000000 t) as exp(t)**740000000; positive_where factors such an exp
    as a positive symbol of its own, so the sign below comes back at once (it took the 30 s hang guard)."""
    from rdpsym.claims.rewrite import _factor_tamed, positive_where

    t, u = sp.symbols("t u", positive=True)
    big = sp.exp(740000000 * t)
    expr = (2 * u * big + 4 * big + 2 * u) / (u**4 * sp.exp(1369000000) + 4 * u)
    assert positive_where(expr)
    assert not positive_where(expr - 3 * big)
    assert sp.simplify(_factor_tamed(u**2 * big - big) - (u - 1) * (u + 1) * big) == 0


LAM = parameter("lam", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))


def _poisson_doubling():
    """D_alpha(Poi(lam) || Poi(2 lam)) and D_alpha(Poi(2 lam) || Poi(lam)), as the engine derives them."""
    lam = LAM.symbol
    return lam * (2 ** (1 - A) + A - 2) / (A - 1), lam * (2**A - A - 1) / (A - 1)


def test_an_exponential_polynomial_gap_is_signed_through_its_positive_factors():
    """Pois(2 lam) || Pois(lam) is the larger direction for alpha > 1: the gap of the two curves is
    lam (2 4^t - 2 t 2^t - 2^t - 1)/(2^t t) over alpha = 1 + t. Its sign is that of the numerator (sign_part),
    whose derivative is 2^t (4 log 2 2^t - 2 t log 2 - 2 - log 2); that rises from 3 log 2 - 2 > 0, since its
    own derivative 4 log(2)^2 2^t - 2 log 2 is positive once 2^t is 1 + w (powers_as_positive_symbols).
    Near misses: the smaller direction claimed as the Max, and the larger one less 8/100 (alpha - 1)."""
    from rdpsym.claims.prove import replay
    from rdpsym.claims.rewrite import ReplayMismatch, Step

    forward, backward = _poisson_doubling()
    truth = sp.Max(forward, backward)
    x = proof_context(backward, truth, "==", None, {}, (LAM,), sp.true, (1, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and "has the sign of" in proof.text and "a positive symbol w" in proof.text, proof
    rules = [s.rule for s in proof.steps]
    assert "sign_part" in rules and "powers_as_positive_symbols" in rules
    assert replay(proof.route, proof.steps, x).startswith("proved")
    # a certificate whose sign_part output lost a factor of the numerator does not replay
    i = rules.index("sign_part")
    forged = list(proof.steps)
    forged[i] = Step("sign_part", proof.steps[i].inputs, proof.steps[i].output + 1)
    with pytest.raises(ReplayMismatch):
        replay(proof.route, tuple(forged), x)
    assert _prove(forward, truth, "==", None, {}, (LAM,), sp.true, (1, sp.oo), seconds=30) is None
    # the gap is (3 log 2 - 2) lam t + O(t^2), 0.0794 lam t: with 8/100 lam t added to the smaller direction,
    # it is the larger one for small t
    raised = sp.Max(forward + sp.Rational(8, 100) * LAM.symbol * (A - 1), backward)
    assert _prove(backward, raised, "==", None, {}, (LAM,), sp.true, (1, sp.oo), seconds=30) is None
    assert _prove(backward, raised, "<=", None, {}, (LAM,), sp.true, (1, sp.oo), seconds=30) is None


def test_sign_part_drops_only_factors_known_to_be_positive():
    from rdpsym.claims.rewrite import powers_as_positive_symbols, sign_part

    t, lam = sp.symbols("t lam", positive=True)
    x = sp.Symbol("x", real=True)
    assert sign_part(lam * (2 * 4**t - 1) / (2**t * t)) == 2 * 4**t - 1
    assert sign_part(-3 * lam * x) == -3 * x  # -3 keeps the sign flipped, x has no known sign
    with pytest.raises(ValueError):
        sign_part(x - 1)
    # 2^t with t > 0 is 1 + w; with x of unknown sign it is w, any positive number
    flat = powers_as_positive_symbols(2 * sp.log(2) * 2**t - 1)
    assert flat.is_nonnegative
    assert not powers_as_positive_symbols(2 * sp.log(2) * 2**x - 1).is_nonnegative


RAYLEIGH_S = parameter("s", domain=sp.Interval.open(0, sp.oo), typical=(0.5, 5))
# Rayleigh(s) against Rayleigh(2s), both directions as the engine derives them: the forward one is finite at
# every order, the backward one only for alpha < 4/3 (its exponent's coefficient (4 - 3 alpha)/(8 s^2))
RAYLEIGH = sp.Max(sp.log(2 ** (2 * A / (A - 1)) / (3 * A + 1) ** (1 / (A - 1))),
                  sp.log(-1 / (4 ** (A - 1) * (3 * A - 4))) / (A - 1))
RAYLEIGH_FINITE = (A < 1) | ((A > 1) & ((3 * A - 4) / (8 * RAYLEIGH_S.symbol**2) < 0))


def _rayleigh_claim(end):
    return sp.Piecewise((-sp.log(4 ** (A - 1) * (4 - 3 * A)) / (A - 1), A < end), (sp.oo, True))


def test_an_order_range_bounded_by_the_finiteness_conditions_is_mapped_onto_all_positive_numbers():
    """The backward direction as a paper states it, finite for alpha < 4/3: over alpha = 1 + t its gap to the
    forward one has log(1 - 3t), no function of every t > 0, so the monotone route needs t = s/(3 (1 + s)),
    which the condition t < 1/3 allows where the divergence is finite. With its condition at 3/2 the claim is
    undefined, not +oo, for alpha in [4/3, 3/2): no proof; and the forward direction is not the Max."""
    from rdpsym.claims.prove import replay

    x = proof_context(_rayleigh_claim(sp.Rational(4, 3)), RAYLEIGH, "==", None, {}, (RAYLEIGH_S,), RAYLEIGH_FINITE,
                      (1, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and "where finite t < 1/3" in proof.text, proof
    assert any(s.rule == "range_mapped" for s in proof.steps)
    assert replay(proof.route, proof.steps, x).startswith("proved")
    for wrong in (_rayleigh_claim(sp.Rational(3, 2)),
                  sp.Piecewise((sp.log(2 ** (2 * A / (A - 1)) / (3 * A + 1) ** (1 / (A - 1))), A < sp.Rational(4, 3)),
                               (sp.oo, True))):
        assert _prove(wrong, RAYLEIGH, "==", None, {}, (RAYLEIGH_S,), RAYLEIGH_FINITE, (1, sp.oo), seconds=30) is None


def test_upper_end_reads_only_a_positive_multiple_of_one_falling_linear_factor():
    from rdpsym.claims.rewrite import range_mapped, upper_end

    t, s, sig = sp.symbols("t s sigma", positive=True)
    x = sp.Symbol("x", real=True)
    assert upper_end((1 - 3 * t) / (8 * sig**2), t) == sp.Rational(1, 3)
    for no_end in (3 * t - 1, x * (1 - 3 * t), (1 - 3 * t) * (2 - t), 1 - 3 * t**2):
        with pytest.raises(ValueError):
            upper_end(no_end, t)
    assert range_mapped(sp.log(1 - 3 * t), t, sp.Rational(1, 3), s) == -sp.log(s + 1)


def test_a_parameter_bounded_by_the_finiteness_conditions_is_mapped_too():
    """D_2 of Exp(1) against Exp(c), c > 1: log(1/(c (2 - c))) one way (finite for c < 2), log(c^2/(2c - 1))
    the other. Over c = 1 + c_s the first is the larger as c_s^3 (2 + c_s) >= 0 shows, but its log(1 - c_s)
    is no function of every c_s > 0: with c_s = s/(1 + s) it is. The smaller direction is not the Max."""
    rate = parameter("c", domain=sp.Interval.open(1, sp.oo), typical=(1.2, 5))
    c = rate.symbol
    truth = sp.Max(sp.log(1 / (c * (2 - c))), sp.log(c**2 / (2 * c - 1)))
    finite = (2 - c > 0) & (2 * c - 1 > 0)
    claim = sp.Piecewise((-sp.log(c * (2 - c)), c < 2), (sp.oo, True))
    proof = _prove(claim, truth, "==", 2, {}, (rate,), finite, (0, sp.oo), seconds=30)
    assert proof and "where finite c_s < 1" in proof, proof
    smaller = sp.Piecewise((sp.log(c**2 / (2 * c - 1)), c < 2), (sp.oo, True))
    assert _prove(smaller, truth, "==", 2, {}, (rate,), finite, (0, sp.oo), seconds=30) is None


def test_a_gap_polynomial_in_a_positive_parameter_is_signed_coefficient_by_coefficient():
    """A (t) sigma^2 + B(t) >= 0 for every sigma > 0 when A >= 0 and B >= 0: each coefficient is signed by the
    monotone route on its own; with t^2 taken from B, B is negative for large t, and there is no proof."""
    from rdpsym.claims.prove import _monotone_sign
    from rdpsym.claims.rewrite import Chain
    from rdpsym.claims.guard import HangGuards

    t, sig = sp.symbols("t sigma", positive=True)
    gap = (t - sp.log(1 + t)) * sig**2 + (sp.log(1 + t) - t / (1 + t))
    ch = Chain(HangGuards(), 30, memo={})
    text = _monotone_sign(ch, gap, 1, 3, None)
    assert text and "polynomial in the positive sigma" in text, text
    assert any(s.rule == "coefficients" for s in ch.steps)
    # B(t) - t^2: negative for large t, so the gap is negative at small sigma there
    assert _monotone_sign(Chain(HangGuards(), 30, memo={}), gap - t**2, 1, 3, None) is None


def test_a_condition_that_sets_no_end_leaves_no_step_the_replay_would_miss():
    """A finiteness condition of another form beside 4 - 3 alpha > 0 ((2 alpha - 1) s > 0): its upper_end
    raised, which left no step when proving, and the replay, running it, met the next stored step instead
    (found in a review: the proof was reported and its certificate failed to replay)."""
    from rdpsym.claims.prove import replay

    s = RAYLEIGH_S.symbol
    finite = (A < 1) | ((A > 1) & ((3 * A - 4) / (8 * s**2) < 0) & (2 * A * s - s > 0))
    x = proof_context(_rayleigh_claim(sp.Rational(4, 3)), RAYLEIGH, "==", None, {}, (RAYLEIGH_S,), finite, (1, sp.oo))
    proof, _ = prove(x, seconds=30)
    assert proof and "where finite t < 1/3" in proof.text, proof
    assert replay(proof.route, proof.steps, x).startswith("proved")


@pytest.mark.unit
def test_a_difference_shown_nonzero_at_a_point_of_the_assumptions_skips_the_vanishing_routes():
    """simplify(claim - divergence) spent most of the prover's time on differences that were not 0; a
    difference whose sign numerics are sure of at a point of the symbols' assumptions cannot simplify to 0,
    and one that is 0 (or undecided) is never called apart."""
    from rdpsym.claims.prove import _apart, _assumption_point

    a, b = sp.symbols("a b", positive=True)
    n = sp.Symbol("n", integer=True, negative=True)
    assert _apart(a**2, a) and _apart(sp.log(a * b), sp.log(a) + sp.log(b) + sp.Rational(1, 10**12))
    assert not _apart(sp.log(a * b), sp.log(a) + sp.log(b))  # equal: never apart
    assert not _apart(sp.exp(2 * sp.log(a)), a**2)
    assert not _apart(sp.sqrt(a**2), a)
    # the point satisfies every assumption: a negative integer is a negative integer
    point = _assumption_point({a, n}, 0)
    assert point[n].is_integer and point[n] < 0 and point[a] > 0
    # an assumption the point cannot meet (even): nothing is skipped
    e = sp.Symbol("e", even=True)
    assert _assumption_point({e}, 0) is None or all(v.is_even for v in _assumption_point({e}, 0).values())
    # a clearly complex difference is apart for simplify, not for exp (c - t = 2 pi i has exp(c) = exp(t))
    x = sp.Symbol("x", real=True)
    assert _apart(sp.log(-1 - x**2), sp.log(1 + x**2)) and not _apart(sp.log(-1 - x**2), sp.log(1 + x**2),
                                                                      complex_counts=False)
