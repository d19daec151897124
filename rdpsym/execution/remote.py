"""Back ends built on futures: a Dask ``distributed.Client`` (a cluster) or any
``concurrent.futures.Executor`` the caller already has (e.g. an MPI pool).

Dask is an optional extra (``pip install 'rdpsym[distributed]'``) and is imported only here, only when
asked for. The function is scattered to every worker once (``Client.scatter(..., broadcast=True)``), so
each task ships only its own small argument.

Limits, stated rather than hidden:

* Dask runs tasks in worker *threads*. mpmath's precision is process-global, so tasks in threads of one
  process would corrupt each other's digits: the tasks of one worker process run one at a time (a lock),
  and sympy and mpmath hold the GIL anyway. Start workers with one thread each and several processes
  (``dask worker ADDRESS --nworkers N --nthreads 1``); extra threads only queue.
* A time limit cannot stop a thread. Here it counts from submission (at most one task per worker thread
  is in flight while a time limit is set, so a task starts when submitted); the late task is reported as
  ``timeout`` and its future cancelled, but the worker thread runs it to its end.
* A worker that dies is Dask's business: it reschedules the task and, after
  ``distributed.scheduler.allowed-failures`` deaths, fails it with ``KilledWorker``, which is reported
  as ``failed`` for that task.
* Results are the same values as a serial run's; bit-identical when the workers' ``PYTHONHASHSEED``
  matches the client's (set iteration order in sympy depends on it).
"""

from __future__ import annotations

import queue as queue_mod
import threading
import time
import traceback as tb
from collections import deque
from typing import Any, Callable, Iterator, Sequence

from .local import POLL_SECONDS, _error_text, running_task
from .report import TaskResult, TaskStatus

__all__ = ["SchedulerUnreachable", "DaskMissing", "connect", "futures_backend", "is_dask_client"]

#: how long connecting to a scheduler address may take before :class:`SchedulerUnreachable`
CONNECT_TIMEOUT = "3s"


class SchedulerUnreachable(ConnectionError):
    """No Dask scheduler answered at the given address within :data:`CONNECT_TIMEOUT`."""


class DaskMissing(ImportError):
    """A Dask executor was asked for, but ``dask.distributed`` is not installed."""


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise DaskMissing("executor: running on a Dask cluster needs dask.distributed; install it with "
                          "pip install 'rdpsym[distributed]'") from exc
    return distributed


def is_dask_client(obj: Any) -> bool:
    mod = type(obj).__module__ or ""
    if not mod.startswith("distributed"):
        return False
    return type(obj).__name__ == "Client"


def connect(address: str):
    """A ``distributed.Client`` for the scheduler at ``address`` (``tcp://host:port``), or
    :class:`SchedulerUnreachable` within a few seconds."""
    distributed = _import_distributed()
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:  # CommClosedError is an OSError subclass in distributed
        raise SchedulerUnreachable(f"executor: no Dask scheduler answered at {address!r} within "
                                   f"{CONNECT_TIMEOUT} ({_error_text(exc)}); start one with `dask scheduler` "
                                   "and workers with `dask worker ADDRESS --nthreads 1`") from exc


def dask_threads(client) -> int:
    """Worker threads the cluster has right now (at least 1: tasks queue until workers join)."""
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - a scheduler still starting up
        return 1


# mpmath's working precision is process-global state (``mp.dps``, changed by ``workdps``), not
# thread-local: two tasks in threads of one process would change each other's precision and compute
# silently wrong digits. So the tasks of one process run one at a time, whatever the worker's thread
# count (they could not run in parallel anyway: sympy and mpmath hold the GIL).
_ONE_AT_A_TIME = threading.Lock()


def _call(fn: Callable[[Any], Any], task: Any):
    """Runs on the worker: the task's outcome, with its exception text rather than the exception (which
    may not unpickle on the client)."""
    with _ONE_AT_A_TIME:
        start = time.perf_counter()
        try:
            with running_task():
                return ("done", fn(task), "", "", time.perf_counter() - start)
        except Exception as exc:  # noqa: BLE001 - reported for this task
            return ("failed", None, _error_text(exc), tb.format_exc(), time.perf_counter() - start)


def futures_backend(submit: Callable[..., Any], fn_ref: Any, items: Sequence[tuple[int, str, Any]], *,
                    slots: int, timeout: float | None, cut: list[int]) -> Iterator[TaskResult | None]:
    """Submit ``_call(fn_ref, task)`` with ``submit`` (``client.submit`` or ``executor.submit``), at most
    ``slots`` at a time, and yield each outcome as it arrives."""
    done_q: queue_mod.SimpleQueue = queue_mod.SimpleQueue()
    pending = deque(items)
    inflight: dict[Any, tuple[int, str, float]] = {}
    try:
        while pending or inflight:
            while pending and len(inflight) < slots:
                index, key, task = pending.popleft()
                if index > cut[0]:
                    continue
                try:
                    fut = submit(_call, fn_ref, task)
                except Exception as exc:  # noqa: BLE001 - e.g. the task cannot be pickled
                    yield TaskResult(index, key, TaskStatus.FAILED, error=f"the task cannot be submitted: "
                                     f"{_error_text(exc)}")
                    continue
                inflight[fut] = (index, key, time.monotonic())
                fut.add_done_callback(done_q.put)
            now = time.monotonic()
            wait = POLL_SECONDS
            if timeout and inflight:
                wait = max(0.0, min(wait, min(t + timeout - now for _, _, t in inflight.values())))
            try:
                fut = done_q.get(timeout=wait)
            except queue_mod.Empty:
                fut = None
            while fut is not None:
                if fut in inflight:
                    index, key, t0 = inflight.pop(fut)
                    yield _outcome(fut, index, key, time.monotonic() - t0)
                try:
                    fut = done_q.get_nowait()
                except queue_mod.Empty:
                    fut = None
            if timeout:
                now = time.monotonic()
                for fut, (index, key, t0) in list(inflight.items()):
                    if now - t0 >= timeout:
                        del inflight[fut]
                        fut.cancel()
                        yield TaskResult(index, key, TaskStatus.TIMEOUT, error=f"exceeded the time limit of "
                                         f"{timeout:g} s (counted from submission; the worker may still be "
                                         "running it)", seconds=now - t0, attempts=1)
            yield None
    finally:
        for fut in inflight:
            try:
                fut.cancel()
            except Exception:  # noqa: BLE001 - best effort while shutting down
                pass


def _outcome(fut, index: int, key: str, elapsed: float) -> TaskResult:
    try:
        if fut.cancelled():
            return TaskResult(index, key, TaskStatus.CANCELLED, error="the future was cancelled", seconds=elapsed,
                              attempts=1)
        exc = fut.exception()
    except Exception as err:  # noqa: BLE001 - dask raises CancelledError from exception() too
        exc = err
    if exc is not None:  # the infrastructure failed (KilledWorker, BrokenProcessPool, lost connection)
        return TaskResult(index, key, TaskStatus.FAILED, error=f"the executor lost this task: {_error_text(exc)}",
                          seconds=elapsed, attempts=1)
    status, value, error, trace, seconds = fut.result()
    return TaskResult(index, key, TaskStatus(status), value, error, trace, seconds, 1)
