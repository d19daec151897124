"""Issue 29, items 7 and 10: what a newcomer's mechanisms cost, and which integer orders come out exact.

Run:  python benchmarks/newcomer_cost.py [--skip-verify]

Rows, each cold (a fresh cache directory made by this script) and measured in this one run beside an
anchor, so that the ratio says how the row compares with a built-in on the same machine under the same
load:

* a 4-pair finite pmf, the truncated geometric mechanism on {0..4} (Ghosh, Roughgarden & Sundararajan
  2009), and a 4-ary randomized response with 4 adjacent pairs, each written as a user writes it:
  the cold derivation (target <= 30 s) and one 30-digit evaluation, against the anchor, the built-in
  randomized response's cold derivation;
* a 2-D Laplace mechanism with l1 sensitivity (product densities, an AdjacentFamily over a ShiftBall):
  ``verify(level="quick")`` (target <= 120 s), against the anchor ``verify(level="quick")`` of the
  built-in Laplace;
* exact integer orders: of k = 2..10, how many ``evaluate_with_error`` gives exactly (a count, not a
  time) for a Cauchy pair, a Student t pair (nu = 3), a Poisson-subsampled Laplace pair and its reverse
  direction alone (``benchmarks/user_families.py`` writes them).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import sympy as sp

TARGET_DERIVE, TARGET_VERIFY = 30.0, 120.0


def truncated_geometric(n: int = 4):
    from rdpsym import AdjacentPair, Mechanism, parameter

    x = sp.Symbol("x", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.1, 5.0), meaning="privacy parameter")
    a = sp.exp(-eps.symbol)

    def pmf(i):
        return sp.Piecewise((a**i / (1 + a), sp.Eq(x, 0)), (a ** (n - i) / (1 + a), sp.Eq(x, n)),
                            ((1 - a) / (1 + a) * a ** sp.Abs(x - i), True))

    return Mechanism("truncated_geometric", x, sp.FiniteSet(*range(n + 1)),
                     tuple(AdjacentPair(pmf(i), pmf(i + 1), f"{i} vs {i + 1}") for i in range(n)), (eps,))


def randomized_response_4():
    from rdpsym import AdjacentPair, Mechanism, parameter

    x = sp.Symbol("x", integer=True, nonnegative=True)
    eps = parameter("epsilon", typical=(0.1, 5.0), meaning="privacy parameter")
    e = eps.symbol

    def pmf(v):
        return sp.Piecewise((sp.exp(e) / (sp.exp(e) + 3), sp.Eq(x, v)), (1 / (sp.exp(e) + 3), True))

    return Mechanism("rr4", x, sp.FiniteSet(0, 1, 2, 3),
                     tuple(AdjacentPair(pmf(i), pmf((i + 1) % 4), f"{i} vs {(i + 1) % 4}") for i in range(4)), (eps,))


def laplace_2d():
    from rdpsym import AdjacentFamily, Mechanism, ShiftBall, parameter

    x1, x2 = sp.symbols("x1 x2", real=True)
    t1, t2 = sp.symbols("t1 t2", real=True)
    b, d = parameter("b", typical=(0.5, 2.0)), parameter("sensitivity", typical=(0.5, 2.0))

    def lap(u):
        return sp.exp(-sp.Abs(u) / b.symbol) / (2 * b.symbol)

    family = AdjacentFamily(lap(x1) * lap(x2), lap(x1 - t1) * lap(x2 - t2), shift=(t1, t2), over=ShiftBall(1, d.symbol))
    return Mechanism("laplace2d", (x1, x2), sp.S.Reals**2, (family,), (b, d))


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-verify", action="store_true", help="no verify rows")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["RDPSYM_CACHE_DIR"] = cache
        import rdpsym

        ok = True
        anchor, t_anchor = _timed(rdpsym.rdp, rdpsym.mechanisms.get("randomized_response"))
        print(f"anchor: randomized_response cold derivation {t_anchor:.1f} s ({anchor.status})")
        print(f"{'4-pair finite pmf':24s} {'derive s':>9s} {'/anchor':>8s} {'/target':>8s} {'eval s':>7s}  status")
        for mech in (truncated_geometric(), randomized_response_4()):
            r, t = _timed(rdpsym.rdp, mech, progress=False)
            _, t_eval = _timed(r.evaluate, sp.Rational(5, 2), 30, epsilon=1)
            ok &= t <= TARGET_DERIVE
            print(f"{mech.name:24s} {t:9.1f} {t / t_anchor:8.1f} {t / TARGET_DERIVE:8.2f} {t_eval:7.3f}  {r.status}")
        if not args.skip_verify:
            lap = rdpsym.rdp(rdpsym.mechanisms.get("laplace"))
            rep1, t1 = _timed(rdpsym.verify, lap, level="quick", progress=False)
            print(f"anchor: verify(laplace, quick) {t1:.1f} s, {len(rep1.checks)} points ({rep1.status})")
            m2 = laplace_2d()
            r2, t_d = _timed(rdpsym.rdp, m2, progress=False)
            rep2, t2 = _timed(rdpsym.verify, r2, mechanism=m2, level="quick", progress=False)
            ok &= t2 <= TARGET_VERIFY
            print(f"2-D Laplace (l1): derive {t_d:.1f} s; verify quick {t2:.1f} s, {len(rep2.checks)} points "
                  f"({rep2.status}); / anchor {t2 / t1:.1f}; / target {t2 / TARGET_VERIFY:.2f}")

        sys.path.insert(0, str(Path(__file__).parent))
        from user_families import families

        fam = {n: (m, v) for n, m, v, _ in families()}
        sub, values = fam["Poisson-subsampled Laplace"]
        pair = sub.pairs[0]
        rows = [(n, rdpsym.rdp(fam[n][0]), fam[n][1]) for n in ("Cauchy", "Student t (nu = 3)")]
        rows.append(("subsampled Laplace", rdpsym.rdp(sub), values))
        rows.append(("its reverse direction", rdpsym.renyi_divergence(pair.Q, pair.P, sub.variable, sub.support,
                                                                     params=sub.parameters), values))
        print("exact integer orders of k = 2..10 (evaluate_with_error(k).exact):")
        for name, r, vals in rows:
            exact = []
            start = time.perf_counter()
            for k in range(2, 11):
                try:
                    if r.evaluate_with_error(k, dps=30, **vals).exact:
                        exact.append(k)
                except ArithmeticError:
                    pass
            print(f"  {name:24s} {len(exact)} of 9 {exact}  ({time.perf_counter() - start:.0f} s)")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
