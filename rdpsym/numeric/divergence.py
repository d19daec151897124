r"""Independent numeric evaluation of Rényi divergences.

This module is the *numeric* path that checks rdpsym's symbolic closed forms. For densities (or
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
  the divergence test is conclusive (see above), with the reason in ``detail``.
"""

from __future__ import annotations

import contextvars
import functools
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Mapping

import mpmath
import sympy as sp
from sympy.codegen.cfunctions import expm1 as _expm1

from ..specify.params import check_assumptions
from . import fast as _fast

__all__ = ["NumericValue", "numeric_divergence"]


@dataclass(frozen=True)
class NumericValue:
    """A numeric divergence with its error estimate.

    ``value`` is an ``mpmath.mpf`` (possibly ``mpmath.inf``), never NaN; ``error`` an absolute error
    estimate (``inf`` when nothing could be computed: then ``value`` is 0 and meaningless); ``dps`` the requested decimal digits; ``method`` a short name of the algorithm;
    ``converged`` whether ``error`` meets the rule in the module docstring; ``detail`` a human
    readable account (and the reason when not converged).
    """

    value: mpmath.mpf
    error: mpmath.mpf
    dps: int
    method: str
    converged: bool
    detail: str


class _Infinite(Exception):
    """Raised inside an evaluation when the divergence is certainly infinite."""


class _Failed(Exception):
    """Raised when a quantity cannot be computed (P negative, evaluation error, ...)."""


# ----------------------------------------------------------------------------------------------
# Input handling
# ----------------------------------------------------------------------------------------------


def _exact(v: Any, name: str) -> sp.Expr:
    """A number as an exact sympy number (floats and mpfs are taken at their exact binary value)."""
    if isinstance(v, bool):
        raise ValueError(f"values[{name!r}] must be a number, found bool {v!r}.")
    if isinstance(v, sp.Basic):
        if v.has(sp.nan, sp.zoo) or v.is_finite is False:
            raise ValueError(f"values[{name!r}] must be a finite real number, found {v!r}.")
        if v.is_number and v.is_real is not False:
            return v
        raise ValueError(f"values[{name!r}] must be a real number, found {v!r}.")
    if isinstance(v, int):
        return sp.Integer(v)
    if isinstance(v, Fraction):
        return sp.Rational(v.numerator, v.denominator)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"values[{name!r}] must be finite, found {v!r}.")
        n, d = v.as_integer_ratio()
        return sp.Rational(n, d)
    if isinstance(v, mpmath.mpf):
        if not mpmath.isfinite(v):
            raise ValueError(f"values[{name!r}] must be finite, found {v!r}.")
        man, exp = v.man_exp
        return sp.Integer(man) * sp.Integer(2) ** exp
    raise ValueError(f"values[{name!r}] must be an int, float, Fraction, mpf or sympy number, found {type(v).__name__}.")


def _exact_floats(e: sp.Expr) -> sp.Expr:
    """e with every sympy Float replaced by the Rational of its exact binary value."""
    floats = e.atoms(sp.Float)
    return e.xreplace({f: sp.Rational(f) for f in floats}) if floats else e


def _parse_alpha(alpha: Any) -> tuple[str, Any]:
    """Return ('inf', None), ('kl', None) or ('finite', exact sympy number)."""
    if alpha is sp.oo or (isinstance(alpha, mpmath.mpf) and alpha == mpmath.inf) or (
        isinstance(alpha, float) and alpha == math.inf
    ):
        return "inf", None
    try:
        a = _exact(alpha, "alpha")
    except ValueError:
        raise ValueError(f"alpha must be a number > 0 or infinity, found {alpha!r}.") from None
    if a.is_comparable is not True or not a > 0:
        raise ValueError(f"alpha must be > 0 (Rényi orders are positive), found {alpha!r}.")
    if a == 1:
        return "kl", None
    return "finite", a


def _substitute(P, Q, x, support, values) -> tuple[sp.Expr, sp.Expr, sp.Set]:
    if not isinstance(values, Mapping):
        raise ValueError(f"values must be a dict from parameter symbols or names to numbers, found {type(values).__name__}.")
    by_name = {}
    for k, v in values.items():
        key = k.name if isinstance(k, sp.Symbol) else k
        if not isinstance(key, str):
            raise ValueError(f"values keys must be sympy Symbols or str, found {k!r}.")
        by_name[key] = v
    free = (P.free_symbols | Q.free_symbols | support.free_symbols) - {x}
    missing = sorted(s.name for s in free if s.name not in by_name)
    if missing:
        raise ValueError(f"values is missing parameter(s) {', '.join(missing)}: P and Q must depend on {x} only after substitution.")
    sub = {s: _exact(by_name[s.name], s.name) for s in free}
    for sym, v in sub.items():
        check_assumptions(sym, v, f"values[{sym.name!r}]")
    return P.subs(sub), Q.subs(sub), support.subs(sub)


def _substitution(P, Q, x, support, values) -> dict:
    """The exact values of the parameters of P and Q (symbol -> sympy number), as _substitute uses."""
    by_name = {(k.name if isinstance(k, sp.Symbol) else k): v for k, v in values.items()}
    free = (P.free_symbols | Q.free_symbols) - {x}
    return {s: _exact(by_name[s.name], s.name) for s in free}


def _compiled_pair(P: sp.Expr, Q: sp.Expr, x: sp.Symbol):
    """log P and log Q compiled to Arb once per *symbolic* pair (parameters as arguments), or None
    (python-flint missing, ``RDPSYM_NUMERIC_BACKEND=mpmath``, or a function Arb is not taught).

    The log-forms are those of :func:`_log_expr`, built before substitution: every point of a sweep
    over parameters and orders reuses one compilation (lambdifying per point cost more than the
    integration)."""
    if not _fast.available():
        return None
    return _compiled_pair_cached(P, Q, x)


@functools.lru_cache(maxsize=64)
def _compiled_pair_cached(P: sp.Expr, Q: sp.Expr, x: sp.Symbol):
    P = P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P
    Q = Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q
    xr = sp.Dummy("x", real=True)
    try:
        lp = _log_expr(P.subs(x, xr)).subs(xr, x)
        lq = _log_expr(Q.subs(x, xr)).subs(xr, x)
    except Exception:  # any sympy trouble: mpmath alone
        return None
    params = tuple(sorted((lp.free_symbols | lq.free_symbols) - {x}, key=lambda s: s.name))
    return _fast.compile_log_pair(lp, lq, x, params)


def _flatten_support(support: sp.Set) -> tuple[str, list]:
    """Classify the support: ('continuous', [(a, b), ...]) or ('discrete', [pieces])."""
    if not isinstance(support, sp.Set):
        raise ValueError(f"support must be a sympy Set (Reals, Interval, Integers, Naturals0, Range, FiniteSet or a Union of them), found {type(support).__name__}.")
    pieces = list(support.args) if isinstance(support, sp.Union) else [support]
    cont, disc = [], []
    for s in pieces:
        if s == sp.S.Reals:
            cont.append((-mpmath.inf, mpmath.inf))
        elif isinstance(s, sp.Interval):
            cont.append((s.start, s.end))
        elif s == sp.S.Integers:
            disc += [("prog", sp.Integer(0), 1), ("prog", sp.Integer(-1), -1)]
        elif s == sp.S.Naturals0:
            disc.append(("prog", sp.Integer(0), 1))
        elif s == sp.S.Naturals:
            disc.append(("prog", sp.Integer(1), 1))
        elif isinstance(s, sp.Range):
            step = abs(s.step)
            if s.inf.is_infinite and s.sup.is_infinite:
                disc += [("prog", sp.Integer(0), step), ("prog", -step, -step)]
            elif s.sup.is_infinite:
                disc.append(("prog", s.inf, step))
            elif s.inf.is_infinite:
                disc.append(("prog", s.sup, -step))
            else:
                disc.append(("finite", list(s)))
        elif isinstance(s, sp.FiniteSet):
            disc.append(("finite", list(s.args)))
        elif s == sp.S.EmptySet:
            continue
        else:
            raise ValueError(f"support piece {s} is not supported (use Reals, Interval, Integers, Naturals0, Naturals, Range, FiniteSet or a Union of them).")
    if cont and disc:
        raise ValueError("support mixes continuous and discrete pieces; the union must be of one kind.")
    if not cont and not disc:
        raise ValueError("support is empty.")
    if cont:
        for a, b in cont:
            for e in (a, b):
                if not (e in (mpmath.inf, -mpmath.inf) or (isinstance(e, sp.Basic) and (e.is_number))):
                    raise ValueError(f"support end {e} is not a number after substituting values.")
        return "continuous", cont
    return "discrete", disc


