"""Generate the float code of a derivation result: ``generate_source`` and ``to_numpy``.

The generated module is assembled here from the pieces of this package: the run-time helpers
(:mod:`~rdpsym.compile.runtime`, copied in as text), one function per piece of the closed form in its
evaluation form (:mod:`~rdpsym.compile.forms`, emitted by :mod:`~rdpsym.compile.emitter`), the series
(:mod:`~rdpsym.compile.series`, :mod:`~rdpsym.compile.taylor`), the parameter-dependent singular
factors (:mod:`~rdpsym.compile.factors`) and the dispatch (:mod:`~rdpsym.compile.evaluator`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..derive.result import DivergenceResult, Status
from ..specify.params import Parameter
from ..symbols import alpha as ALPHA
from . import runtime
from .doubled import double_double_code
from .emitter import CodegenError, Emitter, doc_text, identifier
from .errors import ErrorEmitter
from .evaluator import band_placeholder, branch_evaluator, entry_point
from .factors import (
    abs_scale_code,
    cancellation_code,
    CentredTaylor,
    dd_code,
    substitute_factors,
    singular_factors,
)
from .forms import max_min_branches, check_points, evaluation_form
from .series import SERIES_TERMS, Series, singular_at, fixed_points, series_expansions
from .store import INCOMPLETE, SOURCE_CACHE, cache_key
from .survey import bands
from .taylor import TaylorEmitter

__all__ = ["generate_source", "to_numpy"]

_FORMAT = 17


def generate_source(result: DivergenceResult, name: str | None = None, parameters: Sequence[Parameter] | None = None,
                    *, cache: bool = True) -> str:
    """Python source (importing only numpy) of a vectorised, stable float function for ``result``.

    The function is ``name(alpha, <param>=..., ...)``; arguments broadcast with numpy rules. See
    :mod:`rdpsym.compile` for the stabilisations. Raises :class:`CodegenError` if the result has no closed form.
    """
    if not isinstance(result, DivergenceResult):
        raise TypeError(f"result: expected a DivergenceResult, got {type(result).__name__}")
    if result.expr is None or result.status not in (Status.CLOSED_FORM, Status.BOUND):
        raise CodegenError(
            f"{result.label} has no closed form (status {result.status}: {result.reason}); "
            "use result.evaluate() or rdpsym.numeric instead"
        )
    params = result.parameters(parameters)
    mech = dict(result.provenance.inputs).get("mechanism")
    name = identifier(name or (f"rdp_{mech}" if mech else "renyi_divergence"))
    key_text = "\n".join([str(_FORMAT), name, sp.srepr(result.expr), sp.srepr(result.conditions), sp.srepr(result.kl),
                          sp.srepr(result.max_divergence), repr([(sp.srepr(p.alpha), sp.srepr(p.value)) for p in result.exceptional_points]),
                          repr([(p.name, sp.srepr(p.symbol), sp.srepr(p.domain)) for p in params]), str(result.status)])
    if not cache:
        return _generate(result, name, params)
    # not kept when a time limit expired meanwhile (a factor or series search that gave up early)
    return SOURCE_CACHE.get_or_compute(cache_key(key_text), lambda: _generate(result, name, params))


def _horner(c: sp.Expr) -> sp.Expr:
    """Polynomials in alpha in Horner form: fewer operations than powers (speed), same accuracy."""
    def is_poly(e):
        try:
            return e.is_Add and e.has(ALPHA) and e.is_polynomial(ALPHA) and sp.degree(e, ALPHA) >= 2
        except sp.PolynomialError:
            return False
    return c.replace(is_poly, lambda e: sp.horner(e, wrt=ALPHA))


def _screen_bound(k: int, n: int) -> list[str]:
    """Lines that set ``_top``, the screen's bound on log|v| of a series with coefficients ``_cs`` (``n`` of
    them, the first nonzero ``k``): in logs, |c_j v^j| <= 5e-9 |c_k v^k| is log|v| <= (log(5e-9) -
    log|c_j/c_k|) / (j - k) for j > k, the last two terms; computed at the coefficients' own shape (an
    order-only column) for one comparison with log|v| (a parameter-only row) on the grid."""
    lines = [f"    _lead = numpy.log(numpy.abs(_cs[{k}]))",
             "    _top = numpy.where(numpy.isfinite(_lead), numpy.inf, -numpy.inf)"]
    for j in (n - 1, n - 2):
        ratio = f"numpy.log(numpy.abs(_cs[{j}])) - _lead"
        if j > k:
            lines.append(f"    _top = numpy.minimum(_top, ({math.log(5e-9)!r} - ({ratio})) / {float(j - k)!r})")
        else:  # j == k: the screen asks |c_k| <= 5e-9 |c_k|, never true
            lines.append("    _top = numpy.minimum(_top, -numpy.inf)")
    return lines


class _Module:
    """The lines of one generated module and the emitter its functions share."""

    def __init__(self, em: Emitter, arglist: str):
        self.em, self.arglist = em, arglist
        # line 3 is the run-time helpers' text, written by finish() once the module's own text is known
        self.lines = ['"""Generated by rdpsym from a derived closed form; only numpy is needed."""', "", "import numpy", ""]
        # one function per piece, called on the subset of points it serves
        self.factor_symbols: dict = {}  # placeholder -> its double-double function (see _Factor)
        self.factors: list = []  # the singular factors (compile.factors._Factor) the placeholders stand for

    def finish(self) -> None:
        """Write the run-time helpers the module needs (:func:`rdpsym.compile.runtime.source`) at line 3."""
        self.lines[3] = "\n" + runtime.source("\n".join(self.lines[4:]))

    def prelude(self, expr) -> list[str]:
        em, arglist, factor_symbols = self.em, self.arglist, self.factor_symbols
        return [f"    {em.names[f]} = {factor_symbols[f]}({arglist})" for f in sorted(expr.free_symbols & set(factor_symbols), key=str)]

    def fn(self, fname: str, expr: sp.Expr) -> str:
        lines, em, arglist, factor_symbols, prelude = self.lines, self.em, self.arglist, self.factor_symbols, self.prelude
        lines.append(f"def {fname}({arglist}):")
        # an expression in alpha broadcasts by itself; a constant needs alpha's shape
        pad = "" if ALPHA in expr.free_symbols or expr.free_symbols & set(factor_symbols) else " + _z(alpha)"
        lines.extend(prelude(expr))
        lines.append(f"    return {em.value(expr)}{pad}")
        lines.append("")
        return fname

    def emit_series(self, fname: str, s: Series) -> str:
        lines, em, arglist, horner = self.lines, self.em, self.arglist, _horner
        # A coefficient may hold a singular factor of the closed form (1/(alpha s2^2 + (1 - alpha) s1^2)
        # of two Gaussian scales, in the series in m): it reads the factor's double-double value, as the
        # closed form does; in floats next to its root it would be mostly rounding error, and the series'
        # truncation test cannot see that.
        s = Series(s.where, s.variable, tuple(horner(substitute_factors(c, self.factors)) for c in s.coeffs))
        read = sp.Tuple(*s.coeffs).free_symbols & set(self.factor_symbols)
        # The coefficients at the inputs' own shapes (a boundary series' coefficients are polynomials
        # in alpha: an order-only column), gathered by the caller; common subexpressions named once
        lines.append(f"def {fname}_coef({arglist}):")
        lines.append(f"    # Taylor coefficients, {doc_text(s.where)}, and the expansion variable")
        lines.extend(self.prelude(sp.Tuple(*s.coeffs)))
        replacements, reduced = sp.cse(list(s.coeffs), symbols=sp.numbered_symbols("_c"), optimizations="basic")
        for sym, sub in replacements:
            em.names[sym] = str(sym)
            lines.append(f"    {sym} = {em.value(sub)}")
        for k, c in enumerate(reduced):
            lines.append(f"    _k{k} = {em.value(c)}")
        lines.append(f"    return [{', '.join(f'_k{k}' for k in range(len(reduced)))}], {em.value(s.variable)}")
        lines.append("")
        args = self.arglist.split(", ")
        inputs = set().union(*(c.free_symbols for c in s.coeffs), *(f.poly.free_symbols for f in self.factors if f.symbol in read))
        used = sorted({args.index(em.names[x]) for x in inputs if em.names.get(x) in args})
        lines.append(f"{fname}_coef.uses = {tuple(used)!r}")
        lines.append("")
        lines.append(f"def {fname}({arglist}):")
        lines.append(f"    # Taylor series, {doc_text(s.where)}")
        lines.append(f"    _cs, _v = {fname}_coef({arglist})")
        lines.append("    _v = _v + _z(alpha)")
        lines.append("    return _series([_c + _z(_v) for _c in _cs], _v)")
        lines.append("")
        lines.append(f"{fname}.coef = {fname}_coef")
        lines.append(f"{fname}.where = {doc_text(s.where)!r}")
        lines.append("")
        nonzero = [k for k, c in enumerate(s.coeffs) if c != 0]
        n = len(s.coeffs)
        if nonzero and n >= 4:
            # a cheap screen (leading and last two terms only) before the full series
            k = nonzero[0]
            # a threshold on log|v| (see _screen_bound)
            lines.append(f"def {fname}_pre({arglist}, _cv=None):")
            lines.append(f"    _cs, _v = _cv if _cv is not None else {fname}_coef({arglist})  # _cv: the coefficients, computed by the caller")
            lines.append("    _lv = numpy.log(numpy.abs(_v))")
            lines.extend(_screen_bound(k, n))
            lines.append("    return _lv < _top  # strict: v = 0 (log = -inf) passes unless the lead is not finite")
            lines.append("")
            lines.append(f"{fname}.pre = {fname}_pre")
            lines.append("")
            # where a coefficient the screen reads under- or overflows in floats (a sensitivity of 1e-200
            # squared, 1e30 to the 11th power, a power of k = 1e100) the screen cannot judge the series,
            # and the closed form next to its boundary is likely to have cancelled: those points are in
            # doubt (settled by the error estimate or the double-double form, else refused)
            lines.append(f"def {fname}_lost({arglist}, _cv=None):")
            lines.append(f"    _cs, _v = _cv if _cv is not None else {fname}_coef({arglist})")
            lines.append(f"    _lead = numpy.abs(_cs[{k}])")
            lines.append("    _bad = ~((_lead > 0.0) & (_lead < numpy.inf))")
            for j in sorted({n - 1, n - 2} - {k}):
                lines.append(f"    _bad = _bad | ~numpy.isfinite(_cs[{j}])")
            lines.append("    return _bad & numpy.isfinite(_v)")
            lines.append("")
            lines.append(f"{fname}.lost = {fname}_lost")
            lines.append("")
            # the same threshold as a distance: log|v| minus the screen's bound (<= 0 where it passes),
            # the measure of the series' band (compile.survey)
            lines.append(f"def {fname}_gap({arglist}):")
            lines.append(f"    _cs, _v = {fname}_coef({arglist})")
            lines.extend(_screen_bound(k, n))
            lines.append("    return numpy.log(numpy.abs(_v)) - _top + _z(alpha)")
            lines.append("")
            lines.append(f"{fname}.gap = {fname}_gap")
            lines.append("")
        return fname

    def exact(self, name: str, expr: sp.Expr | None) -> str:
        """Append ``name``, the closed form ``expr`` in double-double arithmetic (compile.doubled: the
        code of :meth:`fn`, operation for operation), and return its name; "None" where it has none (a
        construct without a double-double counterpart).

        A singular factor (its placeholder in ``expr``) is written out as its polynomial: its float value
        is an input the closed form's estimate takes as exact, which its double-double value is not (a
        rounding of 2^-104 of its terms' sizes, next to its root a large relative error). That code then
        has an error estimate of its own, ``{name}.err`` (the float estimate of the written-out form,
        which the double-double error bound scales, runtime._settle)."""
        if expr is None:
            return "None"
        read = expr.free_symbols & set(self.factor_symbols)
        plain = expr.xreplace({f.symbol: f.poly for f in self.factors if f.symbol in read}) if read else expr
        errors = ErrorEmitter(self.em)
        try:
            code = double_double_code(self.em.value(plain), self.em.constants)
            err_code = errors.err(plain) if read else None
        except CodegenError:
            return "None"
        self.lines.append(f"def {name}({self.arglist}):")
        self.lines.append("    # the closed form in double-double arithmetic, where its float value lost digits")
        self.lines.append(f"    return _dd_round({code}) + _z(alpha)")
        self.lines.append("")
        if err_code is not None:
            self.lines.append(f"def _err{name}({self.arglist}):")
            self.lines.append("    # estimated rounding error of the closed form with its singular factors written out:")
            self.lines.append(f"    # {name}'s error is this estimate scaled to double-double")
            self.lines.extend(errors.lines)
            self.lines.append(f"    return {errors.reuse(err_code, whole=True)} + _z(alpha)")
            self.lines.append("")
            self.lines.append(f"{name}.err = _err{name}")
            self.lines.append("")
        return name

    def guards(self, fname: str, expr: sp.Expr | None) -> tuple[str, str]:
        """The error estimate and the double-double evaluation of the special order ``fname`` (the KL
        divergence, an exceptional order): (their names, "None" where there is none)."""
        if expr is None:
            return "None", "None"
        errors = ErrorEmitter(self.em)
        try:
            err_code = errors.err(expr)
        except CodegenError:
            return "None", "None"
        self.lines.append(f"def _err{fname}({self.arglist}):")
        self.lines.append("    # estimated rounding error of this order's closed form")
        self.lines.extend(errors.lines)
        self.lines.append(f"    return {errors.reuse(err_code, whole=True)} + _z(alpha)")
        self.lines.append("")
        return f"_err{fname}", self.exact(f"_exact{fname}", expr)

    def special(self, fname, expr):
        lines, arglist = self.lines, self.arglist
        if expr is None:
            lines.append(f"def {fname}({arglist}):")
            lines.append("    raise ArithmeticError('this order was not derived')")
            lines.append("")
            return fname
        return self.fn(fname, expr)


def _generate(result: DivergenceResult, name: str, params: tuple[Parameter, ...]) -> str:
    args = [identifier(p.name) for p in params]
    names = {ALPHA: "alpha", **{p.symbol: a for p, a in zip(params, args)}}
    em = Emitter(names)
    arglist = ", ".join(["alpha", *args])
    mod = _Module(em, arglist)
    lines, fn, prelude, factor_symbols = mod.lines, mod.fn, mod.prelude, mod.factor_symbols

    combine, branches = max_min_branches(result.expr)
    checks = check_points(params)
    originals = branches
    branches = [evaluation_form(br, checks) for br in branches]
    # singular orders that depend on the parameters (see _Factor): each factor in double-double
    factors = singular_factors(result, originals, params)
    mod.factors = factors
    for j, f in enumerate(factors):
        em.names[f.symbol] = f"_f{j}"
        factor_symbols[f.symbol] = f"_dd_f{j}"
        lines.append(f"def _dd_f{j}({arglist}):")
        lines.append(f"    # {doc_text(sp.sstr(f.poly))} (zero at alpha = {doc_text(sp.sstr(f.root))}), in double-double")
        lines.append(f"    return {dd_code(f.poly, em)}")
        lines.append("")
    branch_code = []
    for i, br in enumerate(branches):
        branch_code.append(_emit_branch(mod, result, params, i, br, originals[i], checks, factors, len(branches)))

    lines.extend(branch_evaluator(arglist, args))

    mod.special("_order_one", result.kl)
    # the KL divergence's and the exceptional orders' own closed forms are checked at every point too
    mod.one_guards = mod.guards("_order_one", result.kl)
    mod.special("_order_inf", result.max_divergence)
    # orders in the parameters (b1/(b1 + b2)) are served by the factors' series above, not as fixed points
    exceptional = [(float(p.alpha), fn(f"_exceptional_{k}", p.value), mod.guards(f"_exceptional_{k}", p.value))
                   for k, p in enumerate(fixed_points(result))]
    conditions = substitute_factors(result.conditions, factors) if factors else result.conditions
    lines.append(f"def _conditions({arglist}):")
    lines.extend(prelude(conditions))
    lines.append(f"    return numpy.asarray({em.condition(conditions)})")
    lines.append("")

    guarded = entry_point(mod, result, name, params, args, combine, branch_code, exceptional)
    mod.finish()
    _survey(mod, params)
    if guarded:
        lines.insert(3, "import warnings")
    gaps = sorted({w for ws in getattr(mod, "missing", {}).values() for w in ws})
    if gaps:
        lines.insert(0, f"{INCOMPLETE} no series for {doc_text(', '.join(gaps))} (sympy ran out of time); the code refuses "
                        "the points there where the closed form loses digits")
    return "\n".join(lines)


def _survey(mod: _Module, params) -> None:
    """Replace each branch's ``_bands`` placeholder by the bands the survey finds (compile.survey): the
    module as written so far, with no bands, is run on the survey's grid."""
    text = "\n".join(mod.lines)
    blank = text
    for direct in mod.surveys:
        blank = blank.replace(band_placeholder(direct), "()")
    namespace: dict = {"__name__": "rdpsym_survey"}
    exec(compile(blank, "<rdpsym survey>", "exec"), namespace)  # noqa: S102 - rdpsym's own generated code
    for direct, (call, err, boundary) in mod.surveys.items():
        found = bands(namespace, call, err, boundary, params)
        for k, line in enumerate(mod.lines):
            if band_placeholder(direct) in line:
                mod.lines[k] = line.replace(band_placeholder(direct), found)


