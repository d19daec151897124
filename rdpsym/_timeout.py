"""The package's one time-limit implementation (imported from here by every caller).

sympy and mpmath are pure Python, so a computation can be interrupted between bytecodes.

``with time_limit(seconds):`` / ``run_with_time_limit(fn, *args, seconds=...)`` bound a block or a call.

**What a limit counts.** A limit that decides an outcome (a derivation step that gives up and falls
back, a proof attempt, a simplification) must not depend on how fast or how busy the machine is. So
by default (``clock="work"``) a limit counts **work**: the sympy expression nodes the thread builds
(every ``Basic`` constructed, counted per thread, :func:`work_done`), ``seconds`` standing for
``seconds * NODES_PER_SECOND`` nodes (:data:`NODES_PER_SECOND`, the median rate of the built-ins'
derivation steps on the reference machine; so the numbers users set, ``RDPSYM_STEP_SECONDS`` = 20,
keep their size). The same step gives up at the same node on an idle and on a loaded machine. A work
limit also carries a wall-clock **hang guard** of :data:`GUARD_FACTOR` times ``seconds``, for work that
builds no nodes (polynomial arithmetic in C, a sleep, a wait); when the guard fires, the
:class:`StepTimeout` says so (``exc.guard``). ``clock="wall"`` counts wall-clock seconds: for what is
by nature a wait or a guard (a worker, a child process, a user's code, numeric evaluation whose own
budgets count terms and digits).

How a limit is enforced:

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

Memory and stack are bounded like time. A ``MemoryError`` or ``RecursionError`` that escapes a guarded
block (a step that would exhaust memory, or recursion as deep as sympy's exact factorial of 10^300) is
raised as :class:`StepExhausted`, a :class:`StepTimeout`: the step cannot finish, and every fallback for
a step out of time applies to it. A step run in a forked child (``run_with_time_limit`` off the main
thread, and always :func:`run_in_child`) runs under a data limit of ``RDPSYM_MEMORY_MB``
(``setrlimit``), so it fails with ``MemoryError`` rather than take the machine's memory; a child that
is killed anyway is reported, never the parent. :func:`run_in_child` is the tool for a step on hostile
input whose arithmetic may run in C for minutes (an exact rational to the power 10^6, which no alarm
interrupts): the parent kills the child at the deadline whatever it is doing. Every forked child dies
with its parent (``PR_SET_PDEATHSIG`` on Linux), so none is ever orphaned. :func:`limit_process_memory`
applies the data limit to the whole process (the CLI does, at start).

Every expired limit is counted per thread (:func:`timeout_count`), including limits that expired in a
forked child and exhausted steps, so a caller can tell that a computation was cut short somewhere even
when the :class:`StepTimeout` was caught and turned into a fallback (the derivation cache uses this: a
timed-out derivation is never cached).
"""

from __future__ import annotations

import dis
import itertools
import math
import multiprocessing
import os
import pickle
import select
import signal
import sys
import threading
import time
from typing import Any, Callable

from sympy.core.basic import Basic

from . import _config
from ._config import check_seconds

__all__ = ["StepTimeout", "StepExhausted", "time_limit", "run_with_time_limit", "run_in_child", "check_seconds",
           "default_step_seconds", "timeout_count", "deadline_passed", "limit_process_memory", "die_with_parent",
           "work_done", "work_clock", "REFIRE_SECONDS", "NODES_PER_SECOND", "GUARD_FACTOR", "CLOCKS"]

#: after a deadline, the alarm fires again at this interval until the guarded block has exited
REFIRE_SECONDS = 0.05
#: a handler that has the expired limit's own StepTimeout in hand is left to finish (cleanup, re-raise)
#: for up to this long before it is interrupted too
HANDLING_GRACE_SECONDS = 0.25
#: the work one second of a ``clock="work"`` limit stands for: sympy expression nodes built. The rate
#: of the built-ins' derivations on the reference machine (2 cores, Python 3.11) lies between 16,500 and
#: 50,000 nodes per second of CPU time, median 33,700 (``benchmarks/work_rate.py``); a fixed number,
#: never measured at run time
NODES_PER_SECOND = 30_000
#: a work limit's wall-clock hang guard is this many times its seconds (guards sit at least 10x above
#: the typical time of the work they guard)
GUARD_FACTOR = 10.0
#: what a limit can count (module docstring)
CLOCKS = ("work", "wall")


