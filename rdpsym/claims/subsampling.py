r"""A proof rule for subsampled mechanisms: subsampling never increases a Rényi divergence.

A subsampled mechanism (:func:`rdpsym.subsample`) has no general closed form, so a claim about it is
otherwise checked at points of its numeric curve (:mod:`rdpsym.claims.numeric_run`): ``confirmed`` at
best. But an upper bound that already holds for the *base* mechanism holds for the subsampled one:

    Every pair of outputs of the subsampled mechanism on neighbouring inputs is a mixture with a common
    component: ``((1 - q) X + q Y, X)`` or ``(X, (1 - q) X + q Y)`` for a base pair ``(X, Y)`` (Mironov,
    Talwar & Zhang 2019, arXiv:1908.10530, Sect. 3; a sampled subset is coupled with one that is equal or
    neighbouring). Rényi divergence is jointly quasi-convex at every order alpha in [0, oo] (van Erven
    and Harremoës 2014, IEEE T-IT 60(7), Thm. 13):
    D_alpha((1-q) X + q Y || (1-q) X + q X) <= max(D_alpha(X||X), D_alpha(Y||X)) = D_alpha(Y||X), and
    likewise for (X, (1 - q) X + q Y). So D_alpha(subsampled) <= eps_base(alpha), the base's RDP curve.

So ``D <= claim`` is *proved* when the prover (:mod:`rdpsym.claims.prove`) shows ``eps_base <= claim``
for every order in the range and every parameter value, for a base whose curve is a closed form that is
finite everywhere (where it is +oo the base proves nothing). The rule is chosen by what the target is (its
curve a :class:`~rdpsym.derive.subsampled.SubsampledCurve`), never by its name.

The certificate (method ``rewrite``, route ``subsampling``, ``divergence`` null: the curve has no closed
form) holds the base proof's rewrite steps and ``base``: the base's curve, its directions, the sampling
rate and binding points of the base's curve (two orders for a proof about the curve) to its densities. Its ordinary binding points tie the
subsampled curve's certified values (and the claim) to the subsampled densities. Replay
(:func:`rdpsym.claims.replay.replay_subsampling`) re-runs the base proof, recomputes the base binding by independent numerics,
checks that every direction at every binding point is such a mixture of a listed base direction (an
``expand`` to 0, no search), and that the claim is above the subsampled curve at the binding points.
"""

from __future__ import annotations

from dataclasses import replace

import mpmath
import sympy as sp

from ..derive.result import Status
from ..derive.subsampled import SubsampledCurve
from .attest import attest_numeric, independent_at, numeric_text
from .guard import HangGuardFired, HangGuards
from .orders import conditions_at, point_alpha
from .partition import ball_text
from .point import Evaluator
from .prove import both_directions, proof_context, prove
from .replay import (BINDING_SECONDS, SUBSAMPLING_ROUTE, SUBSAMPLING_THEOREM, through_d_oo, Enclosures,
                     not_a_base_mixture, rate_outside_unit_interval)
from .target import Target, make_target
from .verdict import Verdict

__all__ = ["ROUTE", "base_target", "prove_through_subsampling", "base_mismatch"]

#: the route's name in a certificate
ROUTE = SUBSAMPLING_ROUTE
#: orders of the binding points of the subsampled curve (the reference method is at its best near 2)
_BINDING_ALPHAS = (sp.Integer(2), sp.Integer(5), sp.Rational(3, 2), sp.Integer(10))


def base_target(tgt: Target) -> tuple[Target, SubsampledCurve] | None:
    """The base mechanism's target and the subsampled curve when ``tgt`` is a subsampled mechanism whose base
    has a closed-form RDP curve over the same parameter symbols; else None."""
    curve = tgt.result.curve
    if not isinstance(curve, SubsampledCurve):
        return None
    base = curve.base_result
    if base.status is not Status.CLOSED_FORM or base.expr is None or base.mechanism is None:
        return None
    if not set(base.symbols) <= set(tgt.symbols):
        return None
    return make_target(base), curve


def _rate(curve: SubsampledCurve) -> sp.Expr:
    spec = curve.spec
    return spec.value if spec.value is not None else spec.rate.symbol


