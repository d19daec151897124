"""A symbolic proof of a claim's relation to the divergence: a chain of named sympy rewrites.

The claim and the divergence are first written over variables that range exactly over the domains, closed
ends included: a parameter p in (a, b) becomes a + (b - a)/(1 + s) with s > 0, p in [a, b] becomes
a + (b - a) 4s/(1 + s)^2 with s >= 0, p in (a, oo) becomes a + s (:func:`_domain_variable`; onto maps, so
what holds for every s holds for every p), the parameters held fixed take their values, and the order
becomes alpha = 1 + t (t > 0) for a claim about alpha > 1, alpha = 1/(1 + v) (v > 0) about alpha < 1
(:func:`proof_context`). The new variables never share a name with a symbol of the claim or the divergence. Then the *routes* are tried in a fixed order (:data:`ROUTES`); each is a short
chain of rewrites (:mod:`rdpsym.claims.rewrite`) ending in a fact that implies the relation:

``==``
    ``simplify(claim - D) = 0``; or ``exp((alpha-1) claim) - exp((alpha-1) D)`` simplifies to 0 with both
    sides real by the symbols' assumptions (equality of reals, alpha != 1); or ``expand_log(claim - D)``
    simplifies to 0; or, regime by regime, every log argument and every base of a non-integer power is
    positive where D is finite, so the forced ``expand_log`` is exact there, and the difference expands to 0.
``<=`` / ``>=``
    ``simplify(claim - D)`` is non-negative / non-positive by the assumptions; or (``<=``) the claim is at
    least D_oo, and D_alpha <= D_oo at every order (Mironov 2017, arXiv:1702.07476 v3, Prop. 9); or (``<=``,
    alpha >= 1) the claim is at least alpha D_oo^2/2, and eps-DP implies (eps^2/2)-zCDP (Bun and Steinke
    2016, Prop. 3.3); or (``>=``) the claim is non-positive, and a Rényi divergence of probability
    distributions is non-negative (van Erven and Harremoës 2014, Thm. 8); or the claim is at most the
    divergence's limit at the lower end of the order range (``>=``; the KL at alpha -> 1), D_alpha being
    non-decreasing in alpha (Prop. 9). The routes
    through theorems about Rényi divergences are taken only for the divergence of a target with densities,
    and a certificate that uses one must bind its divergence (and D_oo) to the densities.
``branches`` (``<=`` / ``>=``)
    A Min or a Max in the claim or the divergence, branch by branch: D <= Min(c_i) when every c_i is
    at least D, each by any route above (pure DP's min(eps, alpha eps^2/2): D_oo and zCDP), D <= Max(c_i)
    when one is; likewise for a Max or a Min of the divergence, compared by rewrites alone.
``cases`` (every relation)
    Where a kink (Abs, Max, Min, sign, a Piecewise condition) cuts a parameter's domain at one point, linear
    in that parameter alone (rho = 0 in Abs(rho) and Max(1 - rho, 1 + rho)), each side of the point is
    proved apart, the parameter written from the point so that every kink's sign is plain.
The routes that prove parts record which route proved each (a ``route_choice`` step), and the replay
follows that record.

What a proof may spend is counted: one attempt per rewrite, the routes in a fixed order. Each rewrite
runs under a hang guard (``seconds``, far above sympy's typical time), which says so when it fires. The
steps of the route that succeeds are the proof's data (:class:`Proof`): :func:`replay` runs that one
route again and compares every step, which is how a certificate's proof is checked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from itertools import product

import mpmath
import sympy as sp
from sympy.functions.elementary.hyperbolic import HyperbolicFunction

from .. import printing
from .._numbers import SYMBOLIC_ERRORS
from .._timeout import StepTimeout, deadline_passed, run_with_time_limit
from ..derive.sign import numeric_sign
from ..symbols import alpha as ALPHA
from .guard import HangGuardFired, HangGuards
from .orders import conditions_at
from .rewrite import (Chain, ReplayMismatch, Step, has_exponential_power, positive_log_coefficient,
                      strict_positive_parts, upper_end)

__all__ = ["Proof", "ProofContext", "prove", "proof_context", "replay", "ROUTES", "PROVE_ATTEMPT_SECONDS"]

#: hang guard of one rewrite (check_claim's default ``prove_seconds``); sympy typically needs well under 1 s
PROVE_ATTEMPT_SECONDS = 60.0


@dataclass(frozen=True)
class ProofContext:
    """The claim and the divergence over the domains' variables (module docstring), with what the routes
    need: ``c``, ``t`` with the order substituted (``alpha_expr``; None for a claim about one order), ``c_free``,
    ``t_free`` with only the parameters substituted, and the texts the proof states."""

    relation: str
    order: object
    c: sp.Expr
    t: sp.Expr
    c_free: sp.Expr
    t_free: sp.Expr
    alpha_expr: sp.Expr | None
    regime: str
    where: str
    notes: tuple[str, ...]
    conditions: sp.Basic
    alpha_range: tuple
    max_divergence: sp.Expr | None
    subs: dict
    #: the divergence is of probability distributions (the target has densities, or the certificate a
    #: mechanism bound to it): the routes through theorems about Rényi divergences may be taken
    of_distributions: bool = False
    #: D_oo bounds both directions (the directions are closed under swapping P and Q, as a mechanism's are):
    #: eps-DP in the sense of Bun and Steinke, which the route through zCDP needs
    both_directions: bool = False
    #: the arguments :func:`proof_context` was called with, by name: the route by cases rebuilds the context
    #: over each piece of a parameter's domain from them
    inputs: dict = field(default_factory=dict, compare=False)
    #: the relation is to be shown only where the divergence's finiteness conditions hold (the route through
    #: a claim's own finiteness conditions has shown the rest): an order range those conditions bound may
    #: be mapped onto (0, oo)
    where_finite: bool = False


@dataclass(frozen=True)
class Proof:
    """A proof: the route that succeeded, what it shows (``text``), and its steps."""

    route: str
    text: str
    steps: tuple[Step, ...]
    attempts: int = 0

    def __str__(self) -> str:
        return self.text


def _fresh(name: str, taken: set, **assumptions) -> sp.Symbol:
    """A new symbol called ``name`` (or ``name_1``, ``name_2``, ...): never one of the names in ``taken``, so
    a substitution variable is never the same sympy symbol as a parameter (a parameter called ``t`` would
    otherwise tie alpha = 1 + t to itself, and the proof cover only that diagonal)."""
    candidates = [name] + [f"{name}_{k}" for k in range(1, len(taken) + 2)]
    chosen = next(n for n in candidates if n not in taken)
    taken.add(chosen)
    return sp.Symbol(chosen, **assumptions)


def _names(*exprs) -> set:
    return {str(s) for e in exprs if isinstance(e, sp.Basic) for s in e.free_symbols}


def _domain_variable(p, taken: set):
    """p over a variable s that ranges over p's interval domain *with its closed ends*, or None when p's own
    assumptions do (an interval from 0 to oo): (a, b) -> a + (b - a)/(1 + s), s > 0; (a, b] -> the same
    with s >= 0; [a, b) -> a + (b - a) s/(1 + s), s >= 0; [a, b] -> a + (b - a) 4s/(1 + s)^2, s >= 0
    (s = 0 gives a, s = 1 gives b); (a, oo) -> a + s, s > 0; [a, oo) -> a + s, s >= 0.
    A proof over s covers the closed ends, so no continuity of the claim there is assumed (0**q jumps at
    q = 0, and so does sign(1 - q) at q = 1)."""
    dom = p.domain
    a, b = dom.inf, dom.sup
    a_in, b_in = (e.is_finite and dom.contains(e) is sp.true for e in (a, b))
    if not a.is_finite or (not b.is_finite and a == 0):
        return None
    s = _fresh(f"{p.name}_s", taken, **({"nonnegative": True} if a_in or b_in else {"positive": True}))
    if not b.is_finite:
        return a + s
    if a_in and b_in:
        return a + (b - a) * 4 * s / (1 + s) ** 2
    if a_in:
        return a + (b - a) * s / (1 + s)
    return a + (b - a) / (1 + s)


def _piece_variable(p, piece: sp.Interval, anchor, taken: set):
    """p over a variable s that ranges over ``piece``, one side of a breakpoint ``anchor`` (an end of the
    piece; s > 0 when the piece leaves it out, s >= 0 when it holds it), written from the anchor so that the sign of p - anchor is plain to sympy: anchor + w g(s) on
    the right, anchor - w g(s) on the left, with w the piece's width and g(s) = 4s/(1 + s)^2 (onto [0, 1])
    when the far end is closed, s/(1 + s) (onto [0, 1)) when it is open, and w g(s) = s when it is oo."""
    right = piece.inf == anchor
    # s > 0 where the piece leaves the anchor out (the left side), s >= 0 where it holds it
    s = _fresh(f"{p.name}_s", taken, **({"positive": True} if (piece.right_open if not right else piece.left_open)
                                          else {"nonnegative": True}))
    far, far_open = (piece.sup, piece.right_open) if right else (piece.inf, piece.left_open)
    if not far.is_finite:
        step = s
    else:
        step = abs(far - anchor) * (s / (1 + s) if far_open else 4 * s / (1 + s) ** 2)
    return anchor + step if right else anchor - step


def proof_context(claim, truth, relation, order, fixed, params, conditions, alpha_range,
                  max_divergence=None, of_distributions: bool = False, both_directions: bool = False,
                  pieces: dict | None = None) -> ProofContext:
    """The claim and the divergence over the domains' variables (module docstring); ``pieces`` maps a
    parameter's name to ``(interval, anchor)``, a piece of its domain on one side of the breakpoint
    ``anchor``, which its variable then ranges over instead (:func:`_piece_variable`)."""
    # sympy numbers throughout: (0 < 1) is Python's True, never sympy's, and a test `is sp.true` would skip it
    alpha_range = tuple(sp.S(end) for end in alpha_range)
    order = None if order is None else sp.S(order)
    inputs = dict(claim=claim, truth=truth, relation=relation, order=order, fixed=fixed, params=params,
                  conditions=conditions, alpha_range=alpha_range, max_divergence=max_divergence,
                  of_distributions=of_distributions, both_directions=both_directions, pieces=pieces)
    pieces = pieces or {}
    subs = {p.symbol: v for p in params for k, v in fixed.items() if p.name == k}
    taken = _names(claim, truth, conditions, max_divergence) | {p.name for p in params}
    notes = []
    for p in params:
        if p.name in pieces:
            variable = _piece_variable(p, *pieces[p.name], taken)
            subs[p.symbol] = variable
            notes.append(f"{p.name} = {sp.sstr(variable)}")
            continue
        if p.name in fixed or not isinstance(p.domain, sp.Interval):
            continue
        variable = _domain_variable(p, taken)
        if variable is not None:
            subs[p.symbol] = variable
            notes.append(f"{p.name} = {sp.sstr(variable)}")
    c_free, t_free = claim.subs(subs), truth.subs(subs)
    c, t = c_free, t_free
    lo, hi = alpha_range
    where = ""
    if order is None:
        if lo >= 1:
            tt = _fresh("t", taken, positive=True)
            c, t = c.subs(ALPHA, 1 + tt), t.subs(ALPHA, 1 + tt)
            regime, alpha_expr = f"alpha = 1 + {tt}, {tt} > 0", 1 + tt
        elif hi <= 1:
            vv = _fresh("v", taken, positive=True)
            c, t = c.subs(ALPHA, 1 / (1 + vv)), t.subs(ALPHA, 1 / (1 + vv))
            regime, alpha_expr = f"alpha = 1/(1 + {vv}), {vv} > 0", 1 / (1 + vv)
        else:
            regime, alpha_expr = "alpha > 0", ALPHA
        c_free, t_free = _branch_taken(c_free, c, alpha_expr), _branch_taken(t_free, t, alpha_expr)
        if conditions is not sp.true:
            where = f" where the divergence is finite ({sp.sstr(conditions)})"
    else:
        # one order: alpha is that number (None for the KL and D_oo, where it is a limit, not a value)
        regime, alpha_expr = f"order {order}", (None if order in (1, sp.oo) else sp.S(order))
        conditions = conditions_at(conditions, order)
        if conditions is not sp.true:
            where = f" where the divergence is finite ({sp.sstr(conditions)})"
    if notes:
        regime += "; " + ", ".join(notes) + " with the *_s over their declared signs"
    return ProofContext(relation, order, c, t, c_free, t_free, alpha_expr, regime, where, tuple(notes), conditions,
                        tuple(alpha_range), max_divergence, subs, of_distributions, both_directions, inputs)


def _branch_taken(free: sp.Expr, at_order: sp.Expr, alpha_expr) -> sp.Expr:
    """A Piecewise in alpha as the branch the order regime takes, where writing the order into it (alpha =
    1/(1 + v) over (0, 1)) decided its conditions: the routes that work with alpha free (branches, the limit
    at an end) then see that branch (a one-sided geometric's curve, Piecewise((Max(...), alpha < 1), (oo,
    True)) over orders in (0, 1), is the Max). Otherwise ``free`` as it is."""
    if not isinstance(free, sp.Piecewise) or isinstance(at_order, sp.Piecewise) or alpha_expr is ALPHA:
        return free
    for value, _ in free.args:
        if value.subs(ALPHA, alpha_expr) == at_order:
            return value
    return free


# ---------------------------------------------------------------------------------------------------
# the routes: each a chain of rewrites ending in the text of what it proves, or None
# ---------------------------------------------------------------------------------------------------
def _infinite(ch: Chain, x: ProofContext):
    c, t = x.c, x.t
    if x.relation == "==" and t == sp.oo and c == sp.oo:
        return "proved: both are +oo"
    if x.relation == "<=" and c == sp.oo:
        return "proved: the claim is +oo"
    return None


#: the hang guard of the numeric look at claim - divergence (:func:`_apart`); it typically takes milliseconds
APART_SECONDS = 30.0


def _assumption_point(symbols, k: int) -> dict | None:
    """The ``k``-th point (0, 1, ...) that satisfies every assumption of ``symbols``: irregular rationals
    near 1 (2, 3, ... for integers), negated for negative symbols; None when a value would not satisfy a
    symbol's assumptions (an even integer, a symbol bounded by another)."""
    point = {}
    for i, s in enumerate(sorted(symbols, key=sp.default_sort_key)):
        if s.is_integer:
            v = sp.Integer(2 + i + k)
        else:
            v = sp.Rational(7 + 3 * i + 5 * k, 11 + 2 * k)
        if s.is_negative or s.is_nonpositive:
            v = -v
        if any(held and getattr(v, f"is_{fact}", None) is not True for fact, held in s.assumptions0.items()):
            return None
        point[s] = v
    return point