class StepTimeout(BaseException):
    """A time limit expired (a ``BaseException``: ``except Exception`` handlers do not catch it).

    ``limit_id`` identifies the :func:`time_limit` that expired (``None`` when unknown). Code that turns
    a timed-out step into a fallback must catch ``StepTimeout`` explicitly.
    """

    limit_id: int | None = None
    #: True when a work limit's wall-clock hang guard fired (the step built few nodes for a long time, or
    #: waited): said in the message too
    guard: bool = False
    #: True when a work limit expired because its work was spent: the same step with the same budget
    #: (from the same sympy state) is cut short at the same node, whatever the machine
    work_spent: bool = False


class StepExhausted(StepTimeout):
    """A step ran out of memory or recursion depth (``resource``: ``"memory"`` or ``"recursion"``).

    A :class:`StepTimeout`: like a step out of time it cannot finish, is abandoned and reported by the
    same fallbacks, and is counted by :func:`timeout_count` (so nothing it touched is cached).
    """

    resource: str = "memory"


def exhausted_error(exc: BaseException) -> StepExhausted:
    resource = "recursion" if isinstance(exc, RecursionError) else "memory"
    what = "recursed deeper than Python allows" if resource == "recursion" else "ran out of memory"
    text = str(exc).strip()
    out = StepExhausted(f"step {what} ({type(exc).__name__}{': ' + text[:200] if text else ''})")
    out.resource = resource
    return out


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
    _local.trip = math.inf


# --------------------------------------------------------------------------------------------------
# work: the sympy nodes a thread builds
# --------------------------------------------------------------------------------------------------
_basic_new = Basic.__new__


def _counted_new(cls, *args):
    """``Basic.__new__``, counting the node for this thread; past the innermost work limit's node, the
    limit expires here (as the alarm expires a wall-clock one)."""
    local = _local
    nodes = getattr(local, "nodes", 0) + 1  # (a thread's first node: no counter yet)
    local.nodes = nodes
    if nodes >= getattr(local, "trip", math.inf):
        _on_work_spent(sys._getframe(1))
    return _basic_new(cls, *args)


Basic.__new__ = staticmethod(_counted_new)


def work_done() -> int:
    """The sympy expression nodes this thread has built so far (the work a ``clock="work"`` limit counts)."""
    return getattr(_local, "nodes", 0)


def work_clock() -> float:
    """:func:`work_done` in seconds of work (``nodes / NODES_PER_SECOND``): the clock of a work budget
    that is shared out between steps (a derivation's stages), as ``time.monotonic`` is for wall time."""
    return work_done() / NODES_PER_SECOND


def _set_trip(stack) -> None:
    """The node at which the innermost work limit of ``stack`` expires (inner deadlines are the earliest)."""
    _local.trip = stack[-1].work_deadline if stack else math.inf


def _on_work_spent(frame) -> None:
    """A node past the innermost work deadline was built: expire the limit as the alarm would."""
    stack = _stack()
    now = _now()
    expired = _first_expired(stack, now)
    if expired is None or (frame is not None and frame.f_code in _PROTECTED):
        return
    if _signals_usable():
        _arm(stack, now)  # the alarm re-fires from now on, until the block exits
    _trace_until_exit(frame)
    if not _being_handled(expired, now):
        raise _timeout_for(expired)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def timeout_count() -> int:
    """How many time limits have expired in this thread so far (forked children's included)."""
    _stack()
    return _local.timeouts


def _now() -> tuple[float, int]:
    """(wall, work): the monotonic clock and :func:`work_done`."""
    return time.monotonic(), work_done()


def deadline_passed() -> bool:
    """True when a time limit active in this thread has passed its deadline (or spent its work)."""
    now = _now()
    return any(entry.passed(now) for entry in _stack())


def _signals_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _count(entry) -> None:
    if not entry.counted:
        entry.counted = True
        _stack()
        _local.timeouts += 1


def _first_expired(stack, now):
    """The outermost limit past its deadline (deadlines only shrink inwards), or None. ``now`` is
    :func:`_now`'s (wall, work)."""
    for entry in stack:
        if entry.passed(now):
            return entry
    return None


def _timeout_for(entry) -> StepTimeout:
    _count(entry)
    if entry.clock == "wall":
        exc = StepTimeout(f"step exceeded {entry.seconds:g} s")
    elif entry.work_deadline <= work_done():
        exc = StepTimeout(f"step exceeded its work budget of {entry.seconds:g} s "
                          f"({entry.seconds * NODES_PER_SECOND:,.0f} sympy nodes built)")
        exc.work_spent = True
    else:
        exc = StepTimeout(f"step exceeded its hang guard of {entry.guard_seconds:g} s of wall-clock time "
                          f"({GUARD_FACTOR:g}x its work budget of {entry.seconds:g} s, which it had not spent)")
        exc.guard = True
    exc.limit_id = entry.id
    return exc


