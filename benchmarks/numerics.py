"""Accuracy and speed of the generated float code (issue 6).

Accuracy: for every built-in mechanism, the maximum relative error of ``result.to_numpy()`` against
50-digit mpmath (``result.evaluate(alpha, dps=50, ...)``) over an extreme grid: alpha in [1 + 1e-12, 1e6]
and every scale parameter (``Parameter.log_scale``) in [1e-4, 1e4]; bounded parameters (randomized
response's p in (1/2, 1)) run from 1e-4 inside one end to 1e-4 inside the other. Target: <= 1e-12.

Speed (issue 19): 10^6 values, alpha in [1.01, 200] x the scale in [0.01, 100] (log-spaced, which
includes the overflow regime of exp((alpha-1)/b)), timed side by side in one run against hand-written
overflow-safe numpy formulas of the same curves; the ratios are printed. Targets: Laplace and randomized
response <= 1.5x, the Gaussian <= 1.2x.

    python benchmarks/numerics.py [--quick] [--speed-only]
"""

from __future__ import annotations

import argparse
import time

import mpmath
import numpy as np
import sympy as sp

import rdpsym
from rdpsym import mechanisms
from rdpsym.compile import CodegenError


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


# Hand-written overflow-safe numpy formulas of the same curves: the bar for the generated code (numpy's
# own throughput), not a scalar library loop. Each is valid on the speed grid (alpha > 1).
def _laplace_by_hand(alpha, b):
    """Mironov 2017, Table II, Laplace row with sensitivity 1, the exponential factored out:
    ((a-1)/b + log(a/(2a-1)) + log1p((a-1)/a exp(-(2a-1)/b))) / (a-1)."""
    return ((alpha - 1) / b + np.log(alpha / (2 * alpha - 1))
            + np.log1p((alpha - 1) / alpha * np.exp(-(2 * alpha - 1) / b))) / (alpha - 1)


def _rr_by_hand(alpha, p):
    """Mironov 2017, Table II, randomized response, with r = log(p/(1-p)) factored out:
    (alpha r + log(1-p) + log1p(exp((1 - 2 alpha) r))) / (alpha - 1)."""
    r = np.log(p / (1 - p))
    return (alpha * r + np.log1p(-p) + np.log1p(np.exp((1 - 2 * alpha) * r))) / (alpha - 1)


def _gaussian_by_hand(alpha, sigma):
    """Mironov 2017, Table II, Gaussian with sensitivity 1: alpha / (2 sigma^2)."""
    return alpha / (2 * sigma * sigma)


#: the targets of issue 19: generated time / hand-written time
TARGETS = {"laplace": 1.5, "randomized_response": 1.5, "gaussian": 1.2}


def speed_grid(name: str) -> tuple[np.ndarray, dict]:
    """10^6 values: alpha in [1.01, 200] (log-spaced) x the scale in [0.01, 100] (log-spaced); for
    randomized response the scale is its epsilon log(p/(1-p)) in [0.01, 30] (beyond 30, 1 - p is below
    1e-13 and p rounds towards 1)."""
    alphas = np.logspace(np.log10(1.01), np.log10(200.0), 1000)[:, None]
    scale = np.logspace(-2, 2, 1000)[None, :]
    if name == "randomized_response":
        eps = np.logspace(-2, np.log10(30.0), 1000)[None, :]
        return alphas, {"p": 1 / (1 + np.exp(-eps))}
    key = {"laplace": "b", "gaussian": "sigma"}[name]
    return alphas, {key: scale, "sensitivity": 1.0}


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def speed(name: str, repeat: int = 21) -> float:
    """Best-of-``repeat`` times of rdpsym's generated code and the hand-written formula, interleaved in one
    run (the machine may be shared); prints both, the ratio and the largest relative difference."""
    f = rdpsym.rdp(mechanisms.get(name)).to_numpy()
    alphas, kw = speed_grid(name)
    by_hand = {"laplace": lambda: _laplace_by_hand(alphas, kw["b"]),
               "randomized_response": lambda: _rr_by_hand(alphas, kw["p"]),
               "gaussian": lambda: _gaussian_by_hand(alphas, kw["sigma"])}[name]
    ours = lambda: f(alphas, **kw)  # noqa: E731
    ours(), by_hand()  # warm up
    t_ours = t_hand = float("inf")
    for _ in range(repeat):  # interleaved: both see the same load
        t_ours = min(t_ours, _best(ours, 1))
        t_hand = min(t_hand, _best(by_hand, 1))
    with np.errstate(all="ignore"):
        diff = float(np.nanmax(np.abs(ours() / by_hand() - 1)))
    ratio = t_ours / t_hand
    print(f"  {name:20s} rdpsym {t_ours * 1e3:8.2f} ms   by hand {t_hand * 1e3:8.2f} ms   ratio {ratio:5.2f}x"
          f" (target <= {TARGETS[name]}x: {'MET' if ratio <= TARGETS[name] else 'NOT MET'})"
          f"   max |rdpsym/hand - 1| = {diff:.1e}")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller accuracy grid")
    parser.add_argument("--speed-only", action="store_true", help="only the side-by-side timing")
    args = parser.parse_args()
    if args.speed_only:
        print("speed: 10^6 values (1,000 orders x 1,000 scales), generated code against hand-written numpy")
        for name in ("laplace", "randomized_response", "gaussian"):
            speed(name)
        return
    n_alpha, n_param = (8, 5) if args.quick else (25, 9)
    print("accuracy: max relative error against 50-digit mpmath (target <= 1e-12)")
    worst_all = 0.0
    for name in mechanisms.names():
        status = rdpsym.rdp(mechanisms.get(name)).status
        if status is not rdpsym.Status.CLOSED_FORM:
            print(f"  {name:22s} skipped: no closed form to generate code from (status {status})")
            continue
        try:
            worst, where = accuracy(name, n_alpha, n_param)
        except CodegenError as exc:  # a closed form the generator has no stable float code for
            print(f"  {name:22s} skipped: no float code ({str(exc)[:90]})")
            continue
        worst_all = max(worst_all, worst)
        print(f"  {name:22s} {worst:9.2e}  worst at alpha={where[0]!r}, {where[1]}" if where else f"  {name:22s} exact")
    print(f"  overall {worst_all:.2e} -> {'MET' if worst_all <= 1e-12 else 'NOT MET'}")
    print("speed: 10^6 values (1,000 orders x 1,000 scales), generated code against hand-written numpy")
    for name in ("laplace", "randomized_response", "gaussian"):
        speed(name)


if __name__ == "__main__":
    main()
