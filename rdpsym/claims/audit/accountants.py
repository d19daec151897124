r"""The audit of a library's *accountants*: each reported epsilon(delta) and delta(epsilon) against rdpsym's
certified bracket (:mod:`rdpsym.accounting.pld`).

A :class:`Composition` names what is composed in library-neutral terms: events ``(kind, params, count)``
with ``kind`` one of ``gaussian`` (``sigma``), ``laplace`` (``b``), ``randomized_response`` (``noise``:
dp_accounting's noise parameter, the report is uniform with that probability; two buckets),
``poisson_gaussian`` (``q``, ``sigma``) and ``wor_gaussian`` (``n``, ``m``, ``sigma``: m of n records sampled
without replacement), under the neighbouring relation ``add_remove`` or ``replace_one``, every query of
sensitivity 1 under add/remove (the libraries' noise multipliers). Each library module turns it into its own
calls (an :class:`AccountantCase` per accountant, quantity and target); :func:`rdpsym_events` turns it into
rdpsym's mechanisms as :mod:`rdpsym.accounting.pld.events` reads dp_accounting's DpEvents (replace-one doubles
the sensitivity of a noise event; randomized response keeps the true bit with probability 1 - noise/2).

**Verdicts** (:func:`verdict`), for the library's value v against rdpsym's bracket [lower, upper]:

* ``refuted``: v < lower. lower is certified, so the library under-reports the privacy loss;
* ``loose``: v > upper + the library's own tolerance (``tolerance``, with its source in the row), a
  valid but larger value;
* ``confirmed``: otherwise;
* ``inconclusive``: the library raised or returned NaN, the composition is not one rdpsym certifies (its
  bracket's ``certified`` is False), or rdpsym could not compute it (too large, too long). Fails closed: a
  bracket that is not certified confirms nothing and refutes nothing, and one whose upper bound rests on
  a heuristic (``TightBound.heuristics``: sampling without replacement) can refute (its lower bound comes
  from real neighbouring pairs) but neither confirm nor call loose.

rdpsym's side of one composition is composed once (:class:`~rdpsym.accounting.pld.bounds.Bracket`) and
evaluated at every target; a composition it cannot bracket makes all its rows inconclusive.
"""

from __future__ import annotations

import enum
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["EventKind", "Composition", "AccountantCase", "AccountantRow", "rdpsym_events", "run_accountants", "verdict",
           "VERDICTS", "STEP", "self_compositions"]

#: the grid step of rdpsym's brackets in the audit (dp_accounting's default discretisation)
STEP = 1e-4
VERDICTS = ("confirmed", "loose", "refuted", "inconclusive")
#: the self-compositions every supported event is audited at
COUNTS = (1, 2, 10, 40)


class EventKind(enum.StrEnum):
    """The kinds of events a :class:`Composition` holds (module docstring): what an event is, so that each
    library's adapter picks its own calls by kind, never by a mechanism's name."""

    GAUSSIAN = "gaussian"
    LAPLACE = "laplace"
    RANDOMIZED_RESPONSE = "randomized_response"
    POISSON_GAUSSIAN = "poisson_gaussian"
    WOR_GAUSSIAN = "wor_gaussian"


@dataclass(frozen=True)
class Composition:
    """``events``: ((kind, ((name, value), ...), count), ...); ``relation``: add_remove or replace_one."""

    events: tuple
    relation: str = "add_remove"

    @property
    def label(self) -> str:
        parts = []
        for kind, params, count in self.events:
            p = ", ".join(f"{k}={v:g}" for k, v in params)
            parts.append(f"{kind}({p}) x {count}")
        return " + ".join(parts) + (" [replace-one]" if self.relation == "replace_one" else "")


def self_compositions(kind: EventKind, relation: str = "add_remove", counts=COUNTS, **params) -> list[Composition]:
    """The event ``kind(params)`` composed with itself ``count`` times, for each count."""
    items = tuple(sorted(params.items()))
    return [Composition(((kind, items, int(c)),), relation) for c in counts]


