"""The command line: every command has --help, and `rdpsym table` prints Table II."""

import subprocess
import sys

import pytest
from _helpers import coin_mechanism_file
from click.testing import CliRunner

from rdpsym.cli import main


def all_commands(group=main, prefix=()):
    for name, cmd in group.commands.items():
        yield prefix + (name,)
        if hasattr(cmd, "commands"):
            yield from all_commands(cmd, prefix + (name,))


@pytest.mark.parametrize("path", list(all_commands()), ids=" ".join)
def test_every_command_has_help(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_table_markdown_and_latex():
    runner = CliRunner()
    md = runner.invoke(main, ["table"])
    assert md.exit_code == 0, md.output
    lines = [l for l in md.output.splitlines() if l.startswith("| ")]
    assert len(lines) == 4  # header and three rows (the separator starts with "|-")
    assert "alpha/(2*sigma**2)" in md.output  # the Gaussian row at sensitivity 1
    tex = runner.invoke(main, ["table", "--latex"])
    assert tex.exit_code == 0 and r"\begin{tabular}" in tex.output and r"\frac{\alpha}{2 \sigma^{2}}" in tex.output


def test_unknown_mechanism_is_a_clear_error():
    result = CliRunner().invoke(main, ["derive", "no_such_mechanism"])
    assert result.exit_code != 0
    assert "unknown mechanism 'no_such_mechanism'" in result.output


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "rdpsym.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "table" in out.stdout


# -- exit codes (rdpsym.cli._exit.ExitCode) and rich markup ------------------------------------------------
from rdpsym.cli import ExitCode  # noqa: E402


def test_exit_codes_are_distinct_and_documented():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 130, 143]
    help_text = CliRunner().invoke(main, ["--help"]).output
    assert "Exit codes:" in help_text and "--debug" in help_text
    for line in ("0  holds", "1  a failed verdict", "2  usage error", "3  inconclusive", "4  internal error",
                 "130  interrupted", "143  terminated"):
        assert line in help_text, help_text
    version = CliRunner().invoke(main, ["--version"])
    assert version.exit_code == 0 and "version" in version.output


def test_exit_code_1_for_a_refuted_claim():
    out = CliRunner().invoke(main, ["check", "randomized_response", "--claim", "p/(1-p)", "--order", "oo"])
    assert out.exit_code == ExitCode.FAILED == 1 and "REFUTED" in out.output, out.output


@pytest.mark.parametrize("args, message", [
    (["verify", "laplace", "--dps", "5"], "--dps"),  # click's own check of an option value
    (["check", "laplace", "--claim", "1", "--fixed", "foo=1"], "fixed: 'foo' is not a parameter"),  # library
    (["check", "laplace", "--claim", "1", "--fixed", "b=-1"], "parameter 'b' must lie in"),
    (["check", "laplace", "--claim", "zz"], "unknown name 'zz'"),  # a formula that does not parse
    (["codegen", "randomized_response", "-o", "/nonexistent-dir/rdp.py"], "cannot write"),
])
def test_exit_code_2_for_bad_usage_with_a_one_line_message(args, message):
    out = CliRunner().invoke(main, args)
    assert out.exit_code == ExitCode.USAGE == 2 and message in out.output, out.output
    assert "Traceback" not in out.output


def test_exit_code_3_when_a_numeric_curve_cannot_be_verified(monkeypatch):
    # numeric_only is a curve (issue 15): verify checks it; where its values cannot be computed the
    # verification earns nothing, and the exit code says inconclusive (was "nothing to verify", exit 3)
    from rdpsym.derive import numeric_values

    def fails(*args, **kwargs):
        raise ArithmeticError("the numeric path did not converge (simulated)")

    from rdpsym.derive import subsampled

    monkeypatch.setattr(numeric_values, "numeric_value", fails)
    monkeypatch.setattr(subsampled.SubsampledCurve, "value", fails)  # the subsampled curve's own values
    out = CliRunner().invoke(main, ["verify", "subsampled_gaussian", "--level", "quick"])
    assert out.exit_code == ExitCode.INCONCLUSIVE == 3 and "inconclusive" in out.output, out.output
    # bracketed text ("worst: [inconclusive] ...") is text, not a rich style tag that vanished
    text = " ".join(out.output.split())
    assert "worst: [inconclusive]" in text, out.output


def _broken_rdp(*args, **kwargs):
    raise RuntimeError("engine exploded\nsecond line")


