"""Densities and declarations shared by the built-in mechanisms (a helper module: the registry skips
names with ``_``)."""

from __future__ import annotations

from typing import Any, Callable

import sympy as sp

from ..specify.adjacency import AdjacentFamily
from ..specify.mechanism import Mechanism
from ..specify.params import Parameter, parameter


def normal_pdf(x: sp.Symbol, mean: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    """The N(mean, sigma^2) density in ``x``."""
    return sp.exp(-((x - mean) ** 2) / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)


def additive_noise_mechanism(name: str, title: str, noise: Callable[[sp.Expr], sp.Expr],
                             parameters: tuple[Parameter, ...], *, sensitivity: str = "L1",
                             **declaration: Any) -> Mechanism:
    """The mechanism releasing ``f(D) + Z`` for a real-valued query ``f`` and noise ``Z`` of density
    ``noise(u)`` with the given ``parameters``.

    Output densities for adjacent inputs: ``noise(x)`` and ``noise(x - t)`` for every shift ``t`` of the
    query with ``|t| <= Δ``, Δ its ``sensitivity`` (``"L1"`` or ``"L2"``, the parameter appended to
    ``parameters``); the RDP is the supremum over ``t`` (Mironov 2017, arXiv:1702.07476 v3, Def. 4).
    ``declaration`` holds the other fields of :class:`~rdpsym.specify.mechanism.Mechanism` (description,
    references, defaults, display)."""
    x, t = sp.Symbol("x", real=True), sp.Symbol("t", real=True)
    d = parameter("sensitivity", typical=(0.5, 2.0), latex=r"\Delta", meaning=f"{sensitivity} sensitivity of the query")
    shifts = AdjacentFamily(noise(x), noise(x - t), shift=t, over=sp.Interval(-d.symbol, d.symbol),
                            label="f(D) = 0, f(D') = t, |t| <= sensitivity")
    return Mechanism(name=name, title=title, variable=x, support=sp.S.Reals, pairs=(shifts,),
                     parameters=(*parameters, d), **declaration)


def integer_sensitivity(meaning: str = "sensitivity of the integer-valued query") -> Parameter:
    """The sensitivity Δ of an integer-valued query: a positive integer (neighbouring inputs move the
    query by an integer shift t with |t| <= Δ)."""
    return parameter("sensitivity", sp.Range(1, sp.oo), typical=(1, 3), latex=r"\Delta", meaning=meaning,
                     integer=True)


def integer_shift() -> sp.Symbol:
    """The shift t of an integer query between neighbouring inputs, declared integer: the family of pairs
    then ranges over the integers |t| <= Δ (:func:`rdpsym.derive.mechanism_rdp.worst_pairs`)."""
    return sp.Symbol("t", integer=True)
