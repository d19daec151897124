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


def _served(r, f, points):
    """{(alpha, values): relative error} of the float code at ``points``, None where it refused."""
    out = {}
    with mpmath.workdps(50):
        for a, values in points:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                try:
                    got = float(f(np.array([a]), **values)[0])
                except ArithmeticError:
                    got = None
            key = (a, tuple(sorted(values.items())))
            if got is None or np.isnan(got):
                out[key] = None
                continue
            exact = r.evaluate(_x(a), dps=50, **{k: _x(v) for k, v in values.items()})
            out[key] = float(abs(mpmath.mpf(got) - exact) / abs(exact))
    return out


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


def test_laplace_float_code_at_extreme_sensitivities_is_accurate_or_refuses():
    """The series in 1/b of Laplace's D_alpha has coefficients in sensitivity**k: at sensitivity 1e-200
    the leading one, alpha sensitivity**2/2, underflows to 0, its screen rejected the series, and the
    closed form (log of 1 + 1e-400) served unchecked: 1.1e-16 where D_2 = 1e-400. Points whose leading
    coefficient under- or overflows are now in doubt: settled by the error estimate or refused."""
    r = rdpsym.rdp(mechanisms.laplace())
    f = r.to_numpy()
    points = [(2.0, {"b": b, "sensitivity": s}) for s, b in
              [(1e-300, 1.0), (1e-200, 1.0), (1e-200, 1e300), (1e200, 1e300), (1e-100, 1.0), (1e-20, 1.0),
               (1e-20, 1e-300), (3.0, 1.0)]]
    with mpmath.workdps(50):
        for a, values in points:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                try:
                    got = float(f(np.array([a]), **values)[0])
                except ArithmeticError:
                    continue  # refused: fails closed
            assert not np.isnan(got), values
            exact = mpmath.mpf(r.evaluate(_x(a), dps=50, **{k: _x(v) for k, v in values.items()}))
            # below the smallest normal float the correctly rounded value is 0 or subnormal
            assert abs(mpmath.mpf(got) - exact) <= 1e-12 * exact + mpmath.mpf(np.finfo(float).tiny), (values, got, exact)
    # the ordinary points are served, not refused
    assert f(2.0, b=1.0, sensitivity=1e-100) == pytest.approx(1e-200, rel=1e-12)
    assert f(2.0, b=1.0, sensitivity=3.0) > 0
