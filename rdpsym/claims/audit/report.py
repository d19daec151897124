"""The audit's report: a Markdown table with the counterexamples, and a JSON document (its schema below).

JSON (``audit_json``)::

    {"schema": "rdpsym-audit/1", "library": str, "version": str, "modules": [str],
     "rdpsym_version": str, "settings": {"digits": int, "search": int, "seconds": float, "budget": float},
     "summary": {"confirmed": n, "proved": n, "refuted": n, "inconclusive": n, "not covered": n, "helper": n,
                 "conversion": n},
     "rows": [{"library", "covers", "function", "mechanism", "status": "checked" | "not covered" | "helper" |
               "conversion", "verdict": "proved" | "confirmed" | "refuted" | "inconclusive" | null,
               "relation", "order": null | "1" | "oo", "alpha_range": [str, str], "mapping": str,
               "digits": float | null, "points_checked": int, "seconds": float, "reason": str | null,
               "evidence": [str],
               "counterexample": null | {"point": {"alpha": str, <parameter>: str, ...},
                                         "library_value": str, "rdpsym_value": str, "gap": str,
                                         "direction": "library above" | "library below" | "undefined"}}],
     "accountants": [{"library", "accountant", "composition", "neighbouring": "add_remove" | "replace_one",
                      "quantity": "epsilon" | "delta", "target": float, "library_value": float | str | null,
                      "lower": float | str | null, "upper": float | str | null, "tolerance": float,
                      "tolerance_source": str, "verdict": "confirmed" | "loose" | "refuted" | "inconclusive",
                      "certified": bool, "reason": str, "seconds": float}],
     "accountant_summary": {"confirmed": n, "loose": n, "refuted": n, "inconclusive": n},
     "accountant_note": str}

``accountants`` (present when the accountants were audited, :mod:`.accountants`): infinite values are the
strings "inf", "-inf", "nan".

Numbers of the counterexample are decimal strings at 20 significant digits (exact values are Rationals
and high-precision mpmath numbers; a float would round them).
"""

from __future__ import annotations

import math

import mpmath
import sympy as sp

from .core import AuditRow

__all__ = ["format_audit", "audit_json", "SCHEMA"]

SCHEMA = "rdpsym-audit/1"


def _num(v) -> str:
    if v is None:
        return "undefined"
    if isinstance(v, sp.Basic):
        if v.is_Rational or v in (sp.oo, -sp.oo):
            return sp.sstr(v)
        v = v.evalf(25)
        return sp.sstr(v)
    try:
        return mpmath.nstr(mpmath.mpf(v), 20)
    except (TypeError, ValueError):
        return str(v)


def _direction(cex) -> str:
    try:
        gap = mpmath.mpf(cex.gap)
    except (TypeError, ValueError):
        return "undefined"
    if mpmath.isnan(gap):
        return "undefined"
    return "library above" if gap > 0 else "library below"


def _cex(row: AuditRow) -> dict | None:
    cex = row.verdict.counterexample if row.verdict is not None else None
    if cex is None:
        return None
    point = {"alpha": _num(cex.alpha), **{k: _num(v) for k, v in cex.values.items()}}
    return {"point": point, "library_value": _num(cex.claim_value), "rdpsym_value": _num(cex.divergence),
            "gap": _num(cex.gap), "direction": _direction(cex)}


def _order(order) -> str | None:
    return None if order is None else ("oo" if order == sp.oo else str(order))


def _row_json(row: AuditRow) -> dict:
    c, v = row.case, row.verdict
    d = row.digits
    return {
        "library": row.library, "covers": row.covers, "function": row.function, "mechanism": row.mechanism,
        "status": "checked" if v is not None else row.uncovered.kind,
        "verdict": None if v is None else v.verdict.value,
        "relation": None if c is None else c.relation,
        "order": None if c is None else _order(c.order),
        "alpha_range": None if c is None else [sp.sstr(c.alpha_range[0]), sp.sstr(c.alpha_range[1])],
        "mapping": "" if c is None else (c.mapping or (v.mapping if v is not None else "")),
        "digits": None if d is None or math.isnan(d) else (d if math.isfinite(d) else (99.0 if d > 0 else -99.0)),
        "points_checked": 0 if v is None else v.points_checked,
        "seconds": round(row.seconds, 2),
        "reason": None if row.uncovered is None else row.uncovered.reason,
        "evidence": [] if v is None else list(v.evidence),
        "counterexample": _cex(row),
    }


