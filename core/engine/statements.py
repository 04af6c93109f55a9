"""The engine's hot path in SQL: claim an occurrence, open its attempt, record
the attempt's end, keep its lease. The stages (:mod:`core.engine.claim`,
:mod:`core.engine.settle`) call these; nothing else writes these rows.

These are Core statements on the ledger's tables, with no ORM objects, so
that the ledger's own work per occurrence stays below the cost of spawning a
process. Each function runs inside the caller's write transaction (on
PostgreSQL one that shares the write lock with other engines' and holds the
rows of the schedules it decides on, see :mod:`core.ledger.db`) and writes the
events of the changes it makes in that same transaction.

:func:`try_claim` is the compare-and-set of invariant 3 in one ``UPDATE …
RETURNING`` (SQLite 3.35+, PostgreSQL): the occurrence is still in the state
the engine saw, its schedule is active with the gate version and disable
generation the engine saw, its revision still governs its position (the
cutover gate), the ledger's execution epoch is the engine's, and no other
occurrence of the schedule is in flight. When any of that fails, nothing is
written and the engine takes its careful path, which finds out why (and, say,
applies the overlap policy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any

from sqlalchemy import (
    String,
    Update,
    and_,
    bindparam,
    exists,
    func,
    insert,
    literal_column,
    or_,
    select,
    type_coerce,
    update,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from core.engine.processes import ProcessIdentity
from core.ledger import events
from core.ledger.db import shared_write
from core.ledger.models import Attempt, LedgerMeta, Occurrence, Revision, Schedule
from core.ledger.prepared import Prepared, instant
from core.ledger.states import OccurrenceKind, OccurrenceState, ScheduleState, check_transition

_S = OccurrenceState
IN_FLIGHT = (_S.DISPATCHING, _S.RUNNING)

_tables = Occurrence.metadata.tables
_occ = _tables[Occurrence.__tablename__]
_busy = _occ.alias("busy")
_sched = _tables[Schedule.__tablename__]
_rev = _tables[Revision.__tablename__]
_meta = _tables[LedgerMeta.__tablename__]
_att = _tables[Attempt.__tablename__]


@dataclass(frozen=True)
class Gate:
    """What a claim compares against: a schedule's gate and the ledger's epoch as last read."""

    schedule_id: str
    gate_version: int
    disable_generation: int
    epoch: int


@dataclass(frozen=True)
class Claimed:
    """An occurrence just moved to DISPATCHING, with what its attempt needs."""

    occurrence_id: str
    schedule_id: str
    revision: int
    kind: OccurrenceKind
    nominal_local: str
    logical_slot_id: str | None
    resolved_utc: datetime | None
    business_period: str | None
    generation: int
    attempt_number: int
    old_state: OccurrenceState


def epoch(session: Session) -> int:
    """The ledger's execution epoch (claims carry it; a fence bumps it)."""
    return int(session.scalar(_EPOCH) or 1)


_EPOCH = select(_meta.c.execution_epoch)


def gates(session: Session, schedule_id: str | None = None) -> dict[str, Gate]:
    """The current gate of every active schedule (or of one), with the ledger's epoch."""
    current = epoch(session)
    stmt = _GATES if schedule_id is None else _GATE_OF_ONE
    rows = session.execute(stmt, {"p_schedule": schedule_id} if schedule_id is not None else {})
    return {sid: Gate(sid, gate, disabled, current) for sid, gate, disabled in rows}


_GATES = select(_sched.c.id, _sched.c.gate_version, _sched.c.disable_generation).where(
    _sched.c.state == ScheduleState.ACTIVE
)
_GATE_OF_ONE = _GATES.where(_sched.c.id == bindparam("p_schedule"))


def _unindexed(column: Any) -> Any:
    """``column || ''``: the same value, which SQLite will not look up in an index."""
    return type_coerce(column, String).concat(literal_column("''"))


# The statements below are built once: executing a prepared statement skips
# SQLAlchemy's construction and cache-key work, most of a statement's cost here.


