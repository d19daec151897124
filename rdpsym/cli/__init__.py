"""The ``rdpsym`` command line (click).

Each module in this package adds its commands to :data:`main`; adding a command is adding a module
(``rdpsym/cli/verify.py`` defines ``rdpsym verify``, and so on).
"""

from __future__ import annotations

import importlib
import pkgutil

import click

from ._exit import EXIT_CODES_HELP, ExitCode, RdpsymGroup

__all__ = ["main", "ExitCode"]


@click.group(cls=RdpsymGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(package_name="rdpsym")
@click.option("--debug", is_flag=True, envvar="RDPSYM_DEBUG", show_envvar=True,
              help="Show the traceback of an internal error (exit code 4).")
def main(debug):
    """Derive, verify and export Rényi differential privacy guarantees of noise mechanisms."""


for _info in pkgutil.iter_modules(__path__):
    if _info.name.startswith("_"):
        continue
    importlib.import_module(f"{__name__}.{_info.name}")