# ----------------------------------------------------------------------------------------------
# Evaluation of log P, log Q
# ----------------------------------------------------------------------------------------------


def _log_expr(e: sp.Expr) -> sp.Expr:
    """log(e) pushed through products, powers, exp and Piecewise where that is valid for e >= 0.

    Products are split factor by factor (a negative factor then shows up as a complex value and the
    caller falls back to the numeric log); ``b**n`` with integer ``n`` is split only if ``b`` is
    provably positive.
    """
    if e.is_zero:
        return sp.S.NegativeInfinity
    if isinstance(e, sp.exp):
        return e.args[0]
    if isinstance(e, sp.Mul):
        return sp.Add(*[_log_expr(f) for f in e.args])
    if isinstance(e, sp.Pow):
        b, n = e.args
        if n.is_integer and not b.is_positive:
            return sp.log(e)
        return n * _log_expr(b)
    if isinstance(e, sp.Piecewise):
        return sp.Piecewise(*[(_log_expr(v), c) for v, c in e.args])
    return sp.log(e)



def _built_on_use(attribute: str) -> property:
    """A read-only property that builds the compiled functions (``self._build()``) before reading."""

    def get(self):
        self._build()
        return getattr(self, attribute)

    return property(get)

class _Densities:
    """Evaluators of P and Q and of their logarithms.

    Two implementations, the first that applies wins at each point:

    * Arb (python-flint, :mod:`rdpsym.numeric.fast`): ``log P`` and ``log Q`` compiled once per
      *symbolic* pair, bound to the parameter values and the precision. Used where both are finite
      real balls.
    * mpmath (``sympy.lambdify`` after exact substitution): everywhere else (zeros of P or Q,
      undecidable conditions, functions Arb is not taught, python-flint missing). Built on first
      use only, since lambdifying costs more than a whole fast evaluation.
    """

    def __init__(self, P: sp.Expr, Q: sp.Expr, x: sp.Symbol, digits: int):
        self.P, self.Q, self.x, self.digits = P, Q, x, digits
        self._built = False
        self._fast_forms = {}
        self._arb = None  # (Compiled, values) when the Arb path applies
        self._arb_bound = {}

    def with_arb(self, compiled, values):
        """A copy that evaluates with Arb first (sharing the lazily built mpmath evaluators)."""
        if compiled is None:
            return self
        other = _DensitiesView(self)
        other._arb = (compiled, values)
        return other

    def _build(self):
        if self._built:
            return
        P, Q, x, digits = self.P, self.Q, self.x, self.digits
        self._p_fn = sp.lambdify(x, P, modules="mpmath", docstring_limit=0)
        self._q_fn = sp.lambdify(x, Q, modules="mpmath", docstring_limit=0)
        # symbolic log-densities (constants folded to `digits` digits); used where they evaluate
        # to a real number, else the numeric log of P or Q is taken.
        xr = sp.Dummy("x", real=True)
        self._lp_fn = self._lq_fn = None
        self._built = True
        try:
            lp = _log_expr(P.subs(x, xr)).subs(xr, x).evalf(digits)
            lq = _log_expr(Q.subs(x, xr)).subs(xr, x).evalf(digits)
            self._lp_fn = sp.lambdify(x, lp, modules="mpmath", docstring_limit=0)
            self._lq_fn = sp.lambdify(x, lq, modules="mpmath", docstring_limit=0)
        except Exception:  # any sympy trouble: stay with numeric logs
            self._lp_fn = self._lq_fn = None
            return
        self._lpq_expr = (lp, lq)

    # compiled densities and log-densities, built on first use
    _p = _built_on_use("_p_fn")
    _q = _built_on_use("_q_fn")
    _lp = _built_on_use("_lp_fn")
    _lq = _built_on_use("_lq_fn")

    # -- Arb path --------------------------------------------------------------------------------
    def _arb_eval(self, prec):
        """t (arb) -> (lp, lq) arb balls or None, bound at ``prec`` bits (cached per precision)."""
        ev = self._arb_bound.get(prec)
        if ev is None:
            compiled, values = self._arb
            ev = _fast.evaluator(*compiled.bind(values, prec), prec)
            self._arb_bound[prec] = ev
        return ev

    def arb_L(self, mode, a):
        """L of :func:`_make_L` computed in Arb: mpf t -> mpf, or None at points Arb cannot
        evaluate (the caller then uses mpmath). None when the Arb path does not apply."""
        if self._arb is None:
            return None
        consts = {}
        stats, to_arb, to_mpf, workprec = _fast.STATS, _fast.to_arb, _fast.to_mpf, _fast.flint.ctx.workprec

        def L(t):
            prec = mpmath.mp.prec + 16
            c = consts.get(prec)
            if c is None:
                with workprec(prec):
                    A = to_arb(a) if a is not None else None
                    c = consts[prec] = (self._arb_eval(prec), A, (1 - A) if A is not None else None)
            ev, A, A1 = c
            with workprec(prec):
                r = ev(to_arb(t))
                if r is None:
                    return None
                lp, lq = r
                if mode == "finite":
                    v = A * lp + A1 * lq
                elif mode == "ratio":
                    v = lp - lq
                elif mode == "klabs":
                    d = abs(lp - lq)
                    if not d > 0:
                        return None
                    v = lp + d.log()
                else:
                    v = lp
                stats["arb"] += 1
                return to_mpf(v)
        return L

    def arb_integrand(self, kind, a, shift, slow):
        """The integrand of ``kind`` as an arb -> arb function at the current mpmath precision
        (None when the Arb path does not apply). Points where Arb gives no finite real value are
        evaluated by ``slow`` (mpmath) instead."""
        if self._arb is None:
            return None
        prec = mpmath.mp.prec + 16
        ev = self._arb_eval(prec)
        with _fast.flint.ctx.workprec(prec):
            A, S = _fast.to_arb(a) if a is not None else None, _fast.to_arb(shift)
            A1 = (1 - A) if A is not None else None
            Am1 = (A - 1) if A is not None else None
        stats = _fast.STATS

        def fallback(t):
            stats["mpmath"] += 1
            return _fast.to_arb(mpmath.mpf(slow(_fast.to_mpf(t))))

        if kind == "finite":
            def g(t):
                r = ev(t)
                if r is None:
                    return fallback(t)
                return (A * r[0] + A1 * r[1] - S).exp()
        elif kind == "kl":
            def g(t):
                r = ev(t)
                if r is None:
                    return fallback(t)
                lp, lq = r
                return (lp - S).exp() * (lp - lq)
        elif kind == "near1":
            def g(t):
                r = ev(t)
                if r is None:
                    return fallback(t)
                lp, lq = r
                return (lp - S).exp() * (Am1 * (lp - lq)).expm1()
        else:  # weight
            def g(t):
                r = ev(t)
                if r is None:
                    return fallback(t)
                return (r[0] - S).exp()
        return g

    def _fast_form(self, kind):
        """Lambdified one-expression integrand of the given kind, built on first use (or None)."""
        if kind not in self._fast_forms:
            self._fast_forms[kind] = None
            if self._lp is not None:
                lp, lq = self._lpq_expr
                A, S = sp.Dummy("a"), sp.Dummy("s")
                form = {
                    "finite": lambda: sp.exp(A * lp + (1 - A) * lq - S),
                    "kl": lambda: sp.exp(lp - S) * (lp - lq),
                    "near1": lambda: sp.exp(lp - S) * _expm1((A - 1) * (lp - lq)),
                    "weight": lambda: sp.exp(lp - S),
                }[kind]
                try:
                    self._fast_forms[kind] = sp.lambdify((self.x, A, S), form(), modules="mpmath", docstring_limit=0)
                except Exception:  # any sympy trouble: no fast path
                    pass
        return self._fast_forms[kind]

    def integrand(self, kind, a, shift, slow):
        """A one-expression mpmath integrand (fast path) that falls back to `slow` wherever the fast
        value is not a finite real number (zeros of P or Q, complex logs, NaN). The lambdified form is
        built at the first call (on the Arb path it is often never needed)."""
        mpf, isfinite = mpmath.mpf, mpmath.isfinite
        built = []

        stats = _fast.STATS

        def g(t):
            stats["mpmath"] += 1
            if not built:
                built.append(self._fast_form(kind))
            fast = built[0]
            if fast is None:
                return slow(t)
            try:
                v = fast(t, a, shift)
                if type(v) is mpf and isfinite(v):
                    return v
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                pass
            return slow(t)

        return g

    @staticmethod
    def _real(v, which, t):
        if isinstance(v, mpmath.mpc):
            if abs(v.imag) > abs(v.real) * mpmath.mpf(2) ** (-mpmath.mp.prec + 8) + mpmath.mpf(2) ** (-mpmath.mp.prec * 2):
                raise _Failed(f"{which}({mpmath.nstr(t, 8)}) is not real: {mpmath.nstr(v, 8)}")
            v = v.real
        v = mpmath.mpf(v)
        if mpmath.isnan(v):
            raise _Failed(f"{which}({mpmath.nstr(t, 8)}) is NaN")
        if v < 0:
            raise _Failed(f"{which}({mpmath.nstr(t, 8)}) = {mpmath.nstr(v, 8)} is negative")
        return v

    def pq(self, t):
        try:
            p = self._p(t)
            q = self._q(t)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError) as exc:
            raise _Failed(f"evaluating P, Q at x = {mpmath.nstr(t, 8)} failed: {exc}") from None
        return self._real(p, "P", t), self._real(q, "Q", t)

    def logpq(self, t):
        if self._arb is not None:
            prec = mpmath.mp.prec + 16
            ev = self._arb_eval(prec)
            with _fast.flint.ctx.workprec(prec):
                r = ev(_fast.to_arb(t))
            if r is not None:
                _fast.STATS["arb"] += 1
                return _fast.to_mpf(r[0]), _fast.to_mpf(r[1])
        _fast.STATS["mpmath"] += 1
        if self._lp is not None:
            try:
                lp, lq = self._lp(t), self._lq(t)
                if not isinstance(lp, mpmath.mpc) and not isinstance(lq, mpmath.mpc):
                    lp, lq = mpmath.mpf(lp), mpmath.mpf(lq)
                    if not (mpmath.isnan(lp) or mpmath.isnan(lq) or lp == mpmath.inf or lq == mpmath.inf):
                        return lp, lq
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                pass
        p, q = self.pq(t)
        lp = mpmath.log(p) if p > 0 else -mpmath.inf
        lq = mpmath.log(q) if q > 0 else -mpmath.inf
        return lp, lq


