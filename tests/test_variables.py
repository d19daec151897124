"""The one reading of output variables and product supports (issue 16)."""

import pytest
import sympy as sp

from rdpsym._numbers import ArgumentError
from rdpsym.specify.variables import as_variables, coordinate_supports, is_multivariate

x1, x2, x3 = sp.symbols("x1 x2 x3", real=True)


def test_one_symbol_and_tuples():
    assert as_variables(x1) == (x1,)
    assert as_variables([x1, x2]) == (x1, x2)
    assert is_multivariate((x1,)) and not is_multivariate(x1)


@pytest.mark.parametrize("bad, words", [((), "non-empty"), ((x1, x1), "repeated"), ((x1, 2), "Symbol"),
                                        ((sp.Symbol("y"),), "declared real"), ("x", "Symbol")])
def test_bad_variables_name_the_argument(bad, words):
    with pytest.raises(ArgumentError, match=words) as info:
        as_variables(bad)
    assert info.value.argument == "x"


def test_product_supports_flatten():
    assert coordinate_supports(sp.S.Reals**2, 2) == (sp.S.Reals, sp.S.Reals)
    nested = sp.ProductSet(sp.ProductSet(sp.Interval(0, 1), sp.S.Integers), sp.S.Reals)
    assert coordinate_supports(nested, 3) == (sp.Interval(0, 1), sp.S.Integers, sp.S.Reals)
    assert coordinate_supports(sp.S.Reals, 1) == (sp.S.Reals,)


@pytest.mark.parametrize("support, n", [(sp.S.Reals, 2), (sp.S.Reals**3, 2), (sp.S.Reals**2, 1)])
def test_dimension_mismatch_is_an_error(support, n):
    with pytest.raises(ArgumentError, match="coordinate set") as info:
        coordinate_supports(support, n)
    assert info.value.argument == "support"


def test_support_must_be_a_set():
    with pytest.raises(ArgumentError, match="sympy Set"):
        coordinate_supports([sp.S.Reals], 1)
