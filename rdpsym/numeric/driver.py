r"""Independent numeric evaluation of Rényi divergences.

This module is the driver of the *numeric* path that checks rdpsym's symbolic closed forms. For densities (or
pmfs) ``P`` and ``Q`` on a support ``S`` it computes (Mironov 2017, arXiv:1702.07476 v3, Def. 3)

.. math::

    D_\alpha(P\|Q) = \frac{1}{\alpha-1}\log I_\alpha,\qquad
    I_\alpha = \int_S P^\alpha Q^{1-\alpha}
             = \int_S \exp\bigl(\alpha\log P + (1-\alpha)\log Q\bigr),

together with the limits :math:`D_1 = \mathrm{KL}(P\|Q) = E_P[\log P/Q]` and
:math:`D_\infty = \operatorname{ess\,sup}_{P>0} \log P/Q` (van Erven and Harremoës 2014,
"Rényi divergence and Kullback-Leibler divergence", IEEE T-IT 60(7), Thms. 5 and 6).

Numerical method (all inside ``mpmath.workdps`` / ``flint.ctx.workprec`` contexts; the global
precision is never touched):

* **Log space.** The integrand is ``exp(L(x) - L_max)`` with ``L = alpha log P + (1-alpha) log Q``
  evaluated from mpmath values of ``P`` and ``Q`` (mpmath numbers have an unbounded exponent, so
  ``P**1000`` neither underflows nor overflows), and ``L_max`` the maximum of ``L`` found by a
  logarithmic scan plus golden-section refinement. Then ``log I = L_max + log(∫ exp(L - L_max))``.
* **Near alpha = 1** (``|alpha - 1| < 1/8``) the identity
  ``I = ∫P + ∫ P expm1((alpha-1)(log P - log Q))`` is used, so ``log I ~ (alpha-1) KL`` keeps its
  relative accuracy (no cancellation in ``I - 1``).
* **Continuous supports:** quadrature between breakpoints: the support's ends, the zeros of the
  arguments of ``Abs``, ``sign``, ``Heaviside``, of ``Max``/``Min`` differences and of ``Piecewise``
  relational boundaries (found by ``sympy.solveset`` on the *numeric* expression), the peak of ``L``
  and the points ``peak ± w 8^k`` (``k = 0..3``, ``w`` = distance at which ``L`` drops by 1), so a
  narrow peak sitting on a kink (Laplace with alpha = 1e4, b = 0.01) is resolved.
  Exponentially decaying tails are truncated where ``L < L_max - (wp ln 10 + 40)`` (checked to keep
  falling: ``L(1e8 w)`` or ``L(1e16 w) < L_max - 1e6``). Other infinite pieces ``[c, oo)`` are integrated in ``u``
  with ``x = c + w' u``, which mpmath maps to ``[0, 1]`` by ``u = 1/t - 1``: a polynomial tail
  ``|x|^-s`` becomes ``t^(s-2)``, an algebraic endpoint behaviour that tanh-sinh integrates to full
  precision (Takahasi and Mori 1974), so Cauchy, Pareto and Lévy tails need no special case.
* **Divergence detection:** at every infinite end the log-log slope ``s`` of the integrand is
  measured at ``|x| ~ 1e8, 1e16, 1e32`` (times ``w``); ``s >= -1`` means the integral diverges
  (value ``inf``). At every finite breakpoint the same is done with the distance ``1e-8 .. 1e-32``
  (divergent when ``s <= -1``). Points where ``P > 0`` and ``Q = 0`` give ``inf`` for ``alpha >= 1``
  and contribute 0 for ``alpha < 1``. For KL the same checks run on ``|P log(P/Q)|``.
* **Discrete supports:** finite supports are summed at working precision; infinite progressions are
  summed term by term outward from the mode of ``L``; summation stops when the term ratio ``r < 1``
  and the geometric tail bound ``t r / (1 - r)`` is below ``10^-wp`` of the sum; that bound goes into
  ``error`` (valid when the term ratios are non-increasing, i.e. log-concave tails). Polynomially
  decaying terms are reported as not converged (no tail acceleration yet).
* **D_inf:** logarithmic scan, golden-section refinement of the best local maxima, one-sided limits
  at kinks and finite ends, and values at ``|x| = 1e8 .. 1e64`` (growing without bound -> ``inf``).
* **Arb (python-flint) where it applies** (:mod:`rdpsym.numeric.fast`): ``log P`` and ``log Q``
  are compiled once per symbolic pair (parameters as arguments) to Arb closures; scans, peak
  search, tail checks and the quadrature evaluate them in C. Points where Arb gives no finite real
  ball (zeros of P, undecidable Piecewise conditions, negative values) are evaluated with mpmath,
  and pairs with functions Arb is not taught (or ``RDPSYM_NUMERIC_BACKEND=mpmath``) use mpmath
  throughout. Floats inside P and Q are taken at their exact binary value.
* **Normalisers as sums or integrals** (:mod:`.normalisers`): a ``Sum`` or ``Integral`` free of
  ``x`` (the discrete Gaussian's sum over Z) is a parameter of the compiled pair and a number once
  per call (``mpmath.nsum`` / ``mpmath.quad`` at two precisions, under the step time limit); its
  error is carried into ``error``, and one that cannot be evaluated makes the result ``failed``.
* **Error estimate, Arb path:** when every piece is finite (exponentially decaying tails truncated,
  the cut checked against the scan so no far mode is lost), each piece is integrated by
  Gauss-Legendre with ``n`` and ``2n`` nodes (``n = 12, 24, ...``, doubled until the two agree to
  ``dps + 2`` digits, at most 384 nodes). Two rules: ``error = sum |I_n - I_2n|`` (an estimate of
  the *lower* rule's error, so a wide margin for the reported ``I_2n``) plus Arb's rigorous
  rounding radii, propagated to ``D``. One evaluation at ``wp1 = dps + 10`` digits suffices.
* **Error estimate, otherwise** (infinite pieces, a rule that did not converge, discrete sums):
  the computation runs twice: at ``wp1 = dps + 10`` and ``wp2 = dps + 20`` digits, the second with
  the width ``w`` (hence all breakpoints and cutoffs) scaled by 1.37, so the node sets differ.
  Continuous integrals use Gauss-Legendre for this pair; if the pair disagrees by more than the
  tolerance, a tanh-sinh pair replaces it (robust at endpoint singularities such as beta
  densities). ``error = max(|D1 - D2|, quadrature estimates, tail bounds)``.
* **Convergence rule:** ``converged`` is True iff ``error <= 10^(-0.6 dps) * max(|value|,
  10^(-0.4 dps))`` (60% of the requested digits relative to the value; absolute ``10^-dps`` for
  values near 0) and no doubt was raised (slowly decaying tails, summation cut short, a supremum
  that is only approached at infinity). ``inf`` results are reported with ``converged = True`` when
  the divergence is detected (the checks above), never from a value that merely grew large.

Layout: this driver (input checking, the pairs of evaluations, the convergence rule, the retry of the
near-one form) returns a :class:`~.value.NumericValue` from :mod:`.inputs` (the parameter values),
:mod:`.quantities` (what is computed), :mod:`.continuous` (integration),
:mod:`.discrete` (sums), :mod:`.kinks` (breakpoints), :mod:`.tails` (divergence detection) and
:mod:`.densities` over :mod:`.backends` (Arb, mpmath, or any registered backend).
"""

