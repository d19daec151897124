r"""Tail and endpoint behaviour, and how an evaluation can end without a number.

At every infinite end the log-log slope ``s`` of the integrand is measured at three distances
``10^e1, 10^2e1, 10^4e1`` beyond every feature of the problem (``e1 >= 8``, more for a wide peak, a far
peak or extreme numbers: :func:`far_exponents`, :mod:`.scales`), from values settled at two
precisions; ``s >= -1`` means the integral diverges. At every finite breakpoint the same is done with
the distances ``w 10^-e1 .. w 10^-4e1`` (``8 <= e1 <= 72``; divergent when ``s <= -1``). :func:`check_end`
returns ``None`` (fine) or a :class:`TailCheck`: the integral diverges, or the behaviour is too close to
the border to trust the quadrature (a doubt).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath

from .scales import Unsettled, settled

__all__ = ["Failed", "Infinite", "TailCheck", "check_end", "far", "far_exponents", "power_slope", "ray_limit"]


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
    """f at a far point with ``extra`` more digits (|x| ~ 10^extra would cancel otherwise), raised until
    two precisions agree (:func:`~.scales.settled`): a far value is never a rounding artefact of a
    cancelling ``alpha log P + (1 - alpha) log Q``. A log-integrand that knows its cancellation
    (:class:`~.densities.LogIntegrand`) raises the precision by it first. Raises
    :class:`~.scales.Unsettled` when it cannot be made to agree."""
    own = getattr(f, "settled", None)
    if own is not None:
        return own(t_of_prec, extra)
    return settled(f, t_of_prec, extra)


def far_exponents(scale, base, magnitude: int, outward: bool) -> tuple[int, int, int]:
    """The decimal exponents ``e1 < e2 < e3`` of the distances of a tail test from ``base``: outward
    ``10^e`` with ``e1 >= 8 + log10(scale)``, ``8 + magnitude + log10(1 + |base|)`` (beyond every feature
    of the problem, :mod:`.scales`) and ``8``; toward a point ``scale * 10^-e`` with ``e1 = 8 +
    min(magnitude, 64)``. Then ``e2 = 2 e1``, ``e3 = 4 e1``."""
    if outward:
        e1 = max(8, 8 + magnitude + int(mpmath.ceil(mpmath.log10(1 + abs(base)))))
        if scale > 0 and mpmath.isfinite(scale):
            e1 = max(e1, int(mpmath.ceil(mpmath.log10(scale))) + 8)
    else:
        # next to a point the scale is already the peak's width or the distance to the next breakpoint;
        # the problem's numbers push it further (a feature 1e-50 wide), up to 10^-72 of it
        e1 = 8 + min(magnitude, 64)
    return e1, 2 * e1, 4 * e1


def ray_limit(base, magnitude) -> int | None:
    """The decimal exponent beyond which a ray from ``base`` is not followed: ``8 e1`` (``e1`` of
    :func:`far_exponents`), past every feature of a problem of that ``magnitude``
    (:func:`~.scales.magnitude`), and the farthest far value D_inf reads (continuous and discrete). None
    (no magnitude known): followed until its values no longer settle."""
    if magnitude is None:
        return None
    return 8 * far_exponents(1, base, magnitude, True)[0]


def power_slope(L, base, sgn, scale, outward: bool, magnitude: int = 0):
    """Log-log slopes of exp(L) at ``base + sgn * d`` for the distances ``d`` of :func:`far_exponents`
    (outward ``10^e``, toward ``base`` ``scale * 10^-e``). Returns (s1, s2, values); (None, None,
    values) when the integrand vanishes there (a value ``-oo``) or is not a number (NaN)."""
    es = far_exponents(scale, base, magnitude, outward)

    def point(e):
        return (lambda: base + sgn * mpmath.mpf(10) ** e) if outward else \
            (lambda: base + sgn * scale * mpmath.mpf(10) ** (-e))

    # outward the far point need not hold ``base`` (a tail slope does not see it); toward it must hold
    # the offset from ``base``
    extra = [10 if outward else e + 10 + max(0, int(mpmath.log10((1 + abs(base)) / scale))) for e in es]
    vals = [far(L, point(e), x) for e, x in zip(es, extra)]
    if any(v == -mpmath.inf for v in vals) or any(mpmath.isnan(v) for v in vals):
        return None, None, vals
    if any(v == mpmath.inf for v in vals):
        return mpmath.inf if outward else -mpmath.inf, None, vals
    ln10 = mpmath.log(10)
    sign = 1 if outward else -1
    s1 = (vals[1] - vals[0]) / (sign * (es[1] - es[0]) * ln10)
    s2 = (vals[2] - vals[1]) / (sign * (es[2] - es[1]) * ln10)
    return s1, s2, vals


def check_end(L, base, sgn, scale, outward, Lmax, magnitude: int = 0):
    """Classify the integrand at an infinite end (outward) or a finite breakpoint (toward).

    Returns None (fine) or a :class:`TailCheck`: a divergence or a doubt. The distances are beyond every
    feature of the problem (:func:`far_exponents`, ``magnitude`` from :func:`~.scales.magnitude`) and
    the values settled at two precisions, so a slope is a tail's, not a peak's still ahead nor a
    rounding artefact's. A power behaviour |d|^s diverges at infinity iff s >= -1 and at a point iff
    s <= -1; a divergence is claimed only when both slopes say so and the second does not turn back
    (a slope that falls may still turn: that is a doubt, never an infinity).
    """
    where = ("x -> %s" % ("+oo" if sgn > 0 else "-oo")) if outward else f"x -> {mpmath.nstr(base, 10)}{'+' if sgn > 0 else '-'}"
    try:
        s1, s2, vals = power_slope(L, base, sgn, scale, outward, magnitude)
    except Unsettled:
        return _doubt(f"the integrand as {where} cannot be evaluated to the accuracy a tail test needs")
    if s1 is None:
        if any(mpmath.isnan(v) for v in vals):
            return _doubt(f"the integrand as {where} is not a number")
        return None
    if s2 is None:
        return _inf(f"integrand is infinite as {where}")
    eps = mpmath.mpf(10) ** -6
    if outward:
        if vals[-1] < Lmax - 10 ** 6 and s2 < s1:
            return None
        if s2 > -1 and s1 > -1:
            if s2 >= s1 - mpmath.mpf("0.05") * max(1, abs(s1)) or s2 > -mpmath.mpf("0.5"):
                return _inf(f"integrand decays like |x|^{mpmath.nstr(s2, 6)} (exponent >= -1) as {where}: "
                            "the integral diverges")
            return _doubt(f"the integrand's log-log slope falls from {mpmath.nstr(s1, 6)} to {mpmath.nstr(s2, 6)} "
                          f"as {where}: it may still turn")
        if abs(s2 + 1) < eps and abs(s1 - s2) < eps:
            return _inf(f"integrand decays like 1/|x| as {where}: the integral diverges")
        if s2 >= -1 - mpmath.mpf("0.05"):
            return _doubt(f"integrand decays like |x|^{mpmath.nstr(s2, 6)} as {where}, too slowly to trust the quadrature")
    else:
        if vals[-1] < Lmax - 10 ** 6:
            return None
        if s2 < -1 and s1 < -1:
            if s2 <= s1 + mpmath.mpf("0.05") * max(1, abs(s1)) or s2 < -mpmath.mpf("1.5"):
                return _inf(f"integrand behaves like |x-c|^{mpmath.nstr(s2, 6)} (exponent <= -1) as {where}: "
                            "the integral diverges")
            return _doubt(f"the integrand's log-log slope rises from {mpmath.nstr(s1, 6)} to {mpmath.nstr(s2, 6)} "
                          f"as {where}")
        if abs(s2 + 1) < eps and abs(s1 - s2) < eps:
            return _inf(f"integrand behaves like 1/|x-c| as {where}: the integral diverges")
        if s2 <= -1 + mpmath.mpf("0.05"):
            return _doubt(f"integrand behaves like |x-c|^{mpmath.nstr(s2, 6)} as {where}, too singular to trust the quadrature")
    return None
