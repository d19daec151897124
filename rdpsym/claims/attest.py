"""The certificate of a verdict, written from the check that reached it (:class:`~rdpsym.claims.certificate.Certificate`).

:func:`attest` takes the finished stages of a check (:class:`rdpsym.claims.run.ClaimRun`) and its verdict
and writes what a replay needs: the proof's rewrite steps (``proved``), the certified pass's partitions
(``confirmed`` on boxes), the compared points with their enclosures (``confirmed`` at points only), or
the counterexample with its enclosures (``refuted``); and the binding points, where the divergence is
compared with independent numerics of the densities (a divergence is bound to its mechanism there).
:func:`attest_numeric` does the same for a claim about a numeric curve (:mod:`rdpsym.claims.numeric_run`).

A callable claim is code, not data: its verdicts carry no certificate (the evidence says so).
"""

from __future__ import annotations

import math

import mpmath
import sympy as sp

from ..numeric.balls import flint_module
from .certificate import Certificate
from .orders import order_key, point_alpha
from .partition import ball_text, meets
from .replay import BINDING_DPS, BINDING_SECONDS, PROP_8_NUMERIC, through_d_oo, Enclosures, ReplayFailed, agree
from .verdict import Verdict, format_number

__all__ = ["attest", "attest_numeric", "independent_at", "numeric_text", "DivergenceDisagrees", "BINDING_POINTS",
           "PROOF_BINDING_POINTS", "NUMERIC_BINDING_POINTS"]

#: binding points of a certificate on a closed form: the method ties the claim to the divergence (the
#: proof's steps, the boxes' or the points' enclosures), so one point ties the divergence to the densities;
#: a proof about the curve has two, at distinct orders (at one, the value there, a formula without alpha,
#: could pass for the curve); a refutation's binding point is its counterexample
BINDING_POINTS = 1
PROOF_BINDING_POINTS = 2
#: binding points of a certificate on a numeric curve, whose values elsewhere are the certificate's own
NUMERIC_BINDING_POINTS = 2
#: points tried for a curve's binding point (the numerics may not converge at one order)
BINDING_ATTEMPTS = 3
#: orders tried for the binding points of a curve, in order
_BINDING_ALPHAS = tuple(sp.Rational(a) for a in ("2", "5", "3/2", "10", "1/2", "1/4", "3/4"))


def _common(run, verdict: Verdict, evidence) -> dict:
    ev, tgt = run.ev, run.tgt
    r = tgt.result
    mechanism = None
    if tgt.directions:
        _, _, x, support = tgt.directions[0]
        mechanism = {"name": tgt.label, "variable": x, "support": support}
    return dict(verdict=verdict.value, relation=run.relation, claim=ev.c.expr, divergence=tgt.truth_expr(run.order),
                order=run.order, alpha_range=(sp.S(run.lo), sp.S(run.hi)), conditions=r.conditions,
                max_divergence=r.max_divergence, exceptional=tuple((p.alpha, p.value) for p in r.exceptional_points),
                parameters=tuple(tgt.parameters), fixed=dict(ev.fixed), mechanism=mechanism, digits=int(run.digits),
                dps=run.dps, target=tgt.label, evidence=tuple(evidence),
                curve=r.expr if run.order not in (None, 1, sp.oo) and r.expr is not None else None)


def numeric_text(value, error) -> dict:
    """Independent numerics as a certificate keeps them: ``{value, error}`` as decimal text (+-inf spelled out)."""
    with mpmath.workdps(40):
        return {"value": mpmath.nstr(mpmath.mpf(value), 35) if not mpmath.isinf(value) else
                ("inf" if value > 0 else "-inf"), "error": mpmath.nstr(mpmath.mpf(error), 5)}


def independent_at(ev, tgt, order, alpha, allv) -> tuple | None:
    """The independent numerics ``(value, error, converged, detail)`` at a binding point, or None when they
    failed, did not converge or a hang guard fired."""
    try:
        got = ev.guards.run("the independent numerics at a binding point", BINDING_SECONDS,
                            tgt.independent, order, alpha, allv, BINDING_DPS)
    except Exception:  # noqa: BLE001 - fail-closed: numerics that fail (a fired hang guard too) bind nothing
        return None
    return None if got is None or got[0] is None or not got[2] else got


