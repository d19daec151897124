"""Tests of the safe formula parsers (rdpsym.specify.text)."""

from __future__ import annotations

import time
from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdpsym.specify.text import (
    MAX_LENGTH,
    FormulaError,
    parse,
    parse_formula,
    parse_latex,
)

alpha = sp.Symbol("alpha", positive=True)
b = sp.Symbol("b", positive=True)
sigma = sp.Symbol("sigma", positive=True)
p = sp.Symbol("p", positive=True)
sigma_1 = sp.Symbol("sigma_1", positive=True)
lam = sp.Symbol("lambda", positive=True)

SYMBOLS = {"alpha": alpha, "b": b, "lambda": b, "lam": b, "sigma": sigma, "p": p, "sigma_1": sigma_1}

# Points where every Table II formula is real and finite (alpha > 1, 0 < p < 1, scales > 0).
POINTS = [
    {alpha: sp.Rational(3, 2), b: sp.Rational(1, 2), sigma: sp.Rational(3, 4), p: sp.Rational(3, 5), sigma_1: 2},
    {alpha: sp.Rational(7, 3), b: sp.Rational(9, 4), sigma: sp.Rational(5, 2), p: sp.Rational(11, 20), sigma_1: sp.Rational(1, 3)},
    {alpha: sp.Rational(101, 10), b: sp.Rational(1, 7), sigma: 4, p: sp.Rational(9, 10), sigma_1: sp.Rational(7, 5)},
    {alpha: sp.Rational(1001, 1000), b: 3, sigma: sp.Rational(1, 5), p: sp.Rational(51, 100), sigma_1: 5},
]


def _value(expr: sp.Expr, point) -> complex | None:
    v = sp.N(expr.subs(point), 30)
    if not v.is_number or v.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        return None
    re_, im_ = v.as_real_imag()
    return mpmath.mpc(mpmath.mpf(sp.Float(re_, 30)._mpf_), mpmath.mpf(sp.Float(im_, 30)._mpf_))


def assert_same(got: sp.Expr, want: sp.Expr, points=POINTS) -> None:
    """Semantic equality: identical, or equal to 20 digits at several rational points (30-digit arithmetic)."""
    if got == want or (got.count_ops() < 40 and sp.simplify(got - want) == 0):
        return
    compared = 0
    with mpmath.workdps(30):
        for point in points:
            a, w = _value(got, point), _value(want, point)
            if w is None:
                continue
            assert a is not None, f"{got} is not finite at {point} but {want} is"
            assert abs(a - w) <= mpmath.mpf("1e-20") * max(1, abs(w)), f"{got} != {want} at {point}: {a} vs {w}"
            compared += 1
    assert compared, f"no point to compare {got} and {want}"


# ---------------------------------------------------------------------------------------------------
# Table II of Mironov (2017), both syntaxes
# ---------------------------------------------------------------------------------------------------

RR = 1 / (alpha - 1) * sp.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha))
LAPLACE = 1 / (alpha - 1) * sp.log(
    alpha / (2 * alpha - 1) * sp.exp((alpha - 1) / b) + (alpha - 1) / (2 * alpha - 1) * sp.exp(-alpha / b)
)

