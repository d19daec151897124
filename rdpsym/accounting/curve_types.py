r"""The accountant's float curve objects, and how each kind of curve is built from float code.

A :class:`MechanismCurve` is the float RDP curve alpha -> eps(alpha) of one mechanism for groups of
``group``, for any parameter values: ``values(alpha, params)`` evaluates a batch of orders for a batch of
events (one array entry per distinct event) and fails closed (NaN -> +inf, a negative value is an error).
The dispatcher :func:`rdpsym.accounting.curves.mechanism_curve` picks which kind a mechanism gets; the
kinds are built here and next to their float code:

* :func:`float_curve` — a curve from a float function ``base(alpha, params)`` (curve providers, stated
  guarantees, numeric sums, subsampled mechanisms), Mironov 2017 (arXiv:1702.07476 v3), Prop. 2 around
  it for groups (:func:`prop2_bound`);
* :func:`numeric_curve` — :func:`rdpsym.numeric_divergence` at the orders ``NUMERIC_GRID``, both
  directions of every adjacent pair (Mironov 2017, Def. 4), the next grid order's value in between (an
  upper bound: D_alpha is non-decreasing in alpha, Prop. 9);
* the engine's closed form as generated numpy code (built by the dispatcher from the derivation).

:func:`event_rows` splits a batch of orders and parameter values by event, for float code that works one
event at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np
import sympy as sp

from ..derive.result import DivergenceResult
from ..specify.mechanism import Mechanism

__all__ = ["MechanismCurve", "float_curve", "numeric_curve", "prop2_bound", "event_rows", "NUMERIC_GRID",
           "NEGATIVE_TOLERANCE"]

#: Orders at which numeric curves are computed (alpha = 1 is the KL divergence).
NUMERIC_GRID = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0,
                48.0, 64.0, 96.0, 128.0, 256.0, 512.0, 1024.0)
#: Rounding below 0 up to this size is raised to 0; anything more negative is an error.
NEGATIVE_TOLERANCE = 1e-9

PROP2 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 2"
PROP9 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 9"


def _fail_closed(out: np.ndarray, where: str) -> np.ndarray:
    """NaN -> +inf; tiny negatives -> 0; real negatives -> ArithmeticError."""
    out = np.array(out, dtype=float, copy=True)
    out[np.isnan(out)] = np.inf
    neg = out < 0
    if neg.any():
        worst = out[neg].min()
        if worst < -NEGATIVE_TOLERANCE:
            raise ArithmeticError(f"{where}: the curve is negative ({worst!r}); an RDP curve is >= 0 "
                                  "(Mironov 2017, Prop. 8): refusing to account with it")
        out[neg] = 0.0
    return out


def prop2_bound(fn: Callable[[np.ndarray], np.ndarray], k: int) -> Callable[[np.ndarray], np.ndarray]:
    r"""Mironov 2017, Prop. 2 applied to a float curve ``fn``: the RDP of groups of size ``k``.

    With c = ceil(log2 k) and order beta: ``3^c fn(2^c beta)`` for beta >= 2, ``3^c fn(2^(c+1))`` at
    beta = 1 (monotonicity, Prop. 9), +inf elsewhere (the proposition says nothing there); beta = oo
    is left to the caller (the pure-DP group bound ``k eps(oo)``). Same semantics as
    :func:`rdpsym.accounting.group_privacy`'s ``bound`` results.
    """
    c = max(0, math.ceil(math.log2(k)))
    while 2**c < k:
        c += 1
    scale, factor = float(2**c), float(3**c)

    def group(a):
        a = np.asarray(a, dtype=float)
        out = np.full(a.shape, np.inf)
        ok = a >= 2
        if ok.any():
            out[ok] = factor * fn(scale * a[ok])
        one = a == 1
        if one.any():
            out[one] = factor * fn(np.full(int(one.sum()), 2 * scale))
        return out

    return group


@dataclass
class MechanismCurve:
    """The float RDP curve of one mechanism (for groups of ``group``), for any parameter values.

    ``provenance`` is ``"closed form"``, ``"bound"``, ``"numeric sum"``, ``"numeric"`` or what a mechanism's own curve
    provider names (``"subsampled"``; module docstring); ``detail`` says how it was obtained;
    ``result`` is the derivation behind it, if any.
    """

    mechanism: Mechanism
    group: int
    provenance: str
    detail: str
    result: DivergenceResult | None = None
    _fn: Callable | None = field(default=None, repr=False)
    _argnames: tuple = field(default=(), repr=False)
    _numeric: dict = field(default_factory=dict, repr=False)
    _notes: dict = field(default_factory=dict, repr=False)
    #: float code that costs microseconds per order (closed forms, stated guarantees): the accountant's
    #: scan needs no pruning for it
    cheap: bool = False

    # -- evaluation --------------------------------------------------------------------------------
    def values(self, alpha, params: dict[str, np.ndarray]) -> np.ndarray:
        """eps at orders ``alpha`` (1-D, > 0, inf allowed) for events ``params`` (name -> 1-D array).

        Returns an array of shape ``(len(alpha), n_events)``; +inf where no finite claim is made.
        """
        a = np.atleast_1d(np.asarray(alpha, dtype=float))
        n = len(next(iter(params.values()))) if params else 1
        if self._fn is None:  # numeric: one column per event, grid values cached
            cols = [self._numeric_base(a, {k: float(v[j]) for k, v in params.items()}) for j in range(n)]
            out = np.stack(cols, axis=1) if cols else np.zeros((len(a), 0))
        else:
            out = self._float(a, params, n)
        return _fail_closed(out, f"curve of {self.mechanism.name}")

    def __call__(self, alpha, **values) -> np.ndarray:
        """eps at orders ``alpha`` for one set of parameter values (same shape as ``alpha``)."""
        a = np.asarray(alpha, dtype=float)
        out = self.values(a.ravel(), {k: np.array([float(v)]) for k, v in values.items()})[:, 0]
        return out.reshape(a.shape)[()] if a.ndim == 0 else out.reshape(a.shape)

    def _call_fn(self, a, params):
        kwargs = {self._argnames.get(k, k): v for k, v in params.items()} if isinstance(self._argnames, dict) else params
        return self._fn(a, **kwargs)

    def _float(self, a: np.ndarray, params: dict, n: int) -> np.ndarray:
        cols = {k: np.asarray(v, dtype=float)[None, :] for k, v in params.items()}
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(self._call_fn(a[:, None], cols), dtype=float)
            return np.broadcast_to(out, (len(a), n)).copy()
        except (ArithmeticError, FloatingPointError):
            pass  # the generated code refuses to return NaN: go point by point, exact where needed
        out = np.empty((len(a), n))
        for j in range(n):
            one = {k: float(v[j]) for k, v in params.items()}
            for i, ai in enumerate(a):
                out[i, j] = self._point(ai, one)
        return out

    def _point(self, a: float, one: dict) -> float:
        try:
            with np.errstate(all="ignore"):
                v = float(np.asarray(self._call_fn(np.array([a]), {k: np.array([x]) for k, x in one.items()})).ravel()[0])
            if not math.isnan(v):
                return v
        except (ArithmeticError, FloatingPointError, ValueError):
            pass
        if self.result is not None and self.group == 1:
            try:
                return float(self.result.evaluate(sp.oo if math.isinf(a) else sp.Float(a, 30), dps=30,
                                                  **{k: Fraction(x) for k, x in one.items()}))
            except (ArithmeticError, ValueError):
                pass
        return math.inf  # fail closed

    # -- numeric curves ----------------------------------------------------------------------------
    def _numeric_value(self, key, order: float, values: dict) -> float:
        """The numeric maximum over pairs and directions (:func:`rdpsym.numeric.maximum.numeric_maximum`)
        as a float upper bound, value + error; +inf when it did not converge. A family of pairs contributes
        the maximum over its sampled shifts (:class:`~rdpsym.numeric.families.SampledFamily`: its ends and
        three interior shifts), a numeric maximisation recorded in the notes."""
        from ..numeric.families import declared_sources
        from ..numeric.maximum import numeric_maximum

        cache = self._numeric.setdefault(key, {})
        if order in cache:
            return cache[order]
        m = self.mechanism
        a = sp.oo if math.isinf(order) else sp.Rational(Fraction(order))
        exact_values = {k: sp.Rational(Fraction(v)) for k, v in values.items()}
        try:
            found = numeric_maximum(declared_sources(m.pairs, m.variable, m.support), a, exact_values, 20)
        except (ArithmeticError, ValueError) as exc:
            notes, worst = [f"alpha={order}: failed ({exc})"], math.inf
        else:
            notes = [f"alpha={order} {note}" for note in found.notes]
            notes += [f"alpha={order} {label}: not converged ({getattr(ev, 'detail', '')})" for label, ev in found.failures
                      if not found.converged]
            worst = found.upper_bound()
        if notes:
            self._notes.setdefault(key, []).extend(notes)
        cache[order] = worst
        return worst

    def _numeric_base(self, a: np.ndarray, values: dict) -> np.ndarray:
        key = tuple(sorted(values.items()))
        grid = np.array(NUMERIC_GRID)
        out = np.empty(a.shape)
        idx = np.searchsorted(grid, a, side="left")  # grid[idx] >= a
        for i in np.unique(idx):
            sel = idx == i
            if i < len(grid):
                out[sel] = self._numeric_value(key, float(grid[i]), values)
            else:
                out[sel] = self._numeric_value(key, math.inf, values)  # D_alpha <= D_inf (Prop. 9)
        return out

    def numeric_notes(self, values: dict) -> list[str]:
        """Why some grid orders of a numeric curve are +inf (non-convergence, failures)."""
        return list(self._notes.get(tuple(sorted(values.items())), []))

    # -- the pure-DP order -------------------------------------------------------------------------
    def max_divergence(self, params: dict[str, np.ndarray]) -> np.ndarray:
        """eps(oo) per event (+inf where infinite or not derived)."""
        return self.values(np.array([np.inf]), params)[0]


def numeric_curve(mechanism: Mechanism, group: int, why: str, result) -> MechanismCurve:
    """The numeric path: grid values of the numeric maximum (module docstring), Prop. 2 for groups."""
    detail = (f"no closed form ({why}); numeric_divergence at {len(NUMERIC_GRID)} orders, both directions of "
              f"each pair, their maximum's value + error estimate; between orders the next order's value ({PROP9}: "
              "non-decreasing in alpha), D_inf above the grid; +inf where a quadrature did not converge")
    if group == 1:
        return MechanismCurve(mechanism, 1, "numeric", detail, result)
    base_curve = MechanismCurve(mechanism, 1, "numeric", detail, result)
    return _group_wrapped(mechanism, group, "numeric", detail,
                          lambda a, p: base_curve._numeric_base(np.asarray(a, dtype=float), p),
                          inner=base_curve)


def float_curve(mechanism: Mechanism, group: int, provenance: str, detail: str,
                base: Callable[[np.ndarray, dict], np.ndarray]) -> MechanismCurve:
    """A :class:`MechanismCurve` from a float function ``base(alpha, params)`` (for curve providers).

    ``base`` takes an array of orders and a dict parameter name -> array (numpy broadcasting between
    them) and returns eps(alpha) for groups of 1 (+inf where it makes no claim). For ``group > 1`` the
    curve is the Prop. 2 bound around it (:func:`prop2_bound`, provenance ``"bound"``), ``k eps(oo)``
    at alpha = oo. Either way the result fails closed like every curve (:meth:`MechanismCurve.values`).
    """
    if group == 1:
        return MechanismCurve(mechanism, 1, provenance, detail, None, lambda a, **p: base(a, p))
    return _group_wrapped(mechanism, group, provenance, detail, base)


def event_rows(a, params: dict, names: list[str]):
    """Orders and parameters broadcast together, split by event: ``(shape, flat orders, [(selector, one
    event's values), ...])`` over the distinct parameter rows (a float curve is evaluated one event at a
    time: its sums and bounds depend on the event's values, not on each order's)."""
    arrays = np.broadcast_arrays(np.asarray(a, dtype=float), *[np.asarray(params[n], dtype=float) for n in names])
    flat_a = arrays[0].ravel()
    if names:
        table = np.stack([x.ravel() for x in arrays[1:]], axis=1)
        uniq, inverse = np.unique(table, axis=0, return_inverse=True)
        inverse = inverse.ravel()
    else:
        uniq, inverse = np.zeros((1, 0)), np.zeros(flat_a.shape, dtype=int)
    return arrays[0].shape, flat_a, [(inverse == i, dict(zip(names, map(float, row)))) for i, row in enumerate(uniq)]


def _group_wrapped(mechanism, group, kind, detail, base, inner=None) -> MechanismCurve:
    """A Prop. 2 group bound around a float base curve ``base(alpha, params)``; D_inf scales by k."""
    detail = (f"{detail}; groups of {group}: {PROP2} (3^c eps(2^c alpha) for alpha >= 2, "
              f"3^c eps(2^(c+1)) at alpha = 1, +inf (no claim) in between; k eps(oo) at alpha = oo)")

    def fn(a, **p):
        shape, flat_a, rows = event_rows(a, p, list(p))
        res = np.empty(flat_a.shape)
        for sel, one in rows:  # one parameter set (one event) at a time
            bound = prop2_bound(lambda b: base(b, one), group)
            fin = sel & ~np.isinf(flat_a)
            if fin.any():
                res[fin] = bound(flat_a[fin])
            top = sel & np.isinf(flat_a)
            if top.any():
                res[top] = group * base(np.array([np.inf]), one)[0]
        return res.reshape(shape)

    curve = MechanismCurve(mechanism, group, "bound", detail, None, fn)
    if inner is not None:
        curve.numeric_notes = inner.numeric_notes  # type: ignore[method-assign]
    return curve
