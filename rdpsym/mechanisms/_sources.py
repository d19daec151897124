"""Where a mechanism comes from: the one reading of a mechanism argument, and the entry points.

A mechanism argument (every CLI command's ``NAME``, :func:`resolve` from Python) is one of

* a :class:`~rdpsym.specify.mechanism.Mechanism` object (returned as it is);
* a registered name (``gaussian``; built-ins, :func:`~rdpsym.mechanisms.register`, entry points);
* a path to a Python file, ``path/to/file.py`` or ``path/to/file.py:name``;
* ``package.module:attribute`` (an importable module; the attribute may be dotted).

A file or an attribute gives a Mechanism, or a factory (a function of no arguments) returning one. A file
without ``:name`` says which mechanism it means the way ``rdpsym verify`` always read it: a module-level
``mechanism``; else the one factory the file registered with :func:`~rdpsym.mechanisms.register`; else
the one public function annotated ``-> Mechanism`` or Mechanism object it defines. Importing the user's
file runs its code: that is what the user asks for by naming it; user *text* is never evaluated.

``package.module:attribute`` can name anything importable, so what it names is called only when it
says it makes a Mechanism: a function annotated ``-> Mechanism`` or registered with
:func:`~rdpsym.mechanisms.register` (``signal:pause`` or ``os:abort`` is refused, never called). A
reference longer than :data:`MAX_REFERENCE_CHARS` is refused before anything is looked up. Importing the
user's file or module and calling the factory run under a time limit of :data:`LOAD_STEPS` step limits
(``RDPSYM_STEP_SECONDS``): a factory that builds gamma(10^6) exactly is abandoned
(:class:`~rdpsym._timeout.StepTimeout`), not waited for.

A file is executed once per process and content: naming it again returns the module already loaded
(so a factory it registers is not "registered twice"); an edited file (another mtime or size) is loaded
again, after the names its previous version registered are unregistered.

Third-party packages register mechanisms through the entry-point group ``rdpsym.mechanisms``::

    [project.entry-points."rdpsym.mechanisms"]
    skellam = "my_package.mechanisms:skellam"     # a factory, or a Mechanism

An entry point is loaded when its mechanism is first built (``mechanisms.get``), not when it is listed;
a failure to load is that name's error, never the whole registry's. A name already registered (a
built-in) keeps its registration: the clash is reported by :func:`problems` and ``rdpsym list``.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .._numbers import ArgumentError
from .._timeout import StepTimeout, default_step_seconds, time_limit
from ..specify.mechanism import Mechanism

__all__ = ["GROUP", "resolve", "load_file", "load_attribute", "declared_factory", "source", "problems",
           "entry_point_names", "entry_point_factory", "MAX_REFERENCE_CHARS"]

#: the entry-point group third-party packages register mechanisms in
GROUP = "rdpsym.mechanisms"

#: the registered mechanism factories by name (:func:`rdpsym.mechanisms.register` fills it)
REGISTRY: dict[str, Callable[[], Mechanism]] = {}

_LOCK = threading.RLock()
_MODULE_ATTRIBUTE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_RULE = ("a registered name, a path to a Python file (file.py or file.py:name) or package.module:attribute, "
         "giving a Mechanism or a function of no arguments returning one")
#: the longest mechanism reference read (a path: Linux's PATH_MAX)
MAX_REFERENCE_CHARS = 4096
#: importing a user's file or module, or calling its factory, may take this many step limits
LOAD_STEPS = 3


def _error(argument: str, message: str, value: Any = None) -> ArgumentError:
    return ArgumentError(argument, _RULE, value, message=message)


def _loading(what: str):
    """The time limit of loading a user's mechanism (:data:`LOAD_STEPS` step limits), saying ``what``."""
    @contextlib.contextmanager
    def loading_step():
        seconds = LOAD_STEPS * default_step_seconds()
        try:
            with time_limit(seconds, clock="wall"):
                yield
        except StepTimeout as exc:
            out = type(exc)(f"{what}: {exc}")
            out.limit_id = exc.limit_id
            if hasattr(exc, "resource"):
                out.resource = exc.resource
            raise out from None

    return loading_step()


# -- a Mechanism from an object --------------------------------------------------------------------
def _build(obj: Any, where: str, argument: str) -> Mechanism:
    """``obj`` itself if a Mechanism, else ``obj()`` if that is one; else an error naming ``where``."""
    if callable(obj) and not isinstance(obj, Mechanism):
        if _takes_arguments(obj):
            raise _error(argument, f"{where} takes arguments; a mechanism factory takes none", where)
        try:
            with _loading(f"calling the mechanism factory {where}"):
                obj = obj()
        except Exception as exc:  # the user's factory is broken, not rdpsym: a usage error naming it
            raise _error(argument, f"{where}: calling it raised {type(exc).__name__}: {exc}", where) from exc
    if not isinstance(obj, Mechanism):
        raise _error(argument, f"{where} is a {type(obj).__name__}, not an rdpsym Mechanism", where)
    return obj


