"""Symbolic rewrite steps as data: named sympy rewrites, a chain of them, and its replay.

A symbolic proof (:mod:`rdpsym.claims.prove`) is a chain of steps, each one named sympy rewrite of
sympy inputs with its output: ``simplify_difference(c, t) = 0`` or ``positive_where(a, g) = True``. Every
rule is a plain deterministic function of its inputs (:data:`RULES`), so a step is checked by running
that one rule again on the stored inputs and comparing the output node for node; a chain is replayed
by running the same route again and comparing each step (:class:`Chain` in replay mode). A replay does
no search: it runs exactly the steps the proof made.

Each step runs under a hang guard (:mod:`rdpsym.claims.guard`), and counts as one attempt: the number of
attempts, not seconds, is what a proof may spend.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .guard import HangGuardFired
from .guard import HangGuards

__all__ = ["Step", "Chain", "RULES", "ReplayMismatch", "positive_where", "strict_positive_parts"]


def _truth(value) -> sp.Basic:
    """A rule's yes/no answer as sympy data: true only when certainly true."""
    return sp.true if value is True else sp.false


#: an exp(k u) with |k| above this is factored as a positive symbol of its own (:func:`_factor_tamed`)
MAX_EXP_MULTIPLE = 64


def _factor_tamed(expr) -> sp.Expr:
    """``sp.factor(expr)`` with each exp(k u) of a real u and an integer |k| > MAX_EXP_MULTIPLE standing for
    a positive symbol of its own while it factors: sympy's polynomials write exp(k u) as exp(u)**k, and a
    power of degree 740000000 (a bump exp(-10^8 (t - 37/10)^2) expanded) takes the factoring past every hang
    guard. The symbol stands for every positive value, that exp's among them, so a sign shown with it holds."""
    swaps = {}
    for e in expr.atoms(sp.exp):
        k, _ = e.args[0].as_coeff_Mul()
        if k.is_Integer and abs(k) > MAX_EXP_MULTIPLE and e.args[0].is_extended_real is True:
            swaps[e] = sp.Dummy(f"w{len(swaps)}", positive=True)
    if not swaps:
        return sp.factor(expr)
    return sp.factor(expr.xreplace(swaps)).xreplace({w: e for e, w in swaps.items()})


def positive_where(expr, *positive) -> bool:
    """``expr`` > 0 by the symbols' assumptions, factor by factor, where each expression of ``positive``
    is > 0: every factor has a known sign (by assumptions, or as a positive or negative multiple of one of
    them), a base with a non-integer exponent is positive, and the negative factors are even in number."""
    negative = 0
    for factor in sp.Mul.make_args(_factor_tamed(expr)):
        base, exponent = factor.as_base_exp()
        sign = _sign_where(base, positive)
        if sign is None or (sign < 0 and not exponent.is_integer) or not _real_where(exponent, positive):
            return False
        if sign < 0 and exponent.is_odd:
            negative += 1
        elif sign < 0 and not exponent.is_even:
            return False
    return negative % 2 == 0


def _real_where(expr, positive) -> bool:
    """``expr`` is real where each expression of ``positive`` is > 0: real by the symbols' assumptions, or a
    quotient of a real numerator by a denominator of known sign there (sympy leaves the exponent of
    exp(-D^2/(s1^2 - 2 s2^2)) undecided, as the denominator could vanish; the finiteness condition
    2 s2^2 - s1^2 > 0 says it does not)."""
    if expr.is_real:
        return True
    numerator, denominator = sp.fraction(sp.together(expr))
    if numerator.is_real is not True or denominator.is_real is not True or denominator == expr:
        return False
    return positive_where(denominator, *positive) or positive_where(-denominator, *positive)


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


def positive_bases_split(expr, *positive) -> sp.Expr:
    """``expr`` with the base of each power with a non-integer exponent written as its factors, each raised
    to the exponent: (1 - t^2)^(1 - alpha) = (1 - t)^(1 - alpha) (1 + t)^(1 - alpha). (a b)^e = a^e b^e
    holds for a, b > 0 and every real e, so a base is split only when every factor (up to its sign, with a
    positive constant left) is positive where the expressions of ``positive`` are (:func:`positive_where`);
    any other base is kept as it is."""
    swaps = {}
    for power in sorted(expr.atoms(sp.Pow), key=sp.default_sort_key):
        base, exponent = power.as_base_exp()
        if exponent.is_integer or base.is_Atom:
            continue
        numerator, denominator = sp.fraction(sp.together(base))
        try:
            (top, above), (bottom, below) = sp.factor_list(numerator), sp.factor_list(denominator)
        except SYMBOLIC_ERRORS:
            continue
        coefficient = top / bottom
        factors = list(above) + [(f, -m) for f, m in below]
        if sum(abs(m) for _, m in factors) < 2:
            continue
        parts = []
        for factor, multiplicity in factors:
            if positive_where(factor, *positive):
                parts.append(factor ** (multiplicity * exponent))
            elif positive_where(-factor, *positive):
                parts.append((-factor) ** (multiplicity * exponent))
                coefficient *= (-1) ** multiplicity
            else:
                break
        else:
            if coefficient.is_positive:
                swaps[power] = coefficient ** exponent * sp.Mul(*parts)
    return expr.xreplace(swaps)