TABLE_II = [
    # (name, latex, python, hand-built)
    (
        "rr alpha>1",
        r"\frac{1}{\alpha-1}\log\left(p^{\alpha}(1-p)^{1-\alpha}+(1-p)^{\alpha}p^{1-\alpha}\right)",
        "1/(alpha-1)*np.log(p**alpha*(1-p)**(1-alpha) + (1-p)**alpha*p**(1-alpha))",
        RR,
    ),
    ("rr alpha=1", r"(2p-1)\log\frac{p}{1-p}", "(2*p-1)*math.log(p/(1-p))", (2 * p - 1) * sp.log(p / (1 - p))),
    ("rr alpha=inf", r"\log\left(\frac{p}{1-p}\right)", "log(p/(1-p))", sp.log(p / (1 - p))),
    (
        "laplace alpha>1",
        r"\frac{1}{\alpha-1}\log\left(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)/\lambda}"
        r"+\frac{\alpha-1}{2\alpha-1}e^{-\alpha/\lambda}\right)",
        "1/(alpha-1)*np.log(alpha/(2*alpha-1)*np.exp((alpha-1)/b) + (alpha-1)/(2*alpha-1)*np.exp(-alpha/b))",
        LAPLACE,
    ),
    (
        "laplace alpha>1, displaystyle and sizing",
        r"\displaystyle \dfrac{1}{\alpha - 1} \ln \Big( \tfrac{\alpha}{2\alpha-1}\, \exp\!\left(\frac{\alpha-1}{\lambda}\right)"
        r" + \frac{\alpha - 1}{2 \alpha - 1} \mathrm{e}^{-\alpha / \lambda} \Big)",
        "1/(alpha-1)*log(alpha/(2*alpha-1)*e^((alpha-1)/lam) + (alpha-1)/(2*alpha-1)*e^(-alpha/lam))",
        LAPLACE,
    ),
    ("laplace alpha=1", r"\frac{1}{\lambda}+e^{-1/\lambda}-1", "1/b + np.exp(-1/b) - 1", 1 / b + sp.exp(-1 / b) - 1),
    ("laplace alpha=inf", r"\frac1\lambda", "1/lambda", 1 / b),
    ("gaussian alpha>1", r"\frac{\alpha}{2\sigma^2}", "alpha/(2*sigma^2)", alpha / (2 * sigma**2)),
    ("gaussian alpha=1", r"\frac{1}{2 \sigma^{2}}", "1 / (2 * sigma ** 2)", 1 / (2 * sigma**2)),
    ("gaussian alpha=inf", r"\infty", "np.inf", sp.oo),
]


@pytest.mark.parametrize("name, latex, python, want", TABLE_II, ids=[t[0] for t in TABLE_II])
def test_table_ii_latex(name, latex, python, want):
    assert_same(parse_latex(latex, SYMBOLS), want)
    assert_same(parse(latex, SYMBOLS), want)  # auto picks LaTeX


@pytest.mark.parametrize("name, latex, python, want", TABLE_II, ids=[t[0] for t in TABLE_II])
def test_table_ii_python(name, latex, python, want):
    assert_same(parse_formula(python, SYMBOLS), want)
    assert_same(parse(python, SYMBOLS), want)  # auto picks Python


def test_assert_same_can_fail():
    with pytest.raises(AssertionError):
        assert_same(LAPLACE, LAPLACE.subs(b, 2 * b))


# ---------------------------------------------------------------------------------------------------
# Features
# ---------------------------------------------------------------------------------------------------

x, y = sp.symbols("x y", positive=True)
XY = {"x": x, "y": y, "alpha": alpha, "sigma": sigma, "sigma_1": sigma_1, "lam": b, "lambda": lam}

