"""Where P and Q are never positive together, ∫ P^alpha Q^(1-alpha) = 0 and D_alpha = +oo at every order,
alpha in (0, 1) included (Mironov 2017, Def. 3): never log(0)/(alpha - 1) = zoo in a result, and
``evaluate`` returns +oo there instead of raising (issue #29, item 4).

The uniform pair U(0, w) against U(1, 1 + w) with w declared only positive: the supports overlap on
[1, w] when w > 1, where ∫ P^alpha Q^(1-alpha) = (w - 1)/w, and are disjoint (up to a point) when w <= 1.
The finite values are checked against mpmath quadrature computed here.
"""

from __future__ import annotations

import types

import mpmath
import pytest
import sympy as sp

import rdpsym
from rdpsym.derive.result import Status
from rdpsym.derive.stages import status

x = sp.Symbol("x", real=True)


def _uniform_pair(width, shift, parameters=()) -> rdpsym.Mechanism:
    P = sp.Piecewise((1 / width, (x >= 0) & (x <= width)), (0, True))
    Q = sp.Piecewise((1 / width, (x >= shift) & (x <= shift + width)), (0, True))
    return rdpsym.Mechanism(name="uniform", variable=x, support=sp.S.Reals,
                            pairs=(rdpsym.AdjacentPair(P, Q),), parameters=parameters)


def _undefined_anywhere(r) -> bool:
    exprs = [r.expr, r.kl, r.max_divergence] + [p.value for p in r.exceptional_points]
    return any(e is not None and sp.sympify(e).has(sp.zoo, sp.nan) for e in exprs)


@pytest.fixture(scope="module")
def width_pair():
    w = rdpsym.parameter("w", typical=(0.5, 3.0), meaning="width")
    return rdpsym.rdp(_uniform_pair(w.symbol, 1, (w,)), cache=False)


def test_no_zoo_in_the_result(width_pair):
    assert width_pair.status is Status.CLOSED_FORM
    assert not _undefined_anywhere(width_pair), width_pair.expr


@pytest.mark.parametrize("w", [sp.Rational(1, 2), sp.Integer(1)])
@pytest.mark.parametrize("alpha", [sp.Rational(3, 10), sp.Rational(1, 2), sp.Integer(1), sp.Integer(2)])
def test_disjoint_supports_evaluate_to_infinity(width_pair, w, alpha):
    assert width_pair.evaluate(alpha, w=w) == mpmath.inf


@pytest.mark.parametrize("w", [sp.Rational(3, 2), sp.Integer(3)])
def test_overlapping_supports_against_quadrature(width_pair, w):
    with mpmath.workdps(40):
        wv = mpmath.mpf(w.p) / w.q
        for alpha in (sp.Rational(3, 10), sp.Rational(1, 2), sp.Rational(9, 10)):
            a = mpmath.mpf(alpha.p) / alpha.q
            # P = Q = 1/w on [1, w], one of them 0 elsewhere
            truth = mpmath.log(mpmath.quad(lambda t: (1 / wv) ** a * (1 / wv) ** (1 - a), [1, wv])) / (a - 1)
            got = width_pair.evaluate(alpha, dps=40, w=w)
            assert abs(got - truth) <= mpmath.mpf(10) ** -30 * abs(truth), (w, alpha, got, truth)
        # P > 0 on [0, 1) where Q = 0: +oo for alpha >= 1
        assert width_pair.evaluate(2, w=w) == mpmath.inf


def test_numeric_disjoint_pair_is_infinite_at_every_order():
    r = rdpsym.rdp(_uniform_pair(sp.Integer(1), 2), cache=False)
    assert not _undefined_anywhere(r), r.expr
    for alpha in (sp.Rational(1, 10), sp.Rational(1, 2), 1, 3):
        assert r.evaluate(alpha) == mpmath.inf


def test_an_undefined_general_form_is_no_closed_form():
    """A general form that still holds zoo or nan in a branch fails closed: numeric_only, with the reason."""
    alpha = rdpsym.alpha
    d = types.SimpleNamespace(expr=sp.Piecewise((sp.zoo, alpha < 1), (sp.oo, True)), reasons=[], status=None)
    status(d)
    assert d.status is Status.NUMERIC_ONLY and d.expr is None
    assert any("undefined" in why for why in d.reasons)
