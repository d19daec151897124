"""Throughput of rdpsym.verify: verified parameter points per second, at 30 and 50 digits.

Run:  python benchmarks/verify.py [--n N] [--compare-backends]

Pairs (sensitivity 1, one core, one direction each):
* Gaussian N(0, sigma^2) vs N(1, sigma^2)      smooth       closed form derived by the engine
* Laplace(0, b) vs Laplace(1, b)               kinked       closed form derived by the engine
* discrete Laplace on the integers             discrete     the closed form below (a claim to check)

The discrete Laplace pmf c e^{-|k|/b}, c = (1 - r)/(1 + r), r = e^{-1/b}: summing
c^alpha... over k <= 0 and k >= 1 as geometric series gives (the same steps as Mironov 2017,
arXiv:1702.07476 v3, Prop. 6, with sums instead of integrals)

    I_alpha = (e^{(alpha-1)/b} + e^{-alpha/b}) / (1 + e^{-1/b}),   D_alpha = log(I_alpha)/(alpha - 1),

and the engine derives only its alpha = 1 and alpha = oo values; verify() checks the claim here too
(a mismatch is reported, never hidden).

A "point" is one verify() point: the closed form and the numeric divergence (with its two-rule
error estimate, see rdpsym.numeric) compared inside one precision context. Target: >= 50 points/s
at 30 digits for the 1-D continuous pairs on one core: verify() runs with ``executor="serial"``.

Printed per pair and precision: points per second (wall clock; the machine is shared, so also)
points per CPU-second, and the load-independent work per point: log-density / integrand
evaluations (``arb`` outside the quadrature, ``quad`` Arb Gauss-Legendre nodes, ``mpmath``
evaluations through mpmath; ``NumericValue.evaluations`` of every numeric_divergence call).

``--backend mpmath`` measures the pure-mpmath path (RDPSYM_NUMERIC_BACKEND=mpmath, no Arb).
``--compare-backends`` re-runs the measurement in subprocesses with mpmath's pure-Python backend
(MPMATH_NOGMPY=1) and with gmpy2 (if installed).
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import time

import mpmath
import sympy as sp

import rdpsym
from rdpsym import alpha as A
from rdpsym.derive.result import DivergenceResult, Status
from rdpsym.numeric import fast
from rdpsym.verification import Point, verify

# the module that calls numeric_divergence: the count is taken there
verify_module = importlib.import_module("rdpsym.verification.checks")

TARGET = 50.0  # points per second at 30 digits, 1-D continuous pairs

x = sp.Symbol("x", real=True)
k = sp.Symbol("k", integer=True)
sigma, b = sp.symbols("sigma b", positive=True)


def _cases():
    g = lambda m: sp.exp(-((x - m) ** 2) / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)  # noqa: E731
    lap = lambda m: sp.exp(-sp.Abs(x - m) / b) / (2 * b)  # noqa: E731
    r = sp.exp(-1 / b)
    dl = lambda m: (1 - r) / (1 + r) * sp.exp(-sp.Abs(k - m) / b)  # noqa: E731
    claim = DivergenceResult(
        expr=sp.log((sp.exp((A - 1) / b) + sp.exp(-A / b)) / (1 + sp.exp(-1 / b))) / (A - 1),
        status=Status.CLOSED_FORM, symbols=(b,), label="discrete Laplace (claim in the docstring)")
    return {
        "gaussian": (g(0), g(1), x, sp.S.Reals, "sigma", rdpsym.renyi_divergence(g(0), g(1), x, sp.S.Reals)),
        "laplace": (lap(0), lap(1), x, sp.S.Reals, "b", rdpsym.renyi_divergence(lap(0), lap(1), x, sp.S.Reals)),
        "discrete laplace": (dl(0), dl(1), k, sp.S.Integers, "b", claim),
    }


ORDERS = [sp.Rational(3, 2), 2, 3, 5, 10, 32, sp.Rational(1, 2) + sp.Rational(1, 7), sp.Rational(1, 4)]
SCALES = [sp.Rational(1, 2), 1, 2, 5]


def bench(case, dps, n):
    P, Q, var, sup, name, result = case
    points = [Point(a, ((name, s),), "benchmark") for s in SCALES for a in ORDERS][:n]
    # warm-up (not timed): one compilation per pair and mpmath's/Arb's quadrature node caches,
    # as in any sweep of more than a few points
    verify(result, P=P, Q=Q, x=var, support=sup, points=points[:1], dps=dps, executor="serial")
    totals = {"arb": 0, "mpmath": 0, "quad_nodes": 0}
    numeric = verify_module.numeric_divergence

    def counted(*args, **kwargs):  # the evaluation counts are per call: add them up here
        r = numeric(*args, **kwargs)
        for key, v in r.evaluations.items():
            totals[key] = totals.get(key, 0) + v
        return r

    verify_module.numeric_divergence = counted
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        report = verify(result, P=P, Q=Q, x=var, support=sup, points=points, dps=dps, executor="serial")
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
    finally:
        verify_module.numeric_divergence = numeric
    evals = {key: v / len(points) for key, v in totals.items()}
    return len(points) / dt, len(points) / dc, evals, report


def run(n):
    print(f"mpmath {mpmath.__version__}, backend {mpmath.libmp.BACKEND}, python {sys.version.split()[0]}, "
          f"numeric path: {'Arb (python-flint) + mpmath' if fast.available() else 'mpmath only'}")
    cases = _cases()
    rows = []
    for label, case in cases.items():
        for dps in (30, 50):
            rate, cpu_rate, ev, report = bench(case, dps, n)
            total = sum(ev.values())
            line = (f"{label:18s} dps={dps}: {rate:7.2f} points/s, {cpu_rate:7.2f} per CPU-s; evaluations/point "
                    f"{total:6.0f} (arb {ev['arb']:.0f}, quad {ev['quad_nodes']:.0f}, mpmath {ev['mpmath']:.0f})  "
                    f"{report.status} (min {report.min_digits:.0f} digits)")
            if dps == 30 and label != "discrete laplace":
                line += f"  ratio to target {rate / TARGET:.3f}"
            print(line, flush=True)
            rows.append((label, dps, rate))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12, help="points per pair and precision")
    ap.add_argument("--compare-backends", action="store_true", help="pure-Python vs gmpy2 mpmath backend")
    ap.add_argument("--backend", choices=("arb", "mpmath"), default="arb",
                    help="numeric path: Arb with mpmath fallback (default) or mpmath only")
    args = ap.parse_args()
    if args.backend == "mpmath":
        os.environ["RDPSYM_NUMERIC_BACKEND"] = "mpmath"
    if not args.compare_backends:
        run(args.n)
        return
    for label, env in (("python", {"MPMATH_NOGMPY": "1"}), ("gmpy2 (if installed)", {})):
        print(f"--- backend: {label}", flush=True)
        e = {k: v for k, v in os.environ.items() if k != "MPMATH_NOGMPY"} | env
        subprocess.run([sys.executable, __file__, "--n", str(args.n)], env=e, check=True)


if __name__ == "__main__":
    main()
