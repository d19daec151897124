"""Exit codes of the ``rdpsym`` command line, and the group class that turns every failure into one.

Every command exits with one of :class:`ExitCode`. :class:`RdpsymGroup` (the class of
:data:`rdpsym.cli.main`) holds the one mapping from failures to exit codes, each with one line on
stderr:

* a step that could not finish for lack of time, memory or stack (:class:`~rdpsym._timeout.StepTimeout`,
  ``MemoryError``, ``RecursionError`` escaping a command) is ``3`` (inconclusive), naming the step;
* a bad setting (``RDPSYM_STEP_SECONDS=0``, an unknown ``RDPSYM_NUMERIC_BACKEND``), checked once before
  the command runs, is ``2`` naming the variable and its rule; so is any
  :class:`~rdpsym._numbers.ArgumentError` (an argument the library refused, by name and rule), and an
  output or a directory that cannot be written (a full disk, a closed pipe, a read-only directory);
* SIGTERM stops the command as Ctrl-C does (the workers of a sweep are stopped first), exit ``143``;
* anything else unexpected is ``4``, an internal error (a bug), with the traceback under ``--debug``
  or ``RDPSYM_DEBUG=1``.

While a command runs, the process's data is limited to ``RDPSYM_MEMORY_MB`` (an allocation past it fails
with ``MemoryError``, reported as above, instead of the kernel killing the process), and a terminal
that cannot encode a character (a Latin-1 locale) shows ``?`` instead of failing.
"""

from __future__ import annotations

import contextlib
import errno
import re
import signal
import sys
import threading
import traceback
from enum import IntEnum
from typing import Iterator

import click

__all__ = ["ExitCode", "EXIT_CODES_HELP", "RdpsymGroup", "Terminated", "is_usage_error", "one_line", "shorten"]


class ExitCode(IntEnum):
    """The exit codes of every ``rdpsym`` command (documented in ``rdpsym --help`` and the README)."""

    #: the guarantee holds: verified, proved or confirmed, every property holds, a finite budget
    OK = 0
    #: a failed verdict: a refuted claim, a mismatch, a regression, a failed property, no finite guarantee
    FAILED = 1
    #: bad usage: an unknown option or mechanism, a bad option value or setting, a malformed input file,
    #: an output that cannot be written
    USAGE = 2
    #: no verdict either way: numerics did not converge, nothing to verify (no closed form), a step that
    #: ran out of time, memory or stack
    INCONCLUSIVE = 3
    #: an internal error (a bug in rdpsym): one line on stderr; the traceback with --debug
    INTERNAL = 4
    #: interrupted (Ctrl-C)
    INTERRUPTED = 130
    #: terminated (SIGTERM); a sweep's worker processes are stopped first
    TERMINATED = 143


#: the table of exit codes for ``rdpsym --help`` (``\b`` keeps click from re-wrapping it)
EXIT_CODES_HELP = """\b
Exit codes:
    0  holds (verified, proved/confirmed, every property holds)
    1  a failed verdict (refuted, mismatch, regression, failed property)
    2  usage error (bad option value or setting, unknown mechanism, malformed
       file, an output that cannot be written)
    3  inconclusive (numerics did not converge, nothing to verify, a step
       out of time, memory or stack)
    4  internal error (one line; the traceback with --debug or RDPSYM_DEBUG=1)
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM)"""

# library ValueError/TypeError messages that name the user's argument (rdpsym.check_claim, Parameter.validate,
# Mechanism.substitutions): bad input, exit code 2; any other ValueError is an internal error
_USER_INPUT = re.compile(r"^(claim|symbols|fixed|relation|order|alpha_range|parameters?)\b"
                         r"|^'[^']*' is not a parameter of ")

#: errors of the environment the user gave: an output or a directory that cannot be written or read
_ENVIRONMENT_ERRNOS = frozenset(getattr(errno, name) for name in (
    "EPIPE", "ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "ENAMETOOLONG", "EFBIG", "EISDIR", "ENOTDIR",
    "EMFILE", "ENFILE", "ELOOP", "EXDEV") if hasattr(errno, name))
#: errors of a resource running out: a process or memory that cannot be had
_EXHAUSTION_ERRNOS = frozenset(getattr(errno, name) for name in ("ENOMEM", "EAGAIN") if hasattr(errno, name))

#: the longest message printed: a hostile argument (a 100,000-character name) is shown cut
MAX_MESSAGE_CHARS = 1000


