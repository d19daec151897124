"""Deprecated: moved to :mod:`rdpsym.report.table` (kept for one release)."""

import warnings

from ..report.table import (
    TableRow,
    json_rows,
    latex_table,
    markdown_table,
    table_document,
    table_row,
)

__all__ = ["TableRow", "json_rows", "latex_table", "markdown_table", "table_document", "table_row"]

warnings.warn("rdpsym.export.table is deprecated; import from rdpsym.report.table instead",
              DeprecationWarning, stacklevel=2)
