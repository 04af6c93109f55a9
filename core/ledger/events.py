"""The append-only event log: one row per state change, in the change's transaction.

Events are the typed classes of :mod:`core.ledger.event_types` (one per
:class:`EventKind`), importable from here too. The GUI and metrics follow the
log by id (:func:`core.ledger.queries.events_after`). Nothing here updates or
deletes an event; the database refuses it too (triggers from the first migration).

An event records who acted (``actor_user``, ``actor_host``, ``actor_role``):
not a field of the typed classes but the write transaction's actor
(:func:`core.ledger.db.session_actor`), so that no writer can leave it out.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import bindparam, insert
from sqlalchemy.orm import Session

from core.ledger import alert_outbox
from core.ledger.db import DRIVER, lock_for_write, session_actor, shared_write
from core.ledger.event_types import (
    EVENT_CLASSES,
    AttemptIgnored,
    AttemptOrphaned,
    EngineFoundGone,
    EngineStarted,
    EngineStopped,
    EngineWorkerDied,
    EventKind,
    LedgerFenced,
    NewEvent,
    OccurrenceAcknowledged,
    OccurrenceCreated,
    OccurrencesExpired,
    OccurrencesMaterialized,
    OccurrenceTransitioned,
    ScheduleDisabled,
    ScheduleDriftFound,
    ScheduleDriftKept,
    SchedulePaused,
    SchedulePublished,
    ScheduleResumed,
    ScheduleShadowDiffers,
    ScheduleUnreadable,
    stored_data,
    stored_json,
)
from core.ledger.models import Event, Occurrence
from core.ledger.prepared import Prepared, driver_of, sqlite_instant
from core.ledger.states import OccurrenceState, check_transition
from core.team.actor import Actor

_EVENTS = Event.metadata.tables[Event.__tablename__]
_INSERT = Prepared(
    insert(_EVENTS).values(
        {
            name: bindparam(name, type_=_EVENTS.c[name].type)
            for name in ("at", "schedule_id", "occurrence_id", "kind", "data", "actor_user", "actor_host", "actor_role")
        }
    )
)


def append(session: Session, new: NewEvent) -> None:
    """Append one event in the session's transaction."""
    append_many(session, [new])


def append_many(session: Session, events: Iterable[NewEvent]) -> int:
    """Append events in one statement, each with the transaction's actor; returns how many."""
    actor = session_actor(session)
    batch = list(events)
    if not batch:
        return 0
    # The alerts these changes call for, in their transaction (nothing at all when none does).
    alert_outbox.enqueue(session, batch)
    driver = session.info.get(DRIVER)
    if driver is not None:  # a held writer's SQLite transaction (an engine's worker): it holds the write lock
        _run_sqlite(driver, actor, batch)
        return len(batch)
    shared = shared_write(session)
    if shared is not None:  # written last, with the commit (core.ledger.db.flush_events)
        by = {"actor_user": actor.user, "actor_host": actor.host, "actor_role": actor.role}
        shared.rows.extend(
            {
                "at": e.at,
                "schedule_id": e.schedule_id,
                "occurrence_id": e.occurrence_id,
                "kind": e.kind.value,
                "data": stored_json(e),
            }
            | by
            for e in batch
        )
        shared.insert = _insert_on_driver
        return len(batch)
    # Event ids must become visible in commit order (see core.ledger.db).
    lock_for_write(session)
    if session.get_bind().dialect.name == "sqlite":
        # Not the ORM's bulk insert, nor a row of values to convert each: events are written on
        # every state change. Their data is JSON text already, their instants as SQLite keeps them.
        _run_sqlite(driver_of(session), actor, batch)
        return len(batch)
    rows = [
        {
            "at": e.at,
            "schedule_id": e.schedule_id,
            "occurrence_id": e.occurrence_id,
            "kind": e.kind.value,
            "data": stored_data(e),
            "actor_user": actor.user,
            "actor_host": actor.host,
            "actor_role": actor.role,
        }
        for e in batch
    ]
    _INSERT.run_many(session, rows)
    return len(batch)


