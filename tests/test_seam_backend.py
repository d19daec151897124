"""The numeric-backend seam: a backend is one new file with a ``register_backend`` call.

The backend below is written to a file of its own and imported, as a user's would be. It evaluates
``log P`` and ``log Q`` with mpmath from the compiled (parameters as arguments) log-forms, and leaves the
points ``x < 0`` to the built-in mpmath fallback (its evaluator returns None there). Selected by
``RDPSYM_NUMERIC_BACKEND=<name>``, numeric_divergence must use it (its evaluation count is positive),
fall back to mpmath where it declines, and still give the closed form: D_alpha of N(0, s^2) against
N(1, s^2) is alpha / (2 s^2) (Mironov 2017, arXiv:1702.07476, Prop. 7).
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import mpmath
import pytest
import sympy as sp

from rdpsym.numeric import numeric_divergence
from rdpsym.numeric.backends import backend_names, unregister_backend

BACKEND_FILE = '''
"""A toy numeric backend: log P and log Q lambdified to mpmath, parameters bound per call."""
import mpmath
import sympy as sp

from rdpsym.numeric.backends import register_backend

CALLS = {"compile": 0, "bind": 0, "points": 0, "declined": 0}


@register_backend
class ToyBackend:
    name = "toy"

    def compile(self, lp, lq, x, params):
        CALLS["compile"] += 1
        return ToyCompiled(sp.lambdify((x, *params), (lp, lq), modules="mpmath"), params)


class ToyCompiled:
    def __init__(self, f, params):
        self.f, self.params = f, params

    def bind(self, values, prec):
        CALLS["bind"] += 1
        digits = mpmath.libmp.prec_to_dps(prec) + 5
        args = [mpmath.mpf(sp.Float(values[p], digits)) for p in self.params]
        f = self.f

        def evaluate(t):
            if t < 0:  # leave these points to mpmath
                CALLS["declined"] += 1
                return None
            CALLS["points"] += 1
            lp, lq = f(t, *args)
            return mpmath.mpf(lp), mpmath.mpf(lq)

        return evaluate


@register_backend
class DecliningBackend:
    """Compiles, but binds to None: every point goes to mpmath."""

    name = "toy-declining"

    def compile(self, lp, lq, x, params):
        CALLS["compile"] += 1
        return self

    def bind(self, values, prec):
        CALLS["bind"] += 1
        return None
'''

x = sp.Symbol("x", real=True)
s = sp.Symbol("s", positive=True)


def _gauss(m):
    return sp.exp(-(x - m) ** 2 / (2 * s**2)) / sp.sqrt(2 * sp.pi * s**2)


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy_backend.py"
    path.write_text(textwrap.dedent(BACKEND_FILE))
    spec = importlib.util.spec_from_file_location("toy_backend", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["toy_backend"] = module
    spec.loader.exec_module(module)
    try:
        yield module
    finally:
        unregister_backend("toy")
        unregister_backend("toy-declining")
        sys.modules.pop("toy_backend", None)


def _closed_form_holds(r, alpha, sigma, digits):
    with mpmath.workdps(digits + 20):
        exact = mpmath.mpf(alpha) / (2 * mpmath.mpf(sigma) ** 2)
        assert r.converged, r.detail
        assert abs(r.value - exact) <= mpmath.mpf(10) ** (-digits), (r.value, exact)
        assert r.error <= mpmath.mpf(10) ** (-digits // 2)


def test_a_registered_backend_is_used_and_mpmath_does_the_points_it_declines(toy, monkeypatch):
    assert "toy" in backend_names()
    monkeypatch.setenv("RDPSYM_NUMERIC_BACKEND", "toy")
    r = numeric_divergence(_gauss(0), _gauss(1), x, sp.S.Reals, 3, {s: sp.Rational(3, 2)}, dps=40)
    assert toy.CALLS["compile"] >= 1 and toy.CALLS["bind"] >= 1
    assert toy.CALLS["points"] > 0 and toy.CALLS["declined"] > 0
    assert r.evaluations["toy"] > 0  # points the backend evaluated
    assert r.evaluations["mpmath"] > 0  # points it left to mpmath (x < 0) and mpmath's integrands
    assert "Arb" not in r.detail
    _closed_form_holds(r, 3, sp.Rational(3, 2), 30)


def test_a_backend_that_binds_to_none_falls_back_to_mpmath(toy, monkeypatch):
    monkeypatch.setenv("RDPSYM_NUMERIC_BACKEND", "toy-declining")
    r = numeric_divergence(_gauss(0), _gauss(1), x, sp.S.Reals, sp.Rational(5, 2), {s: 1}, dps=40)
    assert toy.CALLS["bind"] >= 1
    assert r.evaluations["toy-declining"] == 0 and r.evaluations["mpmath"] > 0
    _closed_form_holds(r, sp.Rational(5, 2), 1, 30)


def test_mpmath_alone_and_an_unknown_backend(monkeypatch):
    monkeypatch.setenv("RDPSYM_NUMERIC_BACKEND", "mpmath")
    r = numeric_divergence(_gauss(0), _gauss(1), x, sp.S.Reals, 2, {s: 1}, dps=30)
    assert set(r.evaluations) == {"mpmath", "quad_nodes"} and r.evaluations["quad_nodes"] == 0
    _closed_form_holds(r, 2, 1, 25)
    monkeypatch.setenv("RDPSYM_NUMERIC_BACKEND", "no-such-backend")
    with pytest.raises(ValueError, match="RDPSYM_NUMERIC_BACKEND"):
        numeric_divergence(_gauss(0), _gauss(1), x, sp.S.Reals, 2, {s: 1}, dps=30)
