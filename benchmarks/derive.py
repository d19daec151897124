"""Cold and warm derivation time per built-in mechanism and for Table II as a whole.

Run:  python benchmarks/derive.py
Targets (issue 2, 2-core machine): Table II cold <= 10 s in total, warm (cached) <= 0.5 s.
Cold = fresh cache directory; warm = the same directory again in the same process.

Also a user's five-outcome pmf ((1 + t k)/(5 + 10 t) against its mirror), cold, as a ratio to Table II cold
measured in the same run: its limit checks once substituted alpha = 10^30 into exact rationals (220 s, a
held-out audit); they now evaluate at 130-digit floats.
"""

from __future__ import annotations

import os
import tempfile
import time

TABLE_II = ("randomized_response", "laplace", "gaussian")
TARGET_COLD, TARGET_WARM = 10.0, 0.5


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["RDPSYM_CACHE_DIR"] = cache
        import rdpsym
        from rdpsym import mechanisms

        times = {}
        for phase in ("cold", "warm"):
            for name in TABLE_II:
                mech = mechanisms.get(name)
                start = time.perf_counter()
                result = rdpsym.rdp(mech)
                times[phase, name] = time.perf_counter() - start
                assert result.status.value == "closed_form", (name, result.reason)
        print(f"{'mechanism':22s} {'cold (s)':>10s} {'warm (s)':>10s}")
        for name in TABLE_II:
            print(f"{name:22s} {times['cold', name]:10.3f} {times['warm', name]:10.3f}")
        cold = sum(times["cold", n] for n in TABLE_II)
        warm = sum(times["warm", n] for n in TABLE_II)
        print(f"{'Table II':22s} {cold:10.3f} {warm:10.3f}")
        print(f"cold / target = {cold / TARGET_COLD:.2f}   warm / target = {warm / TARGET_WARM:.3f}  (<= 1 meets the target)")
        start = time.perf_counter()
        result = rdpsym.rdp(_five_outcomes())
        five = time.perf_counter() - start
        assert result.status.value == "closed_form", result.reason
        print(f"{'five-outcome pmf':22s} {five:10.3f}   ({five / cold:.1f} x Table II cold)")


def _five_outcomes():
    import sympy as sp

    from rdpsym import AdjacentPair, Mechanism, parameter

    t = parameter("t", typical=(0.2, 5.0), log_scale=True)
    k, u = sp.Symbol("k", integer=True, nonnegative=True), t.symbol
    pair = AdjacentPair((1 + u * k) / (5 + 10 * u), (1 + u * (4 - k)) / (5 + 10 * u), "linear tilt")
    return Mechanism("five_linear", k, sp.FiniteSet(0, 1, 2, 3, 4), (pair,), (t,))


if __name__ == "__main__":
    main()
