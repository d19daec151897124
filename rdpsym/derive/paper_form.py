"""Paper-sized forms: among forms equal to a derived expression, the one a paper would print (issue 18).

A derivation's simplifier keeps the most compact form it finds, but sums of piece integrals often keep
the shape of the pieces: differences of logs (log p - log(1 - p) where a paper writes log(p/(1 - p))),
the eleven terms of a binomial sum (a paper writes n times the Bernoulli form, since
D_alpha(Bin(n, p)||Bin(n, q)) = n D_alpha(Ber(p)||Ber(q)) by additivity over independent coordinates,
van Erven and Harremoës 2014, IEEE T-IT 60(7), Thm. 28), normalising constants repeated in every term
(a discrete Laplace pmf's (1 - e^(-1/b))/(1 + e^(-1/b))). The rewrites here, each general (nothing is
chosen by a mechanism's name):

* quotients of logs: c log A - c log B -> c log(A/B) (:func:`sympy.logcombine`), and Abs of an argument
  whose sign the parameters' domains decide replaced by the argument or its negative;
* the exponential gathering of log Z: every term of Z written exp(a + alpha b) with a and b simplified
  (log A - log B -> log(A/B), the quotient cancelled), terms of equal b gathered, their coefficients
  simplified and the common factor pulled out (exp of sums split where it shortens);
* a power of a sum: Z = X y^m P(y) with P(y) = c f(y)^n (a binomial sum) -> log Z = n log(...) + log c;
* common factors pulled out (n times a Bernoulli form, the normalising constant of a mixture); a
  common denominator alone is not pulled out, so that Mironov 2017's Table II shapes stay as printed.

A candidate is accepted only if it is shorter (sympy ``count_ops``) and shown equal to the expression
it replaces, both ways (:func:`proved_equal`): the difference simplifies to 0 with every parameter
written as a function of a free positive (or real) variable ranging over exactly its domain, and the
two agree to 30 digits at random points inside the domains (and inside the form's condition). Every
step runs under a time limit and falls back to the form it was given; a Piecewise keeps its
conditions, only its branch values are rewritten.
"""

from __future__ import annotations

import random
import time
from typing import Sequence

import mpmath
import sympy as sp

from ..symbols import alpha as ALPHA
from .exp_monomials import NotMonomial, factored_form, monomial_equal
from .sign import decide, sign as decided_sign
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["paper_form", "proved_equal", "domain_substitution", "random_points", "candidates"]

#: how many random points the numeric spot check compares (at least MIN_COMPARED must be usable)
POINTS, MIN_COMPARED = 8, 4
#: digits of agreement of the numeric spot check
DIGITS = 30
#: at most this many seconds per rewrite and per check (a form is cosmetic: the derivation's budget
#: belongs to the derivation)
STEP_SECONDS = 3.0


def _domain(s: sp.Symbol, params) -> sp.Set:
    for p in params or ():
        if p.symbol == s:
            return p.domain
    if s.is_integer:
        return sp.S.Naturals if s.is_positive else (sp.S.Naturals0 if s.is_nonnegative else sp.S.Integers)
    if s.is_positive:
        return sp.Interval.open(0, sp.oo)
    if s.is_nonnegative:
        return sp.Interval(0, sp.oo)
    return sp.S.Reals


def domain_substitution(symbols, params) -> dict:
    """symbol -> an expression in a fresh variable that ranges over (the interior of) its domain:
    (lo, hi) -> lo + (hi - lo) u/(1 + u), (lo, oo) -> lo + u, (-oo, hi) -> hi - u with u > 0; the real
    line -> a real variable. Integer and other domains keep the symbol (its assumptions hold)."""
    out = {}
    for s in symbols:
        dom = _domain(s, params)
        if not isinstance(dom, sp.Interval) and dom != sp.S.Reals:
            continue
        if dom == sp.S.Reals or (isinstance(dom, sp.Interval) and dom.start == -sp.oo and dom.end == sp.oo):
            out[s] = sp.Dummy(s.name, real=True)
            continue
        u = sp.Dummy(s.name, positive=True)
        lo, hi = dom.start, dom.end
        if not (lo.is_number and hi.is_number):
            continue  # a domain relating parameters: the symbol's assumptions only
        if lo.is_finite and hi.is_finite:
            out[s] = lo + (hi - lo) * u / (1 + u)
        elif lo.is_finite:
            out[s] = lo + u
        else:
            out[s] = hi - u
    return out


