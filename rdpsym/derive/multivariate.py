"""Rényi divergences of densities in several output variables (x1, ..., xd) over a product support.

    D_alpha(P||Q) = 1/(alpha-1) log ∫_{S_1 x ... x S_d} P^alpha Q^(1-alpha)     (Mironov 2017, Def. 3)

The engine (:func:`rdpsym.derive.engine.renyi_divergence`) sends a tuple of two or more variables here;
a tuple of one is the scalar case. Two exact routes are tried, in order, each under a time limit:

1. the Gaussian (quadratic) template on R^d, when log P and log Q are polynomials of degree <= 2 in the
   variables (:mod:`.quadratic`: the Gaussian integral, finite iff the matrix of the quadratic form is
   positive definite, decided by Sylvester's criterion);
2. independent coordinates, when P and Q factor into one-coordinate factors (:mod:`.product`): the sum
   of the one-dimensional divergences (van Erven & Harremoës 2014, IEEE T-IT 60(7), Thm. 28), each derived
   by the one-dimensional engine.

Anything else is ``numeric_only`` with the reason: no closed form is claimed for it (its values come from
the numeric path on the densities).
"""

from __future__ import annotations

import time
from dataclasses import replace

import sympy as sp

from .. import printing
from .._numbers import ArgumentError
from ..specify.variables import as_variables, coordinate_supports, is_multivariate
from .checks import DensityError
from .inputs import check_inputs
from .limits import numeric_limit_check
from .pieces import DerivationError
from .product import THEOREM, combine_parts, factorise, normalise_factor
from .quadratic import gaussian_divergence
from .result import DivergenceResult, Provenance, Status, library_versions
from .stages import BUDGET_STEPS
from .steplog import StepLog
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["read_variables", "derive_multivariate"]


def read_variables(x, support):
    """``(x, support)`` as the engine takes them: a symbol with a one-dimensional set, or a tuple of
    d >= 2 symbols with the tuple of its d coordinate sets (a tuple of one is the scalar case).

    Raises :class:`~rdpsym._numbers.ArgumentError` naming ``x`` or ``support``."""
    from ..specify.mechanism import is_discrete_support

    if not is_multivariate(x):
        return x, support  # the scalar case, checked by check_inputs as before
    variables = as_variables(x, "x")
    coords = coordinate_supports(support, len(variables), "support")
    for v, s in zip(variables, coords):
        try:
            is_discrete_support(s)
        except ValueError as exc:
            raise ArgumentError("support", "a product of Reals, Intervals, Integers, Ranges or FiniteSets", s,
                                message=f"support: the coordinate set of {v} is not usable: {exc}") from None
    if len(variables) == 1:
        return variables[0], coords[0]
    return variables, coords


def _inputs(P, Q, variables, support) -> tuple:
    return (("P", printing.sstr(P)), ("Q", printing.sstr(Q)), ("x", str(tuple(map(str, variables)))),
            ("support", printing.sstr(support)))


def _result(fields, P, Q, variables, support, log, label, params, started) -> DivergenceResult:
    log.note("total", f"{time.perf_counter() - started:.3f} s")
    symbols = tuple(sorted((P.free_symbols | Q.free_symbols) - set(variables), key=lambda s: s.name))
    domains = tuple((p.symbol, p.domain) for p in (params or ()) if p.symbol in symbols)
    prov = Provenance(tuple(log.steps), _inputs(P, Q, variables, support), tuple(library_versions().items()))
    return DivergenceResult(symbols=symbols, provenance=prov, label=label, domains=domains,
                            pair=(P, Q, tuple(variables), support), **fields)


def _gaussian(P, Q, variables, symbols, params, seconds, check_density, log):
    found = log.timed("quadratic template", gaussian_divergence, P, Q, variables, symbols, params, seconds,
                      check_density, seconds=BUDGET_STEPS * seconds,
                      detail=lambda g: "applies" if g is not None else "log P or log Q is not quadratic in the variables")
    if found is None:
        return None
    for name, text in found.notes:
        log.note(name, text)
    expr = found.expr
    for name, target, a0 in (("KL", found.kl, sp.Integer(1)), ("D_inf", found.dinf, sp.oo)):
        # the direct special orders against the general form next to the order, at 100 digits
        ok = numeric_limit_check(expr, found.cond, target, a0, found.points, "+" if a0 == 1 else "-")
        if ok is False:
            log.note(f"{name} limit check", "failed: the direct value differs from the limit of the general form")
            return dict(expr=None, status=Status.NUMERIC_ONLY, kl=None, max_divergence=None,
                        reason=f"limit check failed: the direct {name} differs from the limit of the general form")
        log.note(f"{name} limit check", f"lim alpha -> {a0} of the general form equals the direct {name} "
                                        f"(numeric, 100 digits next to the order)" if ok else "not decided")
    status = Status.NUMERIC_ONLY if expr.has(sp.Integral, sp.Sum, sp.Limit) else Status.CLOSED_FORM
    return dict(expr=expr if status is Status.CLOSED_FORM else None, status=status, conditions=found.cond,
                kl=found.kl, max_divergence=found.dinf)


def _is_zero(expr, seconds) -> bool:
    """expr == 0 by simplify within the step limit (False when not shown)."""
    try:
        return run_with_time_limit(sp.simplify, expr, seconds=seconds) == 0
    except (StepTimeout, Exception):  # noqa: BLE001
        return False


