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

import asyncio
import contextlib
import queue as queue_mod
import threading
import time
import traceback as tb
from collections import deque
from typing import Any, Callable, Iterator, Sequence

from .local import POLL_SECONDS, _error_text, running_task
from .report import TaskResult, TaskStatus

__all__ = ["SchedulerUnreachable", "DaskMissing", "check_address", "connect", "connected", "futures_backend",
           "is_dask_client"]

#: how long connecting to a scheduler address may take before :class:`SchedulerUnreachable`
CONNECT_TIMEOUT = "3s"
#: how long a scheduler without workers is waited on for its first worker (tasks would queue forever)
WORKERS_TIMEOUT = 15.0
#: how long the client may stay disconnected from its scheduler before the tasks in flight count as lost
DISCONNECTED_SECONDS = 10.0
#: address schemes with a host and a port (``inproc://`` addresses have none)
_PORTED = ("tcp", "tls", "ws", "wss", "ucx")


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


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Silence the log records of dask.distributed and its event loop (tornado, asyncio) for the duration:
    a scheduler that dies makes the client log each reconnection attempt with a traceback on stderr,
    while the sweep itself reports every task it lost (``failed`` / ``cancelled``). For the command line;
    a library caller keeps its own logging."""
    _import_distributed()
    import logging

    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in ("distributed", "tornado")]
    loggers = [logging.getLogger(n) for n in names + ["distributed", "tornado", "asyncio"]]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def is_dask_client(obj: Any) -> bool:
    mod = type(obj).__module__ or ""
    if not mod.startswith("distributed"):
        return False
    return type(obj).__name__ == "Client"


def check_address(address: str, argument: str = "executor") -> str:
    """``address`` if it reads as a Dask scheduler address, ``scheme://host:port`` or ``host:port`` (a port
    of 1 to 65535; ``inproc://...`` as it is); else ``ValueError`` naming ``argument`` and the rule."""
    from .._numbers import ArgumentError

    rule = "a Dask scheduler address such as tcp://host:8786 (a host and a port)"
    text = address.strip() if isinstance(address, str) else ""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme == "inproc" and rest:
        return text
    host, colon, port = rest.rstrip("/").rpartition(":")
    if (scheme not in _PORTED or not colon or not host.strip("[]") or not port.isascii() or not port.isdigit()
            or not 0 < int(port) < 65536 or any(c.isspace() for c in rest)):
        raise ArgumentError(argument, rule, address)
    return text


def _reachable(address: str) -> None:
    """A TCP connection to the address's host and port opens within :data:`CONNECT_TIMEOUT`, else
    :class:`SchedulerUnreachable` (checked before a Client exists: a Client that fails to connect
    complains on stderr when it is collected)."""
    import socket

    scheme, _, rest = address.partition("://") if "://" in address else ("tcp", "", address)
    if scheme not in ("tcp", "tls", "ws", "wss"):
        return
    host, _, port = rest.rstrip("/").rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=float(CONNECT_TIMEOUT.rstrip("s"))):
            pass
    except OSError as exc:
        raise SchedulerUnreachable(f"executor: no Dask scheduler answered at {address!r} within "
                                   f"{CONNECT_TIMEOUT} ({_error_text(exc)}); start one with `dask scheduler` "
                                   "and workers with `dask worker ADDRESS --nthreads 1`") from exc


def connect(address: str):
    """A ``distributed.Client`` for the scheduler at ``address`` (``tcp://host:port``) that has at least one
    worker; :class:`SchedulerUnreachable` within a few seconds when no scheduler answers, or within
    :data:`WORKERS_TIMEOUT` when no worker joins it (the tasks would wait forever)."""
    address = check_address(address)
    distributed = _import_distributed()
    _reachable(address)
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:  # CommClosedError is an OSError subclass in distributed
        raise SchedulerUnreachable(f"executor: no Dask scheduler answered at {address!r} within "
                                   f"{CONNECT_TIMEOUT} ({_error_text(exc)}); start one with `dask scheduler` "
                                   "and workers with `dask worker ADDRESS --nthreads 1`") from exc
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - dask's TimeoutError, a lost scheduler
        _close_quietly(client)
        raise SchedulerUnreachable(f"executor: the Dask scheduler at {address!r} has no workers (none joined "
                                   f"within {WORKERS_TIMEOUT:g} s: {_error_text(exc)}); start them with "
                                   "`dask worker ADDRESS --nthreads 1`") from exc
    return client


