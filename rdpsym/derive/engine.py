"""The derivation engine: from two symbolic densities to the Rényi divergence in closed form.

    D_alpha(P||Q) = 1/(alpha-1) log ∫ P^alpha Q^(1-alpha)          (Mironov 2017, Def. 3)

Pipeline (each step timed and recorded in the provenance):

1. split the support at the kinks of P and Q (:mod:`.pieces`);
2. for each alpha regime, alpha = 1 + t (t > 0) and alpha = 1/(1 + v) (v > 0, i.e. 0 < alpha < 1),
   write the log-integrand alpha log P + (1-alpha) log Q on every piece as c0 + sum_j c_j T_j(x) and
   integrate or sum exp(sum_j c_j T_j) through the exponential-family template (:mod:`.template`),
   which also yields the finiteness conditions (the natural parameter space);
3. simplify log(∑ pieces)/(alpha - 1), keeping the most compact form that is checked equivalent,
   or the definition's shape (1/(alpha-1)) log Z with Z gathered by exponentials when that is at most
   a quarter longer (``PREFER_DEFINITION_SHAPE``);
4. derive alpha = 1 directly as E_P[log P/Q] and alpha = oo directly as ess sup log P/Q, and check both
   against the limits of the general expression (the KL against the limit from below when
   D_alpha = +oo for all alpha > 1). When E_P[log P/Q] is not integrated (a binomial sum over [0, n]),
   the KL is taken as lim_{alpha -> 1-} D_alpha = d/dalpha log Z at 1 and checked at 100 digits;
5. find the singular orders of the expression, derive the divergence there directly, and keep those
   whose value equals the limit as removable (exceptional) points.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

import mpmath
import sympy as sp

from ..specify.mechanism import is_discrete_support
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA
from .pieces import DerivationError, Piece, split_support
from .result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step, library_versions
from .template import decompose, erfc_form, integrate_template, log_expand, mixture_log
from .timeout import StepTimeout, check_seconds, default_step_seconds, run_with_time_limit

__all__ = ["renyi_divergence", "DerivationError"]

_T = sp.Symbol("t", positive=True)  # alpha = 1 + t
_V = sp.Symbol("v", positive=True)  # alpha = 1 / (1 + v)


@dataclass(frozen=True)
class _Regime:
    name: str
    var: sp.Symbol
    alpha_in_var: sp.Expr
    var_in_alpha: sp.Expr
    interval: sp.Interval


ABOVE = _Regime("alpha > 1", _T, 1 + _T, ALPHA - 1, sp.Interval.open(1, sp.oo))
BELOW = _Regime("0 < alpha < 1", _V, 1 / (1 + _V), (1 - ALPHA) / ALPHA, sp.Interval.open(0, 1))


class _Log:
    """Collects the provenance steps of one derivation."""

    def __init__(self):
        self.steps: list[Step] = []

    def timed(self, name: str, fn, *args, seconds: float | None = None, detail=None):
        start = time.perf_counter()
        try:
            value = run_with_time_limit(fn, *args, seconds=seconds) if seconds else fn(*args)
        except StepTimeout as exc:
            self.steps.append(Step(name, f"timed out: {exc}", time.perf_counter() - start))
            raise
        text = detail(value) if callable(detail) else (detail or "")
        self.steps.append(Step(name, text, time.perf_counter() - start))
        return value

    def note(self, name: str, detail: str, expr=None):
        self.steps.append(Step(name, detail, 0.0, expr))


# --------------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------------
def _check_inputs(P, Q, x, support):
    for name, dens in (("P", P), ("Q", Q)):
        if not isinstance(dens, sp.Expr):
            raise TypeError(f"{name}: must be a sympy expression, got {type(dens).__name__}")
    if not isinstance(x, sp.Symbol):
        raise TypeError(f"x: must be a sympy Symbol, got {type(x).__name__}")
    if not isinstance(support, sp.Set):
        raise TypeError(f"support: must be a sympy Set (e.g. S.Reals, Interval(0, oo), S.Integers), got {type(support).__name__}")
    if x.is_real is not True:
        raise ValueError(f"x: the variable {x} must be declared real (Symbol('{x}', real=True))")
    for sym in (P.free_symbols | Q.free_symbols) - {x}:
        if sym == ALPHA:
            raise ValueError("P, Q: densities must not contain rdpsym.alpha (the order is not a parameter)")
        if sym.is_real is not True:
            raise ValueError(
                f"parameter {sym}: needs assumptions; declare it real, or positive for scales "
                f"(Symbol('{sym}', positive=True))"
            )


def _sample_values(symbols: Iterable[sp.Symbol], params: Sequence[Parameter] | None, n: int, seed: int = 0):
    """Deterministic parameter points for numeric cross-checks."""
    by_symbol = {p.symbol: p for p in params or ()}
    rng = random.Random(seed)
    points = []
    symbols = sorted(symbols, key=lambda s: s.name)
    for i in range(n):
        point = {}
        for s in symbols:
            if s in by_symbol:
                vals = by_symbol[s].typical_values(5)
                point[s] = vals[(i * 2 + 1) % len(vals)] if len(vals) > 1 else vals[0]
            elif s.is_integer:
                point[s] = sp.Integer(rng.randint(1, 4))
            elif s.is_positive or s.is_nonnegative:
                # in (0, 1/2): valid for scales and rates, and for probabilities (and sums of two)
                # declared only positive
                point[s] = sp.Rational(rng.randint(1, 9), 20)
            else:
                point[s] = sp.Rational(rng.randint(-20, 20), 10)
        points.append(point)
    return points


def _numeric_equal(a: sp.Expr, b: sp.Expr, points, dps: int = 30) -> bool | None:
    """Equality of two expressions at the points (30 digits); None if they cannot be evaluated."""
    with mpmath.workdps(dps + 10):
        for point in points:
            try:
                va = sp.N(a.subs(point), dps + 10)
                vb = sp.N(b.subs(point), dps + 10)
            except Exception:  # noqa: BLE001
                return None
            if va == vb:
                continue
            if not (va.is_number and vb.is_number and va.is_real and vb.is_real):
                return None
            scale = max(abs(va), abs(vb), sp.Integer(1))
            if abs(va - vb) > scale * sp.Float(10) ** (-dps):
                return False
    return True


def _equivalent(a, b, points) -> str | None:
    """'symbolic' or 'numeric' if a == b, None if not (or undecidable)."""
    try:
        diff = run_with_time_limit(lambda: sp.simplify(a - b), seconds=5)
        if diff == 0:
            return "symbolic"
    except StepTimeout:
        pass
    ok = _numeric_equal(a, b, points)
    return "numeric" if ok else None


# --------------------------------------------------------------------------------------------------
# general order
# --------------------------------------------------------------------------------------------------
def _is_zero(expr) -> bool:
    return expr == 0 or sp.simplify(expr) == 0


def _regime_integral(pieces: list[Piece], x, regime: _Regime, seconds: float, log: _Log):
    """∫ P^alpha Q^(1-alpha) over all pieces in one regime: (value, condition) or 'infinite'."""
    a = regime.alpha_in_var
    total = sp.Integer(0)
    conditions = []
    for piece in pieces:
        p_zero, q_zero = _is_zero(piece.P), _is_zero(piece.Q)
        if p_zero or (q_zero and regime is BELOW):
            continue
        if q_zero:
            log.note(f"piece {piece.describe()}", "P > 0 where Q = 0: the divergence is +oo for alpha >= 1")
            return "infinite"
        if piece.is_point:
            total += piece.P ** a * piece.Q ** (1 - a)
            continue
        L = a * log_expand(piece.P) + (1 - a) * log_expand(piece.Q)
        c0, coeffs = decompose(L, x)
        start = time.perf_counter()
        res = integrate_template(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds)
        detail = (
            f"{regime.name}: integrand exp({sp.sstr(c0)} + "
            + " + ".join(f"({sp.sstr(c)})*{sp.sstr(T)}" for T, c in coeffs.items())
            + f"); {'summed' if piece.discrete else 'integrated'} over {piece.describe()}"
            + (f"; {'; '.join(res.notes)}" if res.notes else "")
        )
        log.steps.append(Step(f"piece {piece.describe()}", detail, time.perf_counter() - start))
        if not res.cases:
            return "infinite"
        if len(res.cases) == 1:
            value, cond = res.cases[0]
        else:
            value = sp.Piecewise(*res.cases)
            cond = res.condition
        total += sp.exp(c0) * value
        conditions.append(cond)
    return total, sp.And(*conditions)


def _collect_exponentials(expr: sp.Expr) -> sp.Expr:
    """Inside every log of a sum, gather the terms by their exponential: sum_i c_i exp(a_i), with
    each c_i factored and each a_i a single exponent.

    log ∫ P^alpha Q^(1-alpha) over several pieces is a sum of piece integrals, each a coefficient
    times exponentials; gathering equal exponentials across pieces is what turns the sum into the
    familiar mixture form (for Laplace noise, Mironov 2017 Table II's
    alpha/(2alpha-1) e^((alpha-1)/b) + (alpha-1)/(2alpha-1) e^(-alpha/b)).
    """

    def gather(total):
        total = total.replace(lambda n: isinstance(n, sp.exp), lambda n: sp.exp(sp.expand(n.args[0])))
        total = sp.expand_power_exp(total)
        # exponentials stand in as positive symbols, so that expand cannot merge them into denominators
        stand_in = {e: sp.Dummy("E", positive=True) for e in total.atoms(sp.exp)}
        back = {d: e for e, d in stand_in.items()}
        groups: dict = {}
        for term in sp.Add.make_args(sp.expand(total.xreplace(stand_in))):
            coeff, mono = term.as_independent(*back, as_Add=False)
            arg = sp.Integer(0) if mono == 1 else sp.expand(sp.expand_log(sp.log(mono.xreplace(back)), force=True))
            arg = sp.factor(arg)
            groups[arg] = groups.get(arg, 0) + coeff
        return sp.Add(*[sp.factor(c) * sp.exp(a) for a, c in groups.items()])

    logs = [n for n in expr.atoms(sp.log) if isinstance(n.args[0], sp.Add) and n.args[0].has(sp.exp)]
    return expr.xreplace({n: sp.log(gather(n.args[0])) for n in logs})


def _compact(expr: sp.Expr, points, seconds: float) -> sp.Expr:
    """The most compact of several simplified forms that is checked equal to ``expr``."""
    candidates = [expr]
    for simplifier in (
        lambda e: sp.simplify(e),
        lambda e: sp.simplify(sp.expand_log(e, force=False)),
        lambda e: sp.factor_terms(sp.simplify(sp.logcombine(sp.expand_log(e), force=False))),
        lambda e: sp.simplify(sp.gammasimp(e)) if e.has(sp.gamma) else e,
    ):
        try:
            candidates.append(run_with_time_limit(simplifier, expr, seconds=seconds))
        except (StepTimeout, Exception):  # noqa: BLE001 - a simplifier that fails is skipped
            continue
    best = expr
    for cand in sorted(candidates[1:], key=sp.count_ops):
        if sp.count_ops(cand) >= sp.count_ops(best):
            continue
        if cand.has(sp.nan, sp.zoo, sp.I):
            continue
        if _numeric_equal(cand, expr, points) is True:
            best = cand
            break
    return best


def _in_alpha(D, regime: _Regime, points, seconds) -> sp.Expr:
    """D in terms of alpha, simplified (within the step limit) unless it is long."""
    plain = D.subs(regime.var, regime.var_in_alpha)
    if sp.count_ops(D) >= 80:
        return plain
    try:
        return run_with_time_limit(sp.simplify, plain, seconds=seconds)
    except (StepTimeout, Exception):  # noqa: BLE001 - then the plain substitution
        return plain


#: Prefer (1/(alpha-1)) log Z, Z gathered by exponentials (for Laplace noise exactly Mironov 2017's
#: Table II form), when at most a quarter longer than the most compact form and checked equal to it.
#: rdpsym.export.codegen rewrites any equivalent form for float evaluation (evaluation_form).
PREFER_DEFINITION_SHAPE = True


def _definition_shape(integral, D_alpha, regime: _Regime, points, seconds, log) -> sp.Expr:
    """(1/(alpha-1)) log Z with Z = ∫ P^alpha Q^(1-alpha) gathered by exponentials, if not much longer.

    The definition's shape (Mironov 2017, Def. 3) shows Z = E_Q[(P/Q)^alpha] as a mixture of
    exponentials, the way the literature states its tables; it is kept when it is at most a quarter
    longer (in operations) than the most compact form and checked equal to it at the sample points.
    """
    try:
        Z = run_with_time_limit(lambda: _collect_exponentials(sp.log(integral.subs(regime.var, regime.var_in_alpha))), seconds=seconds)
    except (StepTimeout, Exception):  # noqa: BLE001
        return D_alpha
    if not isinstance(Z, sp.log) or not isinstance(Z.args[0], sp.Add):
        return D_alpha
    shaped = Z / (ALPHA - 1)
    if sp.count_ops(shaped) > 1.25 * sp.count_ops(D_alpha) or shaped.has(sp.nan, sp.zoo, sp.I):
        return D_alpha
    if _numeric_equal(shaped, D_alpha, points) is not True:
        return D_alpha
    if shaped != D_alpha:
        log.note(f"form ({regime.name})", "kept the definition's shape (1/(alpha-1)) log Z, Z gathered by exponentials")
    return shaped


def _simplify_condition(cond, regime: _Regime):
    if cond in (sp.true, True):
        return sp.true
    cond = cond.subs(regime.var, regime.var_in_alpha)
    try:
        simplified = run_with_time_limit(lambda: sp.simplify(cond), seconds=5)
    except (StepTimeout, Exception):  # noqa: BLE001
        simplified = cond
    return simplified


def _general_order(pieces, x, symbols, params, seconds, log):
    """(expr, conditions, notes) for alpha in (0,1) u (1,oo); expr None if not derivable."""
    points = _sample_values(symbols, params, 3)
    forms = {}
    for regime in (ABOVE, BELOW):
        got = _regime_integral(pieces, x, regime, seconds, log)
        if got == "infinite":
            forms[regime.name] = (sp.oo, sp.true)
            continue
        integral, cond = got
        D = sp.log(integral) / (regime.alpha_in_var - 1)
        var_points = [{**p, regime.var: sp.Rational(7, 10) + i} for i, p in enumerate(points)]
        D = log.timed(f"simplify ({regime.name})", _compact, D, var_points, seconds,
                      detail=lambda e: f"kept {sp.count_ops(e)} operations")
        alpha_points = [{**{k: v for k, v in p.items() if k != regime.var}, ALPHA: regime.alpha_in_var.subs(regime.var, p[regime.var])}
                        for p in var_points]
        D_alpha = _in_alpha(D, regime, alpha_points, seconds)
        if PREFER_DEFINITION_SHAPE:
            D_alpha = _definition_shape(integral, D_alpha, regime, alpha_points, seconds, log)
        D_alpha = erfc_form(D_alpha)
        forms[regime.name] = (D_alpha, _simplify_condition(cond, regime))
    above, cond_above = forms[ABOVE.name]
    below, cond_below = forms[BELOW.name]
    if above == sp.oo:
        expr = sp.Piecewise((below, ALPHA < 1), (sp.oo, True))
        return expr, sp.And(cond_below) if cond_below is not sp.true else sp.true
    # the form for alpha > 1 serves for all orders if it equals the other one on (0, 1), where that
    # one is the derivation (the form for alpha < 1 need not even be real beyond 1)
    alpha_points = [{**p, ALPHA: a} for p, a in zip(points, (sp.Rational(3, 10), sp.Rational(1, 2), sp.Rational(4, 5)))]
    same = _equivalent(above, below, alpha_points)
    if same:
        log.note("regimes", f"the forms for alpha < 1 and alpha > 1 agree ({same} check)")
        expr = above
        if cond_above == cond_below:
            cond = cond_above
        else:
            cond = sp.Or(sp.And(ALPHA < 1, cond_below), sp.And(ALPHA > 1, cond_above))
    else:
        log.note("regimes", "the forms for alpha < 1 and alpha > 1 differ: Piecewise in alpha")
        expr = sp.Piecewise((below, ALPHA < 1), (above, True))
        cond = sp.Or(sp.And(ALPHA < 1, cond_below), sp.And(ALPHA > 1, cond_above))
    return expr, cond


# --------------------------------------------------------------------------------------------------
# alpha = 1 and alpha = oo
# --------------------------------------------------------------------------------------------------
def _kl(pieces, x, seconds, log) -> sp.Expr:
    """KL = E_P[log P/Q] = sum over pieces of ∫ P (log P - log Q)."""
    total = sp.Integer(0)
    for piece in pieces:
        if _is_zero(piece.P):
            continue
        if _is_zero(piece.Q):
            return sp.oo
        g = sp.expand(log_expand(piece.P) - log_expand(piece.Q))
        if piece.is_point:
            total += piece.P * g
            continue
        mixture = mixture_log(g, x)
        if mixture is not None and (not piece.discrete or piece.lo.is_infinite or piece.hi.is_infinite):
            # E_P[log S] for a mixture S has no closed form in general; say so instead of timing out
            raise DerivationError(f"log P/Q contains {sp.sstr(mixture)}, the log of a mixture, on {piece.describe()}")
        integrand = sp.expand(piece.P * g)
        if piece.discrete:
            fn = lambda: _sum_piece(integrand, x, piece.lo, piece.hi)  # noqa: E731
        else:
            fn = lambda: sp.integrate(integrand, (x, piece.lo, piece.hi), conds="none")  # noqa: E731
        value = log.timed(f"KL piece {piece.describe()}", fn, seconds=seconds,
                          detail=lambda v: "E_P[log P/Q] " + ("summed" if piece.discrete else "integrated"))
        if value.has(sp.Integral, sp.Sum):
            raise DerivationError(f"KL: sympy left the integral over {piece.describe()} unevaluated")
        total += value
    return total


def _kl_from_below(expr, points, seconds) -> sp.Expr:
    """KL = lim_{alpha -> 1-} D_alpha, from the general form on (0, 1).

    D_alpha is left-continuous at 1 for every pair (van Erven & Harremoës 2014, Thm. 5), and for
    alpha < 1 the form is (1/(alpha-1)) log Z(alpha) with Z(1) = 1, so the limit is the derivative
    d/dalpha log Z at 1 (the mean of the sufficient statistic log P/Q under P: the exponential-family
    identity E[T] = grad log-normaliser). Used only when E_P[log P/Q] itself was not integrated
    (e.g. a binomial sum over [0, n]). The derivative is accepted only if log Z(1) = 0 and the form
    at alpha = 1 - 10**-30 agrees with it to 12 digits at every sample point (100-digit arithmetic).
    """
    below = expr
    if isinstance(expr, sp.Piecewise):
        below = expr.args[0][0] if expr.args[0][1] == (ALPHA < 1) else None
    if below is None or below.has(sp.oo, sp.zoo, sp.nan):
        raise DerivationError("no general form on (0, 1)")
    logZ = (ALPHA - 1) * below
    if _numeric_equal(logZ.subs(ALPHA, 1), sp.Integer(0), points) is not True:
        raise DerivationError("log Z(1) is not 0")
    candidate = sp.diff(logZ, ALPHA).subs(ALPHA, 1)
    candidate = _compact(sp.simplify(candidate), points, seconds)
    if candidate.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Derivative, sp.Subs):
        raise DerivationError(f"d/dalpha log Z at 1 is not a finite closed form: {candidate}")
    near = sp.Float(1 - sp.Rational(1, 10**30), 130)
    for point in points:
        with mpmath.workdps(120):
            g = sp.N(below.subs(point).subs(ALPHA, near), 100)
            c = sp.N(candidate.subs(point), 100)
        if not (g.is_real and c.is_real and g.is_number and c.is_number) or abs(g - c) > sp.Float(10) ** -12 * max(1, abs(c)):
            raise DerivationError(f"the form next to alpha = 1 ({g}) differs from d/dalpha log Z ({c}) at {point}")
    return candidate


def _sup_candidates(g, x, piece: Piece, seconds):
    """Values whose maximum is sup g on the piece: limits at the ends and values at critical points."""
    if not g.has(x):
        return [g]
    candidates = []
    lo, hi = piece.lo, piece.hi
    for end, direction in ((lo, "+"), (hi, "-")):
        if end.is_infinite:
            candidates.append(run_with_time_limit(sp.limit, g, x, end, seconds=seconds))
        elif piece.discrete:
            candidates.append(g.subs(x, end))
        else:
            candidates.append(run_with_time_limit(sp.limit, g, x, end, direction, seconds=seconds))
    crit = run_with_time_limit(sp.solveset, sp.diff(g, x), x, sp.Interval.open(lo, hi), seconds=seconds)
    if isinstance(crit, sp.FiniteSet):
        for c in crit:
            if piece.discrete:
                candidates += [g.subs(x, sp.floor(c)), g.subs(x, sp.ceiling(c))]
            else:
                candidates.append(g.subs(x, c))
    elif isinstance(crit, sp.ConditionSet) or not (crit is sp.S.EmptySet or isinstance(crit, sp.FiniteSet)):
        raise DerivationError(f"D_inf: cannot locate the critical points of log P/Q on {piece.describe()}")
    for c in candidates:
        if c.has(sp.nan, sp.zoo, sp.AccumBounds, sp.Limit, sp.sign):
            raise DerivationError(f"D_inf: undecided limit or value {c} on {piece.describe()}")
    return candidates


def _sum_piece(integrand, x, lo, hi):
    """Sum over an integer range through the template's shift-and-ratio rewriting (geometric forms)."""
    from .template import _integrate_once

    got = _integrate_once(integrand, x, lo, hi, True)
    if got is None:
        return sp.Sum(integrand, (x, lo, hi))
    value, cond = got
    if cond is not sp.true:
        return sp.Piecewise((value, cond), (sp.Sum(integrand, (x, lo, hi)), True))
    return value


