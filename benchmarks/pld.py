"""Certified tight composition against dp_accounting's PLD accountant, measured side by side in one run.

    python benchmarks/pld.py [--quick]

Prints, for each case, rdpsym's bracket [lower, upper] of epsilon(delta), dp_accounting's PLD epsilon
(value_discretization_interval 1e-4, the same grid step), the ratios upper / dp_accounting and
lower / dp_accounting, the width (upper - lower) / upper, the CPU times (process time: the machine is
shared, so wall clock says more about the other processes than about these two) and their ratio, the wall
times, and the memory of rdpsym's part: the peak of the Python/numpy allocations during ``tight_epsilon``
(tracemalloc, in a second, untimed run) and the process's peak resident memory (ru_maxrss, imports included). rdpsym's time is
``tight_epsilon`` alone, from a cold cache (each case builds its mechanisms' privacy loss distributions);
reading the events, which also prepares the RDP curves, is printed as t_read. For the composed Gaussian
the exact epsilon (Balle and Wang 2018, Thm. 8: k Gaussians of sensitivity 1 are one of sensitivity
sqrt(k)) is printed and checked to lie in the bracket; for composed randomized response the exact delta
is the binomial enumerated.
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc

import mpmath

import dp_accounting as dpa
from dp_accounting.pld import pld_privacy_accountant

from rdpsym import Accountant
from rdpsym.accounting.pld import distribution


def gaussian_delta(eps, mu):
    with mpmath.workdps(40):
        eps, mu = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def gaussian_epsilon(delta, mu):
    lo, hi = mpmath.mpf(0), mpmath.mpf(80)
    for _ in range(160):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gaussian_delta(mid, mu) > delta else (lo, mid)
    return float(hi)


def rr_epsilon(delta, p, k):
    with mpmath.workdps(40):
        r = mpmath.log(mpmath.mpf(p) / (1 - mpmath.mpf(p)))

        def d(eps):
            return sum(mpmath.binomial(k, j) * mpmath.mpf(p) ** j * (1 - mpmath.mpf(p)) ** (k - j)
                       * (1 - mpmath.exp(eps - (2 * j - k) * r)) for j in range(k + 1) if (2 * j - k) * r > eps)
        lo, hi = mpmath.mpf(0), k * r
        for _ in range(160):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
        return float(hi)


def run(event, delta, neighbouring="add_remove"):
    rel = (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE if neighbouring == "add_remove"
           else dpa.NeighboringRelation.REPLACE_ONE)
    w, t = time.perf_counter(), time.process_time()
    acc = pld_privacy_accountant.PLDAccountant(rel, value_discretization_interval=1e-4)
    acc.compose(event)
    theirs = acc.get_epsilon(delta)
    c_theirs, w_theirs = time.process_time() - t, time.perf_counter() - w
    t = time.perf_counter()
    acct = Accountant.from_dp_event(event, neighbouring)  # also prepares the RDP curves (not timed below)
    t_add = time.perf_counter() - t
    distribution._CACHE.clear()  # cold: this case's distributions are built in the timed call
    w, t = time.perf_counter(), time.process_time()
    ours = acct.tight_epsilon(delta)
    c_ours, w_ours = time.process_time() - t, time.perf_counter() - w
    distribution._CACHE.clear()  # again, untimed, for the memory (tracemalloc slows allocation down)
    tracemalloc.start()
    acct.tight_epsilon(delta)
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # the process's peak so far
    return ours, theirs, (c_ours, w_ours), (c_theirs, w_theirs), (traced, peak), t_add


def main(quick: bool) -> int:
    sg = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1))
    het = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(10.0), 100),
                               dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(5.0), 50),
                               dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 1000)])
    cases = [
        ("Gaussian sigma=10 x 100", dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(10.0), 100), 1e-5, "add_remove",
         gaussian_epsilon(1e-5, 1.0)),
        ("RR noise=0.5 x 40 (replace-one)", dpa.SelfComposedDpEvent(dpa.RandomizedResponseDpEvent(0.5, 2), 40), 1e-5,
         "replace_one", rr_epsilon(1e-5, 0.75, 40)),
        ("DP-SGD q=0.01 sigma=1.1 x 1000", dpa.SelfComposedDpEvent(sg, 1000), 1e-5, "add_remove", None),
    ]
    if not quick:
        cases += [("DP-SGD q=0.01 sigma=1.1 x 10000", dpa.SelfComposedDpEvent(sg, 10000), 1e-5, "add_remove", None),
                  ("100 Laplace b=10 + 50 Gaussian sigma=5 + 1000 SGM q=0.01 sigma=1", het, 1e-6, "add_remove", None)]
    failed = 0
    print(f"{'case':62} {'lower':>10} {'upper':>10} {'dp_acc':>10} {'exact':>10} {'up/dpa':>8} {'lo/dpa':>8} "
          f"{'width%':>7} {'cpu':>5} {'cpu_dpa':>7} {'ratio':>6} {'wall':>5} {'w_dpa':>5} {'w ratio':>7} "
          f"{'t_read':>6} {'traced MB':>9} {'rss MB':>6}")
    for name, event, delta, rel, exact in cases:
        ours, theirs, (c_ours, w_ours), (c_theirs, w_theirs), (traced, peak), t_add = run(event, delta, rel)
        width = 100 * (ours.upper - ours.lower) / ours.upper
        if exact is not None:  # (dp_accounting 0.6.0 composes a self-composed RandomizedResponseDpEvent once)
            ok = ours.lower <= exact <= ours.upper and width <= 1.0
        else:
            ok = ours.upper <= 1.01 * theirs and ours.lower <= theirs and width <= 1.0
        ok = ok and ours.certified
        failed += not ok
        ratio = f"{c_ours / c_theirs:6.2f}" if c_theirs > 0.005 else "     -"
        w_ratio = f"{w_ours / w_theirs:7.2f}" if w_theirs > 0.005 else "      -"
        print(f"{name:62} {ours.lower:10.6f} {ours.upper:10.6f} {theirs:10.6f} "
              f"{(f'{exact:.6f}' if exact is not None else '-'):>10} {ours.upper / theirs:8.5f} "
              f"{ours.lower / theirs:8.5f} {width:7.3f} {c_ours:5.2f} {c_theirs:7.2f} {ratio} {w_ours:5.2f} "
              f"{w_theirs:5.2f} {w_ratio} {t_add:6.2f} {traced / 2**20:9.1f} {peak / 2**20:6.1f}"
              f"{'' if ok else '  <- target missed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main("--quick" in sys.argv))
