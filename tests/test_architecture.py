"""The package's layering, checked from its source (issue 14: one concept, one place).

These are the rules that keep each extension a one-file change:
- no private name (a leading underscore) is imported from another subpackage: what is shared is public
  (the leaf modules ``rdpsym._numbers``, ``_config``, ``_cache``, ``_timeout``, ``_optimize``, ``_version`` are the
  shared foundations and are meant to be imported);
- the numeric path never imports the derivation engine (it is the engine's independent check);
- the engine never imports compiling or reporting code at module level;
- the execution layer does not import click (the CLI wraps it, not the other way round);
- the leaf modules import only each other (user numbers, which need the safe parser, are read in specify/text);
- exactly one module sets alarms (``rdpsym._timeout``);
- no public attribute hides a subpackage: ``rdpsym.X`` is the package ``rdpsym.X``, whatever was imported first;
- every import, those inside functions included, follows the layer order (leaf modules < specify <
  mechanisms < execution < numeric < derive < compile < report < {verification, claims, accounting} <
  {properties, regress} < cli);
- no import cycle but the presenter hooks (a result's ``to_numpy``, ``latex``, ``_repr_*``), one loop of at most
  10 modules (today the result and compile/generate);
- the cache, the multivariate engine and the subsampled curve are handed what they call, never import it;
- ``numeric_divergence`` is called only in numeric/;
- no private name is imported from another module.
Where today's code breaks a rule, the exception is listed with its reason, and the list may only shrink.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rdpsym"
LEAVES = {"_numbers", "_config", "_cache", "_timeout", "_optimize", "_version", "_progress", "outcomes"}


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
    # the monotonicity rules of its own (was adjacency.py's _monotone, 7; the sums, multiples and branches
    # it shared with balls.py's _convex, 5, are ConeProperty.why's three)
    "derive/shape.py::_NonDecreasing.node": 4,  # Max, Min, exp, log
    "derive/sign.py::decide_relation": 5,  # And, BooleanFalse, BooleanTrue, Not, Or (was domains.py's, 6)
    "derive/sign.py::numeric_sign": 5,  # Float, Infinity, NegativeInfinity, Number, Rational (was evaluation.py's)
    "derive/subsampled.py::_convex": 5,  # Abs, Add, Max, Mul, Pow
    "derive/template.py::integrate_once": 4,  # BooleanTrue, Infinity, NegativeInfinity, Piecewise
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
          "rdpsym.derive.subsampled", "rdpsym.derive.integer_order", "rdpsym.derive.adjacency", "rdpsym.derive.pairs",
          "rdpsym.derive.balls", "rdpsym.derive.multivariate")


def test_a_result_never_imports_the_engine():
    """``rdp()`` attaches the numeric fallback to a result as a curve object (its worst pairs as data), so
    :mod:`rdpsym.derive.result` reaches no engine module. Skipped on the way: the presenter hooks
    (``to_numpy``, ``latex``, the ``_repr_*`` displays in compile/ and report/) and the package root
    (read for ``__version__``)."""
    reached = _reached("rdpsym.derive.result",
                       lambda m: m == "rdpsym" or m.startswith(("rdpsym.compile", "rdpsym.report")))
    assert "rdpsym.derive.numeric_values" in reached  # the check walks the lazy imports too
    assert not set(ENGINE) & reached, sorted(set(ENGINE) & reached)



# --------------------------------------------------------------------------------------------------
# the layers and the import graph, over every import (those inside functions included)
# --------------------------------------------------------------------------------------------------
#: each subpackage's layer: a module imports only from its own layer and those below
#: (leaf modules < specify < mechanisms < execution < numeric < derive < compile < report
#:  < {verification, claims, accounting} < {properties, regress} < cli)
LAYERS = {"specify": 1, "mechanisms": 2, "execution": 3, "numeric": 4, "derive": 5, "compile": 6, "report": 7,
          "verification": 8, "claims": 8, "accounting": 8, "properties": 9, "regress": 9, "cli": 10}
#: the modules at the package's top level that are not subpackages: the leaves (and the symbols and printing
#: conventions, which import nothing of rdpsym) at the bottom; the hypothesis strategies and the test helpers
#: (they check claims and run the registry) beside properties and regress; the package root above all
TOP_LEVEL_LAYERS = {**{m: 0 for m in LEAVES | {"symbols", "printing"}}, "strategies": 9, "testing": 9}
ROOT_LAYER = 11
#: the presenter hooks of a result: delegations from :mod:`rdpsym.derive.result` to compile/ and report/,
#: imported when called (the one import loop allowed)
PRESENTER_MODULE = "rdpsym.derive.result"
PRESENTER_HOOKS = {"to_numpy", "to_source", "latex", "_repr_latex_", "_repr_html_", "__repr__"}
#: today's imports against the layer order ("importer -> imported", dotted), each with its reason. The list
#: may only shrink: a new violation fails, and so does an entry that no longer happens.
LAYER_EXCEPTIONS = {
    "rdpsym.report.plots -> rdpsym.accounting.conversion":
        "the (epsilon, delta) conversion plot draws accounting's conversion (imported when the plot is drawn)",
    "rdpsym.report.plots -> rdpsym.accounting.conversions":
        "the (epsilon, delta) conversion plot names accounting's conversion methods",
    "rdpsym.report.plots -> rdpsym.accounting.profile":
        "the (epsilon, delta) conversion plot draws the exact privacy profile beside the conversions",
}
#: today's import cycles besides the presenter hooks (modules, dotted), each with its reason. The list may
#: only shrink: a new cycle fails, and so does an entry that is no longer a cycle.
CYCLE_EXCEPTIONS: dict[frozenset, str] = {}
#: the modules the presenter loop spans, the hooks' edges counted: the result and the one module of
#: compile/ that takes a result (and checks its class); report/ reads results through annotations only
PRESENTER_LOOP = frozenset({"rdpsym.derive.result", "rdpsym.compile.generate"})
#: the most modules the presenter loop may ever span (issue 28)
PRESENTER_LOOP_MAX = 10


def _dotted(parts: list[str]) -> str:
    return ".".join(parts)


def _layer(dotted: str) -> int | None:
    parts = dotted.split(".")
    if len(parts) == 1:
        return ROOT_LAYER
    return LAYERS.get(parts[1], TOP_LEVEL_LAYERS.get(parts[1]))


def _typing_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes under ``if TYPE_CHECKING:`` (never imported at run time)."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for n in ast.walk(node))
    return out


def _import_sites(path: Path, parts: list[str]):
    """``(imported module, names, line, enclosing function or None)`` of each run-time import of a module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _typing_only(tree)
    package = parts if path.name == "__init__.py" else parts[:-1]

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            if id(child) in skip:
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, child.name)
                continue
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                yield module, [a.name for a in child.names], child.lineno, function
            elif isinstance(child, ast.Import):
                for a in child.names:
                    yield a.name, [], child.lineno, function
            yield from visit(child, function)

    yield from visit(tree, None)