def _product(P, Q, variables, coords, params, seconds, check_density, cache, label, log):
    from .crosscheck import numeric_equal, sample_values
    from .engine import renyi_divergence

    fp = log.timed("factorise P", factorise, P, variables, seconds, seconds=seconds + 1,
                   detail=lambda f: f"P = {sp.sstr(f.coeff)} * " + " * ".join(f"[{sp.sstr(g)}]" for g in f.factors)
                   + f" ({f.how})" if f else "not a product of one-coordinate factors")
    fq = log.timed("factorise Q", factorise, Q, variables, seconds, seconds=seconds + 1,
                   detail=lambda f: f"Q = {sp.sstr(f.coeff)} * " + " * ".join(f"[{sp.sstr(g)}]" for g in f.factors)
                   + f" ({f.how})" if f else "not a product of one-coordinate factors")
    if fp is None or fq is None:
        return None
    pairs, masses = [], {"P": fp.coeff, "Q": fq.coeff}
    for v, s, f, g in zip(variables, coords, fp.factors, fq.factors):
        try:
            pi, zp = log.timed(f"normalise P[{v}]", normalise_factor, f, v, s, seconds, seconds=seconds + 1,
                               detail=lambda r: f"∫ = {sp.sstr(r[1])}")
            qi, zq = log.timed(f"normalise Q[{v}]", normalise_factor, g, v, s, seconds, seconds=seconds + 1,
                               detail=lambda r: f"∫ = {sp.sstr(r[1])}")
        except (DerivationError, StepTimeout, Exception) as exc:  # noqa: BLE001
            log.note("independent coordinates", f"factor of {v} not normalised ({type(exc).__name__}: {exc}): not used")
            return None
        masses["P"], masses["Q"] = masses["P"] * zp, masses["Q"] * zq
        pairs.append((v, s, pi, qi))
    symbols = sorted((P.free_symbols | Q.free_symbols) - set(variables), key=lambda s: s.name)
    points = sample_values(symbols, params, 3)
    for name, mass in masses.items():
        one = _is_zero(mass - 1, seconds) or numeric_equal(mass, sp.Integer(1), points) is True
        if not one:
            if check_density:
                raise DensityError(f"{name}: its mass over the product support is {sp.sstr(mass)}, not 1")
            log.note("independent coordinates", f"{name} has mass {sp.sstr(mass)}, not shown to be 1: not used")
            return None
    log.note("independent coordinates", f"{THEOREM}: D_alpha(P||Q) = " + " + ".join(
        f"D_alpha({sp.sstr(pi)} || {sp.sstr(qi)}) over {v} in {sp.sstr(s)}" for v, s, pi, qi in pairs))
    parts = []
    for v, s, pi, qi in pairs:
        part_label = f"{label} [{v}]"
        if _is_zero(pi - qi, seconds):
            log.note(f"coordinate {v}", "P and Q have the same factor: D_alpha = 0 for every order")
            parts.append(DivergenceResult(expr=sp.Integer(0), status=Status.CLOSED_FORM, kl=sp.Integer(0),
                                          max_divergence=sp.Integer(0), label=part_label))
            continue
        # the default label, so that the part is the same cache entry as a one-dimensional call on it
        part = renyi_divergence(pi, qi, v, s, params=params, step_seconds=seconds, check_density=check_density,
                                cache=cache)
        part = replace(part, label=part_label)
        for step in part.provenance.steps:
            log.steps.append(replace(step, name=f"[{v}] {step.name}"))
        parts.append(part)
    fields = combine_parts(parts)
    for note in fields.pop("notes"):
        log.note("independent coordinates", note)
    return fields


def derive_multivariate(P, Q, variables, support, coords, params, seconds, check_density, cache,
                        label) -> DivergenceResult:
    """D_alpha(P||Q) for densities in ``variables`` (d >= 2) on the product ``support`` with coordinate
    sets ``coords`` (:func:`read_variables`), by the routes of the module docstring."""
    check_inputs(P, Q, variables[0], coords[0])
    started = time.perf_counter()
    log = StepLog()
    symbols = tuple(sorted((P.free_symbols | Q.free_symbols) - set(variables), key=lambda s: s.name))
    reasons = []
    fields = None
    if all(s == sp.S.Reals for s in coords):
        try:
            fields = _gaussian(P, Q, variables, symbols, params, seconds, check_density, log)
        except (DerivationError, StepTimeout) as exc:
            reasons.append(f"quadratic template failed: {exc}")
    if fields is None:
        try:
            fields = _product(P, Q, variables, coords, params, seconds, check_density, cache, label, log)
        except (DerivationError, StepTimeout) as exc:
            reasons.append(f"independent coordinates failed: {exc}")
    if fields is None:
        reasons.append(f"no closed form: the densities in {tuple(map(str, variables))} neither factor into "
                       f"one-coordinate factors nor have quadratic logs on R^{len(variables)}")
        fields = dict(expr=None, status=Status.NUMERIC_ONLY, kl=None, max_divergence=None)
    if reasons:
        fields["reason"] = "; ".join(filter(None, [fields.get("reason", "")] + reasons))
    return _result(fields, P, Q, variables, support, log, label, params, started)

