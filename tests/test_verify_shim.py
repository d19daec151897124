"""The deprecated package path ``rdpsym.verify`` (now :mod:`rdpsym.verification`) beside the function
``rdpsym.verify``: both import orders, in fresh interpreters (the order is the point)."""

import subprocess
import sys
import textwrap

import pytest

CALL = """
import warnings
import sympy as sp
import rdpsym
from rdpsym.verification import Point
mech = rdpsym.mechanisms.get("gaussian")
point = Point(sp.Integer(2), (("sensitivity", sp.Integer(1)), ("sigma", sp.Integer(1))), "test")
def call():
    report = rdpsym.verify(mech, points=[point], executor="serial")
    assert str(report.status) == "verified" and report.outcome.value == "holds", report
"""


def run(body: str) -> str:
    code = textwrap.dedent(CALL) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_function_first_then_submodule():
    out = run("""
        import inspect, types
        assert isinstance(rdpsym.verify, types.FunctionType)  # no shim imported yet: the function
        call()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import rdpsym.verify.points
        assert any(issubclass(w.category, DeprecationWarning) and "rdpsym.verification" in str(w.message)
                   for w in caught), [str(w.message) for w in caught]
        assert rdpsym.verify.points.verification_points is rdpsym.verification.points.verification_points
        call()  # the attribute is now the (callable) shim module: calls still reach the function
        assert list(inspect.signature(rdpsym.verify).parameters)[0] == "target"
        print("ok")
    """)
    assert "ok" in out


def test_submodule_first_then_function():
    out = run("""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import rdpsym.verify.points
            from rdpsym.verify.verify import VerificationReport, fixed_values
        messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
        assert any("rdpsym.verify.points" in m for m in messages), messages
        assert any("rdpsym.verify.verify" in m for m in messages), messages
        assert VerificationReport is rdpsym.verification.VerificationReport
        assert rdpsym.verify.points.Point is Point
        call()
        from rdpsym.verify import verify  # rdpsym.verify.verify was imported: the callable submodule
        assert verify(mech, points=[point], executor="serial").outcome.value == "holds"
        print("ok")
    """)
    assert "ok" in out


def test_new_path_imports_no_shim():
    out = run("""
        import sys
        warnings.simplefilter("error", DeprecationWarning)
        import rdpsym.verification.points, rdpsym.verification.checks, rdpsym.verification.report
        assert "rdpsym.verify" not in sys.modules
        print("ok")
    """)
    assert "ok" in out


def test_old_results_file_name_still_reads(tmp_path):
    from rdpsym.execution.store import ResultsFile, function_name
    from rdpsym.verification.checks import _check

    path = tmp_path / "old.jsonl"
    path.write_text('{"rdpsym_sweep_results": 1, "fn": "rdpsym.verify.verify._check", "format": "json"}\n'
                    '{"key": "a", "status": "done", "seconds": 0.1, "result": 7}\n')
    assert function_name(_check) == "rdpsym.verification.checks._check"
    loaded = ResultsFile(path, function_name(_check), "json").load()
    assert loaded["a"].result == 7
    with pytest.raises(ValueError, match="holds results of"):
        ResultsFile(path, "rdpsym.other._check", "json").load()


def test_old_submodule_named_like_the_function_stays_callable():
    out = run("""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from rdpsym.verify import verify as before
            import rdpsym.verify.verify
            from rdpsym.verify import verify as after
        assert before is rdpsym.verification.verify
        report = after(mech, points=[point], executor="serial")  # the submodule, callable like the function
        assert report.outcome.value == "holds"
        call()
        print("ok")
    """)
    assert "ok" in out


def test_old_module_constants_stay_importable():
    """The tuning constants the old modules defined (not only their __all__) keep their old paths."""
    import importlib
    import warnings

    expected = {"rdpsym.numeric.divergence": ("rdpsym.numeric.backends.arb", ("GL_FIRST_DEGREE", "GL_MAX_DEGREE")),
                "rdpsym.verify.points": ("rdpsym.verification.points", ("EDGE_OFFSET",)),
                "rdpsym.verify.verify": ("rdpsym.verification.checks", ("SAME_SECONDS",))}
    for old, (new, names) in expected.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            mod = importlib.import_module(old)
        for name in names:
            assert getattr(mod, name) == getattr(importlib.import_module(new), name), (old, name)
