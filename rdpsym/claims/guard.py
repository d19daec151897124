"""Hang guards of a claim check: wall-clock limits that only stop a step that hangs.

A verdict never depends on how fast the machine is (the developers' brief): what decides it is counted
work (points compared, boxes bisected, sympy attempts made), never seconds. Each sympy or mpmath step of a
check still runs under a wall-clock limit, so that a step that would never end cannot hang the check,
but that limit is set at least ten times above the step's typical time, so it does not fire on a
busy machine. When it fires, the step counts against the claim like any step without an answer, and the
evidence says so: "a hang guard of N s fired in STEP" (:meth:`HangGuards.evidence`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from .._timeout import StepTimeout, deadline_passed, run_with_time_limit

__all__ = ["HangGuardFired", "HangGuards", "LIMIT_SECONDS", "LIMIT_VALUE_SECONDS", "SIMPLIFY_SECONDS",
           "DISTRIBUTION_SECONDS"]

# The guards of the steps of a check, each at least ten times the step's typical time (measured on the
# regression registry and the claim tests, with eight processes sharing two cores).
#: sympy's limit of the claim at alpha -> oo (typically well under 1 s)
LIMIT_SECONDS = 60.0
#: that limit and D_oo evaluated at one parameter point (typically milliseconds)
LIMIT_VALUE_SECONDS = 30.0
#: one simplification of claim - divergence for the certified pass (typically under 1 s)
SIMPLIFY_SECONDS = 60.0
#: whether P and Q are probability distributions at one point (a numeric mass, typically under 1 s)
DISTRIBUTION_SECONDS = 150.0


class HangGuardFired(Exception):
    """A step ran past its hang guard (an ``Exception``: an attempt that fails this way is just no answer)."""

    def __init__(self, seconds: float, step: str):
        super().__init__(f"a hang guard of {seconds:g} s fired in {step}")
        self.seconds, self.step = seconds, step


class HangGuards:
    """The guards of one check, and a record of those that fired."""

    def __init__(self):
        self.fired: Counter = Counter()

    def run(self, step: str, seconds: float, fn: Callable[..., Any], *args) -> Any:
        """``fn(*args)`` under a hang guard of ``seconds``; :class:`HangGuardFired` (recorded) if it fires.

        A time limit of an enclosing computation that expires is not this guard's: it propagates."""
        try:
            return run_with_time_limit(fn, *args, seconds=seconds, clock="wall")
        except StepTimeout:
            if deadline_passed():
                raise  # an enclosing limit expired: not ours to handle
            self.note(seconds, step)
            raise HangGuardFired(seconds, step) from None

    def note(self, seconds: float, step: str) -> None:
        """Record that the guard of ``seconds`` fired in ``step`` (for guards enforced elsewhere)."""
        self.fired[(seconds, step)] += 1

    def evidence(self) -> list[str]:
        """One line per guard that fired, with how often."""
        return [f"a hang guard of {seconds:g} s fired in {step}" + (f" ({n} times)" if n > 1 else "")
                for (seconds, step), n in self.fired.items()]
