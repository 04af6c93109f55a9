"""Runnable preview rows as an iCalendar file (RFC 5545), for calendar apps.

One VEVENT per row that will run (SCHEDULED or SHIFTED): UID is the
occurrenceId, so re-importing a later preview updates events instead of
duplicating them; DTSTART is the resolved instant in UTC.
"""

from __future__ import annotations

from datetime import datetime

from icalendar import Calendar, Event, vText

from core.occurrence import Occurrence
from core.preview import Preview

PRODID = "-//Tidemark//schedctl//EN"


def _description(row: Occurrence, zone: str) -> str:
    lines = [f"Nominal local time {row.nominal_local} in {zone}."]
    if row.reason:
        lines.append(row.reason[0].upper() + row.reason[1:] + ("" if row.reason.endswith(".") else "."))
    if row.period is not None:
        lines.append(f"Business period {row.period}.")
    return "\n".join(lines)


def render_ics(preview: Preview, *, stamp: datetime) -> str:
    """A VCALENDAR with one VEVENT per runnable row; ``stamp`` (aware) becomes every DTSTAMP."""
    spec = preview.spec
    # Any line break in a title is one newline, which iCalendar writes as "\n" (a bare CR it cannot write).
    summary = (spec.title or spec.schedule_id).replace("\r\n", "\n").replace("\r", "\n")
    cal = Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", vText(summary))  # an unknown property is not escaped as text by itself
    for row in preview.rows:
        if not row.runnable or row.resolved is None:
            continue
        event = Event()
        event.add("uid", row.occurrence_id)
        event.add("dtstamp", stamp)
        event.add("dtstart", row.resolved)
        event.add("summary", summary)
        event.add("description", _description(row, spec.time_zone))
        cal.add_component(event)
    text: str = cal.to_ical().decode("utf-8")
    return text