class CounterexampleUnbound(Exception):
    """The independent numerics of the densities do not reach a refutation's counterexample (a discrete Laplace
    at eps = 1e-4: ~10^6 terms), so its certificate could not bind the divergence there and would not replay:
    the violation rests on the derived formula alone, and the verdict is not ``refuted``."""


class DivergenceDisagrees(Exception):
    """At a binding point the derived divergence is not what the densities give (a closed form simplified
    with p^a p^(2 - 2a) = p^(2 - a), wrong at p = 0): a verdict that rests on it is withdrawn."""


def _binding_point(run, order, alpha, values, same_distribution: bool = False) -> dict | None:
    """A binding point: the divergence's enclosure and the independent numerics there (None when the
    numerics did not converge or a hang guard fired). :class:`DivergenceDisagrees` when the two differ, or
    when P and Q are one distribution there (every divergence is 0) and the divergence is not 0. Such a point
    binds no formula and gives None, unless ``same_distribution`` (a counterexample's point): then its
    value there is 0 by Prop. 8, recorded as the numerics 0 +- 0."""
    ev, tgt = run.ev, run.tgt
    allv = ev.all_values(values)
    expr = tgt.truth_expr(order)
    if expr is None or not tgt.directions:  # no densities: nothing to bind the divergence to
        return None
    enc = Enclosures(expr, expr, tgt.result.conditions, order, tgt.parameters, ev.fixed,
                     tuple((p.alpha, p.value) for p in tgt.result.exceptional_points), run.dps)
    point = point_alpha(order, alpha)
    ball = enc.at(point, values, "divergence")
    where = ", ".join([f"order {format_number(order)}" if alpha is None else f"alpha = {format_number(point)}"]
                      + [f"{k} = {format_number(v)}" for k, v in allv.items()])
    if tgt.one_distribution_at(allv):
        if ball is not None and not meets(ball, flint_module().arb(0)):
            raise DivergenceDisagrees(f"at {where}: P and Q are one distribution, so every divergence is 0, but the "
                                      f"derived divergence is {ball.mid().str(15, radius=False)}")
        if not same_distribution or ball is None:
            return None
        return _record(run, order, alpha, point, values, allv, ball, dict(PROP_8_NUMERIC))
    if ball is None or ball.is_nan():
        return None
    got = independent_at(ev, tgt, order, alpha, allv)
    if got is None:
        return None
    try:
        agree(ball, got[0], got[1], f"at {where}")
    except ReplayFailed as exc:
        raise DivergenceDisagrees(str(exc)) from None
    return _record(run, order, alpha, point, values, allv, ball, numeric_text(got[0], got[1]))


def _record(run, order, alpha, point, values, allv, ball, numeric) -> dict:
    ev, tgt = run.ev, run.tgt
    directions = tuple((P, Q) for P, Q, _, _ in tgt.directions_at(allv))
    claim = None
    if order == run.order:
        # the claim's enclosure here binds the claim too: another claim differs at some binding point
        claim = ball_text(Enclosures(ev.c.expr, None, sp.true, order, tgt.parameters, ev.fixed, (), run.dps)
                          .at(point, values, "claim"))
    return {"order": order_key(order), "alpha": point, "values": dict(values),
            "directions": directions, "divergence": ball_text(ball), "claim": claim, "numeric": numeric}


