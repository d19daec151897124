"""Commands that derive: ``table``, ``derive``, ``list`` and ``cache``."""

from __future__ import annotations

import sys
import time

import click

from . import main
from ._exit import ExitCode
from ._console import progress
from ._json import emit, json_option, result_json
from ._mechanism import mechanism_argument


@main.command()
@click.option("--latex", "as_latex", is_flag=True,
              help="Print a booktabs LaTeX table in the paper's layout (needs \\usepackage{booktabs,amsmath}).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per row: mechanism, general, kl, max_divergence (sympy strings), verification.")
@click.option("--no-cache", is_flag=True, help="Derive from scratch, ignoring the on-disk cache.")
@click.option("--step-seconds", type=float, default=None, help="Budget per symbolic step, in seconds of work: 30,000 sympy nodes built per second, "
                   "the same on any machine (default 20; a wall-clock hang guard at 10x).")
@click.option("--no-verify", is_flag=True, help="Skip the numeric verification of each cell.")
def table(as_latex: bool, as_json: bool, no_cache: bool, step_seconds: float | None, no_verify: bool):
    """Table II of Mironov 2017, derived by the engine.

    Randomized response, Laplace and Gaussian at alpha > 1, alpha = 1 and alpha = infinity. Each row is
    derived with the symbolic sensitivity, and sensitivity 1 is substituted afterwards (so the cells
    keep the paper's shape). Each cell is checked against independent mpmath numerics at the centre
    of the typical ranges (alpha = 2, 1, infinity); the Markdown table and the JSON show the status
    and the digits of agreement per cell (skip with --no-verify; --latex does not verify). Exit code 1
    if a derivation failed or a cell mismatches.
    """
    from rich.console import Console

    from .. import mechanisms
    from ..derive.mechanism_rdp import rdp
    from ..report.table import json_rows, latex_table, markdown_table, table_row

    if as_latex and as_json:
        raise click.BadParameter("choose one of --latex and --json", param_hint="--json")
    err = Console(stderr=True)
    rows = []
    for name in ("randomized_response", "laplace", "gaussian"):
        mech = mechanisms.get(name)
        with err.status(f"deriving {name}"):
            start = time.perf_counter()
            result = rdp(mech, cache=not no_cache, step_seconds=step_seconds)  # symbolic sensitivity
            seconds = time.perf_counter() - start
        fixed = {"sensitivity": 1} if "sensitivity" in mech.params else {}
        verification = ""
        if not no_verify and not as_latex and result.expr is not None:
            from ..verification import table_verification

            with err.status(f"verifying {name}"):
                report, verification = table_verification(mech, result, fixed, cache=not no_cache)
            result = report.result
        rows.append(table_row(mech, result, seconds, fixed, verification))
    click.echo(latex_table(rows) if as_latex else json_rows(rows) if as_json else markdown_table(rows))
    if any(r.result.status.value == "failed" or r.verification.startswith("mismatch") for r in rows):
        sys.exit(ExitCode.FAILED)


@main.command()
@click.argument("name")
@click.option("--no-cache", is_flag=True, help="Derive from scratch, ignoring the on-disk cache.")
@json_option
def derive(name: str, no_cache: bool, as_json: bool):
    """Derive the RDP curve of the mechanism NAME and print it with its provenance.

    NAME is a registered name (`rdpsym list`), path/to/file.py[:name] or package.module:attribute.
    With --json: the result (status, general form, conditions, special orders, parameters, provenance).
    """
    from ..derive.mechanism_rdp import rdp

    mech = mechanism_argument(name)
    with progress(f"deriving {mech.name}", enabled=not as_json):
        result = rdp(mech, cache=not no_cache)
    if as_json:
        emit("derive", {"mechanism": mech.name, "result": result_json(result)})
        return
    click.echo(str(result))
    click.echo("\nprovenance:\n" + result.provenance.describe())