def _sup_on_piece(g, x, piece: Piece, seconds, max_unknown: int = 2):
    """sup g on the piece; coefficients of undecided sign are case-split (negative, positive, zero).

    As in the template, g = c0 + sum_j c_j T_j(x) is rewritten with fresh signed symbols k_j for the
    coefficients c_j, so that limits and critical points are taken with known signs; the cases
    become a Piecewise in the parameters.
    """
    if not g.has(x):
        return g
    from .template import sign_of

    c0, coeffs = decompose(g, x)
    known, unknown = {}, []
    for T, c in coeffs.items():
        sgn = sign_of(c)
        if c.is_number:
            known[T] = c
        elif sgn == 1:
            known[T] = sp.Dummy("k", positive=True)
        elif sgn == -1:
            known[T] = sp.Dummy("k", negative=True)
        else:
            unknown.append(T)
    if len(unknown) > max_unknown:
        raise DerivationError(f"D_inf: {len(unknown)} coefficients of undecided sign on {piece.describe()}")
    back = {k: coeffs[T] for T, k in known.items() if isinstance(k, sp.Dummy)}
    cases = []
    import itertools

    for signs in itertools.product((-1, 1, 0), repeat=len(unknown)):
        symbols = dict(known)
        conds = []
        for T, sgn in zip(unknown, signs):
            if sgn == 0:
                symbols[T] = sp.Integer(0)
                conds.append(sp.Eq(coeffs[T], 0))
            else:
                symbols[T] = sp.Dummy("k", negative=True) if sgn < 0 else sp.Dummy("k", positive=True)
                conds.append(coeffs[T] < 0 if sgn < 0 else coeffs[T] > 0)
        g_case = c0 + sp.Add(*[k * T for T, k in symbols.items()])
        cands = _sup_candidates(g_case, x, piece, seconds)
        sub = dict(back)
        sub.update({symbols[T]: coeffs[T] for T in unknown if isinstance(symbols[T], sp.Dummy)})
        value = sp.oo if any(c == sp.oo for c in cands) else sp.Max(*cands)
        cases.append((value.subs(sub), sp.And(*conds)))
    if len(cases) == 1:
        return cases[0][0]
    # the all-zero case is last and holds otherwise
    *first, last = cases
    merged = []
    for value, cond in first:
        if value == last[0]:
            continue
        for entry in merged:
            if entry[0] == value:
                entry[1] = sp.Or(entry[1], cond)
                break
        else:
            merged.append([value, cond])
    return sp.Piecewise(*[(v, c) for v, c in merged], (last[0], True))


