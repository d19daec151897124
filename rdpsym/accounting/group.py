r"""Group privacy: the RDP of inputs that differ in k records.

Two answers, and the result's status says which one it is:

* **Exact (``closed_form``)** for additive mechanisms: every adjacent pair is a location family
  ``P = f(x)``, ``Q = f(x - sensitivity)`` (checked symbolically). Inputs k steps apart shift the query by
  at most ``k * sensitivity``; with the same convention as the mechanism itself (its pair takes the full
  shift) the group curve is the mechanism's curve with ``sensitivity`` replaced by ``k * sensitivity``,
  derived by the engine from the shifted densities. A family of pairs ``P = f(x)``, ``Q_t = f(x - t)``
  for t in T (:class:`~rdpsym.specify.adjacency.AdjacentFamily`) is a location family too: the shifts of
  k adjacent steps add up to the Minkowski sum ``T + ... + T = k T`` of the interval T, so the group's
  family is the same over ``k T``. For the Gaussian this gives ``k^2 alpha sensitivity^2 / (2 sigma^2)``
  (Mironov 2017, Prop. 7 with mu = k * sensitivity).
* **Bound (``bound``)** otherwise (Mironov 2017, arXiv:1702.07476 v3, Prop. 2): if f is
  (alpha, eps)-RDP and g is 2^c-stable with alpha >= 2^(c+1), then f∘g is (alpha/2^c, 3^c eps)-RDP.
  With k <= 2^c, c = ceil(log2 k), and beta = alpha/2^c, the group curve is at most
  ``3^c eps(2^c beta)`` for every beta >= 2; that is the returned ``expr`` (in ``alpha`` standing for
  beta), with ``alpha >= 2`` in ``conditions`` (outside them :meth:`DivergenceResult.evaluate` gives
  +inf: no claim). At alpha = 1 the bound ``3^c eps(2^(c+1))`` follows from monotonicity in the order
  (Prop. 9); at alpha = oo the pure-DP group bound ``k eps(oo)`` holds (the log-ratio of a chain of k
  adjacent pairs is at most the sum of k log-ratios).
"""

from __future__ import annotations

import math
from dataclasses import replace

import sympy as sp

from .._numbers import SYMBOLIC_ERRORS
from ..derive.mechanism_rdp import rdp
from ..derive.result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step
from .._version import library_versions
from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import AdjacentPair, Mechanism

__all__ = ["group_privacy", "group_mechanism", "is_location_family"]

PROP2 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 2"


def _validate_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise ValueError(f"k must be a positive integer (the group size); got {k!r}")
    if k < 1:
        raise ValueError(f"k must be a positive integer (the group size); got {k}")
    return k


def _shifted(P: sp.Expr, Q: sp.Expr, x: sp.Symbol, shift: sp.Expr) -> bool:
    """True if P depends on x and not on ``shift``, and Q(x) = P(x - shift) (shown by simplify)."""
    if not P.has(x) or P.has(shift):
        return False
    try:
        return sp.simplify(P.subs(x, x - shift) - Q) == 0
    except SYMBOLIC_ERRORS:  # undecidable means "not shown to be additive"
        return False


def is_location_family(mechanism: Mechanism) -> bool:
    """True if every pair has Q(x) = P(x - sensitivity) (a ``sensitivity`` parameter), and every family
    of pairs has Q_t(x) = P(x - t) with P free of its shift t."""
    if mechanism.discrete:
        return False
    sens = mechanism.params.get("sensitivity")
    x = mechanism.variable
    for pair in mechanism.pairs:
        if isinstance(pair, AdjacentFamily):
            if not _shifted(pair.P, pair.Q, x, pair.shift):
                return False
        elif sens is None or not _shifted(pair.P, pair.Q, x, sens):
            return False
    return True


def _group_pair(p, k: int, sens):
    if isinstance(p, AdjacentFamily):
        # the same densities and label: the derivation in |t| is shared with (a cache hit of) the k = 1 curve
        return p.scaled(k)
    return AdjacentPair(p.P, p.Q.subs(sens, k * sens), f"{p.label}; group of {k}: shift {k} x sensitivity")


def group_mechanism(mechanism: Mechanism, k: int) -> Mechanism:
    """The mechanism on inputs ``k`` adjacent steps apart, for a location family
    (:func:`is_location_family`): each pair's shift by ``k x sensitivity``, each family over ``k T``."""
    k = _validate_k(k)
    if not is_location_family(mechanism):
        raise ValueError(f"mechanism: {mechanism.name!r} is not shown to be a location family")
    sens = mechanism.params.get("sensitivity")
    pairs = tuple(_group_pair(p, k, sens) for p in mechanism.pairs)
    return replace(mechanism, pairs=pairs, name=f"{mechanism.name}, group of {k}")


