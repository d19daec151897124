r"""Proved tail bounds for sums over a progression: term ratios shown monotone beyond a point.

A sum over an infinite progression ``k_j = s0 + st j`` (``j = 0, 1, ...``) of the terms

.. math:: t_j = T_b(k_j) = P(k_j)^b\, Q(k_j)^{1-b} = \exp\bigl(b \log P + (1-b)\log Q\bigr)

is cut where its terms are negligible, and what is left off is bounded by the *summand itself*, at
its own order ``b`` (the summand's peak moves with the order: the tail of ``P`` says nothing about it).
The bound rests on the ratio test with a monotone ratio ``r_j = t_{j+1}/t_j``:

* **upward** (``j > J``): if ``r_j`` is non-increasing for ``j >= J`` and ``r_J < 1``, then
  :math:`\sum_{j>J} t_j \le t_J \sum_{m\ge1} r_J^m = t_J\, r_J/(1 - r_J)`;
* **downward** (``0 <= j < J``): if ``r_j`` is non-increasing for ``0 <= j < J``, the ratios
  ``q_j = t_{j-1}/t_j = 1/r_{j-1}`` do not increase going down, and with ``q_J < 1``,
  :math:`\sum_{j<J} t_j \le t_J\, q_J/(1 - q_J)`.

**Monotonicity is proved symbolically** (:func:`ratio_monotone`): with ``u = J + v`` (``v >= 0`` real)
and ``E`` each of ``P``, ``Q``, the ratio ``E(k(u+1))/E(k(u))`` is simplified (``Piecewise``
conditions decided for ``v >= 0``, gamma functions expanded: a hypergeometric term's ratio is a
rational function of ``v``), its log differentiated, and

.. math:: \frac{d}{dv}\log r = b\,\frac{d}{dv}\log\rho_P + (1-b)\,\frac{d}{dv}\log\rho_Q = \frac{N(v)}{D(v)}

must be a quotient of polynomials with rational coefficients, ``D`` without a root and ``N`` without a
sign change on the range (exact real root counting, Sturm sequences), and ``N/D <= 0`` there. Then
``r`` is non-increasing for every real ``u`` in the range, hence at the integers. This covers the
Poisson, negative binomial, geometric, binomial, discrete Gaussian and discrete Laplace families (and
shifts of them); a term whose ratio is not of this kind (Bessel functions: the Skellam pmf) is *not
shown*, and the caller says so.

**The bound at the point is proved in ball arithmetic** (:func:`bound_at`): ``log t_J`` and ``log
t_{J±1}`` as Arb balls (python-flint, the compiled pair of :mod:`.backends.arb`), ``r_J < 1`` decided on
the ball, the bound's upper end taken. Where Arb cannot evaluate the point, mpmath at two precisions
gives the values, with their difference (times 4) and the rounding of the last digits as the radius.
"""

from __future__ import annotations

import functools

import mpmath
import sympy as sp

from .backends.mpmath import log_expr

__all__ = ["TailBound", "bound_at", "ratio_monotone", "term_log"]

#: the offset variable of the ratios (one symbol: the polynomials of P and Q are combined) and the
#: offset along the progression in which a ratio is simplified
_V = sp.Dummy("v", nonnegative=True)
_W = sp.Dummy("w", positive=True)


def _branch(E: sp.Expr, k: sp.Symbol, s0, st, base: int, step: int):
    """``E(k(w + step))`` in the offset ``w`` with its Piecewise conditions decided for every real ``w =
    base + v``, ``v >= 0`` (the branch that holds there), or None when a condition stays undecided."""
    e = E.subs(k, s0 + st * (_W + step))
    if e.has(sp.Piecewise):
        e = sp.piecewise_fold(e)
        if isinstance(e, sp.Piecewise):
            for val, cond in e.args:
                decided = cond.subs(_W, base + _V) if isinstance(cond, sp.Basic) else sp.sympify(cond)
                if decided is sp.true:
                    e = val
                    break
                if decided is not sp.false:
                    return None
            else:
                return None
        if e.has(sp.Piecewise):
            return None
    return e


