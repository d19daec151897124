"""The one reading of ``NAME=VALUE`` items on the command line (``--param``, ``--fixed``, ``--symbol``,
the ``NAME=VALUE,...`` list of ``--add``): what each value means is the caller's business (a number, a
formula), the split is written once here."""

from __future__ import annotations

from typing import Iterable

import click

__all__ = ["name_values"]


def name_values(items: Iterable[str], option: str, *, context: str = "", unique: bool = False) -> dict[str, str]:
    """``NAME=VALUE`` texts as ``{name: value text}``, both stripped, split at the first ``=``.

    An item without ``=`` or with an empty name raises :class:`click.BadParameter` naming ``option``
    (``"expected NAME=VALUE, got 'sigma'"``, prefixed with ``context``); with ``unique`` a name given
    twice does too, else the last value wins.
    """
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise click.BadParameter(f"{context}expected NAME=VALUE, got {item!r}", param_hint=option)
        if unique and name in out:
            raise click.BadParameter(f"{context}{name} given twice", param_hint=option)
        out[name] = value
    return out