def _arm(stack, now) -> None:
    """Set the timer for the earliest wall-clock deadline of the stack (soon, if a limit has expired);
    work deadlines are checked where the nodes are built."""
    expired = _first_expired(stack, now)
    delay = REFIRE_SECONDS if expired is not None else min(e.deadline for e in stack) - now[0]
    signal.setitimer(signal.ITIMER_REAL, max(delay, 1e-4))


def _being_handled(entry, now) -> bool:
    """True while an ``except``/``finally`` block is handling ``entry``'s own StepTimeout (for at most
    :data:`HANDLING_GRACE_SECONDS` of wall-clock time): it is left to finish its cleanup or re-raise."""
    exc = sys.exc_info()[1]
    wall = now[0]
    if isinstance(exc, StepTimeout) and exc.limit_id == entry.id:
        if entry.handling_since is None:
            entry.handling_since = wall
        return wall - entry.handling_since < HANDLING_GRACE_SECONDS
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
    expired = _first_expired(_stack(), _now())
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
    now = _now()
    expired = _first_expired(stack, now)
    _arm(stack, now)  # re-fire until the block exits, or wait for the next deadline
    if expired is None:
        return
    _trace_until_exit(frame)
    if not _being_handled(expired, now):
        raise _timeout_for(expired)


def _check_clock(clock: str) -> str:
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {CLOCKS}; got {clock!r}")
    return clock


class time_limit:
    """``with time_limit(seconds):`` raises :class:`StepTimeout` when the block has done ``seconds`` of
    work (``clock="work"``, the default: ``seconds * NODES_PER_SECOND`` sympy nodes built in this
    thread, or the wall-clock hang guard of ``GUARD_FACTOR * seconds``, whichever comes first), or when
    it runs past ``seconds`` of wall-clock time (``clock="wall"``).

    See the module docstring for how it is enforced in the main thread, other threads and daemonic
    processes. ``expired`` says afterwards whether the deadline had passed.
    """

    __slots__ = ("seconds", "clock", "guard_seconds", "deadline", "work_deadline", "id", "counted",
                 "handling_since", "_signals", "_previous")

    def __init__(self, seconds: float | None = None, *, clock: str = "work", guard: float | None = None):
        self.seconds = default_step_seconds() if seconds is None else check_seconds(seconds)
        self.clock = _check_clock(clock)
        #: the wall-clock seconds after which the limit expires whatever the work (``guard``: given
        #: explicitly, for a forked child that continues its parent's limit)
        self.guard_seconds = (self.seconds if clock == "wall" else
                              GUARD_FACTOR * self.seconds if guard is None else check_seconds(guard, "guard"))
        self.deadline = math.inf  # wall-clock: the limit itself, or a work limit's hang guard
        self.work_deadline = math.inf  # the node (work_done()) at which the limit expires
        self.id = next(_ids)
        self.counted = False
        self.handling_since = None
        self._signals = False
        self._previous = None

    def passed(self, now) -> bool:
        """Past the wall-clock deadline or the work deadline at ``now`` = (wall, work)."""
        return self.deadline <= now[0] or self.work_deadline <= now[1]

    @property
    def expired(self) -> bool:
        return self.passed(_now())

    @property
    def remaining(self) -> float:
        """Wall-clock seconds to the deadline (for a work limit: to its hang guard)."""
        return max(0.0, self.deadline - time.monotonic())

    @property
    def remaining_work(self) -> float:
        """Seconds of work left (``inf`` for a wall-clock limit not nested in a work limit)."""
        return max(0.0, (self.work_deadline - work_done()) / NODES_PER_SECOND)

    def __enter__(self):
        stack = _stack()
        now = _now()
        expired = _first_expired(stack, now)
        if expired is not None:
            # An enclosing limit has expired (and its exception was swallowed): start nothing new.
            raise _timeout_for(expired)
        wall, work = now
        self.deadline = wall + self.guard_seconds
        if self.clock == "work":
            self.work_deadline = work + math.ceil(self.seconds * NODES_PER_SECOND)
        if stack:
            self.deadline = min(self.deadline, stack[-1].deadline)
            self.work_deadline = min(self.work_deadline, stack[-1].work_deadline)
        self._signals = _signals_usable()
        if self._signals and not any(e._signals for e in stack):
            # The outermost alarm of this thread: remember what was installed before.
            self._previous = (signal.signal(signal.SIGALRM, _on_alarm), signal.getitimer(signal.ITIMER_REAL), wall)
        stack.append(self)
        _set_trip(stack)
        if self._signals:
            _arm(stack, now)
        return self

    def __exit__(self, exc_type, exc, tb):
        stack = _stack()
        if self in stack:
            del stack[stack.index(self):]
        _set_trip(stack)
        now = _now()
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
                        signal.setitimer(signal.ITIMER_REAL, max(1e-3, old_delay - (now[0] - started)), old_interval)
        if self._signals and _first_expired(stack, now) is None:
            _stop_tracing()
        expired = _first_expired(stack, now) or (self if self.passed(now) else None)
        if expired is None:
            if isinstance(exc, (MemoryError, RecursionError)):
                # the step cannot finish for lack of memory or stack: abandoned like a step out of time
                _count(self)
                raise exhausted_error(exc) from exc
            return False
        if self.passed(now):
            _count(self)
        if isinstance(exc, StepTimeout) or (exc is not None and not isinstance(exc, Exception)):
            return False  # a timeout already, or KeyboardInterrupt / SystemExit: keep it
        # The block ended late: it returned, or raised something else (it swallowed or converted the
        # timeout). Either way it did not finish in time.
        raise _timeout_for(expired) from exc


