r"""Evaluation of ``log P`` and ``log Q`` at a point: a compiled backend first, mpmath for the rest.

:func:`compiled_pair` compiles the log-forms of the *symbolic* pair (parameters as arguments) once with
the backend the setting selects (:mod:`rdpsym.numeric.backends`): every point of a sweep over parameters
and orders reuses one compilation (lambdifying per point cost more than the integration).
:class:`Densities` is one call's view: the compiled pair bound to the parameter values (per precision),
the cached :class:`~rdpsym.numeric.backends.mpmath.MpmathPair` of the substituted pair as the fallback,
and the call's own evaluation counters.
"""

from __future__ import annotations

import functools
import math

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .backends import compile_with, selected_backends
from .backends.mpmath import log_expr, mpmath_pair
from .fast import to_mpf
from .quantities import Form, log_integrand
from .scales import MAX_DIGITS, Unsettled, settled

__all__ = ["GUARD_DIGITS", "Densities", "LogIntegrand", "compiled_pair", "make_L"]

#: digits a log-ratio may lose to cancellation at the working precision before it is evaluated again with
#: more (:meth:`LogIntegrand._ratio`)
GUARD_DIGITS = 10


def compiled_pair(P: sp.Expr, Q: sp.Expr, x: sp.Symbol):
    """``(backend, compiled)`` for log P and log Q with the selected backends, or None (mpmath alone).

    The log-forms are those of :func:`~rdpsym.numeric.backends.mpmath.log_expr`, built before
    substitution."""
    backends = selected_backends()
    if not backends:
        return None
    return _compiled_pair_cached(P, Q, x, backends)


@functools.lru_cache(maxsize=64)
def _compiled_pair_cached(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, backends: tuple):
    P = P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P
    Q = Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q
    xr = sp.Dummy("x", real=True)
    try:
        lp = log_expr(P.subs(x, xr)).subs(xr, x)
        lq = log_expr(Q.subs(x, xr)).subs(xr, x)
    except SYMBOLIC_ERRORS:  # any sympy trouble: mpmath alone
        return None
    params = tuple(sorted((lp.free_symbols | lq.free_symbols) - {x}, key=lambda s: s.name))
    found = compile_with(backends, lp, lq, x, params)
    if found is None:
        return None
    backend, compiled = found
    return backend, compiled, lp, lq