def prove_through_subsampling(tgt: Target, c, relation: str, order, fixed: dict, alpha_range, digits: int,
                              dps: int, seconds: float, guards: HangGuards | None = None) -> dict | str:
    """The fields of a ``proved`` :class:`~rdpsym.claims.verdict.ClaimVerdict` (with its certificate) when
    the rule proves ``D <= claim`` (module docstring); otherwise why not, one line for the evidence."""
    guards = guards if guards is not None else HangGuards()
    if relation != "<=" or c.kind != "expr":
        return ""
    found = base_target(tgt)
    if found is None:
        return ""
    base, curve = found
    rate = _rate(curve)
    if rate_outside_unit_interval(rate, tgt.parameters):
        return "no proof through subsampling: the sampling rate is not known to lie in [0, 1]"
    base_directions = tuple((P, Q) for P, Q, _, _ in base.directions)
    if not_a_base_mixture(tuple((P, Q) for P, Q, _, _ in tgt.directions), base_directions, rate) is not None:
        return "no proof through subsampling: a pair of the mechanism is not a mixture of a base pair with a common component"
    truth = base.truth_expr(order)
    if truth is None or conditions_at(base.result.conditions, order) is not sp.true or truth.has(sp.oo):
        return f"no proof through subsampling: the base's curve is not a closed form finite everywhere ({base.label})"
    # the base's curve is finite everywhere (checked above): the proof needs no finiteness conditions
    context = proof_context(c.expr, truth, "<=", order, fixed, tgt.parameters, sp.true, alpha_range,
                            max_divergence=base.result.max_divergence, of_distributions=True,
                            both_directions=both_directions(base_directions))
    proof, attempts = prove(context, seconds=seconds, guards=guards)
    if proof is None:
        return (f"no proof through subsampling: the claim was not shown to be above the base's curve "
                f"{sp.sstr(truth)} ({attempts} rewrite attempts)")
    ev = Evaluator(tgt, c, order, fixed, dps, relation, guards=guards)
    compared, why = _binding_values(tgt, ev, order, alpha_range, digits)
    if why:
        return f"no proof through subsampling: {why}"
    # the base's curve at every binding point (two orders for a proof about the curve: at one, the base's value
    # there could pass for its curve), and its D_oo when the base proof went through it
    points = [_base_binding(base, ev, order, a, values) for a, values, _, _ in compared]
    if through_d_oo(proof.route, proof.steps):
        points.append(_base_binding(base, ev, sp.oo, None, compared[0][1]))
    if any(p is None for p in points):
        return "no proof through subsampling: the base's curve could not be bound to its densities by independent numerics"
    text = (f"proved: {proof.text.removeprefix('proved: ')}, for the base mechanism's curve {sp.sstr(truth)}; and "
            f"{SUBSAMPLING_THEOREM}")
    evidence = (text, f"the subsampled curve is below the claim at the {len(compared)} binding point(s), by its "
                      "certified numeric values")
    fields = dict(verdict=Verdict.PROVED, evidence=evidence, points_checked=len(compared))
    cert = attest_numeric(tgt, ev, {**fields, "verdict": Verdict.CONFIRMED}, compared, alpha_range, digits, dps)
    if cert is None or not cert.binding:
        return "no proof through subsampling: the subsampled curve could not be bound to its densities"
    data = {"route": ROUTE, "steps": proof.steps,
            "base": {"route": proof.route, "label": base.label, "divergence": truth,
                     "max_divergence": base.result.max_divergence, "rate": rate,
                     "directions": base_directions, "points": tuple(points)}}
    cert = replace(cert, verdict=Verdict.PROVED.value, method="rewrite", data=data, evidence=evidence)
    return {**fields, "certificate": cert}


def _binding_values(tgt, ev, order, alpha_range, digits) -> tuple[list, str]:
    """Up to two points ``(alpha, values, t, e)`` of the subsampled curve's certified values where the claim
    is above it; or why not (a point where the claim is below it means the proof cannot be right)."""
    lo, hi = alpha_range
    alphas = [None] if order is not None else [a for a in _BINDING_ALPHAS if (a > lo) is sp.true and (a < hi) is sp.true]
    free = [p for p in tgt.parameters if p.name not in ev.fixed]
    values = {p.name: p.typical_values(1)[0] for p in free}
    out = []
    for a in alphas[:2]:
        alpha = ev.point_alpha(a)
        try:
            cv = ev.guards.run("the subsampled curve at a binding point", BINDING_SECONDS,
                               lambda: tgt.result.evaluate_with_error(alpha, max(20, int(digits) + 5), **ev.all_values(values)))
        except (HangGuardFired, ArithmeticError, ValueError) as exc:
            return [], f"the subsampled curve has no certified value at alpha = {sp.sstr(alpha)}: {str(exc)[:120]}"
        with mpmath.workdps(ev.dps + 20):
            cl, _ = ev.claim_at(a, values)
        if cl is None or cv.value is None or cv.value - cv.error > cl:
            return [], (f"at alpha = {sp.sstr(alpha)}, {values} the claim is not above the subsampled curve's certified "
                        "value: the proof is not trusted")
        out.append((a, values, cv.value, cv.error))
    return out, ("" if out else "no binding point in the alpha range")


def _base_binding(base: Target, ev, order, a, values) -> dict | None:
    """The base curve's enclosure (for ``order``: the curve, one order, D_oo) and its densities' independent
    numerics at one point, or None."""
    alpha = point_alpha(order, a)
    allv = ev.all_values(values)
    truth = base.truth_expr(order)
    if truth is None:
        return None
    enc = Enclosures(truth, truth, base.result.conditions, order, ev.tgt.parameters, ev.fixed, (), ev.dps)
    ball = enc.at(alpha, values, "divergence")
    got = independent_at(ev, base, order, alpha, allv)
    if ball is None or ball.is_nan() or got is None:
        return None
    return {"alpha": alpha, "values": dict(values), "enclosure": ball_text(ball), "numeric": numeric_text(got[0], got[1])}


def base_mismatch(cert, tgt: Target, order) -> str | None:
    """How a certificate's proof through subsampling is not about ``tgt``'s base (its curve, D_oo, rate,
    directions or route), or None; for a certificate of another method, None."""
    if cert.method != "rewrite" or cert.data.get("route") != ROUTE:
        return None
    found = base_target(tgt)
    if found is None:
        return "the target is not a subsampled mechanism with a closed-form base"
    base, curve = found
    stored = cert.data["base"]
    mine = [("base curve", stored["divergence"], base.truth_expr(order)),
            ("base D_oo", stored["max_divergence"], base.result.max_divergence),
            ("sampling rate", sp.S(stored["rate"]), sp.S(_rate(curve))),
            ("base directions", set(stored["directions"]), {(P, Q) for P, Q, _, _ in base.directions})]
    for what, theirs, ours in mine:
        if theirs != ours:
            return f"its {what} differs"
    return None
