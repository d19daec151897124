"""Throughput of rdpsym.numeric.numeric_divergence: points per second at 30 and 50 digits.

Run: python benchmarks/verify_numeric.py [--n N] [--backend mpmath]
mpmath uses gmpy2 as its backend when gmpy2 is installed (unless MPMATH_NOGMPY is set); the backend
in use is printed. Each point is a full call (parse, evaluation(s), error estimate). Points per
CPU-second is the fairer figure on a shared machine; evaluations per point (log-density pairs and
integrand values, ``NumericValue.evaluations``) do not depend on the load at all.
"""

from __future__ import annotations

import argparse
import os
import time

import mpmath
import sympy as sp

from rdpsym.numeric import fast, numeric_divergence

x = sp.Symbol("x", real=True)
sigma, b = sp.symbols("sigma b", positive=True)

CASES = {
    "gaussian": (sp.exp(-x**2 / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2),
                 sp.exp(-(x - 1) ** 2 / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2),
                 sp.S.Reals, sigma),
    "laplace": (sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - 1) / b) / (2 * b), sp.S.Reals, b),
    "discrete laplace": ((1 - sp.exp(-1 / b)) / (1 + sp.exp(-1 / b)) * sp.exp(-sp.Abs(x) / b),
                         (1 - sp.exp(-1 / b)) / (1 + sp.exp(-1 / b)) * sp.exp(-sp.Abs(x - 1) / b),
                         sp.S.Integers, b),
}
ALPHAS = [sp.Rational(3, 2), 2, 5, 32, sp.Rational(1, 2)]
SCALES = [sp.Rational(1, 2), 1, 3]


def bench(name, dps, n):
    P, Q, sup, par = CASES[name]
    pts = [(a, s) for a in ALPHAS for s in SCALES][:n]
    numeric_divergence(P, Q, x, sup, 3, {par: 2}, dps=dps)  # warm-up: mpmath caches quadrature nodes
    work = 0
    t0, c0 = time.perf_counter(), time.process_time()
    bad = 0
    for a, s in pts:
        r = numeric_divergence(P, Q, x, sup, a, {par: s}, dps=dps)
        bad += not r.converged
        work += sum(r.evaluations.values())
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    return len(pts) / dt, len(pts) / dc, bad, work / len(pts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--backend", choices=("arb", "mpmath"), default="arb",
                    help="numeric path: Arb with mpmath fallback (default) or mpmath only")
    args = ap.parse_args()
    if args.backend == "mpmath":
        os.environ["RDPSYM_NUMERIC_BACKEND"] = "mpmath"
    print(f"mpmath {mpmath.__version__}, backend {mpmath.libmp.BACKEND}, "
          f"numeric path: {'Arb (python-flint) + mpmath' if fast.available() else 'mpmath only'}")
    for name in CASES:
        for dps in (30, 50):
            rate, cpu_rate, bad, evals = bench(name, dps, args.n)
            print(f"{name:18s} dps={dps}: {rate:7.2f} points/s wall, {cpu_rate:7.2f} points per CPU-second, "
                  f"{evals:6.0f} evaluations/point  (not converged: {bad})")


if __name__ == "__main__":
    main()