class Densities:
    """Evaluators of P and Q and of their logarithms for one call (see the module docstring).

    ``counts`` counts evaluations, a load-independent work measure (benchmarks, tests): ``mpmath``
    (log-density pairs or integrand values evaluated with mpmath), the backend's name (pairs evaluated
    by the backend outside the quadrature: scans, peak, tails) and ``quad_nodes`` (integrand values of
    a backend's own quadrature)."""

    def __init__(self, P: sp.Expr, Q: sp.Expr, x: sp.Symbol, digits: int, compiled=None, values=None):
        self.fallback = mpmath_pair(P, Q, x, digits)
        self.x = x
        self.backend, self.compiled = (compiled[0], compiled[1]) if compiled is not None else (None, None)
        self.name = self.backend.name if self.backend is not None else None
        self.values = values
        #: the problem's scale (:func:`~.scales.magnitude`) and the digits asked for: set by the driver,
        #: read by the tail tests and the precision checks (:func:`~.scales.digits_needed`)
        self.magnitude = 0
        self.dps = digits - 45
        self._bound = {}
        self.counts = {"mpmath": 0, "quad_nodes": 0}
        if self.name is not None:
            self.counts[self.name] = 0

    def points(self, prec):
        """The backend's point evaluator at ``prec`` bits (cached), or None."""
        if self.compiled is None:
            return None
        if prec not in self._bound:
            self._bound[prec] = self.compiled.bind(self.values, prec)
        return self._bound[prec]

    def backend_L(self, form, a):
        """The log of the integrand ``form`` computed natively by the backend (mpf t -> mpf, or None
        at points it leaves), or None when the backend has no such capability."""
        if self.compiled is None:
            return None
        counts, name, forms = self.counts, self.name, {}

        def L(t):
            prec = mpmath.mp.prec + 16
            f = forms.get(prec, False)
            if f is False:
                ev = self.points(prec)
                make = getattr(ev, "log_form", None)
                f = forms[prec] = make(form, a) if make is not None else None
            if f is None:
                return None
            v = f(t)
            if v is not None:
                counts[name] += 1
            return v

        probe = self.points(mpmath.mp.prec + 16)
        return L if getattr(probe, "log_form", None) is not None else None

    @property
    def P(self):
        """P with the parameters substituted (the pair this call evaluates)."""
        return self.fallback.P

    @property
    def Q(self):
        return self.fallback.Q

    def log_balls(self, t):
        """``(log P, log Q)`` at ``t`` as enclosures (Arb balls) where the backend gives them (its optional
        ``balls`` capability), else None."""
        ev = self.points(mpmath.mp.prec + 16)
        get = getattr(ev, "balls", None)
        return get(t) if get is not None else None

    def backend_integrand(self, kind, a, shift, slow):
        """The integrand ``kind`` as the backend's own integrand object (with ``integrate``), or None."""
        if self.compiled is None:
            return None
        ev = self.points(mpmath.mp.prec + 16)
        make = getattr(ev, "integrand", None)
        return make(kind, a, shift, slow, self.counts) if make is not None else None

    def integrand(self, kind, a, shift, slow):
        """mpmath's one-expression integrand with ``slow`` as its pointwise fallback."""
        return self.fallback.integrand(kind, a, shift, slow, self.counts)

    def pq(self, t):
        return self.fallback.pq(t)

    def logpq(self, t):
        ev = self.points(mpmath.mp.prec + 16)
        if ev is not None:
            r = ev(t)
            if r is not None:
                self.counts[self.name] += 1
                return r
        self.counts["mpmath"] += 1
        return self.fallback.logpq(t)


