"""The stages of one claim check (grid, guided search, the limit at alpha -> oo, exact retries, the
resolution of candidate violations, proof, certified pass, verdict), with a tally of every point.

The rules that decide the verdict are described in :mod:`rdpsym.claims.check`.
"""

from __future__ import annotations

import math
from collections import Counter

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .asymptotics import dominant, log_sum_limit
from .guard import HangGuardFired
from ..symbols import alpha as ALPHA
from .point import OUTSIDE, OVERFLOW, SLOW, Evaluator, Values, violation
from .guard import LIMIT_SECONDS, LIMIT_VALUE_SECONDS, SIMPLIFY_SECONDS
from .prove import both_directions, proof_context, prove
from .prove import replay as replay_proof
from .rewrite import RULES, ReplayMismatch, Step
from .search import (alpha_grid, exact_rational, guided_search, linear_relation, numeric_end, parameter_grid,
                     shrink)
from .verdict import Counterexample, Verdict, format_number, format_values


# ---------------------------------------------------------------------------------------------------
# the stages of a check, with a tally of every point
# ---------------------------------------------------------------------------------------------------
#: alpha regimes a check covers (each one the claim's alpha range reaches needs compared points)
REGIMES = ("alpha in (0,1)", "alpha near 1", "moderate alpha", "large alpha")
#: compared points needed in each regime the alpha range reaches before "confirmed"
MIN_POINTS_PER_REGIME = 2
#: candidate violations resolved exactly (largest first) before giving up on a refutation
MAX_CANDIDATES = 6
#: points whose fast evaluation failed that are retried exactly (each under the point's hang guard)
MAX_RETRIES = 40


#: orders 10^k probed beyond the certified range when the claim's limit at alpha -> oo is not decided
_PROBE_EXPONENTS = (7, 9, 12, 15, 20, 30)
#: orders 10^k probed when the claim's limit is on the wrong side of D_oo: the violation exists at some
#: finite order (D_alpha increases to D_oo), so the exponent doubles until it shows, 10^600 ... 10^(600*2^10)
#: working digits sympy may use to evaluate the claim's limit and D_oo at one parameter point
_LIMIT_DIGITS = 20_000
_WRONG_SIDE_EXPONENTS = _PROBE_EXPONENTS + (50, 100, 300) + tuple(600 * 2**j for j in range(11))
_SLOW_REASON = "the callable did not return within its time limit"
_OVERFLOW_REASON = "the claim's value is beyond the working range (an exponent above 2^100)"


def regime_of(a) -> str:
    if a is None:
        return "the claim's order"
    if a < 1:
        return REGIMES[0]
    if a <= sp.Rational(101, 100):
        return REGIMES[1]
    if a < 100:
        return REGIMES[2]
    return REGIMES[3]


def required_regimes(lo, hi) -> list[str]:
    req = []
    if (lo < 1) is sp.true:
        req.append(REGIMES[0])
    if (hi > 1) is sp.true and (lo < sp.Rational(101, 100)) is sp.true:
        req.append(REGIMES[1])
    if (hi > sp.Rational(101, 100)) is sp.true and (lo < 100) is sp.true:
        req.append(REGIMES[2])
    if (hi > 100) is sp.true:
        req.append(REGIMES[3])
    return req



def _value_at(expr, subs, dps):
    """``expr`` at the point, to ``dps`` digits (maxn: a limit like floor(pi*10**4000) needs thousands of
    working digits to be a number). A Max or a Min whose arguments sympy cannot order at the exact point
    (Bin(3, p) against Bin(3, 1/2) at p = 1/2: D_oo's branches are 0 written as 2 log 2 - log 4) raises
    ValueError when rebuilt there: its branches are then evaluated one by one."""
    try:
        return expr.xreplace(subs).evalf(dps, maxn=_LIMIT_DIGITS)
    except ValueError:
        if not isinstance(expr, (sp.Max, sp.Min)):
            raise
    # evalf fails the same way (its branches cancel to '0.e-165', which sympy will not order): each branch
    # apart, the largest (smallest) taken; a branch that is no real number raises
    values = [_value_at(a, subs, dps) for a in expr.args]
    if not all(v.is_number and v.is_extended_real for v in values):
        raise ValueError(f"a branch of {type(expr).__name__} is no real number at {subs}")
    return (max if isinstance(expr, sp.Max) else min)(values)