LATEX_CASES = [
    (r"\frac{x}{y}", x / y),
    (r"\frac12 x", x / 2),
    (r"\frac{1}{2}x", x / 2),
    (r"\sqrt{x}", sp.sqrt(x)),
    (r"\sqrt[3]{x}", x ** sp.Rational(1, 3)),
    (r"x^2", x**2),
    (r"x^{12}", x**12),
    (r"x^{-1}", 1 / x),
    (r"2\alpha", 2 * alpha),
    (r"\alpha \sigma^2", alpha * sigma**2),
    (r"(x)(y)", x * y),
    (r"xy", x * y),
    (r"x \cdot y \times 2", 2 * x * y),
    (r"x/yx", x**2 / y),  # products and / are left-associative
    (r"-xy", -x * y),
    (r"\sigma_1", sigma_1),
    (r"\sigma_{1}^{2}", sigma_1**2),
    (r"\lambda + lam", lam + b),
    (r"\log x", sp.log(x)),
    (r"\log x y", sp.log(x) * y),
    (r"\log 2\alpha", sp.log(2) * alpha),
    (r"\log x^2", sp.log(x**2)),
    (r"\log(x)^2", sp.log(x) ** 2),
    (r"\log^2 x", sp.log(x) ** 2),
    (r"\log_2 x", sp.log(x) / sp.log(2)),
    (r"\log_{y}(x)", sp.log(x) / sp.log(y)),
    (r"\ln\left(1+x\right)", sp.log(1 + x)),
    (r"\exp(x)", sp.exp(x)),
    (r"e^{x}", sp.exp(x)),
    (r"e^x y", sp.exp(x) * y),
    (r"\mathrm{e}^{-x}", sp.exp(-x)),
    (r"\left[ x + 1 \right] y", (x + 1) * y),
    (r"\big( x \big) \Big[ y \Big]", x * y),
    (r"\{x\}", x),
    (r"\min(x, y)", sp.Min(x, y)),
    (r"\max\{x, y, 1\}", sp.Max(x, y, 1)),
    (r"\operatorname{erf}(x)", sp.erf(x)),
    (r"\operatorname{erfc}{\left(x \right)}", sp.erfc(x)),
    (r"\Gamma(x)", sp.gamma(x)),
    (r"|x - y|", sp.Abs(x - y)),
    (r"\lvert x \rvert + \left|{y}\right|", sp.Abs(x) + sp.Abs(y)),
    (r"||x|-|y||", sp.Abs(sp.Abs(x) - sp.Abs(y))),
    (r"2|x|", 2 * sp.Abs(x)),
    (r"\lfloor x \rfloor + \lceil y \rceil", sp.floor(x) + sp.ceiling(y)),
    (r"\binom{5}{2}", sp.Integer(10)),
    (r"3!", sp.Integer(6)),
    (r"\pi", sp.pi),
    (r"\infty", sp.oo),
    (r"\varepsilon", sp.Symbol("epsilon")),
    (r"x\,y\;\quad 2\!", 2 * x * y),
    (r"$\frac{x}{2}$", x / 2),
    (r"0.25x", x / 4),
    (r"\sin^{2}{\left(x \right)}", sp.sin(x) ** 2),
    (r"\frac{\alpha}{2\sigma^2}\left(1-\frac{1}{\alpha}\right)", alpha / (2 * sigma**2) * (1 - 1 / alpha)),
]


@pytest.mark.parametrize("text, want", LATEX_CASES, ids=[c[0] for c in LATEX_CASES])
def test_latex_features(text, want):
    syms = dict(XY, epsilon=sp.Symbol("epsilon"))
    got = parse_latex(text, syms)
    assert got == want or sp.simplify(got - want) == 0, (got, want)


PYTHON_CASES = [
    ("0.1", sp.Rational(1, 10)),
    ("1.5e-3*x", sp.Rational(3, 2000) * x),
    ("1_000", sp.Integer(1000)),
    ("x^2 + 1", x**2 + 1),  # ^ is a power with a power's precedence
    ("2*x^2", 2 * x**2),
    ("2^3^2", sp.Integer(512)),  # right-associative
    ("-x**2", -(x**2)),
    ("np.exp(x) + math.log(y) + numpy.sqrt(x) + mp.log(2) + mpmath.exp(1) + sp.pi + sympy.E",
     sp.exp(x) + sp.log(y) + sp.sqrt(x) + sp.log(2) + sp.E + sp.pi + sp.E),
    ("log(x, 2)", sp.log(x) / sp.log(2)),
    ("ln(x) + log1p(x) + expm1(y)", sp.log(x) + sp.log(1 + x) + sp.exp(y) - 1),
    ("abs(x-y) + Abs(x) + min(x, y) + Max(x, 1)", sp.Abs(x - y) + x + sp.Min(x, y) + sp.Max(x, 1)),
    ("erf(x) + erfc(x) + gamma(x) + lgamma(x) + beta(x, y) + binomial(5, 2) + factorial(3)",
     sp.erf(x) + sp.erfc(x) + sp.gamma(x) + sp.loggamma(x) + sp.beta(x, y) + 16),
    ("floor(x) + ceiling(y) + sign(x) + sin(x) + cos(x) + tan(x) + tanh(x) + sinh(x) + cosh(x)",
     sp.floor(x) + sp.ceiling(y) + 1 + sp.sin(x) + sp.cos(x) + sp.tan(x) + sp.tanh(x) + sp.sinh(x) + sp.cosh(x)),
    ("e + E + pi + inf + oo", 2 * sp.E + sp.pi + sp.oo),
    ("np.e + math.pi", sp.E + sp.pi),
    ("1/lambda + lam", 1 / lam + b),
    ("α/σ", alpha / sigma),
    ("x − y · 2 × x", x - 2 * y * x),
    ("(x +\n y)\t* 2", 2 * (x + y)),
]


