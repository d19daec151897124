"""The execution layer (rdpsym.execution): same reports serially, on processes and on Dask; failures,
dead workers and time limits reported per task; resume; bad input."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from functools import partial

import mpmath
import pytest
import sympy as sp

from rdpsym._numbers import ArgumentError
from rdpsym.execution import (SchedulerUnreachable, SweepError, SweepInterrupted, TaskStatus, describe_executor,
                              iter_tasks, local_cores, run_tasks, runs_serially)


# -- task functions (module level: picklable for spawn and Dask) --------------------------------------
def seeded_integral(task):
    """A high-precision computation whose input comes from the task's own seed."""
    seed, dps = task
    rng = random.Random(seed)
    p, q = rng.randint(1, 9), rng.randint(1, 9)
    if seed % 7 == 3:
        raise ValueError(f"seed {seed} is refused")
    with mpmath.workdps(dps):
        a = mpmath.mpf(p) / q
        return seed, +mpmath.quad(lambda t: mpmath.exp(-a * t * t), [0, mpmath.inf])


def square(x):
    return x * x


def sleepy(x):
    time.sleep(x)
    return x


def dies_on(task, bad=5):
    if task == bad:
        os._exit(7)
    return task


def dies_once(task, marker):
    # the first attempt at task 2 kills its worker; the retry succeeds (a transient loss, e.g. OOM)
    if task == 2 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(9)
    return task


def returns_unpicklable(task):
    return (lambda: task) if task == 1 else task


def nested_sweep(n):
    # a task that runs a sweep of its own (regress -> verify): it runs serially in the worker
    report = run_tasks(square, range(n), progress=False)
    return report.executor, report.results()


TASKS = [(seed, 40) for seed in range(12)]


def test_serial_and_parallel_reports_are_identical():
    serial = run_tasks(seeded_integral, TASKS, executor="serial", progress=False)
    parallel = run_tasks(seeded_integral, TASKS, executor=2, progress=False)
    assert serial == parallel
    assert [e.index for e in parallel] == list(range(len(TASKS)))
    assert parallel.counts == {"done": 10, "failed": 2, "timeout": 0, "cancelled": 0}
    # the values are the exact mpmath numbers, and correct: int_0^oo exp(-a t^2) dt = sqrt(pi/a)/2
    with mpmath.workdps(40):
        for e in parallel:
            if e.ok:
                seed, value = e.result
                rng = random.Random(seed)
                a = mpmath.mpf(rng.randint(1, 9)) / rng.randint(1, 9)
                assert abs(value - mpmath.sqrt(mpmath.pi / a) / 2) < mpmath.mpf(10) ** -38
    # a deliberately different computation is seen as different
    other = run_tasks(seeded_integral, [(s, 20) for s, _ in TASKS], executor=2, progress=False)
    assert other != parallel


def test_real_numeric_sweep_is_identical_serial_and_parallel():
    from rdpsym import mechanisms
    from rdpsym.numeric import numeric_divergence

    m = mechanisms.get("laplace")
    pair = m.pairs[0].member(m.params["sensitivity"])  # the family's pair at t = sensitivity
    fn = partial(_laplace_point, pair.P, pair.Q, m.variable, m.support)
    pts = [(sp.Rational(a), sp.Rational(b)) for a in ("3/2", "5") for b in ("1/2", "2")]
    serial = run_tasks(fn, pts, executor="serial", progress=False)
    parallel = run_tasks(fn, pts, executor=2, progress=False)
    assert serial == parallel and serial.ok
    assert all(isinstance(e.result, mpmath.mpf) for e in parallel)
    assert numeric_divergence  # imported for the partial below


def _laplace_point(P, Q, x, support, point):
    from rdpsym.numeric import numeric_divergence

    alpha, b = point
    return numeric_divergence(P, Q, x, support, alpha, {"b": b, "sensitivity": 1}, dps=30).value


