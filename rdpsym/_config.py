"""Settings read from the environment, in one place.

============================  ==========================================================  ===========
variable                      meaning                                                      default
============================  ==========================================================  ===========
``RDPSYM_STEP_SECONDS``       work budget of one symbolic step of a derivation, in         20
                              seconds of work (x 30,000 sympy nodes built; a wall-clock
                              hang guard at 10x)
``RDPSYM_EVAL_SECONDS``       hang guard (wall clock) of one evaluation of a result        300
``RDPSYM_CACHE_DIR``          the on-disk cache (derivations, generated code)              see below
``RDPSYM_NO_CACHE``           ``1``/``true``/``yes`` turns the on-disk cache off           off
``RDPSYM_CACHE_KEY_FILE``     the per-user key that signs cache entries (outside the       see below
                              cache directory; created on first use, mode 0600)
``RDPSYM_NUMERIC_BACKEND``    ``auto`` (Arb where it applies, else mpmath), ``mpmath``,     auto
                              or the name of another registered numeric backend
``RDPSYM_MEMORY_MB``          memory (MB of data) a step in a child process, and the       3/4 of RAM
                              whole ``rdpsym`` command, may use before it is stopped
``RDPSYM_DEBUG``              ``1``: the CLI shows tracebacks                              off
``RDPSYM_EXECUTOR``           where sweeps run when no ``executor=`` (``--workers``) is    processes
                              given: ``processes`` (one worker per core), ``serial``
                              (in the calling process), or a whole number of workers
============================  ==========================================================  ===========

The cache directory defaults to ``$XDG_CACHE_HOME/rdpsym`` (``~/.cache/rdpsym``), the key file to
``$XDG_CONFIG_HOME/rdpsym/cache-key`` (``~/.config/rdpsym/cache-key``). Values are validated
when read: a time limit must be a finite number of seconds > 0 (0 would switch the alarm off), a memory
limit a whole number of MB >= :data:`MIN_MEMORY_MB`, an executor ``processes``, ``serial`` or a whole
number >= 1, and a bad value raises
:class:`~rdpsym._numbers.ArgumentError` naming the variable. :func:`settings` parses the
environment once per distinct value of these variables, so a process (or a test) that changes them sees
the change at the next call.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ._numbers import ArgumentError

__all__ = ["Settings", "settings", "check_seconds", "check_memory_mb", "check_executor", "VARIABLES", "MIN_MEMORY_MB"]

VARIABLES = ("RDPSYM_STEP_SECONDS", "RDPSYM_EVAL_SECONDS", "RDPSYM_CACHE_DIR", "RDPSYM_NO_CACHE",
             "RDPSYM_NUMERIC_BACKEND", "RDPSYM_MEMORY_MB", "RDPSYM_DEBUG", "XDG_CACHE_HOME", "RDPSYM_CACHE_KEY_FILE",
             "XDG_CONFIG_HOME", "RDPSYM_EXECUTOR")
_TRUE = ("1", "true", "yes", "on")
#: the smallest memory limit accepted (MB): below it the interpreter and sympy alone would not fit
MIN_MEMORY_MB = 512


@dataclass(frozen=True)
class Settings:
    """The environment's settings, parsed and validated (see the module docstring)."""

    step_seconds: float = 20.0
    #: a hang guard, 10x the slowest evaluation a check makes (a discrete Gaussian at alpha = 1 + 1e-6 and
    #: sigma = 1000 sums for 20 s; at 60 s, three busy processes on two cores made it fire and a claim
    #: inconclusive)
    eval_seconds: float = 300.0
    cache_dir: Path = Path("~/.cache/rdpsym").expanduser()
    cache_enabled: bool = True
    cache_key_file: Path = Path("~/.config/rdpsym/cache-key").expanduser()
    numeric_backend: str = "auto"
    #: MB of data a process may use (``RDPSYM_MEMORY_MB``; default 3/4 of the physical memory)
    memory_mb: int = 4096
    debug: bool = False
    #: the default of ``executor=``: ``"processes"``, ``"serial"`` or a number of worker processes (a
    #: process that already shares the cores with others, e.g. a test worker, sets ``serial``)
    executor: str | int = "processes"


def check_seconds(seconds, name: str = "step_seconds") -> float:
    """A time limit: a finite number > 0 (0 would switch setitimer's alarm off: no limit at all)."""
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        raise ArgumentError(name, "a number of seconds > 0", seconds) from None
    if not (math.isfinite(value) and value > 0):
        raise ArgumentError(name, "a finite number of seconds > 0", seconds)
    return value


def check_memory_mb(value, name: str = "memory_mb") -> int:
    """A memory limit: a whole number of MB >= :data:`MIN_MEMORY_MB`."""
    text = str(value).strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        raise ArgumentError(name, f"a whole number of MB >= {MIN_MEMORY_MB}", value)
    mb = int(text)
    if mb < MIN_MEMORY_MB:
        raise ArgumentError(name, f"a whole number of MB >= {MIN_MEMORY_MB}", value)
    return mb


def check_executor(value, name: str = "executor") -> str | int:
    """A default executor: ``processes``, ``serial`` or a whole number of worker processes >= 1."""
    text = str(value).strip().lower()
    if text in ("processes", "serial"):
        return text
    if text.isascii() and text.isdigit() and len(text) <= 6 and int(text) >= 1:
        return int(text)
    raise ArgumentError(name, "'processes', 'serial' or a whole number of worker processes >= 1", value)


def default_memory_mb() -> int:
    """3/4 of the physical memory in MB (4096 where it cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 4096
    return max(MIN_MEMORY_MB, int(total * 3 / 4) >> 20)


def _parse(env: dict[str, str | None]) -> Settings:
    cache_root = env["RDPSYM_CACHE_DIR"] or os.path.join(
        env["XDG_CACHE_HOME"] or os.path.expanduser("~/.cache"), "rdpsym")
    key_file = env["RDPSYM_CACHE_KEY_FILE"] or os.path.join(
        env["XDG_CONFIG_HOME"] or os.path.expanduser("~/.config"), "rdpsym", "cache-key")
    backend = (env["RDPSYM_NUMERIC_BACKEND"] or "auto").strip().lower()
    return Settings(
        step_seconds=check_seconds(env["RDPSYM_STEP_SECONDS"] or "20", "RDPSYM_STEP_SECONDS"),
        eval_seconds=check_seconds(env["RDPSYM_EVAL_SECONDS"] or "300", "RDPSYM_EVAL_SECONDS"),
        cache_dir=Path(cache_root),
        cache_enabled=(env["RDPSYM_NO_CACHE"] or "").strip().lower() not in _TRUE,
        cache_key_file=Path(key_file),
        numeric_backend=backend,
        memory_mb=(check_memory_mb(env["RDPSYM_MEMORY_MB"], "RDPSYM_MEMORY_MB") if env["RDPSYM_MEMORY_MB"]
                   else default_memory_mb()),
        debug=(env["RDPSYM_DEBUG"] or "").strip().lower() in _TRUE,
        executor=check_executor(env["RDPSYM_EXECUTOR"] or "processes", "RDPSYM_EXECUTOR"),
    )


_lock = threading.Lock()
_parsed: dict[tuple, Settings] = {}


def settings() -> Settings:
    """The current settings (parsed once per distinct environment)."""
    key = tuple(os.environ.get(v) for v in VARIABLES)
    found = _parsed.get(key)
    if found is None:
        found = _parse(dict(zip(VARIABLES, key)))
        with _lock:
            if len(_parsed) > 64:
                _parsed.clear()
            _parsed[key] = found
    return found
