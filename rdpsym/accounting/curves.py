r"""Fast float RDP curves alpha -> eps(alpha) of mechanisms at given parameter values, for accounting.

An accountant evaluates each mechanism's curve at hundreds of orders for every conversion, so the
curves must be float, vectorised and prepared once per mechanism. :func:`mechanism_curve` returns a
:class:`MechanismCurve`, cached per (mechanism, group size, method) for the whole process: 10,000
events of one mechanism derive its curve and generate its code once. Every curve evaluates a whole
batch at once — ``values(alpha, params)`` takes an array of orders and one array per parameter (one
entry per distinct event) and returns the (orders x events) matrix.

Four kinds, and a mechanism's own, named in ``MechanismCurve.provenance``:

* ``"closed form"`` — the engine's derivation (:func:`rdpsym.rdp`) turned into stable numpy code by
  :func:`rdpsym.compile.to_numpy` (log-sum-exp, series at alpha = 1 and at the parameter
  boundaries). alpha = 1 is the KL divergence, alpha = oo the max divergence, +inf outside the
  finiteness conditions.
* ``"bound"`` — group privacy (``group > 1``) of a mechanism that is not a location family: Mironov
  2017 (arXiv:1702.07476 v3), Prop. 2, via :func:`rdpsym.accounting.group_privacy` (or the same
  bound applied to the float curve for numeric curves and mechanisms' own curves, see :func:`prop2_bound`).
* ``"numeric sum"`` — no closed form, pmfs on the integers whose log-summand is a quadratic in k plus
  log-Bessel terms (the discrete Gaussian's theta sums, Skellam's Bessel sums): float log-space sums
  of the summand read off the pmfs, each tail proved below 2^-57 of the sum, rounded outward, +inf
  where no tail bound is proved (:mod:`rdpsym.accounting.sum_curve`).
* ``"numeric"`` — no closed form: the numeric maximum (:func:`rdpsym.numeric.maximum.numeric_maximum`,
  independent mpmath quadrature) at a fixed grid of orders ``NUMERIC_GRID``, both directions of every
  adjacent pair (Mironov 2017, Def. 4), the largest value plus its error estimate. Between grid orders the curve is the value at the next
  grid order *above* — an upper bound because D_alpha is non-decreasing in alpha (Mironov 2017,
  Prop. 9; van Erven and Harremoës 2014, Thm. 3) — and above the grid it is D_inf. A grid order
  whose quadrature did not converge is +inf (no claim). Grid values are cached per parameter values.
* anything else — a curve the mechanism supplies itself: ``Mechanism.curve_provider`` (asked first
  under ``method="auto"``; ``None`` from it means the kinds above). The provider builds its curve with
  :func:`float_curve`. Every subsampled mechanism (:func:`rdpsym.subsample`, the built-in
  Poisson-subsampled Gaussian among them) supplies ``"subsampled"``
  (:mod:`rdpsym.accounting.subsampled_curve`). Nothing here looks at a mechanism's name.

Fail closed everywhere: NaN becomes +inf (a NaN order never wins a minimum); a float evaluation that
raises falls back to the exact value (:meth:`DivergenceResult.evaluate`), and to +inf if that fails
too; a curve value below ``-NEGATIVE_TOLERANCE`` (impossible for a Rényi divergence, Mironov 2017,
Prop. 8 / van Erven and Harremoës 2014, Thm. 8) is an ``ArithmeticError``, smaller rounding below 0
is raised to 0.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np
import sympy as sp

from .._cache import register_clearer
from .._timeout import deadline_passed, timeout_count
from ..derive.result import DivergenceResult, Status
from ..specify.mechanism import Mechanism

__all__ = ["MechanismCurve", "mechanism_curve", "resolve_mechanism", "prop2_bound", "float_curve", "event_rows", "NUMERIC_GRID",
           "clear_cache"]

#: Orders at which numeric curves are computed (alpha = 1 is the KL divergence).
NUMERIC_GRID = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0,
                48.0, 64.0, 96.0, 128.0, 256.0, 512.0, 1024.0)
#: Rounding below 0 up to this size is raised to 0; anything more negative is an error.
NEGATIVE_TOLERANCE = 1e-9

PROP2 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 2"
PROP9 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 9"

_LOCK = threading.RLock()
_CURVES: dict = {}
_REGISTRY: dict[str, Mechanism] = {}


@register_clearer  # rdpsym cache clear (rdpsym._cache.clear_all) forgets them too
def clear_cache() -> None:
    """Forget every prepared curve (derivations stay in the on-disk cache)."""
    with _LOCK:
        _CURVES.clear()
        _REGISTRY.clear()


def resolve_mechanism(mechanism) -> Mechanism:
    """A :class:`~rdpsym.Mechanism` (or a :class:`~rdpsym.accounting.guarantees.GuaranteeCurve`) from
    itself or a registry name (built once per process); mechanisms' names come first."""
    from . import guarantees

    if isinstance(mechanism, (Mechanism, guarantees.GuaranteeCurve)):
        return mechanism
    if isinstance(mechanism, str):
        from .. import mechanisms

        if mechanism not in mechanisms.names() and mechanism in guarantees.names():
            return guarantees.get(mechanism)
        with _LOCK:
            if mechanism not in _REGISTRY:
                from .. import mechanisms

                _REGISTRY[mechanism] = mechanisms.get(mechanism)  # ValueError names the registered ones
            return _REGISTRY[mechanism]
    raise TypeError(f"mechanism: expected an rdpsym Mechanism or a registry name, got {type(mechanism).__name__}")


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


