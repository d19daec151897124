"""The safe parser of Python-like formula text (what people paste from numpy/math/sympy code).

Shares its names, functions, limits and guarded construction with the LaTeX parser (:mod:`.common`);
nothing here evaluates text (``ast.parse`` only builds a syntax tree, which is walked with a whitelist).

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
* ``Piecewise((expr, condition), ..., (expr, True))`` (a formula's finiteness conditions): conditions are
  comparisons (chains allowed), ``Eq``/``Ne``/``Lt``/``Le``/``Gt``/``Ge``, combined with ``&``, ``|``, ``~``,
  ``and``, ``or``, ``not``, ``And``/``Or``/``Not``, or ``True``. Pairs and conditions are accepted there only.
* Not allowed elsewhere (error with position): comparisons, boolean operators, ``%``, ``//``, ``@``, bit
  operators, keyword arguments, ``*args``, lambdas, subscripts, slices, comprehensions, tuples, lists,
  dicts, sets, strings, f-strings, bytes, ``None``/``True``/``False``, complex literals, the walrus
  operator, conditional expressions, comments, backslashes, and any attribute access other than the
  dotted functions and constants above.
* Python's own parser limits chains of binary operators to roughly 1000 operands.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Mapping

import sympy as sp

from .common import (
    CONSTANTS,
    FUNCTIONS,
    MODULE_CONSTANTS,
    MODULES,
    GREEK,
    MAX_DEPTH,
    MAX_NUMBER_BITS,
    OPERATOR_CHARS,
    FormulaError,
    Builder,
    describe_character,
    run_parser,
)

__all__ = ["parse_formula"]

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
            raise FormulaError(f"unsupported character {describe_character(ch)}", i)
        elif not ch.isprintable():
            raise FormulaError(f"control character {describe_character(ch)}", i)
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


_RELATIONS = {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}
_CONDITION_CALLS = {"Eq": sp.Eq, "Ne": sp.Ne, "Lt": sp.Lt, "Le": sp.Le, "Gt": sp.Gt, "Ge": sp.Ge}


class _PythonParser:
    def __init__(self, text: str, builder: Builder):
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
        if isinstance(node.value, ast.Name) and node.value.id in MODULES:
            if node.attr in MODULE_CONSTANTS:
                return CONSTANTS[node.attr]
            if node.attr in FUNCTIONS:
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
            if name in self.b.symbols and name not in FUNCTIONS:
                raise FormulaError(f"'{name}' is a symbol, not a function", self.pos(node))
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in MODULES:
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
        if FUNCTIONS[name][2] == "Piecewise":
            return self.piecewise(node, depth)
        args = [self.visit(a, depth + 1) for a in node.args]
        return self.b.call(name, args, self.pos(node), shown)

    def piecewise(self, node: ast.Call, depth: int) -> sp.Expr:
        """``Piecewise((expr, condition), ...)``: each argument a pair, the condition a comparison (chains
        allowed), ``Eq``/``Ne``/``Lt``/``Le``/``Gt``/``Ge``, ``&``/``|``/``~``, ``and``/``or``/``not``, or ``True``."""
        if not node.args:
            raise FormulaError("Piecewise needs at least one (expression, condition) pair", self.pos(node))
        pairs = []
        for a in node.args:
            if not (isinstance(a, ast.Tuple) and len(a.elts) == 2):
                raise FormulaError("each argument of Piecewise must be a pair (expression, condition)", self.pos(a))
            value, condition = a.elts
            pairs.append((self.visit(value, depth + 2), self.condition(condition, depth + 2)))
        return self.b.guard(lambda: sp.Piecewise(*pairs), self.pos(node))


    def condition(self, node: ast.AST, depth: int) -> sp.Basic:
        if depth > MAX_DEPTH:
            raise FormulaError(f"nesting too deep (max {MAX_DEPTH})", self.pos(node))
        pos = self.pos(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return sp.true if node.value else sp.false
        if isinstance(node, ast.Compare):
            sides = [self.visit(node.left, depth + 1)] + [self.visit(c, depth + 1) for c in node.comparators]
            parts = []
            for op, left, right in zip(node.ops, sides, sides[1:]):
                if type(op) not in _RELATIONS:
                    raise FormulaError("only <, <=, >, >=, == and != compare in a condition", pos)
                parts.append(self.b.guard(_RELATIONS[type(op)], pos, left, right))
            return sp.And(*parts)
        if isinstance(node, ast.BoolOp):
            parts = [self.condition(v, depth + 1) for v in node.values]
            return sp.And(*parts) if isinstance(node.op, ast.And) else sp.Or(*parts)
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.BitAnd, ast.BitOr):
            parts = [self.condition(node.left, depth + 1), self.condition(node.right, depth + 1)]
            return sp.And(*parts) if isinstance(node.op, ast.BitAnd) else sp.Or(*parts)
        if isinstance(node, ast.UnaryOp) and type(node.op) in (ast.Not, ast.Invert):
            return sp.Not(self.condition(node.operand, depth + 1))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            name = node.func.id
            if name in _CONDITION_CALLS and len(node.args) == 2:
                left, right = (self.visit(a, depth + 1) for a in node.args)
                return self.b.guard(_CONDITION_CALLS[name], pos, left, right)
            if name in ("And", "Or", "Not") and node.args:
                parts = [self.condition(a, depth + 1) for a in node.args]
                if name == "Not" and len(parts) != 1:
                    raise FormulaError("Not takes one condition", pos)
                return {"And": sp.And, "Or": sp.Or, "Not": sp.Not}[name](*parts)
        raise FormulaError("a condition must be a comparison, Eq/Ne, a combination of them with &, |, ~, "
                           "and, or, not, or True", pos)


def parse_formula(
    text: str, symbols: Mapping[str, sp.Basic], *, functions: set[str] | None = None
) -> sp.Expr:
    """Parse a Python-like formula (``1/(alpha-1)*np.log(...)``) into a sympy expression.

    See the module docstring for the grammar. Raises :class:`FormulaError` with a position.
    """
    return run_parser(_PythonParser, text, symbols, functions)
