"""One walker from sympy trees to fast evaluators, dispatching on the node's class as sympy's printers do.

Several places turn a sympy tree into something fast to evaluate: Arb closures of a log-density at a
point and its constants folded to Arb numbers (:mod:`rdpsym.numeric.fast`), Arb ball enclosures on a box
(:mod:`rdpsym.numeric.balls`), mpmath closures (:mod:`rdpsym.claims.fasteval`), and numpy code text:
values, the error estimate of that code and its Taylor-mode series (:mod:`rdpsym.compile.emitter`,
:mod:`~rdpsym.compile.errors`, :mod:`~rdpsym.compile.taylor`). Each is a *target*: a subclass of
:class:`Translator` that writes one method per node class it knows and inherits the walk, the refusal
and the shape of boolean conditions.

Dispatch (the design of sympy's ``Printer._print``, ``sympy/printing/printer.py``): ``translate(node)``
calls ``_translate_<Class>`` of the first class along ``type(node).__mro__`` that has one, so a method for
``Rational`` serves ``Integer``, ``Half`` and ``One`` unless a target writes a more specific one. Other
families of methods work the same way (``condition`` calls ``_condition_<Class>``; a target may add its
own, e.g. the numpy target's ``_logabs_<Class>``) through :meth:`Translator.dispatch`.

A node no class of which has a method is refused: :meth:`Translator.refuse` raises the target's
``error`` naming the node, so an unknown function is never given a silently wrong value. (The mpmath
target overrides it with sympy's own ``evalf`` of the node: slower, never wrong.)

Behaviour is chosen by what a node is, never by its name: only sympy's own classes are matched by name
(``__module__`` in sympy), classes below an undefined function are skipped (``Function("gamma")`` is
not a gamma function) and so is a renamed subclass of a known function (sympy's printer rules), so a
user's function named ``exp`` never reaches ``_translate_exp``.

A target with a table of functions (class -> implementation) lists it in ``unary`` and ``binary``; the
base's ``_translate_Function`` looks the node's exact class up there (a subclass of ``exp`` is not
``exp``) and hands the implementation to the target's :meth:`Translator.apply`.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Mapping, Sequence

import sympy as sp
from sympy.core.function import AppliedUndef, Function, UndefinedFunction

__all__ = ["Unsupported", "Translator", "EnvironmentClosures", "DecidedConditions"]


class Unsupported(ValueError):
    """A node the target has no translation for."""


def _named_classes(node_class: type) -> tuple[type, ...]:
    """The classes of ``node_class``'s MRO whose names may select a method (see the module docstring)."""
    classes = node_class.__mro__
    for undefined in (AppliedUndef, UndefinedFunction):
        if undefined in classes:
            classes = classes[classes.index(undefined):]
    if Function in classes:
        # a subclass that renames a known function is not that function (sympy's printers do the same)
        i = classes.index(Function)
        classes = tuple(c for c in classes[:i] if c.__name__ == classes[0].__name__ or c.__name__.endswith("Base")) \
            + classes[i:]
    return tuple(c for c in classes if (c.__module__ or "").split(".")[0] == "sympy")


@functools.lru_cache(maxsize=4096)
def _method(translator: type, family: str, node_class: type) -> Callable | None:
    """The method ``_<family>_<Class>`` of ``translator`` for the first class along the MRO that has one."""
    for cls in _named_classes(node_class):
        method = getattr(translator, f"_{family}_{cls.__name__}", None)
        if method is not None:
            return method
    return None


