"""Plots in the style of Mironov 2017 (arXiv:1702.07476 v3), drawn with matplotlib.

Every function takes ``ax=`` (draw on the caller's Axes) and returns the Figure; none touches
matplotlib's backend (a notebook's inline backend and a user's ``plt.show()`` work; the CLI picks a
non-interactive backend when it writes files). Each accepts any mechanism or result: a registered
name, a :class:`~rdpsym.Mechanism` or a :class:`~rdpsym.DivergenceResult`, a numeric curve (no closed
form) included, drawn from its certified values.

* :func:`rdp_plot` -- one RDP curve eps(alpha) of any mechanism or result.
* :func:`figure1` -- RDP budget curves eps(alpha), alpha in [1, 10], three panels (Figure 1):
  randomized response p in {0.55, 0.6, 0.75}; Laplace 1/lambda in {0.25, 0.5, 1}; Gaussian sigma in {4, 3, 2}.
* :func:`conversion_plot` -- delta(eps) from the RDP curve by each conversion (Prop. 3 and the improved
  conversion of Canonne, Kamath, Steinke 2020, Prop. 12) against the exact privacy profile, over an
  epsilon range chosen for the mechanism; a pure-DP epsilon (delta = 0 beyond it) is a vertical line.
* :func:`figure2` -- upper bounds on the multiplicative increase P(S)/Q(S) of an event's probability
  after n-fold composition (Figure 2): the naive bound exp(n eps), advanced composition (Dwork,
  Rothblum, Vadhan 2010: eps' = eps sqrt(2 n log(1/delta)) + n eps (e^eps - 1), optimised over delta),
  Prop. 4 (exp(2 eps sqrt(n log(1/Q(S))))) and the RDP analysis: Prop. 10 applied to the composed curve
  n eps(alpha) (Prop. 1), minimised over alpha:  P/Q <= exp((alpha-1)/alpha * n eps(alpha)) Q^(-1/alpha).

Every curve value comes from the derived results (``rdpsym.rdp``) through their stable float code
(:mod:`rdpsym.compile`), or for a numeric curve from its certified values; nothing is typed in.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import sympy as sp

__all__ = ["figure1", "figure2", "conversion_plot", "conversion_epsilons", "rdp_plot", "save", "FIGURE1_PANELS",
           "NUMERIC_PLOT_POINTS"]

#: (mechanism, parameter, values, label) of the three panels of Figure 1. The label formats a value unless
#: the mechanism says how its parameter is shown (``Mechanism.display``: Laplace's b as 1/λ).
FIGURE1_PANELS = (
    ("randomized_response", "p", (0.55, 0.6, 0.75), "p = {}"),
    ("laplace", "b", (4.0, 2.0, 1.0), "b = {:g}"),
    ("gaussian", "sigma", (4.0, 3.0, 2.0), "σ = {:g}"),
)


def _new_figure(nrows: int, ncols: int, figsize, **kwargs):
    """A new figure from pyplot, on whatever backend the user (or the CLI) chose: never forced here,
    so a notebook's inline backend or a user's ``plt.show()`` shows it."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, **kwargs)
    return fig, axes


def _axes_grid(ax, nrows: int, ncols: int, what: str):
    """``ax`` (one Axes, a sequence or a 2-D array of them) as an ``nrows`` x ``ncols`` grid."""
    grid = np.asarray(ax, dtype=object).reshape(-1) if not hasattr(ax, "plot") else np.asarray([ax], dtype=object)
    if grid.size != nrows * ncols or not all(hasattr(a, "plot") for a in grid):
        raise ValueError(f"ax: {what} needs {nrows * ncols} matplotlib Axes ({nrows} x {ncols}); got {ax!r}")
    return grid.reshape(nrows, ncols)


def _report(progress, done: int, total: int, what: str) -> None:
    if progress is not None:
        progress(done, total, what)


#: orders at which a numeric curve (no closed form) is evaluated for a plot: each costs quadratures
NUMERIC_PLOT_POINTS = 24


def _target(target):
    """``(mechanism or None, result)`` of a plot's target: a :class:`~rdpsym.DivergenceResult` (its
    mechanism if it has one), a :class:`~rdpsym.Mechanism` or anything :func:`rdpsym.mechanisms.resolve`
    accepts (then derived with :func:`rdpsym.rdp`). Chosen by what the object is, never by its name."""
    from .. import mechanisms
    from ..derive.mechanism_rdp import rdp
    from ..derive.result import DivergenceResult
    from ..specify.mechanism import Mechanism

    if isinstance(target, DivergenceResult):
        return target.mechanism, target
    mech = target if isinstance(target, Mechanism) else mechanisms.resolve(target)
    return mech, rdp(mech)