class ClaimRun:
    """One check: grid, guided search, exact resolution of candidates, proof, certified pass, verdict.

    Every point asked about ends in exactly one bucket: compared (both sides have values), dropped (a side
    could not be computed, by any method tried: counts against confirmation), not a distribution (the
    parameters make P or Q no probability distribution: outside the claim's subject), or exempt (the
    claim, written with the closed form's removable singularity, is undefined at that order, or undefined
    where the divergence is +oo).
    """

    def __init__(self, evaluator, relation, order, alpha_range, tol, digits, dps, free, independent):
        self.ev, self.relation, self.order = evaluator, relation, order
        self.lo, self.hi = alpha_range
        self.tol, self.digits, self.dps, self.free, self.independent = tol, digits, dps, free, independent
        self.tgt = evaluator.tgt
        self.compared_by_regime: dict[str, int] = {}
        self.compared = 0
        self.checked = {"grid": 0, "guided": 0, "retried": 0}
        self.dropped: list[tuple[tuple, str]] = []
        self.exempt: Counter = Counter()
        self.not_distributions: list[dict] = []
        self.lost: list[str] = []
        self.candidates: list[tuple] = []  # (violation, point)
        #: violations found beyond the certified box, nearest the box first: resolved after the others and after
        #: the proof (a point at sigma = 10^-30 may not be checkable as a distribution, where the grid's is)
        self.end_candidates: list[tuple] = []
        self.unresolved: list[tuple[tuple, str]] = []
        self.vanished = 0
        self.min_digits = mpmath.inf
        self.param_span: dict[str, list] = {}
        self.evidence_head: list[str] = []
        self.certification = None
        self.limit_note = ""
        self.ends_note = ""
        self.proof = None  # the Proof of a proved verdict
        self.compared_points: list[tuple] = []  # every compared point, in order (a certificate's points)
        self.difference = None  # the Step that simplified claim - divergence for the certified pass

    # -- bookkeeping --------------------------------------------------------------------------------
    def _compared(self, point, v, finite_t):
        a, values = point
        self.compared += 1
        self.compared_points.append(point)
        regime = regime_of(a)
        self.compared_by_regime[regime] = self.compared_by_regime.get(regime, 0) + 1
        for k, val in values.items():
            span = self.param_span.setdefault(k, [val, val])
            span[0], span[1] = min(span[0], val), max(span[1], val)
        if self.relation == "==" and finite_t:
            self.min_digits = min(self.min_digits, _digits(v))
        if v > self.tol:
            self.candidates.append((v, point))

    def record(self, point, vals: Values):
        """One evaluated point: compared, or the reason it has no value (None when it is exempt)."""
        if vals.violation is not None:
            self._compared(point, vals.violation, vals.divergence_state == "finite")
            return None
        a = point[0]
        t_state = vals.divergence_state
        if t_state == "missing":
            return "the divergence could not be evaluated"
        if vals.claim_state == OUTSIDE:
            return "the callable raised"
        if vals.claim_state == OVERFLOW:
            return _OVERFLOW_REASON
        if vals.claim_state == SLOW:
            return _SLOW_REASON
        if self.ev.c.kind == "expr" and self.order is None and a in self.tgt.exceptional:
            self.exempt["the claim is undefined at a removable order of the closed form"] += 1
            return None
        if t_state == "inf" and self.ev.c.kind == "expr":
            key = "the divergence is +oo and the formula undefined (its finiteness conditions stated apart)"
            self.exempt[key] += 1
            return None
        return "the claim is undefined (NaN, complex, not a number or out of range)"

    # -- stages -------------------------------------------------------------------------------------
    def stages(self, executor, search, prove, prove_seconds, certify_boxes, certify_seconds):
        retry: list[tuple[tuple, str]] = []
        self._grid(executor, retry)
        yield None
        self._guided(search, retry)
        yield None
        self._limit_at_infinity()
        self._retry_exactly(retry)
        yield self._refute_candidates()
        yield self._inconclusive_if_dropped()
        if prove and self.ev.c.kind == "expr":
            yield self._prove(prove_seconds)
        # beyond the certified box, for what no proof covers: a violation found there refutes the claim, and one
        # that cannot be resolved counts against it
        self._parameter_ends()
        yield self._refute_candidates(ends=True)
        yield self._inconclusive_if_dropped()
        if certify_boxes > 0:
            yield self._certify(certify_boxes, certify_seconds)
        yield self._final()

    def _grid(self, executor, retry):
        cases = self._case_expressions()
        alphas = [None] if self.order is not None else alpha_grid(self.lo, self.hi, cases)
        grids = [parameter_grid(p, ends=self.ev.c.may_jump, cases=cases) for p in self.free]
        points = point_product(alphas, self.free, grids, limit=3000)
        for (block_start, block), entry in _grid_sweep(self.ev, points, executor):
            if not entry.ok:
                self.lost.append(f"grid points {block_start}..{block_start + len(block) - 1}: "
                                 f"{entry.status}: {entry.error}")
                continue
            for point, vals in zip(block, entry.result):
                self.checked["grid"] += 1
                self._defer(point, self.record(point, vals), retry)

    def _case_expressions(self) -> list:
        """The claim and the closed form, whose Piecewise case splits the grid looks at from both sides."""
        return [e for e in (self.ev.c.expr if self.ev.c.kind == "expr" else None, self.tgt.truth_expr(self.order))
                if isinstance(e, sp.Basic)]

    def _guided(self, search, retry):
        if search <= 0:
            return

        def fast_violation(a, values):
            vals = self.ev.fast(a, values)
            v = vals.violation
            if v is not None and v > self.tol and self.ev.distributions_ok(values, mass=False) is False:
                self.not_distributions.append(values)
                return None
            self._defer((a, values), self.record((a, values), vals), retry)
            return v

        _, _, n = guided_search(self.free, None if self.order is not None else (self.lo, self.hi),
                                fast_violation, search)
        self.checked["guided"] += n

    def _defer(self, point, why, retry):
        """A point without a value: excluded where P or Q is no distribution, else retried later."""
        if not why:
            return
        if self.ev.distributions_ok(point[1], mass=False) is False:
            self.not_distributions.append(point[1])
            return
        retry.append((point, why))

    def _limit_at_infinity(self):
        """alpha -> oo by the limit: D_alpha increases to D_oo (Mironov 2017, Prop. 9; van Erven and
        Harremoës 2014, Thm. 4), so a claim whose limit is on the wrong side of D_oo fails at some finite
        order, however large. Such orders (10^7 ... 10^300) become candidate violations."""
        ev = self.ev
        if self.order is not None or self.hi != sp.oo or ev.c.kind != "expr":
            return
        d_inf = self.tgt.result.max_divergence
        if d_inf is None:
            self.limit_note = "alpha -> oo: D_oo was not derived, so the claim's limit was not compared"
            return
        held = {ev.by_name[k]: v for k, v in ev.fixed.items()}
        claim = ev.c.expr.xreplace(held)
        # sympy takes the limit of Piecewise((f, lam < 10**10), (0, True)) as 0 whatever lam is: a claim
        # with cases in its parameters has its limit taken at each parameter point, where the cases are decided
        per_point = any(cond.free_symbols - {ALPHA} for pw in claim.atoms(sp.Piecewise) for _, cond in pw.args
                        if isinstance(cond, sp.Basic))

        def limit_of(expr):
            try:
                return ev.guards.run("the claim's limit at alpha -> oo", LIMIT_SECONDS, _limit_beyond_every_case, expr)
            except Exception:  # noqa: BLE001 - an undecided limit (or a fired hang guard) is stated, not guessed
                return None

        limit = None if per_point else limit_of(claim)
        # the grid's values and the ends of the box the search compared (a claim capped in alpha, such as
        # Min(alpha, 10**4)*eps**2/2, may fail at large orders only for the smallest eps compared)
        grids = [list(dict.fromkeys(parameter_grid(p) + [exact_rational(v) for v in self.param_span.get(p.name, ())]))
                 for p in self.free]
        # points where P or Q is no distribution are outside the mechanism, as on the grid (a parameter
        # declared wider than the distributions allow): they neither support nor count against the claim
        combos = [(a, values) for a, values in point_product([None], self.free, grids, limit=25)
                  if ev.distributions_ok(values, mass=False) is not False]
        def undecided_limit(lim):
            return lim is None or lim.has(sp.Limit, sp.AccumBounds, sp.nan, sp.zoo)

        if not per_point and undecided_limit(limit):
            # no limit: probe the orders beyond the certified range directly
            found = 0
            for _, values in combos:
                for k in _PROBE_EXPONENTS:
                    a = sp.Integer(10) ** k
                    va = ev.fast(a, values).violation
                    if va is not None and va > self.tol:
                        self.candidates.append((va, (a, values)))
                        found += 1
                        break
            self.limit_note = (f"alpha -> oo: the claim's limit was not decided; probed at alpha = 10^k, k in "
                               f"{list(_PROBE_EXPONENTS)}, at {len(combos)} parameter points"
                               + (f" (violations at {found})" if found else ""))
            return
        wrong_side = undecided = beyond_finite = 0
        for _, values in combos:
            subs = {ev.by_name[k]: v for k, v in ev.all_values(values).items()}
            try:
                here = limit_of(claim.xreplace(subs)) if per_point else limit
                if undecided_limit(here):
                    raise ValueError("no limit")
                # maxn: a limit like floor(pi*10**4000) needs thousands of working digits to be a number
                lv = ev.guards.run("the claim's limit at a parameter point", LIMIT_VALUE_SECONDS,
                                   _value_at, here, subs, self.dps)
                dv = ev.guards.run("D_oo at a parameter point", LIMIT_VALUE_SECONDS, _value_at, d_inf, subs, self.dps)
                real = lv.is_extended_real and dv.is_extended_real
            except Exception as exc:  # noqa: BLE001 - an unevaluated limit (or a fired guard) counts against
                real, why = False, f"{type(exc).__name__}"
            else:
                why = "not real"
            if not real:
                # the limit may be on the wrong side here: a point that cannot be compared counts against
                undecided += 1
                self.unresolved.append(((sp.oo, values), "the claim's limit at alpha -> oo or D_oo could not "
                                        f"be evaluated ({why})"))
                continue
            v = violation(self.relation, mpmath.mpf(dv) if dv.is_finite else mpmath.inf,
                          mpmath.mpf(lv) if lv.is_finite else (mpmath.inf if lv > 0 else -mpmath.inf), self.dps)
            if v is None or v <= self.tol:
                continue
            wrong_side += 1
            for k in _WRONG_SIDE_EXPONENTS:
                a = sp.Integer(10) ** k
                vals = ev.fast(a, values)
                va = vals.violation
                if va is not None and va > self.tol:
                    self.candidates.append((va, (a, values)))
                    break
                if va is None and vals.divergence_state == "inf":
                    # D is +oo from some finite order on and the formula is undefined there: its finiteness
                    # conditions, stated apart, decide those orders (the grid's exemption), not its limit
                    beyond_finite += 1
                    break
            else:
                # Whatever D_oo is (finite or +oo), a limit on the wrong side means the relation fails at
                # some finite order: not showing that order is no evidence for the claim.
                self.unresolved.append(((sp.oo, values), "the claim's limit at alpha -> oo is on the wrong "
                                        f"side of D_oo, but no order up to 1e{_WRONG_SIDE_EXPONENTS[-1]} "
                                        "showed the violation"))
        shown = ("at each parameter point" if per_point else
                 format_number(limit) if limit.is_Number else sp.sstr(limit)[:60])
        self.limit_note = (f"alpha -> oo: the claim's limit {shown} compared with D_oo at "
                           f"{len(combos)} parameter points" + (f"; on the wrong side at {wrong_side}" if wrong_side else "")
                           + (f"; not evaluated at {undecided}" if undecided else "")
                           + (f"; at {beyond_finite} of them D is +oo from a finite order on, where the formula "
                              "is undefined (its finiteness conditions decide)" if beyond_finite else ""))

    def _parameter_ends(self):
        """Each parameter beyond the certified box, towards the ends of its domain (lam = 10^9 ... 10^300 on
        (0, oo), 10^-10 ... 10^-300 next to 0), the others at their typical values, at a few orders: the box
        stops at a finite distance from an end, and a claim can be wrong only beyond it (4 lam + 1 - lam/10^10
        against 4 lam). Violations found become candidates, resolved exactly like the grid's. A count of
        points, the same on every machine."""
        ev = self.ev
        # a formula only: its values there are certified balls. A callable (float code) is code checked at
        # points; its accuracy at 10^-300 is the generated code's own question (tests/test_codegen_accuracy.py)
        if not self.free or ev.c.kind != "expr":
            return
        alphas = [None] if self.order is not None else _spread(alpha_grid(self.lo, self.hi), ENDS_ORDERS)
        probed = found = unevaluated = 0
        for p in self.free:
            beyond = end_probes(p)
            if not beyond:
                continue
            others = [q for q in self.free if q is not p]
            combos = point_product([None], others, [parameter_grid(q) for q in others], limit=ENDS_COMBOS)
            # nearest the box first: the first violations found are the first resolved
            for v in beyond:
                for a in alphas:
                    for _, held in combos:
                        values = {**held, p.name: v}
                        if ev.distributions_ok(values, mass=False) is False:
                            continue
                        probed += 1
                        # ball arithmetic, each side to the working digits or no value: far out, the fast
                        # evaluator's cancellations (KL ~ d^2/(2 mu) at mu = 10^30) look like violations
                        vals = ev.balls(a, values)
                        va = vals.violation if vals is not None else None
                        if va is None:
                            unevaluated += 1
                        elif va > self.tol:
                            self.end_candidates.append((va, (a, values)))
                            found += 1
        if probed:
            self.ends_note = (f"parameter ends: each parameter probed at {probed} points beyond the certified box "
                              f"(10^k and 10^-k from its domain's ends, k up to {_END_EXPONENTS[-1]})"
                              + (f"; violations at {found}" if found else "")
                              + (f"; no value in ball arithmetic at {unevaluated} (beyond the box, these are "
                                 "reported, not counted: extreme points such as p = 1 - 10^-300 next to alpha = 1 "
                                 "have no value by any method here)" if unevaluated else ""))

    def _retry_exactly(self, retry):
        """Points whose fast evaluation failed, computed another way (exact substitution, then a higher
        precision, then ball arithmetic); what still has no value is dropped, with the reason. At most
        MAX_RETRIES points are retried (a count: the same points on every machine)."""
        for point, why in retry:
            if why in ("the callable raised", _OVERFLOW_REASON, _SLOW_REASON):
                # a callable has no other way to be evaluated; sympy would take forever on the overflow
                self.dropped.append((point, why))
                continue
            if self.checked["retried"] >= MAX_RETRIES:
                self.dropped.append((point, why + " (not retried: retry budget spent)"))
                continue
            self.checked["retried"] += 1
            vals = self.ev.exact(*point)
            if vals.violation is None:
                self.dropped.append((point, f"{why}; {vals.how}"))
                continue
            self._compared(point, vals.violation, vals.divergence_state == "finite")

    def _refute_candidates(self, extra=(), ends: bool = False):
        """Resolve the largest candidate violations exactly (with ``ends``, those beyond the certified box,
        nearest it first); a refutation, or None."""
        seen, tried = set(), 0
        for v, point in self.end_candidates if ends else list(extra) + _candidate_order(self.candidates, self.free):
            key = (point[0], tuple(sorted(point[1].items())))
            if key in seen:
                continue
            seen.add(key)
            if self.ev.distributions_ok(point[1], mass=False) is False:
                self.not_distributions.append(point[1])
                continue
            if tried >= MAX_CANDIDATES:
                self.unresolved.append((point, f"not resolved: only the {MAX_CANDIDATES} largest candidate "
                                               "violations are resolved exactly"))
                break
            tried += 1
            outcome = self._resolve(point)
            if isinstance(outcome, Counterexample):
                self.evidence_head.insert(0, f"{self._summary()}; the relation fails by more than "
                                             f"1e-{self.digits} (relative)")
                return dict(verdict=Verdict.REFUTED, evidence=tuple(self.evidence_head + self._coverage()),
                            counterexample=outcome, points_checked=self._n_checked())
            if outcome == "agrees":
                self.vanished += 1
            elif outcome == "invalid":
                self.not_distributions.append(point[1])
            else:
                self.unresolved.append((point, outcome))
        return None

    def _resolve(self, point):
        """A Counterexample, "agrees" (the exact values satisfy the relation), "invalid" (P or Q is no
        distribution there) or the reason the candidate could not be decided."""
        a, values = point
        valid = self.ev.distributions_ok(values)
        if valid is False:
            return "invalid"
        if valid is None:
            return "could not check that P and Q are probability distributions at this point"
        vals = self.ev.exact(a, values)
        if vals.violation is None:
            return f"the violation of the fast search could not be recomputed: {vals.how}"
        if vals.violation <= self.tol:
            return "agrees"
        cex = _confirm_refutation(point, self, vals)
        return cex if cex is not None else "the violation could not be confirmed at a shrunk or the original point"

    def _inconclusive_if_dropped(self):
        reasons = []
        if self.lost:
            reasons.append(f"{len(self.lost)} grid task(s) did not finish, their points were not checked: "
                           + "; ".join(self.lost[:3]) + (f"; ... ({len(self.lost)} in all)" if len(self.lost) > 3 else ""))
        if self.dropped:
            counts = Counter(why for _, why in self.dropped)
            (a, values), _ = self.dropped[0]
            detail = "; ".join(f"{n} x {why}" for why, n in counts.items())
            reasons.append(f"{len(self.dropped)} point(s) could not be compared and count against the claim "
                           f"({detail}), e.g. alpha = {format_number(a)}, {format_values(values)}")
        if self.unresolved:
            (a, values), why = self.unresolved[0]
            reasons.append(f"{len(self.unresolved)} candidate violation(s) could not be decided, e.g. at "
                           f"alpha = {format_number(a)}, {format_values(values)}: {why}")
        if self.compared == 0:
            reasons.append("no point could be compared: nothing supports the claim")
        elif self.order is None:
            missing = [r for r in required_regimes(self.lo, self.hi)
                       if self.compared_by_regime.get(r, 0) < MIN_POINTS_PER_REGIME]
            if missing:
                reasons.append(f"fewer than {MIN_POINTS_PER_REGIME} compared points in: {', '.join(missing)}")
        if not reasons:
            return None
        return dict(verdict=Verdict.INCONCLUSIVE, evidence=tuple([self._summary()] + reasons + self._coverage()),
                    points_checked=self._n_checked(), digits=_float_or_none(self.min_digits))

    def _prove(self, seconds):
        ev = self.ev
        context = proof_context(ev.c.expr, self.tgt.truth_expr(self.order), self.relation, self.order, ev.fixed,
                                self.tgt.parameters, self.tgt.result.conditions, (self.lo, self.hi),
                                max_divergence=self.tgt.result.max_divergence,
                                of_distributions=bool(self.tgt.directions),
                                both_directions=both_directions((P, Q) for P, Q, _, _ in self.tgt.directions))
        proof, attempts = prove(context, seconds=seconds, guards=ev.guards)
        if not proof:
            self.evidence_head.append(f"no symbolic proof found ({attempts} rewrite attempts)")
            return None
        try:
            # the proof as its certificate will be checked: a route whose steps do not replay is no proof
            replay_proof(proof.route, proof.steps, context, seconds=seconds, guards=ev.guards)
        except (ReplayMismatch, HangGuardFired, *SYMBOLIC_ERRORS) as exc:  # a mismatch, or a step cut short
            self.evidence_head.append(f"a symbolic proof was found but its steps did not replay ({type(exc).__name__}: "
                                      f"{str(exc)[:120]}); it is not used")
            return None
        self.proof = proof
        return dict(verdict=Verdict.PROVED, evidence=tuple([proof.text, self._summary()] + self._coverage()),
                    points_checked=self._n_checked(), digits=_float_or_none(self.min_digits))

    def _difference(self):
        """claim - divergence (parameters held fixed) in its shortest form by the rewrites of the certified
        pass (each is identical to the difference), as the Step that made it; None when none finished."""
        ev = self.ev
        held = {ev.by_name[k]: v for k, v in ev.fixed.items()}
        gap = (ev.c.expr - self.tgt.truth_expr(self.order)).xreplace(held)
        forms = []
        for rule in ("cancel_expand", "simplify"):
            try:
                forms.append(Step(rule, (gap,), ev.guards.run(f"the certified pass's difference ({rule})",
                                                                SIMPLIFY_SECONDS, RULES[rule], gap)))
            except (HangGuardFired, *SYMBOLIC_ERRORS):  # the plain difference of enclosures still works
                continue
        return min(forms, key=lambda step: sp.count_ops(step.output)) if forms else None

    def _certify(self, boxes, seconds):
        ev = self.ev
        if ev.c.kind != "expr":
            self.certification = None
            self.evidence_head.append("no certified pass: the claim is a callable (a black box to ball arithmetic)")
            return None
        from .certify import certify

        # A claim that is the truth written another way plus a perturbation simplifies to the perturbation:
        # its enclosure is then tight, and the bisection goes straight to where it is large.
        self.difference = self._difference()
        cert = certify(self.tgt, ev.c.expr, self.order, self.relation, ev.fixed, self.free, (self.lo, self.hi),
                       tol=float(self.tol), dps=self.dps, boxes=boxes, guard_seconds=seconds,
                       difference=self.difference.output if self.difference is not None else None)
        self.certification = cert
        bad = cert.refutation
        if bad is not None:
            a = bad.point.get(ALPHA) if self.order is None else None
            by_symbol = {p.symbol: p.name for p in self.tgt.parameters}
            values = {by_symbol[s]: v for s, v in bad.point.items() if s in by_symbol and by_symbol[s] not in ev.fixed}
            verdict = self._refute_candidates(extra=[(mpmath.inf, (a, values))])
            if verdict is not None:
                verdict["evidence"] = tuple(list(verdict["evidence"]) + cert.describe())
                return verdict
            # a certified violation of the closed form that the exact path cannot confirm: undecided
            (pa, pvals), why = self.unresolved[-1] if self.unresolved else ((a, values), "")
            return dict(verdict=Verdict.INCONCLUSIVE,
                        evidence=tuple([self._summary(), f"ball arithmetic found a violating point (alpha = {format_number(pa)}, "
                                        f"{format_values(pvals)}) that could not be confirmed: {why or 'see above'}"]
                                       + cert.describe() + self._coverage()),
                        points_checked=self._n_checked(), digits=_float_or_none(self.min_digits))
        # a box on which the relation holds everywhere is evidence for confirmation (the _final stage
        # names it), not a proof: the claim speaks of orders and parameter values outside every box
        return None

    def _final(self):
        evidence = [self._summary()] + self.evidence_head
        cert = self.certification
        verdict = Verdict.CONFIRMED
        if cert is not None:
            evidence += cert.describe()
            if cert.available and not cert.certified:
                # A formula has a method that decides every point of the box; where it did not finish,
                # the points in between were not asked about by anything that could have failed, so
                # agreement at sampled points does not earn "confirmed" (a band of width 1e-2 at
                # alpha = 400 lies between them).
                verdict = Verdict.INCONCLUSIVE
                evidence.append("not confirmed: the certified pass did not cover the whole box, and sampled points "
                                "alone do not rule out a violation between them (raise certify_boxes)")
        return dict(verdict=verdict, evidence=tuple(evidence + self._coverage()),
                    points_checked=self._n_checked(), digits=_float_or_none(self.min_digits))

    # -- reporting ----------------------------------------------------------------------------------
    def _n_checked(self):
        return self.checked["grid"] + self.checked["guided"]

    def _summary(self):
        text = (f"checked {self._n_checked()} points ({self.checked['grid']} on a grid over typical ranges and edge "
                f"regimes, {self.checked['guided']} guided by hypothesis.target), compared {self.compared}")
        if self.relation == "==" and self.min_digits != mpmath.inf and self.compared:
            text += f"; agreement >= {float(min(self.min_digits, self.dps)):.1f} digits"
        return text

    def _coverage(self):
        lines = []
        if self.order is None:
            regimes = ", ".join(f"{r}: {self.compared_by_regime.get(r, 0)}" for r in REGIMES
                                if r in required_regimes(self.lo, self.hi))
            lines.append(f"alpha range ({format_number(self.lo)}, {format_number(self.hi)}); compared points per regime: {regimes}")
            if self.limit_note:
                lines.append(self.limit_note)
        if self.ends_note:
            lines.append(self.ends_note)
        if self.param_span:
            lines.append("parameter box compared: " + ", ".join(
                f"{k} in [{format_number(sp.Float(v[0], 6))}, {format_number(sp.Float(v[1], 6))}]" for k, v in self.param_span.items()))
        if self.dropped:
            lines.append(f"points dropped: {len(self.dropped)}")
        for why, n in self.exempt.items():
            lines.append(f"not compared at {n} point(s): {why}")
        if self.not_distributions:
            lines.append(f"{len(self.not_distributions)} point(s) excluded where P or Q is not a probability "
                         f"distribution (e.g. {format_values(self.not_distributions[0])}): the parameters' domain is "
                         "wider than the distributions', and the verdict is about the points where they are")
        if self.vanished:
            lines.append(f"{self.vanished} candidate violation(s) of the fast search vanished when recomputed "
                         "exactly (precision loss of the fast evaluator, not of the claim)")
        if self.ev.c.kind == "callable":
            lines.append("the claim is a callable: checked at points only (no proof, no certified pass, no "
                         "certificate: a callable is code, not data)")
        return lines + self.ev.guards.evidence()


