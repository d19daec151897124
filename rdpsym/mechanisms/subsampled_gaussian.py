"""The Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang 2019, arXiv:1908.10530).

The mechanism carries its own float curve for the accountant (:func:`subsampled_curve`, its
``curve_provider``): the engine derives no closed form for the mixture, and
:func:`rdpsym.accounting.subsampled.subsampled_gaussian_rdp` computes it exactly at integer orders and
by log-space quadrature elsewhere. The curve is attached to this mechanism, not found by its name: a
user's mechanism called ``subsampled_gaussian`` gets its own derived curve.
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register
from ._densities import gaussian_noise

#: Above this order the curve is bounded by the sampled component's D_alpha(P_1||Q) (quadrature gets slow).
ALPHA_MAX = 512.0
#: Values memoised per prepared curve before the memo is cleared.
MEMO_SIZE = 200_000


@register
def subsampled_gaussian() -> Mechanism:
    """Gaussian noise N(0, sigma^2) on a sum query of sensitivity 1 over a Poisson subsample (rate q).

    Output densities for adjacent inputs (the differing record is included with probability q):
    P = (1 - q) N(0, sigma^2) + q N(1, sigma^2) and Q = N(0, sigma^2).
    """
    q = parameter("q", sp.Interval(0, 1), typical=(0.001, 0.5), latex="q", meaning="Poisson sampling rate", log_scale=True)
    x, sigma, normal = gaussian_noise("noise multiplier (std / sensitivity)")
    qs = q.symbol
    return Mechanism(
        name="subsampled_gaussian",
        title="Poisson-subsampled Gaussian mechanism",
        variable=x,
        support=sp.S.Reals,
        pairs=(AdjacentPair((1 - qs) * normal(0) + qs * normal(1), normal(0), "record sampled with probability q"),),
        parameters=(q, sigma),
        description="Samples each record with probability q, then adds N(0, sigma^2) noise to a sum of sensitivity 1.",
        references=("Mironov, Talwar, Zhang 2019 (arXiv:1908.10530), Sect. 3",),
        curve_provider=subsampled_curve,
    )


@functools.lru_cache(maxsize=1)
def _structure() -> tuple:
    return _structure_of(subsampled_gaussian())


def _structure_of(m: Mechanism) -> tuple:
    """What the float code computes: variable, support, densities and parameter symbols (no names)."""
    return (m.variable, m.support, tuple((p.P, p.Q) for p in m.pairs), tuple(p.symbol for p in m.parameters))


def subsampled_curve(mechanism: Mechanism, group: int):
    """The accountant's float curve of the subsampled Gaussian (``Mechanism.curve_provider``).

    Returns ``None`` (the accountant then derives the generic curve) unless ``mechanism`` has exactly
    this mechanism's densities, support and parameter symbols, so that a copy whose densities were
    replaced (``dataclasses.replace``) never gets this curve. Below ``ALPHA_MAX``:
    :func:`rdpsym.accounting.subsampled.subsampled_gaussian_rdp`; above it the bound D_alpha(P_1||Q)
    of the sampled component, derived by the engine (the mixture (1-q) Q + q P_1 against Q: joint
    quasi-convexity, van Erven and Harremoes 2014, Thm. 13). Groups: Mironov 2017, Prop. 2 around it.
    """
    if _structure_of(mechanism) != _structure():
        return None
    try:
        from ..accounting.subsampled import sampled_component, subsampled_gaussian_rdp
    except ImportError as exc:
        raise NotImplementedError(
            "the subsampled Gaussian's float curve (rdpsym.accounting.subsampled.subsampled_gaussian_rdp) "
            f"is not available: {exc}") from None
    from ..accounting.curves import float_curve

    memo: dict = {}

    def base(a, params):
        q, sigma = params["q"], params["sigma"]
        a, q, sigma = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (a, q, sigma)))
        out = np.empty(a.shape)
        flat, todo = out.reshape(-1), []
        for i, key in enumerate(zip(a.ravel().tolist(), q.ravel().tolist(), sigma.ravel().tolist())):
            v = memo.get(key)
            if v is None:
                todo.append((i, key))
            else:
                flat[i] = v
        if todo:
            keys = np.array([k for _, k in todo])
            ka, kq, ks = keys[:, 0], keys[:, 1], keys[:, 2]
            high = np.isfinite(ka) & (ka > ALPHA_MAX) & (kq > 0)
            vals = np.empty(len(todo))
            vals[high] = sampled_component()[1](ka[high], ks[high])
            if (~high).any():
                vals[~high] = np.asarray(subsampled_gaussian_rdp(ka[~high], kq[~high], ks[~high]), dtype=float)
            if len(memo) > MEMO_SIZE:
                memo.clear()
            for (i, key), v in zip(todo, vals):
                memo[key] = flat[i] = v
        return out

    detail = ("Poisson-subsampled Gaussian: rdpsym.accounting.subsampled.subsampled_gaussian_rdp "
              "(exact binomial expansion at integer orders, quadrature of A_alpha - 1 elsewhere); above "
              f"alpha = {ALPHA_MAX:g} the bound D_alpha(P_1||Q) of the sampled component, "
              "derived by the engine (quasi-convexity, van Erven and Harremoes 2014, Thm. 13)")
    return float_curve(mechanism, group, "subsampled", detail, base)