def _emit_branch(mod: _Module, result: DivergenceResult, params, i: int, br: sp.Expr, original: sp.Expr,
                 checks: list, factors: list, n_branches: int) -> tuple:
    """Append the functions of branch ``i`` (closed form, series, parameter-dependent orders) to the
    module; returns (direct, expansions, boundary series, centres, moving orders) for ``_branch``."""
    lines, em, arglist, fn, emit_series = mod.lines, mod.em, mod.arglist, mod.fn, mod.emit_series
    direct_form = evaluation_form(original, checks, shift=False)
    direct = fn(f"_direct_{i}", substitute_factors(direct_form, factors))
    mod.direct_forms = {**getattr(mod, "direct_forms", {}), direct: substitute_factors(direct_form, factors)}
    errors = ErrorEmitter(em)
    try:
        err_code = errors.err(substitute_factors(direct_form, factors))
    except CodegenError:
        err_code = None
    if err_code is not None:
        lines.append(f"def _err_{i}({arglist}):")
        lines.append("    # estimated rounding error of the closed form: a series is computed only where it is large")
        lines.extend(mod.prelude(substitute_factors(direct_form, factors)))  # the singular factors it reads
        lines.extend(errors.lines)
        lines.append(f"    return {errors.reuse(err_code, whole=True)} + _z(alpha)")
        lines.append("")
        mod.errs = {**getattr(mod, "errs", {}), direct: True}
        mod.exacts = {**getattr(mod, "exacts", {}), direct: mod.exact(f"_exact_{i}", substitute_factors(direct_form, factors))}
    moving = []
    for j, f in enumerate(factors):
        if not f.removable:
            continue
        lines.append(f"def _rel_{i}_{j}({arglist}):")
        lines.append(f"    return numpy.abs(_dd_f{j}({arglist})) / ({abs_scale_code(f.poly, em)})")
        lines.append("")
        series_name = "None"
        try:
            te = CentredTaylor(em, f, SERIES_TERMS)
            top = te.series(br)
            keep = SERIES_TERMS - te.lost
            if keep < 4 or sp.simplify(te._lt(top)) != 0:
                raise CodegenError("no series around the parameter-dependent order")
            series_name = f"_series_{i}_m{j}"
            lines.append(f"def {series_name}({arglist}):")
            lines.append(f"    # Taylor series around alpha = {doc_text(sp.sstr(f.root))} by Taylor-mode arithmetic")
            lines.append(f"    _one = numpy.zeros(({SERIES_TERMS},) + alpha.shape)")
            lines.append("    _unit = numpy.zeros_like(_one)")
            lines.append("    _unit[1] = 1.0")
            lines.extend(te.lines)
            lines.append(f"    return _series(list({top}[:{keep}]), alpha - ({em.value(f.root)}))")
            lines.append("")
        except CodegenError:
            te = CentredTaylor(em, f, SERIES_TERMS)
        cfe = cancellation_code(direct_form, f, em, te._vanishes)
        lines.append(f"def _cfe_{i}_{j}({arglist}):")
        lines.append("    # estimated absolute error of the closed form (cancellation next to the order)")
        lines.append(f"    return {cfe if cfe is not None else 'numpy.inf'} + _z(alpha)")
        lines.append("")
        moving.append(f"(_rel_{i}_{j}, {series_name}, _cfe_{i}_{j})")
    bounds, points = series_expansions(result, br, params)
    missing = [s.where for s in bounds if not s.coeffs]
    bounds = [s for s in bounds if s.coeffs]
    mod.missing = {**getattr(mod, "missing", {}), direct: missing}
    boundary_names = [f"({emit_series(f'_series_{i}_b{j}', s)}, None)" for j, s in enumerate(bounds)]
    point_names = [f"({emit_series(f'_series_{i}_e{j}', s)}, {em.number(ALPHA - s.variable)})"
                   for j, s in enumerate(points)]
    near_one = []
    if singular_at(br, sp.Integer(1)):
        try:
            te = TaylorEmitter(em, sp.Integer(1), SERIES_TERMS)
            top = te.series(br)
            # a division by (alpha - 1)**m shifts the coefficients down and pads the top m with
            # zeros: those are not coefficients, and the truncation estimate must not read them
            keep = SERIES_TERMS - te.lost
            if keep < 4:
                raise CodegenError("too few Taylor terms left around alpha = 1")
            lines.append(f"def _series_{i}_one({arglist}):")
            lines.append("    # Taylor series around alpha = 1 by Taylor-mode arithmetic (starts at the KL divergence)")
            lines.append(f"    _one = numpy.zeros(({SERIES_TERMS},) + alpha.shape)")
            lines.append("    _unit = numpy.zeros_like(_one)")
            lines.append("    _unit[1] = 1.0")
            lines.extend(te.lines)
            lines.append(f"    return _series(list({top}[:{keep}]), alpha - 1.0)")
            lines.append("")
            lines.append(f"_series_{i}_one.where = 'alpha near 1'")
            lines.append("")
            # The coefficients depend on the parameters only (alpha enters the recurrences through its
            # shape): computed once at the parameters' own shape (a row of the grid) and gathered by
            # _branch, instead of once per point near alpha = 1.
            _parameter_only_coef(lines, f"_series_{i}_one", arglist, te, "ones", f"list({top}[:{keep}]), _alpha - 1.0")
            lines.append("")
            near_one = [f"(_series_{i}_one, 1.0)"]
        except CodegenError:
            near_one = []
    near_zero = _emit_series_at_zero(mod, br, i, arglist)
    # removable singular orders of this branch: (centre, the exact order's function or None, whether
    # a series serves it); the values at the centre are the result's, so they only apply to a
    # single branch
    centres = []
    if singular_at(br, sp.Integer(1)):
        at_one = "_order_one" if n_branches == 1 and result.kl is not None else "None"
        centres.append(f"(1.0, {at_one}, {bool(near_one)})")
    for k, ep in enumerate(fixed_points(result)):
        a0 = float(ep.alpha)
        served = any(sp.simplify(ALPHA - s.variable - ep.alpha) == 0 for s in points)
        at_a0 = f"_exceptional_{k}" if n_branches == 1 else "None"
        centres.append(f"({a0!r}, {at_a0}, {served})")
    # cancellation-free boundary series first, then the expansions in alpha
    return direct, boundary_names + near_one + near_zero + point_names, boundary_names, centres, moving