def _apart(c: sp.Expr, t: sp.Expr, complex_counts: bool = True) -> bool:
    """claim - divergence is not 0 at some point that satisfies the symbols' assumptions, by numerics that
    are certain of its sign (:func:`rdpsym.derive.sign.numeric_sign`). Then no rewrite that holds for every
    value of the symbols (simplify, expand, expand_log without force) can turn it into 0, nor exp(claim)
    - exp(divergence) for real sides: the routes through one are not tried (most of a prover's time went to
    simplifying differences that were not 0). A search heuristic only: it proves nothing, and a route it
    skips could not have succeeded. Undecided numerics, or a hang guard that fires, skip nothing.
    ``complex_counts``: a value with a clear imaginary part is apart too (not for exp, where c - t = 2 pi i
    would not be)."""
    d = c - t
    for k in range(2):
        point = _assumption_point(d.free_symbols, k)
        if point is None:
            return False
        try:
            sign = run_with_time_limit(numeric_sign, d, point, 15, seconds=APART_SECONDS, clock="wall")
        except StepTimeout:
            if deadline_passed():
                raise
            return False
        except SYMBOLIC_ERRORS:
            continue
        if sign in (1, -1) or (complex_counts and sign == "complex"):
            return True
    return False


def _difference_vanishes(ch: Chain, x: ProofContext, rule: str, shown: str):
    """Proved when the rewrite ``rule`` of claim - divergence (both finite) gives 0; ``shown`` names it."""
    if sp.oo in (x.c, x.t):
        return None
    if ch.replay is None and _apart(x.c, x.t):
        return None
    d = ch.run(rule, x.c, x.t)
    if d is not None and d == 0:
        return f"proved: {shown} ({x.regime}){x.where}"
    return None


def _simplify(ch: Chain, x: ProofContext):
    return _difference_vanishes(ch, x, "simplify_difference", "simplify(claim - divergence) = 0")


def _exponential(ch: Chain, x: ProofContext):
    # exp((alpha-1) x) is injective on the reals only: the route needs both sides real for every value of the
    # symbols (by their assumptions), not only at the checked points (a claim can be complex on a sliver of
    # the domain no point reached)
    if _some_infinite(x.c, x.t) or ch.run("both_real", x.c, x.t) is not sp.true:
        return None
    if ch.replay is None and _apart(x.c, x.t, complex_counts=False):  # real sides: exp(c) = exp(t) only where c = t
        return None
    if x.alpha_expr is None:  # the KL or D_oo: exp itself is injective on the reals
        d = ch.run("exp_gap", x.c, x.t)
        if d is not None and d == 0:
            return (f"proved: exp(claim) - exp(divergence) simplifies to 0 ({x.regime}), and both are real by "
                    f"the symbols' assumptions, so claim = divergence{x.where}")
        return None
    d = ch.run("exp_difference", x.c, x.t, x.alpha_expr)
    if d is not None and d == 0:
        return (f"proved: exp((alpha-1)*claim) - exp((alpha-1)*divergence) simplifies to 0 ({x.regime}), "
                f"and both are real by the symbols' assumptions, so claim = divergence{x.where}")
    return None


def _expand_log(ch: Chain, x: ProofContext):
    return _difference_vanishes(ch, x, "expand_log_difference", "expand_log(claim - divergence) simplifies to 0")


def _order_regimes(x: ProofContext) -> list:
    """The order regimes the range reaches, each taken on its own: ``(text, alpha as an expression, the
    expressions the divergence's finiteness conditions make positive there)``; alpha in (0, 1) as
    1/(1 + v) and alpha > 1 as 1 + t (v, t > 0), or the one order a claim is about (none for the KL and
    D_oo, which are limits). The positive expressions are None where the conditions are no conjunction."""
    if x.order is not None and x.alpha_expr is None:
        return []
    lo, hi = x.alpha_range
    regimes = []
    # nor a parameter's name: the text also names the parameters' substitutions (t = 1/(t_s + 1))
    taken = _names(x.c_free, x.t_free, x.conditions) | {str(p) for p in x.subs}
    if x.order is not None:
        regimes.append((f"alpha = {sp.sstr(x.alpha_expr)}", x.alpha_expr))  # one order: that order alone
    else:
        if (lo < 1) is sp.true:
            v = _fresh("v", taken, positive=True)
            regimes.append((f"alpha = 1/(1 + {v}), {v} > 0", 1 / (1 + v)))
        if (hi > 1) is sp.true:
            t = _fresh("t", taken, positive=True)
            regimes.append((f"alpha = 1 + {t}, {t} > 0", 1 + t))
    out = []
    for text, alpha_expr in regimes:
        # over the domains' variables, as the claim and the divergence are
        finite = x.conditions.subs(x.subs).subs(ALPHA, alpha_expr) if isinstance(x.conditions, sp.Basic) else sp.true
        out.append((text, alpha_expr, strict_positive_parts(finite)))
    return out


