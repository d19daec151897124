"""The accountant's float curve for sums with no closed form (rdpsym.accounting.sum_curve): the discrete
Gaussian (theta sums) and the Skellam mechanism (Bessel sums), checked against mpmath sums of the pmfs
written here, and its refusals (+inf, never a wrong finite number)."""

import math

import mpmath
import numpy as np
import sympy as sp
from click.testing import CliRunner

import rdpsym
from rdpsym.accounting.accountant import Accountant
from rdpsym.accounting.curves import mechanism_curve
from rdpsym.accounting.sum_curve import log_sum
from rdpsym.accounting.sum_forms import log_besseli_table
from rdpsym.cli import main


def _renyi(pmf, shifts, a, ks):
    """max over shifts t and both directions of log(sum_k P(k)^a P(k - t)^(1 - a)) / (a - 1), mpmath."""
    a = mpmath.mpf(a)
    best = mpmath.mpf(0)
    for t in shifts:
        for first, second in ((0, t), (t, 0)):
            s = mpmath.fsum(pmf(k - first) ** a * pmf(k - second) ** (1 - a) for k in ks)
            best = max(best, mpmath.log(s) / (a - 1))
    return best


def _memo(f):
    values = {}
    return lambda k: values[k] if k in values else values.setdefault(k, f(k))


def _dg_pmf(sigma):
    # the theta normaliser: terms past |j| = 60 sigma are below exp(-1800) of the largest
    n = int(60 * sigma) + 10
    z = mpmath.fsum(mpmath.exp(-mpmath.mpf(j) ** 2 / (2 * mpmath.mpf(sigma) ** 2)) for j in range(-n, n + 1))
    return _memo(lambda k: mpmath.exp(-mpmath.mpf(k) ** 2 / (2 * mpmath.mpf(sigma) ** 2)) / z)


def _skellam_pmf(mu):
    return _memo(lambda k: mpmath.exp(-2 * mpmath.mpf(mu)) * mpmath.besseli(abs(k), 2 * mpmath.mpf(mu)))


def test_discrete_gaussian_epsilon_agrees_with_mpmath():
    """sigma = 2, sensitivity 1, 100 compositions, delta = 1e-5: the accountant's epsilon is finite and
    is the CKS20 Prop. 12 conversion of 100 D_alpha at its optimal order, D_alpha summed here."""
    r = Accountant().add("discrete_gaussian", count=100, sigma=2).epsilon(1e-5)
    assert r.status == "optimal" and math.isfinite(r.value) and r.alpha is not None
    with mpmath.workdps(40):
        pmf = _dg_pmf(2)
        ks = range(-120, 121)  # the tilted terms peak at k = 1 - alpha (|k| <= 2 here): 120 is 60 sigma away

        def objective(a):
            a = mpmath.mpf(a)
            rdp = 100 * _renyi(pmf, (1,), a, ks)
            return rdp, rdp + mpmath.log1p(-1 / a) - (mpmath.log(mpmath.mpf("1e-5")) + mpmath.log(a)) / (a - 1)

        rdp, eps = objective(r.alpha)
        assert abs(r.rdp_at_alpha - rdp) <= 1e-10 * rdp
        assert abs(r.value - eps) <= 1e-10 * eps
        assert r.value >= eps * (1 - 1e-15)  # the float curve is rounded outward: never below
        # the order found is the optimum of the mpmath objective (to the scan's resolution)
        assert all(objective(r.alpha * f)[1] >= eps - 1e-9 for f in (0.99, 1.01))


def test_float_curve_agrees_with_mpmath_sums():
    """A theta sum far from the Gaussian's (sigma = 0.7, sensitivity 2: every integer shift |t| <= 2) and
    a Bessel sum (mu = 3, sensitivity 1), at several orders, to 1e-10 relative and never below."""
    dg, sk = mechanism_curve("discrete_gaussian"), mechanism_curve("skellam")
    assert dg.provenance == sk.provenance == "numeric sum" and "2^-57" in dg.detail
    orders = [0.5, 1.5, 3.0, 7.25, 40.0]
    got_dg = dg(np.array(orders), sigma=0.7, sensitivity=2)
    got_sk = sk(np.array(orders), mu=3, sensitivity=1)
    with mpmath.workdps(40):
        dg_pmf, sk_pmf = _dg_pmf(0.7), _skellam_pmf(3)
        for a, g_dg, g_sk in zip(orders, got_dg, got_sk):
            # the tilted terms peak near k = (1 - alpha) t (|k| <= 78 here), with width ~ sigma: 200 is far past it
            want_dg = _renyi(dg_pmf, (1, 2), a, range(-200, 201))
            # Skellam: the tilted peak sits where m log(m / mu) ~ alpha (|k| < 20 here); at |k| = 150 a term
            # is below I_150(6) (150/3)^40 / I_0(6) < 1e-100
            want_sk = _renyi(sk_pmf, (-1, 1), a, range(-150, 151))
            for got, want in ((g_dg, want_dg), (g_sk, want_sk)):
                assert abs(got - want) <= 1e-10 * want, (a, got, want)
                assert got >= want * (1 - 1e-15), (a, got, want)


