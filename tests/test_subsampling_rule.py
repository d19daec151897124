"""The proof rule for subsampled mechanisms: an upper bound on the base's curve bounds the subsampled curve
(joint quasi-convexity, van Erven and Harremoës 2014, Thm. 13), with a certificate that replays.

Every ``proved`` here is checked against quadrature of the subsampled densities at points the check did not
use; every tampered certificate must fail to replay.
"""

from __future__ import annotations

import dataclasses
import json

import mpmath
import pytest
import sympy as sp

from rdpsym import mechanisms
from rdpsym.claims import Certificate, CertificateError, Verdict, check_claim


def _subsampled_gaussian_divergence(a, q, sigma):
    """The subsampled Gaussian's curve at order a by quadrature: the larger of D_a(M || N0) and D_a(N0 || M),
    M = (1 - q) N(0, sigma^2) + q N(1, sigma^2) (the other two directions are their mirror images)."""
    def p0(x):
        return mpmath.npdf(x, 0, sigma)

    def mix(x):
        return (1 - q) * p0(x) + q * mpmath.npdf(x, 1, sigma)

    def divergence(P, Q):
        return mpmath.log(mpmath.quad(lambda x: P(x) ** a * Q(x) ** (1 - a), [-mpmath.inf, 0, 1, mpmath.inf])) / (a - 1)
    return max(divergence(mix, p0), divergence(p0, mix))


@pytest.fixture(scope="module")
def proved():
    return check_claim(mechanisms.get("subsampled_gaussian"), "alpha/(2*sigma**2)", "<=")


@pytest.fixture(scope="module")
def subsampled_rr():
    """Randomized response run on a Poisson subsample at a rate q in [0, 1]: finite sums, fast to replay."""
    from rdpsym import subsample
    from rdpsym.specify.params import parameter

    return subsample("randomized_response", parameter("q", domain=sp.Interval(0, 1), typical=(0.01, 0.5)))


@pytest.fixture(scope="module")
def proved_rr(subsampled_rr):
    """log(p/(1-p)), the base's D_oo: proved through the base's D_oo (Mironov 2017, Prop. 9)."""
    return check_claim(subsampled_rr, "log(p/(1-p))", "<=")


def _rr_divergence(a, q, p):
    """The subsampled randomized response's curve at order a by exact sums over its two outcomes."""
    P, Q = (p, 1 - p), (1 - p, p)
    M = tuple((1 - q) * u + q * v for u, v in zip(P, Q))

    def divergence(X, Y):
        return mpmath.log(mpmath.fsum(x**a * y ** (1 - a) for x, y in zip(X, Y))) / (a - 1)
    return max(divergence(M, P), divergence(P, M))


def test_the_base_bound_is_proved_for_the_subsampled_gaussian(proved):
    assert proved.verdict is Verdict.PROVED
    assert "quasi-convexity" in proved.evidence[0] and "Thm. 13" in proved.evidence[0]
    # the verdict is true where the check never looked: quadrature of the densities
    with mpmath.workdps(30):
        for a, q, sigma in [(3, "0.9", "0.7"), (mpmath.mpf(7) / 3, "0.05", "2"), (40, "0.5", "3")]:
            q, sigma = mpmath.mpf(q), mpmath.mpf(sigma)
            assert _subsampled_gaussian_divergence(a, q, sigma) <= a / (2 * sigma**2)


def test_its_certificate_replays_without_a_search(proved):
    cert = Certificate.from_json(proved.certificate.to_json())
    out = cert.check()
    assert out.holds, out.reason
    assert any("mixture of a base direction" in line for line in out.checked)
    assert any("the base's curve agrees with the independent numerics" in line for line in out.checked)


def _tampered(cert, edit) -> bool:
    data = json.loads(cert.to_json())
    edit(data)
    return Certificate.from_json(json.dumps(data)).check().holds


