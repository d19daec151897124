r"""Replaying a certificate (:class:`rdpsym.claims.certificate.Certificate`): check it again, no search.

A replay does what the certificate says was done, once, and compares:

* **binding** (every method): at each binding point the divergence's enclosure is computed again and
  compared with the independent numerics of the densities stored in the certificate
  (:meth:`rdpsym.claims.target.Target.independent`, the Def. 4 maximum over the directions; Mironov 2017,
  arXiv:1702.07476 v3): a divergence that is not the mechanism's, or densities that are not the
  divergence's, fail here;
* ``rewrite`` (``proved``): the proof's route is run again on the claim and the divergence
  (:func:`rdpsym.claims.prove.replay`): every step's inputs must be what the claim and the divergence give,
  and re-running each rewrite must give the stored output;
* ``boxes`` (``confirmed``): the boxes must be those the certified pass covers for these parameters and
  this alpha range (:func:`rdpsym.claims.certify.plan`), the rewrite that simplified claim - D is run
  again, and every box of each partition is settled again by ball arithmetic
  (:func:`rdpsym.claims.interval.replay_partition`), its enclosures meeting the stored ones;
* ``counterexample`` (``refuted``): the point lies in the parameters' domains, P and Q are probability
  distributions there, and the enclosures of the claim and of the divergence there show the relation
  failing by more than the tolerance;
* ``points`` (``confirmed`` at points only): at every point the enclosures show the relation holding
  within the tolerance.

Nothing here searches or spends a budget; the few sympy and mpmath steps run under hang guards.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace

import mpmath
import sympy as sp

from .._timeout import StepTimeout, time_limit
from ..derive.result import DivergenceResult, Status
from ..symbols import alpha as ALPHA
from ..numeric.balls import Unsupported, arb_rational, compile_arb, flint_module
from .guard import HangGuardFired, HangGuards
from .orders import ORDER_KEY_CURVE, conditions_at, curve_at, order_from_key, point_alpha
from .partition import ball_from_text, meets
from .rewrite import RULES, ReplayMismatch
from .target import Target

__all__ = ["Replay", "ReplayFailed", "replay", "BINDING_DPS", "BINDING_SECONDS", "mismatch", "Enclosures", "decide",
           "agree", "floor_value", "precision_bits", "numeric_target", "not_a_base_mixture", "rate_outside_unit_interval",
           "replay_subsampling",
           "SUBSAMPLING_ROUTE", "SUBSAMPLING_THEOREM", "THROUGH_D_OO",
           "through_d_oo"]

#: hang guard of the sympy steps of a replay (each typically well under a second), of the independent
#: numerics at a binding point (typically under a second; up to 15 s on an infinite lattice), and of the
#: whole replay (typically a few seconds)
REPLAY_STEP_SECONDS, BINDING_SECONDS, REPLAY_SECONDS = 60.0, 300.0, 900.0
#: digits of the independent numerics at a binding point (agreement is asked to 1e-12, or 4 errors)
BINDING_DPS = 20


def precision_bits(dps: int) -> int:
    """The working precision of the certified pass for ``dps`` digits."""
    return max(128, int(3.33 * dps) + 64)


def floor_value(dps: int) -> float:
    """Values below this are compared absolutely (as :func:`rdpsym.claims.point.violation` does)."""
    return 10.0 ** (-int(0.4 * dps))


@dataclass(frozen=True)
class Replay:
    """The outcome of :meth:`Certificate.check <rdpsym.claims.certificate.Certificate.check>`: ``holds`` and
    why (``reason``), what was checked (``checked``, one line each) and how long it took (``seconds``)."""

    holds: bool
    reason: str
    checked: tuple[str, ...] = ()
    seconds: float = 0.0

    def __bool__(self) -> bool:
        return self.holds


class Enclosures:
    """Enclosures of the claim and of the divergence (+oo outside its finiteness conditions; its limit at a
    removable order) at exact points, by Arb balls, or by sympy's ``evalf`` where Arb has no method for a
    node (a ball of the digits ``evalf`` guarantees with ``strict=True``)."""

    def __init__(self, claim, divergence, conditions, order, parameters, fixed, exceptional, dps):
        self.symbols = (ALPHA,) + tuple(p.symbol for p in parameters)
        self.by_name = {p.name: p.symbol for p in parameters}
        self.fixed, self.dps, self.order, self.prec = dict(fixed), dps, order, precision_bits(dps)
        self.exceptional = {a: v for a, v in exceptional} if order is None else {}
        full, finite = divergence, conditions_at(conditions, order)
        if divergence is not None and finite is not sp.true:
            full = sp.Piecewise((divergence, finite), (sp.oo, True))
        self.exprs = {"claim": claim, "divergence": full}
        self.compiled = {}
        for key, expr in self.exprs.items():
            try:
                self.compiled[key] = compile_arb(expr, self.symbols) if expr is not None else None
            except Unsupported:
                self.compiled[key] = None

    def _subs(self, alpha, values):
        exact = {self.by_name[k]: sp.S(v) for k, v in {**values, **self.fixed}.items()}
        if self.order is None:
            exact[ALPHA] = alpha
        return exact

    def at(self, alpha, values, which: str):
        """The enclosure of ``which`` ("claim" or "divergence") at the point, or None without an expression."""
        expr = self.exprs[which]
        if expr is None:
            return None
        exact = self._subs(alpha, values)
        if which == "divergence" and self.order is None and alpha in self.exceptional:
            return self._evalf(self.exceptional[alpha], exact)
        f = self.compiled[which]
        if f is None or any(not (v.is_Rational or v == sp.oo) for v in exact.values()):
            return self._evalf(expr, exact)
        flint = flint_module()
        old = flint.ctx.prec
        flint.ctx.prec = self.prec
        try:
            env = {s: (flint.arb.pos_inf() if v == sp.oo else arb_rational(sp.Rational(v))) for s, v in exact.items()}
            if self.order is not None:
                env[ALPHA] = flint.arb.pos_inf() if self.order == sp.oo else arb_rational(sp.Rational(self.order))
            return f(env)
        finally:
            flint.ctx.prec = old

    def _evalf(self, expr, exact):
        flint = flint_module()
        subs = dict(exact)
        e = expr
        if subs.get(ALPHA) == sp.oo:
            e, subs = e.subs(ALPHA, sp.oo), {k: v for k, v in subs.items() if k != ALPHA}
        try:
            val = e.evalf(self.dps, subs=subs, strict=True)
        except (ArithmeticError, ValueError, TypeError, RecursionError):
            return flint.arb.nan()
        if not (val.is_number and val.is_extended_real is True):
            return flint.arb.nan()
        if val.is_infinite:
            return flint.arb.pos_inf() if val.is_extended_positive else flint.arb.neg_inf()
        old = flint.ctx.prec
        flint.ctx.prec = self.prec
        try:
            with mpmath.workdps(self.dps + 10):
                mid = flint.arb(mpmath.nstr(mpmath.mpf(val), self.dps + 5, strip_zeros=False))
            # strict evalf guarantees dps significant digits
            rad = abs(mid) * flint.arb(10) ** (1 - self.dps) + flint.arb(10) ** (-(self.dps + 5))
            return flint.arb(mid.mid(), (rad + mid.rad()).upper())
        finally:
            flint.ctx.prec = old

    def pair(self, alpha, values):
        return self.at(alpha, values, "claim"), self.at(alpha, values, "divergence")


def decide(relation: str, d, c, tol: float, floor: float) -> str:
    """``"fails"`` when the balls show ``d REL c`` failing by more than ``tol`` (relative), ``"holds"`` when
    they show it holding within ``tol``, else ``"undecided"``."""
    flint = flint_module()
    if d is None or c is None or d.is_nan() or c.is_nan():
        return "undecided"
    if not (d.is_finite() and c.is_finite()):
        d_inf, c_inf = not d.is_finite(), not c.is_finite()
        if d_inf and c_inf:
            return "holds" if bool(d > 0) and bool(c > 0) else "undecided"
        if relation == "<=":
            fails = bool(d > 0) if d_inf else not bool(c > 0)
        elif relation == ">=":
            fails = (not bool(d > 0)) if d_inf else bool(c > 0)
        else:
            fails = True
        return "fails" if fails else "holds"
    gap = c - d
    violation = -gap if relation == "<=" else (gap if relation == ">=" else abs(gap))
    tol_b, floor_b = flint.arb(tol), flint.arb(floor)
    if bool(violation > tol_b * d.abs_upper().max(c.abs_upper()).max(floor_b)):
        return "fails"
    if bool(violation <= tol_b * d.abs_lower().max(c.abs_lower()).max(floor_b)):
        return "holds"
    return "undecided"


def numeric_target(cert, directions) -> Target:
    """A :class:`Target` over the certificate's divergence and the given directions, for its independent
    numerics (a curve without a closed form is recomputed by the reference method)."""
    order = cert.order
    one_order = order not in (None, 1, sp.oo)
    # a claim about one other order a: its divergence is the curve at a, a formula without alpha, which as a
    # curve has that value at a (the independent numerics are taken at a; nothing else is evaluated)
    result = DivergenceResult(
        expr=cert.divergence if order is None or one_order else None,
        status=Status.CLOSED_FORM if cert.divergence is not None else Status.NUMERIC_ONLY, conditions=cert.conditions,
        kl=cert.divergence if order == 1 else None,
        max_divergence=cert.divergence if order == sp.oo else cert.max_divergence,
        symbols=tuple(p.symbol for p in cert.parameters))
    mech = cert.mechanism
    dirs = tuple((P, Q, mech["variable"], mech["support"]) for P, Q in directions)
    seen = []
    for P, Q, x, support in dirs:
        for dens in (P, Q):
            if (dens, x, support) not in seen:
                seen.append((dens, x, support))
    return Target(result, cert.parameters, dirs, label=cert.target, distributions=tuple(seen))


# ---------------------------------------------------------------------------------------------------
# the replay
# ---------------------------------------------------------------------------------------------------
#: proof routes that use D_oo: its value is then bound to the densities at order oo too
THROUGH_D_OO = ("max_divergence", "pure_dp_zcdp")


def through_d_oo(route: str, steps) -> bool:
    """Whether a proof by ``route`` with ``steps`` uses D_oo: the route itself, or a route it chose for a
    branch or a case (each recorded as a ``route_choice`` step)."""
    chosen = {str(st.inputs[1]) for st in steps if st.rule == "route_choice" and len(st.inputs) == 2}
    return bool(({route} | chosen) & set(THROUGH_D_OO))
#: the certificate route of a proof through subsampling (:mod:`rdpsym.claims.subsampling`)
SUBSAMPLING_ROUTE = "subsampling"
#: the theorem of a proof through subsampling, as the proof and its replay state it
SUBSAMPLING_THEOREM = (
    "each pair of the subsampled mechanism is a mixture ((1 - q) X + q Y, X) or (X, (1 - q) X + q Y) of a base pair "
    "(X, Y) with (X, X), so by joint quasi-convexity (van Erven and Harremoës 2014, Thm. 13) its divergence is at "
    "most the base's at every order")


class ReplayFailed(Exception):
    """The certificate does not hold: the message says where."""


def replay(cert) -> Replay:
    """Replay ``cert`` (module docstring), all of it under a hang guard of :data:`REPLAY_SECONDS`."""
    started = time.perf_counter()
    checked: list[str] = []
    guards = HangGuards()

    def steps():
        _check_consistency(cert)
        enclosures = Enclosures(cert.claim, cert.divergence, cert.conditions, cert.order, cert.parameters, cert.fixed,
                                cert.exceptional, cert.dps)
        checked.extend(_check_binding(cert, guards))
        method = {"rewrite": _rewrite, "boxes": _boxes, "counterexample": _counterexample, "points": _points}
        return method[cert.method](cert, enclosures, guards, checked)

    limit = time_limit(REPLAY_SECONDS, clock="wall")  # a hang guard: replay runs no budgeted step
    try:
        try:
            with limit:
                reason = steps()
        except StepTimeout as exc:
            if exc.limit_id != limit.id:
                raise  # an enclosing limit: not the replay's to handle
            raise HangGuardFired(REPLAY_SECONDS, "the replay of the certificate") from None
    except (ReplayFailed, ReplayMismatch, HangGuardFired) as exc:
        return Replay(False, f"does not hold: {exc}", tuple(checked + guards.evidence()),
                      time.perf_counter() - started)
    return Replay(True, reason, tuple(checked + guards.evidence()), time.perf_counter() - started)


def _check_consistency(cert) -> None:
    want = {"proved": ("rewrite",), "confirmed": ("boxes", "points"), "refuted": ("counterexample",)}[cert.verdict]
    if cert.method not in want:
        raise ReplayFailed(f"a {cert.verdict} verdict is not shown by the method {cert.method!r}")
    through_base = cert.method == "rewrite" and cert.data.get("route") == SUBSAMPLING_ROUTE
    if cert.divergence is None and cert.method not in ("points", "counterexample") and not through_base:
        raise ReplayFailed("a curve without a closed form has no proof or certified boxes")
    names = {p.name for p in cert.parameters}
    stray = set(cert.fixed) - names
    if stray:
        raise ReplayFailed(f"fixed names {sorted(stray)}, which are not parameters")
    symbols = {p.symbol for p in cert.parameters} | {ALPHA}
    for what, expr in (("claim", cert.claim), ("divergence", cert.divergence)):
        if expr is not None and not expr.free_symbols <= symbols:
            raise ReplayFailed(f"the {what} has symbols {sorted(map(str, expr.free_symbols - symbols))} that are not "
                          "parameters or alpha")
    for name, value in cert.fixed.items():
        p = next(p for p in cert.parameters if p.name == name)
        if p.domain.contains(value) is not sp.true:
            raise ReplayFailed(f"the fixed value {name} = {sp.sstr(value)} is not in {sp.sstr(p.domain)}")
    lo, hi = cert.alpha_range
    if not (bool(lo >= 0) and bool(lo < hi)):
        raise ReplayFailed(f"the alpha range ({sp.sstr(lo)}, {sp.sstr(hi)}) is not an interval of orders")
    _check_one_order(cert)


def _check_one_order(cert) -> None:
    """A claim about one order a != 1, oo: its divergence is the value at a of the curve it carries, or, without
    a curve, an exact piece, which only integer orders >= 2 and removable orders have. Without this the
    order could be changed alone: the divergence (a formula without alpha) would not notice."""
    order = cert.order
    if order in (None, 1, sp.oo) or cert.divergence is None:
        return
    if cert.curve is not None:
        if ALPHA not in cert.curve.free_symbols and not cert.exceptional:
            raise ReplayFailed("the curve does not depend on alpha: it ties the divergence to no order")
        if curve_at(cert.curve, order, cert.exceptional, cert.conditions) != cert.divergence:
            raise ReplayFailed(f"the divergence is not the curve's value at the order {sp.sstr(order)}")
    elif not ((order.is_Integer and order >= 2) or any(a == order for a, _ in cert.exceptional)):
        raise ReplayFailed(f"a divergence at the order {sp.sstr(order)} without its curve: only integer orders >= 2 "
                           "and removable orders have exact pieces")


#: the numerics a binding point records where P and Q are one distribution: every divergence is 0 there
#: (Mironov 2017, Prop. 8), which binds a counterexample's value, never the formula
PROP_8_NUMERIC = {"value": "0", "error": "0"}


def _check_binding(cert, guards: HangGuards) -> list[str]:
    """The divergence against independent numerics of the densities at each binding point."""
    if cert.mechanism is None:
        return ["not bound to densities: the target had none (the certificate is about the formula given as "
                "the divergence)"]
    if not cert.binding:
        raise ReplayFailed("no binding point: the divergence was not checked against the mechanism's densities")
    if not any(b["claim"] is not None for b in cert.binding):
        raise ReplayFailed("no binding point holds the claim's enclosure")
    curve_orders = {b["alpha"] for b in cert.binding if b["order"] == ORDER_KEY_CURVE}
    # a proof of an identity or a bound in alpha is about every order: bound at one order, the value there (a
    # formula without alpha) could pass for the curve; boxes and points name their orders themselves
    if cert.order is None and cert.divergence is not None and cert.method == "rewrite" and len(curve_orders) < 2:
        raise ReplayFailed("the curve is bound to the densities at fewer than two orders: the value at one order "
                           "could pass for the curve")
    lines, bound = [], 0
    for i, b in enumerate(cert.binding):
        order = order_from_key(b["order"], f"binding[{i}].order")
        if order != cert.order and order != sp.oo:
            raise ReplayFailed(f"binding point {i + 1}: order {b['order']} is neither the certificate's nor oo")
        expr = cert.divergence if order == cert.order else cert.max_divergence
        stored = ball_from_text(b["divergence"], f"binding[{i}].divergence")
        if expr is None and (order != cert.order or cert.divergence is not None):
            raise ReplayFailed(f"binding point {i + 1}: the certificate has no expression for order {b['order']}")
        if expr is None:
            got = stored  # a numeric curve: its certified value there, compared with the reference method
        else:
            enc = Enclosures(expr, expr, cert.conditions, order, cert.parameters, cert.fixed, cert.exceptional,
                             cert.dps)
            got = enc.at(b["alpha"], b["values"], "divergence")
        if not meets(got, stored):
            raise ReplayFailed(f"binding point {i + 1}: the divergence's enclosure does not meet the stored one "
                          "(another divergence)")
        if b["claim"] is not None:
            claim = Enclosures(cert.claim, None, sp.true, order, cert.parameters, cert.fixed, (), cert.dps)
            if not meets(claim.at(b["alpha"], b["values"], "claim"), ball_from_text(b["claim"], f"binding[{i}].claim")):
                raise ReplayFailed(f"binding point {i + 1}: the claim's enclosure does not meet the stored one (another claim)")
        _check_point_in_domains(cert, b["values"], f"binding point {i + 1}")
        tgt = numeric_target(cert, b["directions"])
        allv = {**b["values"], **cert.fixed}
        where = ", ".join([f"alpha = {sp.sstr(b['alpha'])}" if order is None else f"order {b['order']}"]
                          + [f"{k} = {sp.sstr(v)}" for k, v in b["values"].items()])
        if tgt.one_distribution_at(allv):
            if b["numeric"] != PROP_8_NUMERIC or not meets(got, flint_module().arb(0)):
                raise ReplayFailed(f"binding point {i + 1}: P and Q are one distribution there, where every "
                                   "divergence is 0, but the stored or derived divergence is not 0")
            lines.append(f"binding point {i + 1} ({where}): P and Q are one distribution there, so every divergence "
                         "is 0 (Mironov 2017, Prop. 8), and the divergence's enclosure holds 0")
            continue
        bound += 1
        value, error = _independent_numerics(tgt, order, b["alpha"], allv, guards, f"binding point {i + 1}")
        # a numeric curve's stored value is certified to the check's digits: it must agree to them, so that a
        # value at another order (or another parameter point) cannot pass for it
        agree(got, value, error, f"binding point {i + 1}",
              relative=min(1e-12, 10.0 ** (-cert.digits)) if expr is None else 1e-12)
        lines.append(f"binding point {i + 1} ({where}): the divergence agrees with the independent "
                     f"numerics of the densities ({mpmath.nstr(value, 15)} +- {mpmath.nstr(error, 2)})")
    if not bound:
        raise ReplayFailed("every binding point has P and Q one distribution, where every divergence is 0: they "
                           "bind nothing")
    lines.append(_drawn_point(cert, guards))
    return lines


#: the span of orders a drawn binding point is taken from, above the range's lower end
DRAWN_ORDER_SPAN = 4
#: the denominator of the drawn order and values: exact numbers with large denominators make the independent
#: numerics of some densities take minutes (a two-dimensional Gaussian: 168 s at rho = -929/4096 against 6 s at
#: rho = -1/4)
DRAWN_DENOMINATOR = 64


def _fractions(text: str, n: int) -> list[sp.Rational]:
    """``n`` fractions k/64 in (0, 1) from a digest of ``text``."""
    raw = hashlib.shake_256(text.encode()).digest(4 * n)
    return [sp.Rational(1 + int.from_bytes(raw[4 * k:4 * k + 4], "big") % (DRAWN_DENOMINATOR - 1), DRAWN_DENOMINATOR)
            for k in range(n)]


def _drawn_value(p, u: sp.Rational):
    """A value of ``p`` in its typical range at the fraction ``u`` (log-uniform for a scale), a fraction
    with a denominator of at most 64; one of its typical values for a parameter that is not an interval
    (an integer count)."""
    if not isinstance(p.domain, sp.Interval):
        options = p.typical_values(5)
        return options[int(u * len(options)) % len(options)]
    lo, hi = (float(t) for t in p.typical)
    v = lo * (hi / lo) ** float(u) if p.log_scale and lo > 0 else lo + (hi - lo) * float(u)
    return sp.Rational(v).limit_denominator(DRAWN_DENOMINATOR)


def _drawn_point(cert, guards: HangGuards) -> str:
    """One more binding point, drawn from a digest of the claim and the divergence: the order (for a curve)
    and the free parameters, each one of 63 values. The stored points are the certificate's own; a
    divergence altered to agree with the densities there (D + (alpha - 2)(alpha - 5)/100 against points at
    orders 2 and 5) must also agree at a point fixed only once the claim and the divergence are, which moves
    with every alteration. This catches an alteration made for the stored points; one tried again and again
    until the drawn point falls on its zeros is not excluded (a few dozen tries). The full binding is
    :func:`rdpsym.check_claim` with ``replay=``, which derives the divergence again."""
    if cert.divergence is None:
        return "no drawn binding point: a numeric curve's values are its binding points"
    if isinstance(cert.mechanism["variable"], tuple):
        # the independent numerics of vector densities take 3-20 s a point (cubature of each direction): a
        # third point would take the replay past its 10 s
        return "no drawn binding point: vector densities are bound at the stored points only"
    text = "\n".join(sp.srepr(e) for e in (cert.claim, cert.divergence, cert.max_divergence, cert.conditions,
                                             sp.S(cert.order) if cert.order is not None else sp.S.NaN))
    free = cert.free
    u = _fractions(text, 1 + len(free))
    order = cert.order
    if order is None:
        lo, hi = (sp.S(e) for e in cert.alpha_range)
        top = min(hi, lo + DRAWN_ORDER_SPAN)
        alpha = lo + (top - lo) * u[0]  # 63 orders: a span of 4 in steps of 1/16
        if alpha == 1 or alpha in {a for a, _ in cert.exceptional}:
            return f"no drawn binding point: the drawn order {sp.sstr(alpha)} is a special one"
    else:
        alpha = point_alpha(order, None)
    values = {p.name: _drawn_value(p, f) for p, f in zip(free, u[1:])}
    try:
        _check_point_in_domains(cert, values, "the drawn binding point")
    except ReplayFailed:
        return "no drawn binding point: the drawn values do not lie in the parameters' domains"
    stored = next((b for b in cert.binding if order_from_key(b["order"], "binding.order") == order), cert.binding[0])
    tgt = numeric_target(cert, stored["directions"])
    allv = {**values, **cert.fixed}
    where = ", ".join([f"alpha = {_short(alpha)}"] + [f"{k} = {_short(v)}" for k, v in values.items()])
    if tgt.one_distribution_at(allv):
        return f"no drawn binding point: P and Q are one distribution at the drawn point ({where})"
    enc = Enclosures(cert.divergence, cert.divergence, cert.conditions, order, cert.parameters, cert.fixed,
                     cert.exceptional, cert.dps)
    got = enc.at(alpha, values, "divergence")
    if got is None:
        raise ReplayFailed(f"the drawn binding point ({where}): the divergence has no enclosure there")
    value, error = _independent_numerics(tgt, order, alpha, allv, guards, f"the drawn binding point ({where})")
    agree(got, value, error, f"the drawn binding point ({where})")
    return (f"drawn binding point ({where}, from a digest of the claim and the divergence): the divergence agrees "
            f"with the independent numerics of the densities ({mpmath.nstr(value, 15)} +- {mpmath.nstr(error, 2)})")


def _short(v) -> str:
    return sp.sstr(v) if not v.is_Rational or v.q < 10**6 else mpmath.nstr(mpmath.mpf(v.p) / v.q, 12)


def _independent_numerics(tgt, order, alpha, values, guards, where: str):
    """``(value, error)`` of the independent numerics of ``tgt``'s densities at the point, under the binding's
    hang guard; ``ReplayFailed`` when they fail or do not converge (numerics that fail bind nothing)."""
    try:
        value, error, converged, detail = guards.run(f"the independent numerics at {where}", BINDING_SECONDS,
                                                     tgt.independent, order, alpha, values, BINDING_DPS)
    except HangGuardFired:
        raise
    except Exception as exc:  # noqa: BLE001 - numerics that fail bind nothing: the certificate fails closed
        raise ReplayFailed(f"{where}: the independent numerics failed: {exc}") from None
    if value is None or not converged:
        raise ReplayFailed(f"{where}: the independent numerics did not converge ({detail})")
    return value, error


def agree(ball, value, error, where: str, relative: float = 1e-12) -> None:
    """``ReplayFailed`` unless the enclosure ``ball`` holds the numeric ``value +- error`` (within ``relative``)."""
    flint = flint_module()
    if ball.is_nan():
        raise ReplayFailed(f"{where}: the divergence has no value there")
    if mpmath.isinf(value) or not ball.is_finite():
        if not (mpmath.isinf(value) and not ball.is_finite() and (value > 0) == bool(ball > 0)):
            raise ReplayFailed(f"{where}: the divergence is {ball} but the numerics give {value}")
        return
    with mpmath.workdps(40):
        v = flint.arb(mpmath.nstr(mpmath.mpf(value), 35))
        scale = max(abs(mpmath.mpf(value)), mpmath.mpf(10) ** -12)
        allowed = flint.arb(mpmath.nstr(max(mpmath.mpf(relative) * scale, 4 * mpmath.mpf(error)), 10))
    if not bool(abs(ball - v) <= allowed + ball.rad() + v.rad()) and not meets(ball, v):
        raise ReplayFailed(f"{where}: the divergence ({ball.mid().str(15, radius=False)}) is not the "
                           f"densities' ({mpmath.nstr(value, 15)} +- {mpmath.nstr(error, 2)})")


def _check_point_in_domains(cert, values, where: str) -> None:
    by_name = {p.name: p for p in cert.parameters}
    free = {p.name for p in cert.free}
    if set(values) != free:
        raise ReplayFailed(f"{where}: values for {sorted(values)}, but the free parameters are {sorted(free)}")
    for name, v in values.items():
        if by_name[name].domain.contains(v) is not sp.true:
            raise ReplayFailed(f"{where}: {name} = {sp.sstr(v)} is not in {sp.sstr(by_name[name].domain)}")


def _check_alpha(cert, alpha, where: str) -> None:
    if cert.order is None:
        lo, hi = cert.alpha_range
        if not ((alpha > lo) is sp.true and (alpha < hi) is sp.true) and alpha != hi:
            raise ReplayFailed(f"{where}: alpha = {sp.sstr(alpha)} is outside ({sp.sstr(lo)}, {sp.sstr(hi)})")


# -- the methods ------------------------------------------------------------------------------------
def _rewrite(cert, enclosures, guards, checked) -> str:
    from .prove import both_directions, proof_context, replay as replay_route

    if cert.data["route"] == SUBSAMPLING_ROUTE:
        return replay_subsampling(cert, guards, checked, REPLAY_STEP_SECONDS)

    context = proof_context(cert.claim, cert.divergence, cert.relation, cert.order, cert.fixed, cert.parameters,
                            cert.conditions, cert.alpha_range, max_divergence=cert.max_divergence,
                            of_distributions=cert.mechanism is not None,
                            both_directions=any(b["order"] == "oo" and both_directions(b["directions"])
                                                for b in cert.binding))
    route, steps = cert.data["route"], cert.data["steps"]
    if (through_d_oo(route, steps) and cert.mechanism is not None
            and not any(b["order"] == "oo" for b in cert.binding)):
        raise ReplayFailed("a proof through D_oo needs D_oo bound to the densities (a binding point at order oo)")
    text = replay_route(route, steps, context, seconds=REPLAY_STEP_SECONDS, guards=guards)
    checked.append(f"the {len(steps)} rewrite step(s) of the route {route} re-run and equal to the stored ones")
    return text


def _boxes(cert, enclosures, guards, checked) -> str:
    from .certify import plan
    from .interval import replay_partition

    data = cert.data
    runs = plan(cert.free, cert.order, cert.alpha_range)
    if len(runs) != len(data["runs"]):
        raise ReplayFailed(f"the certified pass covers {len(runs)} box(es) here; the certificate has {len(data['runs'])}")
    truth_expr = cert.divergence
    held_fixed = {p.symbol: sp.S(cert.fixed[p.name]) for p in cert.parameters if p.name in cert.fixed}
    difference = None
    step = data["difference"]
    if step is not None:
        gap = (cert.claim - truth_expr).xreplace(held_fixed)
        if step.rule not in ("cancel_expand", "simplify") or step.inputs != (gap,):
            raise ReplayFailed("the difference's rewrite is not of claim - divergence")
        try:
            out = guards.run(f"the difference's rewrite ({step.rule})", REPLAY_STEP_SECONDS, RULES[step.rule], gap)
        except HangGuardFired:
            raise
        except Exception as exc:  # noqa: BLE001 - a rewrite that fails now shows nothing
            raise ReplayFailed(f"the difference's rewrite ({step.rule}) failed: {exc}") from None
        if out != step.output:
            raise ReplayFailed(f"the difference's rewrite ({step.rule}) gives another expression than the stored one")
        difference = step.output
    symbols = enclosures.symbols
    try:
        f_claim = compile_arb(cert.claim, symbols)
        f_truth = compile_arb(enclosures.exprs["divergence"], symbols)
        f_diff = compile_arb(difference, symbols) if difference is not None else None
    except Unsupported as exc:
        raise ReplayFailed(f"ball arithmetic has no method for a node: {exc}") from None
    tol, floor, prec = 10.0 ** (-cert.digits), floor_value(cert.dps), precision_bits(cert.dps)
    total = 0
    for i, (run, stored) in enumerate(zip(runs, data["runs"])):
        partition = stored["partition"]
        if partition.root != tuple(a.u_range for a in run.axes):
            raise ReplayFailed(f"box {i + 1}: the partition is not of the box the certified pass covers "
                          f"({', '.join(a.describe() for a in run.axes)})")
        held = {s: arb_rational(sp.Rational(v)) for s, v in {**held_fixed, **run.held}.items()}
        ok, why = replay_partition(partition, f_claim, f_truth, cert.relation, run.axes,
                                   alpha=ALPHA if run.alpha else None, fixed=held, tol=tol, floor=floor,
                                   difference=f_diff, prec=prec, exact_only=stored["status"] == "proved")
        if not ok:
            raise ReplayFailed(f"box {i + 1} ({', '.join(a.describe() for a in run.axes)}): {why}")
        total += len(partition.leaves)
    where = "; ".join(", ".join(a.describe() for a in run.axes) + (f" ({run.note})" if run.note else "") for run in runs)
    checked.append(f"{total} box(es) of {len(runs)} partition(s) settled again by ball arithmetic")
    within = "exactly" if all(r["status"] == "proved" for r in data["runs"]) else f"within 1e-{cert.digits} (relative)"
    return (f"holds: the relation holds {within} on every box of the certified pass ({where}); outside these "
            "boxes the claim was checked at points only (a confirmed verdict, not a proof)")


def _counterexample(cert, enclosures, guards, checked) -> str:
    pt = cert.data
    alpha, values = pt["alpha"], pt["values"]
    _check_point_in_domains(cert, values, "the counterexample")
    _check_alpha(cert, alpha, "the counterexample")
    c, d = enclosures.pair(alpha, values)
    if cert.divergence is None:
        # a numeric curve: the certified value there, bound to the densities by the binding point below
        d = ball_from_text(pt["divergence"], "counterexample.divergence")
    for what, got, key in (("claim", c, "claim"), ("divergence", d, "divergence")):
        if not meets(got, ball_from_text(pt[key], f"counterexample.{key}")):
            raise ReplayFailed(f"the {what}'s enclosure at the counterexample does not meet the stored one (another {what})")
    state = decide(cert.relation, d, c, 10.0 ** (-cert.digits), floor_value(cert.dps))
    if state != "fails":
        raise ReplayFailed(f"the enclosures at the counterexample do not show the relation failing ({state})")
    if cert.mechanism is not None:
        at = [b for b in cert.binding if b["values"] == values and (cert.order is not None or b["alpha"] == alpha)]
        if not at:
            raise ReplayFailed("the divergence is not bound to the densities at the counterexample")
        tgt = numeric_target(cert, at[0]["directions"])
        ok = guards.run("the check that P and Q are distributions", BINDING_SECONDS, tgt.distributions_ok,
                        {**values, **cert.fixed})
        if ok is not True:
            raise ReplayFailed("P and Q could not be shown to be probability distributions at the counterexample")
        checked.append("P and Q are probability distributions at the counterexample")
    where = ", ".join([f"alpha = {sp.sstr(alpha)}"] * (cert.order is None) + [f"{k} = {sp.sstr(v)}" for k, v in values.items()])
    checked.append(f"at {where}: claim in {c.str(12)}, divergence in {d.str(12)}")
    return f"holds: the relation fails at {where} by more than 1e-{cert.digits} (relative), shown by ball arithmetic"


def _points(cert, enclosures, guards, checked) -> str:
    tol, floor = 10.0 ** (-cert.digits), floor_value(cert.dps)
    for i, pt in enumerate(cert.data):
        alpha, values = pt["alpha"], pt["values"]
        _check_point_in_domains(cert, values, f"point {i + 1}")
        _check_alpha(cert, alpha, f"point {i + 1}")
        c = enclosures.at(alpha, values, "claim")
        if not meets(c, ball_from_text(pt["claim"], f"points[{i}].claim")):
            raise ReplayFailed(f"point {i + 1}: the claim's enclosure does not meet the stored one (another claim)")
        stored_d = ball_from_text(pt["divergence"], f"points[{i}].divergence")
        d = enclosures.at(alpha, values, "divergence") if cert.divergence is not None else stored_d
        if not meets(d, stored_d):
            raise ReplayFailed(f"point {i + 1}: the divergence's enclosure does not meet the stored one (another divergence)")
        state = decide(cert.relation, d, c, tol, floor)
        if state != "holds":
            raise ReplayFailed(f"point {i + 1}: the enclosures do not show the relation holding ({state})")
    checked.append(f"{len(cert.data)} point(s) re-evaluated: the relation holds within 1e-{cert.digits} at each")
    how = ("the divergence's certified numeric values, bound to the densities at the binding points"
           if cert.divergence is None else "ball arithmetic")
    return (f"holds: the relation holds within 1e-{cert.digits} (relative) at the {len(cert.data)} compared points "
            f"({how}); between them it was not certified (a confirmed verdict at points only)")


# ---------------------------------------------------------------------------------------------------
# is a certificate about this check?
# ---------------------------------------------------------------------------------------------------
def mismatch(cert, tgt, claim, relation, order, alpha_range, fixed, digits, dps) -> str | None:
    """The first way in which ``cert`` is not about this check (a claim ``claim`` of ``relation`` on the
    :class:`~rdpsym.claims.target.Target` ``tgt``), or None when it is: the same claim, divergence,
    conditions, D_oo, parameters (domains and typical ranges), fixed values, alpha range, tolerance, and
    the same densities at its binding points."""
    r = tgt.result
    lo, hi = (sp.S(v) for v in alpha_range)
    mine = [("relation", cert.relation, relation), ("order", cert.order, order),
            ("alpha range", tuple(cert.alpha_range), (lo, hi)), ("claim", cert.claim, claim),
            ("divergence", cert.divergence, tgt.truth_expr(order)), ("finiteness conditions", cert.conditions, r.conditions),
            ("D_oo", cert.max_divergence, r.max_divergence),
            ("fixed values", {k: sp.S(v) for k, v in cert.fixed.items()}, {k: sp.S(v) for k, v in fixed.items()}),
            ("tolerance", (cert.digits, cert.dps), (int(digits), dps)),
            ("parameters", [(p.name, p.symbol, p.domain, tuple(map(float, p.typical)), bool(p.log_scale))
                            for p in cert.parameters],
             [(p.name, p.symbol, p.domain, tuple(map(float, p.typical)), bool(p.log_scale)) for p in tgt.parameters])]
    for what, theirs, ours in mine:
        if theirs != ours:
            return f"its {what} differs"
    if (cert.mechanism is None) != (not tgt.directions):
        return "it has densities where the target has none, or none where it has"
    if cert.mechanism is not None:
        _, _, x, support = tgt.directions[0]
        if (cert.mechanism["variable"], cert.mechanism["support"]) != (x, support):
            return "its densities' variable or support differ"
        for i, b in enumerate(cert.binding):
            allv = {**b["values"], **cert.fixed}
            now = {(P, Q) for P, Q, _, _ in tgt.directions_at(allv)}
            if set(b["directions"]) != now:
                return f"its densities at binding point {i + 1} are not the mechanism's"
    return None


# ---------------------------------------------------------------------------------------------------
# the route through subsampling (:mod:`rdpsym.claims.subsampling`)
# ---------------------------------------------------------------------------------------------------
def replay_subsampling(cert, guards: HangGuards, checked: list, step_seconds: float) -> str:
    """Replay a proof through subsampling (:mod:`rdpsym.claims.subsampling`): re-run the base's proof, bind the
    base's curve to its densities, check every direction is a mixture of a base direction with a common
    component, and the claim above the subsampled curve at the binding points; :class:`ReplayFailed` when not."""
    base = cert.data["base"]
    if cert.relation != "<=":
        raise ReplayFailed("a proof through subsampling shows upper bounds only")
    if cert.mechanism is None:
        raise ReplayFailed("a proof through subsampling needs the mechanism's densities")
    from .prove import both_directions, proof_context, replay as replay_route

    context = proof_context(cert.claim, base["divergence"], "<=", cert.order, cert.fixed, cert.parameters, sp.true,
                            cert.alpha_range, max_divergence=base["max_divergence"], of_distributions=True,
                            both_directions=both_directions(base["directions"]))
    text = replay_route(base["route"], cert.data["steps"], context, seconds=step_seconds, guards=guards)
    checked.append(f"the {len(cert.data['steps'])} rewrite step(s) of the base's route {base['route']} re-run and equal "
                   "to the stored ones")
    if rate_outside_unit_interval(base["rate"], cert.parameters):
        raise ReplayFailed(f"the sampling rate {sp.sstr(base['rate'])} is not a number in [0, 1] or a parameter with a "
                           "domain inside [0, 1]")
    checked.extend(_replay_base_binding(cert, base, guards))
    checked.append(_check_mixtures(cert, base))
    tol = 10.0 ** (-cert.digits)
    for i, b in enumerate(cert.binding):
        d, c = ball_from_text(b["divergence"]), ball_from_text(b["claim"])
        if c is None or decide("<=", d, c, tol, floor_value(cert.dps)) != "holds":
            raise ReplayFailed(f"binding point {i + 1}: the claim is not above the subsampled curve's certified value")
    checked.append(f"the claim is above the subsampled curve at the {len(cert.binding)} binding point(s)")
    return f"{text.removesuffix('.')}, for the base mechanism's curve; and {SUBSAMPLING_THEOREM}"


def _replay_base_binding(cert, base, guards) -> list[str]:
    """Each base binding point: the base's curve (its D_oo at a point of order oo) against the independent
    numerics of the base's directions."""
    points = base["points"]
    if not points or (points[0]["alpha"] == sp.oo and cert.order != sp.oo):
        raise ReplayFailed("the base's curve has no binding point at the certificate's order")
    finite_orders = {p["alpha"] for p in points if p["alpha"] != sp.oo}
    if cert.order is None and len(finite_orders) < 2:
        raise ReplayFailed("the base's curve is bound to its densities at fewer than two orders: its value at one "
                           "order could pass for the curve")
    if through_d_oo(base["route"], cert.data["steps"]) and not any(p["alpha"] == sp.oo for p in points):
        raise ReplayFailed("a base proof through D_oo needs the base's D_oo bound to its densities (a point at order oo)")
    lines = []
    free = {p.name for p in cert.free}
    for i, point in enumerate(points):
        where = f"the base's binding point {i + 1}"
        values = point["values"]
        if set(values) != free:
            raise ReplayFailed(f"{where} has values for {sorted(values)}, but the free parameters are {sorted(free)}")
        for name, v in values.items():
            domain = next(p.domain for p in cert.parameters if p.name == name)
            if domain.contains(v) is not sp.true:
                raise ReplayFailed(f"{where}: {name} = {sp.sstr(v)} is not in {sp.sstr(domain)}")
        order = sp.oo if point["alpha"] == sp.oo else cert.order
        if order is not None and point["alpha"] != order:
            raise ReplayFailed(f"{where}: alpha = {sp.sstr(point['alpha'])} is not the certificate's order")
        expr = base["max_divergence"] if order == sp.oo else base["divergence"]
        if expr is None:
            raise ReplayFailed(f"{where}: the base has no D_oo")
        ball = Enclosures(expr, expr, sp.true, order, cert.parameters, cert.fixed, (), cert.dps).at(
            point["alpha"], values, "divergence")
        if not meets(ball, ball_from_text(point["enclosure"], f"proof.base.points[{i}].enclosure")):
            raise ReplayFailed(f"{where}: the base's curve does not meet its stored enclosure (another curve)")
        tgt = numeric_target(replace(cert, divergence=expr, order=None), base["directions"])
        value, error = _independent_numerics(tgt, order, point["alpha"], {**values, **cert.fixed}, guards, where)
        agree(ball, value, error, where)
        lines.append(f"the base's {'D_oo' if order == sp.oo else 'curve'} agrees with the independent numerics of its "
                     f"densities at alpha = {sp.sstr(point['alpha'])}, {values} ({mpmath.nstr(value, 15)} +- "
                     f"{mpmath.nstr(error, 2)})")
    return lines


