"""Independent numeric path: mpmath quadrature and sums that check the symbolic closed forms.

:func:`numeric_divergence` (:mod:`.driver`) computes one divergence ``D_alpha(P||Q)``; the numeric value
of a curve, the maximum over its directions with one convergence rule, is
:func:`~rdpsym.numeric.maximum.numeric_maximum` (:mod:`.maximum`), and the numeric supremum over a
family of pairs :mod:`.families`. A numeric backend is one file in :mod:`.backends` registered with
:func:`~rdpsym.numeric.backends.register_backend`.
"""

from .driver import numeric_divergence
from .value import NumericValue

__all__ = ["NumericValue", "numeric_divergence"]