def _reexports() -> dict[str, dict[str, str]]:
    """package -> name -> the module its ``__init__`` imports the name from (top-level imports)."""
    out: dict[str, dict[str, str]] = {}
    for path, parts in _modules():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        names = out.setdefault(_dotted(parts), {})
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level:
                base = parts[: len(parts) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
                for a in node.names:
                    if _module_path(source) is not None and source != _dotted(parts):
                        names[a.asname or a.name] = source
    return out


def _resolve(module: str, name: str | None, reexports, depth: int = 0) -> str | None:
    """The module that ``from module import name`` reaches: a submodule, the module the package's
    ``__init__`` takes the name from (followed), or the module itself."""
    if name is not None:
        if _module_path(f"{module}.{name}") is not None:
            return f"{module}.{name}"
        source = reexports.get(module, {}).get(name)
        if source is not None and depth < 6:
            return _resolve(source, name, reexports, depth + 1)
    return module if _module_path(module) is not None else None


def _edges():
    """``(importer, imported, line, enclosing function)`` of every run-time import between rdpsym's modules.
    A package's ``__init__`` importing its own submodules is the package's face, not an edge (as in
    ``../shared/tools/import_graph.py``)."""
    reexports = _reexports()
    for path, parts in _modules():
        me = _dotted(parts)
        face = path.name == "__init__.py"
        for module, names, line, function in _import_sites(path, parts):
            if module.split(".")[0] != "rdpsym":
                continue
            for name in names or [None]:
                target = _resolve(module, name, reexports)
                if target is not None and target != me and not (face and target.startswith(me + ".")):
                    yield me, target, line, function


def _is_presenter_hook(importer: str, target: str, function: str | None) -> bool:
    return (importer == PRESENTER_MODULE and function in PRESENTER_HOOKS
            and target.startswith(("rdpsym.compile", "rdpsym.report")))


def test_every_import_follows_the_layer_order():
    """A module imports only from its own layer and the layers below (:data:`LAYERS`), inside functions
    too; the presenter hooks and :data:`LAYER_EXCEPTIONS` aside."""
    found = set()
    for importer, target, line, function in _edges():
        mine, theirs = _layer(importer), _layer(target)
        assert mine is not None, f"{importer}: no layer; add it to LAYERS or TOP_LEVEL_LAYERS"
        assert theirs is not None, f"{target}: no layer; add it to LAYERS or TOP_LEVEL_LAYERS"
        if theirs > mine and not _is_presenter_hook(importer, target, function):
            found.add(f"{importer} -> {target}")
    new = sorted(found - set(LAYER_EXCEPTIONS))
    stale = sorted(set(LAYER_EXCEPTIONS) - found)
    assert not new, "imports against the layer order:\n" + "\n".join(new)
    assert not stale, f"no longer happens: remove from LAYER_EXCEPTIONS: {stale}"


def _cycles(edges) -> list[frozenset]:
    """The import cycles (strongly connected components of more than one module), Tarjan's algorithm."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                strong(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def test_the_cycle_finder_sees_a_cycle_through_an_import_inside_a_function():
    assert _cycles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == [frozenset({"a", "b", "c"})]
    assert _cycles([("a", "b"), ("b", "c")]) == []


def test_no_import_cycle_but_the_presenter_hooks():
    """Counting imports inside functions, the only import loop is the presenter hooks' (a result's
    ``to_numpy``, ``latex``, ``_repr_*`` delegating to compile/ and report/), and today's
    :data:`CYCLE_EXCEPTIONS`, which may only shrink."""
    edges = {(a, b) for a, b, _, function in _edges() if not _is_presenter_hook(a, b, function)}
    found = set(_cycles(edges))
    new = [sorted(c) for c in found - set(CYCLE_EXCEPTIONS)]
    stale = [sorted(c) for c in set(CYCLE_EXCEPTIONS) - found]
    assert not new, f"import cycles: {new}"
    assert not stale, f"no longer a cycle: remove from CYCLE_EXCEPTIONS: {stale}"


def test_the_presenter_hooks_make_the_one_loop_and_it_is_small():
    """Counting every import, the hooks' included, there is one import loop, through the presenter hooks,
    within :data:`PRESENTER_LOOP` (at most :data:`PRESENTER_LOOP_MAX` modules): compile/ and report/
    never reach the engine or the cache on their way back to the result."""
    loops = _cycles({(a, b) for a, b, _, _ in _edges()})
    assert len(loops) <= 1, [sorted(c) for c in loops]
    for loop in loops:
        assert PRESENTER_MODULE in loop and len(loop) <= PRESENTER_LOOP_MAX, sorted(loop)
        assert loop <= PRESENTER_LOOP, f"the presenter loop grew: {sorted(loop - PRESENTER_LOOP)}"


def test_the_engine_hands_itself_to_the_cache_and_never_the_other_way():
    """The cache is handed the derivation to run on a miss, the multivariate engine the one-dimensional
    one, and a subsampled curve its base's ``rdp``: none of them imports what calls it, inside functions
    neither."""
    def reached(module):
        return _reached(module, lambda m: m == "rdpsym")

    assert "rdpsym.derive.engine" in reached("rdpsym.derive.pairs")  # the walk sees the engine where it is
    for module in ("rdpsym.derive.cache", "rdpsym.derive.codec", "rdpsym.derive.multivariate"):
        assert "rdpsym.derive.engine" not in reached(module), module
    assert "rdpsym.derive.mechanism_rdp" not in reached("rdpsym.derive.subsampled")
    assert "rdpsym.derive.engine" not in reached("rdpsym.compile.series")  # the codec is not the cache


def test_the_presenter_hooks_are_imported_inside_the_hooks_only():
    """The hooks are the loop's only way back: each import of compile/ or report/ from the result module
    sits inside one of :data:`PRESENTER_HOOKS`, never at module level."""
    found = [f"{a} -> {b} line {line} ({function or 'module level'})" for a, b, line, function in _edges()
             if a == PRESENTER_MODULE and b.startswith(("rdpsym.compile", "rdpsym.report"))
             and not _is_presenter_hook(a, b, function)]
    assert not found, found


#: private modules imported by the other modules of their own package today, with the reason. The rule:
#: a package may have one ``_internal.py``; this list may only shrink.
PRIVATE_MODULES_ALLOWED = {
    "rdpsym.cli._console": "the CLI's console output, shared by its command modules",
    "rdpsym.cli._exit": "the CLI's exit codes and error mapping, shared by its command modules",
    "rdpsym.cli._json": "the CLI's JSON output, shared by its command modules",
    "rdpsym.cli._junit": "the CLI's JUnit output",
    "rdpsym.cli._mechanism": "the CLI's reading of a mechanism argument",
    "rdpsym.cli._params": "the CLI's parameter options",
    "rdpsym.mechanisms._sources": "where a mechanism comes from (a name, a file, an entry point) and the registry",
    "rdpsym.mechanisms._densities": "the densities the built-in mechanisms share",
}


def test_no_private_name_is_imported_from_another_module():
    """No module imports a name with a leading underscore from another module (what is shared is public);
    a private module is imported only inside its own package, and each package has at most one besides
    ``_internal.py`` (:data:`PRIVATE_MODULES_ALLOWED` lists today's, which may only shrink)."""
    names, modules = [], set()
    for path, parts in _modules():
        for module, imported, line, _ in _import_sites(path, parts):
            target = module.split(".")
            if target[0] != "rdpsym":
                continue
            private = [n for n in imported if n.startswith("_") and not n.startswith("__")
                       and _module_path(f"{module}.{n}") is None]
            if private:
                names.append(f"{path.relative_to(PACKAGE)}:{line}: from {module} import {', '.join(private)}")
            for dotted in [module] + [f"{module}.{n}" for n in imported if _module_path(f"{module}.{n}")]:
                last = dotted.split(".")
                if len(last) > 2 and last[-1].startswith("_") and not last[-1].startswith("__") \
                        and last[-1] != "_internal":
                    modules.add(dotted)
    assert not names, "private names imported from another module:\n" + "\n".join(names)
    new = sorted(modules - set(PRIVATE_MODULES_ALLOWED))
    stale = sorted(set(PRIVATE_MODULES_ALLOWED) - modules)
    assert not new, f"private modules imported by their package (one _internal.py each): {new}"
    assert not stale, f"no longer imported: remove from PRIVATE_MODULES_ALLOWED: {stale}"