#: grid points per task of the grid sweep: a point costs about a millisecond, so a task of 32 points is
#: long enough to outweigh dispatching it and short enough to balance a few thousand points over workers
GRID_BLOCK = 32


def _grid_block(evaluator: Evaluator, block: list) -> list[Values]:
    """One task of the grid sweep: the fast values of each point (picklable)."""
    return [evaluator.fast(a, values) for a, values in block]


def _grid_sweep(evaluator, points, executor):
    """``((start index, block), TaskResult)`` per block of :data:`GRID_BLOCK` grid points, in grid order,
    evaluated on ``executor`` by :func:`rdpsym.execution.run_tasks`."""
    from functools import partial

    from ..execution import run_tasks

    blocks = [points[i:i + GRID_BLOCK] for i in range(0, len(points), GRID_BLOCK)]
    report = run_tasks(partial(_grid_block, evaluator), blocks, executor=executor, progress=False,
                       description="claim grid")
    return zip(((i * GRID_BLOCK, b) for i, b in enumerate(blocks)), report)


def _float_or_none(d):
    return None if d == mpmath.inf else float(d)


def _digits(v) -> float:
    if v <= 0:
        return mpmath.inf
    return -mpmath.log10(v)


def _eventually(rel) -> sp.Basic:
    """The truth value of a relational in alpha alone for every alpha beyond some order: linear in alpha (beyond
    its root), or a sum of exponentials in alpha such as (19/20)**alpha*(9/10)**(1 - alpha) - 1 (beyond the
    last sign change, the sign of its leading term); the relational itself where it is neither."""
    line = linear_relation(rel, ALPHA)
    if line is not None:
        # beyond the root, lhs - rhs has the sign of its slope: the relation reads as sign op 0
        return rel.func(sp.sign(line[0]), 0)
    gap = rel.lhs - rel.rhs
    lead = dominant(gap, ALPHA) if gap.free_symbols == {ALPHA} else None
    if lead is None or lead[0] == 0:
        return rel
    return rel.func(sp.Integer(lead[0]), 0)


