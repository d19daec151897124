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
from typing import Callable

import mpmath
import sympy as sp

from .backends import compile_with, selected_backends
from .backends.mpmath import log_expr, mpmath_pair
from .quantities import Form, log_integrand

__all__ = ["Densities", "compiled_pair", "make_L"]


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
    except Exception:  # any sympy trouble: mpmath alone
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


def make_L(dens: Densities, form: Form, a) -> Callable:
    """Log of the (unshifted) integrand, or the log-ratio for alpha = oo.

    ``FINITE``: L = a lp + (1-a) lq (P = 0 -> -inf; P > 0, Q = 0 -> +inf if a > 1, -inf if a < 1).
    ``WEIGHT`` (KL, near one): L = lp (the weight P), infinite ratio handled by the caller.
    ``RATIO`` (D_inf): L = lp - lq where P > 0 (-inf where P = 0).
    ``KLABS``: log |P (log P - log Q)|, for the tail checks of the KL integrand.

    On a backend's path L is computed by the backend where it has that capability (one conversion in,
    one out); points it leaves go through ``dens.logpq`` (mpmath) as below.
    """
    backend_L = dens.backend_L(form, a)

    def L(t):
        if backend_L is not None:
            v = backend_L(t)
            if v is not None:
                return v
        return log_integrand(*dens.logpq(t), form, a)

    return L
