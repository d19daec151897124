"""Property checks: Mironov 2017 (arXiv:1702.07476 v3) Table I and the Appendix, as executable checks.

Every check applies to a result or a mechanism and returns a :class:`PropertyReport` (verdict
``holds`` / ``fails`` / ``inconclusive``, the points checked with their margins, the worst margin,
and whether the check was symbolic or numeric). :func:`check_all` runs every applicable check on a
mechanism; each check can fail, and the tests show it failing on deliberately broken input.
"""

from .accounting_checks import composition, conversion, group_privacy_check
from .advanced import advanced_composition, binomial_pair, corollary_1, rr_self_composition
from .curve import (ORDERS, Curve, as_curve, continuity_at_infinity, continuity_at_one, convexity, monotonicity,
                    non_negativity)
from .dp import BUN_STEINKE, LEMMA_1, dp_implies_rdp, worst_case_dp_curve, worst_case_dp_mechanism
from .postprocessing import (Channel, Clip, InputDependent, Kernel, Round, Threshold, default_channels,
                             post_processing, randomized_threshold)
from .probability import bayes_factor, default_events, probability_preservation, section_vii_interval
from .report import Evidence, PropertyReport, PropertyVerdict
from .suite import CHECKS, SuiteReport, check_all, default_values
from .triangle import COROLLARY_4, TriangleForm, general_form, mechanism_triples, weak_triangle

__all__ = [
    "PropertyVerdict", "Evidence", "PropertyReport", "SuiteReport", "check_all", "default_values", "CHECKS",
    "Curve", "as_curve", "ORDERS", "non_negativity", "monotonicity", "convexity", "continuity_at_one",
    "continuity_at_infinity", "composition", "group_privacy_check", "conversion",
    "Channel", "Threshold", "Round", "Clip", "Kernel", "InputDependent", "randomized_threshold",
    "default_channels", "post_processing", "probability_preservation", "bayes_factor", "default_events",
    "section_vii_interval", "TriangleForm", "general_form", "COROLLARY_4", "weak_triangle", "mechanism_triples",
    "dp_implies_rdp", "worst_case_dp_curve", "worst_case_dp_mechanism", "LEMMA_1", "BUN_STEINKE",
    "advanced_composition", "corollary_1", "binomial_pair", "rr_self_composition",
]