def _limit_beyond_every_case(expr):
    """The limit at alpha -> oo of :func:`_branch_beyond_every_case` of ``expr``: of a Max or Min, the Max or Min
    of its arguments' limits; of a log of an exponential sum, its largest slope
    (:func:`~rdpsym.claims.asymptotics.log_sum_limit`: sympy spent a minute on a Max of two such logs and
    failed); else sympy's. None where none is found."""
    branch = _branch_beyond_every_case(expr)
    if isinstance(branch, (sp.Max, sp.Min)):
        parts = [_limit_beyond_every_case(a) for a in branch.args]
        return None if any(p is None for p in parts) else branch.func(*parts)
    try:
        found = log_sum_limit(branch, ALPHA) if isinstance(branch, sp.Expr) else None
        if found is None:
            found = sp.limit(branch, ALPHA, sp.oo)
    except SYMBOLIC_ERRORS:
        return None
    return None if found.has(sp.Limit, sp.AccumBounds, sp.nan, sp.zoo) else found


def _distance_from_typical(values: dict, params) -> float:
    """How far a point's parameters lie outside their typical ranges (in decades for a log-scale one)."""
    out = 0.0
    for p in params:
        v = values.get(p.name)
        if v is None:
            continue
        try:
            v, (lo, hi) = float(v), p.typical
            if p.log_scale and v > 0 and lo > 0:
                v, lo, hi = math.log10(v), math.log10(lo), math.log10(hi)
            out += max(lo - v, v - hi, 0.0)
        except (TypeError, ValueError, OverflowError):
            out += math.inf
    return out