def test_report_is_in_task_order_while_results_stream_in_completion_order():
    arrived = []
    report = run_tasks(sleepy, [0.6, 0.0, 0.3, 0.0], executor=4, progress=False, on_result=arrived.append)
    assert [e.result for e in report] == [0.6, 0.0, 0.3, 0.0]
    assert [e.index for e in arrived] != [0, 1, 2, 3]  # the slow first task arrived last
    assert sorted(e.index for e in arrived) == [0, 1, 2, 3]
    assert [e.index for e in iter_tasks(square, range(5), executor="serial")] == [0, 1, 2, 3, 4]


def test_a_task_that_raises_is_reported_and_the_others_are_kept():
    report = run_tasks(seeded_integral, [(3, 30), (1, 30)], executor=2, progress=False)
    bad, good = report
    assert bad.status is TaskStatus.FAILED and bad.error == "ValueError: seed 3 is refused"
    assert "raise ValueError" in bad.traceback
    assert good.ok and good.result[0] == 1
    with pytest.raises(SweepError, match="seed 3 is refused"):
        report.results()


def test_a_killed_worker_is_reported_and_the_other_tasks_finish():
    report = run_tasks(dies_on, range(8), executor=2, progress=False, retries=1)
    assert [e.status for e in report].count(TaskStatus.FAILED) == 1
    lost = report[5]
    assert lost.status is TaskStatus.FAILED and "worker process died" in lost.error and "exit code 7" in lost.error
    assert lost.attempts == 2
    assert [e.result for e in report if e.ok] == [0, 1, 2, 3, 4, 6, 7]
    once = run_tasks(dies_on, [5], executor=2, progress=False, retries=0)
    assert once[0].attempts == 1 and once[0].status is TaskStatus.FAILED


def test_a_worker_lost_once_is_retried(tmp_path):
    report = run_tasks(partial(dies_once, marker=str(tmp_path / "m")), range(4), executor=2, progress=False)
    assert report.ok and report.results() == [0, 1, 2, 3]
    assert report[2].attempts == 2


def test_timeout_stops_one_task_and_keeps_the_others():
    start = time.monotonic()
    report = run_tasks(sleepy, [0.0, 30.0, 0.1, 0.0], executor=2, timeout=1.0, progress=False)
    assert time.monotonic() - start < 8
    assert [e.status.value for e in report] == ["done", "timeout", "done", "done"]
    assert "time limit of 1 s" in report[1].error


def test_serial_timeout_uses_an_alarm():
    start = time.monotonic()
    report = run_tasks(sleepy, [30.0, 0.0], executor="serial", timeout=0.5, progress=False)
    assert time.monotonic() - start < 5
    assert [e.status.value for e in report] == ["timeout", "done"]


def test_an_unpicklable_result_is_reported():
    report = run_tasks(returns_unpicklable, [0, 1, 2], executor=2, progress=False)
    assert [e.status.value for e in report] == ["done", "failed", "done"]
    assert "picklable" in report[1].error


def test_resume_from_a_results_file_skips_finished_tasks(tmp_path):
    path = str(tmp_path / "sweep.jsonl")
    calls, flaky = [], [True]

    def record(task):  # runs in this process (serial): the calls are visible
        calls.append(task)
        if task == 4 and flaky[0]:
            raise RuntimeError("flaky")
        return sp.Rational(task, 3)

    first = run_tasks(record, range(6), executor="serial", results_file=path, key=str, progress=False)
    assert first.counts["done"] == 5 and first[4].status is TaskStatus.FAILED
    # the file holds a header and one line per finished task
    lines = [json.loads(line) for line in open(path)]
    assert lines[0]["rdpsym_sweep_results"] == 1 and len(lines) == 7
    calls.clear()
    flaky[0] = False
    second = run_tasks(record, range(6), executor="serial", results_file=path, key=str, progress=False)
    assert calls == [4]  # only the failed task ran again
    assert second.ok and second.resumed == 5 and not second[4].resumed
    assert second.results() == [sp.Rational(i, 3) for i in range(6)]
    # a parallel run resumes from the same file too, and reports the same
    third = run_tasks(record, range(6), executor=2, results_file=path, key=str, progress=False)
    assert third == second and third.resumed == 6


