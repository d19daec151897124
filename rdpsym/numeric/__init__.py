"""Independent numeric path: mpmath quadrature and sums that check the symbolic closed forms.

:func:`numeric_divergence` (:mod:`.driver`) is the entry point; a numeric backend is one file in
:mod:`.backends` registered with :func:`~rdpsym.numeric.backends.register_backend`.
"""

from .driver import numeric_divergence
from .value import NumericValue

__all__ = ["NumericValue", "numeric_divergence"]
