r"""Tail and endpoint behaviour, and how an evaluation can end without a number.

At every infinite end the log-log slope ``s`` of the integrand is measured at ``|x| ~ 1e8, 1e16,
1e32`` (times a width ``w``); ``s >= -1`` means the integral diverges. At every finite breakpoint the
same is done with the distance ``1e-8 .. 1e-32`` (divergent when ``s <= -1``). :func:`check_end`
returns ``None`` (fine) or a :class:`TailCheck`: the integral diverges, or the behaviour is too close to
the border to trust the quadrature (a doubt).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath

__all__ = ["Failed", "Infinite", "TailCheck", "check_end", "far", "power_slope"]


class Infinite(Exception):
    """Raised inside an evaluation when the divergence is certainly infinite."""


class Failed(Exception):
    """Raised when a quantity cannot be computed (P negative, evaluation error, ...)."""


@dataclass(frozen=True)
class TailCheck:
    """What a tail or endpoint check found: ``diverges`` (the integral is infinite) or not (a doubt:
    the quadrature is not to be trusted there), with the reason."""

    diverges: bool
    reason: str

    def apply(self, doubts: list) -> None:
        """Raise :class:`Infinite` for a divergence; add the reason to ``doubts`` otherwise."""
        if self.diverges:
            raise Infinite(self.reason)
        doubts.append(self.reason)


def _inf(reason: str) -> TailCheck:
    return TailCheck(True, reason)


def _doubt(reason: str) -> TailCheck:
    return TailCheck(False, reason)


def far(f, t_of_prec, extra):
    """Evaluate f at a far point with `extra` more digits (|x| ~ 10^extra would cancel otherwise)."""
    with mpmath.workdps(mpmath.mp.dps + extra):
        v = f(t_of_prec())
    return +v


def power_slope(L, base, sgn, scale, outward: bool):
    """Log-log slopes of exp(L) at base + sgn*scale*d for d = 1e8, 1e16, 1e32 (outward) or
    1e-8, 1e-16, 1e-32 (toward base). Returns (s1, s2, values)."""
    ks = (8, 16, 32) if outward else (-8, -16, -32)
    vals = [far(L, lambda k=k: base + sgn * scale * mpmath.mpf(10) ** k, abs(k) + 10) for k in ks]
    if any(v == -mpmath.inf for v in vals) or any(mpmath.isnan(v) for v in vals):
        return None, None, vals
    if any(v == mpmath.inf for v in vals):
        return mpmath.inf if outward else -mpmath.inf, None, vals
    ln10 = mpmath.log(10)
    s1 = (vals[1] - vals[0]) / ((ks[1] - ks[0]) * ln10)
    s2 = (vals[2] - vals[1]) / ((ks[2] - ks[1]) * ln10)
    return s1, s2, vals


def check_end(L, base, sgn, scale, outward, Lmax):
    """Classify the integrand at an infinite end (outward) or a finite breakpoint (toward).

    Returns None (fine) or a :class:`TailCheck`: a divergence or a doubt.
    A power behaviour |d|^s diverges at infinity iff s >= -1 and at a point iff s <= -1.
    """
    s1, s2, vals = power_slope(L, base, sgn, scale, outward)
    if s1 is None:
        return None
    where = ("x -> %s" % ("+oo" if sgn > 0 else "-oo")) if outward else f"x -> {mpmath.nstr(base, 10)}{'+' if sgn > 0 else '-'}"
    if s2 is None:
        return _inf(f"integrand is infinite as {where}")
    # negligible: the integrand is already far below the precision scale
    if outward:
        if vals[-1] < Lmax - 10 ** 6 and s2 < s1:
            return None
        if s2 > -1 and s1 > -1:
            return _inf(f"integrand decays like |x|^{mpmath.nstr(s2, 6)} (exponent >= -1) as {where}: the integral diverges")
        if abs(s2 + 1) < mpmath.mpf(10) ** -6 and abs(s1 - s2) < mpmath.mpf(10) ** -6:
            return _inf(f"integrand decays like 1/|x| as {where}: the integral diverges")
        if s2 >= -1 - mpmath.mpf("0.05"):
            return _doubt(f"integrand decays like |x|^{mpmath.nstr(s2, 6)} as {where}, too slowly to trust the quadrature")
    else:
        if vals[-1] < Lmax - 10 ** 6:
            return None
        if s2 < -1 and s1 < -1:
            return _inf(f"integrand behaves like |x-c|^{mpmath.nstr(s2, 6)} (exponent <= -1) as {where}: the integral diverges")
        if abs(s2 + 1) < mpmath.mpf(10) ** -6 and abs(s1 - s2) < mpmath.mpf(10) ** -6:
            return _inf(f"integrand behaves like 1/|x-c| as {where}: the integral diverges")
        if s2 <= -1 + mpmath.mpf("0.05"):
            return _doubt(f"integrand behaves like |x-c|^{mpmath.nstr(s2, 6)} as {where}, too singular to trust the quadrature")
    return None