def test_interrupted_sweep_keeps_what_finished_and_resumes(tmp_path):
    path = str(tmp_path / "sweep.jsonl")
    seen = []

    def stop_after_three(entry):
        seen.append(entry)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(SweepInterrupted) as info:
        run_tasks(square, range(10), executor="serial", results_file=path, progress=False,
                  on_result=stop_after_three)
    partial_report = info.value.report
    assert partial_report.interrupted
    assert partial_report.counts == {"done": 3, "failed": 0, "timeout": 0, "cancelled": 7}
    rest = run_tasks(square, range(10), executor=2, results_file=path, progress=False)
    assert rest.ok and rest.resumed == 3 and rest.results() == [i * i for i in range(10)]


def _as_from_a_terminal():
    """In the child before exec: Ctrl-C delivered and handled by default, as for a program a shell starts.
    A test process may have inherited SIGINT ignored or blocked (both survive fork and exec; CI's xdist
    worker had it ignored, so the sweep never saw the interrupt and ran its 60 s tasks), and then
    Python installs no KeyboardInterrupt handler at all: that would test the test process, not rdpsym."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_on_a_parallel_sweep_reports_what_did_not_finish(tmp_path):
    script = tmp_path / "sweep.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_execution import sleepy
        from rdpsym.execution import run_tasks, SweepInterrupted
        print("IMPORTED", flush=True)
        try:
            run_tasks(sleepy, [0.0, 0.0, 60.0, 60.0, 0.0], executor=2, progress=False)
        except SweepInterrupted as exc:
            print("REPORT", exc.report.counts, exc.report.interrupted, flush=True)
            sys.exit(130)
        """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_as_from_a_terminal)
    # the imports take seconds on a loaded machine: interrupt the sweep, not the import
    assert proc.stdout.readline().strip() == "IMPORTED"
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole process group
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert "REPORT {'done': 2, 'failed': 0, 'timeout': 0, 'cancelled': 3} True" in out


def test_results_file_is_read_under_its_function_name(tmp_path):
    """The header names the task function by ``module.qualname`` (of a partial's function): a file is
    read under that name and refused under another."""
    from rdpsym.execution.store import ResultsFile, function_name
    from rdpsym.verification.checks import _check

    assert function_name(_check) == "rdpsym.verification.checks._check"
    assert function_name(partial(partial(_check), 1)) == "rdpsym.verification.checks._check"
    path = tmp_path / "sweep.jsonl"
    path.write_text('{"rdpsym_sweep_results": 1, "fn": "rdpsym.verification.checks._check", "format": "json"}\n'
                    '{"key": "a", "status": "done", "seconds": 0.1, "result": 7}\n')
    loaded = ResultsFile(path, function_name(_check), "json").load()
    assert loaded["a"].result == 7 and loaded["a"].resumed
    with pytest.raises(ValueError, match="holds results of"):
        ResultsFile(path, "rdpsym.other._check", "json").load()


def test_results_file_of_another_function_is_refused(tmp_path):
    path = str(tmp_path / "sweep.jsonl")
    run_tasks(square, [1], executor="serial", results_file=path, progress=False)
    with pytest.raises(ValueError, match="holds results of"):
        run_tasks(sleepy, [0.0], executor="serial", results_file=path, progress=False)
    # a last line cut short by a crash is skipped: that task runs again
    with open(path, "a") as fh:
        fh.write('{"key": "2", "status": "do')
    again = run_tasks(square, [1, 2], executor="serial", results_file=path, progress=False)
    assert again.results() == [1, 4] and again.resumed == 1


def test_stop_when_gives_the_serial_prefix():
    def first_failure(entry):
        return entry.status is TaskStatus.FAILED

    serial = run_tasks(seeded_integral, TASKS, executor="serial", progress=False, stop_when=first_failure)
    parallel = run_tasks(seeded_integral, TASKS, executor=2, progress=False, stop_when=first_failure)
    cut = next(i for i, e in enumerate(serial) if e.status is TaskStatus.FAILED)
    assert cut == 3 and serial.stopped
    assert list(serial)[:cut + 1] == list(parallel)[:cut + 1]
    assert all(e.status is TaskStatus.CANCELLED for e in list(serial)[cut + 1:])


