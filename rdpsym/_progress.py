"""The ``progress=`` option of the long-running Python calls (:func:`rdpsym.verify`, :func:`rdpsym.rdp`).

``progress`` is ``None`` (the default: on when stderr is a terminal, so an interactive session sees signs
of life and a script, a pipe, a notebook's captured stream or a CI log gets nothing), ``True`` (lines on
stderr), ``False`` (nothing) or a callable, which is called instead (its signature is the calling
function's: ``progress(done, total, check)`` for :func:`rdpsym.verify`, ``progress(done, total, what)``
for :func:`rdpsym.rdp`). Lines are plain text, one per step, with the time since the call began.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

from ._numbers import ArgumentError

__all__ = ["Printer", "is_terminal", "progress_printer"]


def is_terminal(stream) -> bool:
    """Whether ``stream`` is an open terminal (a closed stream, or one without ``isatty``, is not)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Printer:
    """Progress lines on stderr: ``<what>: <done>/<total> <detail> (<seconds> s)``; :meth:`note` for a line
    of its own (a cost stated up front)."""

    def __init__(self, what: str):
        self.what = what
        self.started = time.monotonic()

    def _line(self, text: str) -> None:
        print(f"{self.what}: {text} ({time.monotonic() - self.started:.0f} s)", file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        self._line(text)

    def __call__(self, done: int, total: int, detail: Any = "") -> None:
        shown = " ".join(str(detail).split())
        self._line(f"{done}/{total} {shown[:120]}".rstrip())


def progress_printer(progress, what: str) -> Callable | None:
    """The callable that reports progress for ``progress`` (module docstring): the user's callable, a
    :class:`Printer` (``True``, or ``None`` with stderr a terminal), or None (nothing reported).
    ``ArgumentError`` for anything else."""
    if progress is None:
        return Printer(what) if is_terminal(sys.stderr) else None
    if progress is True:
        return Printer(what)
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise ArgumentError("progress", "None (on at a terminal), True, False or a callable", progress)
