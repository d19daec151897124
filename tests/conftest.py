"""The test tiers (README, "Run the tests") and what the whole suite shares.

Tiers, as pytest markers registered in pyproject.toml:

* ``unit``: derives nothing. The autouse fixture :func:`_unit_tests_derive_nothing` fails such a test
  when it calls the engine (``rdpsym.rdp``, ``rdpsym.renyi_divergence``, the uncached derivation).
* ``registry``: conformance of every registered mechanism (a new built-in is picked up).
* ``notebooks``: notebooks/ executed in fresh kernels.
* ``slow``: out of the default run (``-m 'not slow'`` in pyproject.toml); ``python -m pytest -m slow``.

A distributed run of the whole suite first derives the built-ins the default run uses into the shared
derivation cache (:func:`pytest_sessionstart`), so the workers read them instead of deriving them
side by side.
"""

import os
import sys
import time

import pytest
from hypothesis import HealthCheck, settings

# Derivations in tests run against a private cache directory, so a stale user cache can never
# make a test pass, and the suite's own second derivations are cache hits.
os.environ.setdefault("RDPSYM_CACHE_DIR", os.path.join(os.path.dirname(__file__), ".rdpsym-cache"))
# ... and its entries are signed with a key of the suite's own (outside that directory), not the user's
os.environ.setdefault("RDPSYM_CACHE_KEY_FILE", os.path.join(os.path.dirname(__file__), ".rdpsym-cache-key"))

settings.register_profile("dev", max_examples=20, deadline=None)
# the default run draws the same examples on every machine and every run (a verdict of CI does not hang on
# which examples a random seed drew); HYPOTHESIS_PROFILE=thorough explores with fresh random examples
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    """A test worker of a distributed run shares the cores with the other workers already: its sweeps
    (``verify``'s points, ``regress``'s entries) run in the worker itself, as ``RDPSYM_EXECUTOR=serial``
    says (each sweep starting a process per core on top of the workers oversubscribed the cores, and a
    ``fail_fast`` verification computed points in parallel that it then threw away). Tests of the process
    pool pass ``executor=`` explicitly or unset the variable."""
    if hasattr(config, "workerinput"):
        os.environ.setdefault("RDPSYM_EXECUTOR", "serial")


# -- the derivation cache, warmed before the workers start ------------------------------------------------
def _warm_up_wanted(config) -> bool:
    """Warm the cache in the controller of a distributed default run (``python -m pytest``: the whole
    suite but ``slow``). A run of a few files or of one tier, a one-process run and ``--collect-only``
    derive what they need themselves. ``RDPSYM_TEST_WARM_UP=0/1`` overrides."""
    forced = os.environ.get("RDPSYM_TEST_WARM_UP")
    if forced is not None:
        return forced not in ("", "0")
    if hasattr(config, "workerinput") or config.getoption("dist", "no") == "no" or not config.getoption("tx", None):
        return False
    if config.getoption("collectonly", False):
        return False
    whole = not config.args or all(os.path.abspath(a) == os.path.join(config.rootpath, "tests") for a in config.args)
    return whole and config.getoption("markexpr", "") in ("", "not slow")


def pytest_sessionstart(session):
    """Derive the built-ins of the default run once, in as many processes as there are test workers,
    before xdist starts them (its own ``pytest_sessionstart`` runs last). Without this, two workers
    derive the same mechanism at the same moment and neither finds it cached. A built-in that fails or
    times out here is simply not cached: the tests derive it again and report it."""
    config = session.config
    if not _warm_up_wanted(config):
        return
    import concurrent.futures
    import multiprocessing

    from _builtins import derive_into_cache, warm_up_names

    names = warm_up_names()
    started = time.perf_counter()
    workers = max(1, len(config.getoption("tx", None) or ()))
    context = multiprocessing.get_context("spawn")  # a clean interpreter: no state copied from pytest
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(names)), mp_context=context) as pool:
        outcomes = list(pool.map(derive_into_cache, names))
    failed = [f"{name} ({outcome})" for name, outcome in zip(names, outcomes) if outcome]
    config._rdpsym_warm_up = (len(names), time.perf_counter() - started, failed)


def pytest_terminal_summary(terminalreporter, config):
    warm = getattr(config, "_rdpsym_warm_up", None)
    if warm is not None:
        count, seconds, failed = warm
        terminalreporter.write_line(f"rdpsym: {count} built-ins derived into the test cache before the workers started "
                                    f"({seconds:.1f} s)" + (f"; not cached: {', '.join(failed)}" if failed else ""))


# -- the unit tier derives nothing ------------------------------------------------------------------------
_CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


def _engine_entry_points():
    import rdpsym
    from rdpsym.derive import engine

    return {id(f): f for f in (rdpsym.rdp, rdpsym.renyi_divergence, engine.derive_uncached)}


@pytest.fixture(autouse=True)
def _unit_tests_derive_nothing(request, monkeypatch):
    """In a test marked ``unit``, every binding of the engine's entry points, in every loaded rdpsym
    module, refuses: the test fails (``pytest.fail`` is a BaseException, so no ``except Exception`` in
    the code under test hides it, and a call is failed again at teardown should anything swallow it).
    Fixtures of a wider scope are set up before this one: a unit test uses none that derives. Yields the
    names of the refused calls (None outside the unit tier)."""
    if request.node.get_closest_marker("unit") is None:
        yield None
        return
    entry_points, calls = _engine_entry_points(), []

    def refusing(fn):
        def refuse(*args, **kwargs):
            calls.append(fn.__name__)
            pytest.fail(f"a unit test called {fn.__module__}.{fn.__name__}: unit tests derive nothing "
                        "(build the object directly, or move the test out of the unit tier)", pytrace=False)

        return refuse

    replacements = {key: refusing(fn) for key, fn in entry_points.items()}
    for name, module in list(sys.modules.items()):
        if module is not None and (name == "rdpsym" or name.startswith("rdpsym.")):
            for attr, value in list(vars(module).items()):
                if id(value) in replacements and value is entry_points[id(value)]:
                    monkeypatch.setattr(module, attr, replacements[id(value)])
    yield calls
    if calls and not request.node.stash.get(_CALL_FAILED, False):
        pytest.fail(f"a unit test derived ({', '.join(sorted(set(calls)))}), even though the call was caught",
                    pytrace=False)


# -- fixtures shared by several modules -------------------------------------------------------------------
@pytest.fixture
def expire_a_time_limit():
    """A function that lets a short time limit expire and catches its StepTimeout, as a step that falls
    back after a timeout does: what is computed meanwhile must never be cached."""
    from rdpsym._timeout import StepTimeout, time_limit

    def expire():
        try:
            with time_limit(0.05, clock="wall"):
                while True:
                    pass
        except StepTimeout:
            pass

    return expire


@pytest.fixture(scope="session")
def table_ii():
    """The three Table II mechanisms, derived once per session (fresh, no cache)."""
    import rdpsym
    from rdpsym import mechanisms

    return {name: (mechanisms.get(name), rdpsym.rdp(mechanisms.get(name), cache=False))
            for name in ("randomized_response", "laplace", "gaussian")}
