"""Sums of products of powers and exponentials as rational functions of fresh generators (issue 18).

A derived log-normaliser Z is a sum of terms c * prod_j B_j^(e_j + alpha f_j) * exp(sum_i r_i m_i) with
positive bases B_j, rational exponents and rational r_i. :class:`Generators` maps such an expression to a
rational function of fresh positive symbols:

* exp(r m) (m free of numbers, possibly alpha times something) -> E_m^r, one generator per monomial m,
  so exp(1/b) and exp(2/b) are E^1 and E^2 of one E = exp(1/b); exp(c log A) -> A^c;
* B^(e + alpha f) with B factored into irreducible factors F_k of multiplicity k (each oriented to be
  positive over the parameters' domains: 1 - p, not p - 1) -> F_k^(k e) * X_F^(k f), X_F = F^alpha (if F
  is itself a generator E_m, X_F is E_(alpha m): exp(m)^alpha = exp(alpha m)); a positive rational base is
  split into primes, so 10^alpha 45^-alpha is 2^alpha 3^(-2 alpha) 5^0... the same way on both sides;
* |A| -> A or -A where the sign of A over the domains is decided.

The map is a substitution of functions for independent variables, so an identity between the images as
rational functions (numerator of the difference expands to 0) is an identity of the functions wherever
every base is positive, i.e. over the domains; the converse fails (two generators standing for equal
functions), so a failed comparison means "not shown", never "different". Anything outside these shapes
raises :class:`NotMonomial`. The binomial theorem is the case Z = sum_k C(n, k) a^k b^(n - k) with
a = p^alpha q^(1 - alpha): Z and (a + b)^n map to the same polynomial.
"""

from __future__ import annotations

import sympy as sp

from ..symbols import alpha as ALPHA
from .sign import sign

__all__ = ["Generators", "NotMonomial", "monomial_equal", "factored_form"]


class NotMonomial(ValueError):
    """The expression is outside the shapes the map handles (or a sign is undecided)."""


def _sign(e: sp.Expr, subs: dict) -> int:
    """+1 or -1: the sign of e over the parameters' domains (``subs`` from domain_substitution writes each
    parameter over its domain) by the sign oracle, else raise."""
    s = sign(sp.sympify(e).subs(subs), effort="rewritings")
    if s in (1, -1):
        return s
    raise NotMonomial(f"sign of {e} undecided")


def _split_exponent(e: sp.Expr) -> tuple[sp.Rational, sp.Rational]:
    """e = e0 + alpha e1 with rational e0, e1, else raise."""
    e = sp.expand(e)
    e1 = e.coeff(ALPHA)
    e0 = sp.expand(e - e1 * ALPHA)
    if not (e0.is_Rational and e1.is_Rational):
        raise NotMonomial(f"exponent {e} is not rational + rational*alpha")
    return e0, e1