def _log_expansion(ch: Chain, x: ProofContext):
    """claim = divergence where the divergence is finite, by expanding logarithms of positive arguments.

    log(a b) = log a + log b and log(a^p) = p log a hold when a, b > 0 (p real). Each order regime the
    range reaches, alpha in (0, 1) as 1/(1 + v) and alpha > 1 as 1 + t (v, t > 0), is taken on its own
    (for a claim about one order a != 1, oo: alpha = a alone):
    there every argument of a log, and every base of a power with a non-integer exponent, in the claim and
    in the divergence must be positive, by the symbols' assumptions or as a positive multiple of an
    expression the divergence's finiteness conditions make positive (alpha sigma2^2 + (1 - alpha) sigma1^2
    for two Gaussian variances). Then ``expand_log(force=True)`` is exact, and the difference must simplify
    to 0 in every regime.
    """
    if sp.oo in (x.c, x.t):
        return None
    regimes = _order_regimes(x)
    if not regimes:
        return None
    for _, alpha_expr, positive in regimes:
        c, d = x.c_free.subs(ALPHA, alpha_expr), x.t_free.subs(ALPHA, alpha_expr)
        if positive is None:
            return None
        arguments = [a.args[0] for a in (c - d).atoms(sp.log)]
        arguments += [b for b, e in (pw.as_base_exp() for pw in (c - d).atoms(sp.Pow)) if not e.is_integer]
        if not all(ch.run("positive_where", a, *positive) is sp.true for a in _ordered(arguments)):
            return None
        gap = ch.run("forced_expand_log_difference", c, d)
        if (gap is None or gap != 0) and not _split_bases_vanish(ch, c, d, alpha_expr, positive, arguments):
            return None
    named = " and ".join(r for r, _, _ in regimes)
    domains = ("; " + ", ".join(x.notes) + " with positive *_s") if x.notes else ""
    return (f"proved: with {named}{domains}, every log argument and every base of a non-integer power is "
            "positive where the divergence is finite (by the symbols' assumptions and the finiteness "
            "conditions), so expand_log is exact there, and claim - divergence expands to 0 (or, with each "
            "power's base split into its positive factors, exp((alpha-1) claim) = exp((alpha-1) divergence))")


#: the nodes of an expression that is real wherever its log arguments and the bases of its non-integer powers
#: are positive and its denominators are not zero
_ELEMENTARY = (sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.Symbol, sp.Number)


def _real_by_parts(e, positive_bases) -> bool:
    """Built from real symbols and numbers by +, *, powers, exp and log alone, every negative power's base
    one of ``positive_bases`` or non-zero by the symbols' assumptions (so, with every log argument and every
    base of a non-integer power positive, a log, a power and exp keep it real)."""
    for node in sp.preorder_traversal(e):
        if not isinstance(node, _ELEMENTARY) or (isinstance(node, sp.Symbol) and node.is_real is not True):
            return False
        if (isinstance(node, sp.Pow) and node.exp.is_negative and node.base.is_zero is not False
                and node.base not in positive_bases):
            return False
    return True


def _split_bases_vanish(ch: Chain, c, d, alpha_expr, positive, checked) -> bool:
    """claim = divergence at one order regime where log expansion left a log of a sum: log A/(alpha - 1)
    against log B/(alpha - 1) with A = B only once (1 - t^2)^(1 - alpha) is (1 - t)^(1 - alpha)
    (1 + t)^(1 - alpha). Both sides real there (:func:`_real_by_parts`, the log arguments and power bases
    ``checked`` positive), so exp((alpha - 1) x) is injective on them; each power's base is split into its
    positive factors (``positive_bases_split``), every new base is shown positive, and
    exp((alpha - 1) claim) - exp((alpha - 1) divergence) must simplify to 0 with powers of one base
    combined (exact for positive bases)."""
    if not (_real_by_parts(c, checked) and _real_by_parts(d, checked)):
        return False
    split = [ch.run("positive_bases_split", e, *positive) for e in (c, d)]
    if any(e is None for e in split) or tuple(split) == (c, d):
        return False
    bases = {b for b, e in (pw.as_base_exp() for pw in (split[0] - split[1]).atoms(sp.Pow)) if not e.is_integer}
    if not all(ch.run("positive_where", b, *positive) is sp.true for b in _ordered(bases - set(checked))):
        return False
    gap = ch.run("powsimp_exp_difference", split[0], split[1], alpha_expr)
    return gap is not None and gap == 0


def _sign(ch: Chain, x: ProofContext):
    if sp.oo in (x.c, x.t):
        return None
    d = ch.run("simplify_difference", x.c, x.t)
    if d is None:
        return None
    if ch.run("is_nonnegative" if x.relation == "<=" else "is_nonpositive", d) is sp.true:
        word = "non-negative" if x.relation == "<=" else "non-positive"
        return f"proved: claim - divergence = {sp.sstr(d)} is {word} by the symbols' assumptions ({x.regime}){x.where}"
    return None


def _max_divergence(ch: Chain, x: ProofContext):
    dinf = x.max_divergence
    if x.relation != "<=" or dinf is None or dinf.is_finite is False or sp.oo in (x.c, x.t):
        return None
    gap = ch.run("simplify_difference", x.c, dinf.subs(x.subs))
    if gap is not None and ch.run("is_nonnegative", gap) is sp.true:
        return (f"proved: claim - D_inf = {sp.sstr(gap)} is non-negative by the symbols' assumptions "
                f"({x.regime}), and D_alpha <= D_inf = {sp.sstr(dinf)} at every order "
                "(Mironov 2017, Prop. 9: D_alpha is non-decreasing in alpha, with limit D_inf)")
    return None


def _nonnegative(ch: Chain, x: ProofContext):
    """D >= claim where the claim is non-positive: a Rényi divergence of probability distributions is
    non-negative at every order, KL and D_oo included (van Erven and Harremoës 2014, IEEE T-IT 60(7),
    Thm. 8; Mironov 2017, Sect. III)."""
    if x.relation != ">=" or not x.of_distributions or sp.oo in (x.c, x.t) or x.c == -sp.oo:
        return None
    if ch.run("is_nonpositive", x.c) is sp.true:
        return (f"proved: the claim is non-positive by the symbols' assumptions ({x.regime}), and a Rényi "
                "divergence of probability distributions is non-negative at every order (van Erven and "
                "Harremoës 2014, Thm. 8)")
    return None


def _pure_dp_zcdp(ch: Chain, x: ProofContext):
    """D_alpha <= claim where the claim is at least alpha eps^2/2 with eps = D_oo finite: eps-DP implies
    (eps^2/2)-zCDP, D_alpha <= alpha eps^2/2 for every alpha > 1 (Bun and Steinke 2016, TCC, Prop. 3.3),
    and KL <= eps^2/2 at alpha -> 1. Only for orders alpha >= 1, where zCDP speaks."""
    dinf = x.max_divergence
    # eps-DP bounds D_oo in both directions; D_oo(P||Q) alone does not give the zCDP bound (N(0, 1) against
    # N(0, r^2): D_oo(P||Q) = log r is finite, D_oo(Q||P) is not, and D_2(P||Q) exceeds log(r)^2)
    if x.relation != "<=" or not (x.of_distributions and x.both_directions) or dinf is None or sp.oo in (x.c, x.t):
        return None
    eps = dinf.subs(x.subs)  # over the domains' variables: finite where the symbols alone cannot say
    if eps.is_finite is not True:
        return None
    if x.order is None:
        if (sp.S(x.alpha_range[0]) >= 1) is not sp.true or x.alpha_expr is None:
            return None
        alpha_value = x.alpha_expr
    elif x.order != sp.oo and (x.order >= 1) is sp.true:
        alpha_value = sp.S(x.order)  # KL <= eps^2/2 at order 1, the zCDP bound at the one order above
    else:
        return None
    gap = ch.run("simplify_difference", x.c, alpha_value * eps**2 / 2)
    if gap is not None and ch.run("is_nonnegative", gap) is sp.true:
        return (f"proved: claim - alpha*D_inf**2/2 = {sp.sstr(gap)} is non-negative by the symbols' assumptions "
                f"({x.regime}), D_inf = {sp.sstr(dinf)} is finite, and eps-DP implies (eps**2/2)-zCDP: "
                "D_alpha <= alpha*eps**2/2 for alpha >= 1 (Bun and Steinke 2016, Prop. 3.3)")
    return None


def _plain_logs(expr) -> bool:
    """Every log in ``expr`` is a term of it times a number (2 log u, not log(u)/(alpha - 1))."""
    for term in sp.Add.make_args(expr):
        if term.has(sp.log):
            number, rest = term.as_independent(sp.log, as_Add=False)
            if not (number.is_number and isinstance(rest, sp.log)):
                return False
    return True


def _exp_sign(ch: Chain, x: ProofContext):
    """claim >= divergence (or <=) through exp, which is increasing on the reals: exp(claim) - exp(divergence)
    has the sign of claim - divergence when both are real. A log of a convex combination, log(q e^(1/b) +
    1 - q) below 1/b, becomes (1 - q)(e^(1/b) - 1) >= 0; the sign is read by the symbols' assumptions after
    each exp(u) is replaced by a new positive symbol (1 + w where u > 0), and so is that both sides are real."""
    if _some_infinite(x.c, x.t) or not (x.c.has(sp.log) or x.t.has(sp.log)):
        return None  # exp removes logs; without one it only makes the sides harder to compare
    if _kinks(x.c) or _kinks(x.t) or not (_plain_logs(x.c) and _plain_logs(x.t)):
        # simplify of exp(Max(...)), or of exp(log(S)/(alpha - 1)), runs into its hang guard: branches and cases
        # take kinks apart, and exp only removes a log with a numeric coefficient
        return None
    if ch.run("both_real_with_exp_as_positive", x.c, x.t) is not sp.true:
        return None
    gap = ch.run("exp_gap", x.c, x.t)
    if gap is None:
        return None
    general = ch.run("exp_as_positive_symbols", gap)
    test = "is_nonnegative" if x.relation == "<=" else "is_nonpositive"
    if general is not None and ch.run(test, general) is sp.true:
        word = "non-negative" if x.relation == "<=" else "non-positive"
        return (f"proved: exp(claim) - exp(divergence) = {sp.sstr(gap)} is {word} for every positive value of "
                f"each exp in it ({x.regime}), both sides are real by the symbols' assumptions, and exp is "
                f"increasing{x.where}")
    return None