def _takes_arguments(f: Callable) -> bool:
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return False
    return any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               for p in sig.parameters.values())


def _returns_mechanism(annotation: Any) -> bool:
    """A return annotation that names :class:`Mechanism` (the class, a subclass, or its name as text)."""
    if isinstance(annotation, type):
        return issubclass(annotation, Mechanism)
    if isinstance(annotation, str):
        return annotation.strip().strip("'\"").rpartition(".")[2] == "Mechanism"
    return False


def declared_factory(obj: Any) -> bool:
    """Whether ``obj`` says it makes a Mechanism: a factory registered with
    :func:`~rdpsym.mechanisms.register`, or a Python function annotated ``-> Mechanism``."""
    if any(obj is f for f in REGISTRY.values()):
        return True
    if not (inspect.isfunction(obj) or inspect.ismethod(obj)):
        return False  # a builtin, a class, an arbitrary callable: nothing says what calling it does
    try:
        return _returns_mechanism(inspect.signature(obj).return_annotation)
    except (TypeError, ValueError):
        return False


def _attribute(obj: Any, dotted: str, where: str, argument: str) -> Any:
    for part in dotted.split("."):
        if not hasattr(obj, part):
            raise _error(argument, f"{where} defines no {dotted!r}", dotted)
        obj = getattr(obj, part)
    return obj


# -- files -------------------------------------------------------------------------------------------
@dataclass
class _Loaded:
    stamp: tuple[int, int]
    module: Any
    registered: list[str] = field(default_factory=list)


_FILES: dict[Path, _Loaded] = {}


def _module_name(path: Path) -> str:
    import hashlib

    return "rdpsym_user_mechanism_" + hashlib.sha1(str(path).encode()).hexdigest()[:16]


def _load_module(path: Path, argument: str) -> _Loaded:
    from . import unregister

    resolved = path.resolve()
    st = resolved.stat()
    stamp = (st.st_mtime_ns, st.st_size)
    with _LOCK:
        old = _FILES.get(resolved)
        if old is not None and old.stamp == stamp:
            return old
        name = _module_name(resolved)
        if old is not None:  # the file changed: its old registrations make way for the new ones
            for n in old.registered:
                if getattr(REGISTRY.get(n), "__module__", None) == name:
                    unregister(n)
            del _FILES[resolved]
        spec = importlib.util.spec_from_file_location(name, resolved)
        if spec is None or spec.loader is None:
            raise _error(argument, f"{path}: not a Python file", str(path))
        module = importlib.util.module_from_spec(spec)
        before = set(REGISTRY)
        sys.modules[name] = module
        try:
            with _loading(f"importing {path}"):
                spec.loader.exec_module(module)
        except BaseException as exc:  # noqa: BLE001 - the user's file runs here: undo its registrations whatever ends it
            sys.modules.pop(name, None)
            for n in set(REGISTRY) - before:
                unregister(n)
            if not isinstance(exc, Exception):  # out of time, Ctrl-C: not the file's error
                raise
            # the user's file is broken, not rdpsym: a usage error naming it
            raise _error(argument, f"{path}: importing it raised {type(exc).__name__}: {exc}", str(path)) from exc
        loaded = _Loaded(stamp, module, sorted(set(REGISTRY) - before))
        _FILES[resolved] = loaded
        return loaded


def _candidates(module) -> list[str]:
    """Public functions annotated ``-> Mechanism`` and Mechanism objects defined by ``module``."""
    out = []
    for n, obj in vars(module).items():
        if n.startswith("_"):
            continue
        if isinstance(obj, Mechanism):
            out.append(n)
        elif (inspect.isfunction(obj) and obj.__module__ == module.__name__
              and inspect.signature(obj).return_annotation in (Mechanism, "Mechanism", "rdpsym.Mechanism")):
            out.append(n)
    return out


