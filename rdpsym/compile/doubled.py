"""The closed form's float code, run in double-double arithmetic: the fallback where it loses digits.

Where the closed form's estimated rounding error (:mod:`rdpsym.compile.errors`) says its float value lost
digits and no series serves the point (a Poisson pair at orders below 1, a band between a series and the
closed form), the generated code evaluates the closed form again in double-double arithmetic: every
value is a pair (hi, lo) whose sum carries about 104 bits (Dekker 1971; the run-time helpers
``_dd_*`` of :mod:`rdpsym.compile.runtime`).

The double-double code is the float code itself, operation for operation: :func:`double_double_code`
rewrites the text the emitter wrote (its syntax tree), replacing each numpy function, each helper and
each arithmetic operator by its double-double counterpart and each constant by its exact value, so the
algorithm is the same: the same log-sum-exp scaled by the same largest term, the same log1p and expm1,
the same ratio forms. The float code's first-order error estimate then bounds the double-double code's
error once its unit roundoff (2^-52 per operation, doubled) is replaced by the double-double one. Each
double-double operation is within 2^-96 of its exact value relative to the size the estimate charges it
with (tests/test_compile_doubled.py checks 2^-96 against mpmath), so the estimate times
:data:`DD_SCALE` = 2^-44 bounds the double-double error, a factor 2^8 below the float one.

Constants: the emitter writes inexact constants (1/3, log 2, pi) as their nearest floats and records
their exact values (:attr:`rdpsym.compile.emitter.Emitter.constants`); here they become exact pairs.
A constant the emitter did not record is a float that is exact (2.0, 0.5, -1.0).
"""

from __future__ import annotations

import ast

import sympy as sp

from .emitter import CodegenError

__all__ = ["DD_SCALE", "double_double_code"]

#: The double-double code's error bound relative to the float code's estimated error: each operation
#: within 2^-96 instead of the 2^-52 the float estimate charges (compile.errors.EPS)
DD_SCALE = 2.0**-44

# numpy functions and run-time helpers of one or more double-double arguments: their counterparts
_CALLS = {
    "numpy.exp": "_dd_exp", "numpy.expm1": "_dd_expm1", "numpy.log": "_dd_log", "numpy.log1p": "_dd_log1p",
    "numpy.sqrt": "_dd_sqrt", "numpy.abs": "_dd_abs", "numpy.sign": "_dd_sign", "numpy.maximum": "_dd_max",
    "numpy.minimum": "_dd_min", "numpy.logaddexp": "_dd_logaddexp", "numpy.tanh": "_dd_tanh",
    "numpy.sinh": "_dd_sinh", "numpy.cosh": "_dd_cosh", "_log_tanh": "_dd_log_tanh", "_log_sinh": "_dd_log_sinh",
    "_log_cosh": "_dd_log_cosh", "_log1mexp": "_dd_log1mexp",
}
# functions of exact (integer-valued) inputs: the float function of the high parts is exact
_EXACT_CALLS = {"numpy.mod", "numpy.floor", "numpy.ceil"}
_COMPARE = {ast.Lt: "_dd_lt", ast.LtE: "_dd_le", ast.Gt: "_dd_gt", ast.GtE: "_dd_ge", ast.Eq: "_dd_eq",
            ast.NotEq: "_dd_ne"}
_BINARY = {ast.Add: "_dd_sum", ast.Mult: "_dd_mul", ast.Div: "_dd_div"}


def _pair(value: sp.Expr) -> str:
    """An exact real constant as a double-double literal ``(hi, lo)``."""
    v = sp.N(value, 60)
    hi = float(v)
    lo = float(sp.N(v - sp.Float(hi, 60), 30)) if hi != 0 and abs(hi) != float("inf") else 0.0
    return f"({hi!r}, {lo!r})"


def _name(node: ast.expr) -> str:
    return ast.unparse(node)


