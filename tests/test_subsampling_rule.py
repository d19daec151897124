"""The proof rule for subsampled mechanisms: an upper bound on the base's curve bounds the subsampled curve
(joint quasi-convexity, van Erven and Harremoës 2014, Thm. 13), with a certificate that replays.

Every ``proved`` here is checked against quadrature of the subsampled densities at points the check did not
use; every tampered certificate must fail to replay.
"""

from __future__ import annotations

import json

import mpmath
import pytest
import sympy as sp

from rdpsym import mechanisms
from rdpsym.claims import Certificate, CertificateError, Verdict, check_claim
from rdpsym.symbols import alpha as ALPHA

REPLAY_SECONDS = 10.0


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
    assert out.seconds <= REPLAY_SECONDS
    assert any("mixture of a base direction" in line for line in out.checked)
    assert any("the base's curve agrees with the independent numerics" in line for line in out.checked)


def _tampered(cert, edit) -> bool:
    data = json.loads(cert.to_json())
    edit(data)
    return Certificate.from_json(json.dumps(data)).check().holds


def test_tampering_with_a_proof_through_subsampling_is_detected(proved):
    cert = proved.certificate
    sigma = next(p.symbol for p in cert.parameters if p.name == "sigma")
    bigger = sp.srepr(ALPHA / sigma**2)

    def base_curve(d):  # another base curve: the proof's steps are no longer about it
        d["proof"]["base"]["divergence"] = bigger

    def rate(d):  # the mixtures are no longer of the stated rate
        q = next(p.symbol for p in cert.parameters if p.name == "q")
        d["proof"]["base"]["rate"] = sp.srepr(q / 2)

    def relation(d):
        d["relation"] = ">="

    def directions(d):  # a base direction that is not the base's: its pair no longer decomposes
        d["proof"]["base"]["directions"] = d["proof"]["base"]["directions"][:0] + [d["binding"][0]["directions"][0]]

    # (a changed claim fails every certificate's binding: tests/test_certificates.py)
    for edit in (base_curve, rate, relation, directions):
        assert not _tampered(cert, edit), edit.__name__


def test_a_proof_through_subsampling_must_carry_its_base(proved):
    data = json.loads(proved.certificate.to_json())
    del data["proof"]["base"]
    with pytest.raises(CertificateError, match="proof"):
        Certificate.from_json(json.dumps(data))


def test_a_bound_below_the_base_is_not_proved_by_the_rule():
    """q*alpha/(2 sigma^2) is below the base's curve, so the rule cannot apply; the claim is false (at large
    alpha the subsampled curve approaches alpha/(2 sigma^2) + log(q)) and the grid refutes it."""
    v = check_claim(mechanisms.get("subsampled_gaussian"), "q*alpha/(2*sigma**2)", "<=")
    assert v.verdict is Verdict.REFUTED
    assert any(line.startswith("no proof through subsampling") for line in v.evidence)
    cex = v.counterexample
    with mpmath.workdps(30):
        a, q, sigma = (mpmath.mpf(sp.Rational(x)) for x in (cex.alpha, cex.values["q"], cex.values["sigma"]))
        assert q * a / (2 * sigma**2) < _subsampled_gaussian_divergence(a, q, sigma)


def test_the_rule_speaks_only_of_upper_bounds():
    """A lower bound (or an equality) is never proved through subsampling: the rule is not even tried."""
    from rdpsym.claims.point import Claim
    from rdpsym.claims.subsampling import prove_through_subsampling
    from rdpsym.claims.target import make_target

    tgt = make_target(mechanisms.get("subsampled_gaussian"))
    sigma = next(p.symbol for p in tgt.parameters if p.name == "sigma")
    claim = Claim("expr", expr=ALPHA / (2 * sigma**2), used=("sigma",))
    for relation in (">=", "=="):
        assert prove_through_subsampling(tgt, claim, relation, None, {}, (1, sp.oo), 30, 50, 60.0) == ""
    assert isinstance(prove_through_subsampling(tgt, claim, "<=", None, {}, (1, sp.oo), 30, 50, 60.0), dict)