class _DensitiesView(_Densities):
    """A :class:`_Densities` with its own Arb binding that shares the base's mpmath evaluators."""

    def __init__(self, base: _Densities):  # noqa: D107 - shares state on purpose
        self.__dict__.update(base.__dict__)
        self._base = base
        self._arb_bound = {}

    def _build(self):
        self._base._build()
        for k in ("_p_fn", "_q_fn", "_lp_fn", "_lq_fn", "_lpq_expr", "_built"):
            if k in self._base.__dict__:
                self.__dict__[k] = self._base.__dict__[k]
        self._built = True


@functools.lru_cache(maxsize=64)
def _densities(P, Q, x, digits):
    """Cached evaluators: sweeps over alpha reuse the lambdified functions of one (P, Q) pair."""
    return _Densities(P, Q, x, digits)


#: False while numeric_divergence retries without the near-1 form (see _near1)
_NEAR1_ALLOWED: contextvars.ContextVar[bool] = contextvars.ContextVar("rdpsym_near1_allowed", default=True)


def _near1(mode: str, a) -> bool:
    """Use ``I = ∫P + ∫P expm1((alpha-1) log P/Q)`` (no cancellation in ``log I ~ (alpha-1) KL``)?

    Yes for ``|alpha - 1| < 1/8``, unless the driver retries without it: when ``(alpha-1) D`` is
    large (a Gaussian with D = 8e8 at alpha = 1 - 1e-5 has I = e^-8000) the two terms cancel
    instead, and the plain log-space form is the accurate one."""
    return mode == "finite" and abs(a - 1) < mpmath.mpf(1) / 8 and _NEAR1_ALLOWED.get()


def _make_L(dens: _Densities, mode: str, a) -> Callable:
    """Log of the (unshifted) integrand, or the log-ratio for alpha = oo.

    finite alpha: L = a lp + (1-a) lq (P = 0 -> -inf; P > 0, Q = 0 -> +inf if a > 1, -inf if a < 1).
    kl / near-1 : L = lp (the weight P), infinite ratio handled by the caller.
    inf        : L = lp - lq where P > 0 (-inf where P = 0).

    On the Arb path L is computed in Arb (one conversion in, one out); points where Arb gives no
    finite real value go through ``dens.logpq`` (mpmath) as below.
    """
    arb_L = dens.arb_L(mode, a)

    def L(t):
        if arb_L is not None:
            v = arb_L(t)
            if v is not None:
                return v
        lp, lq = dens.logpq(t)
        if lp == -mpmath.inf:
            return -mpmath.inf
        if mode == "finite":
            if lq == -mpmath.inf:
                return mpmath.inf if a > 1 else -mpmath.inf
            return a * lp + (1 - a) * lq
        if mode == "ratio":
            return lp - lq if lq > -mpmath.inf else mpmath.inf
        if mode == "klabs":  # log |P (log P - log Q)|, for the tail checks of the KL integrand
            if lq == -mpmath.inf:
                return mpmath.inf
            r = abs(lp - lq)
            return lp + mpmath.log(r) if r > 0 else -mpmath.inf
        return lp

    return L


# ----------------------------------------------------------------------------------------------
# Breakpoints of continuous integrands
# ----------------------------------------------------------------------------------------------


def _kink_arguments(expr: sp.Expr, x: sp.Symbol) -> list[sp.Expr]:
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
    return [a for a in args if a.has(x)]


@functools.lru_cache(maxsize=512)
def _polynomial_kinks(arg: sp.Expr, x: sp.Symbol, wp: int, prec: int):
    """Exact real roots of the numerator of a rational kink argument as mpfs (``prec`` is the mpmath
    precision they are made at: part of the cache key), or (None, note) when the argument is not
    rational in x or sympy fails. Cached: the points of a sweep share their kinks (``|x - 1|``)."""
    num, den = sp.fraction(sp.together(arg))
    if num.is_polynomial(x) and den.is_polynomial(x):
        try:
            return tuple(mpmath.mpf(sp.Float(sp.N(r, wp + 5), wp + 5)) for r in sp.Poly(num, x).real_roots()), ""
        except Exception as exc:  # sympy can fail on odd coefficients: fall through
            return None, f"real_roots failed on {arg}: {exc}"
    return None, ""


