"""The package's one time-limit implementation (imported from here by every caller).

sympy and mpmath are pure Python, so a computation can be interrupted between bytecodes.

``with time_limit(seconds):`` / ``run_with_time_limit(fn, *args, seconds=...)`` bound a block or a call:

* **Main thread** (POSIX): a ``SIGALRM`` timer raises :class:`StepTimeout` at the deadline. The
  exception derives from ``BaseException``, so ``except Exception`` does not swallow it; and after the
  deadline the alarm **keeps re-firing** every :data:`REFIRE_SECONDS` until the guarded block exits, so
  an alarm swallowed by a bare ``except:``, an ``except BaseException`` or a finaliser (``__del__``,
  whose exceptions Python ignores) fires again.
* **Exit re-check**: when the block (the step) ends after its deadline, whether it returned or raised
  some other exception (because it swallowed or converted the timeout), :class:`StepTimeout` is raised
  anyway. A result produced after the deadline is never returned as if it were in time.
* **Nesting**: limits nest per thread; an inner limit's deadline is the earlier of its own and the
  enclosing ones (it can never extend them). When an enclosing limit expires, the exception raised is
  the enclosing one's (``exc.limit_id``), and no new limit can be entered until that block has exited:
  every ``run_with_time_limit`` call is a checkpoint.
* **Other threads**: signals are delivered to the main thread only. ``run_with_time_limit`` runs the
  call in a forked child process (in which it is the main thread, so nested limits use the alarm) and
  kills it at the deadline; the value comes back pickled.
* **Threads of daemonic processes** (Dask's task threads), which may not fork, and the
  ``time_limit`` context manager in any thread other than the main one: nothing can interrupt the
  thread. There the limit is enforced only by the checks: entering a nested limit after an enclosing
  deadline raises, and a block that ends late raises. A step that never returns is bounded only by the
  execution layer's per-task limit (:mod:`rdpsym.execution`).

Every expired limit is counted per thread (:func:`timeout_count`), including limits that expired in a
forked child, so a caller can tell that a computation was cut short somewhere even when the
:class:`StepTimeout` was caught and turned into a fallback (the derivation cache uses this: a timed-out
derivation is never cached).
"""

from __future__ import annotations

import dis
import itertools
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Any, Callable

from . import _config
from ._config import check_seconds

__all__ = ["StepTimeout", "time_limit", "run_with_time_limit", "check_seconds", "default_step_seconds",
           "timeout_count", "deadline_passed", "REFIRE_SECONDS"]

#: after a deadline, the alarm fires again at this interval until the guarded block has exited
REFIRE_SECONDS = 0.05
#: a handler that has the expired limit's own StepTimeout in hand is left to finish (cleanup, re-raise)
#: for up to this long before it is interrupted too
HANDLING_GRACE_SECONDS = 0.25


class StepTimeout(BaseException):
    """A time limit expired (a ``BaseException``: ``except Exception`` handlers do not catch it).

    ``limit_id`` identifies the :func:`time_limit` that expired (``None`` when unknown). Code that turns
    a timed-out step into a fallback must catch ``StepTimeout`` explicitly.
    """

    limit_id: int | None = None


def default_step_seconds() -> float:
    """Per-step limit in seconds: ``RDPSYM_STEP_SECONDS`` or 20."""
    return _config.settings().step_seconds


# --------------------------------------------------------------------------------------------------
# per-thread state
# --------------------------------------------------------------------------------------------------
_local = threading.local()
_ids = itertools.count(1)


def _stack() -> list:
    try:
        return _local.stack
    except AttributeError:
        _local.stack = []
        _local.timeouts = 0
        return _local.stack


def _reset_after_fork() -> None:
    # A forked child is not bound by its parent's limits (the parent enforces them by killing it), and
    # interval timers are not inherited by a child.
    _local.stack = []
    _local.timeouts = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def timeout_count() -> int:
    """How many time limits have expired in this thread so far (forked children's included)."""
    _stack()
    return _local.timeouts


def deadline_passed() -> bool:
    """True when a time limit active in this thread has passed its deadline."""
    now = time.monotonic()
    return any(entry.deadline <= now for entry in _stack())


def _signals_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _count(entry) -> None:
    if not entry.counted:
        entry.counted = True
        _stack()
        _local.timeouts += 1


def _first_expired(stack, now):
    """The outermost limit past its deadline (deadlines only shrink inwards), or None."""
    for entry in stack:
        if entry.deadline <= now:
            return entry
    return None


