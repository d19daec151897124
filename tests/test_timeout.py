"""Time limits of symbolic steps (rdpsym.derive.timeout) in the main thread, in other threads and in
the task threads of daemonic worker processes (Dask's)."""

import multiprocessing
import threading
import time

import pytest

from rdpsym.derive.timeout import StepTimeout, run_with_time_limit


def _slow():
    time.sleep(5)
    return "late"


def _answer(x):
    return 2 * x


def test_main_thread_step_is_interrupted():
    start = time.monotonic()
    with pytest.raises(StepTimeout):
        run_with_time_limit(_slow, seconds=0.2)
    assert time.monotonic() - start < 3


def test_other_thread_step_is_interrupted_in_a_child_process():
    out = {}

    def body():
        try:
            run_with_time_limit(_slow, seconds=0.2)
        except StepTimeout as exc:
            out["error"] = exc
        out["value"] = run_with_time_limit(_answer, 21, seconds=5)

    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    assert isinstance(out.get("error"), StepTimeout) and out["value"] == 42


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
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_daemon_target, args=(child,), daemon=True)
    proc.start()
    assert parent.poll(20)
    assert parent.recv() == 42
    proc.join(5)


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
    from rdpsym.derive.timeout import default_step_seconds

    monkeypatch.setenv("RDPSYM_STEP_SECONDS", "0")
    with pytest.raises(ValueError, match="RDPSYM_STEP_SECONDS"):
        default_step_seconds()
