"""Deprecated: moved to :mod:`rdpsym.report.report` (kept for one release)."""

import warnings

from ..report.report import (  # noqa: F401 - re-exported
    report,
    FORMATS,
)

__all__ = ["report", "FORMATS"]

warnings.warn("rdpsym.export.report is deprecated; import from rdpsym.report.report instead",
              DeprecationWarning, stacklevel=2)