def _kinks(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, wp: int, intervals) -> tuple[list, list[str]]:
    """Real zeros of the kink arguments (as mpf at the current precision) and notes.

    Polynomial or rational arguments: exact real roots of the numerator (``Poly.real_roots``),
    evaluated to ``wp + 5`` digits. Any other argument: sign changes on the logarithmic scan grid of
    the support, refined by bisection to full precision (zeros closer together than the grid, or of
    even multiplicity, can be missed; the two-rule error estimate then usually flags the result).
    """
    pts, notes = set(), []
    for arg in set(_kink_arguments(P, x) + _kink_arguments(Q, x)):
        roots, note = _polynomial_kinks(arg, x, wp, mpmath.mp.prec)
        if note:
            notes.append(note)
        if roots is not None:
            pts.update(roots)
            continue
        try:
            f = sp.lambdify(x, arg, modules="mpmath", docstring_limit=0)
        except Exception as exc:
            notes.append(f"kinks of {arg} not located ({exc})")
            continue
        found = 0
        for a, b in intervals:
            grid = _scan_points(a, b, [])
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


# ----------------------------------------------------------------------------------------------
# Scanning and maximisation
# ----------------------------------------------------------------------------------------------


def _golden_max(f, a, b, iters):
    """Golden-section search for the maximum of f on [a, b] (assumed unimodal there)."""
    g = (mpmath.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (c, fc) if fc >= fd else (d, fd)


def _scan_points(a, b, kinks):
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


def _find_peak(L, intervals, kinks, refine_iters=60):
    """Global max of L over the continuous intervals: scan + golden refinement. Returns (x, L)."""
    best = (None, -mpmath.inf)
    samples = []
    for a, b in intervals:
        pts = _scan_points(a, b, kinks)
        vals = [L(t) for t in pts]
        samples.append((pts, vals))
        for i, v in enumerate(vals):
            if v > best[1]:
                best = (pts[i], v, pts, vals, i, a, b)
    if best[0] is None:
        return None, -mpmath.inf, samples
    t0, v0, pts, vals, i, a, b = best
    if v0 == mpmath.inf:
        return t0, v0, samples
    lo = pts[i - 1] if i > 0 else (a if not mpmath.isinf(a) else t0)
    hi = pts[i + 1] if i + 1 < len(pts) else (b if not mpmath.isinf(b) else t0)
    if hi > lo:
        t1, v1 = _golden_max(L, lo, hi, refine_iters)
        if v1 > v0:
            t0, v0 = t1, v1
    return t0, v0, samples


def _drop_width(L, x0, Lref, lo, hi, kinks=()):
    """Distance from x0 at which L falls by 1 below Lref (smaller of the two sides).

    A side that reaches the end of the support before L drops counts only when no side drops. So
    does a side whose drop happens across a kink: next to a jump (a density cut off by a Heaviside
    factor, with the peak at the cut) that distance is the distance to the jump, ~1e-19, not a
    width, and used as one it stretched every later rule until their error estimates failed."""
    widths, fallback = [], []
    for sgn, lim in ((1, hi), (-1, lo)):
        room = abs(lim - x0) if not mpmath.isinf(lim) else mpmath.inf
        if room == 0:
            continue
        d = mpmath.mpf(1) if mpmath.isinf(room) else min(room / 2, mpmath.mpf(1))
        dropped = False
        if L(x0 + sgn * d) > Lref - 1:
            for _ in range(200):
                if d * 2 >= room:
                    break
                d *= 2
                if L(x0 + sgn * d) <= Lref - 1:
                    dropped = True
                    break
        else:
            dropped = True
            for _ in range(200):
                d /= 2
                if L(x0 + sgn * d) > Lref - 1:
                    d *= 2
                    break
        # strictly inside: a peak *at* a kink (Laplace's cusp) has a genuine width on each side
        tiny = mpmath.mpf(10) ** (-30) * (1 + abs(x0))
        across = any(min(x0, x0 + sgn * d) < k < max(x0, x0 + sgn * d) and abs(k - x0) > tiny for k in kinks)
        (widths if dropped and not across else fallback).append(d)
    if widths:
        return min(widths)
    return max(fallback) if fallback else mpmath.mpf(1)


# ----------------------------------------------------------------------------------------------
# Tail and endpoint behaviour
# ----------------------------------------------------------------------------------------------


def _far(f, t_of_prec, extra):
    """Evaluate f at a far point with `extra` more digits (|x| ~ 10^extra would cancel otherwise)."""
    with mpmath.workdps(mpmath.mp.dps + extra):
        v = f(t_of_prec())
    return +v


def _power_slope(L, base, sgn, scale, outward: bool):
    """Log-log slopes of exp(L) at base + sgn*scale*d for d = 1e8, 1e16, 1e32 (outward) or
    1e-8, 1e-16, 1e-32 (toward base). Returns (s1, s2, values)."""
    ks = (8, 16, 32) if outward else (-8, -16, -32)
    vals = [_far(L, lambda k=k: base + sgn * scale * mpmath.mpf(10) ** k, abs(k) + 10) for k in ks]
    if any(v == -mpmath.inf for v in vals) or any(mpmath.isnan(v) for v in vals):
        return None, None, vals
    if any(v == mpmath.inf for v in vals):
        return mpmath.inf if outward else -mpmath.inf, None, vals
    ln10 = mpmath.log(10)
    s1 = (vals[1] - vals[0]) / ((ks[1] - ks[0]) * ln10)
    s2 = (vals[2] - vals[1]) / ((ks[2] - ks[1]) * ln10)
    return s1, s2, vals


def _check_end(L, base, sgn, scale, outward, Lmax):
    """Classify the integrand at an infinite end (outward) or a finite breakpoint (toward).

    Returns None (fine) or a string describing a divergence ('inf:...') or doubt ('doubt:...').
    A power behaviour |d|^s diverges at infinity iff s >= -1 and at a point iff s <= -1.
    """
    s1, s2, vals = _power_slope(L, base, sgn, scale, outward)
    if s1 is None:
        return None
    where = ("x -> %s" % ("+oo" if sgn > 0 else "-oo")) if outward else f"x -> {mpmath.nstr(base, 10)}{'+' if sgn > 0 else '-'}"
    if s2 is None:
        return f"inf:integrand is infinite as {where}"
    # negligible: the integrand is already far below the precision scale
    if outward:
        if vals[-1] < Lmax - 10 ** 6 and s2 < s1:
            return None
        if s2 > -1 and s1 > -1:
            return f"inf:integrand decays like |x|^{mpmath.nstr(s2, 6)} (exponent >= -1) as {where}: the integral diverges"
        if abs(s2 + 1) < mpmath.mpf(10) ** -6 and abs(s1 - s2) < mpmath.mpf(10) ** -6:
            return f"inf:integrand decays like 1/|x| as {where}: the integral diverges"
        if s2 >= -1 - mpmath.mpf("0.05"):
            return f"doubt:integrand decays like |x|^{mpmath.nstr(s2, 6)} as {where}, too slowly to trust the quadrature"
    else:
        if vals[-1] < Lmax - 10 ** 6:
            return None
        if s2 < -1 and s1 < -1:
            return f"inf:integrand behaves like |x-c|^{mpmath.nstr(s2, 6)} (exponent <= -1) as {where}: the integral diverges"
        if abs(s2 + 1) < mpmath.mpf(10) ** -6 and abs(s1 - s2) < mpmath.mpf(10) ** -6:
            return f"inf:integrand behaves like 1/|x-c| as {where}: the integral diverges"
        if s2 <= -1 + mpmath.mpf("0.05"):
            return f"doubt:integrand behaves like |x-c|^{mpmath.nstr(s2, 6)} as {where}, too singular to trust the quadrature"
    return None


# ----------------------------------------------------------------------------------------------
# Continuous case
# ----------------------------------------------------------------------------------------------


def _breakpoints(a, b, kinks, peak, w=None):
    """Support ends, kinks inside (a, b), the peak, and (given the peak width w) the points
    peak ± w 8^k, k = 0..3, so that a narrow peak (even one sitting on a kink or an end) is
    resolved by pieces on which the integrand varies on the piece's own scale."""
    pts = [a] + [k for k in kinks if a < k < b]
    if peak is not None and a <= peak <= b:
        tol = (w if w is not None else 0) * mpmath.mpf(10) ** -3
        if a < peak < b and all(abs(peak - k) > tol for k in pts + [b]):
            pts.append(peak)
        if w is not None:
            for k in range(4):
                for t in (peak - w * 8**k, peak + w * 8**k):
                    if a < t < b and all(abs(t - u) > tol for u in pts + [b]):
                        pts.append(t)
    pts.append(b)
    return sorted(set(pts), key=lambda t: t)


#: Gauss-Legendre on the Arb path: first degree and cap (a piece that needs more is not analytic
#: enough, e.g. an endpoint singularity or a missed kink: the driver then falls back to tanh-sinh)
GL_FIRST_DEGREE = 12
GL_MAX_DEGREE = 384


def _integrate_pieces(g, intervals, kinks, peak, w, cuts, rule, garb=None, info=None):
    """∫ g over the intervals, splitting at kinks and the peak.

    An infinite end with a cutoff in ``cuts`` (exponentially decaying integrand, see
    :func:`_continuous_prepare`) is truncated there and integrated with ``rule``; other infinite pieces
    use tanh-sinh in ``u`` with ``x = c ± w u``. Finite pieces use ``rule``; with ``garb`` (the same
    integrand on Arb balls) and ``rule == "gauss-legendre"`` they are integrated by
    :func:`rdpsym.numeric.fast.gauss_legendre` (degrees n and 2n compared, doubled until they agree
    to the working precision). ``info`` (a dict) counts the pieces done by mpmath and by Arb."""
    total, err = mpmath.mpf(0), mpmath.mpf(0)
    info = {} if info is None else info
    finite_pieces = []
    for k, (a, b) in enumerate(intervals):
        a = cuts.get((k, -1), a) if mpmath.isinf(a) else a
        b = cuts.get((k, 1), b) if mpmath.isinf(b) else b
        bp = _breakpoints(a, b, kinks, peak, w)
        for lo, hi in zip(bp[:-1], bp[1:]):
            if lo == hi:
                continue
            if mpmath.isinf(hi) and not mpmath.isinf(lo):
                wt = max(w, abs(lo - peak)) if peak is not None else w
                v, e = mpmath.quad(lambda u, lo=lo: g(lo + wt * u), [0, mpmath.inf], error=True)
                v, e = v * wt, e * wt
            elif mpmath.isinf(lo) and not mpmath.isinf(hi):
                wt = max(w, abs(hi - peak)) if peak is not None else w
                v, e = mpmath.quad(lambda u, hi=hi: g(hi - wt * u), [0, mpmath.inf], error=True)
                v, e = v * wt, e * wt
            elif mpmath.isinf(lo) and mpmath.isinf(hi):
                v, e = mpmath.quad(lambda u: g(w * u), [0, mpmath.inf], error=True)
                v2, e2 = mpmath.quad(lambda u: g(-w * u), [0, mpmath.inf], error=True)
                v, e = (v + v2) * w, (e + e2) * w
            elif garb is not None and rule == "gauss-legendre":
                finite_pieces.append((lo, hi))
                continue
            else:
                # Gauss-Legendre is capped at 3*2^6 = 192 nodes: if it has not converged by then
                # the piece is not analytic enough (endpoint singularity, missed kink) and the
                # driver falls back to tanh-sinh.
                opts = {"maxdegree": 7} if rule == "gauss-legendre" else {}
                v, e = mpmath.quad(g, [lo, hi], error=True, method=rule, **opts)
            total += v
            err += e
            info["mpmath"] = info.get("mpmath", 0) + 1
    if finite_pieces:
        info["arb"] = info.get("arb", 0) + len(finite_pieces)
        info["arb_converged"] = info.get("arb_converged", True)
        prec = mpmath.mp.prec + 16
        with _fast.flint.ctx.workprec(prec):
            pieces = [(_fast.to_arb(lo), _fast.to_arb(hi)) for lo, hi in finite_pieces]
            # 8 digits below the working precision (wp = dps + 10): far beyond the 0.6 dps the
            # convergence rule asks for, and still cheap (the rule converges geometrically)
            rel_tol = _fast.arb(10) ** (-(mpmath.mp.dps - 8))
            v, e, ok = _fast.gauss_legendre(garb, pieces, prec, rel_tol, GL_FIRST_DEGREE, GL_MAX_DEGREE)
            v, e = _fast.to_mpf(v), _fast.to_mpf(e)
        if v is None or e is None:
            raise _Failed("the Arb Gauss-Legendre sum is not finite")
        total += v
        err += e if ok else max(e, abs(v))  # not converged: no digits are claimed
        info["arb_converged"] = info["arb_converged"] and ok
    return total, err


def _continuous_prepare(dens, intervals, kinks, mode, a):
    """Peak, shift L_max, width w and divergence checks (done once, at the first precision).

    Returns (peak, Lmax, w, doubts); raises _Infinite when the divergence is infinite."""
    near1 = _near1(mode, a)
    Lint = _make_L(dens, "finite" if mode == "finite" else "weight", a)
    # the function whose tails and singular points decide divergence
    Lchk = _make_L(dens, "klabs", a) if mode == "kl" else Lint
    Lw = _make_L(dens, "weight", a) if (near1 or mode == "kl") else Lint
    # points where P > 0 = Q make alpha >= 1 infinite
    peak, Lmax, samples = _find_peak(Lint, intervals, kinks)
    if Lmax == mpmath.inf and mode == "finite" and a > 1:
        raise _Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(peak, 10)}), alpha > 1")
    if mode == "kl" or near1:
        for pts, _ in samples:
            for t in pts:
                lp, lq = dens.logpq(t)
                if lp > -mpmath.inf and lq == -mpmath.inf and (mode == "kl" or a > 1):
                    raise _Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(t, 10)})")
    if Lmax == -mpmath.inf:
        raise _Failed("the integrand vanishes at every sample point (P = 0 or Q = 0 everywhere?)")
    scanned = list(samples)
    if Lw is not Lint:
        peak, Lmax, samples_w = _find_peak(Lw, intervals, kinks)
        scanned += samples_w
    lo_all = min(i[0] for i in intervals)
    hi_all = max(i[1] for i in intervals)
    w = _drop_width(Lw, peak, Lmax, lo_all, hi_all, kinks)
    # divergence checks at infinite ends and at finite breakpoints (using the alpha integrand)
    doubts = []
    for lo, hi in intervals:
        bp = _breakpoints(lo, hi, kinks, None)
        for i, c in enumerate(bp):
            if mpmath.isinf(c):
                continue
            for sgn in (1, -1):
                nb = bp[i + 1] if sgn > 0 and i + 1 < len(bp) else (bp[i - 1] if sgn < 0 and i > 0 else None)
                if nb is None:
                    continue
                dist = abs(nb - c) if not mpmath.isinf(nb) else w
                r = _check_end(Lchk, c, sgn, min(dist, w), False, Lmax)
                if r and r.startswith("inf:"):
                    raise _Infinite(r[4:])
                if r and r.startswith("doubt:"):
                    doubts.append(r[6:])
        for end, sgn in ((hi, 1), (lo, -1)):
            if mpmath.isinf(end):
                finite_ends = [t for t in bp if not mpmath.isinf(t)]
                base = (max(finite_ends) if sgn > 0 else min(finite_ends)) if finite_ends else peak
                r = _check_end(Lchk, base, sgn, w, True, Lmax)
                if r and r.startswith("inf:"):
                    raise _Infinite(r[4:])
                if r and r.startswith("doubt:"):
                    doubts.append(r[6:])

    # cutoffs for exponentially decaying tails: beyond X the integrand is below
    # exp(-(wp ln 10 + 40)) of its maximum and keeps falling (checked at 1e8 w: below L_max - 1e6)
    cuts = {}
    thr = Lmax - (mpmath.mp.dps * mpmath.log(10) + 40)
    high = [t for pts, vals in scanned for t, v in zip(pts, vals) if v >= thr]  # scan points above it
    for k, (lo, hi) in enumerate(intervals):
        finite = [t for t in _breakpoints(lo, hi, kinks, peak) if not mpmath.isinf(t)]
        for end, sgn in ((hi, 1), (lo, -1)):
            if not mpmath.isinf(end):
                continue
            base = (max(finite) if sgn > 0 else min(finite)) if finite else peak
            # exponential decay: L has fallen by 1e6 at 1e8 w, or (a narrow peak, w tiny, on a
            # slower exponential tail) at 1e16 w; a polynomial tail |x|^-s falls by only
            # s ln(1e16) ~ 37 s there, so it is never truncated
            if not any(_far(Lchk, lambda k=k: base + sgn * w * mpmath.mpf(10) ** k, k + 10) < Lmax - 10**6
                       for k in (8, 16)):
                continue
            d = w
            for i in range(200):
                X = base + sgn * d
                if Lw(X) < thr and Lchk(X) < thr:
                    # bisect between the last two distances (to 1/16 of the step): doubling alone
                    # can put the cut up to twice as far out, and the wide tail piece then costs
                    # the quadrature most of its nodes
                    lo_d = d / 2 if i else d
                    for _ in range(4 if i else 0):
                        mid = (lo_d + d) / 2
                        Xm = base + sgn * mid
                        if Lw(Xm) < thr and Lchk(Xm) < thr:
                            d = mid
                        else:
                            lo_d = mid
                    # a cut must not hide mass further out (a second mode beyond a deep valley):
                    # every scan sample beyond it must be below the threshold too, else the tail
                    # stays an infinite piece (tanh-sinh and the two-evaluation estimate)
                    X = base + sgn * d
                    if not any(sgn * (t - X) > 0 for t in high):
                        cuts[(k, sgn)] = (base, d)
                    break
                d *= 2
    return peak, Lmax, w, doubts, cuts


