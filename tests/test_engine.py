"""Unit tests of the derivation engine on densities that are not built-in mechanisms."""

import mpmath
import pytest
import sympy as sp

from rdpsym import DivergenceResult, Status, alpha, renyi_divergence
from rdpsym.derive.checks import DensityError
from rdpsym.derive.pieces import split_support
from rdpsym.numeric import numeric_divergence

x = sp.Symbol("x", real=True)
n = sp.Symbol("n", integer=True)
l1, l2 = sp.symbols("l1 l2", positive=True)


def close(a, b, digits=25):
    with mpmath.workdps(digits + 10):
        return abs(mpmath.mpf(a) - mpmath.mpf(b)) <= mpmath.mpf(10) ** -digits * max(1, abs(mpmath.mpf(b)))


def test_exponential_rates_conditions_are_the_natural_parameter_space():
    r = renyi_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo), cache=False)
    assert r.status is Status.CLOSED_FORM
    # finite iff alpha*l1 + (1-alpha)*l2 > 0: here l1 = 1, l2 = 3 gives alpha < 3/2
    assert r.at(sp.Rational(7, 5), l1=1, l2=3).is_finite
    assert r.at(2, l1=1, l2=3) == sp.oo
    assert r.at(sp.Rational(3, 2), l1=1, l2=3) == sp.oo
    with mpmath.workdps(40):
        for a in (sp.Rational(1, 3), sp.Rational(6, 5), 3):
            num = numeric_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo), a, {"l1": 2, "l2": 1}, dps=40)
            assert num.converged, num.detail
            assert close(r.evaluate(a, dps=40, l1=2, l2=1), num.value)


def test_poisson_sum_in_closed_form():
    P = l1**n * sp.exp(-l1) / sp.factorial(n)
    Q = l2**n * sp.exp(-l2) / sp.factorial(n)
    r = renyi_divergence(P, Q, n, sp.S.Naturals0, cache=False)
    assert r.status is Status.CLOSED_FORM
    assert not r.expr.has(sp.Sum)
    for a in (sp.Rational(1, 2), 3):
        num = numeric_divergence(P, Q, n, sp.S.Naturals0, a, {"l1": 3, "l2": 1}, dps=30)
        assert num.converged, num.detail
        assert close(r.evaluate(a, dps=30, l1=3, l2=1), num.value)


def test_disjoint_mass_gives_infinity_for_alpha_at_least_one():
    P = sp.Piecewise((1, (x > 0) & (x < 1)), (0, True))
    Q = sp.Piecewise((sp.Rational(1, 2), (x > sp.Rational(1, 2)) & (x < sp.Rational(5, 2))), (0, True))
    r = renyi_divergence(P, Q, x, sp.S.Reals, cache=False)
    assert r.at(2) == sp.oo and r.kl == sp.oo and r.max_divergence == sp.oo
    # below 1 the divergence is finite: overlap (1/2, 1) has P = 1, Q = 1/2
    expected = sp.log(sp.Rational(1, 2) * sp.Rational(1, 2) ** (1 - sp.Rational(1, 2))) / (sp.Rational(1, 2) - 1)
    assert sp.simplify(r.at(sp.Rational(1, 2)) - expected) == 0


def test_split_support_orders_kinks_with_assumptions():
    b, s = sp.symbols("b s", positive=True)
    pieces = split_support(sp.exp(-sp.Abs(x) / b), sp.exp(-sp.Abs(x - s) / b), x, sp.S.Reals)
    assert [(p.lo, p.hi) for p in pieces] == [(-sp.oo, 0), (0, s), (s, sp.oo)]


def test_unordered_kinks_fall_back_honestly():
    b = sp.Symbol("b", positive=True)
    m = sp.Symbol("m", real=True)
    # 0 and m**2 - 1 cannot be ordered, and the sign of m**2 - 1 is no linear case split (a location m
    # alone is split into m > 0, m < 0, m = 0: tests/test_domains.py)
    c = m**2 - 1
    r = renyi_divergence(sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - c) / b) / (2 * b), x, sp.S.Reals, cache=False)
    assert r.status is Status.NUMERIC_ONLY
    assert "order" in r.reason and r.expr is None


