"""The claim stage: what is ready to claim, the claim itself, the overlap rules,
and opening the attempt (docs/ledger.md, "Claims" and "Overlap").

A claim is the compare-and-set of invariants 2 and 3: DUE|RETRY_WAIT ->
DISPATCHING on the schedule's gate and the ledger's epoch. Seen state and gate
in hand, it is one statement (:func:`core.engine.statements.try_claim`); when
that does not apply, the careful path reads the occurrence step by step to find
out why, applying the overlap policy or claiming anyway. Either way
:func:`open_attempt` is the one place an attempt row is inserted.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from datetime import datetime

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.orm import Session

from core.engine import run, statements
from core.engine.context import Claim, Context, PassReport
from core.engine.specs import active_run
from core.engine.statements import IN_FLIGHT, Claimed, Gate
from core.enums import OverlapPolicy
from core.ledger import events
from core.ledger.db import lock_schedules, shared_write
from core.ledger.models import Attempt, Occurrence, Revision, Schedule
from core.ledger.prepared import Prepared
from core.ledger.states import CLAIMABLE, OccurrenceKind, OccurrenceState, ScheduleState, check_transition
from core.spec.facts import RunFacts

_S = OccurrenceState


def claimable(
    session: Session,
    now: datetime,
    *,
    unreadable: Collection[tuple[str, int]] = (),
    refused: Collection[tuple[str, int]] = (),
    schedule_id: str | None = None,
) -> list[tuple[str, str, OccurrenceState]]:
    """(schedule, occurrence, state) ready to claim, oldest first per schedule (none of
    a revision in ``unreadable``: those wait for a corrected revision; none of a
    revision in ``refused``: those wait for an engine that runs them)."""
    query = _CLAIMABLE if schedule_id is None else _CLAIMABLE_OF_ONE
    params: dict[str, object] = {"p_now": now} if schedule_id is None else {"p_now": now, "p_schedule": schedule_id}
    rows = query.all(session, params)
    # Occurrences of a revision this Tidemark cannot read wait for a corrected one; those of a
    # revision this engine does not run (labels, trust) wait for an engine that does.
    if not unreadable and not refused:
        return [(sid, oid, _STATES[state]) for sid, oid, state, _ in rows]
    return [
        (sid, oid, _STATES[state])
        for sid, oid, state, revision in rows
        if (sid, revision) not in unreadable and (sid, revision) not in refused
    ]


#: A state as either backend returns it (SQLite: its text; a member equals its text) to the member.
_STATES: dict[str, OccurrenceState] = {s.value: s for s in OccurrenceState}


def _claimable(*, one: bool) -> Select[str, str, OccurrenceState, int]:
    """What :func:`claimable` reads (of one schedule), built once: a worker asks before each claim,
    and building the statement cost more than running it."""
    now = bindparam("p_now", type_=Occurrence.retry_at.type)
    query = (
        select(Occurrence.schedule_id, Occurrence.occurrence_id, Occurrence.state, Occurrence.revision)
        .join(Schedule, Schedule.id == Occurrence.schedule_id)
        .where(
            Schedule.state == ScheduleState.ACTIVE,
            (Occurrence.state == _S.DUE) | ((Occurrence.state == _S.RETRY_WAIT) & (Occurrence.retry_at <= now)),
        )
        .order_by(Occurrence.schedule_id, Occurrence.due_at, Occurrence.position_utc, Occurrence.occurrence_id)
    )
    return query.where(Occurrence.schedule_id == bindparam("p_schedule")) if one else query


_CLAIMABLE = Prepared(_claimable(one=False))
_CLAIMABLE_OF_ONE = Prepared(_claimable(one=True))


def gate(session: Session, schedule_id: str) -> Gate | None:
    """The schedule's gate as it is now (None: the schedule is not active)."""
    return statements.gates(session, schedule_id).get(schedule_id)


