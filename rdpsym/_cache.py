"""The one on-disk cache type, the one in-process memo type, and :func:`clear_all`.

Both follow one rule: a value computed while a time limit expired (even one whose
:class:`~rdpsym._timeout.StepTimeout` was caught and turned into a fallback), or one the owner's
``accept`` predicate rejects (a result that records a timeout or a failure), is returned and never kept.
One slow moment on a loaded machine must not stick.

Every cache registers itself here, so :func:`clear_all` (``rdpsym cache clear``) empties all of them:
derivations, generated code, prepared curves, memos.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
import threading
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from . import _config
from ._timeout import deadline_passed, timeout_count

__all__ = ["DiskCache", "Memo", "memoize", "clear_all", "cache_dir", "cache_enabled", "source_fingerprint"]

_lock = threading.RLock()
_disk_caches: list["DiskCache"] = []
_clearers: "weakref.WeakSet[Memo]" = weakref.WeakSet()
_other_clearers: list[Callable[[], Any]] = []


def cache_dir() -> Path:
    """The on-disk cache directory (``RDPSYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/rdpsym``)."""
    return _config.settings().cache_dir


def cache_enabled() -> bool:
    """False when ``RDPSYM_NO_CACHE`` turns the on-disk cache off."""
    return _config.settings().cache_enabled


@functools.cache
def source_fingerprint(*paths: str) -> str:
    """A hash of the given source files (names and contents), computed once per process."""
    digest = hashlib.sha256()
    for source in sorted(map(Path, paths)):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _quiet_time() -> Callable[[], bool]:
    """A check, made after a computation, that no time limit expired while it ran."""
    before = timeout_count()
    return lambda: timeout_count() == before and not deadline_passed()


class DiskCache:
    """Files ``<prefix><key><suffix>`` in :func:`cache_dir`, written atomically.

    ``load(key)`` returns the stored value or ``None`` (missing, corrupt, or rejected by ``accept``: such
    an entry is deleted); ``store(key, value)`` writes it unless ``accept`` rejects it or the cache is off.
    ``kind`` is ``"pickle"`` (any picklable value) or ``"text"`` (a ``str``). An unwritable directory only
    costs time.
    """

    def __init__(self, prefix: str, suffix: str, *, kind: str = "pickle",
                 accept: Callable[[Any], bool] | None = None):
        if kind not in ("pickle", "text"):
            raise ValueError(f"kind must be 'pickle' or 'text'; got {kind!r}")
        self.prefix, self.suffix, self.kind = prefix, suffix, kind
        self.accept = accept or (lambda value: True)
        with _lock:
            _disk_caches.append(self)

    def path(self, key: str) -> Path:
        return cache_dir() / f"{self.prefix}{key}{self.suffix}"

    def load(self, key: str):
        if not cache_enabled():
            return None
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            if self.kind == "text":
                value = path.read_text()
            else:
                with path.open("rb") as fh:
                    value = pickle.load(fh)
        except Exception:  # noqa: BLE001 - a corrupt or unreadable entry is computed again
            path.unlink(missing_ok=True)
            return None
        if not self.accept(value):
            path.unlink(missing_ok=True)  # e.g. a timed-out entry written by an older version
            return None
        return value

    def store(self, key: str, value) -> None:
        if not cache_enabled() or not self.accept(value):
            return
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            mode = "w" if self.kind == "text" else "wb"
            with tempfile.NamedTemporaryFile(mode, dir=path.parent, delete=False, suffix=".tmp") as fh:
                if self.kind == "text":
                    fh.write(value)
                else:
                    pickle.dump(value, fh)
            os.replace(fh.name, path)
        except OSError:
            pass

    def get_or_compute(self, key: str, compute: Callable[[], Any]):
        """The stored value, else ``compute()`` (stored only if no time limit expired meanwhile)."""
        found = self.load(key)
        if found is not None:
            return found
        quiet = _quiet_time()
        value = compute()
        if quiet():
            self.store(key, value)
        return value

    def clear(self) -> int:
        """Delete this cache's files; returns how many were removed."""
        directory = cache_dir()
        n = 0
        if directory.is_dir():
            for f in directory.glob(f"{self.prefix}*{self.suffix}"):
                f.unlink(missing_ok=True)
                n += 1
        return n


class Memo:
    """An in-process memo ``key -> value`` that keeps nothing computed while a time limit expired, and
    nothing ``accept`` rejects. Thread-safe; ``maxsize`` bounds it (oldest entries go first)."""

    def __init__(self, accept: Callable[[Any], bool] | None = None, maxsize: int | None = None):
        self.accept = accept or (lambda value: True)
        self.maxsize = maxsize
        self._data: dict = {}
        self._lock = threading.RLock()
        with _lock:
            _clearers.add(self)

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]):
        with self._lock:
            if key in self._data:
                return self._data[key]
        quiet = _quiet_time()
        value = compute()
        if quiet() and self.accept(value):
            with self._lock:
                if self.maxsize is not None and len(self._data) >= self.maxsize:
                    self._data.pop(next(iter(self._data)))
                self._data[key] = value
        return value

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


def memoize(fn=None, *, accept: Callable[[Any], bool] | None = None, maxsize: int | None = None):
    """Decorator: :class:`Memo` over a function of hashable arguments; ``fn.cache_clear()`` empties it."""
    def wrap(f):
        memo = Memo(accept, maxsize)

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            return memo.get_or_compute(key, lambda: f(*args, **kwargs))

        wrapper.cache_clear = memo.clear
        wrapper.memo = memo
        return wrapper

    return wrap(fn) if fn is not None else wrap


def register_clearer(clear: Callable[[], Any]) -> Callable[[], Any]:
    """Have :func:`clear_all` also call ``clear`` (for a cache that is not a :class:`Memo`)."""
    with _lock:
        _other_clearers.append(clear)
    return clear


def clear_all() -> int:
    """Empty every cache: the on-disk files of every :class:`DiskCache` and every in-process memo.
    Returns how many files were removed."""
    with _lock:
        disks, memos, others = list(_disk_caches), list(_clearers), list(_other_clearers)
    removed = sum(d.clear() for d in disks)
    for m in memos:
        m.clear()
    for c in others:
        c()
    return removed
