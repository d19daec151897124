r"""The RDP curve of a subsampled mechanism (:func:`rdpsym.subsample`), from its base's derivation.

For a base pair ``(P, Q) = (M(D), M(D'))`` the Poisson-subsampled outputs under add/remove neighbouring
are ``P`` and ``M_1 = (1 - q) P + q Q`` (and ``Q``, ``M_2 = (1 - q) Q + q P``: adjacency is symmetric);
the curve is the maximum of the four divergences over the base's adjacent pairs (Mironov 2017, Def. 4;
Mironov, Talwar & Zhang 2019, arXiv:1908.10530, Sect. 3). How each order is obtained:

* **Integer orders, mixture first** (``D_k(M_1 || P)``, 2 <= k <= :data:`BINOMIAL_MAX_ORDER`): exact, by
  the binomial expansion
  (Mironov, Talwar & Zhang 2019, Sect. 3.3; Zhu & Wang 2019, ICML, Sect. 3)

  .. math:: e^{(k-1) D_k(M_1\|P)} = E_P\Bigl[\bigl((1-q) + q\tfrac{Q}{P}\bigr)^k\Bigr]
            = \sum_{j=0}^{k} \binom{k}{j} (1-q)^{k-j} q^j e^{(j-1) D_j(Q\|P)},

  with ``e^{(j-1) D_j} = 1`` for j = 0, 1 and ``D_j(Q||P)`` the engine's derivation of the base pair
  (and ``D_j(P||Q)`` for ``M_2``). Every term is non-decreasing in ``D_j``, so when the base family's
  analysis showed every ``D_j`` non-decreasing in ``|t|`` so is the sum.
* **The other direction** (``D(P || M_1)``), **every non-integer order and the integer orders above
  :data:`BINOMIAL_MAX_ORDER`**: no finite expansion, or one of more terms than the numerics cost; the
  numeric maximum over the mixture pairs' directions (:func:`rdpsym.numeric.maximum.numeric_maximum`,
  certified 1-D quadrature, error shown), both directions and both mixtures.

Both need the supremum over neighbouring inputs. For listed pairs it is the maximum over them. For a
family of shifts ``t`` it is taken at the largest ``|t|`` when the base is a *location family of a
log-concave density* ``R`` on the real line (``Q_t(x) = R(x - t)``, ``-log R`` convex, shown
structurally): then ``R(x - t)/R(x)`` is monotone in x, the Neyman-Pearson tests are half-lines
(Karlin-Rubin), the trade-off curve ``T_t(a) = F(F^{-1}(1 - a) - |t|)`` decreases with ``|t|``, and by
Blackwell's theorem for dichotomies (Dong, Roth & Su 2022, JRSS-B, Thm. 2.10) a kernel K maps
``P -> P`` and ``Q_{t'} -> Q_t`` for ``|t| <= |t'|``. K is linear, so it maps the mixtures at ``t'``
onto those at ``t``, and the data-processing inequality (van Erven & Harremoës 2014, IEEE TIT, Thm. 9)
makes every direction, every order, non-decreasing in ``|t|``; at an open end the supremum is the
limit, the value at the end (lower semicontinuity, ibid. Thm. 15).

**Otherwise a bound** (status ``bound``): the subsampled curve is not computed but bounded from the
base's RDP curve ``eps`` (valid over all neighbours and both directions):

* Poisson / add-remove, integer ``k >= 2`` (Zhu & Wang 2019, ICML, Thm. 6, general upper bound):
  ``(1/(k-1)) log[(1-q)^{k-1}(kq - q + 1) + C(k,2) q^2 (1-q)^{k-2} e^{eps(2)}
  + 3 sum_{l=3}^k C(k,l) (1-q)^{k-l} q^l e^{(l-1) eps(l)}]``;
* without replacement / replace-one, integer ``k >= 2`` (Wang, Balle & Kasiviswanathan 2019, AISTATS,
  Thm. 9): ``(1/(k-1)) log[1 + q^2 C(k,2) min(4(e^{eps(2)} - 1), e^{eps(2)} min(2, (e^{eps(oo)} - 1)^2))
  + sum_{j=3}^k q^j C(k,j) e^{(j-1) eps(j)} min(2, (e^{eps(oo)} - 1)^j)]``;
* each also at most ``eps(k)`` itself (joint quasi-convexity, van Erven & Harremoës 2014, Thm. 13, and
  convexity in the second argument, Thm. 12);
* a non-integer order ``a > 2`` by linear interpolation of ``(a - 1) eps'(a)`` between the integers
  around it, an upper bound because ``(a - 1) D_a`` is convex in a (van Erven & Harremoës 2014, Thm. 11)
  and a supremum of convex functions is convex; ``a in (1, 2)`` between ``(1, 0)`` and ``2``, giving
  ``eps'(2)``; ``a <= 1`` by monotonicity in the order (ibid. Thm. 3): ``eps'(2)``.

``D_oo`` (Poisson) is exact: ``log(1 - q + q e^{eps(oo)})`` (the mixture-first direction; the other is
``-log(1 - q + q e^{-eps(oo)})``, smaller); without replacement it is the bound
``log(1 + q(e^{eps(oo)} - 1))`` (Balle, Barthe & Gaboardi 2018, NeurIPS, Thm. 9).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Mapping

import mpmath
import sympy as sp

from .._cache import Memo
from .._numbers import ArgumentError
from ..numeric.maximum import Direction, numeric_maximum
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import AdjacentPair, Mechanism
from .numeric_values import CurveValue, numeric_digits
from .pairs import pair_results
from .result import DivergenceResult, Provenance, Status, Step
from .sign import decide, sign
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["SubsampledCurve", "subsampled_rdp", "worst_mixture_pairs", "location_log_concave", "BINOMIAL_MAX_ORDER"]

#: the largest integer order computed exactly by the binomial expansion: it has k + 1 terms, each an exact
#: evaluation of the base's D_j (a few milliseconds), so k = 1000 costs seconds and k = 10^6 hours, while
#: the certified quadrature of the mixture takes about a second at any order. A count of terms, not seconds.
BINOMIAL_MAX_ORDER = 128


# --------------------------------------------------------------------------------------------------
# the supremum over neighbours: location families of log-concave densities
# --------------------------------------------------------------------------------------------------
def _affine(e: sp.Expr, x: sp.Symbol) -> bool:
    try:
        return sp.Poly(e, x).degree() <= 1
    except sp.PolynomialError:
        return False


def _convex(e: sp.Expr, x: sp.Symbol) -> str | None:
    """Why ``e`` is convex in x on the reals (structurally), or None."""
    if not e.has(x):
        return "constant"
    if _affine(e, x):
        return "affine"
    if isinstance(e, sp.Add):
        whys = [_convex(a, x) for a in e.args]
        return "a sum of convex terms" if all(whys) else None
    if isinstance(e, sp.Mul):
        k, rest = e.as_independent(x, as_Add=False)
        if k != 1 and sign(k) == 1 and _convex(rest, x):
            return "a positive multiple of a convex function"
        return None
    if isinstance(e, sp.Abs) and _affine(e.args[0], x):
        return "|affine|"
    if isinstance(e, sp.Pow) and e.exp.is_number and decide(e.exp - 1, "nonnegative") and (
            isinstance(e.base, sp.Abs) and _affine(e.base.args[0], x)
            or (e.exp.is_even and _affine(e.base, x))):
        return "a power >= 1 of |affine|"
    if isinstance(e, sp.Max) and all(_convex(a, x) for a in e.args):
        return "a maximum of convex functions"
    if not e.has(sp.Abs, sp.Piecewise, sp.sign, sp.Min, sp.Max, sp.floor, sp.ceiling):
        d2 = sp.simplify(sp.diff(e, x, 2))
        if decide(d2, "nonnegative"):
            return f"second derivative {sp.sstr(d2)} >= 0"
    return None


def location_log_concave(family: AdjacentFamily, x: sp.Symbol, support: sp.Set) -> str | None:
    """Why ``family`` is a location family ``(R, R(x - t))`` of a log-concave density R on the real
    line (one of P, Q free of t, the other its translate by t; ``-log R`` convex in x), or None."""
    if support != sp.S.Reals:
        return None
    t = family.shift
    for R, S, names in ((family.P, family.Q, ("P", "Q")), (family.Q, family.P, ("Q", "P"))):
        if R.has(t) or sp.simplify(S - R.subs(x, x - t)) != 0:
            continue
        why = _convex(sp.expand_log(-sp.log(R), force=True), x)
        if why is not None:
            return (f"{names[1]} = {names[0]}(x - {t}) and -log {names[0]} is convex in {x} ({why}): a location "
                    "family of a log-concave density")
    return None


def _ends(family: AdjacentFamily, x: sp.Symbol) -> list[sp.Expr] | None:
    """The shifts where a quantity non-decreasing in |t| on each side of 0 takes its supremum."""
    a, b = family.ends
    if decide(a, "nonnegative"):
        ends = [b]
    elif decide(b, "nonpositive"):
        ends = [a]
    elif decide(a, "negative") and decide(b, "positive"):
        ends = [a, b]
        R = family.P if not family.P.has(family.shift) else family.Q
        if decide(a + b, "zero") and decide(R.subs(x, -x) - R, "zero"):
            ends = [b]  # x -> -x maps the pairs at -b onto those at b (R even), mixtures included
    else:
        return None
    return ends


# --------------------------------------------------------------------------------------------------
# the curve
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Member:
    """A base pair at the supremum with its derived divergences ``D(P||Q)``, ``D(Q||P)``."""

    pair: AdjacentPair
    forward: DivergenceResult
    backward: DivergenceResult


@dataclass(frozen=True)
class SubsampledCurve:
    """Values of a subsampled mechanism's curve (the module docstring says how each order is obtained).

    ``exact``: the supremum over neighbours is shown for every direction (``members`` are the base
    pairs where it is taken, with their derived divergences); else every value is the bound.
    """

    mechanism: Mechanism
    base_result: DivergenceResult
    exact: bool
    members: tuple[_Member, ...] = ()

    @property
    def spec(self):
        return self.mechanism.subsampling

    def _q(self, values: Mapping) -> sp.Expr:
        spec = self.spec
        if spec.value is not None:
            return spec.value
        if spec.rate.name not in values:
            raise ValueError(f"{self.mechanism.name}: no value given for {spec.rate.name}")
        return sp.S(values[spec.rate.name])

    def _base_values(self, r: DivergenceResult, values: Mapping) -> dict:
        names = {s.name for s in r.symbols}
        return {k: v for k, v in values.items() if k in names}

    def value(self, result: DivergenceResult, a: sp.Expr, values: Mapping, dps: int) -> CurveValue:
        q = self._q(values)
        if q == 0:  # both outputs are the base's output on D: the divergence is 0
            return CurveValue(mpmath.mpf(0), mpmath.mpf(0), dps, "q = 0: P = Q", True)
        if q == 1:  # the mixtures are the base's pairs themselves
            cv = self.base_result.evaluate_with_error(a, dps, **self._base_values(self.base_result, values))
            return CurveValue(cv.value, cv.error, dps, f"q = 1: the base mechanism ({cv.method})", cv.exact,
                              cv.detail, cv.bound)
        if self.exact:
            try:
                return self._exact(a, q, values, dps)
            except ArithmeticError as exc:
                why = f"not computed exactly ({exc})"
        else:
            why = "the supremum over neighbouring inputs is not shown for every direction"
        return self._bound(a, q, values, dps, why)

    # -- exact (binomial expansion) and certified numerics ---------------------------------------------
    def _binomial(self, k: int, q, r: DivergenceResult, values: Mapping, wp: int):
        """D_k(mixture || X) by the binomial expansion of r = D(Y||X): (value, error, exact)."""
        vals = self._base_values(r, values)
        with mpmath.workdps(wp):
            qm = mpmath.mpf(sp.Rational(q).p) / sp.Rational(q).q if q.is_Rational else mpmath.mpf(sp.N(q, wp))
            terms = [(1 - qm) ** k, k * (1 - qm) ** (k - 1) * qm]
            err, exact = mpmath.mpf(0), True
            for j in range(2, k + 1):
                cv = r.evaluate_with_error(j, wp, **vals)
                if cv.value == mpmath.inf:
                    return mpmath.inf, mpmath.mpf(0), cv.exact
                err, exact = max(err, cv.error), exact and cv.exact
                terms.append(mpmath.binomial(k, j) * (1 - qm) ** (k - j) * qm ** j * mpmath.exp((j - 1) * cv.value))
            # d value / d D_j = w_j (j-1)/(k-1) with weights w_j summing to at most 1: error <= max error
            return mpmath.log(mpmath.fsum(terms)) / (k - 1), err, exact

    def _exact(self, a, q, values: Mapping, dps: int) -> CurveValue:
        wp = numeric_digits(dps)
        x, support = self.mechanism.variable, self.mechanism.support
        parts = []  # (label, value, error, exact)
        dirs = []  # the directions without an exact value: the numeric maximum over them
        for m in self.members:
            P, Q = m.pair.P, m.pair.Q
            for X, Y, r, name in ((P, Q, m.backward, "P"), (Q, P, m.forward, "Q")):
                M = (1 - q) * X + q * Y
                where = f"[{m.pair.label}]"
                if a.is_Integer and 2 <= a <= BINOMIAL_MAX_ORDER:
                    v, e, ex = self._binomial(int(a), q, r, values, wp + 10)
                    parts.append((f"D(M||{name}) {where} by the binomial expansion", v, e, ex))
                    dirs.append(Direction(X, M, x, support, f"D({name}||M) {where}"))
                else:
                    dirs += [Direction(M, X, x, support, f"D(M||{name}) {where}"),
                             Direction(X, M, x, support, f"D({name}||M) {where}")]
        found = numeric_maximum(dirs, a, values, wp)
        if not found.converged:
            raise ArithmeticError(f"the numeric path did not converge: {found.describe_failures()}")
        parts += [(label + " by the numeric path", nv.value, nv.error, False) for label, nv in found.parts]
        with mpmath.workdps(wp + 10):
            if any(v == mpmath.inf for _, v, _, _ in parts):
                top = next(p for p in parts if p[1] == mpmath.inf)
                return CurveValue(mpmath.inf, mpmath.mpf(0), dps, top[0], top[3])
            top = max(parts, key=lambda p: p[1])
            error = max(p[2] for p in parts)
            if error > mpmath.mpf(10) ** (-dps) * max(abs(top[1]), 1):
                raise ArithmeticError(f"the numeric error {mpmath.nstr(error, 3)} exceeds the {dps} digits asked for")
            # exact when an exact part is the top and every numeric one is below it by more than the errors
            exact = top[3] and all(p[3] or p[1] + p[2] < top[1] - top[2] for p in parts)
            if exact:
                error = top[2] + abs(top[1]) * mpmath.mpf(10) ** (1 - dps)
            detail = "; ".join(f"{lab}: {mpmath.nstr(v, 15)}" for lab, v, _, _ in parts)
        with mpmath.workdps(dps):
            return CurveValue(+top[1], +error, dps, top[0], exact, detail)

    # -- the bound from the base's curve ---------------------------------------------------------------
    def _bound(self, a, q, values: Mapping, dps: int, why: str) -> CurveValue:
        base = self.base_result
        vals = self._base_values(base, values)
        wp = dps + 10
        eps_cache: dict = {}

        def eps(j):
            if j not in eps_cache:
                cv = base.evaluate_with_error(j, wp, **vals)
                eps_cache[j] = cv.value + cv.error  # an upper bound of eps(j)
            return eps_cache[j]

        with mpmath.workdps(wp):
            qm = mpmath.mpf(sp.N(q, wp + 10))

            def at_integer(k: int):
                if k == 1:
                    return at_integer(2)
                C = mpmath.binomial
                if self.spec.scheme == "poisson":
                    s = (1 - qm) ** (k - 1) * (k * qm - qm + 1) + C(k, 2) * qm ** 2 * (1 - qm) ** (k - 2) * mpmath.exp(eps(2))
                    s += 3 * mpmath.fsum(C(k, j) * (1 - qm) ** (k - j) * qm ** j * mpmath.exp((j - 1) * eps(j))
                                         for j in range(3, k + 1))
                else:
                    e_inf = eps(sp.oo)
                    lev = mpmath.inf if e_inf == mpmath.inf else mpmath.expm1(e_inf)
                    e2 = eps(2)
                    s = 1 + qm ** 2 * C(k, 2) * min(4 * mpmath.expm1(e2), mpmath.exp(e2) * min(2, lev ** 2))
                    s += mpmath.fsum(qm ** j * C(k, j) * mpmath.exp((j - 1) * eps(j)) * min(2, lev ** j)
                                     for j in range(3, k + 1))
                return min(mpmath.log(s) / (k - 1), eps(k))

            if a == sp.oo:
                v = mpmath.log(1 + qm * mpmath.expm1(eps(sp.oo))) if eps(sp.oo) != mpmath.inf else mpmath.inf
                how = "log(1 + q (e^eps(oo) - 1))"
            elif a.is_Integer and a >= 2:
                v, how = at_integer(int(a)), ("Zhu & Wang 2019, Thm. 6" if self.spec.scheme == "poisson"
                                              else "Wang, Balle & Kasiviswanathan 2019, Thm. 9")
            elif a <= 2:
                v, how = at_integer(2), "the bound at alpha = 2 (D_alpha is non-decreasing in alpha)"
            else:
                lo, hi = int(sp.floor(a)), int(sp.ceiling(a))
                am = mpmath.mpf(sp.Rational(a).p) / sp.Rational(a).q if a.is_Rational else mpmath.mpf(sp.N(a, wp))
                g = (hi - am) * (lo - 1) * at_integer(lo) + (am - lo) * (hi - 1) * at_integer(hi)
                v, how = g / (am - 1), f"linear interpolation of (alpha-1) eps between {lo} and {hi} (convexity)"
            if a != sp.oo and v != mpmath.inf:
                base_a = base.evaluate_with_error(a, wp, **vals)
                v = min(v, base_a.value + base_a.error)  # never above the base mechanism's curve
        with mpmath.workdps(dps):
            # rounded up: a bound stays a bound after rounding to dps digits
            out = +v if v == mpmath.inf else +(v + abs(v) * mpmath.mpf(10) ** (1 - dps))
            return CurveValue(out, mpmath.mpf(0) if v == mpmath.inf else abs(v) * mpmath.mpf(10) ** (1 - dps),
                              dps, f"bound: {how}", False, why, True)


# --------------------------------------------------------------------------------------------------
# the derivation
# --------------------------------------------------------------------------------------------------
_MEMO = Memo(accept=lambda found: "timed out" not in found[2], maxsize=64)


def _analyse(mechanism: Mechanism, step_seconds, cache) -> tuple[list[_Member] | None, list[Step], str]:
    """The base pairs at the supremum over neighbours with their derived divergences, or None (why);
    kept in an in-process memo."""
    return _MEMO.get_or_compute((mechanism, step_seconds, cache), lambda: _find(mechanism, step_seconds, cache))


def _find(mechanism: Mechanism, step_seconds, cache) -> tuple[list[_Member] | None, list[Step], str]:
    from .._timeout import check_seconds, default_step_seconds

    seconds = check_seconds(step_seconds) if step_seconds is not None else default_step_seconds()

    spec = mechanism.subsampling
    base = spec.base
    x, support = base.variable, base.support
    steps: list[Step] = []
    if spec.scheme != "poisson":
        return None, steps, ("sampling without replacement under replace-one neighbouring: the mixture pairs "
                             "are one instance of the relation, not its worst case")
    pairs: list[AdjacentPair] = []
    for item in base.pairs:
        if not isinstance(item, AdjacentFamily):
            pairs.append(item)
            continue
        started = time.perf_counter()
        try:
            why = run_with_time_limit(location_log_concave, item, x, support, seconds=seconds)
            ends = run_with_time_limit(_ends, item, x, seconds=seconds) if why else None  # it simplifies
        except StepTimeout:
            return None, steps, f"family [{item.label}]: the location-family test timed out after {seconds:g} s"
        if why is None or ends is None:
            return None, steps, f"family [{item.label}]: not shown to be a location family of a log-concave density"
        pairs += [AdjacentPair(item.P.subs(item.shift, e), item.Q.subs(item.shift, e), f"{item.label}; {item.shift} = "
                               f"{sp.sstr(e)}") for e in ends]
        steps.append(Step("supremum over neighbours", f"[{item.label}] {why}: by Blackwell's theorem (Dong, Roth & "
                          "Su 2022, Thm. 2.10) and data processing (van Erven & Harremoës 2014, Thm. 9) every "
                          "divergence of the mixtures, every order and direction, is non-decreasing in |t|: "
                          f"taken at {item.shift} = {', '.join(map(sp.sstr, ends))}", time.perf_counter() - started))
    members = []
    for pair in pairs:
        results, notes = pair_results(pair.P, pair.Q, pair.label, x, support, base.parameters, step_seconds, cache)
        steps += notes
        members.append(_Member(pair, results[0], results[-1]))
    steps.append(Step("integer orders", f"D_k(mixture || X) for 2 <= k <= {BINOMIAL_MAX_ORDER} by the binomial "
                      "expansion sum_j C(k, j) "
                      "(1-q)^(k-j) q^j exp((j-1) D_j) of the base pair's derived divergences (Mironov, Talwar & "
                      "Zhang 2019, Sect. 3.3); each term is non-decreasing in D_j, hence in |t| where the base D_j is"))
    return members, steps, ""


def subsampled_rdp(mechanism: Mechanism, rdp: Callable[..., DivergenceResult], *, step_seconds: float | None = None,
                   cache: bool = True) -> DivergenceResult:
    """The RDP curve of a subsampled mechanism (``mechanism.subsampling`` set by :func:`rdpsym.subsample`),
    from its base's curve ``rdp(base, step_seconds=..., cache=...)``: :func:`rdpsym.derive.mechanism_rdp.rdp`,
    handed over by it (this module sits below it).

    ``numeric_only`` (a curve: exact at integer orders in the mixture-first direction, certified numerics
    elsewhere, maximum over every direction) when the supremum over neighbours is shown, else ``bound``
    (Zhu & Wang 2019, Thm. 6; Wang, Balle & Kasiviswanathan 2019, Thm. 9): see the module docstring.
    """
    spec = mechanism.subsampling
    if spec is None:
        raise ArgumentError("mechanism", "a subsampled mechanism (made by rdpsym.subsample)", mechanism.name)
    started = time.perf_counter()
    base_result = rdp(spec.base, step_seconds=step_seconds, cache=cache)
    steps = [Step("base", f"rdp({spec.base.name}): {base_result.status}", time.perf_counter() - started)]
    members, more, why = _analyse(mechanism, step_seconds, cache)
    steps += more
    exact = members is not None
    qs = spec.rate.symbol if spec.value is None else spec.value
    e_inf = base_result.max_divergence
    max_div = None
    if e_inf is not None:
        max_div = sp.oo if e_inf == sp.oo else sp.log(1 - qs + qs * sp.exp(e_inf))
        if e_inf == sp.oo and spec.value is None:
            max_div = sp.Piecewise((0, sp.Eq(qs, 0)), (sp.oo, True))
        elif e_inf == sp.oo and spec.value == 0:
            max_div = sp.S.Zero
    if exact:
        steps.append(Step("other orders", "D(X || mixture) at every order and D(mixture || X) at non-integer "
                          "orders by the numeric path on the mixture pairs (certified quadrature, error shown); "
                          "the maximum over both mixtures and both directions; D_oo = log(1 - q + q exp(eps(oo)))"))
        status, reason = Status.NUMERIC_ONLY, f"subsampled: exact at integer orders up to {BINOMIAL_MAX_ORDER} (mixture first), numeric elsewhere"
    else:
        how = ("Zhu & Wang 2019 (ICML), Thm. 6" if spec.scheme == "poisson"
               else "Wang, Balle & Kasiviswanathan 2019 (AISTATS), Thm. 9")
        steps.append(Step("bound", f"{why}: every order bounded from the base's curve: {how} at integer orders, "
                          "linear interpolation of (alpha - 1) eps between them (van Erven & Harremoës 2014, "
                          "Thm. 11), at most the base's curve"))
        status, reason = Status.BOUND, f"subsampled: upper bound ({why})"
    symbols = tuple(p.symbol for p in mechanism.parameters)
    curve = SubsampledCurve(mechanism, base_result, exact, tuple(members or ()))
    return DivergenceResult(
        expr=None, status=status, reason=reason, max_divergence=max_div, symbols=symbols,
        provenance=Provenance(tuple(steps), base_result.provenance.inputs + (("mechanism", mechanism.name),),
                              base_result.provenance.versions, expired=base_result.provenance.expired),
        label=f"RDP of {mechanism.name}", domains=tuple((p.symbol, p.domain) for p in mechanism.parameters),
        mechanism=mechanism, curve=curve)


def worst_mixture_pairs(mechanism: Mechanism, *, step_seconds: float | None = None,
                        cache: bool = True) -> tuple[AdjacentPair, ...]:
    """The subsampled pairs ``(X, (1-q) X + q Y)`` at the base pairs where the supremum over neighbours is
    shown (:func:`location_log_concave`); ``ArgumentError`` when it is not."""
    spec = mechanism.subsampling
    members, _, why = _analyse(mechanism, step_seconds, cache)
    if members is None:
        raise ArgumentError(f"mechanism {mechanism.name!r}", "a mechanism whose supremum over neighbours is shown",
                            message=f"mechanism {mechanism.name!r}: {why}; its curve is a bound")
    qs = spec.rate.symbol if spec.value is None else spec.value
    return tuple(AdjacentPair(X, (1 - qs) * X + qs * Y, f"subsampled: {m.pair.label}")
                 for m in members for X, Y in ((m.pair.P, m.pair.Q), (m.pair.Q, m.pair.P)))