class Generators:
    """The map of the module docstring; ``subs`` (parameter -> expression over its domain) decides signs."""

    def __init__(self, subs: dict, atoms: bool = False):
        self.subs = subs
        self.atoms = atoms        # polynomial factors in the parameters alone as generators (1 - q -> Y)
        self.gens: dict = {}      # key -> Dummy
        self.values: dict = {}    # Dummy -> the function it stands for (in the original symbols)
        self.exp_of: dict = {}    # Dummy of exp(m) -> m
        self._powers: dict = {}   # (base, exponent) -> image, each power mapped once
        self._signs: dict = {}    # image -> its sign

    # -- generators ----------------------------------------------------------------------------------
    def _gen(self, key, value) -> sp.Dummy:
        g = self.gens.get(key)
        if g is None:
            g = self.gens[key] = sp.Dummy(f"g{len(self.gens)}", positive=True)
            self.values[g] = value
            if key[0] == "exp":
                self.exp_of[g] = key[1]
        return g

    def _exp_gen(self, m: sp.Expr) -> sp.Dummy:
        return self._gen(("exp", m), sp.exp(m))

    def _alpha_power(self, f: sp.Expr) -> sp.Expr:
        """X_f = f^alpha for an (oriented, irreducible) factor f of the image ring."""
        if f in self.exp_of:
            r, m = sp.expand(ALPHA * self.exp_of[f]).as_coeff_Mul()
            return self._exp_gen(m) ** r
        return self._gen(("pow", f), self.back(f) ** ALPHA)

    def sign(self, f: sp.Expr) -> int:
        """The sign of an image-ring expression over the domains: each exp(m) generator written 1 + w
        (m > 0) or 1/(1 + w) (m < 0) with w > 0, a sufficient reading (exp(1/b) - 1 > 0 for b > 0)."""
        if f.is_positive:
            return 1
        if f in self._signs:
            return self._signs[f]
        rep = {}
        for g, m in self.exp_of.items():
            if g in f.free_symbols:
                sm = sign(m.subs(self.subs), effort="rewritings")
                w = sp.Dummy("w", positive=True)
                rep[g] = 1 + w if sm == 1 else (1 / (1 + w) if sm == -1 else g)
        self._signs[f] = _sign(f.xreplace(rep), self.subs)
        return self._signs[f]

    # -- the map -------------------------------------------------------------------------------------
    def map(self, e: sp.Expr) -> sp.Expr:
        if e.is_Rational or e.is_Symbol:
            return e
        if e.is_Add:
            return sp.Add(*[self.map(a) for a in e.args])
        if e.is_Mul:
            return sp.Mul(*[self.map(a) for a in e.args])
        if isinstance(e, sp.exp):
            return self._exp(e.args[0])
        if e.is_Pow:
            return self._pow(e.base, e.exp)
        if isinstance(e, sp.Abs):
            return _sign(e.args[0], self.subs) * self.map(e.args[0])
        raise NotMonomial(f"{type(e).__name__} is not a sum of products of powers")

    def _exp(self, arg: sp.Expr) -> sp.Expr:
        out = sp.Integer(1)
        for t in sp.Add.make_args(sp.expand(arg)):
            r, m = t.as_coeff_Mul()
            if not r.is_Rational:
                raise NotMonomial(f"exp of {t}")
            c, lg = m.as_independent(sp.log, as_Add=False)
            if isinstance(lg, sp.log):
                out *= self._pow(lg.args[0], r * c)
            elif m.has(sp.log):
                raise NotMonomial(f"exp of {t}")
            elif m != 1:
                out *= self._exp_gen(m) ** r
            else:
                out *= sp.exp(r)  # a number: e^r, the same on both sides
        return out

    def _pow(self, base: sp.Expr, ex: sp.Expr) -> sp.Expr:
        if ex.is_Integer:
            if self.atoms and base.is_Add:
                return self._pow_of_factors(base, ex, ex, sp.Integer(0))
            return self.map(base) ** ex
        if base == sp.E:
            return self._exp(ex)
        e0, e1 = _split_exponent(ex)
        if base.is_Rational:
            if base <= 0:
                raise NotMonomial(f"power of {base}")
            return sp.Mul(*[self._prime_power(sp.Integer(pr), k * e0, k * e1)
                            for pr, k in sp.factorrat(base).items()])
        key = (base, ex)
        if key not in self._powers:
            self._powers[key] = self._pow_of_factors(base, ex, e0, e1)
        return self._powers[key]

    def _pow_of_factors(self, base, ex, e0, e1) -> sp.Expr:
        """base^(e0 + alpha e1) = prod of the powers of base's positive factors (base > 0 over the domains)."""
        if base.is_Mul:  # (c x y)^e = c^e x^e y^e for positive factors, each oriented positive
            c, rest = base.as_coeff_Mul()
            out = sp.Integer(1)
            for a in sp.Mul.make_args(rest):
                if self.sign(self.map(a)) < 0:
                    a, c = -a, -c
                out *= self._pow(a, ex)
            if c <= 0:
                raise NotMonomial(f"power of the non-positive {base}")
            return out * (self._pow(c, ex) if c != 1 else 1)
        if base.is_Pow and base.exp.is_Rational and self.sign(self.map(base.base)) > 0:
            return self._pow(base.base, base.exp * ex)
        c, factors = _factor_list(self.map(base))
        out = sp.Integer(1)
        for f, k in factors:
            if not f.is_positive:
                s = self.sign(f)
                if s < 0:
                    f, c = sp.expand(-f), c * (-1) ** k
            if not (f.is_Symbol or (k * e0).is_Integer):
                raise NotMonomial(f"non-integer power of {f}")
            fy = self._gen(("poly", f), f) if self.atoms and f.is_Add and not f.has(*self.values) else f
            out *= fy ** (k * e0) * (self._alpha_power(f) ** (k * e1) if e1 else 1)
        if not (c.is_Rational and c > 0):
            raise NotMonomial(f"constant {c} of a power")
        return out * self._pow(c, ex) if c != 1 else out

    def _prime_power(self, pr: sp.Integer, e0, e1) -> sp.Expr:
        return pr ** e0 * (self._gen(("pow", pr), pr ** ALPHA) ** e1 if e1 else 1)

    # -- back ----------------------------------------------------------------------------------------
    def back(self, e: sp.Expr) -> sp.Expr:
        """The image mapped back to functions of the parameters."""
        return e.xreplace(self.values) if self.values else e


