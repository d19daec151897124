"""The run-time helpers of the generated float code (rdpsym.compile.runtime), tested as a module.

The generated modules carry the text of these functions (runtime.source()); the tests here check the
functions themselves against mpmath and exact rationals, and that the generated text is theirs.
"""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

from rdpsym.compile import runtime as rt

N = 12  # Taylor terms, as in the generated code


def _taylor_of(f, a0, n=N):
    """Taylor coefficients of f at a0 (orders 0..n-1), 40 digits, as floats."""
    with mpmath.workdps(40):
        return np.array([float(c) for c in mpmath.taylor(f, a0, n - 1)])


def _series_in(coeffs, shape=()):
    """Coefficients along axis 0, broadcast to ``shape``."""
    return np.broadcast_to(np.asarray(coeffs, dtype=float).reshape((-1,) + (1,) * len(shape)),
                           (len(coeffs),) + shape).copy()


# -- log-sum-exp ------------------------------------------------------------------------------------
def test_lse_abs_does_not_overflow_and_matches_mpmath():
    logs = [np.array([1000.0, -1000.0, 5.0]), np.array([999.0, -1001.0, 5.0 + 1e-9])]
    signs = [1.0, -1.0]
    got = rt._lse_abs(logs, signs)
    with mpmath.workdps(50):
        for k in range(3):
            want = mpmath.log(abs(mpmath.exp(mpmath.mpf(logs[0][k])) - mpmath.exp(mpmath.mpf(logs[1][k]))))
            assert abs(got[k] - float(want)) <= 1e-8 * abs(float(want)) + 1e-12
    np.testing.assert_array_equal(rt._lse_sign(logs, signs), [1.0, 1.0, -1.0])  # e^5 < e^(5 + 1e-9)
    assert rt._lse_sign([0.0, 1.0], [1.0, -1.0]) == -1.0


def test_scaled_sum_groups_small_shapes_and_keeps_values():
    """Order-only and parameter-only terms are summed at their own shapes first: same numbers."""
    a = np.linspace(0.5, 3.0, 7)[:, None]
    b = np.linspace(-2.0, 2.0, 50)[None, :]
    logs = [a, 2.0 * a, np.float64(0.3), b + a, b]
    signs = [1.0, -1.0, 1.0, 0.5 + 0 * b, 1.0]
    m, t = rt._scaled_sum(logs, signs)
    direct = sum(np.asarray(s) * np.exp(np.asarray(l)) for l, s in zip(logs, signs))
    np.testing.assert_allclose(t * np.exp(m), direct, rtol=1e-13)


def test_scalars_and_infinite_logs():
    assert rt._lse_abs([np.float64(0.0), -np.inf], [1.0, 1.0]) == 0.0
    m, t = rt._scaled_sum([np.array(-np.inf)], [1.0])
    assert m == 0.0 and t == 0.0


# -- double-double arithmetic -----------------------------------------------------------------------
def test_double_double_product_and_sum_are_exact_to_106_bits():
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.5, 2.0, 2)
    # x*y - fl(x*y) in double-double: compare with the exact rational value
    prod = rt._dd_mul(rt._dd(x), rt._dd(y))
    total = rt._dd_add(prod, rt._dd(-x * y))
    exact = Fraction(x) * Fraction(y) - Fraction(x * y)
    assert Fraction(total[0]) + Fraction(total[1]) == exact  # the rounding error of x*y, exactly
    assert rt._dd_value(rt._dd_add(rt._dd(1.0), (1e-20, 0.0))) == 1.0


def test_double_double_value_falls_back_where_the_split_overflows():
    """Where the split overflowed (|a| > 1e300) the low part is NaN: the value is then the high part."""
    v = rt._dd_value((np.array([1e306, 2.0]), np.array([np.nan, 1e-20])))
    np.testing.assert_array_equal(v, [1e306, 2.0])
    assert rt._dd_value((1e306, float("nan"))) == 1e306


