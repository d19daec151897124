"""Conformance: every registered mechanism's RDP is derived, finite where claimed, and matches
independent high-precision numerics at typical parameter values. New mechanisms are picked up here."""

import itertools

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym import Status, mechanisms
from rdpsym.numeric import numeric_divergence
from rdpsym.numeric.families import supremum_over_family
from rdpsym.specify.adjacency import AdjacentFamily

from _builtins import NUMERIC_ONLY, builtin_params, closed_form_params

NAMES = mechanisms.names()


@pytest.fixture(scope="module")
def derived():
    return {}


def get(derived, name):
    if name not in derived:
        mech = mechanisms.get(name)
        derived[name] = (mech, rdpsym.rdp(mech))
    return derived[name]


def assert_closed_form(name, result):
    """A built-in outside NUMERIC_ONLY keeps its closed form in alpha; for some neighbouring inputs only
    (neighbours="some") it is a lower bound, the divergence of those pairs, checked like a curve."""
    if result.status is Status.LOWER_BOUND:
        assert mechanisms.get(name).neighbours == "some" and "lower bound" in result.reason, (name, result.reason)
        assert result.expr is not None, (name, result.reason)
    else:
        assert result.status is Status.CLOSED_FORM, (name, result.status, result.reason)


def test_registry_contains_the_table_ii_mechanisms():
    assert {"randomized_response", "laplace", "gaussian"} <= set(NAMES)
    assert set(mechanisms.laplace().params) == {"b", "sensitivity"}
    assert set(mechanisms.gaussian().params) == {"sigma", "sensitivity"}
    assert set(mechanisms.randomized_response().params) == {"p"}


@pytest.mark.unit
@pytest.mark.registry
@pytest.mark.parametrize("name", NAMES)
def test_mechanism_is_well_formed(name):
    mech = mechanisms.get(name)
    assert mech.parameters and mech.references
    others = {q.symbol: q.typical for q in mech.parameters}
    for p in mech.parameters:
        lo, hi = p.typical
        # a domain may name other parameters (width > sensitivity): at every corner of their typical box
        ends = [others[s] for s in p.domain.free_symbols]
        corners = [dict(zip(p.domain.free_symbols, c)) for c in itertools.product(*ends)] if ends else [{}]
        for corner in corners:
            domain = p.domain.subs({s: sp.Rational(v) for s, v in corner.items()})
            assert domain.contains(sp.Rational(lo)) is sp.true and domain.contains(sp.Rational(hi)) is sp.true, corner
        assert p.symbol.is_real


@pytest.mark.registry
@pytest.mark.parametrize("name", builtin_params(NAMES))
def test_derived_status_is_the_declared_one(derived, name):
    """A built-in without a closed form (NUMERIC_ONLY, a mixture such as the subsampled Gaussian) says so
    honestly: numeric_only with a reason, never a failed or silent result; its values are checked against
    mpmath in its own test module. Every other one keeps its closed form: one that loses it fails here (a
    regression), and one in NUMERIC_ONLY that gains one fails too, so that the curve checks below run on it."""
    mech, result = get(derived, name)
    if name in NUMERIC_ONLY:
        assert result.status is Status.NUMERIC_ONLY and result.reason, (name, result.status, result.reason)
        assert result.expr is None
    else:
        assert_closed_form(name, result)


@pytest.mark.registry
@pytest.mark.parametrize("name", closed_form_params())
def test_rdp_matches_numeric_integration(derived, name):
    mech, result = get(derived, name)
    assert_closed_form(name, result)
    assert result.status is Status.CLOSED_FORM, result.reason
    assert not result.expr.has(sp.Integral, sp.Sum)
    for i, a in enumerate([sp.Rational(3, 2), 3, sp.Rational(1, 2), sp.Rational(1, 4), 1, sp.oo]):
        values = {p.name: p.typical_values(3)[i % 3] for p in mech.parameters}
        for pair in mech.pairs:
            if isinstance(pair, AdjacentFamily):
                # a family: the numeric divergences at its sampled shifts (ends and interior), both directions
                found = [e[2] for e in supremum_over_family(pair, mech.variable, mech.support, a, values, dps=30).evaluations]
            else:
                found = [numeric_divergence(P, Q, mech.variable, mech.support, a, values, dps=30)
                         for P, Q in ((pair.P, pair.Q), (pair.Q, pair.P))]
            with mpmath.workdps(30):
                closed = result.evaluate(a, dps=30, **values)
                top = max(v.value for v in found)
                if closed == mpmath.inf or top == mpmath.inf:
                    assert closed == top == mpmath.inf, (name, a, values)
                    continue
                assert all(v.converged for v in found), [v.detail for v in found]
                # the mechanism's RDP is a max over directions (and shifts): at least each divergence
                assert all(closed >= v.value - mpmath.mpf(10) ** -20 * max(1, abs(v.value)) for v in found)
                assert abs(closed - top) <= mpmath.mpf(10) ** -20 * max(1, abs(top)), (name, a, values, closed, top)


