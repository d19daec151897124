"""``rdpsym audit LIBRARY``: check every RDP function of another library against rdpsym's derivations."""

from __future__ import annotations

import json
import sys

import click

from . import main
from ._exit import ExitCode

_LIBRARIES = ("autodp", "dp_accounting", "opacus")


@main.command()
@click.argument("library", type=click.Choice(_LIBRARIES))
@click.option("--json", "json_out", metavar="FILE|-", default=None,
              help="Write the audit as JSON (schema rdpsym-audit/1, with command and exit_code as in "
                   "docs/json.md) to FILE, or to stdout with '-'.")
@click.option("--markdown", "markdown_out", metavar="FILE", default=None, help="Write the Markdown report to FILE.")
@click.option("--only", multiple=True, metavar="TEXT",
              help="Audit only the functions whose name contains TEXT (repeatable).")
@click.option("--digits", type=click.IntRange(1, 15), default=3, show_default=True,
              help="Relative agreement required (a formula error is off by far more).")
@click.option("--search", type=click.IntRange(0, 10_000), default=20, show_default=True,
              help="Hypothesis-guided points per function, beyond the grid.")
@click.option("--seconds", type=click.FloatRange(1, None), default=120.0, show_default=True,
              help="Time budget of one function (one order); what it does not finish is inconclusive.")
@click.option("--budget", type=click.FloatRange(1, None), default=600.0, show_default=True,
              help="Time budget of the whole audit; functions it does not reach are inconclusive.")
@click.option("--accountants/--no-accountants", default=True, show_default=True,
              help="Also audit the library's accountants: each epsilon(delta) and delta(epsilon) they report on "
                   "compositions of 1, 2, 10 and 40 steps and mixes, against rdpsym's certified bracket.")
@click.option("--accountant-budget", type=click.FloatRange(1, None), default=240.0, show_default=True,
              help="Time budget of the accountants' audit; cases it does not reach are inconclusive.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
def audit(library, json_out, markdown_out, only, digits, search, seconds, budget, accountants, accountant_budget,
          quiet):
    """Audit the RDP functions and accountant events of LIBRARY (autodp, dp_accounting or opacus).

    Every RDP function the library defines is listed: each with an rdpsym counterpart is checked with
    check_claim on the library's own callable, over a grid of orders (1 + 1e-9 .. 1e6, (0, 1) where the
    function accepts it) and parameters (typical and 100 times beyond), and a guided search; the others
    are listed as not covered, with the reason. Prints a Markdown report (to stderr with --json -).

    The accountants (dp_accounting's RDP and PLD accountants, Opacus' RDP, PRV and GDP accountants,
    autodp's composition) are run on compositions of the events each supports; each value is compared with
    rdpsym's certified bracket [lower, upper]: below lower is refuted (an under-report), above upper by more
    than the library's own tolerance is loose, otherwise confirmed.

    Exit code 0 when every checked function and accountant value is confirmed (or proved, or loose), 1 when
    one is refuted, 3 when none is refuted but one is inconclusive (it raised or returned NaN somewhere, a
    mechanism is not available, the time budget ran out); uncovered functions do not change it. 2 when
    LIBRARY is not installed.
    """
    from ..claims.audit import audit_accountants, audit_json, format_accountants, format_audit, inventory, run_inventory

    try:
        inv = inventory(library)
    except ImportError as exc:
        click.echo(f"error: {library} is not installed ({exc}); pip install {library.replace('_', '-')}", err=True)
        sys.exit(ExitCode.USAGE)

    def progress(row):
        if not quiet:
            d = row.digits
            click.echo(f"{row.function} [{row.case.order or 'curve'}]: {row.label}"
                       + ("" if d is None else f", {d:.1f} digits") + f" ({row.seconds:.1f} s)", err=True)

    settings = {"digits": digits, "search": search, "seconds": seconds, "budget": budget, "only": list(only)}
    rows = run_inventory(inv, digits=digits, search=search, seconds=seconds, budget=budget, only=tuple(only),
                         progress=progress)
    acc_rows, acc_note = [], ""
    if accountants:
        def acc_progress(row):
            if not quiet:
                c = row.case
                click.echo(f"{c.accountant} {c.composition.label} {c.quantity}@{c.target:g}: {row.verdict} "
                           f"({row.seconds:.1f} s)", err=True)

        acc_rows, acc_note = audit_accountants(library, only=tuple(only), budget=accountant_budget,
                                               progress=acc_progress)
        settings["accountant_budget"] = accountant_budget
    text = format_audit(rows, inv)
    if accountants:
        text += "\n" + format_accountants(acc_rows, acc_note)
    labels = {r.label for r in rows if r.checked} | {r.verdict for r in acc_rows}
    code = (ExitCode.FAILED if "refuted" in labels else ExitCode.INCONCLUSIVE if "inconclusive" in labels
            else ExitCode.OK)
    if markdown_out:
        with open(markdown_out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    if json_out:
        # the audit's own, richer schema (rdpsym-audit/1, docs/audit.md), with the keys every rdpsym
        # document has besides its schema (docs/json.md): the command and the exit code
        doc = json.dumps({**audit_json(rows, inv, settings, acc_rows if accountants else None, acc_note),
                          "command": "audit", "exit_code": int(code)}, indent=1)
        if json_out == "-":
            click.echo(doc)
        else:
            with open(json_out, "w", encoding="utf-8") as fh:
                fh.write(doc + "\n")
    click.echo(text, err=json_out == "-")
    if code:
        sys.exit(code)