def _exact(mechanism: Mechanism, k: int, step_seconds, cache) -> DivergenceResult:
    shifted = group_mechanism(mechanism, k)
    result = rdp(shifted, step_seconds=step_seconds, cache=cache)
    step = Step("group privacy", f"location family: inputs {k} steps apart shift the query by {k} x sensitivity "
                                 f"(a family's shifts by {k} T); the group curve is derived from the shifted "
                                 "densities (exact)")
    prov = replace(result.provenance, steps=(step,) + result.provenance.steps)
    return replace(result, provenance=prov, label=f"RDP of {mechanism.name} for groups of {k}")


def _bound(base: DivergenceResult, k: int, name: str) -> DivergenceResult:
    c = max(0, math.ceil(math.log2(k)))
    while 2**c < k:  # guard against rounding in log2
        c += 1
    a = base.alpha
    scale, factor = sp.Integer(2) ** c, sp.Integer(3) ** c
    reason = (f"{PROP2} with c = {c} (k = {k} <= 2^c): D at order alpha <= 3^c eps(2^c alpha), valid for "
              "alpha >= 2 (the proposition's alpha >= 2^(c+1)); +inf (no claim) below 2 except alpha = 1 "
              "(monotonicity, Prop. 9)")
    if base.status is Status.LOWER_BOUND:  # Prop. 2 of a lower bound bounds nothing
        return DivergenceResult(expr=None, status=Status.FAILED, reason=f"{reason}; but the curve is only a lower "
                                f"bound ({base.reason}): Prop. 2 on it bounds nothing", symbols=base.symbols,
                                provenance=base.provenance, label=f"RDP of {name} for groups of {k}")
    if base.expr is None:
        return DivergenceResult(expr=None, status=base.status if base.status is Status.FAILED else Status.NUMERIC_ONLY,
                                reason=f"{reason}; the base curve has no expression ({base.status}: {base.reason})",
                                symbols=base.symbols, provenance=base.provenance,
                                label=f"{base.label} for groups of {k} (Prop. 2 bound)")
    expr = factor * base.expr.subs(a, scale * a)
    conditions = sp.And(a >= 2, base.conditions.subs(a, scale * a))
    try:
        kl = factor * base.at(2 * scale)
    except (ValueError, ArithmeticError):
        kl = None
    dinf = None if base.max_divergence is None else k * base.max_divergence
    points = tuple(ExceptionalPoint(p.alpha / scale, factor * p.value, p.condition)
                   for p in base.exceptional_points if p.alpha.is_number and p.alpha / scale >= 2)
    step = Step("group privacy", reason)
    prov = Provenance((step,) + base.provenance.steps, base.provenance.inputs + (("group size k", str(k)),),
                      tuple(library_versions().items()))
    status = Status.BOUND if base.status in (Status.CLOSED_FORM, Status.BOUND) else base.status
    return DivergenceResult(expr=expr, status=status, reason=reason, conditions=conditions, kl=kl,
                            max_divergence=dinf, exceptional_points=points, symbols=base.symbols, provenance=prov,
                            label=f"RDP of {name} for groups of {k} (Prop. 2 bound)", domains=base.domains)


def group_privacy(mechanism, k: int, *, step_seconds: float | None = None, cache: bool = True) -> DivergenceResult:
    r"""The RDP curve for inputs differing in ``k`` records (see the module docstring).

    ``mechanism`` is a :class:`~rdpsym.Mechanism` or an RDP curve (:class:`~rdpsym.DivergenceResult`;
    curves always get the Prop. 2 bound). ``k`` must be a positive integer; ``k = 1`` returns the
    mechanism's own curve. Status ``closed_form`` means the exact group curve of an additive
    mechanism; ``bound`` means Mironov 2017, Prop. 2.
    """
    k = _validate_k(k)
    if isinstance(mechanism, Mechanism):
        if k == 1:
            return rdp(mechanism, step_seconds=step_seconds, cache=cache)
        if is_location_family(mechanism):
            return _exact(mechanism, k, step_seconds, cache)
        return _bound(rdp(mechanism, step_seconds=step_seconds, cache=cache), k, mechanism.name)
    if isinstance(mechanism, DivergenceResult):
        return mechanism if k == 1 else _bound(mechanism, k, mechanism.label)
    raise TypeError(f"mechanism: expected a Mechanism or DivergenceResult, got {type(mechanism).__name__}")
