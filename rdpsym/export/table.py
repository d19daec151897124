"""Deprecated: moved to :mod:`rdpsym.report.table` (kept for one release)."""

import warnings

from ..report.table import (  # noqa: F401 - re-exported
    TableRow,
    table_row,
    markdown_table,
    latex_table,
)

__all__ = ["TableRow", "table_row", "markdown_table", "latex_table"]

warnings.warn("rdpsym.export.table is deprecated; import from rdpsym.report.table instead",
              DeprecationWarning, stacklevel=2)
