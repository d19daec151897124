"""Densities with normalisers written as sums or integrals, and Bessel pmfs with negative orders.

* The discrete Gaussian (Canonne, Kamath and Steinke 2020, "The Discrete Gaussian for Differential
  Privacy", Def. 1) written with its normaliser as a ``Sum``: the numeric path against an
  independent mpmath computation (Jacobi theta normaliser, ``mpmath.nsum`` of the terms).
* The Skellam pmf ``exp(-2 mu) I_k(2 mu)`` (Agarwal, Kairouz and Liu 2021, "The Skellam Mechanism
  for Differentially Private Federated Learning", Sec. 3) written with ``besseli(k, 2 mu)`` on all
  of Z, on both backends (mpmath's own besseli fails from about k = -70 on).
* A continuous density with an ``Integral`` normaliser, exp(-x^4) / ∫ exp(-t^4) dt.
* The engine's density check with such normalisers: decided, or reported, never a crash.
"""

import mpmath as mp
import pytest
import sympy as sp

import rdpsym
from rdpsym.derive.checks import DensityError, check_densities
from rdpsym.derive.pieces import split_support
from rdpsym.derive.steplog import StepLog
from rdpsym.numeric import numeric_divergence

k, j = sp.symbols("k j", integer=True)
x, t = sp.symbols("x t", real=True)
s, mu, c = sp.symbols("s mu c", positive=True)
D = sp.Symbol("D", positive=True, integer=True)
DPS = 30
HALF = sp.Rational(1, 2)
ORDERS = [2, HALF, 1, 10]

Z = sp.Sum(sp.exp(-j ** 2 / (2 * s ** 2)), (j, -sp.oo, sp.oo))
DG_P = sp.exp(-k ** 2 / (2 * s ** 2)) / Z
DG_Q = sp.exp(-(k - D) ** 2 / (2 * s ** 2)) / Z


def _mp(v):
    return mp.mpf(v.p) / v.q if isinstance(v, sp.Rational) else mp.mpf(v)


def _renyi_sum(p, q, a):
    """D_a of two pmfs on Z (mpmath functions) by mpmath.nsum: KL at a = 1."""
    if a == 1:
        return mp.nsum(lambda n: p(n) * (mp.log(p(n)) - mp.log(q(n))), [-mp.inf, mp.inf])
    a = _mp(a)
    return mp.log(mp.nsum(lambda n: p(n) ** a * q(n) ** (1 - a), [-mp.inf, mp.inf])) / (a - 1)


def _check(r, ref, digits=25):
    assert r.converged, r.detail
    assert abs(r.value - ref) <= mp.mpf(10) ** -digits * max(1, abs(ref)), (r.value, ref, r.detail)
    assert r.error <= mp.mpf(10) ** -digits * max(1, abs(ref)), r.error


@pytest.mark.parametrize("sv", [1, HALF])
@pytest.mark.parametrize("a", ORDERS)
def test_discrete_gaussian_with_a_sum_normaliser(sv, a):
    """Normaliser from Jacobi's theta_3(0, e^{-1/(2 s^2)}) = sum_j e^{-j^2/(2 s^2)} (DLMF 20.2.3);
    before, sympy printed the Sum as range(-oo, oo) and every point raised a TypeError."""
    r = numeric_divergence(DG_P, DG_Q, k, sp.S.Integers, a, {"s": sv, "D": 1}, dps=DPS)
    assert "normaliser Sum" in r.detail, r.detail
    with mp.workdps(DPS + 20):
        sig = _mp(sv)
        theta = mp.jtheta(3, 0, mp.exp(-1 / (2 * sig ** 2)))
        ref = _renyi_sum(lambda n: mp.exp(-n ** 2 / (2 * sig ** 2)) / theta,
                         lambda n: mp.exp(-(n - 1) ** 2 / (2 * sig ** 2)) / theta, a)
        _check(r, ref)


def test_discrete_gaussian_max_divergence_is_infinite():
    """log P/Q = (D^2 - 2 k D) / (2 s^2) grows without bound as k -> -oo."""
    r = numeric_divergence(DG_P, DG_Q, k, sp.S.Integers, sp.oo, {"s": 1, "D": 1}, dps=DPS)
    assert r.value == mp.inf and r.converged, r.detail


SK_P = sp.exp(-2 * mu) * sp.besseli(k, 2 * mu)
SK_Q = sp.exp(-2 * mu) * sp.besseli(k - D, 2 * mu)