def claim(
    write: Callable[[], AbstractContextManager[Session]],
    ctx: Context,
    occurrence_id: str,
    report: PassReport,
    *,
    gate: Gate | None = None,
    state: OccurrenceState | None = None,
) -> Claim | None:
    """Compare-and-set DUE|RETRY_WAIT -> DISPATCHING on the schedule's gate and
    the ledger's epoch, in one write transaction (invariants 2 and 3).
    ``gate`` and ``state`` are what the engine saw; with them the claim is
    one statement, and anything that changed since sends it the careful way."""
    if gate is not None and gate.schedule_id in ctx.elsewhere:
        return None  # another engine runs its backlog now
    with write() as session:
        return claim_in(session, ctx, occurrence_id, ctx.clock.now(), report, gate, state)


def claim_in(
    session: Session,
    ctx: Context,
    occurrence_id: str,
    now: datetime,
    report: PassReport,
    gate: Gate | None,
    state: OccurrenceState | None,
    pending: list[events.NewEvent] | None = None,
) -> Claim | None:
    """Claim in ``session``'s transaction. Events of the one-statement claim go to
    ``pending`` when given (the caller appends them all at once).

    When the careful claim finds that another engine claimed the occurrence since it was
    read, the schedule's backlog is that engine's until this engine's next dispatch
    (``ctx.elsewhere``): it claims the next with each outcome, and the worker walking the
    same backlog here stops trying, instead of one careful claim per occurrence taken."""
    if gate is not None and gate.schedule_id in ctx.elsewhere:
        return None
    if gate is not None and state in CLAIMABLE:
        assert state is not None
        if not lock_schedules(session, [gate.schedule_id], skip_locked=ctx.share.beside_others()):
            # PostgreSQL beside other engines: another transaction holds the schedule now, nearly
            # always another engine running its backlog. Waiting for it only to lose the race,
            # then reading why, cost a wait and a careful claim; the next dispatch reads it again.
            # An engine alone waits (its own fill or a pause holds the row for a moment): passed
            # over, the run would wait for the next pass.
            with ctx.lock:
                ctx.elsewhere.add(gate.schedule_id)
            return None
        claimed = statements.try_claim(session, occurrence_id, state, gate, now, ctx.worker, now + ctx.options.lease)
        if claimed is not None:
            held, event = open_attempt(session, ctx, claimed, gate.epoch, now)
            if pending is None:
                events.append(session, event)
            else:
                pending.append(event)
            return held
    if pending:
        events.append_many(session, pending)  # in order, before whatever the careful path records
        pending.clear()
    return _claim_careful(session, ctx, occurrence_id, report, now)


def claim_together(
    write: Callable[[], AbstractContextManager[Session]],
    ctx: Context,
    candidates: Sequence[tuple[Gate, str, OccurrenceState]],
) -> tuple[dict[str, Claim], set[str]]:
    """Claim the first due occurrence of several schedules (its gate, its id and the state
    it was seen in) in one write transaction, each by the one-statement compare-and-set.
    Returns the claims by schedule, and the schedules passed over because another
    engine holds them right now (PostgreSQL: their rows are locked).

    Nothing starts before the transaction commits: each claim is durable, with its
    attempt row and event, before its task is started. An occurrence whose claim
    does not apply is left to its schedule's worker (the careful path)."""
    claims: dict[str, Claim] = {}
    wanted = {gate.schedule_id for gate, _, _ in candidates}
    with ctx.lock:
        ctx.elsewhere.clear()  # each dispatch looks at every schedule again
    try:
        with write() as session:
            now = ctx.clock.now()
            held = lock_schedules(session, wanted, skip_locked=True)
            pending: list[events.NewEvent] = []
            for gate, occurrence_id, state in candidates:
                if gate.schedule_id not in held:
                    continue
                lease = now + ctx.options.lease
                claimed = statements.try_claim(session, occurrence_id, state, gate, now, ctx.worker, lease)
                if claimed is not None:
                    claims[gate.schedule_id], event = open_attempt(session, ctx, claimed, gate.epoch, now)
                    pending.append(event)
            events.append_many(session, pending)
    except BaseException:
        for claimed_one in claims.values():  # rolled back with the rest
            ctx.release(claimed_one.occurrence_id)
        raise
    return claims, wanted - held


