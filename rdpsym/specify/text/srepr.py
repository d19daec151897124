"""A safe reader of sympy's ``srepr`` text: the stored form of expressions in rdpsym's on-disk cache.

``srepr(expr)`` prints a sympy tree as constructor calls, ``Add(Symbol('x', positive=True),
Integer(1))``. Reading that text back with ``eval``, ``sympify`` or ``parse_expr`` would run whatever a
changed cache file holds. :func:`read_srepr` instead parses the text with Python's :mod:`ast` module (which
evaluates nothing) and *constructs* the tree itself, node by node, from a whitelist:

* numbers: ``Integer(n)``, ``Rational(p, q)``, ``Float('digits', precision=p)`` (the digits checked
  against a decimal pattern, sizes bounded);
* symbols: ``Symbol('name', **assumptions)`` and ``Dummy('name', dummy_index=n, **assumptions)``, with
  only sympy's own assumption names and boolean values;
* named singletons: ``oo``, ``-oo``, ``zoo``, ``nan``, ``pi``, ``E``, ``I``, ``true``, ``false``,
  ``Reals``, ``Integers``, ``EmptySet``, ...;
* constructors: arithmetic, relations, logic, sets, ``Piecewise``, ``Sum``, ``Integral``, ``Limit`` and
  every mathematical function class of :mod:`sympy.functions`. Their arguments are trees built here
  (never a string, so no constructor can call ``sympify`` on text), and they are built unevaluated
  (``evaluate=False``) where sympy allows it: the stored tree was canonical already, so it comes back
  node for node and no evaluation (an expansion, a factorial of a huge number) runs while reading.

Anything else (an attribute access, a lambda, a name outside the whitelist, a keyword argument other
than a symbol's assumptions, a string where a tree belongs) raises :class:`SreprError`. Text length,
nesting depth and number sizes are bounded. A writer checks that its tree reads back identically
(``read_srepr(srepr(e)) == e`` node for node) before it stores the text, so an expression this reader
cannot rebuild exactly is never stored.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re

import sympy as sp
from sympy.core.assumptions import _assume_defined
from sympy.core.relational import Relational
from sympy.functions.elementary.piecewise import ExprCondPair
from sympy.logic.boolalg import BooleanFunction

__all__ = ["SreprError", "read_srepr", "MAX_SREPR_LENGTH", "MAX_SREPR_DEPTH"]

#: longest text read, in characters
MAX_SREPR_LENGTH = 5_000_000
#: deepest nesting of constructor calls
MAX_SREPR_DEPTH = 150
#: no integer literal may have more bits than this (about 4200 decimal digits, Python's own str limit)
_MAX_INT_BITS = 14_000
#: the longest digit string of a Float and its largest precision, in bits
_MAX_FLOAT_DIGITS, _MAX_PRECISION = 5_000, 20_000
_FLOAT_DIGITS = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?|[+-]?inf|nan", re.IGNORECASE)


class SreprError(ValueError):
    """Text that is not an srepr this reader builds (the reason names the construct)."""


_SINGLETONS: dict[str, sp.Basic] = {
    "oo": sp.oo, "zoo": sp.zoo, "nan": sp.nan, "pi": sp.pi, "E": sp.E, "I": sp.I,
    "EulerGamma": sp.EulerGamma, "Catalan": sp.Catalan, "GoldenRatio": sp.GoldenRatio,
    "true": sp.true, "false": sp.false,
    "Reals": sp.S.Reals, "Integers": sp.S.Integers, "Naturals": sp.S.Naturals, "Naturals0": sp.S.Naturals0,
    "Rationals": sp.S.Rationals, "Complexes": sp.S.Complexes, "EmptySet": sp.S.EmptySet,
    "UniversalSet": sp.S.UniversalSet,
}


@functools.cache
def _classes() -> dict[str, tuple[type, bool]]:
    """The whitelisted constructors by name, each with whether it is built with ``evaluate=False``
    (built once, on the first read)."""
    classes = [sp.Add, sp.Mul, sp.Pow, sp.Tuple, ExprCondPair, sp.Piecewise, sp.Sum, sp.Integral, sp.Limit,
               sp.Equality, sp.Unequality, sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan,
               sp.And, sp.Or, sp.Not, sp.Xor, sp.Implies, sp.Interval, sp.Union, sp.Intersection, sp.Complement,
               sp.FiniteSet, sp.ProductSet, sp.Range, sp.Contains, sp.Max, sp.Min]
    # the mathematical functions (exp, log, Abs, gamma, besseli, Heaviside, ...): sympy's own classes
    classes += [obj for _, obj in inspect.getmembers(sp.functions, inspect.isclass)
                if issubclass(obj, sp.Function) and obj.__module__.startswith("sympy.functions")]
    # the constructors that take evaluate=False (the others do not evaluate their arguments further, or
    # take no such keyword: Interval, Range, Tuple, ExprCondPair, ProductSet, Sum, Integral, Limit)
    unevaluated = (sp.Function, Relational, BooleanFunction, sp.Piecewise, sp.Max, sp.Min, sp.Add, sp.Mul, sp.Pow,
                   sp.Union, sp.Intersection, sp.Complement, sp.FiniteSet, sp.Contains)
    return {c.__name__: (c, issubclass(c, unevaluated)) for c in reversed(classes)}


def _int(node: ast.AST, where: str) -> int:
    """An integer literal (with its sign), bounded in size."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if not (isinstance(node, ast.Constant) and type(node.value) is int):
        raise SreprError(f"{where}: expected an integer literal")
    if node.value.bit_length() > _MAX_INT_BITS:
        raise SreprError(f"{where}: an integer of {node.value.bit_length()} bits (at most {_MAX_INT_BITS})")
    return sign * node.value