def test_density_that_does_not_integrate_to_one_is_an_error():
    with pytest.raises(DensityError, match="P: does not integrate to 1"):
        renyi_divergence(2 * l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo), cache=False)


def test_negative_density_is_an_error():
    with pytest.raises(DensityError, match="negative"):
        # integrates to 1 on [0, 1] but is negative near x = 1
        renyi_divergence(sp.Rational(5, 2) - 3 * x, sp.Integer(1), x, sp.Interval(0, 1), cache=False)


@pytest.mark.parametrize(
    "args, match",
    [
        ((1, sp.Integer(1), x, sp.S.Reals), "P: must be a sympy expression"),
        ((sp.Integer(1), sp.Integer(1), "x", sp.S.Reals), "x: must be a sympy Symbol"),
        ((sp.Integer(1), sp.Integer(1), x, [0, 1]), "support: must be a sympy Set"),
        ((sp.exp(-sp.Symbol("c") * x), sp.Integer(1), x, sp.Interval(0, 1)), "parameter c: needs assumptions"),
        ((sp.Integer(1), sp.Integer(1), sp.Symbol("y"), sp.Interval(0, 1)), "must be declared real"),
    ],
)
def test_bad_input_names_the_argument(args, match):
    with pytest.raises((TypeError, ValueError), match=match):
        renyi_divergence(*args, cache=False)


@pytest.mark.unit
def test_alpha_must_be_positive():
    """Refusing an order needs no derivation: a result holding the exponential rates' published divergence
    (van Erven and Harremoes 2014, Sec. II-E), built directly."""
    a = alpha
    r = DivergenceResult(expr=sp.log(l1 / l2) + sp.log(l1 / (a * l1 + (1 - a) * l2)) / (a - 1),
                         status=Status.CLOSED_FORM, kl=sp.log(l1 / l2) + l2 / l1 - 1, max_divergence=sp.oo,
                         symbols=(l1, l2))
    with pytest.raises(ValueError, match="alpha must be > 0"):
        r.at(0, l1=1, l2=1)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        r.evaluate(-1, l1=1, l2=1)


def test_cache_returns_the_same_result(tmp_path, monkeypatch):
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    from rdpsym.derive.cache import clear_cache

    P, Q = l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x)
    first = renyi_divergence(P, Q, x, sp.Interval(0, sp.oo))
    assert list(tmp_path.glob("derivation-*.rdpsym"))
    second = renyi_divergence(P, Q, x, sp.Interval(0, sp.oo))
    assert second.expr == first.expr and second.conditions == first.conditions
    assert clear_cache() == 1
    monkeypatch.setenv("RDPSYM_NO_CACHE", "1")
    renyi_divergence(P, Q, x, sp.Interval(0, sp.oo))
    assert not list(tmp_path.glob("derivation-*.rdpsym"))


def test_time_limit_gives_an_honest_status():
    # Cauchy location pair: no closed form within a 1 s step limit
    P = 1 / (sp.pi * (1 + x**2))
    Q = 1 / (sp.pi * (1 + (x - 1) ** 2))
    r = renyi_divergence(P, Q, x, sp.S.Reals, step_seconds=1, cache=False, check_density=False)
    assert r.status in (Status.NUMERIC_ONLY, Status.CLOSED_FORM)
    if r.status is Status.NUMERIC_ONLY:
        assert r.expr is None and r.reason


def test_integral_is_never_a_closed_form():
    r = renyi_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo))
    assert r.status is Status.CLOSED_FORM and not r.expr.has(sp.Integral)


