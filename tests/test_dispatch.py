"""Behaviour is chosen by what a mechanism is, never by its name (issue 13, part 5).

The accountant's curve is chosen by what a mechanism carries: a subsampled mechanism's ``subsampling``
(data the dispatcher reads) or a user's own ``curve_provider``; plotting and CLI defaults are
attributes of the mechanism (``display``, ``defaults``), and no module under ``rdpsym/`` compares a
mechanism's name to a literal.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import pickle
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import rdpsym
from rdpsym import mechanisms as M
from rdpsym.accounting.curve_types import float_curve
from rdpsym.accounting.curves import mechanism_curve
from rdpsym.accounting.subsampled_curve import subsampled_curve
from rdpsym.mechanisms._densities import normal_pdf
from rdpsym.specify.mechanism import AdjacentPair, Mechanism
from rdpsym.specify.params import parameter

ORDERS = np.array([1.5, 2.0, 3.0, 8.0, 32.0])


def user_gaussian(name: str) -> Mechanism:
    """A plain Gaussian pair N(0, sigma^2) vs N(q, sigma^2), built as a user would, called ``name``.

    Its parameters are even called q and sigma, like the subsampled Gaussian's; its RDP is
    alpha q^2 / (2 sigma^2) (Mironov 2017, Prop. 7).
    """
    x = sp.Symbol("x", real=True)
    q = parameter("q", sp.Interval.open(0, sp.oo), typical=(0.5, 2.0), latex="q", meaning="shift")
    sigma = parameter("sigma", typical=(0.5, 10.0), latex=r"\sigma", meaning="noise")
    return Mechanism(name=name, variable=x, support=sp.S.Reals,
                     pairs=(AdjacentPair(normal_pdf(x, 0, sigma.symbol), normal_pdf(x, q.symbol, sigma.symbol)),),
                     parameters=(q, sigma))


def gaussian_closed_form(alpha, q, sigma):
    return alpha * q**2 / (2 * sigma**2)


# -- the accountant's curve ------------------------------------------------------------------------
def test_a_user_mechanism_named_subsampled_gaussian_gets_its_own_curve():
    mine = user_gaussian("subsampled_gaussian")
    curve = mechanism_curve(mine)
    assert curve.provenance == "closed form", curve.detail
    got = curve(ORDERS, q=0.5, sigma=1.5)
    np.testing.assert_allclose(got, gaussian_closed_form(ORDERS, 0.5, 1.5), rtol=1e-12)
    # and through the accountant, next to the built-in of the same name
    acc = rdpsym.Accountant().add(mine, count=3, q=0.5, sigma=1.5)
    np.testing.assert_allclose(acc.curve(ORDERS), 3 * gaussian_closed_form(ORDERS, 0.5, 1.5), rtol=1e-12)
    assert acc.events[0].provenance == "closed form"
    assert mine.curve_provider is None


def test_the_built_in_subsampled_gaussian_keeps_its_curve_and_so_does_a_renamed_copy():
    builtin = M.get("subsampled_gaussian")
    curve = mechanism_curve("subsampled_gaussian")
    assert curve.provenance == "subsampled"
    assert mechanism_curve(M.subsampled_gaussian()) is curve  # rebuilt mechanisms are equal: one cache entry
    renamed = dataclasses.replace(builtin, name="my_sampled_gaussian", title="mine")
    assert mechanism_curve(renamed).provenance == "subsampled"  # the same densities: the same curve
    np.testing.assert_array_equal(mechanism_curve(renamed)(ORDERS, q=0.01, sigma=1.1),
                                  curve(ORDERS, q=0.01, sigma=1.1))
    assert mechanism_curve(builtin, group=2).provenance == "bound"
    assert mechanism_curve(builtin, method="numeric").provenance == "numeric"
    # chosen by the data the mechanism carries, not by code attached to it
    assert builtin.subsampling is not None and builtin.curve_provider is None


def test_a_copy_with_other_densities_does_not_inherit_the_subsampled_curve():
    builtin = M.get("subsampled_gaussian")
    x, (q, sigma) = builtin.variable, (p.symbol for p in builtin.parameters)
    other = dataclasses.replace(builtin, pairs=(AdjacentPair(normal_pdf(x, 0, sigma), normal_pdf(x, q, sigma)),))
    curve = mechanism_curve(other)
    assert curve.provenance == "closed form", curve.detail
    np.testing.assert_allclose(curve(ORDERS, q=0.5, sigma=2.0), gaussian_closed_form(ORDERS, 0.5, 2.0), rtol=1e-12)
    # replace() kept the subsampling record; the subsampled curve declines a different structure
    assert other.subsampling is builtin.subsampling
    assert subsampled_curve(other, 1, curve_of=mechanism_curve) is None


def hand_written_curve(mechanism, group):
    """A user's own curve provider (any float curve will do; here alpha q^2 / (2 sigma^2))."""
    return float_curve(mechanism, group, "hand-written", "a user's own curve",
                       lambda a, p: np.where(np.isinf(a), np.inf, gaussian_closed_form(a, p["q"], p["sigma"])))