@pytest.mark.parametrize("backend", ["", "mpmath"])
@pytest.mark.parametrize("muv", [1, 3])
@pytest.mark.parametrize("a", ORDERS)
def test_skellam_with_besseli_of_a_negative_order(monkeypatch, backend, muv, a):
    """The reference writes I_|k| (I_{-n} = I_n for integer n, DLMF 10.27.1), the path is given I_k:
    before, Arb was not taught besseli and mpmath's besseli(-91, 2) raised, so the value was 0,
    'failed'."""
    monkeypatch.setenv("RDPSYM_NUMERIC_BACKEND", backend)
    r = numeric_divergence(SK_P, SK_Q, k, sp.S.Integers, a, {"mu": muv, "D": 1}, dps=DPS)
    if backend == "":
        pytest.importorskip("flint")
        assert r.evaluations.get("arb", 0) > 0 and r.evaluations["mpmath"] == 0, r.evaluations
    with mp.workdps(DPS + 20):
        m = mp.mpf(muv)
        pmf = lambda n: mp.exp(-2 * m) * mp.besseli(abs(n), 2 * m)  # noqa: E731
        _check(r, _renyi_sum(pmf, lambda n: pmf(n - 1), a))


def test_reflected_besseli_matches_the_power_series():
    """I_n(z) = sum_m (z/2)^(2m+n) / (m! (m+n)!) (DLMF 10.25.2) at n = 91, the value I_{-91}(2)
    must have."""
    from rdpsym.numeric.backends.mpmath import besseli

    with mp.workdps(50):
        # the terms fall faster than 1/(m!)^2: 60 of them are exact to far beyond 50 digits
        series = mp.fsum(1 / (mp.factorial(m) * mp.factorial(m + 91)) for m in range(60))
        assert abs(besseli(-91, 2) - series) <= mp.mpf(10) ** -45 * series


XI_Z = sp.Integral(sp.exp(-t ** 4), (t, -sp.oo, sp.oo))
XI_P = sp.exp(-x ** 4) / XI_Z
XI_Q = sp.exp(-(x - c) ** 4) / XI_Z


@pytest.mark.parametrize("a", [2, HALF, 1])
def test_integral_normaliser(a):
    """Reference normaliser 2 Gamma(5/4) (= ∫ e^{-t^4} dt), integral by mpmath.quad split around
    the peak of the integrand (near x = -3.7 at a = 2)."""
    r = numeric_divergence(XI_P, XI_Q, x, sp.S.Reals, a, {"c": 1}, dps=DPS)
    assert "normaliser Integral" in r.detail, r.detail
    with mp.workdps(DPS + 20):
        zn = 2 * mp.gamma(mp.mpf(5) / 4)
        p = lambda u: mp.exp(-u ** 4) / zn  # noqa: E731
        q = lambda u: mp.exp(-(u - 1) ** 4) / zn  # noqa: E731
        pts = [-mp.inf, -8, -5, -3, -2, -1, 0, 1, 2, mp.inf]
        if a == 1:
            ref = mp.quad(lambda u: p(u) * ((u - 1) ** 4 - u ** 4), pts)
        else:
            av = _mp(a)
            ref = mp.log(mp.quad(lambda u: p(u) ** av * q(u) ** (1 - av), pts)) / (av - 1)
        _check(r, ref)


def test_normaliser_inside_an_exponential_is_not_trusted():
    """A normaliser whose effect on log P depends on x (here inside exp(-x^2 / (2 N))) has no error
    bound: the value is reported, but not as converged."""
    N = sp.Integral(sp.exp(-t ** 2 / 2), (t, -sp.oo, sp.oo)) / sp.sqrt(2 * sp.pi)  # = 1
    P = sp.exp(-x ** 2 / (2 * N)) / sp.sqrt(2 * sp.pi)
    Q = sp.exp(-(x - 1) ** 2 / 2) / sp.sqrt(2 * sp.pi)
    r = numeric_divergence(P, Q, x, sp.S.Reals, 2, {}, dps=DPS)
    assert not r.converged and "not carried" in r.detail, r.detail
    with mp.workdps(DPS):
        assert abs(r.value - 1) < mp.mpf(10) ** -20  # the Gaussian's D_2 = alpha / 2