def _curve(name):
    """``(mechanism, result, curve, numeric)`` for ``name`` (see :func:`_target`; sensitivity defaults
    to 1): ``curve(alpha, **values)`` is the stable float code of the closed form, or for a numeric
    curve (``numeric`` True) the result's certified values (:meth:`DivergenceResult.evaluate`, 15
    digits) at each order, NaN (a gap in the plot, never a made-up value) where it has none."""
    mech, result = _target(name)
    numeric = result.expr is None
    if not numeric:
        from ..compile import to_numpy

        f = to_numpy(result)
    else:
        def f(alpha, **values):
            out = []
            for a in np.atleast_1d(alpha):
                try:
                    order = sp.oo if np.isinf(a) else sp.Rational(float(a))
                    out.append(float(result.evaluate(order, dps=15, **values)))
                except (ArithmeticError, ValueError):
                    out.append(float("nan"))
            return np.asarray(out)

    names = set(mech.params) if mech is not None else {s.name for s in result.symbols}

    def curve(alpha, **values):
        if "sensitivity" in names:
            values.setdefault("sensitivity", 1.0)
        return f(alpha, **values)

    return mech, result, curve, numeric


def _title(mech, result) -> str:
    if mech is not None:
        return mech.title or mech.name
    return result.label


def save(fig, out: str | Path) -> Path:
    """Write ``fig`` to ``out``; the format (png, pdf, svg) comes from the suffix."""
    out = Path(out)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("png", "pdf", "svg"):
        raise ValueError(f"out must end in .png, .pdf or .svg; got {str(out)!r}")
    fig.savefig(out, format=fmt, dpi=150, bbox_inches="tight")
    return out


def _draw(ax, curve, numeric: bool, alpha_max: float, points: int, values: dict, label: str):
    """One curve eps(alpha), alpha in [1, alpha_max], on ``ax``; a numeric curve at fewer orders, with markers."""
    at = np.linspace(1.0, alpha_max, NUMERIC_PLOT_POINTS if numeric else points)
    if numeric:
        label += " (numeric)"
    ax.plot(at, curve(at, **values), marker="." if numeric else None, label=label)


def rdp_plot(target, *, ax=None, alpha_max: float = 10.0, points: int = 400, label: str | None = None,
             **values):
    """The RDP curve eps(alpha), alpha in [1, ``alpha_max``], of ``target`` at parameter ``values``
    (sensitivity defaults to 1) on ``ax`` (a new figure when None); returns the Figure.

    ``target`` is any mechanism or result: a :class:`~rdpsym.DivergenceResult` (a closed form through
    its stable float code, or a numeric curve through its certified values at
    :data:`NUMERIC_PLOT_POINTS` orders, marked), a :class:`~rdpsym.Mechanism` or a registered name.
    Call it again with the same ``ax`` to compare curves.
    """
    if not (isinstance(alpha_max, (int, float)) and 1 < alpha_max <= 1e6):
        raise ValueError(f"alpha_max must be in (1, 1e6]; got {alpha_max!r}")
    mech, result, curve, numeric = _curve(target)
    created = ax is None
    if created:
        fig, axes = _new_figure(1, 1, (5.5, 4))
        ax = axes[0][0]
    shown = ", ".join(f"{k} = {v:g}" if isinstance(v, (int, float)) else f"{k} = {v}" for k, v in values.items())
    name = mech.name if mech is not None else result.label
    _draw(ax, curve, numeric, alpha_max, points, values,
          label if label is not None else (f"{name} ({shown})" if shown else name))
    ax.set_xlabel("α")
    ax.set_ylabel("ε(α)")
    ax.set_xlim(1, alpha_max)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    if created:
        ax.set_title(_title(mech, result), fontsize=10)
        ax.figure.tight_layout()
    return ax.figure


def figure1(alpha_max: float = 10.0, points: int = 400, panels=FIGURE1_PANELS, *, ax=None, progress=None):
    """Figure 1: RDP budget curves of randomized response, Laplace and Gaussian (sensitivity 1).

    ``panels``: ``(target, parameter, values, label)`` per panel (default :data:`FIGURE1_PANELS`); a
    target is a :class:`~rdpsym.Mechanism`, a registered name or a :class:`~rdpsym.DivergenceResult`
    (numeric curves too). Each curve is labelled by the mechanism's own rule for showing the parameter
    (``Mechanism.display``), else by ``label`` formatted with the value. The panel title is the
    mechanism's title. ``ax``: one Axes per panel to draw on (default: a new figure);
    ``progress(done, total, what)`` is called after each panel. Returns the Figure.
    """
    created = ax is None
    if created:
        fig, axes = _new_figure(1, len(panels), (4 * len(panels), 3.6), sharey=True)
    else:
        axes = _axes_grid(ax, 1, len(panels), "figure1")
    for i, (a, (name, param, values, label)) in enumerate(zip(axes[0], panels)):
        _report(progress, i, len(panels), f"deriving {getattr(name, 'name', name)}")
        mech, result, curve, numeric = _curve(name)
        for v in values:
            shown, shown_label = mech.shown(param, v) if mech is not None else (v, None)
            text = label.format(v) if shown_label is None else f"{shown_label} = {shown:g}"
            _draw(a, curve, numeric, alpha_max, points, {param: v}, text)
        a.set_title(_title(mech, result))
        a.set_xlabel("α")
        a.set_xlim(1, alpha_max)
        a.set_ylim(0, 2.5)
        a.grid(alpha=0.3)
        a.legend(loc="upper left")
    _report(progress, len(panels), len(panels), "")
    axes[0][0].set_ylabel("ε(α)")
    fig = axes[0][0].figure
    if created:
        fig.tight_layout()
    return fig