def _some_infinite(*exprs) -> bool:
    """Some side is +oo or -oo (the routes that compare finite formulas do not apply)."""
    return any(e in (sp.oo, -sp.oo) for e in exprs)


def _at_order(x: ProofContext, e):
    """``e`` (over the domains' variables) at the context's order: alpha = 1 + t or 1/(1 + v) where the
    context writes it so."""
    return e.subs(ALPHA, x.alpha_expr) if x.order is None and x.alpha_expr is not None else e


def _prove_part(ch: Chain, part: ProofContext, label, names) -> str | None:
    """Prove ``part`` by the first route of ``names`` that does, recording ``route_choice(label, route)``
    and then that route's steps. A replay follows the recorded route instead of searching (a route the
    stored step names that is not among ``names`` is a mismatch)."""
    if ch.replay is not None:
        stored = ch.stored_next()
        if stored is None or stored.rule != "route_choice" or len(stored.inputs) != 2:
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not say which route proves "
                                 f"{sp.sstr(label)[:80]}")
        name = str(stored.inputs[1])
        if name not in names:
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: {name!r} is not a route for {sp.sstr(label)[:80]}")
        ch.run("route_choice", label, sp.Symbol(name))
        return ROUTES[name](ch, part)
    for name in names:
        sub = Chain(ch.guards, ch.seconds)
        text = ROUTES[name](sub, part)
        ch.attempts += sub.attempts
        if text:
            ch.run("route_choice", label, sp.Symbol(name))
            ch.adopt(sub)
            return text
    return None


def _branches(ch: Chain, x: ProofContext):
    """A Min or a Max, branch by branch. ``D <= Min(c_i)`` holds when D <= c_i for every i, and
    ``D <= Max(c_i)`` when it holds for one i; ``Max(d_i) <= c`` when d_i <= c for every i, and
    ``Min(d_i) <= c`` for one i; the same for ``>=`` with the roles swapped. A branch of the claim keeps the
    routes through theorems about D (D_oo, zCDP, non-negativity); a branch of the divergence is a formula,
    not a divergence, and is compared by rewrites alone. Pure DP's min(eps, alpha eps^2/2): eps >= D_oo
    (Mironov 2017, Prop. 9) and alpha eps^2/2 by zCDP (Bun and Steinke 2016, Prop. 3.3)."""
    if _some_infinite(x.c, x.t):
        return None
    if _log_of_an_extreme(x.c_free):
        # log(Max(1/p, 1 + p)) as a paper writes D_oo: the Max of the logs, as the derivation writes it
        flat = ch.run("log_of_extreme", x.c_free)
        if flat is not None:
            x = dataclasses.replace(x, c_free=flat, c=_at_order(x, flat))
    if x.relation == "==":
        if isinstance(x.t_free, (sp.Min, sp.Max)) and _one_extreme_factor(x.c_free):
            # Max(alpha/(1 - alpha), 1) log(1/p) against a Max of two formulas
            inside = ch.run("extreme_times_nonnegative", x.c_free)
            if inside is not None:
                x = dataclasses.replace(x, c_free=inside, c=_at_order(x, inside))
        if isinstance(x.t_free, sp.Max) and x.c_free.has(sp.Abs):
            # Max(|log a|, |log b|) against the Max over both directions of log a, -log a, log b, -log b
            flat = ch.run("abs_as_max", x.c_free)
            if isinstance(flat, sp.Max):
                x = dataclasses.replace(x, c_free=flat, c=_at_order(x, flat))
        if isinstance(x.t_free, (sp.Min, sp.Max)) and type(x.c_free) is type(x.t_free):
            return _paired_branches(ch, x)
        return _equal_to_an_extreme(ch, x) if isinstance(x.t_free, (sp.Min, sp.Max)) else None
    upper = x.relation == "<="  # the claim bounds D from above
    sides = []
    claim = x.c_free
    if isinstance(claim, sp.Add) and sum(isinstance(a, (sp.Min, sp.Max)) for a in claim.args) == 1:
        claim = ch.run("extreme_outside", claim)  # Max(a, b) - 1/2 is Max(a - 1/2, b - 1/2)
    elif _one_extreme_factor(claim):
        claim = ch.run("extreme_times_nonnegative", claim) or claim  # Max(a, b) c is Max(a c, b c), c >= 0
    if isinstance(claim, (sp.Min, sp.Max)):
        sides.append(("claim", claim, isinstance(claim, sp.Min) == upper))
    if isinstance(x.t_free, (sp.Min, sp.Max)):
        sides.append(("divergence", x.t_free, isinstance(x.t_free, sp.Max) == upper))
    names = _part_routes(x.relation)
    for side, expr, every in sides:
        branches = list(expr.args)
        if ch.replay is not None:  # the stored choice names the side and, for one branch, which
            stored = ch.stored_next()
            if stored is None or stored.rule != "route_choice" or stored.inputs[0] not in branches:
                continue
            if not every:
                branches = [stored.inputs[0]]

        def part(branch):
            if side == "claim":
                return dataclasses.replace(x, c=_at_order(x, branch), c_free=branch)
            return dataclasses.replace(x, t=_at_order(x, branch), t_free=branch, of_distributions=False,
                                       max_divergence=None)

        # proving, each side's steps are kept only when the side proves the relation (a replay follows it)
        side_ch = ch if ch.replay is not None else Chain(ch.guards, ch.seconds)
        shown = []
        for branch in branches:
            text = _prove_part(side_ch, part(branch), branch, names)
            if text:
                shown.append(f"[{_brief(branch)}] {text.removeprefix('proved: ')}")
                if not every:
                    break
            elif every:
                break
        if side_ch is not ch:
            ch.attempts += side_ch.attempts
        if (every and len(shown) == len(branches)) or (not every and shown):
            if side_ch is not ch:
                ch.adopt(side_ch)
            how = "every branch" if every else "one branch"
            what = f"the {side} is a {type(expr).__name__} of {len(expr.args)} branches"
            return f"proved branch by branch: {what}, and {how} keeps the relation: " + "; ".join(shown)
        if ch.replay is not None:
            return None
    return None


def _log_of_an_extreme(e) -> bool:
    """``e`` holds log(Max(...)) or log(Max(...)**k)."""
    def extreme(a):
        return isinstance(a, (sp.Max, sp.Min)) or (isinstance(a, sp.Pow) and isinstance(a.base, (sp.Max, sp.Min)))
    return any(extreme(g.args[0]) for g in e.atoms(sp.log))


def _one_extreme_factor(e) -> bool:
    return isinstance(e, sp.Mul) and sum(isinstance(a, (sp.Min, sp.Max)) for a in e.args) == 1


def _part_routes(relation: str) -> tuple[str, ...]:
    return tuple(n for n in _ORDER[relation] if n not in ("branches", "pieces_where_finite", "cases"))


def _paired_branches(ch: Chain, x: ProofContext):
    """Max(c_1, ..., c_m) = Max(d_1, ..., d_n) (or two Mins) when every claim branch equals a branch of the
    divergence and every other branch of the divergence is at most a claim branch (at least, for Mins): then
    each side is at most the other. Each pair is proved by the routes for its relation: the two directions of
    a mechanism written in another order or another form, and the outcomes a paper leaves out of a D_oo
    because another outcome dominates them. The record of an equal pair is ``route_choice((c_i, d_j),
    route)``, of a dominated branch ``route_choice((d_j, c_i, relation), route)``."""
    claims, divergences = list(x.c_free.args), list(x.t_free.args)
    if len(claims) > len(divergences):
        return None
    names = _part_routes("==")
    shown, free = [], list(divergences)

    def part(claim_branch, divergence_branch, relation):
        return dataclasses.replace(x, c=_at_order(x, claim_branch), c_free=claim_branch, relation=relation,
                                   t=_at_order(x, divergence_branch), t_free=divergence_branch,
                                   of_distributions=False, max_divergence=None)

    def stored_label(size, what):
        stored = ch.stored_next()
        label = stored.inputs[0] if stored is not None and stored.rule == "route_choice" else None
        if not (isinstance(label, sp.Tuple) and len(label) == size):
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not pair {what}")
        return label

    for branch in claims:
        if ch.replay is not None:
            label = stored_label(2, f"the branch {_brief(branch, 80)} with a branch of the divergence")
            if label[0] != branch or label[1] not in divergences:
                raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not pair the branch "
                                     f"{_brief(branch, 80)} with a branch of the divergence")
            candidates = [label[1]]
        else:
            candidates = free + [d for d in divergences if d not in free]
        for other in candidates:
            text = _prove_part(ch, part(branch, other, "=="), sp.Tuple(branch, other), names)
            if text:
                if other in free:
                    free.remove(other)
                shown.append(f"[{_brief(branch)} = {_brief(other)}] {text.removeprefix('proved: ')}")
                break
        else:
            return None
    bound = "<=" if isinstance(x.t_free, sp.Max) else ">="
    for other in free:  # the divergence's branches no claim branch equals: each below (above) a claim branch
        if ch.replay is not None:
            label = stored_label(3, f"the branch {_brief(other, 80)} of the divergence with a claim branch")
            if label[0] != other or label[1] not in claims or str(label[2]) != bound:
                raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not bound the branch "
                                     f"{_brief(other, 80)} of the divergence by a claim branch")
            candidates = [label[1]]
        else:
            candidates = claims
        for branch in candidates:
            text = _prove_part(ch, part(branch, other, bound), sp.Tuple(other, branch, sp.Symbol(bound)),
                               _part_routes(bound))
            if text:
                shown.append(f"[{_brief(other)} {bound} {_brief(branch)}] {text.removeprefix('proved: ')}")
                break
        else:
            return None
    kind = type(x.t_free).__name__
    if len(claims) == len(divergences):
        return (f"proved branch by branch: claim and divergence are {kind}s of {len(claims)} branches that pair "
                "off, each claim branch equal to one of the divergence: " + "; ".join(shown))
    side = "at most" if bound == "<=" else "at least"
    return (f"proved branch by branch: the claim is a {kind} of {len(claims)} branches and the divergence of "
            f"{len(divergences)}; each claim branch equals a branch of the divergence, and each other branch of "
            f"the divergence is {side} a claim branch: " + "; ".join(shown))


