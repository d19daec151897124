"""The package's layering, checked from its source (issue 14: one concept, one place).

These are the rules that keep each extension a one-file change:
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


@pytest.mark.parametrize("layer", ["rdpsym.compile", "rdpsym.report"])
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


# -- tree walking lives in the translator -----------------------------------------------------------
#: Where branching on many sympy node classes belongs: the tree translator (its targets dispatch one
#: class per method) and the safe parsers.
NODE_BRANCHING_HOMES = ("numeric/translate.py", "specify/text/")
#: At most this many distinct sympy node classes may one function branch on elsewhere.
MAX_NODE_CLASSES = 3
#: Today's functions that branch on more (path::qualified name -> classes). The list may only shrink:
#: a function may not branch on more classes than listed, a new one may not be added, and an entry
#: that no longer exceeds the limit must be removed.
NODE_BRANCHING_ALLOWED = {
    "accounting/accountant.py::_fast_check": 4,  # Infinity, Interval, NegativeInfinity, Rational
    "accounting/sum_forms.py::log_form": 8,  # Exp1, Infinity, Mul, NegativeInfinity, Pow, Sum, besseli, exp
    "cli/_json.py::jsonable": 5,  # BooleanFalse, BooleanTrue, Infinity, Integer, NegativeInfinity
    "compile/series.py::_taylor_mode.ser": 6,  # Add, Integer, Mul, Pow, exp, log
    "derive/adjacency.py::_monotone": 7,  # Add, Max, Min, Mul, Piecewise, exp, log
    "derive/balls.py::_convex": 5,  # Add, Mul, Piecewise, exp, log
    "derive/balls.py::_infinite_off_points": 4,  # BooleanFalse, BooleanTrue, Infinity, Piecewise
    "derive/domains.py::_inside": 5,  # BooleanTrue, FiniteSet, Float, Infinity, NegativeInfinity
    "derive/domains.py::_intervals": 5,  # FiniteSet, Infinity, Intersection, Interval, NegativeInfinity
    "derive/evaluation.py::_branches": 7,  # Abs, Atom, Heaviside, Max, Min, Piecewise, sign
    "derive/evaluation.py::decide": 4,  # BooleanFalse, BooleanFunction, BooleanTrue, Relational
    "derive/exp_monomials.py::Generators._pow": 4,  # Add, Exp1, Integer, Rational
    "derive/exp_monomials.py::Generators._pow_of_factors": 6,  # Add, Integer, Mul, Pow, Rational, Symbol
    "derive/exp_monomials.py::Generators.map": 7,  # Abs, Add, Mul, Pow, Rational, Symbol, exp
    "derive/pieces.py::_resolve.rebuild": 7,  # Abs, Atom, Heaviside, Max, Min, Piecewise, sign
    "derive/removable.py::singular_orders": 4,  # FiniteSet, Piecewise, Pow, log
    "derive/sign.py::decide_relation": 5,  # And, BooleanFalse, BooleanTrue, Not, Or (was domains.py's, 6)
    "derive/sign.py::numeric_sign": 5,  # Float, Infinity, NegativeInfinity, Number, Rational (was evaluation.py's)
    "derive/subsampled.py::_convex": 5,  # Abs, Add, Max, Mul, Pow
    "derive/template.py::_integrate_once": 4,  # BooleanTrue, Infinity, NegativeInfinity, Piecewise
    "derive/template.py::_merge_relationals": 6,  # And, GreaterThan, LessThan, Or, StrictGreaterThan, StrictLessThan
    "derive/template.py::_substitutions": 4,  # Infinity, Integer, NegativeInfinity, Pow
    "derive/template.py::decide_relationals": 4,  # BooleanFalse, BooleanTrue, Equality, Unequality
    "numeric/backends/mpmath.py::log_expr": 4,  # Mul, Piecewise, Pow, exp
    "numeric/kinks.py::kink_arguments": 7,  # Abs, Heaviside, Max, Min, Piecewise, Relational, sign
    "numeric/multipeak.py::_fold": 7,  # Abs, Add, Integer, Mul, Pow, exp, log
    "properties/distributions.py::NumericDensity.__init__": 6,  # FiniteSet, Infinity, Integer, Interval, NegativeInfinity, Range
    "specify/mechanism.py::is_discrete_support": 5,  # FiniteSet, Intersection, Interval, Range, Union
    "verification/points.py::_finiteness_edges": 4,  # BooleanFalse, BooleanTrue, FiniteSet, Rational
}


def _sympy_class_flags() -> frozenset:
    """sympy's class flags (``is_Add``, ``is_Symbol``, ...): an ``e.is_Add`` test is an ``isinstance``."""
    import sympy

    return frozenset(a[3:] for a in dir(sympy.Basic) if a.startswith("is_") and a[3:4].isupper())


