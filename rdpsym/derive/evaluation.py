"""Exact and float values of a derived expression at given parameters, also at ties and boundaries.

A result's expression may contain Max, Min, Piecewise, Abs, sign and Heaviside nodes. At a point where
numerics cannot tell which branch holds (a tie, a condition at its boundary) the value is the common
value of the possible branches, or an ``ArithmeticError``: never a number from a guessed branch. Float
values are computed by ``evalf`` with its precision checked by recomputation (:func:`_evalf_checked`).
:class:`~rdpsym.derive.result.DivergenceResult` evaluates through :func:`checked_value`, :func:`exact_at`
and :func:`decide`.
"""

from __future__ import annotations

from typing import Mapping

import sympy as sp

from .sign import exactly_zero, numeric_sign, without_digits

__all__ = ["checked_value", "exact_at", "decide"]


#: precision doublings of :func:`_evalf_checked` (dps 30: up to 2560 digits, where a value of 1e-2000 shows)
_DOUBLINGS = 6


def _evalf_checked(expr: sp.Expr, subs: Mapping, dps: int) -> sp.Expr:
    """``expr.evalf(subs=subs)`` to ``dps`` correct digits, or ``ArithmeticError``.

    evalf's own precision tracking misses some losses: log(1 + 1e-60) at 40 digits is 0, though the
    Laplace RDP at b = 1e30 is 1e-60. So the value is recomputed at twice the working precision until
    two nonzero values agree to dps + 1 digits (:data:`_DOUBLINGS` doublings at most), and a value that never settles
    raises. Two zeros never agree: evalf returns an exact 0 for a sum that cancels below its working
    precision (Laplace at alpha = 5, b = 1e50 is 3.9e-100, and 0 at 40 and 80 digits). A zero is returned
    only when it is shown at the exact point (:func:`.sign.exactly_zero`; the KL of equal distributions).
    """
    exact_point = {k: sp.Rational(v) if isinstance(v, sp.Float) else v for k, v in subs.items()}
    if _exact_bits(expr, exact_point) <= _EXACT_BITS and _undefined_at(expr, exact_point):
        # 0/0 or a pole at the exact point (a removable order the result does not hold): evalf would give
        # whatever the rounding of both sides makes of it (-26.6 for a true 0.40)
        raise ArithmeticError(f"{expr} is undefined at {dict(subs)} (0/0 or a pole at that exact point)")
    prec = dps + 10
    value = expr.evalf(prec, subs=subs)
    for _ in range(_DOUBLINGS):
        prec *= 2
        finer = expr.evalf(prec, subs=subs)
        if not (finer.is_number and value.is_number) or finer.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            return finer
        if not (_is_zero_value(finer) or _is_zero_value(value)) and (
                abs(finer - value) <= sp.Float(10, prec) ** (-(dps + 1)) * abs(finer)):
            return finer
        value = finer
    if _is_zero_value(value) and exactly_zero(expr, exact_point):
        return sp.Integer(0)
    raise ArithmeticError(f"{expr} could not be evaluated to {dps} digits at {dict(subs)} "
                          + ("(0 at every working precision up to " if _is_zero_value(value) else "(still changing at ")
                          + f"{prec} digits, and not shown to be 0)")


def _undefined_at(expr: sp.Expr, exact_point: Mapping) -> bool:
    """``expr`` is NaN or complex infinity at the exact point (0/0, a pole). A Max or a Min whose arguments
    sympy cannot order there (Bin(3, p) against Bin(3, 1/2) at p = 1/2, where D_oo's branches are 0 written as
    2 log 2 - log 4) raises ValueError when rebuilt: its arguments are then looked at one by one."""
    try:
        return expr.xreplace(exact_point).has(sp.nan, sp.zoo)
    except ValueError:
        return any(_undefined_at(a, exact_point) for a in expr.args)


#: the exact-point test of :func:`_evalf_checked` runs when its powers stay below this many bits; beyond
#: (p = 0.5001 as an exact binary fraction to the power 10**6 has 5e7 bits) a 0/0 shows as a value that
#: does not settle under the doublings, which raise
_EXACT_BITS = 200_000


def _exact_bits(expr: sp.Expr, exact_point: Mapping) -> float:
    """An upper estimate of the bits of the largest exact power in ``expr`` at ``exact_point``: for each
    power with a symbolic exponent, |exponent| times the bits of the values its base depends on. Counted
    from the input alone (a work budget, the same on every machine)."""
    def bits(symbols) -> int:
        total = 0
        for s in symbols:
            v = exact_point.get(s)
            if isinstance(v, sp.Rational):
                total += int(v.p).bit_length() + int(v.q).bit_length()
        return total

    worst = 0.0
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow) and node.exp.free_symbols:
            e = node.exp.xreplace(exact_point)
            if e.is_number:
                try:
                    size = abs(float(e)) * max(bits(node.base.free_symbols), 1)
                except (TypeError, ValueError):
                    size = float("inf")
                worst = max(worst, size)
    return worst


