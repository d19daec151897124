r"""``check_claim``: is a formula from a paper or a library right about a mechanism's divergence?

A *claim* states ``D REL claim`` where ``D`` is the target's divergence curve D_alpha (Mironov 2017,
arXiv:1702.07476 v3, Def. 3; for a mechanism the RDP curve of Def. 4, the maximum over adjacent pairs
and both directions), or one special order of it (``order=1``: the KL divergence; ``order=oo``: the max
divergence), and ``REL`` is ``==``, ``<=`` (the claim is an upper bound: D <= claim) or ``>=`` (a lower bound).

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
    parameter value counts: a box certified by interval arithmetic is evidence for ``confirmed``.
``confirmed``
    No counterexample and no proof: the relation holds to ``digits`` digits at every compared point
    and, for a formula claim, everywhere on the certified pass's box (named in the evidence; a box the
    pass did not finish leaves the verdict inconclusive, since a violation can lie between sampled points),
    at least :data:`MIN_POINTS_PER_REGIME` points were compared in every alpha regime the range
    reaches, no point was dropped, and every candidate violation was recomputed and found to agree.
``inconclusive``
    The target has no closed form for the order; or a point could not be compared by any method (the
    claim raised, was undefined, overflowed or timed out where the divergence is finite, or the
    divergence could not be evaluated); or a candidate violation could not be decided; or a regime has
    too few compared points; or part of the grid was not checked. What cannot be computed counts
    against the claim, never for it.

Points where P or Q is not a probability distribution (parameters inferred from bare symbols have
domains wider than the distributions', e.g. a geometric ratio g in (0, oo)) are excluded: they are outside
the mechanism, and no counterexample comes from them.

Calling convention for callables (checked numerically, with Python floats): ``fn(alpha, **kwargs)`` by
default (``call="keywords"``), where the keyword names are the function's own argument names, each
mapped to the target's parameters like any other claim name (``symbols=``, or inferred). For other
signatures: ``call="positional"`` calls ``fn(alpha, v1, v2, ...)`` in the order of ``arguments``;
``call="params_dict"`` calls ``fn({name: value, ...}, alpha)``, autodp's convention
(``autodp.rdp_bank.RDP_gaussian({'sigma': s}, alpha)``). For ``order=1``/``order=oo`` the callable
gets ``alpha = 1.0`` / ``math.inf``. A callable that raises is outside its domain there (counted, not a
refutation, but a point it cannot answer counts against the claim: inconclusive); NaN or a complex result
where the divergence is finite makes the verdict inconclusive; a result that is not a number (a string) is
a ``TypeError`` naming the callable. Each call has a time limit (:data:`CALL_SECONDS`).
"""

from __future__ import annotations

import enum
import inspect
from collections import Counter
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import mpmath
import sympy as sp

from ..derive.result import DivergenceResult
from ..derive.timeout import StepTimeout, run_with_time_limit, time_limit
from ..specify.params import Parameter
from ..specify.text import as_number, parse
from ..symbols import alpha as ALPHA
from .fasteval import compile_mp, real_value
from .mapping import SymbolMap, build_symbol_map, default_fixed
from .search import alpha_grid, guided_search, parameter_grid, shrink
from .target import Target, make_target, usable

__all__ = ["Verdict", "Counterexample", "ClaimVerdict", "check_claim", "RELATIONS"]

RELATIONS = ("==", "<=", ">=")


class Verdict(str, enum.Enum):
    """The outcome of :func:`check_claim`."""

    PROVED = "proved"
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"

    def __str__(self) -> str:
        return self.value


def _fmt(v, digits: int = 20) -> str:
    if v is None:
        return "undefined"
    if isinstance(v, sp.Basic):
        return sp.sstr(v)
    if mpmath.isinf(v):
        return "+oo" if v > 0 else "-oo"
    return mpmath.nstr(v, digits)