def _continuous_once(dens, intervals, kinks, mode, a, prep, scale_jitter, rule, info=None):
    """One evaluation at the current precision. Returns (D, error, method, doubts)."""
    if mode == "inf":
        return _sup_continuous(dens, intervals, kinks)
    near1 = _near1(mode, a)
    peak, Lmax, w, doubts, cuts = prep
    peak, Lmax, w = +peak, +Lmax, w * scale_jitter
    notes = {key: base + key[1] * d * scale_jitter for key, (base, d) in cuts.items()}
    Lint = _make_L(dens, "finite" if mode == "finite" else "weight", a)
    if mode == "kl":
        def g(t):
            lp, lq = dens.logpq(t)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            if lq == -mpmath.inf:
                raise _Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(t, 10)})")
            return mpmath.exp(lp - Lmax) * (lp - lq)
        garb = dens.arb_integrand("kl", a, Lmax, g)
        g = dens.integrand("kl", a, Lmax, g)
        v, e = _integrate_pieces(g, intervals, kinks, peak, w, notes, rule, garb, info)
        D = v * mpmath.exp(Lmax)
        # + the rounding of this final arithmetic at the working precision (a single evaluation
        # has no second precision to reveal it)
        err = e * mpmath.exp(Lmax) + 8 * mpmath.eps * abs(D)
        method = f"{rule} KL = E_P[log P/Q]"
    elif near1:
        am1 = a - 1
        def g(t):
            lp, lq = dens.logpq(t)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            if lq == -mpmath.inf:
                if a > 1:
                    raise _Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(t, 10)})")
                return -mpmath.exp(lp - Lmax)
            return mpmath.exp(lp - Lmax) * mpmath.expm1(am1 * (lp - lq))
        def gp(t):
            lp, _ = dens.logpq(t)
            return mpmath.exp(lp - Lmax) if lp > -mpmath.inf else mpmath.mpf(0)
        garb, gparb = dens.arb_integrand("near1", a, Lmax, g), dens.arb_integrand("weight", a, Lmax, gp)
        g = dens.integrand("near1", a, Lmax, g)
        gp = dens.integrand("weight", a, Lmax, gp)
        J, eJ = _integrate_pieces(g, intervals, kinks, peak, w, notes, rule, garb, info)
        M, eM = _integrate_pieces(gp, intervals, kinks, peak, w, notes, rule, gparb, info)
        scale = mpmath.exp(Lmax)
        J, eJ, M, eM = J * scale, eJ * scale, M * scale, eM * scale
        # log I = log(M + J) = log M + log1p(J / M)
        logI = mpmath.log(M) + mpmath.log1p(J / M)
        if not abs(logI) < 1:
            # |(alpha-1) D| >= 1: I is far from 1 and M + J cancels instead; the driver retries
            # in plain log space, which is accurate here
            raise _Failed(f"near-1 form: log I = {mpmath.nstr(logI, 5)}, |(alpha-1) D| >= 1")
        D = logI / am1
        rounding = 8 * mpmath.eps * (abs(mpmath.log(M)) + abs(logI) + 1)
        err = (eJ / abs(M) + eM / abs(M) + rounding) / abs(am1)
        method = f"{rule}, I = ∫P + ∫P expm1((alpha-1) log P/Q)"
    else:
        def g(t):
            v = Lint(t)
            if v == mpmath.inf:
                raise _Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(t, 10)}), alpha > 1")
            return mpmath.exp(v - Lmax) if v > -mpmath.inf else mpmath.mpf(0)
        garb = dens.arb_integrand("finite", a, Lmax, g)
        g = dens.integrand("finite", a, Lmax, g)
        v, e = _integrate_pieces(g, intervals, kinks, peak, w, notes, rule, garb, info)
        if v <= 0:
            raise _Failed(f"the shifted integral is {mpmath.nstr(v, 8)} <= 0")
        logI = Lmax + mpmath.log(v)
        D = logI / (a - 1)
        # Lmax + log v cancels when |log I| << |Lmax|: its rounding counts
        rounding = 8 * mpmath.eps * (abs(Lmax) + abs(mpmath.log(v)) + 1)
        err = (e / v + rounding) / abs(a - 1)
        method = f"{rule}, log I = L_max + log ∫ exp(L - L_max)"
    return D, err, method, doubts


