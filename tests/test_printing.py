"""Floats are shown as the decimals the user wrote, and computed with at their exact value (issue 29).

A float is read at its exact binary value (q = 0.01 is 5764607523034235/576460752303423488 inside);
every presenter prints through :mod:`rdpsym.printing`, which shows that value as the shortest decimal
that reads back as the same float. A rational that is no float's value is shown as it is.
"""

from fractions import Fraction

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import Status, mechanisms, printing
from rdpsym.report.report import report
from rdpsym.specify.text.numbers import exact_number

B = sp.Symbol("b", positive=True)
X = sp.Symbol("x", real=True)
Q = exact_number(0.01)


@pytest.mark.parametrize("value, decimal", [
    (0.01, "0.01"), (0.1, "0.1"), (1.1, "1.1"), (1e-5, "1e-05"), (2.0 ** -60, "8.673617379884035e-19"),
    (123456.789, "123456.789"),
])
def test_a_float_value_is_shown_as_the_decimal_that_reads_back_as_it(value, decimal):
    exact = exact_number(value)
    assert exact == sp.Rational(Fraction(value).numerator, Fraction(value).denominator)  # exact inside
    assert printing.float_decimal(exact) == decimal and float(decimal) == value


@pytest.mark.parametrize("value", [
    sp.Rational(1, 2), sp.Rational(3, 4), sp.Integer(3),  # a float's value whose decimal is exact: as it is
    sp.Rational(1, 3), sp.Rational(1, 100),  # no float's value
    1 - exact_number(0.01),  # 59 significant bits: no float's value
    sp.Rational(2 ** 60 + 1, 2 ** 61),
])
def test_a_rational_that_is_no_inexact_float_is_shown_as_it_is(value):
    assert printing.float_decimal(value) is None
    assert printing.sstr(value) == sp.sstr(value) and printing.latex(value) == sp.latex(value)


def test_expressions_print_the_decimal_and_keep_the_exact_value():
    e = Q * B * sp.exp(-X) + (1 - Q)
    assert printing.sstr(Q * B) == "0.01*b" and printing.latex(Q * B) == "0.01 b"
    assert printing.sstr(-Q * B) == "-0.01*b" and printing.sstr(B / Q) == "b/0.01"
    assert printing.sstr(X ** Q) == "x**0.01" and printing.latex(sp.Interval(0, Q)) == r"\left[0, 0.01\right]"
    assert printing.latex(exact_number(1e-5) * B) == r"10^{-5} b"
    assert "5764607523034235" not in printing.sstr(e) and "0.01" in printing.sstr(e)
    assert sp.Rational(570696144780389253, 2 ** 59) == 1 - Q and "570696144780389253" in printing.sstr(e)
    # printing changes nothing: the expression is still the exact one
    assert e.has(Q) and printing.shown(e) != e and e.subs(B, 1).subs(X, 0) == 1


def test_a_subsampled_mechanism_describes_its_rate_as_written():
    m = rdpsym.subsample("gaussian", 0.01, scheme="without_replacement")
    assert "rate 0.01." in m.description and "576460752303423488" not in m.description


def test_a_report_and_a_result_show_the_decimal():
    m = mechanisms.get("gaussian")
    s, d = m.params["sigma"], m.params["sensitivity"]
    r = rdpsym.DivergenceResult(expr=rdpsym.alpha * Q * d ** 2 / s ** 2, status=Status.CLOSED_FORM, mechanism=m,
                                symbols=(s, d), kl=Q * d ** 2 / s ** 2)
    for text in (report(m, r, "tex"), report(m, r, "md"), str(r), r._repr_latex_(), repr(r)):
        assert "0.01" in text and "576460752303423488" not in text
    with mpmath.workdps(30):  # the value is the exact one
        assert r.evaluate(2, sigma=1, sensitivity=1) == mpmath.mpf(2) * mpmath.mpf(Q.p) / Q.q