def random_points(symbols, params, n: int, seed: int = 18) -> list[dict]:
    """``n`` random points inside the domains (exact rationals); alpha alternates between (0, 1) and (1, 8)."""
    rng = random.Random(seed)
    points = []
    for i in range(n):
        point = {}
        for s in symbols:
            if s == ALPHA:
                point[s] = sp.Rational(rng.randint(5, 95), 100) if i % 2 else 1 + sp.Rational(rng.randint(1, 70), 10)
                continue
            dom = _domain(s, params)
            if isinstance(dom, sp.Interval) and dom.start.is_number and dom.end.is_number:
                lo, hi = dom.start, dom.end
                if lo.is_finite and hi.is_finite:
                    v = lo + (hi - lo) * sp.Rational(rng.randint(3, 97), 100)
                elif lo.is_finite:
                    v = lo + sp.Rational(rng.randint(1, 50), 10)
                else:
                    v = hi - sp.Rational(rng.randint(1, 50), 10)
                point[s] = sp.Integer(round(v)) if s.is_integer else v
            elif s.is_integer:
                lo = 1 if s.is_positive else 0
                point[s] = sp.Integer(rng.randint(lo, lo + 6))
            elif s.is_positive:
                point[s] = sp.Rational(rng.randint(1, 50), 10)
            else:
                point[s] = sp.Rational(rng.randint(-30, 30), 10)
        points.append(point)
    return points


def _positive_logs(e: sp.Expr) -> sp.Expr:
    """log and Abs arguments factored, so that their signs show (1 - u/(1 + u) is 1/(1 + u))."""
    def one(n):
        arg = n.args[0]
        return type(n)(sp.factor(sp.together(arg))) if sp.count_ops(arg) <= 40 else n
    return e.replace(lambda n: isinstance(n, (sp.log, sp.Abs)), one)


def _normal(e: sp.Expr) -> sp.Expr:
    """A normal form of a sum of products of powers of positive bases (forcing is valid: every base is
    positive once the parameters range over their domains)."""
    e = e.replace(lambda n: isinstance(n, sp.Pow) and not n.exp.is_Integer and isinstance(n.base, sp.Add),
                  lambda n: sp.factor(sp.together(n.base)) ** n.exp)
    e = sp.expand_power_base(sp.expand_power_exp(sp.expand(e)), force=True)
    return sp.expand(sp.powsimp(sp.powdenest(e, force=True), force=True))


def _logs_cancel(d: sp.Expr) -> bool:
    """d = sum_i c_i log X_i with integer c_i (after multiplying out 1/(alpha - 1)) is 0 if the product
    of the X_i^c_i with c_i > 0 equals that of the others (n log W = log W^n with W^n expanded)."""
    if d.has(ALPHA):  # term by term, so that (alpha - 1)/(alpha - 1) cancels before anything expands
        d = sp.Add(*[(ALPHA - 1) * t for t in sp.Add.make_args(sp.expand(d))])
    a = sp.expand(d)
    num, den = [], []
    for t in sp.Add.make_args(a):
        c, lg = t.as_independent(sp.log, as_Add=False)
        if not (isinstance(lg, sp.log) and c.is_Integer):
            return False
        (num if c > 0 else den).append(lg.args[0] ** abs(c))
    return bool(num) and _normal(sp.Mul(*num) - sp.Mul(*den)) == 0


def _monomial_logs_cancel(d: sp.Expr, subs: dict) -> bool:
    """:func:`_logs_cancel` with the products compared as rational functions of generators
    (:func:`.exp_monomials.monomial_equal`: the binomial theorem, exponentials of multiples of 1/b)."""
    # top-level products distributed only: expanding inside the logs would multiply out (1 - p)^9
    scale = (ALPHA - 1) if d.has(ALPHA) else 1
    num, den = [], []
    for t in sp.Add.make_args(sp.expand_mul(d, deep=False)):
        c, lg = t.as_independent(sp.log, as_Add=False)
        c = sp.cancel(c * scale)
        if not (isinstance(lg, sp.log) and c.is_Integer):
            return False
        (num if c > 0 else den).append(lg.args[0] ** abs(c))
    return bool(num) and monomial_equal(sp.Mul(*num), sp.Mul(*den), subs)


def _symbolic_zero(diff: sp.Expr, subs: dict) -> bool:
    if _monomial_logs_cancel(diff, subs):
        return True
    d = diff.subs(subs)
    if d == 0 or _logs_cancel(d):
        return True
    d = _positive_logs(d)
    for attempt in (lambda e: sp.simplify(sp.expand_log(e)), lambda e: sp.simplify(sp.expand_log(sp.powsimp(
            sp.expand_power_base(e)), force=False).rewrite(sp.exp))):
        if attempt(d) == 0:
            return True
    return False


