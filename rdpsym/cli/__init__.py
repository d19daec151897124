"""The ``rdpsym`` command line (click).

Each module in this package adds its commands to :data:`main`; adding a command is adding a module
(``rdpsym/cli/verify.py`` defines ``rdpsym verify``, and so on).
"""

from __future__ import annotations

import importlib
import pkgutil

import click

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rdpsym")
def main():
    """Derive, verify and export Rényi differential privacy guarantees of noise mechanisms."""


for _info in pkgutil.iter_modules(__path__):
    if _info.name.startswith("__"):
        continue
    importlib.import_module(f"{__name__}.{_info.name}")
