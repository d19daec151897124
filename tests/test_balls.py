"""Sensitivity balls (issue 16): the RDP of a vector mechanism is the supremum over a ball of shift vectors
(Mironov 2017, Def. 4; l1 sensitivity for Laplace noise, l2 for Gaussian: Dwork & Roth 2014).

The divergences maximised here are built from the engine's one-dimensional derivations, summed over
coordinates (the product factorisation the multivariate engine will produce); the numbers the closed-form
suprema are compared with come from a brute-force mpmath maximisation over a grid of the ball, written out
in this file, independent of rdpsym's arguments.
"""

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import AdjacentFamily, Mechanism, ShiftBall, Status
from rdpsym.derive.adjacency import family_supremum
from rdpsym.derive.worst import NOT_SHOWN
from rdpsym.derive.balls import ball_supremum, numeric_ball_supremum
from rdpsym.derive.mechanism_rdp import worst_pairs
from rdpsym.mechanisms._densities import normal_pdf

a = rdpsym.alpha
x, x1, x2 = sp.symbols("x x1 x2", real=True)
t1, t2 = sp.symbols("t1 t2", real=True)
u = sp.Symbol("u", positive=True)
b, sigma, delta = sp.symbols("b sigma Delta", positive=True)
POINT = {a: sp.Rational(7, 3), b: sp.Rational(3, 2), sigma: sp.Rational(5, 4), delta: sp.Rational(4, 5)}


def laplace_pdf(z, m):
    return sp.exp(-sp.Abs(z - m) / b) / (2 * b)


@pytest.fixture(scope="module")
def one_d():
    """The engine's D_alpha for one coordinate shifted by u > 0: Laplace(b) and N(0, sigma^2)."""
    lap = rdpsym.renyi_divergence(laplace_pdf(x, 0), laplace_pdf(x, u), x, sp.S.Reals)
    gauss = rdpsym.renyi_divergence(normal_pdf(x, 0, sigma), normal_pdf(x, u, sigma), x, sp.S.Reals)
    assert lap.status is gauss.status is Status.CLOSED_FORM
    return lap, gauss


def boundary_grid(norm, R, n=96):
    """n points on the sphere ||t||_norm = R (angles k 2 pi / n, scaled), and the same at radii R/3, 2R/3."""
    pts = []
    for k in range(n):
        c, s = mpmath.cos(2 * mpmath.pi * k / n), mpmath.sin(2 * mpmath.pi * k / n)
        size = {1: abs(c) + abs(s), 2: mpmath.sqrt(c**2 + s**2), "oo": max(abs(c), abs(s))}[norm]
        for r in (R, 2 * R / 3, R / 3):
            pts.append((r * c / size, r * s / size))
    return pts


def brute_max(expr, norm, point=POINT):
    """max of expr over boundary_grid at the parameter point, evaluated at 40 digits."""
    e = expr.subs(point)
    R = mpmath.mpf(sp.N(delta.subs(point), 40))
    f = sp.lambdify((t1, t2), e, "mpmath")  # test code: the expression is ours, not user text
    return [mpmath.mpf(f(p, q)) for p, q in boundary_grid(norm, R)]


def assert_supremum(found, expr, norm):
    with mpmath.workdps(40):
        values = brute_max(expr, norm)
        top = mpmath.mpf(sp.N(found.value.subs(POINT), 40))
        tol = mpmath.mpf(10) ** -12 * max(1, abs(top))
        assert all(v <= top + tol for v in values), (top, max(values))
        assert abs(top - max(values)) <= tol, (top, max(values))


def test_gaussian_isotropic_and_correlated_on_the_l2_ball(one_d):
    _, gauss = one_d
    iso = gauss.expr.subs(u, t1) + gauss.expr.subs(u, t2)
    found = ball_supremum(iso, (t1, t2), 2, delta)
    assert found is not None and "isotropic" in found.argument
    assert sp.simplify(found.value - gauss.expr.subs(u, delta)) == 0  # alpha Delta^2 / (2 sigma^2)
    assert_supremum(found, iso, 2)
    # alpha/2 t^T Sigma^-1 t with the coefficient of the 1-D derivation at sigma = 1
    coef = sp.cancel(gauss.expr.subs(sigma, 1) / u**2)
    Sigma = sp.Matrix([[2, 1], [1, 2]])
    vec = sp.Matrix([t1, t2])
    corr = sp.expand(2 * coef * (vec.T * Sigma.inv() * vec)[0, 0] / 2)
    found = ball_supremum(corr, (t1, t2), 2, delta)
    assert found is not None and "lambda_max" in found.argument and "Rayleigh" in found.argument
    assert_supremum(found, corr, 2)
    # the maximiser is on the eigenvector of the smallest variance direction, t1 = -t2
    (v,) = found.at
    assert sp.simplify(v[0] + v[1]) == 0 and sp.simplify(sp.sqrt(v[0] ** 2 + v[1] ** 2) - delta) == 0
    # on the l_inf ball the same convex form peaks at a corner (Delta, -Delta)
    box = ball_supremum(corr, (t1, t2), sp.oo, delta)
    assert box is not None and box.at == ((delta, -delta),)
    assert_supremum(box, corr, "oo")


