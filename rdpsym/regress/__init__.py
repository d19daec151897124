r"""Regression registry: named published closed forms that the engine must keep re-deriving.

A registry is a TOML file of ``[[entry]]`` tables (the shipped one is ``rdpsym/regress/registry.toml``;
:func:`default_registry` gives its path). Each entry:

``name``         unique, e.g. ``"laplace/kl"``.
``mechanism``    a registered mechanism name, ``file.py[:name]`` (relative to the registry file) or
                 ``package.module:attribute`` (its RDP curve, Mironov 2017, Def. 4) **or**
``densities``    ``{P = "...", Q = "...", variable = "x", support = "[0, oo)"}``: formula strings read by
                 the safe parser (D_alpha(P||Q) is derived; supports: ``Reals``, ``Integers``,
                 ``Naturals0``, ``[a, b]``/``(a, oo)`` intervals, ``{0, 1}`` finite sets), with
``parameters``   ``{name = {domain = "(0, oo)", typical = [lo, hi], log_scale = true, integer = false}}``.
``formula``      the closed form (Python-like or LaTeX, safe-parsed; never evaluated as code).
``order``        ``"alpha"`` (the curve; default), ``"1"`` (KL) or ``"oo"`` (max divergence).
``relation``     ``"=="`` (default), ``"<="`` or ``">="``.
``alpha_range``  ``[low, high]`` orders the formula is stated for; default ``[1, "oo"]``.
``symbols``      the formula's names -> parameters (``{lambda = "b"}``); ``fixed``: parameter values
                 (``{sensitivity = 1}``; ``{}`` checks every value). See :func:`rdpsym.check_claim`.
``source``       paper and proposition.
``domains``      for mechanism entries, the parameter domains the formula is stated for; a mechanism
                 whose declared domain differs is a regression.

:func:`run_registry` re-derives each entry and checks it with :func:`rdpsym.check_claim` (symbolic
equivalence first, then high-precision numerics), then checks the derivation itself against the
independent mpmath path (:func:`rdpsym.numeric.numeric_divergence`) at one central point. Each row's
``label`` is (its ``outcome``, the one vocabulary of :mod:`rdpsym.outcomes`, in brackets)

``pass``          (holds) the verdict is ``proved`` or ``confirmed`` **and** the independent check ran and agreed;
``fail``          (fails) a regression: the formula is refuted or inconclusive, the independent numerics disagree
                  with the derivation, or the entry could not be run (an error, a lost or timed-out task);
``inconclusive``  (inconclusive) the verdict is ``proved``/``confirmed`` but the independent check gave no answer (its
                  numerics did not converge, it was skipped, or the target has no densities to integrate):
                  not a regression, not a pass either.

Each entry is one task of :func:`rdpsym.execution.run_tasks` (``executor=``); rows come back in registry
order whatever the executor, and an entry whose task fails is a ``fail`` row, never a lost one.
"""

from __future__ import annotations

import re
import time
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from ..specify.text.numbers import exact_number
from ..outcomes import Outcome

__all__ = ["Entry", "RegressionRow", "default_registry", "load_registry", "run_entry", "run_registry",
           "parse_set", "RegistryError"]

_KEYS = {"name", "mechanism", "densities", "parameters", "formula", "order", "relation", "alpha_range",
         "symbols", "fixed", "source", "domains"}


_KINDS = {dict: "a table", list: "an array", str: "a string"}


class RegistryError(ValueError):
    """A malformed registry file or entry (names the file, the entry and the rule)."""


def default_registry() -> Path:
    """Path of the registry shipped with rdpsym."""
    return Path(str(resources.files("rdpsym.regress").joinpath("registry.toml")))


@dataclass(frozen=True)
class Entry:
    """One registry entry (see the module docstring)."""

    name: str
    formula: str
    source: str
    mechanism: str | None = None
    densities: dict | None = None
    parameters: dict = field(default_factory=dict)
    order: str = "alpha"
    relation: str = "=="
    alpha_range: tuple = (1, "oo")
    symbols: dict = field(default_factory=dict)
    fixed: dict | None = None
    domains: dict = field(default_factory=dict)
    file: str = ""


