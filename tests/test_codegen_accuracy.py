"""Float code for the engine's own forms (issue 29, item 3): hyperbolic functions (the discrete Laplace
normaliser tanh(1/(2b)), in its D_alpha and its KL divergence) and Poisson rates at orders below 1.

Every point is either within 1e-12 (relative) of the result's own 50-digit evaluation, or refused
(ArithmeticError, or NaN with a warning): float code never returns a wrong finite number. The points a
user meets first (typical parameters, orders below 1) must be served, not refused.
"""

import warnings

import mpmath
import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms, parameter, renyi_divergence


def _x(v):
    return sp.Float(float(v), 60)


def _values(r, f, points):
    """(key, the float code's value or None where it refused, the result's own 50-digit value or None) at
    each of ``points`` ((alpha, values)); call inside ``mpmath.workdps(50)``."""
    for a, values in points:
        key = (a, tuple(sorted(values.items())))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                got = float(f(np.array([a]), **values)[0])
            except ArithmeticError:
                yield key, None, None
                continue
        exact = None if np.isnan(got) else r.evaluate(_x(a), dps=50, **{k: _x(v) for k, v in values.items()})
        yield key, got, exact


def _served(r, f, points):
    """{(alpha, values): relative error} of the float code at ``points``, None where it refused."""
    with mpmath.workdps(50):
        return {key: None if got is None or np.isnan(got) else float(abs(mpmath.mpf(got) - exact) / abs(exact))
                for key, got, exact in _values(r, f, points)}


@pytest.fixture(scope="module")
def poisson():
    k = sp.Symbol("k", integer=True)
    lam = parameter("lam", sp.Interval.open(0, sp.oo), typical=(1.0, 10.0), log_scale=True)
    L = lam.symbol
    r = renyi_divergence(sp.exp(-L) * L**k / sp.factorial(k), sp.exp(-(L + 1)) * (L + 1)**k / sp.factorial(k),
                         k, sp.S.Naturals0, params=[lam])
    return r, r.to_numpy(cache=False)


def test_poisson_rates_at_orders_below_one_are_served_accurately(poisson):
    """At lam = 10 the closed form cancels terms of size 10 to a value of 0.05 for every alpha <= 0.6:
    the float code used to refuse there; at lam = 1 log(lam) = 0 made its error estimate NaN."""
    r, f = poisson
    points = [(a, {"lam": lam}) for lam in (1.0, 10.0) for a in (1e-3, 0.01, 0.1, 0.3, 0.5, 0.6)]
    errors = _served(r, f, points)
    refused = [p for p, e in errors.items() if e is None]
    assert not refused, refused
    assert max(errors.values()) <= 1e-12, max(errors.values())


def test_poisson_float_code_is_accurate_or_refuses_elsewhere(poisson):
    r, f = poisson
    points = [(a, {"lam": lam}) for lam in (0.01, 0.1, 3.0, 30.0, 1e3, 1e6) for a in (1e-3, 0.5, 1 + 1e-7, 2.0, 10.0)]
    errors = _served(r, f, points)
    served = [e for e in errors.values() if e is not None]
    assert len(served) >= len(points) // 2
    assert max(served) <= 1e-12, max(served)


@pytest.mark.slow
def test_discrete_laplace_float_code_has_tanh_and_is_accurate_or_refuses():
    """The discrete Laplace pmfs' normaliser is tanh(1/(2b)): to_numpy raised "no stable float code for
    tanh" on its D_alpha and its KL divergence (alpha = 1)."""
    r = rdpsym.rdp(mechanisms.get("discrete_laplace"))
    assert r.kl is not None and r.kl.has(sp.tanh) or r.expr.has(sp.tanh)
    f = r.to_numpy(cache=False)
    points = [(a, {"b": b, "sensitivity": 1.0}) for b in (0.1, 1.0, 10.0, 1e3)
              for a in (1e-3, 0.1, 0.5, 1.0, 1 + 1e-7, 2.0, 10.0, 1e3)]
    errors = _served(r, f, points)
    served = {p: e for p, e in errors.items() if e is not None}
    assert max(served.values()) <= 1e-12, max(served.values())
    assert len(served) >= len(points) // 2, sorted(p for p, e in errors.items() if e is None)


