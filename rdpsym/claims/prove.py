"""A symbolic proof of a claim's relation to the divergence, each sympy attempt time-limited."""

from __future__ import annotations

import sympy as sp

from .._timeout import StepTimeout, run_with_time_limit
from ..symbols import alpha as ALPHA


def _prove(claim, truth, relation, order, fixed, params, conditions, alpha_range, seconds,
           max_divergence=None) -> str | None:
    """A symbolic proof of the relation, or None. Each sympy attempt is time-limited.

    ``max_divergence`` is the derived D_inf: an upper bound that is at least D_inf at every order is
    proved by monotonicity, D_alpha <= D_inf for every alpha (Mironov 2017, Prop. 9 and Def. 3), when
    the direct comparison with D_alpha does not settle it.
    """
    subs = {p.symbol: v for p in params for k, v in fixed.items() if p.name == k}
    # Give sympy the parameters' domains as assumptions: p in (a, b) becomes a + (b - a)/(1 + s) with
    # s > 0, p in (a, oo) becomes a + s (bijections, so an identity in s is one in p).
    notes = []
    for p in params:
        if p.name in fixed or not isinstance(p.domain, sp.Interval):
            continue
        a, b = p.domain.inf, p.domain.sup
        s = sp.Symbol(f"{p.name}_s", positive=True)
        if a.is_finite and b.is_finite:
            subs[p.symbol] = a + (b - a) / (1 + s)
            notes.append(f"{p.name} = {sp.sstr(subs[p.symbol])}")
        elif a.is_finite and a != 0:
            subs[p.symbol] = a + s
            notes.append(f"{p.name} = {sp.sstr(subs[p.symbol])}")
    c = claim.subs(subs)
    t = truth.subs(subs)
    lo, hi = alpha_range
    where = ""
    if order is None:
        if lo >= 1:
            tt = sp.Symbol("t", positive=True)
            c, t = c.subs(ALPHA, 1 + tt), t.subs(ALPHA, 1 + tt)
            regime, alpha_expr = "alpha = 1 + t, t > 0", 1 + tt
        elif hi <= 1:
            vv = sp.Symbol("v", positive=True)
            c, t = c.subs(ALPHA, 1 / (1 + vv)), t.subs(ALPHA, 1 / (1 + vv))
            regime, alpha_expr = "alpha = 1/(1 + v), v > 0", 1 / (1 + vv)
        else:
            regime, alpha_expr = "alpha > 0", ALPHA
        if conditions is not sp.true:
            where = f" where the divergence is finite ({sp.sstr(conditions)})"
    else:
        regime, alpha_expr = f"order {order}", None
    if notes:
        regime += "; " + ", ".join(notes) + " with positive *_s"

    def attempt(fn):
        try:
            return run_with_time_limit(fn, seconds=seconds)
        except (StepTimeout, Exception):  # noqa: BLE001 - a failed attempt is just no proof
            return None

    if t == sp.oo or c == sp.oo:
        if relation == "==" and t == c:
            return "proved: both are +oo"
        if relation == "<=" and c == sp.oo:
            return "proved: the claim is +oo"
        if relation == ">=" and t == sp.oo:
            return None
        return None
    d = attempt(lambda: sp.simplify(c - t))
    if relation == "==":
        if d is not None and d == 0:
            return f"proved: simplify(claim - divergence) = 0 ({regime}){where}"
        # exp((alpha-1) x) is injective on the reals only: the route needs both sides real for every value
        # of the symbols (by their assumptions), not only at the checked points (a claim can be complex on a
        # sliver of the domain no point reached)
        both_real = attempt(lambda: c.is_extended_real is True and t.is_extended_real is True)
        if alpha_expr is not None and both_real:
            d2 = attempt(lambda: sp.simplify(sp.expand(sp.exp((alpha_expr - 1) * c)) - sp.expand(sp.exp((alpha_expr - 1) * t))))
            if d2 is not None and d2 == 0:
                return (f"proved: exp((alpha-1)*claim) - exp((alpha-1)*divergence) simplifies to 0 ({regime}), "
                        f"and both are real by the symbols' assumptions, so claim = divergence{where}")
        d3 = attempt(lambda: sp.simplify(sp.expand_log(sp.expand(c - t))))
        if d3 is not None and d3 == 0:
            return f"proved: expand_log(claim - divergence) simplifies to 0 ({regime}){where}"
        return None
    if d is not None:
        sign_ok = d.is_nonnegative if relation == "<=" else d.is_nonpositive
        if d == 0 or sign_ok:
            word = "non-negative" if relation == "<=" else "non-positive"
            return f"proved: claim - divergence = {sp.sstr(d)} is {word} by the symbols' assumptions ({regime}){where}"
    if relation == "<=" and max_divergence is not None and max_divergence.is_finite is not False:
        sup = max_divergence.subs(subs)
        gap = attempt(lambda: sp.simplify(c - sup))
        if gap is not None and (gap == 0 or gap.is_nonnegative):
            return (f"proved: claim - D_inf = {sp.sstr(gap)} is non-negative by the symbols' assumptions "
                    f"({regime}), and D_alpha <= D_inf = {sp.sstr(max_divergence)} at every order "
                    "(Mironov 2017, Prop. 9: D_alpha is non-decreasing in alpha, with limit D_inf)")
    return None