def _candidate_order(candidates: list, params) -> list:
    """Candidate violations in the order they are resolved exactly: the largest violation and the one
    nearest the parameters' typical ranges, in turn. The largest violations crowd at the extremes of the
    box (a relative violation saturates at 1 as a scale -> 0), where P and Q may not be checkable as
    distributions; a claim false at ordinary values too is refuted there."""
    by_size = sorted(candidates, key=lambda c: -c[0])
    by_typical = sorted(candidates, key=lambda c: (_distance_from_typical(c[1][1], params), -c[0]))
    out = []
    for pair in zip(by_size, by_typical):
        out.extend(pair)
    return out


def _branch_beyond_every_case(expr):
    """``expr`` with each Piecewise whose conditions are linear in alpha alone (once the parameters have
    values) replaced by the branch that holds for every alpha beyond their roots: the same function for all
    large alpha, so the same limit at alpha -> oo. sympy's limit does not take Piecewise((f, alpha < 6),
    (oo, True)) to oo."""
    def eventual(pw):
        for value, cond in pw.args:
            if not isinstance(cond, sp.Basic):
                return pw
            decided = cond.xreplace({r: _eventually(r) for r in cond.atoms(sp.core.relational.Relational)})
            if decided is sp.true:
                return value
            if decided is not sp.false:
                return pw
        return pw

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), eventual) if isinstance(expr, sp.Basic) else expr