def _timeout_for(entry) -> StepTimeout:
    _count(entry)
    exc = StepTimeout(f"step exceeded {entry.seconds:g} s")
    exc.limit_id = entry.id
    return exc


def _arm(stack, now) -> None:
    """Set the timer for the earliest deadline of the stack (soon, if one has passed)."""
    expired = _first_expired(stack, now)
    delay = REFIRE_SECONDS if expired is not None else min(e.deadline for e in stack) - now
    signal.setitimer(signal.ITIMER_REAL, max(delay, 1e-4))


def _being_handled(entry, now) -> bool:
    """True while an ``except``/``finally`` block is handling ``entry``'s own StepTimeout (for at most
    :data:`HANDLING_GRACE_SECONDS`): it is left to finish its cleanup or re-raise."""
    exc = sys.exc_info()[1]
    if isinstance(exc, StepTimeout) and exc.limit_id == entry.id:
        if entry.handling_since is None:
            entry.handling_since = now
        return now - entry.handling_since < HANDLING_GRACE_SECONDS
    entry.handling_since = None
    return False


_POP_EXCEPT = dis.opmap["POP_EXCEPT"]


def _no_new_frames(frame, event, arg):
    return None  # the thread's trace function: new calls run untraced, at full speed


def _tracer(frame, event, arg):
    """Opcode tracer of the frames that were running at a deadline: an ``except`` or ``finally`` block
    that ends normally (``POP_EXCEPT``) while it holds the expired limit's StepTimeout has swallowed
    it, and it is raised again at the very next instruction (as if it had escaped the handler)."""
    if event != "opcode":
        return _tracer
    now = time.monotonic()
    expired = _first_expired(_stack(), now)
    if expired is None:
        _local.swallowed_in = None
        return None  # the limit has been left: stop tracing this frame
    if getattr(_local, "swallowed_in", None) is frame:
        _local.swallowed_in = None
        raise _timeout_for(expired)  # (raising from a trace function switches tracing off)
    if frame.f_code.co_code[frame.f_lasti] == _POP_EXCEPT:
        exc = sys.exc_info()[1]
        if isinstance(exc, StepTimeout) and exc.limit_id == expired.id and frame.f_code not in _PROTECTED:
            _local.swallowed_in = frame
    return _tracer


def _trace_until_exit(frame) -> None:
    """Trace the frames running at the deadline (the ones the StepTimeout unwinds), so that a bare
    ``except:``, an ``except BaseException``, a ``with`` that suppresses it or a ``finally`` that
    returns cannot swallow it: it is raised again right after the handler. (An exception raised in a
    finaliser is dropped by the interpreter itself; the re-fired alarm covers that.)"""
    if not getattr(_local, "tracing", False):
        _local.saved_trace = sys.gettrace()
        _local.tracing = True
    sys.settrace(_no_new_frames)
    while frame is not None:
        if frame.f_code not in _PROTECTED:
            frame.f_trace_lines = False
            frame.f_trace_opcodes = True
            frame.f_trace = _tracer
        frame = frame.f_back


def _stop_tracing() -> None:
    if getattr(_local, "tracing", False):
        _local.tracing = False
        _local.swallowed_in = None
        sys.settrace(_local.saved_trace)
        _local.saved_trace = None
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_trace is _tracer:
                frame.f_trace = None
                frame.f_trace_opcodes = False
                frame.f_trace_lines = True
            frame = frame.f_back


def _on_alarm(signum, frame):
    if frame is not None and frame.f_code in _PROTECTED:
        # Inside entering or leaving a limit: the bookkeeping must not be torn. Try again shortly
        # (leaving a limit checks the deadlines itself).
        signal.setitimer(signal.ITIMER_REAL, REFIRE_SECONDS)
        return
    stack = _stack()
    if not stack:
        return  # a stray alarm after the last limit was left
    now = time.monotonic()
    expired = _first_expired(stack, now)
    _arm(stack, now)  # re-fire until the block exits, or wait for the next deadline
    if expired is None:
        return
    _trace_until_exit(frame)
    if not _being_handled(expired, now):
        raise _timeout_for(expired)


