r"""Rényi divergences at one integer order, for densities the general-order template cannot handle.

For an integer order k >= 2 (Mironov 2017, arXiv:1702.07476 v3, Def. 3)

    D_k(P||Q) = 1/(k-1) log ∫ P^k Q^(1-k),

and when P is a finite mixture sum_i w_i f_i, P^k expands (multinomial theorem) into finitely many
products prod_i (w_i f_i)^(m_i). Each product times Q^(1-k) is again one exponential-family term
exp(c0 + sum_j c_j T_j(x)), which the template of :mod:`.template` integrates (or sums) with its
finiteness conditions. This is how the subsampled Gaussian's binomial form at integer orders
(Mironov, Talwar, Zhang 2019, arXiv:1908.10530, Sect. 3.3) is *derived* rather than typed in: the
general order has no such expansion (S^alpha of a sum S), which is why
:func:`rdpsym.derive.engine.renyi_divergence` reports it as ``numeric_only``.
"""

from __future__ import annotations

import time
from numbers import Integral

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._cache import Memo
from .._config import settings
from .. import printing
from ..symbols import alpha as ALPHA
from .cache import cached_integer_order
from .crosscheck import is_zero, numeric_equal, sample_values
from .extremes import maximum
from .inputs import check_inputs
from .pieces import DerivationError, split_support
from .result import (DivergenceResult, IntegerOrderSource, Provenance, Status, Step,
                     register_integer_order_source)
from .._version import library_versions
from .rational import rational_line_integral
from .template import TemplateResult, decompose, integrate_template, log_expand
from .._timeout import StepTimeout, default_step_seconds, run_with_time_limit, work_clock

__all__ = ["renyi_divergence_at_integer_order", "recorded_integer_orders", "integer_order_value",
           "integer_order_parts", "INTEGER_ORDERS_RECORDED"]

#: integer orders the engine derives and records when the general order was not derived (if the time
#: allows: :data:`INTEGER_ORDERS_SECONDS` for all of them)
INTEGER_ORDERS_RECORDED = (2, 3)
#: total seconds for the recorded integer orders of one derivation
INTEGER_ORDERS_SECONDS = 6.0
#: the largest integer order derived on request (a work budget: the expansion of a two-component mixture
#: has k + 1 terms per piece, and a rational integrand's degree grows as 2k); higher orders are numeric
MAX_ORDER_ON_REQUEST = 32


def _order(order) -> int:
    if isinstance(order, bool) or not isinstance(order, (Integral, sp.Integer)):
        if isinstance(order, (float, sp.Float)) and float(order).is_integer():
            order = int(order)
        else:
            raise ValueError(f"order must be an integer >= 2; got {order!r}")
    k = int(order)
    if k < 2:
        raise ValueError(f"order must be an integer >= 2; got {order!r}")
    return k


def _terms(dens: sp.Expr, k: int) -> list[sp.Expr]:
    """The terms of dens**k by the multinomial theorem over the additive components of dens.

    The components (e.g. (1 - q) N(0, s^2) and q N(1, s^2)) are kept whole, so that each term is
    multinomial(k; m) prod_i f_i^(m_i) with the mixture weights as powers, not expanded polynomials.
    """
    parts = sp.Add.make_args(dens)
    out = []
    for powers, coeff in sp.ntheory.multinomial_coefficients(len(parts), k).items():
        out.append(sp.Integer(coeff) * sp.Mul(*[f**m for f, m in zip(parts, powers) if m]))
    return out


