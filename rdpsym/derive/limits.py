"""The limit checks: lim_{alpha->1} of the general form is the KL and lim_{alpha->oo} is D_oo (recorded,
not assumed)."""

from __future__ import annotations

import mpmath
import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..symbols import alpha as ALPHA
from .crosscheck import equivalent
from .pieces import DerivationError
from .._timeout import StepTimeout, run_with_time_limit

__all__ = ["numeric_limit_check", "check_limits"]


def numeric_limit_check(general, cond, target, a0, points, side: str = "+") -> bool | None:
    """Compare ``general`` near alpha = a0 with ``target`` at high precision (None if not evaluable).

    Near alpha = 1 the general form differs from the KL by O(alpha - 1); at alpha = 10**30 it differs
    from D_inf by O(log(alpha)/alpha). Both are far below the 10**-12 tolerance used here.
    """
    # a Float order: an exact 10**30 would make sympy expand rationals to that power
    step = sp.Rational(1, 10**30) if side == "+" else -sp.Rational(1, 10**30)
    near = sp.Float(sp.Integer(1) + step, 130) if a0 == 1 else sp.Float(10**30, 130)
    checked = False
    for exact in points:
        # the parameters as 130-digit Floats too: a rational base under the order 10**30 sends sympy into exact
        # perfect-power tests of huge integers, which no time limit interrupts (a five-outcome pmf with
        # (1 + 3t)^alpha at t = 1/2 took 220 s here)
        point = {k: (sp.Float(v, 130) if getattr(v, "is_number", False) and v.is_finite else v) for k, v in exact.items()}
        c = cond.subs(ALPHA, near).subs(point) if cond is not sp.true else sp.true
        try:
            c = sp.simplify(c) if c not in (sp.true, sp.false) else c
        except SYMBOLIC_ERRORS:
            return None
        t = target.subs(point)
        if c is sp.false:
            # the divergence is +oo next to the order
            if a0 != sp.oo:
                return None
            if t != sp.oo:
                return False
            checked = True
            continue
        if c is not sp.true:
            return None
        try:
            with mpmath.workdps(120):
                g = sp.N(general.subs(point).subs(ALPHA, near), 100)
                tv = sp.N(t, 100) if t != sp.oo else sp.oo
        except SYMBOLIC_ERRORS:
            return None
        if not g.is_real or not g.is_number:
            return None
        if tv == sp.oo:
            if a0 == 1:
                return None
            # D_alpha -> oo may be as slow as log(alpha): require growth between 1e15 and 1e30
            with mpmath.workdps(120):
                g_half = sp.N(general.subs(point).subs(ALPHA, sp.Float(10**15, 130)), 100)
            if not (g_half.is_real and g - g_half > sp.Float(10) ** -3):
                return False
        elif not tv.is_real or abs(g - tv) > sp.Float(10) ** -12 * max(1, abs(tv)):
            return False
        checked = True
    return True if checked else None


def check_limits(expr, cond, kl, dinf, points, seconds, log):
    """Check that lim_{alpha->1} expr = KL and lim_{alpha->oo} expr = D_inf (recorded, not assumed).

    The limit is first taken symbolically; when sympy's limit is unusable (unevaluated, or an
    artefact such as oo*sign(...)), the general form is evaluated at 100 digits next to the order.
    A disagreement raises :class:`DerivationError` (the result then is not a closed form).
    """
    general = expr.args[-1][0] if isinstance(expr, sp.Piecewise) else expr
    below = None
    if isinstance(expr, sp.Piecewise) and general == sp.oo and expr.args[0][1] == (ALPHA < 1):
        # +oo for every alpha > 1 (tails too heavy) while the KL may be finite: the KL is the limit
        # from below, which always holds (van Erven & Harremoës 2014, Thm. 5)
        below = expr.args[0][0]
    for name, target, a0 in (("KL", kl, sp.Integer(1)), ("D_inf", dinf, sp.oo)):
        if target is None:
            continue
        ok = None
        lim = None
        form, side = (below, "-") if (a0 == 1 and below is not None) else (general, "+" if a0 == 1 else "-")
        try:
            lim = run_with_time_limit(sp.limit, form, ALPHA, a0, side, seconds=seconds)
        except (StepTimeout, *SYMBOLIC_ERRORS) as exc:
            log.note(f"{name} limit check", f"symbolic limit not taken: {type(exc).__name__}")
        if lim is not None and not lim.has(sp.Limit, sp.nan, sp.zoo, sp.sign, sp.AccumBounds):
            if target == sp.oo or lim.has(sp.oo, -sp.oo):
                ok = "symbolic" if target == lim else None
            else:
                ok = equivalent(lim, target, points)
        if not ok:
            try:
                numeric = run_with_time_limit(numeric_limit_check, form, cond, target, a0, points, side, seconds=seconds)
            except (StepTimeout, DerivationError, *SYMBOLIC_ERRORS):
                numeric = None
            if numeric is True:
                ok = "numeric, 100 digits next to the order"
            elif numeric is False or (lim is not None and not lim.has(sp.Limit, sp.sign, sp.nan, sp.zoo, sp.AccumBounds)):
                raise DerivationError(f"{name}: the direct derivation {target} differs from the limit {lim}")
            else:
                log.note(f"{name} limit check", "not decided: limit neither taken symbolically nor evaluable")
                continue
        log.note(f"{name} limit check", f"lim alpha -> {a0}{' from below' if (a0 == 1 and side == '-') else ''} of the general form equals the direct {name} ({ok} check)")
