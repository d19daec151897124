"""Hypothesis strategies for parameters and Rényi orders, for users' own property tests.

    from hypothesis import given
    import rdpsym
    from rdpsym import strategies as st_rdp

    mech = rdpsym.mechanisms.gaussian()
    eps = rdpsym.rdp(mech)

    @given(st_rdp.orders(), st_rdp.parameters(mech))
    def test_monotone_in_alpha(a, values):
        ...

Values are Python floats (rdpsym takes floats at their exact binary value, so the closed form and the
numerics see the same number) or ``math.inf``. Besides values drawn from the typical ranges the
strategies mix in the edge regimes where published formulas break (Mironov 2017, arXiv:1702.07476 v3,
Sec. VI discusses alpha -> 1 and large alpha): orders next to 1 (cancellation), orders up to 1000
(overflow), orders in (0, 1), exceptional orders, and parameters 100 times closer to the ends of their
domain than their typical range (tiny and huge scales).
"""

from __future__ import annotations

import math
from typing import Sequence

import sympy as sp
from hypothesis import strategies as st

from .specify.mechanism import Mechanism
from .specify.params import Parameter
from .verification.points import edge_values

__all__ = ["orders", "parameter_values", "parameters", "points"]


def _check_range(name, lo, hi):
    if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float))):
        raise ValueError(f"{name}: bounds must be numbers; got {lo!r}, {hi!r}")
    if not (0 < lo < hi):
        raise ValueError(f"{name}: need 0 < min_value < max_value; got {lo!r}, {hi!r}")


def orders(
    *,
    min_value: float = 1e-3,
    max_value: float = 1e3,
    near_one: bool = True,
    below_one: bool = True,
    include_one: bool = False,
    include_infinity: bool = False,
    exceptional: Sequence[float] = (),
) -> st.SearchStrategy[float]:
    """Rényi orders alpha in ``[min_value, max_value]``, excluding 1 unless ``include_one``.

    Draws log-uniformly over the range and mixes in the edge regimes: ``1 +- 1e-6``, ``1 +- 1e-9``
    (``near_one``), orders in (0, 1) (``below_one``; otherwise alpha > 1 only), ``max_value`` itself,
    the ``exceptional`` orders and ``+- 1e-6`` around them, and ``math.inf`` if ``include_infinity``.
    """
    _check_range("orders", min_value, max_value)
    lo = min_value if below_one else max(min_value, 1.0)
    if lo >= max_value:
        raise ValueError(f"orders: no orders left in [{lo}, {max_value}] (below_one={below_one})")
    specials = [max_value, min(max(2.0, lo), max_value)]
    if near_one:
        specials += [1 + 1e-6, 1 + 1e-9] + ([1 - 1e-6, 1 - 1e-9] if below_one else [])
    if below_one and lo < 0.5:
        specials += [0.5, lo]
    for a0 in exceptional:
        a0 = float(a0)
        specials += [a0, a0 + 1e-6, a0 - 1e-6]
    specials = sorted({a for a in specials if lo <= a <= max_value and a != 1.0})
    log_uniform = st.floats(math.log(lo), math.log(max_value)).map(math.exp).filter(lambda a: lo <= a <= max_value and a != 1.0)
    parts = [st.sampled_from(specials), log_uniform]
    if include_one:
        parts.append(st.just(1.0))
    if include_infinity:
        parts.append(st.just(math.inf))
    return st.one_of(*parts)


def parameter_values(param: Parameter, *, edges: bool = True) -> st.SearchStrategy:
    """Values of one :class:`~rdpsym.Parameter`: its typical range (log-uniform if ``log_scale``),
    plus, with ``edges``, the values of :func:`rdpsym.verification.points.edge_values` (tiny and huge
    scales, near the ends of the domain). Integers for integer parameters."""
    if not isinstance(param, Parameter):
        raise ValueError(f"param: expected an rdpsym Parameter, got {type(param).__name__}")
    lo, hi = param.typical
    if param.symbol.is_integer:
        base = st.integers(math.ceil(lo), math.floor(hi))
        conv = int
    elif param.log_scale and lo > 0:
        base = st.floats(math.log(lo), math.log(hi)).map(math.exp).map(lambda v: min(max(v, lo), hi))
        conv = float
    else:
        base = st.floats(lo, hi)
        conv = float
    inside = lambda v: param.domain.contains(sp.Rational(v)) is sp.true  # noqa: E731
    base = base.filter(inside)
    if not edges:
        return base
    extra = [conv(v) for _, v in edge_values(param)]
    extra = [v for v in extra if inside(v)]
    return st.one_of(base, st.sampled_from(extra)) if extra else base


def parameters(target: Mechanism | Sequence[Parameter], *, edges: bool = True, fixed: dict | None = None) -> st.SearchStrategy[dict]:
    """Dicts name -> value for every parameter of a mechanism (or a sequence of Parameters), with
    ``fixed`` values pinned (e.g. ``{"sensitivity": 1}``)."""
    params = target.parameters if isinstance(target, Mechanism) else tuple(target)
    fixed = dict(fixed or {})
    names = {p.name for p in params}
    if set(fixed) - names:
        raise ValueError(f"fixed: unknown parameters {sorted(set(fixed) - names)}; parameters are {sorted(names)}")
    return st.fixed_dictionaries({p.name: (st.just(fixed[p.name]) if p.name in fixed else parameter_values(p, edges=edges))
                                  for p in params})


def points(target: Mechanism | Sequence[Parameter], *, edges: bool = True, fixed: dict | None = None,
           **order_kwargs) -> st.SearchStrategy[tuple[float, dict]]:
    """Pairs ``(alpha, values)``: :func:`orders` (with ``order_kwargs``) times :func:`parameters`."""
    return st.tuples(orders(**order_kwargs), parameters(target, edges=edges, fixed=fixed))
