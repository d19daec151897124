"""Commands that export: ``report``, ``plot`` (curves, conversion, figure2) and ``codegen``."""

from __future__ import annotations

from pathlib import Path

import click

from . import main
from ._console import progress
from ._json import emit, json_option, result_json
from ._mechanism import mechanism_argument
from ._params import name_values


def _mechanism(name: str):
    return mechanism_argument(name)


def _write(output: str, text: str):
    try:
        Path(output).write_text(text)
    except OSError as exc:  # a missing directory, no permission: the user's path, not a bug
        raise click.BadParameter(f"cannot write {output}: {exc.strerror or exc}", param_hint="--output") from None


@main.command()
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(["md", "tex"]), default="md", show_default=True,
              help="Markdown, or LaTeX: a fragment to \\input into a paper (see --standalone).")
@click.option("--standalone", is_flag=True, help="LaTeX: a complete document (article, T1 fonts, amsmath) instead of a fragment.")
@click.option("--derivation", is_flag=True, help="LaTeX: add the derivation (the pieces, their integrals, the sum, the limits).")
@click.option("--provenance", is_flag=True, help="LaTeX: add the provenance log (an appendix of a standalone document).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to this file instead of standard output.")
@json_option
def report(name: str, fmt: str, standalone: bool, derivation: bool, provenance: bool, output: str | None,
           as_json: bool = False):
    """Write a report on the RDP of the mechanism NAME.

    NAME is a registered name (`rdpsym list`), path/to/file.py[:name] or package.module:attribute.

    Markdown: statement, parameters, finiteness conditions, special orders (alpha = 1, infinity,
    removable singularities), verification evidence, the derivation steps and citations. LaTeX: a
    statement (a theorem-style environment with the parameters' symbols and the curve as a cases
    display) to \\input into a paper, which needs amsmath and amssymb; --standalone makes a document
    that compiles with pdflatex, --derivation and --provenance add those parts. With --json: the
    result (schema rdpsym/1, docs/json.md) and the report text under "text" (or the file under "output").
    """
    from ..derive.mechanism_rdp import rdp
    from ..report.report import report as make_report

    if fmt == "md" and (standalone or derivation or provenance):
        raise click.BadParameter("--standalone, --derivation and --provenance apply to --format tex "
                                 "(Markdown always has the derivation steps)", param_hint="--format")
    mech = _mechanism(name)
    result = rdp(mech)
    text = make_report(mech, result, fmt, standalone=standalone, derivation=derivation, provenance=provenance)
    if output:
        _write(output, text)
    if as_json:
        emit("report", {"mechanism": mech.name, "format": fmt, "result": result_json(result),
                        **({"output": output} if output else {"text": text})})
    elif output:
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("name")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the Python source to this file instead of standard output.")
@json_option
def codegen(name: str, output: str | None, as_json: bool):
    """Print numerically stable, vectorised numpy code for the RDP curve of mechanism NAME.

    The code imports only numpy: log-sum-exp, log1p/expm1, series near alpha = 1, near exceptional
    orders and near parameter boundaries; +inf outside the finiteness conditions. NAME is a registered
    name (`rdpsym list`), path/to/file.py[:name] or package.module:attribute. With --json: the source
    (or the file written) with the derivation's status. A curve with no closed form, or with a function
    that has no stable float code yet, is refused with the reason (exit code 3: no code, no verdict).
    """
    import sys

    from ..compile import CodegenError, generate_source
    from ..derive.mechanism_rdp import rdp
    from ._exit import ExitCode, one_line

    mech = _mechanism(name)
    with progress(f"generating code for {mech.name}", total=2, enabled=not as_json) as bar:
        bar.update(0, what="deriving")
        result = rdp(mech)
        bar.update(1, what="compiling")
        try:
            source = generate_source(result)
        except CodegenError as exc:  # not a bug: what rdpsym cannot write float code for (yet), said so
            why = one_line(exc)
            if as_json:
                emit("codegen", {"mechanism": mech.name, "status": str(result.status), "output": None, "source": None,
                                 "error": f"no float code: {why}"}, ExitCode.INCONCLUSIVE)
            click.echo(f"rdpsym: no float code for {mech.name}: {why}", err=True)
            sys.exit(ExitCode.INCONCLUSIVE)
    if output:
        _write(output, source)
        if as_json:
            emit("codegen", {"mechanism": mech.name, "status": str(result.status), "output": output, "source": None})
            return
        click.echo(f"wrote {output}", err=True)
    elif as_json:
        emit("codegen", {"mechanism": mech.name, "status": str(result.status), "output": None, "source": source})
    else:
        click.echo(source)


