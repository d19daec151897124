"""Built-in mechanisms, one small file each, and the registry of mechanism factories.

A mechanism is a module here (or the user's own file) with one factory, a function of no arguments
returning a :class:`~rdpsym.specify.mechanism.Mechanism`, decorated with :func:`register`::

    @register
    def my_mechanism() -> Mechanism:
        ...
        return Mechanism(name="my_mechanism", ...)

The registry is what the conformance tests, ``rdpsym table`` and the CLI iterate over, so adding a
mechanism is adding a file. The registry maps names to factories only: what a mechanism does (its float
curve, its display rules) is carried by the :class:`Mechanism` it builds, never chosen by its name.
Modules whose name starts with ``_`` are helpers (shared densities, parameters and declarations), not
mechanisms.

Besides the registry, a mechanism argument may be a user's file or ``package.module:attribute``
(:func:`resolve`, the one reading every CLI command uses), and installed packages add mechanisms
through the entry-point group ``rdpsym.mechanisms`` (:data:`GROUP`; see :mod:`._sources`);
:func:`source` says where a name comes from.

For convenience the built-in factories are also attributes of this package (``mechanisms.laplace()``);
the modules that define them are reached with ``importlib.import_module("rdpsym.mechanisms.laplace")``.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from .._numbers import ArgumentError
from ..specify.mechanism import Mechanism
from . import _sources
from ._sources import GROUP, REGISTRY as _REGISTRY, load_attribute, load_file, problems, resolve, source

Factory = Callable[[], Mechanism]


def register(factory: Factory | None = None, *, name: str | None = None):
    """Register ``factory`` under ``name`` (default: the function's name); returns ``factory``.

    Use as ``@register`` or ``@register(name="...")``. Registering the same function again is a no-op;
    another factory under a registered name is an :class:`~rdpsym._numbers.ArgumentError` (unregister
    the old one first).
    """
    if factory is None:
        return lambda f: register(f, name=name)
    if not callable(factory):
        raise ArgumentError("factory", "a function returning a Mechanism", factory)
    key = getattr(factory, "__name__", None) if name is None else name
    if not isinstance(key, str) or not key.isidentifier():
        raise ArgumentError("name", "an identifier (the mechanism's registry name)", key)
    if _REGISTRY.get(key, factory) is not factory:
        raise ArgumentError("name", "a name not registered yet", key,
                            message=f"mechanism {key!r} is registered twice; unregister({key!r}) it first")
    _REGISTRY[key] = factory
    return factory


def _unknown(name) -> ArgumentError:
    return ArgumentError("name", "a registered mechanism", name,
                         message=f"unknown mechanism {name!r}; registered: {', '.join(names())}")


def unregister(name: str) -> Factory:
    """Remove the mechanism registered under ``name``; returns its factory."""
    try:
        return _REGISTRY.pop(name)
    except (KeyError, TypeError):  # TypeError: an unhashable name
        raise _unknown(name) from None


def factory(name: str) -> Factory:
    """The factory registered under ``name``, else the one of the entry point ``name`` (loaded now)."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        pass
    found = _sources.entry_point_factory(name) if isinstance(name, str) else None
    if found is None:
        raise _unknown(name) from None
    return found


def names() -> list[str]:
    """Names of the registered mechanisms and of the ``rdpsym.mechanisms`` entry points, sorted (an entry
    point is listed without being loaded; one whose name is registered already is left out)."""
    return sorted([*_REGISTRY, *_sources.entry_point_names(set(_REGISTRY))])


def get(name: str) -> Mechanism:
    """Build the registered mechanism ``name``."""
    return factory(name)()


def all_mechanisms() -> list[Mechanism]:
    """Every registered mechanism, built, in the order of :func:`names`."""
    return [get(n) for n in names()]


for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

globals().update(_REGISTRY)
__all__ = ["Factory", "register", "unregister", "factory", "names", "get", "all_mechanisms",
           "resolve", "load_file", "load_attribute", "source", "problems", "GROUP"]
__all__ += list(_REGISTRY)  # noqa: PLE0605 - the built-in factories, registered as their modules load
