"""Checking claimed formulas (papers, other libraries) against rdpsym's derivations.

``rdpsym.check_claim`` is :func:`rdpsym.claims.check.check_claim` and ``rdpsym.Certificate`` its verdicts'
certificates (:mod:`rdpsym.claims.certificate`); symbol mapping lives in
:mod:`rdpsym.claims.mapping`, the counterexample search in :mod:`rdpsym.claims.search`, and the recipe
that audits autodp, dp_accounting and opacus (``rdpsym audit LIBRARY``) in :mod:`rdpsym.claims.audit`.
"""

from .certificate import Certificate, CertificateError
from .check import ClaimVerdict, Counterexample, RELATIONS, Verdict, check_claim
from .mapping import COMMON_ALIASES, SymbolMap, build_symbol_map
from .replay import Replay

__all__ = ["check_claim", "ClaimVerdict", "Counterexample", "Verdict", "RELATIONS", "SymbolMap",
           "build_symbol_map", "COMMON_ALIASES", "Certificate", "CertificateError", "Replay"]
