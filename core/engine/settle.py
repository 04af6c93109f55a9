"""The settle stage: record an occurrence's outcome (docs/ledger.md, "Outcomes").

:func:`settle` is the one way an outcome is recorded, whoever decided it: a
worker whose task ended (:func:`record`, on the engine's hot path), recovery
finding an attempt whose outcome was lost (:mod:`core.engine.recover`), or a
person reconciling an unknown effect (:mod:`core.engine.reconcile`). It ends
the attempt's row, moves the occurrence, clears its lease, sets its retry
time, appoints the next run of an after_completion schedule, and writes the
events, all in the caller's transaction.

:func:`finish` is a worker's end of one claim: the outcome recorded and the
next occurrence claimed in one transaction. :func:`execute` runs a claim and
finishes it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from core.engine import claim as claim_stage
from core.engine import run, statements
from core.engine.chain import schedule_next
from core.engine.context import Claim, Context, PassReport
from core.engine.outcomes import Outcome, decide
from core.engine.runner import RunResult
from core.engine.statements import IN_FLIGHT, Gate
from core.enums import Kind
from core.ledger import events
from core.ledger.db import Ledger, lock_schedules, shared_write
from core.ledger.models import Occurrence
from core.ledger.states import CLAIMABLE, OccurrenceState, check_transition
from core.spec.facts import RunFacts

_S = OccurrenceState

#: A write transaction to open: the ledger's ``write``, or a worker's held connection.
Write = Callable[[], AbstractContextManager[Session]]
#: Occurrences a worker will try to claim, oldest first, with the state each was seen in (None: unknown).
Queue = deque[tuple[str, OccurrenceState | None]]
#: Another claim made in an outcome's transaction (the session, the events pending in it).
Then = Callable[[Session, list[events.NewEvent]], Claim | None]


@dataclass(frozen=True)
class Settling:
    """The occurrence whose outcome is recorded, in the state its caller found it in
    (the change applies only while it still is)."""

    schedule_id: str
    occurrence_id: str
    state: OccurrenceState


@dataclass(frozen=True)
class AttemptEnd:
    """The attempt that led to the outcome, and how it ended."""

    attempt_id: str
    ended: Mapping[str, object] | None = None
    """finished_at, exit_status, error_class, stdout_tail, stderr_tail, task_pid and
    task_started (see :func:`core.engine.statements.finish_attempt`). None: its
    outcome was lost, and its row keeps what it has (its end is filled in)."""
    number: int = 0
    running_since: datetime | None = None
    """When its task started, if it did: an occurrence still DISPATCHING has its
    RUNNING recorded first, with this time."""
    kept: tuple[str, str] | None = None
    """A lost attempt's stdout and stderr as kept on disk while it ran (:mod:`core.engine.output_keep`)."""