def _max_divergence(pieces, x, seconds, log) -> sp.Expr:
    """D_inf = ess sup over {P > 0} of log P/Q (Mironov 2017, Def. 3 and Table II)."""
    sups = []
    for piece in pieces:
        if _is_zero(piece.P):
            continue
        if _is_zero(piece.Q):
            return sp.oo
        g = sp.expand(log_expand(piece.P) - log_expand(piece.Q))
        sups.append(_sup_on_piece(g, x, piece, seconds))
    if any(c == sp.oo for c in sups):
        return sp.oo
    value = sp.Max(*sups)
    try:
        return run_with_time_limit(sp.simplify, value, seconds=seconds)
    except (StepTimeout, Exception):  # noqa: BLE001
        return value


# --------------------------------------------------------------------------------------------------
# exceptional points
# --------------------------------------------------------------------------------------------------
def _singular_orders(expr: sp.Expr) -> list[sp.Expr]:
    found = set()
    for node in sp.preorder_traversal(sp.together(expr) if not isinstance(expr, sp.Piecewise) else expr):
        base = None
        if isinstance(node, sp.Pow) and node.exp.is_negative and node.base.has(ALPHA):
            base = node.base
        elif isinstance(node, sp.log) and node.args[0].has(ALPHA):
            base = node.args[0]
        if base is None:
            continue
        try:
            roots = sp.solveset(base, ALPHA, sp.Interval.open(0, sp.oo) - sp.FiniteSet(1))
        except Exception:  # noqa: BLE001
            continue
        if isinstance(roots, sp.FiniteSet):
            found |= {r for r in roots if not r.free_symbols}
    return sorted(found, key=lambda r: float(r))


