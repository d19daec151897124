"""Plots: Figure 1, Figure 2 and the conversion plot are written in each format; the CLI writes them."""

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("matplotlib")

from rdpsym.cli import main  # noqa: E402
from rdpsym.report import plots  # noqa: E402


def test_figure1_panels_and_curves(tmp_path):
    fig = plots.figure1(points=50)
    axes = fig.axes
    assert len(axes) == 3
    for ax in axes:
        assert len(ax.lines) == 3
        assert ax.get_ylim() == (0, 2.5)
        for line in ax.lines:
            y = np.asarray(line.get_ydata())
            assert np.all(np.isfinite(y)) and np.all(np.diff(y) >= -1e-15)  # Prop. 9: non-decreasing
    # Gaussian panel: alpha/(2 sigma^2) at alpha = 10, sigma = 2
    gauss = axes[2].lines[2]
    assert gauss.get_ydata()[-1] == pytest.approx(10 / 8, rel=1e-12)
    for suffix in ("png", "pdf", "svg"):
        out = plots.save(fig, tmp_path / f"f1.{suffix}")
        assert out.stat().st_size > 1000


def test_figure2_orders_the_bounds():
    fig = plots.figure2(n_max=60)
    assert len(fig.axes) == 6
    for ax in fig.axes:
        naive, advanced, prop4, rdp = (np.asarray(l.get_ydata()) for l in ax.lines[:4])
        # the RDP analysis is never worse than Prop. 4, which it refines (Mironov 2017, Sec. VII)
        assert np.all(rdp <= prop4 * (1 + 1e-9))
        assert np.all(rdp >= 1)


def test_best_alpha_ratio_ignores_infinite_orders():
    alphas = np.array([2.0, 3.0])
    values = np.array([np.inf, 0.1])
    out = plots._best_rdp_ratio(values, alphas, np.array([1.0]), 0.1)
    assert np.isfinite(out[0]) and out[0] == pytest.approx(np.exp(2 / 3 * 0.1 - np.log(0.1) / 3))


def test_save_rejects_unknown_format(tmp_path):
    fig = plots.figure1(points=10)
    with pytest.raises(ValueError, match="png, .pdf or .svg"):
        plots.save(fig, tmp_path / "x.jpg")


def test_cli_plot_curves_and_figure2(tmp_path):
    runner = CliRunner()
    for args, name in ((["plot", "curves"], "c.png"), (["plot", "figure2", "--n-max", "30"], "f2.svg")):
        res = runner.invoke(main, [*args, "-o", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
        assert (tmp_path / name).stat().st_size > 1000
    res = runner.invoke(main, ["plot", "curves", "-o", str(tmp_path / "c.gif")])
    assert res.exit_code != 0 and "png" in res.output


def test_conversion_plot_never_below_the_exact_profile():
    fig = plots.conversion_plot("gaussian", epsilons=[0.5, 2.0], sigma=1.0)
    ax = fig.axes[0]
    mironov, improved, exact = (np.asarray(l.get_ydata()) for l in ax.lines)
    assert np.all(exact > 0)
    assert np.all(improved >= exact) and np.all(mironov >= improved)  # conversions are upper bounds


def test_conversion_plot_needs_parameter_values():
    with pytest.raises(ValueError, match="need values"):
        plots.conversion_plot("gaussian", epsilons=[1.0])


@pytest.mark.parametrize("args, message", [
    (["plot", "curves", "--alpha-max", "inf"], "--alpha-max"),
    (["plot", "curves", "--alpha-max", "1"], "--alpha-max"),
    (["plot", "figure2", "--n-max", "100000000"], "--n-max"),
    (["plot", "figure2", "--n-max", "0"], "--n-max"),
])
def test_plot_options_are_bounded(tmp_path, args, message):
    """Review finding: --alpha-max inf crashed in the generated code; --n-max 1e8 tried to allocate 447 GiB."""
    from click.testing import CliRunner

    from rdpsym.cli import main

    out = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "x.png")])
    assert out.exit_code == 2 and message in out.output, out.output