@pytest.mark.parametrize("text, want", PYTHON_CASES, ids=[c[0] for c in PYTHON_CASES])
def test_python_features(text, want):
    got = parse_formula(text, XY)
    assert got == want or sp.simplify(got - want) == 0, (got, want)


def test_piecewise_with_its_conditions():
    """A published formula's finiteness conditions, written as sympy prints them: pairs and conditions are
    read inside Piecewise only (a comparison or a tuple elsewhere is still an error)."""
    assert parse_formula("Piecewise((log(x/y), x >= y), (oo, True))", XY) == sp.Piecewise(
        (sp.log(x / y), x >= y), (sp.oo, True))
    assert parse_formula("Piecewise((0, Eq(x, y)), (oo, True))", XY) == sp.Piecewise((0, sp.Eq(x, y)), (sp.oo, True))
    got = parse_formula("Piecewise((1, (x > 1) & (y < 2) | ~(x != y)), (2, 0 < x <= y), (3, not x > y), (4, True))", XY)
    want = sp.Piecewise((1, ((x > 1) & (y < 2)) | sp.Eq(x, y)), (2, (0 < x) & (x <= y)), (3, ~(x > y)), (4, True))
    assert got == want, got
    assert parse_formula("Piecewise((1, And(Gt(x, 1), Or(Le(y, 2), Ne(x, y)))), (0, True))", XY) == sp.Piecewise(
        (1, (x > 1) & ((y <= 2) | sp.Ne(x, y))), (0, True))
    for text, fragment in [("Piecewise(1, 2)", "must be a pair"), ("Piecewise((1, x + y), (2, True))", "a condition must"),
                           ("Piecewise((1, x is y))", "only <, <="), ("Piecewise()", "at least one"),
                           ("Piecewise((1, 2, True))", "must be a pair"), ("x < 1", "comparisons are not allowed"),
                           ("Piecewise((x < 1, True))", "comparisons are not allowed")]:
        with pytest.raises(FormulaError, match=fragment):
            parse_formula(text, XY)
    with pytest.raises(FormulaError, match="Python syntax"):
        parse_latex(r"\operatorname{Piecewise}(x)", XY)


def test_special_functions_of_published_formulas():
    got = parse_formula("digamma(x) + psi(y) + polygamma(1, x) + hyp2f1(1/2, 1, 3/2, -x**2) + besseli(0, x) + kv(1, y)", XY)
    want = (sp.polygamma(0, x) + sp.polygamma(0, y) + sp.polygamma(1, x) + sp.hyper((sp.Rational(1, 2), 1),
            (sp.Rational(3, 2),), -x**2) + sp.besseli(0, x) + sp.besselk(1, y))
    assert got == want, got
    # on numbers they stay unevaluated: sympy would write polygamma(900, 900) as an exact rational
    got = parse_formula("polygamma(900, 900) + digamma(1000)", {})
    assert got.atoms(sp.polygamma), got


def test_user_symbol_e_wins_over_euler():
    e = sp.Symbol("e")
    assert parse_formula("e + 1", {"e": e}) == e + 1
    assert parse_formula("np.e", {"e": e}) == sp.E
    assert parse_latex(r"e^{2}", {"e": e}) == e**2
    assert parse_latex(r"\mathrm{e}^{2}", {"e": e}) == sp.exp(2)
    assert parse_formula("e", {}) == sp.E


def test_functions_restriction():
    assert parse_formula("exp(x)", XY, functions={"exp"}) == sp.exp(x)
    with pytest.raises(FormulaError, match="unknown function 'log'"):
        parse_formula("log(x)", XY, functions={"exp"})
    with pytest.raises(FormulaError, match="unknown function"):
        parse_latex(r"\log x", XY, functions={"exp"})
    with pytest.raises(ValueError, match="unknown"):
        parse_formula("x", XY, functions={"eval"})


