"""What the safe parsers share: the limits, the error, the names, the whitelisted functions and the
guarded construction of sympy objects (:class:`Builder`).

The text is **untrusted**. Nothing here evaluates text: there is no ``eval``/``exec``, no
``sympify``/``parse_expr``/``S(str)``. The parsers (:mod:`.python`, :mod:`.latex`) read the text
themselves and *construct* sympy objects through :class:`Builder` from the whitelist below, so no input
can trigger an import, an attribute access, a file access or code execution.

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
  :data:`MAX_COMBINATORIAL_ARG`; ``floor``/``ceiling`` of irrational numbers stay unevaluated, and so do
  ``digamma``/``polygamma``/``hyp2f1``/``besselj``/``besseli``/``besselk`` of numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

import sympy as sp

__all__ = [
    "FormulaError",
    "FUNCTION_NAMES",
    "GREEK",
    "GREEK_COMMANDS",
    "OPERATOR_CHARS",
    "MAX_LENGTH",
    "MAX_DEPTH",
    "MAX_NUMBER_BITS",
    "MAX_POWER_BITS",
    "MAX_RADICAND_BITS",
    "MAX_COMBINATORIAL_ARG",
    "MAX_DECIMAL_EXPONENT",
    "MAX_ARGS",
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

CONSTANTS: dict[str, sp.Expr] = {
    "pi": sp.pi, "e": sp.E, "E": sp.E, "inf": sp.oo, "oo": sp.oo, "infty": sp.oo, "infinity": sp.oo,
}
MODULES = frozenset({"np", "numpy", "math", "mp", "mpmath", "sp", "sympy"})
MODULE_CONSTANTS = frozenset({"pi", "e", "E", "inf", "oo"})


def _min(*a):
    return sp.Min(*a)


def _max(*a):
    return sp.Max(*a)


# name -> (min args, max args, canonical name, builder); builders receive sympy expressions.
FUNCTIONS: dict[str, tuple[int, int, str, Callable[..., sp.Expr]]] = {}


def _register(names, lo, hi, canonical, builder):
    for n in names:
        FUNCTIONS[n] = (lo, hi, canonical, builder)


_register(["exp"], 1, 1, "exp", None)  # built by the guarded Builder.exp
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
# special functions of published formulas (the Gamma-shape KL's digamma, the Cauchy divergence's 2F1, the
# von Mises and Skellam laws' Bessel functions); on numbers they stay unevaluated (_UNEVALUATED)
# a published formula's finiteness conditions: Piecewise((f, condition), ..., (oo, True)), in Python syntax only
# (the Python parser reads its (expression, condition) pairs; Builder.call never builds it)
_register(["Piecewise", "piecewise"], 1, MAX_ARGS, "Piecewise", None)
_register(["digamma", "psi"], 1, 1, "digamma", sp.digamma)
_register(["polygamma"], 2, 2, "polygamma", sp.polygamma)
_register(["hyp2f1"], 4, 4, "hyp2f1", lambda a, b, c, z, evaluate=True: sp.hyper((a, b), (c,), z, evaluate=evaluate))
_register(["besselj"], 2, 2, "besselj", sp.besselj)
_register(["besseli", "iv"], 2, 2, "besseli", sp.besseli)
_register(["besselk", "kv"], 2, 2, "besselk", sp.besselk)

#: Every function name the parsers accept (aliases included).
FUNCTION_NAMES = frozenset(FUNCTIONS)
_COMBINATORIAL = frozenset({"gamma", "loggamma", "beta", "binomial", "factorial"})
#: functions built unevaluated when every argument is a number: sympy would evaluate polygamma(900, 900) as an
#: exact rational of tens of thousands of digits
_UNEVALUATED = frozenset({"digamma", "polygamma", "hyp2f1", "besselj", "besseli", "besselk"})


def describe_character(ch: str) -> str:
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


class Builder:
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
            if n in CONSTANTS:
                return CONSTANTS[n]
        return None

    def unknown(self, name: str, pos: int) -> FormulaError:
        if name in FUNCTIONS:
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
        except Exception as exc:  # noqa: BLE001 - the parser's boundary on user text: sympy raises many kinds, none may escape as anything but a FormulaError
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
        return name in FUNCTIONS and (name in self.functions or FUNCTIONS[name][2] in self.functions)

    def call(self, name: str, args: list[sp.Expr], pos: int, shown: str | None = None) -> sp.Expr:
        shown = shown or name
        if not self.allowed(name):
            allowed = ", ".join(sorted(self.functions))
            raise FormulaError(f"unknown function '{shown}'", pos, f"; known: {allowed}")
        lo, hi, canonical, builder = FUNCTIONS[name]
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise FormulaError(f"function '{shown}' takes {want} argument(s), got {len(args)}", pos)
        if canonical == "Piecewise":
            raise FormulaError(f"'{shown}' takes (expression, condition) pairs, in Python syntax", pos)
        if canonical in _COMBINATORIAL:
            for a in args:
                if isinstance(a, sp.Rational) and abs(a) > MAX_COMBINATORIAL_ARG:
                    raise FormulaError(f"argument of '{shown}' too large (max {MAX_COMBINATORIAL_ARG})", pos)
        if canonical in ("floor", "ceiling", "sign") and args[0].is_number and not isinstance(args[0], sp.Rational):
            return self.guard(lambda: builder(args[0], evaluate=False), pos)
        if canonical in _UNEVALUATED and all(a.is_number for a in args):
            return self.guard(lambda: builder(*args, evaluate=False), pos)
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


def run_parser(parser: type, text, symbols, functions) -> sp.Expr:
    """Check the inputs, then parse ``text`` with ``parser(text, builder)`` (each parser's entry point)."""
    allowed = _check_text(text, symbols, functions)
    try:
        return parser(text, Builder(symbols, allowed)).parse()
    except RecursionError:  # defensive: the depth limits should make this unreachable
        raise FormulaError("nesting too deep", 0) from None
