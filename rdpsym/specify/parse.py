"""Safe parsers from formula text (Python-like or LaTeX) to sympy expressions.

Users paste formulas from papers and from other libraries; the text is **untrusted**. Nothing here
evaluates text: there is no ``eval``/``exec``, no ``sympify``/``parse_expr``/``S(str)``, no sympy LaTeX
parser. Both parsers *construct* sympy objects themselves from a whitelist, so no input can trigger an
import, an attribute access, a file access or code execution.

Public API
----------
``parse_formula(text, symbols, *, functions=None)``
    Python-like syntax (what people paste from numpy/math/sympy code).
``parse_latex(text, symbols, *, functions=None)``
    The LaTeX that papers write.
``parse(text, symbols, syntax="auto", *, functions=None)``
    ``"python"``, ``"latex"`` or ``"auto"`` (LaTeX if the text contains a backslash or ``{``).

``symbols`` maps each name allowed in the formula to a sympy expression (normally a ``Symbol``), e.g.
``{"alpha": alpha, "b": b, "lambda": b, "lam": b}``. A user symbol always wins over a constant of the
same name (``e``, ``E``, ``pi``). ``functions`` (optional) restricts the whitelisted functions to the
given names (see :data:`FUNCTION_NAMES`).

Every problem raises :class:`FormulaError` (a ``ValueError``) with ``.position``, the 0-based character
offset in the original text, and a message naming the problem, e.g.
``unknown name 'foo' at position 12; known: alpha, b``.

Resource limits (no timeouts needed: every construction is bounded)
-------------------------------------------------------------------
* text length <= :data:`MAX_LENGTH`; nesting depth (brackets, unary signs, exponents) <= :data:`MAX_DEPTH`;
* no number may exceed :data:`MAX_NUMBER_BITS` bits; a power of numbers is refused *before* it is
  computed if its result would be larger (``9**9**9`` fails fast); decimal exponents in literals are
  bounded (``1e999999``);
* numbers under non-integer powers (``sqrt(10**300+1)``) are factored by sympy, which is slow for big
  numbers: their sizes, summed over the formula, are bounded by :data:`MAX_RADICAND_BITS`;
* numeric arguments of ``factorial``/``gamma``/``binomial``/``beta``/``loggamma`` are bounded by
  :data:`MAX_COMBINATORIAL_ARG`; ``floor``/``ceiling`` of irrational numbers stay unevaluated.

Python-like grammar (``parse_formula``)
---------------------------------------
Parsed by ``ast.parse(text, mode="eval")`` and walked with a whitelist::

    expr    := expr ('+'|'-'|'*'|'/') expr | expr ('**'|'^') expr | ('-'|'+') expr
             | '(' expr ')' | NUMBER | NAME | CONSTANT | call
    call    := FUNC '(' expr (',' expr)* ')'          # positional arguments only
    FUNC    := name | MODULE '.' name                  # MODULE in np numpy math mp mpmath sp sympy
    CONSTANT:= pi | e | E | inf | oo | MODULE '.' (pi|e|E|inf|oo)

* ``^`` means power, as in papers. It is rewritten to ``**`` on the token level *before* parsing, so
  it also gets the precedence of a power (Python's ``^`` is XOR and binds looser than ``+``).
* Integers become ``sympy.Integer``; decimal literals become exact rationals (``0.1`` -> ``1/10``).
* ``e`` is Euler's number unless ``e`` is a user symbol; ``module.e`` is always Euler's number.
* A user symbol named like a Python keyword (``lambda``) may be used as a name.
* Greek letters are accepted as identifiers (``α`` looks up ``alpha``); ``−``, ``·``, ``×``, ``÷`` are
  read as ``-``, ``*``, ``*``, ``/``. Newlines and tabs are whitespace.
* Not allowed (error with position): comparisons, boolean operators, ``%``, ``//``, ``@``, bit
  operators, keyword arguments, ``*args``, lambdas, subscripts, slices, comprehensions, tuples, lists,
  dicts, sets, strings, f-strings, bytes, ``None``/``True``/``False``, complex literals, the walrus
  operator, conditional expressions, comments, backslashes, and any attribute access other than the
  dotted functions and constants above.
* Python's own parser limits chains of binary operators to roughly 1000 operands.

LaTeX grammar (``parse_latex``), a hand-written tokenizer and recursive-descent parser
---------------------------------------------------------------------------------------
::

    expr    := ['+'|'-'] term (('+'|'-') term)*
    term    := signed (('\\cdot'|'\\times'|'*'|'/'|'\\div') signed | postfix)*   # juxtaposition = product
    signed  := ('-'|'+') signed | postfix
    postfix := atom ('^' arg | '!')*
    atom    := NUMBER | name ['_' sub] | '(' expr ')' | '[' expr ']' | '{' expr '}' | '\\{' expr '\\}'
             | '|' expr '|' | '\\lvert' expr '\\rvert' | '\\lfloor' expr '\\rfloor' | '\\lceil' expr '\\rceil'
             | '\\frac' arg arg | '\\sqrt' ['[' expr ']'] arg | '\\binom' arg arg
             | func ['_' arg] ['^' arg] (delimited-args | signed)
             | '\\infty' | '\\pi' | 'e' | '\\mathrm{e}'
    arg     := '{' expr '}' | one digit | one letter | a command atom (\\frac12 = \\frac{1}{2})

* Products, explicit or implicit, and ``/`` are left-associative and share one precedence:
  ``a/bc`` = ``(a/b)*c``. Unary minus binds looser than a product: ``-ab`` = ``-(ab)``.
* A function without brackets takes the next *signed factor*: ``\\log x y`` = ``log(x)*y``,
  ``\\log 2\\alpha`` = ``log(2)*alpha``, ``\\log x^2`` = ``log(x**2)``. With brackets or a brace group,
  exponents apply to the result: ``\\log(x)^2`` = ``\\log^2 x`` = ``log(x)**2``. ``\\log_b x`` is the
  logarithm to base ``b``. Functions: ``\\log \\ln \\exp \\sin \\cos \\tan \\sinh \\cosh \\tanh \\min \\max
  \\erf \\erfc \\Gamma`` (unless ``Gamma`` is a user symbol), ``\\operatorname{...}``/``\\mathrm{...}``
  with a whitelisted name.
* Names: a run of letters is one name if it is a user symbol (``lam``), else single letters
  (``ab`` = ``a*b``). Greek commands are names (``\\lambda`` -> ``"lambda"``); ``\\varepsilon``,
  ``\\varphi``, ``\\vartheta``... fall back to ``epsilon``, ``phi``, ``theta``. A subscript joins the
  name: ``\\sigma_1`` and ``\\sigma_{1}`` -> ``"sigma_1"``, ``\\epsilon_{\\mathrm{RDP}}`` -> ``"epsilon_RDP"``.
* ``e^{x}`` is ``exp(x)`` unless ``e`` is a user symbol; ``\\mathrm{e}`` is always Euler's number.
* Ignored: ``\\left \\right \\big \\Big \\bigg \\Bigg`` (and their l/r/m forms), spacing ``\\, \\; \\: \\!
  \\quad \\qquad ~``, ``\\displaystyle``, ``\\textstyle`` and ``$``.
* Multi-digit scripts without braces (``x^12``, ``\\sigma_12``) are refused as ambiguous (LaTeX would
  read ``x^1 2``), as is ``x^-1``; write ``x^{12}``. ``x^a^b`` (a double superscript) is refused.
* Not supported (error with position): unknown commands (``\\input``, ``\\def``, ``\\csname``, ``\\sum``,
  ``\\int``...), ``=``/``<``/``\\le`` (comparisons), ``&``, ``\\\\``, primes, ``\\mid``.
"""

