"""What a sweep returns: one :class:`TaskResult` per task, in task order, inside a :class:`SweepReport`."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Iterator

__all__ = ["TaskStatus", "TaskResult", "SweepReport", "SweepError", "SweepInterrupted"]


class TaskStatus(enum.StrEnum):
    """How one task ended.

    ``done``       the task returned; ``result`` holds its return value.
    ``failed``     the task raised, or its worker process died while running it, or its task or result
                   could not be sent between processes; ``error`` says which.
    ``timeout``    the task ran longer than the sweep's ``timeout`` and was stopped.
    ``cancelled``  the task was never run to the end: the sweep was interrupted (Ctrl-C) or stopped
                   early (``stop_when``).
    """

    DONE = "done"
    FAILED = "failed"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class TaskResult:
    """The outcome of one task.

    ``index`` is the task's position in the input, ``key`` its identity in a results file, ``status``
    a :class:`TaskStatus`, ``result`` the task's return value (``None`` unless ``done``), ``error`` the
    exception as ``"Type: message"`` (or why the task was lost), ``traceback`` the worker-side
    traceback, ``seconds`` the task's own run time (0 for resumed and cancelled tasks), ``attempts``
    how many times it was started, ``resumed`` whether it was read back from a results file.
    Only the fields that describe *what* was computed (index, key, status, result, error) take part
    in ``==``, so a serial and a parallel report compare equal when they computed the same things.
    """

    index: int
    key: str
    status: TaskStatus
    result: Any = None
    error: str = ""
    traceback: str = field(default="", compare=False, repr=False)
    seconds: float = field(default=0.0, compare=False)
    attempts: int = field(default=0, compare=False)
    resumed: bool = field(default=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status is TaskStatus.DONE

    def describe(self) -> str:
        s = f"[{self.status}] task {self.index} ({self.key})"
        if self.error:
            s += f": {self.error}"
        return s


class SweepError(RuntimeError):
    """Raised by :meth:`SweepReport.results` when some task did not finish; ``report`` holds it all."""

    def __init__(self, message: str, report: "SweepReport"):
        super().__init__(message)
        self.report = report


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`~rdpsym.execution.run_tasks`.

    A ``KeyboardInterrupt`` (so a script still stops), carrying the partial ``report``: finished tasks
    are ``done``/``failed``/``timeout``, the rest ``cancelled``. Finished tasks are already in the
    results file, if one was given, so a rerun resumes.
    """

    def __init__(self, report: "SweepReport"):
        super().__init__(f"sweep interrupted: {report}")
        self.report = report


@dataclass(frozen=True)
class SweepReport:
    """All tasks' outcomes, ordered like the input tasks (whatever order they completed in).

    ``executor`` describes where the sweep ran (``"serial"``, ``"4 local processes"``,
    ``"dask tcp://..."``), ``workers`` how many ran at once, ``seconds`` the wall time,
    ``interrupted`` whether Ctrl-C ended it, ``stopped`` whether ``stop_when`` ended it early.
    Iterating, ``len`` and indexing go over the :class:`TaskResult` entries.
    """

    entries: tuple[TaskResult, ...]
    executor: str = field(default="serial", compare=False)
    workers: int = field(default=1, compare=False)
    seconds: float = field(default=0.0, compare=False)
    interrupted: bool = field(default=False, compare=False)
    stopped: bool = field(default=False, compare=False)

    def __iter__(self) -> Iterator[TaskResult]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, i: int) -> TaskResult:
        return self.entries[i]

    @property
    def ok(self) -> bool:
        """Every task is ``done`` (true for an empty sweep)."""
        return all(e.ok for e in self.entries)

    @property
    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in TaskStatus}
        for e in self.entries:
            out[e.status.value] += 1
        return out

    @property
    def resumed(self) -> int:
        """How many results were read back from a results file instead of computed."""
        return sum(e.resumed for e in self.entries)

    def by_status(self, status: TaskStatus | str) -> list[TaskResult]:
        status = TaskStatus(status)
        return [e for e in self.entries if e.status is status]

    def results(self) -> list[Any]:
        """The tasks' return values in task order; raises :class:`SweepError` unless every task is
        ``done`` (a missing result is never silently skipped)."""
        bad = [e for e in self.entries if not e.ok]
        if bad:
            lines = "; ".join(e.describe() for e in bad[:5]) + (f"; ... ({len(bad)} in all)" if len(bad) > 5 else "")
            raise SweepError(f"{len(bad)} of {len(self.entries)} tasks did not finish: {lines}", self)
        return [e.result for e in self.entries]

    def __str__(self) -> str:
        c = self.counts
        parts = [f"{c['done']} done"] + [f"{c[s]} {s}" for s in ("failed", "timeout", "cancelled") if c[s]]
        s = (f"{len(self.entries)} tasks: " + ", ".join(parts)
             + f" on {self.executor} in {self.seconds:.1f} s")
        if self.resumed:
            s += f" ({self.resumed} resumed from the results file)"
        if self.interrupted:
            s += " [interrupted]"
        if self.stopped:
            s += " [stopped early]"
        return s

    def describe(self) -> str:
        """The summary, then one line per task that is not ``done``."""
        return "\n".join([str(self)] + [e.describe() for e in self.entries if not e.ok])
