"""The Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang 2019, arXiv:1908.10530).

It is ``subsample(gaussian(), q)`` with the sensitivity fixed to 1, nothing more: its densities are the
combinator's mixtures, and its accountant curve is the one every subsampled mechanism gets
(:func:`rdpsym.accounting.subsampled_curve.subsampled_curve`, which recognises a Gaussian base by its
densities and uses :func:`rdpsym.accounting.subsampled.subsampled_gaussian_rdp`). A user's mechanism
called ``subsampled_gaussian`` is not subsampled and gets its own derived curve.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import AdjacentPair, Mechanism
from ..specify.params import parameter
from . import register
from .gaussian import gaussian
from .subsample import subsample


def fixed_parameter(mechanism: Mechanism, name: str, value: int) -> Mechanism:
    """``mechanism`` with the parameter ``name`` replaced by the integer ``value`` everywhere."""
    symbol = mechanism.params[name]
    value = sp.Integer(value)

    def fix(pair):
        if isinstance(pair, AdjacentFamily):
            return AdjacentFamily(pair.P.subs(symbol, value), pair.Q.subs(symbol, value), shift=pair.shift,
                                  over=pair.over.subs(symbol, value), label=pair.label)
        return AdjacentPair(pair.P.subs(symbol, value), pair.Q.subs(symbol, value), pair.label)

    return dataclasses.replace(
        mechanism,
        pairs=tuple(fix(p) for p in mechanism.pairs),
        parameters=tuple(p for p in mechanism.parameters if p.name != name),
        defaults=tuple((k, v) for k, v in mechanism.defaults if k != name),
        display=tuple(d for d in mechanism.display if d[0] != name),
    )


@register
def subsampled_gaussian() -> Mechanism:
    """Gaussian noise N(0, sigma^2) on a sum query of sensitivity 1 over a Poisson subsample (rate q).

    ``subsample(gaussian(), q)`` at sensitivity 1: for adjacent inputs with shift |t| <= 1 the outputs
    are N(0, sigma^2) against (1 - q) N(0, sigma^2) + q N(t, sigma^2) (the differing record is included
    with probability q), and the same with the roles of the two exchanged.
    """
    q = parameter("q", sp.Interval(0, 1), typical=(0.001, 0.5), latex="q", meaning="Poisson sampling rate", log_scale=True)
    base = fixed_parameter(gaussian(), "sensitivity", 1)
    sigma = base.parameter_by_name["sigma"]
    base = dataclasses.replace(base, parameters=(dataclasses.replace(sigma, meaning="noise multiplier (std / sensitivity)"),))
    return dataclasses.replace(
        subsample(base, q),
        name="subsampled_gaussian",
        title="Poisson-subsampled Gaussian mechanism",
        description="Samples each record with probability q, then adds N(0, sigma^2) noise to a sum of sensitivity 1.",
        references=("Mironov, Talwar, Zhang 2019 (arXiv:1908.10530), Sect. 3",),
    )
