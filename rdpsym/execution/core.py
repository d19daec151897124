"""Run many small independent tasks on every local core or on a Dask cluster: :func:`run_tasks`.

The contract with the caller
----------------------------
* ``fn(task)`` computes one small unit: one parameter point, one registry entry. Everything it needs
  is in ``fn`` (e.g. a ``functools.partial`` of a module-level function) and in ``task``; in particular
  a task that draws random numbers carries its own seed. Then the outcome does not depend on where,
  when or next to what the task runs, and a parallel report equals the serial one.
* Results come back **in task order**, whatever order they complete in. A task that raises, runs over
  its time limit, or whose worker process dies is reported for that task (:class:`TaskStatus`); the
  other tasks are not lost.
* ``on_result`` (or :func:`iter_tasks`) streams outcomes as they complete; a ``rich`` progress bar is
  shown on a terminal. Ctrl-C stops the sweep and raises :class:`SweepInterrupted` carrying the
  partial report. With ``results_file`` each finished task is appended to a JSON-lines file at once,
  and a rerun with the same file skips the tasks already ``done`` there (:mod:`.store`).
"""

from __future__ import annotations

import math
import multiprocessing
import time
from dataclasses import replace
from typing import Any, Callable, Iterable, Iterator

from .._config import settings
from .local import check_serial_timeout, inside_task, local_cores, process_backend, serial_backend
from .report import SweepInterrupted, SweepReport, TaskResult, TaskStatus
from .store import FORMATS, ResultsFile, function_name

__all__ = ["Executor", "run_tasks", "iter_tasks", "describe_executor", "runs_serially", "default_mp_context"]

#: what ``executor=`` accepts (see :func:`run_tasks`)
Executor = Any


