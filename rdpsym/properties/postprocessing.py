r"""Post-processing: the data-processing inequality for channels applied to the output.

For a Markov kernel K applied to the output alone, :math:`D_\alpha(PK\|QK) \le D_\alpha(P\|Q)` at every
order (Mironov 2017, arXiv:1702.07476 v3, Table I "post-processing"; van Erven and Harremoës 2014,
IEEE T-IT 60(7), Thm. 9). The check computes the processed distributions and their divergence
directly:

* :class:`Threshold` ``y = 1[x >= t]``: a two-point pmf whose masses are the CDF masses of P and Q;
* :class:`Round` ``y = step * round(x / step)`` clamped to ``[low, high]``: a pmf over bins;
* :class:`Clip` ``y = min(max(x, low), high)``: atoms at the ends plus the density in between;
* :class:`Kernel` a partition of the output into bins followed by a row-stochastic matrix
  (randomised post-processing; :func:`randomized_threshold` flips the thresholded bit).

:class:`InputDependent` applies a different map to P and to Q: it peeks at the input, so it is not a
post-processing, and the inequality may fail for it (the checks are shown to catch that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from ..specify.text.numbers import mp_number
from .curve import as_curve
from .distributions import NumericDensity, Processed, divergence_of, infinite_lattice_report, pairs_of
from .report import PropertyReport, report_from_rows

__all__ = ["Channel", "Threshold", "Round", "Clip", "Kernel", "InputDependent", "randomized_threshold",
           "default_channels", "post_processing"]

REF = "Mironov 2017 (arXiv:1702.07476 v3), Table I (post-processing); van Erven and Harremoës 2014, Thm. 9"


_mp = mp_number  # the one reading of numbers (rdpsym.specify.text.numbers), at the working precision


class Channel:
    """A map applied to the output; ``apply(density, which)`` gives the processed output.

    ``which`` is ``"P"`` or ``"Q"``; a genuine channel ignores it.
    """

    name = "channel"

    def apply(self, density: NumericDensity, which: str) -> Processed:  # pragma: no cover - interface
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name


def _binned(density: NumericDensity, edges: list) -> Processed:
    """Masses of the bins (-inf, e1), [e1, e2), ..., [ek, inf) (labels 0..k)."""
    ends = [-mpmath.inf] + [_mp(e) for e in edges] + [mpmath.inf]
    atoms, err = {}, mpmath.mpf(0)
    if density.discrete:
        for i in range(len(ends) - 1):
            atoms[i] = mpmath.fsum(density(p) for p in density.points if ends[i] <= p < ends[i + 1])
        return Processed(atoms)
    for i in range(len(ends) - 1):
        m, e = density.mass(ends[i], ends[i + 1])
        atoms[i], err = m, err + e
    return Processed(atoms, error=err)


@dataclass(frozen=True)
class Threshold(Channel):
    """``y = 1[x >= t]``."""

    t: float = 0.5

    @property
    def name(self):
        return f"threshold at {self.t}"

    def apply(self, density, which):
        return _binned(density, [self.t])


def _check_range(low, high) -> None:
    if not low < high:
        raise ArgumentError("low", "< high", message=f"low must be < high; got {low}, {high}")


@dataclass(frozen=True)
class Round(Channel):
    """``y = step * round(x / step)``, clamped to [low, high] (a deterministic map, so the DPI holds exactly)."""

    step: float = 1.0
    low: float = -4.0
    high: float = 5.0

    def __post_init__(self):
        if not self.step > 0:
            raise ArgumentError("step", "> 0", self.step)
        _check_range(self.low, self.high)

    @property
    def name(self):
        return f"round to {self.step} in [{self.low}, {self.high}]"

    def apply(self, density, which):
        step = _mp(self.step)
        k0, k1 = int(mpmath.ceil(_mp(self.low) / step)), int(mpmath.floor(_mp(self.high) / step))
        edges = [(k + mpmath.mpf(1) / 2) * step for k in range(k0, k1)]
        return _binned(density, edges)


@dataclass(frozen=True)
class Clip(Channel):
    """``y = min(max(x, low), high)``: atoms at low and high plus the density on (low, high)."""

    low: float = -1.0
    high: float = 2.0

    def __post_init__(self):
        _check_range(self.low, self.high)

    @property
    def name(self):
        return f"clip to [{self.low}, {self.high}]"

    def apply(self, density, which):
        lo, hi = _mp(self.low), _mp(self.high)
        if density.discrete:
            atoms: dict = {}
            for p in density.points:
                y = min(max(p, lo), hi)
                atoms[y] = atoms.get(y, mpmath.mpf(0)) + density(p)
            return Processed(atoms)
        m_lo, e1 = density.mass(-mpmath.inf, lo)
        m_hi, e2 = density.mass(hi, mpmath.inf)
        return Processed({"low": m_lo, "high": m_hi}, density, (lo, hi), e1 + e2)


@dataclass(frozen=True)
class Kernel(Channel):
    """Bins at ``edges`` (k edges, k + 1 bins), then output j with probability ``matrix[i][j]`` from bin i."""

    edges: tuple
    matrix: tuple
    label: str = ""

    def __post_init__(self):
        rows = len(self.edges) + 1
        if len(self.matrix) != rows:
            raise ValueError(f"matrix must have one row per bin ({rows}); got {len(self.matrix)}")
        for i, row in enumerate(self.matrix):
            vals = [sp.nsimplify(v) for v in row]
            if any(v < 0 for v in vals) or sp.Add(*vals) != 1:
                raise ValueError(f"matrix row {i} must be non-negative and sum to 1; got {row}")

    @property
    def name(self):
        return self.label or f"kernel on bins {list(self.edges)}"

    def apply(self, density, which):
        bins = _binned(density, list(self.edges))
        cols = len(self.matrix[0])
        atoms = {j: mpmath.fsum(bins.atoms[i] * _mp(self.matrix[i][j]) for i in range(len(self.matrix)))
                 for j in range(cols)}
        return Processed(atoms, error=bins.error)


def randomized_threshold(t: float = 0.5, flip: float = 0.25) -> Kernel:
    """Threshold at ``t``, then flip the bit with probability ``flip`` (a randomised channel)."""
    f = sp.nsimplify(flip)
    if not 0 <= f <= 1:
        raise ValueError(f"flip must be in [0, 1]; got {flip}")
    return Kernel((t,), ((1 - f, f), (f, 1 - f)), f"threshold at {t}, flip w.p. {flip}")


@dataclass(frozen=True)
class InputDependent(Channel):
    """NOT a channel: applies ``for_P`` to P's output and ``for_Q`` to Q's (it peeks at the input)."""

    for_P: Channel
    for_Q: Channel

    @property
    def name(self):
        return f"input-dependent ({self.for_P} on P, {self.for_Q} on Q)"

    def apply(self, density, which):
        return (self.for_P if which == "P" else self.for_Q).apply(density, which)


def default_channels(mechanism=None) -> list[Channel]:
    """Threshold, round, clip and a randomised threshold, placed around the outputs of the adjacent pair."""
    if mechanism is not None and mechanism.discrete:
        return [Threshold(sp.Rational(1, 2)), Clip(0, sp.Rational(1, 2)), randomized_threshold(sp.Rational(1, 2), sp.Rational(1, 4))]
    return [Threshold(sp.Rational(1, 2)), Round(sp.Rational(1, 2), -3, 4), Clip(-1, 2),
            randomized_threshold(sp.Rational(1, 3), sp.Rational(1, 5))]


def post_processing(target, values: dict | None = None, *, channels: Sequence[Channel] | None = None,
                    curve=None, orders=(sp.Rational(1, 2), sp.Rational(3, 2), 2, 10, sp.oo), dps: int = 30) -> PropertyReport:
    r"""Check :math:`D_\alpha(g(P)\|g(Q)) \le \varepsilon(\alpha)` for each channel g, pair, direction and order.

    ``target`` is a Mechanism (``curve`` defaults to its RDP curve :func:`rdpsym.rdp`) or a tuple
    ``(P, Q, x, support)`` with ``curve`` a DivergenceResult of that pair (or None: then the original
    divergence is computed numerically by :func:`rdpsym.numeric.maximum.numeric_maximum`). The processed divergence
    is computed from the processed distributions (:mod:`rdpsym.properties.distributions`).
    """
    from ..numeric.maximum import Direction, numeric_maximum
    from ..specify.mechanism import Mechanism

    skipped = infinite_lattice_report(target, "post-processing (data-processing inequality)", REF)
    if skipped is not None:
        return skipped
    channels = list(channels if channels is not None else default_channels(target if isinstance(target, Mechanism) else None))
    with mpmath.workdps(dps + 10):
        pairs = pairs_of(target, values)
        if curve is None and isinstance(target, Mechanism):
            curve = target
        crv = as_curve(curve, values) if curve is not None else None
        original = {}
        for a in orders:
            if crv is not None:
                original[a] = crv.value(a, dps + 10)
            else:
                P, Q, x, support = target
                nv = numeric_maximum((Direction(P, Q, x, support),), a, values or {}, dps + 10)
                original[a] = nv.value if nv.converged else None
        rows = []
        for ch in channels:
            for label, p, q in pairs:
                try:
                    gp, gq = ch.apply(p, "P"), ch.apply(q, "Q")
                except (ArithmeticError, ValueError) as exc:
                    rows.append((f"{ch} {label}", None, None, 0, str(exc)))
                    continue
                for a in orders:
                    a_mp = mpmath.inf if a == sp.oo else _mp(a)
                    try:
                        d = divergence_of(gp, gq, a_mp)
                    except (ArithmeticError, ValueError, ZeroDivisionError) as exc:
                        rows.append((f"{ch} {label} alpha={a}", None, None, 0, str(exc)))
                        continue
                    # The masses' quadrature errors move the divergence by about err/min(mass).
                    masses = [m for m in list(gp.atoms.values()) + list(gq.atoms.values()) if m > 0]
                    err = (gp.error + gq.error) / min(masses) if masses and a_mp != mpmath.inf else mpmath.mpf(0)
                    rows.append((f"{ch} {label} alpha={a}", d, original[a], err))
        name = "post-processing (data-processing inequality)"
        tol = mpmath.mpf(10) ** (-(dps - 8))
        return report_from_rows(name, rows, tol, reference=REF, target=str(getattr(target, "name", "pair")),
                                detail=f"channels: {', '.join(map(str, channels))}")
