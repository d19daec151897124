"""Every report exposes the one outcome vocabulary (rdpsym.outcomes.Outcome) beside its own status."""


import mpmath
import pytest
import sympy as sp

from rdpsym.claims import ClaimVerdict, Verdict
from rdpsym.claims.audit import AuditCase, AuditRow
from rdpsym.outcomes import Outcome, combine
from rdpsym.properties import PropertyReport, PropertyVerdict, SuiteReport
from rdpsym.properties.report import report_from_rows
from rdpsym.regress import RegressionRow
from rdpsym.verification import Point, PointCheck, VerificationReport, VerificationStatus


def claim(verdict):
    return ClaimVerdict(verdict, "<=", None, "x", None, "", (), ())


@pytest.mark.parametrize("verdict, outcome", [(Verdict.PROVED, Outcome.HOLDS), (Verdict.CONFIRMED, Outcome.HOLDS),
                                              (Verdict.REFUTED, Outcome.FAILS),
                                              (Verdict.INCONCLUSIVE, Outcome.INCONCLUSIVE)])
def test_claim_outcome(verdict, outcome):
    v = claim(verdict)
    assert verdict.outcome is outcome and v.outcome is outcome and v.outcome.ok == v.ok
    case = AuditCase("lib", "fn", "gaussian", lambda a: a)
    assert AuditRow(case, v).outcome is outcome


def test_property_verdict_is_the_outcome():
    assert PropertyVerdict is Outcome
    holds = report_from_rows("p", [("a", 1, 2)], 0)
    fails = report_from_rows("q", [("a", 3, 2)], 0)
    unsure = report_from_rows("r", [("a", None, 2)], 0)
    assert (holds.outcome, fails.outcome, unsure.outcome) == (Outcome.HOLDS, Outcome.FAILS, Outcome.INCONCLUSIVE)
    assert holds.verdict is holds.outcome
    suite = SuiteReport("m", {}, (holds, unsure))
    assert suite.outcome is Outcome.INCONCLUSIVE is combine([holds, unsure])
    assert SuiteReport("m", {}, (holds, fails)).outcome is Outcome.FAILS
    assert PropertyReport("s", PropertyVerdict.HOLDS, "symbolic").outcome is Outcome.HOLDS


def check(status, p_equals_q=False):
    point = Point(sp.Integer(2), (("sigma", sp.Integer(1)),), "typical")
    z = mpmath.mpf(0)
    return PointCheck(point, z, z, z, z, 30.0, status, p_equals_q=p_equals_q)


def test_verification_outcome():
    assert check("agree").outcome is Outcome.HOLDS
    assert check("agree", p_equals_q=True).outcome is Outcome.INCONCLUSIVE  # no evidence
    assert check("mismatch").outcome is Outcome.FAILS
    assert check("inconclusive").outcome is Outcome.INCONCLUSIVE
    for status, outcome in [(VerificationStatus.VERIFIED, Outcome.HOLDS), (VerificationStatus.MISMATCH, Outcome.FAILS),
                            (VerificationStatus.INCONCLUSIVE, Outcome.INCONCLUSIVE)]:
        report = VerificationReport(status, (check("agree"),), 30, 18.0, 0, "quick", 0.0, "t")
        assert status.outcome is outcome and report.outcome is outcome


def test_regression_row_outcome_and_label():
    def row(ok, inconclusive=False):
        return RegressionRow("e", "src", "closed_form", "confirmed", "agrees", 0.0, ok, inconclusive=inconclusive)

    assert (row(True).label, row(True).outcome) == ("pass", Outcome.HOLDS)
    assert (row(False).label, row(False).outcome) == ("fail", Outcome.FAILS)
    assert (row(False, True).label, row(False, True).outcome) == ("inconclusive", Outcome.INCONCLUSIVE)