# -- Taylor series sum and truncation estimate ------------------------------------------------------
def test_series_sum_and_tail_estimate():
    coeffs = [1.0 / sp.factorial(k) for k in range(N)]
    coeffs = [float(c) for c in coeffs]
    v = np.array([1e-3, 0.1, 0.5])
    value, tail = rt._series(coeffs, v)
    # the estimate bounds the truncation error (within rounding)
    assert np.all(np.abs(value - np.exp(v)) <= tail + 4e-16 * np.exp(v))
    np.testing.assert_allclose(value[:2], np.exp(v[:2]), rtol=1e-15)
    assert tail[0] < 1e-30 and tail[2] < 1e-11
    # a series whose terms grow is never trusted
    value, tail = rt._series([1.0, 2.0, 4.0, 8.0, 16.0], np.array([1.0]))
    assert np.isinf(tail[0])


# -- Taylor-mode arithmetic -------------------------------------------------------------------------
@pytest.mark.parametrize("a0", [0.3, 1.0, 2.5])
def test_taylor_mode_exp_log_pow_div_mul(a0):
    unit = np.zeros(N)
    unit[1] = 1.0
    tau = rt._t_const(a0, np.zeros(N)) + unit  # the series of t at a0
    cases = [
        (rt._t_exp(tau), lambda t: mpmath.exp(t)),
        (rt._t_log(tau), lambda t: mpmath.log(t)),
        (rt._t_pow(tau, 1.5), lambda t: t ** mpmath.mpf(1.5)),
        (rt._t_div(rt._t_const(1.0, tau), tau), lambda t: 1 / t),
        (rt._t_mul(tau, rt._t_exp(tau)), lambda t: t * mpmath.exp(t)),
        (rt._t_lse([tau, 2 * tau], []), lambda t: mpmath.log(mpmath.exp(t) + mpmath.exp(2 * t))),
    ]
    for got, f in cases:
        np.testing.assert_allclose(got, _taylor_of(f, a0), rtol=1e-12, atol=1e-14)


def test_taylor_mode_is_vectorised_over_points():
    a0 = np.array([0.5, 1.0, 4.0])
    one = np.zeros((N,) + a0.shape)
    unit = np.zeros_like(one)
    unit[1] = 1.0
    tau = rt._t_const(a0 + rt._z(a0), one) + unit
    got = rt._t_log(tau)
    for k, a in enumerate(a0):
        np.testing.assert_allclose(got[:, k], _taylor_of(mpmath.log, float(a)), rtol=1e-12, atol=1e-14)
    assert rt._t_dot(_series_in([1.0, 2.0]), _series_in([3.0, 4.0])) == 11.0
    np.testing.assert_array_equal(rt._t_weights(_series_in([5.0, 5.0, 5.0])), [0.0, 5.0, 10.0])


# -- evaluation in blocks ---------------------------------------------------------------------------
def test_blockwise_equals_whole():
    memos = []

    def fn(a, b, _memo=None):
        memos.append(_memo)
        return np.log1p(a * b) + a

    a = np.linspace(0.0, 1.0, 600)[:, None]
    b = np.linspace(0.0, 2.0, 300)[None, :]
    whole = rt._whole(fn, (a, b), np.empty((600, 300)))
    blocks = rt._blockwise(fn, (a, b), np.empty((600, 300)))
    assert whole.size > 2 * rt._BLOCK
    np.testing.assert_array_equal(whole, blocks)
    # one memo for every block of a call (what does not depend on the block is computed once)
    blockwise = memos[1:]
    assert len(blockwise) > 1 and all(m is blockwise[0] for m in blockwise) and blockwise[0]["_full"][0].shape == (600, 1)
    assert rt._blockwise(fn, (np.float64(0.5), np.float64(1.0)), np.empty(())) == fn(0.5, 1.0)