def test_parse_syntax_argument():
    assert parse("x^2", XY, "latex") == x**2
    assert parse("x^2", XY, "python") == x**2
    with pytest.raises(ValueError):
        parse("x", XY, "mathml")


def test_results_are_sympy_expressions():
    for text in ["x", "1", "0.5", "pi", "np.inf"]:
        assert isinstance(parse_formula(text, XY), sp.Expr)
    assert isinstance(parse_formula("2", XY), sp.Integer)


# ---------------------------------------------------------------------------------------------------
# Errors: a FormulaError naming the problem, at the right position
# ---------------------------------------------------------------------------------------------------

ERROR_CASES = [
    # (syntax, text, message fragment, position)
    ("python", "alpha + foo", "unknown name 'foo'", 8),
    ("python", "x.real", "attribute access is not allowed", 1),
    ("python", "exp.__globals__", "attribute access is not allowed", 3),
    ("python", "np.linalg.norm(x)", "attribute access is not allowed", 9),
    ("python", "x < 1", "comparisons are not allowed", 0),
    ("python", "x if y else 1", "conditional expressions are not allowed", 0),
    ("python", "x % 2", "operator '%' is not allowed", 2),
    ("python", "x // 2", "operator '//' is not allowed", 2),
    ("python", "exp(x=1)", "keyword arguments are not allowed", 4),
    ("python", "x[0]", "subscripts are not allowed", 0),
    ("python", "foo(x)", "unknown function 'foo'", 0),
    ("python", "x(1)", "is a symbol, not a function", 0),
    ("python", "exp", "must be called", 0),
    ("python", "log(x, 2, 3)", "takes 1 to 2 argument(s), got 3", 0),
    ("python", "(x + 1", "unbalanced '('", 0),
    ("python", "x + 1)", "unbalanced ')'", 5),
    ("python", "x +", "syntax error", 3),
    ("python", "True", "'True' is not allowed", 0),
    ("python", "2j", "complex numbers are not allowed", 0),
    ("python", "x # comment", "comments are not allowed", 2),
    ("python", "α + ζ", "unknown name 'ζ'", 4),
    ("python", "x ^ y ^ foo", "unknown name 'foo'", 8),  # offsets survive the ^ -> ** rewrite
    ("python", "", "empty formula", 0),
    ("latex", r"\frac{1}{x", "unbalanced brace", 8),
    ("latex", r"x}", "unbalanced brace", 1),
    ("latex", r"\alpha + \foo", "unknown command '\\foo'", 9),
    ("latex", r"\alpha + q", "unknown name 'q'", 9),
    ("latex", r"\alpha + qq", "unknown name 'qq'", 9),
    ("latex", r"\log", "needs an argument", 4),
    ("latex", r"x = 1", "comparisons", 2),
    ("latex", r"x \le 1", "comparisons", 2),
    ("latex", r"x^12", "ambiguous superscript", 2),
    ("latex", r"x^-1", "braces", 2),
    ("latex", r"x^2^3", "double superscript", 3),
    ("latex", r"\sigma_12", "ambiguous subscript", 7),
    ("latex", r"\sigma_2", "unknown name 'sigma_2'", 0),
    ("latex", r"\left( x \right]", "expected ')'", 15),
    ("latex", r"(x, y)", "commas separate function arguments", 2),
    ("latex", r"x \\ y", "unknown command", 2),
    ("latex", "x \\", "dangling backslash", 2),
    ("latex", r"\sqrt{}", "empty group", 5),
]


@pytest.mark.parametrize("syntax, text, fragment, position", ERROR_CASES, ids=[c[1] for c in ERROR_CASES])
def test_errors(syntax, text, fragment, position):
    fn = parse_latex if syntax == "latex" else parse_formula
    with pytest.raises(FormulaError) as info:
        fn(text, XY)
    assert fragment in str(info.value)
    assert info.value.position == position
    assert f"at position {position}" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unknown_name_lists_known_names():
    with pytest.raises(FormulaError, match=r"unknown name 'foo' at position 12; known: alpha, b, lam"):
        parse_formula("alpha + b + foo", SYMBOLS)


