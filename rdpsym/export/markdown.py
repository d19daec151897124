"""Deprecated: moved to :mod:`rdpsym.report.markdown` (kept for one release)."""

import warnings

from ..report.markdown import (
    result_markdown,
    table_markdown,
)

__all__ = ["result_markdown", "table_markdown"]

warnings.warn("rdpsym.export.markdown is deprecated; import from rdpsym.report.markdown instead",
              DeprecationWarning, stacklevel=2)
