"""``--workers`` / ``--scheduler`` for CLI commands that run sweeps (click lives in the CLI: the execution
layer itself never imports it)."""

from __future__ import annotations

import functools
from typing import Any, Callable

import click

__all__ = ["execution_options", "executor_from_options"]


def executor_from_options(workers: int | None = None, scheduler: str | None = None) -> Any:
    """The ``executor=`` for :func:`~rdpsym.execution.run_tasks` from ``--workers`` / ``--scheduler``:
    a scheduler address, else the number of workers (``1`` means serial, in this process), else
    ``None`` (all local cores)."""
    if scheduler is not None and workers is not None:
        raise click.UsageError("--workers and --scheduler exclude each other (a cluster has its own workers)")
    if scheduler is not None:
        from ..execution.remote import check_address

        try:
            return check_address(scheduler, "--scheduler")
        except ValueError as exc:  # checked before anything is derived: no port, no host, not an address
            raise click.BadParameter(str(exc), param_hint="--scheduler") from None
    if workers is not None:
        if workers < 1:
            raise click.BadParameter(f"must be >= 1; got {workers}", param_hint="--workers")
        return "serial" if workers == 1 else workers
    return None


def execution_options(command: Callable) -> Callable:
    """Decorator adding ``--workers N`` and ``--scheduler ADDRESS`` to a click command; the command
    receives one ``executor`` keyword argument instead (see :func:`executor_from_options`). A malformed
    address, an unreachable scheduler, one without workers or a missing Dask install ends the command with
    a usage error naming ``--scheduler`` (exit code 2)."""

    @click.option("--scheduler", metavar="ADDRESS", default=None,
                  help="Run on a Dask cluster, e.g. tcp://host:8786 (needs rdpsym[distributed]).")
    @click.option("--workers", type=int, default=None, metavar="N",
                  help="Local worker processes (default: all cores; 1 = serial, in this process).")
    @functools.wraps(command)
    def wrapper(*args, workers=None, scheduler=None, **kwargs):
        import contextlib

        from ..execution.remote import DaskMissing, SchedulerUnreachable, quiet_logs

        try:
            executor = executor_from_options(workers, scheduler)
            debug = bool(click.get_current_context().find_root().params.get("debug"))
            # the sweep reports what a lost scheduler cost; dask's own reconnection tracebacks only with --debug
            with quiet_logs() if scheduler is not None and not debug else contextlib.nullcontext():
                return command(*args, executor=executor, **kwargs)
        except (SchedulerUnreachable, DaskMissing) as exc:  # a clear message, not a traceback
            raise click.BadParameter(str(exc), param_hint="--scheduler") from exc

    return wrapper