def test_laplace_product_on_l1_is_one_coordinate_at_the_radius_and_on_l_inf_d_times_it(one_d):
    lap, _ = one_d
    parts = [lap.expr, lap.kl, lap.max_divergence] + [p.value for p in lap.exceptional_points]
    for part in parts:
        product = part.subs(u, sp.Abs(t1)) + part.subs(u, sp.Abs(t2))
        diamond = ball_supremum(product, (t1, t2), 1, delta)
        assert diamond is not None, part
        assert sp.simplify(diamond.value - part.subs(u, delta)) == 0, (diamond.value, part)
        assert "convex" in diamond.argument and "Rockafellar" in diamond.argument
        assert set(diamond.at) == {(delta, 0), (0, delta)}
        assert_supremum(diamond, product, 1)
        box = ball_supremum(product, (t1, t2), sp.oo, delta)
        assert box is not None and sp.simplify(box.value - 2 * part.subs(u, delta)) == 0
        assert_supremum(box, product, "oo")
    # no argument for a separable non-quadratic function on the l2 ball: don't know
    assert ball_supremum(lap.expr.subs(u, sp.Abs(t1)) + lap.expr.subs(u, sp.Abs(t2)), (t1, t2), 2, delta) is None


def test_a_concave_function_on_the_l1_ball_is_not_claimed_and_the_numeric_search_shows_why():
    concave = sp.sqrt(sp.Abs(t1)) + sp.sqrt(sp.Abs(t2))
    assert ball_supremum(concave, (t1, t2), 1, delta) is None
    assert ball_supremum(sp.sin(t1) + t2**2, (t1, t2), 1, delta) is None
    with mpmath.workdps(30):
        found = numeric_ball_supremum(concave, (t1, t2), 1, delta, {"Delta": 1}, dps=20)
        vertex = mpmath.mpf(1)  # sqrt(1) + sqrt(0): what a vertex argument would claim
        assert found.value > vertex + mpmath.mpf("0.4")  # the diagonal: 2 sqrt(1/2) = 1.414...
        assert abs(found.value - mpmath.sqrt(2)) < mpmath.mpf(10) ** -6
    assert "lower estimate" in found.note


def test_the_numeric_supremum_is_a_lower_estimate_of_the_closed_form(one_d):
    _, gauss = one_d
    coef = sp.cancel(gauss.expr / u**2)
    expr = coef * (3 * t1**2 + 2 * t1 * t2 + t2**2)
    exact = ball_supremum(expr, (t1, t2), 2, delta)
    assert exact is not None
    with mpmath.workdps(30):
        found = numeric_ball_supremum(expr, (t1, t2), 2, delta, POINT, dps=20, refine=60)
        top = mpmath.mpf(sp.N(exact.value.subs(POINT), 30))
        assert found.value <= top * (1 + mpmath.mpf(10) ** -18)
        assert found.value >= top * (1 - mpmath.mpf(10) ** -8), (found.value, top)


def _summed(one, coordinates):
    """A derive_pair standing in for the multivariate engine: the product's divergence is the sum of the
    1-D results (u -> |t_i|), both directions equal by the reflection x -> -x of each coordinate."""
    from dataclasses import replace

    def derive(P, Q, label, params):
        def total(e):
            return None if e is None else sp.Add(*[e.subs(u, sp.Abs(t)) for t in coordinates])
        points = tuple(replace(p, value=total(p.value)) for p in one.exceptional_points)
        r = replace(one, expr=total(one.expr), kl=total(one.kl), max_divergence=total(one.max_divergence),
                    exceptional_points=points, label=f"D_alpha(P||Q) [{label}]")
        return [r], []
    return derive


def test_a_vector_family_takes_the_ball_supremum_and_names_its_worst_pairs(one_d):
    lap, _ = one_d
    P = laplace_pdf(x1, 0) * laplace_pdf(x2, 0)
    Q = laplace_pdf(x1, t1) * laplace_pdf(x2, t2)
    family = AdjacentFamily(P, Q, shift=(t1, t2), over=ShiftBall(norm=1, radius=delta), label="l1 neighbours")
    found = family_supremum(family, (x1, x2), sp.S.Reals**2, (), _summed(lap, (t1, t2)), 20.0)
    assert found.shown, found.reason
    (r,) = found.results
    assert sp.simplify(r.expr - lap.expr.subs(u, delta)) == 0 and r.status is Status.CLOSED_FORM
    assert not (r.expr.free_symbols | r.kl.free_symbols) & {t1, t2}
    assert {(m.P, m.Q) for m in found.members} == {(P, Q.subs({t1: delta, t2: 0})), (P, Q.subs({t1: 0, t2: delta}))}
    assert any("Mironov 2017, Def. 4" in s.detail and "Rockafellar" in s.detail for s in found.steps)


