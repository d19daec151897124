"""User mechanisms everywhere (issue #15, item 4): every command reads ``NAME``, ``path/to/file.py[:name]``
or ``package.module:attribute`` through :func:`rdpsym.mechanisms.resolve`; packages add mechanisms through
the ``rdpsym.mechanisms`` entry-point group; ``rdpsym list`` says where each comes from.

The user's mechanisms are written to ``tmp_path`` as a researcher would: a Gaussian under its own name with
its own parameter names (``tau`` the noise scale, ``width`` the sensitivity), and a discrete coin.
Printed numbers are checked independently: the derived curve symbolically against
alpha width^2 / (2 tau^2) (Mironov 2017, Prop. 7), the accountant's epsilon against an mpmath
minimisation of the conversion (Canonne, Kamath, Steinke 2020, Prop. 12).
"""

from __future__ import annotations

import re
import sys
import textwrap

import mpmath
import pytest
import sympy as sp
from click.testing import CliRunner

from rdpsym import mechanisms
from rdpsym.cli import ExitCode, main
from rdpsym.cli.account_commands import split_event

GAUSS_FILE = '''
import sympy as sp
import rdpsym

def wide_gauss() -> rdpsym.Mechanism:
    """N(0, tau^2) against N(width, tau^2)."""
    x = sp.Symbol("x", real=True)
    tau = rdpsym.parameter("tau", typical=(0.5, 4.0), meaning="noise scale")
    width = rdpsym.parameter("width", typical=(0.5, 2.0), meaning="sensitivity")
    t, w = tau.symbol, width.symbol

    def normal(mean):
        return sp.exp(-(x - mean) ** 2 / (2 * t**2)) / (sp.sqrt(2 * sp.pi) * t)

    return rdpsym.Mechanism(name="wide_gauss", variable=x, support=sp.S.Reals,
                            pairs=(rdpsym.AdjacentPair(normal(0), normal(w), "f(D) = 0, f(D') = width"),),
                            parameters=(tau, width), title="A user's Gaussian")
'''

COIN_FILE = '''
import sympy as sp
import rdpsym

x = sp.Symbol("x", integer=True, nonnegative=True)
_q = rdpsym.parameter("q", sp.Interval.open(sp.Rational(1, 2), 1), typical=(0.6, 0.9))
_s = _q.symbol
coin = rdpsym.Mechanism("coin", x, sp.FiniteSet(0, 1),
                        (rdpsym.AdjacentPair(_s**x * (1 - _s)**(1 - x), (1 - _s)**x * _s**(1 - x)),), (_q,))
'''

REGISTERING_FILE = '''
import sympy as sp
import rdpsym
from rdpsym.mechanisms import register

@register
def registered_coin():
    x = sp.Symbol("x", integer=True, nonnegative=True)
    q = rdpsym.parameter("q", sp.Interval.open(sp.Rational(1, 2), 1), typical=(0.6, 0.9))
    s = q.symbol
    return rdpsym.Mechanism("registered_coin", x, sp.FiniteSet(0, 1),
                            (rdpsym.AdjacentPair(s**x * (1 - s)**(1 - x), (1 - s)**x * s**(1 - x)),), (q,))
'''

RUN = CliRunner()


@pytest.fixture
def gauss(tmp_path):
    f = tmp_path / "my_gauss.py"
    f.write_text(GAUSS_FILE)
    return str(f)


@pytest.fixture
def coin(tmp_path):
    f = tmp_path / "my_coin.py"
    f.write_text(COIN_FILE)
    return str(f)


def _ok(args, code=ExitCode.OK):
    out = RUN.invoke(main, args)
    assert out.exit_code == code, (args, out.output)
    return out.output


def _target(expr_mech):
    by = expr_mech.parameter_by_name
    tau, width = by["tau"].symbol, by["width"].symbol
    return sp.Symbol("alpha", positive=True), tau, width


# -- the resolver -----------------------------------------------------------------------------------------
def test_resolve_each_form(gauss, coin, tmp_path, monkeypatch):
    g = mechanisms.resolve(gauss)
    assert g.name == "wide_gauss" and list(g.params) == ["tau", "width"]
    assert mechanisms.resolve(gauss + ":wide_gauss") == g
    assert mechanisms.resolve(coin).name == "coin"  # a module-level Mechanism object
    assert mechanisms.resolve("gaussian").name == "gaussian"
    assert mechanisms.resolve(g) is g
    monkeypatch.syspath_prepend(str(tmp_path))
    assert mechanisms.resolve("my_gauss:wide_gauss") == g  # package.module:attribute
    assert mechanisms.resolve("rdpsym.mechanisms:laplace").name == "laplace"


