"""``rdpsym properties NAME``: Table I / Appendix property checks as a table."""

from __future__ import annotations

import sys

import click

from . import main
from ._console import output, progress
from ._exit import ExitCode
from ._json import emit, json_option, suite_json
from ._mechanism import mechanism_argument
from ._params import name_values
from .options import execution_options


def _parse_values(items):
    from ..specify.text import as_number

    out = {}
    for key, text in name_values(items, "--param").items():
        try:
            value = as_number(text, key)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--param") from None
        if not value.is_finite:
            raise click.BadParameter(f"{key} must be finite; got {text!r}", param_hint="--param")
        out[key] = value
    return out


@main.command()
@click.argument("name")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Parameter value (repeatable); default: the centre of each typical range, sensitivity 1.")
@click.option("--quick", is_flag=True, help="Only the cheap checks (curve, post-processing, probability, eps-DP).")
@click.option("--only", multiple=True, help="Run only these checks (repeatable), e.g. --only curve.")
@click.option("--dps", type=int, default=30, show_default=True, help="Decimal digits of the numeric checks.")
@json_option
@execution_options
def properties(name: str, params, quick: bool, only, dps: int, executor, as_json: bool = False):
    """Check the properties of Mironov 2017's Table I and Appendix on the mechanism NAME.

    NAME is a registered name (`rdpsym list`), path/to/file.py[:name] or package.module:attribute.

    Prints one row per check: verdict (holds / fails / inconclusive), symbolic or numeric, points
    checked and the worst margin ((bound - value) / max(1, |bound|); negative means violated). Exit
    code 1 if any check fails or could not run (raised, lost its worker); else 3 if any applicable
    check is inconclusive; else 0. Each check is one task: --workers/--scheduler say where they run.
    With --json: one object per check (schema rdpsym/1, docs/json.md).
    """
    from rich.markup import escape
    from rich.table import Table
    import mpmath

    from ..properties import CHECKS, PropertyVerdict, check_all

    mech = mechanism_argument(name)
    if only and set(only) - set(CHECKS):
        raise click.BadParameter(f"unknown checks {sorted(set(only) - set(CHECKS))}; known: {sorted(CHECKS)}",
                                 param_hint="--only")
    values = _parse_values(params)
    if values:
        from ..properties import default_values

        values = {**default_values(mech), **values}
        try:
            mech.substitutions(values)  # unknown names and values outside a domain: a usage error
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--param") from None
    with progress(f"checking {mech.name}", enabled=not as_json):
        suite = check_all(mech, values or None, quick=quick, only=list(only) or None, dps=dps, executor=executor)
    code = (ExitCode.FAILED if suite.failures or suite.errors
            else ExitCode.INCONCLUSIVE if suite.verdict is PropertyVerdict.INCONCLUSIVE else ExitCode.OK)
    if as_json:
        emit("properties", suite_json(suite), code)
        return
    table = Table(title=escape(f"Properties of {mech.name} at {', '.join(f'{k}={v}' for k, v in suite.values.items())}"))
    for col in ("property", "verdict", "mode", "points", "worst margin"):
        table.add_column(col, overflow="fold")
    colours = {PropertyVerdict.HOLDS: "green", PropertyVerdict.FAILS: "red", PropertyVerdict.INCONCLUSIVE: "yellow"}
    for r in suite.reports:
        verdict = f"[{colours[r.verdict]}]{r.verdict}[/]" + ("" if r.applicable else " (n/a)")
        margin = "-" if r.worst_margin is None else mpmath.nstr(r.worst_margin, 4)
        table.add_row(escape(str(r.name)), verdict, escape(str(r.mode)), str(r.points_checked), margin)
    output().print(table)
    for r in suite.reports:
        if r.verdict is not PropertyVerdict.HOLDS:
            click.echo(f"{r.name}: {r.detail}")
    if code:
        sys.exit(code)