def test_float_curve_agrees_with_the_certified_engine_curve():
    """The engine's certified numeric curve (rdp(...).evaluate_with_error, worst pairs and both
    directions) at two orders."""
    m = rdpsym.mechanisms.get("discrete_gaussian")
    result = rdpsym.rdp(m)
    curve = mechanism_curve(m)
    for a in (2.5, 9.0):
        want = result.evaluate_with_error(mpmath.mpf(a), dps=20, sigma=1, sensitivity=1).value
        got = float(curve(a, sigma=1, sensitivity=1))
        assert abs(got - float(want)) <= 1e-10 * float(want)


def test_no_claim_where_it_cannot_evaluate():
    """alpha = 1 (no float KL here), alpha = oo, NaN orders, a window past its limit (sigma = 1e5) and
    orders past the Bessel window (Skellam at alpha = 1e8) are +inf, never a finite number."""
    dg, sk = mechanism_curve("discrete_gaussian"), mechanism_curve("skellam")
    assert np.all(np.isposinf(dg(np.array([1.0, np.inf, np.nan]), sigma=2, sensitivity=1)))
    assert np.isposinf(dg(2.0, sigma=1e5, sensitivity=1))
    assert np.isposinf(sk(1e8, mu=10, sensitivity=1))
    assert np.isposinf(sk(1.0, mu=10, sensitivity=1))
    # a divergent sum (c2 > 0), or one with no decay proved (c2 = c1 = 0), has no claim
    one = np.ones(1)
    for c1, c2 in ((0.0, 0.1), (0.0, 0.0)):
        lo, hi = log_sum([0 * one, c1 * one, c2 * one], [], None, 0 * one)
        assert np.isposinf(hi[0])


def test_no_worst_pair_is_no_claim(monkeypatch):
    """An event whose worst pairs come back empty has no claim (+inf): a maximum over no pairs is not 0."""
    from rdpsym.derive import mechanism_rdp

    monkeypatch.setattr(mechanism_rdp, "worst_directions", lambda mechanism, values: ())
    dg = mechanism_curve("discrete_gaussian")
    assert np.all(np.isposinf(dg(np.array([1.5, 2.0, 40.0]), sigma=2.375, sensitivity=1)))


def test_log_besseli_table_against_mpmath():
    with mpmath.workdps(30):
        for x in (0.5, 20.0, 3000.0):
            table, err = log_besseli_table(x, 6000)
            for n in (0, 1, 7, 300, 6000):
                want = mpmath.log(mpmath.besseli(n, x))
                assert abs(table[n] - want) <= err[n] + 1e-300, (x, n)
                assert abs(table[n] - want) <= 1e-12 * max(1, abs(want)), (x, n)


def test_curve_is_read_off_the_pmfs_not_the_name():
    """A mechanism of another name with the discrete Gaussian's pmfs written as a Sum-normalised theta
    gets the same curve; groups of 2 are Mironov's Prop. 2 bound around it, labelled a bound."""
    dg = rdpsym.mechanisms.get("discrete_gaussian")
    k, j = sp.Symbol("k", integer=True), sp.Symbol("j", integer=True)
    s, d = (p.symbol for p in dg.parameters)
    t = dg.pairs[0].shift
    z = sp.Sum(sp.exp(-j**2 / (2 * s**2)), (j, -sp.oo, sp.oo))
    pair = type(dg.pairs[0])(sp.exp(-k**2 / (2 * s**2)) / z, sp.exp(-(k - t)**2 / (2 * s**2)) / z, shift=t,
                             over=sp.Interval(-d, d), label="shift t")
    other = rdpsym.Mechanism(name="my_theta_noise", title="theta", variable=k, support=sp.S.Integers, pairs=(pair,),
                             parameters=dg.parameters, description="theta noise", references=("test",))
    a = np.array([1.5, 4.0])
    assert np.allclose(mechanism_curve(other)(a, sigma=0.8, sensitivity=1),
                       mechanism_curve(dg)(a, sigma=0.8, sensitivity=1), rtol=1e-13, atol=0)
    group = mechanism_curve(dg, group=2)
    assert group.provenance == "bound" and "Prop. 2" in group.detail
    assert math.isfinite(group(2.0, sigma=2, sensitivity=1))


def test_cli_account_discrete_gaussian():
    out = CliRunner().invoke(main, ["account", "--add", "discrete_gaussian:sigma=2", "--delta", "1e-5"])
    assert out.exit_code == 0, out.output
    want = Accountant().add("discrete_gaussian", sigma=2).epsilon(1e-5)
    assert math.isfinite(want.value) and f"epsilon = {want.value:.6g}" in out.output
    assert "numeric sum" in out.output