def _equal_to_an_extreme(ch: Chain, x: ProofContext):
    """claim = Max(d_i) when the claim equals one branch and is at least every other (for a Min, at most):
    D_oo of the Cauchy mechanism is Max(0, log A, log B), and 2 log((Delta + sqrt(Delta^2 + 4 gamma^2))/(2 gamma))
    is log A and above 0 and log B. Each branch records the relation it was proved in."""
    bound = "<=" if isinstance(x.t_free, sp.Max) else ">="
    shown, equal = [], False
    for branch in x.t_free.args:
        part = dataclasses.replace(x, t=_at_order(x, branch), t_free=branch, of_distributions=False,
                                   max_divergence=None)
        if ch.replay is not None:
            stored = ch.stored_next()
            label = stored.inputs[0] if stored is not None and stored.rule == "route_choice" else None
            if not (isinstance(label, sp.Tuple) and len(label) == 2 and str(label[1]) in ("==", bound)):
                raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not say how the claim compares "
                                     f"with the branch {sp.sstr(branch)[:80]}")
            relations = (str(label[1]),)
        else:
            relations = (bound,) if equal else ("==", bound)
        text = None
        for rel in relations:
            text = _prove_part(ch, dataclasses.replace(part, relation=rel), sp.Tuple(branch, sp.Symbol(rel)),
                               _part_routes(rel))
            if text:
                equal = equal or rel == "=="
                shown.append(f"[{_brief(branch)}, {rel}] {text.removeprefix('proved: ')}")
                break
        if not text:
            return None
    if not equal:
        return None
    which = "Max" if bound == "<=" else "Min"
    side = "at least" if bound == "<=" else "at most"
    return (f"proved branch by branch: the divergence is a {which} of {len(x.t_free.args)} branches, and the claim "
            f"equals one branch and is {side} every branch: " + "; ".join(shown))


def _brief(expr, width: int = 60) -> str:
    """A branch as the proof's text names it: its first ``width`` characters (the certificate holds it whole)."""
    text = sp.sstr(expr)
    return text if len(text) <= width else text[:width - 3] + "..."


def _kinks(expr) -> list:
    """The expressions whose sign selects the form of ``expr``: arguments of Abs, sign and Heaviside,
    differences of a Max's or a Min's arguments, sides of a Piecewise's conditions."""
    found = [a.args[0] for a in expr.atoms(sp.Abs, sp.sign, sp.Heaviside)]
    for m in expr.atoms(sp.Max, sp.Min):
        found += [a - b for i, a in enumerate(m.args) for b in m.args[i + 1:]]
    for pw in expr.atoms(sp.Piecewise):
        for _, cond in pw.args:
            found += [r.lhs - r.rhs for r in cond.atoms(sp.core.relational.Relational)]
    return found


def _breakpoints(x: ProofContext) -> dict:
    """Each parameter whose domain one kink (:func:`_kinks`) cuts at one inner point: that point, by the
    parameter's name. The kink's numerator is linear in the parameter with a rational slope (1/(2 p) - 1/(2 (1 - p))
is cut at p = 1/2); the point is rational, or
    an expression in other parameters over (0, oo) that is inside the domain for all their values (a = b in
    a >= b: the side a < b is a = b/(1 + s), the side a >= b is a = b + s). A parameter that is another's
    point is not split itself."""
    inputs = x.inputs
    params = {p.symbol: p for p in inputs["params"] if p.name not in inputs["fixed"]}
    # the parameters a point may be written in: over (0, oo) by their own assumptions (no variable of theirs)
    plain = {s for s, p in params.items() if _domain_variable(p, set()) is None}
    roots: dict = {}
    for kink in _kinks(inputs["claim"]) + _kinks(inputs["truth"]):
        free = kink.free_symbols
        if not free or not free <= set(params):
            continue
        for symbol in _ordered(free):
            p = params[symbol]
            if not isinstance(p.domain, sp.Interval) or not (free - {symbol}) <= plain:
                continue
            try:
                # a rational kink changes sign where its numerator does or at a pole; splitting at the
                # numerator's root is sound either way (the pieces cover the domain, whatever the kink)
                poly = sp.Poly(sp.fraction(sp.together(kink))[0], symbol)
            except sp.PolynomialError:
                continue
            if poly.degree() != 1 or not poly.all_coeffs()[0].is_Rational or poly.all_coeffs()[0] == 0:
                continue
            root = -poly.all_coeffs()[1] / poly.all_coeffs()[0]
            if (root > p.domain.inf) is sp.true and (root < p.domain.sup) is sp.true:
                roots.setdefault(p.name, (p, set()))[1].add(root)
                break
    cuts = {name: (p, r.pop()) for name, (p, r) in sorted(roots.items()) if len(r) == 1}
    split = {p.symbol for p, _ in cuts.values()}
    return {name: (p, root) for name, (p, root) in cuts.items() if not (root.free_symbols & split)}


#: at most this many parameters are split at a breakpoint (2**3 pieces)
MAX_CASE_PARAMETERS = 3


def _cases(ch: Chain, x: ProofContext):
    """Case by case, where the claim or the divergence changes form at a point of a parameter's domain
    (rho = 0 in Abs(rho) and Max(1 - rho, 1 + rho)): each side of the point is a piece of the domain, the
    parameter is written over it from the point (:func:`_piece_variable`), so the sign of each kink is
    plain, and the other routes prove the relation on every piece; the pieces cover the domain."""
    if not x.inputs or x.inputs.get("pieces") or _some_infinite(x.c, x.t):
        return None
    cuts = _breakpoints(x)
    if not cuts or len(cuts) > MAX_CASE_PARAMETERS:
        return None
    names = tuple(n for n in _ORDER[x.relation] if n != "cases")
    shown = []
    for sides in product(("left", "right"), repeat=len(cuts)):
        pieces = {}
        for (name, (p, root)), side in zip(cuts.items(), sides):
            dom = p.domain
            # the point itself on the right only: a Piecewise that jumps there is decided on both sides
            piece = (sp.Interval(dom.inf, root, dom.left_open, True) if side == "left"
                     else sp.Interval(root, dom.sup, False, dom.right_open))
            pieces[name] = (piece, root)
        part = proof_context(**{**x.inputs, "pieces": pieces})
        label = sp.Tuple(*(sp.Tuple(cuts[n][0].symbol, piece) for n, (piece, _) in pieces.items()))
        text = _prove_part(ch, part, label, names)
        if not text:
            return None
        where = ", ".join(f"{n} in {printing.interval(piece)}" for n, (piece, _) in pieces.items())
        shown.append(f"[{where}] {text.removeprefix('proved: ')}")
    at = ", ".join(f"{n} = {sp.sstr(root)}" for n, (_, root) in cuts.items())
    return f"proved case by case, on each side of {at}, where the form changes: " + "; ".join(shown)


def _signed_gap(ch: Chain, c, t, test: str):
    """claim - t simplified, when ``test`` (is_nonnegative / is_nonpositive) holds for it; with hyperbolic
    functions in either side, also through exp; None when neither form shows the sign."""
    gap = ch.run("simplify_difference", c, t)
    if gap is not None and ch.run(test, gap) is sp.true:
        return gap
    if not (c.has(HyperbolicFunction) or t.has(HyperbolicFunction)):
        return None
    gap = ch.run("simplify_difference_as_exp", c, t)
    if gap is not None and ch.run(test, gap) is sp.true:
        return gap
    return None


def _order_end(ch: Chain, x: ProofContext):
    """D_alpha is non-decreasing in alpha (Mironov 2017, Prop. 9; van Erven and Harremoës 2014, Thm. 3):
    a claim at most the divergence's limit at the lower end a of the order range is at most D_alpha for
    every alpha > a (``>=``; at a = 1 that limit is the KL, van Erven and Harremoës 2014, Thm. 5; a limit
    that is a Max, both directions' KLs, is at least each branch, and the claim need be below one). (The
    mirror image at a finite upper end is not taken: sympy's limit of randomized response's curve at
    alpha -> 10^7 runs into its hang guard, and substituting the order expands powers of 10^7.)"""
    if x.order is not None or not x.of_distributions or x.relation != ">=" or _some_infinite(x.c, x.t):
        return None
    end = sp.S(x.alpha_range[0])
    if end.is_finite is not True or (end > 0) is not sp.true:
        return None
    limit = ch.run("limit_from_above", x.t_free, ALPHA, end)
    if (limit is None or limit.is_finite is not True or limit.is_extended_real is not True
            or limit.has(sp.Limit, sp.AccumBounds, sp.nan)):
        return None
    # a limit that is a Max (of both directions' KLs) is at least each of its branches: one suffices
    branches = limit.args if isinstance(limit, sp.Max) else (limit,)
    kl = " (the KL, van Erven and Harremoës 2014, Thm. 5)" if end == 1 else ""
    for branch in branches:
        gap = _signed_gap(ch, x.c, branch, "is_nonpositive")
        if gap is not None:
            return (f"proved: claim - lim(alpha -> {sp.sstr(end)}+) D_alpha = {sp.sstr(gap)} is non-positive by the "
                    f"symbols' assumptions ({x.regime}), where the limit is {sp.sstr(limit)}{kl}, and D_alpha is "
                    f"non-decreasing in alpha (Mironov 2017, Prop. 9), so the claim is at most D_alpha over the whole "
                    f"order range{x.where}")
    # the claim at most one branch by the other routes (monotonicity, a turning point): two Gaussians' KL
    # log(s2/s1) + (s1^2 + D^2)/(2 s2^2) - 1/2 >= D^2/(2 s2^2), a gap smallest where s1 = s2
    names = tuple(n for n in _part_routes(">=") if n not in ("order_end", "nonnegative"))
    if ch.replay is not None:
        stored = ch.stored_next()
        chosen = [stored.inputs[0]] if stored is not None and stored.rule == "route_choice" else []
        if not chosen or chosen[0] not in branches:
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not say which branch of the limit "
                                 "is above the claim")
    else:
        chosen = list(branches)
    for branch in chosen:
        part = dataclasses.replace(x, t=branch, t_free=branch, of_distributions=False, max_divergence=None)
        sub = ch if ch.replay is not None else ch.sub()
        text = _prove_part(sub, part, branch, names)
        if sub is not ch:
            ch.attempts += sub.attempts
        if text:
            if sub is not ch:
                ch.adopt(sub)
            return (f"proved: the claim is at most {_brief(branch)}, a branch of lim(alpha -> {sp.sstr(end)}+) D_alpha "
                    f"= {_brief(limit)}{kl} ({text.removeprefix('proved: ')}), and D_alpha is non-decreasing in alpha "
                    f"(Mironov 2017, Prop. 9), so the claim is at most D_alpha over the whole order range{x.where}")
    return None


