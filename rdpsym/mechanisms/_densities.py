"""Densities shared by the built-in mechanisms (a helper module: the registry skips names with ``_``)."""

from __future__ import annotations

from typing import Callable

import sympy as sp

from ..specify.params import Parameter, parameter


def normal_pdf(x: sp.Symbol, mean: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    """The N(mean, sigma^2) density in ``x``."""
    return sp.exp(-((x - mean) ** 2) / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)


def gaussian_noise(meaning: str) -> tuple[sp.Symbol, Parameter, Callable[[sp.Expr], sp.Expr]]:
    """What every Gaussian-noise mechanism here starts from: the real output variable ``x``, the noise
    parameter ``sigma`` (described by ``meaning``) and ``normal(mean)``, the N(mean, sigma^2) density in ``x``."""
    x = sp.Symbol("x", real=True)
    sigma = parameter("sigma", typical=(0.5, 10.0), latex=r"\sigma", meaning=meaning, log_scale=True)

    def normal(mean: sp.Expr) -> sp.Expr:
        return normal_pdf(x, mean, sigma.symbol)

    return x, sigma, normal


def integer_sensitivity(meaning: str = "sensitivity of the integer-valued query") -> Parameter:
    """The sensitivity Δ of an integer-valued query: a positive integer (neighbouring inputs move the
    query by an integer shift t with |t| <= Δ)."""
    return parameter("sensitivity", sp.Range(1, sp.oo), typical=(1, 3), latex=r"\Delta", meaning=meaning,
                     integer=True)


def integer_shift() -> sp.Symbol:
    """The shift t of an integer query between neighbouring inputs, declared integer: the family of pairs
    then ranges over the integers |t| <= Δ (:func:`rdpsym.derive.mechanism_rdp.worst_pairs`)."""
    return sp.Symbol("t", integer=True)
