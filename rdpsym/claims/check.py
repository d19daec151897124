r"""``check_claim``: is a formula from a paper or a library right about a mechanism's divergence?

A *claim* states ``D REL claim`` where ``D`` is the target's divergence curve D_alpha (Mironov 2017,
arXiv:1702.07476 v3, Def. 3; for a mechanism the RDP curve of Def. 4, the maximum over adjacent pairs
and both directions), or its value at one order (``order=1``: the KL divergence; ``order=oo``: the max
divergence; ``order=2``, ``order=sympy.Rational(5, 2)``: D_2, D_5/2, :mod:`rdpsym.claims.orders`), and ``REL`` is ``==``, ``<=`` (the claim is an upper bound: D <= claim) or ``>=`` (a lower bound).

The verdict, always with evidence (the alpha range, the compared points per regime, the parameter box,
and every point dropped or excluded with the reason):

``refuted``
    A point (alpha and parameter values) where the relation fails by more than ``10^-digits``
    (relative). Found on a grid over typical ranges and edge regimes, by a hypothesis search that
    maximises the violation (``hypothesis.target``), or by the certified pass (ball arithmetic with
    bisection, :mod:`rdpsym.claims.certify`), then shrunk to a simple point (small integers, simple
    fractions). Both values are recomputed exactly (sympy ``evalf`` at ``dps`` digits, then ``2 dps``, then
    Arb balls), P and Q are checked to be distributions there (non-negative, mass 1), and, when the
    densities are known, the divergence is also checked against the independent mpmath path.
``proved``
    No counterexample, and either sympy establishes the relation symbolically (``claim - D`` simplifies
    to 0, or ``exp((alpha-1) claim) - exp((alpha-1) D)`` does, which implies equality of real values
    for alpha != 1; resp. it is non-negative (``<=``) or non-positive (``>=``) by the symbols'
    assumptions, with alpha = 1 + t, t > 0 in the RDP regime). Only a proof for every order and every
    parameter value counts: a box certified by interval arithmetic is evidence for ``confirmed``. For a
    subsampled mechanism (no general closed form) an upper bound is proved when it is proved above the
    base mechanism's curve: subsampling never increases a Rényi divergence (joint quasi-convexity, van Erven
    and Harremoës 2014, Thm. 13; :mod:`rdpsym.claims.subsampling`).
``confirmed``
    No counterexample and no proof: the relation holds to ``digits`` digits at every compared point
    and, for a formula claim, everywhere on the certified pass's box (named in the evidence; a box the
    pass did not finish leaves the verdict inconclusive, since a violation can lie between sampled points),
    at least :data:`~rdpsym.claims.run.MIN_POINTS_PER_REGIME` points were compared in every alpha regime the range
    reaches, no point was dropped, and every candidate violation was recomputed and found to agree.
``inconclusive``
    The target has no closed form for the order; or a point could not be compared by any method (the
    claim raised, was undefined, overflowed or timed out where the divergence is finite, or the
    divergence could not be evaluated); or a candidate violation could not be decided; or a regime has
    too few compared points; or part of the grid was not checked. What cannot be computed counts
    against the claim, never for it.

Every ``proved``, ``confirmed`` and ``refuted`` verdict on a formula carries its certificate
(``ClaimVerdict.certificate``, :mod:`rdpsym.claims.certificate`): the proof's rewrite steps, the certified
pass's partitions, the compared points or the counterexample, with enclosures, bound to the densities by
independent numerics at a few points; ``Certificate.check()`` replays it without a search, and
``check_claim(..., replay=certificate)`` returns its verdict when it is about the same check and holds.

What a check may spend is counted (points, exact retries, rewrite attempts, boxes), so the verdict is the
same on every machine; wall-clock limits are only hang guards (:mod:`rdpsym.claims.guard`).

Points where P or Q is not a probability distribution (parameters inferred from bare symbols have
domains wider than the distributions', e.g. a geometric ratio g in (0, oo)) are excluded: they are outside
the mechanism, and no counterexample comes from them.

Calling convention for callables (checked numerically, with Python floats): ``fn(alpha, **kwargs)`` by
default (``call="keywords"``), where the keyword names are the function's own argument names, each
mapped to the target's parameters like any other claim name (``symbols=``, or inferred). For other
signatures: ``call="positional"`` calls ``fn(alpha, v1, v2, ...)`` in the order of ``arguments``;
``call="params_dict"`` calls ``fn({name: value, ...}, alpha)``, autodp's convention
(``autodp.rdp_bank.RDP_gaussian({'sigma': s}, alpha)``). For one order the callable gets that order as
a float: ``alpha = 1.0`` for ``order=1``, ``math.inf`` for ``order=oo``, ``2.5`` for ``order=5/2``. A callable that raises is outside its domain there (counted, not a
refutation, but a point it cannot answer counts against the claim: inconclusive); NaN or a complex result
where the divergence is finite makes the verdict inconclusive; a result that is not a number (a string) is
a ``TypeError`` naming the callable. Each call has a time limit (:data:`~rdpsym.claims.point.CALL_SECONDS`).

The code: this module reads the arguments and the claim (:func:`check_claim`); the verdict types are in
:mod:`rdpsym.claims.verdict`, the values at one point in :mod:`rdpsym.claims.point`, the stages of a check in
:mod:`rdpsym.claims.run` and the symbolic proof in :mod:`rdpsym.claims.prove`.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any, Mapping, Sequence

import mpmath
import sympy as sp

from .._timeout import check_seconds
from ..derive.result import Status
from ..specify.params import Parameter
from ..specify.text import as_number, parse
from ..symbols import alpha as ALPHA
from .attest import CounterexampleUnbound, DivergenceDisagrees, attest
from .certify import CERTIFY_BOXES, CERTIFY_GUARD_SECONDS
from .orders import order_value
from .point import Claim, Evaluator
from .prove import PROVE_ATTEMPT_SECONDS
from .mapping import SymbolMap, build_symbol_map, default_fixed
from .run import ClaimRun

#: default relative agreement (digits) for a claim about a numeric curve
NUMERIC_CURVE_DIGITS = 15
from .search import alpha_grid
from .target import make_target, usable, within_formula_domains
from .verdict import ClaimVerdict, Counterexample, Verdict

__all__ = ["Verdict", "Counterexample", "ClaimVerdict", "check_claim", "RELATIONS"]

RELATIONS = ("==", "<=", ">=")
#: how the evidence begins when a certificate given as ``replay=`` was replayed, or was not used (and why)
REPLAYED_NOTE, UNUSED_NOTE = "replayed a certificate", "searched: the given certificate was not used"


def _parse_claim(claim, smap: SymbolMap, syntax: str) -> tuple[sp.Expr, tuple[str, ...]]:
    placeholders = {name: sp.Dummy(name) for name in smap.names}
    if isinstance(claim, str):
        expr = parse(claim, placeholders, syntax)
    else:
        by_name = {}
        for s in claim.free_symbols:
            if s.name not in placeholders:
                raise ValueError(f"claim: unknown symbol {s.name!r}; known names: {', '.join(sorted(smap.names))} "
                                 "(map others with symbols={...})")
            by_name[s] = placeholders[s.name]
        expr = claim.xreplace(by_name)
    back = {d: name for name, d in placeholders.items()}
    used = tuple(sorted(back[s] for s in expr.free_symbols if s in back))
    expr = expr.xreplace({placeholders[n]: smap.names[n] for n in used})
    return expr, used


def _callable_names(fn, call: str, arguments, params: Sequence[Parameter]) -> tuple[str, ...]:
    if arguments is not None:
        return tuple(arguments)
    if call != "keywords":
        raise ValueError(f"arguments: needed for call={call!r} (the names of the values the callable takes)")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return tuple(p.name for p in params)
    ps = list(sig.parameters.values())
    if ps and ps[0].kind in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD):
        ps = ps[1:]  # alpha
    names = [p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not names and any(p.kind == p.VAR_KEYWORD for p in ps):
        return tuple(p.name for p in params)
    return tuple(names)


# ---------------------------------------------------------------------------------------------------
# check_claim
# ---------------------------------------------------------------------------------------------------
def check_claim(
    target,
    claim,
    relation: str = "==",
    order=None,
    symbols: Mapping[str, Any] | None = None,
    *,
    fixed: Mapping[str, Any] | None = None,
    latex: bool = False,
    parameters: Sequence[Parameter] | None = None,
    alpha_range: tuple = (1, sp.oo),
    call: str = "keywords",
    arguments: Sequence[str] | None = None,
    digits: int | None = None,
    dps: int = 50,
    search: int = 100,
    prove: bool = True,
    prove_seconds: float = PROVE_ATTEMPT_SECONDS,
    certify: bool = True,
    certify_boxes: int = CERTIFY_BOXES,
    certify_seconds: float = CERTIFY_GUARD_SECONDS,
    independent: bool = True,
    cache: bool = True,
    executor: Any = "serial",
    replay: Any = None,
) -> ClaimVerdict:
    """Check ``divergence REL claim`` for a mechanism or a derivation result (see the module docstring).

    Parameters
    ----------
    target: a :class:`~rdpsym.Mechanism` (its RDP curve is derived with :func:`rdpsym.rdp`) or a
        :class:`~rdpsym.DivergenceResult` (pass ``parameters`` for domains and typical ranges; without
        them domains come from the symbols' assumptions).
    claim: a sympy expression, a formula string (Python-like, or LaTeX; parsed by the safe parsers of
        :mod:`rdpsym.specify.text`, never evaluated), or a Python callable (checked numerically).
    relation: ``"=="``, ``"<="`` (the claim is an upper bound) or ``">="``.
    order: None (the whole curve, a function of alpha), or one order: ``1`` (KL), ``sympy.oo`` (max
        divergence), or any other positive rational (``2``, ``sympy.Rational(5, 2)``, ``"5/2"``; a float at
        its exact binary value), where the truth is the curve's value there: its limit at a removable order,
        +oo where the finiteness conditions fail, and for a target without a general form its exact integer
        order or else its certified numeric value (:func:`~rdpsym.claims.target.truth_at`). A claim about one
        order must not depend on alpha; ``alpha_range`` is then not used.
    symbols: explicit mapping of the claim's names: ``{"lambda": "b"}``, ``{"eps": "1/b"}``.
    fixed: parameter values to hold fixed (``{"sensitivity": 1}``). Default: an unmentioned
        ``sensitivity`` is fixed at 1 (reported); ``fixed={}`` checks all sensitivities.
    latex: parse a string claim as LaTeX (default: auto-detect a backslash or brace).
    alpha_range: the open interval of orders the claim is about; default (1, oo), the RDP regime
        papers state. ``(0, oo)`` includes (0, 1).
    call, arguments: calling convention of a callable claim (module docstring).
    digits: relative agreement required; default 30 for formulas, 8 for callables (float code loses
        digits to cancellation near alpha = 1; the verdict's ``digits`` reports the agreement found),
        and at most :data:`NUMERIC_CURVE_DIGITS` (15) for a target without a closed form (a numeric
        curve, :mod:`rdpsym.claims.numeric_run`).
    dps: working precision of the reported values.
    search: number of hypothesis-guided points (0: grid only; also 0 if hypothesis is not installed).
    prove: try a symbolic proof (:mod:`rdpsym.claims.prove`): a fixed sequence of sympy rewrites, each one
        attempt, so the same proofs are found on every machine.
    prove_seconds: the hang guard of each rewrite attempt (default 60 s, far above sympy's typical time);
        it only stops a rewrite that would never end, and the evidence says when it fired
        ("a hang guard of 60 s fired in the symbolic proof (simplify_difference)").
    certify, certify_boxes: run the certified pass (ball arithmetic with bisection over the alpha regimes
        and the parameter box, :mod:`rdpsym.claims.certify`) for formula claims, bisecting at most
        ``certify_boxes`` boxes in all (a count of work: the same boxes on every machine); it proves a
        relation on the whole box or finds a violating point. ``certify_boxes=0`` is ``certify=False``.
    certify_seconds: the hang guard of the certified pass (default 600 s, far above the time the box
        budget takes); when it fires the pass is unfinished (``inconclusive``) and the evidence says so.
    independent: check reported points against the mpmath numerics when the densities are known.
    replay: a :class:`~rdpsym.claims.certificate.Certificate` of an earlier check of this claim (e.g. read
        from the regression registry): when it is about this claim, this target (divergence, densities,
        parameters, fixed values, alpha range) and these options, and it still holds, its verdict is
        returned without a search (the evidence says "replayed"); otherwise the check searches as usual
        and the evidence says why the certificate was not used.
    executor: where the grid is evaluated, as in :func:`rdpsym.execution.run_tasks`: ``"serial"``
        (default: a grid point costs about a millisecond, so for the usual few hundred points worker
        start-up would cost more than it saves), ``None`` (all local cores), an int number of processes,
        or a Dask scheduler address or client. The grid is split into tasks of consecutive points
        (:data:`~rdpsym.claims.run.GRID_BLOCK`) and the results are combined in grid order, so the verdict, the evidence and
        the counterexample are the same on every executor. The hypothesis-guided search is sequential
        by nature (each point steers the next) and runs in this process. A grid task that fails (its
        worker died, or the evaluation raised) is named in the evidence, and without a refutation the
        verdict is then ``inconclusive``: points that were not checked are never counted as agreeing.

    The verdict fails closed: ``confirmed`` needs agreement at every compared point, at least
    :data:`~rdpsym.claims.run.MIN_POINTS_PER_REGIME` compared points in each alpha regime the range reaches (alpha in (0,1),
    near 1, moderate, large), and no point dropped. A point where a side has no value by the fast path is
    recomputed exactly (at ``dps`` and ``2 dps`` digits, then by ball arithmetic); if it still has none it
    counts against the claim (``inconclusive``, with the reason). A candidate violation that cannot be
    recomputed, or at which P and Q cannot be shown to be distributions, is ``inconclusive`` too; one
    where they are not distributions is excluded (the parameters are outside the mechanism). The
    evidence states the alpha range, the compared points per regime, the parameter box and every point
    dropped or excluded, with the reason.
    """
    order, lo, hi = _checked_options(relation, order, call, alpha_range, digits, dps)
    if isinstance(certify_boxes, bool) or not isinstance(certify_boxes, int) or certify_boxes < 0:
        raise ValueError(f"certify_boxes must be a number of boxes >= 0; got {certify_boxes!r}")
    prove_seconds = check_seconds(prove_seconds, "prove_seconds")
    certify_seconds = check_seconds(certify_seconds, "certify_seconds")
    declared = make_target(target, parameters, cache=cache)
    tgt, scope = within_formula_domains(declared)
    params = tgt.parameters
    smap = build_symbol_map(declared.parameters, symbols, fixed)
    outside = _outside_formula(smap.fixed, params)
    c = _read_claim(claim, smap, order, latex, call, arguments, params, tgt.label)
    smap, free, mapping_text, inferred = _hold_fixed(smap, params, c, fixed is not None)
    asked_digits = digits
    digits = _default_digits(digits, c, dps)
    tol = mpmath.mpf(10) ** (-digits)

    ok, why = usable(tgt.result, order)
    truth_expr = tgt.truth_expr(order)
    base = dict(verdict=Verdict.INCONCLUSIVE, relation=relation, order=order, claim=claim,
                divergence=truth_expr, mapping=mapping_text, inferred=inferred, target=tgt.label)
    numeric = not ok and tgt.result.status is Status.NUMERIC_ONLY and tgt.directions
    if numeric and asked_digits is None:
        # certified quadrature to 30 digits at every point is not needed to tell a published formula
        # from a wrong one, and is often out of reach (heavy tails, far-apart densities)
        digits = min(digits, NUMERIC_CURVE_DIGITS)
    if outside:
        return ClaimVerdict(evidence=(outside,) + scope, **base)
    stale = None
    if replay is not None:
        replayed = _replayed(replay, tgt, c, relation, order, (lo, hi), smap.fixed, digits, dps, base)
        if isinstance(replayed, ClaimVerdict):
            return _scoped(_on_lower_bound(tgt.result, replayed), scope)
        stale = replayed
    if numeric:
        # a numeric curve: a proof through a theorem about how the curve was made (subsampling), else
        # certified values on a grid, refuted only when the reference method agrees
        from .numeric_run import check_numeric_claim
        from .subsampling import prove_through_subsampling

        found = prove_through_subsampling(tgt, c, relation, order, smap.fixed, (lo, hi), digits, dps,
                                          prove_seconds) if prove else ""
        if isinstance(found, dict):
            return _scoped(_on_lower_bound(tgt.result, _noting(ClaimVerdict(**{**base, **found}), stale)), scope)
        fields = check_numeric_claim(tgt, c, relation, order, smap.fixed, free, (lo, hi), digits, dps, independent)
        if found:
            fields = {**fields, "evidence": tuple(fields.get("evidence", ())) + (found,)}
        return _scoped(_on_lower_bound(tgt.result, _noting(ClaimVerdict(**{**base, **fields}), stale)), scope)
    if not ok:
        return ClaimVerdict(evidence=(why,) + scope, **base)

    evaluator = Evaluator(tgt, c, order, smap.fixed, dps, relation, smap.names)
    if c.kind == "callable":
        _probe_callable(evaluator, order, lo, hi, free)
    run = ClaimRun(evaluator, relation, order, (lo, hi), tol, digits, dps, free, independent)
    for verdict in run.stages(executor, search, prove, prove_seconds, certify_boxes if certify else 0,
                              certify_seconds):
        if verdict is not None:
            try:
                certificate = attest(run, verdict)
            except DivergenceDisagrees as exc:
                verdict, certificate = _withdrawn(verdict, exc), None
            except CounterexampleUnbound as exc:
                verdict, certificate = _unbound(verdict, exc), None
            found = ClaimVerdict(**{**base, **verdict}, certificate=certificate)
            return _scoped(_on_lower_bound(tgt.result, _noting(found, stale)), scope)
    raise AssertionError("unreachable: the last stage always decides")  # pragma: no cover


def _outside_formula(fixed: Mapping, params: Sequence[Parameter]) -> str | None:
    """Why a value held fixed lies where the derived formula does not hold (outside a domain
    :func:`~rdpsym.claims.target.within_formula_domains` narrowed), or None."""
    for p in params:
        if p.name in fixed and sp.S(fixed[p.name]).is_number and p.domain.contains(sp.S(fixed[p.name])) is sp.false:
            return (f"not decided: {p.name} = {sp.sstr(fixed[p.name])} lies where the derived formula is not the "
                    "divergence of the densities")
    return None


def _scoped(verdict: ClaimVerdict, scope: tuple[str, ...]) -> ClaimVerdict:
    """The verdict with the parameter domains it was decided on stated second in its evidence (after the
    line that gives the verdict), when they are narrower than the declared ones."""
    if not scope:
        return verdict
    head, rest = verdict.evidence[:1], verdict.evidence[1:]
    return replace(verdict, evidence=tuple(head) + scope + tuple(rest))


def _unbound(fields: dict, exc: Exception) -> dict:
    """A refutation whose counterexample the densities' numerics cannot reach: ``inconclusive``, saying where
    the derived formula shows the violation (:class:`~rdpsym.claims.attest.CounterexampleUnbound`)."""
    why = (f"not refuted: the derived divergence violates the claim at {exc}, but the independent numerics of the "
           "densities do not converge there, so the violation is not bound to the mechanism (a certificate would "
           "not replay)")
    return {**fields, "verdict": Verdict.INCONCLUSIVE, "counterexample": None,
            "evidence": (why,) + tuple(fields.get("evidence", ()))}


def _withdrawn(fields: dict, exc: Exception) -> dict:
    """The verdict ``fields`` withdrawn: the derived divergence it rests on is not the densities' at a
    binding point (:class:`~rdpsym.claims.attest.DivergenceDisagrees`), so it is ``inconclusive``."""
    was = fields["verdict"].value
    why = (f"not {was}: the derived divergence disagrees with the mechanism's densities {exc}; a verdict "
           "that rests on it is withdrawn")
    return {**fields, "verdict": Verdict.INCONCLUSIVE, "counterexample": None,
            "evidence": (why,) + tuple(fields.get("evidence", ()))}


def _noting(verdict: ClaimVerdict, stale: str | None) -> ClaimVerdict:
    """The verdict with a note on the certificate that was not used (None: no certificate was given)."""
    if stale is None:
        return verdict
    return replace(verdict, evidence=verdict.evidence + (f"{UNUSED_NOTE} ({stale})",))


def _replayed(cert, tgt, c, relation, order, alpha_range, fixed, digits, dps, base):
    """The verdict of ``cert`` when it is about this check and holds; else why not (a string)."""
    from .certificate import Certificate
    from .replay import mismatch

    if not isinstance(cert, Certificate):
        raise TypeError(f"replay: expected an rdpsym.Certificate, got {type(cert).__name__}")
    if c.kind != "expr":
        return "the claim is a callable"
    from .subsampling import base_mismatch

    differs = (mismatch(cert, tgt, c.expr, relation, order, alpha_range, fixed, digits, dps)
               or base_mismatch(cert, tgt, order))
    if differs:
        return f"it is about another check: {differs}"
    outcome = cert.check()
    if not outcome.holds:
        return f"it no longer holds: {outcome.reason}"
    verdict = Verdict(cert.verdict)
    evidence = (f"{REPLAYED_NOTE} ({cert.method}, {outcome.seconds:.1f} s): {outcome.reason}",) + outcome.checked
    cex = None
    if verdict is Verdict.REFUTED:
        cex = _replayed_counterexample(cert, relation)
    return ClaimVerdict(**{**base, "verdict": verdict, "evidence": evidence, "counterexample": cex, "certificate": cert})


def _replayed_counterexample(cert, relation) -> Counterexample:
    """The counterexample of a refutation certificate (its values at the midpoints of the enclosures)."""
    from .partition import ball_from_text

    pt = cert.data
    with mpmath.workdps(cert.dps):
        c, t = (mpmath.mpf(ball_from_text(pt[k]).mid().str(cert.dps, radius=False)) if ball_from_text(pt[k]).is_finite()
                else mpmath.inf for k in ("claim", "divergence"))
        gap = c - t if not (mpmath.isinf(c) and mpmath.isinf(t)) else mpmath.mpf(0)
    return Counterexample(alpha=pt["alpha"], values={**pt["values"], **cert.fixed}, claim_arguments={}, claim_value=c,
                          divergence=t, gap=gap, relation=relation, dps=cert.dps)


def _on_lower_bound(result, verdict: ClaimVerdict) -> ClaimVerdict:
    """The verdict on the mechanism when the target's values are only lower bounds on its RDP
    (status ``lower_bound``: some of its neighbouring inputs). With L <= RDP:

    * an upper-bound claim (``<=``, or the upper half of ``==``) is refuted where L exceeds it, since then
      the RDP does too; agreement shows nothing about the inputs not covered: ``inconclusive``;
    * a lower-bound claim (``>=``) holds where L is above it: proved and confirmed stand; a point where
      L is below it says nothing about the RDP: ``inconclusive``.
    """
    if result.status is not Status.LOWER_BOUND:
        return verdict
    note = f"the target's values are lower bounds on the RDP ({result.reason})"
    v, cx = verdict.verdict, verdict.counterexample
    if verdict.relation == ">=":
        keep = v in (Verdict.PROVED, Verdict.CONFIRMED, Verdict.INCONCLUSIVE)
    else:
        above = cx is not None and cx.gap is not None and cx.divergence is not None and bool(cx.gap < 0)
        keep = v is Verdict.INCONCLUSIVE or (v is Verdict.REFUTED and above)
    if keep and v is Verdict.INCONCLUSIVE:
        what = ("they can refute an upper bound on the RDP, never prove or confirm it" if verdict.relation != ">="
                else "the verdict on them is the verdict on the mechanism")
        return replace(verdict, evidence=verdict.evidence + (f"{note}: {what}",))
    if keep:
        return replace(verdict, evidence=verdict.evidence + (f"{note}: the verdict holds for the mechanism",))
    why = ("agreement with an upper bound here shows nothing about the neighbouring inputs not covered"
           if v in (Verdict.PROVED, Verdict.CONFIRMED) else "a value below the claim says nothing about the RDP")
    return replace(verdict, verdict=Verdict.INCONCLUSIVE, counterexample=None, certificate=None,
                   evidence=verdict.evidence + (f"was {v.value}, but {note}: {why}",))


# ---------------------------------------------------------------------------------------------------
# the stages of check_claim before the run: options, the claim, what is held fixed
# ---------------------------------------------------------------------------------------------------
def _checked_options(relation, order, call, alpha_range, digits, dps):
    """The options checked (``ValueError`` naming each), as ``(order, lo, hi)``."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}; got {relation!r}")
    order = order_value(order)
    if call not in ("keywords", "positional", "params_dict"):
        raise ValueError(f"call must be 'keywords', 'positional' or 'params_dict'; got {call!r}")
    try:
        lo, hi = (as_number(v, "alpha_range") for v in alpha_range)
    except (TypeError, ValueError):
        lo = hi = None
    if lo is None or hi is None or not (bool(lo >= 0) and bool(lo < hi)):
        raise ValueError(f"alpha_range must be (low, high) numbers with 0 <= low < high; got {alpha_range!r}")
    if digits is not None and (isinstance(digits, bool) or not isinstance(digits, (int, float))
                               or not 1 <= digits <= dps):
        # NaN or negative digits made the tolerance meaningless (a wrong claim was confirmed)
        raise ValueError(f"digits must be a number in [1, dps = {dps}]; got {digits!r}")
    return order, lo, hi


def _read_claim(claim, smap: SymbolMap, order, latex: bool, call: str, arguments, params: Sequence[Parameter],
                label: str) -> Claim:
    """The claim as something to evaluate: a formula parsed with the claim's names mapped, or a callable
    whose arguments each map to the target's parameters."""
    if isinstance(claim, (str, sp.Basic)):
        syntax = "latex" if latex else "auto"
        expr, used = _parse_claim(claim, smap, syntax)
        c = Claim("expr", expr=expr, used=used)
        if order is not None and ALPHA in expr.free_symbols:
            raise ValueError(f"claim: a claim about order={order} must not depend on alpha")
        return c
    if callable(claim):
        names = _callable_names(claim, call, arguments, params)
        missing = [n for n in names if n not in smap.names]
        if missing:
            raise ValueError(f"claim: the callable's arguments {missing} match no parameter of {label!r}; "
                             f"map them with symbols={{...}} (parameters: {[p.name for p in params]})")
        arg_exprs = tuple(smap.names[n] for n in names)
        return Claim("callable", fn=claim, call=call, arg_names=names, arg_exprs=arg_exprs, used=names)
    raise TypeError(f"claim: expected a sympy expression, a formula string or a callable; got {type(claim).__name__}")


def _hold_fixed(smap: SymbolMap, params: Sequence[Parameter], c: Claim, explicit: bool):
    """The parameters held fixed (the defaults for those the claim does not mention, unless ``fixed``
    was given): ``(symbol map, free parameters, mapping text, inferred notes)``."""
    used_params = set()
    sym_to_name = {p.symbol: p.name for p in params}
    for n in c.used:
        used_params |= {sym_to_name[s] for s in smap.names[n].free_symbols if s in sym_to_name}
    smap = default_fixed(smap, params, used_params, explicit)
    fixed_vals = smap.fixed
    free = [p for p in params if p.name not in fixed_vals]
    mapping_text = smap.describe(c.used)
    inferred = tuple(smap.inferred(c.used)) + tuple(
        f"{k} = {sp.sstr(v)} ({smap.fixed_notes[k]})" for k, v in fixed_vals.items() if smap.fixed_notes.get(k) != "explicit")
    return smap, free, mapping_text, inferred


def _default_digits(digits, c: Claim, dps: int):
    if digits is None:
        # 30 digits (8 for float code) at the default dps = 50; never more than 60% of the working
        # precision, or rounding at dps digits would count as disagreement
        digits = max(1, min(30 if c.kind == "expr" else 8, int(0.6 * dps)))
    return digits


def _probe_callable(evaluator: Evaluator, order, lo, hi, free) -> None:
    """A callable that returns something other than a number is an error, named, before any sweep."""
    probe_alphas = [None] if order is not None else alpha_grid(lo, hi)[:1]
    for probe_alpha in probe_alphas:
        evaluator.fast(probe_alpha, {p.name: p.typical_values(1)[0] for p in free})
