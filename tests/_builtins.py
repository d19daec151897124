"""The registry-wide tests' view of the built-ins: which take too long cold for the default run, which
have no closed form, and which the warm-up derives before the test workers start (tests/conftest.py).

A built-in whose cold derivation takes tens of seconds to minutes on the 2-core CI machine (measured
with an empty cache, ``python -c "import rdpsym; rdpsym.rdp(rdpsym.mechanisms.get(NAME))"``) is
checked by the registry-wide tests only in the slow run (``pytest -m slow``); its own test module
still checks its values against mpmath. So is a built-in whose closed form takes the code path of
another one's (:data:`SAME_PATH_AS`) in the registry's value and property checks. Every other
registered mechanism, a new one included, runs in the default run.
"""

import pytest

from rdpsym import mechanisms

#: cold derivation on the CI machine: bounded_laplace ~130 s, exponential_mechanism ~45 s,
#: discrete_laplace ~35-70 s (2 cores shared with the other test worker); multivariate_gaussian derives in
#: seconds but each 2-D numeric check at 30 digits takes minutes
SLOW_TO_DERIVE = {"bounded_laplace", "exponential_mechanism", "discrete_laplace", "multivariate_gaussian"}


#: the built-ins the engine derives no closed form for (mixtures; heavy-tailed, discrete and generalized
#: Gaussian noise): each must say so (numeric_only with a reason, tests/test_mechanisms.py), and its values
#: are checked against mpmath in its own test module. Every other built-in keeps its closed form, and the
#: closed-form checks run on exactly those (a mechanism is never derived only to be skipped).
NUMERIC_ONLY = {"subsampled_gaussian", "generalized_gaussian", "cauchy", "student_t", "discrete_gaussian", "skellam",
                "subsampled_laplace", "binomial"}


#: closed-form built-ins whose registry value and property checks take the code path of the named one's
#: (a finite support summed, parameters in a box), and whose own test module (tests/test_discrete_mechanisms.py)
#: checks their values against mpmath sums in the default run: those registry checks run in the slow tier
SAME_PATH_AS = {"k_randomized_response": "randomized_response", "pure_dp": "randomized_response"}


def builtin_params(names=None):
    """``mechanisms.names()`` (or ``names``) as pytest params, the slow-to-derive ones marked slow."""
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_TO_DERIVE else n
            for n in (mechanisms.names() if names is None else names)]


def closed_form_params():
    """:func:`builtin_params` of the built-ins with a closed form (all but :data:`NUMERIC_ONLY`), those of
    :data:`SAME_PATH_AS` marked slow too (their representative runs by default)."""
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_TO_DERIVE or n in SAME_PATH_AS else n
            for n in mechanisms.names() if n not in NUMERIC_ONLY]


#: the built-ins whose float code (``result.to_numpy()``, cached beside the derivations) the warm-up also
#: generates: the Table II mechanisms, compiled by the accountant, codegen, claims and notebook tests
#: (Laplace's takes ~15 s of CPU cold)
FLOAT_CODE_WARMED = ("randomized_response", "laplace", "gaussian")


def warm_up_names() -> list[str]:
    """The built-ins the default run derives: every registered one but the slow-to-derive; those whose float
    code is generated too (the longest) first."""
    return sorted((n for n in mechanisms.names() if n not in SLOW_TO_DERIVE), key=lambda n: n not in FLOAT_CODE_WARMED)


def derive_into_cache(name: str) -> str:
    """Derive the built-in ``name`` into the derivation cache (``RDPSYM_CACHE_DIR``), and for
    :data:`FLOAT_CODE_WARMED` generate its float code, in a process of the warm-up pool (tests/conftest.py);
    returns "" or why it failed (the tests then derive it themselves)."""
    import rdpsym

    try:
        result = rdpsym.rdp(mechanisms.get(name))
        if name in FLOAT_CODE_WARMED and result.is_closed_form:
            result.to_numpy()
    except Exception as exc:  # reported in the run's summary; the tests that use it fail or derive it again
        return f"{type(exc).__name__}: {exc}"[:200]
    return ""