@dataclass(frozen=True)
class Counterexample:
    """A point where the claim fails, with both values at ``dps`` digits.

    ``values``: the target's parameters (free and fixed); ``claim_arguments``: what the claim's own
    names stood for there (``lambda = 3``); ``gap = claim - divergence``; ``numeric``: the independent
    mpmath value of the divergence ``(value, error, converged, detail)`` or None.
    """

    alpha: sp.Expr
    values: dict[str, sp.Expr]
    claim_arguments: dict[str, sp.Expr]
    claim_value: Any
    divergence: Any
    gap: Any
    relation: str
    dps: int
    numeric: tuple | None = None
    shrunk_from: tuple | None = None

    def describe(self) -> str:
        point = ", ".join([f"alpha = {_fmt(self.alpha)}"] + [f"{k} = {_fmt(v)}" for k, v in self.values.items()])
        args = ", ".join(f"{k} = {_fmt(v)}" for k, v in self.claim_arguments.items())
        lines = [f"at {point}" + (f" (claim's names: {args})" if args else ""),
                 f"  claim      = {_fmt(self.claim_value, 30)}",
                 f"  divergence = {_fmt(self.divergence, 30)}",
                 f"  gap (claim - divergence) = {_fmt(self.gap, 10)}; the claim needs divergence {self.relation} claim"]
        if self.numeric is not None:
            value, error, converged, detail = self.numeric
            lines.append(f"  independent numerics (mpmath): {_fmt(value, 20)} +- {_fmt(error, 3)}"
                         f" ({'converged' if converged else 'not converged: ' + str(detail)})")
        return "\n".join(lines)


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict on a claim, with everything it rests on (see :func:`check_claim`)."""

    verdict: Verdict
    relation: str
    order: Any
    claim: Any
    divergence: sp.Expr | None
    mapping: str
    inferred: tuple[str, ...]
    evidence: tuple[str, ...]
    counterexample: Counterexample | None = None
    points_checked: int = 0
    digits: float | None = None
    target: str = ""

    @property
    def ok(self) -> bool:
        """True for ``proved`` and ``confirmed``."""
        return self.verdict in (Verdict.PROVED, Verdict.CONFIRMED)

    def __str__(self) -> str:
        what = "D_alpha" if self.order is None else ("D_1 (KL)" if self.order == 1 else "D_oo")
        claim = self.claim if isinstance(self.claim, str) else (
            sp.sstr(self.claim) if isinstance(self.claim, sp.Basic) else getattr(self.claim, "__name__", repr(self.claim)))
        lines = [f"{self.verdict.value.upper()}: {what} of {self.target} {self.relation} claim",
                 f"  claim: {claim}"]
        if self.divergence is not None:
            lines.append(f"  derived: {sp.sstr(self.divergence)}")
        if self.mapping:
            lines.append(f"  symbols: {self.mapping}")
        for line in self.evidence:
            lines.append(f"  - {line}")
        if self.counterexample is not None:
            lines.append("  counterexample " + self.counterexample.describe())
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# the claim as something to evaluate
# ---------------------------------------------------------------------------------------------------
@dataclass
class _Claim:
    kind: str  # "expr" or "callable"
    expr: sp.Expr | None = None
    fn: Callable | None = None
    call: str = "keywords"
    arg_names: tuple[str, ...] = ()
    arg_exprs: tuple[sp.Expr, ...] = ()
    used: tuple[str, ...] = ()
    _fast: Any = None
    _arg_fast: tuple = ()


def _order_value(order):
    if order is None:
        return None
    if order == 1:
        return 1
    if order in (sp.oo, math.inf, "oo", "inf"):
        return sp.oo
    raise ValueError(f"order must be None, 1 or sympy.oo; got {order!r}")


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
    prove_seconds: float = 10.0,
    certify: bool = True,
    certify_seconds: float = 10.0,
    independent: bool = True,
    cache: bool = True,
    executor: Any = "serial",
) -> ClaimVerdict:
    """Check ``divergence REL claim`` for a mechanism or a derivation result (see the module docstring).

    Parameters
    ----------
    target: a :class:`~rdpsym.Mechanism` (its RDP curve is derived with :func:`rdpsym.rdp`) or a
        :class:`~rdpsym.DivergenceResult` (pass ``parameters`` for domains and typical ranges; without
        them domains come from the symbols' assumptions).
    claim: a sympy expression, a formula string (Python-like, or LaTeX; parsed by the safe parsers of
        :mod:`rdpsym.specify.parse`, never evaluated), or a Python callable (checked numerically).
    relation: ``"=="``, ``"<="`` (the claim is an upper bound) or ``">="``.
    order: None (the whole curve, a function of alpha), ``1`` (KL) or ``sympy.oo`` (max divergence).
    symbols: explicit mapping of the claim's names: ``{"lambda": "b"}``, ``{"eps": "1/b"}``.
    fixed: parameter values to hold fixed (``{"sensitivity": 1}``). Default: an unmentioned
        ``sensitivity`` is fixed at 1 (reported); ``fixed={}`` checks all sensitivities.
    latex: parse a string claim as LaTeX (default: auto-detect a backslash or brace).
    alpha_range: the open interval of orders the claim is about; default (1, oo), the RDP regime
        papers state. ``(0, oo)`` includes (0, 1).
    call, arguments: calling convention of a callable claim (module docstring).
    digits: relative agreement required; default 30 for formulas, 8 for callables (float code loses
        digits to cancellation near alpha = 1; the verdict's ``digits`` reports the agreement found).
    dps: working precision of the reported values.
    search: number of hypothesis-guided points (0: grid only; also 0 if hypothesis is not installed).
    prove: try a symbolic proof (each attempt limited to ``prove_seconds``).
    certify, certify_seconds: run the certified pass (ball arithmetic with bisection over the alpha
        regimes and the parameter box, :mod:`rdpsym.claims.certify`) for formula claims, within
        ``certify_seconds`` in all; it proves a relation on the whole box or finds a violating point.
    independent: check reported points against the mpmath numerics when the densities are known.
    executor: where the grid is evaluated, as in :func:`rdpsym.execution.run_tasks`: ``"serial"``
        (default: a grid point costs about a millisecond, so for the usual few hundred points worker
        start-up would cost more than it saves), ``None`` (all local cores), an int number of processes,
        or a Dask scheduler address or client. The grid is split into tasks of consecutive points
        (:data:`GRID_BLOCK`) and the results are combined in grid order, so the verdict, the evidence and
        the counterexample are the same on every executor. The hypothesis-guided search is sequential
        by nature (each point steers the next) and runs in this process. A grid task that fails (its
        worker died, or the evaluation raised) is named in the evidence, and without a refutation the
        verdict is then ``inconclusive``: points that were not checked are never counted as agreeing.

    The verdict fails closed: ``confirmed`` needs agreement at every compared point, at least
    :data:`MIN_POINTS_PER_REGIME` compared points in each alpha regime the range reaches (alpha in (0,1),
    near 1, moderate, large), and no point dropped. A point where a side has no value by the fast path is
    recomputed exactly (at ``dps`` and ``2 dps`` digits, then by ball arithmetic); if it still has none it
    counts against the claim (``inconclusive``, with the reason). A candidate violation that cannot be
    recomputed, or at which P and Q cannot be shown to be distributions, is ``inconclusive`` too; one
    where they are not distributions is excluded (the parameters are outside the mechanism). The
    evidence states the alpha range, the compared points per regime, the parameter box and every point
    dropped or excluded, with the reason.
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}; got {relation!r}")
    order = _order_value(order)
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
    tgt = make_target(target, parameters, cache=cache)
    params = tgt.parameters
    smap = build_symbol_map(params, symbols, fixed)

    # --- the claim ----------------------------------------------------------------------------------
    if isinstance(claim, (str, sp.Basic)):
        syntax = "latex" if latex else "auto"
        expr, used = _parse_claim(claim, smap, syntax)
        c = _Claim("expr", expr=expr, used=used)
        if order is not None and ALPHA in expr.free_symbols:
            raise ValueError(f"claim: a claim about order={order} must not depend on alpha")
    elif callable(claim):
        names = _callable_names(claim, call, arguments, params)
        missing = [n for n in names if n not in smap.names]
        if missing:
            raise ValueError(f"claim: the callable's arguments {missing} match no parameter of {tgt.label!r}; "
                             f"map them with symbols={{...}} (parameters: {[p.name for p in params]})")
        arg_exprs = tuple(smap.names[n] for n in names)
        c = _Claim("callable", fn=claim, call=call, arg_names=names, arg_exprs=arg_exprs, used=names)
    else:
        raise TypeError(f"claim: expected a sympy expression, a formula string or a callable; got {type(claim).__name__}")
    used_params = set()
    sym_to_name = {p.symbol: p.name for p in params}
    for n in c.used:
        used_params |= {sym_to_name[s] for s in smap.names[n].free_symbols if s in sym_to_name}
    smap = default_fixed(smap, params, used_params, fixed is not None)
    fixed_vals = smap.fixed
    free = [p for p in params if p.name not in fixed_vals]
    mapping_text = smap.describe(c.used)
    inferred = tuple(smap.inferred(c.used)) + tuple(
        f"{k} = {sp.sstr(v)} ({smap.fixed_notes[k]})" for k, v in fixed_vals.items() if smap.fixed_notes.get(k) != "explicit")
    if digits is None:
        # 30 digits (8 for float code) at the default dps = 50; never more than 60% of the working
        # precision, or rounding at dps digits would count as disagreement
        digits = max(1, min(30 if c.kind == "expr" else 8, int(0.6 * dps)))
    tol = mpmath.mpf(10) ** (-digits)

    ok, why = usable(tgt.result, order)
    truth_expr = tgt.truth_expr(order)
    base = dict(verdict=Verdict.INCONCLUSIVE, relation=relation, order=order, claim=claim,
                divergence=truth_expr, mapping=mapping_text, inferred=inferred, target=tgt.label)
    if not ok:
        return ClaimVerdict(evidence=(why,), **base)

    evaluator = _Evaluator(tgt, c, order, fixed_vals, dps)
    evaluator.names = smap.names
    if c.kind == "callable":
        # a callable that returns something other than a number is an error, named, before any sweep
        probe_alphas = [None] if order is not None else alpha_grid(lo, hi)[:1]
        for probe_alpha in probe_alphas:
            evaluator.values(probe_alpha, {p.name: p.typical_values(1)[0] for p in free})
    run = _ClaimRun(evaluator, relation, order, (lo, hi), tol, digits, dps, free, independent)
    for verdict in run.stages(executor, search, prove, prove_seconds, certify_seconds if certify else 0):
        if verdict is not None:
            return ClaimVerdict(**{**base, **verdict})
    raise AssertionError("unreachable: the last stage always decides")  # pragma: no cover


# ---------------------------------------------------------------------------------------------------
# the stages of a check, with a tally of every point
# ---------------------------------------------------------------------------------------------------
#: alpha regimes a check covers (each one the claim's alpha range reaches needs compared points)
REGIMES = ("alpha in (0,1)", "alpha near 1", "moderate alpha", "large alpha")
#: compared points needed in each regime the alpha range reaches before "confirmed"
MIN_POINTS_PER_REGIME = 2
#: candidate violations resolved exactly (largest first) before giving up on a refutation
MAX_CANDIDATES = 6
#: points whose fast evaluation failed that are retried exactly, and the time for all of them
MAX_RETRIES, RETRY_SECONDS, POINT_SECONDS = 40, 20.0, 3.0


#: orders 10^k probed beyond the certified range when the claim's limit at alpha -> oo is not decided
_PROBE_EXPONENTS = (7, 9, 12, 15, 20, 30)
_SLOW_REASON = "the callable did not return within its time limit"
_OVERFLOW_REASON = "the claim's value is beyond the working range (an exponent above 2^100)"


def _regime(a) -> str:
    if a is None:
        return "the special order"
    if a < 1:
        return REGIMES[0]
    if a <= sp.Rational(101, 100):
        return REGIMES[1]
    if a < 100:
        return REGIMES[2]
    return REGIMES[3]


def _required_regimes(lo, hi) -> list[str]:
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


class _ClaimRun:
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
        self.unresolved: list[tuple[tuple, str]] = []
        self.vanished = 0
        self.min_digits = mpmath.inf
        self.param_span: dict[str, list] = {}
        self.evidence_head: list[str] = []
        self.certification = None
        self.limit_note = ""

    # -- bookkeeping --------------------------------------------------------------------------------
    def _compared(self, point, v, finite_t):
        a, values = point
        self.compared += 1
        regime = _regime(a)
        self.compared_by_regime[regime] = self.compared_by_regime.get(regime, 0) + 1
        for k, val in values.items():
            span = self.param_span.setdefault(k, [val, val])
            span[0], span[1] = min(span[0], val), max(span[1], val)
        if self.relation == "==" and finite_t:
            self.min_digits = min(self.min_digits, _digits(v))
        if v > self.tol:
            self.candidates.append((v, point))

    def record(self, point, v, t_state, c_state):
        """One evaluated point: ``t_state`` in finite/inf/missing, ``c_state`` in value/outside/undefined."""
        if v is not None:
            self._compared(point, v, t_state == "finite")
            return None
        a = point[0]
        if t_state == "missing":
            return "the divergence could not be evaluated"
        if c_state == "outside":
            return "the callable raised"
        if c_state == "overflow":
            return _OVERFLOW_REASON
        if c_state == "slow":
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
    def stages(self, executor, search, prove, prove_seconds, certify_seconds):
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
        if certify_seconds > 0:
            yield self._certify(certify_seconds)
        yield self._final()

    def _grid(self, executor, retry):
        alphas = [None] if self.order is not None else alpha_grid(self.lo, self.hi)
        grids = [parameter_grid(p) for p in self.free]
        points = _product(alphas, self.free, grids, limit=3000)
        for (block_start, block), entry in _grid_sweep(self.ev, self.relation, self.dps, points, executor):
            if not entry.ok:
                self.lost.append(f"grid points {block_start}..{block_start + len(block) - 1}: "
                                 f"{entry.status}: {entry.error}")
                continue
            for point, (v, t_state, c_state) in zip(block, entry.result):
                self.checked["grid"] += 1
                self._defer(point, self.record(point, v, t_state, c_state), retry)

    def _guided(self, search, retry):
        if search <= 0:
            return

        def fast_violation(a, values):
            t, cl = self.ev.values(a, values)
            v = _violation(self.relation, t, cl, self.dps)
            if v is not None and v > self.tol and self.tgt.distributions_ok(self.ev.all_values(values)) is False:
                self.not_distributions.append(values)
                return None
            self._defer((a, values), self.record((a, values), v, _t_state(t), _c_state(cl)), retry)
            return v

        _, _, n = guided_search(self.free, None if self.order is not None else (self.lo, self.hi),
                                fast_violation, search)
        self.checked["guided"] += n

    def _defer(self, point, why, retry):
        """A point without a value: excluded where P or Q is no distribution, else retried later."""
        if not why:
            return
        if self.tgt.distributions_ok(self.ev.all_values(point[1])) is False:
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
        try:
            limit = run_with_time_limit(lambda: sp.limit(ev.c.expr.xreplace(held), ALPHA, sp.oo), seconds=5.0)
        except (StepTimeout, Exception):  # noqa: BLE001 - an undecided limit is stated, not guessed
            limit = None
        grids = [parameter_grid(p) for p in self.free]
        combos = _product([None], self.free, grids, limit=25)
        if limit is None or limit.has(sp.Limit, sp.AccumBounds, sp.nan, sp.zoo):
            # no limit: probe the orders beyond the certified range directly
            found = 0
            for _, values in combos:
                for k in _PROBE_EXPONENTS:
                    a = sp.Integer(10) ** k
                    t, cl = ev.values(a, values)
                    va = _violation(self.relation, t, cl, self.dps)
                    if va is not None and va > self.tol:
                        self.candidates.append((va, (a, values)))
                        found += 1
                        break
            self.limit_note = (f"alpha -> oo: the claim's limit was not decided; probed at alpha = 10^k, k in "
                               f"{list(_PROBE_EXPONENTS)}, at {len(combos)} parameter points"
                               + (f" (violations at {found})" if found else ""))
            return
        wrong_side = 0
        for _, values in combos:
            subs = {ev.by_name[k]: v for k, v in ev.all_values(values).items()}
            try:
                lv = run_with_time_limit(lambda: limit.xreplace(subs).evalf(self.dps), seconds=POINT_SECONDS)
                dv = run_with_time_limit(lambda: d_inf.xreplace(subs).evalf(self.dps), seconds=POINT_SECONDS)
            except (StepTimeout, Exception):  # noqa: BLE001 - counted below as undecided
                continue
            if not (lv.is_extended_real and dv.is_extended_real):
                continue
            v = _violation(self.relation, mpmath.mpf(dv) if dv.is_finite else mpmath.inf,
                           mpmath.mpf(lv) if lv.is_finite else (mpmath.inf if lv > 0 else -mpmath.inf), self.dps)
            if v is None or v <= self.tol:
                continue
            wrong_side += 1
            for k in _PROBE_EXPONENTS + (50, 100, 300):
                a = sp.Integer(10) ** k
                t, cl = ev.values(a, values)
                va = _violation(self.relation, t, cl, self.dps)
                # where D is +oo the formula is usually outside its stated conditions (the grid's exemption
                # covers those points); the limit argument is about finite values growing past the claim
                if va is not None and va > self.tol and t is not None and not mpmath.isinf(t):
                    self.candidates.append((va, (a, values)))
                    break
            else:
                if not mpmath.isinf(mpmath.mpf(dv) if dv.is_finite else mpmath.inf):
                    self.unresolved.append(((sp.oo, values), "the claim's limit at alpha -> oo is on the wrong "
                                            "side of D_oo, but no order up to 1e300 showed the violation"))
        self.limit_note = (f"alpha -> oo: the claim's limit {sp.sstr(limit)[:60]} compared with D_oo at "
                           f"{len(combos)} parameter points" + (f"; on the wrong side at {wrong_side}" if wrong_side else ""))

    def _retry_exactly(self, retry):
        """Points whose fast evaluation failed, computed another way (exact substitution, then a higher
        precision, then ball arithmetic); what still has no value is dropped, with the reason."""
        deadline = time.monotonic() + RETRY_SECONDS
        for point, why in retry:
            if why in ("the callable raised", _OVERFLOW_REASON, _SLOW_REASON):
                # a callable has no other way to be evaluated; sympy would take forever on the overflow
                self.dropped.append((point, why))
                continue
            if self.checked["retried"] >= MAX_RETRIES or time.monotonic() > deadline:
                self.dropped.append((point, why + " (not retried: retry budget spent)"))
                continue
            self.checked["retried"] += 1
            v, t, cl, how = self._exact_violation(point)
            if v is None:
                self.dropped.append((point, f"{why}; {how}"))
                continue
            self._compared(point, v, t is not None and not mpmath.isinf(t))

    def _exact_violation(self, point):
        """(violation, divergence, claim, how) at ``point`` by the exact path at dps and 2 dps, then by
        ball arithmetic; violation None when no method gave both values."""
        a, values = point
        notes = []
        for dps in (self.dps, 2 * self.dps):
            try:
                t, cl = run_with_time_limit(self.ev.values, a, values, True, dps, seconds=POINT_SECONDS)
            except StepTimeout:
                notes.append(f"exact evaluation at {dps} digits exceeded {POINT_SECONDS:g} s")
                break
            except Exception as exc:  # noqa: BLE001 - a failed evaluation is no value, never agreement
                notes.append(f"exact evaluation failed: {type(exc).__name__}: {exc}")
                continue
            v = _violation(self.relation, t, cl, self.dps)
            if v is not None:
                return v, t, cl, ""
            notes.append(f"exact evaluation at {dps} digits gave no value for the "
                         + ("divergence" if t is None else "claim"))
        balls = self.ev.balls(a, values)
        if balls is not None:
            t, cl = balls
            v = _violation(self.relation, t, cl, self.dps)
            if v is not None:
                return v, t, cl, ""
        notes.append("ball arithmetic gave no value" if self.ev.c.kind == "expr" else "no other method for a callable")
        return None, None, None, "; ".join(notes)

    def _refute_candidates(self, extra=()):
        """Resolve the largest candidate violations exactly; a refutation, or None."""
        seen, tried = set(), 0
        for v, point in list(extra) + sorted(self.candidates, key=lambda c: -c[0]):
            key = (point[0], tuple(sorted(point[1].items())))
            if key in seen:
                continue
            seen.add(key)
            if self.tgt.distributions_ok(self.ev.all_values(point[1])) is False:
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
        valid = self.tgt.distributions_ok(self.ev.all_values(values))
        if valid is False:
            return "invalid"
        if valid is None:
            return "could not check that P and Q are probability distributions at this point"
        v, t, cl, how = self._exact_violation(point)
        if v is None:
            return f"the violation of the fast search could not be recomputed: {how}"
        if v <= self.tol:
            return "agrees"
        cex = _confirm_refutation(point, self, t, cl)
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
                           f"({detail}), e.g. alpha = {_fmt(a)}, {_fmt_values(values)}")
        if self.unresolved:
            (a, values), why = self.unresolved[0]
            reasons.append(f"{len(self.unresolved)} candidate violation(s) could not be decided, e.g. at "
                           f"alpha = {_fmt(a)}, {_fmt_values(values)}: {why}")
        if self.compared == 0:
            reasons.append("no point could be compared: nothing supports the claim")
        elif self.order is None:
            missing = [r for r in _required_regimes(self.lo, self.hi)
                       if self.compared_by_regime.get(r, 0) < MIN_POINTS_PER_REGIME]
            if missing:
                reasons.append(f"fewer than {MIN_POINTS_PER_REGIME} compared points in: {', '.join(missing)}")
        if not reasons:
            return None
        return dict(verdict=Verdict.INCONCLUSIVE, evidence=tuple([self._summary()] + reasons + self._coverage()),
                    points_checked=self._n_checked(), digits=_float_or_none(self.min_digits))

    def _prove(self, seconds):
        ev = self.ev
        proof = _prove(ev.c.expr, self.tgt.truth_expr(self.order), self.relation, self.order, ev.fixed,
                       self.tgt.parameters, self.tgt.result.conditions, (self.lo, self.hi), seconds)
        if not proof:
            self.evidence_head.append("no symbolic proof found")
            return None
        return dict(verdict=Verdict.PROVED, evidence=tuple([proof, self._summary()] + self._coverage()),
                    points_checked=self._n_checked(), digits=_float_or_none(self.min_digits))

    def _certify(self, seconds):
        ev = self.ev
        if ev.c.kind != "expr":
            self.certification = None
            self.evidence_head.append("no certified pass: the claim is a callable (a black box to ball arithmetic)")
            return None
        from .certify import certify

        held = {ev.by_name[k]: v for k, v in ev.fixed.items()}
        gap = (ev.c.expr - self.tgt.truth_expr(self.order)).xreplace(held)
        # A claim that is the truth written another way plus a perturbation simplifies to the perturbation:
        # its enclosure is then tight, and the bisection goes straight to where it is large. The shortest
        # form found within the time limits is used (each is identical to the difference).
        forms = []
        for simplifier, seconds in ((lambda: sp.cancel(sp.expand(gap)), 2.0), (lambda: sp.simplify(gap), 5.0)):
            try:
                forms.append(run_with_time_limit(simplifier, seconds=seconds))
            except (StepTimeout, Exception):  # noqa: BLE001 - the plain difference of enclosures still works
                continue
        difference = min(forms, key=sp.count_ops) if forms else None
        cert = certify(self.tgt, ev.c.expr, self.order, self.relation, ev.fixed, self.free, (self.lo, self.hi),
                       tol=float(self.tol), dps=self.dps, seconds=seconds, difference=difference)
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
                        evidence=tuple([self._summary(), f"ball arithmetic found a violating point (alpha = {_fmt(pa)}, "
                                        f"{_fmt_values(pvals)}) that could not be confirmed: {why or 'see above'}"]
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
                                "alone do not rule out a violation between them (raise certify_seconds)")
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
                                if r in _required_regimes(self.lo, self.hi))
            lines.append(f"alpha range ({_fmt(self.lo)}, {_fmt(self.hi)}); compared points per regime: {regimes}")
            if self.limit_note:
                lines.append(self.limit_note)
        if self.param_span:
            lines.append("parameter box compared: " + ", ".join(
                f"{k} in [{_fmt(sp.Float(v[0], 6))}, {_fmt(sp.Float(v[1], 6))}]" for k, v in self.param_span.items()))
        if self.dropped:
            lines.append(f"points dropped: {len(self.dropped)}")
        for why, n in self.exempt.items():
            lines.append(f"not compared at {n} point(s): {why}")
        if self.not_distributions:
            lines.append(f"{len(self.not_distributions)} point(s) excluded where P or Q is not a probability "
                         f"distribution (e.g. {_fmt_values(self.not_distributions[0])}): the parameters' inferred "
                         "domain is wider than the distributions'")
        if self.vanished:
            lines.append(f"{self.vanished} candidate violation(s) of the fast search vanished when recomputed "
                         "exactly (precision loss of the fast evaluator, not of the claim)")
        if self.ev.c.kind == "callable":
            lines.append("the claim is a callable: checked at points only (no proof, no certified pass)")
        return lines


