"""rdpsym.verify (rdpsym.verification): closed forms against independent numerics.

* Built-ins verify (no false alarms near alpha = 1, at alpha = 1000, at tiny and huge scales).
* Mutations of the built-ins' formulas (perturbed constant, swapped parameters, wrong sign, wrong
  factor in alpha, wrong KL / D_inf / exceptional value) are rejected as ``mismatch``.
* Heavy-tailed (Cauchy, Pareto, Lévy) and kinked (Laplace, uniform) pairs agree with their published
  closed forms to >= 30 digits at dps = 50 over varying parameters (test_numeric checks fixed points).

Published closed forms used here (natural logs): Cauchy location family I_alpha = P_{alpha-1}(1 +
mu^2/(2 g^2)), KL = log(1 + mu^2/(4 g^2)) (Chyzak and Nielsen 2019, arXiv:1905.10965); exponential
families (Pareto in log x, Lévy in 1/x): D = [a log r1 + (1-a) log r2 - log(a r1 + (1-a) r2)]/(a-1),
finite iff a r1 + (1-a) r2 > 0 (Liese and Vajda 1987; van Erven and Harremoës 2014, Sec. II-E).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import mpmath
import pytest
import sympy as sp
from _helpers import coin_mechanism_file
from click.testing import CliRunner

import rdpsym
from rdpsym import alpha as A
from rdpsym import mechanisms
from rdpsym.cli import main
from rdpsym.derive.result import DivergenceResult, ExceptionalPoint, Status
from rdpsym.verification import Point, VerificationStatus, verification_points, verify

VERIFIED, MISMATCH, INCONCLUSIVE = VerificationStatus.VERIFIED, VerificationStatus.MISMATCH, VerificationStatus.INCONCLUSIVE
x = sp.Symbol("x", real=True)


def pts(mech_or_names, *alphas_and_values, regime="test"):
    return [Point(sp.S(a), tuple(sorted((k, sp.S(v)) for k, v in vals.items())), regime) for a, vals in alphas_and_values]


# --------------------------------------------------------------------------------------------------
# built-ins: no false alarms
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["randomized_response", "laplace", "gaussian"])
def test_builtins_verify_quick(table_ii, name):
    mech, result = table_ii[name]
    report = verify(result, mechanism=mech, level="quick")
    assert report.status is VERIFIED, report.describe()
    regimes = {c.point.regime for c in report.checks}
    assert {"alpha -> 1", "large alpha", "alpha in (0,1)", "alpha = 1 (KL)", "alpha = oo"} <= regimes
    assert report.min_digits >= 18
    # the result carries the record; the original result is untouched (frozen, copied)
    assert report.result.provenance.verifications[-1].status is VERIFIED
    assert report.result.provenance.verifications[-1].result is None
    assert report.result.expr == result.expr and len(result.provenance.verifications) == 0
    assert "verification: verified" in report.result.provenance.describe()


def test_no_false_alarms_at_cancellation_and_overflow(table_ii):
    """alpha -> 1 (1/(alpha-1) log(1 + O(alpha-1))), alpha = 1000 with tiny scales (exp(2000/b))."""
    for name, scale in (("laplace", "b"), ("gaussian", "sigma")):
        mech, result = table_ii[name]
        points = pts(mech,
                     (1 + sp.Rational(1, 10**9), {scale: 1, "sensitivity": 1}),
                     (1 - sp.Rational(1, 10**9), {scale: 1, "sensitivity": 1}),
                     (1000, {scale: sp.Rational(1, 20), "sensitivity": 1}),
                     (1000, {scale: 100, "sensitivity": 1}))
        report = verify(result, mechanism=mech, points=points)
        assert report.status is VERIFIED, report.describe()
        assert min(c.digits for c in report.checks) >= 25


def test_laplace_exceptional_point_and_neighbours(table_ii):
    mech, result = table_ii["laplace"]
    h = sp.Rational(1, 2)
    report = verify(result, mechanism=mech, points=pts(mech, (h, {"b": 2, "sensitivity": 1}),
                                                       (h + sp.Rational(1, 10**8), {"b": 2, "sensitivity": 1})))
    assert report.status is VERIFIED, report.describe()


def test_verify_mechanism_derives_and_finds_registered(table_ii):
    report = verify(mechanisms.randomized_response(), level="quick")
    assert report.status is VERIFIED and report.target == "mechanism randomized_response"
    # an rdp result of a built-in finds its mechanism through the provenance
    _, result = table_ii["randomized_response"]
    assert verify(result, level="quick").status is VERIFIED


def test_points_are_deterministic_and_seeded():
    mech = mechanisms.laplace()
    kw = dict(conditions=sp.true, exceptional=[sp.Rational(1, 2)])
    a = verification_points(mech.parameters, seed=3, **kw)
    assert a == verification_points(mech.parameters, seed=3, **kw)
    assert a != verification_points(mech.parameters, seed=4, **kw)
    regimes = {p.regime for p in a}
    for want in ("typical", "alpha -> 1", "alpha in (0,1)", "large alpha", "exceptional point",
                 "near exceptional point", "tiny scale (b)", "huge scale (b)", "alpha = oo"):
        assert want in regimes, regimes
    assert max(p.alpha for p in a if p.alpha != sp.oo) == 1000
    # every value lies in its parameter's domain
    for p in a:
        for name, v in p.values:
            assert mech.parameter_by_name[name].domain.contains(v) is sp.true


def test_finiteness_edges_inside_and_outside():
    a1, a2 = sp.symbols("a1 a2", positive=True)
    cond = A * a1 + (1 - A) * a2 > 0
    from rdpsym.verification.points import infer_parameters

    params = infer_parameters([a1, a2])
    points = verification_points(params, parameter_points=[{"a1": 1, "a2": 3}], conditions=cond, level="quick")
    edges = {p.regime: p.alpha for p in points if p.regime.startswith("finiteness edge")}
    assert set(edges) == {"finiteness edge (inside)", "finiteness edge (outside)"}
    assert edges["finiteness edge (inside)"] < sp.Rational(3, 2) < edges["finiteness edge (outside)"]


# --------------------------------------------------------------------------------------------------
# mutations are rejected
# --------------------------------------------------------------------------------------------------
def _flip_first_exponent(expr):
    """Negate the exponent of the first exp(...) or symbolic power: a wrong sign."""
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.exp) and node.free_symbols:
            return expr.xreplace({node: sp.exp(-node.args[0])})
        if isinstance(node, sp.Pow) and node.exp not in (1, -1):
            return expr.xreplace({node: sp.Pow(node.base, -node.exp)})
    raise AssertionError(f"no exponent to flip in {expr}")


def _mutations(name, result):
    s = {p.name: p for p in result.symbols}
    e = result.expr
    out = {
        "perturbed constant (1e-12 relative)": replace(result, expr=e * (1 + sp.Rational(1, 10**12))),
        "wrong factor in alpha (alpha -> 2 alpha)": replace(result, expr=e.subs(A, 2 * A)),
        "slightly wrong alpha (alpha -> alpha (1 + 1e-9))": replace(result, expr=e.subs(A, A * (1 + sp.Rational(1, 10**9)))),
        "wrong sign in an exponent": replace(result, expr=_flip_first_exponent(e)),
        "wrong KL": replace(result, kl=result.kl * 2),
    }
    if len(s) == 2:
        u, v = (s[k] for k in sorted(s))
        out["swapped parameters"] = replace(result, expr=e.xreplace({u: v, v: u}))
    else:
        out["p -> 1 - p/2"] = replace(result, expr=e.subs(s["p"], 1 - s["p"] / 2))
    if result.max_divergence != sp.oo:
        out["wrong D_inf"] = replace(result, max_divergence=result.max_divergence + sp.Rational(1, 10**10))
    else:
        out["finite D_inf"] = replace(result, max_divergence=sp.Integer(10**6))
    if result.exceptional_points:
        pt = result.exceptional_points[0]
        out["wrong exceptional value"] = replace(result, exceptional_points=(ExceptionalPoint(pt.alpha, pt.value * (1 + sp.Rational(1, 10**8))),))
    return out


@pytest.mark.parametrize("name", ["randomized_response", "laplace", "gaussian"])
def test_mutations_are_rejected(table_ii, name):
    mech, result = table_ii[name]
    for label, mutant in _mutations(name, result).items():
        assert mutant.expr is not None
        report = verify(mutant, mechanism=mech, level="quick", fail_fast=True)
        assert report.status is MISMATCH, (label, report.describe())
        worst = report.worst
        assert worst.status == "mismatch" and worst.rel_diff > 0, label
        assert "worst:" in str(report)


@pytest.mark.parametrize("name", ["randomized_response", "laplace", "gaussian"])
def test_compiled_closed_form_equals_evaluate(table_ii, name):
    """verify() evaluates the closed form through a compiled mpmath function at general orders:
    it gives result.evaluate()'s value (sympy evalf, adaptive precision) to the working precision,
    including near alpha = 1 (cancellation) and at alpha = 1000 (overflow), and routes special
    orders (1, oo, exceptional points) to evaluate() itself."""
    from rdpsym.verification.checks import _closed_value

    mech, result = table_ii[name]
    points = verification_points(mech.parameters, conditions=result.conditions,
                                 exceptional=[p.alpha for p in result.exceptional_points], level="quick")
    wp = 40
    for point in points:
        values = point.value_dict
        try:
            ref = result.evaluate(point.alpha, dps=wp, **values)
        except (ArithmeticError, ValueError):
            continue
        got = _closed_value(result, point.alpha, wp, values)
        with mpmath.workdps(wp):
            if ref == mpmath.inf:
                assert got == mpmath.inf, point.describe()
            else:
                assert abs(got - ref) <= mpmath.mpf(10) ** (-(wp - 10)) * max(abs(ref), 1), (point.describe(), got, ref)


def test_bound_results_check_direction(table_ii):
    mech, result = table_ii["gaussian"]
    p = pts(mech, (2, {"sigma": 2, "sensitivity": 1}), (5, {"sigma": 1, "sensitivity": 1}))
    above = replace(result, status=Status.BOUND, expr=result.expr * 2)
    below = replace(result, status=Status.BOUND, expr=result.expr / 2)
    assert verify(above, mechanism=mech, points=p).status is VERIFIED
    assert verify(below, mechanism=mech, points=p).status is MISMATCH


def test_both_directions_are_checked():
    """A mechanism whose reverse direction is larger: a result holding only D(P||Q) is a mismatch."""
    lam = rdpsym.parameter("lam", typical=(0.5, 3.0))
    l = lam.symbol
    P, Q = l * sp.exp(-l * x), 2 * l * sp.exp(-2 * l * x)  # exponential rates l and 2l
    mech = rdpsym.Mechanism("expo", x, sp.Interval(0, sp.oo), (rdpsym.AdjacentPair(P, Q),), (lam,))
    one = rdpsym.renyi_divergence(Q, P, x, sp.Interval(0, sp.oo), params=(lam,))
    assert one.status is Status.CLOSED_FORM
    p = pts(mech, (sp.Rational(1, 2), {"lam": 1}), (sp.Rational(3, 2), {"lam": 1}), (3, {"lam": 2}))
    # against its own pair D(Q||P) is right ...
    assert verify(one, P=Q, Q=P, x=x, support=sp.Interval(0, sp.oo), points=p).status is VERIFIED
    # ... as the mechanism's RDP it misses D(P||Q): log 2 > D(Q||P) at alpha = 3/2, +oo for alpha >= 2
    assert verify(one, mechanism=mech, points=p).status is MISMATCH
    assert verify(mech, points=p).status is VERIFIED


# --------------------------------------------------------------------------------------------------
# heavy tails and kinks at dps = 50: >= 30 digits
# --------------------------------------------------------------------------------------------------
def _known(expr, kl, dinf, symbols, conditions=sp.true):
    return DivergenceResult(expr=expr, status=Status.CLOSED_FORM, conditions=conditions, kl=kl,
                            max_divergence=dinf, symbols=tuple(symbols), label="published closed form")


def _assert_30_digits(report):
    assert report.status is VERIFIED, report.describe()
    finite = [c for c in report.checks if c.numeric != mpmath.inf]
    assert finite and min(c.digits for c in finite) >= 30, report.describe()


def test_cauchy_location_family_dps50():
    m = sp.Symbol("m", real=True)
    g = sp.Symbol("g", positive=True)
    P, Q = g / (sp.pi * (g**2 + x**2)), g / (sp.pi * (g**2 + (x - m) ** 2))
    z = 1 + m**2 / (2 * g**2)
    res = _known(sp.log(sp.legendre(A - 1, z)) / (A - 1), sp.log(1 + m**2 / (4 * g**2)), None, (g, m))
    points = pts(None, (2, {"g": 1, "m": 1}), (sp.Rational(5, 2), {"g": 2, "m": 3}), (sp.Rational(1, 2), {"g": 2, "m": 3}),
                 (1, {"g": sp.Rational(1, 2), "m": 3}), (1 + sp.Rational(1, 10**6), {"g": 1, "m": -1}), (7, {"g": 3, "m": -2}))
    _assert_30_digits(verify(res, P=P, Q=Q, x=x, support=sp.S.Reals, points=points, dps=50))


def _exp_family(r1, r2, k=1):
    D = k * (A * sp.log(r1) + (1 - A) * sp.log(r2) - sp.log(A * r1 + (1 - A) * r2)) / (A - 1)
    return D, k * (sp.log(r1 / r2) + r2 / r1 - 1), A * r1 + (1 - A) * r2 > 0


def test_pareto_dps50_with_finiteness_edges():
    a1, a2, xm = sp.symbols("a1 a2 x_m", positive=True)
    pareto = lambda a: a * xm**a / x ** (a + 1)  # noqa: E731
    D, kl, cond = _exp_family(a1, a2)
    # D_inf: log(a1/a2) + (a2 - a1) log(x/x_m) -> sup at x = x_m if a1 > a2, else +oo
    res = _known(D, kl, sp.Piecewise((sp.log(a1 / a2), a1 >= a2), (sp.oo, True)), (a1, a2, xm), cond)
    report = verify(res, P=pareto(a1), Q=pareto(a2), x=x, support=sp.Interval(xm, sp.oo), dps=50, level="quick",
                    values=[{"a1": 1, "a2": 3, "x_m": 2}, {"a1": sp.Rational(5, 2), "a2": sp.Rational(3, 2), "x_m": 1}])
    assert report.status is not MISMATCH, report.describe()
    regimes = {c.point.regime: c for c in report.checks}
    assert regimes["finiteness edge (outside)"].numeric == mpmath.inf
    assert regimes["finiteness edge (outside)"].status == "agree"
    # 10% inside the edge the tail decays like x^-1.3: the numerics reach ~23 digits there and say so
    # (inconclusive at 30 required digits), never a false mismatch
    inside = regimes["finiteness edge (inside)"]
    assert inside.numeric < mpmath.inf and inside.status in ("agree", "inconclusive") and inside.digits >= 20
    rest = replace(report, checks=tuple(c for c in report.checks if not c.point.regime.startswith("finiteness")),
                   status=VERIFIED if all(c.status == "agree" for c in report.checks
                                          if not c.point.regime.startswith("finiteness")) else INCONCLUSIVE)
    _assert_30_digits(rest)


def test_levy_dps50():
    c1, c2 = sp.symbols("c1 c2", positive=True)
    levy = lambda c: sp.sqrt(c / (2 * sp.pi)) * sp.exp(-c / (2 * x)) / x ** sp.Rational(3, 2)  # noqa: E731
    D, kl, cond = _exp_family(c1, c2, sp.Rational(1, 2))
    res = _known(D, kl, None, (c1, c2), cond)
    points = pts(None, (2, {"c1": sp.Rational(1, 2), "c2": sp.Rational(3, 4)}),
                 (sp.Rational(1, 2), {"c1": 1, "c2": 4}), (1, {"c1": 3, "c2": 1}),
                 (7, {"c1": sp.Rational(1, 2), "c2": sp.Rational(3, 4)}))
    _assert_30_digits(verify(res, P=levy(c1), Q=levy(c2), x=x, support=sp.Interval.open(0, sp.oo), points=points, dps=50))


@pytest.mark.xfail(strict=True, reason="numeric_divergence near alpha = 1 for Lévy reports error ~2e-28 at dps 50 "
                                       "(agreement is 31 digits, but not certified): inconclusive")
def test_levy_near_one_dps50():
    c1, c2 = sp.symbols("c1 c2", positive=True)
    levy = lambda c: sp.sqrt(c / (2 * sp.pi)) * sp.exp(-c / (2 * x)) / x ** sp.Rational(3, 2)  # noqa: E731
    D, kl, cond = _exp_family(c1, c2, sp.Rational(1, 2))
    points = pts(None, (1 + sp.Rational(1, 10**6), {"c1": sp.Rational(1, 2), "c2": sp.Rational(3, 4)}))
    _assert_30_digits(verify(_known(D, kl, None, (c1, c2), cond), P=levy(c1), Q=levy(c2), x=x,
                             support=sp.Interval.open(0, sp.oo), points=points, dps=50))


def test_gaussian_extreme_near_one(table_ii):
    """sigma = 0.005, sensitivity = 200, alpha = 1 -+ 1e-5: D = alpha * 8e8, so I = e^(-+8000) and
    the near-1 form (which avoids cancellation when (alpha-1) D is small) cancels itself; the
    numeric path retries in plain log space (formerly: +inf with a NaN error, inconclusive)."""
    mech, result = table_ii["gaussian"]
    vals = {"sigma": sp.Rational(1, 200), "sensitivity": 200}
    p = pts(mech, (1 - sp.Rational(1, 10**5), vals), (1 + sp.Rational(1, 10**5), vals))
    report = verify(result, mechanism=mech, points=p)
    assert report.status is VERIFIED, report.describe()
    assert report.min_digits >= 18


def test_laplace_and_uniform_dps50(table_ii):
    mech, result = table_ii["laplace"]
    _assert_30_digits(verify(result, mechanism=mech, dps=50,
                             points=pts(mech, (3, {"b": sp.Rational(1, 3), "sensitivity": 1}),
                                        (sp.Rational(1, 4), {"b": 5, "sensitivity": 2}),
                                        (1, {"b": sp.Rational(7, 10), "sensitivity": sp.Rational(3, 2)}))))
    th = sp.Symbol("theta", positive=True)
    P, Q = sp.Piecewise((1, x <= 1), (0, True)), 1 / th  # U[0, 1] inside U[0, theta], theta > 1
    res = _known(sp.log(th), sp.log(th), sp.log(th), (th,))
    points = pts(None, (2, {"theta": 3}), (sp.Rational(1, 2), {"theta": sp.Rational(3, 2)}), (1, {"theta": 7}),
                 (1000, {"theta": 2}), (sp.oo, {"theta": 5}))
    _assert_30_digits(verify(res, P=P, Q=Q, x=x, support=sp.Interval(0, th), points=points, dps=50))
    # and a wrong uniform formula is caught
    bad = _known(sp.log(th) * A / (A + sp.Rational(1, 10**6)), sp.log(th), sp.log(th), (th,))
    assert verify(bad, P=P, Q=Q, x=x, support=sp.Interval(0, th), points=points, dps=50).status is MISMATCH


# --------------------------------------------------------------------------------------------------
# the report's logic and the arguments
# --------------------------------------------------------------------------------------------------
def test_inconclusive_when_numerics_do_not_converge(table_ii, monkeypatch):
    import importlib

    # verification's numeric side is the numeric maximum, by the method named "numeric"
    mx = importlib.import_module("rdpsym.numeric.maximum")

    mech, result = table_ii["gaussian"]
    real = mx.METHODS["numeric"]

    def shaky(*args, **kw):
        r = real(*args, **kw)
        return replace(r, converged=False, detail="forced non-convergence")

    monkeypatch.setitem(mx.METHODS, "numeric", shaky)
    report = verify(result, mechanism=mech, points=pts(mech, (2, {"sigma": 1, "sensitivity": 1})))
    assert report.status is INCONCLUSIVE and report.worst.status == "inconclusive"
    assert "forced non-convergence" in report.worst.note
    # a mismatching point wins over an inconclusive one only when the numerics converged there:
    # a wrong formula with unconverged numerics is still inconclusive, never "verified"
    wrong = replace(result, expr=result.expr * 3)
    assert verify(wrong, mechanism=mech, points=pts(mech, (2, {"sigma": 1, "sensitivity": 1}))).status is INCONCLUSIVE


def test_values_fixed_and_inferred_parameters():
    b = sp.Symbol("b", positive=True)
    P, Q = sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - 1) / b) / (2 * b)
    res = rdpsym.renyi_divergence(P, Q, x, sp.S.Reals)
    report = verify(res, P=P, Q=Q, x=x, support=sp.S.Reals, level="quick", values={"b": 2})
    assert report.status is VERIFIED, report.describe()
    assert all(dict(c.point.values)["b"] == 2 for c in report.checks)
    report = verify(res, P=P, Q=Q, x=x, support=sp.S.Reals, level="quick")  # b inferred: positive
    assert report.status is VERIFIED and len({dict(c.point.values)["b"] for c in report.checks}) >= 2


def test_bad_arguments_are_named(table_ii):
    mech, result = table_ii["gaussian"]
    with pytest.raises(ValueError, match="densities"):
        verify(replace(result, provenance=replace(result.provenance, inputs=()), mechanism=None, pair=None))
    with pytest.raises(ValueError, match="together"):
        verify(result, P=mech.pairs[0].P)
    with pytest.raises(ValueError, match="dps"):
        verify(result, mechanism=mech, dps=3)
    with pytest.raises(ValueError, match="digits"):
        verify(result, mechanism=mech, digits=40)
    # a numeric_only result is a numeric curve and is verified (issue 15); a failed one has nothing
    with pytest.raises(ValueError, match="nothing to verify"):
        verify(replace(result, expr=None, status=Status.FAILED), mechanism=mech)
    with pytest.raises(TypeError, match="target"):
        verify("gaussian")
    with pytest.raises(ValueError, match="level"):
        verify(result, mechanism=mech, level="huge")
    t = sp.Symbol("t")  # no assumptions: cannot be sampled
    with pytest.raises(ValueError, match="'t' has no assumptions"):
        verify(result, P=sp.exp(-(x - t) ** 2), Q=sp.exp(-x**2), x=x, support=sp.S.Reals)


def test_top_level_exports():
    assert rdpsym.verify is verify and rdpsym.numeric_divergence is rdpsym.numeric.numeric_divergence
    assert hasattr(rdpsym.strategies, "orders")


def test_rdpsym_verify_is_the_function_after_every_verification_import():
    """``rdpsym.verify`` is the function, whatever was imported before: the package is
    ``rdpsym.verification``, and no module ``rdpsym.verify`` shadows the function."""
    import importlib
    import inspect
    import types
    from importlib.machinery import PathFinder

    for name in ("rdpsym.verification.points", "rdpsym.verification.checks", "rdpsym.verification.report"):
        importlib.import_module(name)
    # looked up in the package's own directory (an editable install's finder may know other copies)
    assert PathFinder.find_spec("verify", rdpsym.__path__) is None
    assert isinstance(rdpsym.verify, types.FunctionType) and rdpsym.verify is verify
    assert list(inspect.signature(rdpsym.verify).parameters)[0] == "target"
    point = Point(sp.Integer(2), (("sensitivity", sp.Integer(1)), ("sigma", sp.Integer(1))), "test")
    report = rdpsym.verify(mechanisms.get("gaussian"), points=[point], executor="serial")
    assert report.status is VERIFIED and report.outcome.value == "holds", report


# --------------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------------
MECH_FILE = coin_mechanism_file()


def test_cli_verify_registered_and_file(tmp_path: Path):
    runner = CliRunner()
    out = runner.invoke(main, ["verify", "randomized_response", "--level", "quick"])
    assert out.exit_code == 0, out.output
    assert "verified" in out.output and "digits" in out.output
    f = tmp_path / "mech.py"
    f.write_text(MECH_FILE)
    out = runner.invoke(main, ["verify", str(f), "--level", "quick"])
    assert out.exit_code == 0, out.output
    assert "coin" in out.output and "verified" in out.output
    g = tmp_path / "empty.py"
    g.write_text("x = 1\n")
    out = runner.invoke(main, ["verify", str(g)])
    assert out.exit_code == 2 and "cannot tell which mechanism" in out.output
    out = runner.invoke(main, ["verify", "no_such_mechanism"])
    assert out.exit_code == 2 and "unknown mechanism" in out.output


def test_cli_verify_exit_code_on_mismatch(monkeypatch):
    import rdpsym.derive.mechanism_rdp as mr

    real = mr.rdp
    monkeypatch.setattr(mr, "rdp", lambda m, **kw: replace(real(m, **kw), expr=real(m, **kw).expr * (1 + sp.Rational(1, 10**6))))
    out = CliRunner().invoke(main, ["verify", "randomized_response", "--level", "quick"])
    assert out.exit_code == 1, out.output
    assert "mismatch" in out.output


def test_cli_table_shows_verification():
    out = CliRunner().invoke(main, ["table"])
    assert out.exit_code == 0, out.output
    rows = [l for l in out.output.splitlines() if l.startswith("| ") and "Mechanism |" not in l]
    assert len(rows) == 3 and all("verified (digits: α>1 " in r for r in rows), out.output
    out = CliRunner().invoke(main, ["table", "--no-verify"])
    assert out.exit_code == 0 and "not run" in out.output


# --------------------------------------------------------------------------------------------------
# honest points (issue 13): generic values, P = Q is no evidence, every regime covered, --param
# --------------------------------------------------------------------------------------------------
TWO_SCALES_FILE = '''
import sympy as sp
import rdpsym

def two_scales() -> rdpsym.Mechanism:
    x = sp.Symbol("x", real=True)
    s1 = rdpsym.parameter("sigma1", typical=(0.5, 5.0), log_scale=True)
    s2 = rdpsym.parameter("sigma2", typical=(0.5, 5.0), log_scale=True)
    a, b = s1.symbol, s2.symbol
    P = sp.exp(-x**2 / (2 * a**2)) / sp.sqrt(2 * sp.pi * a**2)
    Q = sp.exp(-x**2 / (2 * b**2)) / sp.sqrt(2 * sp.pi * b**2)
    return rdpsym.Mechanism("two_scales", x, sp.S.Reals, (rdpsym.AdjacentPair(P, Q),), (s1, s2))
'''


def _two_scales():
    namespace: dict = {}
    exec(TWO_SCALES_FILE, namespace)  # the user's code, as the CLI test below runs it from a file
    return namespace["two_scales"]()


def _rr_unit_interval():
    xi = sp.Symbol("x", integer=True, nonnegative=True)
    p = rdpsym.parameter("p", sp.Interval.open(0, 1), typical=(0.1, 0.9))  # centred on 1/2, where P = Q
    s = p.symbol
    pair = rdpsym.AdjacentPair(s**xi * (1 - s) ** (1 - xi), (1 - s) ** xi * s ** (1 - xi))
    return rdpsym.Mechanism("rr_unit_interval", xi, sp.FiniteSet(0, 1), (pair,), (p,))


ORDER_REGIMES = {"typical", "alpha = 1 (KL)", "alpha = oo", "alpha -> 1", "alpha in (0,1)", "large alpha"}


def test_two_scale_gaussian_verifies_at_points_with_p_not_q():
    """Formerly every order regime sat at sigma1 = sigma2 (P = Q, every value 0), and the KL's Max
    could not be evaluated at that tie: a mismatch that verified nothing."""
    report = verify(_two_scales(), level="quick")
    assert report.status is VERIFIED, report.describe()
    for c in report.checks:
        v = c.point.value_dict
        assert v["sigma1"] != v["sigma2"], c.describe()
        assert not c.p_equals_q and c.is_evidence
    assert not report.p_equals_q and len(report.evidence) == len(report.checks)
    assert ORDER_REGIMES <= set(report.regimes) and not report.regimes_without_evidence
    assert "regimes covered: typical" in str(report) and "P = Q" not in str(report)
    # some finite values (not only +oo against +oo): real evidence
    assert any(c.numeric != mpmath.inf and c.numeric > mpmath.mpf(10) ** -3 for c in report.checks)


def test_same_kind_parameters_get_distinct_values_in_every_regime():
    s1, s2, s3 = (rdpsym.parameter(n, typical=(0.5, 5.0), log_scale=True) for n in ("sigma1", "sigma2", "sigma3"))
    for level in ("quick", "standard", "thorough"):
        points = verification_points([s1, s2, s3], level=level, exceptional=[sp.Rational(1, 2)])
        for p in points:
            vals = [v for _, v in p.values]
            assert len(set(vals)) == 3, p.describe()
            assert all(s1.domain.contains(v) is sp.true for v in vals)
        regimes = {p.regime for p in points}
        assert ORDER_REGIMES | {"exceptional point"} <= regimes, (level, regimes)
        if level != "quick":
            assert {"tiny scale (sigma1)", "huge scale (sigma2)", "tiny scale (sigma3)"} <= regimes
    # a free parameter moves away from a fixed one of its kind; values the caller gives are kept
    centre = s1.typical_values(1)[0]
    for p in verification_points([s1, s2], fixed={"sigma1": centre}, level="quick"):
        assert p.value_dict["sigma1"] == centre != p.value_dict["sigma2"]
    for p in verification_points([s1, s2], parameter_points=[{"sigma1": 1, "sigma2": 1}], level="quick"):
        assert p.value_dict["sigma1"] == p.value_dict["sigma2"] == 1


def test_points_where_p_equals_q_are_not_evidence():
    rr = _rr_unit_interval()
    # the typical range is centred on p = 1/2: the order regimes move off it, each keeps a point
    report = verify(rr, level="quick")
    assert report.status is VERIFIED, report.describe()
    assert all(c.point.value_dict["p"] != sp.Rational(1, 2) and not c.p_equals_q for c in report.checks)
    assert ORDER_REGIMES <= set(report.regimes)
    # asked for p = 1/2: every point has P = Q, so nothing is verified (formerly: a mismatch, since
    # D_oo's Max could not be evaluated at the tie)
    asked = verify(rr, level="quick", fixed={"p": "1/2"})
    assert asked.status is INCONCLUSIVE, asked.describe()
    assert asked.checks and all(c.p_equals_q and c.status == "agree" for c in asked.checks)
    assert asked.regimes == () and not asked.evidence and "nothing was verified" in str(asked)
    assert "P = Q" in asked.checks[0].describe()


def test_fixed_values_are_exact_and_checked(table_ii):
    mech, result = table_ii["gaussian"]
    for fixed, match in (({"bogus": 1}, "unknown parameter 'bogus'"), ({"sigma": -1}, "'sigma' must lie in"),
                         ({"sigma": "abc"}, "'sigma' must be a number"), ({"sigma": float("nan")}, "'sigma' must be a number"),
                         ({"sigma": "oo"}, "'sigma' must be finite")):
        with pytest.raises(ValueError, match=match):
            verify(result, mechanism=mech, fixed=fixed, level="quick")
    report = verify(result, mechanism=mech, fixed={"sigma": "1/3", "sensitivity": 2}, level="quick")
    assert report.status is VERIFIED, report.describe()
    assert all(c.point.value_dict == {"sigma": sp.Rational(1, 3), "sensitivity": 2} for c in report.checks)


def test_cli_verify_param(tmp_path: Path):
    runner = CliRunner()
    wide = {"COLUMNS": "400"}
    out = runner.invoke(main, ["verify", "gaussian", "--level", "quick", "--all-points",
                               "--param", "sigma=1/3", "--param", "sensitivity=2"], env=wide)
    assert out.exit_code == 0, out.output
    assert "sigma=1/3" in out.output and "sensitivity=2" in out.output and "verified" in out.output
    for bad, name in (("bogus=1", "bogus"), ("sigma=-1", "sigma"), ("sigma=abc", "sigma"), ("sigma", "NAME=VALUE"),
                      ("sigma=nan", "sigma"), ("sigma=__import__('os')", "sigma")):
        out = runner.invoke(main, ["verify", "gaussian", "--level", "quick", "--param", bad], env=wide)
        assert out.exit_code == 2 and "--param" in out.output and name in out.output, (bad, out.output)
    # a user's two-scale mechanism, one scale held: the other never equals it
    f = tmp_path / "two.py"
    f.write_text(TWO_SCALES_FILE)
    out = runner.invoke(main, ["verify", str(f), "--level", "quick", "--all-points", "--param", "sigma1=3/2"], env=wide)
    assert out.exit_code == 0, out.output
    assert "sigma1=3/2" in out.output and "sigma2=3/2" not in out.output and "P = Q" not in out.output


def test_a_result_is_verified_against_its_own_objects_never_a_mechanism_found_by_name():
    """A user's mechanism that happens to be called "laplace" (here a Gaussian pair) is verified
    against its own densities, and a bare result against the pair it was derived from."""
    from rdpsym.mechanisms._densities import normal_pdf

    sigma = rdpsym.parameter("sigma", typical=(0.5, 4.0), latex=r"\sigma", meaning="noise scale")
    mine = rdpsym.Mechanism(name="laplace", variable=x, support=sp.S.Reals, parameters=(sigma,),
                            pairs=(rdpsym.AdjacentPair(normal_pdf(x, 0, sigma.symbol), normal_pdf(x, 1, sigma.symbol)),))
    result = rdpsym.rdp(mine)
    assert result.mechanism is mine
    report = verify(result, level="quick")
    assert report.status is VERIFIED, report.describe()
    b = sp.Symbol("b", positive=True)
    bare = rdpsym.renyi_divergence(sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - 1) / b) / (2 * b), x, sp.S.Reals)
    report = verify(bare, level="quick")
    assert report.status is VERIFIED, report.describe()