def test_a_divergent_normaliser_is_no_number():
    """sum 1/j diverges: no value, method 'failed' and the reason, never a finite D."""
    P = sp.exp(-k ** 2) / sp.Sum(1 / j, (j, 1, sp.oo))
    r = numeric_divergence(P, P, k, sp.S.Integers, 2, {}, dps=DPS)
    assert r.method == "failed" and not r.converged and r.error == mp.inf, r
    assert "normaliser" in r.detail


def test_normaliser_time_limit(monkeypatch):
    """A normaliser is evaluated under RDPSYM_STEP_SECONDS; an expired limit is a failure with the
    reason, and it is not remembered: the next call with time computes the value."""
    P = sp.exp(-k ** 2) / sp.Sum(1 / (j ** 2 + 7), (j, 1, sp.oo))
    monkeypatch.setenv("RDPSYM_STEP_SECONDS", "0.01")
    r = numeric_divergence(P, P, k, sp.Naturals0, 2, {}, dps=DPS)
    assert r.method == "failed" and "exceeded" in r.detail, r.detail
    monkeypatch.delenv("RDPSYM_STEP_SECONDS")
    r = numeric_divergence(P, P, k, sp.Naturals0, 2, {}, dps=DPS)
    assert r.converged and "normaliser Sum" in r.detail, r.detail


# ---------------------------------------------------------------------------------------------
# the engine's density check
# ---------------------------------------------------------------------------------------------
def _density_notes(P, Q, var, support):
    log = StepLog()
    syms = sorted((P.free_symbols | Q.free_symbols) - {var}, key=lambda u: u.name)
    pieces = split_support(P, Q, var, support)
    check_densities(P, Q, var, support, pieces, syms, None, 20, log)
    return {st.name: st.detail for st in log.steps}


def test_engine_discrete_gaussian_with_a_sum_normaliser():
    """Before: TypeError from the density check. Now the masses are decided structurally (Sum/Sum,
    and a translation by the integer D), and the engine ends honestly: numeric_only, D_inf = oo."""
    r = rdpsym.renyi_divergence(DG_P, DG_Q, k, sp.S.Integers, cache=False)
    assert r.status == rdpsym.Status.NUMERIC_ONLY and r.reason, r.reason
    assert r.max_divergence == sp.oo
    notes = {st.name: st.detail for st in r.provenance.steps}
    assert "symbolically: the normaliser is the sum of the numerator over the support" in notes["density P"]
    assert "translated by D (an integer)" in notes["density Q"], notes["density Q"]


def test_density_check_real_shift_of_the_discrete_gaussian_is_not_a_pmf():
    """With a real, non-integer D, Q = e^{-(k-D)^2/(2 s^2)} / sum_j e^{-j^2/(2 s^2)} sums to
    theta_3 shifted by D over theta_3, not 1: a DensityError naming Q and its mass, not a crash and
    not a pass."""
    Dr = sp.Symbol("D", positive=True)
    Q = DG_Q.subs(D, Dr)
    with pytest.raises(DensityError, match="Q: total mass"):
        _density_notes(DG_P, Q, k, sp.S.Integers)


def test_density_check_integral_normaliser_and_skellam():
    notes = _density_notes(XI_P, XI_Q, x, sp.S.Reals)
    assert "the normaliser is the integral of the numerator" in notes["density P"], notes
    assert "Q(x) = P(x - c) on the real line" in notes["density Q"], notes  # a shift of P: its sign and mass
    notes = _density_notes(SK_P, SK_Q, k, sp.S.Integers)
    assert "total mass 1 (by quadrature at typical parameters)" in notes["density Q"], notes


def test_density_check_numeric_mass_with_a_normaliser():
    """Not decided structurally (the numerator carries a factor 1/2 the normaliser lacks): the
    mass is then computed with the normaliser's value, and the missing half is found."""
    P = sp.exp(-k ** 2 / (2 * s ** 2)) / (2 * Z)
    with pytest.raises(DensityError, match="P: total mass 0.5"):
        _density_notes(P, P, k, sp.S.Integers)


def test_density_check_reports_an_unevaluable_normaliser():
    """A divergent normaliser: the mass is NOT CHECKED (with the reason), never passed."""
    P = sp.exp(-k ** 2) / sp.Sum(1 / j, (j, 1, sp.oo))
    notes = _density_notes(P, P, k, sp.S.Integers)
    assert "total mass NOT CHECKED" in notes["density P"] and "normaliser" in notes["density P"], notes
