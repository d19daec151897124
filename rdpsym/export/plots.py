"""Deprecated: moved to :mod:`rdpsym.report.plots` (kept for one release)."""

import warnings

from ..report.plots import (
    FIGURE1_PANELS,
    NUMERIC_PLOT_POINTS,
    conversion_epsilons,
    conversion_plot,
    figure1,
    figure2,
    rdp_plot,
    save,
)

__all__ = ["FIGURE1_PANELS", "NUMERIC_PLOT_POINTS", "conversion_epsilons", "conversion_plot", "figure1", "figure2",
           "rdp_plot", "save"]

warnings.warn("rdpsym.export.plots is deprecated; import from rdpsym.report.plots instead",
              DeprecationWarning, stacklevel=2)