def load_registry(path) -> list[Entry]:
    """Read and validate a registry file."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise RegistryError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise RegistryError(f"{path}: must be UTF-8 text (TOML); byte {exc.start} is not ({exc.reason})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{path}: {exc}") from None
    except RecursionError:  # arrays or tables nested thousands deep: tomllib recurses once per level
        raise RegistryError(f"{path}: must be TOML nested at most a few hundred levels deep; it is nested "
                            "deeper than the reader can follow") from None
    raw = data.get("entry")
    if not isinstance(raw, list) or not raw:
        raise RegistryError(f"{path}: no [[entry]] tables")
    entries, seen = [], set()
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise RegistryError(f"{path}: entry {i + 1} must be a table ([[entry]]); got {type(e).__name__}")
        where = f"{path}: entry {i + 1} ({str(e.get('name', '?'))[:80]!r})"
        unknown = set(e) - _KEYS
        if unknown:
            raise RegistryError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_KEYS)}")
        for key in ("name", "formula", "source"):
            if not isinstance(e.get(key), str) or not e[key].strip():
                raise RegistryError(f"{where}: '{key}' must be a non-empty string")
        if ("mechanism" in e) == ("densities" in e):
            raise RegistryError(f"{where}: give exactly one of 'mechanism' and 'densities'")
        if "densities" in e:
            d = e["densities"]
            if not isinstance(d, dict) or set(d) != {"P", "Q", "variable", "support"}:
                raise RegistryError(f"{where}: 'densities' needs exactly P, Q, variable and support")
            if not isinstance(e.get("parameters"), dict):
                raise RegistryError(f"{where}: density entries need a 'parameters' table")
        if e.get("order", "alpha") not in ("alpha", "1", "oo"):
            raise RegistryError(f"{where}: 'order' must be \"alpha\", \"1\" or \"oo\"")
        if e.get("relation", "==") not in ("==", "<=", ">="):
            raise RegistryError(f"{where}: 'relation' must be \"==\", \"<=\" or \">=\"")
        for key, kind in (("parameters", dict), ("symbols", dict), ("domains", dict), ("alpha_range", list),
                          ("fixed", dict), ("mechanism", str)):
            if key in e and not isinstance(e[key], kind):
                raise RegistryError(f"{where}: '{key}' must be {_KINDS[kind]}")
        if e["name"] in seen:
            raise RegistryError(f"{where}: duplicate name")
        seen.add(e["name"])
        entries.append(Entry(
            name=e["name"], formula=e["formula"], source=e["source"], mechanism=e.get("mechanism"),
            densities=e.get("densities"), parameters=e.get("parameters", {}), order=e.get("order", "alpha"),
            relation=e.get("relation", "=="), alpha_range=tuple(e.get("alpha_range", (1, "oo"))),
            symbols=e.get("symbols", {}), fixed=e.get("fixed"), domains=e.get("domains", {}), file=str(path)))
    return entries


# ---------------------------------------------------------------------------------------------------
# sets and numbers, safely
# ---------------------------------------------------------------------------------------------------
_INTERVAL = re.compile(r"^\s*([\[(])\s*([^,]+?)\s*,\s*([^,]+?)\s*([\])])\s*$")
_NAMED_SETS = {"Reals": sp.S.Reals, "Integers": sp.S.Integers, "Naturals0": sp.S.Naturals0,
               "Naturals": sp.S.Naturals}


def _number(text, what: str) -> sp.Expr:
    if isinstance(text, bool):
        raise RegistryError(f"{what}: expected a number, got {text!r}")
    if isinstance(text, float):
        text = str(text)  # a TOML float is its decimal text: 0.1 is 1/10, not the nearest binary value
    try:
        return exact_number(text, what)
    except ArgumentError as exc:
        raise RegistryError(f"{what}: {exc}") from None


def parse_set(text: str, what: str = "set") -> sp.Set:
    """``"Reals"``, ``"Naturals0"``, ``"(0, oo)"``, ``"[0, 1]"`` or ``"{0, 1}"`` as a sympy set."""
    if not isinstance(text, str):
        raise RegistryError(f"{what}: expected a string, got {text!r}")
    s = text.strip()
    if s in _NAMED_SETS:
        return _NAMED_SETS[s]
    if s.startswith("{") and s.endswith("}"):
        return sp.FiniteSet(*[_number(t.strip(), what) for t in s[1:-1].split(",") if t.strip()])
    m = _INTERVAL.match(s)
    if not m:
        raise RegistryError(f"{what}: {text!r} is not Reals, Integers, Naturals0, an interval or a finite set")
    lo, hi = _number(m.group(2), what), _number(m.group(3), what)
    return sp.Interval(lo, hi, left_open=m.group(1) == "(", right_open=m.group(4) == ")")


def _alpha_range(entry: Entry) -> tuple:
    if len(entry.alpha_range) != 2:
        raise RegistryError(f"{entry.name}: alpha_range must be [low, high]")
    return tuple(_number(v, f"{entry.name}: alpha_range") for v in entry.alpha_range)


# ---------------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RegressionRow:
    """The outcome of one entry (see the module docstring).

    ``ok`` is True only for a ``pass``; ``inconclusive`` marks a row that is neither a pass nor a
    regression (the independent check gave no answer); a row with neither is a regression.
    """

    name: str
    source: str
    status: str  # derivation status
    verdict: str
    independent: str
    seconds: float
    ok: bool
    detail: str = ""
    report: Any = None
    inconclusive: bool = False

    @property
    def label(self) -> str:
        """``"pass"``, ``"inconclusive"`` or ``"fail"`` (the registry's words for :attr:`outcome`)."""
        return "pass" if self.ok else ("inconclusive" if self.inconclusive else "fail")

    @property
    def outcome(self) -> Outcome:
        """A pass holds, a regression fails, the rest is inconclusive (see the module docstring)."""
        return Outcome.HOLDS if self.ok else (Outcome.INCONCLUSIVE if self.inconclusive else Outcome.FAILS)


def _entry_mechanism(entry: Entry):
    """The entry's mechanism (:func:`rdpsym.mechanisms.resolve`); a relative ``file.py[:name]`` is read
    from the registry file's directory."""
    from .. import mechanisms

    spec = entry.mechanism
    head, sep, tail = spec.rpartition(":")
    path, name = (head, sep + tail) if head.endswith(".py") else (spec, "")
    if path.endswith(".py") and entry.file and not Path(path).is_absolute():
        spec = str(Path(entry.file).parent / path) + name
    try:
        return mechanisms.resolve(spec, argument="mechanism")
    except ValueError as exc:
        raise RegistryError(f"{entry.name}: mechanism: {exc}") from None


def _build_target(entry: Entry):
    """(target for check_claim, mechanism-or-None, parameters)."""
    from ..claims.target import Target
    from ..derive.engine import renyi_divergence
    from ..specify.params import parameter
    from ..specify.text import parse

    if entry.mechanism is not None:
        mech = _entry_mechanism(entry)
        for pname, dom in entry.domains.items():
            by_name = mech.parameter_by_name
            if pname not in by_name:
                raise RegistryError(f"{entry.name}: domains names {pname!r}, not a parameter of {mech.name!r}")
            stated = parse_set(dom, f"{entry.name}: domains.{pname}")
            if stated != by_name[pname].domain:
                raise RegistryError(f"{entry.name}: the formula is stated for {pname} in {sp.sstr(stated)} but "
                                    f"{mech.name!r} declares {sp.sstr(by_name[pname].domain)}")
        return mech
    d = entry.densities
    support = parse_set(d["support"], f"{entry.name}: support")
    from ..specify.mechanism import is_discrete_support

    discrete = is_discrete_support(support)
    params = []
    for pname, spec in entry.parameters.items():
        if not isinstance(spec, dict) or "domain" not in spec or "typical" not in spec:
            raise RegistryError(f"{entry.name}: parameters.{pname} needs 'domain' and 'typical'")
        dom = parse_set(spec["domain"], f"{entry.name}: parameters.{pname}.domain")
        params.append(parameter(pname, dom, typical=tuple(float(v) for v in spec["typical"]),
                                integer=bool(spec.get("integer", False)), log_scale=bool(spec.get("log_scale", False))))
    var = d["variable"]
    if discrete:
        x = sp.Symbol(var, integer=True, nonnegative=True) if (support.inf >= 0) is sp.true else sp.Symbol(var, integer=True)
    else:
        x = sp.Symbol(var, real=True)
    names = {p.name: p.symbol for p in params} | {var: x}
    try:
        P = parse(d["P"], names)
        Q = parse(d["Q"], names)
    except ValueError as exc:
        raise RegistryError(f"{entry.name}: densities: {exc}") from None
    result = renyi_divergence(P, Q, x, support)
    return Target(result, tuple(params), ((P, Q, x, support),), label=entry.name)


def run_entry(entry: Entry, *, search: int = 60) -> RegressionRow:
    """Re-derive and re-verify one entry."""
    from ..claims import Verdict, check_claim
    from ..claims.target import make_target

    start = time.perf_counter()
    try:
        target = make_target(_build_target(entry))
        order = {"alpha": None, "1": 1, "oo": sp.oo}[entry.order]
        verdict = check_claim(target, entry.formula, entry.relation, order, entry.symbols or None,
                              fixed=entry.fixed, alpha_range=_alpha_range(entry), search=search)
    except Exception as exc:  # noqa: BLE001 - any failure of an entry is a regression, reported
        return RegressionRow(entry.name, entry.source, "error", "error", "", time.perf_counter() - start, False,
                             f"{type(exc).__name__}: {exc}")
    status = str(target.result.status)
    independent, ind_ok = _independent_check(target, order, verdict)
    claim_ok = verdict.verdict in (Verdict.PROVED, Verdict.CONFIRMED)
    # a pass needs both: the formula holds AND the derivation agreed with the independent numerics;
    # an independent check without an answer (None) leaves the row inconclusive, never a pass
    ok = claim_ok and ind_ok is True
    inconclusive = claim_ok and ind_ok is None
    detail = ""
    if verdict.counterexample is not None:
        detail = verdict.counterexample.describe()
    elif not verdict.ok:
        detail = "; ".join(verdict.evidence)
    elif ind_ok is not True:
        detail = f"independent numerics: {independent}"
    return RegressionRow(entry.name, entry.source, status, str(verdict.verdict), independent,
                         time.perf_counter() - start, ok, detail, verdict, inconclusive)


def _independent_check(target, order, verdict) -> tuple[str, bool | None]:
    """The derivation against numeric_divergence at a central point (alpha = 2 for the curve):
    ``(text, True)`` agreed, ``(text, False)`` disagreed or failed, ``(text, None)`` no answer."""
    if not target.directions:
        return "n/a (no densities to integrate)", None
    P, Q, x, support = target.directions[0]
    if order == 1 and support.sup == sp.oo and not isinstance(support, sp.Interval) and support != sp.S.Reals:
        # numeric_divergence's term-by-term KL sum over an infinite lattice stops after 200001 terms
        # without meeting its tail criterion (Poisson, seen: 64 s); skip rather than wait for "not converged".
        return "skipped (KL sum over an infinite lattice)", None
    free = {p.name: p.typical_values(1)[0] for p in target.parameters}
    a = sp.Integer(2)
    try:
        exact = target.exact(order, a, free, 40)
        got = target.independent(order, a, free, dps=30)
    except Exception as exc:  # noqa: BLE001
        return f"failed: {exc}", False
    value, error, converged, detail = got
    if value is None:
        return detail, False
    with mpmath.workdps(40):
        if mpmath.isinf(exact) or mpmath.isinf(value):
            same = exact == value
            return ("both +oo" if same else f"closed form {exact} vs numeric {value}"), same
        diff = abs(exact - value)
        scale = max(abs(value), mpmath.mpf(10) ** -12)
        tol = max(mpmath.mpf(10) ** -12 * scale, 4 * error)
        digits = float(-mpmath.log10(diff / scale)) if diff else 30.0
        if not converged:  # no verdict either way: not a regression, and not a pass either
            return f"not converged ({detail[:80]})", None
        return (f"{min(digits, 30):.0f} digits" if diff <= tol else f"MISMATCH: {exact} vs {value} +- {error}"), diff <= tol


def _entry_task(search: int, entry: Entry) -> RegressionRow:
    """One task of :func:`run_registry` (module level, so that it pickles for spawned workers and Dask)."""
    return run_entry(entry, search=search)


def run_registry(paths: Sequence = (), *, only: Sequence[str] = (), search: int = 60, executor: Any = None,
                 timeout: float | None = None, progress: bool = False) -> list[RegressionRow]:
    """Run every entry of the registry files (default: the shipped registry); one row per entry, in
    registry order.

    Each entry is one task of :func:`rdpsym.execution.run_tasks`: ``executor`` is ``None`` (all local
    cores, the default: an entry derives and searches for seconds), ``"serial"``, an int number of
    processes, or a Dask scheduler address or client; ``timeout`` limits the seconds per entry. The
    rows are the same on every executor (``seconds`` aside). An entry whose task raised, timed out or
    lost its worker is a failing row (verdict ``error``) naming what happened; the others are kept.
    """
    from functools import partial

    from ..execution import run_tasks

    entries: list[Entry] = []
    for p in (paths or [default_registry()]):
        entries.extend(load_registry(p))
    if only:
        entries = [e for e in entries if any(o in e.name for o in only)]
    sweep = run_tasks(partial(_entry_task, search), entries, executor=executor, timeout=timeout,
                      progress=progress, description="regress", key=lambda e: e.name)
    rows = []
    for entry, task in zip(entries, sweep):
        if task.ok:
            rows.append(task.result)
        else:
            rows.append(RegressionRow(entry.name, entry.source, "error", "error", "", task.seconds, False,
                                      f"the entry's task {task.status}: {task.error}"))
    return rows
