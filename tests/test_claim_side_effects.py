"""A claim check leaves nothing behind in the working directory (hypothesis keeps a cache of constants in
``.hypothesis/`` there unless told otherwise)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sympy as sp
import rdpsym
s = sp.Symbol("s", positive=True)
r = rdpsym.DivergenceResult(expr=rdpsym.alpha * s**2 / 2, status=rdpsym.Status.CLOSED_FORM, symbols=(s,))
v = rdpsym.check_claim(r, "alpha*s**2", "<=", search=20)
print(v.verdict.value)
"""


def test_a_claim_check_writes_no_hypothesis_directory_in_the_working_directory(tmp_path):
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in ("proved", "confirmed"), done.stdout
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())
