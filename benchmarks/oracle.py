"""The numeric oracle on large orders, infinite lattices and extreme scales (issue 33, item 5).

Each case is a pair of densities or pmfs, an order and parameter values, with its truth computed here,
independently of rdpsym (a closed form from the literature, or an mpmath sum in log space over a range
that holds every term that matters, in one ``mpmath.workdps`` block). Every case is run through both
numeric methods, :func:`rdpsym.numeric_divergence` and verify's reference method
(:func:`rdpsym.numeric.reference.reference_divergence`), and each result is judged:

* ``ok``       converged, and within its stated error of the truth;
* ``refused``  not converged (no value claimed);
* ``WRONG``    converged, and outside its error: a silently wrong value (the target is none).

Closed forms used as truths (natural logs): Gaussian location pair ``alpha Delta^2 / (2 sigma^2)`` and
Laplace ``1/(alpha-1) log(alpha/(2 alpha - 1) e^{(alpha-1) Delta/b} + (alpha-1)/(2 alpha - 1) e^{-alpha Delta/b})``
(Mironov 2017, arXiv:1702.07476 v3, Props. 6, 7); Cauchy location pair at alpha = 2: ``log(1 + Delta^2/(2 g^2))``
(Chyzak and Nielsen 2019, arXiv:1905.10965: I_alpha = P_{alpha-1}(1 + Delta^2/(2 g^2)), P_1(z) = z); Poisson
pair ``(m (l/m)^alpha - alpha l - (1 - alpha) m)/(alpha - 1)`` for Pois(l) against Pois(m) (an exponential
family: the sum is the series of exp, van Erven and Harremoës 2014, Sec. II-E); geometric pair: the
geometric series. The others (negative binomial, discrete Gaussian, Skellam, discrete Laplace) are
summed term by term in log space.

    python benchmarks/oracle.py [--quick] [--dps N]

``--quick`` runs the cases the tests run too (a few seconds each).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import mpmath
import sympy as sp

# measure the checkout this file lives in: run as a script, sys.path starts with benchmarks/, not the root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rdpsym  # noqa: E402
from rdpsym.numeric import numeric_divergence  # noqa: E402
from rdpsym.numeric.reference import reference_divergence  # noqa: E402

x = sp.Symbol("x", real=True)
k = sp.Symbol("k", integer=True)
R = sp.Rational


@dataclass(frozen=True)
class Case:
    name: str
    P: sp.Expr
    Q: sp.Expr
    var: sp.Symbol
    support: sp.Set
    alpha: object
    truth: Callable[[], mpmath.mpf]  # called inside mpmath.workdps
    quick: bool = True


def _logsum(terms) -> mpmath.mpf:
    """log sum exp of the log-terms (an iterable of mpfs)."""
    terms = list(terms)
    m = max(terms)
    return m + mpmath.log(mpmath.fsum(mpmath.exp(t - m) for t in terms))


# -- the pairs --------------------------------------------------------------------------------------
def gauss(mu, s):
    return sp.exp(-(x - mu) ** 2 / (2 * s ** 2)) / sp.sqrt(2 * sp.pi * s ** 2)


def laplace(mu, b):
    return sp.exp(-sp.Abs(x - mu) / b) / (2 * b)


def cauchy(mu, g):
    return g / (sp.pi * (g ** 2 + (x - mu) ** 2))


def poisson(lam):
    return sp.exp(-lam) * lam ** k / sp.factorial(k)


def negbin(r, p, shift=0):
    j = k - shift
    return sp.Piecewise((sp.binomial(j + r - 1, j) * p ** r * (1 - p) ** j, j >= 0), (0, True))


def geometric(p):
    return p * (1 - p) ** k


def discrete_gaussian(s, mu=0):
    j = sp.Symbol("j", integer=True)
    return sp.exp(-(k - mu) ** 2 / (2 * s ** 2)) / sp.Sum(sp.exp(-j ** 2 / (2 * s ** 2)), (j, -sp.oo, sp.oo))


def skellam(mu, shift=0):
    return sp.exp(-2 * mu) * sp.besseli(k - shift, 2 * mu)


def discrete_laplace(t, mu=0):
    return (1 - sp.exp(-t)) / (1 + sp.exp(-t)) * sp.exp(-t * sp.Abs(k - mu))


# -- the truths -------------------------------------------------------------------------------------
def _mp(v):
    v = sp.Rational(v)
    return mpmath.mpf(int(v.p)) / int(v.q)


def gauss_truth(alpha, delta, s):
    return lambda: _mp(alpha) * _mp(delta) ** 2 / (2 * _mp(s) ** 2)


def laplace_truth(alpha, delta, b):
    def f():
        a, d, bb = _mp(alpha), _mp(delta), _mp(b)
        # log(A e^u + B e^v) with u = (a-1) d/b, v = -a d/b, in log space
        u, v = (a - 1) * d / bb, -a * d / bb
        A, B = a / (2 * a - 1), (a - 1) / (2 * a - 1)
        top = max(u, v)
        return (top + mpmath.log(A * mpmath.exp(u - top) + B * mpmath.exp(v - top))) / (a - 1)
    return f


def cauchy2_truth(delta, g):
    return lambda: mpmath.log1p(_mp(delta) ** 2 / (2 * _mp(g) ** 2))


def poisson_truth(alpha, l, m):
    def f():
        a, ll, mm = _mp(alpha), _mp(l), _mp(m)
        return (mm * mpmath.exp(a * mpmath.log(ll / mm)) - a * ll - (1 - a) * mm) / (a - 1)
    return f


def geometric_truth(alpha, p1, p2):
    def f():
        a, q1, q2 = _mp(alpha), 1 - _mp(p1), 1 - _mp(p2)
        c = a * mpmath.log(_mp(p1)) + (1 - a) * mpmath.log(_mp(p2))
        rho = a * mpmath.log(q1) + (1 - a) * mpmath.log(q2)  # log of the series' ratio
        if rho >= 0:  # the series diverges: P's tail outweighs Q's at this order
            return mpmath.inf
        return (c - mpmath.log(-mpmath.expm1(rho))) / (a - 1)
    return f


def lattice_truth(alpha, logp, logq, lo, hi):
    """1/(alpha-1) log sum_{k=lo}^{hi} exp(alpha log p(k) + (1 - alpha) log q(k)), in log space."""
    def f():
        a = _mp(alpha)
        return _logsum(a * logp(j) + (1 - a) * logq(j) for j in range(lo, hi + 1)
                       if logp(j) > -mpmath.inf) / (a - 1)
    return f


def _lnb(r, p, shift=0):
    rr, pp = _mp(r), _mp(p)

    def f(j):
        j = j - shift
        if j < 0:
            return -mpmath.inf
        return (mpmath.loggamma(j + rr) - mpmath.loggamma(j + 1) - mpmath.loggamma(rr) + rr * mpmath.log(pp)
                + j * mpmath.log(1 - pp))
    return f


def _ldg(s, mu=0):
    """log pmf of the discrete Gaussian; its normaliser summed once per precision (|i| <= 4000: the rest
    is below exp(-4000^2 / (2 s^2)))."""
    norms = {}

    def f(j):
        ss = _mp(s)
        if mpmath.mp.prec not in norms:
            norms[mpmath.mp.prec] = mpmath.log(mpmath.fsum(mpmath.exp(-mpmath.mpf(i) ** 2 / (2 * ss ** 2))
                                                           for i in range(-4000, 4001)))
        return -(j - mu) ** 2 / (2 * ss ** 2) - norms[mpmath.mp.prec]
    return f


def _lsk(mu, shift=0):
    m = _mp(mu)
    return lambda j: -2 * m + mpmath.log(mpmath.besseli(abs(j - shift), 2 * m))


def discrete_laplace_truth(alpha, t, delta):
    """Closed form by geometric series: P = c e^{-t|k|}, Q = c e^{-t|k-d|} (d >= 1), alpha > 1."""
    def f():
        a, tt, d = _mp(alpha), _mp(t), int(delta)
        c = (1 - mpmath.exp(-tt)) / (1 + mpmath.exp(-tt))
        # exponent of term k: -t (a|k| + (1-a)|k-d|); k <= 0: -t((1-2a)... sum each region in log space
        terms = []
        # k <= 0: -t(a(-k) + (1-a)(d-k)) = -t((1-a) d) + t k (a + 1 - a) -> t k
        e0 = -tt * (1 - a) * d
        terms.append(e0 - mpmath.log(-mpmath.expm1(-tt)))  # sum_{k<=0} e^{t k} = 1/(1 - e^-t)
        # 0 < k < d: -t(a k + (1-a)(d - k)) = -t((1-a) d + (2a - 1) k)
        for j in range(1, d):
            terms.append(-tt * ((1 - a) * d + (2 * a - 1) * j))
        # k >= d: -t(a k + (1-a)(k - d)) = -t(k - (1-a) d)... = -t k + t (1-a) d
        terms.append(tt * (1 - a) * d - tt * d - mpmath.log(-mpmath.expm1(-tt)))
        return (_logsum(terms) + mpmath.log(c)) / (a - 1)
    return f


def cases() -> list[Case]:
    lam = R(41, 4)
    out = [
        Case("Poisson: Pois(lam+1)||Pois(lam), lam=41/4, alpha=1000", poisson(lam + 1), poisson(lam), k,
             sp.S.Naturals0, 1000, poisson_truth(1000, lam + 1, lam)),
        Case("Poisson: Pois(lam)||Pois(lam+1), lam=41/4, alpha=1000", poisson(lam), poisson(lam + 1), k,
             sp.S.Naturals0, 1000, poisson_truth(1000, lam, lam + 1)),
        Case("Poisson: Pois(10001)||Pois(10000), alpha=50 (mode near 1e4)", poisson(10001), poisson(10000), k,
             sp.S.Naturals0, 50, poisson_truth(50, 10001, 10000)),
        Case("negative binomial shifted: NB(k-1)||NB(k), r=11/2, p=1/2, alpha=1000", negbin(R(11, 2), R(1, 2), 1),
             negbin(R(11, 2), R(1, 2)), k, sp.S.Naturals0, 1000,
             lattice_truth(1000, _lnb(R(11, 2), R(1, 2), 1), _lnb(R(11, 2), R(1, 2)), 0, 20000)),
        Case("geometric: Geom(1/2)||Geom(1/3), alpha=200", geometric(R(1, 2)), geometric(R(1, 3)), k,
             sp.S.Naturals0, 200, geometric_truth(200, R(1, 2), R(1, 3))),
        Case("geometric: Geom(1/3)||Geom(1/2), alpha=200 (infinite)", geometric(R(1, 3)), geometric(R(1, 2)), k,
             sp.S.Naturals0, 200, geometric_truth(200, R(1, 3), R(1, 2))),
        Case("discrete Gaussian sigma=3, Delta=1, alpha=1000", discrete_gaussian(3), discrete_gaussian(3, 1), k,
             sp.S.Integers, 1000, lattice_truth(1000, _ldg(3), _ldg(3, 1), -3000, 3000), quick=False),
        Case("Skellam mu=5, Delta=1, alpha=200", skellam(5), skellam(5, 1), k, sp.S.Integers, 200,
             lattice_truth(200, _lsk(5), _lsk(5, 1), -400, 400), quick=False),
        Case("discrete Laplace t=1/2, Delta=1, alpha=1e6", discrete_laplace(R(1, 2)), discrete_laplace(R(1, 2), 1), k,
             sp.S.Integers, 10 ** 6, discrete_laplace_truth(10 ** 6, R(1, 2), 1)),
        Case("Gaussian sigma=1e-20, Delta=1, alpha=2", gauss(0, R(1, 10 ** 20)), gauss(1, R(1, 10 ** 20)), x,
             sp.S.Reals, 2, gauss_truth(2, 1, R(1, 10 ** 20))),
        Case("Gaussian sigma=1e-30, Delta=1, alpha=1000", gauss(0, R(1, 10 ** 30)), gauss(1, R(1, 10 ** 30)), x,
             sp.S.Reals, 1000, gauss_truth(1000, 1, R(1, 10 ** 30))),
        Case("Gaussian sigma=1, Delta=1, alpha=1e300", gauss(0, 1), gauss(1, 1), x, sp.S.Reals, 10 ** 300,
             gauss_truth(10 ** 300, 1, 1)),
        Case("Gaussian sigma=1, Delta=1, alpha=1e600", gauss(0, 1), gauss(1, 1), x, sp.S.Reals, 10 ** 600,
             gauss_truth(10 ** 600, 1, 1), quick=False),
        Case("Laplace b=1e10, Delta=1, alpha=2", laplace(0, 10 ** 10), laplace(1, 10 ** 10), x, sp.S.Reals, 2,
             laplace_truth(2, 1, 10 ** 10)),
        Case("Laplace b=1e12, Delta=1, alpha=1e30", laplace(0, 10 ** 12), laplace(1, 10 ** 12), x, sp.S.Reals,
             10 ** 30, laplace_truth(10 ** 30, 1, 10 ** 12)),
        Case("Laplace b=1e300, Delta=1, alpha=2", laplace(0, 10 ** 300), laplace(1, 10 ** 300), x, sp.S.Reals, 2,
             laplace_truth(2, 1, 10 ** 300)),
        Case("Cauchy g=1e-50, Delta=1, alpha=2", cauchy(0, R(1, 10 ** 50)), cauchy(1, R(1, 10 ** 50)), x,
             sp.S.Reals, 2, cauchy2_truth(1, R(1, 10 ** 50))),
        Case("Cauchy g=1e300, Delta=1, alpha=2", cauchy(0, 10 ** 300), cauchy(1, 10 ** 300), x, sp.S.Reals, 2,
             cauchy2_truth(1, 10 ** 300)),
    ]
    return out


def verdict(r, truth) -> str:
    if not r.converged:
        return "refused"
    if truth == mpmath.inf:
        return "ok" if r.value == mpmath.inf else "WRONG"
    if r.value == mpmath.inf:
        return "WRONG"
    return "ok" if abs(r.value - truth) <= r.error else "WRONG"


def run(case: Case, method: str, dps: int):
    f = numeric_divergence if method == "numeric" else reference_divergence
    t0 = time.perf_counter()
    r = f(case.P, case.Q, case.var, case.support, case.alpha, {}, dps=dps)
    seconds = time.perf_counter() - t0
    with mpmath.workdps(dps + 40):
        truth = case.truth()
        return truth, r, verdict(r, truth), seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the cases the tests run")
    ap.add_argument("--dps", type=int, default=30)
    ap.add_argument("--method", choices=("numeric", "reference", "both"), default="both")
    args = ap.parse_args(argv)
    methods = ("numeric", "reference") if args.method == "both" else (args.method,)
    counts: dict[str, int] = {}
    print(f"rdpsym from {Path(rdpsym.__file__).parent}, dps={args.dps}")
    print(f"{'case':<68} {'method':<9} {'truth':>12} {'value':>12} {'error':>9} {'conv':>5} {'verdict':>8} {'s':>6}")
    for case in cases():
        if args.quick and not case.quick:
            continue
        for method in methods:
            truth, r, v, seconds = run(case, method, args.dps)
            counts[v] = counts.get(v, 0) + 1
            print(f"{case.name:<68} {method:<9} {mpmath.nstr(truth, 6):>12} {mpmath.nstr(r.value, 6):>12} "
                  f"{mpmath.nstr(r.error, 2):>9} {str(r.converged):>5} {v:>8} {seconds:6.1f}", flush=True)
            if v == "WRONG":
                print(f"    detail: {r.detail[:300]}")
    print("\n" + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    return 1 if counts.get("WRONG") else 0


if __name__ == "__main__":
    raise SystemExit(main())
