"""Execution layer: sweeps of small independent tasks on every local core or on a Dask cluster.

One layer for every sweep in rdpsym (``verify``'s points, ``check_claim``'s numeric search, ``regress``
over the registry, property sweeps)::

    from functools import partial
    from rdpsym.execution import run_tasks

    report = run_tasks(partial(check_point, result, dps=30), points)        # all local cores
    report = run_tasks(f, points, executor="serial")                         # in this process
    report = run_tasks(f, points, executor=4, timeout=60)                    # 4 processes, 60 s per task
    report = run_tasks(f, points, executor="tcp://scheduler:8786")           # a Dask cluster
    report = run_tasks(f, points, results_file="sweep.jsonl")               # resumable
    values = report.results()    # in task order; raises SweepError if any task did not finish

:func:`run_tasks` returns a :class:`SweepReport` with one :class:`TaskResult` per task, in task order
(``done`` / ``failed`` / ``timeout`` / ``cancelled``); :func:`iter_tasks` streams them as they complete.
CLI commands add ``--workers N`` and ``--scheduler ADDRESS`` with
:func:`rdpsym.cli.options.execution_options` and turn them into an ``executor=`` with
:func:`rdpsym.cli.options.executor_from_options` (in the CLI: this layer does not import click).
"""

from .core import default_mp_context, describe_executor, iter_tasks, run_tasks, runs_serially
from .local import local_cores
from .remote import SchedulerUnreachable
from .report import SweepError, SweepInterrupted, SweepReport, TaskResult, TaskStatus

__all__ = ["run_tasks", "iter_tasks", "TaskResult", "TaskStatus", "SweepReport", "SweepError",
           "SweepInterrupted", "SchedulerUnreachable", "local_cores", "default_mp_context", "describe_executor",
           "runs_serially"]
