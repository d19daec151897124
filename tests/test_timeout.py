"""Time limits of symbolic steps (rdpsym._timeout) in the main thread, in other threads and in
the task threads of daemonic worker processes (Dask's)."""

import multiprocessing
import threading
import time

import pytest

from rdpsym._timeout import StepTimeout, run_with_time_limit


def _slow():
    time.sleep(5)
    return "late"


def _answer(x):
    return 2 * x


def test_main_thread_step_is_interrupted():
    start = time.monotonic()
    with pytest.raises(StepTimeout):
        run_with_time_limit(_slow, seconds=0.2, clock="wall")
    assert time.monotonic() - start < 3


def test_other_thread_step_is_interrupted_in_a_child_process():
    out = {}

    def body():
        try:
            run_with_time_limit(_slow, seconds=0.2, clock="wall")
        except StepTimeout as exc:
            out["error"] = exc
        out["value"] = run_with_time_limit(_answer, 21, seconds=5)

    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    assert isinstance(out.get("error"), StepTimeout) and out["value"] == 42


def _in_a_daemonic_process(target):
    """What ``target(conn)`` sends back when run in a forked daemonic process (as a Dask worker is)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(child,), daemon=True)
    proc.start()
    assert parent.poll(20)
    value = parent.recv()
    proc.join(5)
    return value


def _daemon_target(conn):
    result = {}

    def body():
        try:
            result["value"] = run_with_time_limit(_answer, 21, seconds=5)
        except BaseException as exc:  # noqa: BLE001 - sent to the test
            result["value"] = repr(exc)

    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    conn.send(result.get("value"))


def test_thread_of_a_daemonic_process_runs_the_step():
    """Dask runs tasks in threads of daemonic worker processes, which may not fork a child."""
    assert _in_a_daemonic_process(_daemon_target) == 42


@pytest.mark.parametrize("bad", [-1, 0, float("nan"), float("inf"), "soon", None])
def test_time_limits_must_be_positive_finite_seconds(bad):
    """Review finding: -1 raised an itimer error, NaN a confusing one, and 0 switched the limit off."""
    import rdpsym
    from rdpsym import mechanisms

    with pytest.raises(ValueError, match="seconds"):
        run_with_time_limit(abs, -1, seconds=bad if bad is not None else "x")
    if bad is not None:
        with pytest.raises(ValueError, match="step_seconds"):
            rdpsym.rdp(mechanisms.get("laplace"), step_seconds=bad, cache=False)
    assert run_with_time_limit(abs, -1, seconds=5) == 1


def test_time_limit_from_the_environment_is_checked(monkeypatch):
    from rdpsym._timeout import default_step_seconds

    monkeypatch.setenv("RDPSYM_STEP_SECONDS", "0")
    with pytest.raises(ValueError, match="RDPSYM_STEP_SECONDS"):
        default_step_seconds()


# --------------------------------------------------------------------------------------------------
# one robust time limit (issue 13, part 7)
# --------------------------------------------------------------------------------------------------
def _swallows_in_a_loop():
    end = time.monotonic() + 6
    while time.monotonic() < end:
        try:
            sum(range(2000))
        except BaseException:  # noqa: BLE001 - the point of the test
            pass
    return "late"


def _swallows_with_a_bare_except():
    end = time.monotonic() + 6
    while time.monotonic() < end:
        try:
            time.sleep(0.01)
        except:  # noqa: E722 - the point of the test
            continue
    return "late"


def _catches_exception():
    try:
        time.sleep(6)
    except Exception:  # noqa: BLE001 - must not see the time limit
        return "caught"
    return "late"


def _returns_late():
    try:
        time.sleep(0.6)
    except BaseException:  # noqa: BLE001 - swallowed once, then returns after its deadline
        time.sleep(0.6)
    return "late"


def _no_alarm(fn):
    """``fn`` with SIGALRM ignored: it returns late (as a step in a thread of a daemonic process does)."""
    import signal

    def run():
        previous = signal.signal(signal.SIGALRM, signal.SIG_IGN)
        try:
            return fn()
        finally:
            signal.signal(signal.SIGALRM, previous)
    return run


def test_the_time_limit_is_a_base_exception():
    from rdpsym import _timeout as timeout
    from rdpsym.execution import local

    assert issubclass(StepTimeout, BaseException) and not issubclass(StepTimeout, Exception)
    # one implementation: the execution layer's serial back end uses the same one
    assert not hasattr(local, "_SerialTimeout") and local.time_limit is timeout.time_limit


@pytest.mark.parametrize("step", [_swallows_in_a_loop, _swallows_with_a_bare_except, _catches_exception],
                         ids=["except-BaseException-in-a-loop", "bare-except-continue", "except-Exception"])
def test_a_step_that_swallows_the_timeout_still_stops(step):
    """Review finding: a test sat 25 minutes in a 3 s step; the alarm was lost in an `except`."""
    start = time.monotonic()
    with pytest.raises(StepTimeout):
        run_with_time_limit(step, seconds=0.5, clock="wall")
    assert time.monotonic() - start < 1.0  # ~2x the limit


def test_the_context_manager_stops_a_swallowing_block():
    from rdpsym._timeout import time_limit

    start = time.monotonic()
    with pytest.raises(StepTimeout):
        with time_limit(0.3, clock="wall"):
            _swallows_in_a_loop()
    assert time.monotonic() - start < 0.6


def test_a_step_that_returns_after_its_deadline_raises():
    start = time.monotonic()
    with pytest.raises(StepTimeout):
        run_with_time_limit(_returns_late, seconds=0.3, clock="wall")
    assert time.monotonic() - start < 1.0
    # even without any alarm (as in a Dask task thread): the deadline is re-checked on return
    with pytest.raises(StepTimeout):
        run_with_time_limit(_no_alarm(_returns_late), seconds=0.3, clock="wall")


def test_nested_limits_the_inner_cannot_extend_the_outer():
    from rdpsym._timeout import time_limit

    start = time.monotonic()
    caught_inner = []
    with pytest.raises(StepTimeout):
        with time_limit(0.4, clock="wall"):
            try:
                run_with_time_limit(time.sleep, 5, seconds=30, clock="wall")  # the inner limit is capped at the outer
            except StepTimeout:  # a fallback that swallows the outer limit's timeout ...
                caught_inner.append(time.monotonic() - start)
            for _ in range(200):  # ... and a loop that keeps swallowing it
                try:
                    time.sleep(0.01)
                except StepTimeout:
                    pass
            # ... and a new step after the outer deadline does not even start
            run_with_time_limit(time.sleep, 5, seconds=30, clock="wall")
    took = time.monotonic() - start
    assert caught_inner and caught_inner[0] < 0.6 and took < 0.8
    # an inner limit shorter than the outer expires on its own, and the outer goes on
    with time_limit(5, clock="wall"):
        with pytest.raises(StepTimeout):
            run_with_time_limit(time.sleep, 5, seconds=0.2, clock="wall")
        assert run_with_time_limit(_answer, 21, seconds=1) == 42


def test_after_a_limit_the_alarm_and_tracing_are_restored():
    import signal
    import sys

    handler = signal.getsignal(signal.SIGALRM)
    trace = sys.gettrace()
    with pytest.raises(StepTimeout):
        run_with_time_limit(_swallows_in_a_loop, seconds=0.2, clock="wall")
    assert signal.getsignal(signal.SIGALRM) == handler and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert sys.gettrace() is trace
    time.sleep(0.2)  # no stray alarm fires later
    assert run_with_time_limit(_answer, 21, seconds=1) == 42


def test_a_thread_step_is_stopped_and_nested_limits_hold_in_threads():
    from rdpsym._timeout import time_limit

    out = {}

    def body():
        start = time.monotonic()
        try:
            with time_limit(0.3, clock="wall"):  # the enclosing limit caps the step's 30 s (in a forked child)
                run_with_time_limit(_swallows_in_a_loop, seconds=30, clock="wall")
        except StepTimeout as exc:
            out["error"] = exc
        out["took"] = time.monotonic() - start
        out["value"] = run_with_time_limit(_answer, 21, seconds=5)

    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    assert isinstance(out.get("error"), StepTimeout) and out["took"] < 1.5 and out["value"] == 42


def _daemon_late(conn):
    from rdpsym._timeout import time_limit

    result = {}

    def body():
        try:
            run_with_time_limit(time.sleep, 0.5, seconds=0.2, clock="wall")
            result["late"] = "returned"
        except StepTimeout:
            result["late"] = "StepTimeout"
        try:  # a nested step after the enclosing deadline does not start
            with time_limit(0.2, clock="wall"):
                time.sleep(0.3)
                run_with_time_limit(_answer, 21, seconds=5)
            result["nested"] = "ran"
        except StepTimeout:
            result["nested"] = "StepTimeout"

    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    conn.send(result)


def test_a_thread_of_a_daemonic_process_rechecks_the_deadline():
    assert _in_a_daemonic_process(_daemon_late) == {"late": "StepTimeout", "nested": "StepTimeout"}


def test_serial_sweep_timeout_is_robust_and_a_step_timeout_is_a_failure():
    from rdpsym.execution import run_tasks

    def task(kind):
        if kind == "swallow":
            return _swallows_in_a_loop()
        if kind == "step":
            return run_with_time_limit(time.sleep, 5, seconds=0.1, clock="wall")  # not caught: the task fails
        return kind

    start = time.monotonic()
    report = run_tasks(task, ["swallow", "step", "ok"], executor="serial", timeout=0.5, progress=False)
    assert time.monotonic() - start < 3
    assert [e.status.value for e in report] == ["timeout", "failed", "done"]
    assert "StepTimeout" in report[1].error


def test_a_timed_out_derivation_is_not_cached(tmp_path, monkeypatch):
    """Review finding: timed-out results were written to the disk cache, so a slow moment stuck."""
    import sympy as sp

    from rdpsym import renyi_divergence
    from rdpsym.derive import cache as cache_module

    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    x = sp.Symbol("x", real=True)
    b = sp.Symbol("b", positive=True)
    P = sp.exp(-sp.Abs(x) / b) / (2 * b)
    Q = sp.exp(-sp.Abs(x - 1) / b) / (2 * b)
    start = time.monotonic()
    r = renyi_divergence(P, Q, x, sp.S.Reals, step_seconds=0.001)
    assert time.monotonic() - start < 10
    assert "time limit" in r.provenance.describe() or "timed out" in r.provenance.describe()
    assert not cache_module.cacheable(r)
    assert not list(tmp_path.glob("derivation-*.rdpsym"))
    # a derivation in which a caught timeout left no trace in the result is not cached either
    calls = []

    def fake_derive(*args):
        calls.append(args)
        with pytest.raises(StepTimeout):
            run_with_time_limit(time.sleep, 1, seconds=0.01, clock="wall")
        return r.__class__(expr=None, status=r.status, reason="", provenance=r.provenance.__class__())

    monkeypatch.setattr("rdpsym.derive.engine.derive_uncached", fake_derive)
    renyi_divergence(P, Q, x, sp.S.Reals, step_seconds=3)
    renyi_divergence(P, Q, x, sp.S.Reals, step_seconds=3)
    assert len(calls) == 2 and not list(tmp_path.glob("derivation-*.rdpsym"))


def test_in_process_memos_keep_no_timed_out_result():
    from rdpsym.derive.cache import memoize_derivation

    calls = []

    @memoize_derivation
    def derive(slow):
        calls.append(slow)
        try:
            run_with_time_limit(time.sleep, 1 if slow else 0, seconds=0.05, clock="wall")
        except StepTimeout:
            pass  # a fallback: the value is what a timed-out step gives
        return "value"

    derive(True), derive(True), derive(False), derive(False)
    assert calls == [True, True, False]


def test_a_reflection_search_past_its_time_limit_shows_no_symmetry_and_is_not_cached(monkeypatch):
    """A simplification of the reflection search that ends after its limit shows nothing, even one that
    would have found the symmetry: both directions are derived, the provenance says a step timed out,
    and no cache keeps the result (fail closed)."""
    import sympy as sp

    import rdpsym
    from rdpsym import mechanisms
    from rdpsym.accounting import composable_exactly
    from rdpsym.derive import pairs
    from rdpsym.derive.cache import cacheable

    rr = mechanisms.get("randomized_response")
    pair = rr.pairs[0]
    assert pairs.reflection_symmetry(pair.P, pair.Q, rr.variable, rr.support) is not None  # in time
    before = rdpsym.rdp(rr)
    assert cacheable(before) and composable_exactly(before)

    def late_zero(expr):  # "equal", but only after the limit: it builds more nodes than its budget
        for i in range(20_000):
            sp.Symbol(f"_late_zero_{i}")
        return sp.S.Zero

    monkeypatch.setattr(pairs, "REFLECTION_SECONDS", 0.1)
    monkeypatch.setattr(pairs, "_simplified", late_zero)
    assert pairs.reflection_symmetry(pair.P, pair.Q, rr.variable, rr.support) is None
    result = rdpsym.rdp(rr)
    (note,) = [s for s in result.provenance.steps if s.name == "symmetry"]
    assert "timed out" in note.detail and note.expr is None, note
    assert any(s.name.startswith("D_alpha(Q||P)") for s in result.provenance.steps)  # both directions
    assert not cacheable(result) and not composable_exactly(result)
    assert result.status == before.status  # the same curve, derived the longer way
    assert sp.simplify(result.expr - before.expr) == 0


# --------------------------------------------------------------------------------------------------
# limits that count work: the same outcome on a fast, a slow and a busy machine
# --------------------------------------------------------------------------------------------------
def _build_nodes(count, pause_every=0, pause=0.0):
    """Build ``count`` new sympy nodes (fresh symbols), sleeping ``pause`` s every ``pause_every`` of
    them: the same work done by a slower (or busier) machine."""
    import sympy as sp

    for i in range(count):
        sp.Dummy(f"n{i}")
        if pause_every and i % pause_every == 0:
            time.sleep(pause)


def _nodes_when_stopped(seconds, **slowdown):
    from rdpsym._timeout import time_limit, work_done

    start = work_done()
    with pytest.raises(StepTimeout, match="work budget"):
        with time_limit(seconds):
            _build_nodes(10**7, **slowdown)
    return work_done() - start


def test_a_work_limit_stops_at_the_same_node_on_a_fast_and_a_slow_machine():
    """The default limit counts sympy nodes built in the thread (NODES_PER_SECOND per second of the
    limit), so a step three times slower gives up at the same point of its work; a wall-clock limit
    would have stopped it three times earlier."""
    from rdpsym._timeout import NODES_PER_SECOND

    fast = _nodes_when_stopped(0.2)
    start = time.monotonic()
    slow = _nodes_when_stopped(0.2, pause_every=50, pause=0.002)
    assert fast == slow == int(0.2 * NODES_PER_SECOND)
    assert time.monotonic() - start > 0.2  # it did run past 0.2 s of wall-clock time, and went on


def test_a_work_limit_that_does_no_work_stops_at_its_hang_guard_and_says_so():
    from rdpsym._timeout import GUARD_FACTOR, time_limit

    start = time.monotonic()
    with pytest.raises(StepTimeout, match="hang guard") as info:
        with time_limit(0.05):
            time.sleep(5)
    took = time.monotonic() - start
    assert info.value.guard and GUARD_FACTOR * 0.05 <= took < GUARD_FACTOR * 0.05 + 1


def test_an_inner_work_limit_cannot_extend_the_outer_one():
    from rdpsym._timeout import NODES_PER_SECOND, time_limit, work_done

    start = work_done()
    with pytest.raises(StepTimeout) as info:
        with time_limit(0.1) as outer:
            with time_limit(30):
                _build_nodes(10**6)
    assert info.value.limit_id == outer.id and work_done() - start == int(0.1 * NODES_PER_SECOND)


def test_a_step_forked_from_a_thread_keeps_the_work_budget():
    """Off the main thread a step runs in a forked child: it continues the budget in work, not seconds."""
    out = {}

    def body():
        try:
            run_with_time_limit(_build_nodes, 10**6, seconds=0.1)
        except StepTimeout as exc:
            out["error"] = str(exc)
        out["value"] = run_with_time_limit(_answer, 21, seconds=5)

    t = threading.Thread(target=body)
    t.start()
    t.join(30)
    assert "work budget" in out.get("error", "") and out["value"] == 42


_DERIVE_WITH_A_SMALL_BUDGET = """
import json, sys, threading, time
import sympy as sp
from rdpsym import renyi_divergence
x = sp.Symbol("x", real=True)
b = sp.Symbol("b", positive=True)
stop = threading.Event()
def hog():  # a busy neighbour: a CPU-bound thread competing for the interpreter
    while not stop.is_set():
        sum(range(1000))
