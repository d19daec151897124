r"""A privacy loss distribution on a grid: masses at the losses (offset + j) h and a mass at +infinity.

``upper=True`` marks a pessimistic distribution (its delta bounds the true one from above), ``False``
an optimistic one. ``err`` bounds the l1 distance between ``masses`` and the exact result of the
operations that produced them (floating point of the convolutions, and the mass that wrapped around);
``truncated`` is the composed mass left outside the window (:mod:`.composition`).

The profile is delta(eps) = inf + sum_j m_j (1 - e^{eps - l_j})_+ (Koskela, Jälkö and Honkela 2020,
"Computing tight differential privacy guarantees using FFT", AISTATS, Eq. 3.3; Doroshenko et al. 2022,
Sect. 2): a non-negative function of the loss, non-decreasing in it, so adding mass or moving mass up
can only increase it, and the l1 error of the masses bounds its error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DiscretePLD", "PLDTooLarge", "PLDTimeout", "identity"]

U = 2.0 ** -53


class PLDTooLarge(MemoryError):
    """A privacy loss distribution (or a composition) needs more grid points than the memory limit."""


class PLDTimeout(RuntimeError):
    """Building a privacy loss distribution did not finish within its wall-clock guard (no bound)."""


@dataclass(frozen=True)
class DiscretePLD:
    h: float
    offset: int
    masses: np.ndarray
    inf: float
    err: float
    upper: bool
    truncated: float = 0.0
    #: optimistic only: a lower bound on the mean remainder per release (what the Jensen atoms lost by being
    #: rounded down to the grid, in [0, h], under the normalised P-measure; discretisation.optimistic)
    rem: float = 0.0
    #: the number of single releases composed into these masses (the remainders of each are independent)
    releases: int = 1

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(len(self.masses))) * self.h

    @property
    def mass(self) -> float:
        return float(np.sum(self.masses)) + self.inf


def identity(h: float, upper: bool) -> DiscretePLD:
    """The distribution of a mechanism that reveals nothing: all mass at loss 0."""
    return DiscretePLD(h, 0, np.ones(1), 0.0, 0.0, upper, 0.0, 0.0, 0)
