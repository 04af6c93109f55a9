"""Operations a person asks for: fence the ledger, run a schedule now, backfill
a past range. Each is one recorded unit of work."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.clock import Clock
from core.engine.orphans import live_attempt, live_settled_attempt
from core.errors import UserError
from core.identity import canonical
from core.ledger import events
from core.ledger.access import writing
from core.ledger.attention_queries import acknowledge
from core.ledger.compiled import resolving_tzdb, revision_schedule
from core.ledger.db import Ledger
from core.ledger.materialize import governing_segments, materialize
from core.ledger.models import LedgerMeta, Occurrence, Revision
from core.ledger.publish import get_schedule
from core.ledger.states import OccurrenceKind, OccurrenceState, ScheduleState
from core.recurrence.expand import expand
from core.recurrence.occurrence import Occurrence as Row
from core.team.actor import Actor
from core.time.formats import fmt_local, fmt_utc
from core.version import tidemark_version

_S = OccurrenceState
#: Rows one backfill may create.
MAX_BACKFILL = 10_000


class AdminError(UserError):
    """A request that the ledger's state refuses (the message says why)."""


def fence(ledger: Ledger, clock: Clock, note: str | None = None, actor: Actor | None = None) -> int:
    """Bump the execution epoch: claims made under an older epoch can no longer
    record outcomes, and their attempts are settled as lost by the next pass.
    ``actor``: who asks (default: this process's OS user and host), as for every command here."""
    now = clock.now()
    with writing(ledger, actor) as session:
        meta = session.scalars(select(LedgerMeta).with_for_update()).one()
        meta.execution_epoch += 1
        session.execute(
            update(Occurrence).where(Occurrence.state.in_((_S.DISPATCHING, _S.RUNNING))).values(lease_expires_at=now)
        )
        events.append(
            session,
            events.LedgerFenced(at=now, epoch=meta.execution_epoch, note=note),
        )
        return meta.execution_epoch


def _active_revision(session: Session, schedule_id: str) -> Revision:
    schedule = get_schedule(session, schedule_id, for_update=True)
    revision = session.get(Revision, (schedule_id, schedule.active_revision))
    assert revision is not None
    if schedule.state is not ScheduleState.ACTIVE:
        raise AdminError(f"{schedule_id} is {schedule.state.value}; resume it first")
    return revision


def _refuse_beside_live_attempt(session: Session, schedule_id: str) -> None:
    """A task run again never starts beside an earlier attempt whose process still lives."""
    found = live_settled_attempt(session, schedule_id)
    if found is not None:
        occurrence_id, orphan = found
        raise AdminError(
            f"{schedule_id}: {occurrence_id}'s {orphan.describe()}; wait until it ends (or end it), then run it again"
        )


def run_now(ledger: Ledger, schedule_id: str, clock: Clock, note: str | None = None, actor: Actor | None = None) -> str:
    """A manual occurrence of the schedule's task, due at once. Its id is random:
    it is its own obligation, not a copy of a scheduled one."""
    with writing(ledger, actor) as session:
        return run_now_in(session, schedule_id, clock, note)


def run_now_in(session: Session, schedule_id: str, clock: Clock, note: str | None = None) -> str:
    """:func:`run_now` in the caller's write transaction."""
    now = clock.now().astimezone(UTC).replace(microsecond=0)
    revision = _active_revision(session, schedule_id)
    _refuse_beside_live_attempt(session, schedule_id)
    local = now.astimezone(revision_schedule(revision).zone)
    occurrence_id = "occ-" + uuid.uuid4().hex
    reason = "run now by a person" + (f" ({note})" if note else "")
    _add_due(
        session,
        occurrence_id,
        schedule_id,
        revision.revision,
        OccurrenceKind.MANUAL,
        fmt_local(local.replace(tzinfo=None)),
        local.fold,
        now,
        now,
        None,
        reason,
        now,
    )
    return occurrence_id