from __future__ import annotations

import ast
import keyword
import math
import numbers
import re
import unicodedata
from collections.abc import Callable, Mapping
from fractions import Fraction

import sympy as sp

__all__ = [
    "as_number",
    "FormulaError",
    "parse",
    "parse_formula",
    "parse_latex",
    "FUNCTION_NAMES",
    "MAX_LENGTH",
    "MAX_DEPTH",
    "MAX_NUMBER_BITS",
    "MAX_POWER_BITS",
    "MAX_RADICAND_BITS",
    "MAX_COMBINATORIAL_ARG",
]

#: Longest accepted formula, in characters.
MAX_LENGTH = 10_000
#: Deepest accepted nesting of brackets, unary signs, exponents and groups.
MAX_DEPTH = 100
#: No number in a result may have more bits than this (about 4200 decimal digits, so that
#: ``str()`` of every result stays within Python's integer-to-string limit).
MAX_NUMBER_BITS = 14_000
#: A power of numbers may not have more bits than this.
MAX_POWER_BITS = MAX_NUMBER_BITS
#: Total bits of the numbers raised to non-integer powers in one formula (sympy factors them).
MAX_RADICAND_BITS = 2048
#: Largest numeric argument of factorial, gamma, binomial, beta and loggamma.
MAX_COMBINATORIAL_ARG = 1_000
#: Largest decimal exponent in a literal such as ``1e-300``.
MAX_DECIMAL_EXPONENT = 400
#: Most arguments of min/max.
MAX_ARGS = 100


class FormulaError(ValueError):
    """A formula that cannot be parsed safely.

    Attributes
    ----------
    problem: what is wrong, without the position.
    position: 0-based character offset in the original text.
    """

    def __init__(self, problem: str, position: int, hint: str = ""):
        self.problem = problem
        self.position = position
        super().__init__(f"{problem} at position {position}{hint}")


# ---------------------------------------------------------------------------------------------------
# Shared: names, constants, functions and guarded construction
# ---------------------------------------------------------------------------------------------------

GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ϑ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda",
    "μ": "mu", "µ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "ϱ": "rho", "σ": "sigma",
    "ς": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi",
    "ω": "omega", "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi",
    "Σ": "Sigma", "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}
#: Greek letter commands of LaTeX (``\varepsilon`` etc. fall back to the plain name).
GREEK_COMMANDS = frozenset(GREEK.values()) | {
    "varepsilon", "vartheta", "varphi", "varrho", "varsigma", "varpi", "digamma", "varkappa",
}
#: Single characters accepted in both syntaxes with the same length (offsets stay valid).
OPERATOR_CHARS = {"−": "-", "–": "-", "·": "*", "⋅": "*", "×": "*", "÷": "/", "∗": "*"}

_CONSTANTS: dict[str, sp.Expr] = {
    "pi": sp.pi, "e": sp.E, "E": sp.E, "inf": sp.oo, "oo": sp.oo, "infty": sp.oo, "infinity": sp.oo,
}
_MODULES = frozenset({"np", "numpy", "math", "mp", "mpmath", "sp", "sympy"})
_MODULE_CONSTANTS = frozenset({"pi", "e", "E", "inf", "oo"})


def _min(*a):
    return sp.Min(*a)


def _max(*a):
    return sp.Max(*a)


# name -> (min args, max args, canonical name, builder); builders receive sympy expressions.
_FUNCTIONS: dict[str, tuple[int, int, str, Callable[..., sp.Expr]]] = {}


def _register(names, lo, hi, canonical, builder):
    for n in names:
        _FUNCTIONS[n] = (lo, hi, canonical, builder)


_register(["exp"], 1, 1, "exp", None)  # built by the guarded _Builder.exp
_register(["log"], 1, 2, "log", None)
_register(["ln"], 1, 1, "log", None)
_register(["log2"], 1, 1, "log2", None)
_register(["log10"], 1, 1, "log10", None)
_register(["log1p"], 1, 1, "log1p", None)
_register(["expm1"], 1, 1, "expm1", None)
_register(["sqrt"], 1, 1, "sqrt", None)
_register(["pow", "power"], 2, 2, "pow", None)
_register(["abs", "Abs", "fabs"], 1, 1, "Abs", sp.Abs)
_register(["min", "Min", "minimum"], 1, MAX_ARGS, "Min", _min)
_register(["max", "Max", "maximum"], 1, MAX_ARGS, "Max", _max)
_register(["sin"], 1, 1, "sin", sp.sin)
_register(["cos"], 1, 1, "cos", sp.cos)
_register(["tan"], 1, 1, "tan", sp.tan)
_register(["sinh"], 1, 1, "sinh", sp.sinh)
_register(["cosh"], 1, 1, "cosh", sp.cosh)
_register(["tanh"], 1, 1, "tanh", sp.tanh)
_register(["erf"], 1, 1, "erf", sp.erf)
_register(["erfc"], 1, 1, "erfc", sp.erfc)
_register(["gamma", "Gamma"], 1, 1, "gamma", sp.gamma)
_register(["lgamma", "loggamma", "gammaln"], 1, 1, "loggamma", sp.loggamma)
_register(["beta"], 2, 2, "beta", sp.beta)
_register(["binomial", "comb", "binom"], 2, 2, "binomial", sp.binomial)
_register(["factorial"], 1, 1, "factorial", sp.factorial)
_register(["floor"], 1, 1, "floor", sp.floor)
_register(["ceiling", "ceil"], 1, 1, "ceiling", sp.ceiling)
_register(["sign"], 1, 1, "sign", sp.sign)

#: Every function name the parsers accept (aliases included).
FUNCTION_NAMES = frozenset(_FUNCTIONS)
_COMBINATORIAL = frozenset({"gamma", "loggamma", "beta", "binomial", "factorial"})


def _describe(ch: str) -> str:
    return f"{ch!r} (U+{ord(ch):04X})"


def _check_text(text, symbols, functions) -> frozenset[str]:
    if not isinstance(text, str):
        raise TypeError(f"formula must be a str, got {type(text).__name__}")
    if not isinstance(symbols, Mapping):
        raise TypeError("symbols must be a mapping from names to sympy expressions")
    for k, v in symbols.items():
        if not isinstance(k, str) or not isinstance(v, sp.Basic):
            raise TypeError(f"symbols: {k!r} must map a str to a sympy expression, got {type(v).__name__}")
    if functions is None:
        allowed = FUNCTION_NAMES
    else:
        unknown = set(functions) - FUNCTION_NAMES
        if unknown:
            raise ValueError(f"functions: unknown {sorted(unknown)}; known: {', '.join(sorted(FUNCTION_NAMES))}")
        allowed = frozenset(functions)
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"formula too long (max {MAX_LENGTH} chars)", MAX_LENGTH)
    if not text.strip():
        raise FormulaError("empty formula", 0)
    return allowed


