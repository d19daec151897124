"""The tokenizer of the safe LaTeX parser (:mod:`.latex`): commands, numbers, letters and symbols,
each with its offset in the original text; ignored commands (spacing, ``\\left``...) are dropped here."""

from __future__ import annotations

import re

from .common import GREEK, MAX_DEPTH, OPERATOR_CHARS, FormulaError, describe_character

_IGNORED_COMMANDS = frozenset({
    ",", ";", ":", "!", " ", ">", "quad", "qquad", "displaystyle", "textstyle", "scriptstyle",
    "left", "right", "middle", "big", "Big", "bigg", "Bigg", "bigl", "Bigl", "biggl", "Biggl",
    "bigr", "Bigr", "biggr", "Biggr", "bigm", "Bigm", "biggm", "Biggm", "limits", "nolimits",
})


class Token:
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


def tokenize_latex(text: str) -> list[Token]:
    toks: list[Token] = []
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
                raise FormulaError(f"unsupported character {describe_character(name[0])}", i + 1)
            if name in "\n\t\r":
                name = " "
            if name not in _IGNORED_COMMANDS:
                toks.append(Token("cmd", name, i, j))
            i = j
            continue
        if ch.isdigit() and ch.isascii() or (ch == "." and i + 1 < n and text[i + 1].isdigit() and text[i + 1].isascii()):
            m = re.compile(r"[0-9]*(?:\.[0-9]+)?").match(text, i)
            j = m.end() if m.end() > i else i + 1
            toks.append(Token("num", text[i:j], i, j))
            i = j
            continue
        if ch.isascii() and ch.isalpha():
            toks.append(Token("letter", ch, i, i + 1))
            i += 1
            continue
        if ch in GREEK:
            toks.append(Token("cmd", GREEK[ch], i, i + 1))
            i += 1
            continue
        if ch == "∞":
            toks.append(Token("cmd", "infty", i, i + 1))
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
            toks.append(Token("sym", ch, i, i + 1))
            i += 1
            continue
        raise FormulaError(f"unsupported character {describe_character(ch)}", i)
    if braces:
        raise FormulaError("unbalanced brace '{' (never closed)", braces[-1])
    toks.append(Token("eof", "", n, n))
    return toks
