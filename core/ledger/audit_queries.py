"""The audit log: the ledger's events, filtered, oldest first, read page by page.

``schedctl events`` prints what :func:`audit_events` yields; it never holds more
than a page of events, however long the log (:data:`PAGE`). Every function
takes a session and returns frozen values (:class:`~core.ledger.queries.EventView`,
with its actor).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from core.errors import UserError
from core.ledger.models import Event, Occurrence, Schedule
from core.ledger.queries import EventView, event_view

#: Events read per query.
PAGE = 500


@dataclass(frozen=True)
class AuditFilter:
    """Which events to show; None (or empty) means any."""

    schedule_id: str | None = None
    occurrence_id: str | None = None
    #: Events at or after this instant.
    since: datetime | None = None
    #: Event kinds (``schedule.paused``...).
    kinds: frozenset[str] = frozenset()


def check_filter(session: Session, where: AuditFilter) -> None:
    """Refuse a schedule or occurrence the ledger does not hold (:class:`~core.errors.UserError`):
    an empty log for a mistyped id would read as "nothing happened"."""
    if where.schedule_id is not None and session.get(Schedule, where.schedule_id) is None:
        raise UserError(f"no schedule {where.schedule_id!r} in this ledger")
    if where.occurrence_id is not None and session.get(Occurrence, where.occurrence_id) is None:
        raise UserError(f"no occurrence {where.occurrence_id!r} in this ledger")


def _filtered(where: AuditFilter) -> Select[Event]:
    stmt = select(Event)
    if where.schedule_id is not None:
        stmt = stmt.where(Event.schedule_id == where.schedule_id)
    if where.occurrence_id is not None:
        stmt = stmt.where(Event.occurrence_id == where.occurrence_id)
    if where.since is not None:
        stmt = stmt.where(Event.at >= where.since)
    if where.kinds:
        stmt = stmt.where(Event.kind.in_(sorted(where.kinds)))
    return stmt


def _first_of_newest(session: Session, where: AuditFilter, limit: int) -> int:
    """The id of the oldest of the newest ``limit`` matching events (0 when fewer match)."""
    stmt = _filtered(where).with_only_columns(Event.id).order_by(Event.id.desc()).offset(limit - 1).limit(1)
    return int(session.scalar(stmt) or 0)


def widest(session: Session, where: AuditFilter, *, limit: int | None = None) -> tuple[int, int, int, int]:
    """The longest ``user@host``, role, schedule id and occurrence id among the events
    :func:`audit_events` would give (0 for a column none of them fills): one aggregate read,
    so that a table written as the events stream in can still align its columns."""
    after = _first_of_newest(session, where, limit) - 1 if limit is not None else 0
    found = session.execute(
        _filtered(where)
        .where(Event.id > after)
        .with_only_columns(
            func.max(func.length(Event.actor_user) + func.length(Event.actor_host) + 1),
            func.max(func.length(Event.actor_role)),
            func.max(func.length(Event.schedule_id)),
            func.max(func.length(Event.occurrence_id)),
        )
    ).one()
    claimed, role, schedule, occurrence = (int(value or 0) for value in found)
    return claimed, role, schedule, occurrence


def audit_events(
    session: Session, where: AuditFilter, *, limit: int | None = None, page: int = PAGE
) -> Iterator[EventView]:
    """The matching events, oldest first; with ``limit``, the newest ``limit`` of them (still
    oldest first). Read ``page`` at a time by id, so a long log is never held whole."""
    if limit is not None and limit < 1:
        return
    after = _first_of_newest(session, where, limit) - 1 if limit is not None else 0
    left = limit
    while left is None or left > 0:
        size = page if left is None else min(page, left)
        rows = [
            event_view(e)
            for e in session.scalars(_filtered(where).where(Event.id > after).order_by(Event.id).limit(size))
        ]
        yield from rows
        if len(rows) < size:
            return
        after = rows[-1].id
        if left is not None:
            left -= len(rows)