def test_a_proof_through_the_base_d_oo_is_true_and_replays(proved_rr):
    assert proved_rr.verdict is Verdict.PROVED and proved_rr.certificate.data["base"]["route"] == "max_divergence"
    out = proved_rr.certificate.check()
    assert out.holds and any("the base's D_oo agrees" in line for line in out.checked), out.checked
    with mpmath.workdps(30):
        for a, q, p in [(2, "0.3", "0.9"), (mpmath.mpf(17) / 4, "0.99", "0.6"), (500, "0.5", "0.75")]:
            q, p = mpmath.mpf(q), mpmath.mpf(p)
            assert _rr_divergence(a, q, p) <= mpmath.log(p / (1 - p))


def test_tampering_with_a_proof_through_subsampling_is_detected(proved_rr):
    cert = proved_rr.certificate
    p = next(x.symbol for x in cert.parameters if x.name == "p")
    q = next(x.symbol for x in cert.parameters if x.name == "q")

    def base_curve(d):  # another base curve: its binding to the base's densities fails
        d["proof"]["base"]["divergence"] = sp.srepr(2 * sp.log(p / (1 - p)))

    def base_d_oo(d):  # another base D_oo: the proof's steps are no longer about it
        d["proof"]["base"]["max_divergence"] = sp.srepr(2 * sp.log(p / (1 - p)))

    def rate(d):  # the mixtures are no longer of the stated rate
        d["proof"]["base"]["rate"] = sp.srepr(q / 2)

    def relation(d):
        d["relation"] = ">="

    def directions(d):  # a direction that is not the base's: the base binding and the mixtures fail
        d["proof"]["base"]["directions"] = [d["binding"][0]["directions"][0]]

    def no_d_oo_point(d):  # the base's D_oo is used, so it must be bound
        d["proof"]["base"]["points"] = d["proof"]["base"]["points"][:1]

    # (a changed claim fails every certificate's binding: tests/test_certificates.py)
    for edit in (base_curve, base_d_oo, rate, relation, directions, no_d_oo_point):
        assert not _tampered(cert, edit), edit.__name__


def test_a_proof_through_subsampling_must_carry_its_base(proved_rr):
    data = json.loads(proved_rr.certificate.to_json())
    del data["proof"]["base"]
    with pytest.raises(CertificateError, match="proof"):
        Certificate.from_json(json.dumps(data))


def test_a_bound_below_the_base_is_not_proved_by_the_rule(subsampled_rr):
    """q log(p/(1-p)) is below the base's curve, so the rule cannot apply; the claim is false (log is
    concave: D_oo = log(1 - q + q p/(1-p)) >= q log(p/(1-p))) and the grid refutes it."""
    v = check_claim(subsampled_rr, "q*log(p/(1-p))", "<=")
    assert v.verdict is Verdict.REFUTED
    assert any(line.startswith("no proof through subsampling") for line in v.evidence)
    cex = v.counterexample
    with mpmath.workdps(30):
        a, q, p = (mpmath.mpf(sp.Rational(x)) for x in (cex.alpha, cex.values["q"], cex.values["p"]))
        assert q * mpmath.log(p / (1 - p)) < _rr_divergence(a, q, p)


def test_the_rule_speaks_only_of_upper_bounds(subsampled_rr):
    """A lower bound (or an equality) is never proved through subsampling: the rule is not even tried."""
    from rdpsym.claims.point import Claim
    from rdpsym.claims.subsampling import prove_through_subsampling
    from rdpsym.claims.target import make_target

    tgt = make_target(subsampled_rr)
    p = next(x.symbol for x in tgt.parameters if x.name == "p")
    claim = Claim("expr", expr=sp.log(p / (1 - p)), used=("p",))
    for relation in (">=", "=="):
        assert prove_through_subsampling(tgt, claim, relation, None, {}, (1, sp.oo), 30, 50, 60.0) == ""
    assert isinstance(prove_through_subsampling(tgt, claim, "<=", None, {}, (1, sp.oo), 30, 50, 60.0), dict)