def _exceptional_points(expr, pieces, x, symbols, params, seconds, log):
    points = []
    for a0 in _singular_orders(expr):
        try:
            lim = run_with_time_limit(sp.limit, expr, ALPHA, a0, seconds=seconds)
        except (StepTimeout, Exception) as exc:  # noqa: BLE001
            log.note(f"alpha = {a0}", f"limit not computed ({type(exc).__name__})")
            continue
        if lim.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Limit):
            continue
        lim = sp.simplify(lim)
        direct = _direct_at(a0, pieces, x, seconds, log)
        if direct is None:
            log.note(f"alpha = {a0}", "removable singularity; value from the limit (direct derivation failed)")
            points.append(ExceptionalPoint(a0, lim))
            continue
        how = _equivalent(lim, direct, _sample_values(symbols, params, 3))
        if how:
            log.note(f"alpha = {a0}", f"removable singularity: the limit equals the direct derivation ({how} check)", lim)
            points.append(ExceptionalPoint(a0, lim))
        else:
            raise DerivationError(f"at alpha = {a0} the limit {lim} differs from the direct derivation {direct}")
    return tuple(points)


def _direct_at(a0, pieces, x, seconds, log):
    """D_{a0}(P||Q) derived with alpha fixed to the number a0."""
    total = sp.Integer(0)
    for piece in pieces:
        if _is_zero(piece.P) or _is_zero(piece.Q):
            if _is_zero(piece.P) or a0 < 1:
                continue
            return sp.oo
        if piece.is_point:
            total += piece.P ** a0 * piece.Q ** (1 - a0)
            continue
        c0, coeffs = decompose(a0 * log_expand(piece.P) + (1 - a0) * log_expand(piece.Q), x)
        try:
            res = integrate_template(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds)
        except DerivationError:
            return None
        if len(res.cases) != 1:
            return None
        total += sp.exp(c0) * res.cases[0][0]
    return sp.simplify(sp.log(total) / (a0 - 1))


