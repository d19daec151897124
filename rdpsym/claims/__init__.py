"""Checking claimed formulas (papers, other libraries) against rdpsym's derivations.

``rdpsym.check_claim`` is :func:`rdpsym.claims.check.check_claim`; symbol mapping lives in
:mod:`rdpsym.claims.mapping`, the counterexample search in :mod:`rdpsym.claims.search`, and the recipe
that audits autodp, dp_accounting and opacus (``rdpsym audit LIBRARY``) in :mod:`rdpsym.claims.audit`.
"""

from .check import ClaimVerdict, Counterexample, RELATIONS, Verdict, check_claim
from .mapping import COMMON_ALIASES, SymbolMap, build_symbol_map

__all__ = ["check_claim", "ClaimVerdict", "Counterexample", "Verdict", "RELATIONS", "SymbolMap",
           "build_symbol_map", "COMMON_ALIASES"]
