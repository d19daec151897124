"""Table II cells verified once per derivation: each cell's check is a record in the on-disk cache.

``rdpsym table`` checks every cell (alpha = 2, 1 and oo at the centre of the typical ranges) against
independent numerics (:func:`rdpsym.verify`). A check depends only on what is compared, so an agreement
is kept as a record (:class:`rdpsym._cache.DiskCache` of kind ``verification``: signed JSON data, see
:mod:`rdpsym._cache`) under a key made of

* the mechanism's definition (output variable, support, every pair's densities, the parameters with
  their domains) and the result's mathematics (status, general form, conditions, KL, D_inf, removable
  and integer orders), each as ``srepr`` text: a new derivation that differs in anything compared is a
  new key;
* the point (order and parameter values), the working precision and the digits required;
* the library versions and a fingerprint of every source file of rdpsym: any change of rdpsym's code
  (the engine, the numerics, the checks) makes every record a stranger.

Only an agreement at a point where P != Q (evidence) is kept; a mismatch or an inconclusive point is
checked again on every run (it must never be waved through), and so is a record the cache doubts (any
doubt means recompute). A record read back is the check itself (values, digits, note), so the report is
the same as a fresh one; its ``seconds`` are those of the run that made it.
"""

from __future__ import annotations

import functools
import hashlib
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Mapping

import mpmath
import sympy as sp

from .. import _cache
from .._cache import Unstorable
from ..derive.cache import DataCodec
from ..derive.result import DivergenceResult, library_versions
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.text.numbers import exact_number
from .checks import mechanism_target_name, verify
from .points import Point
from .report import PointCheck, VerificationReport, status_of

__all__ = ["table_verification", "cell_key", "RECORDS"]

_FORMAT = 1
_CODEC = DataCodec((Point,))
_MPF_FIELDS = ("closed", "numeric", "error", "rel_diff")


def _encode(check: PointCheck) -> bytes:
    data = {"point": check.point, "digits": float(check.digits), "status": check.status, "note": check.note,
            "seconds": float(check.seconds), "p_equals_q": bool(check.p_equals_q)}
    for name in _MPF_FIELDS:
        value = getattr(check, name)
        if value is not None and not isinstance(value, mpmath.mpf):
            raise Unstorable(f"{name} is a {type(value).__name__}, not an mpmath number")
        data[name] = None if value is None else tuple(value._mpf_)  # (sign, mantissa, exponent, bits): exact
    return _CODEC.encode(data)


def _decode(payload: bytes) -> PointCheck:
    data = _CODEC.decode(payload)
    if not isinstance(data, dict) or not isinstance(data.get("point"), Point):
        raise ValueError("not a verification record")
    numbers = {}
    for name in _MPF_FIELDS:
        raw = data[name]
        if raw is not None and not (isinstance(raw, tuple) and len(raw) == 4 and all(isinstance(v, int) for v in raw)
                                    and raw[0] in (0, 1) and raw[1] >= 0):
            raise ValueError(f"{name} is not an mpmath number")
        # the stored bits as they were (mpf(tuple) would round them to the working precision)
        numbers[name] = None if raw is None else mpmath.mp.make_mpf(raw)
    if not isinstance(data["digits"], float) or not isinstance(data["status"], str):
        raise ValueError("damaged record")
    return PointCheck(data["point"], numbers["closed"], numbers["numeric"], numbers["error"], numbers["rel_diff"],
                      data["digits"], data["status"], str(data["note"]), data["seconds"], bool(data["p_equals_q"]))


#: the records: only evidence (an agreement at P != Q) is kept
RECORDS = _cache.DiskCache("verification", encode=_encode, decode=_decode, accept=lambda c: c.is_evidence)


@functools.cache
def package_fingerprint() -> str:
    """A hash of every source file of rdpsym (computed once per process)."""
    root = Path(__file__).resolve().parent.parent
    return _cache.source_fingerprint(*sorted(str(p) for p in root.rglob("*.py")))


