"""On-disk cache of derivations, keyed by the inputs, the library versions and the engine's source.

A second derivation of the same inputs is a file read. The cache lives in ``RDPSYM_CACHE_DIR`` or
``~/.cache/rdpsym``; ``RDPSYM_NO_CACHE=1`` turns it off and :func:`clear_cache` empties it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

import sympy as sp

from .result import library_versions

__all__ = ["cache_dir", "clear_cache", "cached_derivation", "cache_enabled"]

_FORMAT = 1


def cache_dir() -> Path:
    root = os.environ.get("RDPSYM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "rdpsym"
    )
    return Path(root)


def cache_enabled() -> bool:
    return os.environ.get("RDPSYM_NO_CACHE", "") not in ("1", "true", "yes")


def clear_cache() -> int:
    """Delete every cached derivation; returns how many were removed."""
    n = 0
    directory = cache_dir()
    if directory.is_dir():
        for f in directory.glob("*.pickle"):
            f.unlink(missing_ok=True)
            n += 1
    return n


@functools.cache
def source_fingerprint(*paths: str) -> str:
    """A hash of the given source files (names and contents), computed once per process."""
    digest = hashlib.sha256()
    for source in sorted(map(Path, paths)):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


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


def cached_derivation(P, Q, x, support, params, seconds, check_density, label):
    from .engine import _derive

    if not cache_enabled():
        return _derive(P, Q, x, support, params, seconds, check_density, label)
    param_key = tuple((p.name, p.typical, sp.srepr(p.symbol)) for p in params or ())
    key = _key(P, Q, x, support, param_key, seconds, check_density, label)
    path = cache_dir() / f"{key}.pickle"
    if path.is_file():
        try:
            with path.open("rb") as fh:
                return pickle.load(fh)
        except Exception:  # noqa: BLE001 - a corrupt entry is re-derived
            path.unlink(missing_ok=True)
    result = _derive(P, Q, x, support, params, seconds, check_density, label)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as fh:
            pickle.dump(result, fh)
        os.replace(fh.name, path)
    except OSError:
        pass  # an unwritable cache only costs time
    return result
