"""Claims about one order: ``order=`` takes any positive rational order, not only 1 and oo.

The truth at one order a is the curve there (its removable limit, +oo where the finiteness conditions fail,
an exact integer order or the certified numeric value of a curve without a general form). Every value a
verdict rests on is recomputed here by mpmath quadrature of the densities, never read from rdpsym.
"""

from __future__ import annotations

import json
import math

import mpmath
import pytest
import sympy as sp
from click.testing import CliRunner

from rdpsym import mechanisms
from rdpsym.claims import Certificate, CertificateError, Verdict, check_claim
from rdpsym.claims.orders import order_from_key, order_key, order_value
from rdpsym.claims.target import make_target
from rdpsym.cli import main
from rdpsym.regress import RegistryError, build_target, default_registry, load_registry


# -- reading the option -----------------------------------------------------------------------------
@pytest.mark.unit
@pytest.mark.parametrize("given, want", [(2, sp.Integer(2)), ("5/2", sp.Rational(5, 2)), (sp.Rational(1, 3), sp.Rational(1, 3)),
                                         (0.5, sp.Rational(1, 2)), ("oo", sp.oo), (math.inf, sp.oo), (sp.oo, sp.oo),
                                         (1, sp.Integer(1)), (None, None)])
def test_order_is_read_exactly(given, want):
    assert order_value(given) == want


@pytest.mark.unit
@pytest.mark.parametrize("bad, rule", [(0, "alpha > 0"), (-2, "alpha > 0"), ("sqrt(2)", "not a rational"),
                                       (True, "positive rational"), ("alpha", "positive rational"),
                                       (math.nan, "positive rational"), ("__import__('os')", "positive rational")])
def test_a_bad_order_is_an_error_naming_it(bad, rule):
    with pytest.raises(ValueError, match=rule) as err:
        order_value(bad)
    assert str(err.value).startswith("order must be")


@pytest.mark.unit
@pytest.mark.parametrize("order", [None, sp.Integer(1), sp.oo, sp.Integer(2), sp.Rational(5, 2), sp.Rational(1, 1000)])
def test_certificate_order_keys_round_trip(order):
    assert order_from_key(order_key(order)) == order


@pytest.mark.unit
@pytest.mark.parametrize("text", ["2.5", "1e3", "0", "-1", "5/0", " 2", "2/", "Rational(5, 2)", 2, None])
def test_certificate_order_keys_are_read_strictly(text):
    with pytest.raises(ValueError, match="order"):
        order_from_key(text)


# -- verdicts at one order, against quadrature ---------------------------------------------------------
def _gaussian_divergence(a, sigma, delta):
    """D_a(N(delta, sigma^2) || N(0, sigma^2)) by quadrature of the densities."""
    def integrand(x):
        p = mpmath.npdf(x, delta, sigma)
        q = mpmath.npdf(x, 0, sigma)
        return p**a * q ** (1 - a)
    return mpmath.log(mpmath.quad(integrand, [-mpmath.inf, 0, delta, mpmath.inf])) / (a - 1)


def test_gaussian_at_orders_two_and_five_halves():
    g = mechanisms.get("gaussian")
    two = check_claim(g, "Delta**2/sigma**2", order=2, search=10)
    five_halves = check_claim(g, "5*Delta**2/(4*sigma**2)", order=sp.Rational(5, 2), search=10)
    assert two.verdict is five_halves.verdict is Verdict.PROVED
    assert "order 5/2" in five_halves.evidence[0]
    assert str(five_halves).startswith("PROVED: D_5/2 of gaussian")
    # the one order's value, never the curve's: the KL's and D_2's formulas are different claims
    assert check_claim(g, "Delta**2/sigma**2", order="5/2", search=10).verdict is Verdict.REFUTED


def test_a_refutation_at_one_order_is_at_that_order_and_true():
    v = check_claim(mechanisms.get("gaussian"), "Delta**2/sigma**2", "<=", order="5/2", search=10)
    assert v.verdict is Verdict.REFUTED
    cex = v.counterexample
    assert cex.alpha == sp.Rational(5, 2)
    with mpmath.workdps(30):
        sigma, delta = (mpmath.mpf(sp.Rational(cex.values[k])) for k in ("sigma", "sensitivity"))
        truth = _gaussian_divergence(mpmath.mpf(5) / 2, sigma, delta)
        assert mpmath.almosteq(cex.divergence, truth, rel_eps=mpmath.mpf(10) ** -20)
        assert delta**2 / sigma**2 < truth  # the claimed upper bound is below the divergence


