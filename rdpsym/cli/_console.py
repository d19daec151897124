"""Where the commands print: tables that never truncate off a terminal, progress on stderr.

* :func:`output` -- the console of a command's tables. On a terminal it is rich's (the terminal's
  width); anywhere else (a pipe, a file, a CI log) it is as wide as the content, so no cell is ever
  cut to "alpha=…" or "sensit…" and no colour codes are written.
* :func:`progress` -- a rich progress bar on **stderr**, shown only when stderr is a terminal and the
  command is not writing JSON: a CI log or ``--json`` gets no control characters and stdout stays the
  command's output alone.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

from .._progress import is_terminal

__all__ = ["output", "progress", "Progress", "WIDE"]

#: the width of a console that is not a terminal: wider than any row (rich sizes a table to its content)
WIDE = 100_000


def output(stderr: bool = False):
    """A rich Console for stdout (or stderr): the terminal's width on a terminal, else :data:`WIDE`
    with soft wrapping (a long line stays one line) and no colour."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if is_terminal(stream):
        return Console(stderr=stderr)
    return Console(file=stream, width=WIDE, soft_wrap=True, no_color=True, highlight=False,
                   force_terminal=False, color_system=None)


class Progress:
    """A task on a rich progress bar (stderr), or nothing when disabled: ``advance``, ``update``."""

    def __init__(self, bar, task):
        self._bar, self._task = bar, task

    def update(self, completed: int | None = None, total: int | None = None, what: str | None = None) -> None:
        if self._bar is None:
            return
        from rich.markup import escape

        fields = {} if what is None else {"what": escape(what)}
        self._bar.update(self._task, completed=completed, total=total, **fields)

    def advance(self, what: str | None = None) -> None:
        if self._bar is None:
            return
        self._bar.advance(self._task)
        if what is not None:
            self.update(what=what)

    def __call__(self, done: int, total: int | None = None, what: str | None = None) -> None:
        """The callback form ``progress(done, total, what)`` the plotting functions take."""
        self.update(completed=done, total=total, what=what)


@contextlib.contextmanager
def progress(description: str, total: int | None = None, *, enabled: bool = True) -> Iterator[Progress]:
    """A progress bar on stderr for a run that may take seconds (``total`` None: a spinner with the
    elapsed time). Off (a no-op :class:`Progress`) when ``enabled`` is false (``--json``) or stderr is
    not a terminal."""
    if not (enabled and is_terminal(sys.stderr)):
        yield Progress(None, None)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("{task.fields[what]}"), console=Console(stderr=True),
                       transient=True)
    with bar:
        yield Progress(bar, bar.add_task(escape(description), total=total, what=""))