def settle(
    session: Session,
    occurrence: Settling,
    outcome: Outcome,
    now: datetime,
    spec: RunFacts,
    *,
    attempt: AttemptEnd | None = None,
    data: events.TransitionDetail | None = None,
    pending: list[events.NewEvent] | None = None,
    held: tuple[int, int] | None = None,
    ahead: statements.Ahead | None = None,
) -> bool:
    """Record ``outcome`` for ``occurrence``: the attempt's end (when there is one),
    the state change with its reason, no lease, the retry time (``now`` plus the
    outcome's wait), the finish time of a SUCCEEDED or FAILED one and, for an
    after_completion schedule, its next occurrence. ``data`` goes on the
    transition's event.

    Events go to ``pending`` when given (the caller appends them, in order, in the
    same transaction); otherwise they are appended at once.

    With ``held`` (the claim's generation and epoch), the occurrence moves only while
    its claim still holds it in ``occurrence.state``; otherwise nothing is written and
    False is returned (see :func:`core.engine.statements.settle`). ``ahead``: the next
    claim, tried in the same statement (:func:`core.engine.statements.settle_then_claim`)."""
    new = outcome.state
    values: dict[str, object] = {
        "reason": outcome.reason,
        "updated_at": now,
        "lease_owner": None,
        "lease_expires_at": None,
        "retry_at": now + outcome.retry_after if outcome.retry_after is not None else None,
    }
    if new in (_S.SUCCEEDED, _S.FAILED):
        values["finished_at"] = now
    recorded: list[events.NewEvent] = []
    previous = occurrence.state
    if previous is _S.DISPATCHING and attempt is not None and attempt.running_since is not None:
        # It ended before the lease keeper recorded it running: RUNNING goes in now, with its start time.
        recorded.append(
            events.OccurrenceTransitioned(
                at=attempt.running_since,
                schedule_id=occurrence.schedule_id,
                occurrence_id=occurrence.occurrence_id,
                from_=_S.DISPATCHING,
                to=_S.RUNNING,
                reason=None,
                attempt=attempt.number,
            )
        )
        check_transition(_S.DISPATCHING, _S.RUNNING, occurrence.occurrence_id)
        previous = _S.RUNNING
    check_transition(previous, new, occurrence.occurrence_id)
    if not statements.settle(session, occurrence.occurrence_id, occurrence.state, new, values, held, ahead):
        return False
    # The occurrence's row before its attempt's, as the lease keeper's RUNNING takes them:
    # beside it (PostgreSQL), the opposite order could wait on each other.
    if attempt is not None:
        if attempt.ended is None:
            statements.finish_lost_attempt(session, attempt.attempt_id, now, outcome.state, attempt.kept)
        else:
            statements.finish_attempt(session, attempt.attempt_id, dict(attempt.ended) | {"outcome": outcome.state})
    recorded.append(
        events.OccurrenceTransitioned(
            at=now,
            schedule_id=occurrence.schedule_id,
            occurrence_id=occurrence.occurrence_id,
            from_=previous,
            to=new,
            reason=outcome.reason,
            **(data or {}),
        )
    )
    if new in (_S.SUCCEEDED, _S.FAILED) and spec.kind is Kind.AFTER_COMPLETION:
        earlier = pending or []
        events.append_many(session, earlier + recorded)  # before the next appointment's own event
        if pending is not None:
            pending.clear()
        occ = session.get(Occurrence, occurrence.occurrence_id, populate_existing=True)
        assert occ is not None
        schedule_next(session, occ, spec, now)
    elif pending is not None:
        pending.extend(recorded)
    else:
        events.append_many(session, recorded)
    return True


def record(
    session: Session,
    ctx: Context,
    claim: Claim,
    result: RunResult,
    outcome: Outcome,
    now: datetime,
    pending: list[events.NewEvent],
    ahead: statements.Ahead | None = None,
) -> None:
    """Store a claim's attempt end; settle the occurrence if the claim still holds it.
    Events go to ``pending``, for the caller to append in the same transaction. ``ahead``:
    the next claim, tried with the outcome's compare-and-set (see :func:`settle`)."""
    with ctx.lock:
        task_pid, task_started = ctx.tasks.pop(claim.attempt_id, (result.pid, None))
    ended: dict[str, object] = {
        "task_pid": task_pid,
        "task_started": task_started,
        "finished_at": result.finished,
        "exit_status": result.exit_status,
        "error_class": result.error_class,
        "stdout_tail": result.stdout_tail,
        "stderr_tail": result.stderr_tail,
    }
    running_since = result.started if result.pid is not None else None
    attempt = AttemptEnd(claim.attempt_id, ended, claim.attempt_number, running_since)
    with ctx.lock:
        expected = _S.RUNNING if claim.occurrence_id in ctx.marked else _S.DISPATCHING
    # Most often the claim still holds the occurrence in the state this engine last gave it:
    # the outcome is then one compare-and-set (state, claim generation, epoch), no read first.
    where = Settling(claim.schedule_id, claim.occurrence_id, expected)
    held = (claim.generation, claim.epoch)
    if settle(session, where, outcome, now, claim.spec, attempt=attempt, pending=pending, held=held, ahead=ahead):
        return
    standing = statements.standing(session, claim.occurrence_id)
    assert standing is not None
    if standing.generation != claim.generation or standing.state not in IN_FLIGHT or standing.epoch != claim.epoch:
        # A newer claim (or a fence) took over: record what happened, change nothing else.
        statements.finish_attempt(session, claim.attempt_id, ended)
        ignored = events.AttemptIgnored(
            at=now,
            schedule_id=claim.schedule_id,
            occurrence_id=claim.occurrence_id,
            attempt=claim.attempt_number,
            state=standing.state,
            reason=f"late result of attempt {claim.attempt_number} ignored: a newer claim holds it",
        )
        pending.append(ignored)
        return
    settle(
        session,
        Settling(claim.schedule_id, claim.occurrence_id, standing.state),
        outcome,
        now,
        claim.spec,
        attempt=attempt,
        pending=pending,
    )


