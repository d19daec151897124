r"""``check_claim``: is a formula from a paper or a library right about a mechanism's divergence?

A *claim* states ``D REL claim`` where ``D`` is the target's divergence curve D_alpha (Mironov 2017,
arXiv:1702.07476 v3, Def. 3; for a mechanism the RDP curve of Def. 4, the maximum over adjacent pairs
and both directions), or one special order of it (``order=1``: the KL divergence; ``order=oo``: the max
divergence), and ``REL`` is ``==``, ``<=`` (the claim is an upper bound: D <= claim) or ``>=`` (a lower bound).

The verdict, always with evidence:

``refuted``
    A point (alpha and parameter values) where the relation fails by more than ``10^-digits``
    (relative). Found on a grid over typical ranges and edge regimes, then by a hypothesis search that
    maximises the violation (``hypothesis.target``), then shrunk to a simple point (small integers,
    simple fractions). Both values are recomputed exactly (sympy ``evalf`` at ``dps`` digits) and,
    when the densities are known, the divergence is also checked against the independent mpmath path.
``proved``
    No counterexample, and sympy establishes the relation symbolically: ``claim - D`` simplifies to 0
    (or ``exp((alpha-1) claim) - exp((alpha-1) D)`` does, which implies equality of real values for
    alpha != 1), resp. is non-negative (``<=``) or non-positive (``>=``) by the symbols' assumptions,
    with alpha = 1 + t, t > 0 in the RDP regime.
``confirmed``
    No counterexample and no proof: the relation holds at every point checked to ``digits`` digits,
    and there was at least one point where both sides could be compared.
``inconclusive``
    The target has no closed form, or the claim could not be evaluated where the divergence is finite,
    or at no point at all (a callable that raises everywhere), or part of the grid was not checked.

Calling convention for callables (checked numerically, with Python floats): ``fn(alpha, **kwargs)`` by
default (``call="keywords"``), where the keyword names are the function's own argument names, each
mapped to the target's parameters like any other claim name (``symbols=``, or inferred). For other
signatures: ``call="positional"`` calls ``fn(alpha, v1, v2, ...)`` in the order of ``arguments``;
``call="params_dict"`` calls ``fn({name: value, ...}, alpha)``, autodp's convention
(``autodp.rdp_bank.RDP_gaussian({'sigma': s}, alpha)``). For ``order=1``/``order=oo`` the callable
gets ``alpha = 1.0`` / ``math.inf``. A callable that raises is outside its domain there (counted, not a
refutation); NaN or a complex result where the divergence is finite makes the verdict inconclusive.
"""

from __future__ import annotations

import enum
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import mpmath
import sympy as sp

