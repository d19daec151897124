r"""What the numeric path computes: one object per kind of order, owning its integrands and its finish.

* :class:`FiniteOrder` ``alpha``: :math:`D_\alpha = \frac{1}{\alpha-1}\log\int P^\alpha Q^{1-\alpha}`
  in log space, ``log I = L_max + log ∫ exp(L - L_max)`` with ``L = alpha log P + (1-alpha) log Q``.
* :class:`NearOne` ``alpha`` (``|alpha - 1| < 1/8``): the same divergence through
  ``I = ∫P + ∫P expm1((alpha-1)(log P - log Q))``, so ``log I ~ (alpha-1) KL`` keeps its relative
  accuracy (no cancellation in ``I - 1``). When ``(alpha-1) D`` is large the two terms cancel instead
  (a Gaussian with D = 8e8 at alpha = 1 - 1e-5 has I = e^-8000); the driver then retries with
  :meth:`NearOne.retry` (the plain log-space form), an explicit policy rather than a global switch.
* :class:`KL`: :math:`D_1 = E_P[\log P/Q]` (van Erven and Harremoës 2014, Thm. 5).
* :class:`Sup`: :math:`D_\infty = \operatorname{ess\,sup}_{P>0}\log P/Q` (ibid., Thm. 6).

As mpmath's quadrature rules own their nodes and error estimates, a quantity owns what is specific to
it, and the integration code (:mod:`.continuous`, :mod:`.discrete`, :mod:`.multivariate`) owns only the
supports: which logs locate the integrand (:attr:`~Quantity.peak_form`, :attr:`~Quantity.scan_form`,
:attr:`~Quantity.check_form`), the integrands themselves (:meth:`~Quantity.integrands`, shifted by
``exp(-S)``), the divergence from their integrals (:meth:`~Quantity.finish`), where ``P > 0 = Q``
makes it infinite (:meth:`~Quantity.infinite_at`) and the error normalisers cause
(:meth:`~Quantity.normaliser_error`). :class:`Form` names the functions of ``log P`` and ``log Q`` a
backend may compute natively (:mod:`.backends`).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

import mpmath
import sympy as sp

from .._numbers import ArgumentError
from ..specify.text.numbers import exact_number
from .tails import Failed, Infinite

__all__ = ["KL", "Form", "FiniteOrder", "NearOne", "Quantity", "Sup", "log_integrand", "quantity_for"]

#: |alpha - 1| below which the near-one form is used first
NEAR_ONE = sp.Rational(1, 8)


class Form(enum.Enum):
    """Functions of (log P, log Q) at a point.

    Logs of integrands: ``FINITE`` ``a lp + (1-a) lq``; ``WEIGHT`` ``lp`` (the weight P); ``RATIO``
    ``lp - lq`` (for D_inf); ``KLABS`` ``log |P (lp - lq)|`` (tail checks of the KL integrand).
    Integrands (shifted by ``S``): ``FINITE`` ``exp(a lp + (1-a) lq - S)``, ``KL`` ``exp(lp - S)(lp -
    lq)``, ``NEAR1`` ``exp(lp - S) expm1((a-1)(lp - lq))``, ``WEIGHT`` ``exp(lp - S)``.
    """

    FINITE = "finite"
    WEIGHT = "weight"
    RATIO = "ratio"
    KLABS = "klabs"
    KL = "kl"
    NEAR1 = "near1"

    @property
    def positive(self) -> bool:
        """The integrand of this form is >= 0 everywhere (its integrals' relative errors add up)."""
        return self in (Form.FINITE, Form.WEIGHT)


def log_integrand(lp, lq, form: Form, a):
    """The log of ``form`` from ``lp = log P`` and ``lq = log Q`` at one point: the one statement of what
    P = 0 and Q = 0 mean, shared by the one-dimensional and the multivariate paths.

    ``FINITE``: a lp + (1-a) lq (P = 0 -> -inf; P > 0, Q = 0 -> +inf if a > 1, -inf if a < 1).
    ``WEIGHT``: lp. ``RATIO``: lp - lq where P > 0 (+inf where Q = 0). ``KLABS``: log |P (lp - lq)|.
    """
    if lp == -mpmath.inf:
        return -mpmath.inf
    if form is Form.FINITE:
        if lq == -mpmath.inf:
            return mpmath.inf if a > 1 else -mpmath.inf
        return a * lp + (1 - a) * lq
    if form is Form.RATIO:
        return lp - lq if lq > -mpmath.inf else mpmath.inf
    if form is Form.KLABS:
        if lq == -mpmath.inf:
            return mpmath.inf
        r = abs(lp - lq)
        return lp + mpmath.log(r) if r > 0 else -mpmath.inf
    return lp


def _weight(logpq: Callable, S) -> Callable:
    """``exp(lp - S)``, the weight P shifted (0 where P = 0)."""
    def g(t):
        lp, _ = logpq(t)
        return mpmath.exp(lp - S) if lp > -mpmath.inf else mpmath.mpf(0)
    return g


@dataclass(frozen=True)
class Quantity:
    """A divergence the numeric path computes (see the module docstring for what each part means)."""

    #: the log whose largest value is the shift ``S`` of the integrands, and whose width sets the pieces
    peak_form: ClassVar[Form]
    #: the log scanned first: +oo on it reveals P > 0 = Q where that makes the quantity infinite
    scan_form: ClassVar[Form]
    #: the log whose tails and singular points decide whether the integral diverges
    check_form: ClassVar[Form]
    #: the integrands, in the order :meth:`integrands` gives them and :meth:`finish` reads their integrals
    forms: ClassVar[tuple[Form, ...]] = ()
    #: a supremum, found by maximising ``peak_form``, not an integral
    supremum: ClassVar[bool] = False

    def order(self):
        """The order as an mpmath number at the current precision (None for KL and D_inf)."""
        return None

    @property
    def peak_is_integrand(self) -> bool:
        """The peak log is the log of the integrand itself: +oo there already marks the points where the
        quantity is infinite, so they need no separate check (:meth:`infinite_at`)."""
        return self.peak_form is Form.FINITE

    def infinite_at(self, lp, lq, a) -> bool:
        """A point with ``log P = lp``, ``log Q = lq`` makes the quantity +oo (P > 0 where Q = 0)."""
        return lp > -mpmath.inf and lq == -mpmath.inf

    def retry(self) -> "Quantity | None":
        """The quantity to compute instead when this one did not converge (None: no other form)."""
        return None

    def integrands(self, a, S, logpq: Callable, L: Callable, where: Callable = str) -> list[Callable]:
        """The pointwise integrands of :attr:`forms`, shifted by ``exp(-S)``: functions of a point.

        ``logpq(t)`` gives ``(log P, log Q)`` and ``L(t)`` the :attr:`peak_form` log at ``t`` (a backend
        may compute it natively); ``where(t)`` writes the point for messages. They raise
        :class:`~.tails.Infinite` where P > 0 = Q makes the quantity infinite."""
        raise NotImplementedError

    def finish(self, S, integrals: Sequence[tuple], a, how: str, sign: str = "∫") -> tuple:
        """``(D, error, method)`` from the integrals ``(value, absolute error)`` of :meth:`integrands`
        (shifted by ``exp(-S)``), ``how`` naming the rule and ``sign`` the integral (or sum) sign.
        Raises :class:`~.tails.Failed` when they give no value."""
        raise NotImplementedError

    def normaliser_error(self, eP, eQ, a, D):
        """A bound on the change of the quantity (value ``D``) when log P and log Q move by at most
        ``eP`` and ``eQ`` (normalisers evaluated numerically, :mod:`.normalisers`)."""
        raise NotImplementedError


@dataclass(frozen=True)
class FiniteOrder(Quantity):
    """D_alpha at a finite order alpha != 1 (``alpha`` exact), in plain log space."""

    alpha: sp.Expr
    peak_form: ClassVar[Form] = Form.FINITE
    scan_form: ClassVar[Form] = Form.FINITE
    check_form: ClassVar[Form] = Form.FINITE
    forms: ClassVar[tuple[Form, ...]] = (Form.FINITE,)

    def order(self):
        a = self.alpha
        if a.is_Integer:
            return mpmath.mpf(a)
        if a.is_Rational:
            return mpmath.mpf(int(a.p)) / int(a.q)
        return mpmath.mpf(sp.Float(a, mpmath.mp.dps + 5))

    def infinite_at(self, lp, lq, a) -> bool:
        return a > 1 and lp > -mpmath.inf and lq == -mpmath.inf

    def integrands(self, a, S, logpq, L, where=str):
        def g(t):
            v = L(t)
            if v == mpmath.inf:
                raise Infinite(f"P > 0 where Q = 0 (at x = {where(t)}), alpha > 1")
            return mpmath.exp(v - S) if v > -mpmath.inf else mpmath.mpf(0)
        return [g]

    def finish(self, S, integrals, a, how, sign="∫"):
        (v, e), = integrals
        if not v > 0:
            raise Failed(f"the shifted integral is {mpmath.nstr(v, 8)} <= 0")
        logI = S + mpmath.log(v)
        # S + log v cancels when |log I| << |S|: its rounding counts
        rounding = 8 * mpmath.eps * (abs(S) + abs(mpmath.log(v)) + 1)
        return logI / (a - 1), (e / v + rounding) / abs(a - 1), f"{how}, log I = L_max + log {sign} exp(L - L_max)"

    def normaliser_error(self, eP, eQ, a, D):
        return (abs(a) * eP + abs(1 - a) * eQ) / abs(a - 1)


@dataclass(frozen=True)
class NearOne(FiniteOrder):
    """D_alpha for ``|alpha - 1| < 1/8`` by the near-one form (see the module docstring)."""

    peak_form: ClassVar[Form] = Form.WEIGHT
    forms: ClassVar[tuple[Form, ...]] = (Form.NEAR1, Form.WEIGHT)

    def retry(self) -> FiniteOrder:
        """The same order in plain log space (the driver's retry)."""
        return FiniteOrder(self.alpha)

    def integrands(self, a, S, logpq, L, where=str):
        am1 = a - 1

        def g(t):
            lp, lq = logpq(t)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            if lq == -mpmath.inf:
                if a > 1:
                    raise Infinite(f"P > 0 where Q = 0 (at x = {where(t)})")
                return -mpmath.exp(lp - S)
            return mpmath.exp(lp - S) * mpmath.expm1(am1 * (lp - lq))
        return [g, _weight(logpq, S)]

    def finish(self, S, integrals, a, how, sign="∫"):
        (J, eJ), (M, eM) = integrals
        if not M > 0:
            raise Failed("the mass of P is not positive")
        # log I = log(M + J) = log M + log1p(J / M)
        logI = S + mpmath.log(M) + mpmath.log1p(J / M)
        if not abs(logI) < 1:
            # |(alpha-1) D| >= 1: I is far from 1 and M + J cancels instead; the driver retries
            # in plain log space, which is accurate here
            raise Failed(f"near-1 form: log I = {mpmath.nstr(logI, 5)}, |(alpha-1) D| >= 1")
        rounding = 8 * mpmath.eps * (abs(S) + abs(mpmath.log(M)) + abs(logI) + 1)
        return (logI / (a - 1), (eJ / M + eM / M + rounding) / abs(a - 1),
                f"{how}, I = {sign}P + {sign}P expm1((alpha-1) log P/Q)")


@dataclass(frozen=True)
class KL(Quantity):
    """D_1 = KL(P || Q)."""

    peak_form: ClassVar[Form] = Form.WEIGHT
    scan_form: ClassVar[Form] = Form.WEIGHT
    check_form: ClassVar[Form] = Form.KLABS
    forms: ClassVar[tuple[Form, ...]] = (Form.KL,)

    def integrands(self, a, S, logpq, L, where=str):
        def g(t):
            lp, lq = logpq(t)
            if lp == -mpmath.inf:
                return mpmath.mpf(0)
            if lq == -mpmath.inf:
                raise Infinite(f"P > 0 where Q = 0 (at x = {where(t)})")
            return mpmath.exp(lp - S) * (lp - lq)
        return [g]

    def finish(self, S, integrals, a, how, sign="∫"):
        (v, e), = integrals
        D = v * mpmath.exp(S)
        # + the rounding of this final arithmetic at the working precision (a single evaluation
        # has no second precision to reveal it)
        return D, e * mpmath.exp(S) + 8 * mpmath.eps * abs(D), f"{how}, KL = E_P[log P/Q]"

    def normaliser_error(self, eP, eQ, a, D):
        return eP * (abs(D) + 3) + eQ


@dataclass(frozen=True)
class Sup(Quantity):
    """D_inf = ess sup log P/Q: found by maximising log P/Q (no integrands)."""

    peak_form: ClassVar[Form] = Form.RATIO
    scan_form: ClassVar[Form] = Form.RATIO
    check_form: ClassVar[Form] = Form.RATIO
    supremum: ClassVar[bool] = True

    def normaliser_error(self, eP, eQ, a, D):
        return eP + eQ


def quantity_for(alpha: Any) -> Quantity:
    """The quantity for a user's order: ``oo`` -> :class:`Sup`, ``1`` -> :class:`KL`, ``|alpha - 1| <
    1/8`` -> :class:`NearOne`, else :class:`FiniteOrder`. Raises ``ValueError`` naming ``alpha``."""
    if alpha is sp.oo or (isinstance(alpha, mpmath.mpf) and alpha == mpmath.inf) or (
        isinstance(alpha, float) and alpha == math.inf
    ):
        return Sup()
    try:
        a = exact_number(alpha, "alpha", finite=True, real=True)
    except ArgumentError:
        raise ArgumentError("alpha", "a number > 0 or infinity",
                            message=f"alpha must be a number > 0 or infinity, found {alpha!r}.") from None
    if a.is_comparable is not True or not a > 0:
        raise ArgumentError("alpha", "> 0", message=f"alpha must be > 0 (Rényi orders are positive), found {alpha!r}.")
    if a == 1:
        return KL()
    if abs(a - 1) < NEAR_ONE:
        return NearOne(a)
    return FiniteOrder(a)