def open_attempt(
    session: Session, ctx: Context, claimed: Claimed, epoch: int, now: datetime
) -> tuple[Claim, events.NewEvent]:
    """Insert the attempt row of a claim just made, with its rendered command's
    digest; the engine holds the occurrence from now on. Returns the claim and
    its event (DISPATCHING), for the caller to append."""
    spec = ctx.specs.of(session, claimed.schedule_id, claimed.revision)
    task = spec.task
    assert task is not None  # publishing refuses a revision without a task
    attempt_id = str(uuid.uuid4())
    identity = run.identity(claimed, attempt_id, claimed.attempt_number)
    command, unprepared = run.prepare_command(task, identity, ctx.base_env)
    event = statements.add_attempt(session, claimed, epoch, ctx.process, now, command.digest, ctx.worker, attempt_id)
    ctx.hold(claimed.occurrence_id)
    held = Claim(
        claimed.occurrence_id,
        claimed.schedule_id,
        claimed.generation,
        epoch,
        attempt_id,
        claimed.attempt_number,
        task,
        spec,
        identity,
        command,
        unprepared,
    )
    return held, event


#: States only a claim leads a due occurrence to.
_CLAIMED_SINCE = frozenset({_S.DISPATCHING, _S.RUNNING, _S.SUCCEEDED, _S.FAILED, _S.UNKNOWN_EFFECT})


def _claim_careful(
    session: Session, ctx: Context, occurrence_id: str, report: PassReport, now: datetime
) -> Claim | None:
    """The claim read step by step: used when the one-statement claim did not
    apply, to find out why (and apply the overlap policy) or to claim anyway."""
    occ = session.get(Occurrence, occurrence_id, populate_existing=True)
    if occ is None or occ.state not in CLAIMABLE:
        if occ is not None and occ.state in _CLAIMED_SINCE and occurrence_id not in ctx.mine:
            with ctx.lock:  # another engine claimed it since it was read: its backlog is that engine's now
                ctx.elsewhere.add(occ.schedule_id)
        return None
    if shared_write(session) is not None:
        # Beside other engines: decide on the row as it is once its schedule is held.
        lock_schedules(session, [occ.schedule_id])
        occ = session.get(Occurrence, occurrence_id, populate_existing=True, with_for_update={"key_share": True})
        if occ is None or occ.state not in CLAIMABLE:
            return None
    if occ.state is _S.RETRY_WAIT and (occ.retry_at is None or occ.retry_at > now):
        return None
    schedule = session.get(Schedule, occ.schedule_id, populate_existing=True, with_for_update=True)
    if schedule is None or schedule.state is not ScheduleState.ACTIVE:
        return None
    if occ.kind is OccurrenceKind.SCHEDULED and not governs(session, occ):
        return None
    spec = ctx.specs.of(session, occ.schedule_id, occ.revision)
    if spec.task is None:
        return None
    if not overlap_allows(session, occ, spec, now, report):
        return None
    epoch = statements.epoch(session)
    old = occ.state
    check_transition(old, _S.DISPATCHING, occurrence_id)
    occ.state = _S.DISPATCHING
    occ.updated_at = now
    occ.claim_generation += 1
    occ.attempt_count += 1
    occ.lease_owner = ctx.worker
    occ.lease_expires_at = now + ctx.options.lease
    claimed = Claimed(
        occurrence_id,
        occ.schedule_id,
        occ.revision,
        occ.kind,
        occ.nominal_local,
        occ.logical_slot_id,
        occ.resolved_utc,
        occ.business_period,
        occ.claim_generation,
        occ.attempt_count,
        old,
    )
    held, event = open_attempt(session, ctx, claimed, epoch, now)
    events.append(session, event)
    return held