def test_a_file_loaded_twice_in_one_process(tmp_path):
    f = tmp_path / "reg.py"
    f.write_text(REGISTERING_FILE)
    try:
        first = mechanisms.resolve(str(f))
        again = mechanisms.resolve(str(f))  # not "registered twice": the module is loaded once per content
        assert first == again and first.name == "registered_coin"
        assert mechanisms.source("registered_coin") == f"file {f.resolve()}"
        for _ in range(2):  # the CLI twice in one process, too
            assert "RDP of registered_coin" in _ok(["derive", str(f)])
        # an edited file is loaded again: its old registration makes way for the new one
        f.write_text(REGISTERING_FILE.replace('"registered_coin", x', '"edited_coin", x') + "\n# edited\n")
        assert mechanisms.resolve(str(f)).name == "edited_coin"
    finally:
        if "registered_coin" in mechanisms.names():
            mechanisms.unregister("registered_coin")


@pytest.mark.parametrize("content, spec_tail, message", [
    (None, "", "no such file"),
    ("x = 1\n", "", "cannot tell which mechanism to use, it defines none"),
    (GAUSS_FILE + "\ndef other() -> rdpsym.Mechanism:\n    return wide_gauss()\n", "",
     "it defines several: wide_gauss, other; name one as"),
    (GAUSS_FILE, ":nope", "defines no 'nope'"),
    (GAUSS_FILE + "\nnot_one = 3\n", ":not_one", "is a int, not an rdpsym Mechanism"),
    (GAUSS_FILE + "\ndef needs(a) -> rdpsym.Mechanism:\n    return wide_gauss()\n", ":needs",
     "takes arguments; a mechanism factory takes none"),
    ("raise RuntimeError('broken on purpose')\n", "", "importing it raised RuntimeError: broken on purpose"),
])
def test_file_errors_name_the_argument_and_the_rule(tmp_path, content, spec_tail, message):
    f = tmp_path / "bad.py"
    if content is not None:
        f.write_text(content)
    with pytest.raises(ValueError, match=re.escape(message)):
        mechanisms.resolve(str(f) + spec_tail)
    out = RUN.invoke(main, ["derive", str(f) + spec_tail])
    assert out.exit_code == ExitCode.USAGE and message in " ".join(out.output.split()), out.output
    assert "Invalid value for NAME" in out.output and "Traceback" not in out.output


def test_module_attribute_errors(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "user_mod_errors.py").write_text("value = 3\n")
    for spec, message in (("no_such_module_xyz:f", "cannot import module 'no_such_module_xyz'"),
                          ("user_mod_errors:missing", "defines no 'missing'"),
                          ("user_mod_errors:value", "is a int, not an rdpsym Mechanism"),
                          ("no_such_mechanism", "unknown mechanism 'no_such_mechanism'; registered: ")):
        out = RUN.invoke(main, ["codegen", spec])
        assert out.exit_code == ExitCode.USAGE and message in " ".join(out.output.split()), (spec, out.output)


# -- every command on the user's files ---------------------------------------------------------------------
def test_derive_a_user_file_symbolically(gauss):
    import rdpsym

    mech = mechanisms.resolve(gauss)
    result = rdpsym.rdp(mech)
    alpha, tau, width = _target(mech)
    assert result.expr is not None
    a = [s for s in result.expr.free_symbols if s.name == "alpha"][0]
    assert sp.simplify(result.expr - a * width**2 / (2 * tau**2)) == 0
    out = _ok(["derive", gauss])
    assert "RDP of wide_gauss [closed_form]" in out and sp.sstr(result.expr) in out and "provenance" in out


def test_derive_and_verify_the_discrete_file(coin):
    assert "RDP of coin" in _ok(["derive", coin])
    out = _ok(["verify", coin, "--level", "quick", "--workers", "1"])
    assert "coin" in out and "verified" in out


