r"""Certificates: a claim's verdict as data that anyone can check again without searching.

Every ``proved``, ``confirmed`` and ``refuted`` verdict of :func:`rdpsym.check_claim` carries a
:class:`Certificate` (``ClaimVerdict.certificate``). ``to_json()`` writes it, :meth:`Certificate.from_json`
reads it back (a safe reader: JSON, and sympy trees as ``srepr`` text rebuilt node by node from a whitelist
by :func:`rdpsym.specify.text.srepr.read_srepr`, never ``eval``/``sympify``), and :meth:`Certificate.check`
replays it (:mod:`rdpsym.claims.replay`), returning a :class:`~rdpsym.claims.replay.Replay` with ``.holds``
and ``.reason``.

The JSON object (schema ``rdpsym-certificate/1``; sympy trees are ``srepr`` text, enclosures are Arb
balls written exactly as ``{"mid": "m*2^e", "rad": "m*2^e"}``, :func:`~rdpsym.claims.partition.ball_text`):

``schema``, ``verdict``, ``relation``
    ``"rdpsym-certificate/1"``; ``"proved"``, ``"confirmed"`` or ``"refuted"``; ``"=="``, ``"<="`` or ``">="``.
``claim``, ``divergence``
    The claim and the derived divergence for the order (``null`` for a curve without a closed form).
``order``, ``alpha_range``, ``conditions``, ``max_divergence``, ``exceptional``
    ``"alpha"`` (the curve), ``"1"``, ``"oo"`` or another positive rational order ``"p"`` or ``"p/q"``
    (:mod:`rdpsym.claims.orders`); the open range of orders; the finiteness conditions (the divergence
    is +oo outside them); D_oo; the removable orders ``[alpha, value]`` of the closed form.
``parameters``, ``fixed``
    ``[{name, symbol, domain, typical, log_scale}]`` (symbol and domain as srepr) and the values held fixed.
``mechanism``
    ``{name, variable, support}`` (srepr) of the densities, or ``null`` for a target without densities.
``binding``
    Points ``{order, alpha, values, directions, divergence, claim, numeric}`` at which the divergence was
    checked against independent numerics of the densities (``directions``: the ``[P, Q]`` pairs there,
    srepr; ``divergence``, ``claim``: their enclosures, the claim's binding the claim as well, null at a
    point of another order; ``numeric``: ``{value, error}`` as decimal text).
``tolerance``
    ``{digits, dps}``: a violation counts beyond ``10^-digits`` (relative); values at ``dps`` digits.
``method`` and its data
    ``"rewrite"`` with ``proof``: ``{route, steps: [{rule, inputs, output}]}`` (:mod:`rdpsym.claims.prove`),
    and for the route ``subsampling`` also ``base``: ``{route, label, divergence, max_divergence, rate,
    directions, points: [{alpha, values, enclosure, numeric}]}`` (:mod:`rdpsym.claims.subsampling`);
    ``"boxes"`` with ``boxes``: ``{difference, runs: [{box, status, partition}]}`` (the certified pass's
    partition of each box, :mod:`rdpsym.claims.partition`, and the rewrite that simplified claim - D);
    ``"counterexample"`` with ``counterexample``: ``{alpha, values, claim, divergence}`` (enclosures there);
    ``"points"`` with ``points``: ``[{alpha, values, claim, divergence}]`` (a verdict confirmed at points
    only, with each point's enclosures or, for a numeric curve, its certified value ``{mid, rad}``).
``target``, ``evidence``
    The target's label and the verdict's evidence (text, not checked).
``curve`` (only for a claim about one order other than 1 and oo, on a closed-form curve)
    The curve in alpha whose value at the order the divergence is; replay checks that it is.

A malformed certificate raises :class:`CertificateError` naming the field; another schema is refused by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ..specify.params import Parameter
from ..specify.text.srepr import SreprError, read_srepr
from .orders import order_from_key, order_key, order_name
from .partition import BallTextError, Partition, ball_from_text
from .rewrite import RULES, Step

__all__ = ["Certificate", "CertificateError", "SCHEMA", "METHODS", "MAX_TEXT"]

#: the layout and its version
SCHEMA = "rdpsym-certificate/1"
#: the methods a certificate may use, and the key of each one's data
METHODS = {"rewrite": "proof", "boxes": "boxes", "counterexample": "counterexample", "points": "points"}
#: the longest certificate text read, in characters
MAX_TEXT = 50_000_000
_VERDICTS = ("proved", "confirmed", "refuted")
_COMMON = ("schema", "verdict", "relation", "claim", "divergence", "order", "alpha_range", "conditions",
           "max_divergence", "exceptional", "parameters", "fixed", "mechanism", "binding", "tolerance", "method",
           "target", "evidence", "curve")


class CertificateError(ValueError):
    """A certificate that cannot be read: ``field`` names where, the message says which rule it broke."""

    def __init__(self, field_name: str, rule: str):
        super().__init__(f"certificate: {field_name}: {rule}")
        self.field = field_name


@dataclass(frozen=True)
class Certificate:
    """A verdict's certificate (module docstring). Build one with :func:`rdpsym.claims.attest.attest`
    (``check_claim`` does), read one with :meth:`from_json`, replay it with :meth:`check`."""

    verdict: str
    relation: str
    claim: sp.Expr
    divergence: sp.Expr | None
    order: Any
    alpha_range: tuple
    conditions: sp.Basic
    max_divergence: sp.Expr | None
    exceptional: tuple
    parameters: tuple[Parameter, ...]
    fixed: dict
    mechanism: dict | None
    binding: tuple[dict, ...]
    digits: int
    dps: int
    method: str
    data: Any
    target: str = ""
    evidence: tuple[str, ...] = field(default=(), compare=False)
    #: for a claim about one order a != 1, oo of a closed-form curve: the curve (in alpha) whose value at a
    #: the divergence is; replay checks that it is, so the order cannot be changed alone
    curve: sp.Expr | None = None

    # -- replay -------------------------------------------------------------------------------------
    def check(self):
        """Replay the certificate: no search, no budgeted step (:mod:`rdpsym.claims.replay`); a
        :class:`~rdpsym.claims.replay.Replay` with ``holds`` and ``reason``."""
        from .replay import replay

        return replay(self)

    # -- writing ------------------------------------------------------------------------------------
    def to_data(self) -> dict:
        """The certificate as JSON-ready data (module docstring)."""
        order = order_key(self.order)
        out = {
            "schema": SCHEMA, "verdict": self.verdict, "relation": self.relation, "claim": sp.srepr(self.claim),
            "divergence": _srepr_or_none(self.divergence), "order": order,
            "alpha_range": [sp.srepr(sp.S(v)) for v in self.alpha_range], "conditions": sp.srepr(self.conditions),
            "max_divergence": _srepr_or_none(self.max_divergence),
            "exceptional": [[sp.srepr(a), sp.srepr(v)] for a, v in self.exceptional],
            "parameters": [{"name": p.name, "symbol": sp.srepr(p.symbol), "domain": sp.srepr(p.domain),
                            "typical": [float(t) for t in p.typical], "log_scale": bool(p.log_scale)}
                           for p in self.parameters],
            "fixed": {k: sp.srepr(sp.S(v)) for k, v in self.fixed.items()},
            "mechanism": None if self.mechanism is None else {
                "name": self.mechanism["name"], "variable": _variable_text(self.mechanism["variable"]),
                "support": sp.srepr(self.mechanism["support"])},
            "binding": [_binding_data(b) for b in self.binding],
            "tolerance": {"digits": self.digits, "dps": self.dps},
            "method": self.method,
            METHODS[self.method]: _method_data(self.method, self.data),
            "target": self.target,
            "evidence": list(self.evidence),
        }
        if self.curve is not None:
            out["curve"] = sp.srepr(self.curve)
        return out

    def to_json(self, indent: int | None = None) -> str:
        """The certificate as JSON text (schema ``rdpsym-certificate/1``)."""
        return json.dumps(self.to_data(), indent=indent, allow_nan=False)

    # -- reading ------------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, text: str) -> "Certificate":
        """Read a certificate, checking every field (:class:`CertificateError` names the first bad one)."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="strict")
        if not isinstance(text, str):
            raise CertificateError("(text)", f"expected JSON text, got {type(text).__name__}")
        if len(text) > MAX_TEXT:
            raise CertificateError("(text)", f"{len(text)} characters (at most {MAX_TEXT})")
        try:
            data = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            raise CertificateError("(text)", f"not JSON: {exc}") from None
        return cls.from_data(data)

    @classmethod
    def from_data(cls, data) -> "Certificate":
        """A certificate from :meth:`to_data`'s output (see :meth:`from_json`)."""
        if not isinstance(data, dict):
            raise CertificateError("(top level)", "expected a JSON object")
        schema = data.get("schema")
        if schema != SCHEMA:
            raise CertificateError("schema", f"this reader reads {SCHEMA!r}; the certificate is {schema!r}")
        method = _choice(data, "method", tuple(METHODS))
        allowed = set(_COMMON) | {METHODS[method]}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise CertificateError(unknown[0], f"unknown key (the keys of {SCHEMA} with method {method!r} are "
                                               f"{', '.join(sorted(allowed))})")
        verdict = _choice(data, "verdict", _VERDICTS)
        relation = _choice(data, "relation", ("==", "<=", ">="))
        order = _order(data.get("order"), "order")
        parameters = _parameters(data)
        tolerance = _field(data, "tolerance", dict)
        digits, dps = (_int_in(tolerance.get(k), f"tolerance.{k}", 1, 10_000) for k in ("digits", "dps"))
        alpha_range = _field(data, "alpha_range", list)
        if len(alpha_range) != 2:
            raise CertificateError("alpha_range", "expected [low, high]")
        mech = data.get("mechanism", "missing")
        if mech == "missing":
            raise CertificateError("mechanism", "missing (null for a target without densities)")
        if mech is not None:
            if not isinstance(mech, dict) or set(mech) != {"name", "variable", "support"}:
                raise CertificateError("mechanism", "expected {name, variable, support}")
            mech = {"name": _text(mech["name"], "mechanism.name"),
                    "variable": _variable(mech["variable"]),
                    "support": _tree(mech["support"], "mechanism.support", sp.Set)}
        exceptional = _field(data, "exceptional", list)
        evidence = _field(data, "evidence", list)
        return cls(
            verdict=verdict, relation=relation, claim=_tree(data.get("claim"), "claim", sp.Basic),
            divergence=_tree_or_none(data, "divergence"), order=order,
            alpha_range=tuple(_tree(v, f"alpha_range[{i}]", sp.Expr) for i, v in enumerate(alpha_range)),
            conditions=_tree(data.get("conditions"), "conditions", sp.Basic),
            max_divergence=_tree_or_none(data, "max_divergence"),
            exceptional=tuple(_pair(e, f"exceptional[{i}]") for i, e in enumerate(exceptional)),
            parameters=parameters,
            fixed={_text(k, "fixed"): _tree(v, f"fixed.{k}", sp.Expr) for k, v in _field(data, "fixed", dict).items()},
            mechanism=mech,
            binding=tuple(_binding(b, f"binding[{i}]") for i, b in enumerate(_field(data, "binding", list))),
            digits=digits, dps=dps, method=method, data=_method(method, data.get(METHODS[method]), METHODS[method]),
            target=_text(data.get("target", ""), "target"),
            evidence=tuple(_text(e, f"evidence[{i}]") for i, e in enumerate(evidence)),
            curve=_tree(data["curve"], "curve", sp.Expr) if data.get("curve") is not None else None)

    # -- what it is about ---------------------------------------------------------------------------
    @property
    def free(self) -> tuple[Parameter, ...]:
        """The parameters not held fixed."""
        return tuple(p for p in self.parameters if p.name not in self.fixed)

    def describe(self) -> str:
        return (f"{self.verdict} by {self.method}: {order_name(self.order)} of {self.target or 'the target'} {self.relation} "
                f"{sp.sstr(self.claim)}")


