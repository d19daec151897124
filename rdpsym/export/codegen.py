"""Deprecated: moved to :mod:`rdpsym.compile` (kept for one release)."""

import warnings

from ..compile import (
    MOVING_TRUST,
    MOVING_WINDOW,
    SERIES_TERMS,
    SERIES_TOLERANCE,
    CodegenError,
    Series,
    evaluation_form,
    generate_source,
    identifier,
    series_expansions,
    singular_factors,
    to_numpy,
)

#: the old private spelling of :func:`rdpsym.compile.identifier`
_identifier = identifier

__all__ = ["MOVING_TRUST", "MOVING_WINDOW", "SERIES_TERMS", "SERIES_TOLERANCE", "CodegenError", "Series",
           "evaluation_form", "generate_source", "identifier", "series_expansions", "singular_factors", "to_numpy"]

warnings.warn("rdpsym.export.codegen is deprecated; import from rdpsym.compile instead",
              DeprecationWarning, stacklevel=2)
