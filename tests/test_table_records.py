"""Table II cells are verified once per derivation: an agreement is a record in the on-disk cache, read
back on the next run; anything else is checked again (issue 29: `rdpsym table` re-verified every run)."""

from dataclasses import replace

import pytest
import sympy as sp

from rdpsym.verification import table as table_module
from rdpsym.verification import table_verification


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def counted(monkeypatch):
    """The points each call of the independent check was asked about."""
    calls = []
    real = table_module.verify

    def spy(*args, **kwargs):
        calls.append(list(kwargs["points"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(table_module, "verify", spy)
    return calls


def test_a_second_run_reads_each_cell_from_its_record(table_ii, private_cache, counted):
    mech, result = table_ii["laplace"]
    first, text = table_verification(mech, result, {"sensitivity": 1})
    assert str(first.status) == "verified" and len(counted) == 1 and len(counted[0]) == 3
    assert len(list(private_cache.glob("verification-*.rdpsym"))) == 3
    again, text_again = table_verification(mech, result, {"sensitivity": 1})
    assert len(counted) == 1  # nothing computed again
    assert text_again == text and again.checks == first.checks  # the same checks, values and digits
    assert again.result.provenance.verifications[-1].status == again.status


def test_a_changed_derivation_or_source_is_verified_again(table_ii, private_cache, counted, monkeypatch):
    mech, result = table_ii["laplace"]
    table_verification(mech, result, {"sensitivity": 1})
    # another derivation (here: its KL an equal tree of another shape) is a new key for every cell
    other = replace(result, kl=sp.Add(result.kl, 0, evaluate=False))
    assert other.kl != result.kl
    report, _ = table_verification(mech, other, {"sensitivity": 1})
    assert str(report.status) == "verified" and [len(points) for points in counted] == [3, 3]
    # rdpsym's source changed: every record is a stranger
    monkeypatch.setattr(table_module, "package_fingerprint", lambda: "0" * 16)
    table_verification(mech, result, {"sensitivity": 1})
    assert [len(points) for points in counted] == [3, 3, 3]


def test_a_mismatch_is_never_kept(table_ii, private_cache, counted):
    mech, result = table_ii["gaussian"]
    wrong = replace(result, expr=result.expr * 2)  # alpha Delta^2/sigma^2: twice the divergence
    report, text = table_verification(mech, wrong, {"sensitivity": 1})
    assert str(report.status) == "mismatch" and text.startswith("mismatch")
    again, _ = table_verification(mech, wrong, {"sensitivity": 1})
    assert str(again.status) == "mismatch"
    # the agreeing cells (alpha = 1, oo) were kept; the mismatching one is checked on every run
    assert [len(points) for points in counted] == [3, 1] and counted[1][0].regime == "α>1"


def test_no_cache_checks_every_cell_and_keeps_nothing(table_ii, private_cache, counted):
    mech, result = table_ii["randomized_response"]
    table_verification(mech, result, cache=False)
    table_verification(mech, result, cache=False)
    assert [len(points) for points in counted] == [3, 3]
    assert not list(private_cache.glob("verification-*.rdpsym"))


def test_a_record_changed_on_disk_is_discarded_and_checked_again(table_ii, private_cache, counted):
    mech, result = table_ii["randomized_response"]
    table_verification(mech, result)
    record = sorted(private_cache.glob("verification-*.rdpsym"))[0]
    data = record.read_bytes()
    record.write_bytes(data.replace(b'"agree"', b'"agreed"'))
    report, _ = table_verification(mech, result)
    assert str(report.status) == "verified" and [len(points) for points in counted] == [3, 1]
