r"""Non-decreasing and convex in the size of a shift: structural arguments for a supremum over shifts.

The supremum of a divergence over a family of adjacent pairs (Mironov 2017, arXiv:1702.07476 v3, Def. 4)
is taken in closed form where its values are shown non-decreasing in ``u = |t|`` (:func:`nondecreasing`,
for a one-parameter family, :mod:`.adjacency`) or convex in each shift coordinate (:func:`convex`, for a
ball of shift vectors, :mod:`.balls`).

Both properties are closed under sums, under multiplication by a positive constant (a negative constant
turns either into its mirror image: non-increasing, concave) and under a Piecewise whose conditions are
free of ``u`` when every branch has it: the non-decreasing and the convex functions are each a convex
cone (Boyd & Vandenberghe 2004, *Convex Optimization*, Sec. 3.2.1 for convexity).
:class:`ConeProperty` walks those rules once; each property adds its own node rules and the test it
falls back on, the sign of a derivative:

* **non-decreasing** (:data:`NONDECREASING`): Max and Min of non-decreasing arguments, log and exp of a
  non-decreasing argument (both increasing; log on its real domain), ``k log F`` by the sign of
  ``(k F)'``; else the first derivative, with its exponential terms paired as ``g (e^A1 - e^A2)``
  (:func:`_exponential_sum`);
* **convex** (:data:`CONVEX`): ``log g`` by the sign of ``g g'' - g'^2`` term by term
  (:func:`_log_convex`), exp of a convex function (exp is convex and increasing); else the second
  derivative.

None of these has a time limit of its own: callers wrap them.
"""

from __future__ import annotations

import sympy as sp

from ..symbols import alpha as ALPHA
from .regimes import ABOVE, BELOW
from .sign import decide, sign as decided_sign

__all__ = ["ConeProperty", "NONDECREASING", "CONVEX", "exp_split", "nondecreasing", "convex"]