@main.command("list")
@json_option
def list_mechanisms(as_json: bool):
    """List the registered mechanisms and where each comes from.

    A source is `built-in`, `entry point MODULE:ATTR (DIST VERSION)` (a package's `rdpsym.mechanisms`
    entry point), `file PATH` or `registered by MODULE`. An entry point that fails to load is listed
    with its error; name clashes are warned about on stderr (the registered one wins).
    """
    from .. import mechanisms

    rows = []
    for name in mechanisms.names():
        where = mechanisms.source(name)
        try:
            m = mechanisms.get(name)
        except ValueError as exc:  # a package's broken entry point: its row says so, the others list
            rows.append({"name": name, "title": None, "parameters": [], "source": where, "error": str(exc)})
            if not as_json:
                click.echo(f"{name:24s} (cannot be built: {exc})  from: {where}")
            continue
        rows.append({"name": name, "title": m.title, "parameters": list(m.params), "source": where, "error": None})
        if not as_json:
            click.echo(f"{name:24s} {m.title}  (parameters: {', '.join(m.params)})  from: {where}")
    problems = [str(p) for p in mechanisms.problems()]
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        emit("list", {"mechanisms": rows, "problems": problems})


@main.group()
def cache():
    """Inspect, verify or clear the on-disk cache (derivations and generated code)."""


def _cache_owners():
    """The cache module, after importing every owner of a disk cache (a cache registers itself with
    rdpsym._cache when its module is imported)."""
    from .. import _cache
    from ..accounting import curves  # noqa: F401 - the prepared curves
    from ..compile import series, store  # noqa: F401 - generated code and its series
    from ..derive import cache as derive_cache  # noqa: F401 - the derivations
    from ..verification import table  # noqa: F401 - the verification records of Table II cells

    return _cache


_CODE_KINDS = ("code", "series")
_RECORD_KINDS = ("verification",)


def _refuse(command: str, exc: Exception):
    """A cache directory that is not rdpsym's: the reason on stderr, exit code 2 (a setting to fix)."""
    click.echo(f"rdpsym: cache {command} refused: {exc}", err=True)
    sys.exit(ExitCode.USAGE)


@cache.command("clear")
@json_option
def cache_clear(as_json: bool):
    """Delete every cached derivation and all generated code, and empty the in-process caches.

    Only rdpsym's own entries are deleted (recognised by their name and format, in a directory marked as
    rdpsym's cache); a directory that is not rdpsym's cache is refused and left as it is."""
    _cache = _cache_owners()
    directory = _cache.cache_dir()
    before = set(directory.iterdir()) if directory.is_dir() else set()
    try:
        removed = _cache.clear_all()
    except _cache.CacheDirectoryError as exc:
        _refuse("clear", exc)
    gone = [f for f in before if not f.exists() and f.suffix == ".rdpsym"]
    code = sum(f.name.split("-", 1)[0] in _CODE_KINDS for f in gone)
    records = sum(f.name.split("-", 1)[0] in _RECORD_KINDS for f in gone)
    if as_json:
        emit("cache clear", {"directory": str(directory), "removed": removed, "derivations": len(gone) - code - records,
                             "generated_code": code, "verification_records": records})
        return
    click.echo(f"removed {removed} cached file(s) from {directory}: {len(gone) - code - records} derivation(s), "
               f"{code} generated-code file(s), {records} verification record(s); in-process caches emptied")


@cache.command("verify")
@json_option
def cache_verify(as_json: bool):
    """Check every entry (format, content hash, this user's signature, decoding) and discard each that
    fails, saying why; the next run computes them again."""
    _cache = _cache_owners()
    try:
        report = _cache.verify_all()
    except _cache.CacheDirectoryError as exc:
        _refuse("verify", exc)
    kept = sum(report.kept.values())
    if as_json:
        emit("cache verify", {"directory": str(report.directory), "kept": kept,
                              "discarded": [{"file": name, "reason": why} for name, why in report.discarded]})
        return
    for name, why in report.discarded:
        click.echo(f"discarded {name}: {why}")
    click.echo(f"checked {kept + len(report.discarded)} file(s) in {report.directory}: {kept} entr"
               f"{'y' if kept == 1 else 'ies'} kept, {len(report.discarded)} discarded")


@cache.command("path")
@json_option
def cache_path(as_json: bool):
    """Print the cache directory."""
    from .._cache import cache_dir

    if as_json:
        emit("cache path", {"directory": str(cache_dir())})
        return
    click.echo(str(cache_dir()))
