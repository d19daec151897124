r"""A privacy accountant: compose RDP curves of many mechanisms, convert to (epsilon, delta)-DP.

The paper's section VII use of RDP as a budget curve (Mironov 2017, arXiv:1702.07476 v3):

* **Composition** (Prop. 1): releasing the outputs of mechanisms with curves eps_i(alpha) is
  (alpha, sum_i eps_i(alpha))-RDP at every order; for independent releases of a product pair it is an
  equality, for adaptive ones an upper bound. An event added ``count`` times contributes
  ``count * eps_i(alpha)``; identical events (same mechanism, same parameter values) are merged.
* **Conversion**: at every single order alpha > 1 the curve implies (epsilon, delta)-DP by Prop. 3
  (``method="mironov"``) or by Canonne–Kamath–Steinke 2020, Prop. 12 (``"improved"``, the default);
  or any conversion registered in :mod:`rdpsym.accounting.conversions` (each formula written there once).
  Any alpha gives a valid guarantee, so the answer is the minimum over continuous alpha > 1: the one
  conversion procedure :func:`rdpsym.accounting.conversion.optimise`, run here with numpy on the composed
  curve (a log-spaced scan of ``u = log(alpha - 1)``, branch and bound when some curves are expensive,
  and a golden-section refinement of the best local minima). The pure-DP order alpha = oo (eps(oo) = sum
  of max divergences; Mironov 2017, Def. 4 and the remark that eps-DP is (oo, eps)-RDP) gives
  (eps(oo), 0)-DP and is used when smaller.
* **Group privacy**: ``Accountant(group_size=k)`` or :meth:`Accountant.group_privacy` accounts for
  inputs differing in k records, with the semantics of :func:`rdpsym.accounting.group_privacy`
  (exact for location families, Prop. 2 bound otherwise; status ``bound`` per event).

Fail closed: NaN anywhere becomes +inf; an infinite order never wins a minimum; a curve infinite at
every order gives epsilon = +inf (delta = 1) with status ``"infinite"``; an optimum at the edge of the
searched orders is reported with status ``"edge"`` (valid, maybe not the infimum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Real
from typing import Any

import numpy as np
import sympy as sp

from ..specify.mechanism import Mechanism
from . import conversions
from .conversion import ConversionStatus, ShownAsConversion, objective_values, optimise, read_target
from .curve_types import MechanismCurve
from .curves import mechanism_curve, resolve_mechanism
from .guarantees import GuaranteeCurve
from .mathns import NUMPY

__all__ = ["Accountant", "AccountantConversion", "ConversionStatus", "Event", "AccountantReport"]

#: Golden-section steps refining each local minimum of the scan (bracket 0.23 in u -> ~1e-9).
GOLDEN_ITERATIONS = 40


# -- events ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """One distinct event: a mechanism at parameter values, released ``count`` times."""

    mechanism: Mechanism = field(repr=False)
    values: tuple  # ((name, float), ...) in the mechanism's parameter order
    count: int
    provenance: str
    detail: str = field(repr=False)

    @property
    def name(self) -> str:
        return self.mechanism.name

    @property
    def label(self) -> str:
        vals = ", ".join(f"{k}={v:g}" for k, v in self.values)
        return f"{self.mechanism.name}({vals})"

    def __repr__(self) -> str:
        return f"Event({self.label} x {self.count}, {self.provenance})"


def _validate_count(count) -> int:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
        raise ValueError(f"count must be a non-negative integer; got {count!r}")
    if count < 0:
        raise ValueError(f"count must be a non-negative integer; got {count}")
    if count > 2**53:
        # the curve is count x eps(alpha) in float64: larger counts are not represented exactly
        digits = str(count)
        raise ValueError(f"count must be at most 2**53 (exact in float64); got a {len(digits)}-digit number "
                         f"({digits[:12]}...)")
    return int(count)


def _fast_check(mechanism: Mechanism, values: dict):
    """Floats of ``values`` when every domain is an Interval with rational ends (exact checks), else None."""
    by_name = mechanism.parameter_by_name
    out = {}
    for key, value in values.items():
        p = by_name.get(key)
        if p is None or not isinstance(p.domain, sp.Interval) or p.symbol.is_integer:
            return None
        if isinstance(value, (bool, str, bytes)) or not isinstance(value, Real) or not math.isfinite(float(value)):
            return None
        lo, hi = p.domain.start, p.domain.end
        if not all(e.is_Rational or e in (sp.oo, -sp.oo) for e in (lo, hi)):
            return None
        v = Fraction(value)
        ok_lo = lo == -sp.oo or (v > Fraction(int(lo.p), int(lo.q)) if p.domain.left_open else v >= Fraction(int(lo.p), int(lo.q)))
        ok_hi = hi == sp.oo or (v < Fraction(int(hi.p), int(hi.q)) if p.domain.right_open else v <= Fraction(int(hi.p), int(hi.q)))
        if not (ok_lo and ok_hi):
            return None  # the slow path raises the standard message
        out[key] = float(value)
    return out


def _is_expensive(curve: MechanismCurve) -> bool:
    """Curves without generated closed-form code (numeric grids, the subsampled Gaussian's quadrature)."""
    return not curve.cheap and (curve.result is None or curve.provenance == "numeric")


@dataclass(frozen=True, repr=False)  # the repr is ShownAsConversion's
class AccountantConversion(ShownAsConversion):
    """The (epsilon, delta) the composed curve implies.

    ``value``: epsilon (``kind="epsilon"``, given ``target`` delta) or delta (``kind="delta"``, given
    ``target`` epsilon), a float; ``alpha``: the optimal order (``inf`` for the pure-DP order, None
    when no order is finite); ``status``: ``"optimal"`` (interior minimum over continuous alpha),
    ``"pure_dp"`` (alpha = oo won), ``"edge"`` (minimum at the edge of the searched orders: a valid
    guarantee that may not be the infimum) or ``"infinite"`` (no finite order: epsilon = +inf, delta
    = 1); ``rdp_at_alpha``: the composed curve at ``alpha``; ``pure_epsilon``: eps(oo);
    ``evaluations``: orders at which the optimiser evaluated every curve (the branch-and-bound scan
    evaluates the cheap closed forms alone at the others).
    """

    value: float
    alpha: float | None
    kind: str
    target: float
    method: str
    status: ConversionStatus
    note: str
    rdp_at_alpha: float
    pure_epsilon: float
    evaluations: int = 0

    @property
    def finite(self) -> bool:
        return self.status is not ConversionStatus.INFINITE


# -- the accountant --------------------------------------------------------------------------------
class Accountant:
    r"""Compose RDP curves of built-in or user-defined mechanisms and convert to (epsilon, delta)-DP.

    >>> acct = Accountant()
    >>> acct.add("gaussian", count=1000, sigma=30.0).add("laplace", b=2.0)   # doctest: +SKIP
    >>> acct.epsilon(1e-5).value                                              # doctest: +SKIP

    ``group_size`` accounts for inputs differing in that many records (module docstring);
    ``method`` is the default conversion (``"improved"``: CKS20 Prop. 12, or ``"mironov"``: Prop. 3).
    A parameter named ``sensitivity`` that is not given defaults to 1 (the convention of the CLI and
    of dp_accounting's noise multipliers); it is shown with each event.
    """

    def __init__(self, group_size: int = 1, method: str = "improved"):
        if isinstance(group_size, bool) or not isinstance(group_size, (int, np.integer)) or group_size < 1:
            raise ValueError(f"group_size must be a positive integer; got {group_size!r}")
        conversions.get(method)  # ValueError naming the registered methods
        self.group_size = int(group_size)
        self.method = method
        # id(mechanism) -> {values tuple -> count}; insertion order kept for the report
        self._events: dict[int, dict[tuple, int]] = {}
        self._curve_method: dict[int, str] = {}
        self._validated: dict = {}
        self._mechs: dict[int, Mechanism] = {}
        self._by_name: dict[str, Mechanism] = {}
        self._by_id: dict[int, Mechanism] = {}
        self._by_eq: dict[Mechanism, Mechanism] = {}
        self._keep: list = []
        # the curves this accountant prepared, (id(mechanism), group, method) -> curve: its own state, like
        # a result a user holds. The shared cache (mechanism_curve) keeps no curve prepared while a time
        # limit expired, and without this the minimisation over orders would prepare it at every order.
        self._prepared: dict = {}

    def __repr__(self) -> str:
        from ..report.display import accountant_repr

        return accountant_repr(self)

    def _repr_html_(self) -> str:
        from ..report.display import accountant_html

        return accountant_html(self)

    # -- adding events -----------------------------------------------------------------------------
    def add(self, mechanism, count: int = 1, *, curve: str = "auto", **values) -> "Accountant":
        """Add ``count`` releases of ``mechanism`` (a Mechanism or registry name) at parameter ``values``.

        Every parameter of the mechanism must be given (``sensitivity`` defaults to 1); values are
        checked against the parameters' domains (:meth:`Mechanism.substitutions`). ``count`` must be a
        non-negative integer (0 adds nothing). ``curve="numeric"`` forces the numeric curve.
        Returns the accountant (calls chain).
        """
        count = _validate_count(count)
        if curve not in ("auto", "numeric"):
            raise ValueError(f"curve must be 'auto' or 'numeric'; got {curve!r}")
        m = self._canonical(mechanism)
        if isinstance(m, GuaranteeCurve):
            values = {**m.default_values, **values}
        if "sensitivity" in m.params and "sensitivity" not in values:
            values = {**values, "sensitivity": 1}
        try:
            key = (id(m), tuple(sorted((k, repr(v)) for k, v in values.items())))
        except TypeError:
            key = None
        if key is None or key not in self._validated:
            missing = [p for p in m.params if p not in values]
            if missing:
                raise ValueError(f"values: missing parameter(s) {', '.join(missing)} of {m.name!r} "
                                 f"(its parameters are {', '.join(m.params)})")
            if _fast_check(m, values) is None:
                m.substitutions(values)  # raises ValueError naming the parameter and its domain
            previous = self._curve_method.get(id(m))
            if previous is not None and previous != curve:
                raise ValueError(f"curve: {m.name!r} was added with curve={previous!r}; one curve per mechanism")
            self._curve_method[id(m)] = curve
            self._curve(m)  # prepare (and keep) the curve now: errors surface here
            if key is not None:
                self._validated[key] = (curve, tuple((p, float(values[p])) for p in m.params))
        if key is not None:
            previous, vals = self._validated[key]
            if previous != curve:
                raise ValueError(f"curve: {m.name!r} was added with curve={previous!r}; one curve per mechanism")
        else:
            vals = tuple((p, float(values[p])) for p in m.params)
        if count == 0:
            return self
        bucket = self._events.setdefault(id(m), {})
        bucket[vals] = bucket.get(vals, 0) + count
        return self

    def _canonical(self, mechanism) -> Mechanism:
        """One Mechanism object per distinct mechanism (equal objects merge); cheap on repeats."""
        if isinstance(mechanism, str):
            m = self._by_name.get(mechanism)
            if m is None:
                m = self._canonical(resolve_mechanism(mechanism))
                self._by_name[mechanism] = m
            return m
        m = self._by_id.get(id(mechanism))
        if m is None:
            if not isinstance(mechanism, (Mechanism, GuaranteeCurve)):
                resolve_mechanism(mechanism)  # raises the TypeError
            m = self._by_eq.setdefault(mechanism, mechanism)
            self._by_id[id(mechanism)] = m
            self._keep.append(mechanism)  # ids stay valid while the object lives
            self._mechs[id(m)] = m
        return m

    @property
    def events(self) -> tuple[Event, ...]:
        """The distinct events, merged (same mechanism and values: counts add)."""
        out = []
        for mid, bucket in self._events.items():
            m = self._mechs[mid]
            c = self._curve(m)
            out += [Event(m, vals, n, c.provenance, c.detail) for vals, n in bucket.items()]
        return tuple(out)

    def _curve(self, m: Mechanism) -> MechanismCurve:
        key = (id(m), self.group_size, self._curve_method.get(id(m), "auto"))
        curve = self._prepared.get(key)
        if curve is None:
            curve = self._prepared[key] = mechanism_curve(m, self.group_size, key[2])
        return curve

    def group_privacy(self, k: int) -> "Accountant":
        """A copy of this accountant for groups of ``k`` records (k times the current group size)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive integer (the group size); got {k!r}")
        new = Accountant(self.group_size * int(k), self.method)
        for name in ("_curve_method", "_validated", "_mechs", "_by_name", "_by_id", "_by_eq", "_prepared"):
            setattr(new, name, dict(getattr(self, name)))
        new._keep = list(self._keep)
        new._events = {mid: dict(b) for mid, b in self._events.items()}
        for mid in new._events:
            new._curve(new._mechs[mid])  # prepare the group curves now: errors surface here
        return new

    # -- curves ------------------------------------------------------------------------------------
    def _matrix(self, a: np.ndarray):
        """Per-event contributions count * eps_i(alpha): list of (events, matrix (len(a) x n_i))."""
        parts = []
        for mid, bucket in self._events.items():
            m = self._mechs[mid]
            curve = self._curve(m)
            keys = list(bucket)
            params = {p: np.array([dict(k)[p] for k in keys]) for p in m.params}
            counts = np.array([bucket[k] for k in keys], dtype=float)
            vals = curve.values(a, params)
            with np.errstate(invalid="ignore"):
                parts.append((m, keys, vals * counts[None, :]))
        return parts

    @staticmethod
    def _check_alpha(alpha) -> np.ndarray:
        if isinstance(alpha, (str, bytes)) or np.asarray(alpha).dtype.kind not in "biuf":
            raise ValueError(f"alpha must be a number or an array of numbers; got {alpha!r}")
        a = np.asarray(alpha, dtype=float)
        if np.isnan(a).any() or (a <= 0).any():
            bad = a[np.isnan(a) | (a <= 0)].ravel()[:3]
            raise ValueError(f"alpha must be > 0 (inf allowed; not NaN); got {bad}")
        return a

    def _total(self, a: np.ndarray, expensive: bool = True) -> np.ndarray:
        """sum of count x curve over the events (without the expensive curves when ``expensive`` is False)."""
        total = np.zeros(a.shape)
        for mid, bucket in self._events.items():
            m = self._mechs[mid]
            curve = self._curve(m)
            if not expensive and _is_expensive(curve):
                continue
            keys = list(bucket)
            params = {p: np.array([dict(k)[p] for k in keys]) for p in m.params}
            counts = np.array([bucket[k] for k in keys], dtype=float)
            with np.errstate(invalid="ignore"):
                total = total + curve.values(a, params) @ counts
        total[np.isnan(total)] = np.inf
        return total

    def curve(self, alpha) -> np.ndarray:
        """The composed RDP curve sum_i count_i eps_i(alpha) (Mironov 2017, Prop. 1), vectorised.

        ``alpha`` > 0 (numpy arrays broadcast); alpha = 1 is the sum of KL divergences, alpha = inf the
        pure-DP part (:attr:`max_divergence`). +inf where any event is infinite; NaN never appears
        (it becomes +inf). An empty accountant's curve is 0.
        """
        a = self._check_alpha(alpha)
        total = self._total(a.ravel())
        return total.reshape(a.shape)[()] if a.ndim == 0 else total.reshape(a.shape)

    @property
    def max_divergence(self) -> float:
        """eps(oo) of the composition: the sum of the events' max divergences (inf if any is inf)."""
        return float(self.curve(np.inf))

    pure_epsilon = max_divergence

    def contributions(self, alpha: float) -> list[tuple[Event, float]]:
        """Each distinct event's contribution count * eps_i(alpha) at one order."""
        a = self._check_alpha(np.array([float(alpha)]))
        out = []
        for m, keys, mat in self._matrix(a):
            c = self._curve(m)
            for j, k in enumerate(keys):
                out.append((Event(m, k, self._events[id(m)][k], c.provenance, c.detail), float(mat[0, j])))
        return out

    # -- conversions -------------------------------------------------------------------------------
    def _convert(self, target, kind: str, method: str | None) -> AccountantConversion:
        method = method or self.method
        rule = conversions.get(method)  # ValueError naming the registered methods
        t = read_target(target, kind, NUMPY)
        expensive = any(_is_expensive(self._curve(self._mechs[mid])) for mid in self._events)

        def lower(alphas):
            return objective_values(rule, kind, self._total(np.asarray(alphas), expensive=False), alphas, t, NUMPY)

        pure = self.max_divergence
        best = optimise(rule, kind, t, NUMPY, lambda alphas: self.curve(np.asarray(alphas)),
                        iterations=GOLDEN_ITERATIONS, pure_dp=pure, lower_many=lower if expensive else None)
        alpha = None if best.alpha is None else float(best.alpha)
        return AccountantConversion(float(best.value), alpha, kind, t, method, best.status, best.note,
                                    float(best.rdp_at_alpha), pure, best.evaluations)

    def epsilon(self, delta: float, method: str | None = None) -> AccountantConversion:
        """The smallest epsilon such that the composed curve implies (epsilon, delta)-DP.

        Minimum over continuous alpha > 1 of the registered conversion's formula
        (``method`` defaults to the accountant's) and the pure-DP order; ``delta`` in (0, 1).
        """
        if getattr(self, "non_private", False):
            return self._non_private_conversion(delta, "epsilon", method)
        return self._convert(delta, "epsilon", method)

    def delta(self, epsilon: float, method: str | None = None) -> AccountantConversion:
        """The smallest delta such that the composed curve implies (epsilon, delta)-DP (capped at 1)."""
        if getattr(self, "non_private", False):
            return self._non_private_conversion(epsilon, "delta", method)
        return self._convert(epsilon, "delta", method)

    def _non_private_conversion(self, target, kind: str, method: str | None) -> AccountantConversion:
        """A non-private release (dp_accounting's NonPrivateDpEvent, read by :meth:`from_dp_event`): no
        order is finite, so no guarantee: epsilon = +inf (delta = 1) with status ``infinite``. The target is
        checked as every conversion checks it."""
        from .pld.bounds import _check_target

        t = _check_target(kind, target)
        method = method or self.method
        conversions.get(method)  # ValueError naming the registered methods
        value = math.inf if kind == "epsilon" else 1.0
        note = ("a non-private event (NonPrivateDpEvent, or a noise parameter of 0) is part of the composition: "
                "no (epsilon, delta) guarantee (fail closed)")
        return AccountantConversion(value, None, kind, t, method, ConversionStatus.INFINITE, note, math.inf,
                                    math.inf, 0)

    # -- tight composition: privacy loss distributions (rdpsym.accounting.pld) ---------------------
    def tight_epsilon(self, delta: float, *, step: float = 1e-4):
        """A certified bracket of the exact epsilon(delta) of the composition, from privacy loss
        distributions of the mechanisms' densities (:mod:`rdpsym.accounting.pld.bounds`): ``.upper`` is
        the guarantee, ``.lower`` a certified lower bound; ``.method`` and ``.budget`` say how."""
        from .pld.bounds import accountant_bound

        return accountant_bound(self, "epsilon", delta, step)

    def tight_delta(self, epsilon: float, *, step: float = 1e-4):
        """A certified bracket of the exact delta(epsilon) of the composition (see :meth:`tight_epsilon`)."""
        from .pld.bounds import accountant_bound

        return accountant_bound(self, "delta", epsilon, step)

    @classmethod
    def from_dp_event(cls, event, neighbouring: str = "add_remove") -> "Accountant":
        """An accountant holding the releases of a dp_accounting ``DpEvent`` tree, under the neighbouring
        relation ``"add_remove"`` or ``"replace_one"`` (:mod:`rdpsym.accounting.pld.events`)."""
        from .pld.events import accountant_from_dp_event

        return accountant_from_dp_event(event, neighbouring, cls)

    # -- report ------------------------------------------------------------------------------------
    def report(self, delta: float | None = None, epsilon: float | None = None,
               method: str | None = None) -> "AccountantReport":
        """A report of the (epsilon, delta) guarantee, the optimal order and each event's share there.

        Give ``delta`` (report epsilon) or ``epsilon`` (report delta).
        """
        if (delta is None) == (epsilon is None):
            raise ValueError("report: give exactly one of delta= or epsilon=")
        conv = self.epsilon(delta, method) if delta is not None else self.delta(epsilon, method)
        pure_rows = self.contributions(math.inf)
        if conv.alpha is not None:
            rows = [(e, v, p) for (e, v), (_, p) in zip(self.contributions(conv.alpha), pure_rows)]
        else:
            rows = [(e, math.nan, p) for e, p in pure_rows]
        return AccountantReport(conv, tuple(rows), self.group_size)


@dataclass(frozen=True)
class AccountantReport:
    """The guarantee and a table of events: contribution to the curve at the optimal order, eps(oo)."""

    conversion: AccountantConversion
    rows: tuple  # (Event, contribution at alpha*, contribution at alpha = oo)
    group_size: int = 1
    extra: dict = field(default_factory=dict)

    @property
    def dominant(self) -> Event | None:
        """The event with the largest contribution at the optimal order (None if nothing is finite)."""
        finite = [r for r in self.rows if not math.isnan(r[1])]
        if not finite:
            return None
        return max(finite, key=lambda r: r[1])[0]

    def _headline(self) -> list[str]:
        c = self.conversion
        what = (f"epsilon = {c.value:.6g} at delta = {c.target:g}" if c.kind == "epsilon"
                else f"delta = {c.value:.6g} at epsilon = {c.target:g}")
        alpha = "none (no finite order)" if c.alpha is None else ("oo (pure DP)" if math.isinf(c.alpha) else f"{c.alpha:.6g}")
        lines = [what, f"optimal alpha: {alpha}", f"status: {c.status} — {c.note}"]
        if self.group_size > 1:
            lines.append(f"group privacy: groups of {self.group_size} records")
        d = self.dominant
        if d is not None:
            total = sum(r[1] for r in self.rows)
            share = next(r[1] for r in self.rows if r[0] is d)
            pct = 100 * share / total if total and math.isfinite(total) and math.isfinite(share) else math.nan
            lines.append(f"dominating mechanism at the optimal alpha: {d.label} x {d.count} ({pct:.1f}% of the curve)")
        return lines

    def _table(self):
        total = sum(r[1] for r in self.rows) if self.rows else 0.0
        out = []
        for e, v, p in self.rows:
            pct = 100 * v / total if total and math.isfinite(total) and math.isfinite(v) else math.nan
            out.append((e.label, str(e.count), e.provenance, f"{v:.6g}", f"{pct:.1f}%", f"{p:.6g}"))
        return ("event", "count", "provenance", "count x eps(alpha*)", "share", "count x eps(oo)"), out

    def markdown(self) -> str:
        head, rows = self._table()
        lines = [f"**{line}**" if i == 0 else line for i, line in enumerate(self._headline())]
        text = "\n\n".join(lines) + "\n\n"
        text += "| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n"
        text += "".join("| " + " | ".join(r) + " |\n" for r in rows)
        return text

    _repr_markdown_ = markdown

    def _repr_html_(self) -> str:
        from ..report.display import accountant_report_html

        return accountant_report_html(self)

    def __repr__(self) -> str:
        return f"<AccountantReport {self._headline()[0]}, {len(self.rows)} event(s)>"

    def __str__(self) -> str:
        head, rows = self._table()
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        return "\n".join(self._headline() + ["", fmt.format(*head)] + [fmt.format(*r) for r in rows])

    def __rich__(self):
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        head, rows = self._table()
        table = Table(title="events")
        for h in head:  # a narrow terminal wraps a cell, never cuts it to "gaussian(sig…"
            table.add_column(h, overflow="fold")
        for r in rows:
            table.add_row(*r)
        return Group(*[Text(line) for line in self._headline()], table)

    def as_dict(self) -> dict[str, Any]:
        c = self.conversion
        return {"kind": c.kind, "value": c.value, "target": c.target, "alpha": c.alpha, "status": c.status,
                "method": c.method, "dominant": None if self.dominant is None else self.dominant.label,
                "events": [{"event": e.label, "count": e.count, "provenance": e.provenance,
                            "at_alpha": v, "at_infinity": p} for e, v, p in self.rows]}