# --------------------------------------------------------------------------------------------------
# the public function
# --------------------------------------------------------------------------------------------------
def renyi_divergence(
    P: sp.Expr,
    Q: sp.Expr,
    x: sp.Symbol,
    support: sp.Set,
    *,
    params: Sequence[Parameter] | None = None,
    step_seconds: float | None = None,
    check_density: bool = True,
    cache: bool = True,
    label: str = "D_alpha(P||Q)",
) -> DivergenceResult:
    """Derive D_alpha(P||Q) = 1/(alpha-1) log ∫ P^alpha Q^(1-alpha) in closed form.

    Parameters
    ----------
    P, Q: densities (continuous ``support``) or pmfs (discrete ``support``) as sympy expressions in
        ``x``; they may contain Abs, Max, Min, Piecewise, Heaviside, sign, gamma and beta functions.
        Their parameters must carry assumptions (real, positive, integer).
    x: the output variable, a real symbol.
    support: a sympy set: ``S.Reals``, an ``Interval``, ``S.Integers``, ``S.Naturals0``, a ``Range``
        or a ``FiniteSet``.
    params: optional :class:`~rdpsym.Parameter` objects; their typical ranges give the points of the
        numeric cross-checks.
    step_seconds: time limit per symbolic step (default ``RDPSYM_STEP_SECONDS`` or 20 s).
    check_density: check that P and Q are non-negative and integrate (sum) to 1.
    cache: reuse a cached derivation of the same inputs (see :mod:`rdpsym.derive.cache`).

    Returns
    -------
    DivergenceResult with ``expr`` (in :data:`rdpsym.alpha`), ``conditions``, ``kl``,
    ``max_divergence``, ``exceptional_points``, ``status`` and ``provenance``.

    References: Mironov 2017, Def. 3 (Rényi divergence), Props. 5-7 (Table II).
    """
    _check_inputs(P, Q, x, support)
    seconds = check_seconds(step_seconds) if step_seconds is not None else default_step_seconds()
    if cache:
        from .cache import cached_derivation

        result = cached_derivation(P, Q, x, support, params, seconds, check_density, label)
    else:
        result = _derive(P, Q, x, support, params, seconds, check_density, label)
    return replace(result, pair=(P, Q, x, support)) if result.pair is None else result