@pytest.mark.registry
@pytest.mark.parametrize("name", closed_form_params())
def test_rdp_is_nonnegative_and_monotone_at_typical_values(derived, name):
    mech, result = get(derived, name)
    assert_closed_form(name, result)
    values = {p.name: p.typical_values(3)[1] for p in mech.parameters}
    orders = [sp.Rational(1, 5), sp.Rational(1, 2), sp.Rational(9, 10), 1, sp.Rational(11, 10), 2, 8, 64]
    with mpmath.workdps(30):
        curve = [result.evaluate(a, dps=30, **values) for a in orders]
    assert all(v >= 0 for v in curve)
    assert all(a <= b + mpmath.mpf(10) ** -25 for a, b in zip(curve, curve[1:])), curve


@pytest.mark.unit
@pytest.mark.registry
@pytest.mark.parametrize("name", NAMES)
def test_bad_parameter_values_are_rejected_by_name(name):
    """Checked on the mechanism itself: no derivation is needed to refuse a parameter value."""
    mech = mechanisms.get(name)
    p = mech.parameters[0]
    bad = float(p.domain.inf) - 1 if p.domain.inf.is_finite else float(p.domain.sup) + 1
    with pytest.raises(ValueError, match=p.name):
        mech.substitutions({p.name: bad})
    with pytest.raises(ValueError, match="not a parameter"):
        mech.substitutions({"no_such_parameter": 1})


# ---------------------------------------------------------------------------------------------------
# The registry: a new mechanism is one factory with @register; errors name the argument
# ---------------------------------------------------------------------------------------------------


def _two_point() -> "mechanisms.Mechanism":
    from rdpsym.specify.mechanism import AdjacentPair, Mechanism
    from rdpsym.specify.params import parameter

    x = sp.Symbol("x", integer=True, nonnegative=True)
    p = parameter("p", sp.Interval.open(sp.Rational(1, 2), 1), typical=(0.6, 0.9))
    s = p.symbol
    return Mechanism(name="test_two_point", variable=x, support=sp.FiniteSet(0, 1), parameters=(p,),
                     pairs=(AdjacentPair(s**x * (1 - s) ** (1 - x), (1 - s) ** x * s ** (1 - x)),),
                     references=("test",))


def test_register_get_unregister_a_new_mechanism():
    from rdpsym._numbers import ArgumentError

    def test_two_point():
        return _two_point()

    assert mechanisms.register(test_two_point) is test_two_point
    try:
        assert "test_two_point" in mechanisms.names()
        assert mechanisms.register(test_two_point) is test_two_point  # the same factory again: a no-op
        assert mechanisms.get("test_two_point").name == "test_two_point"
        assert mechanisms.factory("test_two_point") is test_two_point
        with pytest.raises(ArgumentError, match="mechanism 'test_two_point' is registered twice") as err:
            mechanisms.register(lambda: _two_point(), name="test_two_point")
        assert err.value.argument == "name"
    finally:
        assert mechanisms.unregister("test_two_point") is test_two_point
    assert "test_two_point" not in mechanisms.names()
    with pytest.raises(ArgumentError, match="unknown mechanism 'test_two_point'; registered: ") as err:
        mechanisms.get("test_two_point")
    assert err.value.argument == "name"
    with pytest.raises(ValueError, match="unknown mechanism 'test_two_point'"):
        mechanisms.unregister("test_two_point")


def test_register_with_a_name_and_refusals():
    from rdpsym._numbers import ArgumentError

    decorated = mechanisms.register(name="test_named")(_two_point)
    try:
        assert decorated is _two_point and mechanisms.factory("test_named") is _two_point
    finally:
        mechanisms.unregister("test_named")
    with pytest.raises(ArgumentError, match="factory must be a function returning a Mechanism") as err:
        mechanisms.register(42)
    assert err.value.argument == "factory"
    with pytest.raises(ArgumentError, match="name must be an identifier"):
        mechanisms.register(_two_point, name="not a name")
    with pytest.raises(ValueError, match=r"unknown mechanism \['laplace'\]"):
        mechanisms.get(["laplace"])  # unhashable: the same clear error, not a TypeError


def test_a_factory_raising_key_error_is_not_reported_as_unknown():
    def test_broken():
        raise KeyError("inside the factory")

    mechanisms.register(test_broken)
    try:
        with pytest.raises(KeyError, match="inside the factory"):
            mechanisms.get("test_broken")
    finally:
        mechanisms.unregister("test_broken")


@pytest.mark.unit
@pytest.mark.registry
@pytest.mark.parametrize("name", NAMES)
def test_registered_name_is_the_mechanisms_name(name):
    assert mechanisms.get(name).name == name


def test_the_readme_table_lists_every_built_in():
    """README.md's table of built-in mechanisms has a row for every registered built-in, and no other."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Built-in mechanisms", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
    built_in = {n for n in mechanisms.names() if mechanisms.source(n).startswith("built-in")}
    assert rows == built_in
