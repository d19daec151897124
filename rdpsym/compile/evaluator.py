"""The generated module's dispatch: the branch evaluator and the public entry point.

The branch evaluator takes, per branch of the closed form, the closed form's function, its series
(tried where they are accurate, near their centres), its removable singular orders and its
parameter-dependent orders (:mod:`rdpsym.compile.factors`); the entry point validates the arguments,
routes alpha = 1 to the KL divergence, alpha = oo to the max divergence and the exceptional orders to
their limits, returns +inf where the finiteness conditions fail, and fails closed (``ArithmeticError``)
on NaN or a negative value.
"""

from __future__ import annotations

import sympy as sp

from ..symbols import alpha as ALPHA
from .doubled import DD_SCALE
from .emitter import doc_text
from .factors import MOVING_TRUST, MOVING_WINDOW
from .series import SERIES_TOLERANCE

#: The closed form is kept without trying a series where its estimated rounding error is below this
#: fraction of its value (the accuracy target is 1e-12; the estimate is first order)
ERROR_TRUST = 1e-13
#: A series and the closed form that agree to this fraction (a few roundings) are both accurate there:
#: the closed form is kept without estimating its error
AGREE = 1e-15
#: A series and the closed form that agree to this fraction: the series serves without the closed form's
#: error estimate. Whichever of the two is accurate, the other is then within this of it, so the value
#: is off by at most this more than the better of the two; where the closed form is the accurate one
#: and the two disagree by more, the estimate decides (a series of rounding-noise coefficients)
CONFIRM = 1e-13
#: Where a needed series is missing, the closed form is still returned where its estimated error is
#: below this fraction of its value (the estimate is an upper bound to first order; target 1e-12)
MISSING_TRUST = 1e-12

__all__ = ["band_placeholder", "branch_evaluator", "entry_point"]