#: grid points per task of the grid sweep: a point costs about a millisecond, so a task of 32 points is
#: long enough to outweigh dispatching it and short enough to balance a few thousand points over workers
GRID_BLOCK = 32


def _t_state(t) -> str:
    return "missing" if t is None else ("inf" if mpmath.isinf(t) else "finite")


def _c_state(cl) -> str:
    if cl is _OUTSIDE:
        return "outside"
    if cl is _OVERFLOW:
        return "overflow"
    if cl is _SLOW:
        return "slow"
    return "undefined" if cl is None else "value"


def _grid_block(evaluator: "_Evaluator", relation: str, dps: int, block: list) -> list[tuple]:
    """One task of the grid sweep: per point ``(violation, divergence state, claim state)`` (see
    :meth:`_ClaimRun.record`), all picklable (``_OUTSIDE`` is a per-process marker)."""
    out = []
    for a, values in block:
        t, cl = evaluator.values(a, values)
        out.append((_violation(relation, t, cl, dps), _t_state(t), _c_state(cl)))
    return out


def _fmt_values(values: Mapping) -> str:
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in values.items()) or "no free parameters"


def _grid_sweep(evaluator, relation, dps, points, executor):
    """``((start index, block), TaskResult)`` per block of :data:`GRID_BLOCK` grid points, in grid order,
    evaluated on ``executor`` by :func:`rdpsym.execution.run_tasks`."""
    from functools import partial

    from ..execution import run_tasks

    blocks = [points[i:i + GRID_BLOCK] for i in range(0, len(points), GRID_BLOCK)]
    report = run_tasks(partial(_grid_block, evaluator, relation, dps), blocks, executor=executor, progress=False,
                       description="claim grid")
    return zip(((i * GRID_BLOCK, b) for i, b in enumerate(blocks)), report)