@functools.lru_cache(maxsize=512)
def _log_ratio_derivative(E: sp.Expr, k: sp.Symbol, s0: int, st: int, base: int):
    """``(N, D)``: polynomials over QQ in ``v`` with ``d/dv log(E(k(u+1))/E(k(u))) = N/D``, ``u = base +
    v`` for real ``v >= 0``; ``"zero"`` when ``E`` vanishes there; None when not shown (a condition left
    undecided, a ratio that is not rational, ...). The ratio is simplified in the offset ``w`` first
    (``Gamma(w + 19/2) / Gamma(w + 17/2) = w + 17/2``), then ``w = base + v``."""
    try:
        e0 = _branch(E, k, s0, st, base, 0)
        e1 = _branch(E, k, s0, st, base, 1)
        if e0 is None or e1 is None:
            return None
        if e0 == 0 and e1 == 0:
            return "zero"
        if e0 == 0 or e1 == 0:
            return None
        ratio = _simplified_ratio(e1, e0)
        if ratio is None:
            return None
        g = sp.diff(log_expr(ratio.subs(_W, base + _V)), _V)
        num, den = sp.fraction(sp.together(g))
        pn, pd = sp.Poly(num, _V, domain="QQ"), sp.Poly(den, _V, domain="QQ")
    except (sp.PolynomialError, sp.CoercionFailed, ValueError, TypeError, NotImplementedError,
            AttributeError, RecursionError):
        return None
    return pn, pd


@functools.lru_cache(maxsize=512)
def _simplified_ratio(e1: sp.Expr, e0: sp.Expr):
    """``e1 / e0`` with gamma functions expanded and cancelled (a rational function of ``w`` for a
    hypergeometric term), or None when it keeps a function of ``w`` other than powers and exp."""
    ratio = sp.expand_func(sp.powsimp((e1 / e0).rewrite(sp.gamma)))
    ratio = sp.cancel(sp.powsimp(ratio, force=False))
    if any(f.has(_W) for f in ratio.atoms(sp.Function) if not isinstance(f, (sp.exp, sp.log))):
        return None
    return ratio


def ratio_monotone(P: sp.Expr, Q: sp.Expr, k: sp.Symbol, b, s0: int, st: int, J: int,
                   downward: bool = False) -> str | None:
    """Whether the term ratio ``r_j`` of ``T_b = P^b Q^(1-b)`` along ``k_j = s0 + st j`` is proved
    non-increasing for real ``j >= J`` (``downward``: for ``0 <= j <= J - 1``): ``"monotone"``, ``"zero"``
    (the terms vanish on the whole range, upward only: ``P = 0`` there with ``b > 0``, or ``Q = 0`` with
    ``b < 1``), or None (not shown). ``b`` exact (a sympy Rational); ``P``, ``Q`` with the parameters
    substituted (module docstring). Downward the conditions are decided for every ``j >= 0`` and the
    roots counted on ``[0, J - 1]``."""
    b = sp.nsimplify(b) if not isinstance(b, sp.Basic) else b
    if not b.is_Rational:
        return None
    if downward and J < 2:
        return "monotone"  # at most one ratio: nothing to compare
    base, sup = (0, sp.Integer(J - 1)) if downward else (int(J), None)
    gp = _log_ratio_derivative(P, k, int(s0), int(st), base)
    gq = _log_ratio_derivative(Q, k, int(s0), int(st), base)
    if not downward and ((gp == "zero" and b > 0) or (gq == "zero" and b < 1 and gp is not None)):
        return "zero"
    if not isinstance(gp, tuple) or not isinstance(gq, tuple):
        return None
    (np_, dp), (nq, dq) = gp, gq
    v = np_.gen
    num = np_ * dq * sp.Poly(b, v, domain="QQ") + nq * dp * sp.Poly(1 - b, v, domain="QQ")
    den = dp * dq
    try:
        if den.count_roots(0, sup) > 0:
            return None  # a pole of the derivative on the range
        if num.is_zero:
            return "monotone"  # a constant ratio
        if num.count_roots(0, sup) > 0:
            return None  # the derivative may change sign
        probe = sp.Rational(1, 2) if sup is None or sup > 0 else sp.Integer(0)
        value = num.eval(probe) * den.eval(probe)
    except (sp.PolynomialError, ValueError, TypeError, NotImplementedError):
        return None
    return "monotone" if value <= 0 else None


