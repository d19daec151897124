"""Cold derivation time of pairs outside the exponential-family template (issue 15, item 3: fail fast).

Run:  PYTHONPATH=. python benchmarks/derive_fail_fast.py [--no-density-check] [NAME ...]
Target: the engine says "no closed form" for the general order in <= 10 s cold; the issue's bound is
60 s for any univariate pair. Cold = a fresh process and a fresh cache directory for every family
(each runs in its own subprocess, so sympy's caches start empty, importing rdpsym as this process
would: set PYTHONPATH to choose the copy, the path is printed); the time is that of the
``rdpsym.renyi_divergence(P, Q, x, support, cache=False)`` call alone. ``--no-density-check`` passes
``check_density=False`` too, to show what the density check (rdpsym.derive.checks) costs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

TARGET = 10.0
BOUND = 60.0

FAMILIES = {
    "cauchy": """
G, D = sp.symbols("gamma sensitivity", positive=True)
f = lambda m: G / (sp.pi * (G**2 + (x - m)**2))
P, Q, var, support = f(0), f(D), x, sp.S.Reals""",
    "student t nu=3": """
D = sp.Symbol("sensitivity", positive=True)
f = lambda m: 2 / (sp.sqrt(3) * sp.pi) * (1 + (x - m)**2 / 3)**-2
P, Q, var, support = f(0), f(D), x, sp.S.Reals""",
    "student t nu": """
D, nu = sp.symbols("sensitivity nu", positive=True)
f = lambda m: sp.gamma((nu + 1) / 2) / (sp.sqrt(nu * sp.pi) * sp.gamma(nu / 2)) * (1 + (x - m)**2 / nu)**(-(nu + 1) / 2)
P, Q, var, support = f(0), f(D), x, sp.S.Reals""",
    "generalised gaussian p=3": """
D, s = sp.symbols("sensitivity scale", positive=True)
f = lambda m: 3 / (2 * s * sp.gamma(sp.Rational(1, 3))) * sp.exp(-sp.Abs((x - m) / s)**3)
P, Q, var, support = f(0), f(D), x, sp.S.Reals""",
    "generalised gaussian p": """
D, s, p = sp.symbols("sensitivity scale p", positive=True)
f = lambda m: p / (2 * s * sp.gamma(1 / p)) * sp.exp(-sp.Abs((x - m) / s)**p)
P, Q, var, support = f(0), f(D), x, sp.S.Reals""",
    "skellam": """
mu = sp.Symbol("mu", positive=True)
k = sp.Symbol("k", integer=True)
f = lambda shift: sp.exp(-2 * mu) * sp.besseli(k - shift, 2 * mu)
P, Q, var, support = f(0), f(1), k, sp.S.Integers""",
}

CHILD = """
import json, sys, time
import sympy as sp
import rdpsym
x = sp.Symbol("x", real=True)
{family}
start = time.perf_counter()
r = rdpsym.renyi_divergence(P, Q, var, support, cache=False, check_density={check})
seconds = time.perf_counter() - start
json.dump(dict(seconds=seconds, status=r.status.value, reason=r.reason, kl=r.kl is not None,
               dinf=r.max_divergence is not None, where=rdpsym.__file__), sys.stdout)
"""


def run(name: str, check_density: bool) -> dict:
    """One cold derivation in a fresh process with a fresh cache directory."""
    code = CHILD.format(family=FAMILIES[name], check=check_density)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, RDPSYM_CACHE_DIR=cache)
        # a script file, not -c: the child's sys.path then starts with the temporary directory, not with
        # the working directory, so PYTHONPATH alone chooses which rdpsym is measured
        script = os.path.join(cache, "derive.py")
        with open(script, "w") as f:
            f.write(code)
        out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        tail = out.stderr.strip().splitlines()[-1:] or ["no output"]
        return dict(seconds=float("nan"), status="error", reason=tail[0], kl=False, dinf=False, where="?")
    return json.loads(out.stdout)


def main(argv: list[str]) -> None:
    check = "--no-density-check" not in argv
    names = [a for a in argv if not a.startswith("--")] or list(FAMILIES)
    print(f"cold renyi_divergence(..., cache=False, check_density={check}); target {TARGET:g} s, bound {BOUND:g} s")
    where = set()
    print(f"{'family':26s} {'seconds':>8s} {'/ target':>9s}  {'status':13s} KL  D_inf  reason (first)")
    for name in names:
        row = run(name, check)
        first = row["reason"].split("; ")[0]
        print(f"{name:26s} {row['seconds']:8.1f} {row['seconds'] / TARGET:9.2f}  {row['status']:13s} "
              f"{'yes' if row['kl'] else 'no ':3s} {'yes' if row['dinf'] else 'no ':5s}  {first[:90]}", flush=True)
        where.add(row.get("where", "?"))
    print("rdpsym measured:", ", ".join(sorted(where)))


if __name__ == "__main__":
    main(sys.argv[1:])
