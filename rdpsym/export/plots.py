"""Deprecated: moved to :mod:`rdpsym.report.plots` (kept for one release)."""

import warnings

from ..report.plots import (
    FIGURE1_PANELS,
    conversion_plot,
    figure1,
    figure2,
    save,
)

__all__ = ["FIGURE1_PANELS", "conversion_plot", "figure1", "figure2", "save"]

warnings.warn("rdpsym.export.plots is deprecated; import from rdpsym.report.plots instead",
              DeprecationWarning, stacklevel=2)
