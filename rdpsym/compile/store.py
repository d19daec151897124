"""The on-disk cache of generated code (a :class:`rdpsym._cache.DiskCache`) and the keys of the compile caches.

Keys hash the inputs, the library versions and the source of every module of :mod:`rdpsym.compile`:
a changed generator never serves stale code. ``rdpsym cache clear`` (:func:`rdpsym._cache.clear_all`)
removes these entries with the derivations.

Generated code is stored as text in a signed entry (:mod:`rdpsym._cache`: content hash and per-user
HMAC), never as a module to import: :func:`rdpsym.compile.to_numpy` executes a cached source only after
its entry has been verified, so a changed constant, a flipped bit or a truncation is discarded and the
code generated again. The symbolic series are stored as data beside their type
(:data:`rdpsym.compile.series.SERIES_CACHE`, :class:`rdpsym.derive.cache.DataCodec`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .._cache import DiskCache, Unstorable, source_fingerprint
from ..derive.result import library_versions

__all__ = ["INCOMPLETE", "SOURCE_CACHE", "cache_key", "complete_series"]

#: the first line of a generated module that lacks a series sympy did not build in time
INCOMPLETE = "# INCOMPLETE:"


def complete_series(value) -> bool:
    # (boundary series, point series): a boundary series without coefficients was not built in time
    return not (isinstance(value, tuple) and value and any(not getattr(s, "coeffs", True) for s in value[0]))


def _text(value) -> bytes:
    if not isinstance(value, str):
        raise Unstorable(f"generated code is text, not {type(value).__name__}")
    return value.encode("utf-8")


def _source(payload: bytes) -> str:
    return payload.decode("utf-8")  # strict: an entry that is not UTF-8 text is discarded


#: generated modules, ``code-<key>.rdpsym``; one missing a series (a slow moment) is never kept
SOURCE_CACHE = DiskCache("code", encode=_text, decode=_source, accept=lambda text: INCOMPLETE not in text)


def cache_key(key_text: str) -> str:
    """The file key of ``key_text``: with the library versions and the generator's own source."""
    # the generator's own source is part of the key: a changed generator never serves stale code
    generator = source_fingerprint(*sorted(str(p) for p in Path(__file__).parent.glob("*.py")))
    return hashlib.sha256((key_text + repr(sorted(library_versions().items())) + generator).encode()).hexdigest()