def _float_or_none(d):
    return None if d == mpmath.inf else float(d)


def _digits(v) -> float:
    if v <= 0:
        return mpmath.inf
    return -mpmath.log10(v)


def _product(alphas, free, grids, limit):
    import itertools

    combos = list(itertools.product(*grids)) if free else [()]
    out = [(a, dict(zip([p.name for p in free], combo))) for a in alphas for combo in combos]
    if len(out) > limit:  # keep it deterministic: an even subsample
        step = len(out) / limit
        out = [out[int(i * step)] for i in range(limit)]
    return out


def _violation(relation, t, c, dps):
    """How much ``t REL c`` (divergence REL claim) fails, relative to the values' size (> 0: it fails); None if undefined."""
    if t is None or c is None or c is _OUTSIDE or c is _OVERFLOW or c is _SLOW:
        return None
    if mpmath.isinf(t) or mpmath.isinf(c):
        if t == c:
            return mpmath.mpf(0)
        if relation == "==":
            return mpmath.inf
        if relation == "<=":
            return mpmath.inf if t > c else -mpmath.inf
        return mpmath.inf if c > t else -mpmath.inf
    # values near 0 (equal parameters: D = 0) are compared absolutely, below 10^(-0.4 dps), as the
    # verification module does; otherwise rounding at 10^-dps would count as a relative disagreement.
    scale = max(abs(t), abs(c), mpmath.mpf(10) ** (-int(0.4 * dps)))
    d = (c - t) / scale
    if relation == "==":
        return abs(d)
    return -d if relation == "<=" else d


