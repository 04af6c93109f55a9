"""Writing spec values as text: whole new files, and the pieces the round-trip
writer (:mod:`core.spec_yaml`) puts into a person's file.

New files are block style with the contract's key order (:data:`core.spec.KEY_ORDER`
at the top, the models' field order in ``task`` and ``retry``): a mapping is never
written as one ``{...}`` line, except an empty one (``env: {}``). A list of plain
values is written ``[a, b]`` while it fits in :data:`FLOW_LIST_WIDTH` columns, as
the contract's own examples are; a longer one, or one holding mappings, one item a
line.

Scalars go through PyYAML's emitter with the reader's resolver table
(:data:`core.specfile.TEXT_IMPLICIT_RESOLVERS`): text that would read back as
something else (``yes``, ``1:30``, ``007``) is quoted, and a date is written plain
because the reader keeps dates as text. Lines are never wrapped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from core.spec import KEY_ORDER, Retry, Task
from core.specfile import TEXT_IMPLICIT_RESOLVERS

#: Width past which a list of plain values is written one item a line.
FLOW_LIST_WIDTH = 80
_NO_WRAP = 1 << 20
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_LINE_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")

Path = tuple[Any, ...]
"""Where a value sits in the spec: ``()`` for the top, ``("task",)`` inside the task."""


def _aliases(model: Any) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


#: The key order of each mapping whose keys the contract knows.
KEY_ORDERS: dict[Path, list[str]] = {(): KEY_ORDER, ("task",): _aliases(Task), ("retry",): _aliases(Retry)}


def rank(path: Path, key: Any) -> int | None:
    """Where ``key`` goes among its siblings in the contract's order; None when the contract has no order."""
    order = KEY_ORDERS.get(path)
    if order is None or key not in order:
        return None
    return order.index(key)


def contract_order(keys: Sequence[Any], path: Path) -> list[Any]:
    """``keys`` in the contract's order; keys it does not know keep their order, after the known ones."""
    known = sorted((k for k in keys if rank(path, k) is not None), key=lambda k: rank(path, k) or 0)
    return known + [k for k in keys if rank(path, k) is None]


def insertion_points(existing: Sequence[Any], added: Sequence[Any], path: Path) -> list[tuple[int | None, list[Any]]]:
    """Where each added key goes among the existing ones: after existing key number ``i``, or
    before the first one for ``None``; added keys with no place in the contract go last.

    A key goes after the last existing key that the contract orders before it, so a file
    written in another order keeps it and each new key still lands beside its neighbours.
    """
    groups: dict[int | None, list[Any]] = {}
    last = len(existing) - 1 if existing else None
    for key in contract_order(added, path):
        r = rank(path, key)
        anchor: int | None = last
        if r is not None:
            ranks = [rank(path, k) for k in existing]
            before = [i for i, ri in enumerate(ranks) if ri is not None and ri < r]
            anchor = before[-1] if before else None
        groups.setdefault(anchor, []).append(key)
    return sorted(groups.items(), key=lambda item: -1 if item[0] is None else item[0])


def merged_order(old: Mapping[Any, Any] | None, new: Mapping[Any, Any], path: Path = ()) -> dict[Any, Any]:
    """``new`` with the keys in ``old``'s order and added keys where :func:`insertion_points` puts them,
    nested mappings likewise; what ``old`` did not have is in the contract's order."""
    if old is None:
        return {k: _ordered(new[k], (*path, k)) for k in contract_order(list(new), path)}
    kept = [k for k in old if k in new]
    added = [k for k in new if k not in old]
    order: list[Any] = []
    points = dict(insertion_points(kept, added, path))
    order += points.get(None, [])
    for i, key in enumerate(kept):
        order.append(key)
        order += points.get(i, [])
    out: dict[Any, Any] = {}
    for key in order:
        value, before = new[key], old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            out[key] = merged_order(before, value, (*path, key))
        else:
            out[key] = _ordered(value, (*path, key))
    return out


def _ordered(value: Any, path: Path) -> Any:
    if isinstance(value, Mapping):
        return merged_order(None, value, path)
    if isinstance(value, list):
        return [_ordered(item, path) for item in value]
    return value


def arrange(old: Any, new: Any, path: Path) -> Any:
    """``new`` ordered to replace ``old``: a mapping keeps ``old``'s key order (:func:`merged_order`),
    anything new in it is in the contract's order."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return merged_order(old, new, path)
    return _ordered(new, path)


# --- nodes --------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """PyYAML's emitter with the reader's resolver table."""

    yaml_implicit_resolvers = TEXT_IMPLICIT_RESOLVERS


class _IndentedDumper(_Dumper):
    """Block lists indented under their key (``  - a``) instead of level with it."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def is_scalar(value: Any) -> bool:
    return not isinstance(value, Mapping | list)


def scalar_node(value: Any, style: str | None = None) -> yaml.ScalarNode:
    """A scalar's node; ``style`` is the quoting to keep (``'`` ``"`` ``|`` ``>`` or None for plain)
    and the emitter falls back to one that can hold the value."""
    node = yaml.representer.SafeRepresenter().represent_data(value)
    assert isinstance(node, yaml.ScalarNode)
    if isinstance(value, str) and _LINE_BREAKS.search(value) and style not in ("|", ">"):
        style = '"'  # one line, with \n escapes: single quotes and plain would fold the text over lines
    node.style = style if isinstance(value, str) else None
    return node