def _claim_statement(expected: OccurrenceState, p: str = "p_", settling: Any = None) -> Update:
    """The claim's compare-and-set; its values bound as ``p`` + name. ``settling``: an
    occurrence that the same statement settles (:func:`settle_then_claim`), seen in flight by
    its snapshot and not in flight once it commits: left out of the "nothing else in flight"
    test."""
    if expected is _S.RETRY_WAIT:
        waiting = and_(_occ.c.state == _S.RETRY_WAIT, _occ.c.retry_at <= bindparam(f"{p}now"))
    else:
        waiting = _occ.c.state == expected
    others = [_busy.c.occurrence_id != _occ.c.occurrence_id]
    if settling is not None:
        others.append(_busy.c.occurrence_id != settling)
    governing = (
        select(func.max(_rev.c.revision))
        .where(_rev.c.schedule_id == _occ.c.schedule_id, _rev.c.cutover_at <= _occ.c.position_utc)
        .scalar_subquery()
    )
    return (
        update(_occ)
        .where(
            _occ.c.occurrence_id == bindparam(f"{p}id"),
            _occ.c.schedule_id == bindparam(f"{p}schedule"),
            waiting,
            exists().where(
                _sched.c.id == _occ.c.schedule_id,
                _sched.c.state == ScheduleState.ACTIVE,
                _sched.c.gate_version == bindparam(f"{p}gate"),
                _sched.c.disable_generation == bindparam(f"{p}disabled"),
            ),
            or_(_occ.c.kind != OccurrenceKind.SCHEDULED, _occ.c.revision == governing),
            select(_meta.c.execution_epoch).scalar_subquery() == bindparam(f"{p}epoch"),
            ~exists().where(
                # Looked up by state (few rows are in flight), the schedule compared
                # row by row: a schedule can hold tens of thousands of rows.
                or_(_busy.c.state == _S.DISPATCHING, _busy.c.state == _S.RUNNING),
                _unindexed(_busy.c.schedule_id) == _occ.c.schedule_id,
                *others,
            ),
        )
        .values(
            state=_S.DISPATCHING,
            claim_generation=_occ.c.claim_generation + 1,
            attempt_count=_occ.c.attempt_count + 1,
            lease_owner=bindparam(f"{p}worker"),
            lease_expires_at=bindparam(f"{p}lease", type_=_occ.c.lease_expires_at.type),
            updated_at=bindparam(f"{p}now", type_=_occ.c.updated_at.type),
        )
        .returning(
            _occ.c.revision,
            _occ.c.kind,
            _occ.c.nominal_local,
            _occ.c.logical_slot_id,
            _occ.c.resolved_utc,
            _occ.c.business_period,
            _occ.c.claim_generation,
            _occ.c.attempt_count,
        )
    )


_CLAIM = {state: Prepared(_claim_statement(state)) for state in (_S.DUE, _S.RETRY_WAIT)}


def try_claim(
    session: Session,
    occurrence_id: str,
    expected: OccurrenceState,
    gate: Gate,
    now: datetime,
    worker: str,
    lease_until: datetime,
) -> Claimed | None:
    """Compare-and-set ``expected`` (DUE or RETRY_WAIT) -> DISPATCHING; None when anything differs."""
    row = _CLAIM[expected].first(session, _claim_params("p_", occurrence_id, gate, now, worker, lease_until))
    return None if row is None else _claimed(occurrence_id, gate, expected, row)


def _claim_params(
    p: str, occurrence_id: str, gate: Gate, now: datetime, worker: str, lease_until: datetime
) -> dict[str, Any]:
    if p == "p_":  # the claim alone (the hot path's): its names written out, none formatted
        return {
            "p_id": occurrence_id,
            "p_schedule": gate.schedule_id,
            "p_gate": gate.gate_version,
            "p_disabled": gate.disable_generation,
            "p_epoch": gate.epoch,
            "p_worker": worker,
            "p_lease": lease_until,
            "p_now": now,
        }
    return {
        f"{p}id": occurrence_id,
        f"{p}schedule": gate.schedule_id,
        f"{p}gate": gate.gate_version,
        f"{p}disabled": gate.disable_generation,
        f"{p}epoch": gate.epoch,
        f"{p}worker": worker,
        f"{p}lease": lease_until,
        f"{p}now": now,
    }