def _sympy_aliases(tree: ast.Module) -> dict:
    """Names bound to sympy, its modules or its objects by the module's imports."""
    import importlib

    import sympy

    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "sympy":
                    out[a.asname or "sympy"] = importlib.import_module(a.name) if a.asname else sympy
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "sympy":
            module = importlib.import_module(node.module)
            for a in node.names:
                if hasattr(module, a.name):
                    out[a.asname or a.name] = getattr(module, a.name)
    return out


def _node_classes(node: ast.expr, aliases: dict) -> set[str]:
    """The sympy node classes ``node`` names: a class (``sp.Add``), a singleton (``sp.pi``, ``-sp.oo``,
    ``sp.S.Half``: its class) or a tuple of them. ``Basic`` and ``Expr`` are not node kinds."""
    import sympy

    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {k for e in node.elts for k in _node_classes(e, aliases)}

    def resolve(n):
        if isinstance(n, ast.Name):
            return aliases.get(n.id)
        if isinstance(n, ast.Attribute):
            base = resolve(n.value)
            return None if base is None else getattr(base, n.attr, None)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            v = resolve(n.operand)
            return -v if isinstance(v, sympy.Basic) else None
        return None

    obj = resolve(node)
    if isinstance(obj, type) and issubclass(obj, sympy.Basic):
        name = obj.__name__
    elif isinstance(obj, sympy.Basic) and obj.is_Atom:
        name = type(obj).__name__
    else:
        return set()
    return set() if name in ("Basic", "Expr") else {name}


def _branched_classes(fn: ast.AST, aliases: dict, flags: frozenset) -> set[str]:
    """The sympy node classes one function tests a node against (its nested functions aside):
    ``isinstance``/``issubclass``, ``is``/``==``/``in`` comparisons (``e.func is sp.exp``,
    ``e in (sp.oo, -sp.oo)``) and class flags (``e.is_Add``)."""
    found: set[str] = set()
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") \
                and len(node.args) == 2:
            found |= _node_classes(node.args[1], aliases)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                    found |= _node_classes(operands[i], aliases) | _node_classes(operands[i + 1], aliases)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("is_") and node.attr[3:] in flags:
            found.add(node.attr[3:])
        stack.extend(ast.iter_child_nodes(node))
    return found