@dataclass(frozen=True)
class BackfillResult:
    #: New backfill occurrences (for occurrences that ended without running, or never existed).
    created: tuple[str, ...]
    #: Occurrences of the range left alone, with why (already ran, still live...).
    left: tuple[tuple[str, str], ...]
    #: Materialized occurrences of the range that had not run yet, made due now under their own ids.
    queued: tuple[str, ...] = ()


_RERUNNABLE = frozenset({_S.MISFIRE_EXPIRED, _S.SKIPPED_OVERLAP, _S.FAILED})


def backfill(
    ledger: Ledger,
    schedule_id: str,
    start: datetime,
    end: datetime,
    clock: Clock,
    note: str | None = None,
    actor: Actor | None = None,
) -> BackfillResult:
    """Run the schedule's occurrences with positions in [start, end) that never ran.

    The range is materialized first. Occurrences not yet run are made due now
    under their own ids; those that ended without running (expired, skipped for
    overlap, failed) or never existed get a new BACKFILL occurrence, due now.
    The engine runs them oldest first. Occurrences that succeeded, are still
    live, wait for a person or were already backfilled are left alone: a
    backfill never repeats an effect that happened or may have happened.
    """
    with writing(ledger, actor) as session:
        return backfill_in(session, schedule_id, start, end, clock, note)


def backfill_in(
    session: Session, schedule_id: str, start: datetime, end: datetime, clock: Clock, note: str | None = None
) -> BackfillResult:
    """:func:`backfill` in the caller's write transaction."""
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("backfill bounds must be aware instants")
    now = clock.now().astimezone(UTC).replace(microsecond=0)
    if end > now:
        raise AdminError(f"--to {fmt_utc(end)} is in the future; a backfill runs a past range")
    if start >= end:
        raise AdminError("--from must be before --to")
    request = uuid.uuid4().hex
    created: list[str] = []
    queued: list[str] = []
    left: list[tuple[str, str]] = []
    _active_revision(session, schedule_id)
    # Materialize the range first, so that an occurrence is never both
    # materialized later (and caught up) and backfilled.
    for _ in range(1000):
        if not materialize(session, schedule_id, clock, until=end).more:
            break
    revisions = {r.revision: r for r in session.scalars(select(Revision).where(Revision.schedule_id == schedule_id))}
    rows: list[tuple[int, Row]] = []
    for number, lo, hi in governing_segments([(r.revision, r.cutover_at) for r in revisions.values()], start, end):
        rows.extend((number, row) for row in expand(revision_schedule(revisions[number]), lo, hi) if row.runnable)
    if len(rows) > MAX_BACKFILL:
        raise AdminError(f"the range holds {len(rows):,} occurrences; backfill at most {MAX_BACKFILL:,} at a time")
    existing = {
        o.occurrence_id: o
        for o in session.scalars(
            select(Occurrence).where(
                Occurrence.schedule_id == schedule_id,
                Occurrence.occurrence_id.in_([row.occurrence_id for _, row in rows]),
            )
        )
    }
    earlier = {
        (o.nominal_local, o.fold_ordinal): o
        for o in session.scalars(
            select(Occurrence).where(
                Occurrence.schedule_id == schedule_id,
                Occurrence.kind == OccurrenceKind.BACKFILL,
                Occurrence.state.not_in(_RERUNNABLE),
                Occurrence.nominal_local.in_([row.nominal_local for _, row in rows]),
            )
        )
    }
    for number, row in rows:
        found = existing.get(row.occurrence_id)
        if found is not None and found.state is _S.PLANNED:
            # Not run yet: it runs now under its own id (no copy, no misfire decision).
            reason = "due now: backfill requested" + (f" ({note})" if note else "")
            events.transition(session, found, _S.DUE, now, reason)
            found.due_at = now
            queued.append(found.occurrence_id)
            continue
        if found is not None and found.state not in _RERUNNABLE:
            left.append((row.occurrence_id, f"{found.state.value}: not run again"))
            continue
        orphan = live_attempt(session, found.occurrence_id) if found is not None else None
        if orphan is not None:
            left.append((row.occurrence_id, f"{orphan.describe()}: not run again beside it"))
            continue
        done = earlier.get((row.nominal_local, row.fold_ordinal))
        if done is not None:
            left.append((row.occurrence_id, f"already backfilled as {done.occurrence_id} ({done.state.value})"))
            continue
        occurrence_id = "occ-" + _digest(canonical(["backfill", request, row.occurrence_id]))
        reason = f"backfill of {row.occurrence_id} ({row.nominal_local})" + (f": {note}" if note else "")
        _add_due(
            session,
            occurrence_id,
            schedule_id,
            number,
            OccurrenceKind.BACKFILL,
            row.nominal_local,
            row.fold_ordinal,
            row.resolved,
            row.position,
            row.period,
            reason,
            now,
            row.occurrence_id,
        )
        created.append(occurrence_id)
    return BackfillResult(tuple(created), tuple(left), tuple(queued))


