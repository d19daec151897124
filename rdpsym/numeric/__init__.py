"""Independent numeric path: mpmath quadrature and sums that check the symbolic closed forms."""

from .divergence import NumericValue, numeric_divergence

__all__ = ["NumericValue", "numeric_divergence"]