class LogIntegrand:
    """``L(t)``: the log of the integrand ``form`` at order ``a`` (:func:`make_L`), and
    :meth:`settled`, its value far out at the precision it needs."""

    def __init__(self, dens: Densities, form: Form, a):
        self.dens, self.form, self.a = dens, form, a
        self.backend_L = dens.backend_L(form, a)

    def __call__(self, t):
        if self.form is Form.RATIO:
            return self._ratio(t)
        if self.backend_L is not None:
            v = self.backend_L(t)
            if v is not None:
                return v
        return log_integrand(*self.dens.logpq(t), self.form, self.a)

    def _ratio(self, t):
        """``log P/Q`` at ``t`` to an absolute accuracy of ``10^(GUARD_DIGITS - dps)`` times ``max(1, |log
        P/Q|)`` at the working precision's ``dps``, whatever the cancellation in ``log P - log Q``: where
        the two terms are larger than the difference by more than :data:`GUARD_DIGITS` digits (the Laplace
        pair's ``|x| - |x - t|`` at ``x = 1e2000``: terms ``1e2000``, difference ``t``), the point is
        evaluated again with as many more digits as cancel, until that holds. D_inf is the supremum of
        this function (van Erven and Harremoës 2014, Thm. 6): a rounding artefact of a far point (``1e2000``
        at 50 digits rounds to multiples of ``1e1950``) would otherwise be read as its supremum. Raises
        :class:`~.scales.Unsettled` past :data:`~.scales.MAX_DIGITS`."""
        base = digits = mpmath.mp.dps
        for _ in range(16):
            with mpmath.workdps(digits):
                balls = self.dens.log_balls(t)
                if balls is not None and balls[0].is_finite() and balls[1].is_finite():
                    # the backend's values at this precision (their radii may hold the parameters'
                    # conversion, which more digits do not shrink: the cancellation is measured as below)
                    lp, lq = to_mpf(balls[0]), to_mpf(balls[1])
                else:
                    lp, lq = self.dens.logpq(t)
                v = log_integrand(lp, lq, Form.RATIO, None)
                size = abs(lp) + abs(lq)
                if not (mpmath.isfinite(v) and mpmath.isfinite(size)):
                    return +v
                # the digits lost to the cancellation, relative to max(1, |v|)
                # (from the binary exponents: a log10 at thousands of digits costs more than the point)
                lost = int(math.ceil((mpmath.mag(max(size, 1)) - mpmath.mag(max(abs(v), 1)) + 1) * math.log10(2)))
                if digits >= base + lost - GUARD_DIGITS:
                    return +v
            need = base + lost + GUARD_DIGITS
            if need > MAX_DIGITS:
                raise Unsettled(f"log P/Q at x = {_short(t)} needs {need} digits (more than {MAX_DIGITS})")
            digits = max(need, digits + GUARD_DIGITS)
        raise Unsettled(f"log P/Q at x = {_short(t)} does not settle")

    def _size(self, lp, lq):
        """What the combination of ``lp`` and ``lq`` adds up: its cancellation is ``size / |L|``."""
        if self.form is Form.FINITE and self.a is not None:
            return abs(self.a) * abs(lp) + abs(1 - self.a) * abs(lq)
        if self.form in (Form.RATIO, Form.KLABS):
            return abs(lp) + abs(lq)
        return abs(lp)

    def settled(self, point_of_prec, extra: int):
        """``L`` at ``point_of_prec()`` (built at the current precision) with ``extra`` more digits and as
        many more as the cancellation in ``a log P + (1 - a) log Q`` takes (the Gaussian pair's log-ratio at
        x = -1e138 is 1e178 out of terms 1e315: 137 digits cancel, and at fewer digits it is exactly 0),
        confirmed by one evaluation 20 digits further (:func:`~.scales.settled`). Raises
        :class:`~.scales.Unsettled` past :data:`~.scales.MAX_DIGITS`."""
        digits = mpmath.mp.dps + max(int(extra), 0)
        for _ in range(16):
            with mpmath.workdps(digits):
                lp, lq = self.dens.logpq(point_of_prec())
                v = log_integrand(lp, lq, self.form, self.a)
                size = self._size(lp, lq)
                if not (mpmath.isfinite(v) and mpmath.isfinite(size)) or size == 0:
                    break
                # from the binary exponents (a log10 at thousands of digits costs more than the point)
                lost = (mpmath.mag(size) - mpmath.mag(v) + 1) * math.log10(2) if v != 0 else digits
                if digits >= lost + 20:
                    break
                digits = int(mpmath.ceil(max(lost + 30, digits * 2 if v == 0 else 0)))
                if digits > MAX_DIGITS:
                    raise Unsettled(f"a value far out does not settle within {MAX_DIGITS} digits")
        with mpmath.workdps(digits):
            return settled(self, point_of_prec, 0)


def _short(t) -> str:
    """``t`` in 5 digits (rounded first: a far point's mantissa may have more digits than Python prints)."""
    with mpmath.workdps(5):
        return mpmath.nstr(+t, 5)


def make_L(dens: Densities, form: Form, a) -> LogIntegrand:
    """Log of the (unshifted) integrand, or the log-ratio for alpha = oo (a :class:`LogIntegrand`).

    ``FINITE``: L = a lp + (1-a) lq (P = 0 -> -inf; P > 0, Q = 0 -> +inf if a > 1, -inf if a < 1).
    ``WEIGHT`` (KL, near one): L = lp (the weight P), infinite ratio handled by the caller.
    ``RATIO`` (D_inf): L = lp - lq where P > 0 (-inf where P = 0).
    ``KLABS``: log |P (log P - log Q)|, for the tail checks of the KL integrand.

    On a backend's path L is computed by the backend where it has that capability (one conversion in,
    one out); points it leaves go through ``dens.logpq`` (mpmath) as below.
    """
    return LogIntegrand(dens, form, a)