class _Evaluator:
    """Values of the divergence and of the claim at a point, fast (search) or exact (reports)."""

    def __init__(self, tgt: Target, c: _Claim, order, fixed: dict, dps: int):
        self.tgt, self.c, self.order, self.fixed, self.dps = tgt, c, order, fixed, dps
        self.by_name = {p.name: p.symbol for p in tgt.parameters}
        syms = (ALPHA,) + tgt.symbols
        self.truth = tgt.fast(order)
        if c.kind == "expr":
            self.claim_fast = compile_mp(c.expr, syms)
        else:
            self.arg_fast = [compile_mp(e, syms) for e in c.arg_exprs]

    def __reduce__(self):
        # The compiled closures do not pickle (spawned workers, Dask): send what they are compiled
        # from and compile again on arrival; the same expressions give the same closures.
        from dataclasses import replace

        return _rebuild_evaluator, (replace(self.tgt, _compiled={}), replace(self.c, _fast=None, _arg_fast=()),
                                    self.order, self.fixed, self.dps, getattr(self, "names", None))

    def point_alpha(self, a):
        if self.order is None:
            return a
        return sp.Integer(1) if self.order == 1 else sp.oo

    def env(self, a, values):
        env = {self.by_name[k]: mpmath.mpf(int(v.p)) / int(v.q) if v.is_Rational else mpmath.mpf(v)
               for k, v in {**values, **self.fixed}.items()}
        av = self.point_alpha(a)
        env[ALPHA] = mpmath.inf if av == sp.oo else mpmath.mpf(int(av.p)) / int(av.q)
        return env

    def all_values(self, values):
        return {**values, **self.fixed}

    def values(self, a, values, exact=False, dps=None):
        """(divergence, claim) at the point as mpf (or None / ``_OUTSIDE``), fast or exactly at ``dps``."""
        wp = (dps or self.dps) + 20
        with mpmath.workdps(wp):
            env = self.env(a, values)
            if exact or (self.order is None and a in self.tgt.exceptional):
                try:
                    t = self.tgt.exact(self.order, a, self.all_values(values), wp)
                except (ArithmeticError, ValueError, TypeError):
                    t = None
            else:
                t = self.truth(env)
            cl = self._claim(a, values, env, exact)
            return t, cl

    def _claim(self, a, values, env, exact):
        c = self.c
        if c.kind == "expr":
            if exact:
                subs = {self.by_name[k]: v for k, v in self.all_values(values).items()}
                av = self.point_alpha(a)
                e = c.expr
                if av == sp.oo and ALPHA in e.free_symbols:
                    e = e.subs(ALPHA, sp.oo)
                else:
                    subs[ALPHA] = av
                if e in (sp.oo, sp.S.NegativeInfinity):
                    return mpmath.inf if e == sp.oo else -mpmath.inf
                try:
                    # The numbers go in through evalf's subs, never by substitution: substituted Floats
                    # make sympy evaluate cosh(x) - sinh(x) at their precision (0 for x = 29000, silently),
                    # and substituted Rationals make it seek exact roots of huge denominators. strict:
                    # evalf raises rather than return digits it does not have.
                    val = e.evalf(mpmath.mp.dps, subs=subs, strict=True)
                except (ArithmeticError, ValueError, TypeError, RecursionError):
                    return None
                if val.has(sp.nan, sp.zoo) or not val.is_number:
                    return None
                re, im = val.as_real_imag()
                return real_value(mpmath.mpc(sp.Float(re, mpmath.mp.dps), sp.Float(im, mpmath.mp.dps)))
            try:
                return real_value(self.claim_fast(env))
            except OverflowError:
                return _OVERFLOW
            except (ArithmeticError, ValueError, ZeroDivisionError, TypeError):
                return None
        return self._call(env)

    def _call(self, env):
        c = self.c
        a = env[ALPHA]
        af = math.inf if mpmath.isinf(a) else float(a)
        args = [float(f(env)) for f in self.arg_fast]
        limit = time_limit(CALL_SECONDS)
        try:
            with limit:
                if c.call == "keywords":
                    out = c.fn(af, **dict(zip(c.arg_names, args)))
                elif c.call == "positional":
                    out = c.fn(af, *args)
                else:
                    out = c.fn(dict(zip(c.arg_names, args)), af)
        except StepTimeout as exc:
            if exc.limit_id != limit.id:
                raise  # an enclosing limit: not this call's to handle
            return _SLOW
        except Exception:  # noqa: BLE001 - a callable outside its domain: not a value
            return _OUTSIDE
        return _callable_number(out, c.fn)

    def balls(self, a, values):
        """(divergence, claim) as mpf midpoints of Arb balls accurate to the check's digits, or None:
        the certified fallback when sympy's exact evaluation fails (a tie of Max, a huge power)."""
        if self.c.kind != "expr":
            return None
        from .interval import Unsupported, _arb_rational, compile_arb  # noqa: PLC2701 - same package

        import flint

        if not hasattr(self, "_arb"):
            # compiled once per check (retries and candidates call this at many points)
            syms = (ALPHA,) + self.tgt.symbols
            try:
                self._arb = (compile_arb(self.tgt.full_truth(self.order), syms), compile_arb(self.c.expr, syms))
            except Unsupported:
                self._arb = None
        if self._arb is None:
            return None
        f_truth, f_claim = self._arb
        av = self.point_alpha(a)
        old = flint.ctx.prec
        try:
            for bits in (int(3.33 * self.dps) + 64, int(6.7 * self.dps) + 128):
                flint.ctx.prec = bits
                env = {self.by_name[k]: _arb_rational(sp.Rational(v)) for k, v in self.all_values(values).items()}
                env[ALPHA] = flint.arb.pos_inf() if av == sp.oo else _arb_rational(sp.Rational(av))
                out = [f(env) for f in (f_truth, f_claim)]
                if all(_ball_accurate(b, self.dps) for b in out):
                    with mpmath.workdps(self.dps + 20):
                        return tuple(_ball_mpf(b) for b in out)
        finally:
            flint.ctx.prec = old
        return None


