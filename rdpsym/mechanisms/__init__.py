"""Built-in mechanisms, one small file each.

Every module in this package registers a factory with :func:`register`; the registry is what the
conformance tests, ``rdpsym table`` and the CLI iterate over. Adding a mechanism is adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from ..specify.mechanism import Mechanism

_REGISTRY: dict[str, Callable[[], Mechanism]] = {}


def register(factory: Callable[[], Mechanism]) -> Callable[[], Mechanism]:
    """Register ``factory`` under its function name."""
    name = factory.__name__
    if name in _REGISTRY and _REGISTRY[name] is not factory:
        raise ValueError(f"mechanism {name!r} is registered twice")
    _REGISTRY[name] = factory
    return factory


def unregister(name: str) -> None:
    """Remove the mechanism registered as ``name`` (a no-op when there is none): for mechanisms a test or
    a session registers for a while. Curves already prepared for it stay until
    :func:`rdpsym.accounting.curves.clear_cache`."""
    _REGISTRY.pop(name, None)


def names() -> list[str]:
    """Names of the registered mechanisms, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> Mechanism:
    """Build the registered mechanism ``name``."""
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(f"unknown mechanism {name!r}; registered: {', '.join(names())}") from None


def all_mechanisms() -> list[Mechanism]:
    return [get(n) for n in names()]


for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

globals().update(_REGISTRY)
__all__ = ["register", "unregister", "names", "get", "all_mechanisms", *_REGISTRY]
