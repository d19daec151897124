"""Symbolic Taylor series of a closed form where it is 0/0 or loses digits.

* around every exceptional point (Laplace at alpha = 1/2),
* around each parameter boundary where the divergence tends to 0 (Laplace as b -> oo, randomized
  response as p -> 1/2): there every term of the closed form is O(1) while the value is O(1/b^2), and
  no float evaluation of the closed form can be accurate. The coefficients of these series are
  polynomials in alpha without cancellation.

The coefficients come from Taylor-mode arithmetic on the expression tree (:func:`_taylor_mode`, exact
symbolic recurrences: seconds), and from sympy's ``series`` only where a node vanishes at the centre
(a removable 0/0 such as Laplace at alpha = 1/2) or has no rule.

At run time a series is used at a point only where its truncation error is below
``SERIES_TOLERANCE`` of its value; elsewhere the closed form is used. The series around alpha = 1 is
computed at run time instead (:mod:`rdpsym.compile.taylor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._cache import DiskCache
from ..derive.codec import DataCodec
from ..numeric.translate import Translator
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA
from .store import cache_key, complete_series

if TYPE_CHECKING:  # annotations only: a result's to_numpy() hook reaches this module
    from ..derive.result import DivergenceResult

__all__ = ["SERIES_TERMS", "SERIES_TOLERANCE", "Series", "series_expansions", "fixed_points"]

#: A series is used where its last two terms are below this fraction of its value.
SERIES_TOLERANCE = 1e-15
#: Number of Taylor terms kept (orders 0 .. SERIES_TERMS-1).
SERIES_TERMS = 12
#: A guard against a hang, for each of the two attempts at one series (Taylor-mode arithmetic, then
#: sympy's ``series`` where Taylor mode has no rule). Far above the time a series takes (the slowest
#: built-in, Laplace at alpha = 1/2: 16 s idle, about 30 s with both cores busy), so which series is
#: built depends on the expression, never on the machine's speed: with a 30 s limit Taylor mode gave
#: up under load and sympy's series was used instead, and the series, made while a limit expired,
#: was never cached (every process spent 45 s on it again). When the guard fires the series is not
#: built, not cached, and the float code refuses the points of its band (it fails closed).
SERIES_SECONDS = 600.0


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

    def __post_init__(self):
        # p - 1/3 computed as p - fl(1/3) is off by 1.9e-17 absolutely: 3e-12 relative at p - 1/3 = 7e-6,
        # and the series value (~u^2) doubles it; ((p - h) - l) is exact to ~2 eps (see exact_linear)
        object.__setattr__(self, "variable", _exact_variable(self.variable))

    def __reduce__(self):
        # unpickling (a value sent back from a worker process) rebuilds sympy's sums evaluated (the exact
        # form flattened): rebuild it here
        return (Series, (self.where, self.variable, self.coeffs))


#: symbolic series (:func:`series_expansions`), ``series-<key>.rdpsym``, stored as data; a boundary
#: series sympy did not build in time is never kept
_SERIES_CODEC = DataCodec((Series,))
SERIES_CACHE = DiskCache("series", encode=_SERIES_CODEC.encode, decode=_SERIES_CODEC.decode, accept=complete_series)


def exact_linear(g: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """A linear polynomial ``a q + b`` in one symbol, with rational coefficients, as ``(a, (q - h) - l)``
    (unevaluated sums, so the emitter keeps the order) with ``h = fl(r)`` and ``l = r - h`` rounded, for its
    root ``r = -b/a``; ``(1, g)`` otherwise. Next to the root ``q - h`` is exact (Sterbenz's lemma,
    Higham 2002, *Accuracy and Stability of Numerical Algorithms*, Thm. 2.5) and the value is rounded
    once more (then once by the factor a): relative error ~2 eps, where ``a*q + b`` has eps |b| / |a q + b|.
    Away from the root (|q - h| >= |q|/2 where q - h is not exact) the error stays a few eps."""
    syms = g.free_symbols
    if len(syms) != 1 or not g.is_polynomial(*syms):
        return sp.Integer(1), g
    g = _evaluated(g)  # an exact form already (nested sums) is rebuilt: the same h and l
    (q,) = syms
    poly = sp.Poly(g, q)
    if poly.degree() != 1 or not all(cf.is_Rational for cf in poly.all_coeffs()):
        return sp.Integer(1), g
    a, b = poly.all_coeffs()
    r = -b / a
    if r == 0:
        return sp.Integer(1), g
    h = sp.Rational(float(r))
    l_ = sp.Rational(float(r - h))
    inner = sp.Add(q, -h, evaluate=False)
    if l_ != 0:
        inner = sp.Add(inner, -l_, evaluate=False)
    return a, inner


def _evaluated(e: sp.Expr) -> sp.Expr:
    """``e`` rebuilt with evaluation (an unevaluated nested sum flattened)."""
    return e.func(*[_evaluated(a) for a in e.args]) if e.args else e


def _exact_variable(v: sp.Expr) -> sp.Expr:
    """A boundary series' variable ``p - c`` or ``c - p`` (one parameter, not alpha) in the exact form of
    :func:`exact_linear`; any other variable as it is."""
    if ALPHA in v.free_symbols:
        return v
    a, inner = exact_linear(v)
    if not (inner.is_Add and inner.args[0].is_Add):
        return v  # c is a float (p - 1/2): p - c is one rounding already
    if a == 1:
        return inner
    if a == -1:
        (q, mh), ml = inner.args[0].args, inner.args[1]
        return sp.Add(sp.Add(-mh, -q, evaluate=False), -ml, evaluate=False)
    return v


def fixed_points(result: DivergenceResult) -> list:
    """The result's exceptional points at a fixed order (a number); one at an order in the parameters
    (b1/(b1 + b2)) is served by the series around the parameter-dependent factors instead."""
    return [p for p in result.exceptional_points if p.alpha.is_number]


def _taylor(expr: sp.Expr, var: sp.Symbol, n: int, seconds: float, point: dict) -> tuple[sp.Expr, ...] | None:
    """Taylor coefficients of expr in var at 0 (orders 0..n-1), or None if not a Taylor series.

    Taylor-mode arithmetic on the expression tree first (:func:`_taylor_mode`: seconds where sympy's
    ``series`` takes minutes on a sum of powers with symbolic exponents, such as randomized response on
    three values as p -> 1/3); sympy's ``series`` only where that does not apply (a node that is zero at
    the centre, a pole such as (alpha - 1/2)**-1, a node it has no rule for). Each attempt runs under
    the hang guard ``seconds``; when it fires there is no series (no fallback: which method is used
    never depends on the clock).
    """
    from .._timeout import StepTimeout, deadline_passed, run_with_time_limit

    def attempt():
        coeffs = _taylor_mode(expr, var, n)
        return coeffs if _agrees(expr, var, coeffs, point) else None  # checked at ``point``, within the limit

    try:
        coeffs = run_with_time_limit(attempt, seconds=seconds, clock="wall")
    except StepTimeout:
        if deadline_passed():
            raise  # an enclosing limit: not this attempt's to handle
        return None  # the hang guard fired (recorded: the series are not cached)
    except (_NotTaylorMode, *SYMBOLIC_ERRORS):  # no Taylor-mode rule, or sympy's many types on odd nodes: sympy's series then tries
        coeffs = None
    if coeffs is not None:
        return coeffs

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
        return run_with_time_limit(work, seconds=seconds, clock="wall")
    except (StepTimeout, RuntimeError, NotImplementedError, ValueError, TypeError, ZeroDivisionError):
        return None
    except SYMBOLIC_ERRORS:  # sympy's series raises many types; a failed series is just not used
        return None


def _agrees(expr: sp.Expr, var: sp.Symbol, coeffs: tuple, point: dict) -> bool:
    """Whether the truncated series equals ``expr`` at ``point`` to 1e-20 relative (60 digits), at the
    largest of var = 1e-2, 1e-3, 1e-4 where its last two terms are below 1e-24 of its value: a check of
    the lower orders (the ones that matter where the series is used), not a proof."""
    import mpmath

    try:
        with mpmath.workdps(60):
            cs = [sp.N(c.subs(point), 60) for c in coeffs]
            if not all(c.is_number and c.is_real for c in cs):
                return False
            cs = [mpmath.mpf(str(c)) for c in cs]
            f = expr.subs(point)
            for h in (sp.Rational(1, 100), sp.Rational(1, 1000), sp.Rational(1, 10000)):
                terms = [c * mpmath.mpf(h) ** k for k, c in enumerate(cs)]
                s = mpmath.fsum(terms)
                if s == 0 or abs(terms[-1]) + abs(terms[-2]) > mpmath.mpf(10) ** -24 * abs(s):
                    continue
                v = sp.N(f.subs(var, h), 60)
                if not (v.is_number and v.is_real):
                    return False
                return abs(mpmath.mpf(str(v)) - s) <= mpmath.mpf(10) ** -20 * abs(s)
    except (TypeError, ValueError, ArithmeticError):
        return False
    return False


class _NotTaylorMode(Exception):
    """The expression has a node Taylor-mode arithmetic cannot expand at the centre."""


def split_into_primes(e: sp.Expr) -> sp.Expr:
    """``e`` with each power of a positive rational to a symbolic exponent split into powers of primes:
    (2/3)**alpha * (3/4)**(1 - alpha) becomes 2**(2 - alpha) * 3**(2 alpha - 1) / 4, so that the powers
    of one prime merge and the coefficients come out as plain polynomials in alpha."""
    def is_split(x):
        return (x.is_Pow and x.base.is_Rational and x.base.is_positive and not x.exp.is_number
                and not (x.base.is_Integer and sp.isprime(x.base)))

    def split(x):
        out = sp.Integer(1)
        for q, k in sp.factorint(x.base.p).items():
            out *= q ** (k * x.exp)
        for q, k in sp.factorint(x.base.q).items():
            out *= q ** (-k * x.exp)
        return out
    return e.replace(is_split, split) if e.has(sp.Pow) else e


def _norm(e: sp.Expr) -> sp.Expr:
    """A coefficient in a canonical form: expanded, powers of one base merged, and one fraction where a
    symbolic denominator occurs, so that terms cancel here, before they multiply (expanded sums of
    fractions grow exponentially with the order: Laplace's series in 1/b took minutes at order 8)."""
    e = sp.expand(split_into_primes(e))
    if any(not p.exp.is_number for p in e.atoms(sp.Pow)) or e.has(sp.exp):
        e = sp.powsimp(e)
    # cancel only sums with symbolic denominators (it is slow on powers such as 2**alpha); over one
    # denominator first: cancel's own as_numer_denom multiplies out every term's denominator and
    # re-expands the products (Laplace at alpha = 1/2, 12 terms: 15 s, against 2.7 s)
    return sp.cancel(sp.together(e)) if e.is_Add and any(_fraction(t) for t in e.args) else e


def _fraction(term: sp.Expr) -> bool:
    return any(f.is_Pow and f.exp.is_number and f.exp.is_negative and f.base.free_symbols for f in sp.Mul.make_args(term))


class _ShortOfTerms(Exception):
    """Divisions by sums that vanish at the centre used up more working terms than were computed:
    ``missing`` more are needed (at least)."""

    def __init__(self, missing: int):
        super().__init__(f"{missing} more working terms needed")
        self.missing = missing


#: at most this many working terms beyond those asked for (divisions by vanishing sums use them up)
_MAX_EXTRA_TERMS = 12


def _taylor_mode(expr: sp.Expr, var: sp.Symbol, n: int) -> tuple[sp.Expr, ...]:
    """Taylor coefficients (orders 0..n-1) of ``expr`` in ``var`` at 0 by Taylor-mode arithmetic.

    Every node becomes its coefficients by the recurrences of automatic differentiation (Griewank &
    Walther 2008, *Evaluating Derivatives*, 2nd ed., Sect. 13.2, Table 13.2): for c = a b,
    c_k = sum_j a_j b_{k-j}; for c = exp(a), k c_k = sum_{j=1..k} j a_j c_{k-j}; for c = log(b),
    b_0 k c_k = k b_k - sum_{j=1..k-1} j c_j b_{k-j}; for c = b**r (r free of var),
    k b_0 c_k = sum_{j=1..k} ((r + 1) j - k) b_j c_{k-j}. A node's series is kept as a sum of
    scale * (series with plain coefficients): b**r = (b_0)**r * (b / b_0)**r and exp(a) = e^{a_0} e^{a - a_0}
    put the powers with symbolic exponents (2**alpha, p**(1 - alpha) at p = 1/3) into the scales, which
    multiply as single products, while the coefficients stay polynomials (or fractions) in alpha and the
    parameters, expanded after each step (:func:`_norm`). Scales that differ by a number are merged; a
    sum is collapsed to one list only where a log, exp or power needs it.

    Each series also carries a valuation v (it is var^v times its coefficients' series) and the number
    of its coefficients that are known: a base or a logarithm's argument that vanishes at the centre to
    order v (the discrete Laplace pmfs' normaliser tanh(u/2) ~ u/2 over sums ~ u^2 as b = 1/u -> oo) is
    divided by var^v, its leading zero coefficients dropped (the top v are then unknown: the whole
    computation is repeated with more working terms where too few are left), and a power or quotient
    of it is a Laurent series (a sum such as -1/u + (1 + Delta u)^(1 - alpha) / u, Poisson rates as
    lam = 1/u -> oo, whose negative powers cancel). Raises :class:`_NotTaylorMode` where a logarithm's
    argument vanishes at the centre after that (a log var term), where a power var^(r v) is not
    integer, where negative powers remain in the result, or for a node without a rule.
    """
    extra = 0
    while extra <= _MAX_EXTRA_TERMS:
        try:
            return _laurent_mode(expr, var, n, n + extra)
        except _ShortOfTerms as short:
            extra += short.missing
    raise _NotTaylorMode("divisions by sums that vanish at the centre use up the working terms")


def _laurent_mode(expr: sp.Expr, var: sp.Symbol, n: int, N: int) -> tuple[sp.Expr, ...]:
    """:func:`_taylor_mode` with ``N`` working terms; :class:`_ShortOfTerms` where fewer than ``n`` remain."""
    walk = _LaurentMode(var, n, N)
    _, d, known = walk.taylor(walk.collapse(walk.series(expr)))
    if known < n:
        raise _ShortOfTerms(n - known)
    coeffs = tuple(_tidy(c) for c in d[:n])
    if any(c.has(var) or c.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for c in coeffs):
        raise _NotTaylorMode("a coefficient is not finite")
    return coeffs


_ZERO, _ONE = sp.Integer(0), sp.Integer(1)


class _LaurentMode(Translator):
    """The walk of :func:`_laurent_mode`: one ``_series_<Class>`` method per node class (the translator's
    dispatch, :mod:`rdpsym.numeric.translate`); a node without one is refused (:class:`_NotTaylorMode`).

    A series is a list of pairs ``(scale, (v, d, known))``: the sum over pairs of scale * var^v * sum_k
    d[k] var^k, where d has ``N`` entries of which the first ``known`` are coefficients; v is an integer,
    or an expression (var^-alpha) until a product cancels it."""

    error = _NotTaylorMode
    target = "Taylor-mode rule"

    def __init__(self, var: sp.Symbol, n: int, N: int):
        self.var, self.n, self.N = var, n, N
        self.memo: dict = {}

    def refuse(self, node, family: str = "series"):
        raise _NotTaylorMode(f"no Taylor-mode rule for {type(node).__name__}")

    # -- series arithmetic -------------------------------------------------------------------------
    @staticmethod
    def scale(x: sp.Expr) -> sp.Expr:
        return sp.powsimp(split_into_primes(x))

    @staticmethod
    def is_zero(c: sp.Expr) -> bool:
        return c == 0 or c.is_zero is True or (c.is_zero is None and sp.simplify(c) == 0)

    def unit(self, v=_ZERO):
        return (v, [_ONE] + [_ZERO] * (self.N - 1), self.N)

    @staticmethod
    def offset(v, w):
        """v - w as an int, or None where it is not an integer (var^alpha and var^(alpha - 1/2))."""
        k = sp.expand(v - w)
        return int(k) if k.is_Integer else None

    def lowest(self, ts):
        """The least of the valuations of ``ts``; _NotTaylorMode where two differ by a non-integer."""
        w = ts[0][0]
        for t in ts[1:]:
            k = self.offset(t[0], w)
            if k is None:
                raise _NotTaylorMode("powers of the variable whose exponents differ by a non-integer")
            w = t[0] if k < 0 else w
        return w

    def shifted(self, t, w):
        """``t`` written with valuation ``w`` <= its own (leading zeros added)."""
        v, d, known = t
        k = self.offset(v, w)
        return (w, ([_ZERO] * k + d)[:self.N], min(self.N, known + k))

    def strip(self, t):
        """``t`` with its leading zero coefficients moved into the valuation."""
        v, d, known = t
        while known and self.is_zero(d[0]):
            v, d, known = v + 1, d[1:] + [_ZERO], known - 1
        if known < self.n:
            # fail fast: the result would be short of terms (a later product by var^k may restore
            # some; then the repeat with more working terms is merely slower)
            raise _ShortOfTerms(max(1, self.n - known))
        return v, d, known

    def cauchy(self, a, b):
        (va, da, ka), (vb, db, kb) = a, b
        k_ = min(ka, kb)
        d = [_norm(sp.Add(*[da[j] * db[k - j] for j in range(k + 1) if da[j] != 0 and db[k - j] != 0])) if k < k_
             else _ZERO for k in range(self.N)]
        return (va + vb, d, k_)

    def merge(self, pairs):
        out: list = []
        for s, t in pairs:
            for i, (s2, t2) in enumerate(out):
                q = self.scale(s / s2)
                if q.is_number and self.offset(t[0], t2[0]) is not None:
                    w = self.lowest([t, t2])
                    (_, d, k1), (_, d2, k2) = self.shifted(t, w), self.shifted(t2, w)
                    out[i] = (s2, (w, [_norm(x + q * y) for x, y in zip(d2, d)], min(k1, k2)))
                    break
            else:
                out.append((s, t))
        return out

    def collapse(self, pairs):
        w = self.lowest([t for _, t in pairs])
        ts = [(s, self.shifted(t, w)) for s, t in pairs]
        known = min(t[2] for _, t in ts)
        return (w, [_norm(sp.Add(*[s * t[1][k] for s, t in ts])) for k in range(self.N)], known)

    def product(self, a, b):
        return self.merge([(self.scale(s1 * s2), self.cauchy(t1, t2)) for s1, t1 in a for s2, t2 in b])

    def taylor(self, t):
        """``t`` as a plain Taylor series (valuation 0): leading zeros of negative powers dropped."""
        v, d, known = t
        if not sp.sympify(v).is_Integer:
            raise _NotTaylorMode("a power of the variable with a symbolic exponent")
        while v < 0:
            if not known:
                raise _ShortOfTerms(self.n)
            if not self.is_zero(d[0]):
                raise _NotTaylorMode("a negative power of the variable")
            v, d, known = v + 1, d[1:] + [_ZERO], known - 1
        return self.shifted((_ZERO, d, known), -v) if v > 0 else (_ZERO, d, known)

    # -- the walk ----------------------------------------------------------------------------------
    def series(self, e: sp.Expr) -> list:
        """The series of ``e`` (a list of pairs, see the class docstring), memoised per node."""
        if e not in self.memo:
            if not e.has(self.var):
                self.memo[e] = [(e, self.unit())]
            elif e == self.var:
                self.memo[e] = [(_ONE, self.unit(_ONE))]
            else:
                self.memo[e] = self.dispatch("series", e)
        return self.memo[e]

    def _series_Add(self, e):
        return self.merge([pair for t in e.args for pair in self.series(t)])

    def _series_Mul(self, e):
        out = [(sp.Mul(*[f for f in e.args if not f.has(self.var)]), self.unit())]
        for f in (f for f in e.args if f.has(self.var)):
            out = self.product(out, self.series(f))
        return out

    def _series_Pow(self, e):
        r = e.exp
        if r.has(self.var):
            return self.series(sp.exp(r * sp.log(e.base)))
        b = self.series(e.base)
        if r.is_Integer and r > 0:
            out = b
            for _ in range(int(r) - 1):
                out = self.product(out, b)
            return out
        s, t = b[0] if len(b) == 1 else (_ONE, self.collapse(b))
        v, d, known = self.strip(t)
        d0 = d[0]
        d = [_norm(x / d0) for x in d]
        c = [_ONE]
        for k in range(1, self.N):
            c.append(_norm(sp.Add(*[((r + 1) * j - k) * d[j] * c[k - j] for j in range(1, k + 1)]) / k)
                     if k < known else _ZERO)
        # var^(r v): a symbolic exponent (lam^alpha as lam = 1/u -> oo) may cancel in a product
        return [(self.scale((s * d0) ** r), (sp.expand(r * v), c, known))]

    def _series_exp(self, e):
        _, a, known = self.taylor(self.collapse(self.series(e.args[0])))
        c = [_ONE]
        for k in range(1, self.N):
            c.append(_norm(sp.Add(*[j * a[j] * c[k - j] for j in range(1, k + 1)]) / k) if k < known else _ZERO)
        return [(self.scale(sp.exp(a[0])), (_ZERO, c, known))]

    # tanh(u/2) = (e^u - 1)/(e^u + 1): a hyperbolic function by the rules for exp and powers
    def _series_hyperbolic(self, e):
        return self.series(e.rewrite(sp.exp))

    _series_tanh = _series_sinh = _series_cosh = _series_coth = _series_sech = _series_csch = _series_hyperbolic

    def _series_log(self, e):
        v, b, known = self.strip(self.collapse(self.series(e.args[0])))
        if not v.is_Integer:
            raise _NotTaylorMode("the log of a power of the variable with a symbolic exponent")
        b0 = b[0]
        c = [sp.log(b0)]
        for k in range(1, self.N):
            c.append(_norm((k * b[k] - sp.Add(*[j * c[j] * b[k - j] for j in range(1, k)])) / (k * b0))
                     if k < known else _ZERO)
        out = [(_ONE, (_ZERO, c, known))]
        if v != 0:
            # log(var^v B) = v log(var) + log(B): the pair with the scale log(var) is no Taylor series
            # unless it cancels (log(N) - log(D) of sums N, D that vanish to the same order); else the
            # final coefficients hold var and are refused
            out.append((sp.log(self.var), self.unit() if v == 1 else (_ZERO, [v] + [_ZERO] * (self.N - 1), self.N)))
        return out


def _tidy(c: sp.Expr) -> sp.Expr:
    """Factored polynomials (no cancellation near alpha = 1); exp products merged (no overflow)."""
    c = sp.expand(c)
    return sp.powsimp(c) if c.has(sp.exp) else sp.factor(c)


def singular_at(expr: sp.Expr, a0: sp.Expr) -> bool:
    try:
        v = expr.subs(ALPHA, a0)
    except SYMBOLIC_ERRORS:
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
    except SYMBOLIC_ERRORS:
        return False


def series_expansions(result: DivergenceResult, branch: sp.Expr, parameters: Sequence[Parameter],
                      terms: int = SERIES_TERMS, seconds: float = SERIES_SECONDS) -> tuple[list[Series], list[Series]]:
    """Symbolic Taylor series for ``branch``: (at parameter boundaries, at exceptional points).

    The series at alpha = 1 is computed at run time (Taylor-mode arithmetic, :class:`TaylorEmitter`).
    The symbolic series take seconds each; they are cached on disk with the derivations (series
    computed while a time limit expired are not kept).
    """
    key = "\n".join(["series-3", sp.srepr(branch), str(terms),
                     repr([(sp.srepr(p.alpha), sp.srepr(p.value)) for p in result.exceptional_points]),
                     repr([(p.name, sp.srepr(p.symbol), sp.srepr(p.domain), p.log_scale, p.typical) for p in parameters])])
    return SERIES_CACHE.get_or_compute(cache_key(key),
                                       lambda: _series_expansions(result, branch, parameters, terms, seconds))


def _series_expansions(result, branch, parameters, terms, seconds):
    out: list[Series] = []
    bounds = _boundary_series(result, branch, parameters, terms, seconds)
    tau = sp.Symbol("tau", real=True)
    points = [p.alpha for p in fixed_points(result)]
    typical = {p.symbol: sp.nsimplify(p.typical_values(1)[0]) for p in parameters}
    for a0 in points:
        if not singular_at(branch, a0):
            continue
        coeffs = _taylor(branch.subs(ALPHA, a0 + tau), tau, terms, seconds, typical)
        if coeffs is not None:
            out.append(Series(f"alpha near {a0}", ALPHA - a0, coeffs))
    return bounds, out


def _boundary_series(result, branch, parameters, terms, seconds) -> list[Series]:
    """The series of ``branch`` around each parameter boundary where it tends to 0 (every term of the
    closed form is O(1) there while the value is not: no float evaluation of the closed form keeps its
    digits). Scales (``log_scale``) and bounded parameters first; then every other parameter, integer
    ones included (k -> oo of k-ary randomized response, a Poisson rate lam -> oo), where no series
    already built converges next to that boundary (Laplace's sensitivity -> 0 is its b -> oo)."""
    out: list[Series] = []
    if not _has_transcendental(branch):
        return out
    u = sp.Symbol("u", positive=True)
    typical = {p.symbol: p.typical_values(1)[0] for p in parameters}
    first = [p for p in parameters if not p.symbol.is_integer
             and (p.log_scale or (p.domain.inf.is_finite and p.domain.sup.is_finite))]
    for param in first + [p for p in parameters if p not in first]:
        if param.symbol not in branch.free_symbols:
            continue
        others = {s: v for s, v in typical.items() if s != param.symbol}
        for end in _boundaries(param):
            if not _tends_to_zero(result, branch, param, end, others):
                continue
            if param not in first and any(_converges_near(s, param, end, others) for s in out if s.coeffs):
                continue
            if end is sp.oo:
                sub, var = 1 / u, 1 / param.symbol
            else:
                inside = 1 if (param.domain.contains(end + sp.Rational(1, 10**6)) is sp.true) else -1
                sub, var = end + inside * u, inside * (param.symbol - end)
            point = {ALPHA: sp.Rational(5, 2), **{s: sp.nsimplify(v) for s, v in others.items()}}
            coeffs = _taylor(branch.subs(param.symbol, sub), u, terms, seconds, point)
            if param not in first and coeffs is not None and _cancels_at_an_order(coeffs, result):
                # its coefficients are 0/0 at alpha = 1 or an exceptional order (the series in m of two
                # Gaussian scales starts at D_alpha of the two centred Gaussians, log(...)/(alpha - 1)):
                # in floats next to that order they are rounding error, and a boundary series replaces
                # the closed form wherever it converges (1e-8 off at alpha = 1 + 1e-9). The closed form,
                # its series around the order and its error estimate serve there instead.
                continue
            # a series the closed form needs (it tends to 0 there) but sympy did not give in time is
            # kept as a Series without coefficients: the float code then refuses the points of that
            # band where the closed form's estimated error is too large (fail closed, never a guess)
            out.append(Series(f"{param.name} near {end}", var, coeffs if coeffs is not None else ()))
    return out


def _cancels_at_an_order(coeffs: Sequence[sp.Expr], result: DivergenceResult) -> bool:
    """Whether a coefficient is singular (0/0 or a pole) at alpha = 1 or at an exceptional order."""
    orders = [sp.Integer(1)] + [p.alpha for p in fixed_points(result)]
    return any(c.has(ALPHA) and singular_at(c, a0) for c in coeffs for a0 in orders)


def _converges_near(s: Series, param: Parameter, end: sp.Expr, others: dict) -> bool:
    """Whether the series ``s`` (around another boundary) converges at alpha = 5/2 with ``param`` next to
    ``end`` (10^6, or 10^-6 inside a finite end) and the others typical: its last two terms below
    1e-16 of its value. Then ``s`` serves that boundary too, and no series of its own is built."""
    import mpmath

    near = sp.Integer(10) ** 6 if end is sp.oo else end + (1 if param.domain.contains(end + sp.Rational(1, 10**6)) is sp.true
                                                           else -1) * sp.Rational(1, 10**6)
    point = {ALPHA: sp.Rational(5, 2), param.symbol: near, **{k: sp.nsimplify(v) for k, v in others.items()}}
    try:
        with mpmath.workdps(30):
            v = mpmath.mpf(str(sp.N(s.variable.subs(point), 30)))
            terms = [mpmath.mpf(str(sp.N(c.subs(point), 30))) * v**k for k, c in enumerate(s.coeffs)]
            total = mpmath.fsum(terms)
            return total != 0 and abs(terms[-1]) + abs(terms[-2]) <= mpmath.mpf(10) ** -16 * abs(total)
    except (TypeError, ValueError, ArithmeticError):
        return False


# ------------------------------------------------------------------------------------------------
# Singular orders that depend on the parameters
# ------------------------------------------------------------------------------------------------
#: Next to a parameter-dependent singular factor D (|D| / sum|terms of D| below this) the closed form
#: is checked: a series around the root is used where it converges, else the closed form where its
