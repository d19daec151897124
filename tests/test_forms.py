"""Paper-sized forms (issue 18, item 2): the derived forms against the registry's published ones, and the
rewrites of rdpsym.derive.paper_form accepted only when proved equal."""

import mpmath as mp
import pytest
import sympy as sp

from rdpsym.derive.paper_form import paper_form, proved_equal
from rdpsym.regress.sizes import TARGET, registry_sizes
from rdpsym.specify.params import parameter
from rdpsym.symbols import alpha


@pytest.mark.slow
def test_every_registry_form_is_at_most_a_quarter_longer_than_the_published_one():
    rows = registry_sizes()
    assert rows
    over = [f"{r.name}: {r.derived} vs {r.published} operations ({sp.sstr(r.derived_expr)})"
            for r in rows if r.derived is not None and r.derived > TARGET * max(r.published, 1)]
    assert not over, "derived forms over the size target:\n" + "\n".join(over)


def _p():
    return parameter("p", sp.Interval.open(sp.Rational(1, 2), 1), typical=(0.6, 0.9))


def test_differences_of_logs_become_a_log_of_a_quotient_with_the_coefficient_outside():
    P = _p()
    p = P.symbol
    got = paper_form((2 * p - 1) * (sp.log(p) - sp.log(1 - p)), [p], [P], 5)
    assert got == (2 * p - 1) * sp.log(p / (1 - p))
    with mp.workdps(40):
        for v in (sp.Rational(51, 100), sp.Rational(3, 4), sp.Rational(99, 100)):
            want = (2 * mp.mpf(v.p) / v.q - 1) * mp.log((mp.mpf(v.p) / v.q) / (1 - mp.mpf(v.p) / v.q))
            assert abs(mp.mpf(sp.N(got.subs(p, v), 40)) - want) < mp.mpf(10) ** -35


def test_a_shorter_form_that_is_not_equal_is_refused():
    P = _p()
    p = P.symbol
    # log(p) + log(1 - p) is log(p (1 - p)), not log(p/(1 - p)): shorter, and wrong
    assert not proved_equal(sp.log(p / (1 - p)), sp.log(p) + sp.log(1 - p), [p], [P], 5)
    # equal at no point inside the domain except by accident: the numeric check alone refuses it too
    assert not proved_equal(sp.log(p), sp.log(p) + (p - sp.Rational(3, 4)) ** 2 * 10**-40, [p], [P], 5)


def test_a_piecewise_keeps_its_conditions():
    P = _p()
    p = P.symbol
    expr = sp.Piecewise((sp.log(p) - sp.log(1 - p), alpha > 2), (sp.oo, True))
    got = paper_form(expr, [p], [P], 5)
    assert isinstance(got, sp.Piecewise) and [c for _, c in got.args] == [c for _, c in expr.args]
    assert got.args[0][0] == sp.log(p / (1 - p))
