"""Forms of the general-order expression: the most compact checked-equal simplification, the expression in
alpha, the definition's shape (1/(alpha-1)) log Z with Z gathered by exponentials, and conditions in alpha."""

from __future__ import annotations

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .pieces import DerivationError
from ..symbols import alpha as ALPHA
from .crosscheck import numeric_equal
from .regimes import Regime
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["collect_exponentials", "compact", "in_alpha", "definition_shape", "condition_in_alpha"]


def collect_exponentials(expr: sp.Expr) -> sp.Expr:
    """Inside every log of a sum, gather the terms by their exponential: sum_i c_i exp(a_i), with
    each c_i factored and each a_i a single exponent.

    log ∫ P^alpha Q^(1-alpha) over several pieces is a sum of piece integrals, each a coefficient
    times exponentials; gathering equal exponentials across pieces is what turns the sum into the
    familiar mixture form (for Laplace noise, Mironov 2017 Table II's
    alpha/(2alpha-1) e^((alpha-1)/b) + (alpha-1)/(2alpha-1) e^(-alpha/b)).
    """

    def gather(total):
        total = total.replace(lambda n: isinstance(n, sp.exp), lambda n: sp.exp(sp.expand(n.args[0])))
        total = sp.expand_power_exp(total)
        # exponentials stand in as positive symbols, so that expand cannot merge them into denominators
        stand_in = {e: sp.Dummy("E", positive=True) for e in total.atoms(sp.exp)}
        back = {d: e for e, d in stand_in.items()}
        groups: dict = {}
        for term in sp.Add.make_args(sp.expand(total.xreplace(stand_in))):
            coeff, mono = term.as_independent(*back, as_Add=False)
            arg = sp.Integer(0) if mono == 1 else sp.expand(sp.expand_log(sp.log(mono.xreplace(back)), force=True))
            arg = sp.factor(arg)
            groups[arg] = groups.get(arg, 0) + coeff
        return sp.Add(*[sp.factor(c) * sp.exp(a) for a, c in groups.items()])

    logs = [n for n in expr.atoms(sp.log) if isinstance(n.args[0], sp.Add) and n.args[0].has(sp.exp)]
    return expr.xreplace({n: sp.log(gather(n.args[0])) for n in logs})


def compact(expr: sp.Expr, points, seconds: float) -> sp.Expr:
    """The most compact of several simplified forms that is checked equal to ``expr``."""
    candidates = [expr]
    for simplifier in (
        lambda e: sp.simplify(e),
        lambda e: sp.simplify(sp.expand_log(e, force=False)),
        lambda e: sp.factor_terms(sp.simplify(sp.logcombine(sp.expand_log(e), force=False))),
        lambda e: sp.simplify(sp.gammasimp(e)) if e.has(sp.gamma) else e,
    ):
        try:
            candidates.append(run_with_time_limit(simplifier, expr, seconds=seconds))
        except (StepTimeout, *SYMBOLIC_ERRORS):  # a simplifier that fails is skipped
            continue
    best = expr
    for cand in sorted(candidates[1:], key=sp.count_ops):
        if sp.count_ops(cand) >= sp.count_ops(best):
            continue
        if cand.has(sp.nan, sp.zoo, sp.I):
            continue
        if numeric_equal(cand, expr, points) is True:
            best = cand
            break
    return best


def in_alpha(D, regime: Regime, points, seconds) -> sp.Expr:
    """D in terms of alpha, simplified (within the step limit) unless it is long."""
    plain = D.subs(regime.var, regime.var_in_alpha)
    if sp.count_ops(D) >= 80:
        return plain
    try:
        return run_with_time_limit(sp.simplify, plain, seconds=seconds)
    except (StepTimeout, *SYMBOLIC_ERRORS):  # then the plain substitution
        return plain


def definition_shape(integral, D_alpha, regime: Regime, points, seconds, log) -> sp.Expr:
    """(1/(alpha-1)) log Z with Z = ∫ P^alpha Q^(1-alpha) gathered by exponentials, if not much longer.

    The definition's shape (Mironov 2017, Def. 3) shows Z = E_Q[(P/Q)^alpha] as a mixture of
    exponentials, the way the literature states its tables; it is kept when it is at most a quarter
    longer (in operations) than the most compact form and checked equal to it at the sample points.
    For Laplace noise this is exactly Mironov 2017's Table II form. Float evaluation does not depend on
    the shape: rdpsym.compile rewrites any equivalent form for it (evaluation_form).
    """
    try:
        Z = run_with_time_limit(lambda: collect_exponentials(sp.log(integral.subs(regime.var, regime.var_in_alpha))), seconds=seconds)
    except (StepTimeout, DerivationError, *SYMBOLIC_ERRORS):
        return D_alpha
    if not isinstance(Z, sp.log) or not isinstance(Z.args[0], sp.Add):
        return D_alpha
    shaped = Z / (ALPHA - 1)
    if sp.count_ops(shaped) > 1.25 * sp.count_ops(D_alpha) or shaped.has(sp.nan, sp.zoo, sp.I):
        return D_alpha
    if numeric_equal(shaped, D_alpha, points) is not True:
        return D_alpha
    if shaped != D_alpha:
        log.note(f"form ({regime.name})", "kept the definition's shape (1/(alpha-1)) log Z, Z gathered by exponentials")
    return shaped


def condition_in_alpha(cond, regime: Regime):
    if cond in (sp.true, True):
        return sp.true
    cond = cond.subs(regime.var, regime.var_in_alpha)
    try:
        simplified = run_with_time_limit(lambda: sp.simplify(cond), seconds=5)
    except (StepTimeout, *SYMBOLIC_ERRORS):
        simplified = cond
    return simplified