def test_block_coefficients_are_computed_once_and_cut_to_the_block():
    calls = []

    def coef(a, b):
        calls.append(a.shape)
        return [a * 2.0, 0.0, a + b], 1.0 / b

    a = np.linspace(1.0, 2.0, 600)[:, None]
    b = np.linspace(1.0, 3.0, 300)[None, :]
    seen = []

    def fn(a_block, b_block, _memo=None):
        cs, v = rt._block_coef(_memo, coef, (a_block, b_block))
        seen.append((cs, v, a_block))
        return cs[0] + cs[2] * v

    out = rt._blockwise(fn, (a, b), np.empty((600, 300)))
    assert calls == [(600, 1)]  # once, on the whole column
    for cs, v, a_block in seen:
        np.testing.assert_array_equal(cs[0], a_block * 2.0)
        np.testing.assert_array_equal(cs[2], a_block + b)
        assert cs[1] == 0.0 and v.shape == (1, 300)
    np.testing.assert_array_equal(out, a * 2.0 + (a + b) * (1.0 / b))
    assert rt._block_coef(None, coef, (a[:5], b))[0][0].shape == (5, 1)  # outside _blockwise: on its inputs


def _grid_series(orientation, rng, r=40, c=70):
    """Random Taylor coefficients of a series on an r x c grid, with constant ones mixed in: columns
    (in alpha) with v = 1/b along a row, or rows (in the parameters) with v = alpha - c down a column."""
    if orientation == "coefficients down the rows":
        cs = [0.0, 0.0] + [rng.uniform(-2, 2, (r, 1)) / float(sp.factorial(k)) for k in range(2, N)]
        v = np.logspace(-3, 0.5, c)[None, :]
    else:
        cs = [1.0] + [rng.uniform(-2, 2, (1, c)) / float(sp.factorial(k)) for k in range(1, N)]
        v = np.logspace(-3, 0.5, r)[:, None]
    return [np.asarray(x, dtype=float) for x in cs], v, (r, c)


@pytest.mark.parametrize("orientation", ["coefficients down the rows", "coefficients along the columns"])
def test_series_on_a_grid_equals_the_series_per_point(orientation):
    """_series_outer (one matrix product over the grid) gives _series's value and truncation test at
    every point, in both orientations, with constant coefficients mixed in."""
    rng = np.random.default_rng(7)
    cs, v, shape = _grid_series(orientation, rng)
    mask = rng.uniform(size=shape) < 0.4
    at = np.flatnonzero(mask)
    got = rt._series_outer(cs, v, shape, at, 1e-15)
    assert got is not None
    value, converged = got
    gathered = rt._gather([*cs, v], shape, mask)
    want, tail = rt._series(gathered[:-1], gathered[-1])
    # the two sums differ in their order of summation only: within rounding of the sum of |terms|
    magnitude, _ = rt._series([np.abs(x) for x in gathered[:-1]], np.abs(gathered[-1]))
    assert np.all(np.abs(value - want) <= 4 * N * 2.2e-16 * magnitude)
    expected = tail <= 1e-15 * np.abs(want)
    assert converged.any() and not converged.all()  # both outcomes occur on this grid
    # the two tests are the same formula up to rounding: they may differ only where it is a tie
    differ = converged != expected
    assert np.all(np.abs(tail[differ] - 1e-15 * np.abs(want[differ])) <= 1e-12 * tail[differ])
    # not a grid of a column by a row: None (the caller gathers per point)
    assert rt._series_outer(cs, np.broadcast_to(v, shape), shape, at, 1e-15) is None