def _bits(r: sp.Rational) -> int:
    return max(abs(int(r.p)).bit_length(), int(r.q).bit_length())


class _Builder:
    """Constructs sympy objects with guards against huge numbers; shared by both parsers."""

    def __init__(self, symbols: Mapping[str, sp.Basic], functions: frozenset[str]):
        self.symbols = symbols
        self.functions = functions
        self.radicand_bits = 0

    # -- names ---------------------------------------------------------------------------------------
    def known(self) -> str:
        names = sorted(self.symbols)
        shown = ", ".join(names[:30]) + (", ..." if len(names) > 30 else "")
        return f"; known: {shown or '(no symbols)'}"

    def lookup(self, name: str, pos: int, alternatives: tuple[str, ...] = ()) -> sp.Expr | None:
        """A user symbol or a constant, or None."""
        for n in (name, *alternatives):
            if n in self.symbols:
                return self.symbols[n]
        for n in (name, *alternatives):
            if n in _CONSTANTS:
                return _CONSTANTS[n]
        return None

    def unknown(self, name: str, pos: int) -> FormulaError:
        if name in _FUNCTIONS:
            return FormulaError(f"function '{name}' must be called with arguments", pos)
        return FormulaError(f"unknown name '{name}'", pos, self.known())

    # -- guarded arithmetic --------------------------------------------------------------------------
    def guard(self, fn, pos, *args):
        try:
            result = fn(*args)
        except FormulaError:
            raise
        except RecursionError:
            raise FormulaError("nesting too deep", pos) from None
        except Exception as exc:  # sympy raises many kinds; none may escape
            raise FormulaError(f"cannot build the expression ({type(exc).__name__})", pos) from None
        self.check_size(result, pos)
        return result

    @staticmethod
    def check_size(result: sp.Basic, pos: int) -> None:
        """Refuse numbers beyond MAX_NUMBER_BITS; every operation checks its own result, so chains of
        products cannot grow numbers past the limit (each operand was checked before)."""
        if isinstance(result, sp.Mul):
            coeff = result.as_coeff_Mul()[0]
        elif isinstance(result, sp.Add):
            coeff = result.as_coeff_Add()[0]
        else:
            coeff = result
        if isinstance(coeff, sp.Rational) and _bits(coeff) > MAX_NUMBER_BITS:
            raise FormulaError(f"number too large (max {MAX_NUMBER_BITS} bits)", pos)

    def check_power(self, base: sp.Expr, exponent: sp.Expr, pos: int) -> None:
        if not isinstance(exponent, sp.Rational):
            return
        rationals = [r for r in base.atoms(sp.Rational) if r not in (0, 1, -1)]
        if not rationals:
            return
        size = abs(float(exponent)) * max(max(math.log2(abs(int(r.p))), math.log2(int(r.q))) for r in rationals)
        if size > MAX_POWER_BITS:
            # size may be inf (an exponent beyond the float range): format it, never int() it
            raise FormulaError(f"power too large (result would have about {size:.3g} bits, max {MAX_POWER_BITS})", pos)
        if not exponent.is_Integer:
            self.radicand_bits += sum(_bits(r) for r in rationals)
            if self.radicand_bits > MAX_RADICAND_BITS:
                raise FormulaError(f"numbers under roots too large (max {MAX_RADICAND_BITS} bits in total)", pos)

    def power(self, base: sp.Expr, exponent: sp.Expr, pos: int) -> sp.Expr:
        if base == sp.E:
            return self.exp(exponent, pos)
        self.check_power(base, exponent, pos)
        return self.guard(sp.Pow, pos, base, exponent)

    def exp(self, arg: sp.Expr, pos: int) -> sp.Expr:
        # sympy rewrites exp(c*log(a) + ...) as a**c * exp(...): guard that power.
        for term in sp.Add.make_args(arg):
            coeff, rest = term.as_coeff_Mul()
            if isinstance(rest, sp.log):
                self.check_power(rest.args[0], coeff, pos)
        return self.guard(sp.exp, pos, arg)

    def add(self, terms: list[sp.Expr], pos: int) -> sp.Expr:
        return self.guard(lambda: sp.Add(*terms), pos)

    def mul(self, factors: list[sp.Expr], pos: int) -> sp.Expr:
        return self.guard(lambda: sp.Mul(*factors), pos)

    def div(self, a: sp.Expr, b: sp.Expr, pos: int) -> sp.Expr:
        return self.guard(lambda: a / b, pos)

    def neg(self, a: sp.Expr, pos: int) -> sp.Expr:
        return self.guard(lambda: -a, pos)

    def decimal(self, text: str, pos: int) -> sp.Rational:
        """An exact rational from a decimal literal such as ``0.1``, ``1.5e-3``, ``1_000.``."""
        m = re.fullmatch(r"(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?", text.replace("_", ""))
        if not m or not (m.group(1) or m.group(2)):
            raise FormulaError(f"malformed number '{text}'", pos)
        whole, frac, ex = m.group(1) or "0", m.group(2) or "", int(m.group(3) or 0)
        if abs(ex) > MAX_DECIMAL_EXPONENT or len(whole) + len(frac) > 4000:
            raise FormulaError(f"number '{text[:30]}' too large (max exponent {MAX_DECIMAL_EXPONENT})", pos)
        value = sp.Rational(int(whole + frac), 10 ** len(frac)) * sp.Rational(10) ** ex
        self.check_size(value, pos)
        return value

    # -- functions -----------------------------------------------------------------------------------
    def allowed(self, name: str) -> bool:
        return name in _FUNCTIONS and (name in self.functions or _FUNCTIONS[name][2] in self.functions)

    def call(self, name: str, args: list[sp.Expr], pos: int, shown: str | None = None) -> sp.Expr:
        shown = shown or name
        if not self.allowed(name):
            allowed = ", ".join(sorted(self.functions))
            raise FormulaError(f"unknown function '{shown}'", pos, f"; known: {allowed}")
        lo, hi, canonical, builder = _FUNCTIONS[name]
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise FormulaError(f"function '{shown}' takes {want} argument(s), got {len(args)}", pos)
        if canonical in _COMBINATORIAL:
            for a in args:
                if isinstance(a, sp.Rational) and abs(a) > MAX_COMBINATORIAL_ARG:
                    raise FormulaError(f"argument of '{shown}' too large (max {MAX_COMBINATORIAL_ARG})", pos)
        if canonical in ("floor", "ceiling", "sign") and args[0].is_number and not isinstance(args[0], sp.Rational):
            return self.guard(lambda: builder(args[0], evaluate=False), pos)
        x = args[0]
        if canonical == "exp":
            return self.exp(x, pos)
        if canonical == "log":
            if len(args) == 2:
                return self.div(self.guard(sp.log, pos, x), self.guard(sp.log, pos, args[1]), pos)
            return self.guard(sp.log, pos, x)
        if canonical == "log2":
            return self.div(self.guard(sp.log, pos, x), sp.log(2), pos)
        if canonical == "log10":
            return self.div(self.guard(sp.log, pos, x), sp.log(10), pos)
        if canonical == "log1p":
            return self.guard(sp.log, pos, self.add([sp.Integer(1), x], pos))
        if canonical == "expm1":
            return self.add([self.exp(x, pos), sp.Integer(-1)], pos)
        if canonical == "sqrt":
            return self.power(x, sp.Rational(1, 2), pos)
        if canonical == "pow":
            return self.power(x, args[1], pos)
        return self.guard(builder, pos, *args)


