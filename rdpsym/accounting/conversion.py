r"""From an RDP curve to (epsilon, delta)-DP, optimised over continuous alpha > 1.

The conversions, each valid at every single order alpha > 1 (so any alpha gives a valid guarantee,
and the best one is the minimum over alpha):

* ``"mironov"`` (Mironov 2017, arXiv:1702.07476 v3, Prop. 3), :mod:`rdpsym.accounting.conversions.mironov`;
* ``"improved"`` (Canonne, Kamath, Steinke 2020, Prop. 12 = Balle et al. 2020, Thm. 21), never worse,
  :mod:`rdpsym.accounting.conversions.improved`;

and any other conversion registered in :mod:`rdpsym.accounting.conversions` (each formula is written
there once, over a math namespace that sympy, mpmath and numpy provide; ``METHODS`` lists them).

At alpha = infinity both reduce to pure DP: eps = eps_RDP(oo) with delta = 0 (Mironov 2017, Def. 4 and
the remark that eps-DP is (oo, eps)-RDP); that order is a candidate when the curve is a
:class:`~rdpsym.DivergenceResult` with a finite ``max_divergence``.

Optimisation (all in ``mpmath.workdps(dps + 10)``): the objective is written in ``u = log(alpha - 1)``
and scanned at 241 points with ``alpha - 1`` from ``1e-6`` to ``1e6`` (extended to ``1e12`` when the
minimum sits at the top end); the best scan points' brackets are refined by golden-section search to
the working precision (:mod:`rdpsym.accounting.orders`). When the curve is a sympy expression and the derivative of the objective has a
polynomial numerator in alpha, the stationary points come from ``sympy`` in closed form (for the
Gaussian ``c alpha`` and ``"mironov"``: ``alpha* = 1 + sqrt(log(1/delta)/c)``); the smaller of the
closed-form and numeric candidates is returned.

Fail closed: an order where the curve is +inf or NaN never wins; a curve that is inf or NaN
everywhere gives epsilon = +inf and delta = 1; a curve that raises is an error; a negative curve value
(impossible for a Rényi divergence, Mironov 2017, Prop. 8) is an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import mpmath
import sympy as sp

from ..specify.text.numbers import exact_number, mp_number
from ..derive.result import DivergenceResult
from ..symbols import alpha as ALPHA
from . import conversions
from .conversions import METHODS
from .mathns import MPMATH, SYMPY
from .orders import extend_at_top, refine_local_minima

__all__ = ["Conversion", "epsilon", "delta", "METHODS", "objective", "check_conversion"]

class ShownAsConversion:
    """How an (epsilon, delta) conversion result shows itself: its float is ``value``; repr and HTML are
    :mod:`rdpsym.report.display`'s (shared by :class:`Conversion` and the accountant's conversions)."""

    __slots__ = ()
    value: Any

    def __float__(self) -> float:
        return float(self.value)

    def __repr__(self) -> str:
        from ..report.display import conversion_repr

        return conversion_repr(self)

    def _repr_html_(self) -> str:
        from ..report.display import conversion_html

        return conversion_html(self)


@dataclass(frozen=True, repr=False)  # the repr is ShownAsConversion's
class Conversion(ShownAsConversion):
    """The result of an RDP -> (epsilon, delta) conversion.

    ``value`` is epsilon (from :func:`epsilon`) or delta (from :func:`delta`), an ``mpmath.mpf``;
    ``alpha`` the optimal order (an mpf, ``mpmath.inf`` for the pure-DP order, ``None`` when the curve is
    infinite everywhere); ``target`` the given delta or epsilon; ``alpha_closed_form`` the sympy
    expression of the optimal order when it was derived symbolically.
    """

    value: mpmath.mpf
    alpha: Any
    method: str
    note: str
    kind: str
    target: mpmath.mpf
    alpha_closed_form: sp.Expr | None = None
    objective_at: Callable | None = field(default=None, repr=False, compare=False)



# -- the objectives --------------------------------------------------------------------------------
def objective(method: str, kind: str, eps_rdp, a, target):
    """The converted epsilon (``kind="epsilon"``, target delta) or log delta (target epsilon) at order a.

    The registered conversion ``method``'s formula (:mod:`rdpsym.accounting.conversions`); works for
    mpmath numbers, sympy expressions and numpy arrays alike (the math namespace follows the arguments).
    """
    return conversions.get(method).objective(kind, eps_rdp, a, target)


# -- curves ----------------------------------------------------------------------------------------
def _is_nan(v) -> bool:
    return (isinstance(v, float) and math.isnan(v)) or (isinstance(v, mpmath.mpf) and mpmath.isnan(v)) or v is sp.nan


class _Curve:
    """A curve alpha -> eps_RDP(alpha) as mpmath numbers, with NaN mapped to +inf (never wins)."""

    def __init__(self, curve, values: dict, dps: int):
        self.dps = dps
        self.expr = None  # sympy expression in alpha, when there is one
        self.pure_dp = None  # eps at alpha = oo, when known
        self.notes: list[str] = []
        if isinstance(curve, DivergenceResult):
            if curve.expr is None:
                raise ValueError(f"curve: {curve.label} has no expression (status {curve.status}: {curve.reason}); "
                                 "pass a callable alpha -> value instead")
            subs = curve.substitutions(values)  # validates the names
            full = curve.full_expr.subs(subs)
            stray = full.free_symbols - {curve.alpha}
            if stray:
                raise ValueError(f"values: missing parameter(s) {', '.join(sorted(map(str, stray)))} of {curve.label}")
            self.result, self.values = curve, values
            self.expr = full.subs(curve.alpha, ALPHA)
            self._fast = sp.lambdify(ALPHA, self.expr, "mpmath")
            if curve.max_divergence is not None:
                inf_value = curve.evaluate(sp.oo, dps=dps + 10, **values)
                if mpmath.isfinite(inf_value):
                    self.pure_dp = inf_value
            self.exceptional = {sp.nsimplify(p.alpha) for p in curve.exceptional_points}
        elif callable(curve):
            if values:
                raise ValueError(f"values: parameters {sorted(values)} are only accepted with a DivergenceResult curve")
            self.result, self._fast, self.exceptional = None, curve, set()
        else:
            raise ValueError(f"curve must be a DivergenceResult or a callable alpha -> value; got {type(curve).__name__}")

    def __call__(self, a) -> mpmath.mpf:
        if self.result is not None:
            try:
                v = self._fast(a)
            except (ZeroDivisionError, ValueError, OverflowError):
                v = mpmath.nan
            v = mpmath.mpmathify(v) if not isinstance(v, sp.Basic) else mpmath.mpf(sp.Float(v, self.dps + 10))
            if isinstance(v, mpmath.mpc) or mpmath.isnan(v):
                # A removable point or a cancellation: the exact route decides (and raises if it can't).
                v = self.result.evaluate(sp.Float(a, self.dps + 10), dps=self.dps + 10, **self.values)
        else:
            v = self._fast(a)  # a curve that raises is an error, not a skip
            if isinstance(v, complex) or isinstance(v, mpmath.mpc):
                raise ValueError(f"curve returned a complex value {v!r} at alpha = {a}")
            if isinstance(v, (str, bytes)):  # a curve returns numbers; text is a bug, never read as one
                raise ValueError(f"curve(alpha={a}) must be a real number; got {v!r}")
            v = mpmath.nan if _is_nan(v) else mp_number(v, f"curve(alpha={a})")
        if mpmath.isnan(v):
            return mpmath.inf  # fail closed: a NaN order never wins
        if v < -mpmath.mpf(10) ** (-(self.dps - 5)):
            raise ValueError(f"curve is negative ({mpmath.nstr(v, 10)}) at alpha = {mpmath.nstr(a, 15)}; "
                             "an RDP curve is >= 0 (Mironov 2017, Prop. 8)")
        return v


# -- optimisation ----------------------------------------------------------------------------------
def _numeric_min(obj, dps):
    """Minimise obj(alpha) over alpha > 1 via u = log(alpha - 1); returns (alpha, value) or (None, inf).

    A scan of 241 points of u, extended by 40 points at a time up to alpha - 1 = 1e12 while the minimum
    sits at the top end, then the three best local minima refined by golden-section search to the
    working precision (:mod:`rdpsym.accounting.orders`).
    """

    def f(u):
        return obj(1 + mpmath.exp(u))

    lo, hi, n = -6 * mpmath.log(10), 6 * mpmath.log(10), 240
    us = [lo + (hi - lo) * k / n for k in range(n + 1)]
    vals = [f(u) for u in us]
    extend_at_top(us, vals, lambda extra: [f(u) for u in extra], 40, 12 * mpmath.log(10))
    best_u, best = refine_local_minima(f, us, vals, int(dps * 5))
    if best_u is None:
        return None, mpmath.inf
    return 1 + mpmath.exp(best_u), best


def _closed_form_orders(expr, method, kind, target_symbol):
    """Stationary orders of the objective from sympy, when its derivative's numerator is a polynomial."""
    try:
        obj = conversions.get(method).objective(kind, expr, ALPHA, target_symbol, SYMPY)
        num = sp.numer(sp.together(sp.diff(obj, ALPHA)))
        if not num.is_polynomial(ALPHA) or sp.degree(num, ALPHA) > 4:
            return []
        return [r for r in sp.solve(sp.Eq(num, 0), ALPHA) if r.is_real is not False]
    except Exception:  # noqa: BLE001 - sympy failing here only means "no closed form"; numeric decides
        return []


