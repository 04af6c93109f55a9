"""The append-only event log: one row per state change, in the change's transaction.

The GUI and metrics follow it by id (:func:`core.ledger.queries.events_after`).
Nothing here updates or deletes an event; the database refuses it too (triggers
from the first migration).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import bindparam, insert
from sqlalchemy.orm import Session

from core.ledger.db import lock_for_write
from core.ledger.models import Event, Occurrence
from core.ledger.prepared import Prepared
from core.ledger.states import OccurrenceState, check_transition
from core.timefmt import fmt_utc


class EventKind(StrEnum):
    """What happened. Past tense: an event is a fact."""

    SCHEDULE_PUBLISHED = "schedule.published"
    """A revision was applied; data: revision, cutoverAt, tzdbVersion, cancelled."""
    SCHEDULE_PAUSED = "schedule.paused"
    """data: from, note."""
    SCHEDULE_RESUMED = "schedule.resumed"
    """data: from, note."""
    SCHEDULE_DISABLED = "schedule.disabled"
    """data: from, note, disableGeneration."""
    SCHEDULE_UNREADABLE = "schedule.unreadable"
    """A published revision this Tidemark cannot read (published by an older one that
    accepted it): the engine holds the schedule; data: revision, problems."""
    OCCURRENCES_MATERIALIZED = "occurrences.materialized"
    """A batch of new occurrences; data: revisions, fromUtc, toUtc, inserted, and the expanded rows by state."""
    OCCURRENCES_EXPIRED = "occurrences.expired"
    """A long stretch of missed occurrences recorded as one expired range (they were
    never materialized one by one); data: revision, fromUtc, toUtc, state, policy,
    reason, occurrences (null when not counted)."""
    OCCURRENCE_TRANSITIONED = "occurrence.transitioned"
    """One occurrence changed state; data: from, to, reason."""
    OCCURRENCE_CREATED = "occurrence.created"
    """An occurrence made outside materialization: run now, backfill, or the next
    appointment of an after_completion schedule; data: kind, reason."""
    OCCURRENCE_ACKNOWLEDGED = "occurrence.acknowledged"
    """A person dealt with a FAILED occurrence and it left the attention queue; data:
    action (acknowledged or retried), note, state."""
    ATTEMPT_IGNORED = "attempt.ignored"
    """A late result of a superseded claim, recorded and otherwise ignored; data: attempt, state."""
    ATTEMPT_ORPHANED = "attempt.orphaned"
    """The engine of an attempt died while its task still runs; another engine on the same
    host found it and watches it; data: attempt, host, pid, started, reason."""
    LEDGER_FENCED = "ledger.fenced"
    """The execution epoch was bumped: claims of older epochs are void; data: epoch, note."""
    ENGINE_WORKER_DIED = "engine.worker_died"
    """An exception killed an engine's worker for a schedule (the occurrence: the one it
    had in hand, if any); data: worker, error, restarted, attempt."""
    ENGINE_FOUND_GONE = "engine.found_gone"
    """An engine's process was found gone on its own host (it crashed or was killed without
    retiring) and its row was retired at once; data: engine, kind, host, pid, lastHeartbeat."""


_EVENTS = Event.metadata.tables[Event.__tablename__]
_INSERT = Prepared(
    insert(_EVENTS).values(
        {
            name: bindparam(name, type_=_EVENTS.c[name].type)
            for name in ("at", "schedule_id", "occurrence_id", "kind", "data")
        }
    )
)


@dataclass(frozen=True)
class NewEvent:
    """An event to append."""

    kind: EventKind
    at: datetime
    schedule_id: str | None = None
    occurrence_id: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


def append(session: Session, new: NewEvent) -> None:
    """Append one event in the session's transaction."""
    append_many(session, [new])


def append_many(session: Session, events: Iterable[NewEvent]) -> int:
    """Append events in one statement; returns how many."""
    rows = [
        {
            "at": e.at,
            "schedule_id": e.schedule_id,
            "occurrence_id": e.occurrence_id,
            "kind": e.kind.value,
            "data": e.data if isinstance(e.data, dict) else dict(e.data),
        }
        for e in events
    ]
    if not rows:
        return 0
    # Event ids must become visible in commit order (see core.ledger.db).
    lock_for_write(session)
    # Not the ORM's bulk insert: events are written on every state change.
    _INSERT.run_many(session, rows)
    return len(rows)


def transition(
    session: Session,
    occurrence: Occurrence,
    new: OccurrenceState,
    at: datetime,
    reason: str | None = None,
    data: Mapping[str, Any] | None = None,
) -> None:
    """Move a loaded occurrence to ``new`` (refusing arrows the diagram lacks) and record it."""
    old = occurrence.state
    check_transition(old, new, occurrence.occurrence_id)
    occurrence.state = new
    occurrence.updated_at = at
    if reason is not None:
        occurrence.reason = reason
    append(
        session,
        transitioned(occurrence.schedule_id, occurrence.occurrence_id, old, new, at, reason, data),
    )


def transitioned(
    schedule_id: str,
    occurrence_id: str,
    old: OccurrenceState,
    new: OccurrenceState,
    at: datetime,
    reason: str | None = None,
    data: Mapping[str, Any] | None = None,
) -> NewEvent:
    """The event of one occurrence's state change (for callers that update in bulk)."""
    payload: dict[str, Any] = {"from": old.value, "to": new.value, "reason": reason}
    if data:
        payload.update(data)
    return NewEvent(EventKind.OCCURRENCE_TRANSITIONED, at, schedule_id, occurrence_id, payload)


def instant(value: datetime | None) -> str | None:
    """An instant as event data (``YYYY-MM-DDTHH:MM:SSZ``)."""
    return None if value is None else fmt_utc(value)