def _best_rdp_ratio(curve_values: np.ndarray, alphas: np.ndarray, n: np.ndarray, q: float) -> np.ndarray:
    """min over alpha of exp((alpha-1)/alpha * n eps(alpha) - log(q)/alpha)  (Prop. 10 on n eps(alpha))."""
    a = alphas[None, :]
    log_ratio = (a - 1) / a * n[:, None] * curve_values[None, :] - np.log(q) / a
    log_ratio = np.where(np.isfinite(log_ratio), log_ratio, np.inf)  # an infinite order never wins
    return np.exp(np.min(log_ratio, axis=1))


def _advanced_ratio(eps: float, n: np.ndarray, q: float) -> np.ndarray:
    """min over delta of (exp(eps') q + delta)/q with eps' from the advanced composition theorem."""
    deltas = np.logspace(-30, 0, 601)[None, :-1]
    eps_adv = eps * np.sqrt(2 * n[:, None] * np.log(1 / deltas)) + n[:, None] * eps * np.expm1(eps)
    return np.min(np.exp(eps_adv) + deltas / q, axis=1)


def figure2(n_max: int = 250, baselines=(1e-6, 1e-3, 1e-1), *, ax=None, progress=None):
    """Figure 2: bounds on P(S)/Q(S) after n-fold composition, for RR (p = 0.51) and Laplace (lambda = 20).

    ``ax``: a 2 x len(baselines) grid of Axes to draw on (default: a new figure); ``progress(done,
    total, what)`` is called after each row. Returns the Figure.
    """
    n = np.arange(1, n_max + 1, dtype=float)
    alphas = np.concatenate([1 + np.logspace(-4, 0, 200), np.logspace(np.log10(2.01), 5, 400)])
    rows = (("randomized_response", {"p": 0.51}, "Randomized response, p = 0.51"),
            ("laplace", {"b": 20.0}, "Laplace, λ = 20"))
    created = ax is None
    if created:
        fig, axes = _new_figure(len(rows), len(baselines), (4 * len(baselines), 3.4 * len(rows)))
    else:
        axes = _axes_grid(ax, len(rows), len(baselines), "figure2")
    for i, (name, values, title) in enumerate(rows):
        _report(progress, i, len(rows), f"deriving {name}")
        _, _, curve, _ = _curve(name)
        eps_dp = float(curve(np.inf, **values))  # eps-DP = (oo, eps)-RDP
        rdp_values = curve(alphas, **values)
        for j, q in enumerate(baselines):
            a = axes[i][j]
            a.semilogy(n, np.exp(n * eps_dp), label="naive n·ε")
            a.semilogy(n, _advanced_ratio(eps_dp, n, q), label="advanced composition")
            a.semilogy(n, np.exp(2 * eps_dp * np.sqrt(n * np.log(1 / q))), label="Prop. 4")
            a.semilogy(n, _best_rdp_ratio(rdp_values, alphas, n, q), label="RDP (Prop. 10, best α)")
            a.axhline(1 / q, color="grey", lw=0.8, ls=":")
            a.set_ylim(1, 1.5 / q)
            a.set_title(f"{title}; Q(S) = {q:g}", fontsize=9)
            a.set_xlabel("n")
            a.grid(alpha=0.3, which="both")
            if j == 0:
                a.set_ylabel("P(S)/Q(S) bound")
    _report(progress, len(rows), len(rows), "")
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig = axes[0][0].figure
    if created:
        fig.tight_layout()
    return fig


#: points of the conversion plot when its epsilons are chosen for the mechanism
CONVERSION_POINTS = 12
#: the smallest delta the chosen epsilon range reaches (the range ends where the curve gives this delta)
CONVERSION_DELTA_FLOOR = 1e-10


