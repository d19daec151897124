"""Tamper with a warm cache and check, end to end, that nothing lies, runs or breaks (issue 31).

Run:  python benchmarks/cache_tampering.py     (from the repository root; about two minutes)
Targets: 0 silently wrong results, 0 code executed, 0 internal errors, every later run equal to the cold one.

A private cache (and key) is warmed by ``rdpsym derive gaussian --json``, ``rdpsym codegen gaussian`` and
``rdpsym account --add gaussian:sigma=1.1 ...``: a derivation, its generated code and the code's series.
Each tampering (random one-bit flips, 40 of the code and 10 of each other entry; changed digits;
truncation; a malicious pickle and Python code in place of an entry, each of which would create a marker
file if it ran; the issue's Gaussian 2 -> 3 and float-code 0.5 -> 0.4 edits) is applied to the pristine
cache, the three commands run (in-process memos emptied, so the disk is read as by a fresh process) and
their output is compared with the cold run's (timings aside); then they run once more, from the entries
written again.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import tempfile
import time
from pathlib import Path

COMMANDS = [["derive", "gaussian", "--json"], ["codegen", "gaussian"],
            ["account", "--add", "gaussian:sigma=1.1", "--count", "1000", "--delta", "1e-5"]]


def _runner(marker: Path):
    from click.testing import CliRunner

    from rdpsym import _cache
    from rdpsym.cli import main

    def run_all():
        _cache.clear_memos()
        outs = []
        for command in COMMANDS:
            r = CliRunner().invoke(main, command)
            text = r.stdout
            if command[0] == "derive":  # the provenance's timings differ between runs
                doc = json.loads(text)
                doc["result"]["provenance"]["steps"] = [(s["name"], "" if s["name"].endswith("total") else s["detail"])
                                                        for s in doc["result"]["provenance"]["steps"]]
                text = json.dumps(doc, sort_keys=True)
            crashed = r.exception is not None and not isinstance(r.exception, SystemExit)
            outs.append((r.exit_code, text, crashed))
        return outs

    return run_all


def _tamperings(entries: dict[str, bytes], marker: Path, rng: random.Random):
    class RunsWhenUnpickled:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').write('ran')",))

    for name, data in entries.items():
        kind = name.split("-")[0]
        for _ in range(40 if kind == "code" else 10):
            i, bit = rng.randrange(len(data)), 1 << rng.randrange(8)
            yield name, f"{kind}: bit flip", data[:i] + bytes([data[i] ^ bit]) + data[i + 1:]
        digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
        for i in rng.sample(digits, min(5, len(digits))):
            yield name, f"{kind}: digit changed", data[:i] + bytes([48 + (data[i] - 47) % 10]) + data[i + 1:]
        yield name, f"{kind}: truncated", data[: len(data) // 3]
        yield name, f"{kind}: malicious pickle", pickle.dumps(RunsWhenUnpickled())
        yield name, f"{kind}: Python code", f"open({str(marker)!r}, 'w').write('ran')\n".encode()
        if kind == "derivation" and b"Integer(2)" in data:
            i = data.index(b"Integer(2)")
            yield name, "derivation: 2 -> 3", data[:i] + b"Integer(3)" + data[i + 10:]
        if kind == "code" and b"0.5" in data:
            i = data.index(b"0.5")
            yield name, "code: 0.5 -> 0.4", data[:i] + b"0.4" + data[i + 3:]


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="rdpsym-tampering-"))
    os.environ.update(RDPSYM_CACHE_DIR=str(root / "cache"), RDPSYM_CACHE_KEY_FILE=str(root / "key"))
    os.environ.pop("RDPSYM_NO_CACHE", None)
    marker = root / "marker"
    run_all = _runner(marker)
    start = time.perf_counter()
    cold = run_all()
    assert all(code == 0 for code, _, _ in cold), cold
    print(f"cold run: {time.perf_counter() - start:.1f} s")
    cache = root / "cache"
    entries = {p.name: p.read_bytes() for p in cache.iterdir() if p.suffix == ".rdpsym"}
    counts = {"tamperings": 0, "silently wrong": 0, "code executed": 0, "internal errors": 0, "later run differs": 0}
    for name, what, data in _tamperings(entries, marker, random.Random(2024)):
        for p in cache.iterdir():
            if p.suffix == ".rdpsym":
                p.unlink()
        for n, d in entries.items():
            (cache / n).write_bytes(d)
        (cache / name).write_bytes(data)
        counts["tamperings"] += 1
        outs = run_all()
        if any(code == 4 or crashed for code, _, crashed in outs):
            counts["internal errors"] += 1
            print("internal error:", what)
        elif [o[:2] for o in outs] != [o[:2] for o in cold]:
            counts["silently wrong"] += 1
            print("differs from the cold run:", what)
        if marker.exists():
            counts["code executed"] += 1
            marker.unlink()
        if [o[:2] for o in run_all()] != [o[:2] for o in cold]:
            counts["later run differs"] += 1
            print("the later run differs:", what)
    print(counts)


if __name__ == "__main__":
    main()
