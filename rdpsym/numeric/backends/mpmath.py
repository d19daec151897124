r"""The mpmath backend: the universal fallback of the numeric path.

:class:`MpmathPair` evaluates P, Q and their logarithms by ``sympy.lambdify(..., "mpmath")`` of the pair
*after* exact substitution of the parameters (constants folded to the working digits). It evaluates every
point a compiled backend leaves (zeros of P or Q, undecidable conditions, functions a backend is not
taught), and all of them with ``RDPSYM_NUMERIC_BACKEND=mpmath``. The lambdified functions are built on
first use only: lambdifying costs more than a whole compiled evaluation.
"""

from __future__ import annotations

import functools

import mpmath
import sympy as sp
from sympy.codegen.cfunctions import expm1 as _expm1

from ..._numbers import SYMBOLIC_ERRORS
from ..quantities import Form
from ..tails import Failed
from . import register_backend

__all__ = ["MODULES", "LARGE_RATIONAL_BITS", "MpmathBackend", "MpmathPair", "besseli", "compiled_logs", "lambdify_mpmath", "log_expr", "logs_of",
           "mpmath_pair"]


def besseli(n, z):
    """The modified Bessel function I_n(z), with I_{-n}(z) = I_n(z) for integer n (DLMF 10.27.1).

    mpmath 1.3's ``besseli`` reflects no negative integer order (its ``besselj`` does): its
    hypergeometric sum then cancels at the pole of 1/Gamma(n+1) and fails to converge from about
    n = -70 on (``besseli(-91, 2)`` raises ValueError), so the Skellam pmf exp(-2 mu) I_k(2 mu)
    could not be evaluated on the negative half of the integers."""
    if mpmath.isint(n) and n < 0:
        n = -n
    return mpmath.besseli(n, z)


#: the namespace of every ``lambdify`` of the numeric path: mpmath, with the functions above in
#: place of mpmath's own, and mpmath's binomial named: without it the printer rewrites binomial(n, k) as
#: factorial(n)/(factorial(k) factorial(n - k)), and factorial(10000) is an integer of 35660 digits that
#: Python refuses to print (the binomial pmf at n = 10000 raised ValueError)
MODULES = [{"besseli": besseli, "binomial": mpmath.binomial}, "mpmath"]

#: rationals with more bits than this are not printed into lambdified code: Python refuses to print an
#: integer of more than 4300 digits (``sys.get_int_max_str_digits``, CVE-2020-10735), and the binomial
#: pmf at n = 10000, p = 1/3 holds 3**10000
LARGE_RATIONAL_BITS = 4096


def lambdify_mpmath(args, expr: sp.Expr):
    """``sympy.lambdify(args, expr)`` in the numeric path's namespace (:data:`MODULES`), with each rational
    of more than :data:`LARGE_RATIONAL_BITS` bits read at call time as ``mpf(p) / q`` at the working
    precision (an mpf made from an int is converted in binary, never through its decimal text)."""
    large = sorted((r for r in expr.atoms(sp.Rational)
                    if max(abs(int(r.p)), int(r.q)).bit_length() > LARGE_RATIONAL_BITS), key=sp.default_sort_key)
    names = {}
    for i, r in enumerate(large):
        name = f"_rdpsym_rational_{i}"
        names[name] = functools.partial(_exact_ratio, int(r.p), int(r.q))
        expr = expr.xreplace({r: sp.Function(name)()})
    return sp.lambdify(args, expr, modules=[names, *MODULES] if names else MODULES, docstring_limit=0)


def _exact_ratio(p: int, q: int):
    return mpmath.mpf(p) / q


def log_expr(e: sp.Expr) -> sp.Expr:
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
        return sp.Add(*[log_expr(f) for f in e.args])
    if isinstance(e, sp.Pow):
        b, n = e.args
        if n.is_integer and not b.is_positive:
            return sp.log(e)
        return n * log_expr(b)
    if isinstance(e, sp.Piecewise):
        return sp.Piecewise(*[(log_expr(v), c) for v, c in e.args])
    return sp.log(e)


@register_backend
class MpmathBackend:
    """``RDPSYM_NUMERIC_BACKEND=mpmath``: nothing is compiled, :class:`MpmathPair` does every point."""

    name = "mpmath"

    def compile(self, lp, lq, x, params):
        return None


def _built_on_use(attribute: str) -> property:
    """A read-only property that builds the compiled functions (``self._build()``) before reading."""

    def get(self):
        self._build()
        return getattr(self, attribute)

    return property(get)


