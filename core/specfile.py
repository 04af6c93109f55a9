"""Reading spec files: YAML or JSON, with YAML timestamps kept as text so that
``start: 2026-01-01T00:00:00`` means the same with or without quotes.

Spec files come from anywhere (a colleague, a download), so reading is safe
against hostile input: no Python objects (a safe loader), at most
:data:`MAX_SPEC_BYTES` read from a file or a stream that never ends, no key
twice (in JSON too), values nested at most :data:`MAX_SPEC_DEPTH` deep, at most
:data:`MAX_SPEC_ALIASES` aliases (``*name``), and at most
:data:`MAX_SPEC_VALUES` values and :data:`MAX_SPEC_BYTES` characters once the
aliases are expanded, so a "billion laughs" file is refused before anything
walks it.

New spec files are written by :func:`dump_yaml` with the same table of types,
so that what it writes reads back as it was meant (a date plain, ``yes``
quoted). Saving into a file a person wrote is :mod:`core.spec_yaml`'s.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from core.errors import SpecError, SpecFileError
from core.os_text import shown
from core.spec import ScheduleSpec
from core.spec_order import merged_order
from core.spec_validation import parse_spec

MAX_SPEC_BYTES = 1_000_000
#: A spec nests four levels (the spec, task, env, a value); anything this deep is not a spec.
MAX_SPEC_DEPTH = 32
#: Keys and values counted with every alias expanded; real specs hold a few hundred.
MAX_SPEC_VALUES = 100_000
#: Aliases (``*name``) in one file; a spec has no use for more than a handful.
MAX_SPEC_ALIASES = 100

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


class _KeyTwice(dict[str, Any]):
    """A JSON object in which :attr:`key` appears twice (the hook keeps the last, as JSON does)."""

    key: str


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) == len(pairs):
        return mapping
    twice = _KeyTwice(mapping)
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            twice.key = key
            break
        seen.add(key)
    return twice


def _check_json(data: Any, source: str) -> None:
    """Refuse JSON with a key twice in one object (YAML refuses it too) or nested past :data:`MAX_SPEC_DEPTH`."""
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_SPEC_DEPTH:
            raise SpecFileError(f"{source}: values are nested more than {MAX_SPEC_DEPTH} levels deep at {where}")
        if isinstance(value, _KeyTwice):
            place = f"in {where}" if where else "at the top level"
            raise SpecFileError(f"{source}: the key {shown(value.key)} appears twice {place}")
        if isinstance(value, dict):
            stack += [(item, f"{where}.{key}" if where else key, depth + 1) for key, item in value.items()]
        elif isinstance(value, list):
            stack += [(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]


def is_json_text(text: str, source: str) -> bool:
    """True when ``text`` is read as JSON: a ``.json`` file holding an object."""
    return source.endswith(".json") and text.lstrip().startswith("{")


def load_text(text: str, source: str = "<text>") -> Any:
    """Parse spec text (YAML, or JSON for a ``.json`` file) into plain data; errors name the line
    and every safety bound above applies."""
    if not text.strip():
        raise SpecFileError(f"{source}: the file is empty")
    try:
        if is_json_text(text, source):
            data = json.loads(text, object_pairs_hook=_json_object)
            _check_json(data, source)
            return data
        loader = _TextTimestampLoader(text, source)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_expanded_size(node, source)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except json.JSONDecodeError as exc:
        raise SpecFileError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        # Only JSON gets here: YAML's depth is bounded while composing.
        raise SpecFileError(f"{source}: values are nested more than {MAX_SPEC_DEPTH} levels deep") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecFileError(f"{source}: not valid YAML: {problem}{where}") from None


def read_spec_text(path: str | os.PathLike[str]) -> str:
    """The text of a spec file, or a :class:`SpecFileError` saying why it cannot be read."""
    p = Path(path)
    name = str(path)
    if not p.exists():
        raise SpecFileError(f"{name}: no such file")
    if p.is_dir():
        raise SpecFileError(f"{name}: is a directory, not a spec file")
    try:
        with p.open("rb") as stream:
            data = read_bounded(stream)
    except PermissionError:
        raise SpecFileError(f"{name}: permission denied") from None
    except OSError as exc:
        raise SpecFileError(f"{name}: cannot be read ({exc.strerror})") from None
    return spec_text(data, name)


def read_bounded(stream: BinaryIO) -> bytes:
    """At most :data:`MAX_SPEC_BYTES` and one more byte from ``stream``: a device or pipe that never
    ends (``/dev/zero``, ``yes |``) is cut there and refused as too big."""
    chunks: list[bytes] = []
    left = MAX_SPEC_BYTES + 1
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def spec_text(data: bytes, name: str) -> str:
    """The text of spec bytes read by :func:`read_bounded`, or a :class:`SpecFileError` saying why
    they are not a spec's text."""
    if len(data) > MAX_SPEC_BYTES:
        raise SpecFileError(f"{name}: is more than {MAX_SPEC_BYTES:,} bytes; a spec file is at most {MAX_SPEC_BYTES:,}")
    if b"\x00" in data:
        raise SpecFileError(f"{name}: is a binary file, not YAML or JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SpecFileError(f"{name}: is not UTF-8 text") from None
    if not text.strip():
        raise SpecFileError(f"{name}: the file is empty")
    return text


def load_spec(path: str | os.PathLike[str]) -> ScheduleSpec:
    """Read, parse and validate one spec file."""
    name = str(path)
    data = load_text(read_spec_text(path), name)
    try:
        return parse_spec(data, source=name)
    except SpecError as exc:
        exc.source = name
        raise SpecError(exc.problems, name) from None


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
    (:mod:`core.spec_order`; in ``data``'s own order when ``keep_order``).

    Never one ``{...}`` line, even without a task: only an empty mapping or list is written
    ``{}`` or ``[]``, and a list of plain values stays on its key's line while it fits
    (:func:`fits_on_one_line`). Lines are never wrapped.
    """
    if not data:
        return "{}\n"
    body = dict(data) if keep_order else merged_order(None, data)
    text = yaml.dump(body, Dumper=_NewFileDumper, sort_keys=False, width=_NO_WRAP, allow_unicode=True)
    return str(text)
