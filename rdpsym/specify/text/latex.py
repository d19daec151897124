"""The safe parser of LaTeX formula text (what papers write): a hand-written tokenizer
(:mod:`.latex_tokens`) and recursive-descent parser; no sympy LaTeX parser, nothing evaluated.

Shares its names, functions, limits and guarded construction with the Python-syntax parser (:mod:`.common`).

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

from collections.abc import Callable, Mapping

import sympy as sp

from .common import FUNCTIONS, GREEK_COMMANDS, MAX_DEPTH, FormulaError, Builder, run_parser
from .latex_tokens import Token, tokenize_latex

__all__ = ["parse_latex"]

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

class _LatexParser:
    def __init__(self, text: str, builder: Builder):
        self.text = text
        self.toks = tokenize_latex(text)
        self.i = 0
        self.b = builder
        self.abs_depth = 0

    # -- token helpers -------------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def advance(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, kind: str, value: str | None = None) -> bool:
        return self.tok.is_(kind, value)

    def opener_key(self, t: Token) -> str | None:
        key = ("\\" + t.value) if t.kind == "cmd" else t.value if t.kind == "sym" else None
        return key if key in _OPENERS else None

    def expect_closer(self, closer: str, opener: Token) -> None:
        t = self.tok
        key = ("\\" + t.value) if t.kind == "cmd" else t.value
        if t.kind in ("cmd", "sym") and key == closer:
            self.advance()
            return
        raise FormulaError(
            f"expected '{closer}' to close '{opener.shown()}' (opened at position {opener.pos}), "
            f"found '{t.shown()}'", t.pos)

    def starts_atom(self, t: Token) -> bool:
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
                rest = Token("num", t.value[1:], t.pos + 1, t.end)
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

    def error_number(self, t: Token):
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

    def delimited(self, depth: int, opener: Token, closer: str, allow_commas: bool = False) -> list[sp.Expr]:
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
            elif word in FUNCTIONS and word not in self.b.symbols:
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
            def piece(u: Token) -> str | None:
                if u.kind in ("num", "letter") or u.kind == "cmd" and u.value in GREEK_COMMANDS:
                    self.advance()
                    return u.value
                if u.kind == "cmd" and u.value in _TEXT_COMMANDS:
                    self.advance()
                    return self.text_argument()
                if u.is_("sym", ","):
                    self.advance()
                    return ","
                return None

            return self.braced_word(self.advance(), piece, "subscript", "unsupported subscript content '{}'")
        raise FormulaError(f"expected a subscript, found '{t.shown()}'", t.pos)

    def text_argument(self) -> str:
        """The letters inside ``{...}`` after ``\\mathrm`` and friends."""
        opener = self.tok
        if not opener.is_("sym", "{"):
            if opener.kind == "letter":
                self.advance()
                return opener.value
            raise FormulaError(f"expected '{{' after a text command, found '{opener.shown()}'", opener.pos)
        def piece(u: Token) -> str | None:
            if u.kind in ("letter", "num") or u.is_("sym", "_"):
                self.advance()
                return u.value
            return None

        return self.braced_word(self.advance(), piece, "text command", "unsupported content '{}' in a text command")

    def braced_word(self, opener: Token, piece: Callable[[Token], str | None], what: str, unsupported: str) -> str:
        """The text of a brace group whose ``{`` (``opener``) is consumed, read token by token:
        ``piece(token)`` consumes a token it accepts and returns its text, or returns None (an error
        ``unsupported.format(token)``); an empty group is an error naming ``what``."""
        parts = []
        while not self.at("sym", "}"):
            part = piece(self.tok)
            if part is None:
                raise FormulaError(unsupported.format(self.tok.shown()), self.tok.pos)
            parts.append(part)
        self.expect_closer("}", opener)
        if not parts:
            raise FormulaError(f"empty {what}", opener.pos)
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
            if fname in FUNCTIONS:
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

    def function(self, name: str, t: Token, depth: int) -> sp.Expr:
        """A function application; ``t`` is the function's token (already consumed)."""
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
        multi = FUNCTIONS[name][1] > 1
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
            # with brackets, exponents after them apply to the result: \log(x)^2
            return self.scripts(self.applied(name, args, base, power, t), depth)
        if not self.starts_atom(nxt) and not nxt.is_("sym", "-") and not nxt.is_("sym", "+"):
            raise FormulaError(f"function '{t.shown()}' needs an argument", nxt.pos)
        return self.applied(name, [self.signed(depth + 1)], base, power, t)

    def applied(self, name: str, args: list[sp.Expr], base, power, t: Token) -> sp.Expr:
        """``name(*args)``, with a logarithm's ``base`` as its last argument, raised to ``power``
        (``(exponent, position)`` of ``\\log^2``) if there is one."""
        if base is not None:
            args = [*args, base]
        result = self.b.call(name, args, t.pos, t.shown())
        if power is not None:
            result = self.b.power(result, power[0], power[1])
        return result


def parse_latex(
    text: str, symbols: Mapping[str, sp.Basic], *, functions: set[str] | None = None
) -> sp.Expr:
    """Parse a LaTeX formula (``\\frac{\\alpha}{2\\sigma^2}``) into a sympy expression.

    See the module docstring for the grammar. Raises :class:`FormulaError` with a position.
    """
    return run_parser(_LatexParser, text, symbols, functions)
