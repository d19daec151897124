r"""A privacy loss distribution on a grid: masses at the losses (offset + j) h and a mass at +infinity.

``upper=True`` marks a pessimistic distribution (its delta bounds the true one from above), ``False``
an optimistic one. ``err`` bounds the l1 distance between ``masses`` and the exact result of the
operations that produced them (floating point of the convolutions); ``truncated`` is the mass the
truncations moved (to +infinity or up, pessimistic) or dropped (optimistic).

The profile is delta(eps) = inf + sum_j m_j (1 - e^{eps - l_j})_+ (Koskela, Jälkö and Honkela 2020,
"Computing tight differential privacy guarantees using FFT", AISTATS, Eq. 3.3; Doroshenko et al. 2022,
Sect. 2): a non-negative function of the loss, non-decreasing in it, so adding mass or moving mass up
can only increase it, and the l1 error of the masses bounds its error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["DiscretePLD", "PLDTooLarge", "identity"]

U = 2.0 ** -53


class PLDTooLarge(MemoryError):
    """A privacy loss distribution (or a composition) needs more grid points than the memory limit."""


@dataclass(frozen=True)
class DiscretePLD:
    h: float
    offset: int
    masses: np.ndarray
    inf: float
    err: float
    upper: bool
    truncated: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(len(self.masses))) * self.h

    @property
    def mass(self) -> float:
        return float(np.sum(self.masses)) + self.inf

    def delta(self, epsilon: float) -> tuple[float, float]:
        """delta(epsilon) of these masses and a bound on its error (floating point of the sum and
        ``err``); the bound is to be added (pessimistic) or taken off (optimistic)."""
        start = max(0, int(math.floor(epsilon / self.h)) - self.offset)
        m = self.masses[start:]
        ell = (self.offset + start + np.arange(len(m))) * self.h
        above = ell > epsilon
        with np.errstate(over="ignore", invalid="ignore"):
            terms = m[above] * -np.expm1(epsilon - ell[above])
        value = math.fsum(terms) + self.inf
        return value, self.err + 4 * U * (math.fsum(np.abs(terms)) + self.inf) + 1e-300


def identity(h: float, upper: bool) -> DiscretePLD:
    """The distribution of a mechanism that reveals nothing: all mass at loss 0."""
    return DiscretePLD(h, 0, np.ones(1), 0.0, 0.0, upper)
