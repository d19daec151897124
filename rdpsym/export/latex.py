"""Deprecated: moved to :mod:`rdpsym.report.latex` (kept for one release)."""

import warnings

from ..report.latex import (
    PREAMBLE,
    escape_text,
    formula,
    latex_document,
    parse_back,
    result_latex,
    result_parameters,
    symbol_names,
)

__all__ = ["PREAMBLE", "escape_text", "formula", "latex_document", "parse_back", "result_latex", "result_parameters", "symbol_names"]

warnings.warn("rdpsym.export.latex is deprecated; import from rdpsym.report.latex instead",
              DeprecationWarning, stacklevel=2)