def _claimed(occurrence_id: str, gate: Gate, expected: OccurrenceState, row: Sequence[Any]) -> Claimed:
    revision, kind, nominal, slot, resolved, period, generation, number = row
    return Claimed(
        occurrence_id,
        gate.schedule_id,
        revision,
        OccurrenceKind(kind),
        nominal,
        slot,
        instant(resolved),
        period,
        generation,
        number,
        expected,
    )


_ATTEMPT_COLUMNS = (
    "attempt_id",
    "occurrence_id",
    "attempt_number",
    "claim_generation",
    "execution_epoch",
    "worker_host",
    "worker_pid",
    "worker_started",
    "boot_id",
    "started_at",
    "input_digest",
)
_ADD_ATTEMPT = Prepared(
    insert(_att).values({name: bindparam(name, type_=_att.c[name].type) for name in _ATTEMPT_COLUMNS})
)


def add_attempt(
    session: Session,
    claimed: Claimed,
    epoch: int,
    process: ProcessIdentity,
    now: datetime,
    digest: str,
    worker: str,
    attempt_id: str,
) -> events.NewEvent:
    """Insert the attempt row of a claim, with the engine ``process`` that opened it;
    returns the claim's event, for the caller to append. Beside other engines (PostgreSQL) the
    row goes with the commit, in its pipeline (:func:`core.ledger.db.flush_events`): nothing
    in a claim's transaction reads it back, and the claim is durable with it or not at all."""
    row = {
        "attempt_id": attempt_id,
        "occurrence_id": claimed.occurrence_id,
        "attempt_number": claimed.attempt_number,
        "claim_generation": claimed.generation,
        "execution_epoch": epoch,
        "worker_host": process.host,
        "worker_pid": process.pid,
        "worker_started": process.started,
        "boot_id": process.boot_id,
        "started_at": now,
        "input_digest": digest,
    }
    shared = shared_write(session)
    if shared is None:
        _ADD_ATTEMPT.run(session, row)
    else:
        shared.deferred.append(lambda driver: driver.execute(_attempt_insert_on_driver(), row))
    return events.OccurrenceTransitioned(
        at=now,
        schedule_id=claimed.schedule_id,
        occurrence_id=claimed.occurrence_id,
        from_=claimed.old_state,
        to=_S.DISPATCHING,
        reason=None,
        attempt=claimed.attempt_number,
        worker=worker,
    )


@cache
def _attempt_insert_on_driver() -> str:
    """The attempt's INSERT as PostgreSQL's driver takes it."""
    return _on_driver(_ADD_ATTEMPT.statement)


_TASK_STARTED = Prepared(
    update(_att)
    .where(_att.c.attempt_id == bindparam("p_id"))
    .values(task_pid=bindparam("p_pid"), task_started=bindparam("p_started", type_=_att.c.task_started.type))
)


def record_task(session: Session, attempt_id: str, pid: int, started: float | None) -> None:
    """Store the attempt's task process (its group leader) and when it started."""
    _TASK_STARTED.run(session, {"p_id": attempt_id, "p_pid": pid, "p_started": started})


@dataclass(frozen=True)
class Standing:
    """Where a claimed occurrence stands when its attempt ends."""

    state: OccurrenceState
    generation: int
    epoch: int


_STANDING = Prepared(
    select(_occ.c.state, _occ.c.claim_generation, select(_meta.c.execution_epoch).scalar_subquery())
    .where(_occ.c.occurrence_id == bindparam("p_id"))
    .with_for_update(key_share=True, of=_occ)
)


