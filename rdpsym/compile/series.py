"""Symbolic Taylor series of a closed form where it is 0/0 or loses digits.

* around every exceptional point (Laplace at alpha = 1/2),
* around each parameter boundary where the divergence tends to 0 (Laplace as b -> oo, randomized
  response as p -> 1/2): there every term of the closed form is O(1) while the value is O(1/b^2), and
  no float evaluation of the closed form can be accurate. The coefficients of these series are
  polynomials in alpha without cancellation.

At run time a series is used at a point only where its truncation error is below
``SERIES_TOLERANCE`` of its value; elsewhere the closed form is used. The series around alpha = 1 is
computed at run time instead (:mod:`rdpsym.compile.taylor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from ..derive.result import DivergenceResult
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA
from .store import SERIES_CACHE, cache_key

__all__ = ["SERIES_TERMS", "SERIES_TOLERANCE", "Series", "series_expansions", "fixed_points"]

#: A series is used where its last two terms are below this fraction of its value.
SERIES_TOLERANCE = 1e-15
#: Number of Taylor terms kept (orders 0 .. SERIES_TERMS-1).
SERIES_TERMS = 12
#: Time limit of one symbolic series (sympy). A series not built in time fails closed (the float code
#: refuses the points of its band where the closed form loses digits), so the limit trades time for
#: coverage, never for correctness.
SERIES_SECONDS = 120.0


@dataclass(frozen=True)
class Series:
    """A truncated Taylor series sum_k coeffs[k] * v**k of one branch of the divergence.

    ``variable`` is the expansion variable as an expression of alpha and the parameters
    (``alpha - 1``, ``1/b``, ``p - 1/2``); ``coeffs`` may depend on alpha and the parameters. Empty
    ``coeffs``: the series is needed (the closed form cancels there) but was not built in time.
    """

    where: str
    variable: sp.Expr
    coeffs: tuple[sp.Expr, ...]



def fixed_points(result: DivergenceResult) -> list:
    """The result's exceptional points at a fixed order (a number); one at an order in the parameters
    (b1/(b1 + b2)) is served by the series around the parameter-dependent factors instead."""
    return [p for p in result.exceptional_points if p.alpha.is_number]


def _taylor(expr: sp.Expr, var: sp.Symbol, n: int, seconds: float) -> tuple[sp.Expr, ...] | None:
    """Taylor coefficients of expr in var at 0 (orders 0..n-1), or None if not a Taylor series."""
    from .._timeout import StepTimeout, run_with_time_limit

    def work():
        s = sp.series(expr, var, 0, n).removeO()
        s = sp.expand(s)
        if s.has(sp.log(var)) or any(
            t.as_coeff_exponent(var)[1].is_negative or not t.as_coeff_exponent(var)[1].is_integer for t in sp.Add.make_args(s)
        ):
            return None
        # expand + powsimp merges exp(-x)*exp(x): factored forms overflow for small scales
        coeffs = tuple(_tidy(s.coeff(var, k)) for k in range(n))
        if any(c.has(var) or c.has(sp.nan, sp.zoo, sp.oo) for c in coeffs):
            return None
        return coeffs

    try:
        return run_with_time_limit(work, seconds=seconds)
    except (StepTimeout, RuntimeError, NotImplementedError, ValueError, TypeError, ZeroDivisionError):
        return None
    except Exception:  # noqa: BLE001 - sympy's series raises many types; a failed series is just not used
        return None



def _tidy(c: sp.Expr) -> sp.Expr:
    """Factored polynomials (no cancellation near alpha = 1); exp products merged (no overflow)."""
    c = sp.expand(c)
    return sp.powsimp(c) if c.has(sp.exp) else sp.factor(c)


def _singular_at(expr: sp.Expr, a0: sp.Expr) -> bool:
    try:
        v = expr.subs(ALPHA, a0)
    except Exception:  # noqa: BLE001
        return True
    return v.has(sp.nan, sp.zoo) or v is sp.nan


def _has_transcendental(expr: sp.Expr) -> bool:
    return expr.has(sp.log, sp.exp) or any(p.exp.has(sp.Symbol) for p in expr.atoms(sp.Pow))


def _boundaries(param: Parameter) -> list[sp.Expr]:
    dom = param.domain
    out = []
    try:
        inf, sup = dom.inf, dom.sup
    except (AttributeError, NotImplementedError):
        return out
    for end in (inf, sup):
        if end.is_finite or end is sp.oo:
            out.append(end)
    return out


def _tends_to_zero(result: DivergenceResult, expr: sp.Expr, param: Parameter, end: sp.Expr, others: dict) -> bool:
    """Numeric probe: does the branch vanish as ``param`` approaches ``end`` (alpha = 2)?"""
    import mpmath

    sym = param.symbol
    try:
        if end is sp.oo:
            near, mid = sp.Integer(10) ** 12, sp.Integer(10)
        else:
            inside = 1 if (param.domain.contains(end + sp.Rational(1, 10**6)) is sp.true) else -1
            near, mid = end + inside * sp.Rational(1, 10**12), end + inside * sp.Rational(1, 10)
        subs = dict(others)
        vals = []
        for point in (near, mid):
            subs[sym] = point
            v = expr.subs(ALPHA, 2).subs(subs).evalf(40)
            if not v.is_number or v.has(sp.nan, sp.zoo):
                return False
            vals.append(abs(mpmath.mpf(sp.re(v))))
        return vals[0] < sp.Rational(1, 10**9) * vals[1]
    except Exception:  # noqa: BLE001
        return False


def series_expansions(result: DivergenceResult, branch: sp.Expr, parameters: Sequence[Parameter],
                      terms: int = SERIES_TERMS, seconds: float = SERIES_SECONDS) -> tuple[list[Series], list[Series]]:
    """Symbolic Taylor series for ``branch``: (at parameter boundaries, at exceptional points).

    The series at alpha = 1 is computed at run time (Taylor-mode arithmetic, :class:`_TaylorEmitter`).
    The symbolic series take seconds each; they are cached on disk with the derivations (series
    computed while a time limit expired are not kept).
    """
    key = "\n".join(["series-2", sp.srepr(branch), str(terms),
                     repr([(sp.srepr(p.alpha), sp.srepr(p.value)) for p in result.exceptional_points]),
                     repr([(p.name, sp.srepr(p.symbol), sp.srepr(p.domain), p.log_scale, p.typical) for p in parameters])])
    return SERIES_CACHE.get_or_compute(cache_key(key),
                                       lambda: _series_expansions(result, branch, parameters, terms, seconds))


def _series_expansions(result, branch, parameters, terms, seconds):
    out: list[Series] = []
    bounds = _boundary_series(result, branch, parameters, terms, seconds)
    tau = sp.Symbol("tau", real=True)
    points = [p.alpha for p in fixed_points(result)]
    for a0 in points:
        if not _singular_at(branch, a0):
            continue
        coeffs = _taylor(branch.subs(ALPHA, a0 + tau), tau, terms, seconds)
        if coeffs is not None:
            out.append(Series(f"alpha near {a0}", ALPHA - a0, coeffs))
    return bounds, out


def _boundary_series(result, branch, parameters, terms, seconds) -> list[Series]:
    out: list[Series] = []
    if not _has_transcendental(branch):
        return out
    u = sp.Symbol("u", positive=True)
    typical = {p.symbol: p.typical_values(1)[0] for p in parameters}
    for param in parameters:
        if param.symbol not in branch.free_symbols or param.symbol.is_integer:
            continue
        bounded = param.domain.inf.is_finite and param.domain.sup.is_finite
        if not (param.log_scale or bounded):
            # scales (log_scale) and bounded parameters only: each series costs seconds of sympy time,
            # and a sensitivity -> 0 series would repeat the scale -> oo one
            continue
        others = {s: v for s, v in typical.items() if s != param.symbol}
        for end in _boundaries(param):
            if not _tends_to_zero(result, branch, param, end, others):
                continue
            if end is sp.oo:
                sub, var = 1 / u, 1 / param.symbol
            else:
                inside = 1 if (param.domain.contains(end + sp.Rational(1, 10**6)) is sp.true) else -1
                sub, var = end + inside * u, inside * (param.symbol - end)
            coeffs = _taylor(branch.subs(param.symbol, sub), u, terms, seconds)
            # a series the closed form needs (it tends to 0 there) but sympy did not give in time is
            # kept as a Series without coefficients: the float code then refuses the points of that
            # band where the closed form's estimated error is too large (fail closed, never a guess)
            out.append(Series(f"{param.name} near {end}", var, coeffs if coeffs is not None else ()))
    return out


# ------------------------------------------------------------------------------------------------
# Singular orders that depend on the parameters
# ------------------------------------------------------------------------------------------------
#: Next to a parameter-dependent singular factor D (|D| / sum|terms of D| below this) the closed form
#: is checked: a series around the root is used where it converges, else the closed form where its