from ..derive.result import DivergenceResult
from ..specify.params import Parameter
from ..specify.parse import as_number, parse
from ..symbols import alpha as ALPHA
from .fasteval import compile_mp, real_value
from .mapping import SymbolMap, build_symbol_map, default_fixed
from .search import alpha_grid, guided_search, parameter_grid, shrink, simple_candidates
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

    ``confirmed`` (and ``proved``) need at least one point where both sides were compared: if the
    claim raised, or was undefined, at every point, the verdict is ``inconclusive``.
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
        digits = 30 if c.kind == "expr" else 8
    tol = mpmath.mpf(10) ** (-digits)

    ok, why = usable(tgt.result, order)
    truth_expr = tgt.truth_expr(order)
    base = dict(verdict=Verdict.INCONCLUSIVE, relation=relation, order=order, claim=claim,
                divergence=truth_expr, mapping=mapping_text, inferred=inferred, target=tgt.label)
    if not ok:
        return ClaimVerdict(evidence=(why,), **base)

    evaluator = _Evaluator(tgt, c, order, fixed_vals, dps)
    evaluator.names = smap.names
    evidence: list[str] = []

    def violation(a, values, exact=False):
        t, cl = evaluator.values(a, values, exact=exact)
        return _violation(relation, t, cl, dps), t, cl

    # --- grid ----------------------------------------------------------------------------------------
    alphas = [None] if order is not None else alpha_grid(lo, hi)
    grids = [parameter_grid(p) for p in free]
    points = _product(alphas, free, grids, limit=3000)
    worst = (None, -mpmath.inf)
    undefined: list = []
    outside = 0
    min_digits = mpmath.inf
    n_checked = 0
    n_compared = 0  # points where both sides had a value (a verdict needs at least one)
    lost: list[str] = []  # grid tasks that did not finish: their points were not checked
    for (block_start, block), entry in _grid_sweep(evaluator, relation, dps, points, executor):
        if not entry.ok:
            lost.append(f"grid points {block_start}..{block_start + len(block) - 1}: {entry.status}: {entry.error}")
            continue
        for (a, values), (v, finite_t, was_outside, was_undefined) in zip(block, entry.result):
            n_checked += 1
            if v is None:
                # a claim written with a removable singularity (Laplace's 2 alpha - 1) is undefined there
                if was_undefined:
                    undefined.append((a, values))
                outside += was_outside
                continue
            n_compared += 1
            if v > worst[1]:
                worst = ((a, values), v)
            if relation == "==" and finite_t:
                min_digits = min(min_digits, _digits(v))
    n_grid = n_checked

    # --- guided search, then refutation: confirm exactly, shrink, confirm again ------------------
    n_guided = 0
    vanished = False
    for stage in ("grid", "guided"):
        if stage == "guided":
            if search <= 0:
                break
            try:
                import hypothesis  # noqa: F401
            except ImportError:
                evidence.append("guided search skipped: hypothesis is not installed")
                break

            guided_compared = [0]

            def fast_violation(a, values):
                v = violation(a, values)[0]
                guided_compared[0] += v is not None
                return v

            pt, best_v, n_guided = guided_search(free, None if order is not None else (lo, hi), fast_violation, search)
            n_checked += n_guided
            n_compared += guided_compared[0]
            if pt is None:
                break
            worst = (pt, mpmath.mpf(best_v))
            if relation == "==" and best_v > -math.inf:
                min_digits = min(min_digits, _digits(mpmath.mpf(best_v)))
        if worst[0] is not None and worst[1] > tol:
            cex = _confirm_refutation(worst[0], violation, tol, free, lo, hi, order, tgt, evaluator, relation, dps,
                                      independent)
            if cex is not None:
                evidence.insert(0, f"checked {n_checked} points ({n_grid} on the grid, {n_guided} guided); "
                                   f"the relation fails by more than 1e-{digits} (relative)")
                return ClaimVerdict(**{**base, "verdict": Verdict.REFUTED}, evidence=tuple(evidence),
                                    counterexample=cex, points_checked=n_checked)
            vanished = True
    if vanished:
        evidence.append("candidate violations of the fast search vanished when recomputed exactly "
                        "(precision loss of the fast evaluator, not of the claim)")

    summary = f"no counterexample at {n_checked} points ({n_grid} on a grid over typical ranges and edge regimes, " \
              f"{n_guided} guided by hypothesis.target)"
    if relation == "==" and min_digits != mpmath.inf:
        summary += f"; agreement >= {float(min(min_digits, dps)):.1f} digits"
    evidence.append(summary)
    if outside:
        evidence.append(f"the callable raised (outside its domain) at {outside} grid points; those were skipped")
    if lost:
        evidence.append(f"{len(lost)} grid task(s) did not finish, their points were not checked: "
                        + "; ".join(lost[:3]) + (f"; ... ({len(lost)} in all)" if len(lost) > 3 else ""))
        return ClaimVerdict(**base, evidence=tuple(evidence), points_checked=n_checked,
                            digits=_float_or_none(min_digits))
    if undefined:
        a, values = undefined[0]
        evidence.append(f"the claim is undefined (NaN or complex) at {len(undefined)} points where the divergence "
                        f"is finite, e.g. alpha = {_fmt(a)}, {values}")
        return ClaimVerdict(**base, evidence=tuple(evidence), points_checked=n_checked,
                            digits=_float_or_none(min_digits))
    if n_compared == 0:
        evidence.append(f"no point could be compared: at all {n_checked} points the claim raised or was undefined, "
                        "or the divergence could not be evaluated; nothing supports the claim")
        return ClaimVerdict(**base, evidence=tuple(evidence), points_checked=n_checked)

    # --- proof ---------------------------------------------------------------------------------------
    if prove and c.kind == "expr":
        proof = _prove(c.expr, truth_expr, relation, order, fixed_vals, params, tgt.result.conditions,
                       (lo, hi), prove_seconds)
        if proof:
            evidence.insert(0, proof)
            return ClaimVerdict(**{**base, "verdict": Verdict.PROVED}, evidence=tuple(evidence),
                                points_checked=n_checked, digits=_float_or_none(min_digits))
        evidence.append("no symbolic proof found")
    return ClaimVerdict(**{**base, "verdict": Verdict.CONFIRMED}, evidence=tuple(evidence),
                        points_checked=n_checked, digits=_float_or_none(min_digits))


#: grid points per task of the grid sweep: a point costs about a millisecond, so a task of 32 points is
#: long enough to outweigh dispatching it and short enough to balance a few thousand points over workers
GRID_BLOCK = 32


