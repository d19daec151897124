"""Support: a sympy support set classified once (rdpsym.specify.support)."""

import mpmath
import pytest
import sympy as sp

from rdpsym.specify.support import Points, Progression, Span, Support

n = sp.Symbol("n", positive=True, integer=True)


def test_continuous_supports():
    s = Support.of(sp.S.Reals)
    assert s.is_continuous and not s.is_discrete and s.kind == "continuous"
    assert s.pieces == (Span(-sp.oo, sp.oo),)
    assert s.flattened() == ("continuous", [(-mpmath.inf, mpmath.inf)])
    u = Support.of(sp.Union(sp.Interval(0, 1), sp.Interval(2, sp.oo)))
    assert u.spans == (Span(0, 1), Span(2, sp.oo)) and u.finite_points == ()
    b = sp.Symbol("b", positive=True)
    assert Support.of(sp.Interval(0, b)).spans == (Span(0, b),)  # symbolic ends are kept
    with pytest.raises(ValueError, match="support end"):
        Support.of(sp.Interval(0, b), numbers=True)


def test_discrete_supports():
    z = Support.of(sp.S.Integers)
    assert z.is_discrete and z.progressions == (Progression(0, 1), Progression(-1, -1)) and not z.is_finite
    assert Support.of(sp.S.Naturals0).progressions == (Progression(0, 1),)
    assert Support.of(sp.Range(5, -sp.oo, -2)).progressions == (Progression(5, -2),)
    f = Support.of(sp.Union(sp.Range(0, 2), sp.FiniteSet(7, 9)))
    assert f.is_finite and f.pieces == (Points((0, 1)), Points((7, 9))) and f.finite_points == (0, 1, 7, 9)
    assert f.flattened() == ("discrete", [("finite", [0, 1]), ("finite", [7, 9])])
    assert Support.of(sp.S.Naturals).flattened() == ("discrete", [("prog", 1, 1)])


@pytest.mark.parametrize("bad, match", [
    ((0, 1), "must be a sympy Set"),
    (sp.Union(sp.Interval(0, 1), sp.FiniteSet(5)), "mixes continuous and discrete"),
    (sp.S.EmptySet, "empty"),
    (sp.S.Complexes, "not supported"),
])
def test_bad_supports(bad, match):
    with pytest.raises(ValueError, match=match):
        Support.of(bad)
