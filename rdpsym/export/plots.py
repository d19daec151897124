"""Deprecated: moved to :mod:`rdpsym.report.plots` (kept for one release)."""

import warnings

from ..report.plots import (  # noqa: F401 - re-exported
    figure1,
    figure2,
    conversion_plot,
    save,
    FIGURE1_PANELS,
)

__all__ = ["figure1", "figure2", "conversion_plot", "save", "FIGURE1_PANELS"]

warnings.warn("rdpsym.export.plots is deprecated; import from rdpsym.report.plots instead",
              DeprecationWarning, stacklevel=2)
