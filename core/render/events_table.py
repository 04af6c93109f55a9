"""The audit log for people and programs (``schedctl events``): one line, or one JSON
object, per event, written as the events are read (a long log is never held whole).

Every value is written through :func:`~core.render.terminal.terminal_safe` by the
caller's stream (:func:`core.cli.output.terminal_safe_stream`); this module also
escapes each cell itself, so that a note cannot drive a terminal whichever stream
it is written to.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from core.ledger.event_words import claimed_text, event_note, event_what, role_text
from core.ledger.queries import EventView
from core.render.terminal import terminal_safe
from core.time.formats import fmt_utc

_NONE = "—"
_ASCII = str.maketrans({"—": "-", "→": "->", "·": "|"})
#: Who acted is two columns: the user@host the writing client claimed, and the role the
#: database recorded (PostgreSQL; ``—`` on SQLite).
HEADERS = ("Time (UTC)", "Claimed by", "Database role", "Schedule", "Occurrence", "What", "Note")
#: Each column's width but the last, at least: a stream cannot measure the rows to come, so the
#: columns are as wide as their usual values, or as the widest actor, role, schedule and
#: occurrence the ledger holds for them (:func:`core.ledger.audit_queries.widest`), up to
#: :data:`_MOST`; a longer value (a What) pushes the rest of its line.
_WIDTHS = (20, 22, 16, 24, 36, 28)
_MOST = 64


def event_cells(e: EventView) -> tuple[str, ...]:
    """The row of one event: time (UTC), the user@host its client claimed and the role the database
    recorded (``—`` before 0008, and the role on SQLite), schedule, occurrence, what, note."""
    return (
        f"{e.at:%Y-%m-%d %H:%M:%S}Z",
        claimed_text(e.actor),
        role_text(e.actor),
        e.schedule_id or _NONE,
        e.occurrence_id or _NONE,
        event_what(e.kind, e.data),
        event_note(e.kind, e.data) or "",
    )


def column_widths(claimed: int = 0, role: int = 0, schedule: int = 0, occurrence: int = 0) -> tuple[int, ...]:
    """The table's column widths for values up to these lengths (each at least its usual width)."""
    wider = (0, claimed, role, schedule, occurrence, 0)
    return tuple(max(usual, min(value, _MOST)) for usual, value in zip(_WIDTHS, wider, strict=True))


def _line(cells: Iterable[str], unicode: bool, widths: tuple[int, ...] = _WIDTHS) -> str:
    cells = [" ".join(terminal_safe(c).split()) for c in cells]  # one line per event, whatever a note holds
    text = "  ".join([*(c.ljust(w) for c, w in zip(cells, widths, strict=False)), *cells[len(widths) :]])
    text = text.rstrip() + "\n"
    return text if unicode else text.translate(_ASCII)


def write_events_table(
    events: Iterable[EventView], file: TextIO, *, unicode: bool = True, widths: tuple[int, ...] = _WIDTHS
) -> int:
    """A header and one line per event (``widths``: :func:`column_widths`); a line saying so when
    there is none. Returns how many."""
    file.write(_line(HEADERS, unicode, widths))
    count = 0
    for e in events:
        file.write(_line(event_cells(e), unicode, widths))
        count += 1
    if count == 0:
        file.write("(no events)\n")
    return count


def event_json(e: EventView) -> dict[str, Any]:
    """One event of ``schedctl events --format json``; the keys are stable (docs/cli.md)."""
    actor = None if e.actor is None else {"user": e.actor.user, "host": e.actor.host, "role": e.actor.role}
    return {
        "id": e.id,
        "at": fmt_utc(e.at),
        "kind": e.kind,
        "actor": actor,
        "scheduleId": e.schedule_id,
        "occurrenceId": e.occurrence_id,
        "what": event_what(e.kind, e.data),
        "note": event_note(e.kind, e.data),
        "data": dict(e.data),
    }


def write_events_json(events: Iterable[EventView], file: TextIO) -> int:
    """``{"events": [...]}``, one event per line, written as they come. Returns how many."""
    file.write('{"events": [')
    count = 0
    for e in events:
        file.write(",\n  " if count else "\n  ")
        file.write(terminal_safe(json.dumps(event_json(e), ensure_ascii=False)))
        count += 1
    file.write("\n]}\n" if count else "]}\n")
    return count