@dataclass(frozen=True)
class AccountantCase:
    """One value a library's accountant reports: ``call()`` returns it; ``quantity`` is ``"epsilon"`` (at
    delta = ``target``) or ``"delta"`` (at epsilon = ``target``); ``tolerance`` is the library's own stated
    accuracy of that quantity (absolute), ``tolerance_note`` where it comes from."""

    library: str
    accountant: str
    composition: Composition
    quantity: str
    target: float
    call: Callable[[], float] = field(repr=False, compare=False)
    tolerance: float = 0.0
    tolerance_note: str = "none stated: the value claims to be an upper bound"


@dataclass
class AccountantRow:
    case: AccountantCase
    value: float | None
    lower: float | None
    upper: float | None
    verdict: str
    reason: str = ""
    certified: bool = False
    seconds: float = 0.0

    def as_json(self) -> dict:
        c = self.case

        def num(v):
            if v is None:
                return None
            return v if math.isfinite(v) else ("inf" if v > 0 else ("-inf" if v < 0 else "nan"))

        return {"library": c.library, "accountant": c.accountant, "composition": c.composition.label,
                "neighbouring": c.composition.relation, "quantity": c.quantity, "target": c.target,
                "library_value": num(self.value), "lower": num(self.lower), "upper": num(self.upper),
                "tolerance": c.tolerance, "tolerance_source": c.tolerance_note, "verdict": self.verdict,
                "certified": self.certified, "reason": self.reason, "seconds": round(self.seconds, 2)}


def verdict(value, lower: float, upper: float, tolerance: float, certified: bool,
            upper_certified: bool | None = None) -> tuple[str, str]:
    """The verdict on a library's value against the bracket (module docstring), and why. ``certified``: the
    lower bound is proved; ``upper_certified`` (default: the same): the upper bound is."""
    upper_certified = certified if upper_certified is None else upper_certified
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "inconclusive", "the library returned no number"
    if not certified:
        return "inconclusive", "rdpsym's bracket is not certified for this composition"
    if value < lower:
        return "refuted", f"below the certified lower bound by {lower - value:.4g}: the library under-reports"
    if not upper_certified:
        return "inconclusive", "at least rdpsym's certified lower bound, but its upper bound rests on a heuristic"
    if value > upper + tolerance:
        extra = "no guarantee (inf)" if math.isinf(value) else f"above the upper bound by {value - upper:.4g}"
        return "loose", extra + f" (tolerance {tolerance:g})"
    return "confirmed", ""


def rdpsym_events(comp: Composition) -> list[tuple]:
    """The composition as rdpsym events (mechanism, values, count, label) (module docstring)."""
    from ... import mechanisms
    from ...mechanisms.subsample import subsample

    double = 2.0 if comp.relation == "replace_one" else 1.0
    out = []
    for kind, params, count in comp.events:
        p = dict(params)
        if kind is EventKind.GAUSSIAN:
            m, values = mechanisms.resolve("gaussian"), {"sigma": float(p["sigma"]), "sensitivity": double}
        elif kind is EventKind.LAPLACE:
            m, values = mechanisms.resolve("laplace"), {"b": float(p["b"]), "sensitivity": double}
        elif kind is EventKind.RANDOMIZED_RESPONSE:
            if comp.relation != "replace_one":
                raise ValueError("randomized response is defined for replace_one")
            m, values = mechanisms.resolve("randomized_response"), {"p": 1 - float(p["noise"]) / 2}
        elif kind is EventKind.POISSON_GAUSSIAN:
            if comp.relation != "add_remove":
                raise ValueError("Poisson sampling is analysed under add_remove")
            m = subsample(mechanisms.resolve("gaussian"), float(p["q"]))
            values = {"sigma": float(p["sigma"]), "sensitivity": 1.0}
        elif kind is EventKind.WOR_GAUSSIAN:
            if comp.relation != "replace_one":
                raise ValueError("sampling without replacement is analysed under replace_one")
            m = subsample(mechanisms.resolve("gaussian"), p["m"] / p["n"], scheme="without_replacement")
            values = {"sigma": float(p["sigma"]), "sensitivity": 1.0}
        else:
            raise ValueError(f"unknown event kind {kind!r}")
        out.append((m, values, int(count), f"{kind}({', '.join(f'{k}={v:g}' for k, v in params)})"))
    return out


