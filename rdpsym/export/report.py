"""Deprecated: moved to :mod:`rdpsym.report.report` (kept for one release)."""

import warnings

from ..report.report import (
    FORMATS,
    report,
)

__all__ = ["FORMATS", "report"]

warnings.warn("rdpsym.export.report is deprecated; import from rdpsym.report.report instead",
              DeprecationWarning, stacklevel=2)