def _grid_block(evaluator: "_Evaluator", relation: str, dps: int, block: list) -> list[tuple]:
    """One task of the grid sweep: per point ``(violation, divergence finite?, claim raised?, claim
    undefined where the divergence is finite?)``, all picklable (``_OUTSIDE`` is a per-process marker)."""
    out = []
    for a, values in block:
        t, cl = evaluator.values(a, values)
        v = _violation(relation, t, cl, dps)
        finite_t = t is not None and not mpmath.isinf(t)
        undefined = v is None and finite_t and cl is None and a not in evaluator.tgt.exceptional
        out.append((v, finite_t, cl is _OUTSIDE, undefined))
    return out


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
    if t is None or c is None or c is _OUTSIDE:
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

    def values(self, a, values, exact=False):
        wp = self.dps + 20
        with mpmath.workdps(wp):
            env = self.env(a, values)
            if exact:
                # Rationals with large denominators make sympy's exact powers very slow.
                a = _as_float_if_complex(a, wp)
                values = {k: _as_float_if_complex(v, wp) for k, v in values.items()}
            if exact or (self.order is None and a in self.tgt.exceptional):
                try:
                    t = self.tgt.exact(self.order, a, self.all_values(values), wp)
                except (ArithmeticError, ValueError):
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
                e = c.expr.subs(subs)
                if ALPHA in e.free_symbols:
                    e = e.subs(ALPHA, av)
                if e in (sp.oo, sp.S.NegativeInfinity):
                    return mpmath.inf if e == sp.oo else -mpmath.inf
                val = e.evalf(mpmath.mp.dps)
                if val.has(sp.nan, sp.zoo) or not val.is_number:
                    return None
                re, im = val.as_real_imag()
                return real_value(mpmath.mpc(sp.Float(re, mpmath.mp.dps), sp.Float(im, mpmath.mp.dps)))
            try:
                return real_value(self.claim_fast(env))
            except (ArithmeticError, ValueError, ZeroDivisionError, TypeError, OverflowError):
                return None
        return self._call(env)

    def _call(self, env):
        c = self.c
        a = env[ALPHA]
        af = math.inf if mpmath.isinf(a) else float(a)
        args = [float(f(env)) for f in self.arg_fast]
        try:
            if c.call == "keywords":
                out = c.fn(af, **dict(zip(c.arg_names, args)))
            elif c.call == "positional":
                out = c.fn(af, *args)
            else:
                out = c.fn(dict(zip(c.arg_names, args)), af)
        except Exception:  # noqa: BLE001 - a callable outside its domain: not a value
            return _OUTSIDE
        try:
            out = complex(out) if not isinstance(out, (int, float)) else out
            if isinstance(out, complex):
                if out.imag != 0:
                    return None
                out = out.real
            v = mpmath.mpf(float(out))
        except (TypeError, ValueError):
            return None
        return None if mpmath.isnan(v) else v


def _rebuild_evaluator(tgt, c, order, fixed, dps, names) -> "_Evaluator":
    ev = _Evaluator(tgt, c, order, fixed, dps)
    if names is not None:
        ev.names = names
    return ev


#: Marker: the callable raised at this point (outside its domain; neither a value nor a refutation).
_OUTSIDE = object()


def _as_float_if_complex(v, wp):
    # (1001/2000)**(500001/500000) makes sympy look for exact 500000th roots (minutes); a Float of wp
    # digits is exact for binary floats and within 10^-wp otherwise, far below the reported digits.
    if v is not None and isinstance(v, sp.Rational) and v.q > 1000:
        return sp.Float(v, wp)
    return v


def _point_alpha_ok(lo, hi):
    return lambda v: (v > lo) is sp.true and (v < hi) is sp.true


def _confirm_refutation(point, violation, tol, free, lo, hi, order, tgt, evaluator, relation, dps, independent):
    a, values = point

    def refutes(a2, v2):
        v, _, _ = violation(a2, v2)
        return v is not None and v > tol * 10

    start = (a, values)
    shrunk = shrink(start, free, None if order is not None else _point_alpha_ok(lo, hi), refutes)
    for cand in (shrunk, start):
        v, t, cl = violation(*cand, exact=True)
        if v is not None and v > tol:
            ca, cvals = cand
            allv = evaluator.all_values(cvals)
            with mpmath.workdps(dps):
                gap = (cl - t) if not (mpmath.isinf(cl) and mpmath.isinf(t)) else mpmath.mpf(0)
                t_out, c_out, gap_out = +t, +cl, +gap
            numeric = None
            if independent:
                numeric = tgt.independent(order, ca, allv, dps=30)
            args = {}
            with mpmath.workdps(dps):
                env = evaluator.env(ca, cvals)
                for name in evaluator.c.used:
                    if name in ("alpha", "order"):
                        continue
                    e = _name_expr(evaluator, name)
                    if e is not None:
                        args[name] = e.subs({evaluator.by_name[k]: v2 for k, v2 in allv.items()})
            return Counterexample(alpha=evaluator.point_alpha(ca), values=allv, claim_arguments=args,
                                  claim_value=c_out, divergence=t_out, gap=gap_out, relation=relation, dps=dps,
                                  numeric=numeric, shrunk_from=None if cand is start else start)
    return None


def _name_expr(evaluator, name):
    c = evaluator.c
    if c.kind == "callable":
        return dict(zip(c.arg_names, c.arg_exprs)).get(name)
    return evaluator.names.get(name)


def _prove(claim, truth, relation, order, fixed, params, conditions, alpha_range, seconds) -> str | None:
    """A symbolic proof of the relation, or None. Each sympy attempt is time-limited."""
    from ..derive.timeout import StepTimeout, run_with_time_limit

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
        if alpha_expr is not None:
            d2 = attempt(lambda: sp.simplify(sp.expand(sp.exp((alpha_expr - 1) * c)) - sp.expand(sp.exp((alpha_expr - 1) * t))))
            if d2 is not None and d2 == 0:
                return (f"proved: exp((alpha-1)*claim) - exp((alpha-1)*divergence) simplifies to 0 ({regime}), "
                        f"and both are real (checked at every point), so claim = divergence{where}")
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
