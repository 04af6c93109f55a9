"""The attention queue: occurrences that wait for a person (an effect nobody
can vouch for, a failure nobody has looked at), what people already decided
about each, and acknowledging them.

Every function takes a session; "now" is an argument, never read from a clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.ledger import events
from core.ledger.events import EventKind
from core.ledger.models import Event, Occurrence
from core.ledger.monitor_queries import AttemptView, id_chunks, last_attempts
from core.ledger.queries import EventView, OccurrenceView, event_actor, occurrence_view
from core.ledger.states import OccurrenceState
from core.team.actor import Actor

_S = OccurrenceState

#: States that wait for a person: an effect nobody can vouch for, and a failure nobody has looked at.
ATTENTION_STATES: frozenset[OccurrenceState] = frozenset({_S.UNKNOWN_EFFECT, _S.FAILED})

#: The event kind that takes a FAILED occurrence out of the attention queue
#: (a person acknowledged it, or asked for it to run again).
ACKNOWLEDGED: str = EventKind.OCCURRENCE_ACKNOWLEDGED.value


#: Earlier decisions kept per occurrence (the newest ones); the rest are counted.
DECISIONS_KEPT = 5


@dataclass(frozen=True)
class PastDecision:
    """A person's earlier decision about the same occurrence, from the event log."""

    at: datetime
    #: ``happened``, ``not-happened`` or ``abandon`` (reconciled); ``acknowledged`` or ``retried`` (a failure).
    action: str
    note: str | None
    #: Who decided; None for a decision recorded before actors were (migration 0008).
    actor: Actor | None = None


@dataclass(frozen=True)
class AttentionItem:
    """An occurrence waiting for a person, with what is known about it."""

    occurrence: OccurrenceView
    last_attempt: AttemptView | None
    #: When it started waiting: its last attempt's end, else its last change.
    since: datetime
    #: How long it has waited (now − since).
    age: timedelta
    #: How long ago its last attempt started (now − start); None without an attempt.
    attempt_age: timedelta | None = None
    #: Earlier decisions on this occurrence, oldest first, newest last (at most DECISIONS_KEPT).
    decisions: tuple[PastDecision, ...] = ()
    #: Earlier decisions older than those kept.
    older_decisions: int = 0

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


def touches_attention(event: EventView) -> bool:
    """Whether the event may have changed the attention queue: an acknowledgement, or a
    transition into or out of a state that waits for a person."""
    if event.kind == ACKNOWLEDGED:
        return True
    if event.kind != EventKind.OCCURRENCE_TRANSITIONED.value:
        return False
    return bool({event.data.get("from"), event.data.get("to")} & {s.value for s in ATTENTION_STATES})


def _decision(kind: str, at: datetime, data: Mapping[str, Any], actor: Actor | None) -> PastDecision | None:
    """The person's decision an event records, or None for an event that is no decision."""
    if kind == ACKNOWLEDGED:
        return PastDecision(at, str(data.get("action") or "acknowledged"), data.get("note"), actor)
    decision = data.get("decision")  # a reconciliation (core.engine.reconcile) names it; the engine's moves do not
    return PastDecision(at, str(decision), data.get("note"), actor) if decision else None


def past_decisions(
    session: Session, occurrence_ids: Iterable[str], *, keep: int = DECISIONS_KEPT
) -> dict[str, tuple[tuple[PastDecision, ...], int]]:
    """People's decisions on each of these occurrences, from the event log: the newest
    ``keep`` of them, oldest first, and how many older ones were left out.
    Occurrences without a decision are absent."""
    found: dict[str, list[PastDecision]] = {}
    kinds = (EventKind.OCCURRENCE_TRANSITIONED.value, ACKNOWLEDGED)
    for chunk in id_chunks(list(dict.fromkeys(occurrence_ids))):
        stmt = (
            select(
                *(Event.occurrence_id, Event.kind, Event.at, Event.data),
                *(Event.actor_user, Event.actor_host, Event.actor_role),
            )
            .where(Event.occurrence_id.in_(chunk), Event.kind.in_(kinds))
            .order_by(Event.id)
        )
        for occurrence_id, kind, at, data, user, host, role in session.execute(stmt):
            decision = _decision(kind, at, data or {}, event_actor(user, host, role))
            if decision is not None and occurrence_id is not None:
                found.setdefault(occurrence_id, []).append(decision)
    return {oid: (tuple(ds[-keep:]) if keep > 0 else (), max(len(ds) - keep, 0)) for oid, ds in found.items()}


def attention_items(session: Session, now: datetime, *, limit: int = 200) -> list[AttentionItem]:
    """The queue, the longest-waiting first (unknown effects before failures of the same age),
    each with its last attempt and the decisions people already made about it."""
    ids = attention_ids(session)
    if not ids:
        return []
    views: list[OccurrenceView] = []
    for chunk in id_chunks(sorted(ids)):
        views.extend(
            occurrence_view(o) for o in session.scalars(select(Occurrence).where(Occurrence.occurrence_id.in_(chunk)))
        )
    last = last_attempts(session, ids)
    waiting = []
    for v in views:
        attempt = last.get(v.occurrence_id)
        since = attempt.finished_at if attempt is not None and attempt.finished_at is not None else v.updated_at
        waiting.append((since, v, attempt))
    waiting.sort(key=lambda w: (w[0], w[1].state is not _S.UNKNOWN_EFFECT, w[1].occurrence_id))
    waiting = waiting[:limit]
    decided = past_decisions(session, [v.occurrence_id for _, v, _ in waiting])
    items = []
    for since, v, attempt in waiting:
        decisions, older = decided.get(v.occurrence_id, ((), 0))
        attempt_age = max(now - attempt.started_at, timedelta(0)) if attempt is not None else None
        items.append(AttentionItem(v, attempt, since, max(now - since, timedelta(0)), attempt_age, decisions, older))
    return items


def acknowledge(
    session: Session,
    occurrence_id: str,
    at: datetime,
    *,
    note: str | None = None,
    action: str = "acknowledged",
    retried_as: str | None = None,
) -> None:
    """Record that a person has dealt with a FAILED occurrence (it leaves the queue).

    The occurrence itself does not change (FAILED is terminal); the event log
    keeps who decided what. ``action`` is ``acknowledged`` or ``retried``
    (``retried_as`` names the new run).
    """
    occ = session.get(Occurrence, occurrence_id)
    if occ is None:
        raise LookupError(f"{occurrence_id}: no such occurrence in this ledger")
    events.append(
        session,
        events.OccurrenceAcknowledged(
            at=at,
            schedule_id=occ.schedule_id,
            occurrence_id=occurrence_id,
            action=action,
            note=note,
            state=occ.state,
            retried_as=retried_as,
        ),
    )


__all__ = [
    "ACKNOWLEDGED",
    "ATTENTION_STATES",
    "DECISIONS_KEPT",
    "AttentionItem",
    "PastDecision",
    "acknowledge",
    "attention_ids",
    "attention_items",
    "past_decisions",
]
