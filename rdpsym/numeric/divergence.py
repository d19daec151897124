"""Deprecated: the numeric path now lives in :mod:`rdpsym.numeric.driver` (with
:mod:`~rdpsym.numeric.quantities`, :mod:`~rdpsym.numeric.continuous`, :mod:`~rdpsym.numeric.discrete`,
:mod:`~rdpsym.numeric.kinks`, :mod:`~rdpsym.numeric.tails` and :mod:`~rdpsym.numeric.backends`).
Import ``numeric_divergence`` and ``NumericValue`` from :mod:`rdpsym.numeric`. This module re-exports
them for one release."""

import warnings

from .backends.arb import GL_FIRST_DEGREE, GL_MAX_DEGREE  # noqa: F401 - the old module's Gauss-Legendre degrees
from .driver import NumericValue, numeric_divergence, substitute_values

warnings.warn("rdpsym.numeric.divergence is deprecated; import numeric_divergence and NumericValue from "
              "rdpsym.numeric (the implementation is in rdpsym.numeric.driver)", DeprecationWarning, stacklevel=2)

__all__ = ["NumericValue", "numeric_divergence", "substitute_values"]