# ---------------------------------------------------------------------------------------------------
# writing helpers
# ---------------------------------------------------------------------------------------------------
def _srepr_or_none(e):
    return None if e is None else sp.srepr(e)


def _binding_data(b: dict) -> dict:
    return {"order": b["order"], "alpha": sp.srepr(b["alpha"]), "values": {k: sp.srepr(v) for k, v in b["values"].items()},
            "directions": [[sp.srepr(P), sp.srepr(Q)] for P, Q in b["directions"]], "divergence": b["divergence"],
            "claim": b["claim"], "numeric": b["numeric"]}


def _point_data(pt: dict) -> dict:
    return {"alpha": sp.srepr(pt["alpha"]), "values": {k: sp.srepr(v) for k, v in pt["values"].items()},
            "claim": pt["claim"], "divergence": pt["divergence"]}


def _method_data(method: str, data) -> Any:
    if method == "rewrite":
        out = {"route": data["route"], "steps": [s.to_data() for s in data["steps"]]}
        if "base" in data:
            out["base"] = _base_data(data["base"])
        return out
    if method == "boxes":
        return {"difference": None if data["difference"] is None else data["difference"].to_data(),
                "runs": [{"box": r["box"], "status": r["status"], "partition": r["partition"].to_data()}
                         for r in data["runs"]]}
    if method == "counterexample":
        return _point_data(data)
    return [_point_data(pt) for pt in data]