def test_a_claim_that_jumps_at_a_closed_end_is_not_proved(subsampled_rr):
    """sign(1 - q) is 1 for q < 1 and 0 at q = 1, where the subsampled curve is the base's (D_2 = 0.847 at
    p = 3/4): the claim is false there, and the proof's substitution q = 1/(1 + q_s) never reaches q = 1."""
    from rdpsym.claims.point import Claim
    from rdpsym.claims.subsampling import prove_through_subsampling
    from rdpsym.claims.target import make_target

    tgt = make_target(subsampled_rr)
    p, q = (next(x.symbol for x in tgt.parameters if x.name == n) for n in ("p", "q"))
    jumps = Claim("expr", expr=sp.log(p / (1 - p)) * sp.sign(1 - q), used=("p", "q"))
    found = prove_through_subsampling(tgt, jumps, "<=", None, {}, (1, sp.oo), 30, 50, 60.0)
    assert isinstance(found, str) and found.startswith("no proof through subsampling")
    with mpmath.workdps(30):
        assert _rr_divergence(2, mpmath.mpf(1), mpmath.mpf(3) / 4) > 0  # the claim's value at q = 1


def test_a_claim_that_jumps_at_a_closed_end_is_refuted_there(subsampled_rr):
    """The grid of a claim that may jump holds the closed ends of the domains: sign(1 - q) is refuted at
    q = 1, where the claim is 0 and the divergence is the base's (exact sums, computed here)."""
    v = check_claim(subsampled_rr, "log(p/(1-p))*sign(1-q)", "<=", fixed={"p": sp.Rational(3, 4)})
    assert v.verdict is Verdict.REFUTED
    ce = v.counterexample
    assert ce.values["q"] == 1
    with mpmath.workdps(30):
        a = mpmath.mpf(sp.Rational(ce.alpha).p) / sp.Rational(ce.alpha).q
        assert _rr_divergence(a, mpmath.mpf(1), mpmath.mpf(3) / 4) > 0


def test_the_rate_and_the_base_are_checked_on_replay(proved_rr, subsampled_rr):
    cert = proved_rr.certificate
    assert len({p["alpha"] for p in cert.data["base"]["points"] if p["alpha"] != sp.oo}) == 2

    def wider_rate(d):  # a "mixture" weight above 1 is no mixture: quasi-convexity says nothing
        for p in d["parameters"]:
            if p["name"] == "q":
                p["domain"] = sp.srepr(sp.Interval(0, 2))

    def one_base_order(d):  # at one order, the base's value there could pass for its curve
        d["proof"]["base"]["points"] = [p for p in d["proof"]["base"]["points"] if "Infinity" in p["alpha"]] + \
            [p for p in d["proof"]["base"]["points"] if "Infinity" not in p["alpha"]][:1]

    for edit in (wider_rate, one_base_order):
        assert not _tampered(cert, edit), edit.__name__
    # a certificate about another base is not replayed for this mechanism
    other = dataclasses.replace(cert, data={**cert.data, "base": {**cert.data["base"], "max_divergence": sp.Integer(7)}})
    v = check_claim(subsampled_rr, "log(p/(1-p))", "<=", replay=other)
    assert any("base D_oo differs" in line for line in v.evidence)


def test_the_subsampled_laplace_d_oo_is_proved_below_the_base_through_exp():
    """D_oo of the subsampled Laplace is log(q e^(1/b) + 1 - q) <= 1/b (the route through exp); the
    certificate replays, and a forged rewrite step does not. The truth by the densities' ratio: the sup of
    log((1 - q) + q e^(-|x - 1|/b + |x|/b)) is at x >= 1, where the exponent is 1/b."""
    v = check_claim(mechanisms.subsampled_laplace(), "1/b", "<=", order=sp.oo)
    assert v.verdict is Verdict.PROVED and v.certificate.data["route"] == "exp_sign"
    assert v.certificate.check().holds

    def forged_gap(d):
        d["proof"]["steps"][1]["output"] = sp.srepr(sp.Integer(1))

    assert not _tampered(v.certificate, forged_gap)
    with mpmath.workdps(30):
        q, b = mpmath.mpf("0.3"), mpmath.mpf("0.7")
        sup = max(mpmath.log((1 - q) + q * mpmath.exp((-abs(x - 1) + abs(x)) / b)) for x in mpmath.linspace(-3, 3, 61))
        assert sup <= 1 / b and mpmath.almosteq(sup, mpmath.log((1 - q) + q * mpmath.exp(1 / b)), 1e-25)