def linear_factor_out(expr, variable):
    """``expr`` as (variable - r) k: its one factor of degree 1 in ``variable`` (exponent 1, r free of it) that
    is not positive by the symbols' assumptions, as the tuple (r, k) with k = expr / (variable - r) cancelled;
    None where there is no such factor or more than one (more turning points), or where the numerator is no
    polynomial in the variable."""
    numerator, _ = sp.fraction(expr)  # the route's derivatives come cancelled (the "derivative" rule)
    # a numerator polynomial in the variable only: factor would expand exp(-10^8 (v - 37/10)^2) into powers of
    # exp(v), and the signs of what is left take minutes
    if not numerator.is_polynomial(variable):
        return None
    numerator = _factor_tamed(numerator)
    linear = []
    for factor in sp.Mul.make_args(numerator):
        if variable not in factor.free_symbols:
            continue
        try:
            poly = sp.Poly(factor, variable)
        except SYMBOLIC_ERRORS:
            return None
        # a linear factor positive over the whole range (v + 1) has no root there: it belongs to k
        if (poly.degree() == 1 and not any(variable in c.free_symbols for c in poly.all_coeffs())
                and not positive_where(factor)):
            linear.append(poly)
    if len(linear) != 1:
        return None
    a, b = linear[0].all_coeffs()
    root = sp.cancel(-b / a)
    return sp.Tuple(root, sp.cancel(expr / (variable - root)))


def exp_as_positive_symbols(expr) -> sp.Expr:
    """``expr`` with each exp(u), u real, replaced by a new positive symbol w (named so it clashes with none
    in ``expr``): 1 + w where u > 0, 1/(1 + w) where u < 0, w otherwise, by the symbols' assumptions; factored.

    The new symbols range over a superset of the values exp(u) takes (they are free of the other symbols),
    so a sign shown for every value of them holds for the original expression."""
    return _exps_swapped(expr, reciprocals=False)


def exps_as_positive_symbols(expr) -> sp.Expr:
    """Like :func:`exp_as_positive_symbols`, after cosh, sinh and tanh are written through exp, with exp(u)
    and exp(-u) one symbol w and its reciprocal: 2 - 2 cosh(1/b) is 2 - w - 1/w with w = 1 + s (1/b > 0),
    which factors as -s^2/(1 + s)."""
    def through_exp(u, kind):
        up, down = sp.exp(u), sp.exp(-u)
        return {sp.cosh: (up + down) / 2, sp.sinh: (up - down) / 2, sp.tanh: (up - down) / (up + down)}[kind]

    flat = expr.replace(lambda e: type(e) in (sp.cosh, sp.sinh, sp.tanh), lambda e: through_exp(e.args[0], type(e)))
    return _exps_swapped(flat, reciprocals=True)


def powers_as_positive_symbols(expr) -> sp.Expr:
    """Like :func:`exps_as_positive_symbols`, with each power b**u of a positive number b and a real,
    non-constant u taken as exp(u log b) first: 4 log(2)^2 2^t - 2 log(2) over t > 0 is
    4 log(2)^2 (1 + w) - 2 log(2), positive for every w > 0 (the Poisson curves' 2^alpha)."""
    return _exps_swapped(expr, reciprocals=True, powers=True)


def _exponential_power(e) -> bool:
    """``e`` is b**u with b a positive number and u a real expression that is no number (2**t)."""
    return (isinstance(e, sp.Pow) and e.base.is_number and e.base.is_positive is True and e.base != 1
            and not e.exp.is_number and e.exp.is_real is True)


def has_exponential_power(expr) -> bool:
    return isinstance(expr, sp.Basic) and any(_exponential_power(e) for e in expr.atoms(sp.Pow))


