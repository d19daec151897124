r"""Subsampling as data: a mechanism run on a random subsample of its input.

:class:`Subsampling` records how a subsampled mechanism was built from its base (the combinator
:func:`rdpsym.subsample` makes one and attaches it to the new mechanism as ``Mechanism.subsampling``).
What the derivation, the accountant and the reports do with a subsampled mechanism is chosen by this
object, never by a name.

Schemes and neighbouring relations (the two combinations with a published analysis; the same as
autodp's and dp_accounting's):

* ``scheme="poisson"``, ``neighbouring="add_remove"``: each record enters the sample independently with
  probability ``q``. For a base pair ``P = M(D ∪ {z})``, ``Q = M(D)`` the subsampled outputs are
  ``(1 - q) Q + q P`` and ``Q`` (Mironov, Talwar & Zhang 2019, arXiv:1908.10530, Sect. 3; Zhu & Wang
  2019, "Poisson subsampled Rényi differential privacy", ICML, Thm. 6 for the general bound).
* ``scheme="without_replacement"``, ``neighbouring="replace_one"``: a subset of fixed size ``m = q n`` is
  drawn uniformly (Wang, Balle & Kasiviswanathan 2019, "Subsampled Rényi differential privacy and
  analytical moments accountant", AISTATS, Thm. 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from .._numbers import ArgumentError
from .params import Parameter

if TYPE_CHECKING:  # a Mechanism holds its Subsampling: the import would be circular at run time
    from .mechanism import Mechanism

__all__ = ["SCHEMES", "NEIGHBOURING", "COMBINATIONS", "Subsampling"]

SCHEMES = ("poisson", "without_replacement")
NEIGHBOURING = ("add_remove", "replace_one")
#: scheme -> the neighbouring relation its analysis is for
COMBINATIONS = {"poisson": "add_remove", "without_replacement": "replace_one"}


@dataclass(frozen=True)
class Subsampling:
    """How a subsampled mechanism was made: ``base`` run on a subsample drawn at rate ``rate``.

    Attributes
    ----------
    base: the mechanism that is run on the subsample.
    rate: the sampling rate q as a :class:`~rdpsym.specify.params.Parameter` (domain within [0, 1]);
        a number given to :func:`rdpsym.subsample` is held as ``value`` and ``rate`` is still the symbol
        the densities are written in.
    scheme: ``"poisson"`` or ``"without_replacement"`` (:data:`SCHEMES`).
    neighbouring: ``"add_remove"`` or ``"replace_one"`` (:data:`NEIGHBOURING`), the one that goes with
        the scheme (:data:`COMBINATIONS`).
    value: ``None`` for a symbolic rate, else the exact number q is fixed to.
    """

    base: "Mechanism"
    rate: Parameter
    scheme: str = "poisson"
    neighbouring: str = "add_remove"
    value: sp.Expr | None = None

    def __post_init__(self):
        if self.scheme not in SCHEMES:
            raise ArgumentError("scheme", f"one of {', '.join(map(repr, SCHEMES))}", self.scheme)
        if self.neighbouring not in NEIGHBOURING:
            raise ArgumentError("neighbouring", f"one of {', '.join(map(repr, NEIGHBOURING))}", self.neighbouring)
        wanted = COMBINATIONS[self.scheme]
        if self.neighbouring != wanted:
            raise ArgumentError(
                "neighbouring", f"{wanted!r} for scheme={self.scheme!r}", self.neighbouring,
                message=f"neighbouring: scheme={self.scheme!r} is analysed for neighbouring={wanted!r} "
                        f"(see rdpsym.specify.subsampling); got {self.neighbouring!r}")
        if not isinstance(self.rate, Parameter):
            raise ArgumentError("q", "a Parameter", self.rate)
        if not self.rate.domain.is_subset(sp.Interval(0, 1)):
            raise ArgumentError("q", "a rate whose domain lies in [0, 1]", self.rate.domain)
        if self.rate.symbol in {p.symbol for p in self.base.parameters} or self.rate.name in self.base.params:
            raise ArgumentError("q", "a rate that is not a parameter of the base mechanism", self.rate.name)
