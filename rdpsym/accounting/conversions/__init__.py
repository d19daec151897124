r"""The registry of RDP -> (epsilon, delta)-DP conversions: each one entry, its formula written once.

A conversion is valid at every single order alpha > 1: an (alpha, eps_RDP)-RDP mechanism is
(epsilon, delta)-DP with ``epsilon = rule.epsilon(m, eps_RDP, alpha, delta)``, equivalently with
``log delta = rule.log_delta(m, eps_RDP, alpha, epsilon)``. Both are written once over a math namespace
``m`` (:mod:`rdpsym.accounting.mathns`): sympy for the closed-form optimal order, mpmath for the exact
converter (:func:`rdpsym.epsilon`, :func:`rdpsym.delta`), numpy for the accountant. Every consumer —
the accountant, the exact converter, ``rdpsym account --method`` and the conversion plot — reads this
registry, so a new conversion is one new file with one :func:`register` call.

Built in: ``"mironov"`` (:mod:`.mironov`) and ``"improved"`` (:mod:`.improved`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable

from ..mathns import MathNamespace, namespace_of

__all__ = ["ConversionRule", "register", "unregister", "get", "names", "METHODS"]

_LOCK = threading.RLock()
_RULES: dict[str, "ConversionRule"] = {}


@dataclass(frozen=True)
class ConversionRule:
    """One conversion: ``name`` (the ``method=`` value), ``source`` (its citation), ``label`` (a plot
    legend), and its two directions as functions of a math namespace ``m``:

    * ``epsilon(m, eps_rdp, alpha, delta)`` — the epsilon implied at order ``alpha`` for a target delta;
    * ``log_delta(m, eps_rdp, alpha, epsilon)`` — the log of the delta implied for a target epsilon.

    Both must be valid at every alpha > 1 (the optimiser takes the minimum over alpha), non-decreasing in
    ``eps_rdp`` (the accountant's branch-and-bound scan relies on it), and expressions the three libraries
    evaluate alike (only ``m``'s functions and arithmetic).
    """

    name: str
    source: str
    label: str
    epsilon: Callable[..., Any]
    log_delta: Callable[..., Any]

    def objective(self, kind: str, eps_rdp, a, target, m: MathNamespace | None = None):
        """epsilon (``kind="epsilon"``, target delta) or log delta (target epsilon) at order ``a``."""
        m = m if m is not None else namespace_of(eps_rdp, a, target)
        if kind == "epsilon":
            return self.epsilon(m, eps_rdp, a, target)
        return self.log_delta(m, eps_rdp, a, target)


def register(rule: ConversionRule, *, replace: bool = False) -> ConversionRule:
    """Add ``rule`` to the registry (``replace=True`` to overwrite an entry of the same name)."""
    if not isinstance(rule, ConversionRule):
        raise TypeError(f"rule: expected a ConversionRule, got {type(rule).__name__}")
    if not rule.name or not isinstance(rule.name, str):
        raise ValueError(f"rule.name must be a non-empty string; got {rule.name!r}")
    with _LOCK:
        if rule.name in _RULES and _RULES[rule.name] is not rule and not replace:
            raise ValueError(f"conversion {rule.name!r} is already registered (pass replace=True to overwrite)")
        _RULES[rule.name] = rule
    return rule


def unregister(name: str) -> None:
    """Remove the conversion ``name`` (a no-op when it is not registered)."""
    with _LOCK:
        _RULES.pop(name, None)


def names() -> list[str]:
    """The registered conversions' names, in registration order."""
    with _LOCK:
        return list(_RULES)


def get(method: str) -> ConversionRule:
    """The conversion registered as ``method``; ``ValueError`` naming the registered ones otherwise."""
    with _LOCK:
        rule = _RULES.get(method) if isinstance(method, str) else None
        if rule is None:
            raise ValueError(f"method must be one of {sorted(_RULES)}; got {method!r}")
        return rule


class _Methods(Mapping):
    """A live read-only view name -> source of the registered conversions (``METHODS``)."""

    def __getitem__(self, name: str) -> str:
        with _LOCK:
            return _RULES[name].source

    def __iter__(self) -> Iterator[str]:
        return iter(names())

    def __len__(self) -> int:
        return len(_RULES)

    def __repr__(self) -> str:
        return repr(dict(self))


#: Conversion methods and their sources (a live view of the registry).
METHODS: Mapping[str, str] = _Methods()

# The built-in entries register themselves, in this order (the order ``METHODS`` lists them in).
from . import mironov  # noqa: E402,F401,I001
from . import improved  # noqa: E402,F401