def _ball_accurate(ball, dps) -> bool:
    if ball.is_nan():
        return False
    if ball.is_exact():
        return True
    return ball.is_finite() and ball.rad() <= ball.abs_lower() * 10.0 ** (-dps)


def _ball_mpf(ball):
    if not ball.is_finite():
        return mpmath.inf if ball > 0 else -mpmath.inf
    return mpmath.mpf(ball.mid().str(mpmath.mp.dps, radius=False))


def _callable_number(out, fn):
    """A callable claim's return value as an mpf, None when NaN or complex; anything that is not a
    number is an error naming the callable (a string "0.5" is not a value to compare)."""
    if isinstance(out, bool) or not (isinstance(out, (int, float, complex, mpmath.mpf, mpmath.mpc))
                                     or _is_numeric_scalar(out)):
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        raise TypeError(f"claim: the callable {name} must return a real number; it returned "
                        f"{type(out).__name__} {out!r:.60}")
    out = complex(out)
    if out.imag != 0 or math.isnan(out.real):
        return None
    return mpmath.mpf(out.real)


def _is_numeric_scalar(out) -> bool:
    """numpy scalars and 0-d arrays, mpmath numbers: numbers that are not Python's built-in types."""
    import numbers

    if isinstance(out, numbers.Number):
        return True
    shape = getattr(out, "shape", None)
    return shape == () and hasattr(out, "dtype") and getattr(out.dtype, "kind", "") in "iufc"


