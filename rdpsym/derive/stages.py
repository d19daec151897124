"""The derivation engine as an ordered list of stages.

Each stage is a plain function of the :class:`Derivation` in progress: it reads what earlier stages
found, records its steps in the provenance log and stores its own findings (or the reason it found
nothing). A stage that makes the rest pointless (the support could not be split) marks the derivation
``done``. The order is the engine's pipeline (see :mod:`rdpsym.derive.engine`):

    split the support -> check the densities -> applicability -> general order -> alpha = 1 (KL)
    -> alpha = oo -> removable orders -> limit checks -> status

The applicability stage (:mod:`.applicability`) reads the structure of the integrands and, when it
puts them outside every form the template and sympy can integrate, the general order (or the KL) is
reported as "no closed form" with the reason at once, instead of after its time limits.

The whole derivation has a budget of :data:`BUDGET_STEPS` step limits (60 s at the default 20 s, counted
as work: sympy nodes built, :mod:`rdpsym._timeout`):
every stage runs within what is left of it (the general order and the KL leaving a reserve for the
stages after them), and a stage the budget cuts short finds nothing, with the reason. The status stage
always runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import sympy as sp

from .. import _cache
from .applicability import general_order_obstruction, kl_obstruction, max_divergence_obstruction
from .crosscheck import sample_values
from .forms import compact
from .general_order import cosmetic_seconds, general_order
from .limits import check_limits
from .paper_form import paper_form
from .pieces import DerivationError, split_support
from .removable import exceptional_points
from .result import OPTIONAL_STAGES, Status
from .special_orders import kl_divergence, kl_from_below, max_divergence
from .steplog import StepLog
from .._timeout import NODES_PER_SECOND, StepTimeout, time_limit, timeout_count, work_clock

__all__ = ["Derivation", "STAGES", "run_stages", "BUDGET_STEPS"]

#: the derivation's total budget, in step limits (work, as the steps' own limits count it)
BUDGET_STEPS = 3
#: a stage is not started with less than this many seconds of the budget left
MIN_STAGE_SECONDS = 0.5


@dataclass
class Derivation:
    """One derivation in progress: its inputs, its provenance log and what the stages found so far."""

    P: sp.Expr
    Q: sp.Expr
    x: sp.Symbol
    support: sp.Set
    params: Any
    seconds: float
    check_density: bool
    log: StepLog = field(default_factory=StepLog)
    symbols: tuple = ()
    pieces: list | None = None
    expr: sp.Expr | None = None
    cond: sp.Basic = sp.true
    kl: sp.Expr | None = None
    dinf: sp.Expr | None = None
    exceptional: tuple = ()
    #: why the general order / the KL has no closed form, found from the integrands' structure
    no_general: str | None = None
    no_kl: str | None = None
    reasons: list = field(default_factory=list)
    status: Status | None = None
    integer_orders: tuple = ()
    #: when the running stage's share of the budget ends (a :func:`~rdpsym._timeout.work_clock` value), None: no budget
    deadline: float | None = None
    #: set by a stage after which nothing more can be derived
    done: bool = False
    #: the stages that did not run to their end for a reason that need not recur (a time limit, an
    #: unexpected error): :attr:`rdpsym.derive.result.Provenance.expired`
    expired: list = field(default_factory=list)

    def __post_init__(self):
        if not self.symbols:
            self.symbols = tuple(sorted((self.P.free_symbols | self.Q.free_symbols) - {self.x}, key=lambda s: s.name))

    def expire(self, *stages: str) -> None:
        """Record that ``stages`` did not run to their end (each once)."""
        self.expired.extend(s for s in stages if s not in self.expired)

    def points(self, n: int = 3):
        """The deterministic parameter points of the numeric cross-checks."""
        return sample_values(self.symbols, self.params, n)


def split(d: Derivation) -> None:
    """Split the support at the kinks of P and Q (:mod:`.pieces`)."""
    try:
        d.pieces = d.log.timed("split support", split_support, d.P, d.Q, d.x, d.support, seconds=d.seconds,
                               detail=lambda ps: "pieces: " + ", ".join(p.describe() for p in ps))
    except (DerivationError, StepTimeout) as exc:
        d.status = Status.NUMERIC_ONLY
        d.reasons.append(f"support not split: {exc}")
        d.done = True


def densities(d: Derivation) -> None:
    """Check that P and Q are non-negative and integrate (sum) to 1 (:mod:`.checks`), if asked to."""
    if d.check_density:
        from .checks import check_densities

        check_densities(d.P, d.Q, d.x, d.support, d.pieces, d.symbols, d.params, d.seconds, d.log)


def applicability(d: Derivation) -> None:
    """Whether the template can apply at all (:mod:`.applicability`): a structural test of the integrands
    of the general order and of the KL, recorded in the provenance either way."""
    d.no_general = d.log.timed("applicability (general order)", general_order_obstruction, d.pieces, d.x, d.seconds,
                               detail=lambda r: f"no closed form: {r}" if r else "no obstruction found")
    d.no_kl = d.log.timed("applicability (KL)", kl_obstruction, d.pieces, d.x, d.seconds,
                          detail=lambda r: f"no closed form: {r}" if r else "no obstruction found")


def general(d: Derivation) -> None:
    """The general order alpha in (0, 1) u (1, oo) with its finiteness conditions (:mod:`.general_order`)."""
    if d.no_general:
        d.expr, d.cond = None, sp.true
        d.reasons.append(f"general order not derived: no closed form: {d.no_general}")
        return
    try:
        d.expr, d.cond = general_order(d.pieces, d.x, d.symbols, d.params, d.seconds, d.log, d.deadline)
        d.expr = paper_form(d.expr, d.symbols, d.params, cosmetic_seconds(d.seconds, d.deadline), d.cond, d.log)
    except (DerivationError, StepTimeout) as exc:
        d.expr, d.cond = None, sp.true
        d.reasons.append(f"general order not derived: {exc}")


def kl(d: Derivation) -> None:
    """alpha = 1: E_P[log P/Q] directly, else the limit from below of the general form (:mod:`.special_orders`)."""
    seconds, log = d.seconds, d.log

    def direct():
        if d.no_kl:
            raise DerivationError(f"no closed form: {d.no_kl}")
        value = kl_divergence(d.pieces, d.x, seconds, log)
        value = compact(value, d.points(), cosmetic_seconds(seconds, d.deadline))
        if value.has(sp.meijerg):
            # same rule as for the general order: a Meijer G form is not a usable closed form
            raise DerivationError(f"only a Meijer G-function form was found: {sp.sstr(value)}")
        return value

    value, exc = _attempt(d, "kl", direct)
    if exc is not None:
        kl_reason = f"KL not derived: {exc if d.no_kl else f'{type(exc).__name__}: {exc}'}"
        if d.expr is not None:
            value, exc2 = _attempt(d, "kl", log.timed, "KL as lim alpha -> 1-", kl_from_below, d.expr, d.points(),
                                   seconds, seconds=seconds,
                                   detail=lambda v: f"KL = {sp.sstr(v)} (direct derivation failed: {kl_reason})")
            if exc2 is not None:
                kl_reason += f"; lim alpha -> 1- not taken: {type(exc2).__name__}: {exc2}"
        if value is None:
            d.reasons.append(kl_reason)
    d.kl = paper_form(value, d.symbols, d.params, cosmetic_seconds(seconds, d.deadline), log=log)


def sup(d: Derivation) -> None:
    """alpha = oo: ess sup over {P > 0} of log P/Q (:mod:`.special_orders`)."""
    why = max_divergence_obstruction(d.pieces, d.x, d.seconds) if d.no_general else None
    if why:
        d.dinf = None
        d.reasons.append(f"D_inf not derived: {why}")
        return

    def derived():
        dinf = d.log.timed("alpha = oo", max_divergence, d.pieces, d.x, d.seconds, d.log,
                           detail=lambda v: f"ess sup log P/Q = {sp.sstr(v)}")
        return paper_form(dinf, d.symbols, d.params, cosmetic_seconds(d.seconds, d.deadline), log=d.log)

    d.dinf, exc = _attempt(d, "sup", derived)
    if exc is not None:
        d.reasons.append(f"D_inf not derived: {type(exc).__name__}: {exc}")


def removable(d: Derivation) -> None:
    """The removable singular orders of the general form (:mod:`.removable`); a disagreement drops it."""
    if d.expr is None or isinstance(d.expr, sp.Piecewise) or d.expr == sp.oo:
        return
    try:
        d.exceptional = exceptional_points(d.expr, d.pieces, d.x, d.symbols, d.params, d.seconds, d.log)
    except DerivationError as exc:
        d.reasons.append(str(exc))
        d.expr = None


def limits(d: Derivation) -> None:
    """lim alpha -> 1 is the KL and lim alpha -> oo is D_inf (:mod:`.limits`); a disagreement drops the form."""
    if d.expr is None:
        return
    try:
        check_limits(d.expr, d.cond, d.kl, d.dinf, d.points(), d.seconds, d.log)
    except DerivationError as exc:
        d.reasons.append(f"limit check failed: {exc}")
        d.expr = None


def status(d: Derivation) -> None:
    """closed_form, or numeric_only when no usable closed form is left (with the reason)."""
    if d.expr is None:
        d.status = Status.NUMERIC_ONLY
    elif d.expr.has(sp.Integral, sp.Sum, sp.Limit):
        d.status = Status.NUMERIC_ONLY
        d.reasons.append("the expression still contains an unevaluated integral, sum or limit")
        d.expr = None
    elif d.expr.has(sp.zoo, sp.nan):
        # a form undefined somewhere (log(0) or 0/0 left in a branch) is no closed form: its value there
        # is unknown, never a number (a divergence is a number in [0, +oo])
        d.status = Status.NUMERIC_ONLY
        d.reasons.append(f"the general form is undefined (zoo or nan) in a branch: {sp.sstr(d.expr)}")
        d.expr = None
    elif d.expr.has(sp.meijerg):
        # a Meijer G form is exact but no usable closed form: its evaluation can take minutes
        d.status = Status.NUMERIC_ONLY
        d.reasons.append(f"only a Meijer G-function form was found: {sp.sstr(d.expr)}")
        d.expr = None
    else:
        d.status = Status.CLOSED_FORM


def integer_orders(d: Derivation) -> None:
    """Without a general form: the integer orders 2, 3 exactly, by the multinomial expansion of P^k
    (:mod:`.integer_order`), so the numeric curve has exact points (within a few seconds in all)."""
    if d.expr is not None or d.status is not Status.NUMERIC_ONLY or d.pieces is None:
        return
    from .applicability import integer_order_obstruction
    from .integer_order import INTEGER_ORDERS_RECORDED, INTEGER_ORDERS_SECONDS, recorded_integer_orders

    k = INTEGER_ORDERS_RECORDED[0]
    why = integer_order_obstruction(d.pieces, d.x, k, d.seconds) if d.no_general else None
    if why:
        # no integer order derives when the lowest does not: recorded at once, no time limit spent
        d.log.note("integer orders", f"none derived: no closed form: {why}")
        return
    seconds = min(d.seconds, INTEGER_ORDERS_SECONDS)
    try:
        d.integer_orders = d.log.timed(
            "integer orders", recorded_integer_orders, d.P, d.Q, d.x, d.support, d.params, seconds,
            seconds=seconds + 1, detail=lambda rows: ("; ".join(f"D_{k} = {sp.sstr(v)}" for k, v in rows) if rows
                                                      else "none derived by the multinomial expansion"))
    except StepTimeout:
        d.integer_orders = ()


#: the engine's pipeline, in order
STAGES: tuple[Callable[[Derivation], None], ...] = (split, densities, applicability, general, kl, sup, removable, limits,
                                                    status, integer_orders)


#: seconds (in step limits) that a stage leaves to the stages after it: the general order and the KL
#: may run into their time limits, and D_inf (often derivable when they are not) must still get its turn
_RESERVE = {general: 0.5, kl: 0.25}
#: what a stage that the budget cut short leaves behind: its reason, and the findings it may not keep
_CUT = {
    split: ("support not split", ()),
    densities: ("densities not checked", ()),
    applicability: ("applicability not decided", ()),
    general: ("general order not derived", ("expr",)),
    kl: ("KL not derived", ("kl",)),
    sup: ("D_inf not derived", ("dinf",)),
    removable: ("removable orders not all found", ()),
    limits: ("limit checks not completed", ()),
    integer_orders: ("integer orders not derived", ()),
}


def _attempt(d: Derivation, stage: str, fn, *args, **kwargs):
    """``(fn(*args, **kwargs), None)``, or ``(None, the exception)`` when it failed: an optional stage's
    step that fails in any way drops its own value (with the reason), never the derivation."""
    try:
        return fn(*args, **kwargs), None
    except (DerivationError, StepTimeout, Exception) as exc:  # noqa: BLE001 - a stage boundary: any failure of an optional stage only drops it (an unexpected one expires it, below)
        _unexpected(d, stage, exc)
        return None, exc


def _unexpected(d: Derivation, stage: str, exc: BaseException) -> None:
    """A stage's handler caught ``exc``: anything but the engine's own "cannot" (DerivationError) or a
    time limit (counted by run_stages) is a failure that need not recur, so the stage is recorded as
    expired and the result is not cached."""
    if not isinstance(exc, (DerivationError, StepTimeout)):
        d.expire(stage)


def _cut_short(d: Derivation, stage, budget: float) -> None:
    what, drop = _CUT.get(stage, (f"stage {stage.__name__} not completed", ()))
    d.expire(stage.__name__)  # never cached unless the stage is optional (Provenance.expired)
    # the budget counts work (sympy nodes built, rdpsym._timeout), not the clock: say what it counted
    why = (f"cut short: the derivation's work budget of {budget:g} s ({int(budget * NODES_PER_SECOND):,} sympy "
           f"nodes at {NODES_PER_SECOND:,} a second) ran out")
    for name in drop:
        setattr(d, name, None)
    if stage is split:
        d.status, d.done = Status.NUMERIC_ONLY, True
    d.log.note(f"stage {stage.__name__}", f"{what}: {why}")
    if stage in (densities, applicability, removable, limits, integer_orders):
        # nothing is lost but a check or a special order, as when these stages' own steps time out: the
        # checks are recorded as not done, and an order whose removable value was not found raises
        # when evaluated there (it is singular in the form), it is never a wrong number
        return
    if d.reasons and d.reasons[-1].startswith(what):
        d.reasons[-1] += f"; {why}"  # the stage's own reason (its steps that timed out) comes first
    else:
        d.reasons.append(f"{what}: {why}")


def _nothing_to_compute(d: Derivation, stage) -> bool:
    """Whether ``stage`` only records what is decided already (it then runs even out of budget, so
    that the reason it gives is the real one)."""
    if stage is general:
        return bool(d.no_general)
    if stage is kl:
        return bool(d.no_kl) and d.expr is None
    return stage in (removable, limits) and d.expr is None


def run_stages(d: Derivation, stages=STAGES) -> Derivation:
    """Run ``stages`` in order on ``d`` until one marks it done, within the time budget.

    The budget is :data:`BUDGET_STEPS` times the step limit ``d.seconds``; every stage but
    :func:`status` runs under a time limit of what is left (less its reserve), and its steps' limits are
    at most that. A stage cut short leaves its findings unset with the reason (:data:`_CUT`). A stage in
    which a time limit expired (its own or one of its steps', even one caught and turned into a fallback)
    is recorded in ``d.expired``: the result is then not cached, unless the stage is optional
    (:data:`~rdpsym.derive.result.OPTIONAL_STAGES`: its gap is recorded and its expired limits are
    excused, :func:`rdpsym._cache.excuse_timeouts`).
    """
    step = d.seconds
    budget = BUDGET_STEPS * step
    deadline = work_clock() + budget  # work: the stages' limits count nodes built, not seconds
    try:
        for stage in stages:
            before = timeout_count()
            if stage is status or _nothing_to_compute(d, stage):
                stage(d)
                continue
            left = deadline - work_clock() - _RESERVE.get(stage, 0) * step
            if left < MIN_STAGE_SECONDS:
                _cut_short(d, stage, budget)
            else:
                d.seconds, d.deadline = min(step, left), work_clock() + left
                try:
                    with time_limit(left):
                        stage(d)
                except StepTimeout:
                    _cut_short(d, stage, budget)
                d.deadline = None
            expired = timeout_count() - before
            if expired:
                d.expire(stage.__name__)
            if stage.__name__ in OPTIONAL_STAGES and stage.__name__ in d.expired:
                _cache.excuse_timeouts(expired)
                d.log.note(f"stage {stage.__name__}", "a time limit expired: what was not derived in time is "
                                                      "evaluated numerically (an optional stage: the result is "
                                                      "kept with this gap)")
            if d.done:
                break
    finally:
        d.seconds, d.deadline = step, None
    return d
