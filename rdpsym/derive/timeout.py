"""Time limits for symbolic steps.

sympy is pure Python, so a step can be interrupted between bytecodes. In the main thread a
``SIGALRM`` timer raises :class:`StepTimeout`; elsewhere (worker threads) signals are unavailable and
the step runs in a forked child process with a hard deadline instead. Either way a symbolic step never
hangs the caller: it fails with a reason, and the engine falls back to an honest status. The one
exception is a worker thread of a daemonic process (Dask's task threads), which may not fork: there the
execution layer's per-task time limit bounds the task instead.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable

__all__ = ["StepTimeout", "run_with_time_limit", "default_step_seconds"]


class StepTimeout(Exception):
    """A symbolic step exceeded its time limit."""


def check_seconds(seconds, name: str = "step_seconds") -> float:
    """A time limit: a finite number > 0 (0 would switch setitimer's alarm off: no limit at all)."""
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of seconds > 0; got {seconds!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number of seconds > 0; got {seconds!r}")
    return value


def default_step_seconds() -> float:
    """Per-step limit in seconds: ``RDPSYM_STEP_SECONDS`` or 20."""
    return check_seconds(os.environ.get("RDPSYM_STEP_SECONDS", "20"), "RDPSYM_STEP_SECONDS")


@contextmanager
def _alarm(seconds: float):
    def handler(signum, frame):
        raise StepTimeout(f"step exceeded {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, handler)
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay:
            # Re-arm an enclosing limit with what is left of it.
            left = old_delay - (time.monotonic() - started)
            if left <= 0:
                raise StepTimeout("enclosing step exceeded its time limit")
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


def _child(conn, fn, args):
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        conn.send(("error", repr(exc)))
    finally:
        conn.close()


def run_with_time_limit(fn: Callable[..., Any], *args, seconds: float | None = None) -> Any:
    """Run ``fn(*args)``; raise :class:`StepTimeout` if it takes longer than ``seconds``."""
    seconds = default_step_seconds() if seconds is None else check_seconds(seconds)
    if threading.current_thread() is threading.main_thread():
        with _alarm(seconds):
            return fn(*args)
    if multiprocessing.current_process().daemon:
        # A thread of a daemonic worker process (a Dask worker's task thread) may not start child
        # processes, and a thread cannot be interrupted: the step runs unbounded here, and the
        # execution layer's per-task time limit (rdpsym.execution) is what reports it if it is late.
        return fn(*args)
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(seconds):
            raise StepTimeout(f"step exceeded {seconds:g} s")
        kind, payload = parent.recv()
    finally:
        proc.kill()
        proc.join()
    if kind == "error":
        raise RuntimeError(f"step failed in a worker process: {payload}")
    return payload
