"""A strict parser for the part of PromQL the Grafana dashboard uses.

It knows metric selectors with label matchers, range selectors (``[5m]``,
``[$__rate_interval]``), numbers, the functions in :data:`FUNCTIONS`, the
aggregations in :data:`AGGREGATIONS` with ``by``/``without``, the binary
operators in :data:`BINARY` and parentheses, plus Grafana's ``$variables`` in
label values and ranges. Anything else (an unknown function, an unbalanced
bracket, a range where a range cannot be, a stray token) raises
:class:`PromQLError`. :func:`parse` returns the metric names the expression reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Function -> the kind of each argument: "range" (a range vector), "scalar", "vector".
FUNCTIONS: dict[str, tuple[str, ...]] = {
    "rate": ("range",),
    "increase": ("range",),
    "histogram_quantile": ("scalar", "vector"),
    "time": (),
}
AGGREGATIONS = frozenset({"sum", "max", "min", "avg", "count"})
BINARY = frozenset({"+", "-", "*", "/", ">", "<", ">=", "<="})
MATCH_OPS = frozenset({"=", "!=", "=~", "!~"})
#: Grafana's own range variables.
GRAFANA_RANGES = frozenset({"$__rate_interval", "$__interval", "$__range"})

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?(?![a-zA-Z]))
    |(?P<duration>\d+[smhdwy](?:\d+[smhdwy])*)
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)
    |(?P<variable>\$[a-zA-Z_][a-zA-Z0-9_]*)
    |(?P<op>=~|!~|!=|>=|<=|[-+*/=<>])
    |(?P<punct>[(){}\[\],])
    )""",
    re.VERBOSE,
)


class PromQLError(ValueError):
    """The expression is not in the subset, or is not PromQL."""


@dataclass
class _Tokens:
    items: list[tuple[str, str]]
    pos: int = 0
    metrics: set[str] = field(default_factory=set)
    variables: set[str] = field(default_factory=set)

    def peek(self) -> tuple[str, str]:
        return self.items[self.pos] if self.pos < len(self.items) else ("end", "")

    def take(self, kind: str | None = None, text: str | None = None) -> str:
        got_kind, got = self.peek()
        if (kind is not None and got_kind != kind) or (text is not None and got != text):
            wanted = text or kind
            raise PromQLError(f"expected {wanted!r} at token {self.pos}, got {got or 'the end'!r}")
        self.pos += 1
        return got


def tokenize(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text.rstrip()):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise PromQLError(f"cannot read {text[pos : pos + 10]!r}")
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def parse(text: str) -> tuple[set[str], set[str]]:
    """The metric names and the ``$variables`` ``text`` uses; :class:`PromQLError` when it is not valid."""
    tokens = _Tokens(tokenize(text))
    kind = _expr(tokens)
    if tokens.peek()[0] != "end":
        raise PromQLError(f"unexpected {tokens.peek()[1]!r} after a complete expression")
    if kind == "range":
        raise PromQLError("a range vector cannot be graphed; wrap it in rate() or increase()")
    return tokens.metrics, tokens.variables


def _expr(tokens: _Tokens) -> str:
    kind = _unary(tokens)
    while tokens.peek()[0] == "op" and tokens.peek()[1] in BINARY:
        tokens.take()
        right = _unary(tokens)
        if "range" in (kind, right):
            raise PromQLError("a range vector cannot be an operand")
        kind = "vector" if "vector" in (kind, right) else "scalar"
    return kind


def _unary(tokens: _Tokens) -> str:
    if tokens.peek() == ("op", "-"):
        tokens.take()
    kind, text = tokens.peek()
    if kind == "number":
        tokens.take()
        return "scalar"
    if text == "(" and kind == "punct":
        tokens.take()
        inner = _expr(tokens)
        tokens.take("punct", ")")
        return inner
    if kind == "name" and text in AGGREGATIONS:
        return _aggregation(tokens)
    if kind == "name" and tokens.items[tokens.pos + 1 : tokens.pos + 2] == [("punct", "(")]:
        return _call(tokens)
    if kind == "name":
        return _selector(tokens)
    raise PromQLError(f"unexpected {text or 'end'!r}")


def _labels(tokens: _Tokens) -> None:
    tokens.take("punct", "(")
    tokens.take("name")
    while tokens.peek() == ("punct", ","):
        tokens.take()
        tokens.take("name")
    tokens.take("punct", ")")


def _aggregation(tokens: _Tokens) -> str:
    tokens.take("name")
    grouped = tokens.peek()[1] in ("by", "without")
    if grouped:
        tokens.take()
        _labels(tokens)
    tokens.take("punct", "(")
    if _expr(tokens) != "vector":
        raise PromQLError("an aggregation takes an instant vector")
    tokens.take("punct", ")")
    if not grouped and tokens.peek()[1] in ("by", "without"):
        tokens.take()
        _labels(tokens)
    return "vector"


def _call(tokens: _Tokens) -> str:
    name = tokens.take("name")
    if name not in FUNCTIONS:
        raise PromQLError(f"unknown function {name!r}")
    tokens.take("punct", "(")
    for index, wanted in enumerate(FUNCTIONS[name]):
        if index:
            tokens.take("punct", ",")
        got = _expr(tokens)
        if got != wanted:
            raise PromQLError(f"{name}() argument {index + 1} must be a {wanted}, got a {got}")
    tokens.take("punct", ")")
    return "scalar" if name == "time" else "vector"


def _selector(tokens: _Tokens) -> str:
    tokens.metrics.add(tokens.take("name"))
    if tokens.peek() == ("punct", "{"):
        tokens.take()
        while tokens.peek() != ("punct", "}"):
            tokens.take("name")
            op = tokens.take("op")
            if op not in MATCH_OPS:
                raise PromQLError(f"{op!r} is not a label matcher")
            value = tokens.take("string")
            tokens.variables.update(re.findall(r"\$\{?([a-zA-Z_][a-zA-Z0-9_]*)", value))
            if tokens.peek() != ("punct", "}"):
                tokens.take("punct", ",")
        tokens.take("punct", "}")
    if tokens.peek() != ("punct", "["):
        return "vector"
    tokens.take()
    kind, text = tokens.peek()
    if kind == "variable" and text in GRAFANA_RANGES:
        tokens.take()
    elif kind == "variable":
        tokens.variables.add(tokens.take()[1:])
    else:
        tokens.take("duration")
    tokens.take("punct", "]")
    return "range"