def test_too_long():
    with pytest.raises(FormulaError, match=rf"formula too long \(max {MAX_LENGTH} chars\)"):
        parse_formula("x+" * MAX_LENGTH, XY)


# ---------------------------------------------------------------------------------------------------
# Hostile input: never executes, never hangs, always a FormulaError with a position
# ---------------------------------------------------------------------------------------------------

HOSTILE = [
    "__import__('os').system('touch MARKER')",
    "__import__(\"os\").system(\"touch MARKER\")",
    "().__class__.__bases__[0].__subclasses__()",
    "open('MARKER','w')",
    "open",
    "exec",
    "eval",
    "lambda: 1",
    "[x for x in ()]",
    "exp.__globals__",
    "exp.__class__",
    "np.__dict__",
    "math.sys.modules",
    "sympy.sympify('1')",
    "sp.parse_expr",
    '"a"',
    "b'a'",
    "f'{x}'",
    "9**9**9**9",
    "9**9**9",
    "2**(10**9)",
    "(2*x)**(10**9)",
    "exp(10**9*log(2))",
    "factorial(10**6)",
    "gamma(10**9)",
    "binomial(10**9, 5*10**8)",
    "sqrt(10**300+1)*sqrt(10**300+3)*sqrt(10**300+7)*sqrt(10**300+9)*sqrt(10**300+11)*sqrt(10**300+13)",
    "1e100000000",
    "*".join(["factorial(999)"] * 600),
    "*".join(["3**8000"] * 1000),
    "\\frac{1}{" + "\\cdot".join(["9^{4000}"] * 800) + "}",
    "0x" + "f" * 9000,
    "(" * 100_000 + "x" + ")" * 100_000,
    "(" * 5000 + "x" + ")" * 5000,
    "-" * 5000 + "x",
    "+" * 5000 + "x",
    "2**" * 3000 + "2",
    "x" * 1_000_000,
    "x\x00",
    "\x00",
    "x\u202e+1",
    "x\u200b+1",
    "ｅｘｐ(1)",
    "(y:=1)",
    "*x",
    "x if x else x",
    "x and y",
    "not x",
    "yield x",
    "await x",
    "{}",
    "x.__class__.__mro__[-1]",
    "getattr(x, '__class__')",
    "breakpoint()",
    "globals()",
    r"\input{/etc/passwd}",
    r"\include{/etc/passwd}",
    r"\def\x{1}\x",
    r"\csname x\endcsname",
    r"\write18{touch MARKER}",
    r"\immediate\write18{touch MARKER}",
    r"\catcode`\@=11",
    r"\newcommand{\x}{1}",
    r"\frac{1}{" * 200 + "x" + "}" * 400,
    "{" * 100_000 + "x" + "}" * 100_000,
    r"\left(" * 5000 + "x" + r"\right)" * 5000,
    r"10^{10^{10^{10}}}",
    r"x^{" * 300 + "2" + "}" * 300,
    "|" * 9999,
    "\\" * 9999,
    "\\x00",
    "$" * 9999,
    "\\" + "\x00",
    "x\r\n+\ry",
]


@pytest.mark.parametrize("template", HOSTILE, ids=[repr(h[:30]) for h in HOSTILE])
@pytest.mark.parametrize("syntax", ["python", "latex", "auto"])
def test_hostile_input_is_refused(template, syntax, tmp_path):
    marker = tmp_path / "pwned"
    text = template.replace("MARKER", str(marker))
    start = time.perf_counter()
    try:
        result = parse(text, XY, syntax)
    except FormulaError as exc:
        assert isinstance(exc.position, int) and 0 <= exc.position <= max(len(text), 0)
        assert f"at position {exc.position}" in str(exc)
    else:  # a few are harmless formulas in one of the syntaxes (e.g. "x\r\n+\ry")
        assert isinstance(result, sp.Expr)
        assert not result.has(sp.Function("open"), sp.Function("exec"))
    # a guard against a blow-up (typically milliseconds), far above the typical time: not a speed target
    assert time.perf_counter() - start < 60
    assert not marker.exists()
    assert list(tmp_path.iterdir()) == []