def _pieces_where_finite(ch: Chain, x: ProofContext):
    """A claim that states its own finiteness conditions, Piecewise((f, g > 0), (oo, True)) in each
    direction, where the divergence is finite (``==``: the other routes prove equality there too) or where it
    is not (``>=``: nothing exceeds +oo). In every order regime the divergence's finiteness conditions must
    make each Piecewise's first condition hold (g a positive multiple of a condition's expression, or
    positive by the assumptions); there each Piecewise is its first branch, and the claim so written is
    proved by the other routes (branches included: two Maxes of directions pair off)."""
    if x.relation not in ("==", ">=") or not x.c_free.has(sp.Piecewise) or _some_infinite(x.c, x.t):
        return None
    regimes = _order_regimes(x)
    if not regimes or any(positive is None for _, _, positive in regimes):
        return None
    # the first conditions as the claim states them, each regime's order put into them (not into the claim,
    # where a branch whose condition becomes false would drop out and another be first)
    firsts = ch.run("first_conditions", x.c_free)
    if firsts is None:
        return None
    checks = [(firsts.subs(ALPHA, alpha_expr), positive) for _, alpha_expr, positive in regimes]
    if _holds_order_one(x):
        # the KL's order lies between the regimes; its formula carries its own +oo (no finiteness conditions)
        checks.append((firsts.subs(ALPHA, 1), []))
    for conditions, positive in checks:
        if ch.run("conditions_hold_where", conditions, *positive) is not sp.true:
            return None
    if x.relation == "==" and not _infinite_where_the_divergence_is(ch, x, regimes, firsts):
        return None
    resolved = ch.run("first_pieces", x.c_free)
    if resolved is None or resolved.has(sp.Piecewise):
        return None
    part = dataclasses.replace(x, c_free=resolved, c=_at_order(x, resolved), where="", where_finite=True)
    names = tuple(n for n in _ORDER[x.relation] if n not in ("pieces_where_finite", "cases"))
    text = _prove_part(ch, part, resolved, names)
    if not text:
        return None
    named = " and ".join(r for r, _, _ in regimes)
    return (f"proved where the divergence is finite ({sp.sstr(x.conditions)}): with {named}, the finiteness "
            f"conditions make the first condition of each Piecewise in the claim hold, so the claim is "
            f"{_brief(resolved)} there, and {text.removeprefix('proved: ')}")


def _infinite_where_the_divergence_is(ch: Chain, x: ProofContext, regimes, firsts) -> bool:
    """For ``==``: where the divergence is +oo (a finiteness condition fails), the claim is +oo too. Every
    Piecewise of the claim is (f, g > 0), (oo, True), and one of them at +oo (the others at their first
    branch) makes the claim +oo (a Max or a sum of them: ``one_piece_infinite``); and in every regime the
    claim's first conditions imply the divergence's (each of its positive expressions is positive where the
    claim's are), so where a divergence's condition fails a claim's fails as well. (Before, a claim with
    (0, True) in place of (oo, True) was proved equal to the two Gaussians' D_2.)"""
    if ch.run("one_piece_infinite", x.c_free) is not sp.true:
        return False
    for _, alpha_expr, positive in regimes:
        claims = [strict_positive_parts(c) for c in firsts.subs(ALPHA, alpha_expr)]
        if any(c is None for c in claims):
            return False
        needed = sp.Tuple(*(g > 0 for g in positive))
        if ch.run("conditions_hold_where", needed, *[g for c in claims for g in c]) is not sp.true:
            return False
    return True


#: how many derivatives deep the route through monotonicity goes (the Poisson KLs' (2 + u) log(1 + u) >= 2u
#: needs two), and how many of the gap's variables it tries
MONOTONE_DEPTH = 3
MONOTONE_VARIABLES = 3
#: the largest expression (sympy's count_ops) whose limits the route takes: sympy's limit of a derivative of
#: 100 operations with exps of the order (pure DP's curve) takes half a minute, those of the gaps it proves
#: (16 operations for the Poisson KLs) milliseconds
MONOTONE_MAX_OPS = 40


def _monotone(ch: Chain, x: ProofContext):
    """claim - D >= 0 (``<=``; <= 0 for ``>=``) through monotonicity in one variable v of the gap g, which
    ranges over (0, oo) or [0, oo) (every parameter and the order do, over the domains' variables):
    g continuous for every value of its symbols, lim(v -> 0+) g >= 0 and dg/dv >= 0 (g is non-decreasing
    from its limit), or lim(v -> oo) g >= 0 and dg/dv <= 0 (non-increasing to it); the derivative's sign is
    shown by the assumptions or by the same argument again, up to :data:`MONOTONE_DEPTH` derivatives.
    A continuous function whose derivative has one sign wherever it exists (all but finitely many points of an
    elementary function) is monotone. The Poisson KLs: (2 mu + d) log(1 + d/mu) - 2d is 0 at d -> 0+, its
    derivative log(1 + d/mu) - d/(mu + d) too, and the second derivative d/(mu + d)^2 is non-negative."""
    if x.relation == "==" or _some_infinite(x.c, x.t):
        return None
    gap = ch.run("simplify_difference", x.c, x.t)
    if gap is None or not gap.free_symbols:
        return None
    sign = 1 if x.relation == "<=" else -1
    if ch.memo is None:
        ch.memo = {}
    mapped = ""
    if x.where_finite and ch.run("continuous_everywhere", gap) is not sp.true:
        bounded = _finite_range_mapped(ch, x, gap)
        if bounded is None:
            return None
        gap, mapped = bounded
    shown = _monotone_sign(ch, gap, sign, MONOTONE_DEPTH, None)
    if shown is None:
        return None
    word = "non-negative" if sign > 0 else "non-positive"
    return (f"proved: claim - divergence = {sp.sstr(gap)} is {word} ({x.regime}{mapped}){x.where}: {shown}")


def _finite_range(ch: Chain, x: ProofContext):
    """claim = divergence where the divergence is finite (``where_finite``), with the order's variable mapped
    onto the range its finiteness conditions leave (:func:`_finite_range_mapped`): log(-1/(4^t (3t - 1))) and
    -log(4^t (1 - 3t)) are one function for t < 1/3 only, and with t = s/(3 (1 + s)) their difference is 0."""
    if not x.where_finite or x.relation != "==" or _some_infinite(x.c, x.t):
        return None
    gap = ch.run("simplify_difference", x.c, x.t)
    if gap is None or ch.run("continuous_everywhere", gap) is sp.true:
        return None
    bounded = _finite_range_mapped(ch, x, gap)
    if bounded is None:
        return None
    mapped, text = bounded
    if ch.run("simplify", mapped) != 0:
        return None
    return f"proved: claim - divergence = {_brief(gap)} is 0 ({x.regime}{text}){x.where}"


def _sets_upper_end(expr, v) -> bool:
    try:
        upper_end(expr, v)
    except (ValueError, *SYMBOLIC_ERRORS):
        return False
    return True


def _finite_range_mapped(ch: Chain, x: ProofContext, gap):
    """Where the divergence's finiteness conditions bound a variable v above (4 - 3 alpha > 0 is 1 - 3t > 0
    over alpha = 1 + t; a parameter's c_s < 1 where c = 1 + c_s < 2), the gap with v = b s/(1 + s), s > 0,
    which ranges over (0, b) as s ranges over (0, oo): log(1 - 3t) becomes -log(1 + s), continuous for every
    s > 0, where the monotone route needs it so. The order's variable is tried first, then the parameters'.
    Only for a relation to be shown where the divergence is finite (``where_finite``)."""
    if x.alpha_expr is None or not isinstance(x.conditions, sp.Basic):
        return None
    positive = strict_positive_parts(x.conditions.subs(x.subs).subs(ALPHA, x.alpha_expr))
    if not positive:
        return None
    # the order's variable first (1 + t), then the parameters' (c = 1 + c_s where the condition is c < 2)
    variables = _ordered(x.alpha_expr.free_symbols) + _ordered(gap.free_symbols - x.alpha_expr.free_symbols)
    for v in (v for v in variables if v.is_positive is True and v in gap.free_symbols):
        # only the conditions that set an end are run as steps: a rule that raises leaves no step when proving,
        # and a replay that ran it would find the next stored step in its place
        ends = [ch.run("upper_end", g, v) for g in positive if v in g.free_symbols and _sets_upper_end(g, v)]
        ends = [end for end in ends if end is not None]
        if ends:
            break
    else:
        return None
    bound = min(ends)
    s = _fresh(f"{v}_s", _names(gap) | {str(v)}, positive=True)
    mapped = ch.run("range_mapped", gap, v, bound, s)
    if mapped is None or ch.run("continuous_everywhere", mapped) is not sp.true:
        return None
    return mapped, f", where finite {v} < {sp.sstr(bound)}: {v} = {sp.sstr(bound * s / (1 + s))}, {s} > 0"


