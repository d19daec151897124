"""The one JSON output of the ``rdpsym`` commands (``--json``), documented in ``docs/json.md``.

Every command's ``--json`` prints exactly one JSON object on stdout and nothing else there (progress
and notes go to stderr or are off)::

    {"schema": "rdpsym/1", "command": "verify", "exit_code": 0, ...the command's payload...}

``schema`` names this layout and its version; ``command`` is the command path (``"plot conversion"``,
``"cache clear"``); ``exit_code`` is the process's exit code (:class:`~rdpsym.cli._exit.ExitCode`), so a
CI job reads the verdict from the document or from the status alike. The payload's keys never reuse
these three names. Values are JSON types: a finite number is a number; +oo, -oo and NaN are the strings
``"inf"``, ``"-inf"``, ``"nan"`` (JSON has no infinity, and a NaN is never silently a number); sympy
expressions are sympy strings (``sp.sstr``); enumerations are their values.

Helpers here turn rdpsym's objects into payloads (:func:`result_json`, :func:`verification_json`,
:func:`verdict_json`, :func:`suite_json`) so every command writes an object the same way.
"""

from __future__ import annotations

import enum
import functools
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

import click

__all__ = ["SCHEMA", "RESERVED", "json_option", "jsonable", "document", "emit", "result_json",
           "verification_json", "verdict_json", "suite_json"]

#: the name and version of the layout (bumped when a key changes meaning or disappears)
SCHEMA = "rdpsym/1"
#: the keys every document has; a payload never uses them
RESERVED = ("schema", "command", "exit_code")


def json_option(command: Callable) -> Callable:
    """Decorator adding ``--json`` (a flag: print one JSON object, the schema of ``docs/json.md``)."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON object (schema rdpsym/1, docs/json.md) instead of text.")(command)


def jsonable(value: Any) -> Any:
    """``value`` as JSON types (see the module docstring for the conventions)."""
    import mpmath
    import sympy as sp

    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, int):
        return value
    if isinstance(value, (float, mpmath.mpf)):
        f = float(value)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(value, sp.Basic):
        if value is sp.true or value is sp.false:
            return bool(value)
        if value.is_Integer:
            return int(value)
        if value is sp.oo:
            return "inf"
        if value is sp.S.NegativeInfinity:
            return "-inf"
        return sp.sstr(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return jsonable(value.item())
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    return str(value)


def document(command: str, payload: Mapping[str, Any], exit_code: int = 0) -> dict:
    """The JSON object of ``command``: the three reserved keys, then the payload's."""
    clash = set(payload) & set(RESERVED)
    if clash:
        raise ValueError(f"payload: the keys {sorted(clash)} are reserved by the schema {SCHEMA}")
    return {"schema": SCHEMA, "command": command, "exit_code": int(exit_code), **jsonable(dict(payload))}


def emit(command: str, payload: Mapping[str, Any], exit_code: int = 0) -> None:
    """Print the document on stdout and end the command with ``exit_code``."""
    click.echo(json.dumps(document(command, payload, exit_code), indent=1, allow_nan=False))
    if exit_code:
        sys.exit(int(exit_code))


def with_json(command_name: str):
    """Decorator for commands whose only output is one payload: ``--json`` plus a callable ``out``
    keyword the command calls once with ``(payload, text)``: the JSON document or the text is printed."""

    def wrap(command: Callable) -> Callable:
        @json_option
        @functools.wraps(command)
        def wrapper(*args, as_json=False, **kwargs):
            def out(payload: Mapping[str, Any], text: str | None = None, exit_code: int = 0):
                if as_json:
                    emit(command_name, payload, exit_code)
                    return
                if text is not None:
                    click.echo(text)
                if exit_code:
                    sys.exit(int(exit_code))

            return command(*args, out=out, **kwargs)

        return wrapper

    return wrap


# -- payloads of rdpsym's objects ------------------------------------------------------------------
def result_json(result) -> dict:
    """A :class:`~rdpsym.DivergenceResult`: how it was obtained, its forms, conditions and provenance."""
    return {
        "label": result.label, "status": str(result.status), "reason": result.reason or None,
        "general": None if result.expr is None else result.expr,
        "conditions": result.conditions,
        "special_orders": [{"kind": kind, "alpha": order, "value": value}
                           for kind, order, value in result.special_orders()],
        "parameters": [{"name": p.name, "latex": p.latex, "domain": p.domain} for p in result.parameters()],
        "provenance": {"inputs": dict(result.provenance.inputs),
                       "steps": [{"name": s.name, "detail": s.detail, "seconds": s.seconds}
                                 for s in result.provenance.steps],
                       "versions": dict(result.provenance.versions)},
    }


def verification_json(report) -> dict:
    """A :class:`~rdpsym.verification.VerificationReport`, every point."""
    return {
        "status": str(report.status), "outcome": str(report.outcome.value), "target": report.target,
        "counts": report.counts, "min_digits": report.min_digits, "dps": report.dps,
        "digits_required": report.digits, "seed": report.seed, "level": report.level, "seconds": report.seconds,
        "regimes": list(report.regimes), "regimes_without_evidence": list(report.regimes_without_evidence),
        "checks": [{"regime": c.point.regime, "point": c.point.describe(), "curve": c.closed, "numeric": c.numeric,
                    "error": c.error, "rel_diff": c.rel_diff, "digits": c.digits, "status": c.status,
                    "p_equals_q": c.p_equals_q, "note": c.note or None} for c in report.checks],
    }


def verdict_json(verdict) -> dict:
    """A :class:`~rdpsym.claims.ClaimVerdict`, with its counterexample."""
    import sympy as sp

    claim = verdict.claim
    cex = verdict.counterexample
    return {
        "verdict": str(verdict.verdict), "outcome": str(verdict.outcome.value), "target": verdict.target,
        "relation": verdict.relation, "order": None if verdict.order is None else verdict.order,
        "claim": claim if isinstance(claim, (str, sp.Basic)) else getattr(claim, "__name__", repr(claim)),
        "derived": verdict.divergence, "mapping": verdict.mapping or None, "inferred": list(verdict.inferred),
        "evidence": list(verdict.evidence), "points_checked": verdict.points_checked, "digits": verdict.digits,
        "counterexample": None if cex is None else {
            "alpha": cex.alpha, "values": cex.values, "claim_arguments": cex.claim_arguments,
            "claim_value": cex.claim_value, "divergence": cex.divergence, "gap": cex.gap, "dps": cex.dps,
            "describe": cex.describe()},
        "certificate": None if verdict.certificate is None else {"method": verdict.certificate.method},
    }


def suite_json(suite) -> dict:
    """A :class:`~rdpsym.properties.SuiteReport`: one object per property check."""
    return {
        "mechanism": suite.mechanism, "values": suite.values, "verdict": str(suite.verdict),
        "checks": [{"name": r.name, "verdict": str(r.verdict), "mode": r.mode, "points": r.points_checked,
                    "worst_margin": r.worst_margin, "applicable": r.applicable, "detail": r.detail or None,
                    "reference": r.reference or None} for r in suite.reports],
    }