def _sup_continuous(dens, intervals, kinks):
    """D_inf = sup_{P>0} log P/Q by scan, golden refinement and limits at the ends."""
    R = _make_L(dens, "ratio", None)
    peak, Rmax, samples = _find_peak(R, intervals, kinks, refine_iters=int(mpmath.mp.prec * 1.5))
    if Rmax == mpmath.inf:
        raise _Infinite(f"P > 0 where Q = 0 (at x = {mpmath.nstr(peak, 10)})")
    if Rmax == -mpmath.inf:
        raise _Failed("P = 0 at every sample point")
    # refine every local maximum of the scan, and approach every kink / finite end
    cands = [Rmax]
    local = []
    for pts, vals in samples:
        for i in range(1, len(pts) - 1):
            if vals[i] >= vals[i - 1] and vals[i] >= vals[i + 1] and vals[i] > -mpmath.inf:
                if vals[i] > vals[i - 1] or vals[i] > vals[i + 1]:  # skip flat stretches
                    local.append((vals[i], pts[i - 1], pts[i + 1]))
    for v0, lo, hi in sorted(local, key=lambda u: -u[0])[:4]:  # refine the best few
        _, v = _golden_max(R, lo, hi, int(mpmath.mp.prec * 1.5))
        cands.append(max(v, v0))
    doubts = []
    for a, b in intervals:
        bp = _breakpoints(a, b, kinks, None)
        for i, c in enumerate(bp):
            for sgn in (1, -1):
                if mpmath.isinf(c):
                    continue
                if (sgn > 0 and (i + 1 >= len(bp))) or (sgn < 0 and i == 0):
                    continue
                ds = [mpmath.mpf(10) ** (-k) for k in (10, 20, 40)]
                vs = [R(c + sgn * d) for d in ds]
                vs = [v for v in vs if v > -mpmath.inf]
                if len(vs) == 3:
                    if vs[2] == mpmath.inf:
                        raise _Infinite(f"log P/Q is unbounded as x -> {mpmath.nstr(c, 10)}")
                    cands.append(vs[2])
                    if abs(vs[2] - vs[1]) > abs(vs[1] - vs[0]) * 2 and vs[2] > vs[1] + 1:
                        raise _Infinite(f"log P/Q grows without bound as x -> {mpmath.nstr(c, 10)}")
        for end, sgn in ((b, 1), (a, -1)):
            if not mpmath.isinf(end):
                continue
            vs = [_far(R, lambda k=k: sgn * mpmath.mpf(10) ** k, k + 10) for k in (8, 16, 32, 64)]
            if any(v == mpmath.inf for v in vs):
                raise _Infinite("P > 0 where Q = 0 far out")
            if vs[3] > vs[2] > vs[1] and (vs[3] - vs[2]) > (vs[2] - vs[1]) / 4 and vs[3] - vs[2] > mpmath.mpf(10) ** -5:
                raise _Infinite(f"log P/Q grows without bound as x -> {'+' if sgn > 0 else '-'}oo")
            if vs[3] > -mpmath.inf:
                cands.append(vs[3])
                if vs[3] > vs[2] and vs[3] - vs[2] > mpmath.eps * 16 * (1 + abs(vs[3])):
                    # still increasing far out: the limit matters only if it can reach the best value
                    lim = vs[3] + 4 * (vs[3] - vs[2])
                    if lim >= max(cands) - mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
                        doubts.append(f"log P/Q still increases at |x| = 1e64 (by {mpmath.nstr(vs[3] - vs[2], 5)}); the supremum is a limit")
                        cands.append(vs[3] + (vs[3] - vs[2]))
    return max(cands), mpmath.mpf(0), "scan + golden-section sup of log P/Q", doubts