@pytest.mark.parametrize("orientation", ["coefficients down the rows", "coefficients along the columns"])
@pytest.mark.parametrize("where", ["a band", "scattered", "one point"])
def test_series_on_a_rectangle_equals_the_series_on_the_grid(orientation, where):
    """_series_rect (the rectangle of a block that holds the points, written in place) gives
    _series_outer's values and truncation test at every point of the mask and ok = False off it;
    the block's memo carries the coefficients prepared once (_outer_prep, _outer_rows)."""
    rng = np.random.default_rng(11)
    cs, v, shape = _grid_series(orientation, rng)
    r, c = shape
    mask = np.zeros(shape, dtype=bool)
    if where == "a band":
        mask[5:30, 20:50] = rng.uniform(size=(25, 30)) < 0.7
    elif where == "scattered":
        mask = rng.uniform(size=shape) < 0.3
    else:
        mask[17, 33] = True
    prep = rt._outer_prep(cs, v)
    rows, cols, value, ok = rt._series_rect(prep, mask, 1e-15, {})
    assert not mask[:rows.start].any() and not mask[rows.stop:].any()
    assert not mask[:, :cols.start].any() and not mask[:, cols.stop:].any()
    at = np.flatnonzero(mask)
    want, converged = rt._series_outer(cs, v, shape, at, 1e-15)
    inside = np.zeros(shape, dtype=bool)
    inside[rows, cols] = True
    got_ok = np.zeros(shape, dtype=bool)
    got_ok[rows, cols] = ok
    assert not (got_ok & ~mask).any()
    np.testing.assert_array_equal(got_ok.ravel()[at], converged & np.isfinite(want))
    got = np.full(shape, np.nan)
    got[rows, cols] = value
    np.testing.assert_allclose(got.ravel()[at], want, rtol=1e-13, atol=0)
    # a block of _blockwise: the rows of the prepared pieces are the block's
    block = rt._outer_rows(prep, slice(10, 20), r)
    sub = rt._series_rect(block, mask[10:20], 1e-15, None)
    if mask[10:20].any():
        rows_b, cols_b, value_b, _ = sub
        np.testing.assert_allclose(value_b, value[10 - rows.start + rows_b.start:10 - rows.start + rows_b.stop,
                                                  cols_b.start - cols.start:cols_b.stop - cols.start], rtol=1e-13)
    # no point, or not a grid: None
    assert rt._series_rect(prep, np.zeros(shape, dtype=bool), 1e-15) is None
    assert rt._series_rect(prep, mask.ravel(), 1e-15) is None


def test_take_equals_indexing_the_broadcast():
    rng = np.random.default_rng(3)
    shape = (30, 50)
    at = np.flatnonzero(rng.uniform(size=shape) < 0.3)
    for a in (rng.uniform(size=(30, 1)), rng.uniform(size=(1, 50)), rng.uniform(size=shape), np.float64(2.5),
              rng.uniform(size=50), np.array([[4.0]])):
        np.testing.assert_array_equal(rt._take(a, shape, at), np.broadcast_to(a, shape).ravel()[at])


# -- the text the generated modules carry -----------------------------------------------------------
def test_source_is_the_modules_functions_and_runs_alone():
    text = rt.source()
    namespace: dict = {}
    exec(compile("import numpy\n" + text, "<runtime>", "exec"), namespace)  # noqa: S102 - our own source
    for fn in rt._EMITTED:
        assert fn.__name__ in namespace
        assert namespace[fn.__name__].__code__.co_code == fn.__code__.co_code
    assert namespace["_BLOCK"] == rt._BLOCK
    # every helper the module defines is emitted (none is forgotten when one is added)
    defined = {n for n, v in vars(rt).items() if callable(v) and getattr(v, "__module__", "") == rt.__name__}
    assert defined - {f.__name__ for f in rt._EMITTED} - {f.__name__ for f in rt._OPTIONAL} == {"source"}
    assert "import" not in text.split("def ")[0]
    # the helpers copied only on demand are absent from a module that calls none of them, and a module
    # that calls one gets it with every helper it calls in turn, runnable alone
    assert not any(f"def {f.__name__}(" in text for f in rt._OPTIONAL)
    demand = rt.source("_dd_log_tanh(x)")
    namespace = {}
    exec(compile("import numpy\n" + demand, "<runtime>", "exec"), namespace)  # noqa: S102 - our own source
    for fn in (rt._dd_log_tanh, rt._dd_log1mexp, rt._dd_log1p, rt._dd_exp, rt._dd_sum):
        assert namespace[fn.__name__].__code__.co_code == fn.__code__.co_code
    x = (np.array([0.3, 2.0]), np.zeros(2))
    np.testing.assert_array_equal(namespace["_dd_log_tanh"](x)[0], rt._dd_log_tanh(x)[0])


def test_generated_code_carries_the_runtime_text():
    from rdpsym import mechanisms, rdp

    source = rdp(mechanisms.get("gaussian")).to_source()
    assert rt.source() in source