def _monotone_sign(ch: Chain, h, sign: int, depth: int, variable):
    """The text that shows sign * h >= 0 for every value of h's symbols, or None (:func:`_monotone`)."""
    test, word = ("is_nonnegative", "non-negative") if sign > 0 else ("is_nonpositive", "non-positive")
    if ch.run(test, h) is sp.true:
        return f"{_brief(h)} is {word} by the symbols' assumptions"
    if h.has(sp.exp, HyperbolicFunction):
        # cosh(u) >= 1 and the like: exp(u) and exp(-u) as one positive symbol and its reciprocal
        flat = ch.run("exps_as_positive_symbols", h)
        if flat is not None and ch.run(test, flat) is sp.true:
            return (f"{_brief(h)} is {word}: with each exp(u) a positive symbol w (exp(-u) = 1/w; 1 + w where "
                    f"u > 0), it is {_brief(flat)}, {word} for every such w")
    if has_exponential_power(h):
        # 2 log(2) 2^t - 1 >= 0 for t > 0: 2^t = exp(t log 2) as 1 + w
        flat = ch.run("powers_as_positive_symbols", h)
        if flat is not None and ch.run(test, flat) is sp.true:
            return (f"{_brief(h)} is {word}: with each b^u (and exp(u)) a positive symbol w (1 + w where "
                    f"u log b > 0), it is {_brief(flat)}, {word} for every such w")
    without_positive = _sign_part(ch, h, sign, depth, variable)
    if without_positive is not None:
        return without_positive
    by_coefficients = _coefficients(ch, h, sign, depth)
    if by_coefficients is not None:
        return by_coefficients
    if depth == 0 or sp.count_ops(h) > MONOTONE_MAX_OPS or ch.run("continuous_everywhere", h) is not sp.true:
        return None
    if ch.replay is not None:
        stored = ch.stored_next()
        if stored is None or stored.rule != "monotone_choice" or len(stored.inputs) != 3:
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not say in which variable "
                                 f"{_brief(h, 80)} is monotone")
        _, v, end = stored.inputs
        if (v not in h.free_symbols or v.is_nonnegative is not True or v.is_integer is True
                or end not in (sp.S.Zero, sp.oo, TURNING_POINT, MONOTONE_ROOT)):
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: {sp.sstr(v)} -> {sp.sstr(end)} is no end of a "
                                 "variable of the expression")
        ch.run("monotone_choice", h, v, end)
        if end in _TURNING:
            return _TURNING[end](ch, h, sign, depth, v)
        return _monotone_from(ch, h, sign, depth, v, end)
    # a real variable only: an integer one has no derivative, and its poles between integers (1/(n - 3/2))
    # are finite at every value it takes
    variables = [variable] if variable is not None else [
        v for v in _ordered(h.free_symbols) if v.is_nonnegative is True and v.is_integer is not True
    ][:MONOTONE_VARIABLES]
    for v in variables:
        for end in (sp.S.Zero, sp.oo, TURNING_POINT, MONOTONE_ROOT):
            sub = ch.sub()
            if end in _TURNING:
                text = _TURNING[end](sub, h, sign, depth, v)
            else:
                text = _monotone_from(sub, h, sign, depth, v, end)
            ch.attempts += sub.attempts
            if text:
                ch.run("monotone_choice", h, v, end)
                ch.adopt(sub)
                return text
    return None


def _coefficients(ch: Chain, h, sign: int, depth: int):
    """sign * h >= 0 as a polynomial in a positive symbol u whose coefficients (free of u) each have that
    sign, shown by the route of :func:`_monotone_sign`: sum c_i u^i >= 0 when every c_i >= 0 and u > 0.
    A gap A(t) sigma^2 + B(t) between two Gaussian curves splits into A and B. Tried apart (a sub-chain)."""
    if not isinstance(h, sp.Add):
        return None
    if ch.replay is not None:
        stored = ch.stored_next()
        if stored is None or stored.rule != "coefficients" or len(stored.inputs) != 2:
            return None
        u = stored.inputs[1]
        if u not in h.free_symbols or u.is_positive is not True:
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: {sp.sstr(u)} is no positive symbol of the expression")
        coefficients = ch.run("coefficients", h, u)
        texts = [] if coefficients is None else [_monotone_sign(ch, c, sign, depth, None) for c in coefficients]
        return None if not texts or None in texts else _coefficients_text(h, u, texts)
    for u in _ordered(h.free_symbols):
        if u.is_positive is not True or len(h.free_symbols) < 2 or not h.is_polynomial(u):
            continue
        sub = ch.sub()
        coefficients = sub.run("coefficients", h, u)
        texts = []
        for c in coefficients or ():
            text = _monotone_sign(sub, c, sign, depth, None)
            if text is None:
                break
            texts.append(text)
        ch.attempts += sub.attempts
        if coefficients is not None and len(coefficients) > 1 and len(texts) == len(coefficients):
            ch.adopt(sub)
            return _coefficients_text(h, u, texts)
    return None


def _coefficients_text(h, u, texts) -> str:
    return (f"{_brief(h)} is a polynomial in the positive {sp.sstr(u)} whose coefficients each have its sign: "
            + "; ".join(texts))


def _smaller(part, h) -> bool:
    """``part`` has fewer operations than ``h`` (so dropping factors again and again ends)."""
    return part is not None and sp.count_ops(part) < sp.count_ops(h)


def _sign_part(ch: Chain, h, sign: int, depth: int, variable):
    """sign * h >= 0 from the same for h without its positive factors (``sign_part``), by the route of
    :func:`_monotone_sign` at the same depth: a derivative N/M with M > 0 has the sign of N, whose own
    derivative is simpler than that of N/M. Tried apart (a sub-chain), and taken only where it proves."""
    if not isinstance(h, (sp.Mul, sp.Add)):
        return None
    if ch.replay is not None:
        stored = ch.stored_next()
        if stored is None or stored.rule != "sign_part":
            return None
        part = ch.run("sign_part", h)
        inner = _monotone_sign(ch, part, sign, depth, variable) if _smaller(part, h) else None
    else:
        sub = ch.sub()
        part = sub.run("sign_part", h)
        inner = _monotone_sign(sub, part, sign, depth, variable) if _smaller(part, h) else None
        ch.attempts += sub.attempts
        if inner is not None:
            ch.adopt(sub)
    if inner is None:
        return None
    return f"{_brief(h)} has the sign of {_brief(part)}, its other factors being positive: " + inner


def _monotone_from(ch: Chain, h, sign: int, depth: int, v, end):
    """sign * h >= 0 from its limit at ``end`` (0 or oo) of ``v`` and the sign of dh/dv (:func:`_monotone`)."""
    limit = ch.run("limit_from_above", h, v, sp.S.Zero) if end == 0 else ch.run("limit_at_infinity", h, v)
    if limit is None or limit.has(sp.Limit, sp.AccumBounds, sp.nan, sp.zoo) or limit.is_extended_real is not True:
        return None
    test = "is_nonnegative" if sign > 0 else "is_nonpositive"
    if ch.run(test, limit) is not sp.true:
        return None
    if end == 0 and v.is_positive is not True:  # v = 0 is in the range: the value there counts too
        value = ch.run("value_at_zero", h, v)
        if value is None or value.has(sp.nan, sp.zoo) or ch.run(test, value) is not sp.true:
            return None
    derivative = ch.run("derivative", h, v)
    if derivative is None:
        return None
    if positive_log_coefficient(derivative) is not None:
        # the sign is what counts: a log's positive coefficient out, so that the next derivative is rational
        derivative = ch.run("log_coefficient_out", derivative)
        if derivative is None:
            return None
    # non-decreasing from the limit at 0+, non-increasing towards the limit at oo
    inner = _monotone_sign(ch, derivative, sign if end == 0 else -sign, depth - 1, v)
    if inner is None:
        return None
    trend = "non-decreasing" if (sign > 0) == (end == 0) else "non-increasing"
    return (f"its limit at {sp.sstr(v)} -> {'0+' if end == 0 else 'oo'} is {sp.sstr(limit)}, and it is {trend} in "
            f"{sp.sstr(v)}, its derivative {_brief(derivative)} being of one sign: " + inner)


#: the record of a proof through one turning point of a variable (``monotone_choice(h, v, TURNING_POINT)``)
TURNING_POINT = sp.Symbol("turning_point")


def _from_turning_point(ch: Chain, h, sign: int, depth: int, v):
    """sign * h >= 0 on v > 0 from its one turning point: dh/dv = (v - r) k with r > 0 and sign * k > 0, so h
    falls and then rises around v = r (sign > 0; rises then falls for sign < 0), and sign * h(r) >= 0, shown by
    the same route (the Laplace scales' KL gap b2/b1 - 1 - log(b2/b1), smallest at b1 = b2, where it is 0).
    h is continuous over the range (checked by the caller), so it is monotone on each side of r."""
    if v.is_positive is not True:
        return None
    derivative = ch.run("derivative", h, v)
    if derivative is None:
        return None
    split = ch.run("linear_factor_out", derivative, v)
    if split is None:
        return None
    root, rest = split
    if ch.run("positive_where", root) is not sp.true or ch.run("positive_where", sign * rest) is not sp.true:
        return None
    at_root = _value_at_turning_point(ch, h, sign, depth, v, root)
    if at_root is None:
        return None
    value, inner = at_root
    where = "smallest" if sign > 0 else "largest"
    return (f"its derivative in {sp.sstr(v)} is ({sp.sstr(v)} - {_brief(root)}) times {_brief(rest)}, which is "
            f"{'positive' if sign > 0 else 'negative'}, so it is {where} at {sp.sstr(v)} = {_brief(root)} (> 0), "
            f"where it is {_brief(value)}: " + inner)


