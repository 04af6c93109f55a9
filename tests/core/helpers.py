"""Shared builders for the core tests: specs from a base document, rows in a range.

Expected values in the tests are written out by hand; these helpers only build
inputs and fetch rows, they never compute an expectation.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import expand, first_rows
from core.recurrence.occurrence import Occurrence
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec

#: Pass as an override value to remove that key from the document.
DROP: Any = object()

BASE_CALENDAR: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 7,
    "timeZone": "America/New_York",
    "kind": "calendar",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
}

BASE_INTERVAL: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "every-quarter-hour",
    "revision": 1,
    "timeZone": "America/New_York",
    "kind": "interval",
    "every": "PT15M",
    "anchor": "2026-01-01T00:00:00Z",
}


def make_data(base: dict[str, Any] | None = None, **overrides: Any) -> dict[str, Any]:
    """A spec document: ``base`` (the calendar base by default) with camelCase overrides.

    An override of :data:`DROP` removes the key.
    """
    data = dict(BASE_CALENDAR if base is None else base)
    for key, value in overrides.items():
        if value is DROP:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def make_spec(**overrides: Any) -> ScheduleSpec:
    """A validated calendar spec (see :func:`make_data`)."""
    return parse_spec(make_data(**overrides))


def make_interval_spec(**overrides: Any) -> ScheduleSpec:
    return parse_spec(make_data(BASE_INTERVAL, **overrides))


def compiled(**overrides: Any) -> CompiledSchedule:
    return compile_schedule(make_spec(**overrides))


def utc(text: str) -> datetime:
    """``2026-03-08T07:00:00Z`` (or without seconds) as an aware UTC datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def local(text: str) -> datetime:
    """A naive wall time from ``2026-03-08T02:30:00``."""
    return datetime.fromisoformat(text)


def _as_compiled(schedule: ScheduleSpec | CompiledSchedule) -> CompiledSchedule:
    return schedule if isinstance(schedule, CompiledSchedule) else compile_schedule(schedule)


def _as_utc(value: datetime | str) -> datetime:
    return utc(value) if isinstance(value, str) else value


def rows_between(
    schedule: ScheduleSpec | CompiledSchedule, start: datetime | str, end: datetime | str
) -> list[Occurrence]:
    """Rows with ``start <= positionUtc < end`` (instants as aware datetimes or ``...Z`` text)."""
    return expand(_as_compiled(schedule), _as_utc(start), _as_utc(end))


def first_n(schedule: ScheduleSpec | CompiledSchedule, start: datetime | str, count: int) -> list[Occurrence]:
    return first_rows(_as_compiled(schedule), _as_utc(start), count)


def rows_near(schedule: ScheduleSpec | CompiledSchedule, nominal: str, days: int = 2) -> list[Occurrence]:
    """Rows whose nominalLocal equals ``nominal``, searched within ``days`` of it."""
    when = local(nominal).replace(tzinfo=UTC)
    rows = rows_between(schedule, when - timedelta(days=days), when + timedelta(days=days))
    return [r for r in rows if r.nominal_local == nominal]


def single_nominal_spec(zone: str, nominal: str, **overrides: Any) -> ScheduleSpec:
    """A calendar spec whose only nominal wall time is ``nominal`` (``COUNT=1`` from it)."""
    return make_spec(timeZone=zone, rule="FREQ=DAILY;COUNT=1", start=nominal, **overrides)


def view(row: Occurrence) -> tuple[str, int, str, str | None, str | None, str]:
    """The fields most tables compare: nominalLocal, foldOrdinal, status, resolvedUtc,
    resolvedLocal (with offset) and positionUtc, as preview.v1 writes them."""
    j = row.to_json()
    return (j["nominalLocal"], j["foldOrdinal"], j["status"], j["resolvedUtc"], j["resolvedLocal"], j["positionUtc"])
