"""Integrals and sums of exp(sum_j k_j T_j(x)) over one smooth piece: the exponential-family template.

On a smooth piece, alpha*log P + (1-alpha)*log Q expands to ``c0 + sum_j c_j T_j(x)``: a constant plus
coefficients (functions of alpha and the parameters) times basis functions of x (x, x**2, log x,
exp(-x/b), log(k!), ...). Then

    ∫ P^alpha Q^(1-alpha) = exp(c0) * Z(c_1, ..., c_m),   Z(k) = ∫ exp(sum_j k_j T_j(x)) dx,

and Z is the (exponentiated) log-normaliser of the exponential family with sufficient statistics T_j.
Z is computed once with fresh symbols k_j carrying the sign that c_j has in the current alpha regime,
which is far easier for sympy than the raw integrand; its convergence conditions are exactly the
natural parameter space, recovered as conditions on c_j(alpha) (Nielsen & Nock 2011; Mironov 2017
uses the Gaussian and Laplace instances in Props. 6 and 7).

When sympy does not integrate directly, changes of variable turn the integrand into a gamma or beta
integral: u = log x (log-normal), u = x**p (Weibull), u = 1/x (Lévy, inverse Gaussian) and
u = exp(c x) (Gumbel: exp(k1 x + k2 exp(c x)) -> u**(k1/c) exp(k2 u)); a shifted density f(x - a) is
integrated in u = x - a first (:mod:`.shift`). Sums over a finite range with a
symbolic end (binomial) are accepted only when the formula is proven for every ratio (the sum and its
reflection m -> N - m), since such a sum is finite everywhere.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import sympy as sp

from .convergence import diverges as _diverges, integrand as _integrand
from .pieces import DerivationError
from .shift import centre
from .sign import decide_relation, sign
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["log_expand", "decompose", "integrate_template", "TemplateResult", "mixture_log"]


def log_expand(expr: sp.Expr) -> sp.Expr:
    """log(expr) for a positive smooth expression, as an expanded sum of logs and powers."""
    logged = sp.expand_log(sp.log(expr), force=True)
    return sp.expand(logged)


def decompose(L: sp.Expr, x: sp.Symbol, simplify: bool = True) -> tuple[sp.Expr, dict[sp.Expr, sp.Expr]]:
    """Write L = c0 + sum_j c_j T_j(x) with x-free coefficients c_j; returns (c0, {T_j: c_j}).

    ``simplify=False`` leaves the coefficients as expand gives them (a coefficient that is zero only after
    simplification is then kept): enough for reading which basis functions occur, at a fraction of the cost."""
    c0 = sp.Integer(0)
    basis: dict[sp.Expr, sp.Expr] = {}
    # exponentials of x stand in as symbols while expanding: sympy's expand would otherwise merge
    # exp(-x/b)/(v + 1) into 1/(v*exp(x/b) + exp(x/b)), whose x-part is no longer a basis function
    L = sp.expand_power_exp(L.replace(lambda e: isinstance(e, sp.exp) and e.has(x), lambda e: sp.exp(sp.expand(e.args[0]))))
    stand_in = {e: sp.Dummy("E", positive=True) for e in L.atoms(sp.exp) if e.has(x)}
    back = {d: e for e, d in stand_in.items()}
    for term in sp.Add.make_args(sp.expand(L.xreplace(stand_in))):
        coeff, dep = term.as_independent(x, *back, as_Add=False)
        if any(isinstance(b, sp.Add) and b.free_symbols - {x} - set(back) for b in _bases(dep)):
            # expand put an x-free factor into a denominator with x (1/(2*v*x + 2*x)): factor it out
            coeff, dep = sp.factor(term).as_independent(x, *back, as_Add=False)
        coeff, dep = coeff.xreplace(back), dep.xreplace(back)
        if dep == 1:
            c0 += coeff
        else:
            basis[dep] = basis.get(dep, 0) + coeff
    if not simplify:
        return c0, {T: c for T, c in basis.items() if c != 0}
    cleaned = {}
    for T, c in basis.items():
        c = sp.factor(sp.simplify(c))
        if c != 0:
            cleaned[T] = c
    return c0, cleaned


def _bases(expr: sp.Expr) -> list[sp.Expr]:
    """Bases of the powers in a product (``expr`` itself for a non-power factor)."""
    return [f.base if isinstance(f, sp.Pow) else f for f in sp.Mul.make_args(expr)]


def mixture_log(expr: sp.Expr, x: sp.Symbol) -> sp.Expr | None:
    """A factor log(S) of ``expr`` with S a finite mixture in x, or None.

    S is a mixture when it is a sum, not a polynomial in x, with at least two terms that contain
    exponentials of x and whose ratio still depends on x (e.g. (1-q) exp(-x**2/2) + q exp(-(x-1)**2/2)).
    Such a log is not a sufficient statistic: exp(c log S) = S**c for a non-integer (or symbolic) c has
    no exponential-family form, and sympy spends its whole time limit on it before failing. The
    engine recognises it here and says so at once; integer orders are expanded by
    :mod:`rdpsym.derive.integer_order`.
    """
    for node in sp.preorder_traversal(expr):
        if not isinstance(node, sp.log) or not isinstance(node.args[0], sp.Add):
            continue
        S = node.args[0]
        if not S.has(x) or S.is_polynomial(x):
            continue
        terms = [t for t in S.args if t.has(x) and any(e.has(x) for e in t.atoms(sp.exp))]
        for i, a in enumerate(terms):
            if any(sp.simplify(sp.powsimp(b / a, force=True)).has(x) for b in terms[i + 1:]):
                return node
    return None


@dataclass(frozen=True)
class TemplateResult:
    """Z on one piece: finite ``cases`` [(value, condition)], in terms of the coefficients c_j."""

    cases: tuple[tuple[sp.Expr, sp.Basic], ...]
    notes: tuple[str, ...] = ()

    @property
    def condition(self) -> sp.Basic:
        return sp.Or(*[c for _, c in self.cases]) if self.cases else sp.false


def _signed(sign: int | None) -> tuple[sp.Expr, sp.Dummy]:
    """A coefficient symbol of the given sign, and the Dummy it is made of.

    A negative coefficient is written -kappa with kappa > 0: sympy handles exp(-kappa*x) cleanly but
    routes negative symbols through polar numbers (exp_polar, (-1)**s), which are not real forms.
    """
    if sign == 1:
        k = sp.Dummy("k", positive=True)
        return k, k
    if sign == -1:
        k = sp.Dummy("kappa", positive=True)
        return -k, k
    k = sp.Dummy("k", real=True)
    return k, k


#: Atoms that mean sympy left the real line: such a result is not accepted as a closed form.
_NOT_REAL_ATOMS = (sp.exp_polar, sp.polar_lift, sp.arg, sp.periodic_argument, sp.principal_branch)


def _is_real_form(value: sp.Expr) -> bool:
    if value.has(sp.I, *_NOT_REAL_ATOMS):
        return False
    for g in value.atoms(sp.lowergamma, sp.uppergamma, sp.expint, sp.Ei):
        if any(a.has(sp.oo, -sp.oo, sp.zoo) for a in g.args):
            return False
    for pw in value.atoms(sp.Pow):
        if pw.base.is_negative and pw.exp.is_integer is not True:
            return False
    return True


_BAD_CONDITION_ATOMS = (sp.arg, sp.periodic_argument, sp.polar_lift, sp.exp_polar, sp.unpolarify)


def _clean(value: sp.Expr) -> sp.Expr:
    if value.has(sp.erfc):
        value = value.rewrite(sp.erf)  # erf and erfc terms combine under simplify; erfc comes back below
    if value.has(sp.hyper, sp.meijerg):
        value = sp.hyperexpand(value)
    if value.has(sp.erf, sp.hyper, sp.Piecewise) or sp.count_ops(value) > 40:
        value = sp.simplify(value)
    return erfc_form(value)


def erfc_form(expr: sp.Expr) -> sp.Expr:
    """1 - erf(z) -> erfc(z) and 1 + erf(z) -> erfc(-z): the same function, but erfc keeps its
    digits where erf(z) -> 1 (log(1 - erf(z)) next to alpha = 1 would otherwise need thousands of
    digits to evaluate)."""

    def complement(node):
        if not isinstance(node, sp.Add) or len(node.args) != 2:
            return None
        for a, b in (node.args, node.args[::-1]):
            if a == 1 and isinstance(-b, sp.erf):
                return sp.erfc((-b).args[0])
            if a == 1 and isinstance(b, sp.erf):
                return sp.erfc(-b.args[0])
        return None

    return expr.replace(lambda n: complement(n) is not None, complement) if expr.has(sp.erf) else expr


def _shifted_sum_args(x, lo, hi):
    """Map an integer range to one starting at 0 (or finite): returns (substitution, new_lo, new_hi)."""
    if lo == -sp.oo and hi == sp.oo:
        return None
    if lo == -sp.oo:
        # n = hi - m, m >= 0
        return x, hi - x, sp.Integer(0), sp.oo
    return x, lo + x, sp.Integer(0), hi - lo


def _integrate_once(integrand, x, lo, hi, discrete):
    if discrete:
        if lo == -sp.oo and hi == sp.oo:
            # split at 0: (-oo, -1] and [0, oo)
            a = _integrate_once(integrand, x, -sp.oo, sp.Integer(-1), True)
            b = _integrate_once(integrand, x, sp.Integer(0), sp.oo, True)
            if a is None or b is None:
                return None
            if a[0] == sp.oo or b[0] == sp.oo:
                return sp.oo, sp.true
            return a[0] + b[0], sp.And(a[1], b[1])
        _, repl, nlo, nhi = _shifted_sum_args(x, lo, hi)
        m = sp.Dummy("m", integer=True, nonnegative=True)
        body = integrand.subs(x, repl.subs(x, m))
        # exp(a + k*m) -> exp(a) * r**m with r = exp(k) > 0 turns geometric and exponential series
        # into forms sympy sums in closed form (with the ratio condition r < 1).
        ratios = {}
        replacements = {}
        for e in body.atoms(sp.exp):
            arg = sp.expand(e.args[0])
            const, rest = arg.as_independent(m, as_Add=True)
            c, dep = rest.as_independent(m, as_Add=False)
            if dep == m:
                r = sp.Dummy("r", positive=True)
                ratios[r] = sp.exp(c)
                replacements[e] = sp.exp(const) * r**m
        body = body.xreplace(replacements)
        back = {r: v for r, v in ratios.items()}
        if not nhi.is_infinite:
            got = _finite_range_sum(body, m, nhi, list(ratios))
            return None if got is None else (got[0].subs(back), got[1])
        total = sp.piecewise_fold(sp.summation(body, (m, nlo, nhi)))
        cond = sp.true
        if isinstance(total, sp.Piecewise):
            finite = [(v, c) for v, c in total.args if not v.has(sp.Sum)]
            if not finite:
                return None
            total = sp.Piecewise(*finite) if len(finite) > 1 or finite[0][1] is not sp.true else finite[0][0]
            if isinstance(total, sp.Piecewise) and len(total.args) == 1:
                total, cond = total.args[0]
            elif isinstance(total, sp.Piecewise):
                cond = sp.Or(*[c for _, c in finite])
        if total.has(sp.Sum):
            return None
        return total.subs(back), decide_relationals(cond.subs(back))
    result = sp.integrate(integrand, (x, lo, hi), conds="separate")
    if isinstance(result, tuple):
        value, cond = result
    else:
        value, cond = result, sp.true
    if isinstance(value, sp.Piecewise):
        finite = [(v, c) for v, c in value.args if not v.has(sp.Integral)]
        if len(finite) == 1:
            value, extra = finite[0]
            cond = sp.And(cond, extra)
    if value.has(sp.Integral):
        return None
    return value, cond


def _finite_range_sum(body, m, N, ratios):
    """sum_{m=0}^{N} body (N finite, possibly symbolic): (value, True), or None if not found.

    A sum of finitely many finite terms is finite, so a condition sympy attaches (e.g. r <= 1 for
    sum binomial(N, m) r**m) only says where its formula is proven, not where the sum converges. The
    reflected sum (m -> N - m, ratio r -> 1/r) proves a formula for the complementary range; the
    formulas are kept where they are proven, and the sum is accepted only if together they cover
    every ratio r > 0.
    """
    cases = []
    for reflect in (False, True):
        term = sp.expand_power_exp(body.subs(m, N - m)) if reflect else body
        try:
            total = sp.piecewise_fold(sp.summation(term, (m, 0, N)))
        except Exception:  # noqa: BLE001 - sympy's summation fails in many ways
            continue
        branches = total.args if isinstance(total, sp.Piecewise) else ((total, sp.true),)
        for value, cond in branches:
            if value.has(sp.Sum) or value.has(sp.nan, sp.zoo):
                continue
            if cond in (sp.true, True):
                return value, sp.true
            cases.append((value, cond))
    if not cases or len(ratios) != 1:
        return None
    r = ratios[0]
    covered = sp.S.EmptySet
    cases = [(v, c) for v, c in cases if not c.free_symbols - {r}]
    for _, cond in cases:
        try:
            covered = covered | sp.solveset(cond, r, sp.Interval.open(0, sp.oo))
        except Exception:  # noqa: BLE001
            return None
    if covered != sp.Interval.open(0, sp.oo):
        return None
    first = cases[0][0]
    if all(sp.simplify(v - first) == 0 for v, _ in cases[1:]):
        return first, sp.true
    return sp.Piecewise(*cases[:-1], (cases[-1][0], True)), sp.true


def _substitutions(integrand, x, lo, hi):
    """Changes of variable worth trying when direct integration fails: u = log x and u = exp(c x)."""
    out = []
    if (lo.is_nonnegative or lo == 0) and integrand.has(sp.log(x)):
        u = sp.Dummy("u", real=True)
        new = (integrand.subs(x, sp.exp(u)) * sp.exp(u))
        new = sp.powsimp(sp.expand_log(new, force=True), force=True)
        ulo = -sp.oo if lo == 0 else sp.log(lo)
        uhi = sp.oo if hi == sp.oo else sp.log(hi)
        out.append(("u = log x", new, u, ulo, uhi))
    if (lo == 0 or lo.is_positive) and (hi == sp.oo or hi.is_positive):
        # u = x**p for a power x**p (p symbolic or not an integer) inside exp: Weibull-type,
        # and u = 1/x for exp(c/x): Lévy and inverse-Gaussian-type integrands (from lo > 0 too: an
        # incomplete gamma integral, e.g. a generalised Gaussian's tail beyond its shift).
        powers = set()
        for e in integrand.atoms(sp.exp):
            for term in sp.Add.make_args(sp.expand(e.args[0])):
                _, dep = term.as_independent(x, as_Add=False)
                if isinstance(dep, sp.Pow) and dep.base == x and dep.exp.is_positive and not dep.exp.is_Integer:
                    powers.add(dep.exp)
                elif isinstance(dep, sp.Pow) and dep.base == x and dep.exp == -1:
                    powers.add(sp.Integer(-1))
        for p in sorted(powers, key=sp.default_sort_key):
            u = sp.Dummy("u", positive=True)
            new = integrand.subs(x, u ** (1 / p)) * sp.Abs(1 / p) * u ** (1 / p - 1)
            new = sp.powsimp(sp.expand_power_base(sp.powdenest(sp.expand_power_exp(new), force=True), force=True), force=True)
            uhi = sp.oo if hi == sp.oo else hi**p
            ulo = sp.Integer(0) if lo == 0 else lo**p
            ends = (ulo, uhi) if p.is_positive else ((sp.Integer(0) if hi == sp.oo else hi**p), sp.oo if lo == 0 else ulo)
            out.append((f"u = x**({p})", new, u, ends[0], ends[1]))
    # u = exp(c x): exponentials nested inside another exponential first (Gumbel-type
    # exp(k1 x + k2 exp(c x)) becomes u**(k1/c) exp(k2 u), a gamma integral)
    inner = [e for e in integrand.atoms(sp.exp) if any(o is not e and o.args[0].has(e) for o in integrand.atoms(sp.exp))]
    outer = [e for e in sorted(integrand.atoms(sp.exp), key=sp.default_sort_key) if e not in inner]
    tried = 0
    for e in sorted(inner, key=sp.default_sort_key) + outer:
        c, dep = e.args[0].as_independent(x, as_Add=False)
        if dep == x and c.is_nonzero and (c.is_positive or c.is_negative):
            u = sp.Dummy("u", positive=True)
            new = integrand.subs(x, sp.log(u) / c) / (sp.Abs(c) * u)
            new = sp.powsimp(sp.expand_log(sp.expand_power_exp(new), force=True), force=True)
            ends = [sp.exp(c * lo) if lo != -sp.oo else (0 if c > 0 else sp.oo),
                    sp.exp(c * hi) if hi != sp.oo else (sp.oo if c > 0 else 0)]
            ulo, uhi = (ends[0], ends[1]) if c.is_positive else (ends[1], ends[0])
            out.append((f"u = exp({c}*x)", new, u, ulo, uhi))
            tried += 1
            if tried == 2:
                break
    return [(label, _exp_log_to_powers(new, u), u, ulo, uhi) for label, new, u, ulo, uhi in out]


def _exp_log_to_powers(expr: sp.Expr, u: sp.Symbol) -> sp.Expr:
    """exp(a + c*log(u)) -> exp(a) * u**c (u > 0): the power form sympy integrates as a gamma or beta
    integral, where exp(c*log(u)) with symbolic c is left unevaluated."""

    def split(e):
        factors = []
        for term in sp.Add.make_args(sp.expand(e.args[0])):
            c, dep = term.as_independent(u, as_Add=False)
            if dep == sp.log(u):
                factors.append(u**c)
            else:
                factors.append(sp.exp(term))
        return sp.Mul(*factors)

    return expr.replace(lambda e: isinstance(e, sp.exp) and e.has(sp.log(u)), split)


def integrate_template(
    coeffs: dict[sp.Expr, sp.Expr],
    x: sp.Symbol,
    lo: sp.Expr,
    hi: sp.Expr,
    discrete: bool,
    seconds: float,
    max_unknown: int = 2,
) -> TemplateResult:
    """Z(c) = ∫_lo^hi exp(sum_j c_j T_j(x)) dx (or the sum over integers), case-split on unknown signs.

    Each c_j whose sign the regime's assumptions decide gets a fresh symbol of that sign. For the others
    sympy first tries a real symbol; if that leaves an Integral or conditions sympy cannot state for
    real arguments, the sign is split into c_j < 0 and c_j > 0. Cases whose integral diverges are
    dropped: their condition is where the divergence is +oo.
    """
    notes: list[str] = []
    for T, c in coeffs.items():
        if not (c.is_integer and c.is_nonnegative) and mixture_log(T, x) is not None:
            raise DerivationError(
                f"the integrand contains S**({sp.sstr(c)}) with S a mixture (a sum of exponentials in {x} with "
                "non-constant ratios): no exponential-family template form; integer orders are derived by "
                "rdpsym.derive.integer_order")
    a = None if discrete else centre(coeffs, x)
    if a is not None:
        # a shifted density's integrand: integrate it in u = x - a, where it is f(u) (see .shift), and
        # in u = a - x on a range left of a, so that the range starts at 0 where it can
        side = -1 if (hi - a).is_nonpositive else 1
        to = a + side * x
        shifted = sp.Add(*[c * (sp.log(sp.expand(T.args[0].subs(x, to))) if isinstance(T, sp.log) else T.subs(x, to))
                           for T, c in coeffs.items()])
        c0, moved = decompose(sp.expand(shifted), x)
        ends = (lo - a, hi - a) if side == 1 else (a - hi, a - lo)
        res = integrate_template(moved, x, *ends, False, seconds, max_unknown)
        return TemplateResult(tuple((sp.exp(c0) * v, cond) for v, cond in res.cases),
                              (f"translated: x = {sp.sstr(to.subs(x, sp.Symbol('u')))}",) + res.notes)
    if not coeffs:
        length = (hi - lo + 1) if discrete else (hi - lo)
        if length.is_infinite:
            return TemplateResult((), ("integrand is constant on an infinite piece: divergent",))
        return TemplateResult(((length, sp.true),))
    known: dict[sp.Expr, sp.Symbol] = {}
    unknown: list[sp.Expr] = []
    for T, c in coeffs.items():
        if c.is_number:
            # exact constants stay themselves: x**(-1) or 1/k! must not become x**k or k!**k
            known[T] = c
            continue
        s = sign(c)
        if s in (1, -1):
            known[T] = _signed(s)[0]
        else:
            unknown.append(T)

    def diverges(symbols: dict[sp.Expr, sp.Expr]) -> bool:
        # Each coefficient got a symbol of its own sign, independent of the others. Coefficients that
        # share parameters are related (alpha (nu+1)/2 and (1-alpha)(nu+1)/2 in a Student t pair), and
        # independent symbols can make a convergent integrand look divergent (x f(x) ~ x^(1 + 2(k2 - k1))
        # with k1, k2 unrelated). So a divergence is declared only when it also holds with the actual
        # coefficients of the related terms of decided sign (the sign cases keep their symbol: it is
        # the case's assumption); where that limit is undecided the integral is not declared divergent.
        if not _diverges(symbols, x, lo, hi, discrete, seconds):
            return False
        related = [T for T in symbols if not symbols[T].is_number and T in known
                   and any(coeffs[T].free_symbols & coeffs[U].free_symbols for U in coeffs if U is not T)]
        if not related:
            return True
        actual = {T: (coeffs[T] if T in related else k) for T, k in symbols.items()}
        return _diverges(actual, x, lo, hi, discrete, seconds)

    def attempt(symbols: dict[sp.Expr, sp.Symbol], limit: float = seconds, precheck: bool = False):
        integrand = _integrand(symbols)
        if precheck and diverges(symbols):
            # a sign case whose integrand does not even decay: no integration attempt needed
            return "divergent"
        subs = [] if discrete else _substitutions(integrand, x, lo, hi)
        # with changes of variable to fall back on, sympy's direct attempt gets a short limit first
        # (Lévy- and Gumbel-type integrands make it grind for the whole limit), and the full limit
        # only after the changes of variable failed too
        first = min(limit, max(2.0, limit / 4)) if subs else limit
        timed_out = False

        def direct(budget):
            nonlocal timed_out
            try:
                return run_with_time_limit(_integrate_once, integrand, x, lo, hi, discrete, seconds=budget)
            except StepTimeout:
                notes.append(f"integration timed out after {budget:g} s")
                timed_out = True
            except DerivationError:
                raise
            except Exception as exc:  # sympy raises many kinds of errors on hard integrals
                notes.append(f"sympy failed: {type(exc).__name__}: {exc}")
            return None

        got = direct(first)
        if got is None:
            for label, new, u, ulo, uhi in subs:
                try:
                    got = run_with_time_limit(_integrate_once, new, u, ulo, uhi, False, seconds=limit)
                except (StepTimeout, Exception) as exc:  # noqa: BLE001
                    notes.append(f"{label}: {type(exc).__name__}")
                    got = None
                if got is not None and (got[0] == sp.oo or _is_real_form(got[0])):
                    notes.append(f"change of variable {label}")
                    break
                got = None
        if got is None and timed_out and first < limit:
            timed_out = False
            got = direct(limit)
        if got is None:
            return "divergent" if diverges(symbols) else None
        value, cond = got
        back = {}
        for T, k in symbols.items():
            if isinstance(k, sp.Dummy):
                back[k] = coeffs[T]
            elif isinstance(-k, sp.Dummy):
                back[-k] = -coeffs[T]
        if value == sp.oo or value.has(sp.oo, sp.zoo, sp.nan):
            return "divergent"
        if cond is not sp.true and cond.has(*_BAD_CONDITION_ATOMS):
            return None
        value = _clean(value)
        if not _is_real_form(value):
            notes.append("sympy's antiderivative left the real line (polar or complex terms): rejected")
            return "divergent" if diverges(symbols) else None
        return value.subs(back), cond.subs(back)

    endpoint_cond = _endpoint_conditions(coeffs, x, lo, hi) if not discrete else sp.true
    if endpoint_cond is not sp.true:
        notes.append(f"integrability at finite ends: {sp.sstr(endpoint_cond)}")
    if len(unknown) > max_unknown:
        raise DerivationError(f"{len(unknown)} coefficients of undecided sign (at most {max_unknown} are split)")
    # First try: unknown signs as real symbols (briefly: sympy is often slow with them, and the
    # case split below is the reliable route).
    trial = dict(known)
    trial.update({T: sp.Dummy("k", real=True) for T in unknown})
    got = attempt(trial, min(seconds, max(2.0, seconds / 4))) if unknown else attempt(known)
    if got not in (None, "divergent"):
        return TemplateResult((_with_endpoints(got, endpoint_cond),), tuple(notes))
    if not unknown:
        if got == "divergent":
            return TemplateResult((), tuple(notes + ["the integral diverges"]))
        raise DerivationError("; ".join(notes) or "sympy left the integral unevaluated")
    cases = []
    for signs in itertools.product((-1, 1), repeat=len(unknown)):
        symbols = dict(known)
        region = []
        for T, s in zip(unknown, signs):
            symbols[T] = _signed(s)[0]
            # the boundary c = 0 goes with the non-negative case: where both cases share a formula
            # the union is then everything, and where c >= 0 diverges (a zero rate on an infinite
            # range) c = 0 diverges too
            region.append(coeffs[T] < 0 if s < 0 else coeffs[T] >= 0)
        got = attempt(symbols, precheck=True)
        if got is None:
            raise DerivationError("; ".join(notes) or "sympy left the integral unevaluated in a sign case")
        if got == "divergent":
            notes.append(f"divergent where {sp.And(*region)}")
            continue
        cases.append((got[0], sp.And(got[1], *region)))
    merged: list[list] = []
    for value, cond in cases:
        for entry in merged:
            if sp.simplify(entry[0] - value) == 0:
                entry[1] = sp.Or(entry[1], cond)
                break
        else:
            merged.append([value, cond])
    return TemplateResult(tuple(_with_endpoints((v, c), endpoint_cond) for v, c in merged), tuple(notes))


def _endpoint_conditions(coeffs: dict, x: sp.Symbol, lo, hi) -> sp.Basic:
    """Integrability at finite ends where a factor g(x)**c of the integrand vanishes.

    Near such an end e, with every other factor finite and non-zero there, the integrand behaves like
    |x - e|**(m*c) (m the order of the zero of g), and the integral converges iff m*c > -1. sympy does
    not always return this condition (e.g. for x**s (1-x)**r on (0, 1)), so it is derived here.
    """
    conds = []
    for e in (lo, hi):
        if e.is_infinite:
            continue
        for T, c in coeffs.items():
            if not isinstance(T, sp.log):
                continue
            g = T.args[0]
            try:
                if sp.simplify(g.subs(x, e)) != 0:
                    continue
            except Exception:  # noqa: BLE001
                continue
            others_regular = True
            for T2 in coeffs:
                if T2 is T:
                    continue
                v = sp.simplify(T2.subs(x, e)) if not isinstance(T2, sp.log) else sp.simplify(T2.args[0].subs(x, e))
                if v.has(sp.oo, -sp.oo, sp.zoo, sp.nan) or (isinstance(T2, sp.log) and v == 0):
                    others_regular = False
            if not others_regular:
                continue
            m = 1
            if g.is_polynomial(x):
                m = sp.roots(sp.Poly(g, x)).get(e, 1)
            conds.append(m * c > -1)
    return decide_relationals(sp.And(*conds)) if conds else sp.true


def _with_endpoints(case, endpoint_cond):
    value, cond = case
    return value, simplify_condition(sp.And(cond, endpoint_cond))


def _merge_relationals(cond: sp.Basic) -> sp.Basic:
    """In And/Or, keep the strongest/weakest of relationals E > c, E >= c, E < c, E <= c with the same E."""
    if not isinstance(cond, (sp.And, sp.Or)):
        return cond
    args = [_merge_relationals(a) for a in cond.args]
    is_or = isinstance(cond, sp.Or)
    lower: dict = {}  # E -> (c, strict) for E > c / E >= c
    upper: dict = {}
    rest = []
    for a in args:
        if isinstance(a, (sp.StrictGreaterThan, sp.GreaterThan, sp.StrictLessThan, sp.LessThan)):
            E, c = a.lhs - a.rhs, sp.Integer(0)
            const, E = E.as_independent(*E.free_symbols, as_Add=True) if E.free_symbols else (E, sp.Integer(0))
            c = -const
            strict = isinstance(a, (sp.StrictGreaterThan, sp.StrictLessThan))
            bucket = lower if isinstance(a, (sp.StrictGreaterThan, sp.GreaterThan)) else upper
            if E in bucket and c.is_number and bucket[E][0].is_number:
                old_c, old_strict = bucket[E]
                looser_lower = c < old_c or (c == old_c and not strict)
                if bucket is upper:
                    looser_lower = c > old_c or (c == old_c and not strict)
                if looser_lower == is_or:
                    bucket[E] = (c, strict)
                continue
            if E in bucket:
                rest.append(a)
                continue
            bucket[E] = (c, strict)
        else:
            rest.append(a)
    for E, (c, strict) in lower.items():
        rest.append(E > c if strict else E >= c)
    for E, (c, strict) in upper.items():
        rest.append(E < c if strict else E <= c)
    return cond.func(*rest)


def decide_relationals(cond: sp.Basic) -> sp.Basic:
    """Replace the inequalities whose truth the sign oracle decides from the symbols' assumptions
    (exp(-1/b) < 1 for b > 0: :func:`.sign.decide_relation`)."""
    if cond in (sp.true, sp.false, True, False) or not isinstance(cond, sp.Basic):
        return cond
    replacements = {}
    for rel in cond.atoms(sp.core.relational.Relational):
        if isinstance(rel, (sp.Eq, sp.Ne)):
            continue
        truth, _ = decide_relation(rel)
        if truth is not None:
            replacements[rel] = sp.true if truth else sp.false
    return cond.xreplace(replacements) if replacements else cond


def simplify_condition(cond: sp.Basic) -> sp.Basic:
    """Boolean simplification of a finiteness condition (relationals as atoms, then merged bounds)."""
    cond = decide_relationals(cond)
    if cond in (sp.true, sp.false, True, False):
        return sp.sympify(cond)
    try:
        cond = sp.simplify_logic(cond, force=False)
    except Exception:  # noqa: BLE001 - too many atoms: keep it as it is
        pass
    return _merge_relationals(cond)