def _add_due(
    session: Session,
    occurrence_id: str,
    schedule_id: str,
    revision: int,
    kind: OccurrenceKind,
    nominal_local: str,
    fold_ordinal: int,
    resolved: datetime | None,
    position: datetime,
    period: str | None,
    reason: str,
    now: datetime,
    of: str | None = None,
) -> None:
    """Insert an occurrence made by a person's request, due now, with its event.

    It holds no logical slot: a manual or backfill run never blocks a scheduled one.
    """
    published = session.get(Revision, (schedule_id, revision))
    assert published is not None
    session.add(
        Occurrence(
            occurrence_id=occurrence_id,
            schedule_id=schedule_id,
            revision=revision,
            kind=kind,
            nominal_local=nominal_local,
            fold_ordinal=fold_ordinal,
            resolved_utc=resolved,
            position_utc=position,
            due_at=now,
            logical_slot_id=None,
            business_period=period,
            state=_S.DUE,
            reason=reason,
            tzdb_version=resolving_tzdb(published),
            engine_version=tidemark_version(),
            created_at=now,
            updated_at=now,
        )
    )
    events.append(
        session,
        events.OccurrenceCreated(
            at=now, schedule_id=schedule_id, occurrence_id=occurrence_id, occurrence_kind=kind, reason=reason, of=of
        ),
    )


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def acknowledge_failed(
    ledger: Ledger, occurrence_id: str, clock: Clock, note: str | None = None, actor: Actor | None = None
) -> None:
    """A person has seen a FAILED occurrence and lets it be: it leaves the attention queue."""
    with writing(ledger, actor) as session:
        _failed(session, occurrence_id)
        acknowledge(session, occurrence_id, clock.now(), note=note)


def retry_failed(
    ledger: Ledger, occurrence_id: str, clock: Clock, note: str | None = None, actor: Actor | None = None
) -> str:
    """Run a FAILED occurrence again and acknowledge it, in one transaction: either both
    happen or neither. A manual run gets a new manual run; a scheduled one is backfilled.
    Returns the id of the new run."""
    with writing(ledger, actor) as session:
        occ = _failed(session, occurrence_id)
        if occ.kind is OccurrenceKind.MANUAL:
            new_id = run_now_in(session, occ.schedule_id, clock, note or f"again after {occurrence_id} failed")
        else:
            start = occ.position_utc
            result = backfill_in(session, occ.schedule_id, start, start + timedelta(seconds=1), clock, note)
            made = result.created + result.queued
            if not made:
                why = "; ".join(reason for _, reason in result.left) or "nothing in that range can run again"
                raise AdminError(f"{occurrence_id} was not run again: {why}")
            new_id = made[0]
        acknowledge(session, occurrence_id, clock.now(), note=note, action="retried", retried_as=new_id)
    return new_id


def _failed(session: Session, occurrence_id: str) -> Occurrence:
    occ = session.get(Occurrence, occurrence_id, populate_existing=True)
    if occ is None:
        raise AdminError(f"no occurrence {occurrence_id} in this ledger")
    if occ.state is not OccurrenceState.FAILED:
        raise AdminError(f"{occurrence_id} is {occ.state.value}, not FAILED; read the list again")
    return occ
