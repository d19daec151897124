"""Deprecated: moved to :mod:`rdpsym.verification.points`."""

import warnings

from ..verification.points import *  # noqa: F401,F403
from ..verification.points import EDGE_OFFSET, __all__  # noqa: F401 - EDGE_OFFSET: the old module's constant

warnings.warn("rdpsym.verify.points is deprecated: import from rdpsym.verification.points",
              DeprecationWarning, stacklevel=2)
