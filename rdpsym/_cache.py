"""The one on-disk cache type, the one in-process memo type, and :func:`clear_all`.

Both follow one rule: a value computed while a time limit expired (even one whose
:class:`~rdpsym._timeout.StepTimeout` was caught and turned into a fallback), or one the owner's
``accept`` predicate rejects (a result that records a timeout or a failure), is returned and never kept.
One slow moment on a loaded machine must not stick. The one exception is a time limit that expired in an
*optional* step whose gap the value itself records (:func:`excuse_timeouts`: a derivation's integer
orders, :data:`rdpsym.derive.result.OPTIONAL_STAGES`).

The disk cache trusts nothing it reads (caches cross trust boundaries: CI systems restore them between
branches, clusters share them):

* **Data, never code.** An entry is a header and a payload the owner's ``encode``/``decode`` write and
  read as data (JSON; sympy trees as ``srepr`` text rebuilt by a whitelisting reader; generated source
  as text that is only executed after its entry is verified). Nothing is unpickled or evaluated.
* **Integrity and origin.** The header holds the payload's SHA-256 and an HMAC-SHA256 over the format,
  the entry's kind, its key (its file name: an entry moved to another name is refused) and that hash,
  keyed by a per-user secret kept *outside* the cache directory (``RDPSYM_CACHE_KEY_FILE``, default
  ``$XDG_CONFIG_HOME/rdpsym/cache-key``, created on first use with mode 0600). A cache copied from
  another machine or user, or any changed byte, fails the check.
* **Any doubt means recompute.** A missing, truncated, foreign-format, mismatched, unsigned or
  undecodable entry, one ``accept`` rejects, or one the owner's ``check`` doubts (a spot check against
  an independent computation) is discarded with one warning line (logger ``rdpsym.cache``) and the
  value is computed again, as a cold run would.
* **Atomic writes**: a temporary file in the same directory, flushed, then renamed; a process killed
  mid-write leaves only a temporary file that is never read (``cache clear`` and ``cache verify``
  remove it).
* **Only its own files.** The directory is marked as rdpsym's by :data:`MARKER`; :func:`clear_all`
  and :func:`verify_all` refuse a directory without it (unless it is empty) and touch only files whose
  name *and* first bytes are an entry's. A user's ``*.pickle`` or ``codegen-*.py`` are never touched.
* **Bad directories cost only time.** A cache directory that is a file, not writable or on a full disk
  is said once per process; rdpsym then works without (writing to) it.

Every cache registers itself here, so :func:`clear_all` (``rdpsym cache clear``) empties all of them:
derivations, generated code, prepared curves, memos.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import hmac
import json
import logging
import os
import re
import stat
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _config
from ._timeout import deadline_passed, timeout_count

__all__ = ["DiskCache", "Memo", "memoize", "clear_all", "clear_memos", "verify_all", "cache_dir", "cache_enabled",
           "source_fingerprint", "excuse_timeouts", "unexcused_timeouts", "key_file", "write_atomically", "register_clearer",
           "Unstorable", "CacheDirectoryError", "VerifyReport", "MARKER", "FORMAT"]

#: the entry format; an entry of any other format is discarded
FORMAT = 2
#: the first bytes of every entry (and what marks a file as rdpsym's)
_PREFIX = b"rdpsym-cache/"
_MAGIC = _PREFIX + str(FORMAT).encode() + b"\n"
#: the file that marks a directory as rdpsym's cache
MARKER = ".rdpsym-cache"
_MARKER_TEXT = json.dumps({"rdpsym-cache": FORMAT, "about": "rdpsym's on-disk cache: `rdpsym cache clear` "
                           "deletes only the entries rdpsym wrote here"}) + "\n"
#: an entry's file name, ``<kind>-<64 hex digits>.rdpsym``, and a temporary file of one being written
_ENTRY = re.compile(r"(?P<kind>[a-z]+)-(?P<key>[0-9a-f]{64})\.rdpsym")
_TEMP = re.compile(r"\.(?P<entry>[a-z]+-[0-9a-f]{64}\.rdpsym)\.[A-Za-z0-9_]+\.tmp")
#: an entry larger than this is not read (a planted file must not exhaust memory)
MAX_ENTRY_BYTES = 256 * 2**20
#: a temporary file older than this is a writer's leftover (a writer needs milliseconds)
_STALE_TEMP_SECONDS = 600.0

log = logging.getLogger("rdpsym.cache")

_lock = threading.RLock()
_disk_caches: dict[str, "DiskCache"] = {}
_clearers: "weakref.WeakSet[Memo]" = weakref.WeakSet()
_other_clearers: list[Callable[[], Any]] = []
_said: set = set()
_unwritable: set = set()
_keys: dict[Path, bytes | None] = {}
_local = threading.local()


class Unstorable(TypeError):
    """Raised by an ``encode`` for a value it cannot write as data: the value is returned, not stored."""


class CacheDirectoryError(OSError):
    """The cache directory is not rdpsym's: :func:`clear_all` and :func:`verify_all` refuse it."""


