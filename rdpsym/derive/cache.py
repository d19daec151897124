"""On-disk cache of derivations, keyed by the inputs, the library versions and the engine's source.

A second derivation of the same inputs is a file read. The cache lives in ``RDPSYM_CACHE_DIR`` or
``~/.cache/rdpsym``; ``RDPSYM_NO_CACHE=1`` turns it off and :func:`clear_cache` empties it. The entries
are one :class:`rdpsym._cache.DiskCache` (signed, checked, atomic: see :mod:`rdpsym._cache`);
``rdpsym cache clear`` (:func:`rdpsym._cache.clear_all`) removes them together with the generated code.

**Stored as data.** A result is written by :class:`~rdpsym.derive.codec.DataCodec`: JSON whose sympy
objects are their ``srepr`` text, read back by the whitelisting reader
:func:`rdpsym.specify.text.srepr.read_srepr` (never ``eval``, ``sympify`` or pickle). The codec follows the result's dataclass fields, so a new field
of a known type is stored with no change here; a field holding a new kind of object needs its class
named once in :data:`RESULT_TYPES` (a value of an unnamed class is not stored, only returned). A value
is written only when it reads back identical (field by field, tree by tree).

**The cache calls the engine, never imports it.** :func:`cached_derivation` is handed the derivation
to run on a miss (the engine passes :func:`rdpsym.derive.engine.derive_uncached`), so this module sits
below the engine.

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
import functools
import hashlib
from pathlib import Path

import mpmath
import sympy as sp

from .. import _cache
from .codec import DataCodec
from .crosscheck import sample_values
from .pieces import finite_points
from .result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step, StepName
from .._version import library_versions
from .._timeout import deadline_passed

__all__ = [
    "RESULT_TYPES",
    "SPOT_CHECK_TERMS",
    "cache_dir",
    "cache_enabled",
    "cacheable",
    "cached_derivation",
    "cached_integer_order",
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


def _derive_recorded(derive, P, Q, x, support, params, seconds, check_density, label):
    """``derive(P, Q, x, support, params, seconds, check_density, label)``; when a time limit expired during
    it outside the stages that record it (even one whose StepTimeout was caught and turned into a fallback),
    or an enclosing deadline passed, the result records the stage ``"derivation"`` as expired, with a step
    saying so: it must not be cached."""
    before = _cache.unexcused_timeouts()
    result = derive(P, Q, x, support, params, seconds, check_density, label)
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


def _params_key(params) -> tuple:
    """The parameters as part of a key: their domains decide kinks the assumptions leave open (and narrow
    a case split)."""
    return tuple((p.name, p.typical, sp.srepr(p.symbol), sp.srepr(p.domain)) for p in params or ())


def _key(*parts) -> str:
    text = "\n".join([str(_FORMAT), *(sp.srepr(p) if isinstance(p, sp.Basic) else repr(p) for p in parts)])
    text += "\n" + repr(sorted(library_versions().items())) + "\n" + engine_fingerprint()
    return hashlib.sha256(text.encode()).hexdigest()


_CODEC = DataCodec(RESULT_TYPES)
#: the derivation entries, ``derivation-<key>.rdpsym``; an entry :func:`cacheable` rejects is discarded
_DERIVATIONS = _cache.DiskCache("derivation", encode=_CODEC.encode, decode=_CODEC.decode, accept=cacheable)


#: exact integer orders of one direction (:mod:`rdpsym.derive.integer_order`), ``integerorder-<key>.rdpsym``:
#: ``{"value": D_k}``, or ``{"value": None}`` where the multinomial expansion does not give it. Nothing
#: computed while a time limit expired is stored, so a None kept is the expansion's answer, not the clock's
_INTEGER_ORDERS = _cache.DiskCache("integerorder", encode=_CODEC.encode, decode=_CODEC.decode)


def clear_cache() -> int:
    """Delete every cached derivation (exact integer orders included); returns how many were removed."""
    return _DERIVATIONS.clear() + _INTEGER_ORDERS.clear()


def cached_integer_order(P, Q, x, support, k: int, params, seconds, derive):
    """D_k(P||Q) at the integer order ``k`` from the disk, or ``derive()`` (an expression, or None where it
    is not derived) stored when no time limit expired meanwhile. Exact values of heavy-tailed pairs at
    high orders take seconds each (residues of poles of order k: Cauchy at k = 32, 10 s); every process
    that evaluates a curve at integer orders would otherwise derive them again. On a finite support a
    stored value is checked against the direct sum at a sample point before it is used
    (:func:`spot_check`)."""
    if not cache_enabled():
        return derive()
    key = _key("integer order", P, Q, x, support, int(k), _params_key(params), seconds)

    def doubt(entry) -> str | None:
        if not (isinstance(entry, dict) and set(entry) == {"value"}
                and (entry["value"] is None or isinstance(entry["value"], sp.Basic))):
            return "not an integer-order entry"
        return None if entry["value"] is None else _integer_order_doubt(entry["value"], P, Q, x, support, int(k), params)

    return _INTEGER_ORDERS.get_or_compute(key, lambda: {"value": derive()}, check=doubt)["value"]


def _integer_order_doubt(value, P, Q, x, support, k, params) -> str | None:
    """As :func:`spot_check` for an exact D_k: on a finite support of at most :data:`SPOT_CHECK_TERMS`
    points, the stored value at the first sample point must equal the direct sum to 20 digits."""
    atoms = finite_points(support) if isinstance(support, (sp.FiniteSet, sp.Range)) else None
    if not atoms or len(atoms) > SPOT_CHECK_TERMS or not all(a.is_number for a in atoms):
        return None
    symbols = tuple(sorted(value.free_symbols | ((P.free_symbols | Q.free_symbols) - {x}), key=str))
    point = sample_values(symbols, params, 1)[0]
    direct = _direct_sum(P, Q, x, atoms, sp.Integer(k), point)
    if direct is None:
        return None
    try:
        with mpmath.workdps(_SPOT_DPS):
            cached = mpmath.mpf(sp.N(value.xreplace(point), _SPOT_DPS)) if value.xreplace(point).is_real else None
            if cached is None:
                return "it does not evaluate to a real number at a sample point"
            if mpmath.isinf(cached) or mpmath.isinf(direct):
                return None if cached == direct else "it is infinite where the direct sum is not (or the reverse)"
            if abs(cached - direct) <= mpmath.mpf(10) ** -20 * max(1, abs(direct)):
                return None
            return f"its value is {mpmath.nstr(cached, 15)}; the direct sum gives {mpmath.nstr(direct, 15)}"
    except (TypeError, ValueError, ArithmeticError):
        return None


def cached_derivation(derive, P, Q, x, support, params, seconds, check_density, label):
    """The derivation of these inputs from the disk, or ``derive(P, Q, x, support, params, seconds,
    check_density, label)`` (the engine's uncached derivation) stored when :func:`cacheable`."""
    if not cache_enabled():
        return _derive_recorded(derive, P, Q, x, support, params, seconds, check_density, label)
    key = _key(P, Q, x, support, _params_key(params), seconds, check_density, label)
    # a timeout or failure is returned and derived again next time
    return _DERIVATIONS.get_or_compute(
        key, lambda: _derive_recorded(derive, P, Q, x, support, params, seconds, check_density, label),
        check=lambda result: spot_check(result, P, Q, x, support, params))