def _exps_swapped(expr, reciprocals: bool, powers: bool = False) -> sp.Expr:
    """Each exp(u), u real, as a new positive symbol (:func:`exp_as_positive_symbols`); with ``reciprocals``,
    exp(-u) as the reciprocal of exp(u)'s symbol; with ``powers``, b**u as exp(u log b) (b a positive number)."""
    taken = {str(s) for s in expr.free_symbols}
    names = (f"w_exp{k}" for k in range(1, 10**6) if f"w_exp{k}" not in taken)
    symbols, swaps = {}, {}
    exponents = [(e, e.args[0]) for e in expr.atoms(sp.exp)]
    if powers:
        # sympy writes exp(t log 2) back as 2**t: the power's exponent of e is formed, never the exp itself
        exponents += [(e, sp.expand(e.exp * sp.log(e.base))) for e in expr.atoms(sp.Pow) if _exponential_power(e)]
    for e, u in sorted(exponents, key=lambda pair: sp.default_sort_key(pair[0])):
        if u.is_real is not True:  # exp of a complex number is no positive number: left as it is
            continue
        key, inverse = (-u, True) if reciprocals and u.could_extract_minus_sign() else (u, False)
        if key not in symbols:
            w = sp.Symbol(next(names), positive=True)
            symbols[key] = 1 + w if key.is_positive else (1 / (1 + w) if key.is_negative else w)
        swaps[e] = 1 / symbols[key] if inverse else symbols[key]
    return sp.factor(expr.xreplace(swaps)) if isinstance(expr, sp.Expr) else expr.xreplace(swaps)


def _positive_argument(a) -> bool:
    """``a`` > 0 by the symbols' assumptions, factored, or through its reciprocal with the square roots moved
    out of the denominator (2 gamma^2 + D^2/2 - D sqrt(4 gamma^2 + D^2)/2 is positive because its conjugate is
    and their product is gamma^2 (4 gamma^2 + D^2))."""
    if sp.factor(a).is_positive:
        return True
    roots = [e for e in a.atoms(sp.Pow) if not e.exp.is_Integer]
    # radsimp takes sqrt(x) sqrt(y) for sqrt(x y), which is wrong when x, y < 0: every root's base must be
    # non-negative by the symbols' assumptions (sqrt(4 gamma^2 + D^2) is)
    if not roots or not all(e.exp.is_Rational and e.base.is_nonnegative for e in roots):
        return False
    return sp.factor(sp.radsimp(1 / a)).is_positive is True


#: functions continuous wherever their value and their arguments' values are finite reals: an expression
#: built from these alone, every node of it a finite real by the symbols' assumptions, is continuous on
#: the whole range of its symbols (:func:`continuous_everywhere`)
CONTINUOUS_FUNCTIONS = (sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.sin, sp.cos, sp.sinh, sp.cosh, sp.tanh,
                        sp.atan, sp.erf)


def continuous_everywhere(expr) -> bool:
    """``expr`` is finite, real and continuous for every value of its symbols their assumptions allow: every
    node of it is a finite real by the assumptions, and every operation is one of
    :data:`CONTINUOUS_FUNCTIONS` (no Piecewise, Max, Abs, floor: they jump or kink). A pole such as
    1/(v - 1) or a sin(1/(v - 1)) behind it is a node that is not finite for v > 0, so it is refused. The base
    of a negative power is read factored first (1/((v + 1)^2 - 1) as 1/(v (v + 2)), finite for v > 0)."""
    expr = expr.replace(lambda n: n.is_Pow and n.exp.is_number and n.exp.is_negative,
                        lambda n: sp.Pow(sp.factor(sp.expand(n.base)), n.exp))
    for node in sp.preorder_traversal(expr):
        if node.is_extended_real is not True or node.is_finite is not True:
            return False
        if node.args and not isinstance(node, CONTINUOUS_FUNCTIONS):
            return False
        # x**y with a variable exponent jumps at 0**0 (1 there, 0 for y > 0 at x = 0): a positive base only
        if isinstance(node, sp.Pow) and not node.exp.is_number and node.base.is_positive is not True:
            return False
    return True


def first_conditions(expr) -> sp.Tuple:
    """The first condition of every Piecewise in ``expr``, in a fixed order; an error where there is none,
    or where a first branch holds another Piecewise."""
    pieces = sorted(expr.atoms(sp.Piecewise), key=sp.default_sort_key)
    if not pieces or any(pw.args[0][0].has(sp.Piecewise) for pw in pieces):
        raise ValueError("first_conditions: no Piecewise, or one nested in a first branch")
    return sp.Tuple(*(pw.args[0][1] for pw in pieces))


def strict_positive_parts(condition) -> list | None:
    """The expressions g that a condition, a conjunction of strict relationals ``g > 0`` / ``a > b``, makes
    positive (a - b for a > b); [] for ``true``; None for any other condition (g >= 0 does not make g
    positive: g = 0 is finite there, and log g is not)."""
    if condition == sp.true:
        return []
    found = []
    for part in sp.And.make_args(condition):
        if not (part.is_Relational and part.rel_op in (">", "<")):
            return None
        found.append(part.gts - part.lts)
    return found


