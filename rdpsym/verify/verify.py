"""Deprecated: moved to :mod:`rdpsym.verification.checks` (the report types to
:mod:`rdpsym.verification.report`)."""

import sys
import warnings

from ..verification.checks import *  # noqa: F401,F403
from ..verification.checks import SAME_SECONDS, __all__  # noqa: F401 - SAME_SECONDS: the old module's constant
from . import CallableModule

# importing this module rebinds ``rdpsym.verify.verify`` (the function until now) to it: keep it callable
sys.modules[__name__].__class__ = CallableModule
__wrapped__ = sys.modules[__package__].__wrapped__

warnings.warn("rdpsym.verify.verify is deprecated: import from rdpsym.verification",
              DeprecationWarning, stacklevel=2)
