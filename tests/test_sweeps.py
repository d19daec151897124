"""The execution layer under check_claim's grid, regress and the property sweeps (issue #8): the same
results serially and on 2 processes (and on Dask), a task that fails reported for that task, and the two
verdict rules (no compared point is not a confirmation; an independent check without an answer is not a
pass)."""

import os
from dataclasses import replace

import pytest
import sympy as sp
from click.testing import CliRunner

from rdpsym import mechanisms
from rdpsym.claims import Verdict, check_claim
from rdpsym.cli import main
from rdpsym.properties import CHECKS, PropertyVerdict as PV, check_all
from rdpsym.regress import run_registry
from rdpsym.testing import assert_closed_form, assert_registry

REFUTED = ("randomized_response", "p/(1-p)", sp.oo)  # D_oo is log(p/(1-p)), not p/(1-p)


def rows_without_times(rows):
    """The rows without what varies from run to run: their times, and the verdict objects (whose evidence
    records times too), which are compared by their verdicts and claims."""
    return [(replace(r, seconds=0.0, report=None),
             None if r.report is None else (r.report.verdict, str(r.report.claim), r.report.divergence,
                                             r.report.points_checked)) for r in rows]


# -- check_claim ------------------------------------------------------------------------------------------
def test_a_callable_that_always_raises_is_inconclusive_not_confirmed():
    def raises(alpha, b):
        raise ValueError("outside my domain")

    v = check_claim(mechanisms.get("laplace"), raises, "==", search=20)
    assert v.verdict is Verdict.INCONCLUSIVE and not v.ok, str(v)
    assert any("no point could be compared" in e for e in v.evidence), v.evidence
    with pytest.raises(AssertionError, match="inconclusive"):
        assert_closed_form("laplace", raises, search=20)


def test_a_callable_that_raises_somewhere_is_inconclusive_and_confirmed_where_it_is_defined():
    import math

    def kl(alpha, b):  # the Laplace KL (Mironov 2017, Prop. 6), refusing large scales
        if b > 3:
            raise ValueError("b too large")
        return 1 / b + math.exp(-1 / b) - 1

    # the points where it raises are not evidence for it: over the whole box the verdict fails closed
    v = check_claim(mechanisms.get("laplace"), kl, "==", order=1, search=20)
    assert v.verdict is Verdict.INCONCLUSIVE, str(v)
    assert any("the callable raised" in line and "count against the claim" in line for line in v.evidence)
    # where it is defined it is confirmed
    held = check_claim(mechanisms.get("laplace"), kl, "==", order=1, search=20, fixed={"b": 2, "sensitivity": 1})
    assert held.verdict is Verdict.CONFIRMED, str(held)


def test_check_claim_is_the_same_serially_and_on_two_processes():
    name, claim, order = REFUTED
    serial = check_claim(mechanisms.get(name), claim, order=order, search=20, executor="serial")
    parallel = check_claim(mechanisms.get(name), claim, order=order, search=20, executor=2)
    assert serial.verdict is Verdict.REFUTED and serial.counterexample is not None
    assert parallel == serial and parallel.counterexample == serial.counterexample
    curve_s = check_claim(mechanisms.get("gaussian"), "alpha/(2*sigma**2)", search=10, prove=False, executor="serial")
    curve_p = check_claim(mechanisms.get("gaussian"), "alpha/(2*sigma**2)", search=10, prove=False, executor=2)
    assert curve_s.verdict is Verdict.CONFIRMED and curve_p == curve_s


def test_a_lost_grid_task_makes_the_verdict_inconclusive_not_confirmed():
    parent = os.getpid()

    def curve_killing_its_worker(alpha, sigma):  # Mironov 2017, Prop. 7, but ...
        if os.getpid() != parent and alpha > 50:  # ... a crash in native code, say: the worker process dies
            os._exit(1)
        return alpha / (2 * sigma**2)

    v = check_claim(mechanisms.get("gaussian"), curve_killing_its_worker, "==", search=0, executor=2)
    assert v.verdict is Verdict.INCONCLUSIVE, str(v)
    assert any("did not finish" in e and "failed" in e for e in v.evidence), v.evidence
    assert v.points_checked > 0  # the grid tasks that finished were kept


