"""The promote stage: PLANNED occurrences whose time has come become DUE, or go
through the misfire policy (docs/ledger.md, "Life of an occurrence", step 2).
The decision itself is the pure :func:`core.engine.misfire.plan_recovery`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterator
from datetime import datetime
from typing import TypeVar

from sqlalchemy import String, func, literal_column, select, type_coerce, update
from sqlalchemy.orm import Session

from core.engine.context import PassReport
from core.engine.misfire import Action, Due, plan_recovery
from core.engine.specs import active_specs
from core.ledger import events
from core.ledger.db import Ledger, lock_schedules
from core.ledger.id_lists import among
from core.ledger.models import Occurrence
from core.ledger.states import OccurrenceState

_S = OccurrenceState
T = TypeVar("T")
#: Rows changed by one bulk statement.
_BULK = 256
#: Occurrence ids in one UPDATE, events in one INSERT at most.
_IDS_PER_STATEMENT = 2000
#: ``state || '' = 'PLANNED'``: compared row by row, never looked up in the state index.
_STILL_PLANNED = type_coerce(Occurrence.state, String).concat(literal_column("''")) == literal_column("'PLANNED'")


def promote_due(
    ledger: Ledger,
    now: datetime,
    report: PassReport,
    *,
    hold: Collection[str] = (),
    first: Callable[[str], bool] | None = None,
) -> None:
    """:func:`promote` in write transactions of about :data:`_BULK` rows each, a few
    schedules at a time (one schedule's rows are decided together, whatever their
    number: its misfire policy looks at all of them). Which schedules have rows to
    promote is read first, by the state index, outside the write lock; with none
    nothing is written. On PostgreSQL the transactions run beside other engines'
    (``write(serialize=False)``), each on the schedules whose rows it holds."""
    with ledger.read() as session:
        counts = session.execute(
            select(Occurrence.schedule_id, func.count())
            .where(Occurrence.state == _S.PLANNED, Occurrence.due_at <= now)
            .group_by(Occurrence.schedule_id)
            .order_by(Occurrence.schedule_id)
        ).all()
    if first is not None:  # the engine's own share first, in batches of their own (its dispatch then lists them)
        counts = sorted(counts, key=lambda row: not first(row[0]))
    batch: list[str] = []
    rows = 0
    for sid, count in counts:
        if sid in hold:
            continue
        if batch and (rows + count > _BULK or (first is not None and first(sid) != first(batch[0]))):
            with ledger.write(serialize=False) as session:
                promote(session, now, report, hold=hold, schedules=batch)
            ledger.make_way()
            batch, rows = [], 0
        batch.append(sid)
        rows += count
    if batch:
        with ledger.write(serialize=False) as session:
            promote(session, now, report, hold=hold, schedules=batch)


def promote(
    session: Session,
    now: datetime,
    report: PassReport,
    *,
    hold: Collection[str] = (),
    schedules: Collection[str] | None = None,
) -> None:
    """PLANNED occurrences whose time has come become DUE, or, when they come
    due later than their lateness window (the engine was not running), go
    through the misfire policy: made up late, or MISFIRE_EXPIRED. Schedules in
    ``hold`` are left alone (their newest revision cannot be read); with
    ``schedules``, only those are looked at.

    Done in bulk: after a long outage this can be hundreds of thousands of
    rows, and at the top of a minute one row of each of hundreds of schedules.
    The newest specs are read in one statement, states change by one UPDATE
    per target, reason and chunk across the schedules, and the events go in by
    one INSERT per chunk, all in the caller's transaction.
    """
    stmt = select(Occurrence.schedule_id, Occurrence.occurrence_id, Occurrence.due_at).where(
        Occurrence.state == _S.PLANNED, Occurrence.due_at <= now
    )
    if schedules is not None:
        # Beside other engines (PostgreSQL): only the schedules this transaction holds; one
        # another engine holds right now is promoted by that engine, or by this one next pass.
        schedules = lock_schedules(session, schedules, skip_locked=True)
        stmt = stmt.where(among(session, Occurrence.schedule_id, schedules))
    rows = session.execute(stmt.order_by(Occurrence.schedule_id, Occurrence.due_at)).all()
    by_schedule: dict[str, list[Due]] = defaultdict(list)
    for sid, occ_id, due_at in rows:
        assert due_at is not None
        if sid not in hold:
            by_schedule[sid].append(Due(occ_id, due_at))
    specs = active_specs(session, list(by_schedule))
    # One UPDATE per target and reason across the schedules, not per schedule: a pass at the
    # top of the minute promotes a row of each of hundreds of schedules, and every statement
    # is time another writer waits. The events keep their order: by schedule, then decision.
    groups: dict[tuple[OccurrenceState, str | None], list[str]] = defaultdict(list)
    said: list[events.NewEvent] = []
    for sid, due in by_schedule.items():
        spec = specs[sid]
        decisions = plan_recovery(
            due,
            now,
            spec.misfire_policy,
            max_catch_up=spec.effective_max_catch_up,
            lateness_window=spec.lateness_window,
            catch_up_window=spec.catch_up_window,
        )
        mine: dict[tuple[OccurrenceState, str | None], list[str]] = defaultdict(list)
        for d in decisions:
            mine[(_S.MISFIRE_EXPIRED if d.action is Action.EXPIRE else _S.DUE, d.reason)].append(d.occurrence_id)
        for (target, reason), ids in mine.items():
            groups[(target, reason)].extend(ids)
            said.extend(
                events.OccurrenceTransitioned(
                    at=now, schedule_id=sid, occurrence_id=oid, from_=_S.PLANNED, to=target, reason=reason
                )
                for oid in ids
            )
            if target is _S.MISFIRE_EXPIRED:
                report.expired += len(ids)
            else:
                report.promoted += len(ids)
    for (target, reason), ids in groups.items():
        values: dict[str, object] = {"state": target, "updated_at": now}
        if reason is not None:
            values["reason"] = reason
        if target is _S.MISFIRE_EXPIRED:
            values["finished_at"] = now
        for chunk in _chunks(ids, _IDS_PER_STATEMENT):
            session.execute(
                update(Occurrence)
                # state || '': compared, not looked up, so that SQLite walks the ids
                # by primary key instead of every PLANNED row of its state index.
                .where(among(session, Occurrence.occurrence_id, chunk), _STILL_PLANNED)
                .values(**values)
                .execution_options(synchronize_session=False)
            )
    for part in _chunks(said, _IDS_PER_STATEMENT):
        events.append_many(session, part)


def _chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