def _str(node: ast.AST, where: str) -> str:
    if not (isinstance(node, ast.Constant) and type(node.value) is str):
        raise SreprError(f"{where}: expected a string literal")
    return node.value


def _symbol(cls, node: ast.Call) -> sp.Basic:
    name = cls.__name__
    if len(node.args) != 1:
        raise SreprError(f"{name}: expected one name")
    label = _str(node.args[0], name)
    if len(label) > 200:
        raise SreprError(f"{name}: a name of {len(label)} characters")
    kwargs = {}
    for kw in node.keywords:
        if cls is sp.Dummy and kw.arg == "dummy_index":
            kwargs[kw.arg] = _int(kw.value, f"{name}.dummy_index")
            continue
        if kw.arg not in _assume_defined:
            raise SreprError(f"{name}: {kw.arg!r} is not a sympy assumption")
        if not (isinstance(kw.value, ast.Constant) and type(kw.value.value) is bool):
            raise SreprError(f"{name}: the assumption {kw.arg!r} must be True or False")
        kwargs[kw.arg] = kw.value.value
    return cls(label, **kwargs)


def _float(node: ast.Call) -> sp.Float:
    if len(node.args) != 1 or [kw.arg for kw in node.keywords] not in ([], ["precision"]):
        raise SreprError("Float: expected Float('digits', precision=bits)")
    digits = _str(node.args[0], "Float")
    if len(digits) > _MAX_FLOAT_DIGITS or not _FLOAT_DIGITS.fullmatch(digits):
        raise SreprError("Float: not a decimal number")
    if not node.keywords:
        return sp.Float(digits)
    precision = _int(node.keywords[0].value, "Float.precision")
    if not 1 <= precision <= _MAX_PRECISION:
        raise SreprError(f"Float: precision {precision} out of range")
    return sp.Float(digits, precision=precision)


def _build(node: ast.AST, depth: int) -> sp.Basic:
    if depth > MAX_SREPR_DEPTH:
        raise SreprError(f"nested deeper than {MAX_SREPR_DEPTH}")
    if isinstance(node, ast.Name):
        if node.id not in _SINGLETONS:
            raise SreprError(f"unknown name {node.id!r}")
        return _SINGLETONS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Name):
        if node.operand.id != "oo":
            raise SreprError(f"-{node.operand.id} is not an srepr atom")
        return sp.S.NegativeInfinity
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise SreprError(f"unexpected {type(node).__name__} (only constructor calls and named constants)")
    name = node.func.id
    if name in ("Symbol", "Dummy"):
        return _symbol(sp.Symbol if name == "Symbol" else sp.Dummy, node)
    if name == "Integer":
        if len(node.args) != 1 or node.keywords:
            raise SreprError("Integer: expected one integer")
        return sp.Integer(_int(node.args[0], "Integer"))
    if name == "Rational":
        if len(node.args) != 2 or node.keywords:
            raise SreprError("Rational: expected two integers")
        p, q = _int(node.args[0], "Rational"), _int(node.args[1], "Rational")
        if q == 0:
            raise SreprError("Rational: a zero denominator")
        return sp.Rational(p, q)
    if name == "Float":
        return _float(node)
    cls, unevaluated = _classes().get(name, (None, False))
    if cls is None:
        raise SreprError(f"{name!r} is not a constructor this reader builds")
    if node.keywords:
        raise SreprError(f"{name}: unexpected keyword argument {node.keywords[0].arg!r}")
    args = [_build(a, depth + 1) for a in node.args]
    return cls(*args, evaluate=False) if unevaluated else cls(*args)


def read_srepr(text: str) -> sp.Basic:
    """The sympy object whose ``srepr`` is ``text``, built from the whitelist in the module docstring.

    Raises :class:`SreprError` for anything else; evaluates nothing of the text."""
    if not isinstance(text, str):
        raise SreprError(f"expected srepr text, got {type(text).__name__}")
    if len(text) > MAX_SREPR_LENGTH:
        raise SreprError(f"text of {len(text)} characters (at most {MAX_SREPR_LENGTH})")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise SreprError(f"not srepr text: {type(exc).__name__}") from None
    try:
        return _build(tree.body, 0)
    except SreprError:
        raise
    except (TypeError, ValueError, ArithmeticError, AttributeError, IndexError, KeyError, RecursionError,
            NotImplementedError) as exc:
        # a whitelisted constructor refused its arguments (a changed file): not an expression we wrote
        raise SreprError(f"cannot build: {type(exc).__name__}: {exc}") from None
