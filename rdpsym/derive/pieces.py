"""Splitting a support at the kinks of a density, so that every piece is smooth.

Abs, sign, Heaviside, Max, Min and Piecewise make a density non-smooth where their arguments change
sign. On each piece between consecutive kinks those constructs resolve to one smooth branch, which
sympy integrates (or sums) far more easily than the whole. The kinks are found with ``solveset``, put
in order by the sign oracle (:mod:`.sign`: the parameters' assumptions and their declared domains, so
that d in (0, 1) puts a kink d inside (0, 2), which sympy's assumptions on d cannot say), and each
construct is resolved by its sign at a test point inside the piece. A sign the oracle does not decide
raises :class:`UndecidedSign`, which names the expression: the engine then derives each case of its
sign separately (:mod:`.cases`) rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..numeric.kinks import kink_arguments
from ..specify.mechanism import is_discrete_support
from ..specify.support import Support
from .sign import UNDECIDED_ERRORS, decide, decide_relation, sign

__all__ = ["Piece", "DerivationError", "UndecidedSign", "split_support", "finite_points", "symbolic_kinks"]


class DerivationError(Exception):
    """The symbolic derivation cannot proceed; the message says why."""


class UndecidedSign(DerivationError):
    """The split needs the sign of ``expr`` (an expression in the parameters), which neither the
    assumptions nor the declared domains decide: a derivation can proceed case by case."""

    def __init__(self, expr: sp.Expr, message: str):
        super().__init__(message)
        self.expr = expr


@dataclass(frozen=True)
class Piece:
    """A piece of the support on which P and Q are smooth (``P``, ``Q`` resolved, possibly zero).

    Continuous pieces are open intervals (lo, hi); discrete pieces are integer ranges [lo, hi]
    (either end may be infinite). ``point`` pieces are single atoms of a finite or integer support.
    """

    lo: sp.Expr
    hi: sp.Expr
    P: sp.Expr
    Q: sp.Expr
    discrete: bool

    @property
    def is_point(self) -> bool:
        return self.discrete and self.lo == self.hi

    def describe(self) -> str:
        if self.is_point:
            return f"{{{self.lo}}}"
        if self.discrete:
            return f"[{self.lo}, {self.hi}] in Z"
        return f"({self.lo}, {self.hi})"


def _sign_at(expr: sp.Expr, params=None) -> int:
    """Sign (+1, -1, 0) of an x-free expression by the sign oracle (:mod:`.sign`: the assumptions, the
    parameters' domains); UndecidedSign if it does not decide it."""
    known = sign(expr, params)
    if known is not None:
        return known
    try:  # the case split solves the expression for a parameter: its simplest form
        expr = sp.simplify(expr)
    except UNDECIDED_ERRORS:
        pass
    raise UndecidedSign(expr, f"cannot decide the sign of {expr}; declare assumptions on the parameters")


def _decided(relation, params, difference, message) -> bool:
    """``relation`` decided by the sign oracle; UndecidedSign (of ``difference``) if it is not."""
    truth, _ = decide_relation(relation, params)
    if truth is None:
        raise UndecidedSign(difference, message)
    return truth


def symbolic_kinks(P: sp.Expr, Q: sp.Expr, x: sp.Symbol) -> list[sp.Expr]:
    """The kinks of P and Q as sympy expressions: the real zeros (``solveset``) of the arguments that
    :func:`rdpsym.numeric.kinks.kink_arguments` finds. Raises DerivationError when a zero set is not
    a finite set."""
    points: list[sp.Expr] = []
    for g in kink_arguments(P, x) + kink_arguments(Q, x):
        roots = sp.solveset(g, x, sp.S.Reals)
        if isinstance(roots, sp.FiniteSet):
            points += list(roots)
        elif roots is sp.S.EmptySet:
            continue
        elif isinstance(roots, sp.Complement) and isinstance(roots.args[0], sp.FiniteSet):
            points += list(roots.args[0])
        else:
            raise DerivationError(f"cannot locate the kinks of {g} = 0 (solveset gave {roots})")
    return points


def _same(p, q, params) -> bool:
    return p == q or decide(p - q, "zero", params) is True


def _sorted_unique(points: list[sp.Expr], params=None) -> list[sp.Expr]:
    out: list[sp.Expr] = []
    for p in points:
        if any(_same(p, q, params) for q in out):
            continue
        out.append(p)
    # insertion sort with decided comparisons only
    ordered: list[sp.Expr] = []
    for p in out:
        pos = len(ordered)
        for i, q in enumerate(ordered):
            less = _decided(sp.Lt(p, q), params, q - p,
                            f"cannot order the kink points {p} and {q}; declare assumptions on the parameters")
            if less:
                pos = i
                break
        ordered.insert(pos, p)
    return ordered


def _by_domains(expr: sp.Expr, params) -> sp.Expr:
    """``expr`` with each Piecewise in the parameters alone (a normaliser that depends on where a kink
    lies) replaced by its branch where the domains decide which one holds; others are kept."""

    def pick(node):
        for branch, cond in node.args:
            truth, _ = decide_relation(cond, params)
            if truth is None:
                return node
            if truth:
                return branch
        return node

    return expr.replace(lambda n: isinstance(n, sp.Piecewise), pick)


def _resolve(expr: sp.Expr, x: sp.Symbol, test: sp.Expr, params=None) -> sp.Expr:
    """Replace kink constructs by the branch that holds on a piece containing ``test``; with ``params``,
    also Piecewise nodes in the parameters whose branch their domains decide."""

    def at(g):
        return _sign_at(g.subs(x, test), params)

    def rebuild(node):
        if not node.has(x) or node.is_Atom:
            return _by_domains(node, params) if params and node.has(sp.Piecewise) else node
        args = [rebuild(a) for a in node.args] if not isinstance(node, sp.Piecewise) else None
        if isinstance(node, sp.Abs):
            s = at(args[0])
            return args[0] if s >= 0 else -args[0]
        if isinstance(node, sp.sign):
            return sp.Integer(at(args[0]))
        if isinstance(node, sp.Heaviside):
            s = at(args[0])
            if s == 0:
                raise DerivationError("a test point falls on a Heaviside jump")
            return sp.Integer(1 if s > 0 else 0)
        if isinstance(node, (sp.Max, sp.Min)):
            best = args[0]
            for cand in args[1:]:
                s = at(cand - best)
                if (s > 0 and isinstance(node, sp.Max)) or (s < 0 and isinstance(node, sp.Min)):
                    best = cand
            return best
        if isinstance(node, sp.Piecewise):
            for branch, cond in node.args:
                known, pending = decide_relation(cond.subs(x, test), params)
                if known is None and params and pending is not None:
                    raise UndecidedSign(pending, f"cannot decide the Piecewise condition {cond} on a piece")
                if known is None:
                    raise DerivationError(f"cannot decide the Piecewise condition {cond} on a piece")
                truth = known
                if truth:
                    return rebuild(branch)
            return sp.nan
        return node.func(*args)

    return rebuild(expr)


def _intervals(support: sp.Set) -> list[tuple[sp.Expr, sp.Expr]]:
    try:
        classified = Support.of(support)
    except ValueError:
        classified = None
    if classified is None or not classified.is_continuous:
        raise DerivationError(f"unsupported continuous support {support}")
    return [(lo, hi) for lo, hi in classified.spans]


def _integer_ranges(support: sp.Set) -> list[tuple[sp.Expr, sp.Expr]]:
    if support == sp.S.Integers:
        return [(-sp.oo, sp.oo)]
    if support == sp.S.Naturals0:
        return [(sp.Integer(0), sp.oo)]
    if support == sp.S.Naturals:
        return [(sp.Integer(1), sp.oo)]
    if isinstance(support, sp.Range):
        if support.step != 1:
            raise DerivationError("Range supports must have step 1")
        # start and stop - 1, not inf and sup: sympy cannot take those of a Range with symbolic ends
        return [(support.start, support.stop - 1)]
    if isinstance(support, sp.Union):
        return [r for a in support.args for r in _integer_ranges(a)]
    raise DerivationError(f"unsupported discrete support {support}")


def finite_points(support: sp.Set) -> list[sp.Expr] | None:
    """The atoms of a finite support, or None if the support is infinite."""
    if isinstance(support, sp.FiniteSet):
        return list(support.args)
    if isinstance(support, sp.Range):
        try:
            size = support.size
        except ValueError:  # a Range with symbolic ends (sympy has no size for it): not a list of atoms
            return None
        if size.is_finite and size.is_number:
            return list(support)
    return None


def split_support(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, support: sp.Set, params=None) -> list[Piece]:
    """Split ``support`` into pieces on which P and Q are smooth, resolving kink constructs.

    ``params`` (:class:`~rdpsym.Parameter` objects): their domains decide what the assumptions leave
    open (:mod:`.domains`); a sign neither decides raises :class:`UndecidedSign`."""
    discrete = is_discrete_support(support)
    atoms = finite_points(support) if discrete else None
    if atoms is not None:
        return [Piece(a, a, _point_value(P, x, a, params), _point_value(Q, x, a, params), True) for a in atoms]
    kinks = symbolic_kinks(P, Q, x)
    regions = _integer_ranges(support) if discrete else _intervals(support)
    pieces: list[Piece] = []
    for lo, hi in regions:
        inside = []
        for k in kinks:
            message = f"cannot decide whether the kink {k} lies inside ({lo}, {hi})"
            lo_ok = True if lo == -sp.oo else _decided(sp.Gt(k, lo), params, k - lo, message)
            hi_ok = True if hi == sp.oo else _decided(sp.Lt(k, hi), params, hi - k, message)
            if lo_ok and hi_ok:
                inside.append(k)
        cuts = _sorted_unique(inside, params)
        if discrete:
            pieces += _discrete_pieces(P, Q, x, lo, hi, cuts, params)
        else:
            ends = [lo, *cuts, hi]
            for a, b in zip(ends, ends[1:]):
                test = _test_point(a, b)
                pieces.append(Piece(a, b, _resolve(P, x, test, params), _resolve(Q, x, test, params), False))
    return pieces


def _point_value(expr, x, a, params=None):
    value = _resolve(expr, x, a, params).subs(x, a)
    return sp.simplify(value) if value.has(sp.Piecewise) else value


def _test_point(a, b):
    if a == -sp.oo and b == sp.oo:
        return sp.Integer(0)
    if a == -sp.oo:
        return b - 1
    if b == sp.oo:
        return a + 1
    return (a + b) / 2


def _discrete_pieces(P, Q, x, lo, hi, cuts, params=None):
    """Integer ranges between kinks; integer kinks become single-point pieces.

    The branch that holds on a range is read off at a real test point between the neighbouring kinks,
    where the sign pattern is the same as on every integer of the range.
    """
    pieces: list[Piece] = []
    start, left_kink = lo, -sp.oo
    for c in cuts:
        test = _test_point(left_kink, c)
        if c.is_integer:
            if _nonempty(start, c - 1, params):
                pieces.append(_range_piece(P, Q, x, start, c - 1, test, params))
            pieces.append(Piece(c, c, _point_value(P, x, c, params), _point_value(Q, x, c, params), True))
            start = c + 1
        elif c.is_integer is False and c.is_number:
            if _nonempty(start, sp.floor(c), params):
                pieces.append(_range_piece(P, Q, x, start, sp.floor(c), test, params))
            start = sp.ceiling(c)
        else:
            raise DerivationError(f"cannot decide whether the kink {c} is an integer")
        left_kink = c
    if _nonempty(start, hi, params):
        pieces.append(_range_piece(P, Q, x, start, hi, _test_point(left_kink, sp.oo), params))
    return pieces


def _nonempty(a, b, params=None) -> bool:
    """Whether to keep the integer range [a, b]; a range of symbolic length >= 0 is kept (it may be
    empty for some parameter values, where its sum is 0 by the usual convention). The parameters'
    domains decide what the assumptions leave open (n in [3, oo) makes [2, n - 1] non-empty)."""
    if a == -sp.oo or b == sp.oo:
        return True
    ok, _ = decide_relation(sp.Le(a, b))
    if ok is None:
        ok, _ = decide_relation(sp.Ge(b - a + 1, 0), params)
    if ok is None and params:
        raise DerivationError(f"cannot decide whether the integer range [{a}, {b}] is empty")
    return ok


def _range_piece(P, Q, x, a, b, test, params=None):
    if a == b:
        return Piece(a, a, _point_value(P, x, a, params), _point_value(Q, x, a, params), True)
    return Piece(a, b, _resolve(P, x, test, params), _resolve(Q, x, test, params), True)