#: A transaction's events as one INSERT on PostgreSQL: one array per column, unnested in order
#: (``WITH ORDINALITY``: their ids follow the order they were appended in).
_INSERT_ALL = (
    "INSERT INTO events (at, schedule_id, occurrence_id, kind, data, actor_user, actor_host, actor_role) "
    "SELECT at, schedule_id, occurrence_id, kind, data::json, actor_user, actor_host, actor_role FROM unnest("
    "%(at)s::timestamptz[], %(schedule_id)s::varchar[], %(occurrence_id)s::varchar[], %(kind)s::varchar[], "
    "%(data)s::text[], %(actor_user)s::varchar[], %(actor_host)s::varchar[], %(actor_role)s::varchar[]"
    ") WITH ORDINALITY AS e(at, schedule_id, occurrence_id, kind, data, actor_user, actor_host, actor_role, n) "
    "ORDER BY n"
)
#: One event (its data JSON text already).
_INSERT_ONE = (
    "INSERT INTO events (at, schedule_id, occurrence_id, kind, data, actor_user, actor_host, actor_role) "
    "VALUES (%(at)s, %(schedule_id)s, %(occurrence_id)s, %(kind)s, %(data)s::json, "
    "%(actor_user)s, %(actor_host)s, %(actor_role)s)"
)
_COLUMNS = ("at", "schedule_id", "occurrence_id", "kind", "data", "actor_user", "actor_host", "actor_role")
#: SQLite's, its values in the order of ``_COLUMNS``.
_INSERT_SQLITE = f"INSERT INTO events ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def _run_sqlite(driver: Any, actor: Actor, batch: list[NewEvent]) -> None:
    """Insert events on SQLite's driver connection, their values as SQLite keeps them (their data
    JSON text, their instants as :func:`sqlite_instant` writes them)."""
    user, host, role = actor.user, actor.host, actor.role
    rows = [
        (sqlite_instant(e.at), e.schedule_id, e.occurrence_id, e.kind._value_, stored_json(e), user, host, role)
        for e in batch
    ]
    driver.executemany(_INSERT_SQLITE, rows).close()


def _insert_on_driver(driver: Any, rows: list[dict[str, Any]]) -> None:
    """Insert events on PostgreSQL's driver connection (in its pipeline, see
    :func:`core.ledger.db.flush_events`) in one statement, their data JSON text already
    (:func:`stored_json`, the text SQLAlchemy would write): the server runs one INSERT for
    the transaction's events, not one each."""
    if len(rows) == 1:
        driver.execute(_INSERT_ONE, rows[0])
        return
    driver.execute(_INSERT_ALL, {name: [row[name] for row in rows] for name in _COLUMNS})


class TransitionDetail(TypedDict, total=False):
    """What :func:`transition` may add to its event (see :class:`OccurrenceTransitioned`)."""

    attempt: int
    worker: str
    revision: int
    decision: str
    note: str | None


def transition(
    session: Session,
    occurrence: Occurrence,
    new: OccurrenceState,
    at: datetime,
    reason: str | None = None,
    data: TransitionDetail | None = None,
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
        OccurrenceTransitioned(
            at=at,
            schedule_id=occurrence.schedule_id,
            occurrence_id=occurrence.occurrence_id,
            from_=old,
            to=new,
            reason=reason,
            **(data or {}),
        ),
    )


__all__ = [
    "EVENT_CLASSES",
    "AttemptIgnored",
    "AttemptOrphaned",
    "EngineFoundGone",
    "EngineStarted",
    "EngineStopped",
    "EngineWorkerDied",
    "EventKind",
    "LedgerFenced",
    "NewEvent",
    "OccurrenceAcknowledged",
    "OccurrenceCreated",
    "OccurrenceTransitioned",
    "OccurrencesExpired",
    "OccurrencesMaterialized",
    "ScheduleDisabled",
    "ScheduleDriftFound",
    "ScheduleDriftKept",
    "SchedulePaused",
    "SchedulePublished",
    "ScheduleResumed",
    "ScheduleShadowDiffers",
    "ScheduleUnreadable",
    "TransitionDetail",
    "append",
    "append_many",
    "stored_data",
    "stored_json",
    "transition",
]
