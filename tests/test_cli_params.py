"""The one NAME=VALUE reader of the CLI, and the execution layer without click."""

import subprocess
import sys

import click
import pytest

from rdpsym.cli._params import name_values


def test_name_values():
    assert name_values([" sigma = 1/3", "b=2", "b=3"], "--param") == {"sigma": "1/3", "b": "3"}
    assert name_values(["e=a=b"], "--symbol") == {"e": "a=b"}
    for bad in ("sigma", "=1"):
        with pytest.raises(click.BadParameter, match="expected NAME=VALUE, got") as caught:
            name_values([bad], "--param")
        assert caught.value.param_hint == "--param"
    with pytest.raises(click.BadParameter, match="^'g:b=1,b=2': b given twice$"):
        name_values(["b=1", "b=2"], "--add", context="'g:b=1,b=2': ", unique=True)


def test_execution_does_not_import_click():
    code = ("import sys, rdpsym.execution, rdpsym.verification, rdpsym.claims, rdpsym.regress; "
            "print('click' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"