def _pure_epsilon(result, values, dps) -> float:
    """eps(oo) of the curve (the pure-DP epsilon, Mironov 2017, Def. 3 and Prop. 3): +inf when the
    mechanism is not pure DP or the value cannot be computed (then no pure-DP line is drawn)."""
    try:
        return float(result.evaluate(sp.oo, dps=dps, **values))
    except (ArithmeticError, ValueError):
        return math.inf


def conversion_epsilons(result, dps: int = 20, points: int = CONVERSION_POINTS, **values) -> np.ndarray:
    """The epsilons a conversion plot of ``result`` shows: for a pure-DP curve (eps(oo) = eps0 finite)
    ``points`` epsilons up to 1.15 eps0, so the region delta = 0 (epsilon >= eps0) is visible; else up
    to the epsilon the improved conversion gives at delta = :data:`CONVERSION_DELTA_FLOOR` (where every
    curve has fallen by ten orders of magnitude)."""
    from ..accounting.conversion import epsilon as rdp_epsilon

    eps0 = _pure_epsilon(result, values, dps)
    if math.isfinite(eps0) and eps0 > 0:
        hi = 1.15 * eps0
    else:
        hi = float(rdp_epsilon(result, CONVERSION_DELTA_FLOOR, method="improved", dps=dps, **values).value)
        if not (math.isfinite(hi) and hi > 0):
            hi = 4.0
    return np.linspace(hi / points, hi, points)


def conversion_plot(name="gaussian", epsilons=None, methods=("mironov", "improved"), dps: int = 20, *, ax=None,
                    progress=None, **values):
    """delta(eps) from the RDP curve of ``name`` by each conversion, against the exact privacy profile.

    ``name`` is any mechanism or result (a :class:`~rdpsym.Mechanism`, a registered name or a
    :class:`~rdpsym.DivergenceResult`; the exact profile needs the mechanism, so a result without one
    shows the conversions only). ``epsilons`` default: :func:`conversion_epsilons`. A pure-DP curve
    (eps(oo) = eps0 finite) has delta = 0 for epsilon >= eps0 (D_oo <= eps0: Mironov 2017, Def. 3),
    which a log axis cannot show: eps0 is drawn as a vertical line, the zero deltas are left out (never
    drawn as a small number) and the exact profile is not computed there. ``ax``: an Axes to draw on
    (default: a new figure); ``progress(done, total, what)`` after each point. Returns the Figure.
    """
    from ..accounting import conversions
    from ..accounting.conversion import delta as rdp_delta
    from ..accounting.profile import privacy_profile

    mech, result = _target(name)
    names = list(mech.params) if mech is not None else [s.name for s in result.symbols]
    if "sensitivity" in names:
        values.setdefault("sensitivity", 1)
    if mech is not None:
        mech.substitutions(values)  # validates names and domains
    else:
        result.substitutions(values)
    missing = set(names) - set(values)
    if missing:
        label = mech.name if mech is not None else result.label
        raise ValueError(f"parameters {sorted(missing)} of {label!r} need values (e.g. sigma=1)")
    eps0 = _pure_epsilon(result, values, dps)
    eps = np.asarray(epsilons if epsilons is not None else conversion_epsilons(result, dps, **values), dtype=float)
    total, done = len(eps) * (len(methods) + (mech is not None)), 0
    created = ax is None
    if created:
        fig, axes = _new_figure(1, 1, (5.5, 4))
        ax = axes[0][0]

    def positive(ds):
        return np.where(np.asarray(ds, dtype=float) > 0, ds, np.nan)  # delta = 0: not drawable on a log axis

    for method in methods:
        d = []
        for e in eps:
            d.append(float(rdp_delta(result, e, method=method, dps=dps, **values).value))
            done += 1
            _report(progress, done, total, f"{method} at ε = {e:.3g}")
        ax.semilogy(eps, positive(d), marker=".", label=conversions.get(method).label)
    if mech is not None:
        exact = []
        for e in eps:
            # at epsilon >= eps0 the exact delta is 0 (D_oo <= eps0): nothing to integrate
            exact.append(0.0 if e >= eps0 else float(privacy_profile(mech, e, dps=dps, **values)))
            done += 1
            _report(progress, done, total, f"exact profile at ε = {e:.3g}")
        ax.semilogy(eps, positive(exact), "k-", lw=2, label="exact privacy profile")
    if math.isfinite(eps0):
        ax.axvline(eps0, color="tab:red", ls="--", lw=1.2, label=f"pure DP: δ = 0 for ε ≥ {eps0:.4g}")
        if eps.size and eps.max() >= eps0:
            ax.axvspan(eps0, eps.max(), color="tab:red", alpha=0.06)
    shown = ", ".join(f"{k} = {v:g}" if isinstance(v, (int, float)) else f"{k} = {v}" for k, v in values.items())
    ax.set_title(f"{_title(mech, result)} ({shown})", fontsize=10)
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    if created:
        ax.figure.tight_layout()
    return ax.figure