@main.group()
def plot():
    """Plots in the style of Mironov 2017 (PNG, PDF or SVG, chosen by the file suffix)."""


_OUT = click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), required=True,
                    help="Output file: .png, .pdf or .svg.")


def _backend():
    """The CLI writes files: a non-interactive backend (the library functions leave the backend alone)."""
    import matplotlib

    matplotlib.use("Agg")


def _save(fig, output: str, command: str, as_json: bool, **payload):
    from ..report.plots import save

    try:
        save(fig, output)
    except (ValueError, OSError) as exc:
        raise click.BadParameter(str(exc), param_hint="--output") from None
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    if as_json:
        emit(command, {"output": output, "format": Path(output).suffix.lstrip(".").lower(), **payload})
        return
    click.echo(f"wrote {output}", err=True)


def _check_suffix(output: str):
    """A bad suffix fails before minutes of work, not after."""
    if Path(output).suffix.lower() not in (".png", ".pdf", ".svg"):
        raise click.BadParameter(f"must end in .png, .pdf or .svg; got {output!r}", param_hint="--output")


@plot.command("curves")
@_OUT
@click.option("--alpha-max", type=click.FloatRange(min=1, min_open=True, max=1e6), default=10.0, show_default=True,
              help="Largest order shown (in (1, 1e6]).")
@json_option
def plot_curves(output: str, alpha_max: float, as_json: bool):
    """Figure 1: RDP budget curves of randomized response, Laplace and Gaussian (three panels)."""
    from ..report.plots import FIGURE1_PANELS, figure1

    if not alpha_max > 1:
        raise click.BadParameter(f"must be > 1; got {alpha_max}", param_hint="--alpha-max")
    _check_suffix(output)
    _backend()
    with progress("figure 1", total=len(FIGURE1_PANELS), enabled=not as_json) as bar:
        fig = figure1(alpha_max=alpha_max, progress=bar)
    _save(fig, output, "plot curves", as_json, alpha_max=alpha_max)


@plot.command("figure2")
@_OUT
@click.option("--n-max", type=click.IntRange(min=1, max=10_000), default=250, show_default=True,
              help="Largest number of compositions (1 to 10000).")
@json_option
def plot_figure2(output: str, n_max: int, as_json: bool):
    """Figure 2: bounds on an event's probability increase after n-fold composition.

    Naive n*eps, advanced composition, Prop. 4 and the RDP analysis (best alpha in Prop. 10).
    """
    from ..report.plots import figure2

    if n_max < 1:
        raise click.BadParameter(f"must be >= 1; got {n_max}", param_hint="--n-max")
    _check_suffix(output)
    _backend()
    with progress("figure 2", total=2, enabled=not as_json) as bar:
        fig = figure2(n_max=n_max, progress=bar)
    _save(fig, output, "plot figure2", as_json, n_max=n_max)


@plot.command("conversion")
@click.argument("name", default="gaussian")
@_OUT
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter value, e.g. --param sigma=1 (sensitivity defaults to 1).")
@json_option
def plot_conversion(name: str, output: str, params: tuple[str, ...], as_json: bool):
    """(epsilon, delta) curves from each RDP conversion against the exact privacy profile of NAME.

    NAME (default gaussian) is a registered name, path/to/file.py[:name] or package.module:attribute.
    The epsilon range follows the mechanism (up to where the exact delta is tiny, or a little past a
    pure-DP epsilon, which is drawn as a vertical line).
    """
    from ..report.plots import conversion_plot

    mech = _mechanism(name)
    values = {}
    for key, value in name_values(params, "--param").items():
        try:
            values[key] = float(value)
        except ValueError:
            raise click.BadParameter(f"expected NAME=VALUE with a number; got {key}={value!r}",
                                     param_hint="--param") from None
    for key, value in mech.defaults:  # the mechanism's example values (Gaussian: sigma = 1), never its name
        values.setdefault(key, float(value))
    _check_suffix(output)
    _backend()
    try:
        with progress(f"conversions of {mech.name}", enabled=not as_json) as bar:
            fig = conversion_plot(mech, progress=bar, **values)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--param") from None
    _save(fig, output, "plot conversion", as_json, mechanism=mech.name, values=values)
