"""Size of the derived forms against the published ones (issue 18, item 2: paper-sized forms).

Run:  python benchmarks/forms.py [NAME-FILTER ...]
For every entry of the regression registry (rdpsym/regress/registry.toml) with a closed-form
derivation, prints sympy ``count_ops`` of the derived form (the entry's order, its ``fixed`` values
substituted, as the claim check compares them) against the published formula's, and the ratio.
Target: ratio <= 1.25 on every row (tests/test_forms.py enforces it).
"""

from __future__ import annotations

import sys
import time

from rdpsym.regress.sizes import registry_sizes

TARGET = 1.25


def main(only=()) -> None:
    start = time.perf_counter()
    rows = registry_sizes(only=only)
    print(f"{'entry':34s} {'derived':>8s} {'published':>9s} {'ratio':>7s}")
    worst = 0.0
    for row in rows:
        if row.derived is None:
            print(f"{row.name:34s} {'-':>8s} {row.published:9d} {'-':>7s}  ({row.note})")
            continue
        worst = max(worst, row.ratio)
        flag = "" if row.ratio <= TARGET else "  > target"
        print(f"{row.name:34s} {row.derived:8d} {row.published:9d} {row.ratio:7.2f}{flag}")
    print(f"worst ratio {worst:.2f} (target {TARGET}); {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]))
