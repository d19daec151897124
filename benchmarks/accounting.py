"""Benchmark: compose 10,000 events of five mechanism types and answer epsilon(delta = 1e-5).

    python benchmarks/accounting.py [--events 10000] [--delta 1e-5] [--dpa-sample N] [--dps 30]

Events (seeded, cycling through the types, parameters drawn from a few values each as in a training
run with a schedule): the Gaussian, Laplace, randomized response, the Poisson-subsampled Gaussian, and a
user-defined mechanism (a Gaussian release of a sum whose sensitivity is 2, written as densities and
derived by the engine).

Measured:

* rdpsym: the one-off preparation of the five curves in this process (derivations read from the disk
  cache, float code generated or read from its cache), then 10,000 ``Accountant.add`` calls and
  ``epsilon(delta)`` — timed separately.
* Google's dp_accounting ``RdpAccountant`` with its default orders on the same events: (a) one
  ``compose`` per event, as a training loop calls it (``--dpa-sample N`` times the first N events of
  each type and extrapolates, saying so), (b) one ``SelfComposedDpEvent`` per distinct event. Two
  accountants, because its randomized response needs the REPLACE_ONE relation and its subsampled
  Gaussian ADD_OR_REMOVE_ONE; their RDP vectors are added and converted with its ``compute_epsilon``
  (CKS20 Prop. 12, as rdpsym's default).
* Accuracy: the continuous-alpha optimum recomputed with mpmath at ``--dps`` digits — every curve
  evaluated exactly (``DivergenceResult.evaluate`` for the derived closed forms,
  ``subsampled_gaussian_rdp_mp`` for the subsampled Gaussian), the objective of
  ``rdpsym.accounting.conversion.objective`` minimised by successive parabolic interpolation in
  u = log(alpha - 1) around rdpsym's optimum (steps 1e-3, then 1e-5, then 1e-7). Reported: rdpsym's
  epsilon minus that optimum, and dp_accounting's epsilon minus it (what its grid of orders costs).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections import Counter

import mpmath
import numpy as np
import sympy as sp

import rdpsym
from rdpsym import Accountant
from rdpsym.accounting.conversion import objective
from rdpsym.specify.mechanism import AdjacentPair, Mechanism
from rdpsym.specify.params import parameter

TYPES = {
    "gaussian": [{"sigma": 20.0}, {"sigma": 30.0}, {"sigma": 40.0}],
    "laplace": [{"b": 100.0}, {"b": 200.0}],
    "randomized_response": [{"p": 0.505}, {"p": 0.51}],
    "subsampled_gaussian": [{"q": 0.01, "sigma": 1.0}, {"q": 0.01, "sigma": 1.2}],
    "sum_gaussian": [{"sigma": 40.0}, {"sigma": 60.0}],
}


def sum_gaussian() -> Mechanism:
    """A user-defined mechanism: N(0, sigma^2) noise on a sum whose sensitivity is 2."""
    x = sp.Symbol("x", real=True)
    sigma = parameter("sigma", typical=(1.0, 100.0), latex=r"\sigma", meaning="noise scale", log_scale=True)
    s = sigma.symbol

    def normal(mean):
        return sp.exp(-((x - mean) ** 2) / (2 * s**2)) / sp.sqrt(2 * sp.pi * s**2)

    return Mechanism(name="sum_gaussian", variable=x, support=sp.S.Reals,
                     pairs=(AdjacentPair(normal(0), normal(2), "sum of records in [0, 2]"),), parameters=(sigma,))


def make_events(n: int, seed: int = 0) -> list[tuple[str, dict]]:
    rng = random.Random(seed)
    names = list(TYPES)
    return [(names[i % len(names)], rng.choice(TYPES[names[i % len(names)]])) for i in range(n)]


# -- rdpsym ---------------------------------------------------------------------------------------
def run_rdpsym(events, delta, user):
    t0 = time.perf_counter()
    warm = Accountant()
    for name in TYPES:
        warm.add(user if name == "sum_gaussian" else name, count=0, **TYPES[name][0])
    t1 = time.perf_counter()
    acct = Accountant()
    for name, values in events:
        acct.add(user if name == "sum_gaussian" else name, **values)
    t2 = time.perf_counter()
    conv = acct.epsilon(delta)
    t3 = time.perf_counter()
    return acct, conv, {"prepare": t1 - t0, "add": t2 - t1, "epsilon": t3 - t2}


# -- dp_accounting ----------------------------------------------------------------------------------
def dpa_event(name, v):
    import dp_accounting as dpa

    if name == "gaussian":
        return dpa.GaussianDpEvent(v["sigma"])
    if name == "laplace":
        return dpa.LaplaceDpEvent(v["b"])
    if name == "randomized_response":
        return dpa.RandomizedResponseDpEvent(2 * (1 - v["p"]), 2)  # truth with probability 1 - noise/2
    if name == "subsampled_gaussian":
        return dpa.PoissonSampledDpEvent(v["q"], dpa.GaussianDpEvent(v["sigma"]))
    return dpa.GaussianDpEvent(v["sigma"] / 2)  # the user's mechanism: sensitivity 2


def run_dpa(events, delta, sample: int | None):
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    def accountants():
        return rpa.RdpAccountant(), rpa.RdpAccountant(neighboring_relation=rpa.NeighborRel.REPLACE_ONE)

    def finish(a, b):
        return rpa.compute_epsilon(a._orders, np.asarray(a._rdp) + np.asarray(b._rdp), delta)  # noqa: SLF001

    # (a) one compose call per event
    t0 = time.perf_counter()
    a, b = accountants()
    if sample is None:
        for name, v in events:
            (b if name == "randomized_response" else a).compose(dpa_event(name, v))
        eps_a, order_a = finish(a, b)
        per_event = time.perf_counter() - t0
        extrapolated = False
    else:
        per_type = Counter(name for name, _ in events)
        per_event = 0.0
        for name, total in per_type.items():
            some = [(n, v) for n, v in events if n == name][:sample]
            s0 = time.perf_counter()
            for n, v in some:
                (b if n == "randomized_response" else a).compose(dpa_event(n, v))
            per_event += (time.perf_counter() - s0) * total / len(some)
        eps_a = None
        extrapolated = True
    # (b) one self-composed event per distinct event
    t1 = time.perf_counter()
    a, b = accountants()
    counts = Counter((name, tuple(sorted(v.items()))) for name, v in events)
    for (name, items), n in counts.items():
        (b if name == "randomized_response" else a).compose(dpa_event(name, dict(items)), n)
    eps_b, order_b = finish(a, b)
    aggregated = time.perf_counter() - t1
    return {"per_event": per_event, "extrapolated": extrapolated, "aggregated": aggregated,
            "epsilon": eps_b, "order": order_b, "epsilon_per_event": eps_a}


# -- the high-precision optimum ---------------------------------------------------------------------
def exact_objective(acct: Accountant, delta, dps: int):
    """u -> the CKS20 epsilon at alpha = 1 + e^u, every curve evaluated at ``dps`` digits."""
    from rdpsym.accounting.subsampled import subsampled_gaussian_rdp_mp

    results = {}
    for e in acct.events:
        if e.name != "subsampled_gaussian" and e.mechanism not in results:
            results[e.mechanism] = rdpsym.rdp(e.mechanism)

    def f(u):
        with mpmath.workdps(dps + 10):
            a = 1 + mpmath.exp(u)
            total = mpmath.mpf(0)
            for e in acct.events:
                vals = {k: sp.Rational(v) for k, v in e.values}  # the same binary floats, exactly
                if e.name == "subsampled_gaussian":
                    v, _ = subsampled_gaussian_rdp_mp(a, vals["q"], vals["sigma"], dps=dps)
                else:
                    v = results[e.mechanism].evaluate(sp.Float(a, dps + 10), dps=dps + 5, **vals)
                total += e.count * v
            return objective("improved", "epsilon", total, a, mpmath.mpf(delta))

    return f


def parabolic_minimum(f, u0, steps=(1e-3, 1e-5, 1e-7)):
    """Successive parabolic interpolation: the vertex through f(u - h), f(u), f(u + h), for each h."""
    u = mpmath.mpf(u0)
    best = (f(u), u)
    for h in steps:
        fm, f0, fp = f(u - h), best[0] if best[1] == u else f(u), f(u + h)
        denom = fm - 2 * f0 + fp
        if denom > 0:
            u = u + h * (fm - fp) / (2 * denom)
        best = min([best, (fm, u - h), (fp, u + h), (f(u), u)], key=lambda t: t[0])
        u = best[1]
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--dpa-sample", type=int, default=None,
                    help="time only the first N events of each type per event in dp_accounting and extrapolate")
    ap.add_argument("--dps", type=int, default=30)
    args = ap.parse_args()

    user = sum_gaussian()
    events = make_events(args.events)
    print(f"{len(events)} events, {len(TYPES)} mechanism types, "
          f"{len(Counter((n, tuple(sorted(v.items()))) for n, v in events))} distinct; delta = {args.delta:g}")

    acct, conv, t = run_rdpsym(events, args.delta, user)
    ours = t["add"] + t["epsilon"]
    print(f"\nrdpsym: epsilon = {conv.value:.12g} at alpha = {conv.alpha:.10g} ({conv.status}, {conv.evaluations} orders)")
    print(f"  prepare curves {t['prepare']:.3f} s (once per process), {len(events)} adds {t['add']:.3f} s, "
          f"epsilon {t['epsilon']:.3f} s: {ours:.3f} s ({ours + t['prepare']:.3f} s with preparation)")
    print(f"  dominating at alpha*: {acct.report(delta=args.delta).dominant.label}")

    try:
        d = run_dpa(events, args.delta, args.dpa_sample)
    except ImportError:
        d = None
        print("\ndp_accounting is not installed: no comparison (pip install dp-accounting)")
    if d is not None:
        how = "extrapolated from a sample" if d["extrapolated"] else "measured"
        print(f"\ndp_accounting RdpAccountant (default orders): epsilon = {d['epsilon']:.12g} at order {d['order']}")
        print(f"  one compose per event: {d['per_event']:.3f} s ({how}); ratio to rdpsym: "
              f"{d['per_event'] / ours:.1f}x ({d['per_event'] / (ours + t['prepare']):.1f}x with rdpsym's preparation)")
        print(f"  aggregated (one self-composed event per distinct event): {d['aggregated']:.3f} s; "
              f"ratio to rdpsym: {d['aggregated'] / ours:.2f}x")
        if d["epsilon_per_event"] is not None and not math.isclose(d["epsilon_per_event"], d["epsilon"], rel_tol=1e-9):
            print(f"  (per-event epsilon {d['epsilon_per_event']:.12g} differs from the aggregated one)")

    print(f"\nhigh-precision optimum ({args.dps} digits, successive parabolic interpolation around rdpsym's alpha):")
    t0 = time.perf_counter()
    f = exact_objective(acct, args.delta, args.dps)
    with mpmath.workdps(args.dps + 10):
        at_ours = f(mpmath.log(mpmath.mpf(conv.alpha) - 1))
        best, u = parabolic_minimum(f, mpmath.log(mpmath.mpf(conv.alpha) - 1))
        print(f"  optimum epsilon = {mpmath.nstr(best, 16)} at alpha = {mpmath.nstr(1 + mpmath.exp(u), 12)} "
              f"({time.perf_counter() - t0:.1f} s)")
        print(f"  exact epsilon at rdpsym's alpha: {mpmath.nstr(at_ours, 16)} "
              f"(rdpsym's float value - exact: {mpmath.nstr(conv.value - at_ours, 3)})")
        gap = conv.value - best
        print(f"  rdpsym - optimum: {mpmath.nstr(gap, 3)} (target |gap| <= 1e-6: {'met' if abs(gap) <= 1e-6 else 'MISSED'})")
        if d is not None:
            dgap = d["epsilon"] - best
            print(f"  dp_accounting - optimum: {mpmath.nstr(dgap, 3)} "
                  f"({mpmath.nstr(100 * dgap / best, 3)}% of epsilon: the cost of its grid of orders)")


if __name__ == "__main__":
    main()
