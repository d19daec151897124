r"""The supremum over a family's shifts by the likelihood-ratio order, for every order alpha at once.

:mod:`rdpsym.derive.adjacency` takes a family's supremum over ``u = |t|`` by showing each derived
expression non-decreasing in ``u``. A divergence with no closed form (a numeric curve) has no expression
to differentiate; this module shows the monotonicity from the densities instead, by a theorem:

**Claim.** Let ``P = Q_0`` and, for ``u > 0``, ``Q_u`` have the same support as ``P``, and let
``x -> d/du log Q_u(x)`` be non-decreasing on the support for every ``u > 0`` (or non-increasing for
every ``u``). Then for ``0 < u < u'`` and every order ``alpha`` in ``[0, oo]``,
``D_alpha(P||Q_u) <= D_alpha(P||Q_u')`` and ``D_alpha(Q_u||P) <= D_alpha(Q_u'||P)``.

*Proof.* ``log Q_u'(x) - log Q_u(x) = \int_u^{u'} d/ds log Q_s(x) ds`` is non-decreasing in ``x``, and so is
``log Q_u - log P`` (take ``u = 0``): a monotone likelihood ratio. For testing ``P`` against ``Q_u`` the
threshold tests ``{x > c}`` are therefore most powerful (Neyman-Pearson lemma; Lehmann & Romano 2005,
*Testing Statistical Hypotheses*, 3rd ed., Thm. 3.2.1, with Thm. 3.4.1 for monotone likelihood ratios),
with the same ``c`` at a level for every ``u``; the likelihood-ratio order of ``Q_u' `` over ``Q_u``
implies the stochastic order (ibid., Lemma 3.4.2), so the type II error ``Q_u(x <= c)`` of each such test
does not increase from ``u`` to ``u'``: the trade-off functions satisfy ``T(P, Q_u') <= T(P, Q_u)``.
By Blackwell's theorem (Dong, Roth & Su 2022, "Gaussian differential privacy", JRSS-B 84(1);
arXiv:1905.02383, Thm. 2.10) there is a post-processing mapping ``P`` to ``P`` and ``Q_u'`` to ``Q_u``,
and the Rényi divergence of every order does not increase under post-processing (van Erven &
Harremoës 2014, "Rényi divergence and Kullback-Leibler divergence", IEEE T-IT 60(7), Thm. 9), in both
directions. The non-increasing case is the same with ``x`` replaced by ``-x``.

For a location family ``Q_u(x) = f(x - u)`` the condition says ``f`` is log-concave (the generalised
Gaussian with ``p >= 1``; not the Cauchy or Student t densities, whose likelihood ratios are not
monotone); a truncation to a fixed interval renormalised by a factor depending on ``u`` only (the
bounded Laplace mechanism) keeps it.

How it is checked (:func:`likelihood_ratio_order`): on every smooth piece of the support (split at the
kinks of P and Q, :mod:`.pieces`) the sign of ``d/dx d/du log Q_u`` is decided by the sign oracle
(:mod:`.sign`), with ``x`` written inside the piece (``x = lo + y``, ``x = hi - y``,
``x = lo + (hi - lo) y/(1 + y)`` with ``y > 0``) and each parameter over its declared domain (``p = 1 + q``,
``q >= 0`` for ``p`` in ``[1, oo)``: :func:`.domains.sweeps`); at every
boundary between two pieces the jump of ``d/du log Q_u`` must have the same sign (:func:`_jump_ok`). Anything undecided
counts against the claim (the supremum is then not shown).
"""

from __future__ import annotations

import sympy as sp

from ..specify.params import Parameter
from .pieces import split_support
from .sign import decide

__all__ = ["likelihood_ratio_order", "cauchy_scale_order"]


def _position(lo, hi, x):
    """``x`` written inside ``(lo, hi)`` by a positive dummy."""
    y = sp.Dummy("y", positive=True)
    if lo == -sp.oo and hi == sp.oo:
        return None  # no sign information to add: x itself, real
    if lo == -sp.oo:
        return hi - y
    if hi == sp.oo:
        return lo + y
    return lo + (hi - lo) * y / (1 + y)


def _sign_ok(expr: sp.Expr, sign: int, params) -> bool:
    """``sign * expr >= 0`` shown by the sign oracle over the parameters' domains."""
    return decide(sign * expr, "nonnegative", params) is True


