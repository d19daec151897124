"""A small math namespace that sympy, mpmath and numpy each provide, for formulas written once.

A conversion formula (:mod:`rdpsym.accounting.conversions`) is a function of a namespace ``m`` and its
arguments: ``m.log``, ``m.log1p``, ``m.exp``, ``m.expm1``, ``m.sqrt``. Called with :data:`SYMPY` it
builds the exact expression (differentiated to find the optimal order in closed form), with
:data:`MPMATH` it evaluates at the working precision (the exact converter), with :data:`NUMPY` it
evaluates arrays of orders at once (the accountant). Only these few functions: a formula that needs
more adds it here, for all three libraries, so the three readings of one formula cannot drift apart.

The one conversion procedure (:func:`rdpsym.accounting.conversion.optimise`) is written over the same
namespace, with two more entries: ``m.scalar`` (a number of this library from an mpmath number or a
float) and ``m.map`` (a formula applied to a batch of arguments: one vectorised call for numpy, one
call per entry for mpmath and sympy).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any, Callable

import mpmath
import numpy as np
import sympy as sp

__all__ = ["MathNamespace", "SYMPY", "MPMATH", "NUMPY", "namespace_of"]


@dataclass(frozen=True)
class MathNamespace:
    """The functions a formula may use, from one library (``name``)."""

    name: str
    log: Callable[[Any], Any]
    log1p: Callable[[Any], Any]
    exp: Callable[[Any], Any]
    expm1: Callable[[Any], Any]
    sqrt: Callable[[Any], Any]
    inf: Any
    #: a number of this library from an mpmath number or a float
    scalar: Callable[[Any], Any]
    #: ``map(f, *columns)``: ``f`` applied to a batch (equal-length sequences of arguments), one value per entry
    map: Callable[..., Sequence]

    def __repr__(self) -> str:
        return f"MathNamespace({self.name})"


def _each(f: Callable, *columns) -> list:
    """``f`` on each entry of a batch (mpmath and sympy have no arrays)."""
    return [f(*row) for row in zip(*columns)]


def _vectorised(f: Callable, *columns) -> np.ndarray:
    """``f`` on a whole batch at once, as float64 arrays (+inf and NaN propagate, no warnings)."""
    with np.errstate(all="ignore"):
        return np.asarray(f(*(np.asarray(c, dtype=float) for c in columns)), dtype=float)


#: sympy: exact expressions (``log1p(x)`` is written ``log(1 + x)``: sympy has no log1p of its own).
SYMPY = MathNamespace("sympy", sp.log, lambda x: sp.log(1 + x), sp.exp, lambda x: sp.exp(x) - 1, sp.sqrt, sp.oo,
                      sp.sympify, _each)
#: mpmath: numbers at the working precision.
MPMATH = MathNamespace("mpmath", mpmath.log, mpmath.log1p, mpmath.exp, mpmath.expm1, mpmath.sqrt, mpmath.inf,
                       mpmath.mpf, _each)
#: numpy: float64 arrays (callers set ``np.errstate``; +inf and NaN propagate).
NUMPY = MathNamespace("numpy", np.log, np.log1p, np.exp, np.expm1, np.sqrt, np.inf, float, _vectorised)


def namespace_of(*args) -> MathNamespace:
    """The namespace for these arguments: sympy if any is a sympy object, numpy if any is an array,
    else mpmath (plain ints and floats are read by mpmath at the working precision)."""
    if any(isinstance(x, sp.Basic) for x in args):
        return SYMPY
    if any(isinstance(x, np.ndarray) for x in args):
        return NUMPY
    return MPMATH