def conditions_hold_where(conditions, *positive) -> bool:
    """Each condition holds where each expression of ``positive`` is > 0: it is true, or a conjunction of
    strict relationals ``a > b`` with a - b > 0 there (:func:`strict_positive_parts`, :func:`positive_where`)."""
    for condition in conditions:
        parts = strict_positive_parts(condition)
        if parts is None or not all(positive_where(g, *positive) for g in parts):
            return False
    return True


def one_piece_infinite(expr) -> sp.Basic:
    """True when every Piecewise of ``expr`` is (f, g), (oo, True), and ``expr`` is +oo with any one of them
    at +oo and the others at their first branch."""
    pieces = sorted(expr.atoms(sp.Piecewise), key=sp.default_sort_key)
    if not pieces or any(len(pw.args) != 2 or pw.args[1] != (sp.oo, sp.true) for pw in pieces):
        return sp.false
    for pw in pieces:
        swaps = {other: (sp.oo if other == pw else other.args[0][0]) for other in pieces}
        if expr.xreplace(swaps) != sp.oo:
            return sp.false
    return sp.true


def first_pieces(expr):
    """``expr`` with every Piecewise replaced by its first branch."""
    return expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: e.args[0][0])


def limit_from_above(expr, variable, point):
    """sympy's one-sided limit; of a Max or a Min, branch by branch (they are continuous, and sympy's limit
    does not take them: "MRV set computation for functions in several variables"). Where sympy's limit has
    no finite real value, a 0/0 quotient of functions analytic at the point is taken by l'Hôpital's rule
    (:func:`_quotient_limit`)."""
    if isinstance(expr, (sp.Max, sp.Min)):
        return expr.func(*(limit_from_above(a, variable, point) for a in expr.args))
    if sp.fraction(expr)[1].has(variable):
        # a Rényi curve's log(A)/(alpha - 1) with A(1) = 1: l'Hôpital's rule first, where it applies, is exact
        # and quick; sympy's limit of two Gaussians' curve with s1 = s2 + s runs past a minute
        by_rule = _quotient_limit(expr, variable, point)
        if by_rule is not None:
            return by_rule
    found = sp.limit(expr, variable, point, "+")
    if found.is_finite is True and found.is_extended_real is True and not found.has(sp.Limit, sp.nan, sp.sign):
        return found
    by_rule = _quotient_limit(expr, variable, point)
    return found if by_rule is None else by_rule


#: the nodes a function may have to be analytic wherever each power's base and each log's argument is
#: positive (sums, products, powers, exp and log of the symbols)
_ANALYTIC_NODES = (sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.Symbol, sp.Number, sp.NumberSymbol)


def _analytic_at(f, variable, point) -> bool:
    if not all(isinstance(n, _ANALYTIC_NODES) for n in sp.preorder_traversal(f)):
        return False
    for n in sp.preorder_traversal(f):
        if isinstance(n, sp.Pow) and n.exp.is_Integer:
            # x**k: a polynomial for k >= 0, a pole where x = 0 for k < 0
            if n.exp < 0 and n.base.has(variable) and sp.simplify(n.base.subs(variable, point)).is_zero is not False:
                return False
            continue
        inner = n.base if isinstance(n, sp.Pow) else (n.args[0] if isinstance(n, sp.log) else None)
        if inner is not None and inner.has(variable) and sp.simplify(inner.subs(variable, point)).is_positive is not True:
            return False
    return True


def _quotient_limit(expr, variable, point):
    """The limit at ``point`` of ``N/D`` by l'Hôpital's rule, N(point) = D(point) = 0 shown by simplify, D a
    polynomial in ``variable`` with a simple root there and N analytic at the point (its powers' bases and
    logs' arguments positive there), so N/D -> N'(point)/D'(point): the form log(A)/(alpha - 1) of a Rényi
    curve whose A(1) = 1 sympy does not see (a three-outcome pmf's curve: sympy's limit gave
    oo*sign(log(...)) with the log's argument 1). None where the rule does not apply."""
    num, den = sp.fraction(sp.together(expr))
    if not den.has(variable) or not den.is_polynomial(variable):
        return None
    slope = sp.diff(den, variable).subs(variable, point)
    if sp.simplify(den.subs(variable, point)) != 0 or sp.simplify(slope) == 0 or not _analytic_at(num, variable, point):
        return None
    if sp.simplify(num.subs(variable, point)) != 0:
        return None
    value = sp.simplify(sp.diff(num, variable).subs(variable, point) / slope)
    return value if value.is_finite is True else None