# --------------------------------------------------------------------------------------------------
# generality techniques (issue 2): decomposition, changes of variable, finite sums, KL as a limit
# --------------------------------------------------------------------------------------------------
def test_decompose_keeps_basis_functions_under_alpha_dependent_denominators():
    from rdpsym.derive.template import decompose

    b, v, c = sp.symbols("b v c", positive=True)
    # sympy's expand alone turns exp(-x/b)/(v + 1) into 1/(v*exp(x/b) + exp(x/b)), and c/((v+1)x) into
    # c/(v*x + x): the basis functions must stay exp(-x/b) and 1/x
    c0, coeffs = decompose(-sp.exp(-x / b) / (v + 1) - c / ((v + 1) * x) + 3 * sp.log(x), x)
    assert set(coeffs) == {sp.exp(-x / b), 1 / x, sp.log(x)}
    assert sp.simplify(coeffs[sp.exp(-x / b)] + 1 / (v + 1)) == 0
    assert sp.simplify(coeffs[1 / x] + c / (v + 1)) == 0 and c0 == 0


def test_exponential_change_of_variable_gives_a_gamma_integral():
    from rdpsym.derive.template import integrate_template

    b, k1, k2 = sp.symbols("b k1 k2", positive=True)
    # ∫ exp(-k1 x - k2 exp(-x/b)) dx over R = b Gamma(b k1) / k2**(b k1)   (u = exp(-x/b))
    res = integrate_template({x: -k1, sp.exp(-x / b): -k2}, x, -sp.oo, sp.oo, False, 20)
    assert len(res.cases) == 1
    value = res.cases[0][0]
    expected = b * sp.gamma(b * k1) / k2 ** (b * k1)
    point = {b: sp.Rational(3, 2), k1: sp.Rational(2, 3), k2: sp.Rational(5, 4)}
    assert close(sp.N(value.subs(point), 40), sp.N(expected.subs(point), 40), 30)
    # and the wrong sign diverges: no case is returned
    assert not integrate_template({x: -k1, sp.exp(-x / b): k2}, x, -sp.oo, sp.oo, False, 20).cases


def test_finite_sum_is_finite_for_every_ratio():
    from rdpsym.derive.template import _finite_range_sum

    N = sp.Symbol("N", integer=True, positive=True)
    m = sp.Dummy("m", integer=True, nonnegative=True)
    r = sp.Dummy("r", positive=True)
    value, cond = _finite_range_sum(sp.binomial(N, m) * r**m, m, N, [r])
    # sympy proves (1 + r)**N only for r <= 1; the reflected sum covers r >= 1: no condition remains
    assert cond is sp.true
    for rv in (sp.Rational(1, 3), 4):
        assert sp.simplify(value.subs({r: rv, N: 5}) - (1 + rv) ** 5) == 0


def test_finite_sum_without_full_cover_is_not_accepted():
    from rdpsym.derive.template import _finite_range_sum

    N = sp.Symbol("N", integer=True, positive=True)
    m = sp.Dummy("m", integer=True, nonnegative=True)
    r, s = sp.Dummy("r", positive=True), sp.Dummy("s", positive=True)
    # two ratios: the cover cannot be decided, so no formula is returned (the function's contract is
    # (value, True) or None, so checking the condition alone could never fail)
    got = _finite_range_sum(sp.binomial(N, m) * r**m * sp.binomial(N, m) * s**m, m, N, [r, s])
    assert got is None, got


@pytest.mark.slow
def test_binomial_pair_closed_form_with_kl_as_left_limit():
    nn = sp.Symbol("nn", integer=True, positive=True)
    k = sp.Symbol("k", integer=True)
    p1, p2 = sp.symbols("p1 p2", positive=True)
    P = sp.binomial(nn, k) * p1**k * (1 - p1) ** (nn - k)
    Q = sp.binomial(nn, k) * p2**k * (1 - p2) ** (nn - k)
    r = renyi_divergence(P, Q, k, sp.Range(0, nn + 1), cache=False)
    assert r.status is Status.CLOSED_FORM and r.kl is not None
    vals = {"nn": 4, "p1": sp.Rational(1, 3), "p2": sp.Rational(3, 4)}
    for a in (sp.Rational(1, 2), 3, 1):
        num = numeric_divergence(P, Q, k, sp.Range(0, nn + 1), a, vals, dps=30)
        assert num.converged, num.detail
        assert close(r.evaluate(a, dps=30, **vals), num.value)