def _is_zero_value(v: sp.Expr) -> bool:
    """A value evalf gave as 0: an exact zero or a Float without digits (a sum that cancelled)."""
    return v == 0 or without_digits(v)


# --------------------------------------------------------------------------------------------------
# values at ties and boundaries of Max / Min / Piecewise / Abs / sign / Heaviside
# --------------------------------------------------------------------------------------------------
#: the nodes whose value depends on a comparison of their arguments
_BRANCHING = (sp.Max, sp.Min, sp.Piecewise, sp.Abs, sp.sign, sp.Heaviside)
#: at most this many undecided branch combinations are evaluated before giving up
_MAX_BRANCHES = 64
def _sign_of(d: sp.Expr, subs: Mapping, dps: int, exact: bool):
    """+1, -1, 0 (only when proven exactly, with ``exact``), ``"complex"`` or None (undecided) for a
    branch-free ``d`` at ``subs``: the sign oracle's certified numerics and exact zero test
    (:func:`.sign.numeric_sign`, :func:`.sign.exactly_zero`)."""
    s = numeric_sign(d, subs, dps)
    if s is None and exact and exactly_zero(d, subs):
        return 0
    return s


def decide(cond: sp.Basic, subs: Mapping, dps: int) -> bool | None:
    """The truth of the condition ``cond`` at ``subs``: True, False, or None when it cannot be decided.

    Exactly first (the substituted condition, when sympy evaluates it to true or false: a boundary
    such as 1/s1**2 - 1/s2**2 > 0 at s1 = s2 is 0 > 0, false); else each comparison by the sign of
    ``lhs - rhs`` (numeric, certain, or an exact zero test when numerics cannot tell it from 0)."""
    cond = sp.sympify(cond) if isinstance(cond, bool) else cond
    if cond is sp.true or cond is sp.false:
        return cond is sp.true
    try:
        exact = cond.xreplace(dict(subs))
        if exact is sp.true or exact is sp.false:
            return exact is sp.true
    except (ValueError, TypeError, ArithmeticError, AttributeError):
        pass
    if isinstance(cond, sp.core.relational.Relational):
        try:
            d = cond.lhs - cond.rhs
        except (TypeError, ValueError):
            return None
        signs = {_sign_of(c, subs, dps, exact=True) for c in _branches(d, subs, dps)}
        if len(signs) != 1:
            return None
        s = signs.pop()
        if s not in (-1, 0, 1):
            return None
        ops = {sp.StrictGreaterThan: s > 0, sp.GreaterThan: s >= 0, sp.StrictLessThan: s < 0,
               sp.LessThan: s <= 0, sp.Eq: s == 0, sp.Ne: s != 0}
        return ops.get(type(cond))
    if isinstance(cond, sp.logic.boolalg.BooleanFunction):
        decided = {}
        for atom in cond.atoms(sp.core.relational.Relational):
            t = decide(atom, subs, dps)
            if t is not None:
                decided[atom] = sp.true if t else sp.false
        reduced = cond.xreplace(decided)
        if reduced is sp.true or reduced is sp.false:
            return reduced is sp.true
        if reduced is not cond and not reduced.atoms(sp.core.relational.Relational):
            return decide(reduced, subs, dps)
    return None


def _dedupe(items):
    out = []
    for it in items:
        if not any(it == o for o in out):
            out.append(it)
    return out


def _cap(items, what):
    items = _dedupe(items)
    if len(items) > _MAX_BRANCHES:
        raise ArithmeticError(f"too many undecided branches of {what} (> {_MAX_BRANCHES})")
    return items


def _combinations(lists, what):
    from itertools import product

    n = 1
    for options in lists:
        n *= len(options)
    if n > _MAX_BRANCHES:
        raise ArithmeticError(f"too many undecided branches in {what} (> {_MAX_BRANCHES})")
    return product(*lists)


def _pair_sign(u: sp.Expr, v: sp.Expr, subs: Mapping, dps: int):
    """The sign of u - v (+1, -1, 0 for structurally equal or equal infinities, None undecided)."""
    if u == v:
        return 0
    if u in (sp.oo, -sp.oo) or v in (sp.oo, -sp.oo):
        if u == v:
            return 0
        return 1 if (u == sp.oo or v == -sp.oo) else -1
    try:
        s = _sign_of(u - v, subs, dps, exact=False)
    except (TypeError, ValueError):
        return None
    return s if s in (-1, 1) else None


