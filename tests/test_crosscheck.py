"""Numeric equality of two forms at sample points (rdpsym.derive.crosscheck): only finite real values are
evidence; a point where both forms are undefined is skipped, never counted as agreement."""

from __future__ import annotations

import sympy as sp

from rdpsym.derive.crosscheck import equivalent, numeric_equal

y = sp.Symbol("y", positive=True)
HALF = sp.Rational(1, 2)
# 0/0 at y = 1/2 in both (sympy does not cancel these), and different everywhere else: y + 1/2 against
# (y + 1/2)/2 and (y + 1/2)^2
A = (y**2 - HALF**2) / (y - HALF)
B = (y**2 - HALF**2) / (2 * y - 1)
C = (y**2 - HALF**2) * (y + HALF) / (y - HALF)
# the same function as A, written differently: undefined at y = 1/2 too
A_AGAIN = (2 * y**2 - HALF) / (2 * y - 1)


def test_forms_undefined_at_every_point_are_not_equal():
    points = [{y: HALF}] * 3
    assert A.subs(y, HALF) is sp.nan and B.subs(y, HALF) is sp.nan
    assert numeric_equal(A, B, points) is None
    assert numeric_equal(A, C, points) is None
    assert equivalent(A, B, points) is None
    # no point at all is no evidence either
    assert numeric_equal(A, A_AGAIN, []) is None


def test_a_point_undefined_in_both_is_skipped_not_counted():
    points = [{y: sp.Rational(3, 10)}, {y: HALF}, {y: sp.Rational(4, 5)}]
    assert numeric_equal(A, A_AGAIN, points) is True  # agree at 3/10 and 4/5: two of three points
    assert numeric_equal(A, B, points) is False  # differ where both are defined
    # agreement at one point out of three, both undefined at the others: not enough
    assert numeric_equal(A, A_AGAIN, [{y: HALF}, {y: sp.Rational(4, 5)}, {y: HALF}]) is None


def test_a_point_undefined_in_one_form_only_is_undecided():
    points = [{y: sp.Rational(3, 10)}, {y: HALF}, {y: sp.Rational(4, 5)}]
    assert numeric_equal(A, y + HALF, points) is None  # nan against 1 at y = 1/2
    assert numeric_equal(sp.oo * y, y, [{y: 1}]) is None
    assert numeric_equal(sp.oo * y, -sp.oo * y, [{y: 1}]) is None
    assert numeric_equal(sp.oo * y, sp.oo * y, [{y: 1}]) is None  # +oo at both: no finite value to compare
