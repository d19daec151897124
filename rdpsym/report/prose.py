"""The plain-text strings of a mechanism as LaTeX prose: pair labels, parameter meanings, titles.

A mechanism's author writes ``"f(D) = 0, f(D') = t, |t| <= sensitivity"`` as the label of a pair and
``"width u - l of the query's range [l, u]"`` as a parameter's meaning: text for a terminal. A paper
sets the formulas in them as mathematics, with the parameters' own symbols:
"$f(D) = 0$, $f(D') = t$, $|t| \\le \\Delta$". :func:`prose` finds the formulas in such a text (runs of
operands joined by operators, function applications such as ``f(D)``, norms, sets, single-letter
variables, Greek letters) and typesets them; everything else is escaped text. :func:`noun_phrase`
turns a title ("Truncated geometric mechanism") into the phrase a sentence needs ("the truncated
geometric mechanism").
"""

from __future__ import annotations

import re
from typing import Mapping

from .latex import escape_text

__all__ = ["prose", "math_text", "noun_phrase"]

#: Greek letters by name and by character, as LaTeX
_GREEK_NAMES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda",
                "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega")
_GREEK = {name: "\\" + ("varepsilon" if name == "epsilon" else name) for name in _GREEK_NAMES}
_GREEK_CHARS = {"α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon",
                "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu",
                "ν": r"\nu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho", "σ": r"\sigma", "τ": r"\tau",
                "φ": r"\varphi", "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega", "Δ": r"\Delta", "Γ": r"\Gamma",
                "Λ": r"\Lambda", "Σ": r"\Sigma", "Φ": r"\Phi", "Ω": r"\Omega"}
#: functions a formula may apply by name, and how they print
_FUNCTIONS = {"exp": r"\exp", "log": r"\log", "ln": r"\ln", "sqrt": r"\sqrt", "max": r"\max", "min": r"\min",
              "sin": r"\sin", "cos": r"\cos", "tanh": r"\tanh", "cosh": r"\cosh", "sinh": r"\sinh"}
_RELATIONS = {"<=": r"\le", ">=": r"\ge", "!=": r"\neq", "==": "=", "≤": r"\le", "≥": r"\ge", "≠": r"\neq",
              "∝": r"\propto", "->": r"\to", "=": "=", "<": "<", ">": ">"}
_ARITHMETIC = {"+": "+", "-": "-", "*": r"\,", "/": "/", "**": "^", "^": "^", "×": r"\times"}