from __future__ import annotations

from dataclasses import replace

import mpmath
import sympy as sp

from ..specify.support import Support
from .continuous import continuous_once, continuous_prepare
from .densities import Densities, compiled_pair
from .discrete import discrete_once
from .inputs import exact_floats, parameter_substitution, substitute_values
from .kinks import kinks as find_kinks
from .products import product_divergence
from .normalisers import NormaliserError, abstract_normalisers, evaluate_normalisers
from .quantities import Quantity, quantity_for
from .scales import MAX_DIGITS, MorePrecision, magnitude
from .tails import Failed, Infinite
from .value import NumericValue

__all__ = ["numeric_divergence"]


# ----------------------------------------------------------------------------------------------
# Breakpoints
# ----------------------------------------------------------------------------------------------
def _modes(dens, intervals, kinks) -> list:
    """The modes of P and of Q (largest log density, scan + golden section), as breakpoints: where two
    densities sit far apart (Cauchy locations 0 and 200 at scale 1/2) the integrand has a feature at
    each, and the quadrature must not step over the one away from the integrand's peak."""
    from .continuous import find_peak

    out = []
    for which in (0, 1):
        def log_density(t, which=which):
            v = dens.logpq(t)[which]
            return v if not mpmath.isnan(v) else -mpmath.inf
        t, v, _ = find_peak(log_density, intervals, kinks, magnitude=dens.magnitude)
        # a mode at (or next to) a kink, e.g. a density's jump, is that kink: it is already a breakpoint
        if (t is not None and mpmath.isfinite(t) and mpmath.isfinite(v)
                and all(abs(t - k) > mpmath.mpf(10) ** -6 * max(1, abs(k)) for k in kinks)):
            out.append(t)
    return out