def test_deep_nesting_message():
    with pytest.raises(FormulaError, match="nesting too deep") as info:
        parse_formula("(" * 100_0 + "x" + ")" * 100_0, XY)
    assert info.value.position > 0
    with pytest.raises(FormulaError, match="nesting too deep"):
        parse_latex("{" * 1000 + "x" + "}" * 1000, XY)


def test_numbers_stay_printable():
    # every number in a result fits Python's int-to-str limit, so results can always be printed
    assert len(str(parse_formula("2**13999", XY))) > 4000
    for text in ["2**14001", "3**8000*3**8000", "factorial(999)*factorial(999)", "(10**3000)**2"]:
        with pytest.raises(FormulaError, match="too large"):
            parse_formula(text, XY)


def test_huge_power_refused_quickly():
    # refused before any power is computed (computing 9**9**9**9 would never end, so no clock is needed)
    with pytest.raises(FormulaError, match="power too large") as info:
        parse_formula("9**9**9**9", XY)
    assert info.value.position == 4
    with pytest.raises(FormulaError, match="power too large"):
        parse_latex("9^{9^{9^{9}}}", XY)
    # exponents beyond the float range (review finding: formatting the message raised OverflowError)
    for text in ["2^3^4^5", "2**(10**400)", "0.5**(3**1024)"]:
        with pytest.raises(FormulaError, match="power too large"):
            parse_formula(text, XY)
    # symbolic bases and modest numbers are fine
    assert parse_formula("x**(10**9)", XY) == x ** (10**9)
    assert parse_formula("2**100", XY) == 2**100


# ---------------------------------------------------------------------------------------------------
# Fuzzing: anything in, an Expr or a FormulaError out
# ---------------------------------------------------------------------------------------------------


def _expr_or_formula_error(text: str) -> None:
    for fn in (parse_formula, parse_latex, parse):
        try:
            result = fn(text, XY)
        except FormulaError as exc:
            assert isinstance(exc.position, int) and 0 <= exc.position <= len(text), (text, exc.position)
        else:
            assert isinstance(result, sp.Expr), (text, result)


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_fuzz_random_text(text):
    _expr_or_formula_error(text)


TOKENS = [
    "x", "y", "alpha", "sigma", "sigma_1", "lam", "lambda", "e", "E", "pi", "np.", "math.", "exp", "log",
    "sqrt", "abs", "min", "max", "gamma", "erf", "factorial", "binomial", "floor", "(", ")", "[", "]", "{", "}",
    ",", "+", "-", "*", "/", "**", "^", "_", "|", "!", ".", "0", "1", "2", "9", "10", "0.5", "1e5", "1e-3",
    " ", "\\frac", "\\dfrac", "\\sqrt", "\\log", "\\ln", "\\exp", "\\alpha", "\\sigma", "\\lambda", "\\left(",
    "\\right)", "\\left|", "\\right|", "\\cdot", "\\times", "\\min", "\\max", "\\{", "\\}", "\\Gamma",
    "\\operatorname{erf}", "\\mathrm{e}", "\\infty", "\\pi", "\\,", "\\big(", "\\big)", "\\binom", "\\lfloor",
    "\\rfloor", "\\lvert", "\\rvert", "=", "<", "'", '"', "lambda", ":", "__class__", "\\input", "%", "//",
]


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_fuzz_token_soup(tokens):
    _expr_or_formula_error("".join(tokens))
    _expr_or_formula_error(" ".join(tokens))


# ---------------------------------------------------------------------------------------------------
# Round trip: random sympy expression -> str / sympy.latex -> parse -> the same function
# ---------------------------------------------------------------------------------------------------

RT_SYMBOLS = {"alpha": alpha, "b": b, "sigma": sigma, "sigma_1": sigma_1, "lambda": lam}
RT_POINTS = [
    {alpha: sp.Rational(5, 2), b: sp.Rational(2, 3), sigma: sp.Rational(7, 4), sigma_1: sp.Rational(1, 3), lam: 3},
    {alpha: sp.Rational(11, 10), b: sp.Rational(5, 2), sigma: sp.Rational(1, 2), sigma_1: 2, lam: sp.Rational(3, 7)},
    {alpha: 4, b: sp.Rational(1, 9), sigma: 3, sigma_1: sp.Rational(6, 5), lam: sp.Rational(1, 2)},
]

