"""The mechanism argument of every command: :func:`rdpsym.mechanisms.resolve` with its errors as usage
errors (exit code 2) naming the argument."""

from __future__ import annotations

import click

__all__ = ["SPEC_HELP", "mechanism_argument"]

#: how a mechanism argument is written (the commands' --help repeats it)
SPEC_HELP = ("a registered name (`rdpsym list`), path/to/file.py[:name] or package.module:attribute "
             "(a Mechanism or a function of no arguments returning one, for package.module:attribute annotated "
             "`-> Mechanism` or registered; a file's code runs)")


def mechanism_argument(spec, param_hint: str = "NAME"):
    """The Mechanism named by ``spec``; a :class:`click.BadParameter` naming ``param_hint`` if none."""
    from .. import mechanisms

    try:
        return mechanisms.resolve(spec, argument=param_hint)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=param_hint) from None
