r"""Properties of one Rényi curve alpha -> D_alpha (Mironov 2017, arXiv:1702.07476 v3, Appendix).

* Non-negativity, Prop. 8: :math:`D_\alpha(P\|Q) \ge 0`.
* Monotonicity, Prop. 9: :math:`D_\alpha` is non-decreasing in alpha.
* Convexity: :math:`(\alpha-1) D_\alpha = \log \int P^\alpha Q^{1-\alpha}` is convex in alpha (Hölder;
  van Erven and Harremoës 2014, IEEE T-IT 60(7), Cor. 2).
* Continuity: :math:`\lim_{\alpha\to1} D_\alpha = D_1` (KL) and
  :math:`\lim_{\alpha\to\infty} D_\alpha = D_\infty` (Mironov 2017, Def. 3 and the remarks after it).

Each check is symbolic when sympy decides it for all orders and parameters (the sign of a derivative
under the parameters' assumptions, a limit by substitution), and numeric otherwise, on the grid
:data:`ORDERS` (orders next to 1, in (0, 1), up to 10^4, and the curve's exceptional orders) at
``dps`` digits inside one ``mpmath.workdps`` block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mpmath
import sympy as sp

from ..derive.mechanism_rdp import rdp
from ..derive.result import DivergenceResult
from ..derive.sign import decide
from .._timeout import StepTimeout, run_with_time_limit
from ..specify.mechanism import Mechanism
from ..specify.text import as_number
from ..symbols import alpha as ALPHA
from .report import PropertyReport, PropertyVerdict, report_from_rows

__all__ = ["Curve", "as_curve", "ORDERS", "non_negativity", "monotonicity", "convexity",
           "continuity_at_one", "continuity_at_infinity"]

REF = "Mironov 2017 (arXiv:1702.07476 v3)"
R = sp.Rational
#: The default grid of orders: (0, 1), both sides of 1, moderate and large orders.
ORDERS = (R(1, 10), R(1, 4), R(1, 2), R(3, 4), 1 - R(1, 10**6), sp.Integer(1), 1 + R(1, 10**6), R(1001, 1000),
          R(3, 2), sp.Integer(2), sp.Integer(3), sp.Integer(5), sp.Integer(10), sp.Integer(32), sp.Integer(100),
          sp.Integer(1000), sp.Integer(10**4), sp.oo)


@dataclass
class Curve:
    """A curve alpha -> D_alpha at fixed parameter values, evaluable at high precision.

    ``result`` (a :class:`~rdpsym.DivergenceResult`) gives exact values (``at``), the KL, D_inf and the
    symbolic expression; a plain callable ``alpha -> number`` (mpmath in, number out) is accepted
    for curves without one (only numeric checks apply, and alpha = 1 / oo need ``kl`` / ``dinf``).
    """

    label: str
    result: DivergenceResult | None = None
    values: dict | None = None
    fn: Callable | None = None
    kl: object = None
    dinf: object = None
    below_one: bool = True

    def value(self, a, dps: int) -> mpmath.mpf:
        """D at order ``a`` (a sympy number, ``1`` and ``oo`` allowed) to ``dps`` digits."""
        a = as_number(a, "alpha")
        if self.result is not None:
            fast = self._fast_value(a, dps)
            if fast is not None:
                return fast
            return self.result.evaluate(a, dps=dps, **(self.values or {}))
        with mpmath.workdps(dps):
            if a == 1:
                if self.kl is None:
                    raise ValueError(f"{self.label}: no KL value (alpha = 1) given")
                return mpmath.mpf(self.kl)
            if a == sp.oo:
                if self.dinf is None:
                    raise ValueError(f"{self.label}: no D_inf value (alpha = oo) given")
                return mpmath.mpf(self.dinf)
            return mpmath.mpf(self.fn(mpmath.mpf(sp.Float(a, dps + 10))))

    def _fast_value(self, a, dps: int):
        """The closed form through mpmath at twice the digits (cancellation next to alpha = 1), or None
        where the exact route is needed: alpha = 1, oo, exceptional orders, conditions, NaN/inf/complex."""
        r = self.result
        if a in (1, sp.oo) or r.conditions is not sp.true or any(p.alpha == a for p in r.exceptional_points):
            return None
        if not hasattr(self, "_lambdified"):
            subs = r.substitutions(self.values or {})  # validates the names
            expr = r.expr.subs(subs)
            if expr.free_symbols - {r.alpha}:
                self._lambdified = None
            else:
                self._lambdified = sp.lambdify(r.alpha, expr, "mpmath")
        if self._lambdified is None:
            return None
        with mpmath.workdps(2 * dps + 20):
            try:
                v = mpmath.mpmathify(self._lambdified(mpmath.mpf(sp.Float(a, 2 * dps + 20))))
            except (ZeroDivisionError, ValueError, OverflowError, TypeError):
                return None
            if isinstance(v, mpmath.mpc) or not mpmath.isfinite(v):
                return None
        with mpmath.workdps(dps):
            return +v

    def symbolic(self, substitute: bool = True) -> sp.Expr | None:
        """The expression in alpha, with the values substituted if ``substitute`` (None if unknown).

        Unsubstituted, a sign proved by sympy holds for every parameter value in the domains."""
        r = self.result
        if r is None or r.expr is None or r.conditions is not sp.true:
            return None
        subs = r.substitutions(self.values or {}) if substitute else {}  # validates the names
        return r.expr.subs(subs).xreplace({r.alpha: ALPHA})

    def exceptional(self) -> list:
        """The removable orders at this curve's parameter values (an order in the parameters,
        b1/(b1 + b2), at its value there; one still symbolic is left out)."""
        if self.result is None:
            return []
        subs = self.result.substitutions(self.values or {})
        return [a for a in (p.alpha.subs(subs) for p in self.result.exceptional_points) if a.is_number]


def as_curve(target, values: dict | None = None, *, label: str | None = None) -> Curve:
    """A :class:`Curve` from a Mechanism (its RDP curve, derived by :func:`rdpsym.rdp`), a
    DivergenceResult, a Curve, or a callable ``alpha -> value``."""
    if isinstance(target, Curve):
        return target
    if isinstance(target, Mechanism):
        target = rdp(target)
    if isinstance(target, DivergenceResult):
        if target.expr is None:
            raise ValueError(f"target: {target.label} has no expression (status {target.status}: {target.reason})")
        return Curve(label or target.label, result=target, values=dict(values or {}))
    if callable(target):
        if values:
            raise ValueError("values: only accepted with a Mechanism or DivergenceResult target")
        return Curve(label or getattr(target, "__name__", "curve"), fn=target)
    raise TypeError(f"target: expected a Mechanism, DivergenceResult or callable, got {type(target).__name__}")


def _orders(curve: Curve, orders) -> list:
    pts = set(as_number(a, "orders") for a in (orders if orders is not None else ORDERS))
    pts |= set(curve.exceptional())
    if curve.result is None:
        pts = {a for a in pts if (a != 1 or curve.kl is not None) and (a != sp.oo or curve.dinf is not None)}
    if not curve.below_one:
        pts = {a for a in pts if a >= 1}
    return sorted(pts, key=lambda a: float("inf") if a == sp.oo else float(a))


def _values(curve: Curve, orders, dps):
    out = []
    for a in orders:
        try:
            out.append((a, curve.value(a, dps), ""))
        except (ArithmeticError, ValueError, OverflowError) as exc:
            out.append((a, None, f"not evaluated: {exc}"))
    return out


def _tolerance(dps: int) -> mpmath.mpf:
    return mpmath.mpf(10) ** (-(dps - 10))


#: seconds for the symbolic sign of a derivative (then the numeric grid decides)
SIGN_SECONDS = 3.0


def _sign_symbolic(expr: sp.Expr) -> bool:
    """True if the sign oracle (:mod:`rdpsym.derive.sign`) shows ``expr >= 0`` under the symbols'
    assumptions (alpha > 0, parameters) within :data:`SIGN_SECONDS`. Memoised by the oracle: the same
    expression (one curve checked at many parameter values) is decided once."""
    return decide(expr, "nonnegative", seconds=SIGN_SECONDS) is True


def _label(a) -> str:
    return f"alpha={sp.sstr(a)}"


def non_negativity(target, values: dict | None = None, *, orders=None, dps: int = 40) -> PropertyReport:
    r"""Prop. 8: :math:`D_\alpha \ge 0` at every order of the grid (and the KL and D_inf)."""
    curve = as_curve(target, values)
    with mpmath.workdps(dps):
        rows = [(_label(a), mpmath.mpf(0), v, 0, note) if v is not None else (_label(a), None, None, 0, note)
                for a, v, note in _values(curve, _orders(curve, orders), dps)]
        # value <= bound form: 0 <= D means "-D <= 0"
        rows = [(p, -b if b is not None else None, mpmath.mpf(0) if b is not None else None, e, n) for p, _, b, e, n in rows]
        return report_from_rows("non-negativity (Prop. 8)", rows, _tolerance(dps), reference=f"{REF}, Prop. 8",
                                target=curve.label, detail="-D_alpha <= 0 on the order grid")


def monotonicity(target, values: dict | None = None, *, orders=None, dps: int = 40, symbolic: bool = True) -> PropertyReport:
    r"""Prop. 9: :math:`D_\alpha` is non-decreasing in alpha.

    Symbolic when sympy proves :math:`\partial_\alpha D_\alpha \ge 0` for all alpha and parameters (the
    closed form's derivative; alpha = 1 is a limit point of the same expression); otherwise each
    consecutive pair of grid orders must satisfy :math:`D_{\alpha_i} \le D_{\alpha_{i+1}}`.
    """
    curve = as_curve(target, values)
    name, ref = "monotonicity in alpha (Prop. 9)", f"{REF}, Prop. 9"
    expr = curve.symbolic(substitute=False) if symbolic else None
    if expr is not None and _sign_symbolic(sp.diff(expr, ALPHA)):
        return PropertyReport(name, PropertyVerdict.HOLDS, "symbolic", (), mpmath.inf, 0,
                              f"d/dalpha = {sp.sstr(sp.simplify(sp.diff(expr, ALPHA)))} >= 0 (sympy)", ref, curve.label)
    with mpmath.workdps(dps):
        vals = _values(curve, _orders(curve, orders), dps)
        rows = []
        for (a0, v0, n0), (a1, v1, n1) in zip(vals, vals[1:]):
            rows.append((f"D({sp.sstr(a0)}) <= D({sp.sstr(a1)})", v0, v1, 0, n0 or n1))
        return report_from_rows(name, rows, _tolerance(dps), reference=ref, target=curve.label,
                                detail="consecutive orders of the grid")


def convexity(target, values: dict | None = None, *, orders=None, dps: int = 40, symbolic: bool = True) -> PropertyReport:
    r""":math:`(\alpha-1)D_\alpha` is convex in alpha (van Erven and Harremoës 2014, Cor. 2).

    Symbolic when sympy proves the second derivative non-negative; otherwise the slopes of
    :math:`f(\alpha) = (\alpha-1)D_\alpha` between consecutive finite grid orders must not decrease.
    """
    curve = as_curve(target, values)
    name, ref = "convexity of (alpha-1) D_alpha", "van Erven and Harremoës 2014 (IEEE T-IT 60(7)), Cor. 2"
    expr = curve.symbolic(substitute=False) if symbolic else None
    if expr is not None:
        second = sp.diff((ALPHA - 1) * expr, ALPHA, 2)
        if _sign_symbolic(second):
            return PropertyReport(name, PropertyVerdict.HOLDS, "symbolic", (), mpmath.inf, 0,
                                  f"d^2/dalpha^2 = {sp.sstr(sp.simplify(second))} >= 0 (sympy)", ref, curve.label)
    with mpmath.workdps(dps):
        pts = [a for a in _orders(curve, orders) if a != sp.oo]
        vals = [(a, v, n) for a, v, n in _values(curve, pts, dps)]
        f = [(mpmath.mpf(sp.Float(a, dps + 10)), (mpmath.mpf(sp.Float(a, dps + 10)) - 1) * v if v is not None else None, n)
             for a, v, n in vals]
        rows = []
        for (a0, f0, n0), (a1, f1, n1), (a2, f2, n2) in zip(f, f[1:], f[2:]):
            label = f"slopes at {mpmath.nstr(a0, 6)}, {mpmath.nstr(a1, 6)}, {mpmath.nstr(a2, 6)}"
            if None in (f0, f1, f2) or not all(map(mpmath.isfinite, (f0, f1, f2))):
                rows.append((label, None, None, 0, n0 or n1 or n2 or "infinite value"))
                continue
            s0, s1 = (f1 - f0) / (a1 - a0), (f2 - f1) / (a2 - a1)
            # the slope difference carries the rounding error of f divided by the spacing
            err = 4 * mpmath.mpf(10) ** (-dps + 5) * max(1, abs(f0), abs(f1), abs(f2)) / min(a1 - a0, a2 - a1)
            rows.append((label, s0, s1, err))
        return report_from_rows(name, rows, _tolerance(dps), reference=ref, target=curve.label,
                                detail="non-decreasing slopes of (alpha-1) D_alpha between consecutive orders")


def continuity_at_one(target, values: dict | None = None, *, dps: int = 50, steps=(4, 8, 12)) -> PropertyReport:
    r""":math:`\lim_{\alpha\to1^\pm} D_\alpha = D_1` (the KL divergence).

    Symbolic when the closed form is finite at alpha = 1 and sympy simplifies its value minus the KL
    to 0. Otherwise numeric: at :math:`\alpha = 1 \pm 10^{-k}` for k in ``steps`` the distance to the
    KL must shrink with k, and be at most :math:`10^{-k_{max}/2}\max(1, |D_1|)` at the closest order.
    """
    curve = as_curve(target, values)
    name, ref = "continuity at alpha = 1 (limit = KL)", f"{REF}, Def. 3"
    expr = curve.symbolic()
    if expr is not None and curve.result.kl is not None:
        try:
            at_one = expr.subs(ALPHA, 1)  # may raise for Max(nan, ...): then the numeric route decides
        except (ValueError, TypeError):
            at_one = sp.nan
        kl = curve.result.kl.subs(curve.result.substitutions(curve.values or {}))
        if not at_one.has(sp.nan, sp.zoo, sp.oo) and sp.simplify(at_one - kl) == 0:
            return PropertyReport(name, PropertyVerdict.HOLDS, "symbolic", (), mpmath.inf, 0,
                                  f"the closed form is continuous at 1 and equals the KL {sp.sstr(kl)}", ref, curve.label)
    with mpmath.workdps(dps):
        try:
            kl = curve.value(1, dps)
        except (ValueError, ArithmeticError) as exc:
            return report_from_rows(name, [("alpha=1", None, None, 0, str(exc))], 0, reference=ref, target=curve.label)
        rows = []
        sides = (1, -1) if curve.below_one else (1,)
        for side in sides:
            prev = None
            for k in steps:
                a = 1 + side * R(1, 10**k)
                try:
                    d = abs(curve.value(a, dps) - kl)
                except (ArithmeticError, ValueError) as exc:
                    rows.append((_label(a), None, None, 0, str(exc)))
                    continue
                bound = prev if prev is not None else mpmath.inf
                if k == steps[-1]:
                    bound = min(bound, mpmath.mpf(10) ** (-steps[-1] / 2) * max(1, abs(kl)))
                rows.append((f"|D({sp.sstr(a)}) - KL|", d, bound))
                prev = d
        return report_from_rows(name, rows, _tolerance(dps), reference=ref, target=curve.label,
                                detail="distance to the KL shrinks as alpha -> 1")


def continuity_at_infinity(target, values: dict | None = None, *, dps: int = 50, steps=(3, 6, 9, 12)) -> PropertyReport:
    r""":math:`\lim_{\alpha\to\infty} D_\alpha = D_\infty`.

    For a finite D_inf: at :math:`\alpha = 10^k` (k in ``steps``) the curve must stay below D_inf and
    approach it, within :math:`10^{-k_{max}/2}\max(1, D_\infty)` at the largest order. For an infinite
    D_inf: symbolic when sympy's limit of the closed form is +oo, else the curve must increase past
    every finite value reached (inconclusive when it cannot be decided).
    """
    curve = as_curve(target, values)
    name, ref = "continuity at alpha = oo (limit = D_inf)", f"{REF}, Def. 3"
    with mpmath.workdps(dps):
        try:
            dinf = curve.value(sp.oo, dps)
        except (ValueError, ArithmeticError) as exc:
            return report_from_rows(name, [("alpha=oo", None, None, 0, str(exc))], 0, reference=ref, target=curve.label)
        if dinf == mpmath.inf:
            expr = curve.symbolic()
            if expr is not None:
                try:
                    lim = run_with_time_limit(lambda: sp.limit(expr, ALPHA, sp.oo), seconds=10)
                except (StepTimeout, Exception):  # noqa: BLE001 - undecided: numeric below
                    lim = None
                if lim == sp.oo:
                    return PropertyReport(name, PropertyVerdict.HOLDS, "symbolic", (), mpmath.inf, 0,
                                          "sympy: the limit of the closed form is +oo = D_inf", ref, curve.label)
                if lim is not None and lim.is_finite:
                    return PropertyReport(name, PropertyVerdict.FAILS, "symbolic", (), -mpmath.inf, 0,
                                          f"sympy: the limit is {sp.sstr(lim)}, but D_inf = +oo", ref, curve.label)
            return PropertyReport(name, PropertyVerdict.INCONCLUSIVE, "numeric", (), None, 0,
                                  "D_inf = +oo and the limit could not be decided symbolically", ref, curve.label)
        rows, prev = [], None
        for k in steps:
            a = sp.Integer(10) ** k
            try:
                v = curve.value(a, dps)
            except (ArithmeticError, ValueError) as exc:
                rows.append((_label(a), None, None, 0, str(exc)))
                continue
            rows.append((f"D(1e{k}) <= D_inf", v, dinf))
            d = dinf - v
            bound = prev if prev is not None else mpmath.inf
            if k == steps[-1]:
                bound = min(bound, mpmath.mpf(10) ** (-steps[-1] / 2) * max(1, abs(dinf)))
            rows.append((f"D_inf - D(1e{k})", d, bound))
            prev = abs(d)
        return report_from_rows(name, rows, _tolerance(dps), reference=ref, target=curve.label,
                                detail="the curve approaches D_inf from below")
