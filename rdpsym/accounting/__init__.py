"""Accounting: composition, group privacy, conversion to (epsilon, delta)-DP, exact privacy profiles.

* :func:`compose` — Mironov 2017 (arXiv:1702.07476 v3), Prop. 1; :func:`check_composition` checks it
  against a 2-D numerical computation of the product divergence.
* :func:`group_privacy` — exact for additive mechanisms, Prop. 2 bound otherwise.
* :func:`epsilon`, :func:`delta` — RDP -> (epsilon, delta)-DP (Prop. 3 and the improved conversion of
  Canonne–Kamath–Steinke 2020, Prop. 12), optimised over continuous alpha; each conversion is one entry
  of the registry :mod:`rdpsym.accounting.conversions`, its formula written once over the math namespace
  of :mod:`rdpsym.accounting.mathns`, searched over alpha by :mod:`rdpsym.accounting.orders`.
* :class:`GuaranteeCurve` — curves a privacy definition states (zCDP :data:`ZCDP`, truncated CDP
  :data:`TCDP`; :mod:`rdpsym.accounting.guarantees`), composed by the :class:`Accountant` with the rest.
* :func:`privacy_profile` — the exact delta(epsilon) = ∫ max(P - e^eps Q, 0), and
  :func:`check_conversion`, which checks a conversion against it.
"""

from .compose import CheckReport, check_composition, composable_exactly, compose
from .conversion import METHODS, Conversion, check_conversion, delta, epsilon
from .group import group_mechanism, group_privacy, is_location_family
from .profile import ProfileValue, pair_profile, privacy_profile

__all__ = [
    "CheckReport", "check_composition", "composable_exactly", "compose",
    "METHODS", "Conversion", "check_conversion", "delta", "epsilon",
    "group_privacy", "group_mechanism", "is_location_family",
    "ProfileValue", "pair_profile", "privacy_profile",
]

from .accountant import Accountant, AccountantConversion, AccountantReport, Event
from .curve_types import MechanismCurve, float_curve
from .curves import mechanism_curve
from .guarantees import GuaranteeCurve
from .guarantees.tcdp import TCDP
from .guarantees.zcdp import ZCDP

__all__ += ["Accountant", "AccountantConversion", "AccountantReport", "Event", "MechanismCurve", "float_curve",
            "mechanism_curve", "GuaranteeCurve", "ZCDP", "TCDP"]
