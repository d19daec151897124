"""The Poisson-subsampled Laplace mechanism: ``subsample(laplace at sensitivity 1, q)``.

Its densities are the subsampling combinator's mixtures (Mironov, Talwar & Zhang 2019, arXiv:1908.10530,
Sect. 3), nothing typed in: for a shift |t| <= 1, Laplace(0, b) against (1 - q) Laplace(0, b) + q
Laplace(t, b), and the same with the roles exchanged. Zhu & Wang 2019 ("Poisson subsampled Rényi
differential privacy", ICML 2019, Thm. 6) give the integer-order bound of any Poisson-subsampled
mechanism; the engine derives from the mixtures what it can and the curve is numeric otherwise.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ..specify.mechanism import Mechanism
from ..specify.params import parameter
from . import register
from .laplace import laplace
from .subsample import subsample
from .subsampled_gaussian import fixed_parameter


@register
def subsampled_laplace() -> Mechanism:
    """Laplace noise of scale b on a sum query of sensitivity 1 over a Poisson subsample (rate q).

    ``subsample(laplace(), q)`` at sensitivity 1: for adjacent inputs with shift |t| <= 1 the outputs are
    Laplace(0, b) against (1 - q) Laplace(0, b) + q Laplace(t, b) (the differing record is included with
    probability q), and the same with the roles of the two exchanged.
    """
    q = parameter("q", sp.Interval(0, 1), typical=(0.001, 0.5), latex="q", meaning="Poisson sampling rate", log_scale=True)
    base = fixed_parameter(laplace(), "sensitivity", 1)
    return dataclasses.replace(
        subsample(base, q),
        name="subsampled_laplace",
        title="Poisson-subsampled Laplace mechanism",
        description="Samples each record with probability q, then adds Laplace(0, b) noise to a sum of sensitivity 1.",
        references=("Mironov, Talwar & Zhang 2019 (arXiv:1908.10530), Sect. 3",
                    "Zhu & Wang 2019 (ICML), Thm. 6"),
    )