def test_two_term_log_sum_exp_keeps_digits_next_to_one():
    """log(a e^x - (a - 1) e^y) with the sum next to 1: the log1p form keeps the digits a plain log
    of the scaled sum loses (Laplace next to alpha = 1)."""
    a, x = 1 + 1e-12, 1e-13
    logs = [np.log(np.array([a])) + x, np.log(np.array([a - 1]))]
    got = rt._lse_abs(logs, [1.0, -1.0])
    with mpmath.workdps(50):
        am = mpmath.mpf(a)
        exact = mpmath.log(am * mpmath.exp(x) - (am - 1))
    assert abs(mpmath.mpf(float(got[0])) - exact) <= 1e-12 * abs(exact)  # a plain log: 1e-3
    assert rt._lse_sign(logs, [1.0, -1.0])[0] == 1.0
    assert rt._lse_sign(logs[::-1], [-1.0, 1.0])[0] == 1.0


def test_lse_ratio_matches_mpmath_in_every_regime():
    """log|t1 + t2| from l1 = log|t1| and d = log|t1/t2|: t1 dominating everywhere, t2 everywhere, and
    mixed (the masked form), with both signs of t2/t1, against 40-digit mpmath; non-finite logs go to
    the general form. d is the call's to overwrite: a copy goes in."""
    rng = np.random.default_rng(3)
    l1 = rng.uniform(-700, 700, 64)
    for d in (rng.uniform(0, 50, 64), rng.uniform(-50, -1e-3, 64), rng.uniform(-50, 50, 64)):
        for s in (1.0, -1.0, np.where(rng.random(64) < 0.5, 1.0, -1.0)):
            got = rt._lse_ratio(l1, d.copy(), s, lambda: None)
            with mpmath.workdps(40):
                for i in range(64):
                    si = s if isinstance(s, float) else s[i]
                    exact = mpmath.log(abs(mpmath.exp(l1[i]) + si * mpmath.exp(l1[i] - d[i])))
                    assert abs(got[i] - exact) <= 1e-14 * max(1.0, abs(exact)), (d[i], si)
    assert rt._lse_ratio(np.array([0.0, 1.0]), np.array([np.nan, 1.0]), 1.0, lambda: "general") == "general"
    assert rt._lse_ratio(np.array([np.inf, 1.0]), np.array([0.0, 1.0]), 1.0, lambda: "general") == "general"


def test_gather_equals_boolean_indexing_of_the_broadcast():
    """Columns (repeated by row counts), rows (taken at column indices), full arrays and constants."""
    rng = np.random.default_rng(4)
    for shape in [(7, 5), (9,), (3, 4, 5), (1, 6)]:
        mask = rng.random(shape) < 0.4
        values = [rng.random(shape[:1] + (1,) * (len(shape) - 1)), rng.random((1,) * (len(shape) - 1) + shape[-1:]),
                  rng.random(shape), 2.0, np.array([3.0]), rng.random(shape[1:])]
        for v, got in zip(values, rt._gather(values, shape, mask)):
            want = np.broadcast_to(v, shape)[mask]
            assert np.array_equal(np.broadcast_to(got, want.shape), want)


def test_lse_abs_groups_small_terms_with_their_weight():
    """_lse_abs sums the terms of small shapes first, as one term t e^m (t = 1/3 here); t was read as a
    sign +1 when it was a numpy.float64 (a float subclass): log(3 + ...) instead of log(1 + ...).
    Scalar parameters with an array of orders take this path."""
    alphas = np.array([1.5, 2.0, 1e3, 7.0, 3.0, 40.0])
    k, eps = np.float64(3.0), 1e-4
    got = rt._lse_abs([float(np.log(2.0)), np.log(k), alphas * eps, -eps * (alphas - 1)], [-1.0, 1.0, 1.0, 1.0])
    with mpmath.workdps(50):
        for a, g in zip(alphas, got):
            a, e = mpmath.mpf(a), mpmath.mpf(eps)
            exact = mpmath.log(-2 + 3 + mpmath.exp(a * e) + mpmath.exp(-e * (a - 1)))
            assert abs(mpmath.mpf(float(g)) - exact) <= 1e-15 * abs(exact), (a, g)
