"""``preview.v1`` as indented JSON: exactly :meth:`Preview.to_json`, written row by row."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TextIO

from core.preview import Preview, transition_json

if TYPE_CHECKING:
    from core.render.source import Source


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _write_list(file: TextIO, items: Iterable[dict[str, Any]]) -> None:
    """A list as ``json.dumps(..., indent=2)`` writes it one level in, item by item."""
    empty = True
    for item in items:
        file.write("[\n    " if empty else ",\n    ")
        file.write(_dump(item).replace("\n", "\n    "))
        empty = False
    file.write("[]" if empty else "\n  ]")


def write_json(source: Source, file: TextIO) -> None:
    """The contract's preview object, indented by two spaces, ending in a newline."""
    spec = source.spec
    head = {
        "schema": "preview.v1",
        "scheduleId": spec.schedule_id,
        "revision": spec.revision,
        "timeZone": spec.time_zone,
        "tzdbVersion": source.tzdb_version,
    }
    file.write("{\n")
    for key, value in head.items():
        file.write(f"  {_dump(key)}: {_dump(value)},\n")
    file.write('  "occurrences": ')
    span: list[Any] = []

    def rows() -> Iterable[dict[str, Any]]:
        for row in source.rows:
            if not span:
                span.append(row.position)
            span[1:] = [row.position]
            yield row.to_json()

    _write_list(file, rows())
    file.write(',\n  "transitions": ')
    found = source.transitions_in(span[0], span[-1] + timedelta(seconds=1)) if span else []
    _write_list(file, (transition_json(t) for t in found))
    file.write("\n}\n")


def render_json(preview: Preview) -> str:
    """:func:`write_json` as a string."""
    buf = io.StringIO()
    write_json(preview, buf)
    return buf.getvalue()
