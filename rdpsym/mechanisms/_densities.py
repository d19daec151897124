"""Densities shared by the built-in mechanisms (a helper module: the registry skips names with ``_``)."""

import sympy as sp


def normal_pdf(x: sp.Symbol, mean: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    """The N(mean, sigma^2) density in ``x``."""
    return sp.exp(-((x - mean) ** 2) / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)