def _binding(run, extra_orders=(), points: int = BINDING_POINTS) -> tuple[dict, ...]:
    """Up to ``points`` points at typical parameter values, at distinct orders (and one at each order of
    ``extra_orders``, e.g. oo for a proof through D_oo)."""
    if not run.tgt.directions:
        return ()
    free = run.free
    combos = [{p.name: p.typical_values(1)[0] for p in free}, {p.name: p.typical_values(3)[0] for p in free},
              # each parameter at another of its typical values: P and Q differ where the first two give
              # two parameters of one role the same value (Poisson's two rates)
              {p.name: p.typical_values(3)[i % 3] for i, p in enumerate(free)}]
    usable = [c for c in combos if not run.tgt.one_distribution_at(run.ev.all_values(c))] or combos[:1]
    if run.order is None:
        alphas = [a for a in _BINDING_ALPHAS if (a > run.lo) is sp.true and (a < run.hi) is sp.true
                  and a not in run.tgt.exceptional]
        if len(alphas) < points:  # a narrow range: orders inside it, a third of the way apart
            lo, hi = sp.S(run.lo), sp.S(run.hi)
            inside = [lo + (hi - lo) * k / 3 for k in (1, 2)] if hi != sp.oo else [lo + 1, lo + 2]
            alphas += [a for a in inside if a not in alphas and a not in run.tgt.exceptional and a != 1]
        candidates = [(a, usable[i % min(2, len(usable))]) for i, a in enumerate(alphas)][:BINDING_ATTEMPTS]
    else:
        candidates = [(None, usable[0])]  # one order: numerics that fail at one parameter point fail at the others too
    # the orders in turn, the parameter combinations alternating; the first that converge are kept
    out = []
    for a, values in candidates:
        if len(out) >= points:
            break
        b = _binding_point(run, run.order, a, values)
        if b is not None:
            out.append(b)
    for order in extra_orders:
        b = next((b for b in (_binding_point(run, order, None, c) for c in usable) if b is not None), None)
        if b is not None:
            out.append(b)
    return tuple(out)


def _point(run, enclosures, alpha, values) -> dict:
    c, d = enclosures.pair(alpha, values)
    return {"alpha": alpha, "values": dict(values), "claim": ball_text(c), "divergence": ball_text(d)}


def attest(run, fields: dict) -> Certificate | None:
    """The certificate of the verdict ``fields`` (ClaimVerdict keywords) reached by ``run``, or None for an
    inconclusive verdict or a callable claim."""
    verdict = fields.get("verdict")
    if verdict not in (Verdict.PROVED, Verdict.CONFIRMED, Verdict.REFUTED) or run.ev.c.kind != "expr":
        return None
    common = _common(run, verdict, fields.get("evidence", ()))
    tgt = run.tgt
    enclosures = Enclosures(run.ev.c.expr, common["divergence"], tgt.result.conditions, run.order, tgt.parameters,
                            run.ev.fixed, common["exceptional"], run.dps)
    if verdict is Verdict.PROVED:
        proof = run.proof
        if proof is None:
            return None
        binding = _binding(run, extra_orders=(sp.oo,) if through_d_oo(proof.route, proof.steps) else (),
                           points=PROOF_BINDING_POINTS)
        return Certificate(**common, binding=binding, method="rewrite",
                           data={"route": proof.route, "steps": proof.steps})
    if verdict is Verdict.REFUTED:
        cex = fields["counterexample"]
        values = {k: v for k, v in cex.values.items() if k not in run.ev.fixed}
        alpha = cex.alpha
        a = alpha if run.order is None else None
        b = _binding_point(run, run.order, a, values, same_distribution=True)
        # where P = Q at the counterexample (Lap(b1) against Lap(b2) at b1 = b2, where a claim below 0 fails), its
        # value is 0 by Prop. 8 and binds no formula: the divergence is bound at typical points too
        if b is None and common["mechanism"] is not None:
            where = ", ".join(([f"alpha = {format_number(cex.alpha)}"] if run.order is None else [])
                              + [f"{k} = {format_number(v)}" for k, v in values.items()])
            raise CounterexampleUnbound(where)
        binding = (b,) if b is not None else ()
        if b is not None and b["numeric"] == PROP_8_NUMERIC:
            binding += _binding(run, points=PROOF_BINDING_POINTS)
        return Certificate(**common, binding=binding, method="counterexample",
                           data=_point(run, enclosures, alpha, values))
    binding = _binding(run)
    cert = run.certification
    if cert is not None and cert.certified:
        runs = [{"box": o.describe_box() or "the claim's order", "status": o.status, "partition": o.partition}
                for o in cert.outcomes]
        return Certificate(**common, binding=binding, method="boxes",
                           data={"difference": run.difference, "runs": tuple(runs)})
    points = [_point(run, enclosures, run.ev.point_alpha(a), values) for a, values in run.compared_points]
    return Certificate(**common, binding=binding, method="points", data=tuple(points))


