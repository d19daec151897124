"""Local back ends: in-process (serial) and a pool of worker processes.

Why not ``concurrent.futures.ProcessPoolExecutor``? It can neither stop one running task (a time limit
would have to kill the whole pool) nor say which task a dead worker was running (every pending future
fails with ``BrokenProcessPool``). Each worker here is a ``multiprocessing.Process`` that runs exactly
one task at a time, handed over a pipe, so the parent always knows which task a worker holds: a task
over its time limit is stopped by killing that one worker, and a worker that dies (``os._exit``, a
segfault, the OOM killer) costs exactly the task it held, which is retried ``retries`` times and then
reported as ``failed``. A replacement worker is started and the other tasks carry on.

Processes, not threads: sympy and mpmath are pure Python and hold the GIL.

Start method: ``fork`` where the platform has it (Linux), else ``spawn``. A forked worker inherits the
parent's memory: its imports, warmed caches, and its string-hash seed, so set iteration orders, and
hence results, are bit-identical to a serial run in the parent; the function need not even be
picklable. With ``spawn`` (or ``forkserver``) the function and tasks must be picklable and the workers
import everything afresh. The parent itself starts no threads (the progress bar is refreshed from the
dispatch loop), so forking is safe.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
import traceback as tb
from collections import Counter, deque
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .._timeout import StepTimeout, die_with_parent, limit_process_memory, time_limit
from .report import TaskResult, TaskStatus

__all__ = ["local_cores", "serial_backend", "process_backend"]

#: how often (seconds) the dispatch loop wakes up to check time limits and refresh the progress bar
POLL_SECONDS = 0.2


_task_state = threading.local()


def inside_task() -> bool:
    """True while a task of a sweep is running in this thread (in a worker process or on Dask)."""
    return getattr(_task_state, "depth", 0) > 0


@contextmanager
def running_task():
    _task_state.depth = getattr(_task_state, "depth", 0) + 1
    try:
        yield
    finally:
        _task_state.depth -= 1


def local_cores() -> int:
    """Cores this process may run on (``sched_getaffinity`` where available, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------------------------------
# serial
# --------------------------------------------------------------------------------------------------
def check_serial_timeout(timeout: float | None) -> None:
    if timeout and (threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer")):
        raise ValueError("timeout: a serial sweep can enforce a time limit only in the main thread of a POSIX "
                         "process (it uses SIGALRM); use executor='processes' or an int number of workers")


def serial_backend(fn: Callable[[Any], Any], items: Sequence[tuple[int, str, Any]], *, timeout: float | None,
                   cut: list[int]) -> Iterator[TaskResult | None]:
    """Run the tasks one after the other in this process, in order."""
    check_serial_timeout(timeout)
    for index, key, task in items:
        if index > cut[0]:
            continue
        start = time.perf_counter()
        # the package's one time limit (rdpsym._timeout): SIGALRM, re-fired until the task has exited
        limit = time_limit(timeout, clock="wall") if timeout else None
        try:
            with limit or nullcontext():
                value = fn(task)
        except StepTimeout as exc:
            took = time.perf_counter() - start
            if limit is not None and limit.expired:
                yield TaskResult(index, key, TaskStatus.TIMEOUT, error=f"exceeded the time limit of {timeout:g} s",
                                 seconds=took, attempts=1)
            else:  # a step's own time limit, not caught by the task: the task failed
                yield TaskResult(index, key, TaskStatus.FAILED, error=error_text(exc), traceback=tb.format_exc(),
                                 seconds=took, attempts=1)
            continue
        except Exception as exc:  # noqa: BLE001 - reported for this task, the sweep goes on
            took = time.perf_counter() - start
            # (time_limit turns an exception that ends the task after its deadline into StepTimeout; this
            # stays as a guard)
            status = TaskStatus.TIMEOUT if timeout and took >= timeout else TaskStatus.FAILED
            yield TaskResult(index, key, status, error=error_text(exc), traceback=tb.format_exc(),
                             seconds=took, attempts=1)
            continue
        yield TaskResult(index, key, TaskStatus.DONE, value, seconds=time.perf_counter() - start, attempts=1)


# --------------------------------------------------------------------------------------------------
# worker processes
# --------------------------------------------------------------------------------------------------
def _worker_main(conn, fn, parent: int | None = None) -> None:
    """A worker: receive ``(index, task)``, send back ``(status, index, value, error, traceback, seconds)``;
    ``None`` or a closed pipe ends it. It dies with its parent (a parent killed by a signal leaves no
    worker running, holding the caller's stdout and stderr), and its data is limited like the parent's
    (``RDPSYM_MEMORY_MB``): a task that would exhaust memory fails with ``MemoryError``, the worker lives."""
    die_with_parent()
    if parent is not None and os.getppid() != parent:  # the parent died before that took effect
        return
    # Ctrl-C in a terminal reaches the whole process group; the parent decides what happens. SIGTERM is
    # not the parent's handler (which turns it into an orderly stop of the parent): it ends a worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        limit_process_memory()
    except ValueError:  # a bad RDPSYM_MEMORY_MB: the parent reports it; the worker runs unlimited
        pass
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        index, task = msg
        start = time.perf_counter()
        try:
            with running_task():
                out = ("done", index, fn(task), "", "")
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: reported, the worker lives on
            out = ("failed", index, None, error_text(exc), tb.format_exc())
        out += (time.perf_counter() - start,)
        try:
            conn.send(out)  # pickles first, so a failure here writes nothing
        except Exception as exc:  # noqa: BLE001 - a worker boundary: pickling runs the value's own code
            conn.send(("failed", index, None, f"the task's result cannot be sent back to the parent "
                       f"(it must be picklable): {error_text(exc)}", "", out[-1]))


@dataclass(eq=False)
class _Worker:
    proc: Any
    conn: Any
    current: tuple[int, str, Any] | None = None
    started: float = 0.0

    def stop(self, kill: bool) -> None:
        try:
            if kill or self.current is not None:
                self.proc.kill()
            else:
                try:
                    self.conn.send(None)
                except OSError:
                    pass
            self.proc.join(timeout=2)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(timeout=2)
        finally:
            self.conn.close()


def _death_text(proc) -> str:
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def process_backend(fn: Callable[[Any], Any], items: Sequence[tuple[int, str, Any]], *, workers: int,
                    timeout: float | None, retries: int, cut: list[int], mp_context: str) -> Iterator[TaskResult | None]:
    """Run the tasks on ``workers`` worker processes; yield each outcome as it arrives (``None`` now and
    then, so the caller can refresh a progress bar)."""
    ctx = multiprocessing.get_context(mp_context)
    queue = deque(items)
    attempts: Counter[int] = Counter()
    pool: list[_Worker | None] = []

    def start_worker() -> _Worker:
        parent, child = ctx.Pipe(duplex=True)
        # (a forkserver's workers are the server's children, not this process's)
        parent_pid = None if mp_context == "forkserver" else os.getpid()
        proc = ctx.Process(target=_worker_main, args=(child, fn, parent_pid), daemon=True, name="rdpsym-worker")
        try:
            proc.start()
        except Exception as exc:  # noqa: BLE001 - pickling fn for spawn/forkserver runs its own code: a usage error
            parent.close()
            raise ValueError(f"fn cannot be sent to worker processes with mp_context={mp_context!r} (it must be "
                             f"picklable: a module-level function or functools.partial of one): {error_text(exc)}") from exc
        finally:
            child.close()
        return _Worker(proc, parent)

    try:
        pool = [start_worker() for _ in range(min(workers, len(items)))]
        while True:
            # hand a task to every idle worker
            for i, w in enumerate(pool):
                if w is None:  # replaced lazily: a dead or killed worker's slot
                    if not queue:
                        continue
                    pool[i] = w = start_worker()
                while w.current is None and queue:
                    index, key, task = queue.popleft()
                    if index > cut[0]:
                        continue  # stopped early: reported as cancelled by the caller
                    try:
                        w.conn.send((index, task))
                    except (OSError, EOFError):  # the idle worker died: replace it, retry this task
                        queue.appendleft((index, key, task))
                        w.stop(kill=True)
                        pool[i] = w = start_worker()
                        continue
                    except Exception as exc:  # noqa: BLE001 - pickling the task failed; nothing was written
                        yield TaskResult(index, key, TaskStatus.FAILED, error="the task cannot be sent to a "
                                         f"worker process (it must be picklable): {error_text(exc)}")
                        continue
                    attempts[index] += 1
                    w.current, w.started = (index, key, task), time.monotonic()
            busy = [w for w in pool if w is not None and w.current is not None]
            if not busy:
                return
            now = time.monotonic()
            wait = POLL_SECONDS
            if timeout:
                wait = max(0.0, min(wait, min(w.started + timeout - now for w in busy)))
            ready = set(multiprocessing.connection.wait([w.conn for w in busy] + [w.proc.sentinel for w in busy],
                                                        timeout=wait))
            now = time.monotonic()
            for w in busy:
                index, key, task = w.current
                if w.conn in ready or w.proc.sentinel in ready:
                    msg = None
                    try:
                        if w.conn.poll():
                            msg = w.conn.recv()
                    except (EOFError, OSError):
                        msg = None
                    if msg is not None:
                        status, _, value, error, trace, seconds = msg
                        w.current = None
                        yield TaskResult(index, key, TaskStatus(status), value, error, trace, seconds, attempts[index])
                        continue
                    # the worker died while running this task
                    w.proc.join(timeout=2)
                    why = _death_text(w.proc)
                    w.current = None
                    w.stop(kill=True)
                    pool[pool.index(w)] = None
                    if attempts[index] <= retries and index <= cut[0]:
                        queue.appendleft((index, key, task))
                    else:
                        yield TaskResult(index, key, TaskStatus.FAILED,
                                         error=f"the worker process died while running this task ({why}; "
                                               f"{attempts[index]} attempt{'s' * (attempts[index] > 1)})",
                                         seconds=now - w.started, attempts=attempts[index])
                elif timeout and now - w.started >= timeout:
                    w.current = None
                    w.stop(kill=True)
                    pool[pool.index(w)] = None
                    yield TaskResult(index, key, TaskStatus.TIMEOUT, error=f"exceeded the time limit of {timeout:g} s"
                                     " (its worker process was killed)", seconds=now - w.started,
                                     attempts=attempts[index])
            yield None
    finally:
        for w in pool:
            if w is None:
                continue
            try:
                w.stop(kill=w.current is not None)
            except Exception:  # noqa: BLE001 - best effort while shutting down
                pass
