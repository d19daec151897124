r"""The audit's machinery: a library's inventory, one :func:`rdpsym.check_claim` per case, the report.

An :class:`Inventory` lists every RDP function (and accountant event) a library module defines: each is
either checked by one or more :class:`AuditCase` (a callable wrapping the library's function, the rdpsym
mechanism it claims to describe, the parameter mapping, the orders and the relation) or listed as
:class:`Uncovered` with its reason (no rdpsym counterpart, a numerical helper, a conversion). Nothing is
skipped silently: a function the inventory does not know (new in a library version) is listed as
``not covered: new in this version``.

:func:`run_case` checks one case with :func:`~rdpsym.claims.check.check_claim` on callables: the grid over
typical ranges and edge regimes (orders 1 + 1e-9 .. 1e6, (0, 1) where the case's ``alpha_range`` includes
it, parameters 100 times beyond their typical range), a hypothesis-guided search and shrinking; the
verdict is check_claim's, which fails closed: a point where the library raises, returns NaN or times
out counts against it (``inconclusive``), and ``refuted`` needs the violation recomputed at high
precision (see :mod:`rdpsym.claims.check`). What the audit adds fails closed too:

* a mechanism not registered in this rdpsym (another branch adds it) gives ``inconclusive``, "mechanism
  not available", never an error;
* a case whose mapping does not fit the mechanism (``ValueError`` from check_claim) is ``inconclusive``
  with the message;
* each case runs under a time limit (``seconds``, :func:`rdpsym._timeout.time_limit`) and a library's
  audit under a total budget; what the budget did not reach is ``inconclusive``, "not run".
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import mpmath
import sympy as sp

from ..._timeout import StepTimeout, time_limit
from ...outcomes import Outcome
from ..check import ClaimVerdict, Verdict, check_claim

__all__ = ["AuditCase", "Uncovered", "Inventory", "AuditRow", "run_case", "run_inventory", "agreement_digits",
           "missing_from", "MechanismUnavailable"]


@dataclass(frozen=True)
class AuditCase:
    """One library function checked against one rdpsym mechanism, at one order (None: the curve).

    ``function``: how the report names the call (with its variant); ``covers``: the name of the library's
    definition the case audits (``rdp_bank.RDP_gaussian``; default ``function``), the key of the inventory. ``mechanism``: a
    registered rdpsym name; ``subsample``: ``"poisson"`` or ``"without_replacement"`` to audit
    ``rdpsym.subsample(mechanism, q, scheme=...)`` (the rate is the parameter ``q``). ``relation``:
    ``"=="`` for a function that states the exact RDP, ``"<="`` for a stated upper bound. The remaining
    fields are check_claim's (``symbols`` maps the callable's argument names to the mechanism's
    parameters; ``fixed`` holds parameters fixed). ``mapping``: the parameter mapping in words.
    """

    library: str
    function: str
    mechanism: str
    fn: Callable
    order: Any = None
    relation: str = "=="
    alpha_range: tuple = (1, sp.oo)
    call: str = "keywords"
    arguments: tuple[str, ...] | None = None
    symbols: dict | None = None
    fixed: dict | None = None
    subsample: str | None = None
    mapping: str = ""
    covers: str = ""

    def __post_init__(self):
        if not self.covers:
            object.__setattr__(self, "covers", self.function)


@dataclass(frozen=True)
class Uncovered:
    """A definition of the library that the audit does not check, and why (``kind``: ``not covered``,
    ``helper`` (numerics behind an audited function) or ``conversion`` (RDP to (eps, delta)))."""

    library: str
    covers: str
    kind: str
    reason: str


@dataclass
class Inventory:
    """Everything one library defines that bears on RDP: the audited cases and the rest, with reasons."""

    library: str
    version: str
    modules: tuple[str, ...]
    cases: list[AuditCase]
    uncovered: list[Uncovered]
    defined: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self):
        for name in sorted(missing_from(self)):
            self.uncovered.append(Uncovered(self.library, name, "not covered",
                                            "new in this version of the library: the audit has no case for it yet"))

    def known(self) -> set[str]:
        return {c.covers for c in self.cases} | {u.covers for u in self.uncovered}


def missing_from(inv: Inventory) -> set[str]:
    """Definitions of the inspected modules that the inventory neither audits nor lists."""
    return set(inv.defined) - {c.covers for c in inv.cases} - {u.covers for u in inv.uncovered}


class MechanismUnavailable(LookupError):
    """The case's rdpsym mechanism is not registered in this installation."""


@dataclass(frozen=True)
class AuditRow:
    """The verdict on one case (``case`` and ``verdict`` set) or an uncovered definition (``uncovered``)."""

    case: AuditCase | None = None
    verdict: ClaimVerdict | None = None
    seconds: float = 0.0
    uncovered: Uncovered | None = None

    @property
    def library(self) -> str:
        return self.case.library if self.case is not None else self.uncovered.library

    @property
    def covers(self) -> str:
        return self.case.covers if self.case is not None else self.uncovered.covers

    @property
    def function(self) -> str:
        return self.case.function if self.case is not None else self.uncovered.covers

    @property
    def mechanism(self) -> str:
        if self.case is None:
            return "-"
        return self.case.mechanism + (f" (subsampled, {self.case.subsample})" if self.case.subsample else "")

    @property
    def checked(self) -> bool:
        return self.verdict is not None

    @property
    def ok(self) -> bool:
        return self.verdict is not None and self.verdict.ok

    @property
    def outcome(self) -> Outcome | None:
        return None if self.verdict is None else self.verdict.outcome

    @property
    def label(self) -> str:
        """The verdict's name, or the kind of an uncovered definition."""
        return self.verdict.verdict.value if self.verdict is not None else self.uncovered.kind

    @property
    def digits(self) -> float | None:
        return agreement_digits(self.verdict) if self.verdict is not None else None


