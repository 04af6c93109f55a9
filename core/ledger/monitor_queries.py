"""The monitor's view of one occurrence: its attempts, its events, the
revision that made it, and each schedule's time zone.

Like :mod:`core.ledger.queries`, every function takes a session and returns
frozen values that outlive it. Nothing here reads a clock.

The other read models of the monitor live beside this one:
:mod:`core.ledger.occurrence_pages` (random-access pages of the occurrences
table), :mod:`core.ledger.attention_queries` (the queue of occurrences that need
a person) and :mod:`core.ledger.health_queries` (health series, recent results).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.ledger.event_types import EventKind
from core.ledger.models import Attempt, Event, Occurrence, Revision, Schedule
from core.ledger.queries import EventView, OccurrenceView, event_view, occurrence_view
from core.ledger.states import OccurrenceState, ScheduleState


@dataclass(frozen=True)
class AttemptView:
    """One execution (docs/contract.md §4, invariant 4)."""

    attempt_id: str
    occurrence_id: str
    attempt_number: int
    claim_generation: int
    execution_epoch: int
    worker_host: str
    worker_pid: int
    started_at: datetime
    finished_at: datetime | None
    exit_status: int | None
    error_class: str | None
    input_digest: str
    stdout_tail: str | None
    stderr_tail: str | None
    #: The state the occurrence moved to because of this attempt (None while it runs).
    outcome: OccurrenceState | None

    @property
    def worker(self) -> str:
        return f"{self.worker_host}:{self.worker_pid}"

    @property
    def duration(self) -> timedelta | None:
        return None if self.finished_at is None else self.finished_at - self.started_at

    def ending(self) -> str:
        """How it ended, in words: ``exit 0``, ``exit 3``, ``timeout``, ``running``."""
        if self.finished_at is None:
            return "running"
        if self.error_class is not None:
            return self.error_class.replace("_", " ")
        return f"exit {self.exit_status}"


def _attempt(a: Attempt) -> AttemptView:
    return AttemptView(
        a.attempt_id,
        a.occurrence_id,
        a.attempt_number,
        a.claim_generation,
        a.execution_epoch,
        a.worker_host,
        a.worker_pid,
        a.started_at,
        a.finished_at,
        a.exit_status,
        a.error_class,
        a.input_digest,
        a.stdout_tail,
        a.stderr_tail,
        a.outcome,
    )


def attempts_of(session: Session, occurrence_id: str) -> list[AttemptView]:
    """Every attempt of one occurrence, oldest first."""
    stmt = select(Attempt).where(Attempt.occurrence_id == occurrence_id).order_by(Attempt.attempt_number)
    return [_attempt(a) for a in session.scalars(stmt)]


def last_attempts(session: Session, occurrence_ids: Iterable[str]) -> dict[str, AttemptView]:
    """The newest attempt of each of these occurrences (those without one are absent)."""
    ids = list(dict.fromkeys(occurrence_ids))
    out: dict[str, AttemptView] = {}
    for chunk in id_chunks(ids):
        stmt = select(Attempt).where(Attempt.occurrence_id.in_(chunk)).order_by(Attempt.attempt_number)
        for a in session.scalars(stmt):
            out[a.occurrence_id] = _attempt(a)  # a later number overwrites an earlier one
    return out


def events_of(session: Session, occurrence_id: str, *, limit: int = 500) -> list[EventView]:
    """The events of one occurrence, oldest first (at most ``limit``, the newest ones)."""
    stmt = select(Event).where(Event.occurrence_id == occurrence_id).order_by(Event.id.desc()).limit(limit)
    found = [event_view(e) for e in session.scalars(stmt)]
    return found[::-1]


#: The events that move a schedule's gate.
_GATE_KINDS = (
    EventKind.SCHEDULE_PAUSED.value,
    EventKind.SCHEDULE_RESUMED.value,
    EventKind.SCHEDULE_DISABLED.value,
)


def held_by(session: Session, schedule_ids: Iterable[str]) -> dict[str, EventView]:
    """For each of these schedules that is paused or disabled, the event that made it so
    (with who did it); active schedules are absent."""
    held = [
        sid
        for sid, state in session.execute(select(Schedule.id, Schedule.state).where(Schedule.id.in_(set(schedule_ids))))
        if state is not ScheduleState.ACTIVE
    ]
    found: dict[str, EventView] = {}
    for sid in held:
        stmt = select(Event).where(Event.schedule_id == sid, Event.kind.in_(_GATE_KINDS)).order_by(Event.id.desc())
        last = session.scalars(stmt.limit(1)).first()
        if last is not None and last.kind != EventKind.SCHEDULE_RESUMED.value:
            found[sid] = event_view(last)
    return found


@dataclass(frozen=True)
class Origin:
    """Why an occurrence exists: the revision that made it and what that revision says."""

    occurrence: OccurrenceView
    time_zone: str
    kind: str
    rule: str | None
    cutover_at: datetime
    tzdb_version: str
    #: The revision's policies (gapPolicy, foldPolicy, misfirePolicy, overlapPolicy, ...), as published.
    policies: Mapping[str, Any] = field(default_factory=dict)
    #: The task's effect and timeout.
    task: Mapping[str, Any] = field(default_factory=dict)


_POLICY_KEYS = (
    "gapPolicy",
    "foldPolicy",
    "invalidDatePolicy",
    "misfirePolicy",
    "maxCatchUp",
    "latenessWindow",
    "catchUpWindow",
    "overlapPolicy",
    "jitter",
    "retry",
    "every",
    "delay",
)


def origin_of(session: Session, occurrence_id: str) -> Origin | None:
    """The occurrence with its revision's rule and policies; None when there is no such occurrence."""
    occ = session.get(Occurrence, occurrence_id)
    if occ is None:
        return None
    revision = session.get(Revision, (occ.schedule_id, occ.revision))
    spec: dict[str, Any] = json.loads(revision.spec_json) if revision is not None else {}
    task = spec.get("task") or {}
    return Origin(
        occurrence_view(occ),
        str(spec.get("timeZone", "UTC")),
        str(spec.get("kind", "")),
        spec.get("rule"),
        revision.cutover_at if revision is not None else occ.position_utc,
        revision.tzdb_version if revision is not None else occ.tzdb_version,
        {k: spec[k] for k in _POLICY_KEYS if spec.get(k) is not None},
        {k: task[k] for k in ("argv", "effect", "timeout", "verify") if task.get(k) is not None},
    )


def schedule_zones(session: Session) -> dict[str, str]:
    """Each schedule's time zone, from its active revision."""
    stmt = select(Schedule.id, Revision.spec_json).join(
        Revision, (Revision.schedule_id == Schedule.id) & (Revision.revision == Schedule.active_revision)
    )
    return {sid: str(json.loads(text).get("timeZone", "UTC")) for sid, text in session.execute(stmt)}


def id_chunks(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    """``items`` in slices of at most ``size``, to keep each ``IN (...)`` list short."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


__all__ = [
    "AttemptView",
    "Origin",
    "attempts_of",
    "events_of",
    "id_chunks",
    "last_attempts",
    "origin_of",
    "schedule_zones",
]
