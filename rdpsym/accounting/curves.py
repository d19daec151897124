r"""Fast float RDP curves alpha -> eps(alpha) of mechanisms at given parameter values, for accounting.

An accountant evaluates each mechanism's curve at hundreds of orders for every conversion, so the
curves must be float, vectorised and prepared once per mechanism. :func:`mechanism_curve` returns a
:class:`MechanismCurve`, cached per (mechanism, group size, method) for the whole process: 10,000
events of one mechanism derive its curve and generate its code once. Every curve evaluates a whole
batch at once — ``values(alpha, params)`` takes an array of orders and one array per parameter (one
entry per distinct event) and returns the (orders x events) matrix.

Five kinds, and a mechanism's own, named in ``MechanismCurve.provenance``:

* ``"closed form"`` — the engine's derivation (:func:`rdpsym.rdp`) turned into stable numpy code by
  :func:`rdpsym.compile.to_numpy` (log-sum-exp, series at alpha = 1 and at the parameter
  boundaries). alpha = 1 is the KL divergence, alpha = oo the max divergence, +inf outside the
  finiteness conditions.
* ``"bound"`` — group privacy (``group > 1``) of a mechanism that is not a location family: Mironov
  2017 (arXiv:1702.07476 v3), Prop. 2, via :func:`rdpsym.accounting.group_privacy` (or the same
  bound applied to the float curve for numeric curves and mechanisms' own curves, see
  :func:`~rdpsym.accounting.curve_types.prop2_bound`).
* ``"numeric sum"`` — no closed form, pmfs on the integers whose log-summand is a quadratic in k plus
  log-Bessel terms (the discrete Gaussian's theta sums, Skellam's Bessel sums): float log-space sums
  of the summand read off the pmfs, each tail proved below 2^-57 of the sum, rounded outward, +inf
  where no tail bound is proved (:mod:`rdpsym.accounting.sum_curve`).
* ``"numeric"`` — no closed form: the numeric maximum (:func:`rdpsym.numeric.maximum.numeric_maximum`,
  independent mpmath quadrature) at a fixed grid of orders ``NUMERIC_GRID``, both directions of every
  adjacent pair (Mironov 2017, Def. 4), the largest value plus its error estimate. Between grid orders the curve is the value at the next
  grid order *above* — an upper bound because D_alpha is non-decreasing in alpha (Mironov 2017,
  Prop. 9; van Erven and Harremoës 2014, Thm. 3) — and above the grid it is D_inf. A grid order
  whose quadrature did not converge is +inf (no claim). Grid values are cached per parameter values.
* ``"subsampled"`` — a mechanism whose ``subsampling`` is set (:func:`rdpsym.subsample`, the built-in
  Poisson-subsampled Gaussian among them): the dispatcher reads that data (base, rate, scheme,
  neighbouring relation) and builds the curve from the base's own curve
  (:func:`rdpsym.accounting.subsampled_curve.subsampled_curve`; ``None`` from it, for a copy whose
  densities were replaced, means the kinds above).
* anything else — a curve the mechanism supplies itself: ``Mechanism.curve_provider``, the users'
  extension point (asked first under ``method="auto"``; ``None`` from it means the kinds above). The
  provider builds its curve with :func:`~rdpsym.accounting.curve_types.float_curve`.

Nothing here looks at a mechanism's name.

Fail closed everywhere: NaN becomes +inf (a NaN order never wins a minimum); a float evaluation that
raises falls back to the exact value (:meth:`DivergenceResult.evaluate`), and to +inf if that fails
too; a curve value below ``-NEGATIVE_TOLERANCE`` (:mod:`rdpsym.accounting.curve_types`; impossible for a Rényi divergence, Mironov 2017,
Prop. 8 / van Erven and Harremoës 2014, Thm. 8) is an ``ArithmeticError``, smaller rounding below 0
is raised to 0.
"""

from __future__ import annotations

import threading

from .._cache import register_clearer
from .._timeout import deadline_passed, timeout_count
from ..derive.result import Status
from ..specify.mechanism import Mechanism
from . import guarantees
from .curve_types import MechanismCurve, numeric_curve
from .guarantees import guarantee_curve
from .subsampled_curve import subsampled_curve
from .sum_curve import sum_curve

__all__ = ["mechanism_curve", "resolve_mechanism", "clear_cache"]

_LOCK = threading.RLock()
_CURVES: dict = {}
_REGISTRY: dict[str, Mechanism] = {}


@register_clearer  # rdpsym cache clear (rdpsym._cache.clear_all) forgets them too
def clear_cache() -> None:
    """Forget every prepared curve (derivations stay in the on-disk cache)."""
    with _LOCK:
        _CURVES.clear()
        _REGISTRY.clear()


def resolve_mechanism(mechanism) -> Mechanism:
    """A :class:`~rdpsym.Mechanism` (or a :class:`~rdpsym.accounting.guarantees.GuaranteeCurve`) from
    itself or a registry name (built once per process); mechanisms' names come first."""
    if isinstance(mechanism, (Mechanism, guarantees.GuaranteeCurve)):
        return mechanism
    if isinstance(mechanism, str):
        from .. import mechanisms

        if mechanism not in mechanisms.names() and mechanism in guarantees.names():
            return guarantees.get(mechanism)
        with _LOCK:
            if mechanism not in _REGISTRY:
                from .. import mechanisms

                _REGISTRY[mechanism] = mechanisms.get(mechanism)  # ValueError names the registered ones
            return _REGISTRY[mechanism]
    raise TypeError(f"mechanism: expected an rdpsym Mechanism or a registry name, got {type(mechanism).__name__}")