_PROTECTED = frozenset(f.__code__ for f in (time_limit.__enter__, time_limit.__exit__, time_limit.passed, _now,
                                            _arm, _first_expired, _set_trip, _on_work_spent, _counted_new,
                                            work_clock, work_done,
                                            _stack, _count, _timeout_for, _on_alarm, _signals_usable, _tracer,
                                            _being_handled, _trace_until_exit, _stop_tracing,
                                            _no_new_frames))


# --------------------------------------------------------------------------------------------------
# process limits: memory, and the lifetime of a child
# --------------------------------------------------------------------------------------------------
def memory_resource():
    """The rlimit that bounds a process's data: RLIMIT_DATA on Linux (heap and private mappings, not
    address space merely reserved by thread stacks or libraries), RLIMIT_AS elsewhere."""
    import resource

    if sys.platform.startswith("linux") and hasattr(resource, "RLIMIT_DATA"):
        return resource, resource.RLIMIT_DATA
    return resource, getattr(resource, "RLIMIT_AS", None)


def limit_process_memory(mb: int | None = None) -> int | None:
    """Lower this process's data limit to ``mb`` MB (default ``RDPSYM_MEMORY_MB``), never raising it;
    children forked later inherit it. Past it an allocation fails with ``MemoryError`` (a step then
    fails with :class:`StepExhausted`) instead of the kernel killing the process. Returns the limit in
    bytes, or None where there is no such limit (not POSIX)."""
    try:
        resource, which = memory_resource()
    except ImportError:  # not POSIX
        return None
    if which is None:
        return None
    want = (_config.settings().memory_mb if mb is None else int(mb)) << 20
    soft, hard = resource.getrlimit(which)
    limit = min([want] + [v for v in (soft, hard) if v != resource.RLIM_INFINITY])
    try:
        resource.setrlimit(which, (limit, hard))
    except (ValueError, OSError):
        return None
    return limit


def die_with_parent() -> None:
    """Ask the kernel to kill this (child) process when its parent dies (Linux ``PR_SET_PDEATHSIG``), so
    a child is never orphaned by a parent that was killed (SIGKILL) or ended by a signal it does not
    handle; a no-op elsewhere. Call it first thing in a forked child."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        return


# --------------------------------------------------------------------------------------------------
# a call with a time limit, in this process or in a forked child
# --------------------------------------------------------------------------------------------------
def _child_body(fn, args, seconds, clock="wall", guard=None) -> tuple:
    """In a forked child: run the step under its time limit; (kind, payload) for the parent."""
    try:
        with time_limit(seconds, clock=clock, guard=guard):
            return "ok", fn(*args)
    except StepExhausted as exc:
        return "exhausted:" + exc.resource, str(exc)
    except StepTimeout as exc:
        return "timeout", str(exc)
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        return "error", repr(exc)[:2000]


def _in_child(write_fd: int, parent: int, fn, args, seconds, clock="wall", guard=None) -> None:
    """The forked child: never returns (``os._exit``: no atexit handler or finaliser of the parent's
    state runs here, and no buffered output of the parent is flushed twice)."""
    try:
        die_with_parent()
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler: the parent kills it
        limit_process_memory()
        kind, payload = _child_body(fn, args, seconds, clock, guard)
        try:
            data = pickle.dumps((kind, payload, timeout_count()))
        except BaseException as exc:  # noqa: BLE001 - e.g. an unpicklable value
            data = pickle.dumps(("error", f"the step's value cannot be sent back: {exc!r}"[:2000], timeout_count()))
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
    except BaseException:  # noqa: BLE001 - the parent sees no message and reports a dead child
        os._exit(1)
    os._exit(0)


def _death(status: int) -> tuple[str, str]:
    """(kind, text) for a child that ended without a message."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        if sig == signal.SIGKILL:  # not killed by us: the kernel's out-of-memory killer, most likely
            return "exhausted:memory", f"the step's process was killed ({name}; out of memory?)"
        return "error", f"the step's process was killed ({name})"
    return "error", f"the step's process died (exit code {os.WEXITSTATUS(status) if os.WIFEXITED(status) else status})"


