"""The on-disk caches of generated code and of its symbolic series (users of :class:`rdpsym._cache.DiskCache`).

Keys hash the inputs, the library versions and the source of every module of :mod:`rdpsym.compile`:
a changed generator never serves stale code. ``rdpsym cache clear`` (:func:`rdpsym._cache.clear_all`)
removes these files with the derivations.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .._cache import DiskCache, source_fingerprint
from ..derive.result import library_versions

__all__ = ["INCOMPLETE", "SERIES_CACHE", "SOURCE_CACHE", "cache_key"]

#: the first line of a generated module that lacks a series sympy did not build in time
INCOMPLETE = "# INCOMPLETE:"


def _complete_series(value) -> bool:
    # (boundary series, point series): a boundary series without coefficients was not built in time
    return not (isinstance(value, tuple) and value and any(not getattr(s, "coeffs", True) for s in value[0]))


#: generated modules, ``codegen-<key>.py``; one missing a series (a slow moment) is never kept
SOURCE_CACHE = DiskCache("codegen-", ".py", kind="text", accept=lambda text: INCOMPLETE not in text)
#: symbolic series (:func:`rdpsym.compile.series.series_expansions`), ``codegen-<key>.pickle``
SERIES_CACHE = DiskCache("codegen-", ".pickle", accept=_complete_series)


def cache_key(key_text: str) -> str:
    """The file key of ``key_text``: with the library versions and the generator's own source."""
    # the generator's own source is part of the key: a changed generator never serves stale code
    generator = source_fingerprint(*sorted(str(p) for p in Path(__file__).parent.glob("*.py")))
    return hashlib.sha256((key_text + repr(sorted(library_versions().items())) + generator).encode()).hexdigest()
