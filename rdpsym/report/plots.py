"""Plots in the style of Mironov 2017 (arXiv:1702.07476 v3), drawn with matplotlib (Agg backend).

* :func:`figure1` -- RDP budget curves eps(alpha), alpha in [1, 10], three panels (Figure 1):
  randomized response p in {0.55, 0.6, 0.75}; Laplace 1/lambda in {0.25, 0.5, 1}; Gaussian sigma in {4, 3, 2}.
* :func:`conversion_plot` -- delta(eps) from the RDP curve by each conversion (Prop. 3 and the improved
  conversion of Canonne, Kamath, Steinke 2020, Prop. 12) against the exact privacy profile.
* :func:`figure2` -- upper bounds on the multiplicative increase P(S)/Q(S) of an event's probability
  after n-fold composition (Figure 2): the naive bound exp(n eps), advanced composition (Dwork,
  Rothblum, Vadhan 2010: eps' = eps sqrt(2 n log(1/delta)) + n eps (e^eps - 1), optimised over delta),
  Prop. 4 (exp(2 eps sqrt(n log(1/Q(S))))) and the RDP analysis: Prop. 10 applied to the composed curve
  n eps(alpha) (Prop. 1), minimised over alpha:  P/Q <= exp((alpha-1)/alpha * n eps(alpha)) Q^(-1/alpha).

Every curve value comes from the derived results (``rdpsym.rdp``) through their stable float code
(:mod:`rdpsym.compile`); nothing is typed in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import sympy as sp

__all__ = ["figure1", "figure2", "conversion_plot", "save", "FIGURE1_PANELS"]

#: (mechanism, parameter, values, label) of the three panels of Figure 1. The label formats a value unless
#: the mechanism says how its parameter is shown (``Mechanism.display``: Laplace's b as 1/λ).
FIGURE1_PANELS = (
    ("randomized_response", "p", (0.55, 0.6, 0.75), "p = {}"),
    ("laplace", "b", (4.0, 2.0, 1.0), "b = {:g}"),
    ("gaussian", "sigma", (4.0, 3.0, 2.0), "σ = {:g}"),
)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


#: orders at which a numeric curve (no closed form) is evaluated for a plot: each costs quadratures
NUMERIC_PLOT_POINTS = 24


def _curve(name):
    """``(mechanism, result, curve, numeric)`` for a mechanism or a name ``name`` (anything
    :func:`rdpsym.mechanisms.resolve` accepts; sensitivity defaults to 1): ``curve(alpha, **values)`` is
    the stable float code of the closed form, or for a numeric curve (``numeric`` True) the result's
    certified values (:meth:`DivergenceResult.evaluate`, 15 digits) at each order, NaN (a gap in the
    plot, never a made-up value) where it has none."""
    from .. import mechanisms
    from ..derive.mechanism_rdp import rdp
    from ..specify.mechanism import Mechanism

    mech = name if isinstance(name, Mechanism) else mechanisms.resolve(name)
    result = rdp(mech)
    numeric = result.expr is None
    if not numeric:
        from ..compile import to_numpy

        f = to_numpy(result)
    else:
        def f(alpha, **values):
            out = []
            for a in np.atleast_1d(alpha):
                try:
                    out.append(float(result.evaluate(sp.Rational(float(a)), dps=15, **values)))
                except (ArithmeticError, ValueError):
                    out.append(float("nan"))
            return np.asarray(out)

    def curve(alpha, **values):
        if "sensitivity" in mech.params:
            values.setdefault("sensitivity", 1.0)
        return f(alpha, **values)

    return mech, result, curve, numeric


def save(fig, out: str | Path) -> Path:
    """Write ``fig`` to ``out``; the format (png, pdf, svg) comes from the suffix."""
    out = Path(out)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("png", "pdf", "svg"):
        raise ValueError(f"out must end in .png, .pdf or .svg; got {str(out)!r}")
    fig.savefig(out, format=fmt, dpi=150, bbox_inches="tight")
    return out


def figure1(alpha_max: float = 10.0, points: int = 400, panels=FIGURE1_PANELS):
    """Figure 1: RDP budget curves of randomized response, Laplace and Gaussian (sensitivity 1).

    ``panels``: ``(mechanism, parameter, values, label)`` per panel (default :data:`FIGURE1_PANELS`); a
    mechanism is a :class:`~rdpsym.Mechanism` or a registered name. Each curve is labelled by the
    mechanism's own rule for showing the parameter (``Mechanism.display``), else by ``label`` formatted
    with the value. The panel title is the mechanism's title.
    """
    plt = _pyplot()
    alphas = np.linspace(1.0, alpha_max, points)
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), sharey=True, squeeze=False)
    for ax, (name, param, values, label) in zip(axes[0], panels):
        mech, _, curve, numeric = _curve(name)
        at = np.linspace(1.0, alpha_max, NUMERIC_PLOT_POINTS) if numeric else alphas
        for v in values:
            shown, shown_label = mech.shown(param, v)
            text = label.format(v) if shown_label is None else f"{shown_label} = {shown:g}"
            if numeric:
                text += " (numeric)"
            ax.plot(at, curve(at, **{param: v}), marker="." if numeric else None, label=text)
        ax.set_title(mech.title or mech.name)
        ax.set_xlabel("α")
        ax.set_xlim(1, alpha_max)
        ax.set_ylim(0, 2.5)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
    axes[0][0].set_ylabel("ε(α)")
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


def figure2(n_max: int = 250, baselines=(1e-6, 1e-3, 1e-1)):
    """Figure 2: bounds on P(S)/Q(S) after n-fold composition, for RR (p = 0.51) and Laplace (lambda = 20)."""
    plt = _pyplot()
    n = np.arange(1, n_max + 1, dtype=float)
    alphas = np.concatenate([1 + np.logspace(-4, 0, 200), np.logspace(np.log10(2.01), 5, 400)])
    rows = (("randomized_response", {"p": 0.51}, "Randomized response, p = 0.51"),
            ("laplace", {"b": 20.0}, "Laplace, λ = 20"))
    fig, axes = plt.subplots(len(rows), len(baselines), figsize=(4 * len(baselines), 3.4 * len(rows)), squeeze=False)
    for i, (name, values, title) in enumerate(rows):
        _, _, curve, _ = _curve(name)
        eps_dp = float(curve(np.inf, **values))  # eps-DP = (oo, eps)-RDP
        rdp_values = curve(alphas, **values)
        for j, q in enumerate(baselines):
            ax = axes[i][j]
            ax.semilogy(n, np.exp(n * eps_dp), label="naive n·ε")
            ax.semilogy(n, _advanced_ratio(eps_dp, n, q), label="advanced composition")
            ax.semilogy(n, np.exp(2 * eps_dp * np.sqrt(n * np.log(1 / q))), label="Prop. 4")
            ax.semilogy(n, _best_rdp_ratio(rdp_values, alphas, n, q), label="RDP (Prop. 10, best α)")
            ax.axhline(1 / q, color="grey", lw=0.8, ls=":")
            ax.set_ylim(1, 1.5 / q)
            ax.set_title(f"{title}; Q(S) = {q:g}", fontsize=9)
            ax.set_xlabel("n")
            ax.grid(alpha=0.3, which="both")
            if j == 0:
                ax.set_ylabel("P(S)/Q(S) bound")
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def conversion_plot(name="gaussian", epsilons=None, methods=("mironov", "improved"), dps: int = 20, **values):
    """delta(eps) from the RDP curve of ``name`` (a Mechanism or a registered name) by each conversion,
    against the exact privacy profile."""
    from .. import mechanisms
    from ..accounting import conversions
    from ..accounting.conversion import delta as rdp_delta
    from ..accounting.profile import privacy_profile
    from ..derive.mechanism_rdp import rdp
    from ..specify.mechanism import Mechanism

    plt = _pyplot()
    mech = name if isinstance(name, Mechanism) else mechanisms.resolve(name)
    name = mech.name
    if "sensitivity" in mech.params:
        values.setdefault("sensitivity", 1)
    mech.substitutions(values)  # validates names and domains
    missing = set(mech.params) - set(values)
    if missing:
        raise ValueError(f"parameters {sorted(missing)} of {name!r} need values (e.g. sigma=1)")
    result = rdp(mech)
    eps = np.asarray(epsilons if epsilons is not None else np.linspace(0.05, 4.0, 14), dtype=float)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for method in methods:
        d = [float(rdp_delta(result, e, method=method, dps=dps, **values).value) for e in eps]
        ax.semilogy(eps, d, marker=".", label=conversions.get(method).label)
    exact = [float(privacy_profile(mech, e, dps=dps, **values)) for e in eps]
    ax.semilogy(eps, exact, "k-", lw=2, label="exact privacy profile")
    shown = ", ".join(f"{k} = {v:g}" for k, v in values.items())
    ax.set_title(f"{mech.title or name} ({shown})", fontsize=10)
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
