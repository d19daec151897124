"""Subsampled Gaussian RDP: float64 speed and accuracy next to dp_accounting (if installed).

Run:  python benchmarks/subsampled.py
Orders: dp_accounting's RdpAccountant defaults (fractional 1.1 .. 10.9, integers 11 .. 63, 128, 256, 512).
Reports the time of one curve (all orders) for rdpsym.accounting.subsampled.subsampled_gaussian_rdp and
for dp_accounting's per-order function, their ratio, and both functions' largest relative deviation
from the 50-digit mpmath reference at a few fractional and integer orders.
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


if __name__ == "__main__":
    main()
