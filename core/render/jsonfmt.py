"""``preview.v1`` as indented JSON: exactly :meth:`Preview.to_json` as ``json.dumps(..., indent=2,
ensure_ascii=False)`` writes it, written row by row.

A row is one template filled with its values: ids, times and offsets are
plain ASCII that needs no escaping, and the only free texts (the reason and
the business period) go through the C encoder's string escaping. The
indentation is written by hand, so no row passes through the pure-Python
indenting encoder.
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any, TextIO

from core.enums import Status
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview, transition_json, wake_time
from core.render.terminal import terminal_safe
from core.time.formats import fmt_utc
from core.time.zones import format_offset

if TYPE_CHECKING:
    from core.render.source import Source


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _free_text(safe: bool) -> Callable[[str | None], str]:
    """A free text as a JSON string, or null; with ``safe`` nothing in it can drive a terminal
    (the escapes :func:`terminal_safe` writes for the characters JSON leaves alone are JSON's own)."""

    def encode(text: str | None) -> str:
        if text is None:
            return "null"
        return terminal_safe(encode_basestring(text)) if safe else encode_basestring(text)

    return encode


_SCHEDULED = Status.SCHEDULED


def row_text(row: Occurrence, free: Callable[[str | None], str], *, wake: bool = False) -> str:
    """One row as the list's item (indented as its items are: four spaces, six for the keys),
    without the separator before it. Ids, instants and offsets are plain ASCII: quoted as they are.
    With ``wake`` (the spec's ``wakeSystem``) the row ends with its ``wakeAt``."""
    shift, resolved = row.offset, row.resolved_utc
    if (
        row.status is _SCHEDULED
        and resolved is not None
        and shift is not None
        and row.logical_slot_id
        and row.position is row.resolved
        and not row.dispatch_delay
        and not wake
    ):
        # The common row, read from the row itself: what json_values() gives for it (its local time
        # the nominal one, its position and dispatch its instant).
        offset, reason, period = format_offset(shift), row.reason, row.period
        return (
            f'{{\n      "occurrenceId": "{row.occurrence_id}",\n      "logicalSlotId": "{row.logical_slot_id}",\n'
            f'      "nominalLocal": "{row.nominal_local}",\n      "foldOrdinal": {row.fold_ordinal},\n'
            f'      "status": "SCHEDULED",\n      "resolvedUtc": "{resolved}",\n'
            f'      "resolvedLocal": "{row.nominal_local}{offset}",\n      "utcOffset": "{offset}",\n'
            f'      "positionUtc": "{resolved}",\n      "reason": {"null" if reason is None else free(reason)},\n'
            f'      "businessPeriod": {"null" if period is None else free(period)},\n'
            f'      "dispatchUtc": "{resolved}"\n    }}'
        )
    occ, slot, nominal, fold, status, resolved, local, offset, position, reason, period, dispatch = row.json_values()
    if slot and resolved and local and offset and dispatch and not wake:
        # A row that runs holds all five texts: one template, no quoting piece by piece.
        return (
            f'{{\n      "occurrenceId": "{occ}",\n      "logicalSlotId": "{slot}",\n'
            f'      "nominalLocal": "{nominal}",\n      "foldOrdinal": {fold},\n      "status": "{status}",\n'
            f'      "resolvedUtc": "{resolved}",\n      "resolvedLocal": "{local}",\n      "utcOffset": "{offset}",\n'
            f'      "positionUtc": "{position}",\n      "reason": {"null" if reason is None else free(reason)},\n'
            f'      "businessPeriod": {"null" if period is None else free(period)},\n'
            f'      "dispatchUtc": "{dispatch}"\n    }}'
        )
    slot = "null" if slot is None else '"' + slot + '"'
    resolved = "null" if resolved is None else '"' + resolved + '"'
    local = "null" if local is None else '"' + local + '"'
    offset = "null" if offset is None else '"' + offset + '"'
    dispatch = "null" if dispatch is None else '"' + dispatch + '"'
    return (
        f'{{\n      "occurrenceId": "{occ}",\n      "logicalSlotId": {slot},\n'
        f'      "nominalLocal": "{nominal}",\n      "foldOrdinal": {fold},\n      "status": "{status}",\n'
        f'      "resolvedUtc": {resolved},\n      "resolvedLocal": {local},\n      "utcOffset": {offset},\n'
        f'      "positionUtc": "{position}",\n      "reason": {"null" if reason is None else free(reason)},\n'
        f'      "businessPeriod": {"null" if period is None else free(period)},\n'
        f'      "dispatchUtc": {dispatch}{_wake_text(row) if wake else ""}\n    }}'
    )


def _wake_text(row: Occurrence) -> str:
    at = wake_time(row)
    text = "null" if at is None else f'"{fmt_utc(at)}"'
    return f',\n      "wakeAt": {text}'


def _blocks(items: Iterable[str], size: int = 1000) -> Iterator[list[str]]:
    """``items`` in lists of ``size`` (the last one shorter)."""
    source = iter(items)
    while block := list(itertools.islice(source, size)):
        yield block


def _write_list(file: TextIO, items: Iterable[str]) -> None:
    """Items already written as ``json.dumps(..., indent=2)`` writes them one level in, as a list;
    one write per block of items, not per item."""
    empty = True
    for block in _blocks(items):
        file.write(("[\n    " if empty else ",\n    ") + ",\n    ".join(block))
        empty = False
    file.write("[]" if empty else "\n  ]")


def write_json(source: Source, file: TextIO, *, safe: bool = False) -> None:
    """The contract's preview object, indented by two spaces, ending in a newline.

    ``safe``: every free text (the reason, the business period, the names in
    the head) is written so that it cannot drive a terminal; JSON reads back the same.
    """
    spec = source.spec
    head = {
        "schema": "preview.v1",
        "scheduleId": spec.schedule_id,
        "revision": spec.revision,
        "timeZone": spec.time_zone,
        "tzdbVersion": source.tzdb_version,
    }
    lines = "".join(f"  {_dump(key)}: {_dump(value)},\n" for key, value in head.items())
    file.write("{\n" + (terminal_safe(lines) if safe else lines) + '  "occurrences": ')
    free = _free_text(safe)
    span: list[datetime] = []

    def rows() -> Iterator[str]:
        row = None
        for row in source.rows:
            if not span:
                span.append(row.position)
            yield row_text(row, free, wake=spec.wake_system)
        if row is not None:
            span.append(row.position)

    _write_list(file, rows())
    file.write(',\n  "transitions": ')
    found = source.transitions_in(span[0], span[-1] + timedelta(seconds=1)) if span else []
    _write_list(file, (_dump(transition_json(t)).replace("\n", "\n    ") for t in found))
    file.write("\n}\n")


def render_json(preview: Preview) -> str:
    """:func:`write_json` as a string."""
    buf = io.StringIO()
    write_json(preview, buf)
    return buf.getvalue()
