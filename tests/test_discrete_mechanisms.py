"""The discrete built-ins (issue 17) against independent mpmath sums written here.

Each reference sums the pmfs directly (every integer shift |t| <= sensitivity, both directions: Mironov
2017, Def. 4), at 40 digits inside one ``mpmath.workdps`` block; the built-in's value comes from
``rdpsym.rdp(m).evaluate`` (the engine's exact pieces where derived, else the numeric path). k-ary
randomized response and the integer-shift families (discrete Gaussian, discrete Laplace, Skellam) follow
as their derivations get fast enough for the default run.
"""

import mpmath as mp
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