def attest_numeric(tgt, ev, fields: dict, compared: list, alpha_range, digits, dps) -> Certificate | None:
    """The certificate of a verdict on a numeric curve: the compared points with the claim's enclosure and
    the divergence's certified value ``t +- e`` (``compared``: ``(alpha, values, t, e)``), or the
    counterexample; bound to the densities at up to :data:`NUMERIC_BINDING_POINTS` of its points (the
    reference method recomputes them on replay)."""
    verdict = fields.get("verdict")
    if verdict not in (Verdict.CONFIRMED, Verdict.REFUTED) or ev.c.kind != "expr":
        return None
    r = tgt.result
    mechanism = None
    if tgt.directions:
        _, _, x, support = tgt.directions[0]
        mechanism = {"name": tgt.label, "variable": x, "support": support}
    enclosures = Enclosures(ev.c.expr, None, r.conditions, ev.order, tgt.parameters, ev.fixed, (), dps)
    points = []
    for a, values, t, e in compared:
        points.append({"alpha": ev.point_alpha(a), "values": dict(values),
                       "claim": ball_text(enclosures.at(ev.point_alpha(a), values, "claim")),
                       "divergence": ball_text(_numeric_ball(t, e, dps))})
    binding = []
    for a, values, t, e in _moderate(compared, NUMERIC_BINDING_POINTS if verdict is Verdict.CONFIRMED else 1):
        allv = ev.all_values(values)
        got = independent_at(ev, tgt, ev.order, ev.point_alpha(a), allv)
        if got is None:
            continue
        numeric = numeric_text(got[0], got[1])
        binding.append({"order": order_key(ev.order), "alpha": ev.point_alpha(a),
                        "values": dict(values), "directions": tuple((P, Q) for P, Q, _, _ in tgt.directions_at(allv)),
                        "divergence": ball_text(_numeric_ball(t, e, dps)),
                        "claim": ball_text(enclosures.at(ev.point_alpha(a), values, "claim")), "numeric": numeric})
    lo, hi = alpha_range
    common = dict(verdict=verdict.value, relation=ev.relation, claim=ev.c.expr, divergence=None, order=ev.order,
                  alpha_range=(sp.S(lo), sp.S(hi)), conditions=r.conditions, max_divergence=r.max_divergence,
                  exceptional=(), parameters=tuple(tgt.parameters), fixed=dict(ev.fixed), mechanism=mechanism,
                  digits=int(digits), dps=dps, target=tgt.label, evidence=tuple(fields.get("evidence", ())))
    if verdict is Verdict.REFUTED:
        return Certificate(**common, binding=tuple(binding), method="counterexample", data=points[-1])
    return Certificate(**common, binding=tuple(binding), method="points", data=tuple(points))


def _numeric_ball(t, e, dps):
    """The ball ``t +- e`` of a certified numeric value."""
    from ..numeric.balls import flint_module

    flint = flint_module()
    if mpmath.isinf(t):
        return flint.arb.pos_inf() if t > 0 else flint.arb.neg_inf()
    with mpmath.workdps(dps + 10):
        mid = flint.arb(mpmath.nstr(mpmath.mpf(t), dps + 5, strip_zeros=False))
        return flint.arb(mid.mid(), (mid.rad() + flint.arb(mpmath.nstr(mpmath.mpf(e), 10))).upper())


def _moderate(compared: list, n: int) -> list:
    """``n`` compared points ``(alpha, values, t, e)`` at the orders nearest to 2 (where the reference method
    is at its most reliable); the last one for n = 1 (a refutation's point)."""
    if not compared or n <= 0:
        return []
    if n == 1:
        return [compared[-1]]

    def distance(item):
        a = item[0]
        return 0.0 if a is None else abs(math.log(float(a)) - math.log(2.0))

    return sorted(compared, key=distance)[:n]