def test_the_grid_task_pickles_for_spawned_workers_and_dask(monkeypatch):
    import pickle
    from functools import partial

    import rdpsym.claims.run as ck  # the grid sweep is a stage of the run

    seen = {}
    real = ck._grid_sweep

    def spy(evaluator, points, executor):
        seen.update(evaluator=evaluator, points=points)
        return real(evaluator, points, executor)

    monkeypatch.setattr(ck, "_grid_sweep", spy)
    check_claim(mechanisms.get("laplace"), "alpha/lambda", search=0)
    task = partial(ck._grid_block, seen["evaluator"])
    block = seen["points"][:ck.GRID_BLOCK]
    assert pickle.loads(pickle.dumps(task))(block) == task(block)


# -- regress ----------------------------------------------------------------------------------------------
def test_regress_is_the_same_serially_and_on_two_processes():
    only = ["laplace/kl", "gaussian/max", "gaussian/alpha-sensitivity"]  # "contains" matching: one entry each
    serial = run_registry(only=only, search=10, executor="serial")
    parallel = run_registry(only=only, search=10, executor=2)
    assert [r.name for r in serial] == ["laplace/kl", "gaussian/max", "gaussian/alpha-sensitivity"]
    assert rows_without_times(parallel) == rows_without_times(serial)
    assert all(r.label == "pass" and r.outcome.value == "holds" for r in serial), serial


def test_a_skipped_independent_check_is_inconclusive_not_a_pass(tmp_path, monkeypatch):
    # the independent numerics give no answer (as a sum that does not converge would)
    monkeypatch.setattr("rdpsym.regress._independent_check",
                        lambda target, order, verdict: ("skipped (no answer from the numerics)", None))
    # nor did a replayed certificate bind the formula to the densities (its binding points are the check then)
    monkeypatch.setattr("rdpsym.regress._bound_by_replay", lambda verdict: 0)
    (row,) = run_registry(only=["poisson/kl"], search=10, executor="serial")
    assert row.verdict in ("proved", "confirmed") and row.independent.startswith("skipped")
    assert row.label == "inconclusive" and not row.ok and row.inconclusive
    with pytest.raises(AssertionError, match="poisson/kl: inconclusive"):
        assert_registry(only=["poisson/kl"], search=10)
    assert assert_registry(only=["poisson/kl"], search=10, allow_inconclusive=True)


@pytest.mark.slow
def test_a_skipped_independent_check_is_inconclusive_on_the_command_line():
    """The same entry through ``rdpsym regress``: exit 0 with the row counted inconclusive, exit 3 with
    ``--strict`` (slow: each run searches again, since a certificate without a binding point never holds)."""
    out = CliRunner().invoke(main, ["regress", "--only", "poisson/kl", "--search", "10", "--workers", "1"])
    assert out.exit_code == 0 and "0 pass, 1 inconclusive, 0 fail" in out.output, out.output
    strict = CliRunner().invoke(main, ["regress", "--only", "poisson/kl", "--search", "10", "--workers", "1",
                                       "--strict"])
    assert strict.exit_code == 3 and "INCONCLUSIVE" in strict.output, strict.output


def test_an_unconverged_independent_check_is_inconclusive_not_a_pass(monkeypatch):
    from rdpsym.claims.target import Target

    def unconverged(self, order, alpha, values, dps=30):
        return (sp.Float(1), sp.Float(1), False, "quadrature error estimate too large (forced)")

    monkeypatch.setattr(Target, "independent", unconverged)
    (row,) = run_registry(only=["laplace/kl"], search=10, executor="serial")
    assert row.independent.startswith("not converged") and row.label == "inconclusive", row
    assert "not converged" in row.detail


