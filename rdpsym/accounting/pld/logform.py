r"""Logarithms of densities in a form that ball arithmetic evaluates without cancellation.

:func:`log_form` returns an expression equal to log(e) wherever e > 0, by identities that hold there:
log(a b) = log a + log b for factors that sympy proves positive, log(exp(g)) = g for real g,
log(b^p) = p log b for b > 0, and for a sum of positive terms t_i with logs l_i,
log(sum t_i) = l_0 + log(1 + sum_{i>0} exp(l_i - l_0)). Anything else stays log(e), which is still exact.
:func:`loss_form` is log P - log Q with the polynomial parts expanded, so that the x^2 of two Gaussians
cancel and the loss of a location pair of Gaussians comes out linear: its derivative is then a thin ball
and its monotonicity is decided on any interval, where exp-then-log would enclose it in a wide one.
"""

from __future__ import annotations

import sympy as sp

from ...numeric.translate import Translator

__all__ = ["log_form", "loss_form"]


def log_form(e: sp.Expr, x: sp.Symbol, against: sp.Expr | None = None) -> sp.Expr:
    """An expression equal to log(e) wherever e > 0 (module docstring). For a sum, the reference term
    l_0 is the one whose log is closest to ``against`` (fewest operations in l_0 - against), so that
    log P - log Q keeps no large terms that cancel."""
    return _LogForm(x, against).translate(sp.sympify(e))


class _LogForm(Translator):
    """The target of the tree translator (:mod:`rdpsym.numeric.translate`) whose translation of e is
    :func:`log_form`'s: one method per identity of the module docstring, each applied only where its
    hypotheses are proved. A node no identity applies to is not refused: its form is log(e) itself."""

    target = "logarithm form"

    def __init__(self, x: sp.Symbol, against: sp.Expr | None = None):
        self.x, self.against = x, against

    def refuse(self, e, family: str = "translate"):
        """No identity for ``e``: log(e) itself (exact, only not split)."""
        return sp.log(e)

    def _translate_exp(self, e):
        if e.args[0].is_extended_real:
            return e.args[0]
        return sp.log(e)

    def _translate_Mul(self, e):
        if all(f.is_positive for f in e.args):
            return sp.Add(*[log_form(f, self.x) for f in e.args])
        return sp.log(e)

    def _translate_Pow(self, e):
        if e.args[0].is_positive and e.args[1].is_extended_real:
            return e.args[1] * log_form(e.args[0], self.x)
        return sp.log(e)

    def _translate_Add(self, e):
        if not (len(e.args) > 1 and all(t.is_positive for t in e.args)):
            return sp.log(e)
        x, against = self.x, self.against
        logs = [log_form(t, x) for t in e.args]
        i0 = 0
        if against is not None:
            i0 = min(range(len(logs)), key=lambda i: sp.count_ops(_tidy(logs[i] - against, x)))
        ref = logs[i0]
        rest = sp.Add(*[sp.exp(_tidy(li - ref, x)) for i, li in enumerate(logs) if i != i0])
        return ref + sp.log(1 + rest)


def _tidy(e: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """``e`` with its terms that are polynomials in x collected and expanded (so that they cancel)."""
    e = sp.sympify(e)
    terms = e.args if isinstance(e, sp.Add) else (e,)
    poly = [t for t in terms if t.is_polynomial(x)]
    rest = [t for t in terms if not t.is_polynomial(x)]
    return sp.expand(sp.Add(*poly)) + sp.Add(*rest)


def loss_form(P: sp.Expr, Q: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """log P - log Q where both are positive (module docstring)."""
    P, Q = sp.sympify(P), sp.sympify(Q)
    if isinstance(P, sp.Add) and not isinstance(Q, sp.Add):
        lq = log_form(Q, x)
        return _tidy(log_form(P, x, lq) - lq, x)
    lp = log_form(P, x)
    return _tidy(lp - log_form(Q, x, lp), x)
