"""Verification: closed forms against independent high-precision numerics.

``rdpsym.verify(...)`` is :func:`rdpsym.verification.checks.verify`; the points it checks come from
:mod:`rdpsym.verification.points`, and what it finds is a
:class:`~rdpsym.verification.report.VerificationReport`.
"""

from .checks import verify
from .points import Point, verification_points
from .report import PointCheck, VerificationReport, VerificationStatus
from .table import table_verification

__all__ = ["Point", "PointCheck", "VerificationReport", "VerificationStatus", "verification_points",
           "table_verification", "verify"]
