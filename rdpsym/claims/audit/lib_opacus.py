r"""Opacus' RDP analysis, ``opacus/accountants/analysis/rdp.py`` (Mironov, Talwar & Zhang 2019).

That module needs only numpy and scipy, but ``import opacus`` imports torch. So :func:`load_module` imports
``opacus.accountants.analysis.rdp`` when it can, and otherwise loads that one file from the installed
package's directory (found without executing ``opacus/__init__.py``): ``pip install --no-deps opacus``
is enough for the audit. Every function it defines is in :func:`inventory`.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import sympy as sp

from .core import AuditCase, Inventory, Uncovered, defined_in

__all__ = ["inventory", "load_module"]

LIB = "opacus"
SUBSAMPLED = (1, 256)  # as lib_autodp.SUBSAMPLED
_STANDALONE = "rdpsym_audit_opacus_rdp"


def load_module():
    """Opacus' ``accountants/analysis/rdp.py`` as a module (``ImportError`` when opacus is not installed)."""
    try:
        return importlib.import_module("opacus.accountants.analysis.rdp")
    except ImportError:
        pass
    spec = importlib.util.find_spec("opacus")  # locates the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("opacus is not installed (pip install --no-deps opacus is enough for the audit)")
    path = Path(list(spec.submodule_search_locations)[0]) / "accountants" / "analysis" / "rdp.py"
    if not path.is_file():
        raise ImportError(f"opacus is installed but has no {path}")
    file_spec = importlib.util.spec_from_file_location(_STANDALONE, path)
    module = importlib.util.module_from_spec(file_spec)
    file_spec.loader.exec_module(module)
    return module


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("opacus")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


_UNCOVERED = {
    "_log_add": ("helper", "log(e^x + e^y)"), "_log_sub": ("helper", "log(e^x - e^y)"),
    "_compute_log_a_for_int_alpha": ("helper", "log A_alpha, integer orders (of _compute_rdp)"),
    "_compute_log_a_for_frac_alpha": ("helper", "log A_alpha, fractional orders (of _compute_rdp)"),
    "_compute_log_a": ("helper", "dispatch of log A_alpha (of _compute_rdp)"),
    "_log_erfc": ("helper", "log erfc"),
    "get_privacy_spent": ("conversion", "RDP to (epsilon, delta), not an RDP function"),
}


def inventory() -> Inventory:
    """Opacus' inventory (``ImportError`` when opacus is not installed)."""
    rdp = load_module()
    prefix = "accountants.analysis.rdp"

    def one(alpha, q, sigma):
        return float(rdp._compute_rdp(q, sigma, alpha))

    def steps(alpha, q, sigma):
        return float(rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=1, orders=[alpha])[0])

    one.__name__, steps.__name__ = "_compute_rdp", "compute_rdp"
    cases = [AuditCase(LIB, "_compute_rdp(q, sigma, alpha)", "gaussian", one, None, "==", SUBSAMPLED,
                       subsample="poisson", covers=f"{prefix}._compute_rdp"),
             AuditCase(LIB, "compute_rdp(q, sigma, steps=1, orders=[alpha])", "gaussian", steps, None, "==",
                       SUBSAMPLED, subsample="poisson", covers=f"{prefix}.compute_rdp"),
             AuditCase(LIB, "compute_rdp(q, sigma, steps=1, orders=[oo])", "gaussian", steps, sp.oo, "==",
                       SUBSAMPLED, subsample="poisson", covers=f"{prefix}.compute_rdp")]
    uncovered = [Uncovered(LIB, f"{prefix}.{n}", k, r) for n, (k, r) in _UNCOVERED.items()]
    defined = defined_in(rdp, prefix)
    return Inventory(LIB, _version(), ("opacus.accountants.analysis.rdp",), cases,
                     [u for u in uncovered if u.covers in defined], frozenset(defined))


# -- the accountants (rdpsym.claims.audit.accountants) ---------------------------------------------------
DELTAS = (1e-3, 1e-6)


def accountant_cases() -> list:
    """Opacus' RDPAccountant, PRVAccountant (get_epsilon's eps_error 0.01) and GaussianAccountant (GDP) on
    DP-SGD histories: the Gaussian (sample rate 1) and the Poisson-subsampled Gaussian composed 1, 2, 10 and
    40 times, and a mix, at delta 1e-3 and 1e-6 (they report epsilon only). ``ImportError`` when
    ``opacus.accountants`` cannot be imported (it needs torch)."""
    from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant

    from .accountants import AccountantCase, Composition, EventKind, self_compositions

    comps = (self_compositions(EventKind.GAUSSIAN, sigma=2.0) + self_compositions(EventKind.POISSON_GAUSSIAN, q=0.01, sigma=1.1)
             + [Composition(((EventKind.POISSON_GAUSSIAN, (("q", 0.01), ("sigma", 1.1)), 40),
                             ("gaussian", (("sigma", 2.0),), 10)))])

    def history(comp):
        out = []
        for kind, params, count in comp.events:
            p = dict(params)
            out.append((p["sigma"], p.get("q", 1.0), count))
        return out

    accountants = (("RDPAccountant", RDPAccountant, {}, 0.0, "none stated: an RDP conversion claims an upper bound"),
                   ("PRVAccountant", PRVAccountant, {"eps_error": 0.01}, 0.01, "get_epsilon's eps_error (default)"),
                   ("GaussianAccountant", GaussianAccountant, {}, 0.0,
                    "none stated: Gaussian DP by the central limit theorem, an approximation"))
    cases = []
    for name, cls, kw, tol, note in accountants:
        for comp in comps:
            for d in DELTAS:
                def call(cls=cls, comp=comp, d=d, kw=kw):
                    acc = cls()
                    acc.history = history(comp)
                    return acc.get_epsilon(d, **kw)

                cases.append(AccountantCase(LIB, name, comp, "epsilon", d, call, tol, note))
    return cases