def test_a_regress_task_that_raises_is_a_failed_row_and_the_others_are_kept(monkeypatch):
    import rdpsym.regress as regress

    real = regress.run_entry

    def flaky(entry, **options):
        if entry.name == "laplace/kl":
            raise RuntimeError("lost the derivation")
        return real(entry, **options)

    monkeypatch.setattr(regress, "run_entry", flaky)
    for executor in ("serial", 2):
        # "contains" matching: each names one entry (k_randomized_response/kl contains randomized_response/kl)
        rows = run_registry(only=["laplace/kl", "gaussian/kl", "gaussian/max"], search=10, executor=executor)
        assert [r.name for r in rows] == ["laplace/kl", "gaussian/kl", "gaussian/max"]
        assert [r.label for r in rows] == ["fail", "pass", "pass"], rows
        assert rows[0].verdict == "error" and "RuntimeError: lost the derivation" in rows[0].detail


# -- properties -------------------------------------------------------------------------------------------
def test_property_sweep_is_the_same_serially_and_on_two_processes():
    m = mechanisms.get("laplace")
    serial = check_all(m, quick=True, dps=25, executor="serial")
    parallel = check_all(m, quick=True, dps=25, executor=2)
    assert parallel == serial and len(serial.reports) >= 7


def test_a_property_check_that_raises_is_reported_and_the_others_are_kept(monkeypatch):
    def broken(m, res, values, dps):
        raise ZeroDivisionError("a broken check")

    monkeypatch.setitem(CHECKS, "broken", (True, broken))
    for executor in ("serial", 2):
        suite = check_all(mechanisms.get("randomized_response"), quick=True, dps=25, executor=executor)
        names = [r.name for r in suite.reports]
        assert names[-1] == "broken" and len(names) >= 8
        (err,) = suite.errors
        assert err.verdict is PV.INCONCLUSIVE and "ZeroDivisionError: a broken check" in err.detail
        assert suite.verdict is PV.INCONCLUSIVE and not suite.failures


# -- the CLI ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["check", "laplace", "--claim", "1/lambda + exp(-1/lambda) - 1", "--order", "1"],
    ["regress", "--only", "laplace/kl", "--search", "10"],
    ["properties", "randomized_response", "--quick", "--only", "curve"],
])
def test_cli_sweeps_take_workers_and_scheduler(args):
    runner = CliRunner()
    ok = runner.invoke(main, args + ["--workers", "2"])
    assert ok.exit_code == 0, ok.output
    both = runner.invoke(main, args + ["--workers", "2", "--scheduler", "tcp://127.0.0.1:9"])
    assert both.exit_code == 2 and "exclude each other" in both.output
    pytest.importorskip("distributed")
    gone = runner.invoke(main, args + ["--scheduler", "tcp://127.0.0.1:9"])
    # an unreachable scheduler is a bad --scheduler value (exit 2), never a failed verdict (exit 1)
    assert gone.exit_code == 2 and "no Dask scheduler answered" in gone.output, gone.output
    assert "--scheduler" in gone.output, gone.output


def test_cli_properties_exits_nonzero_when_a_check_could_not_run(monkeypatch):
    def broken(m, res, values, dps):
        raise ZeroDivisionError("a broken check")

    monkeypatch.setitem(CHECKS, "broken", (True, broken))
    out = CliRunner().invoke(main, ["properties", "randomized_response", "--only", "broken", "--workers", "1"])
    assert out.exit_code == 1 and "ZeroDivisionError" in out.output, out.output


# -- Dask -------------------------------------------------------------------------------------------------
def test_check_claim_and_regress_on_a_dask_local_cluster():
    distributed = pytest.importorskip("distributed")
    name, claim, order = REFUTED
    serial = check_claim(mechanisms.get(name), claim, order=order, search=20, executor="serial")
    rows = run_registry(only=["laplace/kl", "gaussian/max"], search=10, executor="serial")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_dask = check_claim(mechanisms.get(name), claim, order=order, search=20, executor=client)
        dask_rows = run_registry(only=["laplace/kl", "gaussian/max"], search=10, executor=client)
    assert on_dask == serial and on_dask.counterexample == serial.counterexample
    assert rows_without_times(dask_rows) == rows_without_times(rows)
