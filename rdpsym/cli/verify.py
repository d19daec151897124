"""``rdpsym verify``: check a mechanism's derived RDP curve against independent numerics."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import main
from ._console import output
from ._console import progress as progress_bar
from ._exit import ExitCode
from ._json import emit, json_option, result_json, verification_json
from ._mechanism import mechanism_argument
from ._params import name_values
from .options import execution_options

#: exit codes of ``rdpsym verify`` (see :class:`~rdpsym.cli._exit.ExitCode`; 2 is bad usage)
EXIT_VERIFIED, EXIT_MISMATCH, EXIT_INCONCLUSIVE = ExitCode.OK, ExitCode.FAILED, ExitCode.INCONCLUSIVE
EXIT_NO_CLOSED_FORM = ExitCode.INCONCLUSIVE  # nothing to verify: no verdict either way


def load_mechanism_file(path: Path, function: str | None = None):
    """The Mechanism defined by the Python file ``path`` (the user's own code, run at their request).

    Looked up in this order: ``function`` (a name in the file; called if callable); a module-level
    ``mechanism`` (a Mechanism, or a function returning one); the one factory the file registered
    with :func:`rdpsym.mechanisms.register`; the one function annotated ``-> Mechanism``
    (:func:`rdpsym.mechanisms.load_file`, which loads a file once per process and content).
    """
    from .. import mechanisms

    try:
        return mechanisms.load_file(path, function, argument="TARGET")
    except ValueError as exc:
        hint = "--function" if getattr(exc, "argument", None) == "attribute" else "TARGET"
        raise click.BadParameter(str(exc), param_hint=hint) from None


@main.command("verify")
@click.argument("target")
@click.option("--function", default=None, help="For a .py TARGET: the function (or variable) giving the Mechanism.")
@click.option("--dps", type=click.IntRange(10, 200), default=30, show_default=True, help="Decimal digits of the numerics.")
@click.option("--digits", type=float, default=None, help="Digits of agreement required (default 0.6 dps).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the drawn parameter points.")
@click.option("--level", type=click.Choice(["quick", "standard", "thorough"]), default="standard", show_default=True,
              help="How many points: quick (~8), standard (~25), thorough (every edge at every edge order).")
@click.option("--all-points", is_flag=True, help="List every point in the summary (default: the worst 12).")
@click.option("--no-cache", is_flag=True, help="Derive from scratch, ignoring the on-disk cache.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Hold parameter NAME at VALUE (an exact number such as 1, 1/3, 2.5) at every point; repeatable.")
@json_option
@execution_options
def verify_command(target, function, dps, digits, seed, level, all_points, no_cache, params, executor, as_json=False):
    """Verify the derived RDP curve of TARGET against independent high-precision numerics.

    TARGET is a registered mechanism name (see `rdpsym list`), package.module:attribute, or a path to a
    Python file defining one (a module-level `mechanism`, a function annotated `-> Mechanism`, or
    file.py:NAME / --function NAME); the file is imported, i.e. its code runs.

    The closed form from `rdp` is compared with mpmath quadrature/summation of the divergence, maximised
    over adjacent pairs and both directions, at typical and edge parameter points (alpha -> 1, alpha in
    (0,1), alpha up to 1000 and infinity, exceptional orders, finiteness edges, tiny and huge scales).

    Exit code: 0 verified, 1 mismatch (the closed form is wrong somewhere), 3 inconclusive (some numerics
    did not converge, or nothing to verify: a failed derivation), 2 bad usage, 4 internal error. A result
    without a closed form is a numeric curve: it is checked against an independent numeric method.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from .. import mechanisms
    from ..derive.mechanism_rdp import rdp
    from ..derive.result import Status
    from ..verification import verify

    console = output()
    err = Console(stderr=True)
    if digits is not None and not 0 < digits <= dps:  # nan too: checked before anything is derived
        raise click.BadParameter(f"must be a number of digits in (0, --dps = {dps}]; got {digits}", param_hint="--digits")
    if function is not None:  # --function NAME is TARGET:NAME for a file
        path = Path(target)
        if not (target.endswith(".py") or (path.is_file() and target not in mechanisms.names())):
            raise click.BadParameter("--function applies to a .py TARGET only", param_hint="--function")
        mech = load_mechanism_file(path, function)
    else:
        mech = mechanism_argument(target, "TARGET")
    from ..verification.checks import fixed_values

    raw = name_values(params, "--param", unique=True)
    try:
        fixed = fixed_values(mech.parameters, raw)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--param") from None

    with progress_bar(f"deriving {mech.name}", enabled=not as_json):
        result = rdp(mech, cache=not no_cache)
    if result.status is Status.FAILED or (result.expr is None and result.status is not Status.NUMERIC_ONLY):
        if as_json:
            emit("verify", {"mechanism": mech.name, "status": "nothing to verify", "result": result_json(result),
                            "verification": None}, EXIT_NO_CLOSED_FORM)
        console.print(str(result), markup=False)
        console.print(f"[red]nothing to verify[/red]: status {escape(str(result.status))}: {escape(str(result.reason))}")
        sys.exit(EXIT_NO_CLOSED_FORM)
    if not as_json:
        console.print(str(result), markup=False)
    if result.expr is None and not as_json:
        console.print("[yellow]no closed form[/yellow]: the numeric curve is checked against the independent "
                      "reference method (its exact pieces against the numeric path)")

    with Progress(TextColumn("verifying {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[last]}"), console=err, transient=True,
                  disable=as_json or not err.is_terminal) as bar:
        task = bar.add_task(escape(mech.name), total=None, last="")

        def progress(done, total, check):
            bar.update(task, completed=done, total=total, last=escape(f"{check.point.regime}: {check.status}"))

        report = verify(result, mechanism=mech, dps=dps, digits=digits, seed=seed, level=level, progress=progress,
                        executor=executor, fixed=fixed or None)

    import mpmath

    st = str(report.status)
    code = {"verified": EXIT_VERIFIED, "mismatch": EXIT_MISMATCH, "inconclusive": EXIT_INCONCLUSIVE}[st]
    if as_json:
        emit("verify", {"mechanism": mech.name, "status": st, "result": result_json(result),
                        "verification": verification_json(report)}, code)
        return
    checks = list(report.checks)
    if not all_points and len(checks) > 12:
        order = {"mismatch": 0, "inconclusive": 1, "agree": 2}
        checks = sorted(checks, key=lambda c: (order[c.status], c.digits))[:12]
    table = Table(title=f"{escape(mech.name)}: {len(report.checks)} points, dps {dps}, seed {seed}"
                  + ("" if len(checks) == len(report.checks) else " (worst 12 shown; --all-points for all)"))
    curve = "closed form" if result.expr is not None else "curve"
    for col in ("regime", "point", curve, "numeric", "rel. diff", "error est.", "digits", "status"):
        table.add_column(col, justify="right" if col in ("rel. diff", "error est.", "digits") else "left",
                         overflow="fold")  # a narrow terminal wraps a point, never cuts it to "alpha=…"
    colour = {"agree": "green", "mismatch": "red", "inconclusive": "yellow"}
    for c in checks:
        table.add_row(escape(str(c.point.regime)), escape(c.point.describe()), "n/a" if c.closed is None else mpmath.nstr(c.closed, 12),
                      mpmath.nstr(c.numeric, 12), mpmath.nstr(c.rel_diff, 2), mpmath.nstr(c.error, 2),
                      "all" if c.digits == float("inf") else f"{c.digits:.1f}",
                      f"[{colour[c.status]}]{c.status}[/{colour[c.status]}]")
    console.print(table)
    stcol = {"verified": "green", "mismatch": "red", "inconclusive": "yellow"}[st]
    console.print(f"[bold {stcol}]{escape(str(report))}[/]")
    sys.exit(code)
