"""The preview: the rows of a schedule from a point on, with the zone's offset
changes between the first and last row (docs/contract.md §5, ``preview.v1``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from core.enums import Kind
from core.errors import ComputeLimitError
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import iter_rows
from core.recurrence.occurrence import Occurrence
from core.spec.model import ScheduleSpec
from core.time.formats import fmt_utc
from core.time.zones import Transition, format_offset, next_transition, shifted, transitions, tzdb_version

#: Rows a single preview may hold.
MAX_PREVIEW_ROWS = 1_000_000
#: Rows shown past the clock change a preview was extended to reach, so that it sits among rows.
ROWS_PAST_CHANGE = 3


def wake_time(row: Occurrence) -> datetime | None:
    """With ``wakeSystem``: when the machine is woken for ``row`` (its dispatch time minus the
    lead, :data:`core.desktop.wake.alarms.LEAD`); None for a row that never runs."""
    from core.desktop.wake.alarms import wake_at  # only a spec with wakeSystem asks

    dispatch = row.dispatch
    return wake_at(dispatch) if row.runnable and dispatch is not None else None


def row_json(row: Occurrence, *, wake: bool) -> dict[str, Any]:
    """A row's preview.v1 object; with ``wake`` (the spec's ``wakeSystem``) its ``wakeAt`` too."""
    out = row.to_json()
    if wake:
        at = wake_time(row)
        out["wakeAt"] = fmt_utc(at) if at is not None else None
    return out


def wake_words(row: Occurrence, zone: tzinfo) -> str | None:
    """``wakes this machine at 02:29:30 EST``, read in ``zone``; None for a row that never runs."""
    at = wake_time(row)
    if at is None:
        return None
    local = at.astimezone(zone)
    offset = local.utcoffset() or timedelta(0)
    abbr = local.tzname()
    label = abbr if abbr and abbr[0] not in "+-" else "UTC" + format_offset(offset)
    return f"wakes this machine at {local:%H:%M:%S} {label}"


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
            "occurrences": [row_json(r, wake=self.spec.wake_system) for r in self.rows],
            "transitions": [transition_json(t) for t in self.transitions],
        }

    def transitions_in(self, lo: datetime, hi: datetime) -> list[Transition]:
        """The clock changes found with ``lo <= utc < hi``."""
        return [t for t in self.transitions if lo <= t.utc < hi]


@dataclass
class PreviewStream:
    """A preview whose rows are produced as they are read (once): a renderer
    writes them out one by one, so that a long preview never sits in memory."""

    spec: ScheduleSpec
    rows: Iterable[Occurrence]
    zone: ZoneInfo
    tzdb_version: str = ""

    def transitions_in(self, lo: datetime, hi: datetime) -> list[Transition]:
        """The zone's clock changes with ``lo <= utc < hi``."""
        return transitions(self.zone, lo, hi)


def stream_preview(
    spec: ScheduleSpec,
    start: datetime,
    *,
    count: int | None = 10,
    until: datetime | None = None,
    compiled: CompiledSchedule | None = None,
    max_rows: int = MAX_PREVIEW_ROWS,
    ids: bool = True,
) -> PreviewStream:
    """The rows of :func:`build_preview`, produced while they are written.

    ``ids=False``: for a writer that shows no ids (:func:`core.render.needs_ids`), the rows
    hold none where nothing shown depends on them (see :func:`~core.recurrence.expand.iter_rows`).

    Everything that can refuse the preview is settled first, before a row is
    handed out: a range holding more than ``max_rows`` rows is counted (the
    rows are not kept) and refused with :class:`ComputeLimitError`.
    """
    compiled = compiled or compile_schedule(spec)
    rows: Iterator[Occurrence]
    if until is not None:
        held = sum(1 for _ in itertools.islice(_positions_before(compiled, start, until), max_rows + 1))
        if held > max_rows:
            raise _range_too_long(max_rows)
        rows = _rows_before(compiled, start, until, ids=ids)
    else:
        wanted = count if count is not None else 10
        if wanted > max_rows:
            raise ComputeLimitError(f"{wanted:,} rows asked for; a preview holds at most {max_rows:,}")
        rows = itertools.islice(iter_rows(compiled, start, ids=ids), max(wanted, 0))
    return PreviewStream(spec=compiled.spec, rows=rows, zone=compiled.zone, tzdb_version=tzdb_version())


def _range_too_long(max_rows: int) -> ComputeLimitError:
    return ComputeLimitError(f"the range holds more than {max_rows:,} rows; ask for a shorter one")


def _rows_before(
    compiled: CompiledSchedule, start: datetime, until: datetime, *, ids: bool = True
) -> Iterator[Occurrence]:
    return itertools.takewhile(lambda row: row.position < until, iter_rows(compiled, start, ids=ids))


def _positions_before(compiled: CompiledSchedule, start: datetime, until: datetime) -> Iterator[datetime]:
    return (row.position for row in _rows_before(compiled, start, until, ids=False))


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
    if until is None:  # bounded by its count, which stream_preview checks first
        rows = list(stream_preview(spec, start, count=count, compiled=compiled, max_rows=max_rows).rows)
        return _preview(compiled, rows)
    # The rows are kept anyway: one walk, refused the moment it holds too many
    # (stream_preview walks a range twice, to refuse before writing a row).
    rows = list(itertools.islice(_rows_before(compiled, start, until), max_rows + 1))
    if len(rows) > max_rows:
        raise _range_too_long(max_rows)
    return _preview(compiled, rows)


def _preview(compiled: CompiledSchedule, rows: list[Occurrence]) -> Preview:
    found: list[Transition] = []
    if rows:
        first, last = rows[0].position, rows[-1].position
        found = transitions(compiled.zone, first, shifted(last, timedelta(seconds=1)))
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
    on_row: Callable[[Occurrence], None] | None = None,
) -> tuple[Preview, Reach]:
    """The first ``count`` rows from ``start``, and as many more as it takes to go past the
    zone's next clock change after ``after`` (by default after the first row), with
    :data:`ROWS_PAST_CHANGE` rows beyond it, as long as that makes at most ``limit`` rows.

    When the change lies further than ``limit`` rows, or the zone has none within ten
    years, the preview holds the first ``count`` rows only; :class:`Reach` says which.
    ``on_row`` is handed each of the first ``count`` rows as it is computed (they are
    in every answer), before the rest are.
    """
    compiled = compiled or compile_schedule(spec)
    if count > MAX_PREVIEW_ROWS:
        raise ComputeLimitError(f"{count:,} rows asked for; a preview holds at most {MAX_PREVIEW_ROWS:,}")
    source = iter_rows(compiled, start)
    rows = []
    for first in itertools.islice(source, count):
        if on_row is not None:
            on_row(first)
        rows.append(first)
    if not rows or compiled.spec.kind is Kind.AFTER_COMPLETION:
        return _preview(compiled, rows), Reach(None, False)
    change = next_transition(compiled.zone, shifted(after or rows[0].position, timedelta(seconds=1)))
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
