"""Time limits for symbolic steps.

The implementation is the package's one time-limit module, :mod:`rdpsym._timeout` (also used by the
execution layer's serial back end); this module keeps its public names. In the main thread a
``SIGALRM`` timer raises :class:`StepTimeout` (a ``BaseException``, re-fired until the step exits);
elsewhere (worker threads) the step runs in a forked child process with a hard deadline; in the task
threads of daemonic processes (Dask's), which may not fork, only the deadline checks hold (a step
that ends late raises). Either way a timed-out step fails with a reason, and the engine falls back to
an honest status.
"""

from __future__ import annotations

from .._timeout import (  # noqa: F401 - re-exported
    REFIRE_SECONDS,
    StepTimeout,
    check_seconds,
    deadline_passed,
    default_step_seconds,
    run_with_time_limit,
    time_limit,
    timeout_count,
)

__all__ = ["StepTimeout", "run_with_time_limit", "default_step_seconds", "time_limit", "check_seconds",
           "timeout_count", "deadline_passed"]