def agreement_digits(v: ClaimVerdict) -> float | None:
    """Relative digits of agreement: check_claim's minimum over compared points, or for a refutation the
    counterexample's ``-log10(|gap| / |divergence|)``; None when nothing was compared."""
    if v.digits is not None and not (isinstance(v.digits, float) and math.isnan(v.digits)):
        return float(v.digits)
    cex = v.counterexample
    if cex is None:
        return None
    with mpmath.workdps(30):
        try:
            gap, div = abs(mpmath.mpf(cex.gap)), abs(mpmath.mpf(cex.divergence))
        except (TypeError, ValueError):
            return None
        if mpmath.isinf(gap) or mpmath.isnan(gap):
            return -math.inf if not mpmath.isnan(gap) else None
        if gap == 0:
            return math.inf
        if div == 0 or mpmath.isinf(div):
            return None
        return float(-mpmath.log10(gap / div))


def _inconclusive(case: AuditCase, why: str) -> ClaimVerdict:
    return ClaimVerdict(verdict=Verdict.INCONCLUSIVE, relation=case.relation, order=case.order, claim=case.fn,
                        divergence=None, mapping=case.mapping, inferred=(), evidence=(why,), target=case.mechanism)


def build_mechanism(case: AuditCase):
    """The rdpsym mechanism of ``case``; :class:`MechanismUnavailable` when it is not registered."""
    from ... import mechanisms
    from ..._numbers import ArgumentError

    try:
        base = mechanisms.get(case.mechanism)
    except ArgumentError as exc:
        raise MechanismUnavailable(f"mechanism {case.mechanism!r} is not available in this rdpsym ({exc})") from None
    if case.subsample is None:
        return base
    from ...mechanisms.subsample import subsample

    return subsample(base, sp.Symbol("q", real=True), scheme=case.subsample)


def run_case(case: AuditCase, *, digits: int = 3, search: int = 20, seconds: float = 120.0) -> AuditRow:
    """Check ``case`` with check_claim within ``seconds``; never raises for the library's or the case's
    faults (they make the verdict inconclusive, with the reason in the evidence)."""
    started = time.perf_counter()
    try:
        mech = build_mechanism(case)
    except MechanismUnavailable as exc:
        verdict = _inconclusive(case, str(exc) + ": inconclusive until it is registered")
    else:
        try:
            # numpy's warnings (overflow, invalid value) are the library's business: check_claim sees the
            # values they come with (inf, NaN) and counts them against the function
            with warnings.catch_warnings(), time_limit(seconds, clock="wall"):
                warnings.simplefilter("ignore")
                verdict = check_claim(mech, case.fn, case.relation, case.order, case.symbols, fixed=case.fixed,
                                      alpha_range=case.alpha_range, call=case.call, arguments=case.arguments,
                                      digits=digits, search=search)
        except StepTimeout:
            verdict = _inconclusive(case, f"not finished within the case's time budget of {seconds:g} s")
        except (ValueError, TypeError) as exc:
            verdict = _inconclusive(case, f"the case could not be checked: {type(exc).__name__}: {exc}")
    return AuditRow(case, verdict, time.perf_counter() - started)


def run_inventory(inv: Inventory, *, digits: int = 3, search: int = 20, seconds: float = 120.0,
                  budget: float = 600.0, only: tuple[str, ...] = (), progress: Callable | None = None) -> list[AuditRow]:
    """Every case of ``inv`` (those whose ``covers`` or ``function`` contains a text of ``only``, when
    given), each within ``seconds`` and all within ``budget`` seconds, then the uncovered definitions."""
    rows = []
    started = time.perf_counter()
    for case in inv.cases:
        if only and not any(t in case.covers or t in case.function for t in only):
            continue
        left = budget - (time.perf_counter() - started)
        if left < 1:
            row = AuditRow(case, _inconclusive(case, f"not run: the library's time budget of {budget:g} s was spent"))
        else:
            row = run_case(case, digits=digits, search=search, seconds=min(seconds, left))
        if progress is not None:
            progress(row)
        rows.append(row)
    for u in inv.uncovered:
        if only and not any(t in u.covers for t in only):
            continue
        rows.append(AuditRow(uncovered=u))
    return rows


def defined_in(module, prefix: str, kinds=("function",)) -> set[str]:
    """``prefix.name`` of every function (and class, with ``"class"`` in ``kinds``) defined in ``module``
    itself (not imported into it)."""
    import inspect

    out = set()
    for name, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if ("function" in kinds and inspect.isfunction(obj)) or ("class" in kinds and inspect.isclass(obj)):
            out.add(f"{prefix}.{name}")
    return out
