"""The safe reader of sympy's srepr text (the cache's stored form of expressions) and the cache's data codec."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from rdpsym._cache import Unstorable
from rdpsym.derive.cache import RESULT_TYPES, DataCodec
from rdpsym.derive.result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step
from rdpsym.specify.text.srepr import MAX_SREPR_DEPTH, SreprError, read_srepr

x = sp.Symbol("x", real=True)
b = sp.Symbol("b", positive=True)
k = sp.Symbol("k", integer=True, nonnegative=True)
a = sp.Symbol("alpha", positive=True)


@pytest.mark.parametrize("expr", [
    sp.Integer(-7), sp.Rational(-3, 7), sp.Float("0.1", 40), sp.Float(1.5), sp.oo, -sp.oo, sp.zoo, sp.nan, sp.pi,
    sp.E, sp.I * b, sp.true, sp.false, sp.S.Reals, sp.S.Naturals0, sp.S.EmptySet,
    sp.Dummy("d", real=True), sp.Symbol("y", commutative=False),
    (a - 1) ** -1 * sp.log(sp.exp(-b * x) + sp.Rational(1, 2)),
    sp.Piecewise((x / b, x < 1), (sp.Max(x, b), sp.And(x >= 1, sp.Ne(x, 2))), (sp.oo, True)),
    sp.Interval.Lopen(0, sp.oo), sp.Interval(-b, b), sp.Range(0, 5), sp.FiniteSet(0, 1, b),
    sp.ProductSet(sp.S.Reals, sp.Interval(0, 1)), sp.Union(sp.Interval(0, 1), sp.Interval(2, 3)),
    sp.Sum(b ** k / sp.factorial(k), (k, 0, sp.oo)), sp.Integral(sp.exp(-x ** 2), (x, -sp.oo, sp.oo)),
    sp.besseli(0, b) * sp.gamma(b) + sp.erf(x) + sp.Heaviside(x) + sp.Abs(x) + sp.Min(x, 1),
    sp.Add(sp.Add(b, -sp.Rational(1, 3), evaluate=False), -sp.Float("1e-17"), evaluate=False),  # a Series variable
    sp.Contains(x, sp.Interval(0, 1), evaluate=False), sp.Tuple(1, x, sp.Tuple()),
])
def test_srepr_reads_back_node_for_node(expr):
    text = sp.srepr(expr, order="none")
    back = read_srepr(text)
    assert back == expr and sp.srepr(back, order="none") == text


@pytest.mark.parametrize("text, why", [
    ("__import__('os').system('touch /tmp/rdpsym-pwned')", "unexpected Call|not a constructor"),
    ("exp('__import__(\"os\").system(\"touch /tmp/rdpsym-pwned\")')", "unexpected Constant"),
    ("Add(Symbol('x'), Integer('1'))", "integer literal"),
    ("Symbol('x').__class__", "unexpected Attribute"),
    ("Function('f')(Symbol('x'))", "unexpected Call|not a constructor"),
    ("(lambda: 1)()", "unexpected"),
    ("eval('1')", "not a constructor"),
    ("Symbol('x', positive='yes')", "True or False"),
    ("Symbol('x', evaluate=True)", "not a sympy assumption"),
    ("Add(Integer(1), Integer(2), evaluate=True)", "unexpected keyword"),
    ("Float('1e5; import os')", "not a decimal"),
    ("Integer(" + "9" * 5000 + ")", "bits|not srepr"),
    ("Rational(1, 0)", "zero denominator"),
    ("Interval(Integer(0))", "cannot build"),
    ("Integer(1) + Integer(2)", "unexpected BinOp"),
    ("x", "unknown name"),
    ("[Integer(1)]", "unexpected List"),
    ("Symbol('x'); Symbol('y')", "not srepr text"),
    ("", "not srepr text"),
])
def test_srepr_reader_refuses_everything_else(text, why, tmp_path):
    with pytest.raises(SreprError, match=why):
        read_srepr(text)


def test_srepr_reader_bounds_nesting():
    deep = "Integer(1)"
    for _ in range(MAX_SREPR_DEPTH + 5):
        deep = f"exp({deep})"
    with pytest.raises(SreprError):
        read_srepr(deep)


def test_srepr_reader_evaluates_nothing():
    """An unevaluated tree stays unevaluated (a factorial of a huge number is not computed while reading)."""
    big = read_srepr("factorial(Integer(" + "9" * 1000 + "))")
    assert isinstance(big, sp.factorial)
    assert read_srepr("Add(Integer(1), Integer(2))") == sp.Add(1, 2, evaluate=False)


def _result():
    step = Step("general order", "by the template", 0.25, a * b)
    return DivergenceResult(
        expr=a * b ** 2 / 2, status=Status.CLOSED_FORM, reason="", conditions=sp.true, kl=b ** 2 / 2,
        max_divergence=sp.oo, exceptional_points=(ExceptionalPoint(sp.Rational(1, 2), b, sp.true),),
        symbols=(b,), provenance=Provenance((step,), (("P", "p"),), (("sympy", sp.__version__),), (),
                                            ("integer_orders",)),
        domains=((b, sp.Interval.open(0, sp.oo)),), pair=(x, x + b, x, sp.S.Reals),
        integer_orders=((2, b), (3, 2 * b)))


def test_a_result_round_trips_through_the_codec_field_by_field():
    codec = DataCodec(RESULT_TYPES)
    r = _result()
    back = codec.decode(codec.encode(r))
    assert DataCodec.same(back, r) and back.pair == r.pair and back.provenance.expired == ("integer_orders",)
    assert isinstance(back.status, Status) and back.provenance.steps[0].seconds == 0.25


def test_the_codec_stores_no_object_it_does_not_know():
    codec = DataCodec(RESULT_TYPES)
    with pytest.raises(Unstorable):
        codec.encode(dataclasses.replace(_result(), mechanism=object()))
    with pytest.raises(Unstorable):
        codec.encode({"f": lambda: 1})
    with pytest.raises(ValueError, match="fields"):
        codec.decode(b'{"dataclass":["Step",{"name":"a","detail":"b","seconds":{"float":"0x0p+0"},"extra":1}]}')
    with pytest.raises(ValueError):
        codec.decode(b'{"dataclass":["Popen",{"args":"touch /tmp/rdpsym-pwned"}]}')
    with pytest.raises(ValueError):
        codec.decode(b'{"enum":["Status","not a status"]}')


def test_a_tree_the_reader_cannot_rebuild_is_returned_not_stored():
    codec = DataCodec(RESULT_TYPES)
    deep = x
    for _ in range(MAX_SREPR_DEPTH + 5):
        deep = sp.sin(deep)
    for value in (deep, sp.Function("f")(x), sp.Lambda(x, x ** 2)):
        with pytest.raises(Unstorable):
            codec.encode(value)
