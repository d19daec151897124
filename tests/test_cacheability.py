"""Cacheability is structured (issue 28, item 4): the provenance names the stages that expired; a required
stage keeps a result out of every cache, an optional one (the integer orders) is cached with its gap."""

from __future__ import annotations

import dataclasses

import sympy as sp

import rdpsym
from rdpsym import _cache
from rdpsym.derive import cache as derive_cache
from rdpsym.derive.result import OPTIONAL_STAGES, DivergenceResult, Provenance, Status, expired_in
from rdpsym.derive.stages import Derivation, run_stages

x = sp.Symbol("x", integer=True)
q = sp.Symbol("q", positive=True)
P, Q = q ** x * (1 - q) ** (1 - x), (1 - q) ** x * q ** (1 - x)


def _stage(name, expire):
    def stage(d):
        expire()
        d.log.note(name, "ran")

    stage.__name__ = name
    return stage


def test_an_optional_stage_that_expired_is_a_recorded_gap(expire_a_time_limit):
    d = Derivation(P, Q, x, sp.FiniteSet(0, 1), None, 5.0, False)
    before = _cache.unexcused_timeouts()
    run_stages(d, (_stage("integer_orders", expire_a_time_limit),))
    assert d.expired == ["integer_orders"] and "integer_orders" in OPTIONAL_STAGES
    assert _cache.unexcused_timeouts() == before  # excused: caches may keep what is computed around it
    assert any("kept with this gap" in s.detail for s in d.log.steps)


def test_a_required_stage_that_expired_is_recorded_and_not_excused(expire_a_time_limit):
    d = Derivation(P, Q, x, sp.FiniteSet(0, 1), None, 5.0, False)
    before = _cache.unexcused_timeouts()
    run_stages(d, (_stage("kl", lambda: None), _stage("general", expire_a_time_limit)))
    assert d.expired == ["general"] and _cache.unexcused_timeouts() == before + 1


def test_cacheable_reads_the_expired_stages_not_the_prose():
    ok = DivergenceResult(expr=None, status=Status.NUMERIC_ONLY, reason="the integrand timed out",
                          provenance=Provenance(expired=("integer_orders",)))
    assert derive_cache.cacheable(ok)  # prose saying "timed out" no longer decides anything
    for expired in (("general",), ("integer_orders", "symmetry"), ("derivation",)):
        assert not derive_cache.cacheable(dataclasses.replace(ok, provenance=Provenance(expired=expired)))
    assert not derive_cache.cacheable(dataclasses.replace(ok, status=Status.FAILED))
    assert expired_in([ok, dataclasses.replace(ok, provenance=Provenance(expired=("kl", "integer_orders")))]) == \
        ("integer_orders", "kl")
    assert "expired stages: integer_orders (optional" in ok.provenance.describe()


def _fake_engine(monkeypatch, expire, expired):
    calls = []

    def derive(*args):
        calls.append(args)
        before = _cache.unexcused_timeouts()
        expire()
        if expired == ("integer_orders",):
            _cache.excuse_timeouts(_cache.unexcused_timeouts() - before)  # as run_stages does
        return DivergenceResult(expr=None, status=Status.NUMERIC_ONLY, reason="no closed form",
                                integer_orders=((2, sp.log(1 + q)),), provenance=Provenance(expired=expired))

    monkeypatch.setattr("rdpsym.derive.engine.derive_uncached", derive)
    return calls


def test_a_derivation_with_an_optional_gap_is_cached_once(tmp_path, monkeypatch, expire_a_time_limit):
    """Cauchy's case: the integer order 3 ran out of time; the result is kept on disk with that gap, so
    the next process reads it instead of deriving again."""
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RDPSYM_CACHE_KEY_FILE", str(tmp_path / "key"))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    calls = _fake_engine(monkeypatch, expire_a_time_limit, ("integer_orders",))
    first = rdpsym.renyi_divergence(P, Q, x, sp.FiniteSet(0, 1), check_density=False)
    second = rdpsym.renyi_divergence(P, Q, x, sp.FiniteSet(0, 1), check_density=False)
    assert len(calls) == 1 and list((tmp_path / "cache").glob("derivation-*.rdpsym"))
    assert second.provenance.expired == first.provenance.expired == ("integer_orders",)
    assert second.integer_orders == first.integer_orders