def finish(
    write: Write,
    ctx: Context,
    claim: Claim,
    result: RunResult,
    report: PassReport,
    *,
    queue: Queue | None = None,
    gate: Gate | None = None,
    stop: threading.Event | None = None,
    then: Then | None = None,
) -> Claim | None:
    """Record an attempt's end and, in the same transaction, claim the next
    occurrence of ``queue`` (unless ``stop`` is set). Returns that claim, if any.

    ``then``: when ``queue`` gave nothing to claim, what else to claim in the same
    transaction (the engine's next schedule waiting for a worker), with the events
    pending so far."""
    probe = None
    if result.outcome_lost and claim.task.verify:
        probe = run.probe(claim.task, claim.identity, ctx.clock)
    outcome = decide(
        exit_status=result.exit_status,
        error_class=result.error_class,
        effect=claim.task.effect,
        retry=claim.spec.retry,
        attempt_number=claim.attempt_number,
        probe=probe,
    )
    following: Claim | None = None
    try:
        with write() as session:
            lock_schedules(session, [claim.schedule_id])  # beside other engines, the schedule's rows first
            pending: list[events.NewEvent] = []
            now = ctx.clock.now()
            ahead = _ahead(session, ctx, claim, outcome, queue, gate, stop, now)
            record(session, ctx, claim, result, outcome, now, pending, ahead)
            if ahead is not None and ahead.tried:
                assert queue is not None
                queue.popleft()
                following = claim_stage.claim_ahead(session, ctx, ahead, report, pending)
            while queue and following is None and not (stop is not None and stop.is_set()):
                occ_id, state = queue.popleft()
                following = claim_stage.claim_in(session, ctx, occ_id, ctx.clock.now(), report, gate, state, pending)
            if following is None and then is not None and not (stop is not None and stop.is_set()):
                following = then(session, pending)
            events.append_many(session, pending)
    except BaseException:
        if following is not None:  # its claim was rolled back with the rest
            ctx.release(following.occurrence_id)
        raise
    ctx.release(claim.occurrence_id)
    report.outcomes[outcome.state.value] += 1
    return following


def _ahead(
    session: Session,
    ctx: Context,
    claim: Claim,
    outcome: Outcome,
    queue: Queue | None,
    gate: Gate | None,
    stop: threading.Event | None,
    now: datetime,
) -> statements.Ahead | None:
    """The next claim to send with the outcome's compare-and-set, when it can go in the same
    statement: beside other engines (PostgreSQL), the queue's next occurrence seen DUE or
    RETRY_WAIT, not the one settled, the schedule not run elsewhere, an outcome that leaves
    nothing in flight and appoints nothing (after_completion writes its next run between
    the two). Else None: the claim follows as its own statement, as before."""
    if not queue or gate is None or (stop is not None and stop.is_set()) or shared_write(session) is None:
        return None
    occurrence_id, state = queue[0]
    if (
        state not in CLAIMABLE
        or occurrence_id == claim.occurrence_id
        or gate.schedule_id != claim.schedule_id
        or gate.schedule_id in ctx.elsewhere
        or outcome.state in IN_FLIGHT
        or claim.spec.kind is Kind.AFTER_COMPLETION
    ):
        return None
    assert state is not None
    return statements.Ahead(occurrence_id, state, gate, now, ctx.worker, now + ctx.options.lease)


def execute(ledger: Ledger, ctx: Context, claim: Claim, report: PassReport) -> None:
    """Run a claimed occurrence's task and record how it ended."""
    finish(lambda: ledger.write(serialize=False), ctx, claim, run.run_claim(ctx, claim, report), report)