class time_limit:
    """``with time_limit(seconds):`` raises :class:`StepTimeout` if the block runs past ``seconds``.

    See the module docstring for how it is enforced in the main thread, other threads and daemonic
    processes. ``expired`` says afterwards whether the deadline had passed.
    """

    __slots__ = ("seconds", "deadline", "id", "counted", "handling_since", "_signals", "_previous")

    def __init__(self, seconds: float | None = None):
        self.seconds = default_step_seconds() if seconds is None else check_seconds(seconds)
        self.deadline = math.inf
        self.id = next(_ids)
        self.counted = False
        self.handling_since = None
        self._signals = False
        self._previous = None

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    @property
    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def __enter__(self):
        stack = _stack()
        now = time.monotonic()
        expired = _first_expired(stack, now)
        if expired is not None:
            # An enclosing limit has expired (and its exception was swallowed): start nothing new.
            raise _timeout_for(expired)
        self.deadline = now + self.seconds
        if stack:
            self.deadline = min(self.deadline, stack[-1].deadline)
        self._signals = _signals_usable()
        if self._signals and not any(e._signals for e in stack):
            # The outermost alarm of this thread: remember what was installed before.
            self._previous = (signal.signal(signal.SIGALRM, _on_alarm), signal.getitimer(signal.ITIMER_REAL), now)
        stack.append(self)
        if self._signals:
            _arm(stack, now)
        return self

    def __exit__(self, exc_type, exc, tb):
        stack = _stack()
        if self in stack:
            del stack[stack.index(self):]
        now = time.monotonic()
        if self._signals:
            if any(e._signals for e in stack):
                _arm(stack, now)
            else:
                signal.setitimer(signal.ITIMER_REAL, 0)
                if self._previous is not None:
                    handler, (old_delay, old_interval), started = self._previous
                    signal.signal(signal.SIGALRM, handler)
                    if old_delay:
                        # Re-arm a foreign timer with what is left of it.
                        signal.setitimer(signal.ITIMER_REAL, max(1e-3, old_delay - (now - started)), old_interval)
        if self._signals and _first_expired(stack, now) is None:
            _stop_tracing()
        expired = _first_expired(stack, now) or (self if self.deadline <= now else None)
        if expired is None:
            return False
        if self.deadline <= now:
            _count(self)
        if isinstance(exc, StepTimeout) or (exc is not None and not isinstance(exc, Exception)):
            return False  # a timeout already, or KeyboardInterrupt / SystemExit: keep it
        # The block ended late: it returned, or raised something else (it swallowed or converted the
        # timeout). Either way it did not finish in time.
        raise _timeout_for(expired) from exc


_PROTECTED = frozenset(f.__code__ for f in (time_limit.__enter__, time_limit.__exit__, _arm, _first_expired,
                                            _stack, _count, _timeout_for, _on_alarm, _signals_usable, _tracer,
                                            _being_handled, _trace_until_exit, _stop_tracing,
                                            _no_new_frames))


# --------------------------------------------------------------------------------------------------
# a call with a time limit
# --------------------------------------------------------------------------------------------------
def _child(conn, fn, args, seconds):
    try:
        with time_limit(seconds):
            value = fn(*args)
        message = ("ok", value)
    except StepTimeout as exc:
        message = ("timeout", str(exc))
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        message = ("error", repr(exc))
    try:
        conn.send(message + (timeout_count(),))
    except BaseException as exc:  # noqa: BLE001 - e.g. an unpicklable value
        conn.send(("error", f"the step's value cannot be sent back: {exc!r}", timeout_count()))
    finally:
        conn.close()


def run_with_time_limit(fn: Callable[..., Any], *args, seconds: float | None = None) -> Any:
    """Run ``fn(*args)``; raise :class:`StepTimeout` if it takes longer than ``seconds``."""
    seconds = default_step_seconds() if seconds is None else check_seconds(seconds)
    if _signals_usable() or multiprocessing.current_process().daemon:
        # Main thread: the alarm. A thread of a daemonic worker process (a Dask worker's task thread)
        # may not start child processes and cannot be interrupted: there only the deadline checks of
        # time_limit hold, and the execution layer's per-task time limit bounds a step that never ends.
        with time_limit(seconds):
            return fn(*args)
    with time_limit(seconds) as limit:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(child, fn, args, max(limit.remaining, 1e-3)), daemon=True)
        proc.start()
        child.close()
        try:
            if not parent.poll(limit.remaining):
                raise _timeout_for(_first_expired(_stack(), time.monotonic()) or limit)
            kind, payload, child_timeouts = parent.recv()
        except EOFError:
            kind, payload, child_timeouts = "error", f"the worker process died ({proc.exitcode})", 0
        finally:
            proc.kill()
            proc.join()
            parent.close()
        _local.timeouts += child_timeouts
        if kind == "timeout":
            exc = StepTimeout(payload)
            raise exc
        if kind == "error":
            raise RuntimeError(f"step failed in a worker process: {payload}")
        return payload