def _gathered(dens: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """``dens`` with a sum of terms c_i exp(a x + b_i) that share their exponential in x written as one
    term exp(a x) sum_i c_i exp(b_i): on a piece where a mixture's components are proportional (left of
    every location of a Laplace mixture) it is one exponential-family density, log-linear in x."""
    expanded = sp.expand(sp.expand_power_exp(dens))
    if not isinstance(expanded, sp.Add):
        return dens
    shared, rest = None, []
    for term in expanded.args:
        coeff, dep = term.as_independent(x, as_Add=False)
        dep = sp.powsimp(dep, combine="exp")
        if not isinstance(dep, sp.exp):
            return dens
        a, b = sp.expand(dep.args[0]).as_independent(x, as_Add=True)
        if shared is None:
            shared = b
        elif sp.expand(b - shared) != 0:
            return dens
        rest.append(coeff * sp.exp(a))
    return sp.exp(shared) * sp.Add(*rest)


def _stray_sum(coeffs: dict, x: sp.Symbol) -> sp.Expr | None:
    """A statistic log(S) raised to a power that is not a non-negative integer, with S a sum of exponentials
    in x: no exponential-family term (a negative power of a mixture has no finite expansion), so no value
    is claimed for it (the template would read it as a basis function)."""
    for T, c in coeffs.items():
        if isinstance(T, sp.log) and isinstance(T.args[0], sp.Add) and not (c.is_integer and c.is_nonnegative):
            if any(e.has(x) for e in T.args[0].atoms(sp.exp)):
                return T
    return None


def _shifted_powers(coeffs: dict, x: sp.Symbol) -> tuple[sp.Expr, sp.Expr] | None:
    """Two statistics (a x + b)^e and (c x + d)^e with the same exponent e, not known to be an integer, and
    different roots -b/a != -d/c (the generalized Gaussian's |x|^p against |x - Delta|^p): a term
    exp(k1 (a x + b)^e + k2 (c x + d)^e + ...) has no antiderivative in closed form for such e (for a
    symbolic e none valid for every value), so sympy's attempts at it only spend the step's budget (2 to
    14 s each for the generalized Gaussian at order 3); None where there is no such pair."""
    by_exponent: dict = {}
    for T in coeffs:
        if not (isinstance(T, sp.Pow) and T.base.has(x) and not T.exp.has(x) and T.exp.is_integer is not True):
            continue
        base = sp.Poly(T.base, x) if T.base.is_polynomial(x) else None
        if base is None or base.degree() != 1:
            continue
        root = sp.simplify(-base.nth(0) / base.nth(1))
        for other, other_root in by_exponent.get(T.exp, ()):
            if sp.simplify(root - other_root).is_zero is False:
                return other, T
        by_exponent.setdefault(T.exp, []).append((T, root))
    return None


def renyi_divergence_at_integer_order(
    P: sp.Expr,
    Q: sp.Expr,
    x: sp.Symbol,
    support: sp.Set,
    order,
    *,
    params=None,
    step_seconds: float | None = None,
    label: str | None = None,
) -> DivergenceResult:
    """D_k(P||Q) in closed form at the integer order k = ``order`` >= 2, by expanding P^k.

    P^k Q^(1-k) is expanded into a sum of exponential-family terms (multinomial expansion of a
    mixture P), and each term is integrated (or summed) over every smooth piece of the support by the
    template of :mod:`rdpsym.derive.template`. Arguments are as for
    :func:`rdpsym.derive.engine.renyi_divergence`, plus ``order``.

    Returns a :class:`~rdpsym.derive.result.DivergenceResult` with status ``closed_form`` whose
    ``expr`` is valid at alpha = k only: it is ``Piecewise((D_k, Eq(alpha, k)), (nan, True))``, so
    ``at(k)``/``evaluate(k)`` give D_k and every other order raises instead of returning a wrong
    number. ``conditions`` are the finiteness conditions of the integrals. If a term cannot be
    integrated the status is ``numeric_only`` with the reason.

    References: Mironov 2017 (arXiv:1702.07476 v3), Def. 3; for the subsampled Gaussian, Mironov,
    Talwar, Zhang 2019 (arXiv:1908.10530), Sect. 3.3 (the binomial form this reproduces).
    """
    k = _order(order)
    check_inputs(P, Q, x, support)
    seconds = step_seconds if step_seconds is not None else default_step_seconds()
    label = label or f"D_{k}(P||Q) (order alpha = {k} only)"
    symbols = tuple(sorted((P.free_symbols | Q.free_symbols) - {x}, key=lambda s: s.name))
    inputs = (("P", printing.sstr(P)), ("Q", printing.sstr(Q)), ("x", str(x)), ("support", printing.sstr(support)),
              ("order", str(k)))
    steps: list[Step] = []
    started = time.perf_counter()

    def finish(expr, status, reason="", conditions=sp.true):
        steps.append(Step("total", f"{time.perf_counter() - started:.3f} s"))
        prov = Provenance(tuple(steps), inputs, tuple(library_versions().items()))
        if expr is not None and expr != sp.oo:
            expr = sp.Piecewise((expr, sp.Eq(ALPHA, k)), (sp.nan, True))
        elif expr == sp.oo:
            expr = sp.Piecewise((sp.oo, sp.Eq(ALPHA, k)), (sp.nan, True))
        domains = tuple((p.symbol, p.domain) for p in (params or ()) if p.symbol in symbols)
        return DivergenceResult(expr=expr, status=status, reason=reason, conditions=conditions,
                                symbols=symbols, provenance=prov, label=label, domains=domains)

    try:
        t0 = time.perf_counter()
        # the parameters' domains decide kinks their assumptions leave open (no case split here)
        pieces = run_with_time_limit(split_support, P, Q, x, support, params, seconds=seconds)
        steps.append(Step("split support", "pieces: " + ", ".join(p.describe() for p in pieces), time.perf_counter() - t0))
    except (DerivationError, StepTimeout) as exc:
        return finish(None, Status.NUMERIC_ONLY, f"support not split: {exc}")

    total = sp.Integer(0)
    conditions = []
    for piece in pieces:
        if is_zero(piece.P):
            continue
        if is_zero(piece.Q):
            steps.append(Step(f"piece {piece.describe()}", "P > 0 where Q = 0: D_k = +oo (k > 1)"))
            return finish(sp.oo, Status.CLOSED_FORM)
        if piece.is_point:
            total += piece.P**k * piece.Q ** (1 - k)
            continue
        t0 = time.perf_counter()
        terms = _terms(piece.P, k)
        log_q = log_expand(_gathered(piece.Q, x))
        steps.append(Step(f"expand P^{k} on {piece.describe()}", f"{len(terms)} terms (multinomial expansion)",
                          time.perf_counter() - t0))
        memo: dict = {}
        for term in terms:
            c0, coeffs = decompose(log_expand(term) + (1 - k) * log_q, x)
            stray = _stray_sum(coeffs, x)
            if stray is not None:
                steps.append(Step(f"term on {piece.describe()}", f"{sp.sstr(stray.args[0])} to the power "
                                  f"{sp.sstr(coeffs[stray])}: no finite expansion"))
                return finish(None, Status.NUMERIC_ONLY,
                              f"order {k}: Q^(1-k) on {piece.describe()} is a negative power of a mixture "
                              f"({sp.sstr(stray.args[0])}): no finite multinomial expansion")
            shifted = _shifted_powers(coeffs, x)
            if shifted is not None:
                first, second = (sp.sstr(T) for T in shifted)
                steps.append(Step(f"term on {piece.describe()}", f"{first} and {second}: no closed-form antiderivative"))
                return finish(None, Status.NUMERIC_ONLY,
                              f"order {k}: the term on {piece.describe()} is the exponential of {first} and {second}, "
                              "powers of linear forms with different roots and an exponent not known to be an "
                              "integer: no closed-form antiderivative")
            key = tuple(sorted(coeffs.items(), key=lambda kv: sp.default_sort_key(kv[0])))
            t0 = time.perf_counter()
            if key not in memo:
                by_residues = rational_line_integral(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds,
                                                     symbols, params)
                if by_residues is not None:
                    memo[key] = TemplateResult(((by_residues, sp.true),), ("by residues",))
            if key not in memo:
                try:
                    memo[key] = integrate_template(coeffs, x, piece.lo, piece.hi, piece.discrete, seconds)
                except DerivationError as exc:
                    steps.append(Step(f"term on {piece.describe()}", f"not integrated: {exc}", time.perf_counter() - t0))
                    return finish(None, Status.NUMERIC_ONLY,
                                  f"order {k}: the term exp({sp.sstr(c0)} + ...) was not integrated: {exc}")
            res = memo[key]
            if not res.cases:
                steps.append(Step(f"term on {piece.describe()}", "the integral diverges: D_k = +oo"))
                return finish(sp.oo, Status.CLOSED_FORM)
            value, cond = res.cases[0] if len(res.cases) == 1 else (sp.Piecewise(*res.cases), res.condition)
            steps.append(Step(f"term on {piece.describe()}",
                              f"exp({sp.sstr(c0)}) * ∫ exp(" + " + ".join(f"({sp.sstr(c)})*{sp.sstr(T)}" for T, c in coeffs.items())
                              + f") = {sp.sstr(value)}", time.perf_counter() - t0))
            total += sp.exp(c0) * value
            conditions.append(cond)

    raw = sp.log(total) / (k - 1)
    t0 = time.perf_counter()
    points = sample_values(symbols, params, 3)
    try:
        simplified = run_with_time_limit(lambda: sp.log(sp.powsimp(sp.factor_terms(total), combine="exp"))
                                         / (k - 1), seconds=seconds)
        if numeric_equal(simplified, raw, points) is not True:
            simplified = raw
    except (StepTimeout, *SYMBOLIC_ERRORS):  # the unsimplified form is kept
        simplified = raw
    steps.append(Step("simplify", f"kept {sp.count_ops(simplified)} operations", time.perf_counter() - t0))
    if simplified.has(sp.Integral, sp.Sum, sp.nan, sp.zoo):
        return finish(None, Status.NUMERIC_ONLY, "the expanded integral kept an unevaluated or undefined part")
    cond = sp.And(*conditions) if conditions else sp.true
    return finish(simplified, Status.CLOSED_FORM, conditions=cond)


# --------------------------------------------------------------------------------------------------
# exact integer orders of a result without a general form
# --------------------------------------------------------------------------------------------------
#: D_k of one direction, or None where the expansion does not give it; a value or a None computed while a
#: time limit expired is not kept (the memo's rule), so a None kept is a structural answer
_INTEGER_ORDERS = Memo(maxsize=512)


def _direction_integer_order(P, Q, x, support, k, params, seconds):
    """D_k(P||Q) as an expression in the parameters, or None; shared between processes through the disk
    cache (:func:`~rdpsym.derive.cache.cached_integer_order`)."""
    return cached_integer_order(P, Q, x, support, k, params, seconds,
                                lambda: _derive_direction_integer_order(P, Q, x, support, k, params, seconds))


def _derive_direction_integer_order(P, Q, x, support, k, params, seconds):
    r = renyi_divergence_at_integer_order(P, Q, x, support, k, params=params, step_seconds=seconds)
    if r.status is not Status.CLOSED_FORM or r.expr is None:
        return None
    value = r.expr.args[0][0] if isinstance(r.expr, sp.Piecewise) else r.expr
    if value.has(sp.nan, sp.zoo, sp.Integral, sp.Sum):
        return None
    if r.conditions is not sp.true:
        value = sp.Piecewise((value, r.conditions.subs(r.alpha, k)), (sp.oo, True))
    return value


def recorded_integer_orders(P, Q, x, support, params, seconds: float) -> tuple[tuple[int, sp.Expr], ...]:
    """``(k, D_k(P||Q))`` for k in :data:`INTEGER_ORDERS_RECORDED`, as many as are derived within
    ``seconds`` in all (the engine records them when the general order was not derived)."""
    out = []
    deadline = work_clock() + seconds  # work, as the steps' own limits count it
    for k in INTEGER_ORDERS_RECORDED:
        left = deadline - work_clock()
        if left <= 0.5:
            break
        value = _INTEGER_ORDERS.get_or_compute(
            (P, Q, x, support, k), lambda: _direction_integer_order(P, Q, x, support, k, params, left))
        if value is None:
            break  # a higher order expands into more terms: it will not derive either
        out.append((k, value))
    return tuple(out)


def integer_order_value(result, k: int, seconds: float | None = None) -> sp.Expr | None:
    """D_k at the integer order ``k`` >= 2 of a result without a closed form, as an exact expression in the
    parameters (the maximum over :func:`~rdpsym.derive.numeric_values.directions`), or None when some
    direction was not derived within ``seconds`` each.

    Derived by the multinomial expansion (:func:`renyi_divergence_at_integer_order`);
    recorded orders (``result.integer_orders``) are returned as they are; orders above
    :data:`MAX_ORDER_ON_REQUEST` are not derived (None). A derivation that timed out is
    not kept (asking again tries again); one the expansion does not give is (asking again answers at
    once). None also when the result's directions are not known (a family whose supremum is not shown)."""
    for order, value in getattr(result, "integer_orders", ()):
        if order == k:
            return value
    if k > MAX_ORDER_ON_REQUEST:
        return None
    from .numeric_values import directions

    try:
        dirs = directions(result)
    except ArithmeticError:  # no finite set of directions stands for the result: no exact value
        return None
    if not dirs:
        return None
    seconds = settings().step_seconds if seconds is None else seconds
    params = tuple(result.parameters()) if result.symbols else ()
    values = []
    for d in dirs:
        key = (d.P, d.Q, d.x, d.support, int(k))
        v = _INTEGER_ORDERS.get_or_compute(
            key, lambda: _direction_integer_order(d.P, d.Q, d.x, d.support, int(k), params, seconds))
        if v is None:
            return None
        values.append(v)
    return maximum(values)


def integer_order_parts(result, k: int, values=None, seconds: float | None = None):
    """``(exact, rest)`` at the integer order ``k`` >= 2 for a result without a closed form: the exact
    D_k of each of its directions the expansion gives (expressions in the parameters), and the
    directions it does not give (:class:`~rdpsym.numeric.maximum.Direction` objects at parameter
    ``values``), or None when the directions are not known. The curve's value is the maximum over both
    kinds; it is exact where an exact part is above every other part (Mironov 2017, Def. 4)."""
    if k > MAX_ORDER_ON_REQUEST:
        return None
    from .numeric_values import directions

    try:
        dirs = directions(result, values)
    except ArithmeticError:
        return None
    if not dirs:
        return None
    seconds = settings().step_seconds if seconds is None else seconds
    params = tuple(result.parameters()) if result.symbols else ()
    exact, rest = [], []
    for d in dirs:
        v = _INTEGER_ORDERS.get_or_compute(
            (d.P, d.Q, d.x, d.support, int(k)),
            lambda: _direction_integer_order(d.P, d.Q, d.x, d.support, int(k), params, seconds))
        if v is None:
            rest.append(d)
        else:
            exact.append(v)
    return exact, rest


register_integer_order_source(IntegerOrderSource(integer_order_value, integer_order_parts))
