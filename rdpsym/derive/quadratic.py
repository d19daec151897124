"""The Gaussian (quadratic) template: Rényi divergences of densities on R^d whose logs are quadratic.

When log P = -1/2 x^T A_P x + b_P^T x + c_P and log Q = -1/2 x^T A_Q x + b_Q^T x + c_Q (multivariate
Gaussians with symbolic means and covariances, written out in x1, ..., xd as users write them), the
log-integrand of the Rényi divergence (Mironov 2017, Def. 3) is again quadratic:

    alpha log P + (1 - alpha) log Q = -1/2 x^T A x + b^T x + c,
    A = alpha A_P + (1 - alpha) A_Q,  b = alpha b_P + (1 - alpha) b_Q,  c = alpha c_P + (1 - alpha) c_Q,

and the Gaussian integral gives, exactly when A is positive definite,

    ∫ exp(-1/2 x^T A x + b^T x + c) dx = (2 pi)^(d/2) det(A)^(-1/2) exp(b^T A^-1 b / 2 + c)

(by completing the square: x^T A x - 2 b^T x = (x - A^-1 b)^T A (x - A^-1 b) - b^T A^-1 b, and the
normal density with covariance A^-1 integrating to 1). Otherwise the integral is +oo. Positive definiteness is decided by Sylvester's
criterion (Horn & Johnson 2013, Matrix Analysis, Thm. 7.2.5: all leading principal minors > 0); for
alpha in (0, 1) it always holds, A being a convex combination of the positive definite A_P and A_Q
(P and Q are integrable). For two Gaussians N(mu_1, S_1), N(mu_2, S_2) this is the condition
alpha S_2 + (1 - alpha) S_1 > 0 in the form of Gil, Alajaji & Linder 2013 (Information Sciences 249),
which only the tests use: here everything is read off the densities.

With log Z_P = d/2 log 2pi - 1/2 log det A_P + b_P^T A_P^-1 b_P / 2 + c_P (zero for a density),

    (alpha - 1) D_alpha = log Z - alpha log Z_P - (1 - alpha) log Z_Q
        = 1/2 [b^T A^-1 b - alpha b_P^T A_P^-1 b_P - (1-alpha) b_Q^T A_Q^-1 b_Q]
          - 1/2 [log det A - alpha log det A_P - (1-alpha) log det A_Q],

in which the constants c and (2 pi)^(d/2) cancel. The KL is E_P[log P/Q] with the Gaussian moments of P
(mean A_P^-1 b_P, covariance A_P^-1: E_P[x^T M x] = tr(M A_P^-1) + mu^T M mu), and D_oo is the supremum
of the quadratic log P/Q = -1/2 x^T M x + beta^T x + gamma (M = A_P - A_Q): 1/2 beta^T M^-1 beta + gamma
when M is positive definite, +oo when M is not positive semidefinite (a principal minor is negative, or
M = 0 with beta != 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import mpmath
import sympy as sp

from ..symbols import alpha as ALPHA
from .checks import DensityError
from .crosscheck import numeric_equal, sample_values
from .sign import sign as decided_sign
from .pieces import DerivationError
from .template import log_expand
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["QuadraticLog", "quadratic_log", "gaussian_divergence", "GaussianParts"]


@dataclass(frozen=True)
class QuadraticLog:
    """log f = -1/2 x^T A x + b^T x + c, with A symmetric and A, b, c free of the variables."""

    A: sp.Matrix
    b: sp.Matrix
    c: sp.Expr


def quadratic_log(dens: sp.Expr, variables) -> QuadraticLog | None:
    """``log dens`` as a polynomial of degree <= 2 in ``variables`` (read with ``Poly``), or None when it
    is not one (an Abs, a Piecewise, a cubic term, a coefficient that depends on a variable)."""
    if dens.has(sp.Piecewise, sp.Heaviside, sp.Abs, sp.sign, sp.Max, sp.Min):
        return None
    logged = log_expand(dens)
    if logged.has(sp.log) and any(a.has(*variables) for a in logged.atoms(sp.log)):
        return None
    try:
        poly = sp.Poly(logged, *variables)
    except (sp.PolynomialError, sp.GeneratorsNeeded, Exception):  # noqa: BLE001
        return None
    if poly.total_degree() > 2 or any(c.has(*variables) for c in poly.coeffs()):
        return None
    d = len(variables)
    A, b = sp.zeros(d, d), sp.zeros(d, 1)
    for monom, coeff in poly.terms():
        degree = sum(monom)
        if degree == 2:
            idx = [i for i, k in enumerate(monom) for _ in range(k)]
            i, j = idx
            if i == j:
                A[i, i] = -2 * coeff
            else:
                A[i, j] = A[j, i] = -coeff
        elif degree == 1:
            b[monom.index(1), 0] = coeff
    A = A.applyfunc(sp.cancel)
    c = poly.coeff_monomial(1)
    return QuadraticLog(A, b.applyfunc(sp.cancel), c)


def _inverse(A: sp.Matrix) -> sp.Matrix:
    """A^-1 as adjugate / det, each entry cancelled (exact for the symbolic 2x2, 3x3 matrices here)."""
    det = sp.factor(sp.cancel(A.det()))
    return (A.adjugate() / det).applyfunc(lambda e: sp.factor(sp.cancel(e)))


def _form(b: sp.Matrix, Ainv: sp.Matrix) -> sp.Expr:
    return (b.T * Ainv * b)[0, 0]


def leading_minors(A: sp.Matrix) -> list[sp.Expr]:
    return [sp.factor(sp.cancel(A[:k, :k].det())) for k in range(1, A.rows + 1)]


def principal_minors(A: sp.Matrix) -> list[sp.Expr]:
    n = A.rows
    return [sp.factor(sp.cancel(A.extract(list(S), list(S)).det())) for k in range(1, n + 1)
            for S in combinations(range(n), k)]


def positivity_tests(minors, params) -> list[sp.Basic]:
    """The conditions ``minor > 0`` for each minor, each with the factors of known sign (from the
    assumptions or the parameters' domains, :func:`rdpsym.derive.sign.sign`) divided out, and
    even powers dropped whose base is a factor of an earlier test (that test makes it non-zero)."""
    out, seen = [], set()
    for minor in minors:
        num, den = sp.fraction(sp.factor(minor))
        sign, keep = 1, []
        for f in sp.Mul.make_args(num) + sp.Mul.make_args(den):
            base, exp = f.as_base_exp()
            if exp.is_even and (base in seen or -base in seen or base.is_nonzero):
                continue
            s = decided_sign(f, params)
            if s is None and exp.is_integer and exp.is_odd:
                s = decided_sign(base, params)
                if s is not None:
                    seen.add(base)
                    sign *= s
                    continue
            if s is None:
                keep.append(f)
                seen.add(base)
            else:
                sign *= s
        rel = sp.Mul(*keep) > 0 if sign > 0 else sp.Mul(*keep) < 0
        if rel not in out:
            out.append(rel)
    return out


def _valid_points(symbols, params, forms: list[QuadraticLog], n: int = 3):
    """Sample points at which P and Q are Gaussians (A_P, A_Q positive definite): a point drawn from the
    assumptions alone may put a correlation outside (-1, 1)."""
    out = []
    for seed in range(6):
        for point in sample_values(symbols, params, 6, seed=seed):
            ok = True
            for f in forms:
                for m in leading_minors(f.A):
                    v = m.subs(point)
                    if not (v.is_number and v.is_positive):
                        ok = False
            if ok and point not in out:
                out.append(point)
            if len(out) >= n:
                return out
    return out


@dataclass
class GaussianParts:
    """What the quadratic template found: the general order, its conditions, the KL and D_oo, the steps."""

    expr: sp.Expr
    cond: sp.Basic
    kl: sp.Expr
    dinf: sp.Expr
    notes: list
    points: list


def _log_mass(f: QuadraticLog, d: int) -> sp.Expr:
    """log ∫ exp(log f) over R^d for positive definite A (the Gaussian integral)."""
    return (sp.Rational(d, 2) * sp.log(2 * sp.pi) - sp.log(sp.factor(sp.cancel(f.A.det()))) / 2
            + _form(f.b, _inverse(f.A)) / 2 + f.c)


def _mass_squared_is_one(f: QuadraticLog, d: int) -> bool:
    """Z^2 = (2 pi)^d exp(b^T A^-1 b + 2c) / det A == 1, decided by cancellation: the square has no
    logarithms left (exp of the log terms of 2c are powers), so ``cancel`` decides it."""
    E = sp.expand(_form(f.b, _inverse(f.A)) + 2 * f.c)
    logs = [t for t in sp.Add.make_args(E) if t.has(sp.log)]
    if sp.cancel(sp.Add(*[t for t in sp.Add.make_args(E) if not t.has(sp.log)])) != 0:
        return False
    square = (2 * sp.pi) ** d * sp.exp(sp.Add(*logs)) / sp.cancel(f.A.det())
    return sp.cancel(sp.powsimp(sp.powdenest(square, force=True))) == 1


def _mass_is_one(name, f, d, points, check, seconds, notes) -> bool:
    """Whether ∫ exp(log f) = 1: symbolically (:func:`_mass_squared_is_one`) and at 30 digits at the
    points. With ``check``, a density that is not integrable or whose mass is not 1 at a point raises
    :class:`DensityError`; a mass 1 only numerically is reported, and the formulas then keep log Z."""
    for point in points if check else ():
        for m in leading_minors(f.A):
            if not m.subs(point).is_positive:
                raise DensityError(f"{name}: exp of a quadratic whose form is not negative definite is not "
                                   f"integrable over R^{d} (minor {sp.sstr(m)} at {point})")
    log_mass = _log_mass(f, d)
    numeric = numeric_equal(log_mass, sp.Integer(0), points) is True if points else None
    if check and numeric is False:
        with mpmath.workdps(30):
            value = sp.N(sp.exp(log_mass.subs(points[0])), 20)
        raise DensityError(f"{name}: integrates to {value} over R^{d} at {points[0]}, not 1")
    try:
        symbolic = run_with_time_limit(_mass_squared_is_one, f, d, seconds=seconds)
    except (StepTimeout, Exception):  # noqa: BLE001
        symbolic = False
    if symbolic and numeric is not False:
        notes.append(("density", f"{name}: its Gaussian integral over R^{d} is 1 (symbolically"
                                 f"{', and at 30 digits at the test points' if numeric else ''})"))
        return True
    shown = "1 at 30 digits at the test points, not symbolically" if numeric else "not shown to be 1"
    notes.append(("density", f"{name}: its Gaussian integral over R^{d} is {shown}: log Z_{name} is kept in the formulas"))
    return False


def tidy(expr: sp.Expr) -> sp.Expr:
    """``expr`` with its log-free terms over one factored denominator and its log terms kept apart
    (cancel/factor only: exact, and cheap where simplify() takes seconds)."""
    terms = sp.Add.make_args(sp.expand(expr))
    logs = sp.Add(*[t for t in terms if t.has(sp.log)])
    rest = sp.factor(sp.cancel(sp.together(sp.Add(*[t for t in terms if not t.has(sp.log)]))))
    return rest + sp.factor_terms(logs)


def _zero(e: sp.Expr) -> sp.Basic:
    """e = 0, read on its numerator (its denominator is a product of entries' denominators, non-zero
    where P and Q are densities)."""
    return sp.Eq(sp.fraction(sp.factor(sp.cancel(e)))[0], 0)


def _entries(M: sp.Matrix) -> sp.Matrix:
    return M.applyfunc(lambda e: sp.factor(sp.cancel(e)))


def _general(fp, fq, d, normalised, points, params, seconds, notes):
    a = ALPHA
    A = _entries(a * fp.A + (1 - a) * fq.A)
    b = (a * fp.b + (1 - a) * fq.b).applyfunc(sp.expand)
    quad = (_form(b, _inverse(A)) - a * _form(fp.b, _inverse(fp.A)) - (1 - a) * _form(fq.b, _inverse(fq.A))) / 2
    quad = sp.factor(sp.cancel(sp.together(quad / (a - 1))))
    # log det A - alpha log det A_P - (1-alpha) log det A_Q through ratios of the positive determinants
    # (the logs of two positive quantities combine), so no log of a negative factor appears
    det_p = sp.cancel(fp.A.det())
    ratio_a, ratio_q = sp.factor(sp.cancel(A.det() / det_p)), sp.factor(sp.cancel(fq.A.det() / det_p))
    logdet = sp.log(ratio_a) - (1 - a) * sp.log(ratio_q)
    rest = sp.Integer(0) if sp.expand(logdet) == 0 else -logdet / (2 * (a - 1))
    if not normalised:
        # the masses of P and Q not shown to be 1: their logs stay in the formula (exact either way)
        rest += (_log_mass(fp, d) * a + _log_mass(fq, d) * (1 - a)) / (1 - a)
    expr = quad + rest
    notes.append(("Gaussian integral", f"alpha log P + (1-alpha) log Q = -1/2 x^T A x + b^T x + c with "
                                       f"A = {sp.sstr(A.tolist())}, b = {sp.sstr(b.T.tolist()[0])}; "
                                       f"∫ = (2 pi)^(d/2) det(A)^(-1/2) exp(b^T A^-1 b / 2 + c) for A > 0"))
    # no general simplifier here: quad is already factored and the log part is the ratios' (the shared
    # covariance gives alpha/2 Delta^T Sigma^-1 Delta directly); simplify() costs seconds per call
    minors = leading_minors(A)
    # a minor free of alpha equals its value at alpha = 1, a minor of A_P > 0 (P is integrable)
    cond = sp.And(*positivity_tests([m for m in minors if m.has(a)], params))
    if cond is not sp.true:
        # for 0 < alpha < 1, A is a convex combination of positive definite matrices
        cond = sp.Or(a < 1, cond)
    notes.append(("finiteness (Sylvester)", f"leading principal minors of A: {sp.sstr(minors)}; finite iff all > 0: "
                                            f"{sp.sstr(cond)} (automatic for 0 < alpha < 1)"))
    return expr, cond


def _gamma(fp, fq, d, normalised):
    """gamma = c_P - c_Q by the masses' identity c = log Z - d/2 log 2pi + 1/2 log det A - b^T A^-1 b / 2."""
    gamma = (sp.log(sp.factor(sp.cancel(fp.A.det() / fq.A.det())))
             - _form(fp.b, _inverse(fp.A)) + _form(fq.b, _inverse(fq.A))) / 2
    if not normalised:
        gamma += _log_mass(fp, d) - _log_mass(fq, d)
    return gamma


def _kl(fp, fq, d, normalised, points, seconds):
    cov = _inverse(fp.A)
    mean = (cov * fp.b).applyfunc(sp.cancel)
    M, beta = _entries(fp.A - fq.A), (fp.b - fq.b).applyfunc(sp.expand)
    value = -((M * cov).trace() + _form(mean, M)) / 2 + (beta.T * mean)[0, 0] + _gamma(fp, fq, d, normalised)
    return tidy(value)


def _dinf(fp, fq, d, normalised, points, params, seconds, notes):
    M, beta = _entries(fp.A - fq.A), (fp.b - fq.b).applyfunc(lambda e: sp.factor(sp.expand(e)))
    gamma = _gamma(fp, fq, d, normalised)
    if all(e == 0 for e in M):
        zero = sp.And(*[_zero(e) for e in beta])
        notes.append(("alpha = oo", "log P/Q is affine (A_P = A_Q): bounded above iff its slope is 0"))
        value = tidy(gamma)
        if zero is sp.true:
            return value
        return sp.oo if zero is sp.false else sp.Piecewise((value, zero), (sp.oo, True))
    value = tidy(_form(beta, _inverse(M)) / 2 + gamma)
    pd = sp.And(*positivity_tests(leading_minors(M), params))
    not_psd = sp.Or(*[positivity_tests([-m], params)[0] for m in principal_minors(M)])
    notes.append(("alpha = oo", f"sup of -1/2 x^T M x + beta^T x + gamma, M = {sp.sstr(M.tolist())}: "
                                f"1/2 beta^T M^-1 beta + gamma where M > 0, +oo where a principal minor < 0, "
                                f"gamma or +oo where M = 0 (slope 0 or not); a singular M != 0 that is positive "
                                f"semidefinite is not covered: evaluating there raises"))
    if pd is sp.true:
        return value
    if not_psd is sp.true:
        return sp.oo
    # where M vanishes (equal forms at these parameters), log P/Q is affine: bounded iff its slope is 0
    vanishes = sp.And(*[_zero(e) for e in set(M)])
    flat = sp.And(vanishes, *[_zero(e) for e in beta])
    return sp.Piecewise((value, pd), (sp.oo, not_psd), (tidy(gamma), flat), (sp.oo, vanishes))


def gaussian_divergence(P, Q, variables, symbols, params, seconds, check_density) -> GaussianParts | None:
    """The quadratic template on R^d (module docstring), or None when log P or log Q is not quadratic.

    Raises :class:`DensityError` (``check_density``) when P or Q is not a density, and
    :class:`DerivationError` when the template applies but a step fails."""
    fp, fq = quadratic_log(P, variables), quadratic_log(Q, variables)
    if fp is None or fq is None:
        return None
    d = len(variables)
    notes = [("quadratic template", f"log P and log Q are polynomials of degree <= 2 in {tuple(map(str, variables))}: "
                                    f"A_P = {sp.sstr(fp.A.tolist())}, A_Q = {sp.sstr(fq.A.tolist())}")]
    points = _valid_points(symbols, params, [fp, fq])
    if not points and symbols:
        raise DerivationError("no parameter point found at which P and Q are Gaussians (positive definite forms)")
    normalised = all([_mass_is_one(n, f, d, points, check_density, seconds, notes) for n, f in (("P", fp), ("Q", fq))])
    if normalised:
        notes.append(("normalisation", "log Z_P = log Z_Q = 0: the constants c and (2 pi)^(d/2) cancel"))
    expr, cond = _general(fp, fq, d, normalised, points, params, seconds, notes)
    kl = _kl(fp, fq, d, normalised, points, seconds)
    notes.append(("alpha = 1", f"E_P[log P/Q] with the Gaussian moments of P: KL = {sp.sstr(kl)}"))
    dinf = _dinf(fp, fq, d, normalised, points, params, seconds, notes)
    return GaussianParts(expr, cond, kl, dinf, notes, points)