def _numeric_equal(a, b, symbols, params, condition) -> bool:
    """a and b agree to DIGITS digits at random points inside the domains where ``condition`` holds and
    ``b`` (the form being replaced) is a finite real number; too few such points is no agreement."""
    compared = 0
    for point in random_points(symbols, params, POINTS):
        if condition not in (True, sp.true):
            c = condition.subs(point)
            if c not in (True, False, sp.true, sp.false):
                return False
            if not c:
                continue
        with mpmath.workdps(DIGITS + 20):
            vb = sp.N(b.subs(point), DIGITS + 15)
            if not (vb.is_number and vb.is_real and vb.is_finite):
                continue
            va = sp.N(a.subs(point), DIGITS + 15)
            if not (va.is_number and va.is_real and va.is_finite):
                return False
            if abs(va - vb) > max(abs(vb), 1) * sp.Float(10, DIGITS + 15) ** -DIGITS:
                return False
        compared += 1
    return compared >= MIN_COMPARED


def proved_equal(candidate, expr, symbols, params, seconds: float, condition=sp.true) -> bool:
    """Both: ``candidate - expr`` simplifies to 0 with the parameters written over their domains
    (:func:`domain_substitution`), and the two agree to 30 digits at random points inside the domains
    (:func:`random_points`, within ``condition``); each under ``seconds``. Anything undecided is False."""
    if candidate.has(sp.nan, sp.zoo, sp.I):
        return False
    cond_symbols = getattr(condition, "free_symbols", set())
    syms = sorted(set(symbols) | ((expr.free_symbols | cond_symbols) & {ALPHA}), key=lambda s: s.name)
    try:
        subs = domain_substitution([s for s in syms if s != ALPHA], params)
        if not run_with_time_limit(_symbolic_zero, candidate - expr, subs, seconds=seconds):
            return False
        return bool(run_with_time_limit(_numeric_equal, candidate, expr, syms, params, condition, seconds=seconds))
    except (StepTimeout, Exception):  # noqa: BLE001 - undecided is not equal
        return False


# ---------------------------------------------------------------------------------------------------
# rewrites
# ---------------------------------------------------------------------------------------------------
def _refine_abs(e, subs):
    """Abs(a) -> a or -a where a's sign is decided over the domains (a = 1 - p for p in (0, 1))."""
    def resolved(n):
        arg = n.args[0].subs(subs)
        if decide(arg, "nonnegative", effort="rewritings"):
            return n.args[0]
        if decide(arg, "nonpositive", effort="rewritings"):
            return -n.args[0]
        return n
    return e.replace(lambda n: isinstance(n, sp.Abs), resolved)


def _simplify_log_sum(c: sp.Expr) -> sp.Expr:
    """c log A - c log B + ... -> c log(A/B) with A/B cancelled (exp(1/b) for a quotient of normalisers)."""
    c = sp.expand(c)
    combined = sp.logcombine(c, force=True)
    combined = combined.replace(lambda n: isinstance(n, sp.log), lambda n: sp.log(sp.cancel(sp.together(n.args[0]))))
    out = sp.expand(sp.expand_log(combined, force=True))
    # a quotient whose cancelled form splits with a sign (log(-p) - log(p - 1)) is no simplification
    return c if out.has(sp.I) or sp.count_ops(out) > sp.count_ops(c) else out


def _term_exponents(Z: sp.Expr):
    """[(a, b)] with each term of Z equal to exp(a + alpha b), a and b free of alpha, or None."""
    out = []
    for t in sp.Add.make_args(Z):
        t = sp.powdenest(sp.expand_power_base(t, force=True), force=True)
        L = sp.expand(sp.expand_log(sp.log(t), force=True))
        b = sp.expand(sp.diff(L, ALPHA))
        if b.has(ALPHA):
            return None
        a = sp.expand(L - ALPHA * b)
        out.append((_simplify_log_sum(a), _simplify_log_sum(b)))
    return out