_leaves = st.one_of(
    st.sampled_from(list(RT_SYMBOLS.values())),
    st.integers(-4, 6).map(sp.Integer),
    st.fractions(min_value=Fraction(-3), max_value=Fraction(3), max_denominator=7).map(
        lambda f: sp.Rational(f.numerator, f.denominator)
    ),
)


def _extend(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda t: t[0] + t[1]),
        pair.map(lambda t: t[0] - t[1]),
        pair.map(lambda t: t[0] * t[1]),
        pair.map(lambda t: t[0] / t[1] if t[1] != 0 else t[0]),
        st.tuples(children, st.integers(-3, 3)).map(lambda t: t[0] ** t[1] if t[0] != 0 else t[0]),
        st.tuples(children, st.sampled_from([sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(3, 2)])).map(
            lambda t: sp.Abs(t[0]) ** t[1]
        ),
        children.map(sp.exp),
        children.map(lambda c: sp.log(sp.Abs(c) + 1)),
        children.map(lambda c: sp.sqrt(sp.Abs(c))),
        children.map(sp.Abs),
        children.map(sp.erf),
        pair.map(lambda t: sp.Min(*t)),
        pair.map(lambda t: sp.Max(*t)),
    )


random_exprs = st.recursive(_leaves, _extend, max_leaves=6)


@settings(max_examples=100, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(random_exprs)
def test_round_trip_python_and_latex(expr):
    if expr.has(sp.zoo, sp.nan, sp.I) or not isinstance(expr, sp.Expr):
        return
    from_python = parse_formula(str(expr), RT_SYMBOLS)
    from_latex = parse_latex(sp.latex(expr), RT_SYMBOLS)
    for got in (from_python, from_latex):
        if got == expr:
            continue
        with mpmath.workdps(30):
            for point in RT_POINTS:
                w = _value(expr, point)
                if w is None:
                    continue
                a = _value(got, point)
                assert a is not None and abs(a - w) <= mpmath.mpf("1e-20") * max(1, abs(w)), (
                    f"{expr!s} / {sp.latex(expr)} parsed as {got}"
                )


# ---------------------------------------------------------------------------------------------------
# No evaluating call anywhere in the parsers' source
# ---------------------------------------------------------------------------------------------------


_EVALUATING = frozenset({"eval", "exec", "compile", "__import__", "sympify", "parse_expr", "S",
                         "globals", "locals", "vars"})
#: called as ``x.name(...)``: sympy's own parsers too (``sp.parse_latex``); ``re.compile`` is allowed
_EVALUATING_METHODS = (_EVALUATING - {"globals", "locals", "vars"}) | {"parse_latex"}


def test_parsers_source_has_no_evaluating_call():
    """Static guard beside the hostile inputs: no call in the parsers (or the number reading) can hand
    text to ``eval``/``sympify``/sympy's own parsers; ``re.compile`` and ``ast.parse`` are the only
    look-alikes and they are allowed by their module."""
    import ast
    import pathlib

    import rdpsym._numbers
    import rdpsym.specify.text as text

    files = sorted(pathlib.Path(text.__file__).parent.glob("*.py")) + [pathlib.Path(rdpsym._numbers.__file__)]
    assert len(files) >= 5
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("sympy.parsing"), (path, node.lineno)
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("sympy.parsing") for a in node.names), (path, node.lineno)
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name) and f.id == "getattr":  # only fixed attribute names (of ast nodes)
                attr = node.args[1] if len(node.args) >= 2 else None
                choices = (attr.body, attr.orelse) if isinstance(attr, ast.IfExp) else (attr,)
                assert all(isinstance(c, ast.Constant) for c in choices), (path, node.lineno)
            elif isinstance(f, ast.Name):
                assert f.id not in _EVALUATING, (path, node.lineno, f.id)
            elif isinstance(f, ast.Attribute) and f.attr in _EVALUATING_METHODS:
                owner = f.value.id if isinstance(f.value, ast.Name) else None
                assert owner == "re" and f.attr == "compile", (path, node.lineno, f.attr)
