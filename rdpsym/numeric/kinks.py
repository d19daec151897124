r"""Breakpoints of continuous integrands: the one kink finder of the numeric path.

A density is non-smooth where the argument of ``Abs``, ``sign`` or ``Heaviside``, a difference of
``Max``/``Min`` arguments, or a ``Piecewise`` relational boundary changes sign
(:func:`kink_arguments`, shared with the symbolic splitter :mod:`rdpsym.derive.pieces`). The numeric
path locates those zeros (:func:`kinks`): rational arguments exactly (``Poly.real_roots``), others by
sign changes on the logarithmic scan grid (:func:`scan_points`) refined by bisection. Quadrature then
splits at them (:func:`breakpoints`).
"""

from __future__ import annotations

import functools

import mpmath
import sympy as sp
from .._numbers import SYMBOLIC_ERRORS

__all__ = ["breakpoints", "kink_arguments", "kinks", "polynomial_kinks", "scan_points"]


def kink_arguments(expr: sp.Expr, x: sp.Symbol) -> list[sp.Expr]:
    """Expressions in x whose sign changes make ``expr`` non-smooth: arguments of ``Abs``, ``sign``,
    ``Heaviside``, differences of ``Max``/``Min`` arguments, ``lhs - rhs`` of the relations in
    ``Piecewise`` conditions; each once, in the order of a preorder traversal."""
    args = []
    for node in sp.preorder_traversal(expr):
        if not node.has(x):
            continue
        if isinstance(node, (sp.Abs, sp.sign, sp.Heaviside)):
            args.append(node.args[0])
        elif isinstance(node, (sp.Max, sp.Min)):
            a = [u for u in node.args]
            for i in range(len(a)):
                for j in range(i + 1, len(a)):
                    args.append(a[i] - a[j])
        elif isinstance(node, sp.Piecewise):
            for _, cond in node.args:
                for rel in sp.preorder_traversal(cond) if isinstance(cond, sp.Basic) else []:
                    if isinstance(rel, sp.core.relational.Relational) and rel.has(x):
                        args.append(rel.lhs - rel.rhs)
    return list(dict.fromkeys(a for a in args if a.has(x)))


@functools.lru_cache(maxsize=512)
def polynomial_kinks(arg: sp.Expr, x: sp.Symbol, wp: int, prec: int):
    """Exact real roots of the numerator of a rational kink argument as mpfs (``prec`` is the mpmath
    precision they are made at: part of the cache key), or (None, note) when the argument is not
    rational in x or sympy fails. Cached: the points of a sweep share their kinks (``|x - 1|``)."""
    num, den = sp.fraction(sp.together(arg))
    if num.is_polynomial(x) and den.is_polynomial(x):
        try:
            return tuple(mpmath.mpf(sp.Float(sp.N(r, wp + 5), wp + 5)) for r in sp.Poly(num, x).real_roots()), ""
        except SYMBOLIC_ERRORS as exc:  # sympy can fail on odd coefficients: fall through
            return None, f"real_roots failed on {arg}: {exc}"
    return None, ""


def kinks(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, wp: int, intervals) -> tuple[list, list[str]]:
    """Real zeros of the kink arguments (as mpf at the current precision) and notes.

    Polynomial or rational arguments: exact real roots of the numerator (``Poly.real_roots``),
    evaluated to ``wp + 5`` digits. Any other argument: sign changes on the logarithmic scan grid of
    the support, refined by bisection to full precision (zeros closer together than the grid, or of
    even multiplicity, can be missed; the two-rule error estimate then usually flags the result).
    """
    pts, notes = set(), []
    for arg in set(kink_arguments(P, x) + kink_arguments(Q, x)):
        roots, note = polynomial_kinks(arg, x, wp, mpmath.mp.prec)
        if note:
            notes.append(note)
        if roots is not None:
            pts.update(roots)
            continue
        try:
            f = sp.lambdify(x, arg, modules="mpmath", docstring_limit=0)
        except SYMBOLIC_ERRORS as exc:
            notes.append(f"kinks of {arg} not located ({exc})")
            continue
        found = 0
        for a, b in intervals:
            grid = scan_points(a, b, [])
            vals = []
            for t in grid:
                try:
                    v = f(t)
                    vals.append(mpmath.mpf(v) if not isinstance(v, mpmath.mpc) else None)
                except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                    vals.append(None)
            for i in range(len(grid) - 1):
                u, v = vals[i], vals[i + 1]
                if u is None or v is None:
                    continue
                if u == 0:
                    pts.add(grid[i])
                    found += 1
                elif u * v < 0:
                    lo, hi, flo = grid[i], grid[i + 1], u
                    for _ in range(int(mpmath.mp.prec) + 10):
                        mid = (lo + hi) / 2
                        fm = f(mid)
                        fm = mpmath.mpf(fm.real if isinstance(fm, mpmath.mpc) else fm)
                        if fm == 0:
                            lo = hi = mid
                            break
                        if (fm < 0) == (flo < 0):
                            lo, flo = mid, fm
                        else:
                            hi = mid
                    pts.add((lo + hi) / 2)
                    found += 1
        notes.append(f"kinks of {arg} located numerically ({found} found by sign changes on a scan)")
    return sorted(pts), notes