class _Doubt(Exception):
    """Why an entry is not used (one short phrase)."""


def cache_dir() -> Path:
    """The on-disk cache directory (``RDPSYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/rdpsym``)."""
    return _config.settings().cache_dir


def cache_enabled() -> bool:
    """False when ``RDPSYM_NO_CACHE`` turns the on-disk cache off."""
    return _config.settings().cache_enabled


def key_file() -> Path:
    """The file of the per-user key that signs entries (``RDPSYM_CACHE_KEY_FILE``, else
    ``$XDG_CONFIG_HOME/rdpsym/cache-key``)."""
    return _config.settings().cache_key_file


@functools.cache
def source_fingerprint(*paths: str) -> str:
    """A hash of the given source files (names and contents), computed once per process."""
    digest = hashlib.sha256()
    for source in sorted(map(Path, paths)):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _say_once(topic: tuple, text: str) -> None:
    """One warning line per topic and process (a directory that cannot be used, a key that cannot)."""
    with _lock:
        if topic in _said:
            return
        _said.add(topic)
    log.warning("rdpsym: %s", text)


# -------------------------------------------------------------------------------------------------
# time limits that expired in optional steps
# -------------------------------------------------------------------------------------------------
def excuse_timeouts(count: int) -> None:
    """Record that ``count`` time limits expired in an optional step whose gap the value being computed
    records (its provenance names the step): caches may keep what is computed around them."""
    _local.excused = getattr(_local, "excused", 0) + count


def unexcused_timeouts() -> int:
    """The time limits that expired in this thread so far, less the excused ones (:func:`excuse_timeouts`)."""
    return timeout_count() - getattr(_local, "excused", 0)


def _quiet_time() -> Callable[[], bool]:
    """A check, made after a computation, that no time limit expired while it ran (other than the
    excused ones, :func:`excuse_timeouts`) and no enclosing deadline has passed."""
    before = unexcused_timeouts()
    return lambda: unexcused_timeouts() == before and not deadline_passed()


# -------------------------------------------------------------------------------------------------
# the per-user key
# -------------------------------------------------------------------------------------------------
def _inside(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
    except (ValueError, OSError):
        return False
    return True


def _create_key(path: Path) -> None:
    """A new random key at ``path`` (mode 0600), unless another process made one first."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(32).hex().encode() + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(temp, path)  # atomic, and never replaces a key another process created meanwhile
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: a new file, never one that exists
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(Path(temp).read_bytes())
    finally:
        Path(temp).unlink(missing_ok=True)


def _read_key(path: Path) -> bytes:
    """The key at ``path``; ValueError when it may not be trusted (others can read or change it)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("it is not a regular file")
        if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o077):
            raise ValueError("other users can read or change it (it must be yours, mode 0600)")
        secret = fh.read(4097).strip()
    if not 32 <= len(secret) <= 4096:
        raise ValueError(f"it holds {len(secret)} bytes, not a key")
    return secret


def _signing_key() -> bytes | None:
    """The per-user key (created on first use); None, said once, when there is none to trust."""
    path = key_file()
    with _lock:
        if path in _keys:
            return _keys[path]
    secret = None
    if _inside(path, cache_dir()):
        _say_once(("key", str(path)), f"the cache key {path} lies inside the cache directory (a copied cache "
                                      "would carry it): working without the on-disk cache")
    else:
        try:
            if not path.exists():
                _create_key(path)
            secret = _read_key(path)
        except (OSError, ValueError) as exc:
            _say_once(("key", str(path)), f"cannot use the cache key {path} ({_why(exc)}): working without the "
                                          "on-disk cache (RDPSYM_CACHE_KEY_FILE names another file)")
    with _lock:
        _keys[path] = secret
    return secret