def extreme_outside(expr):
    """A sum with exactly one Max or Min term as that Max or Min of the branches plus the other terms."""
    extremes = [a for a in expr.args if isinstance(a, (sp.Max, sp.Min))]
    if not isinstance(expr, sp.Add) or len(extremes) != 1:
        raise ValueError("extreme_outside: not a sum with one Max or Min term")
    rest = expr - extremes[0]
    return extremes[0].func(*(a + rest for a in extremes[0].args), evaluate=False)


def extreme_times_nonnegative(expr):
    """A product with exactly one Max or Min factor and the other factors non-negative by the assumptions as
    that Max or Min of the branches times the other factors: Max(a, b) c = Max(a c, b c) for c >= 0."""
    extremes = [a for a in expr.args if isinstance(a, (sp.Max, sp.Min))]
    if not isinstance(expr, sp.Mul) or len(extremes) != 1:
        raise ValueError("extreme_times_nonnegative: not a product with one Max or Min factor")
    rest = sp.Mul(*[a for a in expr.args if a is not extremes[0]])
    if rest.is_nonnegative is not True:
        raise ValueError("extreme_times_nonnegative: the other factors are not shown non-negative")
    return extremes[0].func(*(a * rest for a in extremes[0].args), evaluate=False)


@functools.lru_cache(maxsize=256)
def positive_log_coefficient(expr):
    """``(a, terms)``: the numerator of ``expr`` (its denominator positive by the assumptions) as a sum of
    ``terms``, and ``a`` the factor that multiplies its first logarithm, positive by the assumptions and not a
    number; None when there is none."""
    num, den = sp.fraction(expr)
    if den.is_positive is not True and sp.factor(den).is_positive is not True:
        return None
    logs = sorted(num.atoms(sp.log), key=sp.default_sort_key)
    if not logs:
        return None
    parts = sp.collect(sp.expand(num), logs, evaluate=False)
    first = next((parts[g] for g in logs if g in parts), None)
    if first is None or first.has(sp.log):
        return None
    a = sp.factor(first)
    a = -a if a.could_extract_minus_sign() else a
    if a.is_number or a.is_positive is not True:
        return None
    return a, tuple(coeff * g for g, coeff in sorted(parts.items(), key=lambda kv: sp.default_sort_key(kv[0])))


def upper_end(expr, variable):
    """b where ``expr`` > 0 says ``variable`` < b: ``expr`` = a - c variable with a, c positive numbers
    (b = a/c). Raises for any other expression."""
    numerator, denominator = sp.fraction(sp.together(expr))
    factors = [f for f in sp.Mul.make_args(sp.factor_terms(numerator)) if variable in f.free_symbols]
    rest = sp.Mul(*[f for f in sp.Mul.make_args(sp.factor_terms(numerator)) if variable not in f.free_symbols])
    # a positive multiple of one linear factor: (1 - 3t)/(8 sigma^2), the finiteness condition of a direction
    if len(factors) != 1 or variable in denominator.free_symbols or not positive_where(rest / denominator):
        raise ValueError(f"upper_end: {sp.sstr(expr)} > 0 sets no upper end of {variable}")
    g = sp.expand(factors[0])
    slope, a = g.diff(variable), g.subs(variable, 0)
    if not (slope.is_number and a.is_number and g.diff(variable, 2) == 0 and slope.is_negative and a.is_positive):
        raise ValueError(f"upper_end: {sp.sstr(expr)} > 0 sets no upper end of {variable}")
    return -a / slope


def range_mapped(expr, variable, end, s):
    """``expr`` with ``variable`` = end s/(1 + s), each log's argument put over one factored denominator and
    the logs expanded where sympy may (log(1 - s/(1 + s)) is -log(1 + s)): the forms whose limits and
    derivatives sympy takes at once (unsimplified, its limits ran into the hang guard)."""
    mapped = expr.subs(variable, end * s / (1 + s))
    mapped = mapped.replace(lambda n: isinstance(n, sp.log), lambda n: sp.log(sp.factor(sp.together(n.args[0]))))
    return sp.together(sp.expand_log(mapped))


def sign_part(expr):
    """``expr`` without its factors that are positive by the symbols' assumptions: the numerator and the
    denominator over a common denominator, each with its common factors out (``factor_terms``), every factor
    sympy knows to be positive dropped. Dropping a positive factor keeps the sign everywhere, so the result
    is >= 0 exactly where ``expr`` is. The Poisson curves' gap lam (2 4^t - 2 t 2^t - 2^t - 1)/(2^t t) has the
    sign of 2 4^t - 2 t 2^t - 2^t - 1. Raises where no factor is dropped."""
    numerator, denominator = sp.fraction(sp.together(expr))
    kept, dropped = [], False
    for part, power in ((numerator, 1), (denominator, -1)):
        for factor in sp.Mul.make_args(sp.factor_terms(part)):
            if factor == 1:
                continue
            if factor.is_positive is True:
                dropped = True
            else:
                kept.append(factor ** power)
    if not dropped:
        raise ValueError("sign_part: no factor positive by the symbols' assumptions")
    return sp.Mul(*kept)