def _emit_series_at_zero(mod: _Module, br: sp.Expr, i: int, arglist: str) -> list[str]:
    """The Taylor series of branch ``i`` around alpha = 0, as the series around alpha = 1 (Taylor-mode
    arithmetic, coefficients in the parameters alone), or [] where there is none.

    As alpha -> 0 the divergence tends to -log Q(supp P) (0 for mechanisms of full support) while the
    closed form log(X)/(alpha - 1) takes the log of X -> 1: it loses digits like eps/alpha (laplace at
    alpha = 1.8e-4, b = 3.2 lost 5e-11). The constant coefficient is the closed form's exact value at
    alpha = 0, not its float Taylor-mode value (a rounding of log 1 would swamp a value of order alpha)."""
    if not any(lg.has(ALPHA) for lg in br.atoms(sp.log)):
        return []  # no log of X(alpha): nothing cancels as alpha -> 0 (the Gaussian's alpha/(2 sigma^2))
    try:
        at_zero = br.subs(ALPHA, 0)
    except SYMBOLIC_ERRORS:  # no value at 0: no series there
        return []
    if at_zero.has(ALPHA, sp.nan, sp.zoo, sp.oo, -sp.oo) or at_zero.is_real is False:
        return []
    em, lines = mod.em, mod.lines
    try:
        te = TaylorEmitter(em, sp.Integer(0), SERIES_TERMS)
        top = te.series(br)
        # exact: log(1 + e^eps) - log(e^eps + 1) written out would round to 2e-16, which is 1e-12 of
        # pure DP's value at alpha = 1e-4 (the series replaced an accurate closed form by it)
        c0 = "0.0" if _is_zero(at_zero) else em.value(at_zero)
    except CodegenError:
        return []
    if te.lost:
        return []
    lines.append(f"def _series_{i}_zero({arglist}):")
    lines.append("    # Taylor series around alpha = 0, per point")
    lines.append(f"    _cs, _v = _series_{i}_zero_coef({arglist})")
    lines.append("    return _series([_c + _z(_v) for _c in _cs], _v + 0.0)")
    lines.append("")
    lines.append(f"_series_{i}_zero.where = 'alpha near 0'")
    lines.append("")
    # the constant coefficient exact, the others by Taylor-mode arithmetic
    _parameter_only_coef(lines, f"_series_{i}_zero", arglist, te, "zeros",
                         f"[({c0}) + _z(alpha)] + list({top}[1:{SERIES_TERMS}]), _alpha")
    lines.append("")
    return [f"(_series_{i}_zero, 0.0)"]


