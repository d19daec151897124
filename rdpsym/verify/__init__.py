"""Verification: closed forms against independent high-precision numerics.

``rdpsym.verify(...)`` is :func:`rdpsym.verify.verify.verify`; the points it checks come from
:mod:`rdpsym.verify.points`.
"""

from .points import Point, verification_points
from .verify import PointCheck, VerificationReport, VerificationStatus, table_verification, verify

__all__ = ["Point", "PointCheck", "VerificationReport", "VerificationStatus", "verification_points",
           "table_verification", "verify"]
