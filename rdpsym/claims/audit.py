r"""Recipe: audit the RDP functions of autodp and Google's dp_accounting against rdpsym's derivations.

Accountants hold hand-typed RDP formulas. This module checks them, as Python callables, with
:func:`rdpsym.check_claim` against the curves rdpsym derives from the mechanisms' densities, over the
typical ranges and edge regimes of the parameters (grid + hypothesis-guided search):

==================  ==========================================================  ==================
mechanism           autodp (``autodp.rdp_bank``)                                dp_accounting
==================  ==========================================================  ==================
Gaussian            ``RDP_gaussian({'sigma': s}, alpha)``                       ``RdpAccountant`` + ``GaussianDpEvent(s)``
Laplace             ``RDP_laplace({'b': b}, alpha)`` (alpha > 1, 1, oo)         ``RdpAccountant`` + ``LaplaceDpEvent(b)``
randomized resp.    ``RDP_randresponse({'p': p}, alpha)`` (alpha > 1, 1, oo)    ``RdpAccountant`` (REPLACE_ONE) + ``RandomizedResponseDpEvent(2(1-p), 2)``
==================  ==========================================================  ==================

The references are Mironov 2017 (arXiv:1702.07476 v3), Props. 5-7 and Table II, all at sensitivity 1
(both libraries normalise by the sensitivity). dp_accounting's randomized response reports a uniformly
random bucket with probability ``noise_parameter``, so with two buckets the true bit comes out with
probability ``p = 1 - noise_parameter/2``, i.e. ``noise_parameter = 2(1 - p)``: that mapping is passed
explicitly (``symbols={"noise": "2*(1-p)"}``).

Usage::

    from rdpsym.claims.audit import audit, format_audit
    rows = audit()                      # every library that is installed
    print(format_audit(rows))

Each row reports the verdict at ``digits`` (default 3: a formula error -- a wrong factor, sign, term or
direction -- is off by far more) and the digits of agreement actually seen: float code loses digits to
cancellation near alpha = 1. Measured (autodp 0.2.3.1, dp-accounting 0.6.0; ``python -c "from
rdpsym.claims.audit import audit, format_audit; print(format_audit(audit()))"``): every function agrees
with rdpsym's derivations at typical points, but autodp's ``RDP_laplace`` and ``RDP_randresponse`` and
dp_accounting's randomized response lose digits at alpha = 1 + 1e-6 (``logsumexp(...)/(alpha-1)``;
autodp ``RDP_laplace`` at alpha = 500001/500000, b = 998 is 5.01820e-7 against 5.01839e-7, and the
guided search finds autodp ``RDP_randresponse`` 1.2% low at alpha = 1 + 1e-6, p = 62503/125000, which
the audit reports as ``refuted``), while dp_accounting's Laplace (Taylor series for alpha < 1.1) keeps
12 digits. ``refuted`` rows carry the
counterexample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import sympy as sp

from ..outcomes import Outcome
from .check import ClaimVerdict, check_claim

__all__ = ["AuditCase", "AuditRow", "autodp_cases", "dp_accounting_cases", "audit", "format_audit"]


@dataclass(frozen=True)
class AuditCase:
    """One library function checked against one mechanism at one order (None = the curve)."""

    library: str
    function: str
    mechanism: str
    fn: Callable
    order: Any = None
    call: str = "keywords"
    arguments: tuple[str, ...] | None = None
    symbols: dict | None = None


@dataclass(frozen=True)
class AuditRow:
    case: AuditCase
    verdict: ClaimVerdict

    @property
    def ok(self) -> bool:
        return self.verdict.ok

    @property
    def outcome(self) -> Outcome:
        return self.verdict.outcome


def autodp_cases() -> list[AuditCase]:
    """autodp's ``rdp_bank`` functions (called as ``fn(params_dict, alpha)``)."""
    from autodp import rdp_bank

    out = []
    # the orders each function is audited at, per case (data, not a comparison of mechanism names)
    for mech, fn, arg, orders in (("gaussian", rdp_bank.RDP_gaussian, "sigma", (None,)),
                                  ("laplace", rdp_bank.RDP_laplace, "b", (None, 1, sp.oo)),
                                  ("randomized_response", rdp_bank.RDP_randresponse, "p", (None, 1, sp.oo))):
        for order in orders:
            out.append(AuditCase("autodp", f"rdp_bank.{fn.__name__}", mech, fn, order, "params_dict", (arg,)))
    return out