def _derive(P, Q, x, support, params, seconds, check_density, label) -> DivergenceResult:
    log = _Log()
    symbols = tuple(sorted((P.free_symbols | Q.free_symbols) - {x}, key=lambda s: s.name))
    inputs = (("P", sp.sstr(P)), ("Q", sp.sstr(Q)), ("x", str(x)), ("support", sp.sstr(support)))
    started = time.perf_counter()

    def finish(**kw) -> DivergenceResult:
        log.note("total", f"{time.perf_counter() - started:.3f} s")
        prov = Provenance(tuple(log.steps), inputs, tuple(library_versions().items()))
        domains = tuple((p.symbol, p.domain) for p in (params or ()) if p.symbol in symbols)
        return DivergenceResult(symbols=symbols, provenance=prov, label=label, domains=domains, **kw)

    try:
        pieces = log.timed("split support", split_support, P, Q, x, support, seconds=seconds,
                           detail=lambda ps: "pieces: " + ", ".join(p.describe() for p in ps))
    except (DerivationError, StepTimeout) as exc:
        return finish(expr=None, status=Status.NUMERIC_ONLY, reason=f"support not split: {exc}")
    if check_density:
        from .checks import check_densities

        check_densities(P, Q, x, support, pieces, symbols, params, seconds, log)

    reasons = []
    try:
        expr, cond = _general_order(pieces, x, symbols, params, seconds, log)
    except (DerivationError, StepTimeout) as exc:
        expr, cond = None, sp.true
        reasons.append(f"general order not derived: {exc}")
    try:
        kl = _kl(pieces, x, seconds, log)
        kl = _compact(kl, _sample_values(symbols, params, 3), seconds)
        if kl.has(sp.meijerg):
            # same rule as for the general order: a Meijer G form is not a usable closed form
            raise DerivationError(f"only a Meijer G-function form was found: {sp.sstr(kl)}")
    except (DerivationError, StepTimeout, Exception) as exc:  # noqa: BLE001
        kl = None
        kl_reason = f"KL not derived: {type(exc).__name__}: {exc}"
        if expr is not None:
            try:
                kl = log.timed("KL as lim alpha -> 1-", _kl_from_below, expr, _sample_values(symbols, params, 3), seconds,
                               seconds=seconds, detail=lambda v: f"KL = {sp.sstr(v)} (direct derivation failed: {kl_reason})")
            except (DerivationError, StepTimeout, Exception) as exc2:  # noqa: BLE001
                kl_reason += f"; lim alpha -> 1- not taken: {type(exc2).__name__}: {exc2}"
        if kl is None:
            reasons.append(kl_reason)
    try:
        dinf = log.timed("alpha = oo", _max_divergence, pieces, x, seconds, log,
                         detail=lambda v: f"ess sup log P/Q = {sp.sstr(v)}")
    except (DerivationError, StepTimeout, Exception) as exc:  # noqa: BLE001
        dinf = None
        reasons.append(f"D_inf not derived: {type(exc).__name__}: {exc}")

    exceptional = ()
    if expr is not None:
        points = _sample_values(symbols, params, 3)
        if not isinstance(expr, sp.Piecewise) and expr != sp.oo:
            try:
                exceptional = _exceptional_points(expr, pieces, x, symbols, params, seconds, log)
            except DerivationError as exc:
                reasons.append(str(exc))
                expr = None
        if expr is not None:
            try:
                _check_limits(expr, cond, kl, dinf, points, seconds, log)
            except DerivationError as exc:
                reasons.append(f"limit check failed: {exc}")
                expr = None

    if expr is None:
        status = Status.NUMERIC_ONLY
    elif expr.has(sp.Integral, sp.Sum, sp.Limit):
        status = Status.NUMERIC_ONLY
        reasons.append("the expression still contains an unevaluated integral, sum or limit")
        expr = None
    elif expr.has(sp.meijerg):
        # a Meijer G form is exact but no usable closed form: its evaluation can take minutes
        status = Status.NUMERIC_ONLY
        reasons.append(f"only a Meijer G-function form was found: {sp.sstr(expr)}")
        expr = None
    else:
        status = Status.CLOSED_FORM
    return finish(
        expr=expr,
        status=status,
        reason="; ".join(reasons),
        conditions=cond,
        kl=kl,
        max_divergence=dinf,
        exceptional_points=exceptional,
    )


