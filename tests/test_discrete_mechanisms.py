"""The discrete built-ins (issue 17) against independent mpmath sums written here.

Each reference sums the pmfs directly (every integer shift |t| <= sensitivity, both directions: Mironov
2017, Def. 4), at 40 digits inside one ``mpmath.workdps`` block; the built-in's value comes from
``rdpsym.rdp(m).evaluate`` (the engine's exact pieces where derived, else the numeric path). k-ary
randomized response is summed over all k outcomes, which also checks the three-point merging of
``rdpsym/mechanisms/k_randomized_response.py``. The discrete Laplace derivation (a closed form with a
symbolic sensitivity) takes about 20 s of CPU cold: ``slow``.
"""

import mpmath as mp
import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms

ALPHAS = [sp.Rational(1, 2), 1, 1 + sp.Rational(1, 10**6), 3, sp.Rational(15, 2), 100, sp.oo]
TOL = mp.mpf(10) ** -10


Z = None  #: sum over all the integers (mpmath.nsum)


def _renyi(p, q, a, ks, unbounded=False):
    """D_a(p||q) of pmfs p, q (functions of an integer) summed over ks (a list, or Z); ``unbounded``:
    log p/q is known unbounded above (then D_inf = oo)."""
    total = (lambda f: mp.fsum(f(k) for k in ks)) if ks is not Z else (lambda f: mp.nsum(f, [-mp.inf, mp.inf]))
    if a == sp.oo:
        if unbounded:
            return mp.inf
        pts = ks if ks is not Z else range(-400, 401)
        return max(mp.log(p(k) / q(k)) for k in pts if p(k) > 0)
    if a == 1:
        return total(lambda k: p(k) * mp.log(p(k) / q(k)) if p(k) > 0 else mp.mpf(0))
    a = mp.mpf(a.p) / a.q if isinstance(a, sp.Rational) else mp.mpf(a)
    return mp.log(total(lambda k: p(k) ** a * q(k) ** (1 - a))) / (a - 1)


def _check(name, values, reference, alphas=ALPHAS):
    r = rdpsym.rdp(mechanisms.get(name))
    with mp.workdps(40):
        for a in alphas:
            got = mp.mpf(r.evaluate(a, **values)) if a != sp.oo else r.evaluate(a, **values)
            ref = reference(a)
            if ref == mp.inf:
                assert got == float("inf"), (name, a, got)
                continue
            assert abs(got - ref) <= TOL * max(1, abs(ref)), (name, a, got, ref)


def _shifts(pmf, delta, a, unbounded=False):
    return max(_renyi(lambda k: pmf(k), lambda k: pmf(k - t), a, Z, unbounded) for t in range(-delta, delta + 1) if t)


def test_pure_dp():
    with mp.workdps(40):
        e = mp.mpf(1)
        P = [mp.exp(e) / (1 + mp.exp(e)), 1 / (1 + mp.exp(e))]
        ref = lambda a: max(_renyi(lambda k: P[k], lambda k: P[1 - k], a, [0, 1]),  # noqa: E731
                            _renyi(lambda k: P[1 - k], lambda k: P[k], a, [0, 1]))
        _check("pure_dp", {"epsilon": 1}, ref)



def test_k_randomized_response_over_all_k_outcomes():
    kk, e = 5, mp.mpf(1)
    with mp.workdps(40):
        n = mp.exp(e) + kk - 1
        P = [mp.exp(e) / n] + [1 / n] * (kk - 1)
        Q = [1 / n, mp.exp(e) / n] + [1 / n] * (kk - 2)
        _check("k_randomized_response", {"k": kk, "epsilon": 1},
               lambda a: max(_renyi(lambda i: P[i], lambda i: Q[i], a, list(range(kk))),
                             _renyi(lambda i: Q[i], lambda i: P[i], a, list(range(kk)))))


def test_discrete_gaussian_and_its_equality_condition():
    """Jacobi theta normaliser (DLMF 20.2.3); where (alpha - 1) Delta is an integer the value is the
    bound alpha Delta^2/(2 sigma^2) (Canonne, Kamath and Steinke 2020, Prop. 5) exactly, else below."""
    s, d = sp.Rational(3, 2), 2
    r = rdpsym.rdp(mechanisms.get("discrete_gaussian"))
    with mp.workdps(40):
        sig = mp.mpf(3) / 2
        theta = mp.jtheta(3, 0, mp.exp(-1 / (2 * sig**2)))
        pmf = lambda k: mp.exp(-k**2 / (2 * sig**2)) / theta  # noqa: E731
        # log P/Q = (t^2 - 2 k t)/(2 sigma^2): unbounded in k, D_inf = oo
        _check("discrete_gaussian", {"sigma": s, "sensitivity": d}, lambda a: _shifts(pmf, d, a, True))
        small = {"sigma": sp.Rational(1, 2), "sensitivity": 1}  # theta corrections visible at sigma = 1/2
        for a, equal in ((3, True), (sp.Rational(5, 2), False)):
            got = mp.mpf(r.evaluate(a, **small))
            bound = 2 * mp.mpf(sp.Rational(a).p) / sp.Rational(a).q  # alpha * 1/(2 (1/2)^2)
            assert (abs(got - bound) <= TOL) is equal, (a, got, bound)
            assert got <= bound + TOL