def _node_branching() -> dict[str, set[str]]:
    """path::qualified name -> the classes, for every function outside the homes above the limit."""
    flags = _sympy_class_flags()
    out = {}

    def walk(tree, aliases, where, prefix=""):
        for node in ast.iter_child_nodes(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                classes = _branched_classes(node, aliases, flags)
                if len(classes) > MAX_NODE_CLASSES:
                    out[f"{where}::{name}"] = classes
                walk(node, aliases, where, name + ".")
            elif isinstance(node, ast.ClassDef):
                walk(node, aliases, where, prefix + node.name + ".")
            else:
                walk(node, aliases, where, prefix)

    for path, _ in _modules():
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(NODE_BRANCHING_HOMES):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        walk(tree, _sympy_aliases(tree), where)
    return out


def test_the_node_class_count_sees_the_ways_a_walker_branches():
    """The count is not blind: an if-chain written any of the usual ways is seen."""
    source = "\n".join([
        "import sympy as sp",
        "from sympy import Piecewise",
        "def walk(e):",
        "    if e.is_Add or e.is_Mul:",
        "        return 1",
        "    if isinstance(e, (sp.exp, Piecewise)) or e.func is sp.log or e.func == sp.Abs:",
        "        return 2",
        "    if e in (sp.oo, -sp.oo) or e is sp.S.Half or isinstance(e, sp.Basic):",
        "        return 3",
        "    def inner(c):",
        "        return isinstance(c, sp.And)",
    ])
    tree = ast.parse(source)
    walk = tree.body[2]
    found = _branched_classes(walk, _sympy_aliases(tree), _sympy_class_flags())
    assert found == {"Add", "Mul", "exp", "Piecewise", "log", "Abs", "Infinity", "NegativeInfinity", "Half"}


def test_no_function_outside_the_translator_branches_on_more_than_three_node_classes():
    """A function that tells more than three kinds of sympy node apart is a tree walker: it belongs in
    the translator (:mod:`rdpsym.numeric.translate`, one ``_translate_<Class>`` method per class), or
    it is one of today's, listed above, which may only shrink."""
    found = _node_branching()
    new = {k: sorted(v) for k, v in found.items() if k not in NODE_BRANCHING_ALLOWED}
    grown = {k: sorted(v) for k, v in found.items() if k in NODE_BRANCHING_ALLOWED and len(v) > NODE_BRANCHING_ALLOWED[k]}
    stale = sorted(k for k in NODE_BRANCHING_ALLOWED if k not in found)
    assert not new, f"functions branching on more than {MAX_NODE_CLASSES} sympy node classes: {new}"
    assert not grown, f"allowed functions that branch on more classes than listed: {grown}"
    assert not stale, f"no longer above the limit: remove from NODE_BRANCHING_ALLOWED: {stale}"


# --------------------------------------------------------------------------------------------------
# the numeric value of a curve: one function in numeric/, and a result never calls the engine
# --------------------------------------------------------------------------------------------------
#: uses of ``numeric_divergence`` outside ``rdpsym/numeric/`` with their reason: the package root makes it
#: public (``rdpsym.numeric_divergence``, README); that is an import for re-export, never a call
NUMERIC_DIVERGENCE_OUTSIDE = {"__init__.py": "the public name rdpsym.numeric_divergence"}


def _uses_of(path: Path, name: str):
    """``(line, how)`` of every use of ``name`` in a module: imported (``from ... import name``, inside
    functions too, aliased or not), read as a name, as an attribute (``numeric.name``), or as the string
    ``getattr`` would take."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            yield node.lineno, "import"
        elif isinstance(node, ast.Import) and any(a.name.split(".")[-1] == name for a in node.names):
            yield node.lineno, "import"
        elif isinstance(node, ast.Name) and node.id == name:
            yield node.lineno, "name"
        elif isinstance(node, ast.Attribute) and node.attr == name:
            yield node.lineno, "attribute"
        elif isinstance(node, ast.Constant) and node.value == name:
            yield node.lineno, "string"


def test_numeric_divergence_is_called_only_in_numeric():
    """The numeric value of a curve (Mironov 2017, Def. 4: the maximum over its directions) is computed in
    one place, :func:`rdpsym.numeric.maximum.numeric_maximum`, with one convergence rule; everything
    outside ``rdpsym/numeric/`` goes through it, never through ``numeric_divergence`` directly."""
    found = []
    for path, parts in _modules():
        relative = str(path.relative_to(PACKAGE))
        if _subpackage(parts) == "numeric":
            continue
        for line, how in _uses_of(path, "numeric_divergence"):
            if relative in NUMERIC_DIVERGENCE_OUTSIDE and how in ("import", "string"):
                continue  # the root's re-export and its __all__ entry
            found.append(f"{relative}:{line}: {how}")
    assert not found, "numeric_divergence used outside rdpsym/numeric/:\n" + "\n".join(found)


def test_the_use_check_sees_calls_aliases_and_imports_inside_functions(tmp_path):
    """The check above can fail: each way of reaching the function is seen."""
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from ..numeric import numeric_divergence as nd\n    return nd\n"
                      "def g(numeric):\n    return numeric.numeric_divergence(1)\n"
                      "def h(m):\n    return getattr(m, 'numeric_divergence')\n"
                      "def k():\n    return numeric_divergence()\n")
    assert sorted(how for _, how in _uses_of(sample, "numeric_divergence")) == ["attribute", "import", "name", "string"]


def _module_path(dotted: str) -> Path | None:
    base = PACKAGE.parent.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _reached(start: str, skip) -> set[str]:
    """The modules ``start`` imports, directly or not, imports inside functions included (a name imported
    from a package that is its submodule counts as that submodule), except those ``skip`` accepts."""
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = _module_path(module)
        for target, names, _, _ in _imports(path, module.split(".")):
            if not target.startswith("rdpsym"):
                continue
            for dotted in [f"{target}.{n}" for n in names if _module_path(f"{target}.{n}")] or [target]:
                if _module_path(dotted) is not None and not skip(dotted):
                    todo.append(dotted)
    return seen


#: the engine: what derives a result. A result values itself from what it holds (its curve object, its
#: densities), so none of this is reached from rdpsym.derive.result
ENGINE = ("rdpsym.derive.engine", "rdpsym.derive.mechanism_rdp", "rdpsym.derive.stages", "rdpsym.derive.cache",
          "rdpsym.derive.subsampled", "rdpsym.derive.integer_order", "rdpsym.derive.adjacency")


def test_a_result_never_imports_the_engine():
    """``rdp()`` attaches the numeric fallback to a result as a curve object (its worst pairs as data), so
    :mod:`rdpsym.derive.result` reaches no engine module. Skipped on the way: the presenter hooks
    (``to_numpy``, ``latex``, the ``_repr_*`` displays in compile/ and report/) and the package root
    (read for ``__version__``)."""
    reached = _reached("rdpsym.derive.result",
                       lambda m: m == "rdpsym" or m.startswith(("rdpsym.compile", "rdpsym.report")))
    assert "rdpsym.derive.numeric_values" in reached  # the check walks the lazy imports too
    assert not set(ENGINE) & reached, sorted(set(ENGINE) & reached)