def test_a_vector_mechanism_fails_closed_until_the_engine_derives_it():
    SIGMA = rdpsym.parameter("sigma", typical=(0.5, 4.0), meaning="noise scale")
    DELTA = rdpsym.parameter("Delta", typical=(0.5, 2.0), meaning="l2 sensitivity")
    s, d = SIGMA.symbol, DELTA.symbol
    family = AdjacentFamily(normal_pdf(x1, 0, s) * normal_pdf(x2, 0, s), normal_pdf(x1, t1, s) * normal_pdf(x2, t2, s),
                            shift=(t1, t2), over=ShiftBall(2, d))
    mech = Mechanism("vector_gaussian", (x1, x2), sp.S.Reals**2, (family,), (SIGMA, DELTA))
    r = rdpsym.rdp(mech, step_seconds=10)
    if r.status is Status.CLOSED_FORM:  # the multivariate engine has landed: alpha Delta^2 / (2 sigma^2)
        with mpmath.workdps(30):
            got = r.evaluate(3, dps=30, sigma=2, Delta=sp.Rational(1, 2))
            assert abs(got - mpmath.mpf(3) / 32) < mpmath.mpf(10) ** -25
    else:
        assert r.status in (Status.NUMERIC_ONLY, Status.FAILED) and r.expr is None
        assert NOT_SHOWN in r.reason and "not derived" in r.reason, r.reason
        with pytest.raises(ValueError, match=NOT_SHOWN):
            worst_pairs(mech)


def test_family_helpers_for_a_ball():
    family = AdjacentFamily(normal_pdf(x1, 0, sigma), normal_pdf(x1, t1, sigma) * sp.exp(-t2**2) / sp.exp(-t2**2),
                            shift=(t1, t2), over=ShiftBall(sp.oo, delta))
    assert family.is_vector and family.shift_symbols == (t1, t2)
    assert family.scaled(3).over == ShiftBall(sp.oo, 3 * delta)
    assert family.subs({delta: 2}).over.radius == 2
    with pytest.raises(ValueError) as err:
        family.member((delta, 2 * delta))
    assert err.value.argument == "value"
    with pytest.raises(ValueError) as err:
        family.ends
    assert err.value.argument == "family"
    points = family.shifts({"Delta": 1}, interior=2)
    assert (1, 0) in points and (1, 1) in points and len(points) >= 10


@pytest.mark.parametrize("make, argument", [
    (lambda: ShiftBall(3, 1), "norm"),
    (lambda: ShiftBall(True, 1), "norm"),
    (lambda: ShiftBall(2, -1), "radius"),
    (lambda: ShiftBall(2, sp.Symbol("r", real=True)), "radius"),   # sign not known
    (lambda: ShiftBall(2, sp.oo), "radius"),
    (lambda: ball_supremum("t1**2", (t1, t2), 2, 1), "expr"),     # text, never parsed
    (lambda: ball_supremum(t1**2, (t1, t1), 2, 1), "shifts"),
    (lambda: ball_supremum(t1**2, (t1, t2), 2, t1), "radius"),
    (lambda: ball_supremum(t1**2, (t1, t2), 0, 1), "norm"),
    (lambda: AdjacentFamily(x1 + t1, x1, shift=(t1, t2), over=sp.Interval(-1, 1)), "over"),
    (lambda: AdjacentFamily(x1 + t1, x1, shift=t1, over=ShiftBall(2, 1)), "over"),
    (lambda: AdjacentFamily(x1 + t1, x1, shift=(t1, sp.Symbol("s", positive=True)), over=ShiftBall(2, 1)), "shift"),
    (lambda: AdjacentFamily(x1 + t1, x1, shift=(t1, t1), over=ShiftBall(2, 1)), "shift"),
    (lambda: AdjacentFamily(x1 + t1, x1, shift=(), over=ShiftBall(2, 1)), "shift"),
    (lambda: AdjacentFamily(x1, x1, shift=(t1, t2), over=ShiftBall(2, 1)), "shift"),
])
def test_bad_balls_are_named(make, argument):
    with pytest.raises(ValueError) as err:
        make()
    assert err.value.argument == argument, str(err.value)
