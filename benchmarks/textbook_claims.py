"""Textbook claims with known verdicts, checked on an idle machine and beside busy processes.

Run:  python benchmarks/textbook_claims.py [--busy N] [--only TEXT]

Each row is a claim about a built-in mechanism whose truth is known from the literature or by hand
(the reason is in the row), independently of rdpsym: a true claim must come back ``proved`` or
``confirmed``, a false one ``refuted``. ``inconclusive`` is a miss, and any other verdict is WRONG.
With ``--busy N``, N CPU-bound processes run beside the checks for the whole run (issue: the same
verdict on an idle machine and with two busy processes on the 2 cores; budgets count work, not
seconds). Printed per claim: the expected and the obtained verdict, the wall and CPU seconds; a summary
at the end: right, inconclusive, WRONG. Exit 1 when any verdict is wrong.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time

import sympy as sp

TRUE, FALSE = "true", "false"
OO = sp.oo

#: (mechanism, claim, relation, order, truth, why)
CLAIMS = [
    ("gaussian", "alpha*sensitivity**2/(2*sigma**2)", "==", None, TRUE, "Mironov 2017, Table II"),
    ("gaussian", "alpha*sensitivity**2/(2*sigma**2) + 1/100", "<=", None, TRUE, "Table II plus a margin"),
    ("gaussian", "0", ">=", None, TRUE, "Renyi divergences are non-negative (Prop. 8 context)"),
    ("gaussian", "sensitivity**2/(2*sigma**2)", "==", 1, TRUE, "KL of two Gaussians of one variance"),
    ("gaussian", "alpha*sensitivity**2/(4*sigma**2)", "<=", None, FALSE, "half of the exact curve"),
    ("gaussian", "10**305", "<=", None, FALSE, "the curve is unbounded in alpha"),
    ("gaussian", "sensitivity**2/sigma**2", "==", 1, FALSE, "twice the KL"),
    ("gaussian", "alpha*sensitivity**2/(2*sigma**2) + 1/10**6", ">=", None, FALSE, "above the exact curve"),
    ("laplace", "sensitivity/b", "<=", None, TRUE, "D_alpha <= D_oo = Delta/b (Prop. 10, pure DP)"),
    ("laplace", "alpha*sensitivity**2/(2*b**2)", "<=", None, TRUE,
     "eps-DP implies (eps^2/2)-zCDP (Bun and Steinke 2016, Prop. 3.3), eps = Delta/b"),
    ("laplace", "sensitivity/b + exp(-sensitivity/b) - 1", "==", 1, TRUE, "Table II, alpha = 1"),
    ("laplace", "sensitivity/b", "==", OO, TRUE, "Table II, alpha = oo"),
    ("laplace", "0", ">=", None, TRUE, "non-negativity"),
    ("laplace", "sensitivity/(2*b)", "<=", None, FALSE, "D_alpha tends to Delta/b as alpha -> oo"),
    ("laplace", "sensitivity/b", "==", 1, FALSE, "the KL is below D_oo"),
    ("laplace", "sensitivity/b", ">=", None, FALSE, "D_alpha < Delta/b at every finite alpha"),
    ("randomized_response", "log(p/(1-p))", "<=", None, TRUE, "D_alpha <= D_oo = log(p/(1-p)), Table II"),
    ("randomized_response", "(2*p - 1)*log(p/(1-p))", "==", 1, TRUE, "Table II, alpha = 1"),
    ("randomized_response", "log(p/(1-p))/2", "<=", None, FALSE, "D_alpha tends to log(p/(1-p))"),
    ("pure_dp", "epsilon", "<=", None, TRUE, "eps-DP is (alpha, eps)-RDP for every alpha (Prop. 3)"),
    ("pure_dp", "alpha*epsilon**2/2", "<=", None, TRUE, "Bun and Steinke 2016, Prop. 3.3"),
    ("pure_dp", "epsilon/2", "<=", None, FALSE, "the worst pair reaches eps as alpha -> oo"),
    ("k_randomized_response", "epsilon", "<=", None, TRUE, "k-ary randomized response is eps-DP"),
    ("discrete_gaussian", "alpha*sensitivity**2/(2*sigma**2)", "<=", None, TRUE,
     "Canonne, Kamath and Steinke 2020, Prop. 5"),
    ("discrete_laplace", "sensitivity/(2*b)", "<=", None, FALSE, "D_alpha tends to Delta/b"),
    ("cauchy", "log(1 + sensitivity**2/(4*gamma**2))", "==", 1, TRUE,
     "KL of Cauchy laws of one scale (Chyzak and Nielsen 2019)"),
    ("cauchy", "log(1 + sensitivity**2/(2*gamma**2))", "==", 1, FALSE, "another scale inside the log"),
    ("subsampled_gaussian", "alpha/(2*sigma**2)", "<=", None, TRUE,
     "joint quasi-convexity: a mixture with N(0, sigma^2) is no farther than N(1, sigma^2)"),
    ("subsampled_gaussian", "q**2*alpha/(8*sigma**2)", "<=", None, FALSE,
     "at q = 1 the curve is the Gaussian's alpha/(2 sigma^2), four times the claim"),
    # one order other than 1 and oo
    ("gaussian", "sensitivity**2/sigma**2", "==", 2, TRUE, "Table II at alpha = 2"),
    ("gaussian", "sensitivity**2/sigma**2", "<=", sp.Rational(5, 2), FALSE, "D_5/2 = 5 Delta^2/(4 sigma^2)"),
    ("cauchy", "log(1 + sensitivity**2/(2*gamma**2))", "==", 2, TRUE,
     "D_2 = log(1 + chi^2), the chi-square of Cauchy laws (Nielsen and Okamura 2023)"),
    ("cauchy", "log(1 + sensitivity**2/(2*gamma**2))", "==", 3, FALSE, "D_3 is not D_2"),
    ("subsampled_laplace", "alpha/(2*b**2)", "<=", None, TRUE,
     "the base Laplace is (1/b)-DP, so (1/(2 b^2))-zCDP, and subsampling does not increase it"),
    ("subsampled_laplace", "1/b", "<=", OO, TRUE,
     "D_oo = log(q e^(1/b) + 1 - q), a log of a convex combination of e^(1/b) and 1"),
    ("laplace", "sensitivity/b + exp(-sensitivity/b) - 1", ">=", None, TRUE,
     "D_alpha >= KL for alpha > 1 (Prop. 9), tight as alpha -> 1"),
    ("pure_dp", "Min(epsilon, alpha*epsilon**2/2)", "<=", None, TRUE,
     "both branches bound D: eps (Prop. 3) and alpha eps^2/2 (Bun and Steinke 2016, Prop. 3.3)"),
    ("pure_dp", "Min(9*epsilon/10, alpha*epsilon**2/2)", "<=", None, FALSE, "below D_oo = eps for large eps and alpha"),
    ("cauchy", "2*log((sensitivity + sqrt(sensitivity**2 + 4*gamma**2))/(2*gamma))", "==", OO, TRUE,
     "the log-ratio of two Cauchy densities of one scale peaks at x = (D - sqrt(D^2 + 4 gamma^2))/2"),
    ("multivariate_gaussian", "alpha*sensitivity**2/(2*sigma**2*(1 - Abs(rho)))", "==", None, TRUE,
     "alpha D^2 lambda_max(Sigma^-1)/2 over the l2 ball (Rayleigh-Ritz); Sigma's eigenvalues are sigma^2 (1 +- rho)"),
    ("multivariate_gaussian", "alpha*sensitivity**2/(2*sigma**2*(1 - rho))", "==", None, FALSE,
     "right for rho >= 0 only"),
    ("subsampled_laplace", "q/b", "<=", OO, FALSE, "log(q e^(1/b) + 1 - q) > q/b for 0 < q < 1 by the strict concavity of log (Jensen)"),
]


def _busy():
    while True:
        sum(i * i for i in range(10000))


def run_claims(rows, busy: int = 0, only=()) -> dict:
    """Check each row ``(mechanism, claim, relation, order, truth, why[, keyword arguments])`` (a built-in's
    name, or a Mechanism or a derived result as a user builds it) with ``busy`` CPU-bound processes beside,
    print one line per row, and return the counts: right, inconclusive, WRONG."""
    import rdpsym
    from rdpsym import mechanisms

    workers = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(busy)]
    for p in workers:
        p.start()
    counts = {"right": 0, "inconclusive": 0, "WRONG": 0}
    try:
        for name, claim, relation, order, truth, why, *extra in rows:
            label = name if isinstance(name, str) else getattr(name, "name", None) or getattr(name, "label", "target")
            if only and not any(o in label for o in only):
                continue
            target = mechanisms.get(name) if isinstance(name, str) else name
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                v = rdpsym.check_claim(target, claim, relation, order=order, **(extra[0] if extra else {}))
                got = v.verdict.value
            except Exception as exc:  # noqa: BLE001 - an error is reported as the row's outcome
                got = f"error: {exc}"[:80]
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            expected = ("proved", "confirmed") if truth == TRUE else ("refuted",)
            outcome = "right" if got in expected else "inconclusive" if got == "inconclusive" else "WRONG"
            counts[outcome] += 1
            where = "" if order is None else f" at order {order}"
            print(f"{outcome:12s} {label}: D {relation} {claim}{where}: expected {'/'.join(expected)}, got {got} "
                  f"({wall:.1f} s, {cpu:.1f} CPU s; {why})", flush=True)
    finally:
        for p in workers:
            p.terminate()
    return counts


def main(argv=None, rows=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound processes beside the checks")
    ap.add_argument("--only", action="append", default=[], help="run only claims whose mechanism contains this")
    args = ap.parse_args(argv)
    counts = run_claims(CLAIMS if rows is None else rows, args.busy, args.only)
    total = sum(counts.values())
    print(f"{total} claims, {args.busy} busy process(es): {counts['right']} right, {counts['inconclusive']} "
          f"inconclusive, {counts['WRONG']} WRONG")
    return 1 if counts["WRONG"] else 0


if __name__ == "__main__":
    sys.exit(main())