def _run_forked(fn, args, limit: "time_limit") -> Any:
    """``fn(*args)`` in a forked child, inside the (entered) ``limit``: the child is killed at the deadline."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        wall = max(limit.remaining, 1e-3)
        if limit.work_deadline < math.inf:  # the child continues the work budget, under what is left of the guard
            _in_child(write_fd, parent, fn, args, max(limit.remaining_work, 1e-3), "work", wall)
        _in_child(write_fd, parent, fn, args, wall)
    os.close(write_fd)
    chunks: list[bytes] = []
    status = None
    try:
        while True:
            remaining = limit.remaining
            if remaining <= 0:
                raise _timeout_for(_first_expired(_stack(), _now()) or limit)
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
    if chunks:
        try:
            kind, payload, child_timeouts = pickle.loads(b"".join(chunks))
        except Exception as exc:  # noqa: BLE001 - a message cut short
            kind, payload, child_timeouts = "error", f"the step's value could not be read back: {exc!r}", 0
    else:
        (kind, payload), child_timeouts = _death(status), 0
    _stack()
    _local.timeouts += child_timeouts
    if kind == "ok":
        return payload
    if kind.startswith("exhausted"):
        exc = StepExhausted(payload)
        exc.resource = kind.partition(":")[2]
        if not child_timeouts:
            _count(limit)
        raise exc
    if kind == "timeout":
        raise StepTimeout(payload)
    raise RuntimeError(f"step failed in a worker process: {payload}")


def _can_fork() -> bool:
    """A child can be forked here: POSIX, and the main thread or a thread of a process that is not a
    daemonic worker (Dask's task threads may not fork a child: nothing can interrupt them)."""
    if not hasattr(os, "fork"):
        return False
    return threading.current_thread() is threading.main_thread() or not multiprocessing.current_process().daemon


def run_with_time_limit(fn: Callable[..., Any], *args, seconds: float | None = None, clock: str = "work") -> Any:
    """Run ``fn(*args)``; raise :class:`StepTimeout` if it does more than ``seconds`` of work, or runs past
    its hang guard (``clock="work"``), or takes longer than ``seconds`` (``clock="wall"``); and
    :class:`StepExhausted` if it runs out of memory or stack."""
    seconds = default_step_seconds() if seconds is None else check_seconds(seconds)
    if _signals_usable() or not _can_fork():
        # Main thread: the alarm. A thread of a daemonic worker process (a Dask worker's task thread)
        # may not start child processes and cannot be interrupted: there only the deadline checks of
        # time_limit hold, and the execution layer's per-task time limit bounds a step that never ends.
        with time_limit(seconds, clock=clock):
            return fn(*args)
    with time_limit(seconds, clock=clock) as limit:
        return _run_forked(fn, args, limit)


def run_in_child(fn: Callable[..., Any], *args, seconds: float | None = None, clock: str = "wall") -> Any:
    """Run ``fn(*args)`` in a forked child process, killed at the deadline whatever it is doing, under
    the data limit ``RDPSYM_MEMORY_MB``; the value comes back pickled. :class:`StepTimeout` past
    ``seconds``, :class:`StepExhausted` when the step ran out of memory or stack (or its process was
    killed for it), ``RuntimeError`` when it raised. For a step on hostile input whose arithmetic may
    run in C for minutes (exact big numbers), where the alarm of :func:`time_limit` cannot interrupt it.
    Where no child can be forked (a Dask task thread, not POSIX) it is :func:`run_with_time_limit`."""
    seconds = default_step_seconds() if seconds is None else check_seconds(seconds)
    if not _can_fork():
        return run_with_time_limit(fn, *args, seconds=seconds, clock=clock)
    with time_limit(seconds, clock=clock) as limit:
        return _run_forked(fn, args, limit)
