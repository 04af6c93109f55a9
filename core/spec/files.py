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
quoted). Saving into a file a person wrote is :mod:`core.spec.yaml_io`'s.

The YAML reader and writer are :mod:`core.spec.yaml_text`'s, imported when a file is
YAML: checking a JSON spec never loads PyYAML. The bounds are
:mod:`core.spec.bounds`'s.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import SpecError, SpecFileError
from core.os_text import shown
from core.spec.bounds import MAX_SPEC_ALIASES, MAX_SPEC_BYTES, MAX_SPEC_DEPTH, MAX_SPEC_VALUES
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec

__all__ = [
    "MAX_SPEC_ALIASES",
    "MAX_SPEC_BYTES",
    "MAX_SPEC_DEPTH",
    "MAX_SPEC_VALUES",
    "dump_yaml",
    "is_json_text",
    "load_spec",
    "load_text",
    "read_bounded",
    "read_spec_text",
    "spec_text",
]


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
    if not is_json_text(text, source):
        from core.spec.yaml_text import load_yaml  # PyYAML loads only for YAML

        return load_yaml(text, source)
    try:
        data = json.loads(text, object_pairs_hook=_json_object)
    except json.JSONDecodeError as exc:
        raise SpecFileError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        # YAML's depth is bounded while composing; JSON's only after, so a deep one ends here.
        raise SpecFileError(f"{source}: values are nested more than {MAX_SPEC_DEPTH} levels deep") from None
    _check_json(data, source)
    return data


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


def dump_yaml(data: Mapping[str, Any], *, keep_order: bool = False) -> str:
    """The text of a new spec file: :func:`core.spec.yaml_text.dump_yaml`, PyYAML loaded when asked."""
    from core.spec.yaml_text import dump_yaml as dump

    return dump(data, keep_order=keep_order)
