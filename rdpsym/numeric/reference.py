r"""A second numeric method for D_alpha, independent of the main numeric path: it checks numeric curves.

A result without a closed form takes its values from :func:`rdpsym.numeric.numeric_divergence` (log-space
Gauss-Legendre or Arb quadrature between breakpoints, peak search, tail truncation, term-by-term sums with
geometric tail bounds). Checking such a value against the same method would check nothing, so
verification of numeric curves compares it with this one, which shares no integration or summation code
with it:

* continuous supports: ``mpmath.quad`` (tanh-sinh, Takahasi and Mori 1974) of P^alpha Q^(1-alpha)
  written directly in mpmath numbers (unbounded exponents: no underflow at alpha = 1000), over the
  support split at its ends, at the kinks of P and Q (:func:`rdpsym.numeric.kinks.kinks`: a kink is a
  fact about the densities, not a method) and at the largest of the integrand (the best point of a
  fixed grid refined by golden-section search), where a narrow peak sits; mpmath maps infinite ends to
  finite ones itself;
* discrete supports: direct sums over finite sets, ``mpmath.nsum`` over each infinite progression from
  its first point (with nsum's Richardson/Shanks acceleration where it helps);
* near alpha = 1 the integrand is P expm1((alpha - 1) log(P/Q)), so log I ~ (alpha - 1) KL keeps its
  digits; at alpha = 1 it is P log(P/Q) (the KL, Mironov 2017, arXiv:1702.07476 v3, Def. 3 and Prop. 3).

Each value is computed twice, at ``dps + 10`` and ``dps + 25`` digits with quadrature degrees that
differ; the error estimate is their difference plus mpmath's own estimates, propagated through
log(I)/(alpha - 1). ``converged`` follows the main path's rule (60% of ``dps`` digits). alpha = oo is not
computed here (the engine derives D_inf exactly when it can; its check is against the main path).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from .._optimize import golden_max
from ..specify.support import Support
from .backends.mpmath import MODULES
from .inputs import substitute_values
from .kinks import kinks as find_kinks
from .normalisers import NormaliserError, evaluate_normaliser, exact_value, normaliser_atoms
from .value import NumericValue

__all__ = ["reference_divergence"]

#: |alpha - 1| below this uses the expm1 form
_NEAR_ONE = mpmath.mpf(1) / 8


def _lambdified(P, Q, x):
    # the mpmath backend's modules: besseli with its reflection for negative integer orders
    return (sp.lambdify(x, P, modules=MODULES, docstring_limit=0),
            sp.lambdify(x, Q, modules=MODULES, docstring_limit=0))


def _without_normalisers(P, Q, x, wp):
    """P and Q with each normaliser (a Sum or Integral not in x, parameters substituted) replaced by its
    value (:func:`rdpsym.numeric.normalisers.evaluate_normaliser`), and the largest relative error of
    those values: a normaliser is an input constant of the densities, not part of this method."""
    atoms = set(normaliser_atoms(P, x)) | set(normaliser_atoms(Q, x))
    rel, subs = mpmath.mpf(0), {}
    for atom in atoms:
        value, error, _ = evaluate_normaliser(atom, wp)
        subs[atom] = exact_value(value)
        rel = max(rel, error / abs(value))
    return (P.xreplace(subs), Q.xreplace(subs), rel) if subs else (P, Q, rel)


def _integrand(p, q, a, kind):
    """The function of x to integrate (or sum): P^a Q^(1-a), P expm1((a-1) log P/Q) or P log P/Q."""
    def f(t):
        pv, qv = mpmath.mpf(mpmath.re(p(t))), mpmath.mpf(mpmath.re(q(t)))
        if pv < 0 or qv < 0:
            raise ArithmeticError(f"a density is negative at x = {mpmath.nstr(t, 8)}")
        if pv == 0:
            return mpmath.mpf(0)
        if qv == 0:
            if kind == "power" and a < 1:
                return mpmath.mpf(0)
            raise OverflowError("P > 0 where Q = 0")
        if kind == "power":
            return mpmath.exp(a * mpmath.log(pv) + (1 - a) * mpmath.log(qv))
        if kind == "expm1":
            return pv * mpmath.expm1((a - 1) * (mpmath.log(pv) - mpmath.log(qv)))
        return pv * (mpmath.log(pv) - mpmath.log(qv))
    return f


def _grid(lo, hi):
    """Fixed probe points of [lo, hi] (ends may be infinite): where the integrand's largest value is looked for."""
    scales = [mpmath.mpf(10) ** k for k in range(-4, 9)]
    if lo == -mpmath.inf and hi == mpmath.inf:
        pts = [mpmath.mpf(0)] + [s * m for s in scales for m in (-1, 1, -3, 3)]
    elif hi == mpmath.inf:
        pts = [lo + s * m for s in scales for m in (1, 3)]
    elif lo == -mpmath.inf:
        pts = [hi - s * m for s in scales for m in (1, 3)]
    else:
        pts = [lo + (hi - lo) * mpmath.mpf(i) / 64 for i in range(1, 64)]
    return [t for t in pts if lo < t < hi]