def log_coefficient_out(expr):
    """``expr`` with its positive denominator dropped and its numerator divided by the positive factor of its
    first logarithm (:func:`positive_log_coefficient`): the same sign everywhere, and the next derivative
    rational where that factor was the only one (2 t^2 (t + 2)^2 log((t + 2)/t) - 4 t^3 - ... over a positive
    polynomial, a KL bound's derivative)."""
    found = positive_log_coefficient(expr)
    if found is None:
        raise ValueError("log_coefficient_out: no positive factor of a logarithm to divide by")
    a, terms = found
    return sp.Add(*[sp.cancel(t / a) for t in terms])


def log_of_extreme(expr):
    """Each log(Max(a_i)**k) (k > 0, every a_i positive where the symbols' assumptions say so) as
    Max(k log a_i), and the same for a Min: log is increasing on (0, oo), so it commutes with both, and a
    positive power of non-negative branches is increasing too. Bern(p) against Bern(p^2) has D_oo =
    log(Max(1/p, 1 + p)) as a paper writes it; the derivation gives Max(log(1/p), log(1 + p)). Raises where
    no log of a Max or Min can be so written."""
    def swap(node):
        arg, k = node.args[0], sp.S.One
        if isinstance(arg, sp.Pow) and isinstance(arg.base, (sp.Max, sp.Min)) and arg.exp.is_positive is True:
            arg, k = arg.base, arg.exp
        if not isinstance(arg, (sp.Max, sp.Min)) or not all(positive_where(a) for a in arg.args):
            return node
        return arg.func(*(k * sp.log(a) for a in arg.args), evaluate=False)

    out = expr.replace(lambda n: isinstance(n, sp.log), swap)
    if out == expr:
        raise ValueError("log_of_extreme: no log of a Max or Min with positive branches")
    return out


def abs_as_max(expr):
    """Each Abs(u) of a real u as Max(u, -u), Maxes inside a Max flattened into it:
    Max(Abs(a), Abs(b)) = Max(a, -a, b, -b), a Max of branches the derived D_oo of both directions pairs with."""
    if any(a.args[0].is_extended_real is not True for a in expr.atoms(sp.Abs)):
        raise ValueError("abs_as_max: an Abs of an argument not shown real")
    out = expr.replace(lambda n: isinstance(n, sp.Abs), lambda n: sp.Max(n.args[0], -n.args[0], evaluate=False))
    if not isinstance(out, sp.Max):
        return out
    flat = []
    for a in out.args:
        flat.extend(a.args if isinstance(a, sp.Max) else (a,))
    return sp.Max(*flat, evaluate=False)


def _real_with_logs_factored(expr) -> bool:
    """``expr`` is real by the symbols' assumptions, each log's argument shown positive first (factored, so
    sympy sees 1 + (w + 1)/(s + 1) - 1/(s + 1) as the positive (s + w + 1)/(s + 1), or through its
    rationalized reciprocal, :func:`_positive_argument`): the log of a positive number is real."""
    logs = {}
    for k, a in enumerate(sorted(expr.atoms(sp.log), key=sp.default_sort_key)):
        logs[a] = sp.Dummy(f"log{k}", real=True) if _positive_argument(a.args[0]) else sp.log(sp.factor(a.args[0]))
    return expr.xreplace(logs).is_extended_real is True


