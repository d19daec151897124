"""Checks on the input densities: non-negative, and integrating (summing) to 1.

The check is symbolic where sympy can do it within the step's time limit, and numeric otherwise,
at parameter values drawn from the typical ranges (or from the assumptions).

A normaliser written as a ``Sum`` or ``Integral`` free of ``x`` (the discrete Gaussian's
``exp(-k**2/(2 s**2)) / Sum(exp(-j**2/(2 s**2)), (j, -oo, oo))``, Canonne, Kamath and Steinke 2020,
Def. 1) is a number at each test point: it is evaluated there by the numeric path
(:func:`rdpsym.numeric.normalisers.evaluate_normaliser`, with a time limit) before any other
evaluation. The total mass of ``P = f(x) / N`` is decided structurally when ``N`` is the sum
(integral) of ``f`` itself over the support, or of ``f`` translated by an integer (over all of Z)
or by a real number (over all of R): sums over Z and integrals over R are translation invariant,
so the mass is ``N / N = 1`` wherever ``N`` is finite and non-zero, which its evaluation at the test
points confirms. Otherwise the mass is checked numerically with the normaliser's value, and what
cannot be computed is reported as not checked, never as checked.
"""

from __future__ import annotations

from dataclasses import replace

import mpmath
import sympy as sp

from ..numeric.backends.mpmath import MODULES
from ..numeric.normalisers import NormaliserError, evaluate_normaliser, exact_value, normaliser_atoms
from .crosscheck import is_zero, numeric_equal, sample_values
from .pieces import DerivationError
from .sign import decide
from .template import decompose, integrate_template, log_expand
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["DensityError", "check_densities"]

#: digits of the numeric mass check (its tolerance is 1e-8)
_DPS = 30


class DensityError(ValueError):
    """A density or pmf given to the engine is not a probability distribution."""


def _piece_mass(piece, dens, x, seconds):
    if piece.is_point:
        return dens
    if is_zero(dens):
        return sp.Integer(0)
    c0, coeffs = decompose(log_expand(dens), x)
    res = integrate_template(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds)
    if len(res.cases) != 1:
        raise DerivationError("normalisation not decided symbolically")
    return sp.exp(c0) * res.cases[0][0]


