"""The on-disk cache cannot lie or run code (issue 31).

A warm cache of one cheap mechanism (randomized response: a derivation, its generated code and the code's
symbolic series) is tampered with the ways a cache restored from elsewhere can be: digits changed, bits
flipped, truncated, replaced by a malicious pickle or by Python code that would create a marker file if it
ran, moved to another entry's name, signed with another user's key. Every tampered entry must be discarded
(or read back identical), nothing may run, nothing may raise, and a later run must equal the cold one.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest

import rdpsym
from rdpsym import _cache, mechanisms
from rdpsym.compile import generate_source, to_numpy
from rdpsym.compile.series import SERIES_CACHE
from rdpsym.compile.store import SOURCE_CACHE
from rdpsym.derive import cache as derive_cache
from rdpsym.derive.cache import DataCodec

KINDS = {"derivation": derive_cache._DERIVATIONS, "code": SOURCE_CACHE, "series": SERIES_CACHE}


def signature(r):
    """What a result says (its provenance's timings aside)."""
    return (r.status, r.reason, r.expr, r.conditions, r.kl, r.max_divergence, r.exceptional_points, r.symbols,
            r.domains, r.integer_orders, r.label, [(s.name, s.expr) for s in r.provenance.steps],
            r.provenance.expired)


@dataclasses.dataclass
class Warm:
    root: Path
    mechanism: object
    result: object
    source: str
    entries: dict

    @property
    def directory(self) -> Path:
        return self.root / "cache"

    def use(self, monkeypatch, key: str = "key"):
        """Point the process at this cache (signed with the key file ``key``), with its pristine entries."""
        monkeypatch.setenv("RDPSYM_CACHE_DIR", str(self.directory))
        monkeypatch.setenv("RDPSYM_CACHE_KEY_FILE", str(self.root / key))
        monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
        for path in self.directory.iterdir():
            if path.name != _cache.MARKER:
                path.unlink()
        for name, data in self.entries.items():
            (self.directory / name).write_bytes(data)
        _cache.clear_memos()  # every run below reads the disk, as a fresh process does

    def entry(self, kind: str) -> Path:
        (name,) = [n for n in self.entries if n.startswith(kind + "-")]
        return self.directory / name

    def check(self, kind: str):
        if kind != "derivation":
            return None
        pair, m = self.mechanism.pairs[0], self.mechanism
        return lambda r: derive_cache.spot_check(r, pair.P, pair.Q, m.variable, m.support, m.parameters)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """The cold run, in a private cache directory with a private key: it fills the cache."""
    root = tmp_path_factory.mktemp("warm")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RDPSYM_CACHE_DIR", str(root / "cache"))
        mp.setenv("RDPSYM_CACHE_KEY_FILE", str(root / "key"))
        mp.delenv("RDPSYM_NO_CACHE", raising=False)
        _cache.clear_memos()
        rr = mechanisms.get("randomized_response")
        result = rdpsym.rdp(rr)
        source = generate_source(result)
        entries = {p.name: p.read_bytes() for p in (root / "cache").iterdir() if p.suffix == ".rdpsym"}
    assert sorted(n.split("-")[0] for n in entries) == ["code", "derivation", "series"], sorted(entries)
    return Warm(root, rr, result, source, entries)


def _marker_payloads(marker: Path) -> list[tuple[str, bytes]]:
    class RunsWhenUnpickled:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').write('ran')",))

    code = f"open({str(marker)!r}, 'w').write('ran')\n"
    return [("a malicious pickle", pickle.dumps(RunsWhenUnpickled())),
            ("Python code", code.encode()),
            ("Python code after the entry's first line", b"rdpsym-cache/2\n" + code.encode()),
            ("a generated module whose body runs code", f"import os\nos.system('touch {marker}')\n".encode())]


def _tamperings(data: bytes, rng: random.Random, marker: Path) -> list[tuple[str, bytes]]:
    out = []
    digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
    for i in sorted(rng.sample(digits, min(30, len(digits)))):
        out.append((f"digit changed at byte {i}", data[:i] + bytes([48 + (data[i] - 47) % 10]) + data[i + 1:]))
    for _ in range(30):
        i, bit = rng.randrange(len(data)), 1 << rng.randrange(8)
        out.append((f"bit {bit} flipped at byte {i}", data[:i] + bytes([data[i] ^ bit]) + data[i + 1:]))
    header_end = data.index(b"\n", len(b"rdpsym-cache/2\n")) + 1
    for n in (0, 1, 14, header_end - 1, header_end, (header_end + len(data)) // 2, len(data) - 1):
        out.append((f"truncated to {n} bytes", data[:n]))
    out.append(("another format", data.replace(b"rdpsym-cache/2", b"rdpsym-cache/3", 1)))
    out.append(("a byte appended", data + b" "))
    return out + _marker_payloads(marker)


def test_tampered_entries_are_discarded_never_run_never_raise(warm, monkeypatch, tmp_path, caplog):
    """Every tampering of every entry kind: the entry is discarded (or reads back identical), with one
    warning line each; no marker file appears; nothing raises."""
    warm.use(monkeypatch)
    marker = tmp_path / "marker"
    rng = random.Random(31)
    totals = {"tampered": 0, "silently wrong": 0, "executed": 0, "internal errors": 0, "discarded": 0}
    for kind, cache in KINDS.items():
        path = warm.entry(kind)
        key = path.name[len(kind) + 1:-len(".rdpsym")]
        original = cache.load(key, warm.check(kind))
        assert original is not None
        for what, data in _tamperings(warm.entries[path.name], rng, marker):
            path.write_bytes(data)
            totals["tampered"] += 1
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="rdpsym.cache"):
                try:
                    value = cache.load(key, warm.check(kind))
                except Exception as exc:  # noqa: BLE001 - counted: the target is 0
                    totals["internal errors"] += 1
                    print(f"{kind}, {what}: {type(exc).__name__}: {exc}")
                    continue
            if value is None:
                totals["discarded"] += 1
                assert not path.exists(), f"{kind}, {what}: a discarded entry stays"
                assert len(caplog.records) == 1 and "discarded" in caplog.records[0].getMessage(), (kind, what)
            elif not DataCodec.same(value, original):
                totals["silently wrong"] += 1
                print(f"{kind}, {what}: read back a different value")
            if marker.exists():
                totals["executed"] += 1
                marker.unlink()
        path.write_bytes(warm.entries[path.name])
    print(totals)
    assert totals["tampered"] >= 3 * 70
    assert totals["silently wrong"] == totals["executed"] == totals["internal errors"] == 0, totals


def test_an_entry_is_bound_to_its_name_and_to_this_users_key(warm, monkeypatch, caplog):
    warm.use(monkeypatch)
    derivation, code = warm.entry("derivation"), warm.entry("code")
    other = "0" * 64
    # a valid entry copied to another key of its kind, or to another kind, is refused
    (warm.directory / f"derivation-{other}.rdpsym").write_bytes(derivation.read_bytes())
    assert derive_cache._DERIVATIONS.load(other) is None
    code.write_bytes(derivation.read_bytes())
    assert SOURCE_CACHE.load(code.name[5:-7]) is None
    assert "another name" in caplog.text
    # the same cache read by another user (another key): every entry is recomputed, none trusted
    warm.use(monkeypatch, key="another-users-key")
    caplog.clear()
    for kind, cache in KINDS.items():
        assert cache.load(warm.entry(kind).name[len(kind) + 1:-7]) is None
    assert caplog.text.count("not signed with this user's cache key") == 3


def test_a_signed_entry_with_a_code_payload_builds_nothing(warm, monkeypatch, tmp_path, caplog):
    """Even an entry that passes the signature (the reader's own defence): sympy text that would run code."""
    warm.use(monkeypatch)
    marker = tmp_path / "marker"
    path = warm.entry("derivation")
    key = path.name[len("derivation-"):-7]
    payload = path.read_bytes().split(b"\n", 2)[2]
    for evil in (f"__import__('os').system('touch {marker}')", f"exp('__import__(\"os\").system(\"touch {marker}\")')"):
        data = json.loads(payload)
        data["dataclass"][1]["expr"] = {"sympy": evil}
        path.write_bytes(_cache._seal("derivation", key, json.dumps(data).encode(), _cache._signing_key()))
        assert derive_cache._DERIVATIONS.load(key) is None and not marker.exists()
    assert caplog.text.count("undecodable (SreprError") == 2


def test_a_signed_entry_that_lies_fails_the_spot_check(warm, monkeypatch, caplog):
    """A wrong closed form that passes every integrity check (as an engine bug would write it) is caught
    by the spot check against the direct sum (a finite support): discarded and derived again."""
    warm.use(monkeypatch)
    path = warm.entry("derivation")
    key = path.name[len("derivation-"):-7]
    stored = derive_cache._DERIVATIONS.load(key)
    assert derive_cache._DERIVATIONS.store(key, dataclasses.replace(stored, expr=2 * stored.expr))
    assert derive_cache._DERIVATIONS.load(key, warm.check("derivation")) is None
    assert "the direct sum gives" in caplog.text
    # the pristine entry passes it
    warm.use(monkeypatch)
    assert derive_cache._DERIVATIONS.load(key, warm.check("derivation")) is not None


def _cold_value(warm, alpha=2.5, p=0.7):
    namespace: dict = {}
    exec(compile(warm.source, "<cold>", "exec"), namespace)  # noqa: S102 - the cold run's own code
    fname = [n for n in namespace if n.startswith("rdp_")][0]
    return namespace[fname](alpha, p=p)


def test_a_later_run_after_tampering_equals_the_cold_run(warm, monkeypatch, tmp_path, caplog):
    """One digit of the derivation, one constant of the generated code, one bit of the series: each is
    discarded and recomputed; the result, the source and the function's values are the cold run's."""
    warm.use(monkeypatch)
    derivation, code, series = (warm.entry(k) for k in ("derivation", "code", "series"))
    data = derivation.read_bytes()
    i = data.index(b"Integer(2)")  # alpha*... the 2 of a power: the one-byte edit
    derivation.write_bytes(data[:i] + b"Integer(3)" + data[i + len(b"Integer(2)"):])
    data = code.read_bytes()
    i = data.index(b"0.5")
    code.write_bytes(data[:i] + b"0.4" + data[i + 3:])
    data = series.read_bytes()
    series.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    with caplog.at_level(logging.WARNING, logger="rdpsym.cache"):
        r = rdpsym.rdp(warm.mechanism)
        source = generate_source(r)
        f = to_numpy(r)
    assert signature(r) == signature(warm.result)
    assert source == warm.source and f.source == warm.source
    assert float(f(2.5, p=0.7)) == float(_cold_value(warm))
    assert caplog.text.count("discarded") == 3, caplog.text
    # and the recomputed entries are written again, valid
    assert _cache.verify_all().discarded == []


@pytest.mark.parametrize("how", ["replaced by code", "truncated"])
def test_the_command_line_after_tampering_prints_the_cold_code(warm, monkeypatch, tmp_path, how):
    """``rdpsym codegen`` in a fresh process, every entry replaced by a malicious pickle or Python code
    (or truncated): exit 0, the cold run's source, one warning line per entry, no marker file."""
    warm.use(monkeypatch)
    marker = tmp_path / "marker"
    payloads = _marker_payloads(marker)
    for i, kind in enumerate(KINDS):
        path = warm.entry(kind)
        path.write_bytes(payloads[i][1] if how == "replaced by code" else path.read_bytes()[:len(path.read_bytes()) // 2])
    out = subprocess.run([sys.executable, "-c", "from rdpsym.cli import main; main(['codegen', 'randomized_response'])"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == warm.source.strip()
    assert out.stderr.count("discarded") == 3 and "internal error" not in out.stderr, out.stderr
    assert not marker.exists()


def test_cache_verify_reports_and_discards_what_fails(warm, monkeypatch, tmp_path):
    from click.testing import CliRunner

    from rdpsym.cli import main

    warm.use(monkeypatch)
    (warm.directory / "codegen-mine.py").write_text("x = 1\n")  # a user's file: not checked, not touched
    warm.entry("series").write_bytes(b"")
    data = warm.entry("code").read_bytes()
    warm.entry("code").write_bytes(data.replace(b"0.5", b"0.4", 1))
    result = CliRunner().invoke(main, ["cache", "verify", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["kept"] == 1 and sorted(d["file"].split("-")[0] for d in doc["discarded"]) == ["code", "series"]
    assert all(d["reason"] for d in doc["discarded"])
    again = CliRunner().invoke(main, ["cache", "verify"])
    assert again.exit_code == 0 and "1 entry kept, 0 discarded" in again.output, again.output
    assert (warm.directory / "codegen-mine.py").read_text() == "x = 1\n"


def test_generated_code_is_executed_only_after_its_entry_is_verified(warm, monkeypatch, tmp_path):
    """The issue's 0.5 -> 0.4 edit of the float code: to_numpy never runs the edited text."""
    warm.use(monkeypatch)
    marker = tmp_path / "marker"
    code = warm.entry("code")
    code.write_bytes(code.read_bytes().replace(b'"""Generated by rdpsym',
                                               f'open({str(marker)!r}, "w").write("ran")\n"""Generated by rdpsym'.encode(), 1))
    f = to_numpy(warm.result)
    assert not marker.exists() and f.source == warm.source
    with mpmath.workdps(30):
        assert float(f(2.5, p=0.7)) == float(_cold_value(warm))