#: the rewrites a proof may use, by name: each a deterministic function of sympy inputs to a sympy output
RULES: dict[str, Callable[..., sp.Basic]] = {
    # claim - divergence simplified
    "simplify_difference": lambda c, t: sp.simplify(c - t),
    # the same with hyperbolic functions written through exp (eps tanh(eps/2) against (eps e^eps - eps)/(e^eps + 1))
    "simplify_difference_as_exp": lambda c, t: sp.simplify((c - t).rewrite(sp.exp)),
    # both sides real for every value of the symbols, by their assumptions
    "both_real": lambda c, t: _truth(c.is_extended_real is True and t.is_extended_real is True),
    # exp((alpha-1) claim) - exp((alpha-1) divergence), each expanded, simplified
    "exp_difference": lambda c, t, a: sp.simplify(sp.expand(sp.exp((a - 1) * c)) - sp.expand(sp.exp((a - 1) * t))),
    # exp(claim) - exp(divergence), simplified (same sign as claim - divergence for real sides)
    "exp_gap": lambda c, t: sp.simplify(sp.exp(c) - sp.exp(t)),
    # each exp(u) as a new positive symbol, with what the sign of u says (exp_as_positive_symbols)
    "exp_as_positive_symbols": exp_as_positive_symbols,
    # the same after hyperbolic functions go through exp and exp(-u) is 1/exp(u) (exps_as_positive_symbols)
    "exps_as_positive_symbols": exps_as_positive_symbols,
    # both sides real for every value of the symbols and of positive symbols standing for their exps
    "both_real_with_exp_as_positive": lambda c, t: _truth(all(
        _real_with_logs_factored(e) for e in exp_as_positive_symbols(sp.Tuple(c, t)))),
    # claim - divergence expanded, its logs expanded where sympy's assumptions allow, simplified
    "expand_log_difference": lambda c, t: sp.simplify(sp.expand_log(sp.expand(c - t))),
    # the same with every log expanded (exact where every log argument is positive: checked apart)
    "forced_expand_log_difference": lambda c, t: sp.simplify(sp.expand_log(sp.expand(c - t), force=True)),
    # powers of products of positive factors split into their factors (positive_bases_split)
    "positive_bases_split": positive_bases_split,
    # exp((alpha-1) claim) - exp((alpha-1) divergence) expanded, powers of one base combined and equal exponents'
    # bases multiplied (exact where every base of a non-integer power is positive: checked apart), simplified
    "powsimp_exp_difference": lambda c, t, a: sp.simplify(sp.powsimp(
        sp.expand(sp.exp((a - 1) * c)) - sp.expand(sp.exp((a - 1) * t)), force=True)),
    # an expression positive where the given ones are (positive_where)
    "positive_where": lambda e, *g: _truth(positive_where(e, *g)),
    # the sign of an expression by the symbols' assumptions
    # (a common factor out first: sympy leaves lam (3 log 2 - 2) undecided, not lam and 3 log 2 - 2 apart)
    "is_nonnegative": lambda e: _truth(e == 0 or e.is_nonnegative or sp.factor_terms(e).is_nonnegative),
    "is_nonpositive": lambda e: _truth(e == 0 or e.is_nonpositive or sp.factor_terms(e).is_nonpositive),
    # a route through branches or cases names the route that proved each (its input): no rewrite, a record
    # that a replay follows instead of searching
    "route_choice": lambda part, route: sp.true,
    # the divergence's limit at the lower end of the order range (D is non-decreasing in alpha)
    "limit_from_above": limit_from_above,
    # a sum with one Max or Min term, the rest added to each of its branches (Max(a, b) + c = Max(a + c, b + c))
    "extreme_outside": extreme_outside,
    # Max(a, b) c as Max(a c, b c) for c >= 0 (extreme_times_nonnegative)
    "extreme_times_nonnegative": extreme_times_nonnegative,
    # Abs(u) as Max(u, -u), Maxes flattened (abs_as_max)
    "abs_as_max": abs_as_max,
    # log(Max(a, b)**k) as Max(k log a, k log b) for positive a, b and k > 0 (log_of_extreme)
    "log_of_extreme": log_of_extreme,
    # a claim's Piecewise where the divergence is finite: their first conditions, each holding where the given
    # expressions are positive, and the claim with each Piecewise its first branch
    "first_conditions": first_conditions,
    "conditions_hold_where": lambda conditions, *g: _truth(conditions_hold_where(conditions, *g)),
    "first_pieces": first_pieces,
    "one_piece_infinite": one_piece_infinite,
    # the route through monotonicity: an expression continuous for every value of its symbols, its limit at
    # +oo in one of them, its value at 0, its derivative in one of them over a common denominator (logs
    # expanded where sympy may; factor would expand exp(-10^8 (t - 37/10)^2) into powers of exp(t)), and
    # the record of which variable and which end of its range the proof uses (a replay follows it)
    "continuous_everywhere": lambda e: _truth(continuous_everywhere(e)),
    "limit_at_infinity": lambda e, v: sp.limit(e, v, sp.oo),
    "value_at_zero": lambda e, v: e.subs(v, 0),
    "derivative": lambda e, v: sp.cancel(sp.expand_log(sp.diff(e, v))),
    "monotone_choice": lambda e, v, end: sp.true,
    # the turning point of the route through monotonicity: a derivative as (v - r) k (linear_factor_out), and
    # the expression's value at v = r
    "linear_factor_out": linear_factor_out,
    "value_at": lambda e, v, r: sp.simplify(e.subs(v, r)),
    # the root of a monotone numerator: a derivative's numerator and denominator, and the record of the root
    # the proof found numerically (a replay reads it; value_at checks that it is one)
    "numerator_denominator": lambda e: sp.Tuple(*sp.fraction(e)),
    "root_choice": lambda e, v, r: sp.true,
    # an upper end b of a variable v > 0 that a positive expression a - c v (a, c > 0 numbers) sets, and an
    # expression with v = b s/(1 + s) (s > 0 ranges over v in (0, b))
    "upper_end": upper_end,
    # a polynomial's coefficients in one of its symbols, each free of it (a non-polynomial raises)
    "coefficients": lambda e, u: sp.Tuple(*sp.Poly(e, u).all_coeffs()),
    "range_mapped": range_mapped,
    # an expression without its positive factors (sign_part), and b**u as a positive symbol too
    # (powers_as_positive_symbols)
    "sign_part": sign_part,
    "powers_as_positive_symbols": powers_as_positive_symbols,
    # a derivative as a function of its sign: the numerator over the positive factor of its first log
    "log_coefficient_out": log_coefficient_out,
    # the certified pass's difference forms
    "cancel_expand": lambda e: sp.cancel(sp.expand(e)),
    "simplify": lambda e: sp.simplify(e),
}