def _library_value(case: AccountantCase) -> tuple[float | None, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = case.call()
        v = float(v)
    except Exception as exc:  # noqa: BLE001 - the library's failure is its row's verdict, never an error here
        return None, f"the library raised {type(exc).__name__}: {str(exc)[:160]}"
    return v, ""


def run_accountants(cases: list[AccountantCase], *, budget: float = 240.0,
                    progress: Callable | None = None) -> list[AccountantRow]:
    """Every case: the library's value and rdpsym's bracket (each composition composed once), the verdict.
    What ``budget`` seconds (a guard: the cases are few and each takes about a second) do not reach is
    inconclusive, "not run"."""
    from ...accounting.pld import PLDTimeout, PLDTooLarge
    from ...accounting.pld.bounds import Bracket

    started = time.perf_counter()
    brackets: dict = {}
    rows = []
    for case in cases:
        t0 = time.perf_counter()
        if t0 - started > budget:
            row = AccountantRow(case, None, None, None, "inconclusive",
                                f"not run: the accountant audit's time budget of {budget:g} s was spent")
        else:
            value, why = _library_value(case)
            comp = case.composition
            if comp not in brackets:
                try:
                    brackets[comp] = Bracket(rdpsym_events(comp), STEP)
                except (PLDTooLarge, PLDTimeout, ValueError, ArithmeticError) as exc:
                    brackets[comp] = exc
            b = brackets[comp]
            if isinstance(b, Exception):
                row = AccountantRow(case, value, None, None, "inconclusive",
                                    f"rdpsym could not bracket it: {type(b).__name__}: {str(b)[:160]}")
            else:
                try:
                    tb = b.epsilon(case.target) if case.quantity == "epsilon" else b.delta(case.target)
                except ArithmeticError as exc:
                    row = AccountantRow(case, value, None, None, "inconclusive", f"rdpsym: {exc}")
                else:
                    if value is None:
                        v, reason = "inconclusive", why
                    else:
                        v, reason = verdict(value, tb.lower, tb.upper, case.tolerance, tb.certified,
                                            tb.upper_certified)
                    row = AccountantRow(case, value, tb.lower, tb.upper, v, reason, tb.certified)
        row.seconds = time.perf_counter() - t0
        if progress is not None:
            progress(row)
        rows.append(row)
    return rows


def summary(rows: list[AccountantRow]) -> dict[str, int]:
    out = {k: 0 for k in VERDICTS}
    for r in rows:
        out[r.verdict] += 1
    return out


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not math.isfinite(v):
        return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
    return f"{v:.6g}"


def format_accountants(rows: list[AccountantRow], note: str = "") -> str:
    """The accountants' section of a library's Markdown report."""
    lines = ["### Accountants", ""]
    if note:
        lines += [note, ""]
    if not rows:
        return "\n".join(lines + ["(no accountant audited)", ""])
    counts = summary(rows)
    lines += [", ".join(f"{n} {k}" for k, n in counts.items() if n), ""]
    lines += ["| accountant | composition | quantity | library | rdpsym [lower, upper] | tolerance | verdict | s |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c = r.case
        other = "delta" if c.quantity == "epsilon" else "epsilon"
        v = r.verdict if r.verdict in ("confirmed", "loose") else f"**{r.verdict}**"
        lines.append(f"| {c.accountant} | {c.composition.label} | {c.quantity} at {other} = {c.target:g} | "
                     f"{_fmt(r.value)} | [{_fmt(r.lower)}, {_fmt(r.upper)}] | {c.tolerance:g} | {v} | "
                     f"{r.seconds:.1f} |")
    lines.append("")
    bad = [r for r in rows if r.verdict in ("refuted", "inconclusive")]
    if bad:
        lines += ["#### Accountant counterexamples and reasons", ""]
        for r in bad:
            c = r.case
            other = "delta" if c.quantity == "epsilon" else "epsilon"
            lines.append(f"- {c.accountant}, {c.composition.label}, {c.quantity} at {other} = {c.target:g}: "
                         f"library {_fmt(r.value)}, rdpsym [{_fmt(r.lower)}, {_fmt(r.upper)}]: {r.reason}")
        lines.append("")
    tols = sorted({(r.case.accountant, r.case.tolerance, r.case.tolerance_note) for r in rows})
    lines += ["Tolerances: " + "; ".join(f"{a}: {t:g} ({n})" for a, t, n in tols), ""]
    return "\n".join(lines)