def default_mp_context() -> str:
    """``fork`` where available (workers inherit imports, caches and the hash seed: bit-identical to
    serial and no start-up import), else ``spawn``."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


# --------------------------------------------------------------------------------------------------
# executors
# --------------------------------------------------------------------------------------------------
class _Plan:
    """A resolved ``executor=`` argument: what to run the tasks on, and what to close afterwards."""

    def __init__(self, kind: str, workers: int, label: str, target: Any = None, owned: bool = False):
        self.kind, self.workers, self.label, self.target, self.owned = kind, workers, label, target, owned

    def close(self) -> None:
        if self.owned and self.target is not None:
            self.target.close()


def _is_address(text: str) -> bool:
    return "://" in text or (":" in text and text.rsplit(":", 1)[1].isdigit())


def _resolve(executor: Executor, n_tasks: int, *, connect_now: bool = True) -> _Plan:
    from concurrent.futures import Executor as FuturesExecutor

    from . import remote

    if executor is None and inside_task():
        # a sweep inside a task (regress -> verify) runs in its worker: the outer sweep already uses
        # the cores, and worker processes may not start processes of their own
        return _Plan("serial", 1, "serial (inside a task)")
    if executor is None:
        executor = settings().executor  # RDPSYM_EXECUTOR, "processes" unless set
    if executor is None or executor == "processes":
        n = local_cores()
        return _Plan("processes", n, f"{n} local process{'es' * (n > 1)}")
    if isinstance(executor, bool):
        raise ValueError(f"executor must be None, 'serial', 'processes', an int >= 1, a Dask scheduler address "
                         f"or client, or a concurrent.futures.Executor; got {executor!r}")
    if isinstance(executor, int):
        if executor < 1:
            raise ValueError(f"executor: the number of worker processes must be >= 1; got {executor}")
        # more workers than cores is allowed (they share the cores); more than tasks would idle
        return _Plan("processes", executor, f"{executor} local process{'es' * (executor > 1)}")
    if isinstance(executor, str):
        if executor == "serial":
            return _Plan("serial", 1, "serial")
        if _is_address(executor):
            remote.check_address(executor)  # a malformed address (no port) is refused before connecting
            client = remote.connect(executor) if connect_now else None
            return _Plan("dask", 0, f"dask {executor}", client, owned=True)
        raise ValueError(f"executor must be 'serial', 'processes' or a Dask scheduler address such as "
                         f"'tcp://host:8786'; got {executor!r}")
    if remote.is_dask_client(executor):
        return _Plan("dask", 0, f"dask {getattr(executor.scheduler, 'address', '')}".strip(), executor)
    if isinstance(executor, FuturesExecutor):
        n = getattr(executor, "_max_workers", None) or local_cores()
        return _Plan("futures", n, type(executor).__name__, executor)
    raise TypeError(f"executor must be None, 'serial', 'processes', an int, a Dask scheduler address or client, "
                    f"or a concurrent.futures.Executor; got {type(executor).__name__}")


def describe_executor(executor: Executor = None) -> str:
    """What ``executor=`` means, without connecting: ``'2 local processes'``, ``'serial'``, ..."""
    return _resolve(executor, 0, connect_now=False).label


def runs_serially(executor: Executor = None) -> bool:
    """Whether ``executor=`` runs the tasks in this process (``"serial"``, a sweep inside a task, or
    ``None`` with ``RDPSYM_EXECUTOR=serial``), without connecting."""
    return _resolve(executor, 0, connect_now=False).kind == "serial"


# --------------------------------------------------------------------------------------------------
# the streaming core
# --------------------------------------------------------------------------------------------------
def _keys(tasks: list, key: Callable[[Any], str] | None, need_stable: bool) -> list[str]:
    keys = [str(key(t)) if key is not None else repr(t) for t in tasks]
    if need_stable:
        if key is None:
            bad = [k for k in keys if " at 0x" in k]
            if bad:
                raise ValueError(f"key: results_file needs a stable key per task, but repr(task) holds a memory "
                                 f"address ({bad[0][:80]!r}); pass key=")
        seen: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k in seen:
                raise ValueError(f"key: tasks {seen[k]} and {i} have the same key {k[:80]!r}; a results file needs "
                                 "one key per task")
            seen[k] = i
    return keys


def iter_tasks(
    fn: Callable[[Any], Any],
    tasks: Iterable[Any],
    *,
    executor: Executor = None,
    timeout: float | None = None,
    results_file: str | None = None,
    results_format: str = "pickle",
    key: Callable[[Any], str] | None = None,
    retries: int = 1,
    stop_when: Callable[[TaskResult], bool] | None = None,
    mp_context: str | None = None,
) -> Iterator[TaskResult]:
    """Yield one :class:`TaskResult` per task **as each completes** (resumed ones first); the arguments
    are those of :func:`run_tasks` and are checked at once. Closing the iterator early stops the
    workers; tasks it never yielded were not run to the end. After ``stop_when`` fires, the tasks not
    started are yielded as ``cancelled`` at the end.
    """
    stream = _stream(fn, list(tasks), executor=executor, timeout=timeout, results_file=results_file,
                     results_format=results_format, key=key, retries=retries, stop_when=stop_when,
                     mp_context=mp_context)
    next(stream)  # runs the argument checks now, not at the first next() of the caller

    def results() -> Iterator[TaskResult]:
        try:
            for ev in stream:
                if ev is not None:
                    yield ev
        finally:
            stream.close()

    return results()


def _stream(fn, tasks: list, *, executor, timeout, results_file, results_format, key, retries, stop_when,
            mp_context, _plan_out: list | None = None) -> Iterator[TaskResult | None]:
    """The sweep as a generator: first ``None`` once the arguments are checked, then outcomes as they
    complete, interleaved with ``None`` heartbeats (for progress bars)."""
    if timeout is not None and not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                                    and math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds or None; got {timeout!r}")
    if not (isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0):
        raise ValueError(f"retries must be an int >= 0; got {retries!r}")
    if results_format not in FORMATS:
        raise ValueError(f"results_format must be one of {FORMATS}; got {results_format!r}")
    if mp_context is not None and mp_context not in multiprocessing.get_all_start_methods():
        raise ValueError(f"mp_context must be one of {multiprocessing.get_all_start_methods()}; got {mp_context!r}")
    describe_executor(executor)  # rejects a bad executor= before anything starts
    keys = _keys(tasks, key, results_file is not None)
    store = ResultsFile(results_file, function_name(fn), results_format) if results_file is not None else None
    finished = store.load() if store is not None else {}
    yield None
    cut = [len(tasks)]  # tasks with a larger index are not started (stop_when)

    items = []
    for i, (k, t) in enumerate(zip(keys, tasks)):
        if k in finished:
            entry = replace(finished[k], index=i)
            yield entry
            if stop_when is not None and i < cut[0] and stop_when(entry):
                cut[0] = i
        else:
            items.append((i, k, t))
    items = [it for it in items if it[0] <= cut[0]] if stop_when is not None else items
    plan = _resolve(executor, len(items), connect_now=bool(items))
    if _plan_out is not None:
        _plan_out.append(plan)
    if plan.kind == "serial":
        check_serial_timeout(timeout)
    seen: set[int] = set()
    try:
        if not items:
            for i, k in enumerate(keys):
                if k not in finished:  # dropped after a resumed entry met stop_when
                    yield TaskResult(i, k, TaskStatus.CANCELLED, error="not run: the sweep stopped early (stop_when)")
            return
        if plan.kind == "serial":
            events = serial_backend(fn, items, timeout=timeout, cut=cut)
        elif plan.kind == "processes":
            plan.workers = min(plan.workers, len(items))
            plan.label = f"{plan.workers} local process{'es' * (plan.workers > 1)}"
            events = process_backend(fn, items, workers=plan.workers, timeout=timeout, retries=retries, cut=cut,
                                     mp_context=mp_context or default_mp_context())
        else:
            from . import remote

            client = None
            if plan.kind == "dask":
                client = plan.target
                threads = remote.dask_threads(client)
                plan.workers = threads
                fn_ref = client.scatter(fn, broadcast=True, hash=False)

                def submit(f, ref, task):
                    return client.submit(f, ref, task, pure=False)
            else:
                threads = plan.workers
                fn_ref, submit = fn, plan.target.submit
            # With a time limit, no task waits in a queue: its clock starts at submission. Without one,
            # enough are in flight to hide the round trip to the scheduler, few enough that Ctrl-C and
            # stop_when cancel little.
            slots = threads if timeout else max(4 * threads, 32)
            events = remote.futures_backend(submit, fn_ref, items, slots=slots, timeout=timeout, cut=cut,
                                            client=client)
        try:
            for ev in events:
                if ev is None:
                    yield None  # a heartbeat for progress bars; run_tasks swallows it
                    continue
                seen.add(ev.index)
                if store is not None:
                    store.append(ev)
                yield ev
                if stop_when is not None and ev.index < cut[0] and stop_when(ev):
                    cut[0] = ev.index
        finally:
            events.close()
        for i, k in enumerate(keys):
            if i not in seen and k not in finished:
                yield TaskResult(i, k, TaskStatus.CANCELLED, error="not run: the sweep stopped early (stop_when)")
    finally:
        if store is not None:
            store.close()
        plan.close()


def run_tasks(
    fn: Callable[[Any], Any],
    tasks: Iterable[Any],
    *,
    executor: Executor = None,
    progress: bool = True,
    description: str = "tasks",
    results_file: str | None = None,
    results_format: str = "pickle",
    key: Callable[[Any], str] | None = None,
    timeout: float | None = None,
    retries: int = 1,
    on_result: Callable[[TaskResult], None] | None = None,
    stop_when: Callable[[TaskResult], bool] | None = None,
    mp_context: str | None = None,
) -> SweepReport:
    """Run ``fn(task)`` for every task, in parallel, and report every task's outcome in task order.

    Parameters
    ----------
    fn
        One argument, the task. With worker processes started by ``spawn`` and on Dask it must be
        picklable (a module-level function or a ``functools.partial`` of one); with ``fork`` (the
        default on Linux) anything goes.
    tasks
        Small, independent units (one parameter point, one registry entry), each carrying its own seed
        if it draws random numbers, so results equal a serial run's.
    executor
        ``None``: the ``RDPSYM_EXECUTOR`` setting (``"processes"`` unless set; serial when called
        inside a task of another sweep, e.g. ``regress`` running ``verify`` per entry).
        ``"processes"``: one worker process per local core. An ``int``: that
        many worker processes (more than the cores is allowed). ``"serial"``: in this process, in
        order. A Dask scheduler address (``"tcp://host:8786"``, connection refused within 3 s with
        :class:`~rdpsym.execution.SchedulerUnreachable`) or a ``distributed.Client``; or any
        ``concurrent.futures.Executor``. Workers never exceed the number of tasks.
    progress
        Show a ``rich`` progress bar on stderr (only when stderr is a terminal).
    results_file, results_format
        Resume: finished tasks are appended to this JSON-lines file as they complete, and tasks
        already ``done`` there are not run again (see :mod:`rdpsym.execution.store`; ``"pickle"``
        keeps any picklable result exactly, ``"json"`` needs JSON-serialisable results).
    key
        ``task -> str``, the task's identity in the results file (default ``repr(task)``; must be
        unique and stable across runs).
    timeout
        Seconds one task may run. Locally the worker running it is killed (exact, even inside C
        code) and replaced; serially a SIGALRM interrupts it (main thread only); on Dask the clock
        starts at submission and the worker thread cannot be stopped (see :mod:`.remote`).
    retries
        A task whose worker process *dies* (not one that raises) is run again this many times before
        it is reported ``failed``.
    on_result
        Called in this process with each :class:`TaskResult` as it arrives (completion order).
    stop_when
        ``entry -> bool``; once true for the task at index ``i``, tasks after ``i`` are not started
        (those running finish) and are reported ``cancelled``, while tasks before ``i`` still run.
        So the report up to the first hit is the one a serial run that stops there gives.
    mp_context
        Start method of local workers (default :func:`default_mp_context`).

    Returns a :class:`SweepReport` (empty for zero tasks). Ctrl-C raises :class:`SweepInterrupted`
    (a ``KeyboardInterrupt``) whose ``report`` holds the finished tasks and marks the rest
    ``cancelled``.
    """
    tasks = list(tasks)
    start = time.perf_counter()
    entries: dict[int, TaskResult] = {}
    plan_out: list = []
    label = describe_executor(executor)  # also rejects a bad executor= before anything starts

    def report(interrupted: bool = False) -> SweepReport:
        plan = plan_out[0] if plan_out else None
        rows = []
        for i, t in enumerate(tasks):
            e = entries.get(i)
            if e is None:
                k = str(key(t)) if key is not None else repr(t)
                e = TaskResult(i, k, TaskStatus.CANCELLED, error="not run: the sweep was interrupted")
            rows.append(e)
        stopped = any(e.status is TaskStatus.CANCELLED for e in entries.values())
        return SweepReport(tuple(rows), plan.label if plan else label, plan.workers if plan else 1,
                           time.perf_counter() - start, interrupted, stopped and not interrupted)

    bar = _progress_bar(progress, description, len(tasks))
    stream = _stream(fn, tasks, executor=executor, timeout=timeout, results_file=results_file,
                     results_format=results_format, key=key, retries=retries, stop_when=stop_when,
                     mp_context=mp_context, _plan_out=plan_out)
    next(stream)  # argument checks, before the progress bar appears
    try:
        with bar:
            task_id = bar.add_task(description, total=len(tasks), bad=0)
            bad = 0
            for ev in stream:
                if ev is not None:
                    entries[ev.index] = ev
                    bad += not ev.ok
                    bar.update(task_id, completed=len(entries), bad=bad)
                    if on_result is not None:
                        on_result(ev)
                bar.refresh()
    except KeyboardInterrupt:
        stream.close()
        raise SweepInterrupted(report(interrupted=True)) from None
    finally:
        stream.close()
    return report()


def _progress_bar(show: bool, description: str, total: int):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
        TimeRemainingColumn

    console = Console(stderr=True)
    # auto_refresh=False: no refresh thread, so forking workers stays safe; the dispatch loop refreshes
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("[red]{task.fields[bad]} not done"), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=console, auto_refresh=False, transient=False,
                    disable=not (show and console.is_terminal and total > 0))
