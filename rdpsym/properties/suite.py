"""Run every applicable property check on a mechanism: :func:`check_all`.

One helper for built-in and user mechanisms alike (the hypothesis tests and ``rdpsym properties``
both go through it). ``quick=True`` keeps to the cheap checks (curve properties, post-processing,
probability preservation, eps-DP => RDP) for property-based sweeps over many parameter values.

Each named check of :data:`CHECKS` is one task of :func:`rdpsym.execution.run_tasks` (``executor=``):
the reports come back in :data:`CHECKS` order whatever the executor, and a check that raises, times out
or loses its worker is reported as an ``inconclusive`` row (``extra["task"]`` names what happened)
instead of losing the other checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import sympy as sp

from ..derive.mechanism_rdp import rdp
from ..specify.mechanism import Mechanism
from . import accounting_checks, curve as curve_checks, dp, postprocessing, probability, triangle
from ..outcomes import Outcome
from .report import PropertyReport, PropertyVerdict

__all__ = ["SuiteReport", "check_all", "default_values", "CHECKS"]


@dataclass(frozen=True)
class SuiteReport:
    """The reports of :func:`check_all`; ``verdict`` fails if any check fails."""

    mechanism: str
    values: dict
    reports: tuple[PropertyReport, ...]

    @property
    def verdict(self) -> PropertyVerdict:
        vs = {r.verdict for r in self.reports if r.applicable}
        if PropertyVerdict.FAILS in vs:
            return PropertyVerdict.FAILS
        return PropertyVerdict.INCONCLUSIVE if PropertyVerdict.INCONCLUSIVE in vs else PropertyVerdict.HOLDS

    @property
    def outcome(self) -> Outcome:
        """The suite's verdict, an :class:`~rdpsym.outcomes.Outcome`."""
        return self.verdict

    @property
    def failures(self) -> list[PropertyReport]:
        return [r for r in self.reports if r.verdict is PropertyVerdict.FAILS]

    @property
    def errors(self) -> list[PropertyReport]:
        """Checks that did not run to the end (raised, timed out, lost their worker): inconclusive rows."""
        return [r for r in self.reports if "task" in r.extra]

    def __repr__(self) -> str:
        from ..report.display import suite_repr

        return suite_repr(self)

    def _repr_html_(self) -> str:
        from ..report.display import suite_html

        return suite_html(self)

    def __str__(self) -> str:
        return f"{self.mechanism} {self.values}: {self.verdict}\n" + "\n".join("  " + r.summary() for r in self.reports)


def default_values(mechanism: Mechanism) -> dict:
    """The centre of each parameter's typical range (geometric for log-scale ones); sensitivity 1."""
    out = {}
    for p in mechanism.parameters:
        lo, hi = p.typical
        if p.name == "sensitivity" and lo <= 1 <= hi:
            out[p.name] = 1
            continue
        v = math.sqrt(lo * hi) if p.log_scale and lo > 0 else (lo + hi) / 2
        out[p.name] = int(round(v)) if p.symbol.is_integer else sp.nsimplify(float(f"{v:.2g}"))
    return out


def _curve_checks(m, res, values, dps):
    return [curve_checks.non_negativity(res, values, dps=dps), curve_checks.monotonicity(res, values, dps=dps),
            curve_checks.convexity(res, values, dps=dps), curve_checks.continuity_at_one(res, values, dps=dps + 10),
            curve_checks.continuity_at_infinity(res, values, dps=dps + 10)]


#: name -> (quick?, function(mechanism, curve, values, dps) -> list of reports)
CHECKS: dict[str, tuple[bool, Callable]] = {
    "curve": (True, _curve_checks),
    "post-processing": (True, lambda m, res, v, dps: [postprocessing.post_processing(m, v, curve=res, dps=dps)]),
    "probability": (True, lambda m, res, v, dps: [probability.probability_preservation(m, v, curve=res, dps=dps)]),
    "dp-implies-rdp": (True, lambda m, res, v, dps: [dp.dp_implies_rdp(res, v, constant=c, dps=dps)
                                                     for c in (dp.BUN_STEINKE, dp.LEMMA_1)]),
    "bayes-factor": (False, lambda m, res, v, dps: [probability.bayes_factor(m, v, curve=res, dps=dps)]),
    "weak-triangle": (False, lambda m, res, v, dps: [triangle.weak_triangle(triangle.mechanism_triples(m), m.variable,
                                                                             m.support, v, dps=dps, target=m.name)]),
    "composition": (False, lambda m, res, v, dps: [accounting_checks.composition(m, v)]),
    "group-privacy": (False, lambda m, res, v, dps: [accounting_checks.group_privacy_check(m, v, dps=dps)]),
    "conversion": (False, lambda m, res, v, dps: [accounting_checks.conversion(m, v, method=meth, dps=dps)
                                                  for meth in ("mironov", "improved")]),
}


def _check_task(mechanism: Mechanism, res, values: dict, dps: int, name: str) -> list[PropertyReport]:
    """One task of :func:`check_all`: the reports of the check ``name`` (module level: picklable)."""
    return CHECKS[name][1](mechanism, res, values, dps)


def check_all(mechanism: Mechanism, values: dict | None = None, *, quick: bool = False, only=None,
              dps: int = 30, curve=None, executor="serial", timeout: float | None = None) -> SuiteReport:
    """Run the property checks on ``mechanism`` at parameter ``values`` (default: :func:`default_values`).

    ``curve`` replaces the engine's RDP curve (to check a claimed curve); ``only`` restricts to names of
    :data:`CHECKS`; ``quick`` keeps the cheap ones. A check that does not apply (eps-DP => RDP for a
    mechanism with infinite D_inf) reports ``inconclusive`` with the reason.

    ``executor`` (as in :func:`rdpsym.execution.run_tasks`; one task per named check): ``"serial"`` by
    default, since the quick checks take well under a second and property-based tests call this once
    per drawn example; ``None`` uses all local cores, an int that many processes, an address or client a
    Dask cluster. ``timeout``: seconds per check. The reports are the same on every executor; a check
    that raises or times out becomes an ``inconclusive`` report naming the error (see
    :attr:`SuiteReport.errors`), the other checks are kept.
    """
    from functools import partial

    from ..execution import run_tasks

    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism: expected an rdpsym Mechanism, got {type(mechanism).__name__}")
    values = dict(default_values(mechanism) if values is None else values)
    mechanism.substitutions(values)
    missing = sorted(set(mechanism.params) - set(values))
    if missing:
        raise ValueError(f"values: missing parameter(s) {', '.join(missing)} of {mechanism.name!r}")
    if only is not None:
        unknown = sorted(set(only) - set(CHECKS))
        if unknown:
            raise ValueError(f"only: unknown checks {unknown}; known: {sorted(CHECKS)}")
    res = curve if curve is not None else rdp(mechanism)
    names = [name for name, (cheap, _) in CHECKS.items()
             if not ((only is not None and name not in only) or (quick and not cheap))]
    sweep = run_tasks(partial(_check_task, mechanism, res, values, dps), names, executor=executor, timeout=timeout,
                      progress=False, description=f"properties of {mechanism.name}")
    reports: list[PropertyReport] = []
    for name, task in zip(names, sweep):
        if task.ok:
            reports.extend(task.result)
        else:  # never a silent hole in the table: the check is there, inconclusive, with the reason
            reports.append(PropertyReport(name, PropertyVerdict.INCONCLUSIVE, "not run", (), None, 0,
                                          f"the check did not finish ({task.status}): {task.error}",
                                          target=mechanism.name, extra={"task": str(task.status)}))
    return SuiteReport(mechanism.name, values, tuple(reports))