#: how far beyond the certified box a parameter is probed towards its domain's ends: distances 10^k past the
#: box towards oo, 10^-k next to a finite end (the box reaches about 10^8.7 and 10^-8.3 from the typical range)
_END_EXPONENTS = (9, 10, 12, 15, 20, 30, 50, 100, 300)
#: the orders (spread over the grid's) and the other parameters' points at which the ends are probed
ENDS_ORDERS = 3
ENDS_COMBOS = 3


def _spread(values: list, n: int) -> list:
    """``n`` of ``values`` spread evenly over the list (all of them when there are no more)."""
    if len(values) <= n:
        return list(values)
    return [values[round(i * (len(values) - 1) / (n - 1))] for i in range(n)]


def end_probes(param) -> list:
    """Exact values of ``param`` beyond the certified box towards the ends of its domain: base + 10^k
    towards +oo (base - 10^k towards -oo), and end -+ width 10^-k next to a finite end (k in
    :data:`_END_EXPONENTS`, from 10 on near an end); integers rounded into the domain. An end that depends on
    another parameter is not probed."""
    dom = param.domain
    lo, hi = numeric_end(dom.inf), numeric_end(dom.sup)
    if math.isnan(lo) or math.isnan(hi):
        return []
    bounded = math.isfinite(lo) and math.isfinite(hi)
    width = dom.sup - dom.inf if bounded else sp.Integer(1)
    out = []
    for k in _END_EXPONENTS:
        big, small = sp.Integer(10) ** k, sp.Integer(10) ** -k
        if math.isfinite(hi):
            out += [dom.sup - width * small] if k >= 10 else []
        else:
            out.append((dom.inf if math.isfinite(lo) else 0) + big)
        if math.isfinite(lo):
            out += [dom.inf + width * small] if k >= 10 else []
        else:
            out.append((dom.sup if math.isfinite(hi) else 0) - big)
    if param.symbol.is_integer:
        out = [sp.floor(v) if v > 0 else sp.ceiling(v) for v in out]
    return [v for v in dict.fromkeys(exact_rational(v) for v in out) if param.domain.contains(v) is sp.true]