def dp_accounting_cases() -> list[AuditCase]:
    """dp_accounting's ``RdpAccountant`` on Gaussian, Laplace and randomized-response events."""
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant as ra

    def accountant_rdp(event, alpha, relation=None):
        kw = {} if relation is None else {"neighboring_relation": relation}
        acc = ra.RdpAccountant(orders=[alpha], **kw)
        acc.compose(event)
        return float(acc.rdp[0])

    def gaussian(alpha, sigma):
        return accountant_rdp(dpa.GaussianDpEvent(sigma), alpha)

    def laplace(alpha, b):
        return accountant_rdp(dpa.LaplaceDpEvent(b), alpha)

    def randomized_response(alpha, noise):
        return accountant_rdp(dpa.RandomizedResponseDpEvent(noise, 2), alpha, dpa.NeighboringRelation.REPLACE_ONE)

    def laplace_formula(alpha, eps):
        return ra._laplace_rdp(eps, alpha)  # noqa: SLF001 - the formula behind LaplaceDpEvent

    return [
        AuditCase("dp_accounting", "RdpAccountant+GaussianDpEvent", "gaussian", gaussian),
        AuditCase("dp_accounting", "RdpAccountant+LaplaceDpEvent", "laplace", laplace),
        AuditCase("dp_accounting", "_laplace_rdp (alpha = 1)", "laplace", laplace_formula, 1, symbols={"eps": "1/b"}),
        AuditCase("dp_accounting", "RdpAccountant+RandomizedResponseDpEvent(k=2)", "randomized_response",
                  randomized_response, symbols={"noise": "2*(1-p)"}),
    ]


def audit(libraries=("autodp", "dp_accounting"), *, digits: int = 3, search: int = 60,
          cases: list[AuditCase] | None = None) -> list[AuditRow]:
    """Check every case of the installed ``libraries`` (or the given ``cases``) with check_claim."""
    from .. import mechanisms

    if cases is None:
        cases = []
        makers = {"autodp": autodp_cases, "dp_accounting": dp_accounting_cases}
        for lib in libraries:
            if lib not in makers:
                raise ValueError(f"libraries: unknown {lib!r}; known: {sorted(makers)}")
            try:
                cases += makers[lib]()
            except ImportError:
                continue
    rows = []
    for case in cases:
        v = check_claim(mechanisms.get(case.mechanism), case.fn, "==", case.order, case.symbols,
                        call=case.call, arguments=case.arguments, digits=digits, search=search)
        rows.append(AuditRow(case, v))
    return rows


def format_audit(rows: list[AuditRow]) -> str:
    """A Markdown table of the audit, followed by the counterexamples."""
    lines = ["| library | function | mechanism | order | verdict | digits of agreement |", "|---|---|---|---|---|---|"]
    for r in rows:
        order = "alpha" if r.case.order is None else str(r.case.order)
        d = r.verdict.digits
        ds = "-" if d is None else (">= 15" if d >= 15 or math.isinf(d) else f"{d:.1f}")
        lines.append(f"| {r.case.library} | {r.case.function} | {r.case.mechanism} | {order} | {r.verdict.verdict} | {ds} |")
    for r in rows:
        if r.verdict.counterexample is not None:
            lines.append(f"\n{r.case.library} {r.case.function}:\n{r.verdict.counterexample.describe()}")
    return "\n".join(lines)