def _value_at_turning_point(ch: Chain, h, sign: int, depth: int, v, root):
    """``(h(root), the text that shows sign * h(root) >= 0)``, or None: the last step of both turning-point
    routes, once they have shown that h is smallest (largest) at v = root."""
    value = ch.run("value_at", h, v, root)
    if value is None or value.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or v in value.free_symbols:
        return None
    inner = _monotone_sign(ch, value, sign, depth - 1, None)
    return None if inner is None else (value, inner)


#: the record of a proof through the root of a monotone numerator (``monotone_choice(h, v, MONOTONE_ROOT)``)
MONOTONE_ROOT = sp.Symbol("monotone_root")
#: the roots the search tries: positive rationals with denominators up to this, found in floats first
ROOT_DENOMINATOR = 1000
#: where the search looks for a sign change: a geometric grid of this many points over [1e-8, 1e8]
ROOT_GRID = 161


def _from_monotone_root(ch: Chain, h, sign: int, depth: int, v):
    """sign * h >= 0 on v > 0 from one turning point where dh/dv = N/M has no linear factor: M > 0, N(r) = 0 at
    a rational r > 0, and N non-decreasing in v (sign > 0; non-increasing for sign < 0), shown by the same route
    on dN/dv. Then dh/dv has the sign of v - r (of r - v), so h is smallest (largest) at r, and sign * h(r) >= 0
    is shown as for a turning point. Bin(3, p) against Bin(3, 1/2): the gap between the KLs of the two
    directions has derivative (3 s^2 - 6 s log s - 3)/(2 s (s + 1)^2) over p = 1/(1 + s); its numerator rises
    (its derivative 6 (s - 1 - log s) >= 0) through 0 at s = 1. The root is found in floats while proving
    (:func:`_rational_root`) and recorded; value_at checks it exactly, and a replay reads it."""
    if v.is_positive is not True:
        return None
    derivative = ch.run("derivative", h, v)
    if derivative is None or v not in derivative.free_symbols:
        return None
    parts = ch.run("numerator_denominator", derivative)
    if parts is None:
        return None
    numerator, denominator = parts
    if ch.run("positive_where", denominator) is not sp.true or ch.run("continuous_everywhere", numerator) is not sp.true:
        return None
    if ch.replay is not None:
        stored = ch.stored_next()
        if stored is None or stored.rule != "root_choice" or len(stored.inputs) != 3:
            raise ReplayMismatch(f"step {len(ch.steps) + 1}: the certificate does not say where {_brief(numerator, 80)} "
                                 "vanishes")
        root = stored.inputs[2]
    else:
        try:
            root = ch.guards.run("the symbolic proof (a numerator's root)", ch.seconds, _rational_root, numerator, v)
        except HangGuardFired:
            root = None
        if root is None:
            return None
    ch.run("root_choice", numerator, v, root)
    if ch.run("positive_where", root) is not sp.true or ch.run("value_at", numerator, v, root) != 0:
        return None
    slope = ch.run("derivative", numerator, v)
    if slope is None:
        return None
    rising = _monotone_sign(ch, slope, sign, depth - 1, v)
    if rising is None:
        return None
    at_root = _value_at_turning_point(ch, h, sign, depth, v, root)
    if at_root is None:
        return None
    value, inner = at_root
    where, trend = ("smallest", "non-decreasing") if sign > 0 else ("largest", "non-increasing")
    return (f"its derivative in {sp.sstr(v)} is {_brief(numerator)} over the positive {_brief(denominator)}; the "
            f"numerator is 0 at {sp.sstr(v)} = {sp.sstr(root)} and {trend} in {sp.sstr(v)} ({rising}), so it is "
            f"{where} at {sp.sstr(v)} = {sp.sstr(root)}, where it is {_brief(value)}: " + inner)


def _rational_root(expr, v):
    """A positive rational r with denominator at most ROOT_DENOMINATOR near which ``expr`` changes sign in v
    (its other symbols at two sample values, where r must be the same), or None. Floats only point to a
    candidate: the proof checks expr(r) = 0 exactly."""
    others = _ordered(expr.free_symbols - {v})
    found = None
    for sample in (sp.Rational(7, 5), sp.Rational(23, 7)):
        f = sp.lambdify(v, expr.subs({s: sample for s in others}), "mpmath")
        roots = set()
        with mpmath.workdps(30):
            grid = [mpmath.mpf(10) ** (-8 + 16 * mpmath.mpf(i) / (ROOT_GRID - 1)) for i in range(ROOT_GRID)]
            try:
                values = [f(g) for g in grid]
                for (a, fa), (b, fb) in zip(zip(grid, values), zip(grid[1:], values[1:])):
                    if not (mpmath.isfinite(fa) and mpmath.isfinite(fb) and fa.imag == 0 and fb.imag == 0):
                        continue
                    if fa == 0 or fa * fb < 0:
                        r = a if fa == 0 else mpmath.findroot(f, (a, b), solver="anderson")
                        near = sp.Rational(str(mpmath.nstr(r, 25))).limit_denominator(ROOT_DENOMINATOR)
                        # a rational only near an irrational root is no candidate: its exact check (simplify
                        # of logs of 109/79) can take a minute
                        if abs(f(mpmath.mpf(near.p) / near.q)) < mpmath.mpf(10) ** -20:
                            roots.add(near)
            except (ValueError, TypeError, ZeroDivisionError, ArithmeticError):
                return None
        found = roots if found is None else found & roots
    return min(found) if found and len(found) == 1 else None


_TURNING = {TURNING_POINT: _from_turning_point, MONOTONE_ROOT: _from_monotone_root}

#: the routes by name, and the order in which they are tried for each relation
ROUTES = {"infinite": _infinite, "simplify": _simplify, "exponential": _exponential, "expand_log": _expand_log,
          "log_expansion": _log_expansion, "sign": _sign, "max_divergence": _max_divergence,
          "nonnegative": _nonnegative, "pure_dp_zcdp": _pure_dp_zcdp, "exp_sign": _exp_sign,
          "order_end": _order_end, "monotone": _monotone, "branches": _branches,
          "pieces_where_finite": _pieces_where_finite, "cases": _cases, "finite_range": _finite_range}
#: the routes through branches and cases come last: they re-run the others on parts of the relation
_ORDER = {"==": ("infinite", "simplify", "exponential", "expand_log", "log_expansion", "finite_range", "branches",
                "pieces_where_finite", "cases"),
          "<=": ("infinite", "sign", "max_divergence", "pure_dp_zcdp", "exp_sign", "monotone", "branches", "cases"),
          ">=": ("infinite", "sign", "nonnegative", "exp_sign", "order_end", "monotone", "branches",
                 "pieces_where_finite", "cases")}


def _holds_order_one(x: ProofContext) -> bool:
    """The claim is about the curve over an order range with alpha = 1 inside it."""
    lo, hi = x.alpha_range
    return x.order is None and (lo < 1) is sp.true and (hi > 1) is sp.true


def _jumps_at_order_one(x: ProofContext) -> bool:
    """The order range holds alpha = 1 and the claim may jump there: a Piecewise condition, a sign or a
    Heaviside in alpha. The routes take alpha < 1 and alpha > 1 apart (as 1/(1 + v) and 1 + t) and never
    alpha = 1, where D is the KL: Piecewise((D, Ne(alpha, 1)), (oo, True)) would be proved equal to D."""
    if not _holds_order_one(x):
        return False
    jumps = [a.args[0] for a in x.c_free.atoms(sp.sign, sp.Heaviside)]
    jumps += [cond for pw in x.c_free.atoms(sp.Piecewise) for _, cond in pw.args]
    return any(ALPHA in j.free_symbols for j in jumps if isinstance(j, sp.Basic))


def prove(context: ProofContext, *, seconds: float = PROVE_ATTEMPT_SECONDS, guards: HangGuards | None = None
          ) -> tuple[Proof | None, int]:
    """The first route that proves the relation, and the number of rewrite attempts made (module docstring)."""
    guards = guards if guards is not None else HangGuards()
    attempts = 0
    if _jumps_at_order_one(context):
        return None, attempts
    for name in _ORDER[context.relation]:
        chain = Chain(guards, seconds)
        text = ROUTES[name](chain, context)
        attempts += chain.attempts
        if text:
            return Proof(name, text, tuple(chain.steps), attempts), attempts
    return None, attempts


def replay(route: str, steps: tuple[Step, ...], context: ProofContext, *, seconds: float = PROVE_ATTEMPT_SECONDS,
           guards: HangGuards | None = None) -> str:
    """Run ``route`` again on ``context`` comparing every step with ``steps``: what it proves, or
    :class:`~rdpsym.claims.rewrite.ReplayMismatch` (also when the route does not prove the relation)."""
    if route not in ROUTES or route not in _ORDER[context.relation]:
        raise ReplayMismatch(f"{route!r} is not a route for the relation {context.relation}")
    if _jumps_at_order_one(context):
        raise ReplayMismatch("the claim may jump at alpha = 1, which no route looks at")
    chain = Chain(guards if guards is not None else HangGuards(), seconds, replay=tuple(steps))
    text = ROUTES[route](chain, context)
    chain.finish()
    if not text:
        raise ReplayMismatch(f"the route {route} does not prove the relation")
    return text


def _ordered(expressions) -> list:
    """Distinct expressions in a fixed order (a set's iteration order is not, between processes)."""
    return sorted(set(expressions), key=sp.srepr)


def both_directions(directions) -> bool:
    """Whether the directions ``(P, Q)`` are closed under swapping P and Q (a mechanism's are, Def. 4)."""
    pairs = {(P, Q) for P, Q in directions}
    return bool(pairs) and all((Q, P) in pairs for P, Q in pairs)
