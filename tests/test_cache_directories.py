"""The cache directory: only rdpsym's own files are touched, a bad directory costs only time (said once),
the per-user key, and writers that run at once or are killed (issue 31)."""

from __future__ import annotations

import errno
import logging
import os
import stat
import subprocess
import sys
import time

import pytest
import sympy as sp
from click.testing import CliRunner

import rdpsym
from rdpsym import _cache
from rdpsym.cli import main
from rdpsym.compile.store import SOURCE_CACHE
from rdpsym.derive import cache as derive_cache


@pytest.fixture
def private(tmp_path, monkeypatch):
    """A private cache directory and key file (neither exists yet)."""
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RDPSYM_CACHE_KEY_FILE", str(tmp_path / "config" / "key"))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    return tmp_path


def _users_files(directory):
    directory.mkdir(parents=True, exist_ok=True)
    files = {"results.pickle": b"\x80\x04K\x01.", "codegen-model.py": b"x = 1\n", "notes.txt": b"mine\n",
             # a file named like an entry, in another format: not rdpsym's either
             "derivation-" + "a" * 64 + ".rdpsym": b"my own data\n"}
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return files


@pytest.mark.parametrize("command", ["clear", "verify"])
def test_a_directory_that_is_not_rdpsyms_cache_is_refused_with_the_reason(private, command):
    files = _users_files(private / "cache")
    out = CliRunner().invoke(main, ["cache", command])
    assert out.exit_code == 2, out.output
    assert "not rdpsym's cache" in out.output and "nothing was touched" in out.output
    assert {p.name: p.read_bytes() for p in (private / "cache").iterdir()} == files


def test_cache_clear_deletes_only_rdpsyms_entries(private):
    """``RDPSYM_CACHE_DIR=.`` in a project: rdpsym writes its entries (and its marker) beside the user's
    files; ``cache clear`` then removes its entries and nothing else."""
    files = _users_files(private / "cache")
    SOURCE_CACHE.store("probe", "x = 1\n")
    derive_cache._DERIVATIONS.store("probe", {"a": 1})
    leftover = private / "cache" / f".code-{'b' * 64}.rdpsym.x1y2.tmp"  # a killed writer's partial file
    leftover.write_bytes(b"rdpsym-cache/2\n{\"kind\"")
    out = CliRunner().invoke(main, ["cache", "clear", "--json"])
    assert out.exit_code == 0, out.output
    assert '"derivations": 1' in out.output and '"generated_code": 1' in out.output
    left = {p.name: p.read_bytes() for p in (private / "cache").iterdir() if p.name != _cache.MARKER}
    assert left == files  # every file of the user's, byte for byte; the temporary file is gone


