r"""Audit other libraries' RDP functions against rdpsym's derivations: ``rdpsym audit LIBRARY``.

Accountants hold hand-typed RDP formulas. The audit enumerates every RDP function and accountant event a
library defines (:func:`inventory`), checks each one that has an rdpsym counterpart with
:func:`rdpsym.check_claim` on the library's own callable (:func:`audit`), and lists the rest with the
reason. Libraries: ``autodp`` (:mod:`.lib_autodp`), ``dp_accounting`` (:mod:`.lib_dp_accounting`) and
``opacus`` (:mod:`.lib_opacus`; only its numpy module ``opacus/accountants/analysis/rdp.py`` is loaded,
so torch is not needed). The machinery is :mod:`.core`, the report formats :mod:`.report`.

``rdpsym audit LIBRARY`` also audits the library's *accountants* (:mod:`.accountants`): every epsilon(delta)
and delta(epsilon) they report on compositions of the events each supports, against rdpsym's certified
bracket (:mod:`rdpsym.accounting.pld`).

Usage::

    from rdpsym.claims.audit import audit, format_audit
    rows = audit("autodp")
    print(format_audit(rows))
"""

from __future__ import annotations

from .core import (AuditCase, AuditRow, Inventory, MechanismUnavailable, Uncovered, agreement_digits, missing_from,
                   run_case, run_inventory)
from .accountants import AccountantCase, AccountantRow, format_accountants, run_accountants
from .report import audit_json, format_audit

__all__ = ["LIBRARIES", "inventory", "audit", "AuditCase", "AuditRow", "Inventory", "Uncovered", "run_case",
           "run_inventory", "agreement_digits", "missing_from", "MechanismUnavailable", "format_audit", "audit_json",
           "audit_accountants", "AccountantCase", "AccountantRow", "format_accountants", "run_accountants"]

#: the audited libraries and the module of each one's inventory
LIBRARIES = {"autodp": "lib_autodp", "dp_accounting": "lib_dp_accounting", "opacus": "lib_opacus"}


def inventory(library: str) -> Inventory:
    """The inventory of ``library`` (a key of :data:`LIBRARIES`); ``ImportError`` when it is not installed."""
    import importlib

    if library not in LIBRARIES:
        from ..._numbers import ArgumentError

        raise ArgumentError("library", f"one of {', '.join(LIBRARIES)}", library)
    return importlib.import_module(f"{__name__}.{LIBRARIES[library]}").inventory()


def audit(library: str, **options) -> list[AuditRow]:
    """Audit ``library``: every case checked (``options`` as :func:`run_inventory`: ``digits``,
    ``search``, ``seconds`` per case, ``budget`` in all, ``only``), then the uncovered definitions."""
    return run_inventory(inventory(library), **options)


def audit_accountants(library: str, *, only: tuple[str, ...] = (), budget: float = 240.0,
                      progress=None) -> tuple[list[AccountantRow], str]:
    """The audit of ``library``'s accountants (:mod:`.accountants`): the rows and a note (why none ran, when
    the library's accountants cannot be imported, e.g. Opacus without torch). ``only``: keep the cases whose
    accountant or composition contains one of these texts."""
    import importlib

    if library not in LIBRARIES:
        from ..._numbers import ArgumentError

        raise ArgumentError("library", f"one of {', '.join(LIBRARIES)}", library)
    module = importlib.import_module(f"{__name__}.{LIBRARIES[library]}")
    try:
        cases = module.accountant_cases()
    except ImportError as exc:
        return [], f"The accountants were not audited: they could not be imported here ({exc})."
    if only:
        cases = [c for c in cases if any(t in c.accountant or t in c.composition.label for t in only)]
    return run_accountants(cases, budget=budget, progress=progress), ""