def point_product(alphas, free, grids, limit):
    import itertools

    combos = list(itertools.product(*grids)) if free else [()]
    out = [(a, dict(zip([p.name for p in free], combo))) for a in alphas for combo in combos]
    if len(out) > limit:  # keep it deterministic: an even subsample
        step = len(out) / limit
        out = [out[int(i * step)] for i in range(limit)]
    return out


def _point_alpha_ok(lo, hi):
    return lambda v: (v > lo) is sp.true and (v < hi) is sp.true


def _confirm_refutation(point, run: "ClaimRun", exact: Values) -> Counterexample | None:
    """A counterexample at ``point`` (whose ``exact`` values violate the relation), shrunk to a simpler
    point when the violation survives there (exactly, and with P, Q distributions)."""
    ev, tol = run.ev, run.tol

    def refutes(a2, v2):
        v = ev.fast(a2, v2).violation
        return v is not None and v > tol * 10 and ev.distributions_ok(v2) is True

    shrunk = shrink(point, run.free, None if run.order is not None else _point_alpha_ok(run.lo, run.hi), refutes)
    chosen, values_at = point, exact
    if shrunk != point:
        again = ev.exact(*shrunk)
        if again.violation is not None and again.violation > tol:
            chosen, values_at = shrunk, again
    ca, cvals = chosen
    t, cl = values_at.divergence, values_at.claim
    allv = ev.all_values(cvals)
    with mpmath.workdps(run.dps):
        gap = (cl - t) if not (mpmath.isinf(cl) and mpmath.isinf(t)) else mpmath.mpf(0)
        t_out, c_out, gap_out = +t, +cl, +gap
    numeric = run.tgt.independent(run.order, ca, allv, dps=30) if run.independent else None
    args = {}
    for name in ev.c.used:
        if name in ("alpha", "order"):
            continue
        e = _name_expr(ev, name)
        if e is not None:
            args[name] = e.subs({ev.by_name[k]: v2 for k, v2 in allv.items()})
    return Counterexample(alpha=ev.point_alpha(ca), values=allv, claim_arguments=args, claim_value=c_out,
                          divergence=t_out, gap=gap_out, relation=run.relation, dps=run.dps, numeric=numeric,
                          shrunk_from=None if chosen is point else point)


def _name_expr(evaluator, name):
    c = evaluator.c
    if c.kind == "callable":
        return dict(zip(c.arg_names, c.arg_exprs)).get(name)
    return evaluator.names.get(name)
