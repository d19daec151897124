"""On-disk cache of derivations, keyed by the inputs, the library versions and the engine's source.

A second derivation of the same inputs is a file read. The cache lives in ``RDPSYM_CACHE_DIR`` or
``~/.cache/rdpsym``; ``RDPSYM_NO_CACHE=1`` turns it off and :func:`clear_cache` empties it. The files
are one :class:`rdpsym._cache.DiskCache`; ``rdpsym cache clear`` (:func:`rdpsym._cache.clear_all`)
removes them together with the generated code.

A derivation during which a time limit expired, or whose result records a timeout or a failure
(:func:`cacheable`), is never written: one slow moment on a loaded machine must not stick. The same
rule holds for in-process memos (:func:`memoize_derivation`).
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

import sympy as sp

from .. import _cache
from .result import Status, Step, library_versions
from .._timeout import deadline_passed, timeout_count

__all__ = [
    "cache_dir",
    "cache_enabled",
    "cacheable",
    "cached_derivation",
    "clear_cache",
    "engine_fingerprint",
    "memoize_derivation",
    "source_fingerprint",
]

_FORMAT = 1

cache_dir = _cache.cache_dir
cache_enabled = _cache.cache_enabled
source_fingerprint = _cache.source_fingerprint


def clear_cache() -> int:
    """Delete every cached derivation; returns how many were removed."""
    return _DERIVATIONS.clear()


@functools.cache
def engine_fingerprint() -> str:
    """A hash of the derivation code itself (every module of ``rdpsym.derive``).

    The package version alone would not change while the engine is developed, so an installed
    development copy could otherwise return derivations made by older engine code.
    """
    return source_fingerprint(*map(str, Path(__file__).parent.glob("*.py")))


def _key(*parts) -> str:
    text = "\n".join([str(_FORMAT), *(sp.srepr(p) if isinstance(p, sp.Basic) else repr(p) for p in parts)])
    text += "\n" + repr(sorted(library_versions().items())) + "\n" + engine_fingerprint()
    return hashlib.sha256(text.encode()).hexdigest()


#: text in a step or reason that records a timeout or a failure that need not recur
_TRANSIENT = re.compile(r"timed out|time limit|timeout|exceeded|worker process|MemoryError|RecursionError|"
                        r"KeyboardInterrupt|SystemExit", re.IGNORECASE)
#: an exception named in a reason: a failure, unless it is the engine's own "cannot" (deterministic)
_EXCEPTION_NAME = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception))\b")
_ENGINE_ERRORS = frozenset({"DerivationError", "DensityError"})


def cacheable(result) -> bool:
    """False when ``result`` (a DivergenceResult) records a timeout or a failure: a status ``failed``, a
    step or reason that says a time limit expired (or a worker process, memory or recursion failed),
    or a reason naming an exception other than the engine's own :class:`DerivationError`. Such a
    result is returned, never cached (on disk or in memory)."""
    if getattr(result, "status", None) is Status.FAILED:
        return False
    reason = str(getattr(result, "reason", "") or "")
    if _TRANSIENT.search(reason) or set(_EXCEPTION_NAME.findall(reason)) - _ENGINE_ERRORS:
        return False
    provenance = getattr(result, "provenance", None)
    for step in getattr(provenance, "steps", ()):
        if _TRANSIENT.search(f"{step.name} {step.detail}"):
            return False
    return True


def _derive_recorded(P, Q, x, support, params, seconds, check_density, label):
    """``_derive``, with a provenance step when time limits expired during it (even ones whose
    StepTimeout was caught and turned into a fallback): such a result must not be cached."""
    import dataclasses

    from .engine import derive_uncached as _derive

    before = timeout_count()
    result = _derive(P, Q, x, support, params, seconds, check_density, label)
    expired = timeout_count() - before
    if expired or deadline_passed():
        note = Step("time limits", f"{expired} time limit{'s' * (expired != 1)} expired during this derivation "
                                   f"(or an enclosing one did): the result is not cached")
        prov = result.provenance
        result = dataclasses.replace(result, provenance=dataclasses.replace(prov, steps=tuple(prov.steps) + (note,)))
    return result


def _results_cacheable(value) -> bool:
    results = value if isinstance(value, tuple) else (value,)
    return all(cacheable(r) for r in results if hasattr(r, "provenance"))


def memoize_derivation(fn):
    """An in-process memo of ``fn(*args)`` (hashable arguments) that keeps no result :func:`cacheable`
    rejects and none computed while a time limit expired."""
    memo = _cache.Memo(accept=_results_cacheable)

    @functools.wraps(fn)
    def wrapper(*args):
        return memo.get_or_compute(args, lambda: fn(*args))

    wrapper.cache_clear = memo.clear
    return wrapper


#: the derivation files, ``<key>.pickle``; an entry :func:`cacheable` rejects (e.g. a timed-out one
#: written by an older version) is deleted on reading
_DERIVATIONS = _cache.DiskCache("", ".pickle", accept=cacheable)


def cached_derivation(P, Q, x, support, params, seconds, check_density, label):
    if not cache_enabled():
        return _derive_recorded(P, Q, x, support, params, seconds, check_density, label)
    # the domains decide kinks the assumptions leave open (and narrow a case split): part of the key
    param_key = tuple((p.name, p.typical, sp.srepr(p.symbol), sp.srepr(p.domain)) for p in params or ())
    key = _key(P, Q, x, support, param_key, seconds, check_density, label)
    # a timeout or failure is returned and derived again next time
    return _DERIVATIONS.get_or_compute(
        key, lambda: _derive_recorded(P, Q, x, support, params, seconds, check_density, label))
