"""YAML of spec files: the safe reader that keeps dates and times as the text a person wrote,
and the writer of new files with the same table of types (a date written plain, ``yes`` quoted).

Reading keeps every bound of :mod:`core.spec.bounds`: no key twice, values nested at most
:data:`~core.spec.bounds.MAX_SPEC_DEPTH` deep, at most :data:`~core.spec.bounds.MAX_SPEC_ALIASES`
aliases (``*name``), and at most :data:`~core.spec.bounds.MAX_SPEC_VALUES` values and
:data:`~core.spec.bounds.MAX_SPEC_BYTES` characters once the aliases are expanded.
:mod:`core.spec.files` reads a spec file through :func:`load_yaml` unless it is JSON, which
needs none of PyYAML (nor the time it takes to load).
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import Any

import yaml

from core.errors import SpecFileError
from core.spec.bounds import MAX_SPEC_ALIASES, MAX_SPEC_BYTES, MAX_SPEC_DEPTH, MAX_SPEC_VALUES
from core.spec.order import merged_order

#: YAML 1.1's implicit types without timestamps: dates and times stay the text the person wrote.
#: The writers use the same table, so that what they write plain reads back as text.
TEXT_IMPLICIT_RESOLVERS = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _TextTimestampLoader(yaml.SafeLoader):
    """SafeLoader without the implicit timestamp resolver (dates stay strings), with a depth bound."""

    yaml_implicit_resolvers = TEXT_IMPLICIT_RESOLVERS

    def __init__(self, stream: str, source: str = "<text>") -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0
        self._source = source

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_SPEC_ALIASES:
                line = self.peek_event().start_mark.line + 1  # type: ignore[no-untyped-call]
                raise SpecFileError(
                    f"{self._source}: uses more than {MAX_SPEC_ALIASES} aliases (*name), the last at line {line}; "
                    "a spec needs a handful at most"
                )
        # The composer recurses once per level: bound it before Python's own limit turns into a traceback.
        self._depth += 1
        try:
            if self._depth > MAX_SPEC_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, f"values are nested more than {MAX_SPEC_DEPTH} levels deep", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


#: Width past which a new file writes a list of plain values one item a line.
FLOW_LIST_WIDTH = 80
_NO_WRAP = 1 << 20
_STR = "tag:yaml.org,2002:str"
_LINE_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")


class _TextResolver(yaml.resolver.Resolver):
    yaml_implicit_resolvers = TEXT_IMPLICIT_RESOLVERS


_TEXT_RESOLVER = _TextResolver()
_ANALYZER = yaml.emitter.Emitter(io.StringIO(), allow_unicode=True)  # PyYAML's rules for what plain text may hold


class _TextDumper(yaml.SafeDumper):
    """PyYAML's writer with the reader's resolver table: a date is written plain, ``yes`` quoted."""

    yaml_implicit_resolvers = TEXT_IMPLICIT_RESOLVERS


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    # Text with line breaks goes on one line with \n escapes; plain or single quotes would fold it over lines.
    return dumper.represent_scalar(_STR, text, style='"' if _LINE_BREAKS.search(text) else None)


_TextDumper.add_representer(str, _represent_text)


class _NewFileDumper(_TextDumper):
    """Block style with block lists indented under their key (``  - a``)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _represent_list(dumper: yaml.SafeDumper, items: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=fits_on_one_line(items))


def _represent_dict(dumper: yaml.SafeDumper, data: dict[Any, Any]) -> yaml.MappingNode:
    # A secret's reference stays on its variable's line, as docs/spec.md writes it: {secret: NAME}.
    reference = list(data) == ["secret"] and isinstance(data["secret"], str)
    return dumper.represent_mapping("tag:yaml.org,2002:map", list(data.items()), flow_style=not data or reference)


_NewFileDumper.add_representer(list, _represent_list)
_NewFileDumper.add_representer(dict, _represent_dict)


