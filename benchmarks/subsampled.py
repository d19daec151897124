"""Subsampled Gaussian RDP: float64 speed and accuracy next to dp_accounting (if installed).

Run:  python benchmarks/subsampled.py
Orders: dp_accounting's RdpAccountant defaults (fractional 1.1 .. 10.9, integers 11 .. 63, 128, 256, 512).
Reports the time of one curve (all orders) for rdpsym.accounting.subsampled.subsampled_gaussian_rdp and
for dp_accounting's per-order function, their ratio, and both functions' largest relative deviation
from the 50-digit mpmath reference at a few fractional and integer orders; then the accountant's curve
(rdpsym.accounting.mechanism_curve) of the built-in subsampled_gaussian and of subsample(gaussian(), q)
at sensitivity 2 (the same mechanism at sigma / 2): time of a first evaluation (no memo) and its
largest relative deviation from subsampled_gaussian_rdp.
"""

from __future__ import annotations

import time

import mpmath
import numpy as np

from rdpsym.accounting.subsampled import subsampled_gaussian_rdp, subsampled_gaussian_rdp_mp

ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512], dtype=float)
CASES = [(0.01, 1.1), (0.001, 0.8), (0.1, 2.0)]
CHECK_ORDERS = [1.5, 2.5, 10.5]


def best_of(fn, n=3):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    try:
        from dp_accounting.rdp.rdp_privacy_accountant import _compute_rdp_poisson_subsampled_gaussian as theirs
    except ImportError:
        theirs = None
    print(f"{len(ORDERS)} orders per curve")
    print(f"{'q':>8s} {'sigma':>6s} {'rdpsym (s)':>11s} {'dp_acc (s)':>11s} {'ratio':>7s} "
          f"{'rdpsym max rel err':>19s} {'dp_acc max rel err':>19s}")
    for q, s in CASES:
        ours_t = best_of(lambda: subsampled_gaussian_rdp(ORDERS, q, s))
        theirs_t = best_of(lambda: theirs(q, s, ORDERS)) if theirs else float("nan")
        worst_ours = worst_theirs = 0.0
        with mpmath.workdps(50):
            for a in CHECK_ORDERS:
                ref, _ = subsampled_gaussian_rdp_mp(a, q, s)
                worst_ours = max(worst_ours, float(abs(mpmath.mpf(float(subsampled_gaussian_rdp(a, q, s))) - ref) / ref))
                if theirs:
                    worst_theirs = max(worst_theirs, float(abs(mpmath.mpf(float(theirs(q, s, [a])[0])) - ref) / ref))
        print(f"{q:8.3g} {s:6.3g} {ours_t:11.4f} {theirs_t:11.4f} {theirs_t / ours_t:7.2f} "
              f"{worst_ours:19.3e} {worst_theirs:19.3e}")
    print("ratio > 1: rdpsym is faster. dp_accounting sums the fractional-order series in absolute values.")
    curves()


def curves() -> None:
    import sympy

    import rdpsym
    from rdpsym.accounting import mechanism_curve

    cases = [("subsampled_gaussian", "subsampled_gaussian", {}, 1.0)]
    if hasattr(rdpsym, "subsample"):
        cases.append(("subsample(gaussian(), q), sensitivity 2", rdpsym.subsample(rdpsym.mechanisms.gaussian(), sympy.Symbol("q", real=True)),
                      {"sensitivity": 2.0}, 2.0))
    print(f"\n{'curve':>42s} {'q':>8s} {'sigma':>6s} {'first call (s)':>15s} {'max rel dev':>12s}")
    for label, mech, extra, scale in cases:
        curve = mechanism_curve(mech)
        curve(ORDERS, q=0.5, sigma=1.0, **extra)  # prepare (derivations, code generation) outside the timing
        for q, s in CASES:
            start = time.perf_counter()
            got = curve(ORDERS, q=q, sigma=s, **extra)
            took = time.perf_counter() - start
            ref = subsampled_gaussian_rdp(ORDERS, q, s / scale)
            dev = float(np.max(np.abs(got - ref) / ref))
            print(f"{label:>42s} {q:8.3g} {s:6.3g} {took:15.4f} {dev:12.3e}")


if __name__ == "__main__":
    main()
