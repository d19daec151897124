r"""The order a claim is about: the whole curve, or one order.

``order=None`` is the curve D_alpha as a function of alpha (Mironov 2017, arXiv:1702.07476 v3, Def. 3);
a number ``a`` is the one order D_a: ``1`` the KL divergence (Prop. 3's limit), ``oo`` the max divergence
D_oo (its limit at alpha -> oo, Def. 2 and Sect. III), any other positive rational (``2``, ``5/2``,
``1/2``) the curve there. A claim about one order is a formula in the parameters only.

One reading of the option for :func:`~rdpsym.claims.check.check_claim`, the CLI and the certificates:
the order is read by :func:`~rdpsym.specify.text.as_number` (ints, Fractions, floats at their exact
binary value, sympy numbers, numeric strings), never evaluated; it must be a positive rational or oo,
because every evaluator a check uses (mpmath, Arb balls, exact substitution) takes it exactly.
"""

from __future__ import annotations

import re

import sympy as sp

from ..specify.text import as_number
from ..symbols import alpha as ALPHA

__all__ = ["order_value", "point_alpha", "conditions_at", "curve_at", "order_key", "order_from_key", "order_name",
           "ORDER_KEY_CURVE"]

#: the certificate key of a claim about the whole curve
ORDER_KEY_CURVE = "alpha"
#: at most this many digits in an order's numerator and denominator (order_value refuses more)
MAX_ORDER_DIGITS = 1000
_KEY = re.compile(r"[1-9][0-9]{0,%d}(/[1-9][0-9]{0,%d})?" % (MAX_ORDER_DIGITS - 1, MAX_ORDER_DIGITS - 1))


def order_value(order, name: str = "order"):
    """``order`` checked: None (the curve), or the order as an exact sympy number (``Integer(1)``, ``oo``,
    a positive ``Rational``). A ``ValueError`` names ``name`` and the rule otherwise."""
    if order is None:
        return None
    rule = f"{name} must be oo or a positive rational order such as 1, 2 or 5/2 (None: the whole curve)"
    if isinstance(order, bool):
        raise ValueError(f"{rule}; got {order!r}")
    try:
        a = as_number(order, name)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{rule}; got {order!r} ({exc})") from None
    if a == sp.oo:
        return sp.oo
    if not a.is_Rational:
        raise ValueError(f"{rule}; got {order!r}, which is not a rational number (every evaluator takes the order "
                         "exactly: give a rational close to it)")
    if a <= 0:
        raise ValueError(f"{rule}; got {order!r}: Rényi divergences are of orders alpha > 0")
    if max(len(str(a.p)), len(str(a.q))) > MAX_ORDER_DIGITS:
        raise ValueError(f"{rule}; got an order of more than {MAX_ORDER_DIGITS} digits (oo is the limit beyond)")
    return a


def point_alpha(order, alpha):
    """The order of a point: ``alpha`` for a claim about the curve, else the claim's one order."""
    return alpha if order is None else order


def conditions_at(conditions, order):
    """The finiteness conditions of a claim about ``order``, from the curve's ``conditions`` (the divergence
    is +oo where they fail): the curve's for the curve, theirs at alpha = a for one order a, and none for
    the KL and D_oo, whose formulas are derived with their own values (+oo included)."""
    if order is None or not isinstance(conditions, sp.Basic):
        return conditions
    if order == 1 or order == sp.oo:
        return sp.true
    return conditions.subs(ALPHA, order)


def curve_at(curve: sp.Expr, order, removable=(), conditions=sp.true) -> sp.Expr | None:
    """A closed-form curve's value at one order a != 1, oo: +oo where its finiteness conditions fail at a,
    the limit at a removable order (``removable``: ``(alpha, value)`` pairs that apply), else the curve at
    alpha = a; None where that is singular (0/0 at an order not known to be removable)."""
    a = sp.S(order)
    if conditions_at(conditions, a) is sp.false:
        return sp.oo
    limits = [value for at, value in removable if not sp.S(at).free_symbols and sp.S(at) == a]
    value = (limits[0] if limits else curve).subs(ALPHA, a)
    return None if value.has(sp.nan, sp.zoo) else value


def order_key(order) -> str:
    """The order as certificates write it: ``"alpha"`` (the curve), ``"1"``, ``"oo"``, or ``"p/q"``."""
    if order is None:
        return ORDER_KEY_CURVE
    return "oo" if order == sp.oo else str(sp.Rational(order))


def order_from_key(text, field: str = "order"):
    """The order :func:`order_key` wrote, read strictly (digits and one slash; never evaluated); a
    ``ValueError`` naming ``field`` otherwise."""
    if text == ORDER_KEY_CURVE:
        return None
    if text == "oo":
        return sp.oo
    if not isinstance(text, str) or not _KEY.fullmatch(text):
        raise ValueError(f"{field}: expected 'alpha', 'oo' or a positive rational 'p' or 'p/q'; got {text!r:.60}")
    return sp.Rational(text)


def order_name(order) -> str:
    """What the claim is about, for evidence and reports: ``D_alpha``, ``D_1 (KL)``, ``D_oo`` or ``D_5/2``."""
    if order is None:
        return "D_alpha"
    if order == 1:
        return "D_1 (KL)"
    return "D_oo" if order == sp.oo else f"D_{sp.sstr(order)}"