def branch_evaluator(arglist: str, args: list[str]) -> list[str]:
    """The lines of ``_branch``: series where accurate, the closed form elsewhere."""
    lines: list[str] = []
    # The branch evaluator: series where accurate, the closed form elsewhere. Inputs keep their own
    # shapes (numpy broadcasts lazily), so a grid of orders x parameter values evaluates each
    # order-only or parameter-only subexpression once per row or column, not once per cell. Every
    # local name starts with "_": parameter names never do (see identifier), so none is captured.
    lines.append(f"def _branch({arglist}, _direct, _expansions, _centres=(), _moving=(), _notes=None, _err=None, _missing=(), _memo=None,")
    lines.append("            _exact=None, _whole=False, _bands=(), _unserved=None):")
    lines.append(f"    _shape = numpy.broadcast({', '.join(['alpha', *args])}).shape")
    lines.append("    if _shape == ():  # boolean masks below need an axis")
    lines.append(f"        return _branch(*(numpy.reshape(_a, (1,)) for _a in ({arglist},)), _direct, _expansions, _centres, _moving, _notes, _err, _missing,")
    lines.append("                       None, _exact, _whole, _bands)[0]")
    lines.append("    if not _expansions and not _centres and not _moving and not _missing and not _whole and not _bands:")
    lines.append(f"        _v = _direct({arglist})")
    lines.append("        return _v if numpy.shape(_v) == _shape else numpy.broadcast_to(_v, _shape)  # no read-only view")
    # The closed form everywhere first (lazy broadcasting, no gathers), then series values overwrite
    # it where they are accurate: the series serve few points, so gathering the rest would cost more.
    lines.append(f"    _out = _direct({arglist})")
    lines.append("    if not (isinstance(_out, numpy.ndarray) and _out.shape == _shape and _out.dtype == float")
    lines.append(f"            and not any(numpy.may_share_memory(_out, _a) for _a in ({arglist},))):")
    lines.append("        _out = numpy.array(numpy.broadcast_to(_out, _shape), dtype=float)  # a writable copy")
    lines.append("    _todo = numpy.ones(_shape, dtype=bool)")
    # Points where the closed form may have lost digits (a series was needed there) and no series
    # served them: settled after the series by the estimate, the double-double evaluation, or refused
    lines.append("    _doubt = numpy.zeros(_shape, dtype=bool)")
    lines.append("    _where = []")
    # A series around an order replaces the closed form only where the closed form's estimated rounding
    # error (see rdpsym.compile.errors) is above ERROR_TRUST of its value; the estimate runs on the
    # candidates of the series (their windows and screens) only, once per point.
    lines.append("    _estimated = numpy.zeros(_shape, dtype=bool) if _err is not None else None")
    lines.append("    _trusted = numpy.zeros(_shape, dtype=bool) if _err is not None else None")
    lines.append("    for _s, _center in _expansions:")
    lines.append("        # expansions in alpha are only tried close to their centre")
    lines.append("        if _center is None:")
    lines.append("            _near = _todo")
    lines.append("        else:")
    lines.append("            _window = numpy.abs(alpha - _center) < 0.25  # at alpha's own shape: cheap")
    lines.append("            if not _window.any():")
    lines.append("                continue")
    lines.append("            _near = _todo & _window")
    lines.append("        if not _near.any():")
    lines.append("            continue")
    lines.append("        _pre = getattr(_s, 'pre', None)")
    lines.append("        _coef = getattr(_s, 'coef', None)")
    lines.append("        _boundary = _pre is not None and _center is None")
    lines.append("        _lost = getattr(_s, 'lost', None)")
    lines.append("        if _lost is not None:")
    lines.append("            # a coefficient the screen reads under- or overflowed: it cannot judge the series there")
    lines.append(f"            _l = _near & _block_pre(_memo, _lost, _coef, ({arglist},))")
    lines.append("            if _l.any():")
    lines.append("                _doubt |= _l")
    lines.append("                _where.append(_s.where + ', where its coefficients under- or overflow')")
    lines.append("        if _boundary:")
    lines.append("            # a cheap screen at the inputs' own shapes, once per call (see _blockwise)")
    lines.append(f"            _near = _near & _block_pre(_memo, _pre, _coef, ({arglist},))")
    lines.append("        elif _pre is not None:")
    lines.append(f"            _keep = _pre(*(numpy.broadcast_to(_a, _shape)[_near] for _a in ({arglist},)))")
    lines.append("            _near = _near.copy()")
    lines.append("            _near[_near] = _keep")
    lines.append("        if not _near.any():")
    lines.append("            continue")
    lines.append(f"        _args = ({arglist},)")
    # A series is cheap where its coefficients are computed at the inputs' own shapes (an order-only
    # column, a parameter-only row): then it is evaluated at every candidate first, and the closed
    # form's error estimate is needed only where the two disagree. An expensive series (Taylor-mode
    # arithmetic per point) is computed only where the estimate says the closed form loses digits.
    lines.append("        _cheap = _coef is not None and _size(numpy.broadcast_shapes(*(numpy.shape(_args[_k]) for _k in _coef.uses))) <= numpy.count_nonzero(_near)")
    lines.append("        if _err is not None and _center is not None and not _cheap:")
    lines.append("            _new = _near & ~_estimated")
    lines.append("            if _new.any():")
    lines.append(f"                _block = _rows([{arglist}], _shape, _new)")
    lines.append("                if _block is not None:  # the estimate on the rows that hold the points, at the inputs' shapes")
    lines.append("                    _r = _block[1]")
    lines.append("                    _m = _new[_r]")
    lines.append("                    _e = numpy.broadcast_to(_err(*_block[0]), _m.shape)[_m]")
    lines.append(f"                    _trusted[_r][_m] = _e <= {ERROR_TRUST!r} * numpy.abs(_out[_r][_m])")
    lines.append("                else:")
    lines.append(f"                    _e = _err(*_gather([{arglist}], _shape, _new))")
    lines.append(f"                    _trusted[_new] = _e <= {ERROR_TRUST!r} * numpy.abs(_out[_new])")
    lines.append("                _estimated |= _new")
    lines.append("            _near = _near & ~_trusted")
    lines.append("            if not _near.any():")
    lines.append("                continue")
    lines.append("            _doubt |= _near  # the estimate distrusts the closed form here: a series must serve them")
    lines.append("            _where.append(_s.where)")
    # flat indices once per series, then take/put (boolean or .flat indexing walks the whole block
    # per array, several times slower)
    lines.append("        if _cheap and _boundary and _memo is not None and len(_shape) == 2:")
    lines.append("            # on a grid: the rectangle of the block that holds the points, written in place")
    lines.append(f"            _prep = _block_outer(_memo, _coef, ({arglist},))")
    lines.append(f"            _rect = _series_rect(_prep, _near, {SERIES_TOLERANCE!r}, _memo) if _prep is not None else None")
    lines.append("            if _rect is not None:")
    lines.append("                _r, _c, _value, _ok = _rect")
    lines.append("                numpy.copyto(_out[_r, _c], _value, where=_ok)")
    lines.append("                _todo[_r, _c] &= ~_ok")
    lines.append("                _missed = _near[_r, _c] & ~_ok")
    lines.append("                if _missed.any():  # in the series' band, which did not converge there")
    lines.append("                    _doubt[_r, _c] |= _missed")
    lines.append("                    _where.append(_s.where)")
    lines.append("                continue")
    lines.append("        _at = numpy.flatnonzero(_near)")
    lines.append("        if _cheap:")
    lines.append("            # coefficients at the inputs' own shapes, then one matrix product on a grid (or")
    lines.append("            # gathered per point); constant coefficients stay constants (a zero costs nothing)")
    lines.append("            _prep = None")
    lines.append("            if _boundary:")
    lines.append("                # the coefficient matrix and the powers of the variable, once per call")
    lines.append(f"                _prep = _block_outer(_memo, _coef, ({arglist},))")
    lines.append(f"                _cs, _v = (None, None) if _prep is not None else _block_coef(_memo, _coef, ({arglist},))")
    lines.append("            elif _center is not None and 0 not in _coef.uses:")
    lines.append("                # coefficients in the parameters alone: once per call (see _blockwise)")
    lines.append("                _cs = _memo_get(_memo, _coef, [_a if _k in _coef.uses else 1.0 for _k, _a in enumerate(_args)])[0]")
    lines.append("                _v = alpha - _center")
    lines.append("            else:")
    lines.append("                _cs, _v = _coef(*_args)")
    lines.append(f"            _grid = _series_outer(_cs, _v, _shape, _at, {SERIES_TOLERANCE!r}, _memo, _prep)")
    lines.append("            if _grid is not None:")
    lines.append("                _value, _conv = _grid")
    lines.append("            else:")
    lines.append("                if _cs is None:")
    lines.append(f"                    _cs, _v = _block_coef(_memo, _coef, ({arglist},))")
    lines.append("                *_cs, _v = _gather([*_cs, _v], _shape, _near)")
    lines.append("                _value, _tail = _series(_cs, _v + numpy.zeros(_at.size))")
    lines.append(f"                _conv = _tail <= {SERIES_TOLERANCE!r} * numpy.abs(_value)")
    lines.append("        else:")
    lines.append(f"            _value, _tail = _s(*(_take(_a, _shape, _at) for _a in ({arglist},)))")
    lines.append(f"            _conv = _tail <= {SERIES_TOLERANCE!r} * numpy.abs(_value)")
    lines.append("        _ok = numpy.isfinite(_value) & _conv")
    lines.append("        _confirmed = None  # points where the series confirms the closed form")
    lines.append("        if _center is not None:")
    lines.append("            # Taylor coefficients computed in floats can be rounding noise (large parameters")
    lines.append("            # ratios), and noise can pass the truncation test: a series value must also agree")
    lines.append("            # with the closed form within the closed form's cancellation error, ~1e-12/|alpha - c|")
    lines.append("            _d = _out.ravel().take(_at)")
    lines.append("            _dist = numpy.abs(_take(alpha, _shape, _at) - _center)")
    lines.append("            _ok &= numpy.abs(_value - _d) <= (1e-3 + 1e-12 / _dist) * numpy.abs(_d)")
    lines.append("            if _err is not None and _cheap:")
    lines.append(f"                # where the two agree to {AGREE!r} (a few roundings) the closed form stays; where they")
    lines.append(f"                # agree to {CONFIRM!r} the series serves (the closed form confirms it); elsewhere the series")
    lines.append("                # replaces the closed form only where the closed form's estimated error says it lost digits")
    lines.append("                _gap = numpy.abs(_value - _d)")
    lines.append("                _mag = numpy.abs(_d)")
    lines.append(f"                _confirmed = _ok & (_gap <= {AGREE!r} * _mag)")
    lines.append("                _ok &= ~_confirmed")
    lines.append(f"                _check = _ok & ~(_gap <= {CONFIRM!r} * _mag)")
    lines.append("                if _check.any():")
    lines.append(f"                    _e = _err(*(_take(_a, _shape, _at[_check]) for _a in ({arglist},)))")
    lines.append(f"                    _ok[_check] = ~(_e <= {ERROR_TRUST!r} * _mag[_check])")
    lines.append("                    _confirmed[_check] = ~_ok[_check]")
    lines.append("        _idx = _at[_ok]")
    lines.append("        numpy.put(_out, _idx, _value[_ok])")
    lines.append("        numpy.put(_todo, _idx, False)")
    lines.append("        _missed = ~_ok if _confirmed is None else ~(_ok | _confirmed)")
    lines.append("        if _missed.any():  # candidates of the series that it did not serve")
    lines.append("            numpy.put(_doubt, _at[_missed], True)")
    lines.append("            _where.append(_s.where)")
    # Next to a removable singular order without a series (no series built) the closed form is 0/0:
    # its points there are in doubt too.
    lines.append("    for _c, _at_c, _guarded in _centres:")
    lines.append("        if not _guarded:")
    lines.append("            _close = _todo & (numpy.abs(alpha - _c) < 1e-4)  # at alpha's own shape: cheap")
    lines.append("            if _close.any():")
    lines.append("                _doubt |= _close")
    lines.append("                _where.append(f'alpha near {_c}, where no series was built')")
    lines.append("    for _rel, _s, _cfe in _moving:")
    lines.append("        # next to an order that depends on the parameters (a root of a factor of the closed form):")
    lines.append("        # the series around it where it converges, else the closed form where its estimated")
    lines.append("        # cancellation error is small, else NaN (counted in _notes: fail closed, never a wrong number)")
    lines.append(f"        _near = _todo & (_rel({arglist}) < {MOVING_WINDOW!r})")
    lines.append("        if not _near.any():")
    lines.append("            continue")
    lines.append(f"        _sub = tuple(numpy.broadcast_to(_a, _shape)[_near] for _a in ({arglist},))")
    lines.append("        _idx = numpy.flatnonzero(_near)")
    lines.append("        _d = _out.flat[_idx]")
    lines.append("        _cerr = _cfe(*_sub)")
    lines.append("        _good = numpy.zeros(_d.shape, dtype=bool)")
    lines.append("        if _s is not None:")
    lines.append("            _value, _tail = _s(*_sub)")
    lines.append(f"            _good = numpy.isfinite(_value) & (_tail <= {SERIES_TOLERANCE!r} * numpy.abs(_value))")
    lines.append("            # rounding-noise coefficients can pass the truncation test: the series must also agree")
    lines.append("            # with the closed form within the closed form's own error (where that is a number)")
    lines.append("            _good &= ~numpy.isfinite(_d) | (numpy.abs(_value - _d) <= 1e-3 * numpy.abs(_d) + 10.0 * _cerr)")
    lines.append("            _out.flat[_idx[_good]] = _value[_good]")
    lines.append(f"        _bad = ~_good & ~(numpy.isfinite(_d) & (_cerr <= {MOVING_TRUST!r} * numpy.abs(_d)))")
    lines.append("        if _bad.any():")
    lines.append("            _out.flat[_idx[_bad]] = numpy.nan")
    lines.append("            if _notes is not None:")
    lines.append("                _notes.append(int(_bad.sum()))")
    lines.append("        _todo.flat[_idx] = False")
    # The bands of the boundary series where the closed form was found to lose digits beyond the
    # series' reach (compile.survey, at generation time): every point no series served whose distance
    # from the series' convergence (its gap, log|v| over the screen's bound) is at most the margin is in
    # doubt; ``(None, None)``: every point of the branch.
    lines.append("    for _s, _margin in _bands:")
    lines.append(f"        _band = _todo if _s is None else _todo & (_s.gap({arglist}) <= _margin)")
    lines.append("        if _band.any():")
    lines.append("            _doubt |= _band")
    lines.append("            _where.append('every order' if _s is None else _s.where)")
    # Orders below 1 outside the windows of every series around an order (randomized response between
    # 1/4 and 3/4) have no series to fall back on: there the closed form's error estimate decides.
    lines.append("    _doubt &= _todo")
    lines.append("    _low = None")
    lines.append("    if _err is not None:")
    lines.append("        _low = alpha < 1.0")
    lines.append("        for _s, _center in _expansions:")
    lines.append("            if _center is not None:")
    lines.append("                _low = _low & ~(numpy.abs(alpha - _center) < 0.25)")
    lines.append("        _low = _todo & ~_doubt & _low")
    lines.append("    if _unserved is not None:  # the survey at generation time: the points the closed form serves unchecked")
    lines.append("        _unserved.append(_todo & ~_doubt & (~_low if _low is not None else True))")
    lines.append("        return _out")
    # Where the closed form may have lost digits and no series served the point, its estimated error
    # decides (runtime._settle); where that is too large, the closed form in double-double arithmetic
    # (compile.doubled) where its estimate, scaled to double-double, is small; else refuse, saying why.
    lines.append("    if _missing or _whole:")
    lines.append("        # a series the closed form needs was not built in time (or the caller asks for every point to be")
    lines.append("        # checked: the orders with closed forms of their own): every point no series served is settled")
    lines.append(f"        _bad, _rel = _settle(_out, _todo, numpy.flatnonzero(_todo), _shape, ({arglist},), _err, _exact, {MISSING_TRUST!r}, {DD_SCALE!r})")
    lines.append("        if _bad:")
    lines.append("            _why = f'no series for {\", \".join(_missing)} was built in time' if _missing else 'no series converged'")
    lines.append("            raise ArithmeticError(f'{_why} and the closed form loses digits at {_bad} point(s) there, in double-double '")
    lines.append("                                  f'arithmetic too (estimated relative error up to {_rel:.1e}); use the exact result instead')")
    lines.append("    _doubt &= _todo")
    lines.append("    if _doubt.any():")
    lines.append(f"        _bad, _rel = _settle(_out, _todo, numpy.flatnonzero(_doubt), _shape, ({arglist},), _err, _exact, {ERROR_TRUST!r}, {DD_SCALE!r})")
    lines.append("        if _bad:")
    lines.append("            raise ArithmeticError(f'the closed form loses digits at {_bad} point(s) ({\", \".join(sorted(set(_where)))}) '")
    lines.append("                                  f'where no series converged, in double-double arithmetic too '")
    lines.append("                                  f'(estimated relative error up to {_rel:.1e}); use the exact result instead')")
    lines.append("    for _c, _at_c, _guarded in _centres:")
    lines.append("        # next to a removable singular point the closed form is 0/0: where no series was accepted it")
    lines.append("        # must at least agree with the value at the point itself (fail closed: raise, never a wrong number)")
    lines.append("        if not _guarded or _at_c is None:")
    lines.append("            continue")
    lines.append("        _close = _todo & (numpy.abs(alpha - _c) < 1e-3)  # at alpha's own shape: cheap")
    lines.append("        if not _close.any():")
    lines.append("            continue")
    lines.append(f"        _sub = tuple(numpy.broadcast_to(_a, _shape)[_close] for _a in ({arglist},))")
    lines.append("        _ref = numpy.broadcast_to(_at_c(*_sub), _sub[0].shape)")
    lines.append("        if not numpy.all(numpy.abs(_out[_close] - _ref) <= 1e-2 * numpy.abs(_ref) + 1e-300):")
    lines.append("            raise ArithmeticError(f'the float code cancels next to alpha = {_c} and no series converged '")
    lines.append("                                  'there; use the exact result instead')")
    lines.append("    if _low is not None:")
    lines.append("        _low &= _todo")
    lines.append("        if _low.any():")
    lines.append(f"            _bad, _rel = _settle(_out, _todo, numpy.flatnonzero(_low), _shape, ({arglist},), _err, _exact, {MISSING_TRUST!r}, {DD_SCALE!r})")
    lines.append("            if _bad:")
    lines.append("                raise ArithmeticError(f'the closed form loses digits at {_bad} order(s) below 1 that no series serves, '")
    lines.append("                                      f'in double-double arithmetic too (estimated relative error up to {_rel:.1e}); '")
    lines.append("                                      'use the exact result instead')")
    lines.append("    return _out")
    lines.append("")
    return lines