def test_skellam():
    r = rdpsym.rdp(mechanisms.get("skellam"))
    assert r.status is rdpsym.Status.NUMERIC_ONLY and r.reason
    with mp.workdps(40):
        mu = mp.mpf(3)
        pmf = lambda k: mp.exp(-2 * mu) * mp.besseli(abs(k), 2 * mu)  # noqa: E731 - I_{-k} = I_k
        # log I_k/I_{k-t} ~ t log(k/mu) as k -> oo (DLMF 10.41.1): unbounded
        _check("skellam", {"mu": 3, "sensitivity": 2}, lambda a: _shifts(pmf, 2, a, True))


@pytest.mark.slow
def test_discrete_laplace():
    """At alpha = 1/2 the closed form is 0/0 (its geometric sums' ratio is 1 there, as for the continuous
    Laplace, Mironov 2017, Prop. 6); the engine does not derive that limit yet, so the value there must
    be the reference or an ArithmeticError, never another number."""
    values = {"b": sp.Rational(3, 2), "sensitivity": 2}
    with mp.workdps(40):
        b = mp.mpf(3) / 2
        pmf = lambda k: mp.tanh(1 / (2 * b)) * mp.exp(-abs(k) / b)  # noqa: E731 - the normaliser as tanh
        _check("discrete_laplace", values, lambda a: _shifts(pmf, 2, a),
               alphas=[a for a in ALPHAS if a != sp.Rational(1, 2)] + [sp.Rational(1, 4)])
        r = rdpsym.rdp(mechanisms.get("discrete_laplace"))
        try:
            got = r.evaluate(sp.Rational(1, 2), **values)
        except ArithmeticError:
            return
        ref = _shifts(pmf, 2, sp.Rational(1, 2))
        assert abs(mp.mpf(got) - ref) <= TOL * max(1, abs(ref)), (got, ref)


def test_claims_see_every_integer_shift():
    """A claim about an integer-shift family whose supremum over t is not shown (Skellam) is checked
    against both directions at every integer |t| <= sensitivity at the point's values."""
    from rdpsym.claims.target import make_target

    tgt = make_target(mechanisms.get("skellam"))
    dirs = tgt.directions_at({"mu": 3, "sensitivity": 2})
    k = mechanisms.get("skellam").variable
    assert len(dirs) == 8  # t = -2, -1, 1, 2, both directions each
    orders = {Q.atoms(sp.besseli).pop().args[0] - k for _, Q, _, _ in dirs[::2]}  # I_{k - t}: -t
    assert orders == {-2, -1, 1, 2}, orders


def test_the_limit_checks_of_a_finite_pmf_evaluate_near_the_order_in_floats():
    """A five-outcome pmf (1 + t k)/(5 + 10 t) against its mirror: the general form near alpha = 1 and at
    alpha = 10^30 is compared with the direct KL and D_oo. With exact rationals for t, the KL's rational power
    of rationals sent sympy into perfect-power tests on huge integers that no time limit interrupts (220 s of
    a derivation, a held-out audit; the KL check ended undecided). At 130-digit floats both checks decide,
    and a wrong target is caught."""
    from rdpsym.derive.limits import numeric_limit_check
    from rdpsym.symbols import alpha as A

    t = sp.Symbol("t", positive=True)
    p = [(1 + t * k) / (5 + 10 * t) for k in range(5)]
    # the engine's form, at the engine's test points (typical values drawn as rationals of six digits)
    general = sp.log(sum(p[k] ** A * p[4 - k] ** (1 - A) for k in range(5)) ** (1 / (A - 1)))
    # the KL as the engine writes it: at t = 416020/930249 an exact rational to a rational power of six-digit
    # terms, which sympy tries to take as a perfect power
    kl = sp.log(((3 * t + 1) * (4 * t + 1) ** 2 / (t + 1)) ** (2 * t / (5 * (2 * t + 1))))
    assert sp.simplify(sp.expand_log(kl - sum(p[k] * sp.log(p[k] / p[4 - k]) for k in range(5)), force=True)) == 0
    d_oo = sp.log(1 + 4 * t)
    points = [{t: sp.Rational(416020, 930249)}, {t: sp.Rational(930249, 416020)}, {t: sp.Rational(1, 5)}]
    assert numeric_limit_check(general, sp.true, kl, sp.Integer(1), points) is True
    assert numeric_limit_check(general, sp.true, d_oo, sp.oo, points, "-") is True
    assert numeric_limit_check(general, sp.true, sp.log(1 + 3 * t), sp.oo, points, "-") is False
