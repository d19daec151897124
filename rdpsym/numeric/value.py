"""What the numeric path returns: a divergence with its error estimate and whether it converged.

One value type for every numeric method (:func:`rdpsym.numeric.numeric_divergence`, its multivariate
path and the reference method of :mod:`rdpsym.numeric.reference`), so the maximum over the directions
of a curve (:mod:`rdpsym.numeric.maximum`) reads them all alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath

__all__ = ["NumericValue"]


@dataclass(frozen=True)
class NumericValue:
    """A numeric divergence with its error estimate.

    ``value`` is an ``mpmath.mpf`` (possibly ``mpmath.inf``), never NaN; ``error`` an absolute error
    estimate (``inf`` when nothing could be computed: then ``value`` is 0 and meaningless); ``dps`` the
    requested decimal digits; ``method`` a short name of the algorithm; ``converged`` whether ``error``
    meets the convergence rule (:mod:`rdpsym.numeric.driver`); ``detail`` a human readable account (and
    the reason when not converged). ``evaluations`` counts this call's work, a load-independent measure:
    ``mpmath`` (log-density pairs or integrand values evaluated with mpmath), the backend's name (e.g.
    ``arb``: pairs evaluated by the backend outside its quadrature) and ``quad_nodes`` (integrand values
    of the backend's quadrature).
    """

    value: mpmath.mpf
    error: mpmath.mpf
    dps: int
    method: str
    converged: bool
    detail: str
    evaluations: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def failed(cls, dps: int, detail: str, method: str = "failed") -> "NumericValue":
        """Nothing could be computed: value 0 (meaningless), error +oo, not converged."""
        return cls(mpmath.mpf(0), mpmath.inf, dps, method, False, detail)

    @classmethod
    def infinite(cls, dps: int, detail: str, method: str = "divergence detected") -> "NumericValue":
        """The divergence is +oo (detected, so converged)."""
        return cls(mpmath.inf, mpmath.mpf(0), dps, method, True, detail)
