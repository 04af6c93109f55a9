"""Runnable preview rows as an iCalendar file (RFC 5545), for calendar apps.

One VEVENT per row that will run (SCHEDULED or SHIFTED): UID is the
occurrenceId, so re-importing a later preview updates events instead of
duplicating them; DTSTART is the resolved instant in UTC. Events are written
one by one between the calendar's head and its END line.
"""

from __future__ import annotations

import io
from datetime import datetime
from typing import TYPE_CHECKING, TextIO

from icalendar import Calendar, Event, vText

from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview

if TYPE_CHECKING:
    from core.render.source import Source

PRODID = "-//Tidemark//schedctl//EN"
_END = "END:VCALENDAR\r\n"


def _description(row: Occurrence, zone: str) -> str:
    lines = [f"Nominal local time {row.nominal_local} in {zone}."]
    if row.reason:
        lines.append(row.reason[0].upper() + row.reason[1:] + ("" if row.reason.endswith(".") else "."))
    if row.period is not None:
        lines.append(f"Business period {row.period}.")
    return "\n".join(lines)


def write_ics(source: Source, file: TextIO, *, stamp: datetime) -> None:
    """A VCALENDAR with one VEVENT per runnable row; ``stamp`` (aware) becomes every DTSTAMP."""
    spec = source.spec
    # Any line break in a title is one newline, which iCalendar writes as "\n" (a bare CR it cannot write).
    summary = (spec.title or spec.schedule_id).replace("\r\n", "\n").replace("\r", "\n")
    cal = Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", vText(summary))  # an unknown property is not escaped as text by itself
    head = cal.to_ical().decode("utf-8")
    assert head.endswith(_END)
    file.write(head[: -len(_END)])
    for row in source.rows:
        if not row.runnable or row.resolved is None:
            continue
        event = Event()
        event.add("uid", row.occurrence_id)
        event.add("dtstamp", stamp)
        event.add("dtstart", row.resolved)
        event.add("summary", summary)
        event.add("description", _description(row, spec.time_zone))
        file.write(event.to_ical().decode("utf-8"))
    file.write(_END)


def render_ics(preview: Preview, *, stamp: datetime) -> str:
    """:func:`write_ics` as a string."""
    buf = io.StringIO()
    write_ics(preview, buf, stamp=stamp)
    return buf.getvalue()
