r"""dp_accounting's DpEvent trees read into an :class:`~rdpsym.accounting.Accountant`.

dp_accounting (an optional dependency, extra ``audit``) is imported only here, when an event is read;
events are recognised by their class from ``dp_accounting.dp_event`` (``isinstance``), never by a name.

| event | add_remove | replace_one |
| --- | --- | --- |
| ``GaussianDpEvent(noise_multiplier s)`` | ``gaussian``, sigma = s, sensitivity 1 | sensitivity 2 |
| ``LaplaceDpEvent(noise_multiplier b)`` | ``laplace``, b, sensitivity 1 | sensitivity 2 |
| ``RandomizedResponseDpEvent(p, k)`` | error (defined for replace-one) | k = 2: ``randomized_response`` with p_true = 1 - p/2; k >= 3: ``k_randomized_response`` with e^eps = 1 + k (1 - p)/p |
| ``PoissonSampledDpEvent(q, e)`` | ``subsample(e's mechanism, q)`` | error (Poisson sampling is analysed under add/remove) |
| ``SampledWithoutReplacementDpEvent(n, m, e)`` | error | ``subsample(..., m/n, scheme="without_replacement")`` |
| ``SelfComposedDpEvent(e, k)``, ``ComposedDpEvent`` | counts multiply; each event added | same |
| ``NoOpDpEvent`` | nothing | nothing |
| ``NonPrivateDpEvent`` | no guarantee (epsilon = inf) | same |

Replace-one changes a record, so a sum query of add/remove sensitivity 1 moves by up to 2: the
Gaussian's and the Laplace's sensitivity double, and both directions of each pair count. Degenerate
parameters follow dp_accounting: noise 0 is non-private, a sampling probability 0, RR with one bucket or
p = 1 release nothing. Any other event raises ``ValueError`` naming it.
"""

from __future__ import annotations

import math

from ..._numbers import ArgumentError

__all__ = ["accountant_from_dp_event", "NEIGHBOURING"]

NEIGHBOURING = ("add_remove", "replace_one")


def _dp_event():
    try:
        from dp_accounting import dp_event
    except ImportError as exc:  # pragma: no cover - the extra is not installed
        raise ImportError("reading DpEvents needs dp_accounting: pip install 'rdpsym[audit]'") from exc
    return dp_event


def _unreadable(event, why: str) -> ValueError:
    return ValueError(f"event: rdpsym cannot read {type(event).__name__} {event!r}: {why}")


def _base(event, neighbouring: str, E):
    """(mechanism, values) of a noise event inside a sampled event."""
    from ... import mechanisms

    sens = 1.0
    if isinstance(event, E.GaussianDpEvent):
        return mechanisms.resolve("gaussian"), {"sigma": float(event.noise_multiplier), "sensitivity": sens}
    if isinstance(event, E.LaplaceDpEvent):
        return mechanisms.resolve("laplace"), {"b": float(event.noise_multiplier), "sensitivity": sens}
    raise _unreadable(event, "a sampled event must hold a GaussianDpEvent or a LaplaceDpEvent")


def _walk(event, count: int, neighbouring: str, acct, E) -> None:
    from ... import mechanisms
    from ...mechanisms.subsample import subsample

    if not isinstance(event, E.DpEvent):
        raise ArgumentError("event", "a dp_accounting DpEvent", event)
    if isinstance(event, E.NoOpDpEvent) or count == 0:
        return
    if isinstance(event, E.NonPrivateDpEvent):
        acct.non_private = True
        return
    if isinstance(event, E.SelfComposedDpEvent):
        _walk(event.event, count * int(event.count), neighbouring, acct, E)
        return
    if isinstance(event, E.ComposedDpEvent):
        for e in event.events:
            _walk(e, count, neighbouring, acct, E)
        return
    double = 2.0 if neighbouring == "replace_one" else 1.0
    if isinstance(event, (E.GaussianDpEvent, E.LaplaceDpEvent)):
        if event.noise_multiplier == 0:
            acct.non_private = True
            return
        m, values = _base(event, neighbouring, E)
        acct.add(m, count=count, **{**values, "sensitivity": double})
        return
    if isinstance(event, E.RandomizedResponseDpEvent):
        if neighbouring != "replace_one":
            raise _unreadable(event, "randomized response is defined for neighbouring='replace_one'")
        p, k = float(event.noise_parameter), int(event.num_buckets)
        if k == 1 or p == 1:
            return
        if p == 0:
            acct.non_private = True
            return
        if k == 2:
            acct.add(mechanisms.resolve("randomized_response"), count=count, p=1 - p / 2)
        else:
            acct.add(mechanisms.resolve("k_randomized_response"), count=count, k=k,
                     epsilon=math.log1p(k * (1 - p) / p))
        return
    if isinstance(event, E.PoissonSampledDpEvent):
        if neighbouring != "add_remove":
            raise _unreadable(event, "Poisson sampling is analysed under neighbouring='add_remove'")
        q = float(event.sampling_probability)
        if q == 0:
            return
        m, values = _base(event.event, neighbouring, E)
        if next(iter(values.values())) == 0:
            acct.non_private = True
            return
        acct.add(subsample(m, q) if q < 1 else m, count=count, **values)
        return
    if isinstance(event, E.SampledWithoutReplacementDpEvent):
        if neighbouring != "replace_one":
            raise _unreadable(event, "sampling without replacement is analysed under neighbouring='replace_one'")
        n, size = int(event.source_dataset_size), int(event.sample_size)
        if not (0 < n) or not (0 <= size <= n):
            raise _unreadable(event, "needs 0 <= sample_size <= source_dataset_size, 0 < source_dataset_size")
        if size == 0:
            return
        m, values = _base(event.event, neighbouring, E)
        if next(iter(values.values())) == 0:
            acct.non_private = True
            return
        if size == n:
            acct.add(m, count=count, **{**values, "sensitivity": double})
            return
        acct.add(subsample(m, size / n, scheme="without_replacement"), count=count, **values)
        return
    raise _unreadable(event, "not one of Gaussian, Laplace, RandomizedResponse, PoissonSampled, "
                      "SampledWithoutReplacement, SelfComposed, Composed, NoOp, NonPrivate")


def accountant_from_dp_event(event, neighbouring: str = "add_remove", cls=None):
    """An accountant (of class ``cls``) holding the releases described by ``event`` (module docstring)."""
    if neighbouring not in NEIGHBOURING:
        raise ArgumentError("neighbouring", f"one of {', '.join(map(repr, NEIGHBOURING))}", neighbouring)
    E = _dp_event()
    if cls is None:
        from ..accountant import Accountant as cls
    acct = cls()
    acct.neighbouring = neighbouring
    acct.non_private = False
    _walk(event, 1, neighbouring, acct, E)
    return acct