def _own_curve(mechanism: Mechanism, group: int) -> MechanismCurve | None:
    """The mechanism's own float curve (``Mechanism.curve_provider``), or None: the generic route."""
    provider = mechanism.curve_provider
    if provider is None:
        return None
    curve = provider(mechanism, group)
    if curve is not None:
        if not isinstance(curve, MechanismCurve) or curve.mechanism != mechanism or curve.group != group:
            raise TypeError(f"curve_provider of {mechanism.name!r}: expected a MechanismCurve of this "
                            f"mechanism for groups of {group} (see float_curve), got {curve!r}")
    return curve


def _numeric_curve(mechanism: Mechanism, group: int, why: str, result) -> MechanismCurve:
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


def _prepare(mechanism: Mechanism, group: int, method: str) -> MechanismCurve:
    """The one dispatcher, in this order (``method="numeric"`` forces the last):

    1. the mechanism's own float curve (:func:`_own_curve`), asked under ``method="auto"``;
    2. the exact form — the engine's closed form, or the group-privacy bound — as compiled float code;
       at a point where that code fails, :meth:`MechanismCurve._point` evaluates the exact form itself;
    3. for ``numeric_only`` results, float sums of the pmfs' log-summand when they are of the forms
       :mod:`rdpsym.accounting.sum_forms` reads (:func:`rdpsym.accounting.sum_curve.sum_curve`);
    4. the numeric path (:func:`_numeric_curve`).

    No step looks at the mechanism's name.
    """
    from ..derive.mechanism_rdp import rdp
    from ..compile import CodegenError, identifier as _identifier  # the generated argument names
    from .group import group_privacy

    if mechanism.neighbours != "all":
        raise ValueError(f"mechanism: {mechanism.name!r} specifies some of its neighbouring inputs only "
                         f"(neighbours={mechanism.neighbours!r}): its divergence is a lower bound on its RDP, "
                         "not a guarantee to account with")
    if method == "auto":
        own = _own_curve(mechanism, group)
        if own is not None:
            return own

    result = None
    if method == "auto":
        result = group_privacy(mechanism, group) if group > 1 else rdp(mechanism)
        if result.status in (Status.CLOSED_FORM, Status.BOUND) and result.expr is not None:
            try:
                fn = result.to_numpy()
            except CodegenError as exc:
                fn, why = None, f"no float code ({exc})"
            else:
                argnames = {p: _identifier(p) for p in mechanism.params}
                kind = "closed form" if result.status is Status.CLOSED_FORM else "bound"
                detail = f"{result.label}: {result.status} derived by rdpsym, stable numpy code (rdpsym.compile)"
                if kind == "bound":
                    detail += f"; {result.reason}"
                return MechanismCurve(mechanism, group, kind, detail, result, fn, argnames)
        else:
            why = f"status {result.status}: {result.reason}"
            if result.status is Status.NUMERIC_ONLY:
                # a sum with no closed form (theta, Bessel sums): float code for the sum itself when its
                # pmfs are of the forms rdpsym.accounting.sum_forms reads (module sum_curve)
                from .sum_curve import sum_curve

                own = sum_curve(mechanism, group)
                if own is not None:
                    return own
    elif method == "numeric":
        why = "numeric curve requested"
    else:
        raise ValueError(f"method must be 'auto' or 'numeric'; got {method!r}")

    return _numeric_curve(mechanism, group, why, result)


def _prepare_guarantee(guarantee, group: int, method: str) -> MechanismCurve:
    """A stated guarantee's curve (:mod:`rdpsym.accounting.guarantees`); it has no numeric curve."""
    from .guarantees import guarantee_curve

    if method != "auto":
        raise ValueError(f"method: {guarantee.name!r} is a stated guarantee with no densities; only 'auto' "
                         f"applies (got {method!r})")
    return guarantee_curve(guarantee, group)


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


def mechanism_curve(mechanism, group: int = 1, method: str = "auto") -> MechanismCurve:
    """The float curve of ``mechanism`` (a Mechanism or registry name) for groups of ``group``.

    ``method="auto"`` uses the mechanism's own curve when it has a ``curve_provider`` (subsampled
    mechanisms), else the closed form when the engine derives one, else the numeric curve; ``method="numeric"`` forces the numeric curve (to check
    the closed form against it). Prepared once per (mechanism, group, method) and cached.
    """
    m = resolve_mechanism(mechanism)
    if isinstance(group, bool) or not isinstance(group, int) or group < 1:
        raise ValueError(f"group must be a positive integer (the group size); got {group!r}")
    key = (m, group, method)
    with _LOCK:
        curve = _CURVES.get(key)
        if curve is None:
            before = timeout_count()
            curve = _prepare_guarantee(m, group, method) if not isinstance(m, Mechanism) else _prepare(m, group, method)
            # like every cache (rdpsym._cache): a curve prepared while a time limit expired (a derivation
            # that fell back to the numeric curve, say) is returned, never kept
            if timeout_count() == before and not deadline_passed():
                _CURVES[key] = curve
        return curve
