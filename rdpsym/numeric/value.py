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

    A Rényi divergence is never negative (Mironov 2017, arXiv:1702.07476 v3, Prop. 8; van Erven and
    Harremoës 2014, Thm. 8): a value below 0 by more than its error is a failure of the method, so such
    a value is never ``converged``, whichever method made it (enforced here, on construction).
    """

    value: mpmath.mpf
    error: mpmath.mpf
    dps: int
    method: str
    converged: bool
    detail: str
    evaluations: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if self.converged and self.value < -self.error:
            with mpmath.workdps(max(self.dps, 15)):
                why = (f"NOT TRUSTED: the value {mpmath.nstr(self.value, 8)} is negative beyond its error "
                       f"{mpmath.nstr(self.error, 3)}; a Rényi divergence is >= 0 (Mironov 2017, Prop. 8), so the "
                       "method failed here")
            object.__setattr__(self, "converged", False)
            object.__setattr__(self, "detail", f"{self.detail}; {why}" if self.detail else why)

    @classmethod
    def failed(cls, dps: int, detail: str, method: str = "failed") -> "NumericValue":
        """Nothing could be computed: value 0 (meaningless), error +oo, not converged."""
        return cls(mpmath.mpf(0), mpmath.inf, dps, method, False, detail)

    @classmethod
    def infinite(cls, dps: int, detail: str, method: str = "divergence detected") -> "NumericValue":
        """The divergence is +oo (detected, so converged)."""
        return cls(mpmath.inf, mpmath.mpf(0), dps, method, True, detail)

    @classmethod
    def rounded(cls, D, error, dps: int, method: str, converged: bool, detail: str) -> "NumericValue":
        """``D`` (computed at more than ``dps`` digits) returned at ``dps`` digits, the rounding
        added to ``error``: the stated error covers the value as returned, not only the computation
        behind it (at ``dps`` digits the rounding alone is about ``10^-dps |D|``)."""
        with mpmath.workdps(dps):
            value = +D
            # the rounding exactly (D may carry hundreds of digits more than dps), the sum rounded up
            off = abs(mpmath.fsub(D, value, exact=True)) if mpmath.isfinite(D) else mpmath.mpf(0)
            err = mpmath.inf if mpmath.isnan(error) else mpmath.fadd(error, off, rounding="u")
        return cls(value, err, dps, method, converged, detail)

    @classmethod
    def identical(cls, dps: int) -> "NumericValue":
        """P and Q are the same expression once the parameter values are in: D_alpha(P || P) = 0 exactly
        at every order, KL and D_oo included (Mironov 2017, Prop. 8, the equality case). Quadrature and
        sums can only approach 0, and a relative tolerance on 0 is never met."""
        return cls(mpmath.mpf(0), mpmath.mpf(0), dps, "exact: P = Q", True,
                   "P and Q are the same expression at these parameter values (D(P||P) = 0)")