def _exact_target(value) -> sp.Expr:
    """The target as an exact number for a closed-form order (an mpf at the working precision)."""
    if isinstance(value, mpmath.mpf):
        return sp.Float(value, mpmath.mp.dps)
    return exact_number(value, "target")


def _convert(curve, target, kind: str, method: str, dps: int, values: dict) -> Conversion:
    rule = conversions.get(method)  # ValueError naming the registered methods
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 10:
        raise ValueError(f"dps must be an int >= 10; got {dps!r}")
    name = "delta" if kind == "epsilon" else "epsilon"
    with mpmath.workdps(dps + 10):
        if isinstance(target, (str, bytes)):  # the converters take numbers, not text (as before)
            raise ValueError(f"{name} must be a real number; got {target!r}")
        t = mp_number(target, name)
        if kind == "epsilon" and not (0 < t < 1):
            raise ValueError(f"delta must lie in (0, 1); got {target!r}")
        if kind == "delta" and not (mpmath.isfinite(t) and t >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0; got {target!r}")
        c = _Curve(curve, values, dps)

        def obj(a):
            e = c(a)
            if e == mpmath.inf:
                return mpmath.inf
            return rule.objective(kind, e, a, t, MPMATH)

        candidates = []  # (value of the objective, alpha, closed-form alpha or None, note)
        a_num, v_num = _numeric_min(obj, dps)
        if a_num is not None:
            candidates.append((v_num, a_num, None, "continuous alpha, scan + golden section"))
        if c.expr is not None:
            tsym = sp.Symbol("delta" if kind == "epsilon" else "epsilon", positive=True)
            for root in _closed_form_orders(c.expr, method, kind, tsym):
                exact = root.subs(tsym, _exact_target(target))
                number = exact.evalf(dps + 10)
                a = mpmath.mpf(number) if number.is_real and number.is_finite else None
                if a is not None and a > 1:
                    candidates.append((obj(a), a, root, f"alpha* = {sp.sstr(root)} from d/dalpha = 0 (sympy)"))
        if c.pure_dp is not None:
            # epsilon direction: eps = eps_RDP(oo); delta direction: log delta = -oo iff eps_RDP(oo) <= eps.
            pure = c.pure_dp if kind == "epsilon" else (-mpmath.inf if c.pure_dp <= t else mpmath.inf)
            candidates.append((pure, mpmath.inf, None, "alpha = oo: pure DP (eps_RDP(oo), delta = 0)"))
        finite = [cd for cd in candidates if not mpmath.isnan(cd[0]) and cd[0] < mpmath.inf]
        if not finite:
            value = mpmath.inf if kind == "epsilon" else mpmath.mpf(1)
            note = "the curve is +inf or NaN at every order: no (epsilon, delta) guarantee (fail closed)"
            with mpmath.workdps(dps):
                return Conversion(+value, None, method, note, kind, +t, None, obj)
        best = min(finite, key=lambda cd: cd[0])
        # The numeric search converges to the stationary point only to working precision; a closed-form
        # stationary point that ties with it is the exact optimum, so report that one.
        tol = mpmath.mpf(10) ** (-dps) * max(abs(best[0]), 1) if mpmath.isfinite(best[0]) else 0
        exact = [cd for cd in finite if cd[2] is not None and cd[0] <= best[0] + tol]
        if exact:
            best = min(exact, key=lambda cd: cd[0])
        if kind == "epsilon":
            value = max(best[0], mpmath.mpf(0))  # (eps, delta)-DP with eps < 0 is (0, delta)-DP
        else:
            value = min(mpmath.exp(best[0]), mpmath.mpf(1))  # delta is a probability
        note = f"{rule.source}; {best[3]}"
    with mpmath.workdps(dps):
        return Conversion(+value, best[1] if best[1] == mpmath.inf else +best[1], method, note, kind, +t, best[2], obj)


def epsilon(curve, delta, method: str = "improved", dps: int = 30, **values) -> Conversion:
    r"""The smallest epsilon such that the RDP curve implies (epsilon, delta)-DP, over alpha > 1.

    ``curve`` is a :class:`~rdpsym.DivergenceResult` (parameters given as ``**values``) or a callable
    ``alpha -> eps_RDP(alpha)`` returning floats or mpmath numbers. ``delta`` must lie in (0, 1);
    ``method`` is ``"improved"`` (default) or ``"mironov"`` (see the module docstring for both formulas
    and their sources). Returns a :class:`Conversion` with ``.value`` (epsilon, ``+inf`` if the curve is
    infinite everywhere) and ``.alpha`` (the optimal order).
    """
    return _convert(curve, delta, "epsilon", method, dps, values)


def delta(curve, epsilon, method: str = "improved", dps: int = 30, **values) -> Conversion:
    r"""The smallest delta such that the RDP curve implies (epsilon, delta)-DP, over alpha > 1.

    The inverse direction of :func:`epsilon`: ``mironov`` minimises
    ``exp((alpha-1)(eps_RDP(alpha) - epsilon))`` and ``improved`` minimises
    ``exp((alpha-1)(eps_RDP(alpha) - epsilon)) / alpha * (1 - 1/alpha)^(alpha-1)``; the result is capped
    at 1 (and is 1 when the curve is infinite everywhere). ``epsilon`` must be finite and >= 0.
    """
    return _convert(curve, epsilon, "delta", method, dps, values)


def check_conversion(mechanism, *, curve: DivergenceResult | None = None, epsilons=(), deltas=(),
                     method: str = "improved", converter: Callable | None = None, dps: int = 30, **values):
    r"""Check an RDP -> (epsilon, delta) conversion against the exact privacy profile.

    A conversion is valid iff the exact profile never exceeds what it claims:
    ``profile(epsilon) <= delta(curve, epsilon)`` for each of ``epsilons`` and
    ``profile(epsilon(curve, delta)) <= delta`` for each of ``deltas``, where the profile is
    :func:`rdpsym.accounting.privacy_profile` of ``mechanism`` at ``values``. ``curve`` defaults to
    ``rdpsym.rdp(mechanism)``. ``converter(curve, target, kind, **values)`` replaces the built-in
    conversion (``kind`` is ``"delta"`` for a target epsilon and ``"epsilon"`` for a target delta) —
    this is how a wrong conversion is shown to fail. Returns a
    :class:`~rdpsym.accounting.CheckReport` whose points are ``(target, claimed delta, exact delta,
    slack)`` and whose ``worst_margin`` is the smallest slack ``claimed - exact`` (negative: violated
    by more than the profile's error estimate plus ``10^-(dps-5)``).
    """
    from ..derive.mechanism_rdp import rdp
    from .compose import CheckReport
    from .profile import privacy_profile

    if curve is None:
        curve = rdp(mechanism)

    def convert(target, kind):
        if converter is not None:
            out = converter(curve, target, kind, **values)
            return mpmath.mpf(getattr(out, "value", out))
        fn = delta if kind == "delta" else epsilon
        return fn(curve, target, method=method, dps=dps, **values).value

    tol = mpmath.mpf(10) ** (-(dps - 5))
    points, worst, ok, notes = [], mpmath.inf, True, []
    with mpmath.workdps(dps + 10):
        jobs = [(e, "delta") for e in epsilons] + [(d, "epsilon") for d in deltas]
        if not jobs:
            raise ValueError("epsilons/deltas: give at least one target to check")
        for target, kind in jobs:
            got = convert(target, kind)
            if kind == "delta":
                eps_at, claimed = mpmath.mpf(target), got
            else:
                eps_at, claimed = got, mpmath.mpf(target)
            if eps_at == mpmath.inf:
                slack = mpmath.inf  # epsilon = oo claims nothing, so it cannot be violated
                exact = mpmath.mpf(0)
            else:
                prof = privacy_profile(mechanism, eps_at, dps=dps, **values)
                exact = prof.value
                slack = claimed - exact
                if slack < -(tol + prof.error):
                    ok = False
                    notes.append(f"{kind} conversion at {mpmath.nstr(mpmath.mpf(target), 8)}: claims delta "
                                 f"{mpmath.nstr(claimed, 12)} at epsilon {mpmath.nstr(eps_at, 12)}, exact profile "
                                 f"{mpmath.nstr(exact, 12)}")
            worst = min(worst, slack)
            points.append((target, claimed, exact, slack))
    name = "custom conversion" if converter is not None else f"{method} conversion ({METHODS[method]})"
    detail = f"{name} vs the exact privacy profile, {dps} digits" + ("; violations: " + "; ".join(notes) if notes else "")
    return CheckReport("conversion to (epsilon, delta)", ok, tuple(points), worst, tol, "numeric", detail)
