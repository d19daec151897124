"""Vector outputs and subsampling (issue 16): derivation and evaluation times, and agreement with mpmath.

    python benchmarks/vectors_and_subsampling.py

Each case is derived without the cache (``cache=False``; the one-dimensional parts a product reuses are
derived fresh too), then evaluated; the reference values are computed here with mpmath (2-D quadrature
for the bivariate Gaussians, 1-D quadrature of the mixtures for subsampling), independently of rdpsym.
"""

from __future__ import annotations

import time

import mpmath
import sympy as sp

import rdpsym
from rdpsym import subsample
from rdpsym.mechanisms.gaussian import gaussian
from rdpsym.mechanisms.laplace import laplace

x1, x2 = sp.symbols("x1 x2", real=True)


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def bivariate(s1, s2, rho, m1, m2):
    u1, u2 = (x1 - m1) / s1, (x2 - m2) / s2
    return sp.exp(-(u1**2 - 2 * rho * u1 * u2 + u2**2) / (2 * (1 - rho**2))) / (2 * sp.pi * s1 * s2 * sp.sqrt(1 - rho**2))


def quad2(P, Q, a, values):
    """D_a(P||Q) by mpmath 2-D quadrature (double exponential, 15 digits)."""
    f = sp.lambdify((x1, x2), (P**a * Q ** (1 - a)).subs(values), "mpmath")
    with mpmath.workdps(15):
        return mpmath.log(mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf], [-mpmath.inf, 0, mpmath.inf])) / (a - 1)


def row(name, derive_s, status, evals):
    print(f"{name:44s} derive {derive_s:6.2f} s  {status:12s}", end="")
    for a, value, reference, seconds in evals:
        rel = abs(value - reference) / abs(reference)
        print(f"  a={a}: {float(value):.6g} (rel {float(rel):.1e}, {seconds:.2f} s)", end="")
    print()


def main():
    d1, d2 = sp.symbols("d1 d2", real=True)
    rho = sp.Symbol("rho", real=True)
    s1, s2 = sp.symbols("s1 s2", positive=True)
    cases = [
        ("bivariate Gaussian, shared covariance, rho", bivariate(1, 1, rho, 0, 0), bivariate(1, 1, rho, d1, d2),
         {rho: sp.Rational(1, 2), d1: 1, d2: sp.Rational(-1, 2)}),
        ("bivariate Gaussian, different variances", bivariate(s1, s1, 0, 0, 0), bivariate(s2, s2, 0, d1, 0),
         {s1: 1, s2: sp.Rational(3, 2), d1: 1}),
        ("bivariate Gaussian, correlated, different", bivariate(s1, 1, rho, 0, 0), bivariate(s2, 1, rho, d1, 0),
         {s1: 1, s2: sp.Rational(5, 4), rho: sp.Rational(1, 3), d1: 1}),
    ]
    for name, P, Q, values in cases:
        r, seconds = timed(rdpsym.renyi_divergence, P, Q, (x1, x2), sp.S.Reals**2, cache=False)
        evals = []
        for a in (sp.Rational(1, 2), 2):
            v, es = timed(r.evaluate, a, dps=15, **{s.name: v for s, v in values.items()})
            evals.append((a, v, quad2(P, Q, a, values), es))
        row(name, seconds, str(r.status), evals)

    b1, b2, t1, t2 = sp.symbols("b1 b2 t1 t2", positive=True)
    lap = sp.exp(-sp.Abs(x1) / b1 - sp.Abs(x2) / b2) / (4 * b1 * b2)
    lap_shifted = sp.exp(-sp.Abs(x1 - t1) / b1 - sp.Abs(x2 - t2) / b2) / (4 * b1 * b2)
    r, seconds = timed(rdpsym.renyi_divergence, lap, lap_shifted, (x1, x2), sp.S.Reals**2, cache=False)
    one = rdpsym.rdp(laplace())
    evals = []
    for a in (sp.Rational(1, 2), 3):
        v, es = timed(r.evaluate, a, dps=30, b1=1, b2=2, t1=1, t2=1)
        ref = one.evaluate(a, dps=30, b=1, sensitivity=1) + one.evaluate(a, dps=30, b=2, sensitivity=1)
        evals.append((a, v, ref, es))
    row("Laplace x Laplace (product)", seconds, str(r.status), evals)

    q = sp.Symbol("q", positive=True)
    for name, base, density in (("subsample(laplace(), q)", laplace(), "laplace"), ("subsample(gaussian(), q)", gaussian(), "gaussian")):
        r, seconds = timed(rdpsym.rdp, subsample(base, q), cache=False)
        evals = []
        for a in (2, sp.Rational(5, 2), 10):
            v, es = timed(r.evaluate, a, dps=20, q=sp.Rational(1, 10), sensitivity=1,
                          **({"b": 1} if density == "laplace" else {"sigma": 1}))
            evals.append((a, v, mixture_truth(density, a, mpmath.mpf(1) / 10), es))
        row(name, seconds, str(r.status), evals)


def mixture_truth(density, a, q):
    """max over both mixtures and both directions, by 1-D mpmath quadrature split at 0 and 1."""
    with mpmath.workdps(30):
        a = mpmath.mpf(a.p) / a.q if isinstance(a, sp.Rational) else mpmath.mpf(a)
        if density == "laplace":
            P, Q = (lambda x: mpmath.exp(-abs(x)) / 2), (lambda x: mpmath.exp(-abs(x - 1)) / 2)
        else:
            P, Q = mpmath.npdf, (lambda x: mpmath.npdf(x, 1))
        out = []
        for X, Y in ((P, Q), (Q, P)):
            def M(x, X=X, Y=Y):
                return (1 - q) * X(x) + q * Y(x)
            for f, g in ((M, X), (X, M)):
                out.append(mpmath.log(mpmath.quad(lambda x: f(x) ** a * g(x) ** (1 - a), [-mpmath.inf, 0, 1, mpmath.inf])) / (a - 1))
        return max(out)


if __name__ == "__main__":
    main()