def test_exit_code_4_for_an_internal_error_without_traceback(monkeypatch):
    import rdpsym.derive.mechanism_rdp as mr

    monkeypatch.setattr(mr, "rdp", _broken_rdp)
    out = CliRunner().invoke(main, ["derive", "laplace"])
    assert out.exit_code == ExitCode.INTERNAL == 4, out.output
    lines = out.output.strip().splitlines()
    assert lines == ["rdpsym: internal error: RuntimeError: engine exploded ... "
                     "(rerun with --debug for the traceback)"], out.output
    assert "Traceback" not in out.output


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_the_traceback_of_an_internal_error(monkeypatch, how):
    import rdpsym.derive.mechanism_rdp as mr

    monkeypatch.setattr(mr, "rdp", _broken_rdp)
    if how == "flag":
        out = CliRunner().invoke(main, ["--debug", "derive", "laplace"])
    else:
        out = CliRunner().invoke(main, ["derive", "laplace"], env={"RDPSYM_DEBUG": "1"})
    assert out.exit_code == 4, out.output
    assert "Traceback (most recent call last)" in out.output and "_broken_rdp" in out.output, out.output
    assert "rdpsym: internal error: RuntimeError: engine exploded" in out.output
    assert "rerun with --debug" not in out.output


def test_an_internal_value_error_in_check_is_4_not_a_usage_error(monkeypatch):
    import rdpsym.claims as claims

    def broken(*args, **kwargs):
        raise ValueError("math domain error")

    monkeypatch.setattr(claims, "check_claim", broken)
    out = CliRunner().invoke(main, ["check", "laplace", "--claim", "1/b"])
    assert out.exit_code == 4 and "internal error: ValueError: math domain error" in out.output, out.output


def test_ctrl_c_exits_130(monkeypatch):
    import rdpsym.derive.mechanism_rdp as mr

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mr, "rdp", interrupted)
    out = CliRunner().invoke(main, ["derive", "laplace"])
    assert out.exit_code == ExitCode.INTERRUPTED == 130 and "interrupted" in out.output, out.output


def test_a_crash_in_the_real_console_script_is_one_line_and_exit_4(tmp_path):
    # click's standalone mode in a real process (not CliRunner), crashed by a monkeypatch in that process
    code = ("import rdpsym.derive.mechanism_rdp as mr, sys\n"
            "def boom(*a, **k): raise RuntimeError('boom')\n"
            "mr.rdp = boom\n"
            "from rdpsym.cli import main\n"
            "sys.argv = ['rdpsym', 'derive', 'laplace']\n"
            "main()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip() == "rdpsym: internal error: RuntimeError: boom (rerun with --debug for the traceback)"


MARKUP_MECH_FILE = coin_mechanism_file('coin[bold]x[/x]')


def test_a_label_with_rich_markup_prints_literally(tmp_path):
    f = tmp_path / "markup_mech.py"
    f.write_text(MARKUP_MECH_FILE)
    out = CliRunner().invoke(main, ["verify", str(f), "--level", "quick", "--workers", "1"])
    assert out.exit_code == 0, out.output  # no MarkupError on "[/x]"
    assert out.output.count("coin[bold]x[/x]") >= 2, out.output  # the table title and the verdict line


def test_a_registry_entry_with_rich_markup_prints_literally(tmp_path):
    reg = tmp_path / "reg.toml"
    reg.write_text('[[entry]]\nname = "rr[bold]max[/x]"\nmechanism = "randomized_response"\norder = "oo"\n'
                   'formula = "2*log(p/(1-p))"\nsource = "[/src] a [red]made-up[/] source"\n')
    out = CliRunner().invoke(main, ["regress", str(reg), "--search", "5", "--workers", "1"])
    assert out.exit_code == ExitCode.FAILED, out.output  # the formula is wrong: a regression
    text = out.output
    assert "rr[bold]max[/x]" in text and "[/src] a [red]made-up[/] source" in text, text
    assert "regressions: rr[bold]max[/x]" in " ".join(text.split()), text


def test_properties_exit_code_follows_the_suite_verdict(monkeypatch):
    from rdpsym.properties import CHECKS, PropertyReport, PropertyVerdict

    def unsure(m, res, values, dps):
        return [PropertyReport("unsure [/x] check", PropertyVerdict.INCONCLUSIVE, "numeric", detail="did not converge")]

    def fails(m, res, values, dps):
        return [PropertyReport("failing [bold]check", PropertyVerdict.FAILS, "numeric", detail="violated")]

    monkeypatch.setitem(CHECKS, "unsure", (True, unsure))
    monkeypatch.setitem(CHECKS, "fails", (True, fails))
    args = ["properties", "randomized_response", "--workers", "1", "--only"]
    out = CliRunner().invoke(main, args + ["unsure"])
    assert out.exit_code == ExitCode.INCONCLUSIVE and "unsure [/x] check" in out.output, out.output
    out = CliRunner().invoke(main, args + ["unsure", "--only", "fails"])
    assert out.exit_code == ExitCode.FAILED and "failing [bold]check" in out.output, out.output