def _factor_check(expr, em, validated=frozenset()) -> str | None:
    """Code that is false unless the float value of ``expr`` (a product, as the emitter writes it:
    numerator factors times, divided by the denominator's) is surely in [0, inf] and not NaN, checked on
    the factors at their own shapes: in IEEE arithmetic a product of finite factors >= 0 divided by a
    product of finite factors > 0 is never NaN nor negative. The output check over the whole grid is then
    needed only where this is false. None unless every factor depends on at most one input (a check at
    the grid's size would save nothing). ``validated``: symbols the entry point has already checked to
    be finite and >= 0 (alpha > 0 and finite on this path; a parameter in an interval of [0, oo)),
    which need no check of their own as factors."""
    if expr is None or not expr.is_Mul:
        return None
    parts = []
    for f in expr.args:
        if f in validated:
            continue
        if len(f.free_symbols) > 1:
            return None
        if f.is_number:
            if not f.is_extended_real or f.is_negative:
                return None
            continue
        if f.is_Pow and f.exp.is_number and f.exp.is_negative:
            parts.append(f"_all((({em.value(sp.Pow(f.base, -f.exp))}) > 0) & (({em.value(sp.Pow(f.base, -f.exp))}) < numpy.inf))")
        else:
            parts.append(f"_all((({em.value(f)}) >= 0) & (({em.value(f)}) < numpy.inf))")
    return "not (" + " and ".join(parts) + ")" if parts else None


