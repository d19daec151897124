r"""How far "far out" is, and how many digits a point needs: the scales of one numeric problem.

A tail test reads the behaviour of the integrand ``exp(L)`` at points far from everything that shapes
it. What *far* means depends on the problem: the Gaussian pair at order ``alpha = 1e300`` has its peak
at ``x = -(alpha - 1) = -1e300``, so ``L`` still grows at ``|x| = 1e32`` and a slope read there is not a
tail; a Cauchy pair of scale ``1e-50`` has features ``1e-50`` wide next to a location 1 apart. The
position of every feature of ``L`` (peak, turning point, kink) is an algebraic combination of the
numbers the pair and the order are written with, so its decimal exponent is at most of the order of
the sum of theirs:

* :func:`magnitude` is that sum, :math:`\sum_n |\log_{10}|n||` over the distinct non-zero numbers ``n``
  of ``P``, ``Q`` (parameters substituted) and the order; tail tests look beyond ``10^(8 + magnitude)``
  (:mod:`.tails`).

Values far out are large and cancel (``alpha log P + (1 - alpha) log Q`` with ``alpha = 1e300``):

* :func:`settled` evaluates a function of a point at two precisions and raises the precision until the
  two agree (relative ``10^-8``), so a far value is never a rounding artefact; :class:`Unsettled` when
  :data:`MAX_DIGITS` do not suffice.

Near the peak the integrand ``exp(L - L_max)`` needs ``L`` to an absolute accuracy (its shape), however
large ``L`` is: :func:`digits_needed` counts the digits that takes, the log of the cancellation
``|alpha||log P| + |1 - alpha||log Q|`` and of the peak's distance from 0 in widths (a point
``x = -1e300`` resolved to widths of 1 needs 300 digits more), and :func:`require_digits` asks the
driver for them (:class:`MorePrecision`): large orders and extreme scales are computed in log space at
the precision they need, or refused past :data:`MAX_DIGITS`.
"""

from __future__ import annotations

import math
from typing import Callable

import mpmath
import sympy as sp

__all__ = ["MAX_DIGITS", "MorePrecision", "Unsettled", "digits_needed", "magnitude", "require_digits", "settled"]

#: the most decimal digits a far value (:func:`settled`) or an evaluation (the driver) may use
MAX_DIGITS = 6000


class Unsettled(ArithmeticError):
    """A value could not be computed to the accuracy asked for within :data:`MAX_DIGITS` digits."""


class MorePrecision(Exception):
    """The working precision is too low for this problem: ``digits`` decimal digits are needed."""

    def __init__(self, digits: int, why: str):
        super().__init__(f"{digits} digits needed: {why}")
        self.digits, self.why = digits, why


def digits_needed(lp, lq, a, point, width, Lmax, dps: int) -> int:
    """Decimal digits an evaluation needs near its peak so that ``L`` (the log of the integrand, largest
    value ``Lmax``) is known there to the absolute accuracy the result asks for (at least ``10^-3``: the
    integrand's shape): the digits lost to the cancellation in ``a lp + (1 - a) lq`` (``a`` None: ``lp``
    and ``lq`` alone) and to the position (``|point| / width``: a node at ``x = 1e300`` must resolve
    widths of 1), plus the digits of that accuracy. For a finite order that is the driver's tolerance
    (``10^(-0.6 dps)`` relative to the divergence, absolute ``10^-dps`` near 0) carried to ``log I ~
    Lmax`` (times ``|a - 1|``), with two guard digits."""
    big = abs(lp) + abs(lq) if a is None else abs(a) * abs(lp) + abs(1 - a) * abs(lq)
    scale = max(mpmath.mpf(1), big if mpmath.isfinite(big) else 1,
                abs(point) / width if width > 0 and mpmath.isfinite(point) else 1)
    if a is None:
        accuracy = mpmath.mpf(0.6 * dps + 2)
    else:
        size = max(abs(Lmax) if mpmath.isfinite(Lmax) else 1, abs(a - 1) * mpmath.mpf(10) ** (-0.4 * dps))
        accuracy = 0.6 * dps + 2 - mpmath.log10(size)
    return int(mpmath.ceil(mpmath.log10(scale) + max(3, accuracy)))


def require_digits(needed: int, why: str) -> None:
    """Raise :class:`MorePrecision` when ``needed`` digits exceed the working precision's ``mp.dps``."""
    if needed > mpmath.mp.dps:
        raise MorePrecision(needed, why)


def _log10_abs(n: sp.Expr) -> float:
    try:
        v = abs(sp.N(n, 15))
        if v == 0 or not v.is_finite:
            return 0.0
        return abs(float(mpmath.log10(mpmath.mpf(sp.Float(v, 15)))))
    except (TypeError, ValueError, ArithmeticError):
        return 0.0


def magnitude(*exprs, order=None) -> int:
    r""":math:`\lceil \sum_n |\log_{10}|n|| \rceil` over the distinct non-zero finite numbers ``n`` in
    ``exprs`` (sympy expressions, parameters substituted) and the ``order`` (a number, or None): a
    bound on the decimal exponent of the positions of their features (module docstring)."""
    numbers = set()
    for e in exprs:
        if isinstance(e, sp.Basic):
            numbers |= {n for n in e.atoms(sp.Number) if n.is_finite and n != 0}
    total = sum(_log10_abs(n) for n in numbers)
    if order is not None:
        try:
            o = mpmath.mpf(order) if not isinstance(order, sp.Basic) else mpmath.mpf(sp.Float(order, 15))
            if mpmath.isfinite(o) and o != 0:
                # alpha enters L = log P + (alpha - 1) log(P/Q) through alpha - 1 (and alpha)
                total += max(abs(float(mpmath.log10(abs(o)))),
                             abs(float(mpmath.log10(abs(o - 1)))) if o != 1 else 0.0)
        except (TypeError, ValueError):
            pass
    return int(math.ceil(total))


def settled(f: Callable, point_of_prec: Callable, extra: int, rel=None):
    """``f(point_of_prec())`` at ``mp.dps + extra`` digits and more, raised until two evaluations agree
    to a relative ``rel`` (default ``10^-8``, absolute below 1): the value at the higher precision.
    ``point_of_prec`` builds the point at the current precision (a far point ``c + 10^40`` needs the
    digits to hold ``c``). Infinite or NaN values agree with themselves. Raises :class:`Unsettled`
    past :data:`MAX_DIGITS` digits."""
    rel = mpmath.mpf(10) ** -8 if rel is None else rel
    digits = mpmath.mp.dps + max(int(extra), 0)
    with mpmath.workdps(digits):
        prev = f(point_of_prec())
    while True:
        step = max(20, digits // 2)
        if digits + step > MAX_DIGITS:
            raise Unsettled(f"a value far out does not settle within {MAX_DIGITS} digits")
        digits += step
        with mpmath.workdps(digits):
            v = f(point_of_prec())
            if not mpmath.isfinite(v) or not mpmath.isfinite(prev):
                if v == prev or (mpmath.isnan(v) and mpmath.isnan(prev)):
                    return +v
            elif abs(v - prev) <= rel * max(1, abs(v)):
                break
        prev = v
    return +v