def test_the_subsampling_record_and_the_provider_take_part_in_equality_so_caches_keep_them_apart(monkeypatch):
    from rdpsym.accounting import curves
    from rdpsym.derive import mechanism_rdp

    builtin = M.get("subsampled_gaussian")
    bare = dataclasses.replace(builtin, subsampling=None)
    assert bare != builtin and builtin == M.subsampled_gaussian()
    assert hash(builtin) == hash(M.subsampled_gaussian())
    # the copy without the record goes to the engine (here a stand-in that derives nothing: deriving the
    # mixture's densities takes 20 s and is not what is tested), and its curve is not the subsampled one
    asked = []

    def engine(mechanism, *args, **kwargs):
        asked.append(mechanism)
        return rdpsym.DivergenceResult(expr=None, status=rdpsym.Status.FAILED, reason="not derived in this test")

    with monkeypatch.context() as patched:
        patched.setattr(mechanism_rdp, "rdp", engine)
        patched.setattr(curves, "_CURVES", {})  # the stand-in's curve is not kept for later tests
        assert mechanism_curve(bare).provenance != "subsampled"
    assert asked == [bare]
    assert mechanism_curve(builtin).provenance == "subsampled"
    # a user's provider is asked before the subsampling record, and keeps the two mechanisms apart
    mine = dataclasses.replace(builtin, curve_provider=hand_written_curve)
    assert mine != builtin and hash(mine) != hash(builtin)
    assert mechanism_curve(mine).provenance == "hand-written"
    assert mechanism_curve(builtin).provenance == "subsampled"


def test_a_provider_that_returns_a_wrong_object_is_refused():
    mine = dataclasses.replace(user_gaussian("g"), curve_provider=lambda m, group: "not a curve")
    with pytest.raises(TypeError, match="curve_provider"):
        mechanism_curve(mine)
    with pytest.raises(TypeError, match="curve_provider"):
        dataclasses.replace(user_gaussian("g"), curve_provider=3)


def _provenance_in_worker(mechanism):
    return mechanism_curve(mechanism).provenance, mechanism.subsampling is not None


def test_mechanisms_with_a_subsampling_record_or_a_provider_pickle_and_keep_a_stable_repr(tmp_path):
    builtin = M.get("subsampled_gaussian")
    back = pickle.loads(pickle.dumps(builtin))
    assert back == builtin and hash(back) == hash(builtin) and back.subsampling == builtin.subsampling
    mine = dataclasses.replace(builtin, curve_provider=hand_written_curve)
    back = pickle.loads(pickle.dumps(mine))
    assert back == mine and back.curve_provider is hand_written_curve  # by reference: a module-level function
    assert " at 0x" not in repr(builtin)  # results files key tasks by repr
    from rdpsym.execution import run_tasks

    report = run_tasks(_provenance_in_worker, [builtin, user_gaussian("subsampled_gaussian")], executor=1,
                       mp_context="spawn", progress=False, results_file=str(tmp_path / "r.jsonl"))
    assert report.results() == [("subsampled", True), ("closed form", False)]


# -- plots and the CLI -----------------------------------------------------------------------------
def _lines(fig):
    return [(ax.get_title(), [(l.get_label(), tuple(np.asarray(l.get_ydata()))) for l in ax.lines]) for ax in fig.axes]


def test_a_user_laplace_named_differently_plots_like_the_built_in():
    pytest.importorskip("matplotlib")
    from rdpsym.report import plots

    builtin = M.laplace()
    renamed = dataclasses.replace(builtin, name="my_laplace")
    x = sp.Symbol("x", real=True)
    b = parameter("b", typical=(0.1, 10.0), latex=r"\lambda", meaning="scale", log_scale=True)
    d = parameter("sensitivity", typical=(0.5, 2.0), latex=r"\Delta", meaning="sensitivity")
    bs, ds = b.symbol, d.symbol
    constructed = Mechanism(name="lap", title=builtin.title, variable=x, support=sp.S.Reals,
                            pairs=(AdjacentPair(sp.exp(-sp.Abs(x) / bs) / (2 * bs), sp.exp(-sp.Abs(x - ds) / bs) / (2 * bs),
                                                builtin.pairs[0].label),),  # the same label: one cached derivation
                            parameters=(b, d), display=(("b", 1 / bs, "1/λ"),))
    values = (4.0, 2.0, 1.0)
    want = _lines(plots.figure1(points=20, panels=[("laplace", "b", values, "b = {:g}")]))
    assert [label for label, _ in want[0][1]] == ["1/λ = 0.25", "1/λ = 0.5", "1/λ = 1"]
    for mech in (renamed, constructed):
        assert _lines(plots.figure1(points=20, panels=[(mech, "b", values, "b = {:g}")])) == want
    # the default figure is unchanged: Laplace shown as 1/lambda
    default = _lines(plots.figure1(points=20))
    assert [label for label, _ in default[1][1]] == ["1/λ = 0.25", "1/λ = 0.5", "1/λ = 1"]


