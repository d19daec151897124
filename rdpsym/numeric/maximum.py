r"""The numeric value of a curve at a point: the maximum over its directions, with one convergence rule.

A mechanism's RDP curve is the maximum of the divergences over its adjacent pairs and both directions
of each (Mironov 2017, arXiv:1702.07476 v3, Def. 4),

.. math:: \varepsilon(\alpha) = \max_{(P,Q)\ \text{adjacent}} \max\bigl(D_\alpha(P\|Q), D_\alpha(Q\|P)\bigr),

and the curve of one pair of densities is the maximum over that one direction. Every numeric value of a
curve in rdpsym (a result without a closed form, the independent side of verification and of claim
checks, the accountant's numeric curves) is this maximum, computed here by :func:`numeric_maximum` over
*sources*: a :class:`Direction` (one divergence ``D(P||Q)``) or anything with the same ``maximum``
method (a family of pairs sampled over its shifts, :class:`rdpsym.numeric.families.SampledFamily`).
Which directions a curve has is the caller's knowledge (the engine's worst pairs, or a mechanism's
declared pairs); the maximum and its rule are this module's.

**The convergence rule** (:func:`maximum_of`): the maximum has converged when every part has, because
a part that did not converge (or failed) might hold the maximum: it counts against the value, never
for it. The one exception is a converged ``+oo``: the maximum is ``+oo`` whatever the other parts are.
The error of a maximum is at most the largest error of its parts, since
:math:`|\max_i a_i - \max_i b_i| \le \max_i |a_i - b_i|`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import mpmath
import numpy as np
import sympy as sp

from .driver import numeric_divergence
from .reference import reference_divergence

__all__ = ["Direction", "NumericMaximum", "METHODS", "bound_maximum", "divergence_method", "maximum_of",
           "numeric_maximum"]

#: the numeric methods of one direction, by name: the numeric path and the reference method that checks
#: its values (:mod:`rdpsym.numeric.reference`, no quadrature code shared)
METHODS: dict[str, Callable] = {"numeric": numeric_divergence, "reference": reference_divergence}


def divergence_method(method: str) -> Callable:
    """The function ``(P, Q, x, support, alpha, values, dps=...) -> NumericValue`` of ``method``."""
    try:
        return METHODS[method]
    except (KeyError, TypeError):
        raise ValueError(f"method must be one of {sorted(METHODS)}; got {method!r}") from None


@dataclass(frozen=True)
class NumericMaximum:
    """The maximum of numeric evaluations under the convergence rule of the module docstring.

    ``value`` (an ``mpmath.mpf``, ``+inf`` allowed) is the largest value of the parts, meaningful only when
    ``converged``; ``error`` the largest error of the parts (0 when a converged ``+oo`` wins); ``parts``
    every ``(label, evaluation)`` with ``value``, ``error``, ``converged`` (and ``detail``, ``method``
    for divergences); ``notes`` what the sources say about how they were sampled.
    """

    value: Any
    error: Any
    converged: bool
    parts: tuple = ()
    notes: tuple[str, ...] = ()

    @property
    def top(self) -> tuple:
        """``(label, evaluation)`` of the part that holds the maximum (a converged ``+oo`` when one wins)."""
        infinite = [p for p in self.parts if p[1].value == mpmath.inf and p[1].converged]
        return infinite[0] if infinite else max(self.parts, key=lambda p: p[1].value)

    @property
    def failures(self) -> tuple:
        """The ``(label, evaluation)`` parts that did not converge."""
        return tuple(p for p in self.parts if not p[1].converged)

    def describe_failures(self) -> str:
        """``label: detail`` of every part that did not converge."""
        return "; ".join(f"{label}: {getattr(ev, 'detail', 'not converged')}" for label, ev in self.failures)

    def upper_bound(self) -> float:
        """A float at or above the maximum: the largest ``value + error`` of the parts, rounded up; ``+inf``
        when the maximum did not converge (no claim) or is ``+oo``."""
        if not self.converged or self.value == mpmath.inf:
            return math.inf
        # each value + error rounded up to a double (53 bits), which float() then holds exactly
        return max(float(mpmath.fadd(ev.value, ev.error, prec=53, rounding="u")) for _, ev in self.parts)


def maximum_of(parts: Iterable[tuple[str, Any]], notes: Sequence[str] = ()) -> NumericMaximum:
    """The maximum of ``parts`` (``(label, evaluation)``, each evaluation with ``value``, ``error`` and
    ``converged``) under the convergence rule: converged when every part converged, or when a converged
    ``+oo`` wins. No parts: not converged (a maximum over nothing is no value)."""
    parts = tuple(parts)
    if not parts:
        return NumericMaximum(mpmath.mpf(0), mpmath.inf, False, (), tuple(notes))
    if any(ev.value == mpmath.inf and ev.converged for _, ev in parts):
        return NumericMaximum(mpmath.inf, mpmath.mpf(0), True, parts, tuple(notes))
    value = max(ev.value for _, ev in parts)
    error = max(ev.error for _, ev in parts)
    return NumericMaximum(value, error, all(ev.converged for _, ev in parts), parts, tuple(notes))


def bound_maximum(bounds: Iterable) -> np.ndarray:
    """The same rule for float upper bounds computed many orders at once (numpy arrays, one per direction,
    ``+inf`` where a direction makes no claim): the elementwise maximum, with NaN (a value that could not
    be computed) read as ``+inf``, so a direction without a value fails the maximum there and ``+oo``
    wins. ``ValueError`` for no directions (a maximum over nothing is no bound)."""
    out = None
    for b in bounds:
        b = np.asarray(b, dtype=float)
        b = np.where(np.isnan(b), np.inf, b)
        out = b if out is None else np.maximum(out, b)
    if out is None:
        raise ValueError("bounds: a maximum over no directions")
    return out


@dataclass(frozen=True)
class Direction:
    """One direction ``D(P||Q)`` of a curve: densities (pmfs) ``P``, ``Q`` of the variable ``x`` (a
    symbol, or a tuple of them) on ``support``, named ``label`` in reports."""

    P: sp.Expr
    Q: sp.Expr
    x: Any
    support: sp.Set
    label: str = "D(P||Q)"

    def maximum(self, alpha, values: Mapping, dps: int, divergence: Callable = numeric_divergence) -> NumericMaximum:
        """This direction's divergence as a maximum of one part."""
        return maximum_of(((self.label, divergence(self.P, self.Q, self.x, self.support, alpha, values, dps=dps)),))


def numeric_maximum(sources: Iterable, alpha, values: Mapping, dps: int, *, method: str = "numeric") -> NumericMaximum:
    """The numeric value at order ``alpha`` and parameter ``values`` of the curve whose directions are
    ``sources`` (:class:`Direction` objects, or families sampled over their shifts), by ``method``
    (:data:`METHODS`: ``"numeric"``, :func:`rdpsym.numeric.numeric_divergence`, or ``"reference"``):
    the maximum under the convergence rule of the module docstring, at ``dps`` digits.

    Bad arguments raise ``ValueError`` naming them, as the methods do; an evaluation that did not
    converge is a part that did not converge, and the maximum then has not either."""
    divergence = divergence_method(method)
    parts: list = []
    notes: list[str] = []
    for source in sources:
        found = source.maximum(alpha, values, dps, divergence)
        parts += found.parts
        notes += found.notes
    return maximum_of(parts, notes)