def _branches(expr: sp.Basic, subs: Mapping, dps: int) -> list:
    """The branch-free expressions ``expr`` can equal at ``subs``: every Max, Min, Piecewise, Abs, sign
    and Heaviside is replaced by the argument (branch) it takes there.

    A comparison numerics decide picks one branch. One they cannot decide keeps every possible branch:
    for Max and Min (and Abs, kept as it is) these are the tied arguments, which have the same value;
    a sign, Heaviside or Piecewise condition at its boundary is decided exactly when it can be
    (:func:`decide`), else all its branches stay and the caller compares their values."""
    if not isinstance(expr, sp.Basic) or expr.is_Atom or not expr.has(*_BRANCHING):
        return [expr]
    if isinstance(expr, sp.Piecewise):
        out = []
        for e, c in expr.args:
            t = decide(c, subs, dps)
            if t is False:
                continue
            out.extend(_branches(e, subs, dps))
            if t is True:
                break
        else:
            out.append(sp.nan)  # no condition certainly holds: possibly undefined here
        return _cap(out, "a Piecewise")
    if isinstance(expr, (sp.Max, sp.Min)):
        want = 1 if isinstance(expr, sp.Max) else -1
        out = []
        for combo in _combinations([_branches(a, subs, dps) for a in expr.args], expr.func.__name__):
            for i, ai in enumerate(combo):
                beaten = False
                for j, aj in enumerate(combo):
                    if i == j:
                        continue
                    s = _pair_sign(aj, ai, subs, dps)
                    if s == want or (s == 0 and j < i):  # an exact tie keeps the first argument
                        beaten = True
                        break
                if not beaten:
                    out.append(ai)
        return _cap(out, expr.func.__name__)
    if isinstance(expr, (sp.Abs, sp.sign, sp.Heaviside)):
        out = []
        rest = expr.args[1:]
        for c in _branches(expr.args[0], subs, dps):
            s = _sign_of(c, subs, dps, exact=not isinstance(expr, sp.Abs))
            if isinstance(expr, sp.Abs):
                out.append(c if s == 1 else -c if s == -1 else sp.Integer(0) if s == 0 else sp.Abs(c))
            elif s == "complex":
                out.append(expr.func(c, *rest))
            elif isinstance(expr, sp.sign):
                out.extend([sp.Integer(s)] if s in (-1, 0, 1) else [sp.Integer(-1), sp.Integer(0), sp.Integer(1)])
            else:
                at0 = sp.Heaviside(0, *rest)
                out.extend([sp.Integer(1)] if s == 1 else [sp.Integer(0)] if s == -1 else [at0] if s == 0
                           else [sp.Integer(0), at0, sp.Integer(1)])
        return _cap(out, expr.func.__name__)
    lists = [_branches(a, subs, dps) for a in expr.args]
    if all(len(options) == 1 and options[0] is a for options, a in zip(lists, expr.args)):
        return [expr]
    return _cap([expr.func(*combo) for combo in _combinations(lists, str(expr.func))], str(expr.func))


def _agree(u: sp.Expr, v: sp.Expr, dps: int) -> bool:
    if u == v:
        return True
    if any(w.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for w in (u, v)):
        return False
    try:
        return bool(abs(u - v) <= sp.Float(10, dps + 10) ** (-dps) * max(abs(u), abs(v)))
    except TypeError:
        return False


def checked_value(expr: sp.Expr, subs: Mapping, dps: int) -> sp.Expr:
    """``expr`` at ``subs`` to ``dps`` digits (:func:`_evalf_checked`), also at a tie or a boundary of
    its Max, Min, Piecewise, Abs, sign and Heaviside nodes (:func:`_branches`): a tie of Max(a, b) has
    the value a = b; a value that depends on a branch that cannot be decided raises ``ArithmeticError``
    (never a number from a guessed branch)."""
    candidates = _branches(expr, subs, dps)
    if len(candidates) == 1 and not candidates[0].has(sp.nan):
        return _evalf_checked(candidates[0], subs, dps)
    if any(c.has(sp.nan) for c in candidates):
        raise ArithmeticError(f"{expr}: no branch certainly holds at {dict(subs)}")
    values = [_evalf_checked(c, subs, dps) for c in candidates]
    for c, v in zip(candidates[1:], values[1:]):
        if not _agree(values[0], v, dps):
            raise ArithmeticError(
                f"{expr}: cannot decide which branch holds at {dict(subs)}: {candidates[0]} gives "
                f"{sp.N(values[0], 15)}, {c} gives {sp.N(v, 15)}")
    return values[0]


def exact_at(expr: sp.Expr, subs: Mapping) -> sp.Expr:
    """``expr.subs(subs)``, with Max/Min/Piecewise/... replaced by the branch they take when every
    parameter has a value (a tie of Max(2 log s, log s**2) is 2 log s, not an unevaluated Max). A tie
    that is not proven exactly stays an (exact) unevaluated node."""
    if not expr.has(*_BRANCHING) or expr.free_symbols - set(subs):
        return expr.subs(subs)
    try:
        candidates = _branches(expr, subs, 30)
    except ArithmeticError:
        candidates = None
    if candidates and not any(c.has(sp.nan) for c in candidates):
        exact = _dedupe([c.subs(subs) for c in candidates])
        if len(exact) == 1 or all(exactly_zero(e - exact[0], {}) for e in exact[1:]):
            return exact[0]
    try:
        return expr.subs(subs)
    except (ValueError, TypeError) as exc:
        raise ArithmeticError(f"{expr}: cannot decide which branch holds at {dict(subs)}: {exc}") from None
