"""Certified tight composition: privacy loss distributions from a mechanism's densities.

* :mod:`.pairs` — which directed pairs of output densities bound each orientation (remove / add).
* :mod:`.discretisation` — the bucketed privacy loss of a pair, and its pessimistic (connect the dots)
  and optimistic (floor) distributions on a grid.
* :mod:`.distribution` — a mechanism's distributions at its parameter values.
* :mod:`.composition` — convolution by FFT with a stated error bound, repeated squaring, truncation.
* :mod:`.bounds` — the certified two-sided bracket of epsilon(delta) or delta(epsilon).
* :mod:`.events` — dp_accounting's DpEvent trees read into an :class:`~rdpsym.accounting.Accountant`.
"""

from .pmf import DiscretePLD, PLDTimeout, PLDTooLarge

__all__ = ["DiscretePLD", "PLDTooLarge", "PLDTimeout"]
