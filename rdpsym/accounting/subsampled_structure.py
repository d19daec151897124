r"""What a subsampled mechanism's base pair *is*, read from its densities with sympy (never its name).

The accountant's curve of ``subsample(base, q)`` (:mod:`rdpsym.accounting.subsampled_curve`) is exact
where the literature proves that the reverse direction D_alpha(P || (1-q) P + q Q) of the subsampled
pair is never the larger one, and a general upper bound elsewhere. Two structures are recognised:

* **Gaussian shift** (:func:`gaussian_noise_ratio`): every base pair is P = N(m_1, s^2), Q = N(m_0, s^2)
  with the same s — read as: log Q is a quadratic polynomial in x that is exactly the N(m_0, s^2) log
  density, and log P - log Q is affine in x with P normalised. For a family over shifts t the mean
  difference must be affine in t, and its supremum over the family's set is taken at the set's ends
  (|a t + b| is convex). The subsampled pair is then the sampled Gaussian mechanism of Mironov, Talwar &
  Zhang 2019 (arXiv:1908.10530), Sect. 3, at noise multiplier sigma_eff = s / sup|m_1 - m_0|: the RDP of a
  pair depends on the means only through |m_1 - m_0| / s (translate and scale x), and a smaller shift is
  a post-processing of the larger one (x -> (t/T) x + N(0, s^2 (1 - t^2/T^2)) maps N(0), N(T) to N(0),
  N(t) and the mixtures to the mixtures), so the supremum over the family is at the largest |shift|.
  MTZ 2019, Sect. 3 show the reverse direction is never larger for alpha >= 1.
* **Laplace shift** (:func:`is_laplace_shift`): every base pair is P = exp(-|x - m_1|/b)/(2b),
  Q = exp(-|x - m_0|/b)/(2b) with the same b. Zhu & Wang 2019 ("Poisson subsampled Rényi differential
  privacy", ICML, PMLR 97; the abstract and Sect. 3) prove the exact analytical formula (the binomial
  expansion) for the Poisson-subsampled Laplace mechanism, i.e. the reverse direction is not the larger.

Every check runs under a time limit (:data:`CHECK_SECONDS`); a check that times out or fails says "not
recognised", which only ever selects the general *upper bound* (fail closed).
"""

from __future__ import annotations

import sympy as sp

from .._timeout import StepTimeout, time_limit
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism

__all__ = ["gaussian_noise_ratio", "is_laplace_shift", "CHECK_SECONDS"]

#: time limit of one structure check (sympy simplifications of the user's densities)
CHECK_SECONDS = 20.0


def _zero(expr: sp.Expr) -> bool:
    """True only when sympy proves ``expr == 0`` (logs expanded, as for positive symbols)."""
    return sp.simplify(sp.expand_log(expr, force=True)) == 0


def _normal(f: sp.Expr, x: sp.Symbol):
    """``(mean, std)`` when ``f`` is exactly the N(mean, std^2) density in ``x``, else None."""
    lf = sp.expand(sp.expand_log(sp.log(f), force=True))
    try:
        poly = sp.Poly(lf, x)
    except sp.PolynomialError:
        return None
    if poly.degree() != 2 or any(x in c.free_symbols for c in poly.all_coeffs()):
        return None
    c2, c1 = poly.coeff_monomial(x**2), poly.coeff_monomial(x)
    var = sp.simplify(-1 / (2 * c2))
    if var.is_positive is not True:
        return None
    mean, std = sp.simplify(c1 * var), sp.sqrt(var)
    normal = sp.exp(-((x - mean) ** 2) / (2 * var)) / sp.sqrt(2 * sp.pi * var)
    return (mean, std) if _zero(lf - sp.log(normal)) else None


def _sup_abs_over(d: sp.Expr, pair) -> sp.Expr | None:
    """sup |d| over the family's shifts (d affine in the shift), |d| for a plain pair; None otherwise."""
    if not isinstance(pair, AdjacentFamily) or pair.shift not in d.free_symbols:
        return sp.Abs(d)
    t = pair.shift
    try:
        poly = sp.Poly(sp.expand(d), t)
    except sp.PolynomialError:
        return None
    if poly.degree() > 1 or any(t in c.free_symbols for c in poly.all_coeffs()):
        return None
    lo, hi = pair.over.inf, pair.over.sup
    if not (lo.is_finite and hi.is_finite):
        return None
    # |a t + b| is convex in t: its supremum over any set within [inf, sup] is at most (for a set with
    # its ends, exactly) the larger end value
    return sp.Max(sp.Abs(d.subs(t, lo)), sp.Abs(d.subs(t, hi)))


def _gaussian(base: Mechanism):
    if base.support != sp.S.Reals:
        return None
    ratios = []
    for pair in base.pairs:
        p, q = _normal(pair.P, base.variable), _normal(pair.Q, base.variable)
        if p is None or q is None or not _zero(p[1] - q[1]):
            return None
        shift = _sup_abs_over(p[0] - q[0], pair)
        if shift is None or _zero(shift):
            return None
        ratios.append(sp.simplify(q[1] / shift))
    return tuple(ratios)


def gaussian_noise_ratio(base: Mechanism) -> tuple[sp.Expr, ...] | None:
    """sigma_eff = s / sup|m_1 - m_0| of each base pair (an expression in the base's parameters) when
    every pair is a Gaussian shift (module docstring), else None. The subsampled RDP is that of the
    sampled Gaussian at the smallest of them (the RDP decreases as sigma_eff grows)."""
    try:
        with time_limit(CHECK_SECONDS):
            return _gaussian(base)
    except (StepTimeout, ArithmeticError, TypeError, ValueError, sp.PolynomialError):
        return None


def _laplace(f: sp.Expr, x: sp.Symbol):
    """``(location, scale)`` when ``f`` is exactly exp(-|x - m|/b)/(2b), else None."""
    found = [a for a in f.atoms(sp.Abs) if x in a.free_symbols]
    if len(found) != 1:
        return None
    inner = found[0].args[0]
    try:
        lin = sp.Poly(sp.expand(inner), x)
    except sp.PolynomialError:
        return None
    if lin.degree() != 1 or any(x in c.free_symbols for c in lin.all_coeffs()):
        return None
    slope = lin.coeff_monomial(x)
    if not _zero(slope**2 - 1):
        return None
    location = sp.simplify(-inner.subs(x, 0) / slope)
    a = sp.Dummy("a", positive=True)
    g = sp.expand(sp.expand_log(sp.log(f.subs(found[0], a)), force=True))
    if x in g.free_symbols:
        return None
    try:
        pa = sp.Poly(g, a)
    except sp.PolynomialError:
        return None
    if pa.degree() != 1 or any(a in c.free_symbols for c in pa.all_coeffs()):
        return None
    scale = sp.simplify(-1 / pa.coeff_monomial(a))
    if scale.is_positive is not True or not _zero(g - (-a / scale - sp.log(2 * scale))):
        return None
    return location, scale


def _is_laplace(base: Mechanism) -> bool:
    if base.support != sp.S.Reals:
        return False
    for pair in base.pairs:
        p, q = _laplace(pair.P, base.variable), _laplace(pair.Q, base.variable)
        if p is None or q is None or not _zero(p[1] - q[1]):
            return False
    return True


def is_laplace_shift(base: Mechanism) -> bool:
    """Whether every base pair is a Laplace shift with one scale (module docstring)."""
    try:
        with time_limit(CHECK_SECONDS):
            return _is_laplace(base)
    except (StepTimeout, ArithmeticError, TypeError, ValueError, sp.PolynomialError):
        return False
