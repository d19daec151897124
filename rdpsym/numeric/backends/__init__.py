r"""Numeric backends: the protocol, the registry, the choice by setting.

The numeric path spends nearly all of its time evaluating ``log P`` and ``log Q`` at a few hundred to a
few thousand points. A *backend* is a faster evaluator of that pair; mpmath (``sympy.lambdify`` of the
substituted pair, :mod:`.mpmath`) is the universal fallback and evaluates every point a backend leaves.

Protocol (one file per backend, registered with :func:`register_backend`):

* ``backend.name`` (str) and ``backend.compile(lp, lq, x, params) -> Compiled | None``: ``lp``, ``lq``
  are sympy expressions of ``log P`` and ``log Q`` in ``x`` and the parameter symbols ``params`` (a
  sorted tuple), compiled once per *symbolic* pair; ``None``: this backend cannot do the pair (mpmath
  does all of it).
* ``compiled.bind(values, prec) -> PointEvaluator | None`` fixes the parameters (``values``: symbol ->
  exact sympy number) and the precision (``prec`` bits); ``None``: mpmath does every point.
* ``evaluator(t) -> (lp, lq) | None`` for an mpmath number ``t``: mpmath numbers at mpmath's current
  precision, or ``None`` for "let mpmath do this point" (a zero density, an undecidable condition).
  A backend must never turn a doubtful value into a number.
* Optional capabilities of an evaluator (the Arb backend has them): ``log_form(form, a)`` (the log of an
  integrand, :class:`rdpsym.numeric.quantities.Form`, computed natively: ``t -> mpf | None``) and
  ``integrand(form, a, shift, slow, counts)`` (an object with ``integrate(pieces) -> (value, error,
  converged)`` over finite pieces, used with the Gauss-Legendre rule).

Choice: :func:`rdpsym._config.settings` ``.numeric_backend``: ``"auto"`` tries the backends registered
with ``auto=True`` in registration order (Arb where python-flint is installed and the pair is taught
to it), ``"mpmath"`` uses mpmath alone, any other registered name uses that backend (then mpmath).
"""

from __future__ import annotations

import threading
from typing import Any, Mapping, Protocol, runtime_checkable

import sympy as sp

from ..._config import settings
from ..._numbers import ArgumentError

__all__ = ["Backend", "Compiled", "PointEvaluator", "backend_names", "compile_with", "get_backend", "register_backend",
           "selected_backends", "unregister_backend"]


@runtime_checkable
class PointEvaluator(Protocol):
    def __call__(self, t: Any) -> tuple[Any, Any] | None: ...


@runtime_checkable
class Compiled(Protocol):
    def bind(self, values: Mapping[sp.Symbol, sp.Expr], prec: int) -> PointEvaluator | None: ...


@runtime_checkable
class Backend(Protocol):
    name: str

    def compile(self, lp: sp.Expr, lq: sp.Expr, x: sp.Symbol, params: tuple[sp.Symbol, ...]) -> Compiled | None: ...


_lock = threading.Lock()
_registry: dict[str, Backend] = {}
_auto: list[str] = []


def register_backend(backend: Any = None, *, name: str | None = None, auto: bool = False):
    """Register a backend (an object, or a class: instantiated without arguments) under ``name``
    (default ``backend.name``); ``auto=True`` lets ``RDPSYM_NUMERIC_BACKEND=auto`` try it. Usable as
    a call or as a class decorator (``@register_backend(auto=True)``). Returns its argument."""
    if backend is None:
        return lambda b: register_backend(b, name=name, auto=auto)
    obj = backend() if isinstance(backend, type) else backend
    key = (name or getattr(obj, "name", None) or "").strip().lower()
    if not key or key == "auto":
        raise ArgumentError("backend name", "a non-empty name other than 'auto'", key)
    if not callable(getattr(obj, "compile", None)):
        raise ArgumentError("backend", "an object with compile(lp, lq, x, params)", obj)
    with _lock:
        _registry[key] = obj
        if auto and key not in _auto:
            _auto.append(key)
        elif not auto and key in _auto:
            _auto.remove(key)
    return backend


def unregister_backend(name: str) -> None:
    """Remove a registered backend (tests)."""
    key = name.strip().lower()
    with _lock:
        _registry.pop(key, None)
        if key in _auto:
            _auto.remove(key)


def backend_names() -> tuple[str, ...]:
    return tuple(_registry)


def get_backend(name: str) -> Backend:
    try:
        return _registry[name.strip().lower()]
    except KeyError:
        raise ArgumentError("RDPSYM_NUMERIC_BACKEND", f"'auto' or one of {', '.join(sorted(_registry))}",
                            name) from None


def selected_backends() -> tuple[Backend, ...]:
    """The backends to try, in order, for the current setting (mpmath, the fallback, is implied)."""
    choice = settings().numeric_backend
    if choice == "auto":
        return tuple(_registry[k] for k in _auto if k in _registry)
    return (get_backend(choice),)


def compile_with(backends: tuple[Backend, ...], lp, lq, x, params) -> tuple[Backend, Compiled] | None:
    """The first backend that compiles the pair, with its compilation (None: mpmath alone)."""
    for b in backends:
        compiled = b.compile(lp, lq, x, params)
        if compiled is not None:
            return b, compiled
    return None


def _load_builtin() -> None:
    from . import arb, mpmath  # noqa: F401 - registration on import


_load_builtin()