def _mechanism_text(m: Mechanism) -> list[str]:
    pairs = []
    for pair in m.pairs:
        if isinstance(pair, AdjacentFamily):
            pairs.append(sp.srepr((pair.P, pair.Q, sp.Tuple(*pair.shift_symbols), pair.over)))
        else:
            pairs.append(sp.srepr((pair.P, pair.Q)))
    params = [sp.srepr((sp.Symbol(p.name), p.symbol, p.domain)) for p in m.parameters]
    return [sp.srepr(m.variable) if not isinstance(m.variable, tuple) else sp.srepr(sp.Tuple(*m.variable)),
            sp.srepr(m.support), *pairs, *params]


def _result_text(r: DivergenceResult) -> list[str]:
    exceptional = sp.Tuple(*[sp.Tuple(p.alpha, p.value) for p in r.exceptional_points])
    integer = sp.Tuple(*[sp.Tuple(k, v) for k, v in r.integer_orders])
    parts = (r.expr, r.conditions, r.kl, r.max_divergence, exceptional, integer, sp.Tuple(*r.symbols))
    return [str(r.status)] + [sp.srepr(e) for e in parts]


def cell_key(mechanism: Mechanism, result: DivergenceResult, point: Point, dps: int, digits: float) -> str:
    """The record key of one check (see the module docstring)."""
    text = "\n".join([f"rdpsym-verification/{_FORMAT}", *_mechanism_text(mechanism), *_result_text(result),
                      sp.srepr(point.alpha), sp.srepr(sp.Tuple(*[sp.Tuple(sp.Symbol(k), v) for k, v in point.values])),
                      str(dps), repr(float(digits)), repr(sorted(library_versions().items())), package_fingerprint()])
    return hashlib.sha256(text.encode()).hexdigest()


def table_verification(mechanism: Mechanism, result: DivergenceResult, fixed: Mapping[str, object] | None = None,
                       dps: int = 30, cache: bool = True) -> tuple[VerificationReport, str]:
    """Verify the three cells of a Table II row (alpha = 2, alpha = 1, alpha = oo) at the centre of
    the typical ranges with ``fixed`` values; returns the report (its ``result`` holds it in its
    provenance) and a cell text such as ``verified (digits: α>1 30, α=1 30, α=∞ all)``.

    A cell whose agreement is on record (see the module docstring) is read, not computed; ``cache=False``
    checks every cell afresh (and keeps no record)."""
    from .points import central_values

    free = [p for p in mechanism.parameters if p.name not in (fixed or {})]
    # user values are read as numbers (never sympified: text would run as code), finite and real
    given = {k: exact_number(v, f"fixed[{k!r}]", finite=True, real=True) for k, v in (fixed or {}).items()}
    vals = tuple(sorted({**central_values(free), **given}.items()))
    cells = (("α>1", sp.Integer(2)), ("α=1", sp.Integer(1)), ("α=∞", sp.oo))
    pts = [Point(a, vals, name) for name, a in cells]
    digits = 0.6 * dps
    keys = {pt: cell_key(mechanism, result, pt, dps, digits) for pt in pts} if cache else {}
    found = {pt: RECORDS.load(key) for pt, key in keys.items()}
    found = {pt: c for pt, c in found.items() if c is not None and c.point == pt}
    missing = [pt for pt in pts if pt not in found]
    start = time.perf_counter()
    fresh = {}
    if missing:
        report = verify(result, mechanism=mechanism, points=missing, dps=dps)
        fresh = {c.point: c for c in report.checks}
        for pt, check in fresh.items():
            if cache:
                RECORDS.store(keys[pt], check)
    checks = tuple(found.get(pt) or fresh[pt] for pt in pts)
    report = VerificationReport(status_of(checks), checks, dps, float(digits), 0, "standard",
                                time.perf_counter() - start, mechanism_target_name(mechanism))
    report = replace(report, result=result.with_verification(report))
    parts = ", ".join(f"{c.point.regime} {('all' if c.digits == math.inf else f'{c.digits:.0f}') if c.status == 'agree' else c.status}"
                      for c in report.checks)
    return report, f"{report.status} (digits: {parts})"