def rate_outside_unit_interval(rate, parameters) -> bool:
    """Whether a sampling rate is not known to lie in [0, 1]: a number outside it, or a symbol that is no
    parameter's or whose parameter's domain is not inside [0, 1] (a mixture weight must be a probability)."""
    rate = sp.S(rate)
    if rate.is_number:
        return not (rate.is_real and bool(rate >= 0) and bool(rate <= 1))
    found = [p for p in parameters if p.symbol == rate]
    return not found or found[0].domain.is_subset(sp.Interval(0, 1)) is not True


def not_a_base_mixture(directions, base_directions, rate) -> tuple | None:
    """The first direction ``(P, Q)`` that is neither ((1-q) V + q U, V) nor (U, (1-q) U + q V) for a base
    direction (U, V) in ``base_directions`` (q = ``rate``), each identity shown by ``expand``; None when all are."""
    def same(a, b) -> bool:
        return sp.expand(a - b) == 0

    q = rate
    for P, Q in directions:
        if not any((same(P, (1 - q) * V + q * U) and same(Q, V)) or (same(P, U) and same(Q, (1 - q) * U + q * V))
                   for U, V in base_directions):
            return P, Q
    return None


def _check_mixtures(cert, base) -> str:
    """Every direction at every binding point is a mixture of a listed base direction with a common component."""
    if not base["directions"]:
        raise ReplayFailed("no base direction listed")
    for i, b in enumerate(cert.binding):
        bad = not_a_base_mixture(b["directions"], base["directions"], base["rate"])
        if bad is not None:
            raise ReplayFailed(f"binding point {i + 1}: a direction is not a mixture of a base direction with a "
                               f"common component: {sp.sstr(bad[0])} || {sp.sstr(bad[1])}")
    n = sum(len(b["directions"]) for b in cert.binding)
    return f"each of the {n} directions at the binding points is a mixture of a base direction with a common component"
