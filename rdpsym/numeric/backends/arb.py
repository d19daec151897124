r"""The Arb backend (python-flint): ``log P`` and ``log Q`` compiled to Arb closures
(:mod:`rdpsym.numeric.fast`), with Gauss-Legendre quadrature on Arb balls.

Scans, peak search, tail checks and the quadrature evaluate in C. Points where Arb gives no finite real
ball (zeros of P, undecidable ``Piecewise`` conditions, negative values, balls widened by cancellation)
are left to mpmath. The logs of integrands (:class:`rdpsym.numeric.quantities.Form`) are combined in
Arb (one conversion in, one out), and on finite pieces the integrand itself is an Arb function
integrated by :func:`rdpsym.numeric.fast.gauss_legendre` (degrees n and 2n compared, doubled until they
agree to the working precision, with Arb's rigorous rounding radii).
"""

from __future__ import annotations

import mpmath

from .. import fast
from ..quantities import Form
from . import register_backend

__all__ = ["ArbBackend", "ArbCompiled", "ArbPoints"]


@register_backend(auto=True)
class ArbBackend:
    """Arb where python-flint is installed and every function of the pair is taught to the compiler."""

    name = "arb"

    def compile(self, lp, lq, x, params):
        if fast.flint is None:
            return None
        compiled = fast.compile_log_pair(lp, lq, x, params)
        return None if compiled is None else ArbCompiled(compiled)


class ArbCompiled:
    """A :class:`rdpsym.numeric.fast.Compiled` pair behind the backend protocol."""

    def __init__(self, compiled: "fast.Compiled"):
        self.compiled = compiled
        self.lp, self.lq = compiled.lp, compiled.lq

    def bind(self, values, prec):
        return ArbPoints(fast.evaluator(*self.compiled.bind(values, prec), prec), prec)


class ArbPoints:
    """The bound pair at ``prec`` bits: ``t (mpf) -> (lp, lq)`` mpfs or None, plus the Arb-native
    logs of integrands and integrands."""

    def __init__(self, ev, prec: int):
        self.ev, self.prec = ev, prec

    def __call__(self, t):
        with fast.flint.ctx.workprec(self.prec):
            r = self.ev(fast.to_arb(t))
        if r is None:
            return None
        return fast.to_mpf(r[0]), fast.to_mpf(r[1])

    def balls(self, t):
        """``(log P, log Q)`` at the mpf or int ``t`` as Arb balls (the enclosures themselves), or None."""
        with fast.flint.ctx.workprec(self.prec):
            return self.ev(fast.to_arb(t))

    def log_form(self, form, a):
        """The log of the integrand ``form`` computed in Arb: mpf t -> mpf, or None at points Arb
        cannot evaluate (the caller then uses mpmath)."""
        ev, prec = self.ev, self.prec
        to_arb, to_mpf, workprec = fast.to_arb, fast.to_mpf, fast.flint.ctx.workprec
        with workprec(prec):
            A = to_arb(a) if a is not None else None
            A1 = (1 - A) if A is not None else None

        def L(t):
            with workprec(prec):
                r = ev(to_arb(t))
                if r is None:
                    return None
                lp, lq = r
                if form is Form.FINITE:
                    v = A * lp + A1 * lq
                elif form is Form.RATIO:
                    v = lp - lq
                elif form is Form.KLABS:
                    d = abs(lp - lq)
                    if not d > 0:
                        return None
                    v = lp + d.log()
                else:
                    v = lp
                return to_mpf(v)
        return L

    def integrand(self, kind, a, shift, slow, counts):
        """The integrand ``kind`` as an :class:`ArbIntegrand` (points where Arb gives no finite real
        value are evaluated by ``slow``, mpmath, instead)."""
        ev, prec = self.ev, self.prec
        with fast.flint.ctx.workprec(prec):
            A, S = fast.to_arb(a) if a is not None else None, fast.to_arb(shift)
            A1 = (1 - A) if A is not None else None
            Am1 = (A - 1) if A is not None else None

        def fallback(t):
            counts["mpmath"] += 1
            return fast.to_arb(mpmath.mpf(slow(fast.to_mpf(t))))

        if kind is Form.FINITE:
            def form(lp, lq):
                return (A * lp + A1 * lq - S).exp()
        elif kind is Form.KL:
            def form(lp, lq):
                return (lp - S).exp() * (lp - lq)
        elif kind is Form.NEAR1:
            def form(lp, lq):
                return (lp - S).exp() * (Am1 * (lp - lq)).expm1()
        else:  # weight
            def form(lp, lq):
                return (lp - S).exp()

        def g(t):
            r = ev(t)
            return fallback(t) if r is None else form(*r)

        return ArbIntegrand(g, prec, counts)


#: Gauss-Legendre on the Arb path: first degree and cap (a piece that needs more is not analytic
#: enough, e.g. an endpoint singularity or a missed kink: the driver then falls back to tanh-sinh)
GL_FIRST_DEGREE = 12
GL_MAX_DEGREE = 384


class ArbIntegrand:
    """An integrand on Arb balls with its quadrature over finite pieces."""

    def __init__(self, g, prec: int, counts):
        self.g, self.prec, self.counts = g, prec, counts

    def __call__(self, t):
        return self.g(t)

    def integrate(self, finite_pieces):
        """∫ over finite pieces [(lo, hi) mpf, ...]: (value, error, converged) as mpfs (None when the
        sum is not finite)."""
        with fast.flint.ctx.workprec(self.prec):
            pieces = [(fast.to_arb(lo), fast.to_arb(hi)) for lo, hi in finite_pieces]
            # 8 digits below the working precision (wp = dps + 10): far beyond the 0.6 dps the
            # convergence rule asks for, and still cheap (the rule converges geometrically)
            rel_tol = fast.arb(10) ** (-(mpmath.mp.dps - 8))
            v, e, ok = fast.gauss_legendre(self.g, pieces, self.prec, rel_tol, GL_FIRST_DEGREE, GL_MAX_DEGREE,
                                           counts=self.counts)
            return fast.to_mpf(v), fast.to_mpf(e), ok
