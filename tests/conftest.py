import os

import pytest
from hypothesis import HealthCheck, settings

# Derivations in tests run against a private cache directory, so a stale user cache can never
# make a test pass, and the suite's own second derivations are cache hits.
os.environ.setdefault("RDPSYM_CACHE_DIR", os.path.join(os.path.dirname(__file__), ".rdpsym-cache"))
# ... and its entries are signed with a key of the suite's own (outside that directory), not the user's
os.environ.setdefault("RDPSYM_CACHE_KEY_FILE", os.path.join(os.path.dirname(__file__), ".rdpsym-cache-key"))

settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile("ci", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def expire_a_time_limit():
    """A function that lets a short time limit expire and catches its StepTimeout, as a step that falls
    back after a timeout does: what is computed meanwhile must never be cached."""
    from rdpsym._timeout import StepTimeout, time_limit

    def expire():
        try:
            with time_limit(0.05):
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