def _rebuild_evaluator(tgt, c, order, fixed, dps, names) -> "_Evaluator":
    ev = _Evaluator(tgt, c, order, fixed, dps)
    if names is not None:
        ev.names = names
    return ev


#: Marker: the callable raised at this point (outside its domain; neither a value nor a refutation).
_OUTSIDE = object()
#: Marker: the claim's value is beyond the fast path's magnitude cap (fasteval.EXPONENT_CAP).
_OVERFLOW = object()
#: Marker: the callable did not return within CALL_SECONDS.
_SLOW = object()
#: seconds a callable claim may take at one point
CALL_SECONDS = 10.0


def _point_alpha_ok(lo, hi):
    return lambda v: (v > lo) is sp.true and (v < hi) is sp.true


def _confirm_refutation(point, run: "_ClaimRun", t, cl) -> Counterexample | None:
    """A counterexample at ``point`` (whose exact violation is known: divergence ``t``, claim ``cl``),
    shrunk to a simpler point when the violation survives there (exactly, and with P, Q distributions)."""
    ev, tol = run.ev, run.tol

    def refutes(a2, v2):
        t2, c2 = ev.values(a2, v2)
        v = _violation(run.relation, t2, c2, run.dps)
        return v is not None and v > tol * 10 and run.tgt.distributions_ok(ev.all_values(v2)) is True

    shrunk = shrink(point, run.free, None if run.order is not None else _point_alpha_ok(run.lo, run.hi), refutes)
    chosen, values_at = point, (t, cl)
    if shrunk != point:
        v2, t2, c2, _ = run._exact_violation(shrunk)
        if v2 is not None and v2 > tol:
            chosen, values_at = shrunk, (t2, c2)
    ca, cvals = chosen
    t, cl = values_at
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