def band_placeholder(direct: str) -> str:
    """The text standing for the ``_bands`` of the branch ``direct`` until the survey has found them."""
    return f"__bands_of{direct}__"


def entry_point(mod, result, name: str, params, args: list[str], combine: str, branch_code: list,
                exceptional: list) -> bool:
    """Append the parameter checks, ``_general`` and the function ``name`` to ``mod.lines``; returns
    whether the code needs ``warnings`` (points next to a parameter-dependent order may be NaN)."""
    lines, em, arglist = mod.lines, mod.em, mod.arglist
    # parameter validation
    checks = []
    for p, a in zip(params, args):
        # a symbol without assumptions: with p.symbol (positive) sympy would reduce 0 < b to True
        free = sp.Symbol(f"_{a}")
        em.names[free] = a
        rel = p.domain.as_relational(free)
        checks.append((a, em.condition(rel), sp.sstr(p.domain)))

    doc_params = "\n".join(f"    {a}: {doc_text(p.meaning or p.name)}, in {doc_text(sp.sstr(p.domain))}"
                           for p, a in zip(params, args))
    def combined(kind):
        parts = [kind(d, s, b, c, mv) for d, s, b, c, mv in branch_code]
        value = parts[0]
        for p in parts[1:]:
            value = f"{combine}({value}, {p})"
        return value

    # the general orders of every branch, combined; evaluated block by block
    lines.append(f"def _general({arglist}, _notes=None, _memo=None):")
    lines.append(f"    _sub = ({arglist},)")
    errs = getattr(mod, "errs", {})

    missing = getattr(mod, "missing", {})

    exacts = getattr(mod, "exacts", {})

    mod.surveys = {}

    def call(d, s, b, c, mv):
        err = d.replace("_direct", "_err") if errs.get(d) else "None"
        gaps = repr(tuple(missing.get(d, ())))
        head = f"_branch(*_sub, {d}, [{', '.join(s)}], [{', '.join(c)}], [{', '.join(mv)}]"
        # the survey's call (compile.survey) and the placeholder of the bands it finds
        mod.surveys[d] = (f"{head}, None, {err}, {gaps}, None, {exacts.get(d, 'None')}, _unserved=_u)", err,
                          [name.strip("()").split(",")[0] for name in b])
        return f"{head}, _notes, {err}, {gaps}, _memo, {exacts.get(d, 'None')}, _bands={band_placeholder(d)})"

    lines.append(f"    return {combined(call)}")
    lines.append("")
    lines.append(f"def {name}({arglist}):")
    lines.append(f'    """{doc_text(result.label)}, vectorised over numpy arrays (broadcasting).')
    lines.append("")
    lines.append("    Closed form (derived by rdpsym, status %s):" % result.status)
    lines.append(f"        {doc_text(sp.sstr(result.expr))}")
    if result.kl is not None:
        lines.append(f"    alpha = 1 (the KL divergence): {doc_text(sp.sstr(result.kl))}")
    if result.max_divergence is not None:
        lines.append(f"    alpha = inf (the max divergence): {doc_text(sp.sstr(result.max_divergence))}")
    for ep in result.exceptional_points:
        lines.append(f"    alpha = {doc_text(sp.sstr(ep.alpha))} (a limit): {doc_text(sp.sstr(ep.value))}")
    if result.conditions != sp.true:
        lines.append(f"    +inf where {doc_text(sp.sstr(result.conditions))} fails (finiteness).")
    lines.append("")
    # the source: what the formula was derived from, and the definition it evaluates
    inputs = dict(result.provenance.inputs)
    lines.append("    Source: derived by rdpsym (rdpsym.rdp / renyi_divergence) from the densities")
    for key in ("P", "Q"):
        if key in inputs:
            lines.append(f"        {key} = {doc_text(inputs[key])}")
    if "support" in inputs:
        lines.append(f"    on {doc_text(inputs['support'])}, as D_alpha(P||Q) = 1/(alpha-1) log int P^alpha Q^(1-alpha)")
    lines.append("    (Mironov 2017, arXiv:1702.07476 v3, Def. 3). Float evaluation: rdpsym.compile (log-sum-exp,")
    lines.append("    log1p/expm1, Taylor series where the closed form cancels).")
    lines.append("")
    lines.append("    alpha: the Renyi order, > 0 (inf allowed)")
    lines.append(doc_params)
    lines.append('    """')
    lines.append(f"    alpha, {', '.join(args)} = (" if args else "    (alpha,) = (")
    lines.append("        " + ", ".join(f"numpy.asarray({a}, dtype=float)" for a in ["alpha", *args]) + ",)")
    lines.append(f"    _shape = numpy.broadcast({', '.join(['alpha', *args])}).shape")
    lines.append("    with numpy.errstate(invalid='ignore'):")
    lines.append("        if not _all(alpha > 0):")
    lines.append("            raise ValueError(f'alpha must be > 0 (and not NaN); got {alpha[~(alpha > 0)].ravel()[:3]}')")
    for a, cond, dom in checks:
        lines.append(f"        _ok = {cond.replace(' & (True)', '')}")
        lines.append("        if not _all(_ok):")
        # the domain's text goes in as a Python literal (repr), never into the f-string itself
        lines.append(f"            raise ValueError('{a} must lie in ' + {dom!r} + f'; got {{numpy.broadcast_to({a}, _ok.shape)[~numpy.asarray(_ok)].ravel()[:3]}}')")
    heavy = any(series or mv for _, series, _, _, mv in branch_code) or any("_lse_" in line for line in lines[4:])
    if result.conditions == sp.true and not any(mv for *_, mv in branch_code):
        # the common case, every order a general one: the general code writes the output itself (no
        # NaN-filled array, no copy) and one comparison checks it (NaN fails >= 0 too)
        special = "".join(f" & (alpha != {a0!r})" for a0, *_ in exceptional)
        lines.append(f"    if _all(numpy.isfinite(alpha) & (alpha != 1.0){special}):")
        lines.append("        with numpy.errstate(all='ignore'):")
        if heavy:
            lines.append(f"            _out = _blockwise(_general, ({arglist},), numpy.empty(_shape))")
        else:
            lines.append(f"            _out = _general({arglist})")
            # a fresh array owns its data (base None) and is none of the inputs: a view or an input is copied
            lines.append("            if not (isinstance(_out, numpy.ndarray) and _out.shape == _shape and _out.flags.writeable")
            lines.append(f"                    and _out.base is None and all(_out is not _a for _a in ({arglist},))):")
            lines.append("                _out = numpy.array(numpy.broadcast_to(_out, _shape), dtype=float)")
        # one reduction, no boolean temporary: the minimum is NaN if any value is (NaN fails >= 0)
        # alpha > 0 and finite here; a parameter validated in an interval of [0, oo) is finite and >= 0
        validated = frozenset([ALPHA] + [p.symbol for p in params
                                          if isinstance(p.domain, sp.Interval) and p.domain.inf.is_nonnegative])
        factors_ok = _factor_check(getattr(mod, "direct_forms", {}).get(branch_code[0][0]), em, validated) \
            if len(branch_code) == 1 and not combine and not heavy else None
        lines.append(f"        if {factors_ok + ' and ' if factors_ok else ''}_out.size and not (numpy.min(_out) >= 0):")
        lines.append("            _what = 'NaN' if numpy.isnan(_out).any() else 'a negative value'")
        lines.append(f"            raise ArithmeticError(f'{name}: the float code produced {{_what}}; use the exact result instead')")
        lines.append("        return _out[()] if _out.ndim == 0 else _out")
    lines.append("    _out = numpy.full(_shape, numpy.nan)")
    lines.append(f"    _full = lambda _m: tuple(numpy.broadcast_to(_a, _shape)[_m] for _a in ({arglist},))  # noqa: E731")
    lines.append("    with numpy.errstate(all='ignore'):")
    lines.append("        _rest = numpy.isfinite(alpha) & (alpha != 1.0)")
    for a0, *_ in exceptional:
        lines.append(f"        _rest &= alpha != {a0!r}")
    lines.append("        _rest = numpy.broadcast_to(_rest, _shape)")
    # Blocks pay off when a point costs many array operations (series screens, log-sum-exp); a
    # one-line formula such as the Gaussian's is fastest on the whole grid at once.
    blockwise = "_blockwise" if heavy else "_whole"
    guarded = any(mv for *_, mv in branch_code)
    general = "_general"
    if guarded:
        # points next to a parameter-dependent singular order where nothing is accurate are NaN
        lines.append("        _notes = []")
        lines.append("        _gen = lambda *_a, **_k: _general(*_a, _notes=_notes, **_k)  # noqa: E731")
        general = "_gen"
    lines.append("        if _rest.all():")
    lines.append("            # every order is a general one: no copies, lazy broadcasting")
    lines.append(f"            {blockwise}({general}, ({arglist},), _out)")
    lines.append("        elif _rest.any():")
    lines.append("            _sub = _full(_rest)")
    lines.append(f"            _out[_rest] = {blockwise}({general}, _sub, numpy.empty(_sub[0].shape))")
    # alpha = 1, oo and exceptional orders: their own closed forms, or a boundary series where that
    # closed form cancels (KL of Laplace at large b)
    def special(fname: str, guards: tuple) -> str:
        """The call of a special order's closed form: through _branch, with the boundary series of a
        single branch, and checked at every point no series serves (its estimate, its double-double
        evaluation) where it has an estimate."""
        bounds = ", ".join(branch_code[0][2]) if len(branch_code) == 1 else ""
        err, exact = guards
        if err == "None":
            return f"_branch(*_sub, {fname}, [{bounds}])" if bounds else f"{fname}(*_sub)"
        return f"_branch(*_sub, {fname}, [{bounds}], (), (), None, {err}, (), None, {exact}, True)"

    one = special("_order_one", getattr(mod, "one_guards", ("None", "None")))
    lines.append("        _m = numpy.broadcast_to(alpha == 1.0, _shape)")
    lines.append("        if _m.any():")
    lines.append("            _sub = _full(_m)")
    lines.append(f"            _out[_m] = {one}")
    lines.append("        _m = numpy.broadcast_to(numpy.isinf(alpha), _shape)")
    lines.append("        if _m.any():")
    lines.append("            _out[_m] = _order_inf(*_full(_m))")
    for a0, f, guards in exceptional:
        call = special(f, guards)
        lines.append(f"        _m = numpy.broadcast_to(alpha == {a0!r}, _shape)")
        lines.append("        if _m.any():")
        lines.append("            _sub = _full(_m)")
        lines.append(f"            _out[_m] = {call}")
    if result.conditions != sp.true:
        # the finiteness conditions are those of the general order's integral: like DivergenceResult.at,
        # they apply to general and exceptional orders, not to the KL (alpha = 1) or D_oo
        lines.append("        _general_orders = numpy.broadcast_to(numpy.isfinite(alpha) & (alpha != 1.0), _shape)")
        lines.append(f"        _out[_general_orders & ~numpy.broadcast_to(_conditions({arglist}), _shape)] = numpy.inf")
    if guarded:
        lines.append("    _failed = int(numpy.isnan(_out).sum())")
        lines.append("    if _failed > sum(_notes):")
        lines.append(f"        raise ArithmeticError('{name}: the float code produced NaN; use the exact result instead')")
        lines.append("    if _failed:")
        lines.append("        warnings.warn(f'" + name + ": {_failed} point(s) next to an order where the closed form is 0/0 '")
        lines.append("                      'and no series converged are NaN (fail closed); use the exact result there',")
        lines.append("                      RuntimeWarning, stacklevel=2)")
    else:
        lines.append("    if numpy.isnan(_out).any():")
        lines.append(f"        raise ArithmeticError('{name}: the float code produced NaN; use the exact result instead')")
    lines.append("    if (_out < 0).any():")
    lines.append("        # a Renyi divergence is >= 0 (Mironov 2017, Sect. III): a negative float is lost digits")
    lines.append(f"        raise ArithmeticError('{name}: the float code produced a negative value; use the exact result instead')")
    lines.append("    return _out[()] if _out.ndim == 0 else _out")
    lines.append("")
    return guarded