def _why(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


# -------------------------------------------------------------------------------------------------
# entries: header + payload, sealed
# -------------------------------------------------------------------------------------------------
def _mac(secret: bytes, kind: str, key: str, digest: str) -> str:
    message = f"rdpsym-cache/{FORMAT}\n{kind}\n{key}\n{digest}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _seal(kind: str, key: str, payload: bytes, secret: bytes) -> bytes:
    digest = hashlib.sha256(payload).hexdigest()
    header = json.dumps({"kind": kind, "key": key, "sha256": digest, "hmac": _mac(secret, kind, key, digest)},
                        sort_keys=True)
    return _MAGIC + header.encode() + b"\n" + payload


def _unseal(data: bytes, kind: str, key: str, secret: bytes) -> bytes:
    """The payload of an entry read from ``<kind>-<key>.rdpsym``, or :class:`_Doubt` saying why not."""
    if not data.startswith(_PREFIX):
        raise _Doubt("not an rdpsym cache entry")
    if not data.startswith(_MAGIC):
        version = data[len(_PREFIX):].split(b"\n", 1)[0][:20].decode("ascii", "replace")
        raise _Doubt(f"written in another cache format ({version!r}, this version reads {FORMAT})")
    head, newline, payload = data[len(_MAGIC):].partition(b"\n")
    if not newline:
        raise _Doubt("truncated (no complete header)")
    try:
        header = json.loads(head)
        fields = (header["kind"], header["key"], header["sha256"], header["hmac"])
    except (ValueError, TypeError, KeyError):
        raise _Doubt("damaged header") from None
    if not all(isinstance(f, str) for f in fields):
        raise _Doubt("damaged header")
    if (fields[0], fields[1]) != (kind, key):
        raise _Doubt("stored under another name (its header names another entry)")
    if not hmac.compare_digest(hashlib.sha256(payload).hexdigest(), fields[2]):
        raise _Doubt("damaged or truncated (its content hash does not match)")
    if not hmac.compare_digest(_mac(secret, kind, key, fields[2]), fields[3]):
        raise _Doubt("not signed with this user's cache key (written elsewhere, or changed)")
    return payload


def _read_file(path: Path) -> bytes | None:
    """The bytes of a regular file (None when there is none); never follows a link or blocks on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Doubt("a symbolic link, not an entry") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _Doubt("not a regular file")
        if st.st_size > MAX_ENTRY_BYTES:
            raise _Doubt(f"{st.st_size} bytes, more than any entry rdpsym writes")
        return fh.read(MAX_ENTRY_BYTES + 1)


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename, so a
    reader sees the old file or the whole new one, and a killed writer leaves only a temporary file."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


# -------------------------------------------------------------------------------------------------
# the directory
# -------------------------------------------------------------------------------------------------
def _is_marked(directory: Path) -> bool:
    try:
        data = _read_file(directory / MARKER)
        return data is not None and json.loads(data).get("rdpsym-cache") is not None
    except (OSError, ValueError, AttributeError, _Doubt):
        return False


def _writable_dir() -> Path | None:
    """The cache directory, created and marked as rdpsym's; None (said once) when it cannot be written."""
    directory = cache_dir()
    with _lock:
        if directory in _unwritable:
            return None
    try:
        if directory.exists() and not directory.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "it is not a directory")
        directory.mkdir(parents=True, exist_ok=True)
        if not _is_marked(directory):
            write_atomically(directory / MARKER, _MARKER_TEXT.encode())
    except OSError as exc:
        _cannot_write(directory, exc)
        return None
    return directory


def _cannot_write(directory: Path, exc: OSError) -> None:
    with _lock:
        _unwritable.add(directory)
    _say_once(("write", str(directory)), f"cannot write to the cache directory {directory} ({_why(exc)}): "
                                         "working without the on-disk cache")


def _owned_entry(path: Path) -> tuple[str, str] | None:
    """``(kind, key)`` when ``path`` is an entry rdpsym wrote (name and first bytes: the format's prefix,
    or a truncation of it), else None."""
    match = _ENTRY.fullmatch(path.name)
    if match is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode) or not _PREFIX.startswith(fh.read(len(_PREFIX))):
            return None
    return match["kind"], match["key"]


def _owned_temp(path: Path) -> bool:
    """Whether ``path`` is a temporary file of an entry being (or once) written."""
    if _TEMP.fullmatch(path.name) is None or path.is_symlink() or not path.is_file():
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_PREFIX))
    except OSError:
        return False
    return _PREFIX.startswith(head)  # empty, or an entry's first bytes (a killed writer's partial file)


def _rdpsym_directory(directory: Path) -> bool:
    """Whether ``directory`` may be cleared: missing, empty, or marked as rdpsym's. Raises
    :class:`CacheDirectoryError` saying why not otherwise."""
    if not directory.exists():
        return False
    if not directory.is_dir():
        raise CacheDirectoryError(f"{directory} is not a directory, so not rdpsym's cache; nothing was touched")
    if _is_marked(directory):
        return True
    if any(True for _ in directory.iterdir()):
        raise CacheDirectoryError(
            f"{directory} is not rdpsym's cache: it has files but no {MARKER} marker that rdpsym writes in its "
            "cache directory; nothing was touched (is RDPSYM_CACHE_DIR set to another directory?)")
    return False