# ----------------------------------------------------------------------------------------------
# Discrete case
# ----------------------------------------------------------------------------------------------


def _discrete_once(dens, pieces, mode, a):
    near1 = _near1(mode, a)
    L = _make_L(dens, "ratio" if mode == "inf" else ("finite" if mode == "finite" and not near1 else "weight"), a)
    doubts = []
    tail_err = mpmath.mpf(0)

    def term_parts(k):
        lp, lq = dens.logpq(mpmath.mpf(k))
        if lp > -mpmath.inf and lq == -mpmath.inf and (mode in ("kl", "inf") or a > 1):
            raise _Infinite(f"P > 0 where Q = 0 (at x = {k})")
        return lp, lq

    # collect point lists (finite) and progressions
    finite_pts = []
    progs = []
    for pc in pieces:
        if pc[0] == "finite":
            finite_pts += [mpmath.mpf(sp.Float(p, mpmath.mp.dps + 5)) if not p.is_Integer else int(p) for p in pc[1]]
        else:
            progs.append((int(pc[1]), int(pc[2])))

    # global shift: max of L over finite points and sampled progression points
    Lmax = -mpmath.inf
    prog_samples = []
    # at a finite order away from 1, L itself is +inf where P > 0 = Q (alpha > 1: the max raises
    # below) and -inf where that point adds nothing (alpha < 1): the separate check is redundant
    check_parts = not (mode == "finite" and not near1)
    for k in finite_pts:
        if check_parts:
            term_parts(k)
        Lmax = max(Lmax, L(mpmath.mpf(k)))
    grid_j = sorted(set([0, 1, 2, 3] + [int(2 ** (e / 2)) for e in range(4, 130)]))
    for s0, st in progs:
        vals = []
        for j in grid_j:
            if check_parts:
                term_parts(s0 + st * j)
            vals.append(L(mpmath.mpf(s0 + st * j)))
        prog_samples.append(vals)
        Lmax = max([Lmax] + vals)
    if mode == "inf":
        best = Lmax
        for (s0, st), vals in zip(progs, prog_samples):
            i = max(range(len(vals)), key=lambda i: vals[i])
            lo = grid_j[i - 1] if i > 0 else 0
            hi = grid_j[i + 1] if i + 1 < len(grid_j) else grid_j[i]
            if hi - lo <= 4096:
                best = max([best] + [L(mpmath.mpf(s0 + st * j)) for j in range(lo, hi + 1)])
            far = [_far(L, lambda k=k: mpmath.mpf(s0 + st * 10 ** k), k + 10) for k in (8, 16, 32, 64)]
            if far[3] > far[2] > far[1] and (far[3] - far[2]) > (far[2] - far[1]) / 4 and far[3] - far[2] > mpmath.mpf(10) ** -5:
                raise _Infinite("log P/Q grows without bound along the support")
            if far[3] > -mpmath.inf:
                best = max(best, far[3])
                if far[3] > far[2] and far[3] - far[2] > mpmath.eps * 16 * (1 + abs(far[3])):
                    if far[3] + 4 * (far[3] - far[2]) >= best - mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
                        doubts.append("log P/Q still increases at 1e64; the supremum is a limit")
        if best == -mpmath.inf:
            raise _Failed("P = 0 on the whole support")
        return best, mpmath.mpf(0), "max of log P/Q over the support (discrete)", doubts
    if Lmax == mpmath.inf:
        raise _Infinite("P > 0 where Q = 0, alpha > 1")
    if Lmax == -mpmath.inf:
        raise _Failed("every term vanishes")

    if mode == "kl":
        def term(k):
            lp, lq = term_parts(k)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            return mpmath.exp(lp - Lmax) * (lp - lq)
    elif near1:
        am1 = a - 1
        def term(k):
            lp, lq = term_parts(k)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            if lq == -mpmath.inf:
                return -mpmath.exp(lp - Lmax)
            return mpmath.exp(lp - Lmax) * mpmath.expm1(am1 * (lp - lq))
    else:
        def term(k):
            v = L(mpmath.mpf(k))
            if v == mpmath.inf:
                raise _Infinite(f"P > 0 where Q = 0 (at x = {k}), alpha > 1")
            return mpmath.exp(v - Lmax) if v > -mpmath.inf else mpmath.mpf(0)

    def pterm(k):
        lp, _ = dens.logpq(mpmath.mpf(k))
        return mpmath.exp(lp - Lmax) if lp > -mpmath.inf else mpmath.mpf(0)

    funcs = [term] + ([pterm] if near1 else [])
    sums = [mpmath.mpf(0) for _ in funcs]
    for k in finite_pts:
        for i, f in enumerate(funcs):
            sums[i] += f(k)
    eps = mpmath.eps
    Lbig = _make_L(dens, "klabs" if mode == "kl" else "finite", a)
    for (s0, st), vals in zip(progs, prog_samples):
        # divergence check at the far end
        r = _check_end(Lbig, mpmath.mpf(s0), st, 1, True, Lmax)
        if r and r.startswith("inf:"):
            raise _Infinite(r[4:])
        if r and r.startswith("doubt:"):
            doubts.append(r[6:])
        # a polynomial (not exponentially small) tail cannot be summed term by term to full precision
        max_terms = 200000
        if _far(Lbig, lambda: mpmath.mpf(s0 + st * 10**8), 18) > Lmax - 10**6:
            doubts.append("the terms decay only polynomially; term-by-term summation cannot reach the "
                          "precision (no tail acceleration implemented)")
            max_terms = 20000
        i = max(range(len(vals)), key=lambda i: vals[i])
        lo = grid_j[i - 1] if i > 0 else 0
        hi = grid_j[i + 1] if i + 1 < len(grid_j) else grid_j[i]
        while hi - lo > 2:  # integer ternary search for the mode
            m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
            if L(mpmath.mpf(s0 + st * m1)) < L(mpmath.mpf(s0 + st * m2)):
                lo = m1
            else:
                hi = m2
        jm = lo
        # last grid index with a non-negligible term: do not stop before it
        cut = Lmax - (mpmath.mp.prec * mpmath.log(2) + 20)
        jlast = max([j for j, v in zip(grid_j, vals) if v > cut] + [jm])
        for i, f in enumerate(funcs):
            S = mpmath.mpf(0)
            # downward j = jm-1, ..., 0
            for direction in (-1, 1):
                j = jm if direction == 1 else jm - 1
                prev = None
                n = 0
                while j >= 0:
                    t = f(s0 + st * j)
                    S += t
                    n += 1
                    at = abs(t)
                    if prev is not None and prev > 0 and n > 3 and (direction < 0 or j > jlast):
                        ratio = at / prev
                        if ratio < 1:
                            bound = at * ratio / (1 - ratio)
                            if bound <= eps * abs(S) or at == 0:
                                if direction > 0:
                                    tail_err += bound * mpmath.exp(Lmax)
                                break
                    prev = at
                    j += direction
                    if n > max_terms:
                        doubts.append(f"summation stopped after {n} terms without meeting the tail criterion")
                        break
            sums[i] += S
    scale = mpmath.exp(Lmax)
    if mode == "kl":
        return sums[0] * scale, tail_err + eps * abs(sums[0] * scale), "term-by-term sum, KL", doubts
    if near1:
        J, M = sums[0] * scale, sums[1] * scale
        logI = mpmath.log(M) + mpmath.log1p(J / M)
        return logI / (a - 1), (tail_err / M + eps) / abs(a - 1), "term-by-term sum, I = ΣP + ΣP expm1((alpha-1) log P/Q)", doubts
    if sums[0] <= 0:
        raise _Failed("the sum is not positive")
    logI = Lmax + mpmath.log(sums[0])
    return logI / (a - 1), (tail_err / (sums[0] * scale) + 4 * eps) / abs(a - 1), "term-by-term sum, log-sum-exp", doubts


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------


