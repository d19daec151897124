"""The registry-wide tests' view of the built-ins: which take too long cold for the default run.

A built-in whose cold derivation takes tens of seconds to minutes on the 2-core CI machine (measured
with an empty cache, ``python -c "import rdpsym; rdpsym.rdp(rdpsym.mechanisms.get(NAME))"``) is
checked by the registry-wide tests only in the slow run (``pytest -m slow``); its own test module
still checks its values against mpmath. Every other registered mechanism, a new one included, runs in
the default run.
"""

import pytest

from rdpsym import mechanisms

#: cold derivation on the CI machine: bounded_laplace ~130 s, exponential_mechanism ~45 s,
#: discrete_laplace ~35-70 s (2 cores shared with the other test worker); multivariate_gaussian derives in
#: seconds but each 2-D numeric check at 30 digits takes minutes
SLOW_TO_DERIVE = {"bounded_laplace", "exponential_mechanism", "discrete_laplace", "multivariate_gaussian"}


def builtin_params(names=None):
    """``mechanisms.names()`` (or ``names``) as pytest params, the slow-to-derive ones marked slow."""
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_TO_DERIVE else n
            for n in (mechanisms.names() if names is None else names)]