def _peak(f, lo, hi):
    """Where |f| is largest on [lo, hi]: the best point of the fixed grid, refined by golden-section
    search between its neighbours (a peak that moved far out, e.g. to x = -38 for the generalized
    Gaussian at alpha = 20, must be a cut, not stepped over); None when f has no value on the grid."""
    grid = _grid(lo, hi)
    values = []
    for t in grid:
        try:
            values.append(abs(f(t)))
        except (ArithmeticError, ValueError, ZeroDivisionError):
            values.append(mpmath.mpf(-1))
    if not grid or max(values) <= 0:
        return None
    ordered = sorted(range(len(grid)), key=lambda i: grid[i])
    pts, vals = [grid[i] for i in ordered], [values[i] for i in ordered]
    i = max(range(len(pts)), key=lambda j: vals[j])
    a, b = (pts[i - 1] if i > 0 else pts[i]), (pts[i + 1] if i + 1 < len(pts) else pts[i])
    if a == b:
        return pts[i]

    def logf(t):
        try:
            v = abs(f(t))
        except (ArithmeticError, ValueError, ZeroDivisionError):
            return -mpmath.inf
        return mpmath.log(v) if v > 0 else -mpmath.inf

    t, _ = golden_max(logf, a, b, 60)
    return t


def _continuous(f, spans, kinks, degree):
    total, err = mpmath.mpf(0), mpmath.mpf(0)
    for lo, hi in spans:
        cuts = sorted({lo, hi, *[k for k in kinks if lo < k < hi]})
        peak = _peak(f, lo, hi)
        if peak is not None and peak not in cuts:
            cuts = sorted(cuts + [peak])
        v, e = mpmath.quad(f, cuts, error=True, maxdegree=degree)
        total += v
        err += e
    return total, err


def _discrete(f, support: Support):
    """The sum of ``f`` over the support: finite points directly, each progression start, start + step,
    ... by ``mpmath.nsum``; its error is left to the comparison of two precisions."""
    total = mpmath.mpf(0)
    for t in support.finite_points:
        total += f(int(t) if t.is_Integer else mpmath.mpf(t.p) / t.q if t.is_Rational else mpmath.mpf(sp.Float(t, mpmath.mp.dps + 5)))
    for prog in support.progressions:
        start, step = int(prog.start), int(prog.step)
        total += mpmath.nsum(lambda k: f(start + step * int(k)), [0, mpmath.inf])
    return total, mpmath.mpf(0)