def _gathered(Z: sp.Expr) -> sp.Expr | None:
    """Z with its terms gathered by exp(alpha b), coefficients simplified, the common factor pulled out."""
    parts = _term_exponents(Z)
    if parts is None:
        return None
    groups: dict = {}
    for a, b in parts:
        groups[b] = groups.get(b, 0) + sp.exp(a)
    coeffs = {b: sp.factor(sp.together(sp.powsimp(c))) for b, c in groups.items()}
    common = sp.Integer(1)
    vals = list(coeffs.values())
    if len(vals) > 1:
        first = vals[0]
        if all(sp.cancel(v / first).is_number for v in vals):
            common = first
    summed = sp.Add(*[sp.cancel(c / common) * sp.exp(sp.factor(ALPHA * b + 0)) for b, c in coeffs.items()])
    return common * summed


def _signed_log(n: sp.log, subs: dict) -> sp.Expr:
    """log X (or log |X|) as log X or log(-X), whichever argument is positive over the domains: forced
    expansions write ((1 - p)^8)^alpha as (p - 1)^(8 alpha), whose base has the wrong sign."""
    arg = n.args[0].args[0] if isinstance(n.args[0], sp.Abs) else n.args[0]
    s = decided_sign(arg.subs(subs), effort="rewritings")
    if s == 1:
        return sp.log(arg)
    if s == -1:
        return sp.log(-arg)
    return n


def _power_of_sum(Z: sp.Expr, subs: dict) -> sp.Expr | None:
    """log Z as n log(W) + log c when Z = X y^m c f(y)^n (a binomial-type sum), else None."""
    terms = sp.Add.make_args(Z)
    if len(terms) < 3:
        return None
    rows = []
    for t in terms:
        t = sp.powdenest(sp.expand_power_base(t, force=True), force=True)
        L = sp.expand(sp.expand_log(sp.log(t), force=True))
        L = sp.expand(L.replace(lambda n: isinstance(n, sp.log) and not n.args[0].is_number,
                                lambda n: _signed_log(n, subs)))
        rows.append(L)
    basis = sorted({n for L in rows for n in L.atoms(sp.log) if not n.args[0].is_number}, key=sp.default_sort_key)
    if not basis:
        return None
    vecs = []
    for L in rows:
        coeffs = [sp.expand(L.coeff(B)) for B in basis]
        const = sp.expand(L - sum(c * B for c, B in zip(coeffs, basis)))
        if const.has(*basis):
            return None
        vecs.append((const, coeffs))
    ref = vecs[0][1]
    diffs = [[sp.expand(c - r) for c, r in zip(v, ref)] for _, v in vecs]
    g = next((d for d in diffs if any(x != 0 for x in d)), None)
    if g is None:
        return None
    j = next(i for i, x in enumerate(g) if x != 0)
    ratios = []
    for d in diffs:
        r = sp.cancel(d[j] / g[j])
        if not r.is_Rational or any(sp.expand(x - r * y) != 0 for x, y in zip(d, g)):
            return None
        ratios.append(r)
    den = sp.ilcm(*[r.q for r in ratios])
    ms = [int(r * den) for r in ratios]
    lo = min(ms)
    ms = [m - lo for m in ms]
    if max(ms) > 60:
        return None
    y = sp.Dummy("y", positive=True)
    poly = sp.Add(*[sp.exp(c) * y ** m for (c, _), m in zip(vecs, ms)])
    c, factors = sp.factor_list(sp.expand(poly), y)
    if len(factors) != 1 or factors[0][1] < 2 or not (c.is_positive or c.is_number and c > 0):
        return None
    f, n = factors[0]
    unit = [x / den for x in g]
    base = sp.Mul(*[B.args[0] ** x for B, x in zip(basis, unit)])
    shift = [r + lo * x for r, x in zip(ref, unit)]
    outer = sp.Mul(*[B.args[0] ** (x / n) for B, x in zip(basis, shift)])
    W = sp.powsimp(sp.expand(sp.expand_power_base(outer * f.subs(y, base), force=True)), force=True)
    return n * sp.log(W) + sp.log(c)


def _on_logs(e: sp.Expr, rewrite, power: bool = False) -> sp.Expr:
    """Every log of a sum rewritten: log(rewrite(Z)), or rewrite(Z) itself for ``power`` (a log already)."""
    def one(n):
        if not isinstance(n.args[0], sp.Add):
            return n
        if rewrite is _gathered and not n.args[0].has(sp.exp):
            return n
        got = rewrite(n.args[0])
        if got is None:
            return n
        return got if power else sp.log(got)
    return e.replace(lambda n: isinstance(n, sp.log), one)