# one token: a word (letters, digits, primes), a number, a norm or absolute value, a brace set, an
# operator, a bracket, a Greek letter, white space, anything else
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>\d+(?:\.\d+)?(?![A-Za-z]))
  | (?P<word>[A-Za-z][A-Za-z0-9]*(?:'s(?![A-Za-z])|'*))
  | (?P<greek>[α-ωΑ-Ω]'*)
  | (?P<op><=|>=|!=|==|->|\*\*|[-+*/^=<>≤≥≠∝×])
  | (?P<norm>\|\|[^|]+\|\|(?:_\w+)?|\|[^|\s][^|]*\|)
  | (?P<set>\{[^{}]*\})
  | (?P<open>[(\[])
  | (?P<close>[)\]])
  | (?P<sub>_\w+)
  | (?P<poss>'s(?![A-Za-z]))
  | (?P<other>.)
""", re.X)


class _Tok:
    __slots__ = ("kind", "text", "math")

    def __init__(self, kind: str, text: str):
        self.kind, self.text, self.math = kind, text, False


def _tokens(text: str) -> list[_Tok]:
    return [_Tok(m.lastgroup, m.group()) for m in _TOKEN.finditer(text)]


def _operand_kind(tokens: list[_Tok], i: int, symbols: Mapping[str, str]) -> bool:
    """Whether token ``i`` can stand in a formula (a variable, a number, a symbol, a bracket)."""
    t = tokens[i]
    if t.kind in ("number", "greek", "norm", "set", "open", "close", "sub"):
        return True
    if t.kind == "word":
        return _is_symbol_word(t.text, symbols) or _applied(tokens, i)
    return False


def _is_symbol_word(word: str, symbols: Mapping[str, str]) -> bool:
    bare = word.rstrip("'")
    return len(bare) == 1 or bare in symbols or bare.lower() in _GREEK


def _applied(tokens: list[_Tok], i: int) -> bool:
    """A word immediately followed by "(" (no space): a function applied, f(D), exp(...)."""
    return i + 1 < len(tokens) and tokens[i + 1].kind == "open" and tokens[i + 1].text == "("


def _strong(tokens: list[_Tok], i: int, symbols: Mapping[str, str]) -> bool:
    """A token that is mathematics on its own: a relation, a Greek letter, a norm, a set, a one-letter
    variable other than the article "a", a symbol name, a function applied."""
    t = tokens[i]
    if t.kind in ("greek", "norm", "set"):
        return True
    if t.kind == "op":
        return t.text in _RELATIONS or _between_operands(tokens, i, symbols)
    if t.kind == "word":
        bare = t.text.rstrip("'")
        if _applied(tokens, i):
            return len(bare) <= 3 or bare in _FUNCTIONS
        compound = i >= 2 and tokens[i - 1].text == "-" and tokens[i - 2].kind == "number"  # 2-D
        return (len(bare) == 1 and bare not in ("a", "A", "I") and not compound) or bare.lower() in _GREEK
    return False


def _neighbour(tokens: list[_Tok], i: int, step: int) -> int | None:
    j = i + step
    while 0 <= j < len(tokens) and tokens[j].kind == "space":
        j += step
    return j if 0 <= j < len(tokens) else None


def _between_operands(tokens: list[_Tok], i: int, symbols: Mapping[str, str]) -> bool:
    """An arithmetic operator with an operand on each side; a hyphen inside a word (log-odds,
    report-noisy-max, 2-D) is not one."""
    t = tokens[i]
    left, right = _neighbour(tokens, i, -1), _neighbour(tokens, i, 1)
    if left is None or right is None:
        return t.text == "-" and right is not None and _operand_kind(tokens, right, symbols) and left is None
    if t.text == "-" and left == i - 1 and right == i + 1:
        # a hyphen: next to a word of several letters (log-odds, ε-DP, k-ary), or between a number and
        # a word (2-D, 3-outcome); x-1 stays a difference
        a, b = tokens[left], tokens[right]
        if any(u.kind == "word" and len(u.text) > 1 for u in (a, b)) or (a.kind == "number" and b.kind == "word"):
            return False
    return _operand_kind(tokens, left, symbols) and _operand_kind(tokens, right, symbols)


def _next_to_relation(tokens: list[_Tok], i: int) -> bool:
    """A word that is the bound of a relation (``|t| <= sensitivity``): the relation needs it."""
    j = _neighbour(tokens, i, -1)
    return j is not None and tokens[j].kind == "op" and tokens[j].text in _RELATIONS


def _mark(tokens: list[_Tok], symbols: Mapping[str, str]) -> None:
    """Mark the tokens of formulas: each strong token, grown over operands and operators around it,
    and over the brackets of a function it applies."""
    n = len(tokens)
    for i in range(n):
        if _strong(tokens, i, symbols):
            tokens[i].math = True
    changed = True
    while changed:
        changed = False
        for i in range(n):
            t = tokens[i]
            if t.math or t.kind == "space":
                continue
            left, right = _neighbour(tokens, i, -1), _neighbour(tokens, i, 1)
            near_op = any(j is not None and tokens[j].math and tokens[j].kind == "op" for j in (left, right))
            if t.kind == "op" and _between_operands(tokens, i, symbols) and any(
                    j is not None and tokens[j].math for j in (left, right)):
                t.math = changed = True
            elif t.kind in ("number", "sub") and near_op:
                t.math = changed = True
            elif t.kind == "word" and near_op and (_is_symbol_word(t.text, symbols) or _next_to_relation(tokens, i)):
                t.math = changed = True
            elif t.kind == "sub" and left == i - 1 and tokens[left].math:
                t.math = changed = True
    _balance(tokens)


def _balance(tokens: list[_Tok]) -> None:
    """A bracket pair is mathematics when something inside or the word it applies to is; then every
    token inside is too (f(D'), exp(ε u/(2Δ)), Bin(n, 1/2))."""
    stack = []
    for i, t in enumerate(tokens):
        if t.kind == "open":
            stack.append(i)
        elif t.kind == "close" and stack:
            j = stack.pop()
            applied = j > 0 and tokens[j - 1].kind == "word" and tokens[j - 1].math
            inside = tokens[j + 1:i]
            content = [u for u in inside if u.kind != "space"]
            formula_inside = any(u.math for u in content) and all(
                u.math or u.kind in ("number", "op", "other", "open", "close") for u in content)
            if applied or formula_inside:
                for u in tokens[j:i + 1]:
                    u.math = True
                if applied:
                    continue


def _math_latex(tokens: list[_Tok], symbols: Mapping[str, str]) -> str:
    out = []
    for k, t in enumerate(tokens):
        text = t.text
        if t.kind == "space":
            out.append(" ")
        elif t.kind == "word":
            bare, primes = text.rstrip("'"), text[len(text.rstrip("'")):]
            if bare in symbols:
                word = symbols[bare]
            elif bare.lower() in _GREEK and bare == bare.lower():
                word = _GREEK[bare.lower()]
            elif k + 1 < len(tokens) and tokens[k + 1].text == "(" and len(bare) > 1:
                word = _FUNCTIONS.get(bare, r"\operatorname{%s}" % bare)
            elif len(bare) > 1:
                word = r"\text{%s}" % escape_text(bare)
            else:
                word = bare
            out.append(word + primes)
        elif t.kind == "greek":
            out.append(_GREEK_CHARS.get(text[0], "?") + text[1:])
        elif t.kind == "op":
            out.append(" %s " % (_RELATIONS.get(text) or _ARITHMETIC.get(text, text)))
        elif t.kind == "norm":
            body, _, sub = text.partition("_") if text.startswith("||") else (text, "", "")
            inner = body.strip("|")
            bars = r"\|" if body.startswith("||") else "|"
            out.append(bars + _math_latex(_tokens(inner), symbols) + bars + (f"_{{{sub}}}" if sub else ""))
        elif t.kind == "set":
            out.append(r"\{" + _math_latex(_tokens(text[1:-1]), symbols) + r"\}")
        elif t.kind == "sub":
            out.append("_{%s}" % text[1:])
        elif t.kind == "other" and text == ",":
            out.append(",")
        else:
            out.append(escape_text(text).replace("$", ""))
    s = "".join(out)
    s = re.sub(r"\^ *(\w|\\[A-Za-z]+)", r"^{\1}", s)
    return re.sub(r" +", " ", s).strip()


def prose(text: str, symbols: Mapping[str, str] | None = None) -> str:
    """``text`` as LaTeX prose: its formulas in math mode (``<=`` as ``\\le``, ``||t||_2`` as a norm,
    each name in ``symbols`` (a parameter's name -> its LaTeX symbol) as that symbol, Greek letters and
    their names as symbols), the rest escaped text. ``symbols`` apply only inside formulas and to
    Greek names: "the sensitivity" stays a word, ``|t| <= sensitivity`` becomes ``$|t| \\le \\Delta$``."""
    symbols = dict(symbols or {})
    tokens = _tokens(_superscripts(text))
    _mark(tokens, symbols)
    out, run = [], []

    def flush():
        if not run:
            return
        # spaces at the ends of a formula stay outside it; a trailing comma too
        while run and run[-1].kind == "space":
            run.pop()
        trail = ""
        if run and run[-1].text in (",", ";", "."):
            trail = run.pop().text
        if run:
            out.append("$" + _math_latex(run, symbols) + "$")
        out.append(trail)
        run.clear()

    for k, t in enumerate(tokens):
        inside = t.math or (t.kind == "space" and run and _continues(tokens, k))
        if inside:
            run.append(t)
            continue
        trailing_space = []
        while run and run[-1].kind == "space":
            trailing_space.append(run.pop())
        flush()
        out.append(" " * len(trailing_space))
        out.append(escape_text(t.text))
    flush()
    return "".join(out)


def _superscripts(text: str) -> str:
    return text.replace("²", "^2").replace("³", "^3")


def _continues(tokens: list[_Tok], k: int) -> bool:
    """A space inside a formula: the next non-space token is part of it too."""
    j = _neighbour(tokens, k, 1)
    return j is not None and tokens[j].math


def math_text(text: str, symbols: Mapping[str, str] | None = None) -> str:
    """``text`` read as one formula, in LaTeX math (no dollars): for a parameter's LaTeX symbol given as
    plain text."""
    return _math_latex(_tokens(_superscripts(text)), dict(symbols or {}))


#: names that keep their capital inside a sentence (people a distribution or mechanism is named after)
_PROPER = {"Laplace", "Gauss", "Gaussian", "Cauchy", "Poisson", "Skellam", "Student", "Bernoulli", "Rényi",
           "Dirichlet", "Weibull", "Gumbel", "Pareto", "Erlang", "Bessel", "Huber", "Warner", "Wishart",
           "Hadamard", "Fourier", "Markov", "Lévy", "Kullback", "Leibler", "Mironov", "Bayes", "Bayesian"}


def noun_phrase(title: str, context: str = "") -> str:
    """A title as a noun phrase inside a sentence: the first word in lower case unless it is a name
    (a person's, or written with a capital inside ``context``, e.g. the mechanism's description), and
    "the" before a phrase whose head is "mechanism" ("Truncated geometric mechanism" -> "the truncated
    geometric mechanism"; "Randomized response" -> "randomized response")."""
    words = title.strip().split(" ")
    if not words or not words[0]:
        return title
    first = words[0]
    if first in ("The", "A", "An"):
        words[0] = first.lower()
        return " ".join(words)
    head = re.split(r"[-']", first)[0]
    capital_inside = re.search(r"(?<![.!?]\s)(?<!^)\b%s\b" % re.escape(head), context) is not None
    if head[:1].isupper() and head[1:].islower() and head.isalpha() and head not in _PROPER and not capital_inside:
        words[0] = first[0].lower() + first[1:]
    phrase = " ".join(words)
    main = re.split(r"\s[(]|\sover\s|\swith\s|\sof\s|,", phrase)[0]
    if main.split(" ")[-1] in ("mechanism", "mechanisms"):
        phrase = "the " + phrase
    return phrase
