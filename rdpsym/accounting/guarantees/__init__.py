r"""RDP curves given by a guarantee rather than by densities: zCDP, truncated CDP, and their registry.

A privacy *definition* such as rho-zCDP is a family of RDP bounds, one per order: a mechanism is
rho-zCDP when D_alpha(P||Q) <= rho alpha for every alpha > 1 and every pair of neighbouring output
laws (Bun and Steinke 2016). An accountant that composes RDP curves can therefore compose a stated
guarantee with derived curves: its curve is the bound the definition gives at each order, +inf where
the definition says nothing. That is what a :class:`GuaranteeCurve` is: a name, parameters with
domains, the curve as one sympy expression in ``alpha`` (written once, in its own small file, with its
source), and the value at alpha = oo. Nothing is derived here: the curve *is* the stated guarantee,
and the accountant's events show it with provenance ``"guarantee"``.

Orders below the definition's range are not left without a value: D_alpha is non-decreasing in alpha
(van Erven and Harremoës 2014, Thm. 3; Mironov 2017, Prop. 9), so a bound c(beta) for every beta in
(1, b) bounds D_alpha at every alpha <= 1 by the limit of c(beta) as beta -> 1 from above.

Built in: ``"zcdp"`` (:mod:`.zcdp`, also ``rdpsym.accounting.ZCDP``) and ``"tcdp"`` (:mod:`.tcdp`,
``rdpsym.accounting.TCDP``). Use them as ``Accountant().add(ZCDP, rho=0.05, count=10)``, by name
(``add("zcdp", rho=0.05)``; a mechanism of the same name comes first) or on the command line
(``rdpsym account --add zcdp:rho=0.05``). A new definition is one small file with one :func:`register`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import sympy as sp

from ..._numbers import ArgumentError
from ...specify.params import Parameter, ParameterSet
from ..curve_types import MechanismCurve, float_curve

__all__ = ["GuaranteeCurve", "ALPHA", "register", "get", "names", "guarantee_curve"]

#: The order, the one free variable of every guarantee curve.
ALPHA = sp.Symbol("alpha", positive=True)

_LOCK = threading.RLock()
_GUARANTEES: dict[str, "GuaranteeCurve"] = {}


@dataclass(frozen=True)
class GuaranteeCurve(ParameterSet):
    r"""An RDP curve alpha -> eps(alpha) that a privacy definition states, for the accountant to compose.

    ``curve`` is a sympy expression in :data:`ALPHA` and the parameters' symbols, valid for
    0 < alpha < oo (+oo where the definition gives no bound); ``max_divergence`` is eps(oo).
    ``group_rule(k)``, when given, is the definition's own group-privacy statement: a pair of
    expressions (curve, max_divergence) for groups of ``k`` records and its source, or None where it
    does not apply (then the accountant uses Mironov 2017, Prop. 2 on the curve). ``defaults`` are
    parameter values taken when an event does not give them (e.g. xi = 0 for zCDP).
    """

    name: str
    title: str
    parameters: tuple[Parameter, ...]
    curve: sp.Expr
    max_divergence: sp.Expr
    source: str
    defaults: tuple = ()
    group_rule: Callable[[int], Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        self.check_parameter_set()
        known = {p.symbol for p in self.parameters} | {ALPHA}
        for what, expr in (("curve", self.curve), ("max_divergence", self.max_divergence)):
            if not isinstance(expr, sp.Basic):  # never sympify text: a formula string is not a curve
                raise ArgumentError(what, "a sympy expression in alpha and the declared parameters", expr)
            stray = expr.free_symbols - known
            if stray:
                raise ArgumentError(what, "an expression in alpha and the declared parameters", expr)

    def __repr__(self) -> str:
        return f"GuaranteeCurve({self.name}: {', '.join(self.params)})"

    # params, parameter_by_name, default_values and substitutions: ParameterSet, shared with Mechanism

    def epsilon(self, alpha, **values) -> sp.Expr:
        """The stated bound at order ``alpha`` (a number or sp.oo), exact (sympy), for the given values."""
        subs = self.substitutions({**self.default_values, **values})
        missing = [n for n, s in self.params.items() if s not in subs]
        if missing:
            raise ArgumentError("values", f"values for every parameter of {self.name!r}", sorted(missing))
        if isinstance(alpha, float):
            a = sp.oo if alpha == float("inf") else sp.Rational(alpha)  # NaN raises: not an order
        else:
            a = sp.sympify(alpha) if isinstance(alpha, (int, sp.Basic)) else None
        if a == sp.oo:
            return sp.simplify(self.max_divergence.subs(subs))
        if a is None or not (a.is_real and a.is_positive):
            raise ArgumentError("alpha", "an order alpha > 0 (or oo)", alpha)
        return sp.simplify(self.curve.subs(subs).subs(ALPHA, a))

    def numpy_curve(self, curve: sp.Expr | None = None, top: sp.Expr | None = None) -> Callable:
        """``fn(alpha, **params)`` in numpy for ``curve`` (default: this one) with ``top`` at alpha = oo."""
        names = list(self.params)
        symbols = [ALPHA, *self.params.values()]
        # lambdify of rdpsym's own expressions (never of user text)
        body = sp.lambdify(symbols, self.curve if curve is None else curve, modules="numpy")
        at_top = sp.lambdify(symbols[1:], self.max_divergence if top is None else top, modules="numpy")

        def fn(a, **p):
            a = np.asarray(a, dtype=float)
            args = [np.asarray(p[n], dtype=float) for n in names]
            shape = np.broadcast_shapes(a.shape, *(x.shape for x in args))
            finite_a = np.where(np.isinf(a), 2.0, a)
            with np.errstate(all="ignore"):
                out = np.broadcast_to(np.asarray(body(finite_a, *args), dtype=float), shape)
                top_v = np.broadcast_to(np.asarray(at_top(*args), dtype=float), shape)
            return np.where(np.broadcast_to(np.isinf(a), shape), top_v, out)

        return fn


def guarantee_curve(guarantee: GuaranteeCurve, group: int = 1):
    """The accountant's float curve of ``guarantee`` for groups of ``group`` records.

    Groups: the definition's own rule where it applies (``group_rule``, at the events whose values it
    covers), else Mironov 2017 (arXiv:1702.07476 v3), Prop. 2 on the curve (:func:`float_curve`).
    """
    base = guarantee.numpy_curve()
    detail = f"the stated guarantee: {guarantee.source}"
    if group == 1:
        return MechanismCurve(guarantee, 1, "guarantee", detail, None, base, cheap=True)  # type: ignore[arg-type]
    prop2 = float_curve(guarantee, group, "guarantee", detail, lambda a, p: base(a, **p))  # type: ignore[arg-type]
    rule = guarantee.group_rule(group) if guarantee.group_rule is not None else None
    if rule is None:
        return MechanismCurve(guarantee, group, "bound", prop2.detail, None, prop2._fn, cheap=True)  # type: ignore[arg-type]
    exact = guarantee.numpy_curve(rule[0], rule[1])

    def fn(a, **p):
        own = exact(a, **p)
        with np.errstate(all="ignore"):
            # where the definition's rule says nothing (+oo), Prop. 2 may still bound it
            return np.where(np.isinf(own), prop2._fn(a, **p), own)

    return MechanismCurve(guarantee, group, "guarantee", f"{detail}; groups of {group}: {rule[2]} where it "
                          "applies, else Mironov 2017 (arXiv:1702.07476 v3), Prop. 2 on the curve",
                          None, fn, cheap=True)  # type: ignore[arg-type]


def register(guarantee: GuaranteeCurve) -> GuaranteeCurve:
    """Add ``guarantee`` under its name (another object under a registered name is an error)."""
    if not isinstance(guarantee, GuaranteeCurve):
        raise ArgumentError("guarantee", "a GuaranteeCurve", guarantee)
    with _LOCK:
        if _GUARANTEES.get(guarantee.name, guarantee) != guarantee:
            raise ArgumentError("guarantee", "a name not registered yet", guarantee.name)
        _GUARANTEES[guarantee.name] = guarantee
    return guarantee


def names() -> list[str]:
    """The registered guarantees' names, in registration order."""
    with _LOCK:
        return list(_GUARANTEES)


def get(name: str) -> GuaranteeCurve:
    """The guarantee registered as ``name``; an ArgumentError naming the registered ones otherwise."""
    with _LOCK:
        g = _GUARANTEES.get(name) if isinstance(name, str) else None
        if g is None:
            raise ArgumentError("name", f"a registered guarantee ({', '.join(_GUARANTEES)})", name)
        return g


from . import zcdp  # noqa: E402,F401,I001
from . import tcdp  # noqa: E402,F401