def test_laplace_at_its_removable_order_one_half():
    """alpha = 1/2 is a removable singularity of Laplace's closed form: the truth is its limit."""
    claim = "-log((2*b + Delta)**2*exp(-Delta/b)/(4*b**2))"
    v = check_claim(mechanisms.get("laplace"), claim, order="1/2", search=10)
    assert v.verdict is Verdict.PROVED
    with mpmath.workdps(30):
        b, delta = mpmath.mpf(3) / 2, mpmath.mpf(5) / 4

        def root(x):
            return mpmath.sqrt(mpmath.exp(-abs(x - delta) / b) * mpmath.exp(-abs(x) / b)) / (2 * b)
        truth = -2 * mpmath.log(mpmath.quad(root, [-mpmath.inf, 0, delta, mpmath.inf]))
        formula = -mpmath.log((2 * b + delta) ** 2 * mpmath.exp(-delta / b) / (4 * b**2))
        assert mpmath.almosteq(formula, truth, rel_eps=mpmath.mpf(10) ** -25)


@pytest.fixture(scope="module")
def variances():
    """Two Gaussians of different variances: D_alpha is +oo where alpha sigma2^2 + (1 - alpha) sigma1^2 <= 0."""
    entry = next(e for e in load_registry(default_registry()) if e.name == "gaussian-variances/alpha")
    return make_target(build_target(entry))


def test_one_order_keeps_the_finiteness_conditions(variances):
    at_two = "log(sigma2/sigma1) + log(sigma2**2/(2*sigma2**2 - sigma1**2))/2"
    proved = check_claim(variances, at_two, order=2, search=10)
    assert proved.verdict is Verdict.PROVED
    assert "where the divergence is finite" in proved.evidence[0] or "finiteness" in proved.evidence[0]
    # a bound that is finite everywhere fails where D_2 = +oo (sigma1^2 >= 2 sigma2^2)
    bounded = check_claim(variances, "100", "<=", order=2, search=10)
    assert bounded.verdict is Verdict.REFUTED
    cex = bounded.counterexample
    s1, s2 = (sp.Rational(cex.values[k]) for k in ("sigma1", "sigma2"))
    assert s1**2 >= 2 * s2**2 and mpmath.isinf(cex.divergence)
    with mpmath.workdps(30):  # the integral diverges there: the integrand does not decay
        def integrand(x):
            return (mpmath.npdf(x, 0, s1) ** 2 / mpmath.npdf(x, 0, s2))
        assert integrand(mpmath.mpf(40) * s1) >= integrand(mpmath.mpf(20) * s1) > 0


def test_a_numeric_curve_at_one_order():
    """Subsampled randomized response has no general form: at order 5/2 its certified numeric value is the
    truth. q log(p/(1-p)) is below it somewhere (log is concave); the refutation is checked by exact sums."""
    from rdpsym import subsample
    from rdpsym.specify.params import parameter

    mech = subsample("randomized_response", parameter("q", domain=sp.Interval(0, 1), typical=(0.01, 0.5)))
    v = check_claim(mech, "q*log(p/(1-p))", "<=", order="5/2")
    assert v.verdict is Verdict.REFUTED
    cex = v.counterexample
    assert cex.alpha == sp.Rational(5, 2)
    with mpmath.workdps(30):
        a = mpmath.mpf(5) / 2
        q, p = (mpmath.mpf(sp.Rational(cex.values[k])) for k in ("q", "p"))
        P, Q = (p, 1 - p), (1 - p, p)
        M = tuple((1 - q) * u + q * w for u, w in zip(P, Q))  # the mixture with the other input's output

        def divergence(X, Y):
            return mpmath.log(mpmath.fsum(x**a * y ** (1 - a) for x, y in zip(X, Y))) / (a - 1)
        truth = max(divergence(M, P), divergence(P, M))
        assert q * mpmath.log(p / (1 - p)) < truth
        assert mpmath.almosteq(cex.divergence, truth, rel_eps=mpmath.mpf(10) ** -15)
    assert v.certificate.check().holds


def test_a_callable_gets_the_order_as_a_float():
    seen = []

    def bound(alpha, sigma):
        seen.append(alpha)
        return alpha / (2 * sigma**2)
    v = check_claim(mechanisms.get("gaussian"), bound, order="5/2", search=5)
    assert v.verdict is Verdict.CONFIRMED
    assert set(seen) == {2.5}


