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

The one conversion procedure, :func:`optimise`, is written once over a math namespace
(:mod:`rdpsym.accounting.mathns`, the one the formulas are written over): the exact converter
(:func:`epsilon`, :func:`delta`) runs it with mpmath in ``mpmath.workdps(dps + 10)``, the accountant
(:class:`rdpsym.Accountant`) with numpy on its composed curve. It reads the target (:func:`read_target`),
minimises the registered formula over alpha (:func:`objective_values`, fail closed) by the one search over
orders (:func:`rdpsym.accounting.orders.minimise`: a scan of ``u = log(alpha - 1)`` at 241 points with
``alpha - 1`` from ``1e-6`` to ``1e6``, extended to ``1e12`` when the minimum sits at the top end, the best
scan points' brackets refined by golden-section search), checks the winning value against mpmath at 30
digits or more (the larger is kept), and compares it with the pure-DP order and with closed-form orders.
When the curve is a sympy expression and the derivative of the objective has a polynomial numerator in
alpha, the exact converter finds the stationary points with ``sympy`` in closed form (for the Gaussian
``c alpha`` and ``"mironov"``: ``alpha* = 1 + sqrt(log(1/delta)/c)``); a closed-form order that ties with
the numeric one is reported, the smaller value wins otherwise.

Fail closed: an order where the curve is +inf or NaN, or the formula is NaN, never wins; a curve that is
inf or NaN everywhere gives epsilon = +inf and delta = 1; a curve that raises is an error; a negative
curve value (impossible for a Rényi divergence, Mironov 2017, Prop. 8) is an error.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..derive.result import DivergenceResult
from ..specify.text.numbers import exact_number, mp_number
from ..symbols import alpha as ALPHA
from . import conversions
from .conversions import METHODS, ConversionRule
from .mathns import MPMATH, SYMPY, MathNamespace
from .orders import EXTEND_LOG10, SCAN_LOG10, minimise

__all__ = ["Conversion", "ConversionStatus", "Optimum", "epsilon", "delta", "METHODS", "objective",
           "objective_values", "read_target", "optimise", "check_conversion"]


class ConversionStatus(enum.StrEnum):
    """Where an (epsilon, delta) came from (its value is the public name)."""

    #: an interior minimum over continuous alpha
    OPTIMAL = "optimal"
    #: alpha = oo won: pure DP, epsilon = eps(oo), delta = 0
    PURE_DP = "pure_dp"
    #: the minimum lies at the edge of the searched orders (a valid guarantee, maybe not the infimum)
    EDGE = "edge"
    #: no finite order: epsilon = +inf, delta = 1
    INFINITE = "infinite"


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


def _no_claim(value) -> bool:
    """+inf or NaN: a curve value (or a formula's value) that makes no claim."""
    return mpmath.isnan(value) or (mpmath.isinf(value) and value > 0)


def objective_values(method: str | ConversionRule, kind: str, eps_rdp: Sequence, alphas: Sequence, target,
                     m: MathNamespace) -> list:
    """The conversion's objective (epsilon for a target delta, ``kind="epsilon"``, or log delta for a target
    epsilon) at a batch of orders ``alphas`` with curve values ``eps_rdp``, in the namespace ``m``.

    Fail closed: +inf where the curve is +inf or NaN (the formula is not evaluated there) and where the
    formula gives NaN; a list, one number of ``m`` per order."""
    rule = conversions.get(method) if isinstance(method, str) else method
    claims = [not _no_claim(e) for e in eps_rdp]
    finite = [e if ok else 0 for e, ok in zip(eps_rdp, claims)]
    values = m.map(lambda e, a: rule.objective(kind, e, a, target, m), finite, alphas)
    return [v if ok and not mpmath.isnan(v) else m.inf for v, ok in zip(values, claims)]


def read_target(target, kind: str, m: MathNamespace = MPMATH):
    """The target of a conversion as a number of ``m``: delta in (0, 1) for ``kind="epsilon"``, a finite
    epsilon >= 0 for ``kind="delta"``. Numbers only (text is refused: the CLI reads its own); a
    ``ValueError`` naming the target and its rule otherwise."""
    name = "delta" if kind == "epsilon" else "epsilon"
    if isinstance(target, (str, bytes)):  # the converters take numbers, not text
        raise ValueError(f"{name} must be a real number; got {target!r}")
    t = m.scalar(mp_number(target, name))
    if kind == "epsilon" and not (0 < t < 1):
        raise ValueError(f"delta must lie in (0, 1); got {target!r}")
    if kind == "delta" and not (mpmath.isfinite(t) and t >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0; got {target!r}")
    return t


@dataclass(frozen=True)
class Optimum:
    """What :func:`optimise` found, in the numbers of its namespace.

    ``value``: epsilon (``kind="epsilon"``) or delta; ``alpha``: the optimal order (+inf for the pure-DP
    order, None when no order is finite); ``status``: a :class:`ConversionStatus`; ``rdp_at_alpha``: the
    curve at ``alpha`` (eps(oo) for pure DP, +inf when no order is finite); ``evaluations``: orders at
    which the whole curve was evaluated; ``closed_form``: the sympy expression of ``alpha`` when a
    closed-form stationary point won.
    """

    value: Any
    alpha: Any
    status: ConversionStatus
    note: str
    rdp_at_alpha: Any
    evaluations: int
    closed_form: sp.Expr | None = None


def optimise(rule: ConversionRule, kind: str, t, m: MathNamespace, eps_many: Callable[[list], Sequence], *,
             iterations: int, pure_dp=None, closed_forms: Sequence = (), lower_many: Callable | None = None,
             digits: int = 15) -> Optimum:
    """The one (epsilon, delta) conversion procedure: the smallest epsilon (``kind="epsilon"``, target
    delta ``t``) or delta (``kind="delta"``, target epsilon ``t``) that the curve implies under ``rule``.

    ``t`` comes from :func:`read_target`; ``eps_many(alphas)`` is the RDP curve at a batch of orders, in
    the namespace ``m`` (mpmath numbers or float64). Candidates (module docstring): the minimum over
    continuous alpha > 1 (:func:`rdpsym.accounting.orders.minimise`, ``iterations`` golden-section steps,
    a branch-and-bound scan when ``lower_many`` bounds the objective from below), its value checked
    against mpmath at 30 digits or more (the larger is kept); each ``(alpha, expression)`` of
    ``closed_forms`` (stationary points found by sympy; one that ties with the best to ``digits`` digits
    is reported); the pure-DP order when ``pure_dp``, eps(oo), is finite. The least finite candidate
    wins; none finite gives epsilon = +inf or delta = 1 (fail closed).
    """

    def f_many(alphas):
        return objective_values(rule, kind, eps_many(alphas), alphas, t, m)

    src = rule.source
    candidates = []  # (value of the objective, alpha, status, rdp at alpha, closed form or None, note)
    a_opt, v_opt, at_edge, evaluations = minimise(f_many, m, iterations, lower_many=lower_many)
    if a_opt is not None:
        rdp_at = eps_many([a_opt])[0]
        with mpmath.workdps(max(30, mpmath.mp.dps)):
            check = rule.objective(kind, mpmath.mpf(rdp_at), mpmath.mpf(a_opt), mpmath.mpf(t), MPMATH)
        value = m.inf if mpmath.isnan(check) else max(v_opt, m.scalar(check))  # a check that fails counts against
        if at_edge:
            note = (f"{src}; the minimum over alpha - 1 in [1e{SCAN_LOG10[0]:g}, 1e{EXTEND_LOG10:g}] lies at the "
                    "edge of the searched orders: the value is a valid guarantee but may not be the infimum")
        else:
            note = (f"{src}; continuous alpha: log-spaced scan + golden-section refinement ({evaluations} orders "
                    "with every curve)")
        candidates.append((value, a_opt, ConversionStatus.EDGE if at_edge else ConversionStatus.OPTIMAL, rdp_at,
                           None, note))
    for a, root in closed_forms:
        rdp_at = eps_many([a])[0]
        value = objective_values(rule, kind, [rdp_at], [a], t, m)[0]
        candidates.append((value, a, ConversionStatus.OPTIMAL, rdp_at, root,
                           f"{src}; alpha* = {sp.sstr(root)} from d/dalpha = 0 (sympy)"))
    if pure_dp is not None and not _no_claim(pure_dp):
        # epsilon direction: eps = eps_RDP(oo); delta direction: log delta = -oo iff eps_RDP(oo) <= eps.
        value = pure_dp if kind == "epsilon" else (-m.inf if pure_dp <= t else m.inf)
        candidates.append((value, m.inf, ConversionStatus.PURE_DP, pure_dp, None,
                           f"{src}; alpha = oo: pure DP, epsilon = eps(oo) = {mpmath.nstr(pure_dp, 6)}, delta = 0"))
    finite = [c for c in candidates if not _no_claim(c[0])]
    if not finite:
        note = ("the curve is +inf (or NaN, counted as +inf) at every order searched and at alpha = oo: no "
                "(epsilon, delta) guarantee (fail closed)")
        value = m.inf if kind == "epsilon" else m.scalar(1)
        return Optimum(value, None, ConversionStatus.INFINITE, note, m.inf, evaluations)
    best = min(finite, key=lambda c: c[0])
    # The numeric search converges to the stationary point only to working precision; a closed-form
    # stationary point that ties with it is the exact optimum, so report that one.
    tol = mpmath.mpf(10) ** (-digits) * max(abs(best[0]), 1) if mpmath.isfinite(best[0]) else 0
    exact = [c for c in finite if c[4] is not None and c[0] <= best[0] + tol]
    if exact:
        best = min(exact, key=lambda c: c[0])
    v = best[0]
    if kind == "epsilon":
        value = max(v, m.scalar(0))  # (eps, delta)-DP with eps < 0 is (0, delta)-DP
    else:
        # delta is a probability: log delta >= 0 is no guarantee (delta = 1); exp(-oo) = 0
        value = m.scalar(1) if v >= 0 else m.exp(v)
    return Optimum(value, best[1], best[2], best[5], best[3], evaluations, best[4])


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
def _closed_form_orders(expr, method, kind, target_symbol):
    """Stationary orders of the objective from sympy, when its derivative's numerator is a polynomial."""
    try:
        obj = conversions.get(method).objective(kind, expr, ALPHA, target_symbol, SYMPY)
        num = sp.numer(sp.together(sp.diff(obj, ALPHA)))
        if not num.is_polynomial(ALPHA) or sp.degree(num, ALPHA) > 4:
            return []
        return [r for r in sp.solve(sp.Eq(num, 0), ALPHA) if r.is_real is not False]
    except SYMBOLIC_ERRORS:  # sympy failing here only means "no closed form"; numeric decides
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
    with mpmath.workdps(dps + 10):
        t = read_target(target, kind, MPMATH)
        c = _Curve(curve, values, dps)
        closed = []
        if c.expr is not None:
            tsym = sp.Symbol("delta" if kind == "epsilon" else "epsilon", positive=True)
            for root in _closed_form_orders(c.expr, method, kind, tsym):
                number = root.subs(tsym, _exact_target(target)).evalf(dps + 10)
                a = mpmath.mpf(number) if number.is_real and number.is_finite else None
                if a is not None and a > 1:
                    closed.append((a, root))

        def objective_at(a):
            return objective_values(rule, kind, [c(a)], [a], t, MPMATH)[0]

        best = optimise(rule, kind, t, MPMATH, lambda alphas: [c(a) for a in alphas], iterations=int(dps * 5),
                        pure_dp=c.pure_dp, closed_forms=closed, digits=dps)
    with mpmath.workdps(dps):
        alpha = best.alpha if best.alpha is None or best.alpha == mpmath.inf else +best.alpha
        return Conversion(+best.value, alpha, method, best.note, kind, +t, best.closed_form, objective_at)


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
