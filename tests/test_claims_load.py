"""A claim's verdict does not depend on how fast the machine is: budgets count work, never seconds.

The same check is run on an idle machine and under load (two CPU-bound processes competing for the
cores, or a clock that runs five times faster than it should, as a machine five times slower would see
it); the verdict and the evidence (durations aside) must be the same. Wall-clock limits remain only as
hang guards far above the typical time.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from rdpsym import mechanisms
from rdpsym.claims import Verdict, check_claim

# a true bound tight as alpha -> oo, with the proof switched off: the certified pass spends its whole budget of
# boxes and leaves the box unfinished (inconclusive); how far it got is in the evidence ("box budget spent
# after N boxes"): with a budget of seconds, N depended on the machine's speed
TIGHT = ("laplace", "1/b + 1/(alpha*b)", "<=")
BOXES = 3000


def _evidence(verdict) -> list[str]:
    """The evidence with durations removed ("12.5 s" -> "<t> s")."""
    return [re.sub(r"\d+(\.\d+)? s\b", "<t> s", line) for line in verdict.evidence]


def _check(name, claim, relation):
    return check_claim(mechanisms.get(name), claim, relation, search=20, certify_boxes=BOXES, prove=False)


class _FastClock:
    """A stand-in for the ``time`` module whose clocks run ``speed`` times too fast."""

    def __init__(self, speed: float):
        self.speed, self.start = speed, time.monotonic()

    def _now(self):
        real = time.monotonic()
        return self.start + (real - self.start) * self.speed

    def monotonic(self):
        return self._now()

    def perf_counter(self):
        return self._now()

    def __getattr__(self, name):
        return getattr(time, name)


def _modules_reading_a_clock():
    import rdpsym.claims as claims_package

    out = []
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(claims_package.__name__ + ".") and getattr(module, "time", None) is time:
            out.append(module)
    return out


def test_the_verdict_and_evidence_are_the_same_when_the_clock_runs_five_times_faster(monkeypatch):
    idle = _check(*TIGHT)
    assert idle.verdict is Verdict.INCONCLUSIVE, str(idle)
    assert any("box budget spent after" in line for line in idle.evidence), idle.evidence
    clock = _FastClock(5.0)
    for module in _modules_reading_a_clock():
        monkeypatch.setattr(module, "time", clock)
    busy = _check(*TIGHT)
    assert busy.verdict is idle.verdict
    assert _evidence(busy) == _evidence(idle)


@pytest.mark.slow
def test_the_verdict_and_evidence_are_the_same_with_two_busy_processes():
    checks = [TIGHT, ("gaussian", "alpha/(2*sigma**2)", "==")]
    idle = [_check(*c) for c in checks]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.5)
        busy = [_check(*c) for c in checks]
    finally:
        for p in hogs:
            p.kill()
            p.wait()
    for a, b in zip(idle, busy):
        assert b.verdict is a.verdict, (str(a), str(b))
        assert _evidence(b) == _evidence(a)
    assert idle[1].verdict is Verdict.CONFIRMED and idle[1].certificate is not None


@pytest.mark.slow
def test_a_numeric_curve_evaluates_every_grid_point_however_slow_the_machine(monkeypatch):
    """The regression registry's Cauchy KL entry (a numeric curve): with a clock ten times too fast a
    budget of seconds dropped points ("not reached within the 45 s budget"); a count of points does not."""
    from rdpsym.regress import default_registry, load_registry, run_entry

    clock = _FastClock(10.0)
    for module in _modules_reading_a_clock():
        monkeypatch.setattr(module, "time", clock)
    (entry,) = [e for e in load_registry(default_registry()) if e.name == "cauchy-location/kl"]
    row = run_entry(entry, search=10, certificates=False)
    assert row.verdict == "confirmed", row.detail
    text = "\n".join(row.report.evidence)
    assert "could not be decided" not in text and "not evaluated" not in text, text