def _jump_ok(gl: sp.Expr, gr: sp.Expr, at: sp.Expr, x: sp.Symbol, params, sign: int) -> bool:
    """The jump of the score at the boundary ``at`` of two pieces has the sign ``sign``: the values there
    when both sides are finite, else ``sign (g_right(at + y) - g_left(at - y)) >= 0`` for every ``y > 0``,
    which bounds the difference of the one-sided limits (they exist: the score is monotone on each piece)."""
    jump = gr.subs(x, at) - gl.subs(x, at)
    if not jump.has(sp.nan, sp.zoo, sp.oo, -sp.oo) and _sign_ok(jump, sign, params):
        return True
    y = sp.Dummy("y", positive=True)
    return _sign_ok(gr.subs(x, at + y) - gl.subs(x, at - y), sign, params)


def _log_density(dens: sp.Expr) -> sp.Expr:
    return sp.expand_log(sp.log(dens), force=True)


def likelihood_ratio_order(P: sp.Expr, Qu: sp.Expr, u: sp.Symbol, x: sp.Symbol, support: sp.Set,
                           params: tuple[Parameter, ...]) -> str | None:
    """Why ``D_alpha(P||Q_u)`` and ``D_alpha(Q_u||P)`` are non-decreasing in ``u > 0`` for every order
    (the claim of the module docstring), or None when its conditions are not shown.

    ``Qu`` is the family's second density with ``t = ±u`` substituted; ``P`` must be ``Qu`` at ``u = 0``.
    No time limit of its own: the caller runs it under one.
    """
    if not Qu.has(u) or P.has(u) or sp.simplify(Qu.subs(u, 0) - P) != 0:
        return None
    pieces = split_support(P, Qu, x, support)
    smooth = [p for p in pieces if not p.is_point]
    if any(p.P == 0 or p.Q == 0 for p in smooth):
        return None  # the supports differ: the likelihood ratio is not monotone in the sense above
    scores = [sp.diff(_log_density(p.Q), u) for p in smooth]
    for sign in (1, -1):
        ok = True
        for piece, g in zip(smooth, scores):
            d = sp.diff(g, x)
            pos = _position(piece.lo, piece.hi, x)
            d = d if pos is None else d.subs(x, pos)
            if not _sign_ok(d, sign, params):
                ok = False
                break
        if ok:
            for (left, gl), (right, gr) in zip(zip(smooth, scores), zip(smooth[1:], scores[1:])):
                if not _jump_ok(gl, gr, left.hi, x, params, sign):
                    ok = False
                    break
        if ok:
            way = "non-decreasing" if sign > 0 else "non-increasing"
            return (f"d/d{u} log Q is {way} in {x} on every piece and across their boundaries: a monotone "
                    f"likelihood ratio, so the divergences of every order are non-decreasing in {u} "
                    "(Neyman-Pearson, Blackwell's theorem: Dong, Roth & Su 2022, Thm. 2.10; data processing: "
                    "van Erven & Harremoes 2014, Thm. 9; rdpsym.derive.shift_order)")
    return None


def cauchy_scale_order(P: sp.Expr, Qu: sp.Expr, u: sp.Symbol, x: sp.Symbol, support: sp.Set) -> str | None:
    r"""Why ``D_alpha(C_0||C_u)`` and ``D_alpha(C_u||C_0)`` are non-decreasing in ``u > 0`` for a Cauchy
    location family ``C_s(x) = g/(pi (g^2 + (x - s)^2))`` on the real line, or None when ``P`` and ``Qu``
    are not such a pair (read from the densities, not from a name).

    The Cauchy law is not log-concave (the likelihood-ratio argument does not apply), but it is 1-stable:
    C(0, g) + C(0, h) = C(0, g + h) for independent summands, and x -> c x maps C(s, g) to C(c s, c g).
    For 0 < u <= u', let g' = g u'/u >= g. Adding independent C(0, g' - g) noise to both (a Markov
    kernel) maps (C(0, g), C(u', g)) to (C(0, g'), C(u', g')), and x -> x u/u' maps that to
    (C(0, g), C(u, g)). By the data-processing inequality (van Erven and Harremoës 2014, IEEE T-IT 60(7),
    Thm. 9) both divergences at u are at most those at u', for every order; x -> -x gives u < 0.
    """
    if support != sp.S.Reals or P.has(u) or not Qu.has(u):
        return None
    for g in sorted(P.free_symbols - {x}, key=lambda s: s.name):
        if g.is_positive is not True:
            continue
        cauchy = g / (sp.pi * (g**2 + x**2))
        if sp.simplify(P - cauchy) != 0:
            continue
        for shifted in (cauchy.subs(x, x - u), cauchy.subs(x, x + u)):
            if sp.simplify(Qu - shifted) == 0:
                return (f"a Cauchy location family of scale {g} (1-stable): adding independent Cauchy noise and "
                        "rescaling maps the pair at a larger |t| onto the pair at a smaller one, so every "
                        "divergence is non-decreasing in |t| (data processing, van Erven and Harremoës 2014, "
                        "Thm. 9)")
    return None