class MpmathPair:
    """mpmath evaluators of P and Q and of their logarithms (one substituted pair, see the module
    docstring). ``counts`` arguments are the caller's per-call evaluation counters."""

    def __init__(self, P: sp.Expr, Q: sp.Expr, x: sp.Symbol, digits: int):
        self.P, self.Q, self.x, self.digits = P, Q, x, digits
        self._built = False
        self._fast_forms = {}

    def _build(self):
        if self._built:
            return
        P, Q, x, digits = self.P, self.Q, self.x, self.digits
        self._p_fn = lambdify_mpmath(x, P)
        self._q_fn = lambdify_mpmath(x, Q)
        # symbolic log-densities (constants folded to `digits` digits); used where they evaluate
        # to a real number, else the numeric log of P or Q is taken.
        xr = sp.Dummy("x", real=True)
        self._lp_fn = self._lq_fn = None
        self._built = True
        try:
            lp = log_expr(P.subs(x, xr)).subs(xr, x).evalf(digits)
            lq = log_expr(Q.subs(x, xr)).subs(xr, x).evalf(digits)
            self._lp_fn = lambdify_mpmath(x, lp)
            self._lq_fn = lambdify_mpmath(x, lq)
        except SYMBOLIC_ERRORS:  # any sympy trouble: stay with numeric logs
            self._lp_fn = self._lq_fn = None
            return
        self._lpq_expr = (lp, lq)

    # compiled densities and log-densities, built on first use
    _p = _built_on_use("_p_fn")
    _q = _built_on_use("_q_fn")
    _lp = _built_on_use("_lp_fn")
    _lq = _built_on_use("_lq_fn")

    def _fast_form(self, kind):
        """Lambdified one-expression integrand of the given kind, built on first use (or None)."""
        if kind not in self._fast_forms:
            self._fast_forms[kind] = None
            if self._lp is not None:
                lp, lq = self._lpq_expr
                A, S = sp.Dummy("a"), sp.Dummy("s")
                form = {
                    Form.FINITE: lambda: sp.exp(A * lp + (1 - A) * lq - S),
                    Form.KL: lambda: sp.exp(lp - S) * (lp - lq),
                    Form.NEAR1: lambda: sp.exp(lp - S) * _expm1((A - 1) * (lp - lq)),
                    Form.WEIGHT: lambda: sp.exp(lp - S),
                }[kind]
                try:
                    self._fast_forms[kind] = sp.lambdify((self.x, A, S), form(), modules=MODULES, docstring_limit=0)
                except SYMBOLIC_ERRORS:  # any sympy trouble: no fast path
                    pass
        return self._fast_forms[kind]

    def integrand(self, kind, a, shift, slow, counts):
        """A one-expression mpmath integrand (fast path) that falls back to `slow` wherever the fast
        value is not a finite real number (zeros of P or Q, complex logs, NaN). The lambdified form is
        built at the first call (on a compiled backend's path it is often never needed)."""
        mpf, isfinite = mpmath.mpf, mpmath.isfinite
        built = []

        def g(t):
            counts["mpmath"] += 1
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
                raise Failed(f"{which}({mpmath.nstr(t, 8)}) is not real: {mpmath.nstr(v, 8)}")
            v = v.real
        v = mpmath.mpf(v)
        if mpmath.isnan(v):
            raise Failed(f"{which}({mpmath.nstr(t, 8)}) is NaN")
        if v < 0:
            raise Failed(f"{which}({mpmath.nstr(t, 8)}) = {mpmath.nstr(v, 8)} is negative")
        return v

    def pq(self, t):
        try:
            p = self._p(t)
            q = self._q(t)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError) as exc:
            raise Failed(f"evaluating P, Q at x = {mpmath.nstr(t, 8)} failed: {exc}") from None
        return self._real(p, "P", t), self._real(q, "Q", t)

    def logpq(self, t):
        if self._lp is not None:
            found = compiled_logs(self._lp, self._lq, t)
            if found is not None:
                return found
        return logs_of(*self.pq(t))


def compiled_logs(lp, lq, *point):
    """``(log P, log Q)`` at ``point`` from the compiled logarithms ``lp`` and ``lq``, or None where either
    raises or is complex, NaN or +oo (then the caller takes the logarithms of P and Q themselves)."""
    try:
        a, b = lp(*point), lq(*point)
        if isinstance(a, mpmath.mpc) or isinstance(b, mpmath.mpc):
            return None
        a, b = mpmath.mpf(a), mpmath.mpf(b)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None
    if mpmath.isnan(a) or mpmath.isnan(b) or a == mpmath.inf or b == mpmath.inf:
        return None
    return a, b


def logs_of(p, q):
    """``(log p, log q)`` of two non-negative real numbers, -oo at 0."""
    return (mpmath.log(p) if p > 0 else -mpmath.inf), (mpmath.log(q) if q > 0 else -mpmath.inf)


@functools.lru_cache(maxsize=64)
def mpmath_pair(P, Q, x, digits) -> MpmathPair:
    """Cached evaluators: sweeps over alpha reuse the lambdified functions of one (P, Q) pair."""
    return MpmathPair(P, Q, x, digits)
