"""Generality of the derivation engine over distribution pairs from the literature's tables.

Pairs follow Gil, Alajaji & Linder (2013), "Rényi divergence measures for commonly used univariate
continuous distributions", Table 2, and van Erven & Harremoës (2014), plus discrete families and
kinked / heavy-tailed / differently supported densities. For every pair the engine derives
D_alpha(P||Q) symbolically (``cache=False``); a ``closed_form`` result is compared at 30 digits with
the independent numeric path :func:`rdpsym.numeric.numeric_divergence` at alpha in (0, 1), alpha in
(1, 5), alpha = 1 (KL) and alpha = oo (D_inf), at concrete parameter points chosen so that some orders
fall outside the finiteness conditions (there both sides must be +inf).

The default run checks a fast subset; ``pytest -m slow tests/test_generality.py`` runs the whole
table, prints the closed-form rate and asserts >= 90 % closed forms among the pairs with a known
closed form, and zero mismatches over all pairs (``known_closed_form=False`` marks the few added
honesty checks without one: Weibull shapes, Gumbel scales, geometric vs Poisson).
No published answer appears here: only densities.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import mpmath
import pytest
import sympy as sp

from rdpsym.derive.engine import renyi_divergence
from rdpsym.numeric import numeric_divergence

x = sp.Symbol("x", real=True)
k = sp.Symbol("k", integer=True)
pos = dict(positive=True)

R = sp.Rational
H = sp.Heaviside
pi = sp.pi


@dataclass
class Pair:
    name: str
    P: sp.Expr
    Q: sp.Expr
    var: sp.Symbol
    support: sp.Set
    points: list  # list of {name: value}
    alphas: tuple = (R(1, 3), R(7, 4), R(3), 1, sp.oo)
    fast: bool = False
    # alphas skipped at specific points: the numeric path is slow/unreliable there
    skip_numeric: tuple = ()
    # False for pairs added as honesty checks that have no known elementary closed form (shape pairs
    # whose integrand mixes two different powers or exponentials of x): they must come out
    # numeric_only or match, and do not count towards the closed-form rate of the literature's pairs
    known_closed_form: bool = True


def _sym(names, **assumptions):
    return sp.symbols(names, **assumptions)


def _pairs() -> list[Pair]:
    out: list[Pair] = []
    add = out.append

    b, s = _sym("b s", **pos)
    add(Pair("laplace location", sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - s) / b) / (2 * b), x,
             sp.S.Reals, [dict(b=R(3, 2), s=1), dict(b=R(1, 3), s=R(5, 2))], alphas=(R(1, 3), R(1, 2), R(7, 4), 3, 1, sp.oo)))
    b1, b2 = _sym("b1 b2", **pos)
    add(Pair("laplace scales", sp.exp(-sp.Abs(x) / b1) / (2 * b1), sp.exp(-sp.Abs(x) / b2) / (2 * b2), x, sp.S.Reals,
             [dict(b1=1, b2=2), dict(b1=3, b2=1)], alphas=(R(1, 3), R(7, 4), 3, 1, sp.oo)))
    m, s1 = sp.Symbol("m", real=True), sp.Symbol("sigma", positive=True)
    add(Pair("gaussian location", sp.exp(-x**2 / (2 * s1**2)) / sp.sqrt(2 * pi * s1**2),
             sp.exp(-(x - m)**2 / (2 * s1**2)) / sp.sqrt(2 * pi * s1**2), x, sp.S.Reals,
             [dict(m=1, sigma=R(3, 2)), dict(m=-2, sigma=R(1, 2))], fast=True))
    m1, m2 = _sym("m1 m2", real=True)
    sg1, sg2 = _sym("s1 s2", **pos)
    add(Pair("gaussian mean and variance", sp.exp(-(x - m1)**2 / (2 * sg1**2)) / sp.sqrt(2 * pi * sg1**2),
             sp.exp(-(x - m2)**2 / (2 * sg2**2)) / sp.sqrt(2 * pi * sg2**2), x, sp.S.Reals,
             [dict(m1=0, m2=1, s1=1, s2=2), dict(m1=1, m2=0, s1=2, s2=1)]))
    l1, l2 = _sym("l1 l2", **pos)
    add(Pair("exponential rates", l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo),
             [dict(l1=1, l2=3), dict(l1=2, l2=R(1, 2))], fast=True))
    a1, a2, t1, t2 = _sym("a1 a2 th1 th2", **pos)
    add(Pair("gamma shape and rate", t1**a1 * x**(a1 - 1) * sp.exp(-t1 * x) / sp.gamma(a1),
             t2**a2 * x**(a2 - 1) * sp.exp(-t2 * x) / sp.gamma(a2), x, sp.Interval(0, sp.oo),
             [dict(a1=2, a2=R(1, 2), th1=1, th2=3), dict(a1=R(3, 2), a2=3, th1=2, th2=1)]))
    n1, n2 = _sym("n1 n2", **pos)
    add(Pair("chi degrees of freedom", x**(n1 - 1) * sp.exp(-x**2 / 2) / (2**(n1 / 2 - 1) * sp.gamma(n1 / 2)),
             x**(n2 - 1) * sp.exp(-x**2 / 2) / (2**(n2 / 2 - 1) * sp.gamma(n2 / 2)), x, sp.Interval(0, sp.oo),
             [dict(n1=3, n2=1), dict(n1=R(5, 2), n2=4)]))
    pa, pb, qa, qb = _sym("pa pb qa qb", **pos)
    add(Pair("beta", x**(pa - 1) * (1 - x)**(pb - 1) / sp.beta(pa, pb), x**(qa - 1) * (1 - x)**(qb - 1) / sp.beta(qa, qb),
             x, sp.Interval(0, 1), [dict(pa=2, pb=3, qa=R(1, 2), qb=1), dict(pa=R(3, 2), pb=R(5, 2), qa=3, qb=2)]))
    kw, lw1, lw2 = _sym("kw lw1 lw2", **pos)
    add(Pair("weibull scales", kw / lw1 * (x / lw1)**(kw - 1) * sp.exp(-(x / lw1)**kw),
             kw / lw2 * (x / lw2)**(kw - 1) * sp.exp(-(x / lw2)**kw), x, sp.Interval(0, sp.oo),
             [dict(kw=2, lw1=1, lw2=2), dict(kw=R(3, 2), lw1=3, lw2=1)]))
    xm, pa1, pa2 = _sym("xm pa1 pa2", **pos)
    add(Pair("pareto shapes", pa1 * xm**pa1 / x**(pa1 + 1), pa2 * xm**pa2 / x**(pa2 + 1), x, sp.Interval(xm, sp.oo),
             [dict(xm=1, pa1=2, pa2=1), dict(xm=R(1, 2), pa1=1, pa2=3)]))
    mu1, mu2, lam = _sym("mu1 mu2 lam", **pos)
    add(Pair("inverse gaussian means", sp.sqrt(lam / (2 * pi * x**3)) * sp.exp(-lam * (x - mu1)**2 / (2 * mu1**2 * x)),
             sp.sqrt(lam / (2 * pi * x**3)) * sp.exp(-lam * (x - mu2)**2 / (2 * mu2**2 * x)), x, sp.Interval(0, sp.oo),
             [dict(mu1=1, mu2=2, lam=1), dict(mu1=3, mu2=1, lam=2)]))
    c1, c2 = _sym("c1 c2", **pos)
    add(Pair("levy scales", sp.sqrt(c1 / (2 * pi)) * sp.exp(-c1 / (2 * x)) / x**R(3, 2),
             sp.sqrt(c2 / (2 * pi)) * sp.exp(-c2 / (2 * x)) / x**R(3, 2), x, sp.Interval(0, sp.oo),
             [dict(c1=1, c2=2), dict(c1=3, c2=1)]))
    g1, g2 = sp.symbols("g1 g2", real=True)
    beta = sp.Symbol("beta", positive=True)
    z1, z2 = (x - g1) / beta, (x - g2) / beta
    add(Pair("gumbel locations", sp.exp(-z1 - sp.exp(-z1)) / beta, sp.exp(-z2 - sp.exp(-z2)) / beta, x, sp.S.Reals,
             [dict(g1=0, g2=1, beta=1), dict(g1=R(1, 2), g2=-1, beta=2)]))
    lm1, lm2 = _sym("lm1 lm2", real=True)
    ls = sp.Symbol("ls", positive=True)
    add(Pair("log-normal locations", sp.exp(-(sp.log(x) - lm1)**2 / (2 * ls**2)) / (x * ls * sp.sqrt(2 * pi)),
             sp.exp(-(sp.log(x) - lm2)**2 / (2 * ls**2)) / (x * ls * sp.sqrt(2 * pi)), x, sp.Interval(0, sp.oo),
             [dict(lm1=0, lm2=1, ls=1), dict(lm1=1, lm2=-1, ls=2)]))
    ls1, ls2 = _sym("ls1 ls2", **pos)
    add(Pair("log-normal scales", sp.exp(-sp.log(x)**2 / (2 * ls1**2)) / (x * ls1 * sp.sqrt(2 * pi)),
             sp.exp(-sp.log(x)**2 / (2 * ls2**2)) / (x * ls2 * sp.sqrt(2 * pi)), x, sp.Interval(0, sp.oo),
             [dict(ls1=1, ls2=2), dict(ls1=2, ls2=1)]))
    h1, h2 = _sym("h1 h2", **pos)
    add(Pair("half-normal scales", sp.sqrt(2 / pi) / h1 * sp.exp(-x**2 / (2 * h1**2)),
             sp.sqrt(2 / pi) / h2 * sp.exp(-x**2 / (2 * h2**2)), x, sp.Interval(0, sp.oo),
             [dict(h1=1, h2=2), dict(h1=2, h2=1)]))
    r1, r2 = _sym("r1 r2", **pos)
    add(Pair("rayleigh scales", x / r1**2 * sp.exp(-x**2 / (2 * r1**2)), x / r2**2 * sp.exp(-x**2 / (2 * r2**2)), x,
             sp.Interval(0, sp.oo), [dict(r1=1, r2=2), dict(r1=2, r2=1)]))
    cg, cm = sp.Symbol("cg", positive=True), sp.Symbol("cm", real=True)
    add(Pair("cauchy location", cg / (pi * (x**2 + cg**2)), cg / (pi * ((x - cm)**2 + cg**2)), x, sp.S.Reals,
             [dict(cg=1, cm=1), dict(cg=2, cm=-3)]))
    ua, ub = _sym("ua ub", **pos)
    add(Pair("uniform nested", H(x) * H(ua - x) / ua, H(x) * H(ua + ub - x) / (ua + ub), x, sp.S.Reals,
             [dict(ua=1, ub=1), dict(ua=R(1, 2), ub=3)], fast=True))
    add(Pair("uniform nested reversed", H(x) * H(ua + ub - x) / (ua + ub), H(x) * H(ua - x) / ua, x, sp.S.Reals,
             [dict(ua=1, ub=1), dict(ua=R(1, 2), ub=3)]))
    us = sp.Symbol("us", positive=True)
    add(Pair("uniform shifted", sp.Piecewise((1, (x > 0) & (x < 2)), (0, True)) / 2,
             sp.Piecewise((1, (x > us) & (x < us + 2)), (0, True)) / 2, x, sp.S.Reals,
             [dict(us=R(1, 2)), dict(us=R(3, 2))]))
    el = sp.Symbol("el", positive=True)
    add(Pair("shifted exponential (different supports)", H(x) * sp.exp(-x), H(x - el) * sp.exp(-(x - el)), x, sp.S.Reals,
             [dict(el=1), dict(el=R(1, 3))]))
    add(Pair("shifted exponential (nested supports)", H(x - el) * sp.exp(-(x - el)), H(x) * sp.exp(-x), x, sp.S.Reals,
             [dict(el=1), dict(el=R(1, 3))]))
    # discrete
    p1, p2 = _sym("p1 p2", **pos)
    add(Pair("poisson", sp.exp(-l1) * l1**k / sp.factorial(k), sp.exp(-l2) * l2**k / sp.factorial(k), k, sp.S.Naturals0,
             [dict(l1=1, l2=3), dict(l1=R(5, 2), l2=R(1, 2))], fast=True))
    q1, q2 = _sym("q1 q2", **pos)
    add(Pair("geometric", (1 - q1) * q1**k, (1 - q2) * q2**k, k, sp.S.Naturals0,
             [dict(q1=R(1, 2), q2=R(1, 4)), dict(q1=R(1, 5), q2=R(2, 3))]))
    n = sp.Symbol("n", integer=True, positive=True)
    add(Pair("binomial", sp.binomial(n, k) * p1**k * (1 - p1)**(n - k), sp.binomial(n, k) * p2**k * (1 - p2)**(n - k), k,
             sp.Range(0, n + 1), [dict(n=5, p1=R(1, 3), p2=R(1, 2)), dict(n=3, p1=R(4, 5), p2=R(1, 10))]))
    dq = sp.Symbol("dq", positive=True)
    add(Pair("discrete laplace location", (1 - dq) / (1 + dq) * dq**sp.Abs(k), (1 - dq) / (1 + dq) * dq**sp.Abs(k - 1), k,
             sp.S.Integers, [dict(dq=R(1, 2)), dict(dq=R(1, 5))]))
    rp = sp.Symbol("rp", positive=True)
    add(Pair("randomized response", sp.Piecewise((rp, sp.Eq(k, 1)), (1 - rp, True)),
             sp.Piecewise((1 - rp, sp.Eq(k, 1)), (rp, True)), k, sp.FiniteSet(0, 1),
             [dict(rp=R(3, 4)), dict(rp=R(11, 20))], fast=True))
    f1, f2 = _sym("f1 f2", **pos)
    add(Pair("three-point pmf", sp.Piecewise((f1, sp.Eq(k, 0)), (f2, sp.Eq(k, 1)), (1 - f1 - f2, True)),
             sp.Piecewise((R(1, 3), sp.Eq(k, 0)), (R(1, 3), sp.Eq(k, 1)), (R(1, 3), True)), k, sp.FiniteSet(0, 1, 2),
             [dict(f1=R(1, 2), f2=R(1, 4)), dict(f1=R(1, 10), f2=R(1, 5))]))
    add(Pair("bernoulli vs point mass", sp.Piecewise((p1, sp.Eq(k, 1)), (1 - p1, True)),
             sp.Piecewise((1, sp.Eq(k, 1)), (0, True)), k, sp.FiniteSet(0, 1), [dict(p1=R(1, 3))]))
    # added with the generality work on issue 2: other shapes, scales and supports of the same families
    wk1, wk2 = _sym("wk1 wk2", **pos)
    add(Pair("weibull shapes", wk1 * x**(wk1 - 1) * sp.exp(-x**wk1), wk2 * x**(wk2 - 1) * sp.exp(-x**wk2), x,
             sp.Interval(0, sp.oo), [dict(wk1=2, wk2=1), dict(wk1=R(3, 2), wk2=3)], known_closed_form=False))
    cn, cs1, cs2 = sp.Symbol("cn", positive=True), *_sym("cs1 cs2", **pos)
    add(Pair("chi scales", x**(cn - 1) * sp.exp(-x**2 / (2 * cs1**2)) / (2**(cn / 2 - 1) * sp.gamma(cn / 2) * cs1**cn),
             x**(cn - 1) * sp.exp(-x**2 / (2 * cs2**2)) / (2**(cn / 2 - 1) * sp.gamma(cn / 2) * cs2**cn), x,
             sp.Interval(0, sp.oo), [dict(cn=3, cs1=1, cs2=2), dict(cn=R(5, 2), cs1=2, cs2=1)]))
    im, il1, il2 = _sym("im il1 il2", **pos)
    add(Pair("inverse gaussian shapes", sp.sqrt(il1 / (2 * pi * x**3)) * sp.exp(-il1 * (x - im)**2 / (2 * im**2 * x)),
             sp.sqrt(il2 / (2 * pi * x**3)) * sp.exp(-il2 * (x - im)**2 / (2 * im**2 * x)), x, sp.Interval(0, sp.oo),
             [dict(im=1, il1=1, il2=3), dict(im=2, il1=2, il2=1)]))
    el2 = sp.Symbol("el2", positive=True)
    add(Pair("exponential vs half-normal", el2 * sp.exp(-el2 * x), sp.sqrt(2 / pi) * sp.exp(-x**2 / 2), x,
             sp.Interval(0, sp.oo), [dict(el2=1), dict(el2=R(5, 2))]))
    add(Pair("laplace vs gaussian", sp.exp(-sp.Abs(x)) / 2, sp.exp(-x**2 / 2) / sp.sqrt(2 * pi), x, sp.S.Reals,
             [dict()], alphas=(R(1, 3), R(7, 4), 1, sp.oo)))
    dq1, dq2 = _sym("dq1 dq2", **pos)
    add(Pair("discrete laplace scales", (1 - dq1) / (1 + dq1) * dq1**sp.Abs(k), (1 - dq2) / (1 + dq2) * dq2**sp.Abs(k), k,
             sp.S.Integers, [dict(dq1=R(1, 2), dq2=R(1, 5)), dict(dq1=R(1, 3), dq2=R(3, 4))]))
    tr = sp.Symbol("tr", positive=True)
    add(Pair("truncated exponential vs exponential", H(x) * H(tr - x) * sp.exp(-x) / (1 - sp.exp(-tr)), H(x) * sp.exp(-x), x,
             sp.S.Reals, [dict(tr=1), dict(tr=R(5, 2))]))
    add(Pair("exponential vs truncated exponential", H(x) * sp.exp(-x), H(x) * H(tr - x) * sp.exp(-x) / (1 - sp.exp(-tr)), x,
             sp.S.Reals, [dict(tr=1), dict(tr=R(5, 2))]))
    pxm, pd, psh = _sym("pxm pd psh", **pos)
    add(Pair("pareto scales (nested supports)", H(x - pxm - pd) * psh * (pxm + pd)**psh / x**(psh + 1),
             H(x - pxm) * psh * pxm**psh / x**(psh + 1), x, sp.Interval(0, sp.oo),
             [dict(pxm=1, pd=1, psh=2), dict(pxm=R(1, 2), pd=R(1, 4), psh=R(3, 2))]))
    gp = sp.Symbol("gp", positive=True)
    add(Pair("geometric vs poisson", (1 - gp) * gp**k, sp.exp(-1) / sp.factorial(k), k, sp.S.Naturals0,
             [dict(gp=R(1, 2)), dict(gp=R(1, 5))], known_closed_form=False))
    ga, th1, th2 = _sym("ga th1 th2", **pos)
    add(Pair("gamma scales", x**(ga - 1) * sp.exp(-x / th1) / (sp.gamma(ga) * th1**ga),
             x**(ga - 1) * sp.exp(-x / th2) / (sp.gamma(ga) * th2**ga), x, sp.Interval(0, sp.oo),
             [dict(ga=2, th1=1, th2=3), dict(ga=R(1, 2), th1=2, th2=1)]))
    add(Pair("log-normal mean and variance", sp.exp(-(sp.log(x) - m1)**2 / (2 * sg1**2)) / (x * sg1 * sp.sqrt(2 * pi)),
             sp.exp(-(sp.log(x) - m2)**2 / (2 * sg2**2)) / (x * sg2 * sp.sqrt(2 * pi)), x, sp.Interval(0, sp.oo),
             [dict(m1=0, m2=1, s1=1, s2=2), dict(m1=1, m2=0, s1=2, s2=1)]))
    add(Pair("exponential location and rate", H(x - el) * l1 * sp.exp(-l1 * (x - el)), H(x) * l2 * sp.exp(-l2 * x), x,
             sp.S.Reals, [dict(el=1, l1=2, l2=1), dict(el=R(1, 2), l1=1, l2=3)]))
    add(Pair("geometric from 1", (1 - q1) * q1**(k - 1), (1 - q2) * q2**(k - 1), k, sp.S.Naturals,
             [dict(q1=R(1, 2), q2=R(1, 4)), dict(q1=R(4, 5), q2=R(1, 3))]))
    add(Pair("power function vs uniform", pa1 * x**(pa1 - 1), sp.Integer(1), x, sp.Interval(0, 1),
             [dict(pa1=2), dict(pa1=R(1, 2))]))
    add(Pair("gumbel scales", sp.exp(-x / b1 - sp.exp(-x / b1)) / b1, sp.exp(-x / b2 - sp.exp(-x / b2)) / b2, x,
             sp.S.Reals, [dict(b1=1, b2=2)], known_closed_form=False))
    return out


PAIRS = _pairs()


def _close(a, b, dps=30):
    if a == mpmath.inf or b == mpmath.inf:
        return a == b
    tol = mpmath.mpf(10) ** (-int(0.6 * dps)) * max(1, abs(a), abs(b))
    return abs(a - b) <= tol


def _numeric(pair: Pair, a, point):
    """The independent numeric value, on the pair's own support. Supports the numeric path does not
    take directly are passed as the real line with P and Q cut off by an indicator (its kink is a
    breakpoint there); that costs accuracy at the cut, so it is only the fallback."""
    try:
        return numeric_divergence(pair.P, pair.Q, pair.var, pair.support, a, point, dps=30)
    except ValueError as exc:
        if "support" not in str(exc):
            raise
    P, Q, support = pair.P, pair.Q, pair.support
    var = pair.var
    inside = sp.And(var > support.start, var < support.end)
    P, Q = (sp.Piecewise((d, inside), (0, True)) for d in (P, Q))
    return numeric_divergence(P, Q, var, sp.S.Reals, a, point, dps=30)


def _check(pair: Pair, quick: bool = False):
    """(status, mismatches, seconds, result, unverified, verified); ``quick``: first point, three orders
    only. ``unverified`` lists the points whose numeric value did not converge (they can only show a
    gross disagreement, never confirm), ``verified`` counts the points confirmed at 18 digits."""
    t0 = time.perf_counter()
    try:
        res = renyi_divergence(pair.P, pair.Q, pair.var, pair.support, cache=False)
    except Exception as exc:  # noqa: BLE001 - an engine that raises is a failure of this suite
        return "error", [f"{pair.name}: engine raised {type(exc).__name__}: {exc}"], time.perf_counter() - t0, None, [], 0
    seconds = time.perf_counter() - t0
    mismatches, unverified, verified = [], [], 0
    if not res.is_closed_form:
        assert res.reason, f"{pair.name}: status {res.status} without a reason"
        return str(res.status), mismatches, seconds, res, unverified, verified
    points = pair.points[:1] if quick else pair.points
    alphas = [a for a in pair.alphas if a in (R(1, 3), 3, sp.oo)] if quick else pair.alphas
    for point in points:
        for a in alphas:
            if (a, tuple(sorted(point.items()))) in pair.skip_numeric:
                continue
            if (a == 1 and res.kl is None) or (a == sp.oo and res.max_divergence is None):
                continue  # not derived (the reason says why): no claim to check
            try:
                sym = res.evaluate(a, dps=30, **point)
            except Exception as exc:  # noqa: BLE001
                mismatches.append(f"{pair.name} alpha={a} {point}: evaluate raised {type(exc).__name__}: {exc}")
                continue
            num = _numeric(pair, a, point)
            if not num.converged:
                # the numeric path is not sure: the point is not verified (listed), and only a gross
                # disagreement counts as a mismatch
                unverified.append(f"{pair.name} alpha={a} {point}: numeric not converged ({num.detail})")
                if sym == mpmath.inf or num.value == mpmath.inf or not mpmath.isfinite(num.error):
                    continue
                if abs(sym - num.value) > 10 * num.error + mpmath.mpf(10) ** -8:
                    mismatches.append(f"{pair.name} alpha={a} {point}: symbolic {sym} vs numeric {num.value} (not converged)")
                continue
            if not _close(sym, num.value):
                mismatches.append(f"{pair.name} alpha={a} {point}: symbolic {mpmath.nstr(sym, 20)} vs numeric {mpmath.nstr(num.value, 20)}")
            else:
                verified += 1
    return str(res.status), mismatches, seconds, res, unverified, verified


def _run(pairs):
    rows, all_bad, all_unverified = [], [], []
    for pair in pairs:
        status, bad, seconds, res, unverified, verified = _check(pair)
        if status == "closed_form" and not verified:
            # a closed form that no converged numeric value confirmed does not count as derived here
            status = "unverified"
        rows.append((pair.name, status, seconds, res.reason if res is not None else bad[0]))
        print(f"  .. {pair.name}: {status} {seconds:.1f} s {len(bad)} mismatches, {verified} points verified, "
              f"{len(unverified)} not verified", flush=True)
        all_bad += bad
        all_unverified += unverified
    closed = sum(1 for _, s, _, _ in rows if s == "closed_form")
    known = [(p, r) for p, r in zip(pairs, rows) if p.known_closed_form]
    closed_known = sum(1 for _, r in known if r[1] == "closed_form")
    print(f"\nclosed forms: {closed}/{len(rows)} ({100 * closed / len(rows):.0f} %); "
          f"of the pairs with a known closed form: {closed_known}/{len(known)} ({100 * closed_known / max(1, len(known)):.0f} %)")
    for name, status, seconds, reason in rows:
        print(f"  {name:45s} {status:12s} {seconds:7.1f} s  {reason[:100] if status != 'closed_form' else ''}")
    for line in all_unverified:
        print("NOT VERIFIED", line)
    for line in all_bad:
        print("MISMATCH", line)
    return closed_known, [r for p, r in zip(pairs, rows) if p.known_closed_form], all_bad


FAST = [p for p in PAIRS if p.fast]


@pytest.mark.parametrize("pair", FAST, ids=[p.name for p in FAST])
def test_fast_pair(pair):
    status, bad, seconds, res, unverified, verified = _check(pair, quick=True)
    assert status == "closed_form", res.reason if res is not None else bad
    assert not bad, "\n".join(bad)
    assert verified > 0, "no point confirmed by a converged numeric value:\n" + "\n".join(unverified)


@pytest.mark.slow
def test_whole_table():
    closed, rows, bad = _run(PAIRS)
    assert not bad, "\n".join(bad)
    assert closed >= 0.9 * len(rows)


if __name__ == "__main__":
    import sys

    names = [a for a in sys.argv[1:] if not a.startswith("--part=")]
    parts = [a[7:] for a in sys.argv[1:] if a.startswith("--part=")]
    chosen = [p for p in PAIRS if not names or any(n in p.name for n in names)]
    if parts:
        i, n = map(int, parts[0].split("/"))
        chosen = chosen[i::n]
    _run(chosen)
