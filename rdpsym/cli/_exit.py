"""Exit codes of the ``rdpsym`` command line, and the group class that turns exceptions into them.

Every command exits with one of :class:`ExitCode`; :class:`RdpsymGroup` (the class of
:data:`rdpsym.cli.main`) ends an unexpected exception with one line on stderr and
:attr:`ExitCode.INTERNAL` instead of a traceback and exit 1 (the code of a failed verdict). The
traceback is shown with ``rdpsym --debug ...`` or ``RDPSYM_DEBUG=1``.
"""

from __future__ import annotations

import errno
import re
import traceback
from enum import IntEnum

import click

__all__ = ["ExitCode", "EXIT_CODES_HELP", "RdpsymGroup", "is_usage_error", "one_line"]


class ExitCode(IntEnum):
    """The exit codes of every ``rdpsym`` command (documented in ``rdpsym --help`` and the README)."""

    #: the guarantee holds: verified, proved or confirmed, every property holds, a finite budget
    OK = 0
    #: a failed verdict: a refuted claim, a mismatch, a regression, a failed property, no finite guarantee
    FAILED = 1
    #: bad usage: an unknown option or mechanism, a bad option value, a malformed input file
    USAGE = 2
    #: no verdict either way: numerics did not converge, nothing to verify (no closed form)
    INCONCLUSIVE = 3
    #: an internal error (a bug in rdpsym): one line on stderr; the traceback with --debug
    INTERNAL = 4
    #: interrupted (Ctrl-C)
    INTERRUPTED = 130


#: the table of exit codes for ``rdpsym --help`` (``\b`` keeps click from re-wrapping it)
EXIT_CODES_HELP = """\b
Exit codes:
    0  holds (verified, proved/confirmed, every property holds)
    1  a failed verdict (refuted, mismatch, regression, failed property)
    2  usage error (bad option value, unknown mechanism, malformed file)
    3  inconclusive (numerics did not converge, nothing to verify)
    4  internal error (one line; the traceback with --debug or RDPSYM_DEBUG=1)
  130  interrupted (Ctrl-C)"""

# library ValueError/TypeError messages that name the user's argument (rdpsym.check_claim, Parameter.validate,
# Mechanism.substitutions): bad input, exit code 2; any other ValueError is an internal error
_USER_INPUT = re.compile(r"^(claim|symbols|fixed|relation|order|alpha_range|parameters?)\b"
                         r"|^'[^']*' is not a parameter of ")


def is_usage_error(exc: BaseException) -> bool:
    """Whether ``exc`` (raised by a library call on the user's arguments) is bad input, not a bug:
    a formula that does not parse, or a ValueError/TypeError whose message names the argument."""
    from ..specify.text import FormulaError

    if isinstance(exc, FormulaError):
        return True
    return isinstance(exc, (ValueError, TypeError)) and bool(_USER_INPUT.match(str(exc)))


def one_line(text: object) -> str:
    """``text`` on one line: its first non-empty line, with "..." when more followed."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[0] + (" ..." if len(lines) > 1 else "")


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.find_root().params.get("debug"))


class RdpsymGroup(click.Group):
    """A click group whose commands end with an :class:`ExitCode`, never with a bare traceback.

    click's own usage errors (exit 2), ``--help``/``--version`` and ``sys.exit`` from a command pass
    through unchanged; Ctrl-C exits 130; any other exception prints
    ``rdpsym: internal error: <Type>: <message>`` and exits 4 (with the traceback under ``--debug``).
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort, EOFError):
            raise
        except click.ClickException as exc:
            if _debug(ctx) and exc.__cause__ is not None:
                traceback.print_exception(exc.__cause__)
            raise
        except KeyboardInterrupt as exc:
            click.echo("\nrdpsym: interrupted" + (f" ({one_line(exc)})" if str(exc) else ""), err=True)
            ctx.exit(ExitCode.INTERRUPTED)
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # `rdpsym list | head`: click handles a closed pipe
                raise
            self._internal_error(ctx, exc)
        except Exception as exc:
            self._internal_error(ctx, exc)

    @staticmethod
    def _internal_error(ctx: click.Context, exc: Exception):
        debug = _debug(ctx)
        if debug:
            traceback.print_exception(exc)
        message = one_line(exc)
        click.echo(f"rdpsym: internal error: {type(exc).__name__}" + (f": {message}" if message else "")
                   + ("" if debug else " (rerun with --debug for the traceback)"), err=True)
        ctx.exit(ExitCode.INTERNAL)