def governs(session: Session, occ: Occurrence) -> bool:
    """The occurrence's revision still governs its position (cutover gate)."""
    newest = session.scalar(
        select(Revision.revision)
        .where(Revision.schedule_id == occ.schedule_id, Revision.cutover_at <= occ.position_utc)
        .order_by(Revision.revision.desc())
        .limit(1)
    )
    return newest == occ.revision


def overlap_allows(session: Session, occ: Occurrence, spec: RunFacts, now: datetime, report: PassReport) -> bool:
    """Whether ``occ`` may start beside what else of its schedule is in flight; one
    that never will (its overlap policy skips it) is recorded SKIPPED_OVERLAP."""
    found = session.execute(
        select(Occurrence.occurrence_id, Occurrence.due_at, func.max(Attempt.started_at))
        .outerjoin(Attempt, Attempt.occurrence_id == Occurrence.occurrence_id)
        .where(
            Occurrence.schedule_id == occ.schedule_id,
            Occurrence.state.in_(IN_FLIGHT),
            Occurrence.occurrence_id != occ.occurrence_id,
        )
        .group_by(Occurrence.occurrence_id, Occurrence.due_at)
        .limit(1)
    ).first()
    if found is None or spec.overlap_policy is OverlapPolicy.ALLOW:
        return True
    running, running_due, running_started = found
    started = running_started or running_due
    if occ.state is _S.RETRY_WAIT or spec.overlap_policy is OverlapPolicy.QUEUE_ALL:
        return False  # waits for the running one to end
    if started is not None and occ.due_at is not None and occ.due_at < started:
        return False  # a backlog item (e.g. a catch-up) due before that run began: it waits its turn
    if spec.overlap_policy is OverlapPolicy.QUEUE_ONE:
        oldest = session.scalar(
            select(Occurrence.occurrence_id)
            .where(Occurrence.schedule_id == occ.schedule_id, Occurrence.state == _S.DUE)
            .order_by(Occurrence.due_at, Occurrence.occurrence_id)
            .limit(1)
        )
        if oldest == occ.occurrence_id:
            return False  # the one kept waiting
    why = f"{running} was still running (overlapPolicy {spec.overlap_policy.value})"
    events.transition(session, occ, _S.SKIPPED_OVERLAP, now, why)
    occ.finished_at = now
    report.skipped_overlap += 1
    return False


def overlap_while_busy(
    session: Session, schedule_id: str, ids: list[str], since: datetime, now: datetime, report: PassReport
) -> list[str]:
    """Occurrences that came due while this engine runs the schedule's task.
    Returns the ones to start at once (overlapPolicy ALLOW).

    Only what came due after the run started (``due_at > since``) overlaps it:
    an occurrence due at or before that instant belongs to the run itself,
    which is about to claim it (its worker may not have got to it yet; on a
    clock that does not move, ``due_at == since``)."""
    spec = active_run(session, schedule_id)
    fresh = [
        o
        for o in session.scalars(
            select(Occurrence)
            .where(Occurrence.occurrence_id.in_(ids), Occurrence.state == _S.DUE, Occurrence.due_at > since)
            .order_by(Occurrence.due_at, Occurrence.occurrence_id)
            .execution_options(populate_existing=True)
        )
    ]
    policy = spec.overlap_policy
    if policy is OverlapPolicy.ALLOW:
        return [o.occurrence_id for o in fresh]
    if policy is OverlapPolicy.QUEUE_ALL:
        return []
    keep = 1 if policy is OverlapPolicy.QUEUE_ONE else 0
    for occ in fresh[keep:]:
        why = f"the previous run was still going (overlapPolicy {policy.value})"
        events.transition(session, occ, _S.SKIPPED_OVERLAP, now, why)
        occ.finished_at = now
        report.skipped_overlap += 1
    return []