def _log_quotients(e: sp.Expr) -> sp.Expr:
    """c log A - c log B -> c log(A/B) in every sum, the coefficient c kept outside the log
    (:func:`sympy.logcombine` would write log((A/B)^c))."""
    def combine(add):
        groups: dict = {}
        rest = []
        for t in add.args:
            c, logs = t.as_independent(sp.log, as_Add=False)
            if not isinstance(logs, sp.log) or c.has(sp.log):
                rest.append(t)
                continue
            sign = -1 if c.could_extract_minus_sign() else 1
            groups.setdefault(sign * c, []).append((sign, logs.args[0]))
        if all(len(v) < 2 for v in groups.values()):
            return add
        for c, parts in groups.items():
            rest.append(c * sp.log(sp.Mul(*[x ** s for s, x in parts])))
        return sp.Add(*rest)
    return e.replace(lambda n: isinstance(n, sp.Add) and n.has(sp.log), combine)


def _factored(Z: sp.Expr, subs: dict) -> sp.Expr | None:
    """log Z as :func:`.exp_monomials.factored_form` reads it (a quotient; a power of a sum), or None."""
    try:
        return factored_form(Z, subs)
    except NotMonomial:
        return None


def _absorbed(e: sp.Expr) -> sp.Expr:
    """T + log Z -> log(Z e^T), e^T multiplied into the terms of Z's numerator and each exponent
    factored: the linear term a normaliser's shift leaves beside the log (k-ary randomized response's
    -epsilon (alpha - 1)) goes back into the sum it came from."""
    def one(add):
        logs = [t for t in add.args if isinstance(t, sp.log)]
        if len(logs) != 1:
            return add
        rest = add - logs[0]
        if rest.has(sp.log) or not rest.has(ALPHA):
            return add
        num, den = sp.fraction(sp.together(logs[0].args[0]))
        num = sp.powsimp(sp.expand(num * sp.exp(rest)), combine="exp")
        num = num.replace(lambda n: isinstance(n, sp.exp), lambda n: sp.exp(sp.factor(sp.expand(n.args[0]))))
        return sp.log(num / den)
    return e.replace(lambda n: isinstance(n, sp.Add) and n.has(sp.log), one)


def candidates(e: sp.Expr, subs: dict) -> list:
    """The rewrites of ``e`` (module docstring), each a function of the expression."""
    refine = (lambda x: _refine_abs(x, subs))
    gather = (lambda x: _on_logs(x, _gathered))
    power = (lambda x: _on_logs(x, lambda Z: _power_of_sum(Z, subs), power=True))
    return [
        lambda: _log_quotients(_on_logs(e, lambda Z: _factored(Z, subs), power=True)),
        lambda: _log_quotients(e),
        lambda: _log_quotients(gather(refine(e))),
        lambda: _log_quotients(power(refine(e))),
        lambda: _log_quotients(power(gather(refine(e)))),
        lambda: _log_quotients(_absorbed(e)),
    ]


def paper_form(expr, symbols: Sequence[sp.Symbol], params, seconds: float, condition=sp.true, log=None):
    """The shortest candidate (:func:`candidates`) proved equal to ``expr`` (:func:`proved_equal`), else
    ``expr``; a Piecewise keeps its conditions (each branch value is rewritten, under its condition and
    ``condition``); ``seconds`` bounds each rewrite and each check."""
    if expr is None or not isinstance(expr, sp.Basic) or expr.is_number:
        return expr
    if isinstance(expr, sp.Piecewise):
        return sp.Piecewise(*[(paper_form(v, symbols, params, seconds, sp.And(condition, c), log), c)
                              for v, c in expr.args])
    started = time.perf_counter()
    seconds = min(seconds, STEP_SECONDS)
    subs = domain_substitution([s for s in symbols if s != ALPHA], params)
    size = sp.count_ops(expr)
    best, best_size, tried = expr, size, {expr}
    # in order (the factored reading first: it usually wins, and a busy machine may leave time for
    # little else); a candidate is proved only if it beats the best so far, equally short ones keep
    # the earlier rewrite
    for make in candidates(expr, subs):
        try:
            cand = run_with_time_limit(make, seconds=seconds)
        except (StepTimeout, Exception):  # noqa: BLE001 - a rewrite that fails is skipped
            continue
        if not isinstance(cand, sp.Basic) or cand in tried or sp.count_ops(cand) >= best_size:
            continue
        tried.add(cand)
        if proved_equal(cand, expr, symbols, params, seconds, condition):
            best, best_size = cand, sp.count_ops(cand)
    if best is not expr and log is not None:
        log.note("paper form", f"{size} -> {best_size} operations, proved equal "
                               f"({time.perf_counter() - started:.2f} s)")
    return best
