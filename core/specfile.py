"""Reading spec files: YAML or JSON, with YAML timestamps kept as text so that
``start: 2026-01-01T00:00:00`` means the same with or without quotes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from core.errors import SpecError, SpecFileError
from core.spec import ScheduleSpec, parse_spec

MAX_SPEC_BYTES = 1_000_000


class _TextTimestampLoader(yaml.SafeLoader):
    """SafeLoader without the implicit timestamp resolver: dates stay strings."""


_TextTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_TextTimestampLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def load_text(text: str, source: str = "<text>") -> Any:
    """Parse YAML (a superset of JSON) text into plain data; errors name the line."""
    if not text.strip():
        raise SpecFileError(f"{source}: the file is empty")
    stripped = text.lstrip()
    try:
        if stripped.startswith("{") and source.endswith(".json"):
            return json.loads(text)
        return yaml.load(text, Loader=_TextTimestampLoader)
    except json.JSONDecodeError as exc:
        raise SpecFileError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
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
        data = p.read_bytes()
    except PermissionError:
        raise SpecFileError(f"{name}: permission denied") from None
    except OSError as exc:
        raise SpecFileError(f"{name}: cannot be read ({exc.strerror})") from None
    if len(data) > MAX_SPEC_BYTES:
        raise SpecFileError(f"{name}: is {len(data):,} bytes; a spec file is at most {MAX_SPEC_BYTES:,}")
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


def dump_yaml(data: dict[str, Any]) -> str:
    """YAML text for a canonical spec, keys in the given order."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=None, width=100)
