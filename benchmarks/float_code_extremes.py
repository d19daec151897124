"""The generated float code (``result.to_numpy()``) at extreme and ordinary parameters: accurate or refused.

Float code must never return a wrong finite number: at each point it returns a value within 1e-12 of the
closed form (relative; below the smallest normal float the rounded value is 0 or subnormal), or it refuses
(``ArithmeticError``). The truth at each point is the result's own closed form evaluated by
:meth:`rdpsym.DivergenceResult.evaluate` at 50 digits on the exact binary values of the inputs (points
where that raises have no truth and are counted apart). Each point is judged:

* ``ok``        within 1e-12 of the truth;
* ``refused``   ArithmeticError (fails closed);
* ``overflow``  +inf where the truth is finite but above the largest float, or 0 where it is below the
  smallest subnormal: the rounded value, not an error;
* ``spurious inf``  +inf where the truth is a finite float: an intermediate overflowed (Delta^2 / sigma^2 at
  sigma = 1e-200); wrong, but on the safe side (an accountant's epsilon becomes +inf, never smaller);
* ``WRONG``     any other value (a wrong finite number or NaN; the target is none).

    python benchmarks/float_code_extremes.py [--only NAME ...]

The grid: orders next to 0, 1/2, 1 and up to 1e15 and +oo; scales, sensitivities and epsilons from 1e-300
to 1e300, probabilities next to 1/2 and 1, k up to 1e100. Before the screens of the series learnt to doubt
coefficients that under- or overflow, Laplace had 73 wrong values on this kind of grid and k-ary
randomized response 40 (b = 1e200, sensitivity 1e100: 1.1e-16 where D_2 = 1e-200).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
import warnings
from pathlib import Path

import mpmath
import numpy as np
import sympy as sp

# measure the checkout this file lives in: run as a script, sys.path starts with benchmarks/, not the root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rdpsym  # noqa: E402
from rdpsym._timeout import StepTimeout, run_with_time_limit  # noqa: E402

ORDERS = [1e-6, 0.01, 0.5 - 1e-9, 0.5 + 1e-9, 0.499999, 1 - 1e-9, 1.0, 1 + 1e-9, 1.5, 2.0, 10.0, 1e3, 1e8, 1e15, math.inf]
WIDE = [1e-300, 1e-200, 1e-100, 1e-30, 1e-8, 1e-3, 1.0, 3.0, 1e3, 1e8, 1e20, 1e29, 1e35, 1e100, 1e200, 1e300]
PROBABILITIES = [0.5 + 1e-12, 0.5 + 1e-8, 0.6, 0.9, 1 - 1e-8, 1 - 1e-15]
OUTCOMES = [3.0, 10.0, 1e3, 1e8, 1e20, 1e50, 1e100]

#: mechanism -> its parameters' grids (the grid is their product, with every order)
GRIDS = {
    "gaussian": {"sigma": WIDE, "sensitivity": WIDE[::2]},
    "laplace": {"b": WIDE, "sensitivity": WIDE[::2] + [1e29, 1e37]},
    "randomized_response": {"p": PROBABILITIES},
    "pure_dp": {"epsilon": WIDE},
    "k_randomized_response": {"k": OUTCOMES, "epsilon": WIDE[::2]},
}


#: seconds the truth of one point may take (a wall-clock guard; such points count as "no truth")
TRUTH_SECONDS = 5


def _judge(got: float | None, truth) -> str:
    if got is None:
        return "refused"
    if math.isnan(got):
        return "WRONG"
    if mpmath.isinf(truth):
        return "ok" if got == math.inf else "WRONG"
    tiny = mpmath.mpf(np.finfo(float).tiny)
    if abs(mpmath.mpf(got) - truth) <= mpmath.mpf("1e-12") * abs(truth) + tiny:
        return "ok"
    if (got == math.inf and truth > mpmath.mpf(np.finfo(float).max)) or (got == 0 and truth < tiny):
        return "overflow"
    return "spurious inf" if got == math.inf else "WRONG"


def run(name: str) -> dict:
    result = rdpsym.rdp(rdpsym.mechanisms.get(name))
    f = result.to_numpy()
    grid = GRIDS[name]
    counts = {"ok": 0, "refused": 0, "overflow": 0, "spurious inf": 0, "WRONG": 0, "no truth": 0}
    wrong = []
    started = time.perf_counter()
    with mpmath.workdps(50):
        for a, combo in itertools.product(ORDERS, itertools.product(*grid.values())):
            values = dict(zip(grid, combo))
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                try:
                    got = float(f(a, **values))
                except ArithmeticError:
                    got = None
                except ValueError:
                    continue  # outside the declared domain (k = 3 is the least number of outcomes)
            exact = {k: sp.Float(v, 60) for k, v in values.items()}
            order = sp.oo if a == math.inf else sp.Float(a, 60)
            try:
                # a closed form that cancels to 10^-600 needs thousands of digits: a wall-clock guard (the
                # library's own, which nests with the limits evaluate sets inside)
                truth = mpmath.mpf(run_with_time_limit(lambda: result.evaluate(order, dps=50, **exact),
                                                       seconds=TRUTH_SECONDS, clock="wall"))
            except (ArithmeticError, ValueError, StepTimeout):
                counts["no truth"] += 1
                continue
            verdict = _judge(got, truth)
            counts[verdict] += 1
            if verdict == "WRONG":
                wrong.append((a, values, got, mpmath.nstr(truth, 12)))
    return {"name": name, **counts, "seconds": time.perf_counter() - started, "wrong": wrong[:5]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(GRIDS), help="run this mechanism only (repeatable)")
    args = parser.parse_args(argv)
    names = args.only or list(GRIDS)
    print(f"{'mechanism':24} {'ok':>6} {'refused':>8} {'overflow':>9} {'spurious inf':>13} {'WRONG':>6} {'no truth':>9} "
          f"{'seconds':>8}", flush=True)
    total_wrong = 0
    for name in names:
        row = run(name)
        total_wrong += row["WRONG"]
        print(f"{name:24} {row['ok']:6} {row['refused']:8} {row['overflow']:9} {row['spurious inf']:13} {row['WRONG']:6} "
              f"{row['no truth']:9} {row['seconds']:8.1f}", flush=True)
        for a, values, got, truth in row["wrong"]:
            print(f"    WRONG at alpha = {a}, {values}: {got!r}, truth {truth}")
    print(f"wrong finite values: {total_wrong} (target 0)")
    return 1 if total_wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