def _to_mpf_end(e, wp):
    if isinstance(e, mpmath.mpf):
        return e
    if e is sp.oo:
        return mpmath.inf
    if e is sp.S.NegativeInfinity:
        return -mpmath.inf
    return mpmath.mpf(sp.Float(e, wp + 5))


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
    checked.
    """
    if not isinstance(x, sp.Symbol):
        raise ValueError(f"x must be a sympy Symbol, found {type(x).__name__}.")
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 5:
        raise ValueError(f"dps must be an int >= 5, found {dps!r}.")
    mode, a_exact = _parse_alpha(alpha)
    if not isinstance(support, sp.Set):
        raise ValueError(f"support must be a sympy Set, found {type(support).__name__}.")
    for name, e in (("P", P), ("Q", Q)):
        if not isinstance(e, sp.Expr):
            raise ValueError(f"{name} must be a sympy expression in {x}, found {type(e).__name__}.")
    # Floats inside P and Q are taken at their exact binary value, as parameter values are:
    # sympy would otherwise fold log(0.5) to a 15-digit Float, and every digit past the 16th
    # would be wrong while the two evaluations agree
    P, Q = _exact_floats(P), _exact_floats(Q)
    compiled = _compiled_pair(P, Q, x)
    P, Q, support = _substitute(P, Q, x, support, values)
    if compiled is not None:
        sub = _substitution(compiled.lp, compiled.lq, x, support, values)
    extra = (P.free_symbols | Q.free_symbols) - {x}
    if extra:
        raise ValueError(f"values is missing parameter(s) {', '.join(sorted(s.name for s in extra))}.")
    kind, pieces = _flatten_support(support)
    P = P.rewrite(sp.Piecewise) if P.has(sp.Heaviside) else P
    Q = Q.rewrite(sp.Piecewise) if Q.has(sp.Heaviside) else Q
    dens = _densities(P, Q, x, dps + 45)
    if compiled is not None:
        dens = dens.with_arb(compiled, sub)

    kinks_notes: list[str] = []
    state = {"prep": None, "kinks": None}

    def evaluate(wp, jitter, rule, info=None):
        with mpmath.workdps(wp):
            a = None if a_exact is None else (
                mpmath.mpf(a_exact) if a_exact.is_Integer else (
                    mpmath.mpf(int(a_exact.p)) / int(a_exact.q) if a_exact.is_Rational else mpmath.mpf(sp.Float(a_exact, wp + 5))))
            if kind == "continuous":
                intervals = []
                for lo, hi in pieces:
                    lo, hi = _to_mpf_end(lo, wp), _to_mpf_end(hi, wp)
                    if hi > lo:
                        intervals.append((lo, hi))
                if not intervals:
                    raise ValueError("support has no interval of positive length.")
                if state["kinks"] is None:
                    with mpmath.workdps(dps + 35):
                        state["kinks"], notes = _kinks(P, Q, x, dps + 35, intervals)
                        kinks_notes.extend(notes)
                if state["prep"] is None and mode != "inf":
                    state["prep"] = _continuous_prepare(dens, intervals, state["kinks"], mode, a)
                D, err, method, doubts = _continuous_once(dens, intervals, state["kinks"], mode, a, state["prep"], jitter, rule, info)
            else:
                D, err, method, doubts = _discrete_once(dens, pieces, mode, a)
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
    if kind != "continuous" or mode == "inf":
        plans = plans[1:]
    def attempt() -> NumericValue:
        single = False
        try:
            for plan in plans:
                info = {}
                results = [evaluate(*plan[0], info=info)]
                single = (plan[0][2] == "gauss-legendre" and info.get("arb", 0) > 0 and not info.get("mpmath")
                          and info.get("arb_converged", False))
                if not single:
                    results.append(evaluate(*plan[1]))
                with mpmath.workdps(dps + 30):
                    (D1, e1, method, doubts1), (D2, e2, _, doubts2) = results if not single else results * 2
                    error = max(abs(D1 - D2), e1, e2)
                    if error <= tolerance(D2):
                        break
        except _Infinite as exc:
            return NumericValue(mpmath.inf, mpmath.mpf(0), dps, "divergence detected", True, str(exc))
        except _Failed as exc:
            return NumericValue(mpmath.mpf(0), mpmath.inf, dps, "failed", False, str(exc))
        except (ArithmeticError, mpmath.libmp.NoConvergence) as exc:
            return NumericValue(mpmath.mpf(0), mpmath.inf, dps, "failed", False,
                                f"numeric failure: {type(exc).__name__}: {exc}")
        with mpmath.workdps(dps + 30):
            tol = tolerance(D2)
            doubts = sorted(set(doubts1 + doubts2))
            converged = bool(error <= tol) and not doubts
            if single:
                method = method.replace("gauss-legendre", "Arb Gauss-Legendre (n vs 2n nodes)", 1)
                detail = (f"{method}; one evaluation at {plan[0][0]} digits: rules with n and 2n nodes differ by "
                          f"<= {mpmath.nstr(e1, 3)} (with Arb's rounding bounds)")
            else:
                detail = f"{method}; two evaluations at {plan[0][0]} and {plan[1][0]} digits differ by {mpmath.nstr(abs(D1 - D2), 3)}"
            if kinks_notes:
                detail += "; " + "; ".join(kinks_notes)
            if doubts:
                detail += "; NOT TRUSTED: " + "; ".join(doubts)
            elif not converged:
                detail += f"; NOT CONVERGED: error {mpmath.nstr(error, 3)} > tolerance {mpmath.nstr(tol, 3)}"
        with mpmath.workdps(dps):
            value = +D2
            error = +error if not mpmath.isnan(error) else mpmath.inf  # never NaN
        return NumericValue(value, error, dps, method, converged, detail)

    out = attempt()
    if not out.converged and mode == "finite" and abs(a_exact - 1) < sp.Rational(1, 8):
        # the near-1 form failed: retry in plain log space (accurate when (alpha-1) D is large)
        token = _NEAR1_ALLOWED.set(False)
        state["prep"] = None
        try:
            retry = attempt()
        finally:
            _NEAR1_ALLOWED.reset(token)
        if retry.converged:
            return replace(retry, detail=retry.detail + "; plain log-space form (the near-1 form did not converge: "
                                                        + out.detail + ")")
    return out