# ---------------------------------------------------------------------------------------------------
# Python-like syntax
# ---------------------------------------------------------------------------------------------------

_PY_FORBIDDEN = {
    "#": "comments are not allowed",
    "\\": "backslashes are not allowed in Python syntax (LaTeX goes to parse_latex)",
    "'": "strings are not allowed",
    '"': "strings are not allowed",
    ";": "statements are not allowed",
}
_NODE_NAMES = {
    ast.Compare: "comparisons", ast.BoolOp: "boolean operators", ast.Lambda: "lambda expressions",
    ast.Subscript: "subscripts", ast.Slice: "slices", ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions", ast.DictComp: "comprehensions", ast.GeneratorExp: "generator expressions",
    ast.IfExp: "conditional expressions", ast.NamedExpr: "assignment expressions", ast.JoinedStr: "f-strings",
    ast.FormattedValue: "f-strings", ast.Starred: "starred expressions", ast.Tuple: "tuples", ast.List: "lists",
    ast.Dict: "dicts", ast.Set: "sets", ast.Await: "await expressions", ast.Yield: "yield expressions",
    ast.YieldFrom: "yield expressions",
}
_OP_SYMBOLS = {
    ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Invert: "~", ast.Not: "not",
}


_KEYWORD_PREFIX = "__rdpsym_keyword_"


def _prepare_python(text: str, symbols: Mapping[str, sp.Basic]) -> tuple[str, list[int]]:
    """Check characters; rewrite to one ASCII-operator line; map each new char to its original offset."""
    out: list[str] = []
    where: list[int] = []
    stack: list[tuple[str, int]] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for i, ch in enumerate(text):
        if ch in _PY_FORBIDDEN:
            raise FormulaError(_PY_FORBIDDEN[ch], i)
        if ch in "\n\r\t":
            ch = " "
        elif ch in OPERATOR_CHARS:
            ch = OPERATOR_CHARS[ch]
        elif not ch.isascii() and ch not in GREEK:
            raise FormulaError(f"unsupported character {_describe(ch)}", i)
        elif not ch.isprintable():
            raise FormulaError(f"control character {_describe(ch)}", i)
        if ch in "([{":
            stack.append((ch, i))
            if len(stack) > MAX_DEPTH:
                raise FormulaError(f"nesting too deep (max {MAX_DEPTH})", i)
        elif ch in ")]}":
            if not stack or stack[-1][0] != pairs[ch]:
                raise FormulaError(f"unbalanced '{ch}'", i)
            stack.pop()
        if ch == "^":
            out.append("**")
            where.extend((i, i))
        else:
            out.append(ch)
            where.append(i)
    if stack:
        ch, i = stack[-1]
        raise FormulaError(f"unbalanced '{ch}' (never closed)", i)
    line = "".join(out)
    # Keywords that are user symbols ("lambda" in plain-text formulas) become plain identifiers.
    keywords = [k for k in keyword.kwlist if k in symbols]
    if keywords:
        pieces, new_where, last = [], [], 0
        for m in re.finditer(r"(?<![\w.])(" + "|".join(keywords) + r")(?!\w)", line):
            pieces.append(line[last : m.start()])
            new_where.extend(where[last : m.start()])
            pieces.append(_KEYWORD_PREFIX + m.group(1))
            new_where.extend([where[m.start()]] * len(_KEYWORD_PREFIX) + where[m.start() : m.end()])
            last = m.end()
        pieces.append(line[last:])
        new_where.extend(where[last:])
        line, where = "".join(pieces), new_where
    return line, where


