"""Deprecated: moved to :mod:`rdpsym.report.table` (kept for one release)."""

import warnings

from ..report.table import (
    TableRow,
    latex_table,
    markdown_table,
    table_row,
)

__all__ = ["TableRow", "latex_table", "markdown_table", "table_row"]

warnings.warn("rdpsym.export.table is deprecated; import from rdpsym.report.table instead",
              DeprecationWarning, stacklevel=2)
