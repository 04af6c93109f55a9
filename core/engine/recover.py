"""The recover stage: attempts whose engine stopped have lost their outcome
(docs/ledger.md, "Life of an occurrence", step 3, and "A crash while a task
runs").

An attempt is lost when its lease expired, its epoch was fenced, or its
engine's process is seen gone on this host. Its outcome is settled by
invariant 5 (:func:`core.engine.settle.settle`), unless its task still runs:
then this engine watches it as an orphan (:mod:`core.engine.orphans`) and
settles it once it ends.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.engine import orphans, run, statements
from core.engine.context import Context, PassReport
from core.engine.outcomes import decide
from core.engine.output_keep import forget_kept, read_kept
from core.engine.processes import this_host
from core.engine.settle import AttemptEnd, Settling, settle
from core.engine.statements import IN_FLIGHT
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Occurrence
from core.ledger.states import OccurrenceState

_S = OccurrenceState


def recover_lost(ledger: Ledger, ctx: Context, report: PassReport) -> None:
    """Attempts whose engine stopped (lease expired, fenced by a newer epoch, or
    its process seen gone on this host) have lost their outcome: settle them by
    invariant 5, unless their task still runs (then it is watched: see
    :mod:`core.engine.orphans`). Occurrences this engine runs now, and those of a
    revision it cannot read, are left alone."""
    now = ctx.clock.now()
    with ledger.read() as session:
        epoch = statements.epoch(session)
        candidates = session.execute(
            select(
                Occurrence.occurrence_id,
                Occurrence.lease_expires_at,
                Occurrence.lease_owner,
                Occurrence.schedule_id,
                Occurrence.revision,
            ).where(Occurrence.state.in_(IN_FLIGHT))
        ).all()
        fenced = set(
            session.scalars(
                select(Attempt.occurrence_id).where(Attempt.finished_at.is_(None), Attempt.execution_epoch != epoch)
            ).all()
        )
    with ctx.lock:
        mine = set(ctx.mine)
    for occ_id, lease, owner, sid, revision in candidates:
        if occ_id in mine or (sid, revision) in ctx.unreadable.revisions:
            continue
        watched = owner == ctx.worker  # an orphan this engine watches: looked at every pass
        held = lease is not None and lease > now and occ_id not in fenced
        if held and not watched and not _claimant_gone(ledger, ctx, occ_id, owner):
            continue
        settled = settle_lost(ledger, ctx, occ_id, now)
        if settled is None:
            report.orphans += 1
        elif settled:
            report.recovered += 1


def _claimant_gone(ledger: Ledger, ctx: Context, occurrence_id: str, owner: str | None) -> bool:
    """Whether the engine holding a live lease is certainly dead (on this host only)."""
    if owner is None or not owner.startswith(ctx.process.host + ":"):
        return False  # another host: its lease decides
    with ledger.read() as session:
        return orphans.claimant_gone(owner, last_attempt(session, occurrence_id))


def last_attempt(session: Session, occurrence_id: str) -> Attempt | None:
    """The occurrence's newest attempt."""
    return session.scalar(
        select(Attempt).where(Attempt.occurrence_id == occurrence_id).order_by(Attempt.attempt_number.desc()).limit(1)
    )


def settle_lost(ledger: Ledger, ctx: Context, occurrence_id: str, now: datetime) -> bool | None:
    """Settle a lost attempt; False when someone else did, None when its task still runs."""
    with ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id)
        if occ is None or occ.state not in IN_FLIGHT:
            return False
        spec = ctx.specs.of(session, occ.schedule_id, occ.revision)
        attempt = last_attempt(session, occurrence_id)
        generation = occ.claim_generation
        identity = run.identity(occ, attempt.attempt_id if attempt else "", attempt.attempt_number if attempt else 0)
    task = spec.task
    assert task is not None
    orphan = orphans.find(attempt) if attempt is not None else None
    if orphan is not None:
        watch(ledger, ctx, occurrence_id, generation, orphan, task.timeout, now)
        return None
    number = attempt.attempt_number if attempt is not None else 1
    outcome = decide(
        exit_status=None,
        error_class="lost",
        effect=task.effect,
        retry=spec.retry,
        attempt_number=number,
        probe=run.probe(task, identity, ctx.clock) if task.verify else None,
    )
    with ledger.write() as session:
        occ = session.get(Occurrence, occurrence_id, populate_existing=True)
        if occ is None or occ.state not in IN_FLIGHT or occ.claim_generation != generation:
            return False  # someone settled it meanwhile
        ended = AttemptEnd(attempt.attempt_id, kept=_kept(attempt)) if attempt is not None else None
        settle(session, Settling(occ.schedule_id, occurrence_id, occ.state), outcome, now, spec, attempt=ended)
    if attempt is not None:
        forget_kept(attempt.attempt_id)
    return True


def _kept(attempt: Attempt) -> tuple[str, str] | None:
    """What the lost attempt had printed, kept on disk by its engine when it ran on this host."""
    if attempt.worker_host != this_host():
        return None
    return read_kept(attempt.attempt_id)


def watch(
    ledger: Ledger,
    ctx: Context,
    occurrence_id: str,
    generation: int,
    orphan: orphans.Orphan,
    timeout: timedelta,
    now: datetime,
) -> None:
    """Keep an orphaned task's occurrence RUNNING under this engine's lease, say
    so, and end its group once it outlives its timeout."""
    late = orphans.overdue(orphan, timeout, now)
    ended = orphans.end_group(orphan, late) if late is not None else None
    reason = orphans.watched_reason(orphan) + (f"; {ended}" if ended else "")
    with ledger.write() as session:
        occ = session.get(Occurrence, occurrence_id, populate_existing=True)
        if occ is None or occ.state not in IN_FLIGHT or occ.claim_generation != generation:
            return
        found = occ.lease_owner != ctx.worker
        row = session.scalar(
            select(Attempt).where(
                Attempt.occurrence_id == occurrence_id, Attempt.attempt_number == orphan.attempt_number
            )
        )
        if row is not None and row.task_pid is None:  # found by its SCHED_ATTEMPT_ID: recorded now
            row.task_pid, row.task_started = orphan.process.pid, orphan.process.started
        occ.lease_owner = ctx.worker
        occ.lease_expires_at = now + ctx.options.lease
        if occ.state is _S.DISPATCHING:
            events.transition(session, occ, _S.RUNNING, now, reason, {"attempt": orphan.attempt_number})
        elif found or ended:
            occ.reason = reason
            occ.updated_at = now
        if found or ended:
            orphaned = events.AttemptOrphaned(
                at=now,
                schedule_id=occ.schedule_id,
                occurrence_id=occurrence_id,
                attempt=orphan.attempt_number,
                host=orphan.process.host,
                pid=orphan.process.pid,
                started=orphan.process.started,
                reason=reason,
            )
            events.append(session, orphaned)
