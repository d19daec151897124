r"""The subsampling combinator: any mechanism, run on a random subsample of its input.

:func:`subsample` returns a new :class:`~rdpsym.specify.mechanism.Mechanism` whose adjacent pairs are the
subsampled output densities and whose ``subsampling`` attribute records how it was made
(:class:`~rdpsym.specify.subsampling.Subsampling`): data that the derivation and the accountant read
to choose what to do with it, never a pointer to their code. For a base pair ``(P, Q) = (M(D), M(D'))`` with
``D' = D ∪ {z}`` the differing record enters the sample with probability q, so the outputs are

.. math:: P \quad\text{and}\quad (1 - q) P + q Q

(Mironov, Talwar & Zhang 2019, arXiv:1908.10530, Sect. 3), and the same with the roles of P and Q
exchanged (adjacency is symmetric: ``D = D' ∪ {z'}`` as well). A family of pairs over shifts t stays a
family over the same shifts. For sampling without replacement under replace-one neighbouring, these are
the outputs when the record left out of the sample gives ``P``: one instance of the neighbouring relation,
not the worst case; the RDP is the Wang, Balle & Kasiviswanathan (2019) bound (see :mod:`rdpsym.derive`).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from .. import printing
from .._numbers import ArgumentError
from ..specify.text.numbers import exact_number
from ..specify.adjacency import AdjacentFamily, AdjacentPair
from ..specify.mechanism import Mechanism
from ..specify.params import Parameter, parameter
from ..specify.subsampling import Subsampling

__all__ = ["subsample", "is_as_subsampled"]


def _rate(q: Any, base: Mechanism) -> tuple[Parameter, sp.Expr | None]:
    if isinstance(q, Parameter):
        return q, None
    if isinstance(q, sp.Symbol):
        if q.is_real is not True:
            raise ArgumentError("q", "a real symbol, a Parameter or a number in [0, 1]", q)
        return parameter(q.name, sp.Interval(0, 1), typical=(0.001, 0.5), latex=sp.latex(q),
                         meaning="sampling rate", log_scale=True), None
    if isinstance(q, (str, bytes)):
        raise ArgumentError("q", "a number in [0, 1], a real sympy Symbol or a Parameter (not text)", q)
    value = exact_number(q, "q")
    if not (value.is_number and 0 <= value <= 1):
        raise ArgumentError("q", "a number in [0, 1] (a sampling rate)", q)
    name = "q" if "q" not in base.params else "sampling_rate"
    return parameter(name, sp.Interval(0, 1), typical=(0.001, 0.5), latex="q", meaning="sampling rate",
                     log_scale=True), value


def _mixed(pair, q: sp.Expr) -> list:
    """The subsampled pairs of one base pair: (P, (1-q) P + q Q) and (Q, (1-q) Q + q P)."""
    P, Q = pair.P, pair.Q
    first, second = (P, (1 - q) * P + q * Q), (Q, (1 - q) * Q + q * P)
    if isinstance(pair, AdjacentFamily) and q == 0:
        # a rate of 0 never samples the record: both outputs are P_t, identical for every shift, so the
        # family has nothing to maximise over (any shift gives D = 0; t = 0 is taken)
        at = {s: 0 for s in pair.shift_symbols}
        return [AdjacentPair(a.subs(at), b.subs(at), f"subsampled at rate 0: {pair.label}") for a, b in (first, second)]
    if isinstance(pair, AdjacentFamily):
        return [AdjacentFamily(a, b, shift=pair.shift, over=pair.over, label=f"subsampled: {pair.label}")
                for a, b in (first, second)]
    return [AdjacentPair(a, b, f"subsampled: {pair.label}") for a, b in (first, second)]


def subsample(mechanism: Any, q: Any, *, scheme: str = "poisson", neighbouring: str | None = None) -> Mechanism:
    """The mechanism ``mechanism`` run on a subsample drawn at rate ``q``.

    Parameters
    ----------
    mechanism: a Mechanism or anything :func:`rdpsym.mechanisms.resolve` reads (a registered name).
    q: the sampling rate: a number in [0, 1] (the rate is then fixed to it), a real sympy Symbol or a
        :class:`~rdpsym.Parameter` with a domain inside [0, 1] (a parameter of the new mechanism).
    scheme: ``"poisson"`` (each record independently with probability q) or ``"without_replacement"``
        (a subset of size q n uniformly).
    neighbouring: ``"add_remove"`` (Poisson) or ``"replace_one"`` (without replacement); default: the one
        that goes with ``scheme``.
    """
    from . import resolve
    from ..specify.subsampling import COMBINATIONS, SCHEMES

    base = resolve(mechanism)
    if scheme not in SCHEMES:
        raise ArgumentError("scheme", f"one of {', '.join(map(repr, SCHEMES))}", scheme)
    neighbouring = COMBINATIONS[scheme] if neighbouring is None else neighbouring
    rate, value = _rate(q, base)
    spec = Subsampling(base, rate, scheme, neighbouring, value)
    qs = rate.symbol if value is None else value
    pairs = [mixed for pair in base.pairs for mixed in _mixed(pair, qs)]
    parameters = base.parameters if value is not None else (rate, *base.parameters)
    how = "Poisson" if scheme == "poisson" else "without-replacement"
    return Mechanism(
        name=f"subsampled_{base.name}",
        title=f"{how}-subsampled {base.title or base.name}",
        variable=base.variable,
        support=base.support,
        pairs=tuple(pairs),
        parameters=tuple(parameters),
        description=f"{base.description} Run on a {how} subsample at rate {printing.sstr(qs)}.".strip(),
        references=(*base.references, "Mironov, Talwar & Zhang 2019 (arXiv:1908.10530), Sect. 3",
                    "Zhu & Wang 2019 (ICML), Thm. 6" if scheme == "poisson"
                    else "Wang, Balle & Kasiviswanathan 2019 (AISTATS), Thm. 9"),
        defaults=base.defaults,
        display=base.display,
        subsampling=spec,
        neighbours=base.neighbours,  # subsampling some neighbouring inputs covers some
    )


def is_as_subsampled(mechanism: Mechanism) -> bool:
    """Whether ``mechanism`` is exactly what :func:`subsample` builds from its ``subsampling``: the same
    variable, support, pairs and parameter symbols. A copy whose densities were replaced
    (``dataclasses.replace``) keeps its ``subsampling`` attribute but is another mechanism: the derivation
    and the accountant then treat it by its own densities, never by the record of how it was made."""
    spec = getattr(mechanism, "subsampling", None)
    if spec is None:
        return False
    rebuilt = subsample(spec.base, spec.rate if spec.value is None else spec.value, scheme=spec.scheme,
                        neighbouring=spec.neighbouring)

    def structure(m: Mechanism) -> tuple:
        return (m.variable, m.support, m.pairs, tuple(p.symbol for p in m.parameters))

    return structure(rebuilt) == structure(mechanism)