def _numeric_limit_check(general, cond, target, a0, points, side: str = "+") -> bool | None:
    """Compare ``general`` near alpha = a0 with ``target`` at high precision (None if not evaluable).

    Near alpha = 1 the general form differs from the KL by O(alpha - 1); at alpha = 10**30 it differs
    from D_inf by O(log(alpha)/alpha). Both are far below the 10**-12 tolerance used here.
    """
    # a Float order: an exact 10**30 would make sympy expand rationals to that power
    step = sp.Rational(1, 10**30) if side == "+" else -sp.Rational(1, 10**30)
    near = sp.Float(sp.Integer(1) + step, 130) if a0 == 1 else sp.Float(10**30, 130)
    checked = False
    for point in points:
        c = cond.subs(ALPHA, near).subs(point) if cond is not sp.true else sp.true
        try:
            c = sp.simplify(c) if c not in (sp.true, sp.false) else c
        except Exception:  # noqa: BLE001
            return None
        t = target.subs(point)
        if c is sp.false:
            # the divergence is +oo next to the order
            if a0 != sp.oo:
                return None
            if t != sp.oo:
                return False
            checked = True
            continue
        if c is not sp.true:
            return None
        try:
            with mpmath.workdps(120):
                g = sp.N(general.subs(point).subs(ALPHA, near), 100)
                tv = sp.N(t, 100) if t != sp.oo else sp.oo
        except Exception:  # noqa: BLE001
            return None
        if not g.is_real or not g.is_number:
            return None
        if tv == sp.oo:
            if a0 == 1:
                return None
            # D_alpha -> oo may be as slow as log(alpha): require growth between 1e15 and 1e30
            with mpmath.workdps(120):
                g_half = sp.N(general.subs(point).subs(ALPHA, sp.Float(10**15, 130)), 100)
            if not (g_half.is_real and g - g_half > sp.Float(10) ** -3):
                return False
        elif not tv.is_real or abs(g - tv) > sp.Float(10) ** -12 * max(1, abs(tv)):
            return False
        checked = True
    return True if checked else None


