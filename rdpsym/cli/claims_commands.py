"""Commands that check formulas: ``check`` (one claim), ``replay`` (a claim's certificate) and ``regress`` (a
registry of closed forms)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import main
from ._console import output, progress
from ._exit import ExitCode, is_usage_error, one_line
from ._json import emit, json_option, verdict_json
from ._mechanism import mechanism_argument
from ._params import name_values
from .options import execution_options


def _order_option(value):
    """--order read as an order (:func:`rdpsym.claims.orders.order_value`), or a usage error naming it."""
    from ..claims.orders import order_value

    try:
        return order_value(value, "--order")
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--order") from None


@main.command()
@click.argument("name")
@click.option("--claim", "claim", required=True, help="The formula (Python-like or LaTeX; never executed).")
@click.option("--relation", type=click.Choice(["==", "<=", ">="]), default="==", show_default=True,
              help="'<=': the claim is an upper bound on the divergence; '>=': a lower bound.")
@click.option("--latex", is_flag=True, help="Parse the claim as LaTeX (default: auto-detect).")
@click.option("--order", default=None, metavar="ORDER", callback=lambda ctx, param, value: _order_option(value),
              help="A claim about one order instead of the curve: 1 (KL), oo (max divergence), or any positive "
                   "rational order (2, 5/2, 0.5).")
@click.option("--symbol", "symbol_items", multiple=True, metavar="NAME=EXPR",
              help="Map a name of the claim to the mechanism's parameters, e.g. lambda=b or eps=1/b.")
@click.option("--fixed", "fixed_items", multiple=True, metavar="PARAM=VALUE",
              help="Hold a parameter fixed (default: an unmentioned sensitivity is 1).")
@click.option("--all-sensitivities", is_flag=True, help="Do not fix an unmentioned sensitivity at 1.")
@click.option("--below-one", is_flag=True, help="Also check orders in (0, 1) (default: alpha > 1).")
@click.option("--certificate", "certificate_file", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE", help="Write the verdict's certificate (JSON, schema rdpsym-certificate/1) to FILE; "
                                   "check it again with 'rdpsym replay FILE'.")
@json_option
@execution_options
def check(name, claim, relation, latex, order, symbol_items, fixed_items, all_sensitivities, below_one, executor,
          certificate_file=None, as_json=False):
    """Check a claimed formula for the RDP of the mechanism NAME (a registered name,
    path/to/file.py[:name] or package.module:attribute).

    Prints the verdict (proved, confirmed, refuted, inconclusive) with its evidence and, for a
    refutation, a counterexample shrunk to a simple point. Exit code 0 for proved/confirmed, 1 for
    refuted, 3 for inconclusive, 2 for a claim or option that cannot be read. --workers/--scheduler say
    where the grid of points is evaluated (the verdict is the same everywhere). --certificate FILE writes
    the certificate of a proved, confirmed or refuted verdict (an inconclusive one has none: a note on
    stderr says so).

    Example: rdpsym check laplace --claim "1/lambda + exp(-1/lambda) - 1" --order 1
    """
    import sympy as sp

    from ..claims import Verdict, check_claim
    from ..specify.text import FormulaError

    mech = mechanism_argument(name)
    fixed = name_values(fixed_items, "--fixed")
    fixed_values = None
    if fixed or all_sensitivities:
        from ..specify.text import parse_formula

        try:
            fixed_values = {k: parse_formula(v, {}) for k, v in fixed.items()}
        except FormulaError as exc:
            raise click.BadParameter(str(exc), param_hint="--fixed") from None
    try:
        with progress(f"checking the claim on {mech.name}", enabled=not as_json):
            verdict = check_claim(mech, claim, relation, order,
                                  name_values(symbol_items, "--symbol") or None, fixed=fixed_values, latex=latex,
                                  alpha_range=(0 if below_one else 1, sp.oo), executor=executor)
    except (ValueError, TypeError) as exc:
        if not is_usage_error(exc):  # not about the user's arguments: an internal error (exit 4)
            raise
        click.echo(f"error: {one_line(exc)}", err=True)
        sys.exit(ExitCode.USAGE)
    code = {Verdict.REFUTED: ExitCode.FAILED, Verdict.INCONCLUSIVE: ExitCode.INCONCLUSIVE}.get(verdict.verdict,
                                                                                               ExitCode.OK)
    written = _write_certificate(verdict, certificate_file, quiet=as_json) if certificate_file else None
    if as_json:
        payload = verdict_json(verdict)
        if payload["certificate"] is not None:
            payload["certificate"]["file"] = written
        emit("check", {"mechanism": mech.name, **payload}, code)
        return
    click.echo(str(verdict))
    if code:
        sys.exit(code)


def _write_certificate(verdict, path, quiet: bool) -> str | None:
    """Write the verdict's certificate to ``path`` (its name), or say on stderr why there is none."""
    if verdict.certificate is None:
        why = ("the verdict is inconclusive" if str(verdict.verdict) == "inconclusive"
               else "the claim is a callable (code, not data)")
        click.echo(f"no certificate written: {why}", err=True)
        return None
    try:
        Path(path).write_text(verdict.certificate.to_json(indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise click.BadParameter(f"cannot write {path}: {exc.strerror or exc}", param_hint="--certificate") from None
    if not quiet:
        click.echo(f"wrote the certificate to {path}", err=True)
    return str(path)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@json_option
def replay(file, as_json=False):
    """Check the certificate in FILE again (written by 'rdpsym check ... --certificate FILE').

    The replay does no search: it runs the proof's rewrite steps again, settles every box of the certified
    pass again by ball arithmetic, or evaluates the counterexample again, and checks the divergence against
    independent numerics of the densities the certificate holds. Exit code 0 when the certificate holds,
    1 when it does not, 2 when FILE is not a certificate this version reads (the message names the field).
    """
    from ..claims.certificate import SCHEMA, Certificate, CertificateError

    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        click.echo(f"error: cannot read {file}: {getattr(exc, 'strerror', None) or exc}", err=True)
        sys.exit(ExitCode.USAGE)
    try:
        cert = Certificate.from_json(text)
    except CertificateError as exc:
        click.echo(f"error: {file}: {exc}", err=True)
        sys.exit(ExitCode.USAGE)
    outcome = cert.check()
    code = ExitCode.OK if outcome.holds else ExitCode.FAILED
    if as_json:
        emit("replay", {"file": str(file), "certificate_schema": SCHEMA, "verdict": cert.verdict,
                        "method": cert.method, "target": cert.target, "relation": cert.relation,
                        "holds": outcome.holds, "reason": outcome.reason, "checked": list(outcome.checked),
                        "seconds": outcome.seconds}, code)
        return
    click.echo(f"{'HOLDS' if outcome.holds else 'DOES NOT HOLD'}: {cert.describe()}")
    click.echo(f"  {outcome.reason}")
    for line in outcome.checked:
        click.echo(f"  - {line}")
    click.echo(f"  replayed in {outcome.seconds:.1f} s")
    if code:
        sys.exit(code)


@main.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--only", multiple=True, help="Run only entries whose name contains this text (repeatable).")
@click.option("--search", type=int, default=60, show_default=True, help="Hypothesis-guided points per entry.")
@click.option("--strict", is_flag=True, help="Exit 3 when an entry is inconclusive (default: only regressions fail).")
@click.option("-v", "--verbose", is_flag=True, help="Print every entry's full report.")
@click.option("--junit", "junit", type=click.Path(dir_okay=False, writable=True), default=None, metavar="FILE",
              help="Also write JUnit XML to FILE: one testcase per entry, a failure for a regression, an error "
                   "for an inconclusive entry.")
@click.option("--write-certificates", is_flag=True,
              help="Search every entry (no replay) and write the certificate of each formula that holds to the "
                   "registry's NAME.certificates/ directory.")
@click.option("--no-certificates", is_flag=True, help="Search every entry; do not replay certificates.")
@json_option
@execution_options
def regress(files, only, search, strict, verbose, executor, junit=None, write_certificates=False,
            no_certificates=False, as_json=False):
    """Re-derive and re-verify the closed forms of a regression registry (TOML).

    Without FILES, the registry shipped with rdpsym (all built-ins, Table II of Mironov 2017, and more
    closed forms from the literature). Each entry is checked symbolically first, then numerically at
    high precision, and the derivation against independent mpmath numerics. An entry passes only when
    the formula holds and the independent numerics ran and agreed; it is inconclusive when they gave no
    answer (not converged, or skipped). Prints a table and "N pass, M inconclusive, K fail". Exit code
    1 on any regression; else 3 with --strict if any entry is inconclusive; else 0. Each entry is one
    task: --workers/--scheduler say where they run. --junit FILE writes JUnit XML for CI; --json prints
    one JSON object (schema rdpsym/1, docs/json.md) instead of the table.

    Each entry's certificate (NAME.certificates/ beside the registry NAME.toml) is replayed when it is
    about the entry's check and still holds: no search, the same outcome on every machine. Where it is
    missing, stale or no longer holds the entry is searched, and the table says so. --write-certificates
    regenerates the directory.
    """
    from rich.markup import escape
    from rich.table import Table

    from ..regress import RegistryError, run_registry

    try:
        rows = run_registry(files, only=only, search=search, executor=executor, progress=not as_json,
                            certificates=not no_certificates, write_certificates=write_certificates)
    except RegistryError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(ExitCode.USAGE)
    bad = [r.name for r in rows if r.label == "fail"]
    unsure = [r.name for r in rows if r.label == "inconclusive"]
    code = ExitCode.FAILED if bad else (ExitCode.INCONCLUSIVE if unsure and strict else ExitCode.OK)
    if junit:
        from ._junit import write_junit

        try:
            write_junit(rows, junit)
        except OSError as exc:
            raise click.BadParameter(f"cannot write {junit}: {exc.strerror or exc}", param_hint="--junit") from None
    if as_json:
        emit("regress", {"entries": [{"name": r.name, "label": r.label, "derivation": r.status, "verdict": r.verdict,
                                      "independent": r.independent, "seconds": r.seconds, "source": r.source,
                                      "certificate": r.certificate or None, "detail": r.detail or None}
                                     for r in rows],
                         "counts": {"pass": len(rows) - len(bad) - len(unsure), "inconclusive": len(unsure),
                                    "fail": len(bad)}, "junit": junit}, code)
        return
    table = Table(title="rdpsym regress")
    for col in ("entry", "derivation", "verdict", "certificate", "independent numerics", "s", "source"):
        table.add_column(col, overflow="fold")
    marks = {"pass": "", "inconclusive": "[yellow]INCONCLUSIVE[/] ", "fail": "[bold red]REGRESSION[/] "}
    for r in rows:
        table.add_row(escape(str(r.name)), escape(str(r.status)), marks[r.label] + escape(str(r.verdict)),
                      escape(r.certificate.split(":")[0]), escape(str(r.independent)), f"{r.seconds:.1f}",
                      escape(str(r.source)))
    console = output()
    console.print(table)
    for r in rows:
        if r.certificate.startswith("stale"):
            console.print(f"[bold]{escape(str(r.name))}[/]: certificate {escape(r.certificate)}; searched instead")
        if not r.ok or verbose:
            console.print(f"[bold]{escape(str(r.name))}[/]: {escape(str(r.detail or ''))}")
            if verbose and r.report is not None:
                console.print(str(r.report), markup=False)
    console.print(f"{len(rows) - len(bad) - len(unsure)} pass, {len(unsure)} inconclusive, {len(bad)} fail"
                  f" ({len(rows)} entries)" + (f"; regressions: {', '.join(bad)}" if bad else "")
                  + (f"; inconclusive: {', '.join(unsure)}" if unsure else ""), markup=False)
    if junit:
        click.echo(f"wrote {junit}", err=True)
    if code:
        sys.exit(code)