def _flow_list(value: list[Any]) -> bool:
    if not value:
        return True
    if not all(is_scalar(item) for item in value):
        return False
    return len(inline_text(value, flow=True)) <= FLOW_LIST_WIDTH


def to_node(value: Any, *, flow: bool = False) -> yaml.Node:
    """The node of a value written fresh, keys in the order given (see :func:`arrange`): block mappings,
    short plain lists in flow style, empty collections as ``{}`` and ``[]``; all flow when ``flow``."""
    if isinstance(value, Mapping):
        pairs = [(scalar_node(k), to_node(v, flow=flow)) for k, v in value.items()]
        return yaml.MappingNode(_MAP, pairs, flow_style=flow or not value)
    if isinstance(value, list):
        as_flow = flow or _flow_list(value)
        return yaml.SequenceNode(_SEQ, [to_node(item, flow=as_flow) for item in value], flow_style=as_flow)
    return scalar_node(value)


@dataclass(frozen=True)
class Layout:
    """How a file is indented, so that what is added to it looks like the rest of it."""

    step: int = 2
    """Columns a nested mapping is indented by (PyYAML accepts 2-9)."""
    indent_lists: bool = True
    """Block list items indented under their key (``  - a``); False for level with it (``- a``)."""
    newline: str = "\n"


def _serialize(node: yaml.Node, layout: Layout) -> str:
    dumper = _IndentedDumper if layout.indent_lists else _Dumper
    text = yaml.serialize(node, Dumper=dumper, indent=layout.step, width=_NO_WRAP, allow_unicode=True)
    assert isinstance(text, str)
    return text


def _indent(text: str, column: int, layout: Layout, *, first: bool = True) -> str:
    """``text``'s lines moved right by ``column`` (the first one too unless ``first`` is False)."""
    lines = text.split("\n")
    pad = " " * column
    out = [(pad + line if line and (first or i) else line) for i, line in enumerate(lines)]
    return layout.newline.join(out)


def inline_text(value: Any, *, style: str | None = None, flow: bool = False) -> str:
    """A scalar, or a collection in flow style, as one line of text to write after ``key:`` or ``- ``,
    or inside ``[...]`` when ``flow`` (where fewer characters may stay unquoted)."""
    node = scalar_node(value, style) if is_scalar(value) else to_node(value, flow=True)
    if flow:
        text = _serialize(yaml.SequenceNode(_SEQ, [node], flow_style=True), Layout()).rstrip("\n")
        return text[1:-1]
    wrapped = yaml.MappingNode(_MAP, [(scalar_node("k"), node)], flow_style=False)
    return _serialize(wrapped, Layout()).rstrip("\n")[len("k: ") :]


def value_text(value: Any, column: int, layout: Layout, *, style: str | None = None) -> str:
    """A value kept on its key's line: one line, except a block scalar (``|``) whose lines follow,
    indented from ``column`` (the key's)."""
    node = scalar_node(value, style) if is_scalar(value) else to_node(value, flow=True)
    wrapped = yaml.MappingNode(_MAP, [(scalar_node("k"), node)], flow_style=False)
    text = _serialize(wrapped, layout)[len("k: ") :].rstrip("\n")
    return _indent(text, column, layout, first=False)


def is_inline(value: Any) -> bool:
    """Whether a value written fresh stays on its key's line (scalars, ``{}``, ``[]``, short lists)."""
    return is_scalar(value) or not value or (isinstance(value, list) and _flow_list(value))


def block_lines(value: Any, column: int, layout: Layout) -> str:
    """The lines under ``key:`` for a mapping or list written fresh; ``column`` is the key's."""
    wrapped = yaml.MappingNode(_MAP, [(scalar_node("k"), to_node(value))], flow_style=False)
    text = _serialize(wrapped, layout)
    return _indent(text.split("\n", 1)[1], column, layout)


def pair_lines(key: Any, value: Any, column: int, layout: Layout) -> str:
    """``key: value`` written fresh at ``column``, ending with a line break."""
    node = yaml.MappingNode(_MAP, [(scalar_node(key), to_node(value))], flow_style=False)
    return _indent(_serialize(node, layout), column, layout)


def item_lines(value: Any, column: int, layout: Layout) -> str:
    """``- value`` written fresh with its dash at ``column``, ending with a line break."""
    node = yaml.SequenceNode(_SEQ, [to_node(value)], flow_style=False)
    return _indent(_serialize(node, layout), column, layout)


def block_text(data: Mapping[str, Any], *, keep_order: bool = False, layout: Layout | None = None) -> str:
    """A new spec file: block style, keys in the contract's order (in ``data``'s own order when
    ``keep_order``); never one ``{...}`` line, even without a task."""
    layout = layout or Layout()
    if not data:
        return "{}" + layout.newline
    node = to_node(data if keep_order else merged_order(None, data))
    assert isinstance(node, yaml.MappingNode)
    node.flow_style = False
    return _indent(_serialize(node, layout), 0, layout)


def json_text(data: Mapping[str, Any], like: str | None = None) -> str:
    """``data`` as JSON, laid out like the text ``like`` (indent, one line or not, ASCII escapes, line
    ends); keys in ``data``'s order."""
    if like is None:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    body = like.strip()
    indent: str | int | None = None
    if "\n" in body:
        found = re.search(r"\n([ \t]+)\S", body)
        indent = found.group(1) if found else 2
    ascii_only = "\\u" in like and like.isascii()
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    newline = "\r\n" if "\r\n" in like else "\n"
    text = text.replace("\n", newline)
    return text + newline if like.endswith(("\n", "\r")) else text