# ---------------------------------------------------------------------------------------------------
# reading helpers: each names the field it reads
# ---------------------------------------------------------------------------------------------------
def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _field(data: dict, key: str, kind: type):
    if key not in data:
        raise CertificateError(key, "missing")
    value = data[key]
    if not isinstance(value, kind):
        raise CertificateError(key, f"expected a JSON {_KINDS.get(kind, kind.__name__)}")
    return value


_KINDS = {dict: "object", list: "array", str: "string"}


def _order(value, where: str):
    """The order a certificate (or one of its binding points) is about, read strictly (never evaluated)."""
    try:
        return order_from_key(value, where)
    except ValueError as exc:
        raise CertificateError(where, str(exc).split(": ", 1)[1]) from None


def _choice(data: dict, key: str, choices: tuple) -> str:
    value = data.get(key)
    if value not in choices:
        raise CertificateError(key, f"expected one of {', '.join(map(repr, choices))}; got {str(value)[:40]!r}")
    return value


def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise CertificateError(where, "expected a string")
    return value


def _variable_text(variable) -> str:
    """A mechanism's variable as srepr: a symbol, or a vector's symbols as a sympy Tuple (a Python tuple's
    srepr is a tuple display, which the safe reader does not build)."""
    return sp.srepr(sp.Tuple(*variable) if isinstance(variable, tuple) else variable)


