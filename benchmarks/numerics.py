"""Accuracy and speed of the generated float code (issue 6).

Accuracy: for every built-in mechanism, the maximum relative error of ``result.to_numpy()`` against
50-digit mpmath (``result.evaluate(alpha, dps=50, ...)``) over an extreme grid: alpha in [1 + 1e-12, 1e6]
and every scale parameter (``Parameter.log_scale``) in [1e-4, 1e4]; bounded parameters (randomized
response's p in (1/2, 1)) run from 1e-4 inside one end to 1e-4 inside the other. Target: <= 1e-12.

Speed: 1,000 orders x 1,000 parameter values in one vectorised call, against autodp's and
dp_accounting's per-order functions for the same mechanism (when installed; they are optional).
Those are scalar Python functions, so they are timed on a sample of calls and scaled to 10^6 calls.
Target: >= 50x faster.

    python benchmarks/numerics.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import mpmath
import numpy as np
import sympy as sp

import rdpsym
from rdpsym import mechanisms


def parameter_grid(param, n: int) -> np.ndarray:
    lo, hi = param.domain.inf, param.domain.sup
    if param.name == "sensitivity":
        return np.array([1.0])  # Table II: sensitivity 1; the scale parameter carries the extremes
    if param.log_scale:
        return np.logspace(-4, 4, n)
    if lo.is_finite and hi.is_finite:
        lo, hi = float(lo), float(hi)
        frac = np.concatenate([np.logspace(-4, -1, n // 2), 1 - np.logspace(-1, -4, n - n // 2)])
        return lo + (hi - lo) * frac
    return np.array([float(v) for v in param.typical_values(n)])


def alpha_grid(n: int) -> np.ndarray:
    return np.unique(np.concatenate([1 + np.logspace(-12, 0, n), np.logspace(np.log10(2.0), 6, n)]))


def accuracy(name: str, n_alpha: int, n_param: int) -> tuple[float, tuple]:
    mech = mechanisms.get(name)
    result = rdpsym.rdp(mech)
    f = result.to_numpy()
    grids = {p.name: parameter_grid(p, n_param) for p in mech.parameters}
    alphas = alpha_grid(n_alpha)
    mesh = np.meshgrid(alphas, *grids.values(), indexing="ij")
    flat = [m.ravel() for m in mesh]
    got = f(flat[0], **{k: v for k, v in zip(grids, flat[1:])})
    worst, where = 0.0, None
    with mpmath.workdps(50):
        for i in range(flat[0].size):
            values = {k: float(v[i]) for k, v in zip(grids, flat[1:])}
            # exact binary values as 60-digit Floats (exact rationals make p**(10**6) enormous)
            exact = result.evaluate(sp.Float(float(flat[0][i]), 60), dps=50, **{k: sp.Float(v, 60) for k, v in values.items()})
            err = abs(mpmath.mpf(float(got[i])) - exact) / abs(exact) if exact != 0 else abs(got[i])
            if not np.isfinite(got[i]) and got[i] != exact:
                err = mpmath.inf
            if err > worst:
                worst, where = float(err), (float(flat[0][i]), values)
    return worst, where


def _sample_rate(fn, args, seconds: float = 1.0) -> float:
    """Seconds per call of a scalar function, measured on a sample."""
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for a in args:
            fn(*a)
        n += len(args)
    return (time.perf_counter() - start) / n


def _verdict(ratio: float) -> str:
    return "MET" if ratio >= 50 else "NOT MET"


def speed(name: str) -> None:
    mech = mechanisms.get(name)
    f = rdpsym.rdp(mech).to_numpy()
    orders = np.linspace(1.01, 256, 1000)[:, None]
    main = {"laplace": "b", "gaussian": "sigma", "randomized_response": "p"}[name]
    values = {"b": np.logspace(-1, 2, 1000), "sigma": np.logspace(-1, 2, 1000),
              "p": np.linspace(0.55, 0.95, 1000)}[main][None, :]
    extra = {"sensitivity": 1.0} if "sensitivity" in mech.params else {}
    f(orders[:3], **{main: values[:, :3]}, **extra)  # warm up
    t_ours = float("inf")
    for _ in range(3):  # best of three: the machine may be shared
        start = time.perf_counter()
        ours = f(orders, **{main: values}, **extra)
        t_ours = min(t_ours, time.perf_counter() - start)
    print(f"  rdpsym      {t_ours:8.3f} s for 10^6 values (shape {ours.shape})")
    rng = np.random.default_rng(0)
    sample = [(float(orders[i, 0]), float(values[0, j])) for i, j in zip(rng.integers(0, 1000, 200), rng.integers(0, 1000, 200))]

    try:
        from autodp import rdp_bank

        fn = {"laplace": lambda a, v: rdp_bank.RDP_laplace({"b": v}, a),
              "gaussian": lambda a, v: rdp_bank.RDP_gaussian({"sigma": v}, a),
              "randomized_response": lambda a, v: rdp_bank.RDP_randresponse({"p": v}, a)}[name]
        per = _sample_rate(fn, sample)
        a, v = sample[0]
        print(f"  autodp      {per * 1e6:8.3f} s for 10^6 calls (sampled)  -> rdpsym is {per * 1e6 / t_ours:6.1f}x faster"
              f" ({_verdict(per * 1e6 / t_ours)})  [agree at alpha={a:.3g}: {fn(a, v):.15g} vs {float(f(a, **{main: v}, **extra)):.15g}]")
    except ImportError:
        print("  autodp      not installed")

    try:
        from dp_accounting.rdp import rdp_privacy_accountant as acc
        from dp_accounting.privacy_accountant import NeighboringRelation

        fn = {"laplace": lambda a, v: acc._laplace_rdp(1.0 / v, a),
              "gaussian": lambda a, v: acc._compute_rdp_poisson_subsampled_gaussian(1.0, v, [a]),
              # k = 2 randomized response with noise parameter 2(1 - p) reports the true bit w.p. p
              "randomized_response": lambda a, v: acc._compute_randomized_response_rdp(
                  2 * (1 - v), 2, [a], NeighboringRelation.REPLACE_ONE)}[name]
        per = _sample_rate(fn, sample)
        a, v = sample[0]
        theirs = float(np.ravel(fn(a, v))[0])
        print(f"  dp_accounting {per * 1e6:6.3f} s for 10^6 calls (sampled)  -> rdpsym is {per * 1e6 / t_ours:6.1f}x faster"
              f" ({_verdict(per * 1e6 / t_ours)})  [agree at alpha={a:.3g}: {theirs:.15g} vs {float(f(a, **{main: v}, **extra)):.15g}]")
    except ImportError:
        print("  dp_accounting not installed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller accuracy grid")
    args = parser.parse_args()
    n_alpha, n_param = (8, 5) if args.quick else (25, 9)
    print("accuracy: max relative error against 50-digit mpmath (target <= 1e-12)")
    worst_all = 0.0
    for name in mechanisms.names():
        status = rdpsym.rdp(mechanisms.get(name)).status
        if status is not rdpsym.Status.CLOSED_FORM:
            print(f"  {name:22s} skipped: no closed form to generate code from (status {status})")
            continue
        worst, where = accuracy(name, n_alpha, n_param)
        worst_all = max(worst_all, worst)
        print(f"  {name:22s} {worst:9.2e}  worst at alpha={where[0]!r}, {where[1]}" if where else f"  {name:22s} exact")
    print(f"  overall {worst_all:.2e} -> {'MET' if worst_all <= 1e-12 else 'NOT MET'}")
    print("speed: 1,000 orders x 1,000 parameter values (target >= 50x)")
    for name in ("gaussian", "laplace", "randomized_response"):
        print(f" {name}")
        speed(name)


if __name__ == "__main__":
    main()
