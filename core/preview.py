"""The preview: the rows of a schedule from a point on, with the zone's offset
changes between the first and last row (CONTRACT §5, ``preview.v1``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.errors import ComputeLimitError
from core.occurrence import Occurrence
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import first_rows, iter_rows
from core.spec import ScheduleSpec
from core.timefmt import fmt_utc
from core.zones import Transition, format_offset, transitions, tzdb_version

#: Rows a single preview may hold.
MAX_PREVIEW_ROWS = 1_000_000


@dataclass
class Preview:
    """What a schedule will do: rows in order and the clock changes among them."""

    spec: ScheduleSpec
    rows: list[Occurrence]
    transitions: list[Transition] = field(default_factory=list)
    tzdb_version: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "preview.v1",
            "scheduleId": self.spec.schedule_id,
            "revision": self.spec.revision,
            "timeZone": self.spec.time_zone,
            "tzdbVersion": self.tzdb_version,
            "occurrences": [r.to_json() for r in self.rows],
            "transitions": [transition_json(t) for t in self.transitions],
        }


def transition_json(t: Transition) -> dict[str, Any]:
    return {
        "utc": fmt_utc(t.utc),
        "offsetBefore": format_offset(t.offset_before),
        "offsetAfter": format_offset(t.offset_after),
        "kind": t.kind,
        "seconds": t.seconds,
    }


def build_preview(
    spec: ScheduleSpec,
    start: datetime,
    *,
    count: int | None = 10,
    until: datetime | None = None,
    compiled: CompiledSchedule | None = None,
    max_rows: int = MAX_PREVIEW_ROWS,
) -> Preview:
    """Rows with positionUtc >= ``start``: the first ``count``, or those before ``until``.

    A range holding more than ``max_rows`` rows raises :class:`ComputeLimitError`
    as soon as it is exceeded, before the rows pile up.
    """
    compiled = compiled or compile_schedule(spec)
    if until is not None:
        rows: list[Occurrence] = []
        for row in iter_rows(compiled, start):
            if row.position >= until:
                break
            if len(rows) == max_rows:
                raise ComputeLimitError(f"the range holds more than {max_rows:,} rows; ask for a shorter one")
            rows.append(row)
    else:
        wanted = count if count is not None else 10
        if wanted > max_rows:
            raise ComputeLimitError(f"{wanted:,} rows asked for; a preview holds at most {max_rows:,}")
        rows = first_rows(compiled, start, wanted)
    found: list[Transition] = []
    if rows:
        first, last = rows[0].position, rows[-1].position
        found = transitions(compiled.zone, first, last + timedelta(seconds=1))
    return Preview(spec=spec, rows=rows, transitions=found, tzdb_version=tzdb_version())