# -- certificates -----------------------------------------------------------------------------------
def test_a_certificate_at_one_order_replays_and_binds_its_order():
    v = check_claim(mechanisms.get("gaussian"), "Delta**2/sigma**2", order=2, search=10)
    data = json.loads(v.certificate.to_json())
    assert data["order"] == "2" and all(b["order"] == "2" for b in data["binding"])
    assert Certificate.from_json(v.certificate.to_json()).check().holds
    # another order everywhere: the stored D_2 no longer matches the densities' D_3
    data["order"] = "3"
    for b in data["binding"]:
        b["order"] = "3"
    out = Certificate.from_json(json.dumps(data)).check()
    assert not out.holds and "not the curve's value at the order 3" in out.reason
    data["order"] = "5/2.0"
    with pytest.raises(CertificateError, match="order"):
        Certificate.from_json(json.dumps(data))
    data["order"], data["binding"][0]["order"] = "2", "two"
    with pytest.raises(CertificateError, match=r"binding\[0\]\.order"):
        Certificate.from_json(json.dumps(data))


# -- the CLI and the registry ---------------------------------------------------------------------------
def test_cli_order_takes_any_rational_and_names_a_bad_one():
    runner = CliRunner()
    ok = runner.invoke(main, ["check", "gaussian", "--claim", "5*Delta**2/(4*sigma**2)", "--order", "5/2"])
    assert ok.exit_code == 0, ok.output
    assert "D_5/2 of gaussian" in ok.output
    bad = runner.invoke(main, ["check", "gaussian", "--claim", "1", "--order", "0"])
    assert bad.exit_code == 2 and "--order" in bad.output and "alpha > 0" in bad.output


@pytest.mark.unit
def test_registry_entries_take_one_order(tmp_path):
    entry = ('[[entry]]\nname = "g/2"\nmechanism = "gaussian"\norder = "{}"\nformula = "1/sigma**2"\n'
             'source = "test"\n')
    path = tmp_path / "r.toml"
    path.write_text(entry.format("2"))
    assert load_registry(path)[0].order == "2"
    path.write_text(entry.format("two"))
    with pytest.raises(RegistryError, match="'order' must be"):
        load_registry(path)


def _relabelled(cert, order: str) -> Certificate:
    data = json.loads(cert.to_json())
    data["order"] = order
    for b in data["binding"]:
        b["order"] = order
    return Certificate.from_json(json.dumps(data))


def test_an_order_changed_by_a_hair_does_not_replay():
    """D_2 and D_(2 + 1e-12) differ by 5e-13 (relative), below the binding's numeric tolerance: the order is
    tied to the divergence exactly (the curve it carries), or by the rule that exact pieces sit at integers."""
    nudged = "2000000000001/1000000000000"
    g = mechanisms.get("gaussian")
    proof = check_claim(g, "Delta**2/sigma**2", order=2, search=5).certificate
    assert proof.curve is not None
    refutation = check_claim(g, "2000000000001*Delta**2/(2000000000000*sigma**2)", order=2, search=5)
    assert refutation.verdict is Verdict.REFUTED
    for cert in (proof, refutation.certificate):
        out = _relabelled(cert, nudged).check()
        assert not out.holds and "curve's value" in out.reason, out.reason
    # Cauchy's D_2 is an exact piece of a curve without a general form: no curve to carry
    cauchy = check_claim(mechanisms.get("cauchy"), "log(1 + Delta**2/(2*gamma**2))", order=2, search=5).certificate
    assert cauchy.curve is None and cauchy.check().holds
    out = _relabelled(cauchy, nudged).check()
    assert not out.holds and "exact pieces" in out.reason


def test_a_one_order_proof_does_not_pass_for_the_curve():
    """A curve certificate is bound at two orders, so D_2's formula relabelled as the whole curve fails."""
    cert = check_claim(mechanisms.get("gaussian"), "Delta**2/sigma**2", order=2, search=5).certificate
    out = _relabelled(cert, "alpha").check()
    assert not out.holds and "fewer than two orders" in out.reason
    curve = check_claim(mechanisms.get("gaussian"), "alpha*Delta**2/(2*sigma**2)", search=5).certificate
    assert len({b["alpha"] for b in curve.binding}) == 2 and curve.check().holds


def test_a_callable_is_not_asked_about_an_order_beyond_floats():
    """float(10**400) is inf: the callable would answer about alpha = oo. The point has no value instead."""
    v = check_claim(mechanisms.get("gaussian"), lambda alpha, sigma: alpha / (2 * sigma**2), ">=", order=10**400,
                    search=5)
    assert v.verdict is Verdict.INCONCLUSIVE