def load_file(path: str | Path, attribute: str | None = None, *, argument: str = "mechanism") -> Mechanism:
    """The Mechanism defined by the Python file ``path`` (its ``attribute`` if given; see the module doc).

    Errors are :class:`~rdpsym._numbers.ArgumentError` (``ValueError``) naming ``argument``: no such file,
    importing it raised, no ``attribute`` (``.argument == "attribute"`` then), not a Mechanism, no
    mechanism or several (listed, with the ``file.py:name`` form that picks one).
    """
    from . import get

    path = Path(path)
    try:
        is_file = path.is_file()
    except (OSError, ValueError) as exc:  # a name too long for a path, a NUL byte
        raise _error(argument, f"not a readable file path: {str(path)[:80]!r} ({exc.__class__.__name__})",
                     str(path)) from None
    if not is_file:
        raise _error(argument, f"no such file: {path}", str(path))
    loaded = _load_module(path, argument)
    module = loaded.module
    if attribute is not None:
        return _build(_attribute(module, attribute, str(path), "attribute"), f"{path}:{attribute}", argument)
    if hasattr(module, "mechanism"):
        return _build(module.mechanism, f"{path}: 'mechanism'", argument)
    if len(loaded.registered) == 1:
        return get(loaded.registered[0])
    several = loaded.registered or _candidates(module)
    if len(several) == 1:
        return _build(getattr(module, several[0]), f"{path}: {several[0]!r}", argument)
    if several:
        raise _error(argument, f"{path}: cannot tell which mechanism to use, it defines several: "
                     f"{', '.join(several)}; name one as {path}:{several[0]}", str(path))
    raise _error(argument, f"{path}: cannot tell which mechanism to use, it defines none; define a module-level "
                 "`mechanism`, or one function annotated `-> Mechanism`, or name it as file.py:NAME", str(path))


# -- package.module:attribute ---------------------------------------------------------------------------
def load_attribute(spec: str, *, argument: str = "mechanism") -> Mechanism:
    """The Mechanism named by ``package.module:attribute``: a Mechanism, or a factory that says it returns
    one (:func:`declared_factory`: annotated ``-> Mechanism``, or registered), called then. Anything else
    is refused before it is called (an :class:`~rdpsym._numbers.ArgumentError` with the reason)."""
    module_name, _, attribute = spec.partition(":")
    try:
        with _loading(f"importing {module_name!r}"):
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _error(argument, f"{spec}: cannot import module {module_name!r} ({exc})", spec) from exc
    except Exception as exc:  # the user's module is broken
        raise _error(argument, f"{spec}: importing {module_name!r} raised {type(exc).__name__}: {exc}", spec) from exc
    obj = _attribute(module, attribute, f"{spec}: module {module_name!r}", argument)
    if callable(obj) and not isinstance(obj, Mechanism) and not declared_factory(obj):
        kind = "class" if isinstance(obj, type) else type(obj).__name__
        raise _error(argument, f"{spec} is a {kind} that does not say it returns an rdpsym Mechanism; it was not "
                     "called (name a Mechanism, or a function annotated `-> Mechanism` or registered with "
                     "rdpsym.mechanisms.register)", spec)
    return _build(obj, spec, argument)


# -- the one reading ------------------------------------------------------------------------------------
def _split_file(spec: str) -> tuple[str, str | None] | None:
    """``(path, name or None)`` when ``spec`` names a Python file (``file.py`` or ``file.py:name``)."""
    if spec.endswith(".py"):
        return spec, None
    head, sep, tail = spec.rpartition(":")
    if sep and head.endswith(".py") and re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", tail):
        return head, tail
    try:
        if Path(spec).is_file():
            return spec, None
    except (OSError, ValueError):  # a name too long for a path, a NUL byte: not a file
        pass
    return None


def resolve(spec: Any, *, argument: str = "mechanism") -> Mechanism:
    """A :class:`~rdpsym.specify.mechanism.Mechanism` from ``spec``: a Mechanism, a registered name,
    ``path/to/file.py[:name]`` or ``package.module:attribute`` (see the module doc for how each is read).

    Errors are :class:`~rdpsym._numbers.ArgumentError` (a ``ValueError``) whose message names the file,
    the attribute or the registered names, and the rule.
    """
    from . import get, names

    if isinstance(spec, Mechanism):
        return spec
    if isinstance(spec, Path):
        return load_file(spec, argument=argument)
    if not isinstance(spec, str) or not spec.strip():
        raise ArgumentError(argument, _RULE, spec)
    spec = spec.strip()
    if len(spec) > MAX_REFERENCE_CHARS:
        raise ArgumentError(argument, f"a mechanism reference of at most {MAX_REFERENCE_CHARS} characters", spec,
                            message=f"{argument} must be a mechanism reference of at most {MAX_REFERENCE_CHARS} "
                                    f"characters; got {len(spec)} characters ({spec[:40]!r}...)")
    if spec in names():
        return get(spec)
    as_file = _split_file(spec)
    if as_file is not None:
        return load_file(as_file[0], as_file[1], argument=argument)
    if _MODULE_ATTRIBUTE.match(spec):
        return load_attribute(spec, argument=argument)
    try:
        return get(spec)
    except ArgumentError as exc:  # the unknown-name error, listing the registered ones and the other forms
        raise ArgumentError(argument, _RULE, spec, message=f"{exc}; or give path/to/file.py[:name] or "
                            "package.module:attribute") from None