if sys.argv[1] == "busy":
    threading.Thread(target=hog, daemon=True).start()
r = renyi_divergence(sp.exp(-sp.Abs(x) / b) / (2 * b), sp.exp(-sp.Abs(x - 1) / b) / (2 * b), x, sp.S.Reals,
                     step_seconds=1, cache=False)
stop.set()
print(json.dumps([str(r.status), sp.srepr(r.expr), list(r.provenance.expired), r.reason]))
"""


def test_a_derivation_cut_short_by_its_budget_is_the_same_on_an_idle_and_a_busy_machine(tmp_path):
    """Laplace with a 1 s step (30,000 nodes) runs out of budget in some stage; with a CPU-bound thread
    competing for the interpreter it runs twice as long in wall-clock time, and gives the same result,
    the same expired stages and the same reasons (each in a fresh process with the same hash seed: the
    node count of a derivation depends on what sympy has cached, never on the clock)."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONHASHSEED": "1", "RDPSYM_NO_CACHE": "1"}
    got = {}
    for load in ("idle", "busy"):
        run = subprocess.run([sys.executable, "-c", _DERIVE_WITH_A_SMALL_BUDGET, load], capture_output=True,
                             text=True, env=env, timeout=600, cwd=tmp_path)
        assert run.returncode == 0, run.stderr[-2000:]
        got[load] = json.loads(run.stdout.strip().splitlines()[-1])
    # the numbers in the reasons (what was left of the budget when a step began) vary by a few nodes in
    # 60,000 from one process to the next, idle or busy alike (the order of objects hashed by address)
    import re

    for load in got:
        got[load][3] = re.sub(r"[0-9][0-9.,]*", "#", got[load][3])
    assert got["idle"] == got["busy"]
    assert got["idle"][2], got["idle"]  # the budget did cut the derivation short somewhere
