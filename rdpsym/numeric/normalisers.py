r"""Normalisers written as sums or integrals: numbers once the parameters have values.

Researchers write a density whose normalising constant has no closed form as the sum or integral it
is: the discrete Gaussian :math:`P(k) = e^{-k^2/2\sigma^2} / \sum_{j\in\mathbb Z} e^{-j^2/2\sigma^2}`
(Canonne, Kamath and Steinke 2020, "The Discrete Gaussian for Differential Privacy", NeurIPS, Def. 1),
or :math:`e^{-x^4} / \int_{\mathbb R} e^{-t^4}\,dt`. A ``Sum`` or ``Integral`` that does not depend
on the output variable ``x`` (a *normaliser*, whatever it sits in) is a constant of the pair:

* :func:`abstract_normalisers` replaces each such atom (outermost first) by a real symbol, once per
  symbolic pair, so the compiled backends (Arb) see a parameter instead of a function they are not
  taught, and mpmath never lambdifies a ``Sum`` (sympy prints it as ``range(-oo, oo)``, which raised
  a TypeError at every point);
* :func:`evaluate_normaliser` evaluates one atom with the parameters substituted, under a time limit
  (``RDPSYM_STEP_SECONDS``): sums by :func:`mpmath.nsum` (strict: no value without convergence;
  direct summation, else Richardson and Shanks extrapolation) outward from the mode of the summand, so a summand centred far from 0 is not cut off before its mass;
  integrals by :func:`mpmath.quad` (tanh-sinh, with its error estimate) split at the peak and at
  the points where the integrand has dropped by ``e`` and ``e^8``. Each runs at two precisions
  (``dps + 10`` and ``dps + 20`` digits); the error is the larger of their difference and the
  estimates, and a value whose error exceeds ``10^(-0.6 dps)`` of it (the driver's convergence rule:
  a divergent or too slowly convergent normaliser) is an error, not a number. Successful values are
  memoised per (atom, dps); failures and timeouts are not.
* :meth:`NormaliserValues.error_for` carries the normalisers' errors into the divergence. With
  :math:`\varepsilon_P = \sup_x |\Delta \log P|` (from the relative errors of the atoms times
  :math:`|\partial \log P / \partial \log N|`, a constant when ``N`` enters ``P`` as a factor),
  :math:`\Delta\log I_\alpha \le |\alpha|\varepsilon_P + |1-\alpha|\varepsilon_Q`, so
  :math:`\Delta D_\alpha \le (|\alpha|\varepsilon_P + |1-\alpha|\varepsilon_Q)/|\alpha - 1|`;
  :math:`\Delta D_\infty \le \varepsilon_P + \varepsilon_Q`; and
  :math:`\Delta \mathrm{KL} \le \varepsilon_P (\mathrm{KL} + 3) + \varepsilon_Q`, using
  :math:`E_P|\log P/Q| \le \mathrm{KL} + 2` (the negative part of :math:`\log P/Q` is at most
  :math:`Q/P - 1`, whose :math:`P`-mean is at most 1). All three are doubled to cover the
  second-order terms. A normaliser whose sensitivity depends on ``x`` (one inside an ``exp`` of
  ``x``) gives no such bound: the value is then reported as not trusted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from .._cache import Memo
from .._config import settings
from .._timeout import StepTimeout, run_with_time_limit
from .backends.mpmath import MODULES, log_expr
from .continuous import drop_width, find_peak
from .tails import Failed, power_slope

__all__ = ["Abstracted", "NormaliserError", "NormaliserValues", "abstract_normalisers", "evaluate_normaliser",
           "evaluate_normalisers", "normaliser_atoms", "exact_value"]


class NormaliserError(Failed):
    """A normaliser could not be evaluated to a finite non-zero number (with the reason)."""


def normaliser_atoms(expr: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, ...]:
    """The ``Sum`` and ``Integral`` sub-expressions of ``expr`` free of ``x``, outermost only (one
    inside another is part of it), each once, in preorder."""
    found = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (sp.Sum, sp.Integral)) and x not in node.free_symbols:
            if node not in found:
                found.append(node)
            continue
        stack.extend(reversed(node.args))
    return tuple(found)


def _short(e: sp.Expr, n: int = 70) -> str:
    s = sp.sstr(e)
    return s if len(s) <= n else s[: n - 3] + "..."


@dataclass(frozen=True)
class Abstracted:
    """P and Q with their normalisers replaced by symbols: ``atoms`` pairs each symbol with its atom
    (parameters still symbolic); ``sensitivity`` gives for P and for Q, per symbol, the x-free
    expressions of :math:`\\partial \\log P / \\partial \\log N` on the pieces (None when it depends on
    x)."""

    P: sp.Expr
    Q: sp.Expr
    atoms: tuple[tuple[sp.Symbol, sp.Expr], ...]
    sensitivity: tuple[tuple[tuple | None, tuple | None], ...]


def _sensitivity(e: sp.Expr, nu: sp.Symbol, x: sp.Symbol) -> tuple | None:
    """x-free expressions bounding |N d log e / dN| (one per Piecewise branch), or None."""
    xr = sp.Dummy("x", real=True)
    try:
        d = sp.diff(log_expr(e.subs(x, xr)), nu) * nu
    except SYMBOLIC_ERRORS:  # any sympy trouble: no bound
        return None
    branches = [v for v, _ in d.args] if isinstance(d, sp.Piecewise) else [d]
    if any(b.has(xr) for b in branches):
        return None
    return tuple(branches)


@functools.lru_cache(maxsize=64)
def abstract_normalisers(P: sp.Expr, Q: sp.Expr, x: sp.Symbol) -> Abstracted:
    """The pair with every normaliser (:func:`normaliser_atoms`) replaced by a real symbol. Cached per
    symbolic pair, so its compilation (also cached by pair) is reused across a sweep."""
    atoms = list(dict.fromkeys(normaliser_atoms(P, x) + normaliser_atoms(Q, x)))
    if not atoms:
        return Abstracted(P, Q, (), ())
    syms = [sp.Dummy(f"N{i}", real=True) for i in range(len(atoms))]
    rep = dict(zip(atoms, syms))
    P2, Q2 = P.xreplace(rep), Q.xreplace(rep)
    sens = tuple((_sensitivity(P2, s, x), _sensitivity(Q2, s, x)) for s in syms)
    return Abstracted(P2, Q2, tuple(zip(syms, atoms)), sens)


def exact_value(v: mpmath.mpf) -> sp.Rational:
    """The exact binary value of a finite mpf as a sympy Rational."""
    man, exp = v.man_exp
    return sp.Integer(int(man)) * sp.Integer(2) ** int(exp)


# ----------------------------------------------------------------------------------------------
# one atom
# ----------------------------------------------------------------------------------------------
def _end(e: sp.Expr):
    if e is sp.oo:
        return mpmath.inf
    if e is sp.S.NegativeInfinity:
        return -mpmath.inf
    return mpmath.mpf(sp.Float(e, mpmath.mp.dps + 5))


def _logabs(f):
    def L(t):
        try:
            v = f(t)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError, ArithmeticError):
            return -mpmath.inf
        v = abs(v)
        return mpmath.log(v) if v > 0 and mpmath.isfinite(v) else -mpmath.inf
    return L


def _sum_mode(L, lo, hi):
    """An integer in [lo, hi] where L is largest on a logarithmic grid, refined by ternary search."""
    steps = sorted({0, 1, 2, 3} | {int(2 ** (e / 2)) for e in range(4, 100)})
    if lo > -mpmath.inf and hi < mpmath.inf:
        cands = [int(lo) + j for j in steps if int(lo) + j <= int(hi)]
    elif lo > -mpmath.inf:
        cands = [int(lo) + j for j in steps]
    elif hi < mpmath.inf:
        cands = [int(hi) - j for j in steps]
    else:
        cands = sorted({s * j for j in steps for s in (1, -1)})
    cands = sorted(cands)
    vals = [L(mpmath.mpf(c)) for c in cands]
    i = max(range(len(cands)), key=lambda i: vals[i])
    a, b = cands[max(i - 1, 0)], cands[min(i + 1, len(cands) - 1)]
    while b - a > 2:
        m1, m2 = a + (b - a) // 3, b - (b - a) // 3
        if L(mpmath.mpf(m1)) < L(mpmath.mpf(m2)):
            a = m1
        else:
            b = m2
    return max(range(a, b + 1), key=lambda j: L(mpmath.mpf(j)))


def _nsum(f, ranges):
    if len(ranges) > 1:
        return mpmath.nsum(f, *ranges, strict=True), mpmath.mpf(0), "nsum"
    lo, hi = ranges[0]
    if lo > -mpmath.inf and hi < mpmath.inf and hi - lo <= 10**5:
        terms = [f(mpmath.mpf(j)) for j in range(int(lo), int(hi) + 1)]
        return mpmath.fsum(terms), 4 * mpmath.eps * mpmath.fsum(terms, absolute=True), "direct sum"
    L = _logabs(f)
    m = _sum_mode(L, lo, hi)
    Lm = L(mpmath.mpf(m))
    if not mpmath.isfinite(Lm):
        raise NormaliserError(f"the largest term found is {mpmath.nstr(mpmath.exp(Lm), 5)}")
    # nsum's tolerance is absolute: relative to the largest term here, so a sum of tiny terms is
    # not declared converged after its first batch
    tol = mpmath.eps * mpmath.exp(Lm) / 2**10
    cut = mpmath.log(tol)
    total, hows = mpmath.mpf(0), []
    for a, b, sgn in ((lo, m - 1, -1), (m, hi, 1)):
        if b < a:
            continue
        end = b if sgn > 0 else a
        if mpmath.isinf(end):
            # terms like |j|^s with s >= -1 far out: the sum diverges (integral test); this also
            # catches a summand that grows (its mode found at the end of the grid)
            s1, s2, _ = power_slope(L, mpmath.mpf(m), sgn, 1, True)
            if s1 is not None and (s2 is None or (s1 > -1 and s2 > -1)):
                raise NormaliserError(f"its terms decay like |j|^{mpmath.nstr(s2 if s2 is not None else s1, 4)} "
                                      "(exponent >= -1): the sum diverges")
        far = m + sgn * 2**40
        # outward from the mode the terms fall. Summed directly until a term is below the
        # tolerance (the discrete Gaussian with s = 1000 needs ~15000 terms) when the term 2^40
        # out is below it (exponential decay); else (a polynomial tail, 1/j^2) by Richardson and
        # Shanks extrapolation. Only the directly summed part may end far away at a finite end.
        direct = not (a <= far <= b) or L(mpmath.mpf(far)) < cut
        hows.append("direct" if direct else "extrapolated")
        if direct:
            g = (lambda j, a=a, b=b: f(j) if a <= j <= b else mpmath.mpf(0))
            rng = [a, mpmath.inf] if sgn > 0 else [-mpmath.inf, b]
            total += mpmath.nsum(g, rng, strict=True, method="direct", maxterms=10**5, tol=tol)
        elif b - a > 10**5 and not (mpmath.isinf(a) or mpmath.isinf(b)):
            raise NormaliserError(f"its terms decay slowly over {int(b - a) + 1} terms: not summed")
        else:
            total += mpmath.nsum(f, [a, b], strict=True, tol=tol)
    return total, 4 * mpmath.eps * abs(total), f"nsum ({', '.join(dict.fromkeys(hows))}) from the mode {m}"


def _quad(f, ranges):
    if len(ranges) > 1:
        v, e = mpmath.quad(f, *ranges, error=True)
        return v, e, "quad"
    lo, hi = ranges[0]
    L = _logabs(f)
    peak, Lmax, _ = find_peak(L, [(lo, hi)], [])
    pts = [lo, hi]
    if peak is not None and mpmath.isfinite(Lmax):
        w = drop_width(L, peak, Lmax, lo, hi)
        pts += [peak + s * w * k for s in (1, -1) for k in (0, 1, 8)]
    pts = sorted({p for p in pts if lo <= p <= hi})
    v, e = mpmath.quad(f, pts, error=True)
    return v, e, "tanh-sinh quadrature"


def _evaluate(atom: sp.Expr, dps: int):
    variables, ranges = [], []
    for lim in atom.limits:
        if len(lim) != 3:
            raise NormaliserError(f"the normaliser {_short(atom)} has no limits for {lim[0]}: it is not a number")
        v, lo, hi = lim
        if lo.free_symbols or hi.free_symbols:
            raise NormaliserError(f"the limits of the normaliser {_short(atom)} depend on "
                                  f"{', '.join(sorted(s.name for s in lo.free_symbols | hi.free_symbols))}: "
                                  "only fixed limits are evaluated")
        if isinstance(atom, sp.Sum) and any(e.is_finite and e.is_integer is not True for e in (lo, hi)):
            raise NormaliserError(f"the sum {_short(atom)} has a limit that is not an integer")
        variables.append(v)
        ranges.append((lo, hi))
    extra = atom.function.free_symbols - set(variables)
    if extra:
        raise NormaliserError(f"the normaliser {_short(atom)} depends on {', '.join(sorted(s.name for s in extra))}")
    f = sp.lambdify(variables, atom.function, modules=MODULES, docstring_limit=0)
    out = []
    for more in (10, 20):
        with mpmath.workdps(dps + more):
            rs = [[_end(lo), _end(hi)] for lo, hi in ranges]
            try:
                v, e, how = (_nsum if isinstance(atom, sp.Sum) else _quad)(f, rs)
            except NormaliserError as exc:
                raise NormaliserError(f"the normaliser {_short(atom)} is not a number: {exc}") from None
            except mpmath.libmp.NoConvergence:
                raise NormaliserError(f"mpmath.nsum did not converge on the normaliser {_short(atom)}") from None
            except (ValueError, TypeError, ZeroDivisionError, OverflowError, ArithmeticError) as exc:
                raise NormaliserError(f"evaluating the normaliser {_short(atom)} failed: {type(exc).__name__}: "
                                      f"{exc}") from None
            if isinstance(v, mpmath.mpc):
                if v.imag != 0:
                    raise NormaliserError(f"the normaliser {_short(atom)} is not real: {mpmath.nstr(v, 8)}")
                v = v.real
            if not mpmath.isfinite(v) or v == 0:
                raise NormaliserError(f"the normaliser {_short(atom)} is {mpmath.nstr(v, 8)}, not a finite "
                                      "non-zero number")
            out.append((+v, +e))
    with mpmath.workdps(dps + 20):
        (v1, e1), (v2, e2) = out
        err = max(abs(v1 - v2), e1, e2)
        # the driver's convergence rule: a normaliser not known to 60% of the digits (a divergent or
        # too slowly convergent sum or integral) is no number to build on
        if not err <= mpmath.mpf(10) ** (-0.6 * dps) * abs(v2):
            raise NormaliserError(f"the normaliser {_short(atom)} is not determined: {mpmath.nstr(v2, 8)} with an "
                                  f"error of {mpmath.nstr(err, 3)} ({how}; divergent?)")
    return v2, err, how


_memo = Memo()


def evaluate_normaliser(atom: sp.Expr, dps: int) -> tuple[mpmath.mpf, mpmath.mpf, str]:
    """``(value, absolute error, method)`` of a normaliser with numeric parameters (see the module
    docstring), at ``dps + 20`` digits. Raises :class:`NormaliserError` (also when the time limit
    ``RDPSYM_STEP_SECONDS`` expires, or the evaluation runs out of memory or stack)."""
    seconds = settings().step_seconds

    def compute():
        try:
            return run_with_time_limit(_evaluate, atom, dps, seconds=seconds, clock="wall")
        except StepTimeout as exc:  # out of time, or of memory or stack (StepExhausted): said which
            raise NormaliserError(f"evaluating the normaliser {_short(atom)} was abandoned: {exc}") from None

    return _memo.get_or_compute((atom, dps), compute)


# ----------------------------------------------------------------------------------------------
# a pair's normalisers at one parameter point
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NormaliserValues:
    """The normalisers of one pair at one parameter point: ``exact`` (symbol -> the value as an exact
    Rational), ``eps_P``/``eps_Q`` (bounds on |Δ log P|, |Δ log Q|; None when no bound exists) and
    ``notes`` (one per atom, for the result's detail)."""

    exact: dict
    eps_P: mpmath.mpf | None
    eps_Q: mpmath.mpf | None
    notes: tuple[str, ...]

    def error_for(self, q, a, D) -> mpmath.mpf | None:
        """The bound on the error of the quantity ``q`` (order ``a``, value ``D``) the normalisers'
        errors cause (module docstring), or None when there is none."""
        eP, eQ = self.eps_P, self.eps_Q
        if eP is None or eQ is None:
            return None
        return 2 * q.normaliser_error(eP, eQ, a, D)


def _eps(sens, rel) -> mpmath.mpf | None:
    total = mpmath.mpf(0)
    for s, r in zip(sens, rel):
        if s is None:
            return None
        try:
            m = max((abs(mpmath.mpmathify(sp.N(e, 20))) for e in s), default=mpmath.mpf(0))
        except (TypeError, ValueError):
            return None
        if not mpmath.isfinite(m):
            return None
        total += m * r
    return total


def evaluate_normalisers(abst: Abstracted, sub: dict, dps: int) -> NormaliserValues:
    """Evaluate the normalisers of ``abst`` with the parameters ``sub`` (symbol -> exact number).
    Raises :class:`NormaliserError`."""
    exact, rel, notes = {}, [], []
    with mpmath.workdps(dps + 20):
        for sym, atom in abst.atoms:
            v, e, how = evaluate_normaliser(atom.subs(sub), dps)
            exact[sym] = exact_value(v)
            rel.append(e / abs(v))
            notes.append(f"normaliser {_short(atom, 50)} = {mpmath.nstr(v, 12)} (± {mpmath.nstr(e, 2)}, {how})")
        full = {**sub, **exact}
        sensP = [None if sP is None else tuple(s.subs(full) for s in sP) for sP, _ in abst.sensitivity]
        sensQ = [None if sQ is None else tuple(s.subs(full) for s in sQ) for _, sQ in abst.sensitivity]
        eps_P, eps_Q = _eps(sensP, rel), _eps(sensQ, rel)
    return NormaliserValues(exact, eps_P, eps_Q, tuple(notes))
