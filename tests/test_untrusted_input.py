"""Untrusted text and invalid numbers across the API: nothing runs as code, nothing becomes a small
number. From an adversarial review: sympy's ``S``/``sympify`` evaluates strings as Python, and
``Rational(nan)`` is 0."""

from __future__ import annotations

import pytest
import sympy as sp
from click.testing import CliRunner

import rdpsym
from rdpsym import mechanisms
from rdpsym.cli import main
from rdpsym.specify.text import as_number

PAYLOAD = "__import__('os').system('touch {marker}')"


@pytest.fixture
def payload(tmp_path):
    marker = tmp_path / "ran"
    yield PAYLOAD.format(marker=marker), marker
    assert not marker.exists(), "user text was executed"


@pytest.mark.parametrize("value, expected", [
    (1, sp.Integer(1)), (2.5, sp.Rational(5, 2)), ("1/3", sp.Rational(1, 3)), ("oo", sp.oo),
    (float("inf"), sp.oo), (sp.Rational(2, 7), sp.Rational(2, 7)), (0.1, sp.Rational(0.1)),
])
def test_as_number_reads_numbers_exactly(value, expected):
    assert as_number(value) == expected


@pytest.mark.parametrize("value", [float("nan"), sp.nan, "x + 1", None, True, [1], "nan"])
def test_as_number_rejects_non_numbers_by_name(value):
    with pytest.raises(ValueError, match="order must be a number"):
        as_number(value, "order")


def test_as_number_never_runs_text(payload):
    text, _ = payload
    with pytest.raises(ValueError, match="must be a number"):
        as_number(text, "alpha")


def test_property_checks_do_not_evaluate_strings(payload):
    from rdpsym.properties.dp import dp_implies_rdp
    from rdpsym.properties.probability import section_vii_interval

    text, _ = payload
    with pytest.raises(ValueError):
        section_vii_interval(text, 1, 0.5)
    with pytest.raises(ValueError):
        dp_implies_rdp(None, epsilons=[1], orders=[text])


def test_claims_reject_nan_constants_digits_and_ranges(payload):
    text, _ = payload
    g = mechanisms.get("gaussian")
    claim = "alpha*sensitivity**2/(2*sigma**2) + k"
    for bad in (float("nan"), float("-inf"), sp.nan):
        with pytest.raises(ValueError, match="symbols\\['k'\\]"):
            rdpsym.check_claim(g, claim, symbols={"k": bad})
    for digits in (float("nan"), -5, 0, 80):
        with pytest.raises(ValueError, match="digits"):
            rdpsym.check_claim(g, "alpha/sigma**2", digits=digits)
    for rng in ((float("nan"), sp.oo), (text, 5), (2, 1), (-1, 2)):
        with pytest.raises(ValueError, match="alpha_range"):
            rdpsym.check_claim(g, "alpha/sigma**2", alpha_range=rng)
    # the checks can pass: a wrong claim is still refuted, a constant 0 still proved
    assert rdpsym.check_claim(g, "alpha/sigma**2").verdict == "refuted"
    assert rdpsym.check_claim(g, claim, symbols={"k": 0}).verdict == "proved"


def test_cli_properties_param_is_read_as_a_number(payload):
    text, _ = payload
    runner = CliRunner()
    out = runner.invoke(main, ["properties", "laplace", "--param", f"b={text}", "--quick"])
    assert out.exit_code == 2 and "--param" in out.output, out.output
    out = runner.invoke(main, ["properties", "laplace", "--param", "b=-1", "--quick"])
    assert out.exit_code == 2 and "must lie in" in out.output, out.output
    out = runner.invoke(main, ["properties", "laplace", "--param", "b=2", "--param", "sensitivity=1/2",
                               "--only", "curve"])
    assert out.exit_code == 0 and "b=2" in out.output, out.output


@pytest.mark.parametrize("value, match", [(sp.nan, "must be a number"), (float("nan"), "not a finite number"),
                                          ("1", "not a number"), (sp.Symbol("z"), "not a number")])
def test_mechanism_substitutions_reject_non_numbers(value, match):
    with pytest.raises(ValueError, match=match):
        mechanisms.get("laplace").substitutions({"b": value, "sensitivity": 1})


def test_table_verification_reads_fixed_values_as_numbers(payload):
    # Table II's cells pin parameters with `fixed`: a string there was sympified (run as code), and
    # NaN only failed deep inside a verification point
    from rdpsym.verification import table_verification

    text, _ = payload
    lap = mechanisms.get("laplace")
    result = rdpsym.rdp(lap)
    with pytest.raises(ValueError, match=r"fixed\['b'\] must be a number"):
        table_verification(lap, result, fixed={"b": text})
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"fixed\['b'\]"):
            table_verification(lap, result, fixed={"b": bad})
