"""Replay time and tamper detection of claim certificates (rdpsym-certificate/1).

Run:  python benchmarks/certificates.py [DIR ...]

For every certificate (default: the regression registry's, rdpsym/regress/registry.certificates/, and the
Table II rows', proofs/certificates/*.json): the replay's outcome and wall-clock and CPU seconds (target:
at most 10 s each), then the same certificate with its claim altered and with its divergence altered
(each multiplied by 1 + 1e-6, and with 1/1000 added), each of which must fail its replay.

Printed per certificate: method, holds, seconds, CPU seconds, size, and the four tamperings' outcomes
("caught" when the replay fails, "MISSED" otherwise); a summary at the end.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAMPERINGS = {"x(1+1e-6)": lambda s: f"Mul(Rational(1000001, 1000000), {s})", "+1/1000": lambda s: f"Add({s}, Rational(1, 1000))"}


def main(dirs) -> int:
    from rdpsym import Certificate

    files = [f for d in dirs for f in sorted(Path(d).glob("*.json"))]
    worst, missed, failed = 0.0, 0, 0
    for f in files:
        text = f.read_text()
        cert = Certificate.from_json(text)
        wall, cpu = time.perf_counter(), time.process_time()
        r = cert.check()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        worst = max(worst, wall)
        failed += not r.holds
        caught = []
        for key in ("claim", "divergence"):
            data = json.loads(text)
            if data[key] is None:
                caught.append(f"{key}: none")
                continue
            for name, change in TAMPERINGS.items():
                altered = dict(data, **{key: change(data[key])})
                holds = Certificate.from_json(json.dumps(altered)).check().holds
                missed += holds
                caught.append(f"{key} {name}: {'MISSED' if holds else 'caught'}")
        print(f"{f.parent.name}/{f.name}: {cert.verdict} by {cert.method}, holds={r.holds}, {wall:.2f} s "
              f"({cpu:.2f} CPU s), {len(text) // 1024} KiB; " + "; ".join(caught))
        if not r.holds:
            print(f"    {r.reason}")
    print(f"{len(files)} certificates: {len(files) - failed} hold, slowest replay {worst:.2f} s, "
          f"{missed} tampering(s) missed")
    return 1 if (failed or missed or worst > 10) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or [ROOT / "rdpsym/regress/registry.certificates", ROOT / "proofs/certificates"]))