def standing(session: Session, occurrence_id: str) -> Standing | None:
    """The occurrence's state and claim generation, and the ledger's epoch, in one read.

    The occurrence's row is locked until commit (PostgreSQL, ``FOR NO KEY UPDATE``;
    SQLite's write lock holds everything already): beside the lease keeper's RUNNING,
    the outcome is decided on the state the row has when it is written, not on one
    read before the keeper's commit (whose change the outcome's compare-and-set
    would then miss, leaving the occurrence in flight with its attempt ended)."""
    row = _STANDING.first(session, {"p_id": occurrence_id})
    return None if row is None else Standing(OccurrenceState(row[0]), row[1], row[2])


_ENDED = ("finished_at", "exit_status", "error_class", "stdout_tail", "stderr_tail", "task_pid", "task_started")
#: Each bound name with its value's key, formatted once (an outcome binds them on every job).
_ENDED_KEYS = tuple((f"p_{name}", name) for name in _ENDED)


def _finish_statement(names: tuple[str, ...]) -> Update:
    return (
        update(_att)
        .where(_att.c.attempt_id == bindparam("p_id"))
        .values({name: bindparam(f"p_{name}", type_=_att.c[name].type) for name in names})
    )


#: With the outcome it led to, and without (a superseded claim's attempt keeps none).
_FINISH_ATTEMPT = {True: Prepared(_finish_statement((*_ENDED, "outcome"))), False: Prepared(_finish_statement(_ENDED))}


def finish_attempt(session: Session, attempt_id: str, values: dict[str, Any]) -> None:
    """Store how an attempt ended: ``values`` has finished_at, exit_status,
    error_class, stdout_tail, stderr_tail, task_pid and task_started, and outcome
    when it decided one."""
    decided = "outcome" in values
    get = values.get
    params = {key: get(name) for key, name in _ENDED_KEYS}
    params["p_id"] = attempt_id
    if decided:
        params["p_outcome"] = values["outcome"]
    shared = shared_write(session)
    if shared is None:
        _FINISH_ATTEMPT[decided].run(session, params)
        return
    # Beside other engines (PostgreSQL): with the commit, in its pipeline, after the occurrence's
    # row this transaction already holds (the order the lease keeper's RUNNING takes them in).
    driven = {name: value.value if isinstance(value, Enum) else value for name, value in params.items()}
    shared.deferred.append(lambda driver: driver.execute(_finish_on_driver(decided), driven))


@cache
def _finish_on_driver(decided: bool) -> str:
    """The attempt's end as PostgreSQL's driver takes it."""
    return _on_driver(_FINISH_ATTEMPT[decided].statement)


def _on_driver(statement: Any) -> str:
    return str(statement.compile(dialect=postgresql.psycopg.dialect()))  # type: ignore[no-untyped-call]


def finish_lost_attempt(
    session: Session, attempt_id: str, now: datetime, outcome: OccurrenceState, kept: tuple[str, str] | None = None
) -> None:
    """Store that an attempt's outcome was lost (found by recovery): what its row
    lacks is filled in, its end (now, error class ``lost``), the output ``kept`` on
    disk while it ran, and the outcome it led to."""
    ended: dict[str, object] = {"finished_at": now, "error_class": "lost"}
    if kept is not None:
        ended |= {"stdout_tail": kept[0] or None, "stderr_tail": kept[1] or None}
    session.execute(update(_att).where(_att.c.attempt_id == attempt_id, _att.c.finished_at.is_(None)).values(**ended))
    session.execute(
        update(_att).where(_att.c.attempt_id == attempt_id, _att.c.outcome.is_(None)).values(outcome=outcome)
    )


_SETTLED = ("reason", "updated_at", "lease_owner", "lease_expires_at", "retry_at", "finished_at")
_SETTLED_KEYS = tuple((f"p_{name}", name) for name in _SETTLED[:-1])  # finished_at only when set