def test_a_gaussian_named_laplace_is_not_shown_as_one_over_its_parameter():
    pytest.importorskip("matplotlib")
    from rdpsym.report import plots

    impostor = dataclasses.replace(M.gaussian(), name="laplace")
    fig = plots.figure1(points=10, panels=[(impostor, "sigma", (2.0, 4.0), "σ = {:g}")])
    assert [l.get_label() for l in fig.axes[0].lines] == ["σ = 2", "σ = 4"]


def test_cli_conversion_plot_takes_default_values_from_the_mechanism(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from click.testing import CliRunner

    from rdpsym.cli import main
    from rdpsym.report import plots

    # the values the plot is drawn at, on 3 of its epsilons (the command with all of them, on a user's file:
    # tests/test_user_mechanisms.py::test_plot_conversion_on_a_user_file)
    seen, chosen = {}, plots.conversion_epsilons

    def three_epsilons(result, dps=20, points=plots.CONVERSION_POINTS, **values):
        seen.update(values)
        return chosen(result, dps, 3, **values)

    monkeypatch.setattr(plots, "conversion_epsilons", three_epsilons)
    monkeypatch.setitem(M._REGISTRY, "my_gaussian", lambda: dataclasses.replace(M.gaussian(), name="my_gaussian"))
    out = tmp_path / "conv.png"
    res = CliRunner().invoke(main, ["plot", "conversion", "my_gaussian", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert seen == {"sigma": 1, "sensitivity": 1}  # the mechanism's example value; sensitivity 1 by default
    assert out.stat().st_size > 1000
    assert M.gaussian().default_values == {"sigma": 1}


def test_mechanism_attributes_are_validated():
    g = M.gaussian()
    with pytest.raises(ValueError, match="defaults: 'tau' is not a parameter"):
        dataclasses.replace(g, defaults=(("tau", 1),))
    with pytest.raises(ValueError, match="sigma"):
        dataclasses.replace(g, defaults=(("sigma", -1),))
    with pytest.raises(ValueError, match="display: 'tau' is not a parameter"):
        dataclasses.replace(g, display=(("tau", sp.S(1), "t"),))
    with pytest.raises(ValueError, match="only its symbol"):
        dataclasses.replace(g, display=(("sigma", g.params["sensitivity"], "s"),))
    with pytest.raises(TypeError, match="sympy expression"):
        dataclasses.replace(g, display=(("sigma", "1/sigma", "s"),))
    assert M.laplace().shown("b", 4.0) == (0.25, "1/λ") and g.shown("sigma", 2.0) == (2.0, None)


# -- no dispatch by name anywhere ------------------------------------------------------------------
ROOT = Path(rdpsym.__file__).parent

#: (file, literal): comparisons that do not select a mechanism's behaviour, each with its reason. Empty:
#: step names, factor and sum kinds and conversion statuses are typed constants (StrEnum members) that
#: the objects carry, so nothing under rdpsym/ compares a name with a string literal.
ALLOWED: set[tuple[str, str]] = set()


def _string_values(node, constants, scope=None):
    """The string literals a comparison operand stands for: module-level string constants resolved, and
    names (and dotted names) that ``scope`` binds to a string: constants imported from other modules of
    the package (``scope`` maps an imported name to its string, or an imported module to its scope). A
    typed constant (an enum member, even a ``StrEnum``'s) is not resolved: comparing with one compares
    kinds, not names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in constants:
        return [constants[node.id]]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for elt in node.elts for v in _string_values(elt, constants, scope)]
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if scope and isinstance(node, ast.Name):
        value = scope
        for attr in [node.id, *reversed(chain)]:
            value = value.get(attr) if isinstance(value, dict) else None
        if isinstance(value, str):
            return [value]
    return []


def _module_constants(tree) -> dict[str, str]:
    return {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for t in node.targets if isinstance(t, ast.Name)}


def _package_scopes() -> dict[str, dict]:
    """For every module of rdpsym (dotted name): the names its imports bind to strings (constants of
    other modules of the package) or to modules of the package (their constants), read from the source."""
    trees, package = {}, {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = [p for p in path.relative_to(ROOT).with_suffix("").parts if p != "__init__"]
        dotted = ".".join(["rdpsym", *parts])
        trees[dotted] = ast.parse(path.read_text(encoding="utf-8"))
        package[dotted] = path.name == "__init__.py"
    constants = {m: _module_constants(t) for m, t in trees.items()}
    scopes = {}
    for dotted, tree in trees.items():
        here = dotted.split(".") if package[dotted] else dotted.split(".")[:-1]
        scope: dict = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                target = ".".join(base + (node.module.split(".") if node.module else []))
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if f"{target}.{alias.name}" in constants:
                        scope[bound] = constants[f"{target}.{alias.name}"]
                    elif alias.name in constants.get(target, {}):
                        scope[bound] = constants[target][alias.name]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in constants:
                        scope[alias.asname] = constants[alias.name]
        scopes[dotted] = scope
    return scopes


def _is_name_attribute(node):
    return isinstance(node, ast.Attribute) and node.attr == "name"


@functools.cache
def _registered_names(names: tuple[str, ...]) -> tuple[frozenset, frozenset]:
    """(mechanism names, parameter names) of the registry whose names are ``names``: built once per
    registry, not once per scanned file (building every registered mechanism takes ~0.3 s, and the scan
    reads ~200 files)."""
    return frozenset(names), frozenset(p.name for m in M.all_mechanisms() for p in m.parameters)


def name_comparisons(source: str, scope: dict | None = None) -> list[tuple[int, str]]:
    """(line, literal) of comparisons that select behaviour by a mechanism's name.

    Flags ``X == lit``, ``X != lit``, ``X in (lit, ...)`` and ``match`` cases where ``lit`` (a string or a
    module-level string constant) is a registered mechanism's name, whatever ``X`` is, and any ``.name``
    compared to a string that is not a parameter name of a registered mechanism.
    """
    tree = ast.parse(source)
    constants = _module_constants(tree)
    mechanism_names, parameter_names = _registered_names(tuple(M.names()))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = any(_is_name_attribute(o) for o in operands)
            for o in operands:
                for value in _string_values(o, constants, scope):
                    if value in mechanism_names or (named and value not in parameter_names):
                        found.append((node.lineno, value))
        elif isinstance(node, ast.MatchValue):
            for value in _string_values(node.value, constants, scope):
                if value in mechanism_names:
                    found.append((node.lineno, value))
    return found


def test_the_name_check_finds_what_it_should():
    assert name_comparisons('SUB = "subsampled_gaussian"\nif mechanism.name == SUB and m == "auto": pass') == [
        (2, "subsampled_gaussian")]
    assert name_comparisons('shown = 1 / v if name == "laplace" else v') == [(1, "laplace")]
    assert name_comparisons('if "gaussian" in (a, name): pass\nif m.name != "my_mech": pass') == [
        (1, "gaussian"), (2, "my_mech")]
    assert name_comparisons('match name:\n    case "laplace":\n        pass') == [(2, "laplace")]
    assert name_comparisons('if p.name == "sensitivity": pass\nfor name in ("laplace", "gaussian"): pass') == []
    # a name imported from another module is its string there; an enum member is a kind, not a name
    scope = {"LAP": "laplace", "ns": {"GAUSS": "gaussian"}}
    source = ('class Kind(enum.StrEnum):\n    LAPLACE = "laplace"\n'
              'if m == LAP or m in (ns.GAUSS,): pass\nif m is Kind.LAPLACE or m == ns.OTHER: pass')
    assert name_comparisons(source, scope) == [(3, "laplace"), (3, "gaussian")]
    assert {"NOT_SHOWN", "StepName"} & set(_package_scopes()["rdpsym.derive.supremum"]) == {"NOT_SHOWN"}


def test_no_module_selects_behaviour_by_a_mechanism_name():
    offenders, used = [], set()
    scopes = _package_scopes()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        dotted = ".".join(["rdpsym", *(p for p in path.relative_to(ROOT).with_suffix("").parts if p != "__init__")])
        for line, value in name_comparisons(path.read_text(encoding="utf-8"), scopes[dotted]):
            if (rel, value) in ALLOWED:
                used.add((rel, value))
            else:
                offenders.append(f"rdpsym/{rel}:{line}: compares with {value!r}")
    assert not offenders, "behaviour chosen by a name; attach it to the mechanism instead:\n" + "\n".join(offenders)
    assert used == ALLOWED, f"exceptions no longer needed (remove them): {sorted(ALLOWED - used)}"
