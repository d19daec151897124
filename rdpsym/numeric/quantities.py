r"""What the numeric path computes: a quantity object per kind of order, instead of string modes.

* :class:`FiniteOrder` ``alpha``: :math:`D_\alpha = \frac{1}{\alpha-1}\log\int P^\alpha Q^{1-\alpha}`
  in log space, ``log I = L_max + log ∫ exp(L - L_max)`` with ``L = alpha log P + (1-alpha) log Q``.
* :class:`NearOne` ``alpha`` (``|alpha - 1| < 1/8``): the same divergence through
  ``I = ∫P + ∫P expm1((alpha-1)(log P - log Q))``, so ``log I ~ (alpha-1) KL`` keeps its relative
  accuracy (no cancellation in ``I - 1``). When ``(alpha-1) D`` is large the two terms cancel instead
  (a Gaussian with D = 8e8 at alpha = 1 - 1e-5 has I = e^-8000); the driver then retries with
  :meth:`NearOne.plain` (the plain log-space form), an explicit policy rather than a global switch.
* :class:`KL`: :math:`D_1 = E_P[\log P/Q]` (van Erven and Harremoës 2014, Thm. 5).
* :class:`Sup`: :math:`D_\infty = \operatorname{ess\,sup}_{P>0}\log P/Q` (ibid., Thm. 6).

:class:`Form` names the functions of ``log P`` and ``log Q`` the evaluation uses (the log of an
integrand, and the integrands themselves).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from ..specify.text.numbers import exact_number

__all__ = ["KL", "Form", "FiniteOrder", "NearOne", "Quantity", "Sup", "quantity_for"]

#: |alpha - 1| below which the near-one form is used first
NEAR_ONE = sp.Rational(1, 8)


class Form(enum.Enum):
    """Functions of (log P, log Q) at a point.

    Logs of integrands: ``FINITE`` ``a lp + (1-a) lq``; ``WEIGHT`` ``lp`` (the weight P); ``RATIO``
    ``lp - lq`` (for D_inf); ``KLABS`` ``log |P (lp - lq)|`` (tail checks of the KL integrand).
    Integrands (shifted by ``S``): ``FINITE`` ``exp(a lp + (1-a) lq - S)``, ``KL`` ``exp(lp - S)(lp -
    lq)``, ``NEAR1`` ``exp(lp - S) expm1((a-1)(lp - lq))``, ``WEIGHT`` ``exp(lp - S)``.
    """

    FINITE = "finite"
    WEIGHT = "weight"
    RATIO = "ratio"
    KLABS = "klabs"
    KL = "kl"
    NEAR1 = "near1"


@dataclass(frozen=True)
class Quantity:
    """A divergence the numeric path computes."""

    def order(self):
        """The order as an mpmath number at the current precision (None for KL and D_inf)."""
        return None


@dataclass(frozen=True)
class FiniteOrder(Quantity):
    """D_alpha at a finite order alpha != 1 (``alpha`` exact), in plain log space."""

    alpha: sp.Expr

    def order(self):
        a = self.alpha
        if a.is_Integer:
            return mpmath.mpf(a)
        if a.is_Rational:
            return mpmath.mpf(int(a.p)) / int(a.q)
        return mpmath.mpf(sp.Float(a, mpmath.mp.dps + 5))


@dataclass(frozen=True)
class NearOne(FiniteOrder):
    """D_alpha for ``|alpha - 1| < 1/8`` by the near-one form (see the module docstring)."""

    def plain(self) -> FiniteOrder:
        """The same order in plain log space (the driver's retry)."""
        return FiniteOrder(self.alpha)


@dataclass(frozen=True)
class KL(Quantity):
    """D_1 = KL(P || Q)."""


@dataclass(frozen=True)
class Sup(Quantity):
    """D_inf = ess sup log P/Q."""


def quantity_for(alpha: Any) -> Quantity:
    """The quantity for a user's order: ``oo`` -> :class:`Sup`, ``1`` -> :class:`KL`, ``|alpha - 1| <
    1/8`` -> :class:`NearOne`, else :class:`FiniteOrder`. Raises ``ValueError`` naming ``alpha``."""
    if alpha is sp.oo or (isinstance(alpha, mpmath.mpf) and alpha == mpmath.inf) or (
        isinstance(alpha, float) and alpha == math.inf
    ):
        return Sup()
    try:
        a = exact_number(alpha, "alpha", finite=True, real=True)
    except ArgumentError:
        raise ArgumentError("alpha", "a number > 0 or infinity",
                            message=f"alpha must be a number > 0 or infinity, found {alpha!r}.") from None
    if a.is_comparable is not True or not a > 0:
        raise ArgumentError("alpha", "> 0", message=f"alpha must be > 0 (Rényi orders are positive), found {alpha!r}.")
    if a == 1:
        return KL()
    if abs(a - 1) < NEAR_ONE:
        return NearOne(a)
    return FiniteOrder(a)
