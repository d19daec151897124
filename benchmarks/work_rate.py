"""The work a derivation step's budget counts, against the CPU time it takes, per built-in mechanism.

Run:  python benchmarks/work_rate.py [--only NAME ...]

A step's budget counts sympy expression nodes built (``rdpsym._timeout.NODES_PER_SECOND`` per second
of ``RDPSYM_STEP_SECONDS``), so a derivation gives up at the same point on any machine and under any
load. This prints, for each built-in derived cold in a fresh process, the nodes its derivation built,
its CPU seconds, the rate (nodes per CPU second), the status and the stages cut short, then the median
rate against the anchor ``NODES_PER_SECOND``: a ratio near 1 means a budget of S seconds lets a typical
step run about S seconds of CPU on this machine, as the wall-clock limits it replaced did. A ratio far
from 1 on another machine says the machine is faster or slower, never that the outcomes differ.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

_ONE = """
import json, sys, time
import rdpsym
from rdpsym import _timeout
name = sys.argv[1]
nodes, cpu = _timeout.work_done(), time.process_time()
result = rdpsym.rdp(rdpsym.mechanisms.get(name), cache=False)
nodes, cpu = _timeout.work_done() - nodes, time.process_time() - cpu
print(json.dumps({"name": name, "nodes": nodes, "cpu": cpu, "status": str(result.status),
                  "expired": list(result.provenance.expired)}))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="only these built-ins (repeatable)")
    args = ap.parse_args(argv)
    from rdpsym import mechanisms
    from rdpsym._timeout import NODES_PER_SECOND

    names = args.only or mechanisms.names()
    rows = []
    print(f"{'mechanism':24} {'nodes':>10} {'CPU s':>8} {'nodes/CPU s':>12}  status, stages cut short")
    for name in names:
        run = subprocess.run([sys.executable, "-c", _ONE, name], capture_output=True, text=True, timeout=3600)
        if run.returncode != 0:
            print(f"{name:24} failed: {run.stderr.strip().splitlines()[-1:]}")
            continue
        row = json.loads(run.stdout.strip().splitlines()[-1])
        rate = row["nodes"] / row["cpu"] if row["cpu"] > 0 else float("nan")
        rows.append(rate)
        print(f"{name:24} {row['nodes']:>10,} {row['cpu']:>8.2f} {rate:>12,.0f}  {row['status']}"
              f"{', cut short: ' + ', '.join(row['expired']) if row['expired'] else ''}")
    if rows:
        median = statistics.median(rows)
        print(f"\nmedian {median:,.0f} nodes per CPU second; anchor NODES_PER_SECOND = {NODES_PER_SECOND:,}; "
              f"ratio {median / NODES_PER_SECOND:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
