"""The stored form of cached values: JSON data whose sympy objects are their ``srepr`` text.

The derivation cache (:mod:`rdpsym.derive.cache`), the series cache (:mod:`rdpsym.compile.series`) and the
verification tables (:mod:`rdpsym.verification.table`) store their values through :class:`DataCodec`: the
text is read back by the whitelisting reader :func:`rdpsym.specify.text.srepr.read_srepr` (never ``eval``,
``sympify`` or pickle), and a value is written only when it reads back identical (field by field, tree by
tree). The codec knows nothing of what it stores: each store names its classes.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math

import sympy as sp

from .._cache import Unstorable
from ..specify.text.srepr import read_srepr

__all__ = ["DataCodec"]


class DataCodec:
    """Values as JSON data: ``None``, bools, ints, strings, floats (exact, as hex), lists, tuples, dicts,
    sympy objects (``srepr`` text, read back by :func:`~rdpsym.specify.text.srepr.read_srepr`), and the
    dataclasses and enumerations named in ``types`` (field by field). Anything else raises
    :class:`~rdpsym._cache.Unstorable`; ``decode`` builds nothing but these.

    ``encode`` writes a value only when it reads back identical (:meth:`same`): a tree the reader cannot
    rebuild exactly is never stored."""

    def __init__(self, types):
        self.types = {t.__name__: t for t in types}

    # -- writing -------------------------------------------------------------------------------------
    def to_data(self, value):
        if isinstance(value, enum.Enum):  # before str and int: a StrEnum is a str
            if self.types.get(type(value).__name__) is not type(value):
                raise Unstorable(f"the enumeration {type(value).__qualname__} is not stored as data")
            return {"enum": [type(value).__name__, value.value]}
        if value is None or isinstance(value, (bool, str, int)):
            return value
        if isinstance(value, float):
            return {"float": value.hex()}
        if isinstance(value, sp.Basic):
            return {"sympy": sp.srepr(value, order="none")}  # args in their own order: rebuilt node for node
        if isinstance(value, tuple):
            return {"tuple": [self.to_data(v) for v in value]}
        if isinstance(value, list):
            return [self.to_data(v) for v in value]
        if isinstance(value, dict):
            return {"dict": [[self.to_data(k), self.to_data(v)] for k, v in value.items()]}
        cls = type(value)
        if dataclasses.is_dataclass(value) and self.types.get(cls.__name__) is cls:
            return {"dataclass": [cls.__name__, {f.name: self.to_data(getattr(value, f.name))
                                                 for f in dataclasses.fields(value)}]}
        raise Unstorable(f"a {cls.__module__}.{cls.__qualname__} is not stored as data")

    def encode(self, value) -> bytes:
        try:
            text = json.dumps(self.to_data(value), separators=(",", ":"))
            back = self.decode(text.encode())
        except Unstorable:
            raise
        except (ValueError, TypeError, RecursionError) as exc:  # e.g. a tree nested deeper than the reader reads
            raise Unstorable(f"the value does not read back: {type(exc).__name__}: {exc}") from None
        if not self.same(back, value):
            raise Unstorable("the value does not read back identical")
        return text.encode()

    # -- reading -------------------------------------------------------------------------------------
    def from_data(self, data):
        if data is None or isinstance(data, (bool, str, int)):
            return data
        if isinstance(data, list):
            return [self.from_data(v) for v in data]
        if not (isinstance(data, dict) and len(data) == 1):
            raise ValueError(f"unexpected {type(data).__name__} in stored data")
        (tag, body), = data.items()
        if tag == "sympy" and isinstance(body, str):
            return read_srepr(body)
        if tag == "tuple" and isinstance(body, list):
            return tuple(self.from_data(v) for v in body)
        if tag == "float" and isinstance(body, str):
            return float.fromhex(body)
        if tag == "dict" and isinstance(body, list) and all(isinstance(kv, list) and len(kv) == 2 for kv in body):
            return {self.from_data(k): self.from_data(v) for k, v in body}
        if tag in ("enum", "dataclass") and isinstance(body, list) and len(body) == 2 and isinstance(body[0], str):
            cls = self.types.get(body[0])
            if tag == "enum" and isinstance(cls, type) and issubclass(cls, enum.Enum):
                return cls(body[1])
            if tag == "dataclass" and dataclasses.is_dataclass(cls) and isinstance(body[1], dict):
                names = {f.name for f in dataclasses.fields(cls)}
                if set(body[1]) != names:
                    raise ValueError(f"stored {body[0]} fields {sorted(body[1])} are not {sorted(names)}")
                return cls(**{k: self.from_data(v) for k, v in body[1].items()})
        raise ValueError(f"unexpected {tag!r} in stored data")

    def decode(self, payload: bytes):
        return self.from_data(json.loads(payload.decode("utf-8")))

    @classmethod
    def same(cls, a, b) -> bool:
        """``a`` and ``b`` are the same value: same types, equal sympy trees, every dataclass field
        (those ``==`` skips too), floats equal or both NaN."""
        if type(a) is not type(b):
            return False
        if isinstance(a, float):
            return a == b or (math.isnan(a) and math.isnan(b))
        if isinstance(a, (tuple, list)):
            return len(a) == len(b) and all(cls.same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(cls.same(a[k], b[k]) for k in a)
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            return all(cls.same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
        return a == b