def _close_quietly(client) -> None:
    try:
        client.close(timeout=5)
    except Exception:  # noqa: BLE001 - the scheduler may be gone already
        pass


def connected(client) -> bool:
    """Whether a Dask client still talks to its scheduler (a plain executor always does)."""
    status = getattr(client, "status", "running")
    return status in ("running", "newly-created")


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
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - reported for this task (a step's StepTimeout too)
            return ("failed", None, _error_text(exc), tb.format_exc(), time.perf_counter() - start)


def futures_backend(submit: Callable[..., Any], fn_ref: Any, items: Sequence[tuple[int, str, Any]], *,
                    slots: int, timeout: float | None, cut: list[int], client: Any = None) -> Iterator[TaskResult | None]:
    """Submit ``_call(fn_ref, task)`` with ``submit`` (``client.submit`` or ``executor.submit``), at most
    ``slots`` at a time, and yield each outcome as it arrives. With a Dask ``client``: when it has lost
    its scheduler for :data:`DISCONNECTED_SECONDS`, every task in flight or not yet submitted is
    ``failed`` ("the scheduler was lost"), never waited on forever and never counted as done."""
    done_q: queue_mod.SimpleQueue = queue_mod.SimpleQueue()
    pending = deque(items)
    inflight: dict[Any, tuple[int, str, float]] = {}
    lost_since: float | None = None
    try:
        while pending or inflight:
            if client is not None:
                if connected(client):
                    lost_since = None
                elif lost_since is None:
                    lost_since = time.monotonic()
                elif time.monotonic() - lost_since >= DISCONNECTED_SECONDS:
                    why = (f"the Dask scheduler was lost (the client has been {getattr(client, 'status', '?')} for "
                           f"{DISCONNECTED_SECONDS:g} s); this task was not run to the end")
                    for fut, (index, key, t0) in list(inflight.items()):
                        del inflight[fut]
                        yield TaskResult(index, key, TaskStatus.FAILED, error=why, seconds=time.monotonic() - t0,
                                         attempts=1)
                    while pending:
                        index, key, _ = pending.popleft()
                        if index <= cut[0]:
                            yield TaskResult(index, key, TaskStatus.FAILED, error=why)
                    return
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
    """The task's outcome from its finished future. A future that was cancelled or lost (its scheduler
    died, its worker was killed) is a task not run to the end, never a result: ``cancelled``/``failed``
    with the reason (no ``CancelledError`` escapes, whichever call raises it)."""
    import concurrent.futures

    try:
        if fut.cancelled():
            return TaskResult(index, key, TaskStatus.CANCELLED, error="the future was cancelled (its scheduler or "
                              "worker went away)", seconds=elapsed, attempts=1)
        exc = fut.exception()
        if exc is None:
            status, value, error, trace, seconds = fut.result()
    except (concurrent.futures.CancelledError, asyncio.CancelledError) as err:
        return TaskResult(index, key, TaskStatus.CANCELLED, error=f"the future was cancelled (its scheduler or "
                          f"worker went away): {_error_text(err)}", seconds=elapsed, attempts=1)
    except Exception as err:  # noqa: BLE001 - dask raises from exception() and result() on a lost future
        exc = err
    if exc is not None:  # the infrastructure failed (KilledWorker, BrokenProcessPool, lost connection)
        return TaskResult(index, key, TaskStatus.FAILED, error=f"the executor lost this task: {_error_text(exc)}",
                          seconds=elapsed, attempts=1)
    return TaskResult(index, key, TaskStatus(status), value, error, trace, seconds, 1)
