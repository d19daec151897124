"""Commands that export: ``report``, ``plot`` (curves, conversion, figure2) and ``codegen``."""

from __future__ import annotations

from pathlib import Path

import click

from . import main
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
def report(name: str, fmt: str, standalone: bool, derivation: bool, provenance: bool, output: str | None):
    """Write a report on the RDP of the mechanism NAME.

    NAME is a registered name (`rdpsym list`), path/to/file.py[:name] or package.module:attribute.

    Markdown: statement, parameters, finiteness conditions, special orders (alpha = 1, infinity,
    removable singularities), verification evidence, the derivation steps and citations. LaTeX: a
    statement (a theorem-style environment with the parameters' symbols and the curve as a cases
    display) to \\input into a paper, which needs amsmath and amssymb; --standalone makes a document
    that compiles with pdflatex, --derivation and --provenance add those parts.
    """
    from ..derive.mechanism_rdp import rdp
    from ..report.report import report as make_report

    if fmt == "md" and (standalone or derivation or provenance):
        raise click.BadParameter("--standalone, --derivation and --provenance apply to --format tex "
                                 "(Markdown always has the derivation steps)", param_hint="--format")
    mech = _mechanism(name)
    text = make_report(mech, rdp(mech), fmt, standalone=standalone, derivation=derivation, provenance=provenance)
    if output:
        _write(output, text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("name")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the Python source to this file instead of standard output.")
def codegen(name: str, output: str | None):
    """Print numerically stable, vectorised numpy code for the RDP curve of mechanism NAME.

    The code imports only numpy: log-sum-exp, log1p/expm1, series near alpha = 1, near exceptional
    orders and near parameter boundaries; +inf outside the finiteness conditions. NAME is a registered
    name (`rdpsym list`), path/to/file.py[:name] or package.module:attribute.
    """
    from ..derive.mechanism_rdp import rdp
    from ..compile import generate_source

    source = generate_source(rdp(_mechanism(name)))
    if output:
        _write(output, source)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(source)


@main.group()
def plot():
    """Plots in the style of Mironov 2017 (PNG, PDF or SVG, chosen by the file suffix)."""


_OUT = click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), required=True,
                    help="Output file: .png, .pdf or .svg.")


def _save(fig, output: str):
    from ..report.plots import save

    try:
        save(fig, output)
    except (ValueError, OSError) as exc:
        raise click.BadParameter(str(exc), param_hint="--output") from None
    click.echo(f"wrote {output}", err=True)


@plot.command("curves")
@_OUT
@click.option("--alpha-max", type=click.FloatRange(min=1, min_open=True, max=1e6), default=10.0, show_default=True,
              help="Largest order shown (in (1, 1e6]).")
def plot_curves(output: str, alpha_max: float):
    """Figure 1: RDP budget curves of randomized response, Laplace and Gaussian (three panels)."""
    from ..report.plots import figure1

    if not alpha_max > 1:
        raise click.BadParameter(f"must be > 1; got {alpha_max}", param_hint="--alpha-max")
    _save(figure1(alpha_max=alpha_max), output)


@plot.command("figure2")
@_OUT
@click.option("--n-max", type=click.IntRange(min=1, max=10_000), default=250, show_default=True,
              help="Largest number of compositions (1 to 10000).")
def plot_figure2(output: str, n_max: int):
    """Figure 2: bounds on an event's probability increase after n-fold composition.

    Naive n*eps, advanced composition, Prop. 4 and the RDP analysis (best alpha in Prop. 10).
    """
    from ..report.plots import figure2

    if n_max < 1:
        raise click.BadParameter(f"must be >= 1; got {n_max}", param_hint="--n-max")
    _save(figure2(n_max=n_max), output)


@plot.command("conversion")
@click.argument("name", default="gaussian")
@_OUT
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter value, e.g. --param sigma=1 (sensitivity defaults to 1).")
def plot_conversion(name: str, output: str, params: tuple[str, ...]):
    """(epsilon, delta) curves from each RDP conversion against the exact privacy profile of NAME.

    NAME (default gaussian) is a registered name, path/to/file.py[:name] or package.module:attribute.
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
    try:
        fig = conversion_plot(mech, **values)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--param") from None
    _save(fig, output)
