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