def _prove(claim, truth, relation, order, fixed, params, conditions, alpha_range, seconds) -> str | None:
    """A symbolic proof of the relation, or None. Each sympy attempt is time-limited."""
    subs = {p.symbol: v for p in params for k, v in fixed.items() if p.name == k}
    # Give sympy the parameters' domains as assumptions: p in (a, b) becomes a + (b - a)/(1 + s) with
    # s > 0, p in (a, oo) becomes a + s (bijections, so an identity in s is one in p).
    notes = []
    for p in params:
        if p.name in fixed or not isinstance(p.domain, sp.Interval):
            continue
        a, b = p.domain.inf, p.domain.sup
        s = sp.Symbol(f"{p.name}_s", positive=True)
        if a.is_finite and b.is_finite:
            subs[p.symbol] = a + (b - a) / (1 + s)
            notes.append(f"{p.name} = {sp.sstr(subs[p.symbol])}")
        elif a.is_finite and a != 0:
            subs[p.symbol] = a + s
            notes.append(f"{p.name} = {sp.sstr(subs[p.symbol])}")
    c = claim.subs(subs)
    t = truth.subs(subs)
    lo, hi = alpha_range
    where = ""
    if order is None:
        if lo >= 1:
            tt = sp.Symbol("t", positive=True)
            c, t = c.subs(ALPHA, 1 + tt), t.subs(ALPHA, 1 + tt)
            regime, alpha_expr = "alpha = 1 + t, t > 0", 1 + tt
        elif hi <= 1:
            vv = sp.Symbol("v", positive=True)
            c, t = c.subs(ALPHA, 1 / (1 + vv)), t.subs(ALPHA, 1 / (1 + vv))
            regime, alpha_expr = "alpha = 1/(1 + v), v > 0", 1 / (1 + vv)
        else:
            regime, alpha_expr = "alpha > 0", ALPHA
        if conditions is not sp.true:
            where = f" where the divergence is finite ({sp.sstr(conditions)})"
    else:
        regime, alpha_expr = f"order {order}", None
    if notes:
        regime += "; " + ", ".join(notes) + " with positive *_s"

    def attempt(fn):
        try:
            return run_with_time_limit(fn, seconds=seconds)
        except (StepTimeout, Exception):  # noqa: BLE001 - a failed attempt is just no proof
            return None

    if t == sp.oo or c == sp.oo:
        if relation == "==" and t == c:
            return "proved: both are +oo"
        if relation == "<=" and c == sp.oo:
            return "proved: the claim is +oo"
        if relation == ">=" and t == sp.oo:
            return None
        return None
    d = attempt(lambda: sp.simplify(c - t))
    if relation == "==":
        if d is not None and d == 0:
            return f"proved: simplify(claim - divergence) = 0 ({regime}){where}"
        # exp((alpha-1) x) is injective on the reals only: the route needs both sides real for every value
        # of the symbols (by their assumptions), not only at the checked points (a claim can be complex on a
        # sliver of the domain no point reached)
        both_real = attempt(lambda: c.is_extended_real is True and t.is_extended_real is True)
        if alpha_expr is not None and both_real:
            d2 = attempt(lambda: sp.simplify(sp.expand(sp.exp((alpha_expr - 1) * c)) - sp.expand(sp.exp((alpha_expr - 1) * t))))
            if d2 is not None and d2 == 0:
                return (f"proved: exp((alpha-1)*claim) - exp((alpha-1)*divergence) simplifies to 0 ({regime}), "
                        f"and both are real by the symbols' assumptions, so claim = divergence{where}")
        d3 = attempt(lambda: sp.simplify(sp.expand_log(sp.expand(c - t))))
        if d3 is not None and d3 == 0:
            return f"proved: expand_log(claim - divergence) simplifies to 0 ({regime}){where}"
        return None
    if d is None:
        return None
    sign_ok = d.is_nonnegative if relation == "<=" else d.is_nonpositive
    if d == 0 or sign_ok:
        word = "non-negative" if relation == "<=" else "non-positive"
        return f"proved: claim - divergence = {sp.sstr(d)} is {word} by the symbols' assumptions ({regime}){where}"
    return None