def is_usage_error(exc: BaseException) -> bool:
    """Whether ``exc`` (raised by a library call on the user's arguments) is bad input, not a bug:
    a formula that does not parse, or a ValueError/TypeError whose message names the argument."""
    from .._numbers import ArgumentError
    from ..specify.text import FormulaError

    if isinstance(exc, (FormulaError, ArgumentError)):  # an ArgumentError names the argument and its rule
        return True
    return isinstance(exc, (ValueError, TypeError)) and bool(_USER_INPUT.match(str(exc)))


def shorten(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters (its head and tail, with how much was left out)."""
    if len(text) <= limit:
        return text
    keep = (limit - 40) // 2
    return f"{text[:keep]} ... [{len(text) - 2 * keep} characters] ... {text[-keep:]}"


def one_line(text: object) -> str:
    """``text`` on one line: its first non-empty line, with "..." when more followed, at most
    :data:`MAX_MESSAGE_CHARS` long."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    if not lines:
        return ""
    return shorten(lines[0] + (" ..." if len(lines) > 1 else ""))


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.find_root().params.get("debug"))


# --------------------------------------------------------------------------------------------------
# the process while a command runs: SIGTERM, memory, the terminal's encoding
# --------------------------------------------------------------------------------------------------
class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread where Ctrl-C would be: everything in flight (a sweep's worker
    processes, a step's child process, a Dask client) is stopped the same way, then the command exits
    :attr:`ExitCode.TERMINATED`."""


_terminated = threading.Event()


def _on_sigterm(signum, frame):
    _terminated.set()
    # a second SIGTERM while stopping ends the process at once (its children die with it)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise Terminated("terminated (SIGTERM)")


def _replace_unencodable(stream) -> str | None:
    """Make ``stream`` write ``?`` for characters its encoding lacks (α, ε, ∞ on a Latin-1 terminal);
    returns its previous ``errors`` setting to restore, or None when nothing changed."""
    encoding = getattr(stream, "encoding", None)
    reconfigure = getattr(stream, "reconfigure", None)
    if not encoding or reconfigure is None:
        return None
    try:
        "αε∞≤…√".encode(encoding)
        return None
    except (UnicodeEncodeError, LookupError):
        pass
    previous = getattr(stream, "errors", None) or "strict"
    try:
        reconfigure(errors="replace")
    except (ValueError, OSError):
        return None
    return previous


@contextlib.contextmanager
def _guarded_process() -> Iterator[None]:
    """SIGTERM as :class:`Terminated`, the data limit ``RDPSYM_MEMORY_MB`` and an encoding-safe terminal,
    for the duration of a command (restored afterwards: CliRunner runs commands in the caller's process)."""
    previous_term = None
    if threading.current_thread() is threading.main_thread():
        previous_term = signal.signal(signal.SIGTERM, _on_sigterm)
        _terminated.clear()
    memory = None
    try:
        import resource

        from .._timeout import _memory_resource, limit_process_memory

        _, which = _memory_resource()
        if which is not None:
            memory = (which, resource.getrlimit(which))
            limit_process_memory()
    except (ImportError, ValueError, OSError):  # not POSIX, or a bad RDPSYM_MEMORY_MB (reported later)
        pass
    streams = [(s, _replace_unencodable(s)) for s in (sys.stdout, sys.stderr)]
    try:
        yield
    finally:
        for stream, errors in streams:
            if errors is not None:
                with contextlib.suppress(ValueError, OSError):
                    stream.reconfigure(errors=errors)
        if memory is not None:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(memory[0], memory[1])
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)


def check_settings() -> None:
    """Read the settings once, before a command runs: a bad value raises
    :class:`~rdpsym._numbers.ArgumentError` naming the variable (and is not met again at every point)."""
    from .. import _config

    current = _config.settings()
    if current.numeric_backend != "auto":
        from ..numeric.backends import get_backend

        get_backend(current.numeric_backend)


def _is_argument_error(exc: BaseException) -> bool:
    """An :class:`~rdpsym._numbers.ArgumentError`: raised on purpose for an argument (or a setting) that
    breaks a rule, naming it: bad usage, never a bug."""
    from .._numbers import ArgumentError

    return isinstance(exc, ArgumentError)


def _help_requested(ctx: click.Context) -> bool:
    return any(a in ("-h", "--help", "--version") for a in ctx.args)


def _step_of(exc: BaseException) -> str:
    """The innermost rdpsym function the exception passed through (outside the time-limit and CLI code):
    the step that could not finish."""
    step = ""
    tb = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.startswith("rdpsym.") and not module.startswith(("rdpsym._timeout", "rdpsym.cli")):
            step = f"{module}.{tb.tb_frame.f_code.co_name}"
        tb = tb.tb_next
    return step


class RdpsymGroup(click.Group):
    """A click group whose commands end with an :class:`ExitCode` and one line, never a bare traceback
    (see the module docstring for the mapping).

    click's own usage errors (exit 2), ``--help``/``--version`` and ``sys.exit`` from a command pass
    through unchanged; Ctrl-C exits 130, SIGTERM 143; any other exception prints
    ``rdpsym: internal error: <Type>: <message>`` and exits 4 (with the traceback under ``--debug``).
    """

    def invoke(self, ctx: click.Context):
        with _guarded_process():
            try:
                try:
                    if not _help_requested(ctx):
                        check_settings()
                    return super().invoke(ctx)
                finally:
                    sys.stdout.flush()  # a full disk or a closed pipe is found here, not at the interpreter's exit
            except (click.exceptions.Exit, click.Abort, EOFError):
                raise
            except click.ClickException as exc:
                if _debug(ctx) and exc.__cause__ is not None:
                    traceback.print_exception(exc.__cause__)
                exc.message = shorten(str(exc.message))
                raise
            except KeyboardInterrupt as exc:
                if _terminated.is_set() or isinstance(exc, Terminated):
                    self._say(ctx, "\nrdpsym: terminated (SIGTERM)")
                    ctx.exit(ExitCode.TERMINATED)
                self._say(ctx, "\nrdpsym: interrupted" + (f" ({one_line(exc)})" if str(exc) else ""))
                ctx.exit(ExitCode.INTERRUPTED)
            except OSError as exc:
                self._os_error(ctx, exc)
            except Exception as exc:
                if isinstance(exc, (MemoryError, RecursionError)):
                    self._exhausted(ctx, exc)
                if _is_argument_error(exc):  # a setting, or an argument the library refused by name
                    self._say(ctx, f"rdpsym: error: {one_line(exc)}")
                    ctx.exit(ExitCode.USAGE)
                self._internal_error(ctx, exc)
            except BaseException as exc:
                from .._timeout import StepTimeout

                if isinstance(exc, StepTimeout):
                    self._exhausted(ctx, exc)
                raise

    @staticmethod
    def _say(ctx: click.Context, line: str) -> None:
        """One line on stderr (which may be closed too: then nothing is said)."""
        try:
            click.echo(line, err=True)
        except (OSError, ValueError):
            pass

    def _exhausted(self, ctx: click.Context, exc: BaseException):
        """A step out of time, memory or stack: no verdict either way (exit 3), naming the step."""
        from .._timeout import StepTimeout, _exhausted

        if _debug(ctx):
            traceback.print_exception(exc)
        step = _step_of(exc)
        text = str(exc) if isinstance(exc, StepTimeout) else str(_exhausted(exc))
        self._say(ctx, f"rdpsym: inconclusive: a step was abandoned: {one_line(text)}"
                       + (f" (in {step})" if step else ""))
        ctx.exit(ExitCode.INCONCLUSIVE)

    def _os_error(self, ctx: click.Context, exc: OSError):
        if exc.errno in _EXHAUSTION_ERRNOS:
            self._exhausted(ctx, MemoryError(f"{type(exc).__name__}: {exc.strerror or exc}"))
        if exc.errno not in _ENVIRONMENT_ERRNOS:
            self._internal_error(ctx, exc)
        if _debug(ctx):
            traceback.print_exception(exc)
        if exc.errno == errno.EPIPE:
            # the reader of the output went away: nothing more can be shown there, and the interpreter
            # must not fail again flushing it at exit
            sys.stdout = click.utils.PacifyFlushWrapper(sys.stdout)
            self._say(ctx, "rdpsym: error: the output could not be written: the reader closed the pipe (EPIPE)")
        else:
            what = shorten(str(exc.filename), 200) if exc.filename else "the output could not be written"
            name = errno.errorcode.get(exc.errno, "")
            self._say(ctx, f"rdpsym: error: {what}: {exc.strerror or exc}" + (f" ({name})" if name else ""))
            if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
                sys.stdout = click.utils.PacifyFlushWrapper(sys.stdout)
        ctx.exit(ExitCode.USAGE)

    @classmethod
    def _internal_error(cls, ctx: click.Context, exc: Exception):
        debug = _debug(ctx)
        if debug:
            traceback.print_exception(exc)
        message = one_line(exc)
        cls._say(ctx, f"rdpsym: internal error: {type(exc).__name__}" + (f": {message}" if message else "")
                      + ("" if debug else " (rerun with --debug for the traceback)"))
        ctx.exit(ExitCode.INTERNAL)
