"""Cold and warm derivation time per built-in mechanism and for Table II as a whole.

Run:  python benchmarks/derive.py
Targets (issue 2, 2-core machine): Table II cold <= 10 s in total, warm (cached) <= 0.5 s.
Cold = fresh cache directory; warm = the same directory again in the same process.
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


if __name__ == "__main__":
    main()