def test_stop_when_applies_to_resumed_results(tmp_path):
    path = str(tmp_path / "s.jsonl")
    run_tasks(seeded_integral, TASKS[:5], executor="serial", results_file=path, progress=False)
    again = run_tasks(seeded_integral, TASKS, executor="serial", results_file=path, progress=False,
                      stop_when=lambda e: e.status is TaskStatus.FAILED)
    # task 3 failed the first time and is run again; it fails again and cuts the sweep there
    assert [e.status.value for e in again][:5] == ["done", "done", "done", "failed", "done"]
    assert all(e.status is TaskStatus.CANCELLED for e in list(again)[5:]) and again.stopped


def test_iter_tasks_checks_its_arguments_at_once():
    with pytest.raises(ValueError, match="timeout must be"):
        iter_tasks(square, [1], timeout=-1)
    assert all(e is not None for e in iter_tasks(sleepy, [0.3, 0.3, 0.3], executor=2))


def test_zero_tasks_is_an_empty_report():
    for executor in ("serial", None, 3):
        report = run_tasks(square, [], executor=executor, progress=False)
        assert len(report) == 0 and report.ok and report.results() == []


def test_more_workers_than_cores_is_fine():
    n = local_cores() + 3
    report = run_tasks(square, range(n + 2), executor=n, progress=False)
    assert report.results() == [i * i for i in range(n + 2)] and report.workers == n


def test_a_sweep_inside_a_task_runs_serially_in_its_worker(monkeypatch):
    monkeypatch.delenv("RDPSYM_EXECUTOR", raising=False)
    report = run_tasks(nested_sweep, [2, 3], executor=2, progress=False)
    assert report.results() == [("serial (inside a task)", [0, 1]), ("serial (inside a task)", [0, 1, 4])]
    # outside a task the default is the process pool
    assert "local process" in run_tasks(square, [1, 2], progress=False).executor


@pytest.mark.parametrize("setting, label", [("serial", "serial"), ("3", "3 local processes"),
                                            (" Processes ", "local process")])
def test_the_default_executor_is_the_setting(monkeypatch, setting, label):
    """``RDPSYM_EXECUTOR`` is what ``executor=None`` means; an explicit ``executor=`` wins over it."""
    monkeypatch.setenv("RDPSYM_EXECUTOR", setting)
    assert label in describe_executor(None) and runs_serially(None) == (setting == "serial")
    assert run_tasks(square, [1, 2, 3], progress=False).results() == [1, 4, 9]
    assert describe_executor("serial") == "serial" and describe_executor(2) == "2 local processes"


@pytest.mark.parametrize("setting", ["0", "-1", "dask", "2.5", "tcp://host:8786"])
def test_a_bad_default_executor_is_refused_naming_the_variable(monkeypatch, setting):
    monkeypatch.setenv("RDPSYM_EXECUTOR", setting)
    with pytest.raises(ArgumentError, match="RDPSYM_EXECUTOR"):
        run_tasks(square, [1], progress=False)


def test_spawned_workers_give_the_same_report():
    serial = run_tasks(seeded_integral, TASKS[:4], executor="serial", progress=False)
    spawned = run_tasks(seeded_integral, TASKS[:4], executor=2, mp_context="spawn", progress=False)
    assert spawned == serial


@pytest.mark.parametrize("bad, match", [
    (dict(executor=0), "number of worker processes must be >= 1"),
    (dict(executor=-2), "number of worker processes must be >= 1"),
    (dict(executor=True), "executor must be"),
    (dict(executor="everywhere"), "executor must be"),
    (dict(timeout=0), "timeout must be a positive number"),
    (dict(timeout=float("nan")), "timeout must be a positive number"),
    (dict(retries=-1), "retries must be an int >= 0"),
    (dict(results_format="yaml"), "results_format must be one of"),
    (dict(mp_context="teleport"), "mp_context must be one of"),
])
def test_bad_arguments_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        run_tasks(square, [1, 2], progress=False, **bad)