def summary(rows: list[AuditRow]) -> dict[str, int]:
    out = {k: 0 for k in ("proved", "confirmed", "refuted", "inconclusive", "not covered", "helper", "conversion")}
    for r in rows:
        out[r.label] = out.get(r.label, 0) + 1
    return out


def audit_json(rows: list[AuditRow], inventory=None, settings: dict | None = None, accountants=None,
               accountant_note: str = "") -> dict:
    """The audit as a JSON-ready dict (the schema in the module docstring)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mine = version("rdpsym")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        mine = "unknown"
    return {"schema": SCHEMA, "library": None if inventory is None else inventory.library,
            "version": None if inventory is None else inventory.version,
            "modules": [] if inventory is None else list(inventory.modules), "rdpsym_version": mine,
            "settings": dict(settings or {}), "summary": summary(rows), "rows": [_row_json(r) for r in rows],
            **({} if accountants is None else _accountants_json(accountants, accountant_note))}


def _accountants_json(rows, note: str) -> dict:
    from .accountants import summary as acc_summary

    return {"accountants": [r.as_json() for r in rows], "accountant_summary": acc_summary(rows),
            "accountant_note": note}


def _digits_text(d) -> str:
    if d is None or math.isnan(d):
        return "-"
    if d >= 15:
        return ">= 15"
    return f"{d:.1f}" if d > -10 else "< -10"


def _esc(text: str) -> str:
    return str(text).replace("|", "\\|")


def format_audit(rows: list[AuditRow], inventory=None) -> str:
    """A Markdown report: a table of the checked cases, the counterexamples, then what is not covered."""
    lines = []
    if inventory is not None:
        lines += [f"## {inventory.library} {inventory.version}", "",
                  f"Modules inspected: {', '.join('`' + m + '`' for m in inventory.modules)}.", ""]
    counts = summary(rows)
    lines += [", ".join(f"{n} {k}" for k, n in counts.items() if n), ""]
    checked = [r for r in rows if r.checked]
    if checked:
        lines += ["| function | mechanism | order | relation | mapping | verdict | digits | points | s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in checked:
            c = r.case
            order = f"alpha in ({sp.sstr(c.alpha_range[0])}, {sp.sstr(c.alpha_range[1])})" if c.order is None \
                else _order(c.order)
            verdict = r.verdict.verdict.value
            if verdict in ("refuted", "inconclusive"):
                verdict = f"**{verdict}**"
            lines.append(f"| `{_esc(r.function)}` | {_esc(r.mechanism)} | {order} | {c.relation} | {_esc(c.mapping)} | "
                         f"{verdict} | {_digits_text(r.digits)} | {r.verdict.points_checked} | {r.seconds:.1f} |")
        lines.append("")
    bad = [r for r in checked if not r.ok]
    if bad:
        lines += ["### Counterexamples and reasons", ""]
        for r in bad:
            cex = _cex(r)
            head = f"- `{_esc(r.function)}` ({_order(r.case.order) or 'curve'}, {r.case.relation}): "
            if cex is not None:
                point = ", ".join(f"{k} = {v}" for k, v in cex["point"].items())
                lines.append(head + f"at {point}: library {cex['library_value']}, rdpsym {cex['rdpsym_value']} "
                             f"({cex['direction']})")
            else:
                why = [e for e in r.verdict.evidence if "not" in e or "raised" in e or "fewer" in e] or \
                    list(r.verdict.evidence[:1])
                lines.append(head + "; ".join(why[:3]))
        lines.append("")
    rest = [r for r in rows if not r.checked]
    if rest:
        lines += ["### Not audited", "", "| definition | kind | reason |", "|---|---|---|"]
        for r in rest:
            lines.append(f"| `{_esc(r.covers)}` | {r.uncovered.kind} | {_esc(r.uncovered.reason)} |")
        lines.append("")
    return "\n".join(lines)
