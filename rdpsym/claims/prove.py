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
        if order is None:
            return _equal_by_log_expansion(claim.subs(subs), truth.subs(subs), conditions, lo, hi, attempt, notes)
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


def _equal_by_log_expansion(claim, truth, conditions, lo, hi, attempt, notes) -> str | None:
    """claim = divergence where the divergence is finite, by expanding logarithms of positive arguments.

    log(a b) = log a + log b and log(a^p) = p log a hold when a, b > 0 (p real). Each order regime the
    range reaches, alpha in (0, 1) as 1/(1 + v) and alpha > 1 as 1 + t (v, t > 0), is taken on its own:
    there every argument of a log, and every base of a power with a non-integer exponent, in the claim and
    in the divergence must be positive, by the symbols' assumptions or as a positive multiple of an
    expression the divergence's finiteness conditions make positive (alpha sigma2^2 + (1 - alpha) sigma1^2
    for two Gaussian variances). Then ``expand_log(force=True)`` is exact, and the difference must simplify
    to 0 in every regime.
    """
    regimes = []
    if (lo < 1) is sp.true:
        v = sp.Symbol("v", positive=True)
        regimes.append(("alpha = 1/(1 + v), v > 0", 1 / (1 + v)))
    if (hi > 1) is sp.true:
        t = sp.Symbol("t", positive=True)
        regimes.append(("alpha = 1 + t, t > 0", 1 + t))
    if not regimes:
        return None
    for _, alpha_expr in regimes:
        c, d = claim.subs(ALPHA, alpha_expr), truth.subs(ALPHA, alpha_expr)
        finite = conditions.subs(ALPHA, alpha_expr) if isinstance(conditions, sp.Basic) else sp.true
        positive = _positive_expressions(finite)
        if positive is None:
            return None
        arguments = [a.args[0] for a in (c - d).atoms(sp.log)]
        arguments += [b for b, e in (pw.as_base_exp() for pw in (c - d).atoms(sp.Pow)) if not e.is_integer]
        if not all(attempt(lambda a=a: _positive_where(a, positive)) for a in arguments):
            return None
        gap = attempt(lambda: sp.simplify(sp.expand_log(sp.expand(c - d), force=True)))
        if gap is None or gap != 0:
            return None
    named = " and ".join(r for r, _ in regimes)
    domains = ("; " + ", ".join(notes) + " with positive *_s") if notes else ""
    return (f"proved: with {named}{domains}, every log argument and every base of a non-integer power is "
            "positive where the divergence is finite (by the symbols' assumptions and the finiteness "
            "conditions), so expand_log is exact there, and claim - divergence expands to 0")


def _positive_expressions(condition) -> list | None:
    """The expressions g that a condition (a conjunction of ``g > 0`` / ``g >= 0`` / ``a > b``) makes
    positive; [] for ``true``; None for a condition that is not such a conjunction (a disjunction left
    after the regime's substitution)."""
    if condition == sp.true:
        return []
    found = []
    for part in sp.And.make_args(condition):
        if not (part.is_Relational and part.rel_op in (">", ">=", "<", "<=")):
            return None
        found.append(part.gts - part.lts)
    return found


def _positive_where(expr, positive) -> bool:
    """``expr`` > 0 by the symbols' assumptions, factor by factor, where each expression of ``positive``
    is > 0: every factor has a known sign (by assumptions, or as a positive or negative multiple of one of
    them), a base with a non-integer exponent is positive, and the negative factors are even in number."""
    negative = 0
    for factor in sp.Mul.make_args(sp.factor(expr)):
        base, exponent = factor.as_base_exp()
        sign = _sign_where(base, positive)
        if sign is None or (sign < 0 and not exponent.is_integer) or not exponent.is_real:
            return False
        if sign < 0 and exponent.is_odd:
            negative += 1
        elif sign < 0 and not exponent.is_even:
            return False
    return negative % 2 == 0


def _sign_where(base, positive) -> int | None:
    if base.is_positive:
        return 1
    if base.is_negative:
        return -1
    for g in positive:
        ratio = sp.simplify(base / g)
        if ratio.is_positive:
            return 1
        if ratio.is_negative:
            return -1
    return None