# --------------------------------------------------------------------------------------------------
# the shared rules
# --------------------------------------------------------------------------------------------------
class ConeProperty:
    """A property of functions of ``u > 0`` kept by sums, positive multiples and branches chosen free of
    ``u`` (see the module docstring). ``sign = -1`` asks for the mirror image (non-increasing, concave).

    :meth:`why` applies the shared rules; a property overrides :meth:`node` (its own node rules, or
    ``NotImplemented``), :meth:`multiple` (``k * rest`` whose constant ``k`` has no decided sign) and
    :meth:`fallback` (the derivative test, for a node no rule decides)."""

    def why(self, e: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
        """A reason why ``sign * e`` has the property in ``u > 0``, or None."""
        if not e.has(u):
            return f"free of {u}"
        if isinstance(e, sp.Piecewise):
            if any(cond.has(u) for _, cond in e.args):
                return None
            whys = [self.why(branch, u, sign) for branch, _ in e.args]
            return "every branch: " + "; ".join(whys) if all(whys) else None
        if isinstance(e, sp.Add):
            whys = [self.why(a, u, sign) for a in e.args]
            if all(whys):
                return "every term: " + "; ".join(w for w in whys if not w.startswith("free of"))
            return self.fallback(e, u, sign)
        if isinstance(e, sp.Mul):
            k, rest = e.as_independent(u, as_Add=False)
            if k != 1:
                s = decided_sign(k)
                if s == 1:
                    return self.why(rest, u, sign)
                if s == -1:
                    return self.why(rest, u, -sign)
                found = self.multiple(k, rest, u, sign)
                if found is not NotImplemented:
                    return found
        found = self.node(e, u, sign)
        return self.fallback(e, u, sign) if found is NotImplemented else found

    def node(self, e: sp.Expr, u: sp.Symbol, sign: int):
        return NotImplemented

    def multiple(self, k: sp.Expr, rest: sp.Expr, u: sp.Symbol, sign: int):
        return NotImplemented

    def fallback(self, e: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
        raise NotImplementedError


class _NonDecreasing(ConeProperty):
    def node(self, e, u, sign):
        if isinstance(e, (sp.Max, sp.Min)):
            whys = [self.why(a, u, sign) for a in e.args]
            return f"every argument of {type(e).__name__}: " + "; ".join(whys) if all(whys) else None
        if isinstance(e, (sp.log, sp.exp)):
            return self.why(e.args[0], u, sign)  # both increasing (log on its real domain F > 0)
        return NotImplemented

    def multiple(self, k, rest, u, sign):
        if isinstance(rest, sp.log):
            # d/du k log F = k F'/F and F > 0 wherever the log is real: the sign of (k F)'
            return _derivative(sp.Add(*[k * a for a in sp.Add.make_args(rest.args[0])]), u, sign)
        return NotImplemented

    def fallback(self, e, u, sign):
        return _derivative(e, u, sign)


class _Convex(ConeProperty):
    def node(self, e, u, sign):
        if isinstance(e, sp.log):
            why = _log_convex(e.args[0], u, sign)
            if why is not None:
                return why
        if isinstance(e, sp.exp) and sign > 0:
            why = self.why(e.args[0], u, 1)  # exp is convex and increasing: exp of a convex function is convex
            if why is not None:
                return f"exp of a convex function ({why})"
        return NotImplemented

    def fallback(self, e, u, sign):
        return _second_derivative(e, u, sign)


#: non-decreasing in u (``sign = -1``: non-increasing)
NONDECREASING = _NonDecreasing()
#: convex in u (``sign = -1``: concave)
CONVEX = _Convex()


# --------------------------------------------------------------------------------------------------
# non-decreasing in u
# --------------------------------------------------------------------------------------------------
def exp_split(term: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """``term = c * exp(A)``: ``(c, A)`` with every exponential factor gathered in ``A``."""
    c, A = sp.S.One, sp.S.Zero
    for f in sp.Mul.make_args(sp.powsimp(term, combine="exp")):
        base, e = f.as_base_exp()
        if isinstance(base, sp.exp):
            A += e * base.args[0]
        elif base is sp.E:
            A += e
        else:
            c *= f
    return c, sp.expand(A)


def _exponential_sum(S: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
    r"""``sign * dS/du >= 0`` for ``S = sum_i c_i exp(A_i)``, term by term.

    ``dS/du = sum_A g_A exp(A)`` with ``g_A = sum (c_i' + c_i A_i')`` over the terms of exponent ``A``.
    Non-negative when every ``g_A`` is, or, for two exponents with ``g_2 = -g_1``, when
    ``g_1 (A_1 - A_2) >= 0``: ``g_1 (e^{A_1} - e^{A_2}) = g_1 e^{A_2} (A_1 - A_2) phi(A_1 - A_2)`` with
    ``phi(z) = (e^z - 1)/z > 0`` for real ``z``.
    """
    groups: dict = {}
    for term in sp.Add.make_args(S):
        c, A = exp_split(term)
        if A.is_real is not True:
            return None
        groups[A] = groups.get(A, sp.S.Zero) + sign * (sp.diff(c, u) + c * sp.diff(A, u))
    gs = {A: sp.cancel(sp.together(g)) for A, g in groups.items()}
    gs = {A: g for A, g in gs.items() if g != 0}
    if all(decide(g, "nonnegative") for g in gs.values()):
        return "each exponential term of the derivative is non-negative"
    if len(gs) == 2:
        (A1, g1), (A2, g2) = gs.items()
        if decide(g1 + g2, "zero") and decide(g1 * (A1 - A2), "nonnegative"):
            return (f"the derivative is g (exp(A1) - exp(A2)) with g (A1 - A2) = "
                    f"{sp.sstr(sp.factor(g1 * (A1 - A2)))} >= 0")
    return None


def _derivative(S: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
    why = _exponential_sum(S, u, sign)
    if why is not None:
        return why
    d = sp.simplify(sign * sp.diff(S, u))
    if decide(d, "nonnegative"):
        return f"the derivative in {u} simplifies to {sp.sstr(d)} >= 0"
    return None


def nondecreasing(expr: sp.Expr | None, u: sp.Symbol) -> str | None:
    """A reason why ``expr`` is non-decreasing in ``u > 0`` for every order alpha > 0 and every value of
    the other symbols allowed by their assumptions, or None when that is not shown.

    Shown structurally (sums, positive multiples, log, exp, Max/Min, Piecewise in alpha) down to
    derivatives whose sign sympy decides, or whose exponential terms pair up as ``g (e^A1 - e^A2)``
    (:func:`_exponential_sum`); an expression in alpha that is not shown for alpha > 0 at once is tried
    in each regime (alpha = 1 + s, alpha = 1/(1 + v); :mod:`rdpsym.derive.regimes`). No time limit of
    its own: callers wrap it (:func:`family_supremum` does).
    """
    if expr is None:
        return None
    why = NONDECREASING.why(expr, u, 1)
    if why is not None or not expr.has(ALPHA):
        return why
    whys = []
    for regime in (ABOVE, BELOW):
        w = NONDECREASING.why(expr.subs(ALPHA, regime.alpha_in_var), u, 1)
        if w is None:
            return None
        whys.append(f"{regime.name}: {w}")
    return "; ".join(whys)


# --------------------------------------------------------------------------------------------------
# convex in u
# --------------------------------------------------------------------------------------------------
def _terms_nonneg(S: sp.Expr) -> bool:
    """``S = sum_i c_i exp(A_i) >= 0`` shown by grouping the terms of equal exponent: each group's
    coefficient non-negative."""
    groups: dict = {}
    for term in sp.Add.make_args(sp.expand(S)):
        c, A = exp_split(term)
        if A.is_real is not True:
            return False
        groups[A] = groups.get(A, sp.S.Zero) + c
    return all(decide(sp.cancel(sp.together(g)), "nonnegative") for g in groups.values())


def _second_derivative(e: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
    d2 = sign * sp.diff(e, u, 2)
    if _terms_nonneg(d2):
        return "its second derivative is a sum of non-negative terms"
    d = sp.simplify(d2)
    if decide(d, "nonnegative"):
        return f"its second derivative {sp.sstr(sign * d)} has the sign {'>=' if sign > 0 else '<='} 0"
    return None


def _log_convex(g: sp.Expr, u: sp.Symbol, sign: int) -> str | None:
    r"""Why ``sign * log g`` is convex in ``u``: ``(log g)'' = (g g'' - g'^2) / g^2``. For
    ``g = sum_i c_i exp(a_i u + b_i)`` (``c_i``, ``a_i`` free of ``u``)
    ``g g'' - g'^2 = sum_{i<j} c_i c_j (a_i - a_j)^2 exp(A_i + A_j)``, of the sign ``sign`` when every
    ``sign c_i c_j (a_i - a_j)^2`` is non-negative; otherwise ``g g'' - g'^2`` is expanded and decided
    term by term."""
    terms = [exp_split(term) for term in sp.Add.make_args(g)]
    slopes = [sp.diff(A, u) for _, A in terms]
    if len(terms) > 1 and all(not c.has(u) for c, _ in terms) and all(not a.has(u) for a in slopes):
        pairs = [sign * terms[i][0] * terms[j][0] * (slopes[i] - slopes[j]) ** 2
                 for i in range(len(terms)) for j in range(i + 1, len(terms))]
        if all(decide(sp.factor(p), "nonnegative") for p in pairs):
            return (f"log of a sum of exponentials whose g g'' - g'^2 = sum_(i<j) c_i c_j (a_i - a_j)^2 "
                    f"exp(A_i + A_j) is {'>=' if sign > 0 else '<='} 0 term by term (g = {sp.sstr(g)})")
        return None
    N = sign * (g * sp.diff(g, u, 2) - sp.diff(g, u) ** 2)
    if _terms_nonneg(sp.powsimp(sp.expand(N), combine="exp")):
        return f"log of g with g g'' - g'^2 {'>=' if sign > 0 else '<='} 0 term by term (g = {sp.sstr(g)})"
    return None


def convex(expr: sp.Expr | None, u: sp.Symbol) -> str | None:
    """A reason why ``expr`` is convex in ``u > 0`` for every order alpha > 0 and every value of the other
    symbols allowed by their assumptions, or None when that is not shown.

    Structural (sums, positive multiples, exp of a convex function, Piecewise in alpha), with ``log g``
    decided by the sign of ``g g'' - g'^2`` term by term, down to second derivatives whose sign sympy
    decides. An expression in alpha not shown for alpha > 0 at once is tried in each regime
    (alpha = 1 + s, alpha = 1/(1 + v); :mod:`rdpsym.derive.regimes`). No time limit of its own.
    """
    if expr is None:
        return None
    if not expr.has(ALPHA):
        return CONVEX.why(expr, u, 1)
    # the regimes first: a factor 1/(alpha - 1) has a sign in each, and the structure then decides quickly
    whys = []
    for regime in (ABOVE, BELOW):
        w = CONVEX.why(expr.subs(ALPHA, regime.alpha_in_var), u, 1)
        if w is None:
            return CONVEX.why(expr, u, 1)
        whys.append(f"{regime.name}: {w}")
    return "; ".join(whys)