def test_a_derivation_with_a_required_or_unrecorded_expiry_is_not_cached(tmp_path, monkeypatch, expire_a_time_limit):
    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RDPSYM_CACHE_KEY_FILE", str(tmp_path / "key"))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    for expired in (("general",), ()):  # () : a time limit expired that no stage recorded
        calls = _fake_engine(monkeypatch, expire_a_time_limit, expired)
        r = rdpsym.renyi_divergence(P, Q, x, sp.FiniteSet(0, 1), check_density=False)
        rdpsym.renyi_divergence(P, Q, x, sp.FiniteSet(0, 1), check_density=False)
        assert len(calls) == 2 and not list((tmp_path / "cache").glob("derivation-*.rdpsym"))
        assert r.provenance.required_expired == (expired or ("derivation",))


def test_memos_keep_values_computed_across_an_excused_expiry_only(expire_a_time_limit):
    memo, calls = _cache.Memo(), []

    def compute(excuse):
        calls.append(excuse)
        before = _cache.unexcused_timeouts()
        expire_a_time_limit()
        if excuse:
            _cache.excuse_timeouts(_cache.unexcused_timeouts() - before)
        return "value"

    memo.get_or_compute("required", lambda: compute(False))
    memo.get_or_compute("optional", lambda: compute(True))
    assert "required" not in memo and "optional" in memo


# -- exact integer orders: derived once, shared between processes through the disk ------------------------
def _integer_order(k, seconds=20.0):
    from rdpsym.derive import integer_order

    return integer_order._direction_integer_order(P, Q, x, sp.FiniteSet(0, 1), k, (), seconds)


def _use_a_fresh_disk_cache(tmp_path, monkeypatch):
    from rdpsym.derive import integer_order

    monkeypatch.setenv("RDPSYM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RDPSYM_NO_CACHE", raising=False)
    monkeypatch.setattr(integer_order, "_INTEGER_ORDERS", _cache.Memo())  # no in-process copy hides the disk


def test_an_exact_integer_order_is_derived_once_and_read_back(tmp_path, monkeypatch):
    """D_3 of the pair is derived, stored, and read back by a process that cannot derive it."""
    from rdpsym.derive import integer_order

    _use_a_fresh_disk_cache(tmp_path, monkeypatch)
    value = _integer_order(3)
    assert value is not None and list(tmp_path.glob("integerorder-*.rdpsym"))

    def never(*args):
        raise AssertionError("derived again")

    monkeypatch.setattr(integer_order, "_derive_direction_integer_order", never)
    assert _integer_order(3) == value


def test_a_stored_integer_order_that_disagrees_with_the_direct_sum_is_discarded(tmp_path, monkeypatch):
    """A signed entry whose value is wrong (an engine bug, an entry from other code) is doubted on a finite
    support: the direct sum at a sample point disagrees, the entry is discarded and the value derived."""
    from rdpsym.derive import integer_order

    _use_a_fresh_disk_cache(tmp_path, monkeypatch)
    right = _integer_order(3)
    derived = []
    real = integer_order._derive_direction_integer_order
    monkeypatch.setattr(integer_order, "_derive_direction_integer_order",
                        lambda *args: derived.append(args) or real(*args))
    (entry,) = tmp_path.glob("integerorder-*.rdpsym")
    key = entry.name.removeprefix("integerorder-").removesuffix(".rdpsym")
    assert derive_cache._INTEGER_ORDERS.store(key, {"value": right + 1})  # signed, and wrong
    assert _integer_order(3) == right and len(derived) == 1


def test_an_integer_order_computed_while_a_limit_expired_is_not_stored(tmp_path, monkeypatch, expire_a_time_limit):
    from rdpsym.derive import integer_order

    _use_a_fresh_disk_cache(tmp_path, monkeypatch)

    def gives_up(*args):
        expire_a_time_limit()
        return None

    monkeypatch.setattr(integer_order, "_derive_direction_integer_order", gives_up)
    assert _integer_order(4) is None
    assert not list(tmp_path.glob("integerorder-*.rdpsym"))