def _is_zero(e: sp.Expr, seconds: float = 10.0) -> bool:
    """Whether ``e`` simplifies to 0 (within ``seconds``; False when sympy cannot tell in time)."""
    from .._timeout import StepTimeout, deadline_passed, run_with_time_limit

    if e == 0:
        return True
    try:
        return bool(run_with_time_limit(lambda: sp.simplify(e) == 0, seconds=seconds))
    except StepTimeout:
        if deadline_passed():
            raise  # an enclosing limit: not this check's to absorb
        return False
    except SYMBOLIC_ERRORS:  # sympy cannot tell: undecided, the constant is written as it is
        return False


def _parameter_only_coef(lines: list[str], series: str, arglist: str, te: TaylorEmitter, centre: str,
                         returned: str) -> None:
    """Append ``{series}_coef``: the Taylor-mode coefficients of ``te`` at the parameters' own shape
    (alpha enters the recurrences only through its shape, filled with numpy.``centre``: the centre's
    value), returning ``returned`` (the coefficients and the expansion variable); and mark it as the
    coefficients of ``series`` in the parameters alone."""
    params = arglist.split(", ")[1:]
    lines.append(f"def {series}_coef({arglist}):")
    lines.append("    _alpha = alpha")
    lines.append(f"    alpha = numpy.{centre}(numpy.broadcast_shapes({', '.join(f'numpy.shape({a})' for a in params)}) or (1,))")
    lines.append(f"    _one = numpy.zeros(({SERIES_TERMS},) + alpha.shape)")
    lines.append("    _unit = numpy.zeros_like(_one)")
    lines.append("    _unit[1] = 1.0")
    lines.extend(te.lines)
    lines.append(f"    return {returned}")
    lines.append("")
    lines.append(f"{series}_coef.uses = {tuple(range(1, len(params) + 1))!r}")
    lines.append(f"{series}.coef = {series}_coef")


def to_numpy(result: DivergenceResult, name: str | None = None, parameters: Sequence[Parameter] | None = None,
             *, cache: bool = True) -> Callable:
    """The function whose source is :func:`generate_source` (same text), ready to call.

    The returned function has a ``source`` attribute with its source code.
    """
    source = generate_source(result, name, parameters, cache=cache)
    namespace: dict = {"__name__": "rdpsym_generated"}
    # The source is generated by rdpsym from a sympy tree (never user text), so executing it is safe.
    exec(compile(source, "<rdpsym generated>", "exec"), namespace)  # noqa: S102
    fname = re.search(r"^def (\w+)\(alpha", source[source.rfind("\ndef "):], re.MULTILINE).group(1)
    f = namespace[fname]
    f.source = source
    return f