def _settle_statement(with_finish: bool, held: bool) -> Update:
    names = _SETTLED if with_finish else _SETTLED[:-1]
    stmt = update(_occ).where(
        _occ.c.occurrence_id == bindparam("p_id"), _occ.c.state == bindparam("p_old", type_=_occ.c.state.type)
    )
    if held:  # the claim's own compare-and-set: its generation, and the ledger's epoch unchanged
        stmt = stmt.where(
            _occ.c.claim_generation == bindparam("p_generation"),
            select(_meta.c.execution_epoch).scalar_subquery() == bindparam("p_epoch"),
        )
    return stmt.values(
        {"state": bindparam("p_new", type_=_occ.c.state.type)}
        | {name: bindparam(f"p_{name}", type_=_occ.c[name].type) for name in names}
    ).returning(_occ.c.occurrence_id)


class OutcomeRaced(RuntimeError):
    """An outcome decided on a state the occurrence no longer has: nothing of it may be
    written (the transaction is rolled back; a worker records its attempt again)."""


_SETTLE = {
    (finish, held): Prepared(_settle_statement(finish, held)) for finish in (True, False) for held in (True, False)
}


def _settle_params(
    occurrence_id: str, old: OccurrenceState, new: OccurrenceState, values: dict[str, Any]
) -> tuple[bool, dict[str, Any]]:
    get = values.get
    params = {key: get(name) for key, name in _SETTLED_KEYS}
    params |= {"p_id": occurrence_id, "p_old": old, "p_new": new}
    finish = "finished_at" in values
    if finish:
        params["p_finished_at"] = values["finished_at"]
    return finish, params


def settle(
    session: Session,
    occurrence_id: str,
    old: OccurrenceState,
    new: OccurrenceState,
    values: dict[str, Any],
    held: tuple[int, int] | None = None,
    ahead: Ahead | None = None,
) -> bool:
    """Move a claimed occurrence from ``old`` to ``new`` (an outcome): ``values`` has
    reason, updated_at, lease_owner, lease_expires_at, retry_at and, to set it, finished_at.

    With ``held`` (the claim's generation and epoch) it is the claim's compare-and-set in
    one statement: False, with nothing written, when the occurrence is not ``old``, its
    claim generation has moved on or the ledger was fenced. Without it,
    :class:`OutcomeRaced` when it is no longer ``old``: the caller read it without holding
    its row, and what it decided must not be written.

    With ``held`` and ``ahead`` (PostgreSQL, beside other engines), the claim of the next
    occurrence goes in the same statement (:func:`settle_then_claim`)."""
    check_transition(old, new, occurrence_id)
    finish, params = _settle_params(occurrence_id, old, new, values)
    if held is not None:
        params |= {"p_generation": held[0], "p_epoch": held[1]}
        if ahead is not None:
            return settle_then_claim(session, finish, params, ahead)
    if _SETTLE[finish, held is not None].first(session, params) is not None:
        return True
    if held is not None:
        return False
    raise OutcomeRaced(f"occurrence {occurrence_id} is no longer {old.value}: its outcome was decided too early")


@dataclass
class Ahead:
    """The next claim of a worker, sent in its outcome's statement (:func:`settle_then_claim`):
    the occurrence, the state it was seen in and what the claim compares against; then what
    came of it."""

    occurrence_id: str
    expected: OccurrenceState
    gate: Gate
    now: datetime
    worker: str
    lease_until: datetime
    tried: bool = False
    """The outcome was written, and the claim tried with it."""
    claimed: Claimed | None = None
    """The claim, when it applied (else the caller takes the careful path)."""


def _settle_then_claim_statement(finish: bool, expected: OccurrenceState) -> Any:
    """``WITH settled AS (the outcome's UPDATE … RETURNING), claimed AS (the claim's UPDATE …
    AND EXISTS (SELECT FROM settled) … RETURNING) SELECT …``: the claim applies only when the
    outcome did, and leaves the settled occurrence out of its "nothing else in flight" test
    (the statement's snapshot still sees it in flight)."""
    settled = _settle_statement(finish, True).cte("settled")
    claim = _claim_statement(expected, "c_", settling=bindparam("p_id"))
    claim = claim.where(exists(select(settled.c.occurrence_id)))
    claimed = claim.cte("claimed")
    return select(settled.c.occurrence_id, *claimed.c).select_from(settled.outerjoin(claimed, literal_column("true")))