_BOOL = "tag:yaml.org,2002:bool"


def _no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    """A mapping whose keys appear once each. A plain key YAML 1.1 reads as a boolean (``on``,
    ``off``, ``yes``, ``no``) is the text written: a spec's keys are names, and ``alerts``'
    routes have one called ``on``."""
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _BOOL and key_node.style is None:
            key: Any = key_node.value
        else:
            key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_TextTimestampLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_expanded_size(root: yaml.Node, source: str) -> None:
    """Refuse a document whose aliases refer to themselves or expand past :data:`MAX_SPEC_VALUES`
    values or :data:`MAX_SPEC_BYTES` characters.

    An alias is the same node object in two places, so sizes are memoized per node: the walk
    costs the size of the text, not of the expansion.
    """
    sizes: dict[int, int] = {}
    chars: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
            chars[key] = own + sum(chars[id(child)] for child in _children(node))
            if sizes[key] > MAX_SPEC_VALUES:
                raise SpecFileError(
                    f"{source}: holds more than {MAX_SPEC_VALUES:,} values once its aliases (*name) are "
                    "expanded; a spec is far smaller"
                )
            if chars[key] > MAX_SPEC_BYTES:
                raise SpecFileError(
                    f"{source}: holds more than {MAX_SPEC_BYTES:,} characters once its aliases (*name) are "
                    "expanded; a spec is far smaller"
                )
            continue
        if key in sizes:
            continue
        open_nodes.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                line = child.start_mark.line + 1
                raise SpecFileError(f"{source}: an alias refers to the value that holds it (the anchor at line {line})")
            if id(child) not in sizes:
                stack.append((child, False))


def load_yaml(text: str, source: str = "<text>") -> Any:
    """Parse YAML spec text into plain data; errors name the line, and the bounds above apply."""
    try:
        loader = _TextTimestampLoader(text, source)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_expanded_size(node, source)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecFileError(f"{source}: not valid YAML: {problem}{where}") from None


def writes_plain(text: str, *, flow: bool = False) -> bool:
    """Whether ``text`` can be written without quotes (inside ``[...]`` or ``{...}`` when ``flow``) and
    read back as this text: not ``yes``, ``1:30``, ``007`` or ``null`` (other types to the reader), nor
    text plain YAML cannot hold there (``#x``, ``a: b``; ``a,b`` in a flow list). A date can: the
    reader keeps dates as text."""
    if _TEXT_RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) != _STR:  # type: ignore[no-untyped-call]
        return False
    analysis = _ANALYZER.analyze_scalar(text)
    return bool((analysis.allow_flow_plain if flow else analysis.allow_block_plain) and not analysis.multiline)


def fits_on_one_line(items: list[Any]) -> bool:
    """Whether a new file writes this list on its key's line (``[a, b]``): plain values only, at
    most :data:`FLOW_LIST_WIDTH` columns."""
    if any(isinstance(item, Mapping | list) for item in items):
        return False
    text = yaml.dump(items, Dumper=_TextDumper, default_flow_style=True, width=_NO_WRAP, allow_unicode=True)
    return len(str(text).strip()) <= FLOW_LIST_WIDTH


def dump_yaml(data: Mapping[str, Any], *, keep_order: bool = False) -> str:
    """The text of a new spec file: block style, keys in the contract's order
    (:mod:`core.spec.order`; in ``data``'s own order when ``keep_order``).

    Never one ``{...}`` line, even without a task: only an empty mapping or list is written
    ``{}`` or ``[]``, and a list of plain values stays on its key's line while it fits
    (:func:`fits_on_one_line`). Lines are never wrapped.
    """
    if not data:
        return "{}\n"
    body = dict(data) if keep_order else merged_order(None, data)
    text = yaml.dump(body, Dumper=_NewFileDumper, sort_keys=False, width=_NO_WRAP, allow_unicode=True)
    return str(text)