def test_report_codegen_check_on_a_user_file(gauss, tmp_path):
    md = _ok(["report", gauss])
    assert "wide_gauss" in md or "A user's Gaussian" in md
    source = _ok(["codegen", gauss])
    namespace: dict = {}
    exec(compile(source, "generated", "exec"), namespace)  # noqa: S102 - rdpsym's own generated code
    (fn,) = [v for k, v in namespace.items() if k.startswith("rdp_") and callable(v)]
    assert float(fn(3.0, tau=2.0, width=1.0)) == pytest.approx(3 / 8, rel=1e-13)
    assert float(fn(2.0, tau=0.5, width=1.5)) == pytest.approx(2 * 1.5**2 / (2 * 0.25), rel=1e-13)
    out = _ok(["check", gauss, "--claim", "alpha*width**2/(2*tau**2)"])
    assert "PROVED" in out or "CONFIRMED" in out, out
    out = RUN.invoke(main, ["check", gauss, "--claim", "alpha*width/(2*tau**2)"])
    assert out.exit_code == ExitCode.FAILED and "REFUTED" in out.output, out.output


def test_verify_and_properties_on_a_user_file(gauss):
    out = _ok(["verify", gauss + ":wide_gauss", "--level", "quick", "--workers", "1"])
    assert "wide_gauss" in out and "verified" in out
    out = _ok(["verify", gauss, "--function", "wide_gauss", "--level", "quick", "--workers", "1"])
    assert "verified" in out
    out = RUN.invoke(main, ["verify", gauss, "--function", "nope"])
    assert out.exit_code == ExitCode.USAGE and "--function" in out.output and "defines no 'nope'" in out.output
    out = _ok(["properties", gauss, "--quick", "--workers", "1"])
    assert "Properties of wide_gauss" in out


def test_plot_conversion_on_a_user_file(gauss, tmp_path):
    png = tmp_path / "conv.png"
    _ok(["plot", "conversion", gauss, "-o", str(png), "--param", "tau=2", "--param", "width=1"])
    assert png.is_file() and png.stat().st_size > 1000


def test_account_with_a_user_file_matches_an_mpmath_minimisation(gauss, tmp_path, monkeypatch):
    tau, width, n, delta = 2.0, 1.0, 10, 1e-5
    out = _ok(["account", "--add", f"{gauss}:tau={tau:g},width={width:g}", "--count", str(n), "--delta", "1e-5"])
    got = float(re.search(r"epsilon = ([0-9.eE+-]+)", out).group(1))
    # CKS20 Prop. 12 on n alpha width^2 / (2 tau^2), minimised over alpha > 1 independently
    mpmath.mp.dps = 30

    def eps(a):
        return n * a * width**2 / (2 * tau**2) + mpmath.log1p(-1 / a) - (mpmath.log(delta) + mpmath.log(a)) / (a - 1)

    a_star = mpmath.findroot(lambda a: mpmath.diff(eps, a), 5)
    want = float(eps(a_star))
    assert got == pytest.approx(want, rel=1e-5), (got, want, out)
    # file.py:name:values and package.module:attribute:values read the same event
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec in (f"{gauss}:wide_gauss:tau=2,width=1", "my_gauss:wide_gauss:tau=2,width=1"):
        out = _ok(["account", "--add", spec, "--count", str(n), "--delta", "1e-5"])
        assert float(re.search(r"epsilon = ([0-9.eE+-]+)", out).group(1)) == got
    out = RUN.invoke(main, ["account", "--add", f"{gauss}:tau=-1,width=1", "--delta", "1e-5"])
    assert out.exit_code == ExitCode.USAGE and "must lie in" in out.output, out.output


def test_account_spec_splitting_keeps_the_name_syntax():
    assert split_event("gaussian:sigma=1.1,sensitivity=2") == ("gaussian", "sigma=1.1,sensitivity=2")
    assert split_event("gaussian") == ("gaussian", "")
    assert split_event("gaussian:sigma") == ("gaussian", "sigma")  # the old error, expected NAME=VALUE
    assert split_event("a/b.py:s=2") == ("a/b.py", "s=2")
    assert split_event("a/b.py:noise:s=2,t=1") == ("a/b.py:noise", "s=2,t=1")
    assert split_event("pkg.mod:noise:s=2") == ("pkg.mod:noise", "s=2")
    assert split_event("pkg.mod:noise") == ("pkg.mod:noise", "")
    out = RUN.invoke(main, ["account", "--add", "gaussian:sigma", "--delta", "1e-5"])
    assert out.exit_code == ExitCode.USAGE and "expected NAME=VALUE" in out.output