class TailBound:
    """A proved bound on the terms left off, in units of ``exp(-S)``: ``bound`` (an mpf, an upper bound)
    and ``how`` (what proved it)."""

    __slots__ = ("bound", "how")

    def __init__(self, bound, how: str):
        self.bound, self.how = bound, how


def term_log(dens, b, k):
    """``(lo, hi)``: an enclosure of ``b log P(k) + (1 - b) log Q(k)`` at the integer ``k`` (mpfs):
    an Arb ball where the compiled pair evaluates it, else mpmath at two precisions (their difference
    times 4, plus the rounding of the last digits). None where a density is 0 or not a number."""
    balls = dens.log_balls(k)
    if balls is not None:
        from . import fast

        lp, lq = balls
        with fast.flint.ctx.workprec(mpmath.mp.prec + 20):
            b = sp.Rational(b)
            B = fast.arb(int(b.p)) / int(b.q)
            v = B * lp + (1 - B) * lq
            if v.is_finite():
                return fast.to_mpf(v.lower()), fast.to_mpf(v.upper())
    vals = []
    b = sp.Rational(b)
    for more in (0, 20):
        with mpmath.workdps(mpmath.mp.dps + more):
            lp, lq = dens.logpq(mpmath.mpf(k))
            b = mpmath.mpf(int(b.p)) / int(b.q) if isinstance(b, sp.Basic) else b
            if not (mpmath.isfinite(lp) and mpmath.isfinite(lq)):
                return None
            vals.append((b * lp + (1 - b) * lq, abs(b) * abs(lp) + abs(1 - b) * abs(lq)))
    (v1, _), (v2, size) = vals
    rad = 4 * abs(v1 - v2) + 16 * mpmath.eps * (size + 1)
    return v2 - rad, v2 + rad


def bound_at(dens, P, Q, k, b, s0: int, st: int, J: int, S, downward: bool = False) -> TailBound | None:
    """A proved bound on the sum of ``exp(L_b(k_j) - S)`` over ``j > J`` (``downward``: over ``0 <= j <
    J``), ``L_b = b log P + (1 - b) log Q``: the ratio test of the module docstring, its monotonicity
    shown by :func:`ratio_monotone` and the bound at ``J`` computed in ball arithmetic
    (:func:`term_log`). None when either is not shown (or the ratio at ``J`` is not below 1)."""
    if downward and J <= 0:
        return TailBound(mpmath.mpf(0), "nothing below the first point")
    shown = ratio_monotone(P, Q, k, b, s0, st, J, downward)
    if shown is None:
        return None
    if shown == "zero":
        return TailBound(mpmath.mpf(0), f"the terms vanish {'below' if downward else 'beyond'} j = {J} (exactly)")
    here = term_log(dens, b, s0 + st * J)
    there = term_log(dens, b, s0 + st * (J - 1 if downward else J + 1))
    if here is None or there is None:
        return None
    # log of the ratio towards the tail: upper end = there.hi - here.lo
    log_r = there[1] - here[0]
    if not log_r < 0:
        return None
    r = mpmath.exp(log_r)
    bound = mpmath.exp(here[1] - S) * r / (1 - r)
    bound *= 1 + mpmath.mpf(2) ** (-mpmath.mp.prec + 8)  # the rounding of these few operations
    side = "below" if downward else "beyond"
    return TailBound(bound, f"ratio test {side} j = {J}: term ratio non-increasing (proved symbolically), "
                            f"ratio at j = {J} <= {mpmath.nstr(r, 5)} (ball arithmetic)")