class _PythonParser:
    def __init__(self, text: str, builder: _Builder):
        self.original = text
        self.line, self.where = _prepare_python(text, builder.symbols)
        self.encoded = self.line.encode("utf-8")
        self.b = builder

    def pos_of_char(self, idx: int) -> int:
        if idx >= len(self.where):
            return len(self.original)
        return self.where[max(idx, 0)]

    def pos(self, node: ast.AST | None, end: bool = False) -> int:
        if node is None:
            return 0
        col = getattr(node, "end_col_offset" if end else "col_offset", None)
        if col is None:
            return 0
        return self.pos_of_char(len(self.encoded[:col].decode("utf-8", errors="ignore")))

    def op_pos(self, node: ast.BinOp) -> int:
        """Position of the operator between the operands of a binary operation."""
        start = len(self.encoded[: node.left.end_col_offset].decode("utf-8", errors="ignore"))
        stop = len(self.encoded[: node.right.col_offset].decode("utf-8", errors="ignore"))
        for k in range(start, stop):
            if self.line[k] not in " ()":
                return self.pos_of_char(k)
        return self.pos_of_char(start)

    def parse(self) -> sp.Expr:
        try:
            tree = ast.parse(self.line, mode="eval")
        except SyntaxError as exc:
            # Python reports offset 0 when the formula ends too early
            pos = self.pos_of_char(exc.offset - 1) if exc.offset and exc.offset > 0 else len(self.original)
            raise FormulaError(f"syntax error: {exc.msg}", min(pos, len(self.original))) from None
        except (RecursionError, MemoryError):
            raise FormulaError("nesting too deep (formula too complex)", 0) from None
        except (ValueError, OverflowError) as exc:
            raise FormulaError(f"syntax error: {type(exc).__name__}", 0) from None
        return self.visit(tree.body, 0)

    def visit(self, node: ast.AST, depth: int) -> sp.Expr:
        if depth > MAX_DEPTH:
            raise FormulaError(f"nesting too deep (max {MAX_DEPTH})", self.pos(node))
        b = self.b
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node.id, self.pos(node))
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return b.neg(self.visit(node.operand, depth + 1), self.pos(node))
            if isinstance(node.op, ast.UAdd):
                return self.visit(node.operand, depth + 1)
            raise FormulaError(f"operator '{_OP_SYMBOLS.get(type(node.op), '?')}' is not allowed", self.pos(node))
        if isinstance(node, ast.BinOp):
            return self.binop(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        what = _NODE_NAMES.get(type(node), f"'{type(node).__name__}' expressions")
        raise FormulaError(f"{what} are not allowed", self.pos(node))

    def constant(self, node: ast.Constant) -> sp.Expr:
        v, p = node.value, self.pos(node)
        if isinstance(v, bool) or v is None or v is Ellipsis:
            raise FormulaError(f"'{v!r}' is not allowed", p)
        if isinstance(v, int):
            if v.bit_length() > MAX_NUMBER_BITS:
                raise FormulaError(f"number too large (max {MAX_NUMBER_BITS} bits)", p)
            return sp.Integer(v)
        if isinstance(v, float):
            start = len(self.encoded[: node.col_offset].decode("utf-8", errors="ignore"))
            stop = len(self.encoded[: node.end_col_offset].decode("utf-8", errors="ignore"))
            return self.b.decimal(self.line[start:stop], p)
        if isinstance(v, complex):
            raise FormulaError("complex numbers are not allowed", p)
        if isinstance(v, (str, bytes)):
            raise FormulaError("strings are not allowed", p)
        raise FormulaError(f"constant of type {type(v).__name__} is not allowed", p)

    def name(self, ident: str, pos: int) -> sp.Expr:
        alternatives: tuple[str, ...] = ()
        if ident.startswith(_KEYWORD_PREFIX):
            ident = ident[len(_KEYWORD_PREFIX) :]
        elif not ident.isascii():
            alternatives = ("".join(GREEK.get(c, c) for c in ident),)
            # NFKC may have changed the identifier; the original spelling is in the text.
        value = self.b.lookup(ident, pos, alternatives)
        if value is None:
            raise self.b.unknown(ident, pos)
        return value

    def attribute(self, node: ast.Attribute) -> sp.Expr:
        p = self.pos(node)
        if isinstance(node.value, ast.Name) and node.value.id in _MODULES:
            if node.attr in _MODULE_CONSTANTS:
                return _CONSTANTS[node.attr]
            if node.attr in _FUNCTIONS:
                raise FormulaError(f"function '{node.value.id}.{node.attr}' must be called with arguments", p)
        raise FormulaError("attribute access is not allowed", self.pos(node, end=True) - len(node.attr) - 1)

    def binop(self, node: ast.BinOp, depth: int) -> sp.Expr:
        b = self.b
        op = type(node.op)
        if op in (ast.Add, ast.Sub):
            # flatten the left spine: a + b - c + d
            rights: list[tuple[type, ast.AST]] = []
            cur: ast.AST = node
            while isinstance(cur, ast.BinOp) and type(cur.op) in (ast.Add, ast.Sub):
                rights.append((type(cur.op), cur.right))
                cur = cur.left
            terms = [self.visit(cur, depth + 1)]
            for o, r in reversed(rights):
                t = self.visit(r, depth + 1)
                terms.append(t if o is ast.Add else b.neg(t, self.pos(r)))
            return b.add(terms, self.pos(node))
        if op in (ast.Mult, ast.Div):
            rights = []
            cur = node
            while isinstance(cur, ast.BinOp) and type(cur.op) in (ast.Mult, ast.Div):
                rights.append((type(cur.op), cur.right))
                cur = cur.left
            acc = self.visit(cur, depth + 1)
            for o, r in reversed(rights):
                f = self.visit(r, depth + 1)
                acc = b.mul([acc, f], self.pos(r)) if o is ast.Mult else b.div(acc, f, self.pos(r))
            return acc
        if op is ast.Pow:
            base = self.visit(node.left, depth + 1)
            exponent = self.visit(node.right, depth + 1)
            return b.power(base, exponent, self.op_pos(node))
        raise FormulaError(f"operator '{_OP_SYMBOLS.get(op, '?')}' is not allowed", self.op_pos(node))

    def call(self, node: ast.Call, depth: int) -> sp.Expr:
        f = node.func
        if isinstance(f, ast.Name):
            name, shown = f.id, f.id
            if name in self.b.symbols and name not in _FUNCTIONS:
                raise FormulaError(f"'{name}' is a symbol, not a function", self.pos(node))
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in _MODULES:
            name, shown = f.attr, f"{f.value.id}.{f.attr}"
        elif isinstance(f, ast.Attribute):
            raise FormulaError("attribute access is not allowed", self.pos(f, end=True) - len(f.attr) - 1)
        else:
            raise FormulaError("only named functions can be called", self.pos(node))
        for kw in node.keywords:
            raise FormulaError("keyword arguments are not allowed", self.pos(kw) if hasattr(kw, "col_offset") else self.pos(node))
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise FormulaError("starred arguments are not allowed", self.pos(a))
        if not self.b.allowed(name):
            self.b.call(name, [], self.pos(node), shown)  # raises "unknown function" 
        args = [self.visit(a, depth + 1) for a in node.args]
        return self.b.call(name, args, self.pos(node), shown)


def parse_formula(
    text: str, symbols: Mapping[str, sp.Basic], *, functions: set[str] | None = None
) -> sp.Expr:
    """Parse a Python-like formula (``1/(alpha-1)*np.log(...)``) into a sympy expression.

    See the module docstring for the grammar. Raises :class:`FormulaError` with a position.
    """
    allowed = _check_text(text, symbols, functions)
    try:
        return _PythonParser(text, _Builder(symbols, allowed)).parse()
    except RecursionError:  # defensive: the depth limits should make this unreachable
        raise FormulaError("nesting too deep", 0) from None


# ---------------------------------------------------------------------------------------------------
# LaTeX
# ---------------------------------------------------------------------------------------------------

_IGNORED_COMMANDS = frozenset({
    ",", ";", ":", "!", " ", ">", "quad", "qquad", "displaystyle", "textstyle", "scriptstyle",
    "left", "right", "middle", "big", "Big", "bigg", "Bigg", "bigl", "Bigl", "biggl", "Biggl",
    "bigr", "Bigr", "biggr", "Biggr", "bigm", "Bigm", "biggm", "Biggm", "limits", "nolimits",
})
_LATEX_FUNCTIONS = {
    "log": "log", "ln": "ln", "exp": "exp", "sin": "sin", "cos": "cos", "tan": "tan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "min": "min", "max": "max", "erf": "erf", "erfc": "erfc",
}
_TEXT_COMMANDS = frozenset({"operatorname", "mathrm", "text", "textrm", "mathit", "rm", "textit", "mathsf"})
_FRAC = frozenset({"frac", "dfrac", "tfrac", "cfrac"})
_BINOM = frozenset({"binom", "dbinom", "tbinom"})
_PRODUCT_COMMANDS = frozenset({"cdot", "times", "ast"})
_OPENERS = {"(": ")", "[": "]", "{": "}", "\\{": "\\}", "|": "|", "\\lvert": "\\rvert",
            "\\vert": "\\vert", "\\lfloor": "\\rfloor", "\\lceil": "\\rceil"}
_TEXT_NAMES = {"B": "beta", "Beta": "beta", "sgn": "sign", "Gamma": "gamma", "lgamma": "loggamma"}


class _Tok:
    __slots__ = ("kind", "value", "pos", "end")

    def __init__(self, kind: str, value: str, pos: int, end: int):
        self.kind, self.value, self.pos, self.end = kind, value, pos, end

    def is_(self, kind: str, value: str | None = None) -> bool:
        return self.kind == kind and (value is None or self.value == value)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"{self.kind}:{self.value}@{self.pos}"

    def shown(self) -> str:
        if self.kind == "cmd":
            return "\\" + self.value
        if self.kind == "eof":
            return "end of formula"
        return self.value


def _tokenize_latex(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    braces: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\n\r~$":
            i += 1
            continue
        if ch == "\\":
            if i + 1 >= n:
                raise FormulaError("dangling backslash", i)
            j = i + 1
            if text[j].isascii() and text[j].isalpha():
                while j < n and text[j].isascii() and text[j].isalpha():
                    j += 1
            else:
                j += 1
            name = text[i + 1 : j]
            if not name.isascii() or not name.isprintable() and name not in "\n\t\r":
                raise FormulaError(f"unsupported character {_describe(name[0])}", i + 1)
            if name in "\n\t\r":
                name = " "
            if name not in _IGNORED_COMMANDS:
                toks.append(_Tok("cmd", name, i, j))
            i = j
            continue
        if ch.isdigit() and ch.isascii() or (ch == "." and i + 1 < n and text[i + 1].isdigit() and text[i + 1].isascii()):
            m = re.compile(r"[0-9]*(?:\.[0-9]+)?").match(text, i)
            j = m.end() if m.end() > i else i + 1
            toks.append(_Tok("num", text[i:j], i, j))
            i = j
            continue
        if ch.isascii() and ch.isalpha():
            toks.append(_Tok("letter", ch, i, i + 1))
            i += 1
            continue
        if ch in GREEK:
            toks.append(_Tok("cmd", GREEK[ch], i, i + 1))
            i += 1
            continue
        if ch == "∞":
            toks.append(_Tok("cmd", "infty", i, i + 1))
            i += 1
            continue
        if ch in OPERATOR_CHARS:
            ch = OPERATOR_CHARS[ch]
        if ch.isascii() and ch.isprintable():
            if ch == "{":
                braces.append(i)
                if len(braces) > MAX_DEPTH:
                    raise FormulaError(f"nesting too deep (max {MAX_DEPTH})", i)
            elif ch == "}":
                if not braces:
                    raise FormulaError("unbalanced brace '}'", i)
                braces.pop()
            toks.append(_Tok("sym", ch, i, i + 1))
            i += 1
            continue
        raise FormulaError(f"unsupported character {_describe(ch)}", i)
    if braces:
        raise FormulaError("unbalanced brace '{' (never closed)", braces[-1])
    toks.append(_Tok("eof", "", n, n))
    return toks


class _LatexParser:
    def __init__(self, text: str, builder: _Builder):
        self.text = text
        self.toks = _tokenize_latex(text)
        self.i = 0
        self.b = builder
        self.abs_depth = 0

    # -- token helpers -------------------------------------------------------------------------------
    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def advance(self) -> _Tok:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, kind: str, value: str | None = None) -> bool:
        return self.tok.is_(kind, value)

    def opener_key(self, t: _Tok) -> str | None:
        key = ("\\" + t.value) if t.kind == "cmd" else t.value if t.kind == "sym" else None
        return key if key in _OPENERS else None

    def expect_closer(self, closer: str, opener: _Tok) -> None:
        t = self.tok
        key = ("\\" + t.value) if t.kind == "cmd" else t.value
        if t.kind in ("cmd", "sym") and key == closer:
            self.advance()
            return
        raise FormulaError(
            f"expected '{closer}' to close '{opener.shown()}' (opened at position {opener.pos}), "
            f"found '{t.shown()}'", t.pos)

    def starts_atom(self, t: _Tok) -> bool:
        if t.kind in ("num", "letter"):
            return True
        if t.kind == "sym":
            return t.value in "([{" or (t.value == "|" and self.abs_depth == 0)
        if t.kind == "cmd":
            if t.value in _PRODUCT_COMMANDS or t.value in ("div", "}", "rvert", "rfloor", "rceil"):
                return False
            if t.value == "vert":
                return self.abs_depth == 0
            return True  # unknown commands are reported by atom()
        return False

    def depth_check(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise FormulaError(f"nesting too deep (max {MAX_DEPTH})", self.tok.pos)

    # -- grammar -------------------------------------------------------------------------------------
    def parse(self) -> sp.Expr:
        e = self.expr(0)
        if not self.at("eof"):
            t = self.tok
            if t.kind == "sym" and t.value in "=<>":
                raise FormulaError("comparisons and equations are not allowed", t.pos)
            if t.kind == "sym" and t.value in ")]}|":
                raise FormulaError(f"unbalanced '{t.value}'", t.pos)
            raise FormulaError(f"unexpected '{t.shown()}'", t.pos)
        return e

    def expr(self, depth: int) -> sp.Expr:
        self.depth_check(depth)
        start = self.tok.pos
        terms = []
        sign_tok = None
        if self.at("sym", "+") or self.at("sym", "-"):
            sign_tok = self.advance()
        t = self.term(depth)
        terms.append(self.b.neg(t, sign_tok.pos) if sign_tok and sign_tok.value == "-" else t)
        while self.at("sym", "+") or self.at("sym", "-"):
            op = self.advance()
            t = self.term(depth)
            terms.append(self.b.neg(t, op.pos) if op.value == "-" else t)
        return terms[0] if len(terms) == 1 else self.b.add(terms, start)

    def term(self, depth: int) -> sp.Expr:
        acc = self.signed(depth)
        while True:
            t = self.tok
            if t.is_("sym", "*") or (t.kind == "cmd" and t.value in _PRODUCT_COMMANDS):
                self.advance()
                acc = self.b.mul([acc, self.signed(depth)], t.pos)
            elif t.is_("sym", "/") or t.is_("cmd", "div"):
                self.advance()
                acc = self.b.div(acc, self.signed(depth), t.pos)
            elif self.starts_atom(t):
                acc = self.b.mul([acc, self.postfix(depth)], t.pos)
            else:
                return acc

    def signed(self, depth: int) -> sp.Expr:
        t = self.tok
        if t.is_("sym", "-"):
            self.advance()
            return self.b.neg(self.signed(depth + 1), t.pos)
        if t.is_("sym", "+"):
            self.advance()
            return self.signed(depth + 1)
        self.depth_check(depth)
        return self.postfix(depth)

    def postfix(self, depth: int) -> sp.Expr:
        base = self.atom(depth)
        return self.scripts(base, depth)

    def scripts(self, base: sp.Expr, depth: int) -> sp.Expr:
        had_power = False
        while True:
            t = self.tok
            if t.is_("sym", "^"):
                if had_power:
                    raise FormulaError("double superscript (write x^{a^{b}} or {x^a}^b)", t.pos)
                self.advance()
                exponent = self.arg(depth + 1, "superscript")
                base = self.b.power(base, exponent, t.pos)
                had_power = True
            elif t.is_("sym", "!"):
                self.advance()
                base = self.b.call("factorial", [base], t.pos)
                had_power = False
            elif t.is_("sym", "_"):
                raise FormulaError("subscript must follow a name directly", t.pos)
            elif t.is_("sym", "'"):
                raise FormulaError("primes (derivatives) are not supported", t.pos)
            else:
                return base

    def arg(self, depth: int, what: str) -> sp.Expr:
        """A macro argument: a brace group, one digit, one letter or one command atom."""
        self.depth_check(depth)
        t = self.tok
        if t.is_("sym", "{"):
            return self.group(depth + 1)
        if t.kind == "num":
            if what in ("superscript", "subscript") and len(t.value) > 1:
                raise FormulaError(f"ambiguous {what} '{t.value}' (write {{{t.value}}})", t.pos)
            self.advance()
            if len(t.value) > 1:  # \frac12: LaTeX takes one digit; put the rest back
                rest = _Tok("num", t.value[1:], t.pos + 1, t.end)
                self.i -= 1
                self.toks[self.i] = rest
                return sp.Integer(int(t.value[0])) if t.value[0] != "." else self.error_number(t)
            return self.b.decimal(t.value, t.pos)
        if t.kind == "letter":
            nxt = self.toks[self.i + 1]
            if what in ("superscript", "subscript") and nxt.kind == "letter" and nxt.pos == t.end:
                raise FormulaError(f"ambiguous {what} (write {{...}} around more than one letter)", t.pos)
            self.advance()
            v = self.b.lookup(t.value, t.pos)
            if v is None:
                raise self.b.unknown(t.value, t.pos)
            return v
        if t.kind == "cmd" and self.starts_atom(t) and t.value not in _LATEX_FUNCTIONS:
            return self.atom(depth + 1)
        if t.is_("sym", "-") or t.is_("sym", "+"):
            raise FormulaError(f"signed {what} needs braces (write ^{{-1}})", t.pos)
        raise FormulaError(f"expected an argument for {what}, found '{t.shown()}'", t.pos)

    def error_number(self, t: _Tok):
        raise FormulaError(f"malformed number '{t.value}'", t.pos)

    def group(self, depth: int) -> sp.Expr:
        opener = self.advance()
        if self.at("sym", "}"):
            raise FormulaError("empty group", opener.pos)
        saved, self.abs_depth = self.abs_depth, 0
        e = self.expr(depth)
        self.abs_depth = saved
        self.expect_closer("}", opener)
        return e

    def delimited(self, depth: int, opener: _Tok, closer: str, allow_commas: bool = False) -> list[sp.Expr]:
        saved = self.abs_depth
        self.abs_depth = saved + 1 if closer in ("|", "\\vert") else 0
        items = [self.expr(depth + 1)]
        while allow_commas and self.at("sym", ","):
            self.advance()
            items.append(self.expr(depth + 1))
        self.abs_depth = saved
        if self.at("sym", ",") and not allow_commas:
            raise FormulaError("unexpected ',' (commas separate function arguments only)", self.tok.pos)
        self.expect_closer(closer, opener)
        return items

    def atom(self, depth: int) -> sp.Expr:
        self.depth_check(depth)
        t = self.tok
        b = self.b
        if t.kind == "num":
            self.advance()
            return b.decimal(t.value, t.pos)
        if t.kind == "letter":
            return self.letters(depth)
        key = self.opener_key(t)
        if key is not None:
            self.advance()
            closer = _OPENERS[key]
            if key == "{":
                self.i -= 1
                return self.group(depth + 1)
            (inner,) = self.delimited(depth, t, closer)
            if key in ("|", "\\lvert", "\\vert"):
                return b.call("Abs", [inner], t.pos)
            if key == "\\lfloor":
                return b.call("floor", [inner], t.pos)
            if key == "\\lceil":
                return b.call("ceiling", [inner], t.pos)
            return inner
        if t.kind == "cmd":
            return self.command(depth)
        if t.kind == "eof":
            raise FormulaError("unexpected end of formula", t.pos)
        if t.kind == "sym" and t.value in "=<>":
            raise FormulaError("comparisons and equations are not allowed", t.pos)
        if t.kind == "sym" and t.value in ")]}":
            raise FormulaError(f"unbalanced '{t.value}'", t.pos)
        raise FormulaError(f"unexpected '{t.shown()}'", t.pos)

    def letters(self, depth: int) -> sp.Expr:
        t = self.tok
        j = self.i
        run = [t]
        while self.toks[j + 1].kind == "letter" and self.toks[j + 1].pos == self.toks[j].end:
            j += 1
            run.append(self.toks[j])
        word = "".join(x.value for x in run)
        if len(word) > 1:
            subscripted = self.toks[j + 1].is_("sym", "_") and any(k.startswith(word + "_") for k in self.b.symbols)
            if subscripted or word in self.b.symbols:
                name_toks = run
            elif word in _FUNCTIONS and word not in self.b.symbols:
                self.i = j + 1
                return self.function(word, t, depth)
            else:
                name_toks = run[:1]
        else:
            name_toks = run
        self.i += len(name_toks)
        name = "".join(x.value for x in name_toks)
        return self.named(name, t.pos, depth, fallback_word=word)

    def named(self, name: str, pos: int, depth: int, fallback_word: str | None = None,
              alternatives: tuple[str, ...] = ()) -> sp.Expr:
        if self.at("sym", "_"):
            self.advance()
            sub = self.subscript_text(depth)
            name = f"{name}_{sub}"
            alternatives = tuple(f"{a}_{sub}" for a in alternatives)
        value = self.b.lookup(name, pos, alternatives)
        if value is None:
            if len(name) == 1 and fallback_word and len(fallback_word) > 1:
                raise FormulaError(f"unknown name '{fallback_word}'", pos, self.b.known())
            raise FormulaError(f"unknown name '{name}'", pos, self.b.known())
        return value

    def subscript_text(self, depth: int) -> str:
        """The text of a subscript: letters, digits, Greek commands and text commands."""
        t = self.tok
        if t.kind == "num":
            if len(t.value) > 1:
                raise FormulaError(f"ambiguous subscript '{t.value}' (write {{{t.value}}})", t.pos)
            self.advance()
            return t.value
        if t.kind == "letter":
            nxt = self.toks[self.i + 1]
            if nxt.kind == "letter" and nxt.pos == t.end:
                raise FormulaError("ambiguous subscript (write {...} around more than one letter)", t.pos)
            self.advance()
            return t.value
        if t.kind == "cmd" and t.value in GREEK_COMMANDS:
            self.advance()
            return t.value
        if t.is_("sym", "{"):
            opener = self.advance()
            parts = []
            while not self.at("sym", "}"):
                u = self.tok
                if u.kind in ("num", "letter"):
                    parts.append(u.value)
                    self.advance()
                elif u.kind == "cmd" and u.value in GREEK_COMMANDS:
                    parts.append(u.value)
                    self.advance()
                elif u.kind == "cmd" and u.value in _TEXT_COMMANDS:
                    self.advance()
                    parts.append(self.text_argument())
                elif u.is_("sym", ","):
                    parts.append(",")
                    self.advance()
                else:
                    raise FormulaError(f"unsupported subscript content '{u.shown()}'", u.pos)
            self.expect_closer("}", opener)
            if not parts:
                raise FormulaError("empty subscript", opener.pos)
            return "".join(parts)
        raise FormulaError(f"expected a subscript, found '{t.shown()}'", t.pos)

    def text_argument(self) -> str:
        """The letters inside ``{...}`` after ``\\mathrm`` and friends."""
        opener = self.tok
        if not opener.is_("sym", "{"):
            if opener.kind == "letter":
                self.advance()
                return opener.value
            raise FormulaError(f"expected '{{' after a text command, found '{opener.shown()}'", opener.pos)
        self.advance()
        parts = []
        while not self.at("sym", "}"):
            u = self.tok
            if u.kind in ("letter", "num"):
                parts.append(u.value)
                self.advance()
            elif u.is_("sym", "_"):
                parts.append("_")
                self.advance()
            else:
                raise FormulaError(f"unsupported content '{u.shown()}' in a text command", u.pos)
        self.expect_closer("}", opener)
        if not parts:
            raise FormulaError("empty text command", opener.pos)
        return "".join(parts)

    def command(self, depth: int) -> sp.Expr:
        t = self.advance()
        c = t.value
        b = self.b
        if c in _FRAC:
            num = self.arg(depth + 1, f"\\{c}")
            den = self.arg(depth + 1, f"\\{c}")
            return b.div(num, den, t.pos)
        if c in _BINOM:
            n = self.arg(depth + 1, f"\\{c}")
            k = self.arg(depth + 1, f"\\{c}")
            return b.call("binomial", [n, k], t.pos)
        if c == "sqrt":
            if self.at("sym", "["):
                opener = self.advance()
                index = self.expr(depth + 1)
                self.expect_closer("]", opener)
                radicand = self.arg(depth + 1, "\\sqrt")
                return b.power(radicand, b.div(sp.Integer(1), index, t.pos), t.pos)
            return b.call("sqrt", [self.arg(depth + 1, "\\sqrt")], t.pos)
        if c == "infty":
            return sp.oo
        if c == "Gamma" and "Gamma" not in b.symbols:
            return self.function("gamma", t, depth)
        if c in GREEK_COMMANDS:
            alternatives = (c[3:],) if c.startswith("var") else ()
            return self.named(c, t.pos, depth, alternatives=alternatives)
        if c in _LATEX_FUNCTIONS:
            return self.function(_LATEX_FUNCTIONS[c], t, depth)
        if c in _TEXT_COMMANDS:
            word = self.text_argument()
            if word in ("e", "E"):
                return sp.E
            fname = _TEXT_NAMES.get(word, word)
            if word in b.symbols or self.at("sym", "_"):
                return self.named(word, t.pos, depth)
            if fname in _FUNCTIONS:
                return self.function(fname, t, depth)
            value = b.lookup(word, t.pos)
            if value is None:
                raise b.unknown(word, t.pos)
            return value
        if c in ("erf", "erfc"):
            return self.function(c, t, depth)
        if c in ("lvert", "vert", "lfloor", "lceil", "{"):  # handled as openers in atom()
            raise FormulaError(f"unexpected '\\{c}'", t.pos)
        if c in ("le", "leq", "ge", "geq", "lt", "gt", "neq", "ne", "approx", "sim", "equiv"):
            raise FormulaError("comparisons and equations are not allowed", t.pos)
        raise FormulaError(f"unknown command '\\{c}'", t.pos)

    def function(self, name: str, t: _Tok, depth: int) -> sp.Expr:
        """A function application; ``t`` is the function's token (already consumed)."""
        b = self.b
        base = None
        if self.at("sym", "_"):
            if name != "log":
                raise FormulaError(f"subscripts on '{t.shown()}' are not supported", self.tok.pos)
            self.advance()
            base = self.arg(depth + 1, "subscript")
        power = None
        if self.at("sym", "^"):
            caret = self.advance()
            power = (self.arg(depth + 1, "superscript"), caret.pos)
        if self.at("sym", "_") and base is None and name == "log":
            self.advance()
            base = self.arg(depth + 1, "subscript")
        nxt = self.tok
        key = self.opener_key(nxt)
        multi = _FUNCTIONS[name][1] > 1
        if key in ("(", "[", "\\{", "{"):
            self.advance()
            if key == "{":
                saved, self.abs_depth = self.abs_depth, 0
                args = [self.expr(depth + 1)]
                while multi and self.at("sym", ","):
                    self.advance()
                    args.append(self.expr(depth + 1))
                self.abs_depth = saved
                self.expect_closer("}", nxt)
            else:
                args = self.delimited(depth, nxt, _OPENERS[key], allow_commas=multi)
            if base is not None:
                args = [*args, base]
            result = b.call(name, args, t.pos, t.shown())
            if power is not None:
                result = b.power(result, power[0], power[1])
            return self.scripts(result, depth)
        if not self.starts_atom(nxt) and not nxt.is_("sym", "-") and not nxt.is_("sym", "+"):
            raise FormulaError(f"function '{t.shown()}' needs an argument", nxt.pos)
        arg = self.signed(depth + 1)
        args = [arg] if base is None else [arg, base]
        result = b.call(name, args, t.pos, t.shown())
        if power is not None:
            result = b.power(result, power[0], power[1])
        return result


def parse_latex(
    text: str, symbols: Mapping[str, sp.Basic], *, functions: set[str] | None = None
) -> sp.Expr:
    """Parse a LaTeX formula (``\\frac{\\alpha}{2\\sigma^2}``) into a sympy expression.

    See the module docstring for the grammar. Raises :class:`FormulaError` with a position.
    """
    allowed = _check_text(text, symbols, functions)
    builder = _Builder(symbols, allowed)
    try:
        return _LatexParser(text, builder).parse()
    except RecursionError:  # defensive: the depth limit should make this unreachable
        raise FormulaError("nesting too deep", 0) from None


def parse(
    text: str,
    symbols: Mapping[str, sp.Basic],
    syntax: str = "auto",
    *,
    functions: set[str] | None = None,
) -> sp.Expr:
    """Parse ``text`` as ``"python"``, ``"latex"`` or ``"auto"`` (LaTeX if it has ``\\`` or ``{``)."""
    if syntax not in ("auto", "python", "latex"):
        raise ValueError(f"syntax must be 'auto', 'python' or 'latex'; found {syntax!r}")
    if syntax == "auto":
        syntax = "latex" if isinstance(text, str) and ("\\" in text or "{" in text) else "python"
    if syntax == "latex":
        return parse_latex(text, symbols, functions=functions)
    return parse_formula(text, symbols, functions=functions)


def as_number(value, name: str = "value") -> sp.Expr:
    """An exact sympy number from a user's value: never ``sympify`` (which evaluates strings as code).

    ints, Fractions, floats and numpy floats (at their exact binary value), mpmath mpfs, sympy numbers,
    and numeric strings ("1/3", "2.5", "oo", "sqrt(2)") read by :func:`parse_formula` with no symbols.
    Infinities become ``oo``/``-oo``; NaN, non-numbers and formulas with symbols raise ``ValueError``
    naming ``name``.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number; got {value!r}")
    if isinstance(value, str):
        try:
            value = parse_formula(value, {})
        except FormulaError as exc:
            raise ValueError(f"{name} must be a number; cannot read {value!r}: {exc}") from None
        if value.free_symbols:
            raise ValueError(f"{name} must be a number; got a formula in {sorted(map(str, value.free_symbols))}")
    if isinstance(value, sp.Basic):
        if not value.is_number or value.has(sp.nan, sp.zoo):
            raise ValueError(f"{name} must be a number; got {value}")
        return value
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    try:
        import mpmath

        if isinstance(value, mpmath.mpf):
            value = float(value) if not mpmath.isfinite(value) else value
            if isinstance(value, mpmath.mpf):
                man, exp = value.man_exp
                return sp.Integer(man) * sp.Integer(2) ** exp
    except ImportError:  # pragma: no cover - mpmath comes with sympy
        pass
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            raise ValueError(f"{name} must be a number; got nan")
        if math.isinf(v):
            return sp.oo if v > 0 else -sp.oo
        return sp.Rational(v)
    raise ValueError(f"{name} must be a number; got {type(value).__name__} {value!r}")
