"""Results files: a sweep's finished tasks, one JSON object per line, so an interrupted sweep resumes.

Format (JSON lines, appended and flushed as each task finishes, so a crash loses at most the line being
written, which is then ignored)::

    {"rdpsym_sweep_results": 1, "fn": "rdpsym.verification.checks._check", "format": "pickle"}
    {"key": "...", "status": "done", "seconds": 0.21, "pickle": "<base64 of pickle.dumps(result)>"}
    {"key": "...", "status": "failed", "seconds": 0.01, "error": "ValueError: ..."}

``format="pickle"`` (the default) stores any picklable result (sympy expressions, mpmath numbers,
dataclasses) so that a resumed result equals a freshly computed one. Unpickling runs code: read only
results files you (or your own sweeps) wrote. ``format="json"`` stores the result as plain JSON (it must
be JSON-serialisable; tuples come back as lists): portable and safe to share.

On resume only ``done`` lines count (the last line for a key wins); failed, timed-out and cancelled
tasks run again. The header names the task function; a file written by another function is refused,
so results of one computation are never passed off as another's.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
from typing import IO, Any, Callable

from .report import TaskResult, TaskStatus

__all__ = ["FORMATS", "function_name", "ResultsFile"]

FORMATS = ("pickle", "json")
_MAGIC = "rdpsym_sweep_results"


def function_name(fn: Callable) -> str:
    """``module.qualname`` of a function (of the wrapped function for ``functools.partial``)."""
    while hasattr(fn, "func"):  # functools.partial, possibly nested
        fn = fn.func
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"


class ResultsFile:
    """Reads the finished results of an earlier run, then appends each new outcome."""

    def __init__(self, path: str | os.PathLike, fn_name: str, fmt: str = "pickle"):
        if fmt not in FORMATS:
            raise ValueError(f"results_format must be one of {FORMATS}; got {fmt!r}")
        self.path, self.fn_name, self.fmt = os.fspath(path), fn_name, fmt
        self._fh: IO[str] | None = None

    def load(self) -> dict[str, TaskResult]:
        """key -> the finished (``done``) result recorded for it; empty if the file does not exist."""
        if not os.path.exists(self.path):
            return {}
        with open(self.path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        records = []
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                # a line cut short by a crash while writing it: that task simply runs again
                continue
            records.append((n + 1, rec))
        if not records:
            return {}
        _, head = records[0]
        if not isinstance(head, dict) or head.get(_MAGIC) != 1:
            raise ValueError(f"results_file {self.path!r} is not an rdpsym sweep results file (no header line)")
        if head.get("fn") != self.fn_name:
            raise ValueError(f"results_file {self.path!r} holds results of {head.get('fn')!r}, not of "
                             f"{self.fn_name!r}; use another file")
        out: dict[str, TaskResult] = {}
        for n, rec in records[1:]:
            try:
                key, status = rec["key"], TaskStatus(rec["status"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"results_file {self.path!r}: line {n} lacks a valid key/status") from exc
            if status is not TaskStatus.DONE:
                out.pop(key, None)
                continue
            if "pickle" in rec:
                value = pickle.loads(base64.b64decode(rec["pickle"]))
            elif "result" in rec:
                value = rec["result"]
            else:
                raise ValueError(f"results_file {self.path!r}: line {n} has status done but no result")
            out[key] = TaskResult(-1, key, status, value, seconds=float(rec.get("seconds", 0.0)), resumed=True)
        return out

    def append(self, entry: TaskResult) -> None:
        """Record a finished task (cancelled tasks are not recorded: nothing was learnt)."""
        if entry.status is TaskStatus.CANCELLED or entry.resumed:
            return
        rec: dict[str, Any] = {"key": entry.key, "status": entry.status.value, "seconds": round(entry.seconds, 6)}
        if entry.status is TaskStatus.DONE:
            if self.fmt == "pickle":
                rec["pickle"] = base64.b64encode(pickle.dumps(entry.result)).decode("ascii")
            else:
                try:
                    json.dumps(entry.result, allow_nan=False)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"results_format='json': the result of task {entry.key!r} is not "
                                     f"JSON-serialisable ({exc}); use results_format='pickle'") from exc
                rec["result"] = entry.result
        else:
            rec["error"] = entry.error
        fh = self._open()
        fh.write(json.dumps(rec, allow_nan=False) + "\n")
        fh.flush()

    def _open(self) -> IO[str]:
        if self._fh is None:
            new = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
            if not new:
                # a line cut short by a crash must not glue onto the next record
                with open(self.path, "rb") as fh:
                    fh.seek(-1, os.SEEK_END)
                    cut = fh.read(1) != b"\n"
            self._fh = open(self.path, "a", encoding="utf-8")
            if new:
                self._fh.write(json.dumps({_MAGIC: 1, "fn": self.fn_name, "format": self.fmt}) + "\n")
            elif cut:
                self._fh.write("\n")
        return self._fh

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