def _binomial_power(e: sp.Expr):
    """(c, [(a + b, n)]) when the polynomial e is a monomial times the expansion of (a + b)^n, n >= 2, with
    a and b monomials (the binomial theorem: its n + 1 exponent vectors lie on a segment whose ends are
    n a and n b); None otherwise. Checked by expanding (a + b)^n, so a wrong guess is never returned."""
    gens = sorted(e.free_symbols, key=sp.default_sort_key)
    if not gens:
        return None
    P = sp.Poly(e, *gens)
    n = len(P.terms()) - 1
    if n < 2:
        return None
    shift, P = P.terms_gcd()
    (ea, ca), (eb, cb) = P.terms()[0], P.terms()[-1]
    if not (ca.is_Integer and cb.is_Integer and ca > 0 and cb > 0) or any(x % n for x in ea + eb):
        return None
    (ra, exact_a), (rb, exact_b) = sp.integer_nthroot(int(ca), n), sp.integer_nthroot(int(cb), n)
    if not (exact_a and exact_b):
        return None
    F = sp.Integer(ra) * sp.Mul(*[g ** (x // n) for g, x in zip(gens, ea)]) \
        + sp.Integer(rb) * sp.Mul(*[g ** (x // n) for g, x in zip(gens, eb)])
    if sp.Poly(sp.expand(F ** n), *gens) != P:
        return None
    return sp.Integer(1), [(g, x) for g, x in zip(gens, shift) if x] + [(F, n)]


def _sqf_then_factor(e: sp.Expr):
    """factor_list of a polynomial through the binomial theorem or its square-free decomposition first:
    (a + b)^10 expanded is found a tenth power cheaply, and only a + b is factored further."""
    known = _binomial_power(e)
    if known is not None:
        return known
    c, parts = sp.sqf_list(e)
    out = []
    for f, k in parts:
        cf, fs = sp.factor_list(f)
        c *= cf ** k
        out.extend((g, j * k) for g, j in fs)
    return c, out


def _factor_list(e: sp.Expr):
    """(c, [(factor, multiplicity)]) of a rational function, the denominator's with negative multiplicity."""
    num, den = sp.fraction(sp.cancel(sp.together(e)))
    cn, fn = _sqf_then_factor(num)
    cd, fd = _sqf_then_factor(den)
    return sp.Rational(cn, 1) / cd if cn.is_Rational and cd.is_Rational else cn / cd, fn + [(f, -k) for f, k in fd]


def _is_zero_rational(d: sp.Expr) -> bool:
    num, _ = sp.fraction(sp.together(d))
    return sp.expand(num) == 0


def monomial_equal(a: sp.Expr, b: sp.Expr, subs: dict) -> bool:
    """a == b shown through :class:`Generators` (False when not shown, never an error)."""
    for atoms in (True, False):  # polynomial factors as atoms first (cheap), then multiplied out
        g = Generators(subs, atoms)
        try:
            if _is_zero_rational(g.map(a) - g.map(b)):
                return True
        except NotMonomial:
            return False
    return False


def _monomial_split(e: sp.Expr, gens) -> tuple[sp.Expr, sp.Expr]:
    """e = (product of powers of generators) * rest."""
    mono, rest = sp.Integer(1), sp.Integer(1)
    for f in sp.Mul.make_args(e):
        base = f.base if f.is_Pow else f
        if base in gens:
            mono *= f
        else:
            rest *= f
    return mono, rest


def _oriented_negative(g: Generators, f: sp.Expr) -> bool:
    """f is negative over the domains (a cosmetic orientation: undecided keeps f as it is)."""
    try:
        return g.sign(f) < 0
    except NotMonomial:
        return False


def _shaped_sum(g: Generators, poly: sp.Expr) -> sp.Expr:
    """A sum in the image ring mapped back term by generator monomial: coefficients factored, each factor
    oriented positive over the domains, so that (1 - q) (1 - q)^-alpha combines to (1 - q)^(1 - alpha)."""
    gens = set(g.values)
    groups: dict = {}
    for t in sp.Add.make_args(sp.expand(poly)):
        mono, rest = _monomial_split(t, gens)
        groups[mono] = groups.get(mono, 0) + rest
    out = []
    for mono, coeff in groups.items():
        c, factors = _factor_list(coeff)
        term = sp.Integer(1)
        for f, k in factors:
            if not f.is_Symbol and _oriented_negative(g, f):
                f, c = sp.expand(-f), c * (-1) ** k
            term *= g.back(f) ** k
        t = sp.powsimp(c * term * g.back(mono), combine="exp")
        out.append(t.replace(lambda n: isinstance(n, sp.exp), lambda n: sp.exp(sp.factor(n.args[0]))))
    return sp.Add(*out)


def factored_form(Z: sp.Expr, subs: dict) -> sp.Expr:
    """log Z read off the factored image of Z = c M prod N_i^k_i / D (M a monomial of generators): for a
    numerator c M F^n (n >= 2) the power of a sum n log(M^(1/n) F) + log c - log D, else log(N/D) with
    M carried into the numerator's terms. Raises :class:`NotMonomial` outside the map's shapes."""
    g = Generators(subs, atoms=True)  # the binomial theorem on the terms as they stand, else factor
    num, den = sp.fraction(sp.cancel(sp.together(g.map(Z))))
    power = _binomial_power(num)
    if power is not None and not den.has(*[y for k, y in g.gens.items() if k[0] == "poly"]):
        cd, fd = _sqf_then_factor(den)
        c, factors = 1 / cd, power[1] + [(f, -k) for f, k in fd]
    else:
        g = Generators(subs)
        c, factors = _factor_list(g.map(Z))
    gens = set(g.values)
    mono, num, den = sp.Integer(1), [], []
    for f, k in factors:
        if f in gens:
            mono *= f ** k
        else:
            (num if k > 0 else den).append((f, k))
    D = sp.Mul(*[_shaped_sum(g, f) ** -k for f, k in den])
    if not (len(num) == 1 and num[0][1] >= 2 and c > 0):
        N = sp.Mul(*[f ** k for f, k in num])
        return sp.log(c * _shaped_sum(g, mono * N) / D)
    (f, n), = num
    W = _shaped_sum(g, sp.expand(mono ** sp.Rational(1, n) * f))
    return n * sp.log(W) + sp.log(c) - sp.log(D)
