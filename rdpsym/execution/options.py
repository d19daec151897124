"""Deprecated: moved to :mod:`rdpsym.cli.options` (the execution layer does not import click)."""

import warnings

from ..cli.options import execution_options, executor_from_options  # noqa: F401

__all__ = ["execution_options", "executor_from_options"]

warnings.warn("rdpsym.execution.options is deprecated: import from rdpsym.cli.options",
              DeprecationWarning, stacklevel=2)