def reference_divergence(P, Q, x, support, alpha, values, dps: int = 30) -> NumericValue:
    """D_alpha(P||Q) (alpha > 0, alpha = 1 the KL; not alpha = oo) by the method of the module docstring,
    a :class:`~rdpsym.numeric.NumericValue` with its error estimate. Arguments as for
    :func:`rdpsym.numeric.numeric_divergence`."""
    if isinstance(x, (tuple, list)) and len(x) > 1:
        # not implemented for several variables: no evidence, so a numeric curve is inconclusive there
        return NumericValue.failed(dps, method="reference: failed", detail="the reference method integrates over one variable only")
    if isinstance(x, (tuple, list)):
        x, support = x[0], support.args[0] if isinstance(support, sp.ProductSet) else support
    a = sp.S(alpha) if not isinstance(alpha, mpmath.mpf) else sp.Rational(str(alpha))
    if a == sp.oo or not a.is_number or not a.is_positive:
        raise ValueError(f"alpha must be a finite number > 0 for the reference method; got {alpha!r}")
    P, Q, sup = substitute_values(P, Q, x, support, values)
    P = P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P
    Q = Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q
    supp = Support.of(sup, numbers=True)
    outs = []
    try:
        P, Q, norm_rel = _without_normalisers(P, Q, x, dps + 25)
        p, q = _lambdified(P, Q, x)
        for wp, degree in ((dps + 10, 8), (dps + 25, 10)):
            with mpmath.workdps(wp):
                am = mpmath.mpf(a.p) / a.q if a.is_Rational else mpmath.mpf(sp.Float(a, wp + 5))
                kind = "kl" if am == 1 else "expm1" if abs(am - 1) < _NEAR_ONE else "power"
                f = _integrand(p, q, am, kind)
                if supp.is_continuous:
                    spans = [(mpmath.mpf(sp.Float(lo, wp + 5)) if lo.is_finite else -mpmath.inf,
                              mpmath.mpf(sp.Float(hi, wp + 5)) if hi.is_finite else mpmath.inf)
                             for lo, hi in supp.spans]
                    kinks, _ = find_kinks(P, Q, x, wp, [s for s in spans if s[1] > s[0]])
                    value, err = _continuous(f, spans, kinks, degree)
                else:
                    value, err = _discrete(f, supp)
                if kind == "kl":
                    D, e = value, err
                elif kind == "expm1":
                    D, e = mpmath.log1p(value) / (am - 1), err / abs((1 + value) * (am - 1))
                else:
                    if value <= 0:
                        raise ArithmeticError(f"the integral is {mpmath.nstr(value, 5)}")
                    D, e = mpmath.log(value) / (am - 1), err / abs(value * (am - 1))
                # normalisers off by a relative r scale P and Q by (1 + r): log I moves by at most
                # (|a| + |1 - a|) r, the KL by (|KL| + 2) r (the mass of P and both logarithms)
                e += ((abs(D) + 2) if kind == "kl" else (abs(am) + abs(1 - am)) / abs(am - 1)) * norm_rel
                outs.append((D, e))
    except OverflowError as exc:
        if a >= 1:
            return NumericValue.infinite(dps, str(exc), method="reference: tanh-sinh / nsum")
        return NumericValue.failed(dps, method="reference: failed", detail=str(exc))
    except (ArithmeticError, ValueError, ZeroDivisionError, TypeError, NormaliserError,
            mpmath.libmp.NoConvergence) as exc:
        return NumericValue.failed(dps, method="reference: failed", detail=f"{type(exc).__name__}: {exc}")
    with mpmath.workdps(dps + 25):
        (D1, e1), (D2, e2) = outs
        if not (mpmath.isfinite(D1) and mpmath.isfinite(D2)):
            return NumericValue.failed(dps, method="reference: failed", detail="a non-finite value")
        error = abs(D1 - D2) + e1 + e2
        tol = mpmath.mpf(10) ** (-0.6 * dps) * max(abs(D2), mpmath.mpf(10) ** (-0.4 * dps))
        converged = bool(error <= tol)
        detail = (f"mpmath {'quad (tanh-sinh)' if supp.is_continuous else 'nsum'} at {dps + 10} and {dps + 25} digits "
                  f"differ by {mpmath.nstr(abs(D1 - D2), 3)}")
        if not converged:
            detail += f"; NOT CONVERGED: error {mpmath.nstr(error, 3)} > tolerance {mpmath.nstr(tol, 3)}"
    with mpmath.workdps(dps):
        return NumericValue(+D2, +error, dps, "reference: " + ("tanh-sinh" if supp.is_continuous else "nsum"),
                            converged, detail)
