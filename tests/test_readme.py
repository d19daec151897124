"""The README's examples are tests: every ```python block runs as written, in order, in one namespace
(issue 29: the numeric-curve example failed as written).

A block may be marked by an HTML comment on the line before its fence, which the reader of the README
does not see: ``<!-- test: slow -->`` runs it in the slow tier only (``pytest -m slow``), and
``<!-- test: needs MODULE -->`` skips the run where MODULE (an optional dependency) is not installed.
The default tier runs every block not marked slow; the slow tier runs them all. Each block has a hang
guard far above its typical time, which says so when it fires.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from rdpsym._timeout import StepTimeout, time_limit

README = Path(__file__).resolve().parents[1] / "README.md"
#: a hang guard per block, far above the longest block's time on a loaded machine (a few minutes)
BLOCK_SECONDS = 1200.0
_FENCE = re.compile(r"^```python\n(?P<code>.*?)^```", re.S | re.M)
_MARK = re.compile(r"<!--\s*test:\s*(?P<mark>[^>]*?)\s*-->\s*$")
_MARKS = (re.compile(r"slow"), re.compile(r"needs [A-Za-z_][\w.]*"))


class Block:
    def __init__(self, line: int, code: str, marks: tuple[str, ...]):
        self.line, self.code, self.marks = line, code, marks

    @property
    def slow(self) -> bool:
        return "slow" in self.marks

    @property
    def needs(self) -> list[str]:
        return [m.split(" ", 1)[1] for m in self.marks if m.startswith("needs ")]


def readme_blocks(text: str) -> list[Block]:
    """The ```python blocks of ``text`` in order, with the marks on the lines just before each fence."""
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].splitlines()
        marks = []
        while before and (mark := _MARK.match(before[-1].strip())):
            marks.append(mark["mark"])
            before.pop()
        out.append(Block(line, m["code"], tuple(reversed(marks))))
    return out


def _numeric_curve(ns: dict) -> None:
    """What the numeric-curve example says of the Cauchy mechanism."""
    import sympy as sp

    r, v = ns["r"], ns["v"]
    gamma, sensitivity = r.mechanism.params["gamma"], r.mechanism.params["sensitivity"]
    assert str(r.status) == "numeric_only" and r.max_divergence is not None
    assert sp.simplify(dict(r.integer_orders)[2] - sp.log(1 + sensitivity ** 2 / (2 * gamma ** 2))) == 0
    assert str(v.verdict) == "refuted" and v.counterexample.alpha > 2 and v.counterexample.gap < 0


def _numeric_curve_verified(ns: dict) -> None:
    report = ns["report"]
    assert str(report.status) == "verified" and report.counts["agree"] == len(report.checks) == 8


#: what the text says a block gives, checked right after it runs (block found by a line of its code)
STATED = {"r = rdpsym.rdp(rdpsym.mechanisms.cauchy())": _numeric_curve,
          'report = rdpsym.verify(r, level="quick")': _numeric_curve_verified}


def run_blocks(blocks: list[Block], namespace: dict) -> None:
    """Execute each block in ``namespace``, in order, each within :data:`BLOCK_SECONDS`, then check what
    the README says it gives (:data:`STATED`); a failure names the block by its line in README.md."""
    for b in blocks:
        code = compile(b.code, f"README.md, block at line {b.line}", "exec")
        try:
            with time_limit(BLOCK_SECONDS, clock="wall"):
                exec(code, namespace)  # noqa: S102 - the README's own examples, the point of the test
        except StepTimeout:
            pytest.fail(f"README.md block at line {b.line} did not finish within {BLOCK_SECONDS:g} s (hang guard)")
        for line, stated in STATED.items():
            if line in b.code.splitlines():
                stated(namespace)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The examples run in an empty directory (what they write lands there), plotting off screen."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


def _runnable(blocks: list[Block]) -> list[Block]:
    missing = sorted({n for b in blocks for n in b.needs if importlib.util.find_spec(n) is None})
    if missing:
        pytest.skip(f"README examples need {', '.join(missing)} (not installed)")
    return blocks


def test_the_readme_has_its_examples_and_only_known_marks():
    blocks = readme_blocks(README.read_text())
    assert len(blocks) >= 6 and all(b.code.strip() for b in blocks)
    for line in STATED:  # every statement checked has its block
        assert any(line in b.code.splitlines() for b in blocks), line
    unknown = [(b.line, m) for b in blocks for m in b.marks if not any(p.fullmatch(m) for p in _MARKS)]
    assert not unknown, f"README test marks not understood (slow, needs MODULE): {unknown}"
    assert sum(b.slow for b in blocks) <= 2, "as few slow examples as possible"


def test_marks_are_read_from_the_lines_before_the_fence():
    text = "intro\n\n<!-- test: slow -->\n```python\nx = 1\n```\n\ntext\n```python\ny = x\n```\n"
    a, b = readme_blocks(text)
    assert (a.line, a.marks, a.code, b.marks, b.code) == (4, ("slow",), "x = 1\n", (), "y = x\n")


def test_a_failing_block_is_named_by_its_line():
    blocks = readme_blocks("```python\nx = 1\n```\n\n```python\nraise ValueError(x)\n```\n")
    namespace = {}
    with pytest.raises(ValueError):
        run_blocks(blocks, namespace)
    assert namespace["x"] == 1


def test_readme_examples_run_as_written(workdir):
    """Every block not marked slow, in order, in one namespace."""
    blocks = _runnable([b for b in readme_blocks(README.read_text()) if not b.slow])
    run_blocks(blocks, {"__name__": "__readme__"})


@pytest.mark.slow
def test_readme_examples_run_as_written_with_the_slow_ones(workdir):
    """Every block, the slow ones too, in order, in one namespace."""
    blocks = _runnable(readme_blocks(README.read_text()))
    run_blocks(blocks, {"__name__": "__readme__"})
