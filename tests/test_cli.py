"""The command line: every command has --help, and `rdpsym table` prints Table II."""

import subprocess
import sys

import pytest
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