def test_results_file_needs_stable_unique_keys(tmp_path):
    path = str(tmp_path / "s.jsonl")
    with pytest.raises(ValueError, match="same key"):
        run_tasks(square, [1, 1], executor="serial", results_file=path, progress=False)
    with pytest.raises(ValueError, match="memory address"):
        run_tasks(repr, [object()], executor="serial", results_file=path, progress=False)


def test_cli_options_map_to_executors():
    from rdpsym.cli.options import executor_from_options  # the CLI helper (click), imported only here

    import click

    assert executor_from_options() is None
    assert executor_from_options(workers=1) == "serial"
    assert executor_from_options(workers=4) == 4
    assert executor_from_options(scheduler=" tcp://h:8786 ") == "tcp://h:8786"
    with pytest.raises(click.UsageError):
        executor_from_options(workers=2, scheduler="tcp://h:8786")
    with pytest.raises(click.BadParameter):
        executor_from_options(workers=0)


# -- Dask ------------------------------------------------------------------------------------------------
def test_unreachable_scheduler_fails_within_seconds():
    pytest.importorskip("distributed")
    start = time.monotonic()
    with pytest.raises(SchedulerUnreachable, match="no Dask scheduler answered at 'tcp://127.0.0.1:9'"):
        run_tasks(square, [1], executor="tcp://127.0.0.1:9", progress=False)
    assert time.monotonic() - start < 10


def test_dask_local_cluster_gives_the_same_report():
    # processes=False: both workers are threads of this process, so this also checks that tasks sharing
    # a process do not share mpmath's precision (without the lock the digits differ)
    distributed = pytest.importorskip("distributed")
    serial = run_tasks(seeded_integral, TASKS, executor="serial", progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_client = run_tasks(seeded_integral, TASKS, executor=client, progress=False)
        by_address = run_tasks(seeded_integral, TASKS[:3], executor=cluster.scheduler_address, progress=False)
        empty = run_tasks(seeded_integral, [], executor=client, progress=False)
        # in-process workers share one lock (mpmath precision is process-global): time one task alone
        timed = run_tasks(sleepy, [3.0], executor=client, timeout=1.0, progress=False)
    assert on_client == serial and on_client.workers == 2
    assert list(by_address) == list(serial)[:3]
    assert len(empty) == 0
    assert [e.status.value for e in timed] == ["timeout"]


# -- consumers ---------------------------------------------------------------------------------------------
def test_verify_gives_the_same_report_serially_and_in_parallel():
    from rdpsym import mechanisms
    from rdpsym.verification import verify

    m = mechanisms.get("laplace")
    serial = verify(m, level="quick", executor="serial")
    parallel = verify(m, level="quick", executor=2)
    from dataclasses import replace as with_

    def what(report):  # everything but the run time of each point
        return [with_(c, seconds=0.0) for c in report.checks]

    assert what(serial) == what(parallel) and serial.status == parallel.status
    assert len(serial.checks) > 3


def test_cli_verify_takes_workers_and_scheduler():
    pytest.importorskip("distributed")
    from click.testing import CliRunner

    from rdpsym.cli import main

    out = CliRunner().invoke(main, ["verify", "randomized_response", "--level", "quick", "--scheduler",
                                    "tcp://127.0.0.1:9"])
    # an unreachable scheduler is a bad --scheduler value (exit 2), never a failed verdict (exit 1)
    assert out.exit_code == 2 and "no Dask scheduler answered at 'tcp://127.0.0.1:9'" in out.output
    assert "--scheduler" in out.output
    both = CliRunner().invoke(main, ["verify", "laplace", "--workers", "2", "--scheduler", "tcp://127.0.0.1:9"])
    assert both.exit_code == 2 and "exclude each other" in both.output
