"""The preview: the rows of a schedule from a point on, with the zone's offset
changes between the first and last row (CONTRACT §5, ``preview.v1``)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.enums import Kind
from core.errors import ComputeLimitError
from core.occurrence import Occurrence
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import first_rows, iter_rows
from core.spec import ScheduleSpec
from core.timefmt import fmt_utc
from core.zones import Transition, format_offset, next_transition, transitions, tzdb_version

#: Rows a single preview may hold.
MAX_PREVIEW_ROWS = 1_000_000
#: Rows shown past the clock change a preview was extended to reach, so that it sits among rows.
ROWS_PAST_CHANGE = 3


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
    return _preview(compiled, rows)


def _preview(compiled: CompiledSchedule, rows: list[Occurrence]) -> Preview:
    found: list[Transition] = []
    if rows:
        first, last = rows[0].position, rows[-1].position
        found = transitions(compiled.zone, first, last + timedelta(seconds=1))
    return Preview(spec=compiled.spec, rows=rows, transitions=found, tzdb_version=tzdb_version())


@dataclass(frozen=True)
class Reach:
    """How a preview reached for the zone's next clock change (:func:`build_preview_to_change`)."""

    change: Transition | None  # the change reached for; None when the zone has none within ten years
    reached: bool  # the rows go past it
    too_far: bool = False  # not reached: it lies more than the limit of rows away (else the schedule ends first)


def build_preview_to_change(
    spec: ScheduleSpec,
    start: datetime,
    count: int,
    *,
    limit: int,
    after: datetime | None = None,
    compiled: CompiledSchedule | None = None,
) -> tuple[Preview, Reach]:
    """The first ``count`` rows from ``start``, and as many more as it takes to go past the
    zone's next clock change after ``after`` (by default after the first row), with
    :data:`ROWS_PAST_CHANGE` rows beyond it, as long as that makes at most ``limit`` rows.

    When the change lies further than ``limit`` rows, or the zone has none within ten
    years, the preview holds the first ``count`` rows only; :class:`Reach` says which.
    """
    compiled = compiled or compile_schedule(spec)
    if count > MAX_PREVIEW_ROWS:
        raise ComputeLimitError(f"{count:,} rows asked for; a preview holds at most {MAX_PREVIEW_ROWS:,}")
    source = iter_rows(compiled, start)
    rows = list(itertools.islice(source, count))
    if not rows or compiled.spec.kind is Kind.AFTER_COMPLETION:
        return _preview(compiled, rows), Reach(None, False)
    change = next_transition(compiled.zone, (after or rows[0].position) + timedelta(seconds=1))
    if change is None:
        return _preview(compiled, rows), Reach(None, False)
    shown = len(rows)
    past = sum(1 for r in rows if r.position >= change.utc)
    while past < ROWS_PAST_CHANGE and len(rows) < limit:
        row = next(source, None)
        if row is None:
            break
        rows.append(row)
        past += row.position >= change.utc
    if past == 0:
        # Out of reach: extending the rows without showing the change would only mislead.
        return _preview(compiled, rows[:shown]), Reach(change, False, too_far=len(rows) >= limit)
    return _preview(compiled, rows), Reach(change, True)
