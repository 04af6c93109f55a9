"""The attention queue: occurrences that wait for a person (an effect nobody
can vouch for, a failure nobody has looked at), and acknowledging them.

Every function takes a session; "now" is an argument, never read from a clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from core.ledger.db import lock_for_write
from core.ledger.events import EventKind
from core.ledger.models import Event, Occurrence
from core.ledger.monitor_queries import AttemptView, id_chunks, last_attempts
from core.ledger.queries import OccurrenceView, occurrence_view
from core.ledger.states import OccurrenceState

_S = OccurrenceState

#: States that wait for a person: an effect nobody can vouch for, and a failure nobody has looked at.
ATTENTION_STATES: frozenset[OccurrenceState] = frozenset({_S.UNKNOWN_EFFECT, _S.FAILED})

#: The event kind that takes a FAILED occurrence out of the attention queue
#: (a person acknowledged it, or asked for it to run again).
ACKNOWLEDGED: str = EventKind.OCCURRENCE_ACKNOWLEDGED.value


@dataclass(frozen=True)
class AttentionItem:
    """An occurrence waiting for a person, with what is known about it."""

    occurrence: OccurrenceView
    last_attempt: AttemptView | None
    #: When it started waiting: its last attempt's end, else its last change.
    since: datetime
    age: timedelta

    @property
    def occurrence_id(self) -> str:
        return self.occurrence.occurrence_id

    @property
    def state(self) -> OccurrenceState:
        return self.occurrence.state


def _acknowledged(session: Session, ids: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for chunk in id_chunks(list(ids)):
        out.update(
            i
            for i in session.scalars(
                select(Event.occurrence_id).where(Event.kind == ACKNOWLEDGED, Event.occurrence_id.in_(chunk))
            )
            if i is not None
        )
    return out


def attention_ids(session: Session) -> set[str]:
    """Ids of every occurrence in the queue: UNKNOWN_EFFECT ones, and FAILED ones nobody acknowledged."""
    rows = session.execute(
        select(Occurrence.occurrence_id, Occurrence.state).where(Occurrence.state.in_(sorted(ATTENTION_STATES)))
    ).all()
    failed = [oid for oid, state in rows if state is _S.FAILED]
    done = _acknowledged(session, failed) if failed else set()
    return {oid for oid, _ in rows if oid not in done}


def attention_items(session: Session, now: datetime, *, limit: int = 200) -> list[AttentionItem]:
    """The queue, the longest-waiting first (unknown effects before failures of the same age)."""
    ids = attention_ids(session)
    if not ids:
        return []
    views: list[OccurrenceView] = []
    for chunk in id_chunks(sorted(ids)):
        views.extend(
            occurrence_view(o) for o in session.scalars(select(Occurrence).where(Occurrence.occurrence_id.in_(chunk)))
        )
    last = last_attempts(session, ids)
    items = []
    for v in views:
        attempt = last.get(v.occurrence_id)
        since = attempt.finished_at if attempt is not None and attempt.finished_at is not None else v.updated_at
        items.append(AttentionItem(v, attempt, since, max(now - since, timedelta(0))))
    items.sort(key=lambda i: (i.since, i.state is not _S.UNKNOWN_EFFECT, i.occurrence_id))
    return items[:limit]


def acknowledge(
    session: Session,
    occurrence_id: str,
    at: datetime,
    *,
    note: str | None = None,
    action: str = "acknowledged",
    data: Mapping[str, Any] | None = None,
) -> None:
    """Record that a person has dealt with a FAILED occurrence (it leaves the queue).

    The occurrence itself does not change (FAILED is terminal); the event log
    keeps who decided what. ``action`` is ``acknowledged`` or ``retried``.
    """
    occ = session.get(Occurrence, occurrence_id)
    if occ is None:
        raise LookupError(f"{occurrence_id}: no such occurrence in this ledger")
    payload: dict[str, Any] = {"action": action, "note": note, "state": occ.state.value}
    if data:
        payload.update(data)
    lock_for_write(session)
    session.execute(
        insert(Event),
        [
            {
                "at": at,
                "schedule_id": occ.schedule_id,
                "occurrence_id": occurrence_id,
                "kind": EventKind.OCCURRENCE_ACKNOWLEDGED.value,
                "data": payload,
            }
        ],
    )


__all__ = [
    "ACKNOWLEDGED",
    "ATTENTION_STATES",
    "AttentionItem",
    "acknowledge",
    "attention_ids",
    "attention_items",
]