def test_a_cache_directory_that_is_a_file_costs_only_time_and_is_said_once(private, monkeypatch):
    """End to end, in a fresh process: ``rdpsym derive`` works, with one line saying so."""
    (private / "cache").write_text("not a directory\n")
    out = subprocess.run([sys.executable, "-c", "from rdpsym.cli import main; main(['derive', 'randomized_response'])"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    assert "log(p**alpha" in out.stdout
    lines = [line for line in out.stderr.splitlines() if "cache" in line]
    assert len(lines) == 1 and "is not a directory" in lines[0] and "working without the on-disk cache" in lines[0], out.stderr
    assert (private / "cache").read_text() == "not a directory\n"


def _fake_derivation(monkeypatch):
    """The engine replaced by a known result (these tests are about the cache, not the engine)."""
    calls = []
    x, q = sp.Symbol("x", integer=True), sp.Symbol("q", positive=True)

    def derive(P, Q, *args):
        calls.append(P)
        return rdpsym.DivergenceResult(expr=sp.Symbol("alpha", positive=True) * q, status=rdpsym.Status.CLOSED_FORM)

    monkeypatch.setattr("rdpsym.derive.engine.derive_uncached", derive)
    pairs = [(q ** x * (1 - q) ** (1 - x), (1 - q) ** x * q ** (1 - x)), (q * (1 - x) + x / 2, (1 - q) * (1 - x) + x / 2)]
    return calls, [(P, Q, x, sp.FiniteSet(0, 1)) for P, Q in pairs]


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_a_full_or_unwritable_disk_costs_only_time_and_is_said_once(private, monkeypatch, caplog, error):
    calls, pairs = _fake_derivation(monkeypatch)

    def refuse(path, data):
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(_cache, "write_atomically", refuse)
    with caplog.at_level(logging.WARNING, logger="rdpsym.cache"):
        results = [rdpsym.renyi_divergence(*pair, check_density=False) for pair in pairs + pairs]
    assert all(r.expr == results[0].expr for r in results) and len(calls) == 4  # nothing kept: derived again
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and os.strerror(error) in lines[0] and "working without the on-disk cache" in lines[0]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes to read-only directories")
def test_a_read_only_cache_directory_costs_only_time_and_is_said_once(private, monkeypatch, caplog):
    calls, pairs = _fake_derivation(monkeypatch)
    (private / "cache").mkdir()
    (private / "cache").chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with caplog.at_level(logging.WARNING, logger="rdpsym.cache"):
            for pair in pairs + pairs:
                rdpsym.renyi_divergence(*pair, check_density=False)
    finally:
        (private / "cache").chmod(stat.S_IRWXU)
    assert len(calls) == 4 and len(caplog.records) == 1, caplog.text


def test_the_key_is_created_once_outside_the_cache_with_mode_0600(private, monkeypatch, caplog):
    calls, pairs = _fake_derivation(monkeypatch)
    rdpsym.renyi_divergence(*pairs[0], check_density=False)
    key = private / "config" / "key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes().strip()) == 64
    before = key.read_bytes()
    rdpsym.renyi_divergence(*pairs[0], check_density=False)
    assert key.read_bytes() == before and len(calls) == 1  # the second is a verified hit
    assert not any(p.name == "key" for p in (private / "cache").iterdir())


@pytest.mark.parametrize("where", ["inside the cache directory", "readable by others"])
def test_a_key_that_cannot_be_trusted_turns_the_cache_off_and_is_said_once(private, monkeypatch, caplog, where):
    calls, pairs = _fake_derivation(monkeypatch)
    if where == "inside the cache directory":
        monkeypatch.setenv("RDPSYM_CACHE_KEY_FILE", str(private / "cache" / "key"))
    else:
        key = private / "config" / "key"
        key.parent.mkdir()
        key.write_text("k" * 64)
        key.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="rdpsym.cache"):
        for pair in pairs + pairs:
            rdpsym.renyi_divergence(*pair, check_density=False)
    assert len(calls) == 4 and len(caplog.records) == 1, caplog.text
    assert "working without the on-disk cache" in caplog.text


_DERIVE_RR = """
import sympy as sp, rdpsym
m = rdpsym.mechanisms.get("randomized_response")
pair = m.pairs[0]
r = rdpsym.renyi_divergence(pair.P, pair.Q, m.variable, m.support, params=m.parameters)
print("|".join(sp.srepr(e, order="none") for e in (r.expr, r.conditions, r.kl, r.max_divergence)), r.status)
"""


def test_two_processes_deriving_the_same_entry_agree(private):
    env = dict(os.environ)
    runs = [subprocess.Popen([sys.executable, "-c", _DERIVE_RR], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in runs]
    assert all(p.returncode == 0 for p in runs), [o[1] for o in outs]
    assert outs[0][0] == outs[1][0] and outs[0][0].strip()
    assert _cache.verify_all().discarded == []
    entries = [p for p in (private / "cache").iterdir() if p.name.startswith("derivation-")]
    assert len(entries) == 1 and not list((private / "cache").glob(".*.tmp"))
    warm = subprocess.run([sys.executable, "-c", _DERIVE_RR], capture_output=True, text=True, env=env, timeout=600)
    assert warm.stdout == outs[0][0] and "discarded" not in warm.stderr


def test_a_writer_killed_mid_write_leaves_nothing_that_is_read(private):
    SOURCE_CACHE.store("other", "z = 0\n")  # the directory, its marker and the key exist
    script = ("import os, signal\n"
              "from rdpsym import _cache\n"
              "from rdpsym.compile.store import SOURCE_CACHE\n"
              "_cache.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)  # dies before the rename\n"
              "SOURCE_CACHE.store('k', 'x = 1\\n' * 1000)\n")
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=dict(os.environ),
                            timeout=600, check=False)
    assert killed.returncode == -9, killed.stderr
    (temp,) = (private / "cache").glob(".code-*.tmp")
    assert SOURCE_CACHE.load("k") is None  # nothing is read from the temporary file
    assert _cache.verify_all().discarded == []  # a writer may still be at work: a fresh one is left
    os.utime(temp, (time.time() - 3600, time.time() - 3600))
    assert [why for _, why in _cache.verify_all().discarded] == ["a temporary file left by a writer that did not finish"]
    assert not temp.exists()
    assert SOURCE_CACHE.get_or_compute("k", lambda: "y = 2\n") == "y = 2\n" and SOURCE_CACHE.load("k") == "y = 2\n"
