"""The double-double fallback of the float code (rdpsym.compile.doubled and the ``_dd_*`` helpers of
rdpsym.compile.runtime) and the logarithms of hyperbolic functions, against 50-digit mpmath."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from rdpsym.compile import CodegenError
from rdpsym.compile import runtime as rt
from rdpsym.compile.doubled import double_double_code

XS = np.array([-30.0, -2.5, -0.7, -1e-3, -1e-9, 1e-12, 1e-6, 0.3, 0.69, 0.7, 1.0, 1.2, 5.0, 40.0, 300.0])


def _dd_of(x: float):
    return np.asarray([x], dtype=float), np.asarray([0.0])


def _mp(pair) -> mpmath.mpf:
    return mpmath.mpf(float(pair[0][0])) + mpmath.mpf(float(pair[1][0]))


@pytest.mark.parametrize(("fn", "ref", "domain"), [
    (rt._dd_exp, mpmath.exp, lambda x: abs(x) < 700),
    (rt._dd_expm1, mpmath.expm1, lambda x: abs(x) < 700),
    (rt._dd_log, mpmath.log, lambda x: x > 0),
    (rt._dd_log1p, mpmath.log1p, lambda x: x > -1),
    (rt._dd_sqrt, mpmath.sqrt, lambda x: x > 0),
    (rt._dd_tanh, mpmath.tanh, lambda x: True),
    (rt._dd_sinh, mpmath.sinh, lambda x: abs(x) < 700),
    (rt._dd_log_tanh, lambda x: mpmath.log(abs(mpmath.tanh(x))), lambda x: x != 0),
    (rt._dd_log_sinh, lambda x: mpmath.log(abs(mpmath.sinh(x))), lambda x: x != 0),
    (rt._dd_log_cosh, lambda x: mpmath.log(mpmath.cosh(x)), lambda x: x != 0),
])
def test_double_double_functions_keep_about_100_bits(fn, ref, domain):
    worst, at = mpmath.mpf(0), None
    with mpmath.workdps(400):  # log tanh 300 = -2 e^-600: beyond 50 digits of 1
        for x in XS:
            if not domain(x):
                continue
            want = ref(mpmath.mpf(float(x)))
            got = _mp(fn(_dd_of(float(x))))
            if want == 0:
                assert got == 0, (x, got)
                continue
            if abs(got - want) / abs(want) > worst:
                worst, at = abs(got - want) / abs(want), x
    assert worst <= mpmath.mpf(2) ** -96, (float(worst), at)


def test_double_double_sum_product_quotient_carry_the_low_parts():
    a = (np.array([1.0]), np.array([2.0**-60]))
    b = (np.array([-1.0]), np.array([2.0**-70]))
    with mpmath.workdps(50):
        s = _mp(rt._dd_sum(a, b))
        assert s == mpmath.mpf(2) ** -60 + mpmath.mpf(2) ** -70  # the float sum would be 0
        third = _mp(rt._dd_div((np.array([1.0]), np.array([0.0])), (np.array([3.0]), np.array([0.0]))))
        assert abs(third - mpmath.mpf(1) / 3) <= mpmath.mpf(2) ** -104
        sq = _mp(rt._dd_mul((np.array([1.0 + 2.0**-30]), np.array([0.0])), (np.array([1.0 - 2.0**-30]), np.array([0.0]))))
        assert sq == 1 - mpmath.mpf(2) ** -60


@pytest.mark.parametrize(("fn", "ref"), [
    (rt._log_tanh, lambda x: mpmath.log(abs(mpmath.tanh(x)))),
    (rt._log_sinh, lambda x: mpmath.log(abs(mpmath.sinh(x)))),
    (rt._log_cosh, lambda x: mpmath.log(mpmath.cosh(x))),
])
def test_float_logs_of_hyperbolic_functions_keep_their_digits(fn, ref):
    """log tanh x at large x (-2 e^(-2x)) and log cosh x next to 0 (x^2/2): a few ulps, where the naive
    numpy.log(numpy.tanh(x)) returns 0 and numpy.log(numpy.cosh(x)) loses every digit."""
    got = fn(XS)
    with mpmath.workdps(400):
        for x, g in zip(XS, got):
            want = ref(mpmath.mpf(float(x)))
            assert abs(mpmath.mpf(float(g)) - want) <= 1e-15 * abs(want), (x, g, want)
    assert np.log(np.tanh(40.0)) == 0.0  # why the helper exists


def test_double_double_code_reruns_the_float_expression_with_exact_constants():
    """The rewrite of emitted float code: the same algorithm on pairs; 1/3 as its exact value."""
    third = repr(float(sp.Rational(1, 3)))
    code = double_double_code(f"numpy.log1p(x * {third}) - numpy.expm1(x)", {third: sp.Rational(1, 3)})
    ns = {name: getattr(rt, name) for name in dir(rt) if name.startswith("_")}
    x = np.array([1e-5, 0.25])
    got = ns["_dd_round"](eval(code, {**ns, "numpy": np, "x": x}))  # noqa: S307 - the test's own text
    with mpmath.workdps(50):
        for xv, g in zip(x, got):
            want = mpmath.log1p(mpmath.mpf(float(xv)) / 3) - mpmath.expm1(mpmath.mpf(float(xv)))
            assert abs(mpmath.mpf(float(g)) - want) <= 1e-15 * abs(want)


def test_double_double_code_refuses_what_it_cannot_rewrite():
    with pytest.raises(CodegenError):
        double_double_code("numpy.arctan(x)", {})
    with pytest.raises(CodegenError):  # one literal standing for two exact values
        double_double_code("x * 0.3333333333333333", {"0.3333333333333333": None})