def test_kl_from_below_rejects_a_form_that_is_not_log_z_over_alpha_minus_one():
    from rdpsym.derive.engine import DerivationError
    from rdpsym.derive.special_orders import kl_from_below as _kl_from_below

    q = sp.Symbol("q", positive=True)
    good = sp.log(q**alpha * (1 - q) ** (1 - alpha) + (1 - q) ** alpha * q ** (1 - alpha)) / (alpha - 1)
    pts = [{q: sp.Rational(1, 3)}, {q: sp.Rational(1, 5)}]
    kl = _kl_from_below(good, pts, 10)
    expected = (2 * q - 1) * sp.log(q / (1 - q))
    assert all(close(sp.N(kl.subs(p), 40), sp.N(expected.subs(p), 40), 30) for p in pts)
    with pytest.raises(DerivationError):
        _kl_from_below(good + 1, pts, 10)  # log Z(1) != 0: not a divergence form


def test_gathering_exponentials_gives_the_mixture_form():
    """log of the Laplace piece integrals, gathered by exponentials, is Mironov's Table II form."""
    from rdpsym.derive.forms import collect_exponentials as _collect_exponentials

    b, s, t = sp.symbols("b s t", positive=True)
    # ∫ over (-oo, 0), (0, s), (s, oo) of P^(1+t) Q^(-t) for P, Q Laplace(0, b), Laplace(s, b)
    Z = (sp.exp(s * t / b) / 2 + sp.exp(-s / b) * sp.exp(-s * t / b) / 2
         + (b / (2 * t + 1) - b * sp.exp(-s * (2 * t + 1) / b) / (2 * t + 1)) * sp.exp(s * t / b) / (2 * b))
    gathered = _collect_exponentials(sp.log(Z)).subs(t, alpha - 1)
    mixture = sp.log(alpha / (2 * alpha - 1) * sp.exp((alpha - 1) * s / b)
                     + (alpha - 1) / (2 * alpha - 1) * sp.exp(-alpha * s / b))
    assert gathered == mixture  # structurally: two exponentials with factored coefficients
    assert sp.simplify(sp.log(Z) - _collect_exponentials(sp.log(Z))) == 0


def test_laplace_comes_out_in_the_definition_shape():
    b, s = sp.symbols("b s", positive=True)
    r = renyi_divergence(sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - s) / b) / (2 * b), x, sp.S.Reals, cache=False)
    # (1/(alpha-1)) log of a sum of two exponentials (Mironov 2017, Table II's shape), checked equal
    inner = r.expr * (alpha - 1)
    assert isinstance(inner, sp.log) and len(sp.Add.make_args(inner.args[0])) == 2
    assert len(inner.atoms(sp.exp)) == 2


def test_parameters_named_like_the_regime_variables_are_their_own_symbols():
    """The regimes write alpha = 1 + t and alpha = 1/(1 + v) in symbols of their own: a user's
    parameters named t and v are other symbols (they used to be the same, and the derivation failed)."""
    import mpmath

    from rdpsym import numeric_divergence

    x = sp.Symbol("x", real=True)
    t, v = sp.symbols("t v", positive=True)
    P, Q = sp.exp(-sp.Abs(x) / t) / (2 * t), sp.exp(-sp.Abs(x - v) / t) / (2 * t)
    result = renyi_divergence(P, Q, x, sp.S.Reals, cache=False)
    assert result.is_closed_form and result.expr.free_symbols == {alpha, t, v}
    with mpmath.workdps(30):
        for a in (sp.Rational(1, 2), 3):
            exact = result.evaluate(a, dps=25, t=2, v=1)
            assert mpmath.almosteq(exact, numeric_divergence(P, Q, x, sp.S.Reals, a, {"t": 2, "v": 1}, dps=30).value,
                                   rel_eps=mpmath.mpf(10) ** -20)