# -------------------------------------------------------------------------------------------------
# the disk cache
# -------------------------------------------------------------------------------------------------
def _json_bytes(value) -> bytes:
    try:
        return json.dumps(value, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise Unstorable(str(exc)) from None


class DiskCache:
    """Entries ``<kind>-<key>.rdpsym`` in :func:`cache_dir` (see the module docstring).

    ``encode(value) -> bytes`` and ``decode(bytes) -> value`` write and read the payload as data (JSON by
    default); ``encode`` raises :class:`Unstorable` for a value it cannot write, which is then only
    returned. ``load(key)`` returns the stored value or ``None``; ``store(key, value)`` writes it unless
    ``accept`` rejects it or the cache is off. ``kind`` (lower-case letters) names the entries; each kind
    has one DiskCache.
    """

    def __init__(self, kind: str, *, encode: Callable[[Any], bytes] | None = None,
                 decode: Callable[[bytes], Any] | None = None, accept: Callable[[Any], bool] | None = None):
        if not re.fullmatch(r"[a-z]+", kind):
            raise ValueError(f"kind must be lower-case letters; got {kind!r}")
        self.kind = kind
        self.encode = encode or _json_bytes
        self.decode = decode or json.loads
        self.accept = accept or (lambda value: True)
        with _lock:
            if kind in _disk_caches:
                raise ValueError(f"a DiskCache of kind {kind!r} exists already")
            _disk_caches[kind] = self

    def path(self, key: str) -> Path:
        return cache_dir() / f"{self.kind}-{self._name(key)}.rdpsym"

    @staticmethod
    def _name(key: str) -> str:
        # a key is hashed into the file name, so any text can be a key and every name is 64 hex digits
        return key if re.fullmatch(r"[0-9a-f]{64}", key) else hashlib.sha256(key.encode()).hexdigest()

    def _read(self, path: Path, check: Callable[[Any], str | None] | None):
        """``(value, None)``, ``(None, None)`` when there is no entry, or ``(None, why)`` for a doubt."""
        try:
            data = _read_file(path)
            if data is None:
                return None, None
            secret = _signing_key()
            if secret is None:
                return None, None
            payload = _unseal(data, self.kind, _ENTRY.fullmatch(path.name)["key"], secret)
        except _Doubt as exc:
            return None, str(exc)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):  # the directory's permissions, not the entry
                _say_once(("read", str(path.parent)), f"cannot read the cache directory {path.parent} "
                                                      f"({_why(exc)}): working without its entries")
                return None, None
            return None, f"unreadable ({_why(exc)})"
        try:
            value = self.decode(payload)
        except Exception as exc:  # noqa: BLE001 - whatever a decoder meets in a file, the entry is not used
            return None, f"undecodable ({type(exc).__name__}: {exc})"[:300]
        if not self.accept(value):
            return None, "records a timeout or a failure"
        reason = check(value) if check is not None else None
        return (None, reason) if reason else (value, None)

    def _discard(self, path: Path, reason: str) -> None:
        log.warning("rdpsym: cache entry %s discarded: %s; computing it again", path.name, reason)
        if _is_marked(path.parent):  # never delete in a directory that is not rdpsym's
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass

    def load(self, key: str, check: Callable[[Any], str | None] | None = None):
        """The stored value of ``key``, or None (no entry, or one discarded: any doubt). ``check(value)``
        returns a reason to doubt the value (e.g. a spot check that disagrees), or None."""
        if not cache_enabled():
            return None
        path = self.path(key)
        if not path.parent.is_dir():
            return None
        value, reason = self._read(path, check)
        if reason:
            self._discard(path, reason)
        return value

    def store(self, key: str, value) -> bool:
        """Write ``value`` under ``key``; False when it is not written (off, rejected, unstorable, no
        usable directory or key)."""
        if not cache_enabled() or not self.accept(value):
            return False
        try:
            payload = self.encode(value)
        except Unstorable as exc:
            log.debug("rdpsym: %s entry not stored: %s", self.kind, exc)
            return False
        secret = _signing_key()
        directory = _writable_dir() if secret is not None else None
        if directory is None:
            return False
        try:
            write_atomically(self.path(key), _seal(self.kind, self._name(key), payload, secret))
        except OSError as exc:
            _cannot_write(directory, exc)
            return False
        return True

    def get_or_compute(self, key: str, compute: Callable[[], Any],
                       check: Callable[[Any], str | None] | None = None):
        """The stored value, else ``compute()`` (stored only if no time limit expired meanwhile, other
        than excused ones)."""
        found = self.load(key, check)
        if found is not None:
            return found
        quiet = _quiet_time()
        value = compute()
        if quiet():
            self.store(key, value)
        return value

    def clear(self) -> int:
        """Delete this cache's entries; returns how many were removed (:func:`clear_all` for the rules)."""
        return sum(_clear_files(lambda kind: kind == self.kind).values())


