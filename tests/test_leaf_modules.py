"""The leaf modules every package reads numbers, settings, caches and outcomes through (issue 14)."""

from __future__ import annotations

import pickle
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

from rdpsym import _cache, _config
from rdpsym._numbers import ArgumentError
from rdpsym.specify.text.numbers import exact_number, exact_or_symbolic, mp_number
from rdpsym.outcomes import Outcome, Vocabulary, combine, outcome_of


# -- numbers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, exact", [
    (3, sp.Integer(3)), (Fraction(1, 3), sp.Rational(1, 3)), (0.1, sp.Rational(3602879701896397, 2**55)),
    (np.float64(0.5), sp.Rational(1, 2)), (mpmath.mpf("0.25"), sp.Rational(1, 4)), ("1/3", sp.Rational(1, 3)),
    ("oo", sp.oo), (float("-inf"), -sp.oo), (sp.sqrt(2), sp.sqrt(2)), ("sqrt(2)", sp.sqrt(2)),
])
def test_exact_number_reads_every_kind_of_number_exactly(value, exact):
    got = exact_number(value, "b")
    assert got == exact and isinstance(got, sp.Basic) and not got.atoms(sp.Float)


@pytest.mark.parametrize("value, words", [
    (float("nan"), "b must be a number; got nan"), (True, "b must be a number"), (sp.nan, "b must be a number"),
    (sp.zoo, "b must be a number"), ("x + 1", "unknown name 'x'"), ("__import__('os')", "cannot read"),
    ([1], "got list"), (mpmath.mpf("nan"), "got nan"),
])
def test_exact_number_refuses_with_the_argument_and_the_rule(value, words):
    with pytest.raises(ArgumentError, match=re.escape(words)) as info:
        exact_number(value, "b")
    assert info.value.argument == "b" and isinstance(info.value, ValueError)


def test_finite_and_real_rules():
    with pytest.raises(ArgumentError, match="b must be a finite number; got inf"):
        exact_number(float("inf"), "b", finite=True)
    with pytest.raises(ArgumentError, match="b must be a real number"):
        exact_number(sp.I, "b", real=True)
    assert exact_number(sp.oo, "b", real=True) == sp.oo  # +oo is an extended real: allowed unless finite


def test_symbolic_values_pass_through_only_when_asked():
    t = sp.Symbol("t", positive=True)
    assert exact_or_symbolic(2 * t, "v") == 2 * t
    with pytest.raises(ArgumentError):
        exact_number(2 * t, "v")
    with pytest.raises(ArgumentError):
        exact_or_symbolic(t + sp.nan, "v")


def test_mp_number_rounds_once_at_the_working_precision():
    with mpmath.workdps(50):
        assert mp_number("1/3") == mpmath.mpf(1) / 3
        assert mp_number(sp.oo) == mpmath.inf and mp_number(-sp.oo) == -mpmath.inf
        with pytest.raises(ArgumentError, match="finite"):
            mp_number(float("inf"), "q", finite=True)


# -- settings --------------------------------------------------------------------------------------
def test_settings_are_read_from_the_environment_and_validated(monkeypatch, tmp_path):
    monkeypatch.setenv("RDPSYM_STEP_SECONDS", "7.5")
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("RDPSYM_NO_CACHE", "yes")
    monkeypatch.setenv("RDPSYM_NUMERIC_BACKEND", " MPMATH ")
    s = _config.settings()
    assert (s.step_seconds, s.cache_dir, s.cache_enabled, s.numeric_backend) == (7.5, tmp_path, False, "mpmath")
    assert _config.settings() is s  # parsed once for this environment
    for bad in ("0", "-1", "nan", "inf", "soon"):
        monkeypatch.setenv("RDPSYM_STEP_SECONDS", bad)
        with pytest.raises(ArgumentError, match="RDPSYM_STEP_SECONDS must be"):
            _config.settings()


# -- caches ----------------------------------------------------------------------------------------
def test_disk_cache_round_trip_reject_and_clear_all(monkeypatch, tmp_path):
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    disk = _cache.DiskCache("leaftest", accept=lambda v: v != "bad")
    disk.store("k", {"a": 1})
    disk.store("rejected", "bad")
    assert disk.load("k") == {"a": 1} and disk.load("rejected") is None
    disk.path("corrupt").write_bytes(b"not an entry")
    assert disk.load("corrupt") is None and not disk.path("corrupt").exists()
    assert _cache.clear_all() >= 1 and disk.load("k") is None


def test_nothing_computed_while_a_time_limit_expired_is_kept(monkeypatch, tmp_path, expire_a_time_limit):
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    memo, disk, calls = _cache.Memo(), _cache.DiskCache("leaftimeout"), []

    def slow_then_fallback():
        calls.append(1)
        expire_a_time_limit()
        return "fallback"

    assert memo.get_or_compute("key", slow_then_fallback) == "fallback"
    assert "key" not in memo
    assert disk.get_or_compute("key", slow_then_fallback) == "fallback" and disk.load("key") is None
    assert memo.get_or_compute("key", lambda: "fine") == "fine" and memo.get_or_compute("key", lambda: "other") == "fine"
    assert len(calls) == 2


# -- outcomes --------------------------------------------------------------------------------------
class _Words(Vocabulary):
    GOOD = "good", Outcome.HOLDS
    BAD = "bad", Outcome.FAILS


def test_a_vocabulary_is_its_words_with_an_outcome():
    assert str(_Words.GOOD) == "good" and _Words("bad") is _Words.BAD and _Words.BAD.outcome is Outcome.FAILS
    assert pickle.loads(pickle.dumps(_Words.GOOD)) is _Words.GOOD and f"{_Words.GOOD}" == "good"


def test_combine_fails_closed():
    H, F, I = Outcome.HOLDS, Outcome.FAILS, Outcome.INCONCLUSIVE
    assert combine([]) is I  # nothing checked is not "holds"
    assert combine([H, H]) is H and combine([H, I]) is I and combine([I, F, H]) is F
    assert combine([_Words.GOOD, _Words.BAD]) is F and outcome_of(_Words.GOOD) is H
    with pytest.raises(TypeError, match="report"):
        outcome_of("holds")