def _to_mpf_end(e, wp):
    if isinstance(e, mpmath.mpf):
        return e
    if e is sp.oo:
        return mpmath.inf
    if e is sp.S.NegativeInfinity:
        return -mpmath.inf
    return mpmath.mpf(sp.Float(e, wp + 5))


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------


def numeric_divergence(P, Q, x, support, alpha, values, dps: int = 50) -> NumericValue:
    r"""Numerically evaluate :math:`D_\alpha(P\|Q)` to about ``dps`` digits, with an error estimate.

    Parameters
    ----------
    P, Q : sympy expressions in ``x``; densities (continuous support) or pmfs (discrete support).
    x : the sympy Symbol of the variable.
    support : a sympy Set: ``S.Reals``, an ``Interval``, ``S.Integers``, ``S.Naturals0``,
        ``S.Naturals``, a ``Range``, a ``FiniteSet``, or a ``Union`` of pieces of one kind.
    alpha : order > 0; ``1`` gives KL; ``sympy.oo`` / ``mpmath.inf`` give :math:`D_\infty`.
    values : dict from parameter Symbols or their names to numbers (floats taken exactly).
    dps : decimal digits wanted.

    Returns a :class:`NumericValue`; see the module docstring for the method and the convergence rule.
    Raises ``ValueError`` for bad arguments (naming the argument). Normalisation of P and Q is not
    checked. A normaliser written as a ``Sum`` or ``Integral`` free of ``x`` is evaluated once per
    call with its own error control, and its error enters ``error`` (:mod:`.normalisers`).

    ``x`` may be a tuple of up to :data:`~rdpsym.specify.variables.MAX_DIMENSION` real symbols with
    ``support`` a ``ProductSet`` of one-dimensional sets (``S.Reals**2``, ``ProductSet(Interval(0, 1),
    S.Naturals0)``): the divergence is then computed by iterated quadrature and sums
    (:mod:`.multivariate`). A tuple of one symbol is that symbol.
    """
    if isinstance(x, (tuple, list)):
        from ..specify.variables import as_variables, coordinate_supports

        variables = as_variables(x)
        if len(variables) > 1:
            from .multivariate import multivariate_divergence

            # densities that factor into coordinates: one-dimensional divergences, summed (.products)
            found = product_divergence(P, Q, variables, support, alpha, values, dps, numeric_divergence)
            if found is not None:
                return found
            return multivariate_divergence(P, Q, variables, support, alpha, values, dps)
        x, support = variables[0], coordinate_supports(support, 1)[0]
    if not isinstance(x, sp.Symbol):
        raise ValueError(f"x must be a sympy Symbol, found {type(x).__name__}.")
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 5:
        raise ValueError(f"dps must be an int >= 5, found {dps!r}.")
    quantity = quantity_for(alpha)
    if not isinstance(support, sp.Set):
        raise ValueError(f"support must be a sympy Set, found {type(support).__name__}.")
    for name, e in (("P", P), ("Q", Q)):
        if not isinstance(e, sp.Expr):
            raise ValueError(f"{name} must be a sympy expression in {x}, found {type(e).__name__}.")
    # Floats inside P and Q are taken at their exact binary value, as parameter values are:
    # sympy would otherwise fold log(0.5) to a 15-digit Float, and every digit past the 16th
    # would be wrong while the two evaluations agree
    P, Q = exact_floats(P), exact_floats(Q)
    # normalisers written as sums or integrals are constants of the pair: symbols for the compiled
    # backends, numbers (evaluated once per parameter point, errors carried) for everything else
    abst = abstract_normalisers(P, Q, x)
    compiled = compiled_pair(abst.P, abst.Q, x)
    Ps, Qs, support = substitute_values(P, Q, x, support, values)  # checks the values (ValueError)
    exact = parameter_substitution(P, Q, x, values)
    P, Q = Ps, Qs
    norm = None
    if abst.atoms:
        try:
            norm = evaluate_normalisers(abst, exact, dps)
        except NormaliserError as exc:
            return NumericValue.failed(dps, str(exc))
        exact = {**exact, **norm.exact}
        P, Q = abst.P.subs(exact), abst.Q.subs(exact)
    if P == Q:
        # compared by structure, no simplifier: equal is certain, unequal only 'not shown'; after the
        # normalisers, whose failure (a divergent sum) is reported first, and whose notes are kept
        same = NumericValue.identical(dps)
        return replace(same, detail=same.detail + "".join("; " + n for n in norm.notes)) if norm else same
    sub = None
    if compiled is not None:
        sub = {s: exact[s] for s in (compiled[2].free_symbols | compiled[3].free_symbols) - {x}}
    extra = (P.free_symbols | Q.free_symbols) - {x}
    if extra:
        raise ValueError(f"values is missing parameter(s) {', '.join(sorted(s.name for s in extra))}.")
    support = Support.of(support, numbers=True)
    P = P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P
    Q = Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q
    dens = Densities(P, Q, x, dps + 45, compiled, sub)
    with mpmath.workdps(dps + 10):
        dens.magnitude = magnitude(P, Q, order=quantity.order())

    kinks_notes: list[str] = []
    # extra: digits beyond the plan's, asked for by the scale analysis (MorePrecision): every
    # evaluation of this call then runs with them, its preparation (kinks, peak, cuts) redone
    state = {"prep": None, "kinks": None, "extra": 0, "why": ""}

    def evaluate(q: Quantity, wp, jitter, rule, info=None):
        for _ in range(6):
            try:
                return evaluate_at(q, wp + state["extra"], jitter, rule, info)
            except MorePrecision as more:
                extra = more.digits - wp + 2
                if more.digits > MAX_DIGITS:
                    raise Failed(f"refused: {more.why}; computing it needs {more.digits} digits, more than "
                                 f"{MAX_DIGITS}") from None
                if extra <= state["extra"]:  # no progress: refuse rather than loop
                    raise Failed(f"refused: {more.why}; more precision does not settle it") from None
                state.update(extra=extra, prep=None, kinks=None, why=more.why)
        raise Failed(f"refused: {state['why']}; the precision needed does not settle")

    def evaluate_at(q: Quantity, wp, jitter, rule, info=None):
        with mpmath.workdps(wp):
            a = q.order()
            if support.is_continuous:
                intervals = []
                for lo, hi in support.spans:
                    lo, hi = _to_mpf_end(lo, wp), _to_mpf_end(hi, wp)
                    if hi > lo:
                        intervals.append((lo, hi))
                if not intervals:
                    raise ValueError("support has no interval of positive length.")
                if state["kinks"] is None:
                    kdps = dps + 35 + state["extra"]
                    with mpmath.workdps(kdps):
                        state["kinks"], notes = find_kinks(P, Q, x, kdps, intervals)
                        kinks_notes.extend(n for n in notes if n not in kinks_notes)
                        if not q.supremum:
                            state["kinks"] = sorted(set(state["kinks"]) | set(_modes(dens, intervals, state["kinks"])))
                if state["prep"] is None and not q.supremum:
                    state["prep"] = continuous_prepare(dens, intervals, state["kinks"], q, a)
                D, err, method, doubts = continuous_once(dens, intervals, state["kinks"], q, a, state["prep"], jitter, rule, info)
            else:
                D, err, method, doubts = discrete_once(dens, support, q, a)
            return +D, +err, method, doubts

    def tolerance(v):
        return mpmath.mpf(10) ** (-0.6 * dps) * max(abs(v), mpmath.mpf(10) ** (-0.4 * dps))

    # Pairs of independent evaluations: (precision, scale jitter, rule). Continuous: Gauss-Legendre
    # first (cheap for smooth pieces); if the pair disagrees, a tanh-sinh pair (robust at endpoint
    # singularities) replaces it. When every piece of the first evaluation went through Arb's
    # Gauss-Legendre (finite pieces: exponential tails truncated), that evaluation already holds two
    # independent rules (n and 2n nodes, doubled until they agree) and Arb's rigorous rounding
    # bounds: its error estimate stands alone and the second evaluation is skipped.
    wp1, wp2 = dps + 10, dps + 20
    plans = [[(wp1, mpmath.mpf(1), "gauss-legendre"), (wp2, mpmath.mpf("1.37"), "gauss-legendre")],
             [(wp1, mpmath.mpf(1), "tanh-sinh"), (wp2, mpmath.mpf("1.37"), "tanh-sinh")]]
    if not support.is_continuous or quantity.supremum:
        plans = plans[1:]

    def attempt(q: Quantity) -> NumericValue:
        single = False
        try:
            for plan in plans:
                info = {}
                results = [evaluate(q, *plan[0], info=info)]
                single = (plan[0][2] == "gauss-legendre" and info.get("arb", 0) > 0 and not info.get("mpmath")
                          and info.get("arb_converged", False))
                if not single:
                    results.append(evaluate(q, *plan[1]))
                with mpmath.workdps(dps + 30):
                    (D1, e1, method, doubts1), (D2, e2, _, doubts2) = results if not single else results * 2
                    error = max(abs(D1 - D2), e1, e2)
                    if norm is not None:
                        e_norm = norm.error_for(q, q.order(), D2)
                        if e_norm is None:
                            doubts2 = doubts2 + ["a normaliser enters P or Q other than as a constant factor: "
                                                 "its numerical error is not carried into the value"]
                        else:
                            error += e_norm
                    if error <= tolerance(D2):
                        break
        except Infinite as exc:
            return NumericValue.infinite(dps, str(exc))
        except Failed as exc:
            return NumericValue.failed(dps, str(exc))
        except (ArithmeticError, mpmath.libmp.NoConvergence) as exc:
            return NumericValue.failed(dps, f"numeric failure: {type(exc).__name__}: {exc}")
        with mpmath.workdps(dps + 30):
            tol = tolerance(D2)
            doubts = sorted(set(doubts1 + doubts2))
            converged = bool(error <= tol) and not doubts
            if single:
                method = method.replace("gauss-legendre", "Arb Gauss-Legendre (n vs 2n nodes)", 1)
                detail = (f"{method}; one evaluation at {plan[0][0] + state['extra']} digits: rules with n and 2n nodes differ by "
                          f"<= {mpmath.nstr(e1, 3)} (with Arb's rounding bounds)")
            else:
                detail = (f"{method}; two evaluations at {plan[0][0] + state['extra']} and {plan[1][0] + state['extra']} "
                          f"digits differ by {mpmath.nstr(abs(D1 - D2), 3)}")
            if state["extra"]:
                detail += f"; {state['extra']} more digits for this problem's scale ({state['why']})"
            if kinks_notes:
                detail += "; " + "; ".join(kinks_notes)
            if norm is not None:
                detail += "; " + "; ".join(norm.notes)
            if doubts:
                detail += "; NOT TRUSTED: " + "; ".join(doubts)
            elif not converged:
                detail += f"; NOT CONVERGED: error {mpmath.nstr(error, 3)} > tolerance {mpmath.nstr(tol, 3)}"
        return NumericValue.rounded(D2, error, dps, method, converged, detail)

    out = attempt(quantity)
    if not out.converged and quantity.retry() is not None:
        # the near-1 form failed: retry in plain log space (accurate when (alpha-1) D is large)
        state["prep"] = None
        retry = attempt(quantity.retry())
        if retry.converged:
            out = replace(retry, detail=retry.detail + "; plain log-space form (the near-1 form did not converge: "
                                                       + out.detail + ")")
    return replace(out, evaluations=dict(dens.counts))