def scan_points(a, b, kinks):
    """Logarithmic scan of an interval (a, b) (ends may be infinite), kink-aware (a tuple)."""
    return _scan_points_cached(a, b, tuple(kinks), mpmath.mp.prec)


@functools.lru_cache(maxsize=256)
def _scan_points_cached(a, b, kinks, prec):
    pts = set(k for k in kinks if a < k < b)
    if mpmath.isinf(a) and mpmath.isinf(b):
        centers = sorted(pts) if pts else [mpmath.mpf(0)]
        c = centers[len(centers) // 2]
        for k in range(-12, 41):
            d = mpmath.mpf(10) ** (mpmath.mpf(k) / 2)
            pts.add(c + d)
            pts.add(c - d)
        pts.add(c)
    elif mpmath.isinf(b) or mpmath.isinf(a):
        c, sgn = (a, 1) if mpmath.isinf(b) else (b, -1)
        for k in range(-24, 41):
            pts.add(c + sgn * mpmath.mpf(10) ** (mpmath.mpf(k) / 2))
    else:
        L = b - a
        for k in range(1, 32):
            pts.add(a + L * k / 32)
        for k in range(2, 40):
            d = L * mpmath.mpf(10) ** (-mpmath.mpf(k) / 2)
            pts.add(a + d)
            pts.add(b - d)
    srt = sorted(pts)
    # midpoints between kinks, so every kink-delimited piece gets samples
    mids = [(srt[i] + srt[i + 1]) / 2 for i in range(len(srt) - 1)]
    return tuple(sorted(set(srt) | set(mids)))



def breakpoints(a, b, kinks, peak, w=None):
    """Support ends, kinks inside (a, b), the peak, and (given the peak width w) the points
    peak ± w 8^k, k = 0..3, so that a narrow peak (even one sitting on a kink or an end) is
    resolved by pieces on which the integrand varies on the piece's own scale. Where a finite
    breakpoint lies further than ``w 8^3`` from the peak (a Cauchy pair of scale 1e-50 with a kink
    1 away: 50 decades of an algebraic tail), the grading goes on, ``k`` up to that distance (at most
    ``8^200``), so every piece spans a factor 8 of distance from the peak: a geometric mesh, on which
    Gauss-Legendre converges for algebraic tails as for the peak."""
    pts = [a] + [k for k in kinks if a < k < b]
    if peak is not None and a <= peak <= b:
        tol = (w if w is not None else 0) * mpmath.mpf(10) ** -3
        if a < peak < b and all(abs(peak - k) > tol for k in pts + [b]):
            pts.append(peak)
        if w is not None and w > 0:
            finite = [t for t in pts + [b] if not mpmath.isinf(t)]
            reach = max([abs(t - peak) for t in finite] + [w])
            top = min(200, max(3, int(mpmath.ceil(mpmath.log(reach / w) / mpmath.log(8)))))
            # the graded points are at least 2 w apart from each other (> tol): each is checked only
            # against the ends, kinks and peak (not against the up to 400 others, at working precision)
            fixed = pts + [b]
            for k in range(top + 1):
                for t in (peak - w * 8**k, peak + w * 8**k):
                    if a < t < b and all(abs(t - u) > tol for u in fixed):
                        pts.append(t)
    pts.append(b)
    return sorted(set(pts), key=lambda t: t)

