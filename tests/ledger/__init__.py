"""The ledger contract suite: every test runs on SQLite and on PostgreSQL.

Shared builders live here; fixtures live in ``conftest.py``. Expected values in
the tests are written out by hand; these helpers only build inputs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.ledger.models import Occurrence
from core.ledger.states import OccurrenceState
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec

#: The fixed "now" of most tests: a week before New York springs forward.
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

DAILY: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily-ops-summary",
    "revision": 1,
    "timeZone": "America/New_York",
    "kind": "calendar",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "task": {"argv": ["/bin/true"]},
}


def spec(base: dict[str, Any] | None = None, **overrides: Any) -> ScheduleSpec:
    """A validated spec: ``base`` (the daily 02:30 New York one) with camelCase overrides; None drops a key."""
    return parse_spec(spec_data(DAILY if base is None else base, **overrides))


#: Every minute in UTC from 2026-01-01, late after 15 s (add scheduleId, horizon and task).
MINUTELY_UTC: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "revision": 1,
    "timeZone": "UTC",
    "rule": "FREQ=MINUTELY",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SHIFT_FORWARD",
    "foldPolicy": "FIRST_ONLY",
    "latenessWindow": "PT15S",
}
#: Every minute, a task that fails at once and for good: each run is a FAILED occurrence (the alert tests).
FAILING_MINUTELY: dict[str, Any] = {
    **MINUTELY_UTC,
    "scheduleId": "alerting",
    "horizon": "PT5M",
    "retry": {"maxAttempts": 1},
    "task": {"argv": ["/bin/false"], "effect": "idempotent"},
}


def spec_data(base: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """``base`` with camelCase overrides; None drops a key."""
    data = dict(base)
    for key, value in overrides.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def utc(text: str) -> datetime:
    """``2026-03-08T07:00:00Z`` as an aware UTC datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def occurrences(session: Session, schedule_id: str | None = None) -> list[Occurrence]:
    """Every occurrence (of one schedule), by position."""
    stmt = select(Occurrence).order_by(Occurrence.position_utc, Occurrence.nominal_local, Occurrence.fold_ordinal)
    if schedule_id is not None:
        stmt = stmt.where(Occurrence.schedule_id == schedule_id)
    return list(session.scalars(stmt))


def by_nominal(session: Session, schedule_id: str | None = None) -> dict[tuple[str, int], Occurrence]:
    """Occurrences keyed by (nominalLocal, foldOrdinal); fails if a key repeats across live rows."""
    out: dict[tuple[str, int], Occurrence] = {}
    for occ in occurrences(session, schedule_id):
        if occ.state is OccurrenceState.CANCELLED:
            continue
        key = (occ.nominal_local, occ.fold_ordinal)
        assert key not in out, key
        out[key] = occ
    return out