def _variable(text):
    """A mechanism's variable read back: a symbol, or a vector's symbols as the tuple a mechanism holds."""
    tree = _tree(text, "mechanism.variable", (sp.Symbol, sp.Tuple))
    if isinstance(tree, sp.Tuple):
        if not tree.args or not all(isinstance(x, sp.Symbol) for x in tree.args):
            raise CertificateError("mechanism.variable", "expected a symbol or a Tuple of symbols")
        return tuple(tree.args)
    return tree


def _int_in(value, where: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise CertificateError(where, f"expected an integer in [{lo}, {hi}]")
    return value


def canonical(tree: sp.Basic) -> sp.Basic:
    """The tree with every sum and product built again by sympy (its arguments in sympy's order, numeric
    factors merged), the rest as read.

    ``srepr`` prints the terms of a sum and the factors of a product in print order, and a coefficient
    -2 as the factors -1 and 2; the safe reader builds nodes unevaluated, as printed. Evaluating the sums
    and products again (which only orders terms and multiplies numbers, each bounded by the reader) gives
    back the tree sympy made, so the trees of a certificate compare node for node with recomputed ones."""
    if not tree.args:
        return tree
    args = tuple(canonical(a) for a in tree.args)
    if isinstance(tree, (sp.Add, sp.Mul)):
        return type(tree)(*args)
    if args == tree.args:
        return tree
    try:
        return tree.func(*args, evaluate=False)
    except TypeError:  # constructors without the keyword (Interval, Range, Tuple, ExprCondPair, ...)
        return tree.func(*args)


def _tree(text, where: str, kind: type | tuple = sp.Basic):
    """A sympy tree from srepr text, by the safe reader, made canonical (:func:`canonical`)."""
    if not isinstance(text, str):
        raise CertificateError(where, "expected srepr text (a string)")
    try:
        tree = canonical(read_srepr(text))
    except SreprError as exc:
        raise CertificateError(where, f"not a sympy tree this reader builds: {exc}") from None
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise CertificateError(where, f"cannot build: {type(exc).__name__}: {exc}") from None
    if not isinstance(tree, kind):
        wanted = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise CertificateError(where, f"expected a {wanted}, got {type(tree).__name__}")
    return tree


def _tree_or_none(data: dict, key: str, within: str = ""):
    where = f"{within}.{key}" if within else key
    if key not in data:
        raise CertificateError(where, "missing (null when there is none)")
    return None if data[key] is None else _tree(data[key], where, sp.Expr)


def _pair(value, where: str) -> tuple:
    if not (isinstance(value, list) and len(value) == 2):
        raise CertificateError(where, "expected [alpha, value]")
    return _tree(value[0], f"{where}[0]", sp.Expr), _tree(value[1], f"{where}[1]", sp.Expr)


def _parameters(data: dict) -> tuple[Parameter, ...]:
    out = []
    for i, p in enumerate(_field(data, "parameters", list)):
        where = f"parameters[{i}]"
        if not isinstance(p, dict) or set(p) != {"name", "symbol", "domain", "typical", "log_scale"}:
            raise CertificateError(where, "expected {name, symbol, domain, typical, log_scale}")
        name = _text(p["name"], f"{where}.name")
        symbol = _tree(p["symbol"], f"{where}.symbol", sp.Symbol)
        if symbol.name != name:
            raise CertificateError(f"{where}.symbol", f"the symbol {symbol.name!r} is not named {name!r}")
        typical = p["typical"]
        if not (isinstance(typical, list) and len(typical) == 2 and all(
                isinstance(t, (int, float)) and not isinstance(t, bool) for t in typical) and typical[0] < typical[1]):
            raise CertificateError(f"{where}.typical", "expected [low, high] numbers with low < high")
        if not isinstance(p["log_scale"], bool):
            raise CertificateError(f"{where}.log_scale", "expected true or false")
        out.append(Parameter(name, symbol, _tree(p["domain"], f"{where}.domain", sp.Set),
                             (float(typical[0]), float(typical[1])), name, log_scale=p["log_scale"]))
    return tuple(out)


def _values(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise CertificateError(where, "expected an object of parameter values")
    return {_text(k, where): _tree(v, f"{where}.{k}", sp.Expr) for k, v in value.items()}


def _ball(value, where: str):
    try:
        return ball_from_text(value, where)
    except BallTextError as exc:
        raise CertificateError(where, str(exc)) from None


def _binding(b, where: str) -> dict:
    if not isinstance(b, dict) or set(b) != {"order", "alpha", "values", "directions", "divergence", "claim", "numeric"}:
        raise CertificateError(where, "expected {order, alpha, values, directions, divergence, claim, numeric}")
    directions = b["directions"]
    if not (isinstance(directions, list) and directions and all(isinstance(d, list) and len(d) == 2 for d in directions)):
        raise CertificateError(f"{where}.directions", "expected [[P, Q], ...] (at least one)")
    numeric = _numeric(b["numeric"], f"{where}.numeric")
    _ball(b["divergence"], f"{where}.divergence")
    _ball(b["claim"], f"{where}.claim")
    _order(b["order"], f"{where}.order")
    return {"order": b["order"],
            "alpha": _tree(b["alpha"], f"{where}.alpha", sp.Expr), "values": _values(b["values"], f"{where}.values"),
            "directions": tuple((_tree(P, f"{where}.directions[{i}][0]", sp.Expr),
                                 _tree(Q, f"{where}.directions[{i}][1]", sp.Expr)) for i, (P, Q) in enumerate(directions)),
            "divergence": b["divergence"], "claim": b["claim"], "numeric": dict(numeric)}


def _decimal(value, where: str) -> str:
    import re

    if not (isinstance(value, str) and re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?inf", value)):
        raise CertificateError(where, "expected a decimal number as text")
    return value


def _point(value, where: str) -> dict:
    if not isinstance(value, dict) or set(value) != {"alpha", "values", "claim", "divergence"}:
        raise CertificateError(where, "expected {alpha, values, claim, divergence}")
    _ball(value["claim"], f"{where}.claim")
    _ball(value["divergence"], f"{where}.divergence")
    return {"alpha": _tree(value["alpha"], f"{where}.alpha", sp.Expr), "values": _values(value["values"], f"{where}.values"),
            "claim": value["claim"], "divergence": value["divergence"]}


_BASE_KEYS = {"route", "label", "divergence", "max_divergence", "rate", "directions", "points"}


def _base(value, where: str) -> dict:
    """The base of a proof through subsampling (:mod:`rdpsym.claims.subsampling`)."""
    if not isinstance(value, dict) or set(value) != _BASE_KEYS:
        raise CertificateError(where, "expected {" + ", ".join(sorted(_BASE_KEYS)) + "}")
    directions = value["directions"]
    if not (isinstance(directions, list) and directions and all(isinstance(d, list) and len(d) == 2 for d in directions)):
        raise CertificateError(f"{where}.directions", "expected [[P, Q], ...] (at least one)")
    points = value["points"]
    if not (isinstance(points, list) and points):
        raise CertificateError(f"{where}.points", "expected [{alpha, values, enclosure, numeric}, ...] (at least one)")
    return {"route": _text(value["route"], f"{where}.route"), "label": _text(value["label"], f"{where}.label"),
            "divergence": _tree(value["divergence"], f"{where}.divergence", sp.Expr),
            "max_divergence": _tree_or_none(value, "max_divergence", where),
            "rate": _tree(value["rate"], f"{where}.rate", sp.Expr),
            "directions": tuple((_tree(P, f"{where}.directions[{i}][0]", sp.Expr),
                                 _tree(Q, f"{where}.directions[{i}][1]", sp.Expr)) for i, (P, Q) in enumerate(directions)),
            "points": tuple(_base_point(p, f"{where}.points[{i}]") for i, p in enumerate(points))}


def _numeric(numeric, where: str) -> dict:
    """Independent numerics ``{value, error}``, each a decimal number as text."""
    if not (isinstance(numeric, dict) and set(numeric) == {"value", "error"}):
        raise CertificateError(where, "expected {value, error}")
    for k in ("value", "error"):
        _decimal(numeric[k], f"{where}.{k}")
    return numeric


def _base_point(value, where: str) -> dict:
    if not isinstance(value, dict) or set(value) != {"alpha", "values", "enclosure", "numeric"}:
        raise CertificateError(where, "expected {alpha, values, enclosure, numeric}")
    numeric = _numeric(value["numeric"], f"{where}.numeric")
    _ball(value["enclosure"], f"{where}.enclosure")
    return {"alpha": _tree(value["alpha"], f"{where}.alpha", sp.Expr), "values": _values(value["values"], f"{where}.values"),
            "enclosure": value["enclosure"], "numeric": dict(numeric)}


def _base_data(base: dict) -> dict:
    return {"route": base["route"], "label": base["label"], "divergence": sp.srepr(base["divergence"]),
            "max_divergence": _srepr_or_none(base["max_divergence"]), "rate": sp.srepr(sp.S(base["rate"])),
            "directions": [[sp.srepr(P), sp.srepr(Q)] for P, Q in base["directions"]],
            "points": [{"alpha": sp.srepr(p["alpha"]), "values": {k: sp.srepr(v) for k, v in p["values"].items()},
                        "enclosure": p["enclosure"], "numeric": p["numeric"]} for p in base["points"]]}


def _step(value, where: str) -> Step:
    if not isinstance(value, dict) or set(value) != {"rule", "inputs", "output"}:
        raise CertificateError(where, "expected {rule, inputs, output}")
    rule = value["rule"]
    if rule not in RULES:
        raise CertificateError(f"{where}.rule", f"unknown rewrite {str(rule)[:40]!r}")
    if not isinstance(value["inputs"], list):
        raise CertificateError(f"{where}.inputs", "expected a list of srepr texts")
    inputs = tuple(_tree(e, f"{where}.inputs[{i}]") for i, e in enumerate(value["inputs"]))
    return Step(rule, inputs, _tree(value["output"], f"{where}.output"))


def _method(method: str, value, key: str):
    if method == "rewrite":
        through_base = isinstance(value, dict) and value.get("route") == "subsampling"
        keys = {"route", "steps", "base"} if through_base else {"route", "steps"}
        if not isinstance(value, dict) or set(value) != keys or not isinstance(value["steps"], list):
            raise CertificateError(key, "expected {" + ", ".join(sorted(keys)) + "}" + (
                " (a proof through subsampling carries its base)" if through_base else ""))
        out = {"route": _text(value["route"], f"{key}.route"),
               "steps": tuple(_step(s, f"{key}.steps[{i}]") for i, s in enumerate(value["steps"]))}
        if through_base:
            out["base"] = _base(value["base"], f"{key}.base")
        return out
    if method == "boxes":
        if not isinstance(value, dict) or set(value) != {"difference", "runs"} or not isinstance(value["runs"], list):
            raise CertificateError(key, "expected {difference, runs: [...]}")
        runs = []
        for i, r in enumerate(value["runs"]):
            where = f"{key}.runs[{i}]"
            if not isinstance(r, dict) or set(r) != {"box", "status", "partition"}:
                raise CertificateError(where, "expected {box, status, partition}")
            if r["status"] not in ("proved", "certified"):
                raise CertificateError(f"{where}.status", "expected 'proved' or 'certified'")
            try:
                partition = Partition.from_data(r["partition"], f"{where}.partition")
            except BallTextError as exc:
                raise CertificateError(f"{where}.partition", str(exc)) from None
            runs.append({"box": _text(r["box"], f"{where}.box"), "status": r["status"], "partition": partition})
        difference = None if value["difference"] is None else _step(value["difference"], f"{key}.difference")
        return {"difference": difference, "runs": tuple(runs)}
    if method == "counterexample":
        return _point(value, key)
    if not isinstance(value, list):
        raise CertificateError(key, "expected a list of points")
    return tuple(_point(pt, f"{key}[{i}]") for i, pt in enumerate(value))