def _own_curve(mechanism: Mechanism, group: int) -> MechanismCurve | None:
    """The mechanism's own float curve (``Mechanism.curve_provider``, the users' extension point), or
    None: the other routes."""
    provider = mechanism.curve_provider
    if provider is None:
        return None
    curve = provider(mechanism, group)
    if curve is not None:
        if not isinstance(curve, MechanismCurve) or curve.mechanism != mechanism or curve.group != group:
            raise TypeError(f"curve_provider of {mechanism.name!r}: expected a MechanismCurve of this "
                            f"mechanism for groups of {group} (see float_curve), got {curve!r}")
    return curve


def _prepare(mechanism: Mechanism, group: int, method: str) -> MechanismCurve:
    """The one dispatcher, in this order (``method="numeric"`` forces the last):

    1. the mechanism's own float curve (:func:`_own_curve`), asked under ``method="auto"``; then, for a
       mechanism whose ``subsampling`` is set, the subsampled curve built from the base's curve
       (:func:`~rdpsym.accounting.subsampled_curve.subsampled_curve`);
    2. the exact form — the engine's closed form, or the group-privacy bound — as compiled float code;
       at a point where that code fails, :meth:`MechanismCurve._point` evaluates the exact form itself;
    3. for ``numeric_only`` results, float sums of the pmfs' log-summand when they are of the forms
       :mod:`rdpsym.accounting.sum_forms` reads (:func:`rdpsym.accounting.sum_curve.sum_curve`);
    4. the numeric path (:func:`~rdpsym.accounting.curve_types.numeric_curve`).

    No step looks at the mechanism's name.
    """
    from ..derive.mechanism_rdp import rdp
    from ..compile import CodegenError, identifier as _identifier  # the generated argument names
    from .group import group_privacy

    if mechanism.neighbours != "all":
        raise ValueError(f"mechanism: {mechanism.name!r} specifies some of its neighbouring inputs only "
                         f"(neighbours={mechanism.neighbours!r}): its divergence is a lower bound on its RDP, "
                         "not a guarantee to account with")
    if method == "auto":
        own = _own_curve(mechanism, group)
        if own is None and mechanism.subsampling is not None:
            own = subsampled_curve(mechanism, group, curve_of=mechanism_curve)
        if own is not None:
            return own

    result = None
    if method == "auto":
        result = group_privacy(mechanism, group) if group > 1 else rdp(mechanism)
        if result.status in (Status.CLOSED_FORM, Status.BOUND) and result.expr is not None:
            try:
                fn = result.to_numpy()
            except CodegenError as exc:
                fn, why = None, f"no float code ({exc})"
            else:
                argnames = {p: _identifier(p) for p in mechanism.params}
                kind = "closed form" if result.status is Status.CLOSED_FORM else "bound"
                detail = f"{result.label}: {result.status} derived by rdpsym, stable numpy code (rdpsym.compile)"
                if kind == "bound":
                    detail += f"; {result.reason}"
                return MechanismCurve(mechanism, group, kind, detail, result, fn, argnames)
        else:
            why = f"status {result.status}: {result.reason}"
            if result.status is Status.NUMERIC_ONLY:
                # a sum with no closed form (theta, Bessel sums): float code for the sum itself when its
                # pmfs are of the forms rdpsym.accounting.sum_forms reads (module sum_curve)
                own = sum_curve(mechanism, group)
                if own is not None:
                    return own
    elif method == "numeric":
        why = "numeric curve requested"
    else:
        raise ValueError(f"method must be 'auto' or 'numeric'; got {method!r}")

    return numeric_curve(mechanism, group, why, result)


def _prepare_guarantee(guarantee, group: int, method: str) -> MechanismCurve:
    """A stated guarantee's curve (:mod:`rdpsym.accounting.guarantees`); it has no numeric curve."""
    if method != "auto":
        raise ValueError(f"method: {guarantee.name!r} is a stated guarantee with no densities; only 'auto' "
                         f"applies (got {method!r})")
    return guarantee_curve(guarantee, group)


def mechanism_curve(mechanism, group: int = 1, method: str = "auto") -> MechanismCurve:
    """The float curve of ``mechanism`` (a Mechanism or registry name) for groups of ``group``.

    ``method="auto"`` uses the mechanism's own curve when it has a ``curve_provider``, else the
    subsampled curve when its ``subsampling`` is set, else the closed form when the engine derives one,
    else the numeric curve; ``method="numeric"`` forces the numeric curve (to check the closed form
    against it). Prepared once per (mechanism, group, method) and cached.
    """
    m = resolve_mechanism(mechanism)
    if isinstance(group, bool) or not isinstance(group, int) or group < 1:
        raise ValueError(f"group must be a positive integer (the group size); got {group!r}")
    key = (m, group, method)
    with _LOCK:
        curve = _CURVES.get(key)
        if curve is None:
            before = timeout_count()
            curve = _prepare_guarantee(m, group, method) if not isinstance(m, Mechanism) else _prepare(m, group, method)
            # like every cache (rdpsym._cache): a curve prepared while a time limit expired (a derivation
            # that fell back to the numeric curve, say) is returned, never kept
            if timeout_count() == before and not deadline_passed():
                _CURVES[key] = curve
        return curve