# -- entry points -----------------------------------------------------------------------------------------
@dataclass
class _EntryPoint:
    name: str
    value: str
    dist: str
    entry: Any
    factory: Callable[[], Mechanism] | None = None


_EP_STATE: dict[str, Any] = {"key": None, "points": {}, "problems": []}


def _discover() -> tuple[dict[str, _EntryPoint], list[str]]:
    """The group's entry points, found again when ``sys.path`` changed (one scan per path otherwise)."""
    from importlib import metadata

    key = tuple(sys.path)
    with _LOCK:
        if _EP_STATE["key"] != key:
            points: dict[str, _EntryPoint] = {}
            found: list[str] = []
            try:
                eps = list(metadata.entry_points(group=GROUP))
            except Exception as exc:  # a broken installed distribution must not break the registry
                eps, found = [], [f"entry points of group {GROUP!r} could not be read: {type(exc).__name__}: {exc}"]
            for ep in eps:
                dist = getattr(ep, "dist", None)
                dist_name = (f"{dist.metadata['Name']} {dist.version}" if dist is not None else "an unknown distribution")
                point = _EntryPoint(ep.name, ep.value, dist_name, ep)
                if ep.name in points:
                    first = points[ep.name]
                    found.append(f"mechanism {ep.name!r}: entry point {ep.value} ({dist_name}) ignored; "
                                 f"entry point {first.value} ({first.dist}) has that name")
                    continue
                points[ep.name] = point
            _EP_STATE.update(key=key, points=points, problems=found)
        return _EP_STATE["points"], _EP_STATE["problems"]


def entry_point_names(registered: set[str]) -> list[str]:
    """Names offered by entry points and not taken by a registration (which wins a clash)."""
    points, _ = _discover()
    return [n for n in points if n not in registered]


def entry_point_factory(name: str) -> Callable[[], Mechanism] | None:
    """The factory of entry point ``name`` (loaded on first use), or None when there is no such entry point.

    A failure to load it is an :class:`~rdpsym._numbers.ArgumentError` naming the entry point and its
    distribution.
    """
    points, _ = _discover()
    point = points.get(name)
    if point is None:
        return None
    with _LOCK:
        if point.factory is None:
            where = f"entry point {point.value} ({point.dist})"
            try:
                obj = point.entry.load()
            except Exception as exc:  # noqa: BLE001 - loading an entry point runs its package's code: a usage error naming it
                raise _error("name", f"mechanism {name!r}: loading {where} raised {type(exc).__name__}: {exc}",
                             name) from exc
            if isinstance(obj, Mechanism):
                mech = obj
                point.factory = lambda: mech
            elif callable(obj):
                def built(obj=obj, where=where):
                    return _build(obj, where, "name")
                point.factory = built
            else:
                raise _error("name", f"mechanism {name!r}: {where} is a {type(obj).__name__}, "
                             "not a Mechanism or a function returning one", name)
        return point.factory


def problems(registered: set[str] | None = None) -> list[str]:
    """Messages on the group's entry points: name clashes (with a registration or another entry point)."""
    if registered is None:
            registered = set(REGISTRY)
    points, found = _discover()
    out = list(found)
    for n, point in points.items():
        if n in registered:
            out.append(f"mechanism {n!r}: entry point {point.value} ({point.dist}) ignored; "
                       f"{source(n)} has that name")
    return out


def source(name: str) -> str:
    """Where the mechanism ``name`` comes from: ``built-in``, ``entry point <value> (<dist> <version>)``,
    ``file <path>`` (registered by a user's file), or ``registered by <module>``."""
    from . import factory

    if name not in REGISTRY:
        points, _ = _discover()
        if name in points:
            return f"entry point {points[name].value} ({points[name].dist})"
        factory(name)  # the unknown-name error
    module = getattr(REGISTRY[name], "__module__", None) or "?"
    if module.startswith(__package__ + "."):
        return "built-in"
    for path, loaded in _FILES.items():
        if loaded.module.__name__ == module:
            return f"file {path}"
    return f"registered by {module}"