@pytest.mark.parametrize("fn", [sp.tanh, sp.sinh, sp.cosh, sp.coth, sp.sech, sp.csch])
def test_hyperbolic_values_and_their_logs_have_float_code(fn):
    """Each hyperbolic function the engine may emit, and its logarithm, taken without forming the
    function (log tanh(1/(2b)) = -2 e^(-1/b) to every digit at small b, where numpy.log(numpy.tanh(.))
    returns 0)."""
    from rdpsym.compile.emitter import Emitter
    from rdpsym.compile.runtime import _log_cosh, _log_sinh, _log_tanh

    b = sp.Symbol("b", positive=True)
    em = Emitter({b: "b"})
    ns = {"numpy": np, "_log_tanh": _log_tanh, "_log_sinh": _log_sinh, "_log_cosh": _log_cosh}
    bs = np.array([3e-3, 0.02, 0.5, 1.0, 30.0, 1e4])
    arg = 1 / (2 * b)
    value = eval(em.value(fn(arg)), {**ns, "b": bs})  # noqa: S307 - code the emitter wrote
    log = eval(em.value(sp.log(fn(arg))), {**ns, "b": bs})  # noqa: S307
    with mpmath.workdps(500):
        f = {sp.tanh: mpmath.tanh, sp.sinh: mpmath.sinh, sp.cosh: mpmath.cosh, sp.coth: mpmath.coth,
             sp.sech: mpmath.sech, sp.csch: mpmath.csch}[fn]
        for bv, v, lv in zip(bs, value, log):
            x = 1 / (2 * mpmath.mpf(float(bv)))
            want = f(x)
            # 1/(2b) is rounded once: an error x f'(x) eps that no code avoids, on top of a few roundings
            slope = abs(x * mpmath.diff(f, x) / want)
            assert abs(mpmath.mpf(float(v)) - want) <= 2.3e-16 * (2 + slope) * abs(want), (fn, bv, v, want)
            lw = mpmath.log(want)
            assert abs(mpmath.mpf(float(lv)) - lw) <= 2.3e-16 * (4 * abs(lw) + slope), (fn, bv, lv, lw)


def _accurate_or_refused(r, f, points):
    """Every point of ``points`` ((alpha, values)) is refused (ArithmeticError) or within 1e-12 of the
    result's own 50-digit value; below the smallest normal float, 0 or a subnormal is the rounded value.
    Returns the number of points served."""
    served = 0
    with mpmath.workdps(50):
        for key, got, exact in _values(r, f, points):
            if got is None:
                continue  # refused: fails closed
            assert not np.isnan(got), key
            exact = mpmath.mpf(exact)
            assert abs(mpmath.mpf(got) - exact) <= 1e-12 * exact + mpmath.mpf(np.finfo(float).tiny), (key, got, exact)
            served += 1
    return served


def test_laplace_float_code_at_extreme_parameters_is_accurate_or_refuses():
    """The series in 1/b of Laplace's D_alpha has coefficients in sensitivity**k, the series around
    alpha = 1/2 powers of b up to b**15: where one the screen reads under- or overflows (sensitivity 1e-200
    squared, 1e30 to the 11th power, b = 1e20 to the 15th), the screen rejected the series and the closed
    form served unchecked: 1.1e-16 where D_2 = 1e-400 or 1e-200, 7.5029e-13 for 7.49999e-13, 0.18906978
    for 0.18906977. Such points are now in doubt: settled by the error estimate or refused."""
    r = rdpsym.rdp(mechanisms.laplace())
    f = r.to_numpy()
    points = [(a, {"b": b, "sensitivity": s}) for a, s, b in
              [(2.0, 1e-300, 1.0), (2.0, 1e-200, 1.0), (2.0, 1e-200, 1e300), (2.0, 1e200, 1e300), (2.0, 1e-100, 1.0),
               (2.0, 1e-20, 1.0), (2.0, 1e-20, 1e-300), (2.0, 3.0, 1.0), (1.5, 1e100, 1e200), (1.5, 1e29, 1e35),
               (1.5, 1e37, 1e40), (0.5 - 1e-9, 1e20, 1e20), (0.5 + 1e-9, 1e40, 1e40), (0.499999, 1e37, 1e40)]]
    _accurate_or_refused(r, f, points)
    # the ordinary points are served, not refused
    assert f(2.0, b=1.0, sensitivity=1e-100) == pytest.approx(1e-200, rel=1e-12)
    assert _accurate_or_refused(r, f, [(a, {"b": b, "sensitivity": 1.0}) for a in (0.3, 0.5 + 1e-9, 1.5, 10.0)
                                       for b in (0.1, 1.0, 10.0)]) == 12


def test_k_randomized_response_float_code_at_many_outcomes_is_accurate_or_refuses():
    """The series around epsilon = 0 of k-ary randomized response has coefficients in powers of k: at
    k = 1e50 or 1e100 they overflow, and the closed form served 1.5000090e-60 where D_1.5 = 1.5000075e-60."""
    r = rdpsym.rdp(mechanisms.get("k_randomized_response"))
    f = r.to_numpy()
    points = [(a, {"k": k, "epsilon": e}) for a, k, e in
              [(1.5, 1e100, 1e-8), (2.0, 1e100, 1e-8), (1.5, 1e50, 1e-5), (1e15, 1e20, 1e-20), (1.5, 1e20, 1e-3)]]
    _accurate_or_refused(r, f, points)
    assert _accurate_or_refused(r, f, [(a, {"k": k, "epsilon": e}) for a in (0.5, 2.0) for k in (3.0, 10.0)
                                       for e in (0.1, 1.0)]) == 8