def _check_limits(expr, cond, kl, dinf, points, seconds, log):
    """Check that lim_{alpha->1} expr = KL and lim_{alpha->oo} expr = D_inf (recorded, not assumed).

    The limit is first taken symbolically; when sympy's limit is unusable (unevaluated, or an
    artefact such as oo*sign(...)), the general form is evaluated at 100 digits next to the order.
    A disagreement raises :class:`DerivationError` (the result then is not a closed form).
    """
    general = expr.args[-1][0] if isinstance(expr, sp.Piecewise) else expr
    below = None
    if isinstance(expr, sp.Piecewise) and general == sp.oo and expr.args[0][1] == (ALPHA < 1):
        # +oo for every alpha > 1 (tails too heavy) while the KL may be finite: the KL is the limit
        # from below, which always holds (van Erven & Harremoës 2014, Thm. 5)
        below = expr.args[0][0]
    for name, target, a0 in (("KL", kl, sp.Integer(1)), ("D_inf", dinf, sp.oo)):
        if target is None:
            continue
        ok = None
        lim = None
        form, side = (below, "-") if (a0 == 1 and below is not None) else (general, "+" if a0 == 1 else "-")
        try:
            lim = run_with_time_limit(sp.limit, form, ALPHA, a0, side, seconds=seconds)
        except (StepTimeout, Exception) as exc:  # noqa: BLE001
            log.note(f"{name} limit check", f"symbolic limit not taken: {type(exc).__name__}")
        if lim is not None and not lim.has(sp.Limit, sp.nan, sp.zoo, sp.sign, sp.AccumBounds):
            if target == sp.oo or lim.has(sp.oo, -sp.oo):
                ok = "symbolic" if target == lim else None
            else:
                ok = _equivalent(lim, target, points)
        if not ok:
            try:
                numeric = run_with_time_limit(_numeric_limit_check, form, cond, target, a0, points, side, seconds=seconds)
            except (StepTimeout, Exception):  # noqa: BLE001
                numeric = None
            if numeric is True:
                ok = "numeric, 100 digits next to the order"
            elif numeric is False or (lim is not None and not lim.has(sp.Limit, sp.sign, sp.nan, sp.zoo, sp.AccumBounds)):
                raise DerivationError(f"{name}: the direct derivation {target} differs from the limit {lim}")
            else:
                log.note(f"{name} limit check", "not decided: limit neither taken symbolically nor evaluable")
                continue
        log.note(f"{name} limit check", f"lim alpha -> {a0}{' from below' if (a0 == 1 and side == '-') else ''} of the general form equals the direct {name} ({ok} check)")