class _Doubled:
    """The rewrite of one expression; ``constants``: literal text -> exact value (None: ambiguous)."""

    def __init__(self, constants: dict):
        self.constants = constants

    def parse(self, code: str) -> ast.expr:
        return ast.parse(code, mode="eval").body

    def value(self, node: ast.expr) -> str:
        """Code of the double-double value of the float expression ``node``."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise CodegenError(f"no double-double code for the constant {node.value!r}")
            text = repr(float(node.value))
            if text in self.constants:
                if self.constants[text] is None:
                    raise CodegenError(f"the constant {text} stands for two exact values")
                return _pair(self.constants[text])
            return f"({float(node.value)!r}, 0.0)"
        if isinstance(node, ast.Name):
            return f"_dd({node.id})"
        if isinstance(node, ast.Attribute):
            text = _name(node)
            exact = {"numpy.pi": sp.pi, "numpy.e": sp.E}.get(text)
            if exact is not None:
                return _pair(exact)
            if text in ("numpy.inf", "numpy.nan"):
                return f"({text}, 0.0)"
            raise CodegenError(f"no double-double code for {text}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return f"_dd_neg({self.value(node.operand)})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.value(node.operand)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise CodegenError(f"no double-double code for {_name(node)[:60]}")

    def binary(self, node: ast.BinOp) -> str:
        if isinstance(node.op, ast.Sub):
            return f"_dd_sum({self.value(node.left)}, _dd_neg({self.value(node.right)}))"
        if isinstance(node.op, ast.Pow):
            n = node.right
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant):
                n = ast.Constant(-n.operand.value)
            if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
                return f"_dd_powi({self.value(node.left)}, {n.value})"
            raise CodegenError(f"no double-double code for the power {_name(node)[:60]}")
        op = _BINARY.get(type(node.op))
        if op is None:
            raise CodegenError(f"no double-double code for {_name(node)[:60]}")
        return f"{op}({self.value(node.left)}, {self.value(node.right)})"

    def condition(self, node: ast.expr) -> str:
        """Code of a boolean array: comparisons of double-double values, combined as the float code does."""
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return repr(node.value)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = _COMPARE.get(type(node.ops[0]))
            if op is not None:
                return f"{op}({self.value(node.left)}, {self.value(node.comparators[0])})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            sym = "&" if isinstance(node.op, ast.BitAnd) else "|"
            return f"({self.condition(node.left)}) {sym} ({self.condition(node.right)})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            return f"(~({self.condition(node.operand)}))"
        raise CodegenError(f"no double-double code for the condition {_name(node)[:60]}")

    def listed(self, node: ast.expr, kind) -> str:
        if not isinstance(node, ast.List):
            raise CodegenError(f"expected a list in {_name(node)[:60]}")
        return "[" + ", ".join(kind(e) for e in node.elts) + "]"

    def call(self, node: ast.Call) -> str:
        fn = _name(node.func)
        args = node.args
        if node.keywords:
            raise CodegenError(f"no double-double code for {fn} with keywords")
        if fn in _CALLS:
            return f"{_CALLS[fn]}({', '.join(self.value(a) for a in args)})"
        if fn in _EXACT_CALLS:
            parts = ", ".join(f"{self.value(a)}[0]" for a in args)
            return f"_dd({fn}({parts}))"
        if fn == "numpy.power" and len(args) == 2:
            return f"_dd_pow({self.value(args[0])}, {self.value(args[1])})"
        if fn == "_z" and len(args) == 1:
            return f"_dd(_z({_name(args[0])}))"  # zeros of a shape: exact
        if fn in ("_lse_abs", "_lse_sign") and len(args) == 2:
            return f"_dd{fn}({self.listed(args[0], self.value)}, {self.listed(args[1], self.value)})"
        if fn == "_lse_ratio" and len(args) >= 4 and isinstance(args[3], ast.Lambda):
            l1, d, s, general = args[:4]
            return (f"_dd_lse_ratio({self.value(l1)}, {self.value(d)}, {self.value(s)}, "
                    f"lambda: {self.value(general.body)})")
        if fn == "numpy.select" and len(args) == 3:
            return (f"_dd_select({self.listed(args[0], self.condition)}, {self.listed(args[1], self.value)}, "
                    f"{self.value(args[2])})")
        raise CodegenError(f"no double-double code for {fn}")


def double_double_code(code: str, constants: dict) -> str:
    """The double-double counterpart of the float expression ``code`` (text the emitter wrote), as code
    of a pair (hi, lo); :class:`CodegenError` for a construct it has none for (the float code then
    refuses where it loses digits, as without this fallback)."""
    doubled = _Doubled(constants)
    return doubled.value(doubled.parse(code))
