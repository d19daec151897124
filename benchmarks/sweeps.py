"""Speed-up of the execution layer (rdpsym.execution.run_tasks) on a Laplace verification sweep.

Run: python benchmarks/sweeps.py [--points 2000] [--dps 30] [--no-dask]

Each task is one parameter point (alpha, b): the numeric D_alpha(P||Q) of the Laplace pair from
``rdpsym.mechanisms.laplace()`` (``rdpsym.numeric.numeric_divergence``) against the derived closed form
``rdpsym.rdp(laplace).evaluate``, compared at 30 digits. It reports

* the wall time on one core (``executor="serial"``) and on all local cores (the default executor), the
  speed-up and its ratio to the number of cores (target >= 0.9);
* the same sweep on a 2-worker Dask ``LocalCluster`` (worker processes, one thread each) and its speed-up;
* the CPU time of the serial and the parallel run (parent plus workers): their ratio, the work
  efficiency, is about the speed-up per core on an idle machine (CPU time too is disturbed by other
  processes sharing the cores, though less than wall time);
* the per-task overhead of each executor, from a sweep of tasks that do nothing.

The parent computes one point before timing, so the numeric path's caches are warm in every run
(forked local workers inherit them; Dask workers, being spawned, warm their own: that start-up is
part of the Dask time). The three runs must agree point by point, or the benchmark fails.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from functools import partial

import mpmath
import sympy as sp

import rdpsym
from rdpsym import mechanisms
from rdpsym.derive.mechanism_rdp import worst_pairs
from rdpsym.execution import local_cores, run_tasks
from rdpsym.numeric import numeric_divergence


def laplace_point(P, Q, x, support, closed, dps, point):
    """One task: (alpha, b) -> (closed form, numeric value, numeric error, digits of agreement)."""
    alpha, b = point
    values = {"b": b, "sensitivity": 1}
    nv = numeric_divergence(P, Q, x, support, alpha, values, dps=dps)
    with mpmath.workdps(dps + 10):
        c = closed.evaluate(alpha, dps=dps + 10, **values)
        rel = abs(c - nv.value) / max(abs(nv.value), mpmath.mpf(10) ** (-dps))
        digits = float(min(dps, -mpmath.log10(rel))) if rel > 0 else float(dps)
    return c, nv.value, nv.error, digits


def nothing(task):
    return task


def grid(n: int) -> list[tuple[sp.Rational, sp.Rational]]:
    """n deterministic points: alpha in (1, 33), b in [1/4, 4], as exact rationals."""
    out = []
    for i in range(n):
        alpha = 1 + sp.Rational(1 + (i * 37) % 320, 10)    # 1.1 .. 33
        b = sp.Rational(1 + (i * 11) % 60, 16) + sp.Rational(1, 4)  # 0.3125 .. 4
        out.append((alpha, b))
    return out


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the local workers)."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


def timed(label, fn, tasks, executor, cpu=None):
    start, cpu0 = time.perf_counter(), _cpu()
    report = run_tasks(fn, tasks, executor=executor, progress=True, description=label)
    seconds = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_cpu() - cpu0)
    if not report.ok:
        raise SystemExit(f"{label}: {report.describe()}")
    return seconds, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=2000, help="parameter points (default 2000)")
    ap.add_argument("--dps", type=int, default=30, help="digits (default 30)")
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster run")
    args = ap.parse_args()

    m = mechanisms.laplace()
    pair = worst_pairs(m)[0]  # the pair at the family's supremum, t = sensitivity
    closed = rdpsym.rdp(m)
    fn = partial(laplace_point, pair.P, pair.Q, m.variable, m.support, closed, args.dps)
    tasks = grid(args.points)
    fn((sp.Rational(5, 2), sp.Integer(1)))  # warm-up (caches), outside the timings
    cores = local_cores()
    print(f"{args.points} Laplace points at {args.dps} digits; {cores} local cores; "
          f"mpmath backend {mpmath.libmp.BACKEND}; load average {os.getloadavg()[0]:.1f} "
          "(other processes on the cores make the speed-ups meaningless)")

    cpu: list[float] = []
    t1, serial = timed("1 core", fn, tasks, "serial", cpu)
    tn, parallel = timed(f"{cores} cores", fn, tasks, None, cpu)
    same = serial == parallel
    worst = min(e.result[3] for e in serial)
    print(f"one core:        {t1:8.1f} s  ({t1 / len(tasks) * 1e3:.0f} ms per point; fewest digits {worst:.1f})")
    print(f"{cores} local cores: {tn:8.1f} s  speed-up {t1 / tn:.2f} = {t1 / tn / cores:.2f} x cores "
          f"(target >= 0.9); identical to serial: {same}")
    print(f"CPU time: serial {cpu[0]:.1f} s, local processes {cpu[1]:.1f} s (parent + workers): work "
          f"efficiency {cpu[0] / cpu[1]:.2f} (about the speed-up per core on an idle machine)")

    n_nop = 2000
    o1, _ = timed("overhead, serial", nothing, range(n_nop), "serial")
    on, _ = timed("overhead, processes", nothing, range(n_nop), None)
    print(f"per-task overhead: serial {o1 / n_nop * 1e6:.0f} us, local processes {on / n_nop * 1e6:.0f} us "
          f"(wall time / tasks, {n_nop} empty tasks)")

    if not args.no_dask:
        try:
            import distributed
        except ImportError:
            print("dask: not installed (pip install 'rdpsym[distributed]')")
            return
        start = time.perf_counter()
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            up = time.perf_counter() - start
            td, on_dask = timed("dask, 2 workers", fn, tasks, client)
            od, _ = timed("overhead, dask", nothing, range(n_nop), client)
        same_d = on_dask == serial
        print(f"dask LocalCluster, 2 workers: {td:8.1f} s (+{up:.1f} s cluster start) speed-up {t1 / td:.2f} "
              f"= {t1 / td / 2:.2f} x workers; identical to serial: {same_d}")
        print(f"per-task overhead: dask {od / n_nop * 1e3:.2f} ms (2 workers; {n_nop} empty tasks)")
        if not same_d:
            raise SystemExit("dask results differ from the serial run")
    if not same:
        raise SystemExit("parallel results differ from the serial run")


if __name__ == "__main__":
    main()
