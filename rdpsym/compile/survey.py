"""Where a closed form loses digits beyond the reach of its series: a survey of the generated code.

The float code returns the closed form unchecked wherever no series is needed: its error estimate
(:mod:`rdpsym.compile.errors`) costs several times the closed form itself, so it runs only where the
closed form is known to be in doubt (next to the centres of the series around orders, below order 1,
where a needed series is missing). Whether the closed form keeps its digits elsewhere depends on the
form: Laplace's does (its terms are in ratio form), the discrete Laplace pmfs' does not far beyond
the band where the series in 1/b converges (at b = 1e5 and alpha = 1e4 the closed form is 5e-9 off,
cancelling terms of size 1 to a value of 2e-6).

:func:`bands` finds out at generation time, by running the generated branch on a grid of orders and
parameter values (every half decade of the order from 1e-3 to 1e6, every decade of a scale, the ends
of a bounded parameter, integers up to 1e12): at each point the branch would return unchecked, the
closed form's estimated error is compared with ``ERROR_TRUST`` of its value. A point where it is larger
is attributed to the boundary series whose variable is smallest there (1/b, 1/k, p - 1/2), and the
band of that series is every point whose variable is at most ten times the largest attributed one
(one grid step beyond). At run time every point of a band that no series served is in doubt: its
estimate decides, then the double-double evaluation, else the code refuses. A branch with no boundary
series is in doubt everywhere.

A survey, not a proof: between its grid points the closed form is trusted as before. The accuracy tests
(tests/test_codegen.py, tests/test_codegen_accuracy.py) check the float code against 50-digit mpmath.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .evaluator import MISSING_TRUST

__all__ = ["MARGIN", "SURVEY_POINTS", "bands", "survey_grid"]

#: a band reaches this far (natural log of the ratio) beyond the farthest point found: one decade of
#: the variable at the leading order, the survey's grid step
MARGIN = 2.302585092994046

#: at most about this many points in a survey (parameter grids are thinned beyond)
SURVEY_POINTS = 60000

#: orders surveyed: every half decade from 1e-3 to 1e6, and a few small ones
ORDERS = tuple(sorted(set(np.round(np.logspace(-3, 6, 19), 12).tolist()) | {1.5, 2.0, 3.0, 5.0}))


def _values(param) -> list[float]:
    """The surveyed values of one parameter (numbers inside its domain)."""
    dom = param.domain
    try:
        lo, hi = dom.inf, dom.sup
    except (AttributeError, NotImplementedError):
        lo = hi = None
    if lo is None or not (lo.is_number and hi.is_number):
        return [float(v) for v in param.typical_values(3)]
    if param.symbol.is_integer:
        start = int(lo) if lo.is_finite else -10**12
        stop = int(hi) if hi.is_finite else 10**12
        cands = [start, start + 1, start + 2, 10, 100, 1000, 10**6, 10**9, 10**12, stop]
        return sorted({float(v) for v in cands if start <= v <= stop and dom.contains(sp.Integer(v)) is sp.true})
    if lo.is_finite and hi.is_finite:
        lo_f, hi_f = float(lo), float(hi)
        ts = (1e-8, 1e-6, 1e-4, 1e-2, 0.1, 0.3, 0.5, 0.7, 0.9, 1 - 1e-2, 1 - 1e-4, 1 - 1e-6, 1 - 1e-8)
        return [lo_f + (hi_f - lo_f) * t for t in ts]
    decades = [10.0**k for k in range(-4, 7)]
    if lo.is_finite:
        return [float(lo) + d for d in decades]
    if hi.is_finite:
        return [float(hi) - d for d in decades]
    return [-d for d in decades] + [0.0] + decades


def survey_grid(params) -> tuple[np.ndarray, list[np.ndarray]]:
    """(orders, parameter values): flat arrays of the survey's points (the orders of :data:`ORDERS`)."""
    values = [_values(p) for p in params]
    while len(ORDERS) * int(np.prod([len(v) for v in values] or [1])) > SURVEY_POINTS:
        k = max(range(len(values)), key=lambda i: len(values[i]))
        values[k] = values[k][::2] + ([values[k][-1]] if len(values[k]) % 2 == 0 else [])
    points = list(itertools.product(ORDERS, *values))
    cols = np.array(points, dtype=float).T
    return cols[0], list(cols[1:])


def bands(namespace: dict, call: str, err: str, boundary: list[str], params) -> str:
    """The ``_bands`` argument (code) of one branch: ``call`` is the code of its ``_branch`` call with
    the inputs ``*_sub`` and the keyword ``_unserved=_u``, run in ``namespace`` (the generated module);
    ``err`` the name of its error estimate ("None": none, every point in doubt); ``boundary`` the names
    of its boundary series."""
    if err == "None":
        return "((None, None),)"
    alpha, cols = survey_grid(params)
    unserved: list = []
    env = dict(namespace)
    env.update({"_sub": (alpha, *cols), "_u": unserved})
    with np.errstate(all="ignore"):
        try:
            out = np.asarray(eval(call, env), dtype=float)  # noqa: S307 - rdpsym's own generated code
        except (ArithmeticError, ValueError, FloatingPointError):
            return "((None, None),)"
        if not unserved:
            return "()"
        at = np.flatnonzero(unserved[0] & np.isfinite(out))
        if at.size == 0:
            return "()"
        sub = [alpha[at]] + [c[at] for c in cols]
        e = np.broadcast_to(namespace[err](*sub), at.shape)
        bad = ~(e <= MISSING_TRUST * np.abs(out[at]))
        if not bad.any():
            return "()"
        gapped = [name for name in boundary if hasattr(namespace[name], "gap")]
        if not gapped:
            return "((None, None),)"
        bad_sub = [x[bad] for x in sub]
        gaps = np.array([np.broadcast_to(namespace[name].gap(*bad_sub), (int(bad.sum()),)) for name in gapped])
    gaps = np.where(np.isnan(gaps), np.inf, gaps)
    nearest = np.argmin(gaps, axis=0)
    parts = []
    for j, name in enumerate(gapped):
        mine = gaps[j][nearest == j]
        if mine.size:
            top = float(np.max(mine))
            if not np.isfinite(top):
                return "((None, None),)"  # a point no series comes near: every point is in doubt
            parts.append(f"({name}, {top + MARGIN!r})")
    return "(" + ", ".join(parts) + ",)"
