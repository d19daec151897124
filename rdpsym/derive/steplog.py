"""The provenance log of one derivation: each step timed (within the step's time limit) and recorded."""

from __future__ import annotations

import time

from .result import Step
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["StepLog"]


class StepLog:
    """Collects the provenance steps of one derivation."""

    def __init__(self):
        self.steps: list[Step] = []

    def timed(self, name: str, fn, *args, seconds: float | None = None, detail=None):
        start = time.perf_counter()
        try:
            value = run_with_time_limit(fn, *args, seconds=seconds) if seconds else fn(*args)
        except StepTimeout as exc:
            self.steps.append(Step(name, f"timed out: {exc}", time.perf_counter() - start))
            raise
        text = detail(value) if callable(detail) else (detail or "")
        self.steps.append(Step(name, text, time.perf_counter() - start))
        return value

    def note(self, name: str, detail: str, expr=None):
        self.steps.append(Step(name, detail, 0.0, expr))