def test_regress_entry_names_a_file_relative_to_the_registry(gauss, tmp_path):
    (tmp_path / "reg.toml").write_text('[[entry]]\nname = "user/gauss"\nmechanism = "my_gauss.py"\n'
                                       'formula = "alpha*width**2/(2*tau**2)"\nsource = "Mironov 2017, Prop. 7"\n'
                                       "fixed = {}\n")
    out = RUN.invoke(main, ["regress", str(tmp_path / "reg.toml"), "--search", "5", "--workers", "1"])
    assert out.exit_code == ExitCode.OK, out.output
    assert "1 pass, 0 inconclusive, 0 fail" in out.output
    (tmp_path / "bad.toml").write_text((tmp_path / "reg.toml").read_text().replace("my_gauss.py", "missing.py"))
    out = RUN.invoke(main, ["regress", str(tmp_path / "bad.toml"), "--search", "5", "--workers", "1"])
    assert out.exit_code == ExitCode.FAILED and "no such file" in " ".join(out.output.split()), out.output


# -- entry points -------------------------------------------------------------------------------------------
PLUGIN_MODULE = GAUSS_FILE.replace('"wide_gauss"', '"plugin_gauss"') + '''

def broken():
    raise RuntimeError("the plugin is broken")
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A fake installed distribution ``rdpsym-fake-plugin`` with entry points in ``rdpsym.mechanisms``."""
    site = tmp_path / "site"
    dist = site / "rdpsym_fake_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rdpsym-fake-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent("""\
        [rdpsym.mechanisms]
        plugin_gauss = rdpsym_fake_plugin_mod:wide_gauss
        plugin_broken = rdpsym_fake_plugin_mod:broken
        plugin_missing = rdpsym_fake_plugin_mod:no_such_attribute
        laplace = rdpsym_fake_plugin_mod:wide_gauss
        """))
    (site / "rdpsym_fake_plugin_mod.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(site))
    yield site
    monkeypatch.undo()
    sys.modules.pop("rdpsym_fake_plugin_mod", None)


def test_an_entry_point_mechanism_is_picked_up(plugin):
    assert {"plugin_gauss", "plugin_broken", "plugin_missing"} <= set(mechanisms.names())
    assert "rdpsym_fake_plugin_mod" not in sys.modules  # listed without being loaded
    assert mechanisms.get("plugin_gauss").name == "plugin_gauss"
    assert mechanisms.source("plugin_gauss") == "entry point rdpsym_fake_plugin_mod:wide_gauss (rdpsym-fake-plugin 1.0)"
    assert mechanisms.get("laplace").title == "Laplace mechanism"  # the built-in wins the clash
    (clash,) = mechanisms.problems()
    assert "'laplace'" in clash and "rdpsym-fake-plugin 1.0" in clash and "built-in" in clash
    with pytest.raises(ValueError, match="calling it raised RuntimeError: the plugin is broken"):
        mechanisms.get("plugin_broken")
    with pytest.raises(ValueError, match="loading entry point rdpsym_fake_plugin_mod:no_such_attribute"):
        mechanisms.get("plugin_missing")

    out = _ok(["list"])
    rows = {line.split()[0]: line for line in out.splitlines() if line and not line.startswith("warning")}
    assert "from: entry point rdpsym_fake_plugin_mod:wide_gauss (rdpsym-fake-plugin 1.0)" in rows["plugin_gauss"]
    assert "A user's Gaussian  (parameters: tau, width)" in rows["plugin_gauss"]
    assert "cannot be built" in rows["plugin_broken"] and "cannot be built" in rows["plugin_missing"]
    assert rows["laplace"].endswith("from: built-in") and "Laplace mechanism" in rows["laplace"]
    assert "warning: mechanism 'laplace': entry point" in out  # on stderr (mixed into the output here)
    out = _ok(["derive", "plugin_gauss"])
    assert "RDP of plugin_gauss [closed_form]" in out


def test_without_the_plugin_nothing_is_left_behind():
    assert not {"plugin_gauss", "plugin_broken"} & set(mechanisms.names())
    assert mechanisms.problems() == []
    for line in _ok(["list"]).splitlines():
        assert line.endswith("from: built-in"), line
