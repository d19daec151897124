"""Deprecated: moved to :mod:`rdpsym.report.latex` (kept for one release)."""

import warnings

from ..report.latex import (  # noqa: F401 - re-exported
    result_parameters,
    symbol_names,
    formula,
    result_latex,
    escape_text,
    latex_document,
    parse_back,
)

__all__ = ["result_parameters", "symbol_names", "formula", "result_latex", "escape_text", "latex_document", "parse_back"]

warnings.warn("rdpsym.export.latex is deprecated; import from rdpsym.report.latex instead",
              DeprecationWarning, stacklevel=2)