def _clear_files(kinds: Callable[[str], bool]) -> dict[str, int]:
    directory = cache_dir()
    removed: dict[str, int] = {}
    try:
        if not _rdpsym_directory(directory):
            return {}
        for path in sorted(directory.iterdir()):
            owned = _owned_entry(path)
            if owned is not None and kinds(owned[0]):
                path.unlink(missing_ok=True)
                removed[owned[0]] = removed.get(owned[0], 0) + 1
            elif owned is None and _owned_temp(path):
                path.unlink(missing_ok=True)
        if [p.name for p in directory.iterdir()] == [MARKER]:
            (directory / MARKER).unlink(missing_ok=True)  # nothing of ours is left: the directory as found
    except CacheDirectoryError:
        raise
    except OSError as exc:
        raise CacheDirectoryError(f"cannot clear {directory} ({_why(exc)}); {sum(removed.values())} "
                                  "entries were removed before") from None
    return removed


@dataclass
class VerifyReport:
    """What :func:`verify_all` found: the directory, the entries kept by kind, and each discarded file
    with the reason."""

    directory: Path
    kept: dict[str, int] = field(default_factory=dict)
    discarded: list[tuple[str, str]] = field(default_factory=list)


def verify_all() -> VerifyReport:
    """Check every entry of the cache directory as a load would (format, content hash, signature,
    decoding, ``accept``) and discard each that fails, with its reason; remove leftover temporary files.
    Refuses (:class:`CacheDirectoryError`) a directory that is not rdpsym's. Only the kinds whose owner
    modules are imported are decoded; an entry of an unknown kind is discarded."""
    try:
        return _verify(cache_dir())
    except CacheDirectoryError:
        raise
    except OSError as exc:
        raise CacheDirectoryError(f"cannot verify {cache_dir()} ({_why(exc)})") from None


def _verify(directory: Path) -> VerifyReport:
    report = VerifyReport(directory)
    if not _rdpsym_directory(directory):
        return report
    if _signing_key() is None:
        raise CacheDirectoryError(f"no usable cache key ({key_file()}): the entries of {directory} cannot be "
                                  "checked; nothing was touched")
    with _lock:
        caches = dict(_disk_caches)
    for path in sorted(directory.iterdir()):
        owned = _owned_entry(path)
        if owned is None:
            if _owned_temp(path) and time.time() - path.stat().st_mtime > _STALE_TEMP_SECONDS:
                path.unlink(missing_ok=True)
                report.discarded.append((path.name, "a temporary file left by a writer that did not finish"))
            continue
        cache = caches.get(owned[0])
        if cache is None:
            reason = f"an entry of unknown kind {owned[0]!r}"
        else:
            reason = cache._read(path, None)[1]
        if reason:
            path.unlink(missing_ok=True)
            report.discarded.append((path.name, reason))
        else:
            report.kept[owned[0]] = report.kept.get(owned[0], 0) + 1
    return report


# -------------------------------------------------------------------------------------------------
# in-process memos
# -------------------------------------------------------------------------------------------------
class Memo:
    """An in-process memo ``key -> value`` that keeps nothing computed while a time limit expired (other
    than excused ones), and nothing ``accept`` rejects. Thread-safe; ``maxsize`` bounds it (oldest entries
    go first)."""

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
    """Empty every cache: rdpsym's entries in the cache directory (of every kind, and leftover temporary
    files; nothing else) and every in-process memo. Returns how many entries were removed.

    Raises :class:`CacheDirectoryError`, touching nothing, when the directory is not rdpsym's (it has
    files but no :data:`MARKER`)."""
    removed = sum(_clear_files(lambda kind: True).values())
    clear_memos()
    return removed


def clear_memos() -> None:
    """Empty every in-process memo (and every registered clearer); the disk is left as it is."""
    with _lock:
        memos, others = list(_clearers), list(_other_clearers)
    for m in memos:
        m.clear()
    for c in others:
        c()
