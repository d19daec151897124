"""The package's layering, checked from its source (issue 14: one concept, one place).

These are the rules that keep each extension a one-file change:
- no module of ``rdpsym/`` is longer than 700 lines;
- no private name (a leading underscore) is imported from another subpackage: what is shared is public
  (the leaf modules ``rdpsym._numbers``, ``_config``, ``_cache``, ``_timeout``, ``_optimize`` are the
  shared foundations and are meant to be imported);
- the numeric path never imports the derivation engine (it is the engine's independent check);
- the engine never imports compiling or reporting code at module level;
- the execution layer does not import click (the CLI wraps it, not the other way round);
- the leaf modules import only each other (user numbers, which need the safe parser, are read in specify/text);
- exactly one module sets alarms (``rdpsym._timeout``);
- no public attribute hides a subpackage: ``rdpsym.X`` is the package ``rdpsym.X``, whatever was imported first.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rdpsym"
MAX_LINES = 700
LEAVES = {"_numbers", "_config", "_cache", "_timeout", "_optimize", "outcomes"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield path, parts


def _imports(path: Path, parts: list[str], *, top_level_only: bool = False):
    """(imported module as a dotted name, imported names, line, is_top_level) of a module's imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = parts if path.name == "__init__.py" else parts[:-1]
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if top_level_only and id(node) not in top:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, [a.name for a in node.names], node.lineno, id(node) in top
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, [], node.lineno, id(node) in top


def _subpackage(parts: list[str]) -> str:
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else "<top>"


def test_no_module_is_longer_than_700_lines():
    long = {str(p.relative_to(PACKAGE)): n for p, _ in _modules() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_private_name_is_imported_from_another_subpackage():
    found = []
    for path, parts in _modules():
        mine = _subpackage(parts)
        for module, names, line, _ in _imports(path, parts):
            target = module.split(".")
            if target[0] != "rdpsym" or len(target) < 2:
                continue
            if len(target) == 2 and target[1] in LEAVES:
                continue  # the shared foundations
            theirs = target[1] if (PACKAGE / target[1]).is_dir() else "<top>"
            if theirs == mine:
                continue
            private_module = any(p.startswith("_") and not p.startswith("__") for p in target[1:])
            private_names = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private_module or private_names:
                found.append(f"{path.relative_to(PACKAGE)}:{line}: from {module} import {', '.join(names)}")
    assert not found, "private names imported across subpackages:\n" + "\n".join(found)


def _importers_of(prefix: str, within: str, *, top_level_only: bool = False):
    for path, parts in _modules():
        if _subpackage(parts) != within:
            continue
        for module, names, line, _ in _imports(path, parts, top_level_only=top_level_only):
            dotted = [module] + [f"{module}.{n}" for n in names]
            if any(d == prefix or d.startswith(prefix + ".") for d in dotted):
                yield f"{path.relative_to(PACKAGE)}:{line}: {module}"


def test_the_numeric_path_never_imports_the_engine():
    assert not list(_importers_of("rdpsym.derive", "numeric")), list(_importers_of("rdpsym.derive", "numeric"))


@pytest.mark.parametrize("layer", ["rdpsym.compile", "rdpsym.report", "rdpsym.export"])
def test_the_engine_imports_no_compiling_or_reporting_code_at_module_level(layer):
    found = list(_importers_of(layer, "derive", top_level_only=True))
    assert not found, found


def test_the_execution_layer_does_not_import_click():
    found = [f"{p.relative_to(PACKAGE)}:{line}" for p, parts in _modules() if _subpackage(parts) == "execution"
             for module, _, line, _ in _imports(p, parts) if module.split(".")[0] == "click"]
    assert not found, found


def test_leaf_modules_import_only_leaf_modules():
    found = []
    for name in sorted(LEAVES):
        path = PACKAGE / f"{name}.py"
        assert path.is_file(), f"the leaf module rdpsym/{name}.py is missing"
        for module, names, line, _ in _imports(path, ["rdpsym", name]):
            target = module.split(".")
            if target[0] != "rdpsym":
                continue
            ok = (len(target) == 2 and target[1] in LEAVES) or (module == "rdpsym" and set(names) <= LEAVES)
            if not ok:
                found.append(f"{name}.py:{line}: {module} {names}")
    assert not found, found


def test_exactly_one_module_sets_alarms():
    setters = sorted(str(p.relative_to(PACKAGE)) for p, _ in _modules()
                     if any(s in p.read_text() for s in ("setitimer(", "signal.alarm(")))
    assert setters == ["_timeout.py"], setters


def test_no_public_attribute_hides_a_subpackage():
    """After every subpackage and its modules are imported, ``rdpsym.X`` (and ``rdpsym.X.Y`` for nested
    packages) is the package itself, whatever was imported first."""
    packages = sorted(".".join(p.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("*")
                      if p.is_dir() and (p / "__init__.py").is_file())
    script = "\n".join([
        "import importlib, pkgutil, sys, warnings",
        "warnings.simplefilter('ignore', DeprecationWarning)",
        "import rdpsym",
        f"packages = {packages!r}",
        "for full in packages:",
        "    pkg = importlib.import_module(full)",
        "    for info in pkgutil.iter_modules(pkg.__path__):",
        "        if info.name != '__main__':",
        "            importlib.import_module(full + '.' + info.name)",
        "bad = []",
        "for full in packages:",
        "    obj = rdpsym",
        "    for part in full.split('.')[1:]:",
        "        obj = getattr(obj, part, None)",
        "    if obj is not sys.modules[full]:",
        "        bad.append(f'{full} is {type(obj).__name__}')",
        "print(bad)",
        "sys.exit(1 if bad else 0)",
    ])
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