def waiting_behind_others(session: Session, ctx: Context, queued: dict[str, list[str]]) -> set[str]:
    """Schedules of ``queued`` (their due occurrences' ids) whose every occurrence would wait
    for a run of the schedule in flight now (another engine's): the overlap policy would keep
    each waiting and write nothing (:func:`overlap_allows`), so a worker started for them would
    only walk their backlog with careful claims that change nothing. The engine running them
    claims the next with each outcome; a later dispatch reads them again."""
    started = _in_flight_since(session, queued.keys())
    if not started:
        return set()
    rows = session.execute(
        select(Occurrence.schedule_id, Occurrence.state, Occurrence.due_at, Occurrence.revision).where(
            Occurrence.occurrence_id.in_([oid for sid in started for oid in queued[sid]])
        )
    )
    waits: dict[str, bool] = {}
    seen: Counter[str] = Counter()
    for sid, state, due_at, revision in rows:
        policy = ctx.specs.of(session, sid, revision).overlap_policy
        since = started[sid]
        keeps = policy is not OverlapPolicy.ALLOW and (
            state is _S.RETRY_WAIT
            or policy is OverlapPolicy.QUEUE_ALL
            or (due_at is not None and since is not None and due_at < since)
        )
        waits[sid] = waits.get(sid, True) and keeps
        seen[sid] += 1
    return {sid for sid, keeps in waits.items() if keeps and seen[sid] == len(queued[sid])}


def taken_elsewhere(session: Session, ctx: Context, queued: dict[str, list[str]]) -> set[str]:
    """Schedules of ``queued`` (the due occurrences' ids the dispatch read, oldest first) that
    another engine took since: their oldest is claimed by it (in flight or ended), or every one
    of them waits for its run in flight (:func:`waiting_behind_others`). A claim of them would
    lose its race, one write transaction each; this is one read for all of them."""
    firsts = {oids[0]: sid for sid, oids in queued.items() if oids}
    if not firsts:
        return set()
    rows = session.execute(
        select(Occurrence.occurrence_id, Occurrence.state).where(Occurrence.occurrence_id.in_(list(firsts)))
    )
    with ctx.lock:
        mine = set(ctx.mine)
    taken = {firsts[oid] for oid, state in rows if state in _CLAIMED_SINCE and oid not in mine}
    rest = {sid: oids for sid, oids in queued.items() if sid not in taken}
    return taken | (waiting_behind_others(session, ctx, rest) if rest else set())


def _in_flight_since(session: Session, schedule_ids: Collection[str]) -> dict[str, datetime | None]:
    """For each of the schedules with an occurrence in flight, the earliest start among those
    (its latest attempt's, else its due time; None when one has neither): an occurrence due
    before it waits, whichever of them the overlap rule looks at."""
    rows = session.execute(
        select(Occurrence.schedule_id, Occurrence.due_at, func.max(Attempt.started_at))
        .outerjoin(Attempt, Attempt.occurrence_id == Occurrence.occurrence_id)
        .where(Occurrence.state.in_(IN_FLIGHT))  # few rows, found by state; the schedules picked here
        .group_by(Occurrence.occurrence_id, Occurrence.schedule_id, Occurrence.due_at)
    )
    since: dict[str, datetime | None] = {}
    for sid, due_at, attempt_started in rows:
        if sid not in schedule_ids:
            continue
        start = attempt_started or due_at
        earlier = since.get(sid, start)
        since[sid] = None if start is None or earlier is None else min(earlier, start)
    return since


def claim_ahead(
    session: Session, ctx: Context, ahead: statements.Ahead, report: PassReport, pending: list[events.NewEvent]
) -> Claim | None:
    """The claim tried with the outcome: its attempt opened when it applied, else the careful
    way, which finds out why (and may apply the overlap policy), as after a claim of its own."""
    if ahead.claimed is not None:
        following, event = open_attempt(session, ctx, ahead.claimed, ahead.gate.epoch, ahead.now)
        pending.append(event)
        return following
    return claim_in(session, ctx, ahead.occurrence_id, ahead.now, report, ahead.gate, None, pending)
