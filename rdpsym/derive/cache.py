"""On-disk cache of derivations, keyed by the inputs, the library versions and the engine's source.

A second derivation of the same inputs is a file read. The cache lives in ``RDPSYM_CACHE_DIR`` or
``~/.cache/rdpsym``; ``RDPSYM_NO_CACHE=1`` turns it off and :func:`clear_cache` empties it. The entries
are one :class:`rdpsym._cache.DiskCache` (signed, checked, atomic: see :mod:`rdpsym._cache`);
``rdpsym cache clear`` (:func:`rdpsym._cache.clear_all`) removes them together with the generated code.

**Stored as data.** A result is written by :class:`DataCodec`: JSON whose sympy objects are their
``srepr`` text, read back by the whitelisting reader :func:`rdpsym.specify.text.srepr.read_srepr`
(never ``eval``, ``sympify`` or pickle). The codec follows the result's dataclass fields, so a new field
of a known type is stored with no change here; a field holding a new kind of object needs its class
named once in :data:`RESULT_TYPES` (a value of an unnamed class is not stored, only returned). A value
is written only when it reads back identical (field by field, tree by tree).

**What is cached.** A derivation during which a required stage expired, or whose result is ``failed``
(:func:`cacheable`, read from :attr:`~rdpsym.derive.result.Provenance.expired`, never from prose), is
returned and never written: one slow moment on a loaded machine must not stick. An optional stage that
expired (:data:`~rdpsym.derive.result.OPTIONAL_STAGES`: the integer orders of a result without a general
form) leaves a gap the result records, and the result is cached with it. The same rule holds for
in-process memos (:func:`memoize_derivation`).

**Spot check.** Where it is cheap, a result read from the disk is checked against a direct computation
before it is used (:func:`spot_check`): for a finite support of at most :data:`SPOT_CHECK_TERMS` points,
the definition's sum at two orders and one parameter point. A disagreement discards the entry.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import math
from pathlib import Path

import mpmath
import sympy as sp

from .. import _cache
from .._cache import Unstorable
from ..specify.text.srepr import read_srepr
from .crosscheck import sample_values
from .pieces import finite_points
from .result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step, StepName, library_versions
from .._timeout import deadline_passed

__all__ = [
    "DataCodec",
    "RESULT_TYPES",
    "SPOT_CHECK_TERMS",
    "cache_dir",
    "cache_enabled",
    "cacheable",
    "cached_derivation",
    "clear_cache",
    "engine_fingerprint",
    "memoize_derivation",
    "source_fingerprint",
    "spot_check",
]

_FORMAT = 2

cache_dir = _cache.cache_dir
cache_enabled = _cache.cache_enabled
source_fingerprint = _cache.source_fingerprint


# -------------------------------------------------------------------------------------------------
# the stored form: JSON with sympy objects as srepr text
# -------------------------------------------------------------------------------------------------
class DataCodec:
    """Values as JSON data: ``None``, bools, ints, strings, floats (exact, as hex), lists, tuples, dicts,
    sympy objects (``srepr`` text, read back by :func:`~rdpsym.specify.text.srepr.read_srepr`), and the
    dataclasses and enumerations named in ``types`` (field by field). Anything else raises
    :class:`~rdpsym._cache.Unstorable`; ``decode`` builds nothing but these.

    ``encode`` writes a value only when it reads back identical (:meth:`same`): a tree the reader cannot
    rebuild exactly is never stored."""

    def __init__(self, types):
        self.types = {t.__name__: t for t in types}

    # -- writing -------------------------------------------------------------------------------------
    def to_data(self, value):
        if isinstance(value, enum.Enum):  # before str and int: a StrEnum is a str
            if self.types.get(type(value).__name__) is not type(value):
                raise Unstorable(f"the enumeration {type(value).__qualname__} is not stored as data")
            return {"enum": [type(value).__name__, value.value]}
        if value is None or isinstance(value, (bool, str, int)):
            return value
        if isinstance(value, float):
            return {"float": value.hex()}
        if isinstance(value, sp.Basic):
            return {"sympy": sp.srepr(value, order="none")}  # args in their own order: rebuilt node for node
        if isinstance(value, tuple):
            return {"tuple": [self.to_data(v) for v in value]}
        if isinstance(value, list):
            return [self.to_data(v) for v in value]
        if isinstance(value, dict):
            return {"dict": [[self.to_data(k), self.to_data(v)] for k, v in value.items()]}
        cls = type(value)
        if dataclasses.is_dataclass(value) and self.types.get(cls.__name__) is cls:
            return {"dataclass": [cls.__name__, {f.name: self.to_data(getattr(value, f.name))
                                                 for f in dataclasses.fields(value)}]}
        raise Unstorable(f"a {cls.__module__}.{cls.__qualname__} is not stored as data")

    def encode(self, value) -> bytes:
        try:
            text = json.dumps(self.to_data(value), separators=(",", ":"))
            back = self.decode(text.encode())
        except Unstorable:
            raise
        except (ValueError, TypeError, RecursionError) as exc:  # e.g. a tree nested deeper than the reader reads
            raise Unstorable(f"the value does not read back: {type(exc).__name__}: {exc}") from None
        if not self.same(back, value):
            raise Unstorable("the value does not read back identical")
        return text.encode()

    # -- reading -------------------------------------------------------------------------------------
    def from_data(self, data):
        if data is None or isinstance(data, (bool, str, int)):
            return data
        if isinstance(data, list):
            return [self.from_data(v) for v in data]
        if not (isinstance(data, dict) and len(data) == 1):
            raise ValueError(f"unexpected {type(data).__name__} in stored data")
        (tag, body), = data.items()
        if tag == "sympy" and isinstance(body, str):
            return read_srepr(body)
        if tag == "tuple" and isinstance(body, list):
            return tuple(self.from_data(v) for v in body)
        if tag == "float" and isinstance(body, str):
            return float.fromhex(body)
        if tag == "dict" and isinstance(body, list) and all(isinstance(kv, list) and len(kv) == 2 for kv in body):
            return {self.from_data(k): self.from_data(v) for k, v in body}
        if tag in ("enum", "dataclass") and isinstance(body, list) and len(body) == 2 and isinstance(body[0], str):
            cls = self.types.get(body[0])
            if tag == "enum" and isinstance(cls, type) and issubclass(cls, enum.Enum):
                return cls(body[1])
            if tag == "dataclass" and dataclasses.is_dataclass(cls) and isinstance(body[1], dict):
                names = {f.name for f in dataclasses.fields(cls)}
                if set(body[1]) != names:
                    raise ValueError(f"stored {body[0]} fields {sorted(body[1])} are not {sorted(names)}")
                return cls(**{k: self.from_data(v) for k, v in body[1].items()})
        raise ValueError(f"unexpected {tag!r} in stored data")

    def decode(self, payload: bytes):
        return self.from_data(json.loads(payload.decode("utf-8")))

    @classmethod
    def same(cls, a, b) -> bool:
        """``a`` and ``b`` are the same value: same types, equal sympy trees, every dataclass field
        (those ``==`` skips too), floats equal or both NaN."""
        if type(a) is not type(b):
            return False
        if isinstance(a, float):
            return a == b or (math.isnan(a) and math.isnan(b))
        if isinstance(a, (tuple, list)):
            return len(a) == len(b) and all(cls.same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(cls.same(a[k], b[k]) for k in a)
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            return all(cls.same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
        return a == b


#: the classes a cached derivation is made of (a field holding another class is not stored)
RESULT_TYPES = (DivergenceResult, Provenance, Step, ExceptionalPoint, Status, StepName)


# -------------------------------------------------------------------------------------------------
# what may be cached
# -------------------------------------------------------------------------------------------------
def cacheable(result) -> bool:
    """False when ``result`` (a DivergenceResult) is ``failed`` or a required stage of it expired
    (:attr:`Provenance.required_expired <rdpsym.derive.result.Provenance.required_expired>`: a time limit,
    the budget, or an error that need not recur). Such a result is returned, never cached (on disk or in
    memory). A result whose only expired stages are optional is cached with that gap recorded."""
    if getattr(result, "status", None) is Status.FAILED:
        return False
    provenance = getattr(result, "provenance", None)
    return not (provenance is not None and provenance.required_expired)


def _derive_recorded(P, Q, x, support, params, seconds, check_density, label):
    """``_derive``; when a time limit expired during it outside the stages that record it (even one whose
    StepTimeout was caught and turned into a fallback), or an enclosing deadline passed, the result records
    the stage ``"derivation"`` as expired, with a step saying so: it must not be cached."""
    from .engine import derive_uncached as _derive

    before = _cache.unexcused_timeouts()
    result = _derive(P, Q, x, support, params, seconds, check_density, label)
    expired = _cache.unexcused_timeouts() - before
    prov = result.provenance
    if (expired or deadline_passed()) and not prov.required_expired:
        note = Step("time limits", f"{expired} time limit{'s' * (expired != 1)} expired during this derivation "
                                   f"(or an enclosing one did): the result is not cached")
        prov = dataclasses.replace(prov, steps=tuple(prov.steps) + (note,), expired=prov.expired + ("derivation",))
        result = dataclasses.replace(result, provenance=prov)
    return result


def _results_cacheable(value) -> bool:
    results = value if isinstance(value, tuple) else (value,)
    return all(cacheable(r) for r in results if hasattr(r, "provenance"))


def memoize_derivation(fn):
    """An in-process memo of ``fn(*args)`` (hashable arguments) that keeps no result :func:`cacheable`
    rejects and none computed while a (not excused) time limit expired."""
    memo = _cache.Memo(accept=_results_cacheable)

    @functools.wraps(fn)
    def wrapper(*args):
        return memo.get_or_compute(args, lambda: fn(*args))

    wrapper.cache_clear = memo.clear
    return wrapper


# -------------------------------------------------------------------------------------------------
# the spot check
# -------------------------------------------------------------------------------------------------
#: the spot check's work budget: a finite support of at most this many points (one evaluation of P and
#: Q each, per order); larger or infinite supports, and continuous ones, are not spot-checked
SPOT_CHECK_TERMS = 64
#: the orders of the spot check (one below 1, one above; neither is special for the general form)
SPOT_CHECK_ORDERS = (sp.Rational(1, 3), sp.Rational(5, 2))
_SPOT_DPS = 30


def _direct_sum(P, Q, x, atoms, a, values):
    """D_a(P||Q) = log(sum_x P(x)^a Q(x)^(1-a)) / (a - 1) at the parameter ``values``, term by term
    (Mironov 2017, Def. 3); None when a term is not a non-negative real number."""
    with mpmath.workdps(_SPOT_DPS + 15):
        total, a_mp = mpmath.mpf(0), mpmath.mpf(a.p) / a.q
        for x0 in atoms:
            p, q = (sp.N(e.subs(values).subs(x, x0), _SPOT_DPS + 15) for e in (P, Q))
            if not (p.is_real and q.is_real and p.is_finite and q.is_finite) or p < 0 or q < 0:
                return None
            p, q = mpmath.mpf(p), mpmath.mpf(q)
            if p == 0:
                continue
            if q == 0:
                if a_mp > 1:
                    return mpmath.inf
                continue
            total += p ** a_mp * q ** (1 - a_mp)
        return mpmath.log(total) / (a_mp - 1) if total > 0 else None


def spot_check(result, P, Q, x, support, params) -> str | None:
    """Why the closed form of ``result`` (read from the cache for the pair ``P``, ``Q``) is doubted, or
    None: where the support is finite with at most :data:`SPOT_CHECK_TERMS` points, its value at the
    orders :data:`SPOT_CHECK_ORDERS` and the first sample point of the parameters must equal the direct
    sum to 20 digits. Where the check is not cheap, or cannot be made at that point (a value that does
    not evaluate), there is no doubt: a cold result would meet the same."""
    if result.expr is None or result.status is not Status.CLOSED_FORM or isinstance(x, tuple):
        return None
    atoms = finite_points(support) if isinstance(support, (sp.FiniteSet, sp.Range)) else None
    if not atoms or len(atoms) > SPOT_CHECK_TERMS or not all(a.is_number for a in atoms):
        return None
    values = sample_values(result.symbols, params, 1)[0]
    named = {s.name: v for s, v in values.items()}
    for a in SPOT_CHECK_ORDERS:
        try:
            cached = result.evaluate(a, dps=_SPOT_DPS, **named)
            direct = _direct_sum(P, Q, x, atoms, a, values)
        except (ArithmeticError, ValueError, TypeError):
            return None
        if direct is None:
            return None
        with mpmath.workdps(_SPOT_DPS):
            if mpmath.isinf(cached) or mpmath.isinf(direct):
                agree = cached == direct
            else:
                agree = abs(cached - direct) <= mpmath.mpf(10) ** -20 * max(1, abs(direct))
        if not agree:
            return (f"its value at alpha = {a}, {', '.join(f'{k} = {v}' for k, v in named.items())} is "
                    f"{mpmath.nstr(cached, 15)}; the direct sum gives {mpmath.nstr(direct, 15)}")
    return None


# -------------------------------------------------------------------------------------------------
# the derivation cache
# -------------------------------------------------------------------------------------------------
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


_CODEC = DataCodec(RESULT_TYPES)
#: the derivation entries, ``derivation-<key>.rdpsym``; an entry :func:`cacheable` rejects is discarded
_DERIVATIONS = _cache.DiskCache("derivation", encode=_CODEC.encode, decode=_CODEC.decode, accept=cacheable)


def clear_cache() -> int:
    """Delete every cached derivation; returns how many were removed."""
    return _DERIVATIONS.clear()


def cached_derivation(P, Q, x, support, params, seconds, check_density, label):
    if not cache_enabled():
        return _derive_recorded(P, Q, x, support, params, seconds, check_density, label)
    # the domains decide kinks the assumptions leave open (and narrow a case split): part of the key
    param_key = tuple((p.name, p.typical, sp.srepr(p.symbol), sp.srepr(p.domain)) for p in params or ())
    key = _key(P, Q, x, support, param_key, seconds, check_density, label)
    # a timeout or failure is returned and derived again next time
    return _DERIVATIONS.get_or_compute(
        key, lambda: _derive_recorded(P, Q, x, support, params, seconds, check_density, label),
        check=lambda result: spot_check(result, P, Q, x, support, params))