@dataclass(frozen=True)
class Step:
    """One rewrite: ``RULES[rule](*inputs) == output``."""

    rule: str
    inputs: tuple
    output: sp.Basic

    def to_data(self) -> dict:
        return {"rule": self.rule, "inputs": [sp.srepr(e) for e in self.inputs], "output": sp.srepr(self.output)}


class ReplayMismatch(Exception):
    """A replayed step differs from the stored one (another rule, other inputs or another output)."""


class Chain:
    """The steps of one proof route as they are made (``replay=None``) or checked against ``replay``.

    :meth:`run` applies a rule under a hang guard of ``seconds`` and records the step; a rule that
    raises, or whose guard fires, gives None (no step). In replay mode the step made must equal the next
    stored one, else :class:`ReplayMismatch`.
    """

    def __init__(self, guards: HangGuards, seconds: float, replay: tuple[Step, ...] | None = None,
                 memo: dict | None = None):
        self.guards, self.seconds, self.replay = guards, seconds, replay
        self.steps: list[Step] = []
        self.attempts = 0
        #: outputs of the rewrites already run, shared by the sub-chains of one search (a rule is a function
        #: of its inputs, so a search that reaches the same step twice runs it once)
        self.memo = memo

    def sub(self) -> "Chain":
        """A chain for one alternative of a search: its steps are kept apart (:meth:`adopt`), its memo shared."""
        return Chain(self.guards, self.seconds, memo=self.memo)

    def run(self, rule: str, *inputs):
        self.attempts += 1
        # a step's inputs are sympy trees, as a certificate writes and reads them (a Python 0 is no tree)
        inputs = tuple(sp.Integer(i) if isinstance(i, int) and not isinstance(i, bool) else i for i in inputs)
        key = (rule, inputs)
        if self.memo is not None and key in self.memo:
            out = self.memo[key]
        else:
            try:
                out = self.guards.run(f"the symbolic proof ({rule})", self.seconds, RULES[rule], *inputs)
            except (HangGuardFired, *SYMBOLIC_ERRORS):  # sympy raises many kinds; a failed rewrite is just no step
                out = None
            if self.memo is not None:
                self.memo[key] = out
        if self.replay is not None:
            self._compare(rule, inputs, out)
        if out is None:
            return None
        self.steps.append(Step(rule, tuple(inputs), out))
        return out

    def _compare(self, rule, inputs, out):
        i = len(self.steps)
        if i >= len(self.replay):
            raise ReplayMismatch(f"step {i + 1} ({rule}) is not in the certificate")
        stored = self.replay[i]
        if stored.rule != rule:
            raise ReplayMismatch(f"step {i + 1}: the certificate has {stored.rule}, the route makes {rule}")
        if len(stored.inputs) != len(inputs) or any(a != b for a, b in zip(stored.inputs, inputs)):
            raise ReplayMismatch(f"step {i + 1} ({rule}): its inputs are not those the claim and the divergence give")
        if out is None or out != stored.output:
            raise ReplayMismatch(f"step {i + 1} ({rule}): re-running it gives {sp.sstr(out)[:80]}, the certificate "
                                 f"says {sp.sstr(stored.output)[:80]}")

    def stored_next(self) -> Step | None:
        """In replay mode, the stored step the route makes next (None past the end, or when proving)."""
        if self.replay is None or len(self.steps) >= len(self.replay):
            return None
        return self.replay[len(self.steps)]

    def adopt(self, other: "Chain") -> None:
        """Take the steps of a sub-chain that proved a part of the relation (its attempts are counted apart)."""
        self.steps.extend(other.steps)

    def finish(self) -> None:
        """In replay mode: every stored step was made."""
        if self.replay is not None and len(self.steps) != len(self.replay):
            raise ReplayMismatch(f"the certificate has {len(self.replay)} steps, the route made {len(self.steps)}")
