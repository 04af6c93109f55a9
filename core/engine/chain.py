"""after_completion schedules: each run's end appoints the next one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from core.identity import IdFactory
from core.ledger import events
from core.ledger.compiled import resolving_tzdb, revision_schedule
from core.ledger.models import Occurrence, Revision
from core.ledger.states import OccurrenceKind, OccurrenceState
from core.spec.facts import RunFacts
from core.time.formats import fmt_local, fmt_utc
from core.version import tidemark_version


def schedule_next(session: Session, previous: Occurrence, spec: RunFacts, finished: datetime) -> str | None:
    """Insert the occurrence due ``delay`` after ``finished``; returns its id (None if it existed)."""
    assert spec.delay is not None
    instant = (finished + spec.delay).astimezone(UTC).replace(microsecond=0)
    # The revision's own zone: the pinned one under tzdbPolicy PIN.
    published = session.get(Revision, (spec.schedule_id, spec.revision))
    assert published is not None
    local = instant.astimezone(revision_schedule(published).zone)
    nominal = fmt_local(local.replace(tzinfo=None))
    ids = IdFactory(spec.schedule_id, spec.revision)
    occurrence_id = ids.occurrence(nominal, local.fold)
    resolved = fmt_utc(instant)
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    row = {
        "occurrence_id": occurrence_id,
        "schedule_id": spec.schedule_id,
        "revision": spec.revision,
        "kind": OccurrenceKind.SCHEDULED,
        "nominal_local": nominal,
        "fold_ordinal": local.fold,
        "resolved_utc": instant,
        "position_utc": instant,
        "due_at": instant,
        "logical_slot_id": ids.slot(resolved),
        "business_period": spec.business_period.format(nominal=local.replace(tzinfo=None))
        if spec.business_period
        else None,
        "state": OccurrenceState.PLANNED,
        "reason": f"due {spec.delay} after {previous.occurrence_id} ended",
        "tzdb_version": resolving_tzdb(published),
        "engine_version": tidemark_version(),
        "created_at": finished,
        "updated_at": finished,
    }
    result = session.execute(insert(Occurrence).values(**row).on_conflict_do_nothing())
    if not cast("CursorResult[Any]", result).rowcount:
        return None
    events.append(
        session,
        events.OccurrenceCreated(
            at=finished,
            schedule_id=spec.schedule_id,
            occurrence_id=occurrence_id,
            occurrence_kind=OccurrenceKind.SCHEDULED,
            reason=f"appointed after {previous.occurrence_id} ended",
        ),
    )
    return occurrence_id