class Translator:
    """The walk shared by every target (see the module docstring).

    Subclasses write ``_translate_<Class>(self, node)`` for the values they know and, for conditions,
    either ``_condition_<Class>`` methods or the four combinators :meth:`truth`, :meth:`conjunction`,
    :meth:`disjunction`, :meth:`negation` and :meth:`relation`, which the base's condition methods call.
    """

    #: the exception a refusal raises (a target's callers catch their own)
    error: type[Exception] = Unsupported
    #: what the target makes, for messages ("ball arithmetic", "float code", ...)
    target: str = "this translation"
    #: exact function class -> implementation, for functions of one and of two arguments
    unary: Mapping[type, Any] = {}
    binary: Mapping[type, Any] = {}

    # -- the walk ------------------------------------------------------------------------------------
    def translate(self, node: sp.Basic):
        """The target's translation of the value ``node``."""
        return self.dispatch("translate", node)

    def condition(self, node):
        """The target's translation of the boolean ``node`` (Python ``True``/``False`` are sympy's)."""
        if isinstance(node, bool):
            node = sp.true if node else sp.false
        return self.dispatch("condition", node)

    def dispatch(self, family: str, node):
        """``_<family>_<Class>(node)`` for the first class of ``node`` that has one; else :meth:`refuse`."""
        method = _method(type(self), family, type(node))
        if method is None:
            return self.refuse(node, family)
        return method(self, node)

    def refuse(self, node, family: str = "translate"):
        """Raise :attr:`error`: the target has no translation for ``node``."""
        if family == "condition":
            raise self.error(f"no {self.target} for the condition {sp.sstr(node)[:60]}")
        raise self.error(f"no {self.target} for {type(node).__name__} ({sp.sstr(node)[:60]})")

    # -- functions from the tables ------------------------------------------------------------------
    def _translate_Function(self, e: sp.Function):
        table = self.unary if len(e.args) == 1 else self.binary if len(e.args) == 2 else {}
        op = table.get(type(e))
        if op is None:
            return self.refuse(e)
        return self.apply(op, e)

    def apply(self, op, e: sp.Function):
        """The translation of ``e``, a function found in the tables, given its implementation ``op``."""
        return self.refuse(e)

    # -- conditions ----------------------------------------------------------------------------------
    def _condition_BooleanTrue(self, c):
        return self.truth(True)

    def _condition_BooleanFalse(self, c):
        return self.truth(False)

    def _condition_And(self, c):
        return self.conjunction([self.condition(a) for a in c.args])

    def _condition_Or(self, c):
        return self.disjunction([self.condition(a) for a in c.args])

    def _condition_Not(self, c):
        return self.negation(self.condition(c.args[0]))

    def _condition_Relational(self, c):
        return self.relation(c.rel_op, c.lhs, c.rhs)

    # The combinators of a target that translates conditions (a target that never meets one, such as
    # the error estimate, leaves them).
    def truth(self, value: bool):
        """A condition that is always ``value``."""
        raise NotImplementedError

    def conjunction(self, parts: Sequence):
        raise NotImplementedError

    def disjunction(self, parts: Sequence):
        raise NotImplementedError

    def negation(self, part):
        raise NotImplementedError

    def relation(self, op: str, lhs: sp.Expr, rhs: sp.Expr):
        """``lhs op rhs`` with ``op`` one of ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``."""
        raise NotImplementedError


class EnvironmentClosures(Translator):
    """A target whose translations are closures of an environment ``{symbol: value}`` (the mpmath and
    ball targets): a symbol reads its value there."""

    def _translate_Symbol(self, e):
        # itemgetter, not a lambda: the closures of a target call it for every leaf of every evaluation,
        # and a builtin adds no Python frame there
        return operator.itemgetter(e)


class DecidedConditions:
    """Conditions as closures of one argument (an environment, or the point) returning a plain bool:
    the combinators of a target whose relations are always decided, or raise (the mpmath and the Arb
    point targets; the ball target's conditions are three-valued)."""

    def truth(self, value: bool):
        return lambda env: value

    def conjunction(self, parts: Sequence):
        return lambda env: all(p(env) for p in parts)

    def disjunction(self, parts: Sequence):
        return lambda env: any(p(env) for p in parts)

    def negation(self, part):
        return lambda env: not part(env)
