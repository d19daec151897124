"""Singular orders that depend on the parameters: factors of degree 1 in alpha of the closed form.

Orders where the closed form is singular and that depend on the parameters (a factor of degree 1 in
alpha such as alpha (b1 + b2) - b1 for two Laplace scales, see :class:`_Factor`) are found in the
closed form itself; the factor is evaluated in double-double arithmetic (next to its root its float
value would be rounding error). Where the singularity is removable, a Taylor series around the
parameter-dependent root (Taylor-mode arithmetic, the vanishing sums deflated) serves the points next
to it; where neither the series nor the closed form (by its estimated cancellation error) is accurate,
the value is NaN and a ``RuntimeWarning`` gives the count: never a wrong finite number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..symbols import alpha as ALPHA
from .emitter import CodegenError, Emitter
from .taylor import TaylorEmitter

if TYPE_CHECKING:  # annotations only: a result's to_numpy() hook reaches this module
    from ..derive.result import DivergenceResult

__all__ = ["MOVING_TRUST", "MOVING_WINDOW", "singular_factors"]

#: Next to a parameter-dependent singular factor D (|D| / sum|terms of D| below this) the closed form
#: is checked: a series around the root is used where it converges, else the closed form where its
#: estimated cancellation error is below MOVING_TRUST of its value, else NaN (with a RuntimeWarning).
MOVING_WINDOW = 0.1
MOVING_TRUST = 1e-13


@dataclass(frozen=True)
class _Factor:
    """A factor D of the closed form, of degree 1 in alpha, whose root a0 depends on the parameters.

    Laplace(0, b1) against Laplace(m, b2) has D = alpha (b1 + b2) - b1: at alpha = b1/(b1 + b2) the
    closed form is 0/0 (``removable``), and the divergence is analytic there. A non-removable factor is an
    edge of the finiteness conditions or a pole (two Gaussian scales: alpha s2^2 + (1 - alpha) s1^2).
    Either way D is evaluated in double-double arithmetic (``symbol`` stands for it in the float code):
    its float value next to its root would be mostly rounding error.
    """

    poly: sp.Expr
    symbol: sp.Symbol
    root: sp.Expr
    removable: bool
    probes: tuple  # typical parameter values at which the root is an order in (0, oo) other than 1


def _degree_one_factors(expr: sp.Expr, syms: set) -> list[sp.Expr]:
    cands: set = set()
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.log) and node.has(ALPHA):
            cands.update(sp.fraction(sp.together(node.args[0])))
        elif node.is_Add and node.has(ALPHA):
            cands.add(node)
        elif node.is_Pow and node.base.has(ALPHA) and node.exp.is_number and node.exp.is_negative:
            cands.add(node.base)
    out = []
    for c in sorted(cands, key=sp.default_sort_key):  # deterministic: the generated text is cached
        if not c.has(ALPHA):
            continue
        parts = sp.Mul.make_args(sp.factor(c) if c.is_polynomial(*syms) else c)
        for f in parts:
            f = f.as_base_exp()[0]
            if not f.has(ALPHA) or not f.is_polynomial(*syms) or not f.free_symbols <= syms:
                continue
            f = sp.expand(f)
            if sp.degree(f, ALPHA) == 1 and len(f.free_symbols) > 1:
                out.append(f)
    return out


def _probe_points(params, root) -> list[dict]:
    import itertools

    grids = [p.typical_values(3) for p in params]
    points = []
    # combinations with distinct values first: b1 = b2 would hide a root that depends on b1/b2
    combos = sorted(itertools.islice(itertools.product(*grids), 81), key=lambda v: -len(set(v)))
    for values in combos:
        point = {p.symbol: v for p, v in zip(params, values)}
        a0 = sp.nsimplify(root.subs(point))
        if a0.is_real and a0.is_finite and a0 > 0 and abs(a0 - 1) > sp.Rational(1, 100):
            points.append(point)
        if len(points) >= 3:
            break
    return points


def _removable_at(branch: sp.Expr, root: sp.Expr, points: list[dict]) -> bool:
    """Numeric probe (80 digits): the branch takes one finite value on both sides of the root, at
    distances 1e-30 and 1e-22 (a logarithmic pole or an edge gives different or complex values)."""
    if not points:
        return False
    for point in points:
        a0 = root.subs(point)
        f = branch.subs(point)
        vals = []
        for h in (sp.Rational(1, 10**30), -sp.Rational(1, 10**30), sp.Rational(1, 10**22)):
            v = f.subs(ALPHA, a0 + h).evalf(80)
            if not v.is_number or v.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or abs(sp.im(v)) > sp.Float(10, 80) ** -60:
                return False
            vals.append(sp.re(v))
        scale = max(abs(v) for v in vals)
        if scale == 0 or any(abs(v - vals[0]) > sp.Float(10, 80) ** -15 * scale for v in vals):
            return False
    return True


def singular_factors(result: DivergenceResult, branches: Sequence[sp.Expr], params, seconds: float = 30.0) -> list[_Factor]:
    """The degree-1 factors of the branches whose roots are parameter-dependent orders (see _Factor).

    Factors come from the Add nodes, the denominators and the logarithms' arguments (over a common
    denominator, factored), within ``seconds``; a factor whose root is never a positive order at the
    typical parameter values is left out.
    """
    from .._timeout import run_with_time_limit

    syms = {ALPHA, *(p.symbol for p in params)}

    def work():
        found: list[sp.Expr] = []
        for br in branches:
            for f in _degree_one_factors(br, syms):
                if not any(sp.expand(f - g) == 0 or sp.expand(f + g) == 0 for g in found):
                    found.append(f)
        out = []
        for j, f in enumerate(found):
            root = sp.cancel(-f.coeff(ALPHA, 0) / f.coeff(ALPHA, 1))
            if root.is_number or root.is_nonpositive or root.has(ALPHA):
                continue
            points = _probe_points(params, root)
            if not points:
                continue
            removable = all(_removable_at(br, root, points) for br in branches if f.has(ALPHA))
            out.append(_Factor(f, sp.Symbol(f"_f{j}", real=True), root, removable, tuple(points)))
        return out

    try:
        return run_with_time_limit(work, seconds=seconds)
    except SYMBOLIC_ERRORS:  # no factor found in time: the code is generated as before
        return []


def substitute_factors(expr: sp.Expr, factors: Sequence[_Factor]) -> sp.Expr:
    """``expr`` with each sum equal to a constant multiple of a factor replaced by its symbol."""
    if not factors:
        return expr
    memo: dict = {}

    def match(e):
        if e in memo:
            return memo[e]
        out = None
        if e.is_Add and e.has(ALPHA) and not e.has(sp.exp, sp.log):
            for f in factors:
                if e.free_symbols <= f.poly.free_symbols | {ALPHA}:
                    q = sp.cancel(sp.expand(e) / f.poly)
                    if q.is_number and q != 0:
                        out = q * f.symbol
                        break
        memo[e] = out
        return out

    return expr.replace(lambda e: match(e) is not None, match)


class CentredTaylor(TaylorEmitter):
    """Taylor-mode series around the parameter-dependent root a0 of a removable factor: sums that
    vanish there (the factor itself, the numerator it cancels with) are deflated inside logarithms."""

    def __init__(self, emitter: Emitter, factor: _Factor, terms: int):
        super().__init__(emitter, factor.root, terms)
        self.factor = factor
        self._memo: dict = {}

    def _vanishes(self, e: sp.Expr) -> bool:
        if e in self._memo:
            return self._memo[e]
        out = True
        try:
            for point in self.factor.probes:
                a0 = self.factor.root.subs(point)
                terms = [t.subs(point).subs(ALPHA, a0).evalf(60) for t in e.args]
                total = abs(sp.Add(*terms).evalf(60))
                if not bool(total <= sp.Float(10, 60) ** -40 * sum(abs(t) for t in terms)):
                    out = False
                    break
        except (TypeError, ValueError, ArithmeticError):
            out = False
        self._memo[e] = out
        return out


def dd_code(poly: sp.Expr, em: Emitter) -> str:
    """Code of the polynomial ``poly`` in double-double arithmetic (its value rounded once)."""
    out = None
    for term in sp.Add.make_args(sp.expand(poly)):
        c, rest = term.as_coeff_Mul()
        hi = float(c)
        lo = float(sp.Rational(c) - sp.Rational(hi)) if c.is_Rational else 0.0
        code = f"({hi!r}, {lo!r})"
        for f in sp.Mul.make_args(rest):
            if f == 1:
                continue
            base, ex = f.as_base_exp()
            if not (base.is_Symbol and ex.is_Integer and ex > 0):
                raise CodegenError(f"no double-double code for {f}")
            for _ in range(int(ex)):
                code = f"_dd_mul({code}, _dd({em.names[base]}))"
        out = code if out is None else f"_dd_add({out}, {code})"
    return f"_dd_value({out})"


def abs_scale_code(poly: sp.Expr, em: Emitter) -> str:
    """Code of sum_i |t_i| over the terms of ``poly`` (the size its cancellation is measured against)."""
    return " + ".join(f"numpy.abs({em.value(t)})" for t in sp.Add.make_args(sp.expand(poly)))


def cancellation_code(direct: sp.Expr, factor: _Factor, em: Emitter, vanishes) -> str | None:
    """Code of an estimate of the closed form's absolute error from the sums in its logarithms that
    vanish at the factor's root: eps * (8 + 4 max_i |l_i|) * sum_i |t_i| / |sum_i t_i| times the
    coefficient of that logarithm, with l_i = log|t_i| (rounding in the exponents is eps |l_i|)."""
    logs = [n for n in direct.atoms(sp.log) if n.args[0].is_Add and n.args[0].has(ALPHA) and vanishes(n.args[0])]
    if not logs:
        return None
    parts = []
    for n in logs:
        lam = sp.Dummy("lam")
        coeff = sp.diff(direct.subs(n, lam), lam)
        if coeff.has(lam):
            return None
        terms = [em.logabs(t)[0] for t in n.args[0].args]
        signed = em.logabs(n.args[0])[0]
        plain = f"_lse_abs([{', '.join(terms)}], [{', '.join('1.0' for _ in terms)}])"
        lmax = f"numpy.abs({terms[0]})"
        for t in terms[1:]:
            lmax = f"numpy.maximum({lmax}, numpy.abs({t}))"
        parts.append(f"numpy.abs({em.value(coeff)}) * 2.220446049250313e-16 * (8.0 + 4.0 * ({lmax}))"
                     f" * numpy.exp(({plain}) - ({signed}))")
    return " + ".join(parts)
