"""One disk cache: ``rdpsym cache clear`` removes derivations and generated code (issue 14)."""


import sympy as sp
from click.testing import CliRunner

import rdpsym
from rdpsym import _cache
from rdpsym.cli import main


def test_cache_clear_removes_generated_code_and_derivations(tmp_path, monkeypatch):
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    x = sp.Symbol("x", positive=True)
    l1, l2 = sp.symbols("l1 l2", positive=True)
    r = rdpsym.renyi_divergence(l1 * sp.exp(-l1 * x), l2 * sp.exp(-l2 * x), x, sp.Interval(0, sp.oo))
    r.to_source()
    code = list(tmp_path.glob("code-*.rdpsym")) + list(tmp_path.glob("series-*.rdpsym"))  # module and series
    derivations = list(tmp_path.glob("derivation-*.rdpsym"))
    assert list(tmp_path.glob("code-*.rdpsym")) and derivations

    out = CliRunner().invoke(main, ["cache", "clear"])
    assert out.exit_code == 0, out.output
    assert not any(f.exists() for f in code + derivations)
    assert not list(tmp_path.iterdir())
    assert f"{len(derivations)} derivation(s)" in out.output and f"{len(code)} generated-code file(s)" in out.output


def test_clear_all_empties_registered_in_process_caches(tmp_path, monkeypatch):
    from rdpsym.accounting import curves

    # clear_all also deletes the files of the current cache directory: a private one, so the suite's
    # shared cache (conftest: every xdist worker's derivations and generated code) is not wiped mid-run
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    curves._CURVES["probe"] = object()
    _cache.clear_all()
    assert "probe" not in curves._CURVES


def test_cache_clear_in_a_fresh_process_knows_every_disk_cache(tmp_path, monkeypatch):
    """A cache registers itself when its module is imported; the command imports every owner first."""
    import os
    import subprocess
    import sys

    from rdpsym.compile.store import SOURCE_CACHE, cache_key
    from rdpsym.derive import cache as derive_cache

    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    SOURCE_CACHE.store(cache_key("probe"), "x = 1\n")
    derive_cache._DERIVATIONS.store("probe", {"a": 1})
    assert len([f for f in tmp_path.iterdir() if f.name != _cache.MARKER]) == 2
    out = subprocess.run([sys.executable, "-c", "from rdpsym.cli import main; main(['cache', 'clear'])"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert not list(tmp_path.iterdir()), out.stdout
    assert "1 derivation(s), 1 generated-code file(s)" in out.stdout
