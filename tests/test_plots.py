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


def test_plots_draw_on_the_callers_axes_and_leave_the_backend_alone(monkeypatch):
    """Issue 18, item 6: ax= is drawn on, the Figure is returned, matplotlib's backend is not forced."""
    import math

    import matplotlib
    import matplotlib.pyplot as plt
    import sympy as sp

    import rdpsym

    backend = matplotlib.get_backend()
    fig, axes = plt.subplots(1, 4, figsize=(12, 3))
    assert plots.figure1(points=20, ax=axes[:3]) is fig
    assert all(len(a.lines) == 3 for a in axes[:3])
    # a numeric curve (no closed form): N(0, 1) against N(1, 1), whose RDP is alpha/2 (Mironov 2017, Prop. 7)
    x = sp.Symbol("x", real=True)
    P, Q = (sp.exp(-(x - m) ** 2 / 2) / sp.sqrt(2 * sp.pi) for m in (0, 1))
    numeric = rdpsym.DivergenceResult(expr=None, status=rdpsym.Status.NUMERIC_ONLY, pair=(P, Q, x, sp.S.Reals),
                                      label="numeric N(0,1) vs N(1,1)")
    monkeypatch.setattr(plots, "NUMERIC_PLOT_POINTS", 4)
    assert plots.rdp_plot(numeric, ax=axes[3], alpha_max=4) is fig
    line = axes[3].lines[0]
    alphas, values = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert len(alphas) == 4 and "numeric" in line.get_label()
    assert np.allclose(values, alphas / 2, rtol=1e-12, atol=0)
    assert matplotlib.get_backend() == backend
    plt.close(fig)
    with pytest.raises(ValueError, match="ax: figure1 needs 3"):
        plots.figure1(points=5, ax=axes[:2])
    alone = plots.rdp_plot("gaussian", sigma=2.0)
    assert math.isfinite(alone.axes[0].lines[0].get_ydata()[-1])
    plt.close(alone)


def test_conversion_plot_shows_a_pure_dp_epsilon_as_a_line():
    """Randomized response (p = 0.75) is log(3)-DP: delta = 0 for epsilon >= log 3, drawn as a vertical
    line, the zeros left out of the log axis; below it the exact delta is p - e^eps (1 - p)."""
    import math

    import rdpsym

    p = 0.75
    eps0 = math.log(p / (1 - p))
    result = rdpsym.rdp(rdpsym.mechanisms.get("randomized_response"))
    chosen = plots.conversion_epsilons(result, p=p)
    assert chosen.max() == pytest.approx(1.15 * eps0, rel=1e-12) and chosen.min() > 0
    fig = plots.conversion_plot("randomized_response", epsilons=[0.5, 1.2], p=p)
    ax = fig.axes[0]
    exact = next(line for line in ax.lines if line.get_label() == "exact privacy profile")
    y = np.asarray(exact.get_ydata(), dtype=float)
    assert y[0] == pytest.approx(p - math.exp(0.5) * (1 - p), rel=1e-9) and np.isnan(y[1])
    pure = [line for line in ax.lines if line.get_label().startswith("pure DP")]
    assert len(pure) == 1 and np.allclose(pure[0].get_xdata(), eps0)
