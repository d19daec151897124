"""Deprecated: the verification package is :mod:`rdpsym.verification`; ``rdpsym.verify`` is the function.

This shim keeps ``import rdpsym.verify.points`` and ``from rdpsym.verify import Point`` working for one
release. Importing a package sets the parent's attribute to it, so once this package is imported
``rdpsym.verify`` is this module, not the function: the module is therefore callable (its class
delegates ``__call__`` to :func:`rdpsym.verification.verify`), and ``rdpsym.verify(...)`` works in
either order. The same holds one level down: importing ``rdpsym.verify.verify`` rebinds this
package's ``verify`` to that submodule, which is callable too. Importing the package or one of its
submodules warns ``DeprecationWarning``.
"""

import sys
import types
import warnings

from ..verification import (Point, PointCheck, VerificationReport, VerificationStatus, table_verification,
                            verification_points, verify)
from ..verification import verify as _verify  # the name ``verify`` here becomes the submodule once imported

__all__ = ["Point", "PointCheck", "VerificationReport", "VerificationStatus", "verification_points",
           "table_verification", "verify"]


class CallableModule(types.ModuleType):
    """A module that is also the function :func:`rdpsym.verification.verify`."""

    def __call__(self, *args, **kwargs):
        return _verify(*args, **kwargs)


sys.modules[__name__].__class__ = CallableModule
__wrapped__ = _verify  # inspect.signature(rdpsym.verify) then reads the function's

warnings.warn("the package rdpsym.verify is deprecated: import from rdpsym.verification "
              "(rdpsym.verify is the function)", DeprecationWarning, stacklevel=2)