def _numbers(dens: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """``dens`` (numeric parameters) with its normalisers replaced by their values (exact binary
    Rationals at 50 digits). Raises NormaliserError."""
    atoms = normaliser_atoms(dens, x)
    if not atoms:
        return dens
    rep = {}
    for atom in atoms:
        value, _, _ = evaluate_normaliser(atom, _DPS)
        rep[atom] = exact_value(value)
    return dens.xreplace(rep)


def _translate_of(Q: sp.Expr, P: sp.Expr, x: sp.Symbol, support: sp.Set) -> sp.Expr | None:
    """``c`` with ``Q(x) = P(x - c)`` on the real line (``c`` a symbol of Q that P does not use, as the
    shift of a location family is), or None. Lebesgue measure on R is translation invariant, so Q then
    has P's total mass, and Q >= 0 wherever P >= 0: Q's checks are P's."""
    if support != sp.S.Reals:
        return None
    for c in sorted(Q.free_symbols - P.free_symbols - {x}, key=lambda s: s.name):
        if Q.subs(x, x + c) == P or sp.expand(Q.subs(x, x + c) - P) == 0:
            return c
    return None


def check_densities(P, Q, x, support, pieces, symbols, params, seconds, log) -> None:
    points = sample_values(symbols, params, 2)
    for name, attr, whole in (("P", "P", P), ("Q", "Q", Q)):
        shift = _translate_of(Q, P, x, support) if name == "Q" else None
        if shift is not None:
            log.note("density Q", f"Q(x) = P(x - {shift}) on the real line: the same sign and total mass as P "
                                  "(Lebesgue measure is translation invariant)")
            continue
        skipped, unsure = [], []
        for point in points:
            for piece in pieces:
                try:
                    dens = _numbers(getattr(piece, attr).subs(point), x)
                except NormaliserError as exc:
                    skipped.append(f"{exc} at parameters {point}")
                    break
                # the piece's ends at the parameters too: a kink at x = w is a number at w = 3/2
                at = replace(piece, lo=sp.sympify(piece.lo).subs(point), hi=sp.sympify(piece.hi).subs(point))
                unsure += _check_nonnegative(name, dens, x, at, point, seconds)
        sign = "non-negative at test points" + (f" (except where {'; '.join(skipped + unsure)})" if skipped or unsure else "")
        if normaliser_atoms(whole, x):
            how = _normaliser_mass(name, whole, x, support, pieces, attr, points, skipped, seconds)
        else:
            how = _mass(name, x, pieces, attr, points, seconds)
        mass = f"total mass 1 ({how})" if not how.startswith("NOT CHECKED") else f"total mass {how}"
        log.note(f"density {name}", f"{sign}; {mass}")


def _mass(name, x, pieces, attr, points, seconds) -> str:
    """How the total mass was found to be 1 (or 'NOT CHECKED: why'); DensityError when it is not 1."""
    try:
        mass = sp.Add(*[_piece_mass(p, getattr(p, attr), x, seconds) for p in pieces])
        mass = sp.simplify(mass)
        if mass == 1:
            return "symbolically"
        ok = numeric_equal(mass, sp.Integer(1), points)
        if ok is False:
            raise DensityError(
                f"{name}: does not {'sum' if pieces and pieces[0].discrete else 'integrate'} to 1 "
                f"(total mass {sp.sstr(mass)})"
            )
        if ok is True:
            return "numerically at typical parameters"
    except DensityError:
        raise
    except (StepTimeout, Exception):  # noqa: BLE001 - fall back to quadrature
        pass
    return _numeric_mass(name, x, pieces, attr, points, seconds)


def _numeric_mass(name, x, pieces, attr, points, seconds) -> str:
    try:
        return run_with_time_limit(_numeric_mass_check, name, pieces, attr, x, points, seconds=seconds)
    except StepTimeout:
        return f"NOT CHECKED: quadrature of the total mass exceeded {seconds:g} s"
    except DensityError:
        raise
    except NormaliserError as exc:
        return f"NOT CHECKED: {exc}"
    except Exception as exc:  # noqa: BLE001 - a density mpmath cannot evaluate: unchecked, never passed
        return f"NOT CHECKED: the numeric mass check failed ({type(exc).__name__}: {exc})"


def _normaliser_mass(name, whole, x, support, pieces, attr, points, skipped, seconds) -> str:
    """The mass of a density with a Sum or Integral normaliser (module docstring)."""
    if skipped:
        return f"NOT CHECKED: {skipped[0]}"
    try:
        why = run_with_time_limit(_by_construction, whole, x, support, seconds=min(seconds, 10))
    except (StepTimeout, Exception):  # noqa: BLE001 - undecided structurally: the numeric check decides
        why = None
    if why is not None:
        return f"symbolically: {why}; the normaliser is finite and non-zero at the test points"
    return _numeric_mass(name, x, pieces, attr, points, seconds)


def _support_ends(support: sp.Set, discrete: bool):
    """(inf, sup) of a support that is one integer range (discrete) or one interval, else None."""
    if discrete:
        if support == sp.S.Integers:
            return sp.S.NegativeInfinity, sp.oo
        if support == sp.S.Naturals0:
            return sp.Integer(0), sp.oo
        if support == sp.S.Naturals:
            return sp.Integer(1), sp.oo
        if isinstance(support, sp.Range) and support.step == 1:
            return support.inf, support.sup
        return None
    if support == sp.S.Reals:
        return sp.S.NegativeInfinity, sp.oo
    if isinstance(support, sp.Interval):
        return support.start, support.end
    return None


def _same(a: sp.Expr, b: sp.Expr) -> bool:
    return a == b or sp.simplify(a - b) == 0


def _shifts(f: sp.Expr, x: sp.Symbol):
    """Candidate translations c (f(x + c) might be the normaliser's summand): from every linear
    ``±x + r`` inside f, c = -(±r)."""
    found = []
    for node in sp.preorder_traversal(f):
        if isinstance(node, sp.Add) and node.has(x):
            a = node.coeff(x)
            r = node - a * x
            if a in (1, -1) and not r.has(x) and r != 0:
                c = -r / a
                if c not in found:
                    found.append(c)
    return found


def _by_construction(whole: sp.Expr, x: sp.Symbol, support: sp.Set) -> str | None:
    """Why ``whole = f(x) / N`` has mass N/N = 1 by construction, or None (module docstring)."""
    atoms = normaliser_atoms(whole, x)
    if len(atoms) != 1 or len(atoms[0].limits) != 1 or len(atoms[0].limits[0]) != 3:
        return None
    N = atoms[0]
    f = whole * N
    if f.has(N) or not f.has(x):
        return None
    j, lo, hi = N.limits[0]
    discrete = isinstance(N, sp.Sum)
    ends = _support_ends(support, discrete)
    if ends is None or not (_same(lo, ends[0]) and _same(hi, ends[1])):
        return None
    kind = "sum" if discrete else "integral"
    g = N.function.xreplace({j: x})
    if _same(f, g):
        return f"the normaliser is the {kind} of the numerator over the support"
    if not (lo.is_infinite and hi.is_infinite):
        return None
    for c in _shifts(f, x):
        ok = c.is_integer if discrete else c.is_extended_real and c.is_finite
        if ok and _same(f.subs(x, x + c), g):
            term, what, over = ("summand", "an integer", "a sum over Z") if discrete else (
                "integrand", "a real number", "an integral over R")
            return (f"the numerator is the normaliser's {term} translated by {sp.sstr(c)} ({what}), and {over} "
                    "is translation invariant")
    return None


def _positive_inside(dens, x, piece) -> bool:
    """True when the sign oracle (:mod:`.sign`) shows ``dens > 0`` on the open piece from the assumptions
    alone (no rewriting: simplify(binomial(45, 42 y/(1 + y) + 2)) takes 8 s, factor of besseli(k, c) 0.7 s),
    with ``x`` written inside it (``lo + y``, ``hi - y`` or ``lo + (hi - lo) y/(1 + y)``, ``y > 0``): exp of
    a real argument, positive constants and powers of positive bases, decided without a solver (which can
    take its whole time limit on exp(-(-x)**(5/2)) < 0)."""
    y = sp.Dummy("y", positive=True)
    lo, hi = piece.lo, piece.hi
    if lo == -sp.oo and hi == sp.oo:
        pos = x
    elif lo == -sp.oo:
        pos = hi - y
    elif hi == sp.oo:
        pos = lo + y
    else:
        pos = lo + (hi - lo) * y / (1 + y)
    return decide(dens.subs(x, pos), "positive", effort="assumptions") is True


def _check_nonnegative(name, dens, x, piece, point, seconds) -> list[str]:
    """Raise DensityError if ``dens`` (numeric parameters) is negative somewhere on ``piece`` (its ends at
    the same parameters); return the test points where the sign of its value was not decided (the sign
    oracle, :mod:`.sign`: a value that is not a real number there is not shown non-negative)."""
    xs = [piece.lo] if piece.is_point else _interior(piece)
    undecided = []
    for xv in xs:
        value = sp.N(dens.subs(x, xv), 30)
        negative = decide(value, "negative", effort="assumptions")
        if negative:
            raise DensityError(f"{name}: negative value {value} at x = {xv}, parameters {point}")
        if negative is None and decide(value, "nonnegative", effort="assumptions") is not True:
            undecided.append(f"the sign at x = {sp.sstr(xv)} is not decided, parameters {point}")
    if piece.is_point or dens.free_symbols != {x}:
        return undecided
    if _positive_inside(dens, x, piece):
        return undecided
    domain = sp.Interval.open(piece.lo, piece.hi)
    try:
        bad = run_with_time_limit(sp.solveset, dens < 0, x, domain, seconds=min(seconds, 5))
    except (StepTimeout, Exception):  # noqa: BLE001 - undecided: the grid above is the check
        return undecided
    if piece.discrete:
        bad = sp.Intersection(bad, sp.S.Integers)
    if bad is not sp.S.EmptySet and not isinstance(bad, sp.ConditionSet):
        where = bad.inf if bad.inf.is_finite else bad.sup
        raise DensityError(f"{name}: negative on {sp.sstr(bad)} (e.g. near x = {where}), parameters {point}")
    return undecided


def _interior(piece):
    lo, hi = piece.lo, piece.hi
    if lo.is_infinite and hi.is_infinite:
        return [sp.Integer(-3), sp.Integer(0), sp.Integer(3)]
    if lo.is_infinite:
        return [hi - 1, hi - 5]
    if hi.is_infinite:
        return [lo + 1, lo + 5] if not piece.discrete else [lo, lo + 3]
    return [lo + (hi - lo) * sp.Rational(k, 4) for k in (1, 2, 3)] if not piece.discrete else [lo, hi]


def _numeric_mass_check(name, pieces, attr, x, points) -> str:
    for point in points:
        with mpmath.workdps(_DPS):
            total = mpmath.mpf(0)
            for piece in pieces:
                d = _numbers(getattr(piece, attr).subs(point), x)
                if piece.is_point:
                    total += mpmath.mpf(sp.N(d, _DPS))
                    continue
                f = sp.lambdify(x, d, modules=MODULES)
                lo = mpmath.mpf(sp.N(piece.lo.subs(point), _DPS)) if piece.lo.is_finite or not piece.lo.is_infinite else (mpmath.ninf if piece.lo == -sp.oo else mpmath.inf)
                hi = mpmath.mpf(sp.N(piece.hi.subs(point), _DPS)) if not piece.hi.is_infinite else mpmath.inf
                if piece.discrete:
                    total += mpmath.nsum(f, [lo, hi])
                else:
                    total += mpmath.quad(f, [lo, hi])
            # quadrature of endpoint singularities (beta with shapes < 1) is good to ~1e-12 only:
            # a tolerance of 1e-8 still rejects every density that is not normalised
            if abs(total - 1) > mpmath.mpf(10) ** -8:
                raise DensityError(f"{name}: total mass {mpmath.nstr(total, 15)} != 1 at parameters {point}")
    return "by quadrature at typical parameters"