_SETTLE_THEN_CLAIM = {
    (finish, expected): Prepared(_settle_then_claim_statement(finish, expected))
    for finish in (True, False)
    for expected in (_S.DUE, _S.RETRY_WAIT)
}


def settle_then_claim(session: Session, finish: bool, params: dict[str, Any], ahead: Ahead) -> bool:
    """The outcome's compare-and-set and the next claim's in one statement (PostgreSQL: one
    round trip less per job). The claim is the same compare-and-set as :func:`try_claim`'s,
    made only when the outcome's matched; both rows are the statement's (nothing else writes
    them meanwhile: the schedule's row is held). Returns whether the outcome was written;
    ``ahead`` then says what came of the claim."""
    assert ahead.occurrence_id != params["p_id"], "an occurrence is settled, then claimed again, in two statements"
    where = params | _claim_params("c_", ahead.occurrence_id, ahead.gate, ahead.now, ahead.worker, ahead.lease_until)
    row = _SETTLE_THEN_CLAIM[finish, ahead.expected].first(session, where)
    if row is None:
        return False
    ahead.tried = True
    if row[1] is not None:
        ahead.claimed = _claimed(ahead.occurrence_id, ahead.gate, ahead.expected, row[1:])
    return True


@dataclass(frozen=True)
class Held:
    """A claim this engine holds while its process runs."""

    schedule_id: str
    occurrence_id: str
    generation: int
    attempt_number: int
    epoch: int
    attempt_id: str = ""
    task_pid: int | None = None
    """The task's process, recorded on the attempt with RUNNING (None: not known yet)."""
    task_started: float | None = None


def mark_running(session: Session, held: Sequence[Held], now: datetime) -> list[str]:
    """DISPATCHING -> RUNNING, with its event, for each claim still current (same
    generation, not fenced), and the task's process on its attempt. Returns the
    occurrences moved."""
    epoch = session.scalar(select(_meta.c.execution_epoch))
    moved: list[str] = []
    for h in sorted(held, key=lambda h: h.occurrence_id):  # rows in one order, whoever locks several
        if h.epoch != epoch:
            continue  # fenced: the claim is void, its lease runs out
        row = session.execute(
            update(_occ)
            .where(
                _occ.c.occurrence_id == h.occurrence_id,
                _occ.c.claim_generation == h.generation,
                _occ.c.state == _S.DISPATCHING,
            )
            .values(state=_S.RUNNING, updated_at=now)
            .returning(_occ.c.occurrence_id)
        ).first()
        if row is not None:
            moved.append(h.occurrence_id)
            if h.task_pid is not None:
                record_task(session, h.attempt_id, h.task_pid, h.task_started)
            events.append(
                session,
                events.OccurrenceTransitioned(
                    at=now,
                    schedule_id=h.schedule_id,
                    occurrence_id=h.occurrence_id,
                    from_=_S.DISPATCHING,
                    to=_S.RUNNING,
                    reason=None,
                    attempt=h.attempt_number,
                ),
            )
    return moved


def renew_leases(session: Session, held: Sequence[Held], until: datetime) -> None:
    """Extend the leases of claims still current; a fenced claim is left to expire."""
    epoch = session.scalar(select(_meta.c.execution_epoch))
    for h in sorted(held, key=lambda h: h.occurrence_id):
        if h.epoch != epoch:
            continue
        session.execute(
            update(_occ)
            .where(
                _occ.c.occurrence_id == h.occurrence_id,
                _occ.c.claim_generation == h.generation,
                _occ.c.state.in_(IN_FLIGHT),
            )
            .values(lease_expires_at=until)
        )
