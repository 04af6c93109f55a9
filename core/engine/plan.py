"""The plan stage: find the revisions this Tidemark cannot read (and hold what
needs them), then materialize occurrences ahead (docs/ledger.md, "Life of an
occurrence", step 1).

Both run before anything is promoted or claimed in a pass. Each write is a
short transaction of its own, so the functions take the ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import timedelta

from sqlalchemy import select

from core.clock import Clock
from core.engine.context import PassReport, Refusals, Unreadable
from core.engine.misfire import certain_expiry
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.materialize import MaterializeResult, materialize_all, unreadable_revisions, warm_counts
from core.ledger.models import Event, Revision, Schedule
from core.ledger.publishers import wants_columns, wants_of
from core.ledger.states import ScheduleState
from core.placement import Placement, refusal

#: Materialization calls per pass at most (each inserts up to its max_rows).
MATERIALIZE_ROUNDS = 1000
#: The first materialization of a pass reaches this far ahead (or the horizon, if
#: nearer): everything that can come due before the next pass.
LEAD = timedelta(hours=1)
#: Rows per transaction when filling the horizon, so that workers recording
#: outcomes never wait long for the write lock.
FILL_CHUNK = 10_000

_log = logging.getLogger(__name__)


def hold_unreadable(ledger: Ledger, clock: Clock, unreadable: Unreadable, report: PassReport) -> None:
    """Find published revisions this Tidemark refuses to read (an older one accepted
    them). What needs one is held this pass: a schedule whose newest revision it is
    is neither materialized nor promoted, and no occurrence of such a revision is
    claimed or settled. Each is said once in the log and once as an event.

    A schedule whose materialization failed in an earlier pass (``unreadable.failing``)
    stays held until another revision of it is published.

    ``unreadable`` is updated in place: it carries what was read and said across passes."""
    with ledger.read() as session:
        unreadable.revisions = unreadable_revisions(session, unreadable.readable)
        active = {
            sid: number
            for sid, number in session.execute(
                select(Schedule.id, Schedule.active_revision).where(Schedule.id.in_(unreadable.failing))
            )
        }
    unreadable.failing = {
        sid: failed for sid, failed in unreadable.failing.items() if active.get(sid) == failed[0]
    }  # republished (or deleted): materialized again
    unreadable.schedules = {sid for (sid, _), (newest, _) in unreadable.revisions.items() if newest}
    unreadable.schedules |= set(unreadable.failing)
    for (sid, number), (_, problems) in sorted(unreadable.revisions.items()):
        _tell(ledger, clock, unreadable, report, sid, number, problems, "cannot be read by this Tidemark")
    for sid, (number, problems) in sorted(unreadable.failing.items()):
        _tell(ledger, clock, unreadable, report, sid, number, problems, "cannot be expanded")


def _tell(
    ledger: Ledger,
    clock: Clock,
    unreadable: Unreadable,
    report: PassReport,
    sid: str,
    number: int,
    problems: list[str],
    what: str,
) -> None:
    """Hold ``sid`` in ``report``; say why once in the log and once as an event (per revision,
    whatever the engines)."""
    why = f"revision {number} {what}: {'; '.join(problems)}"
    report.held.setdefault(sid, why)
    if (sid, number) in unreadable.told:
        return
    unreadable.told.add((sid, number))
    _log.error("schedule %s: %s; publish a corrected revision", sid, why)
    with ledger.write() as session:
        said = session.scalars(
            select(Event.data).where(Event.schedule_id == sid, Event.kind == events.EventKind.SCHEDULE_UNREADABLE.value)
        ).all()
        if any(data.get("revision") == number for data in said):
            return  # recorded by an earlier engine
        events.append(
            session,
            events.ScheduleUnreadable(at=clock.now(), schedule_id=sid, revision=number, problems=problems),
        )


def hold_refused(ledger: Ledger, placement: Placement, refusals: Refusals, report: PassReport) -> None:
    """Find the revisions this engine does not run: their ``runsOn`` asks for labels it
    lacks, or it does not trust their publisher (:mod:`core.placement`). Their
    occurrences are never claimed here, and a schedule whose newest revision it is is
    neither materialized nor promoted here either, so its misfire policy is applied by
    the engine that finally runs it, not by this one.

    ``refusals`` is updated in place: each revision is read once per engine."""
    with ledger.read() as session:
        pairs = session.execute(
            select(Revision.schedule_id, Revision.revision)
            .join(Schedule, Schedule.id == Revision.schedule_id)
            .where(Schedule.state != ScheduleState.DISABLED)
        ).all()
        for sid, number in pairs:
            if (sid, number) not in refusals.decided:
                row = session.execute(
                    select(*wants_columns(session)).where(Revision.schedule_id == sid, Revision.revision == number)
                ).one()
                refusals.decided[(sid, number)] = refusal(placement, wants_of(session, *row))
    newest: dict[str, int] = {}
    for sid, number in pairs:
        newest[sid] = max(number, newest.get(sid, number))
    refusals.revisions = {}
    for sid, number in pairs:
        why = refusals.decided[(sid, number)]
        if why is not None:
            refusals.revisions[(sid, number)] = why
            report.refused.setdefault(sid, f"revision {number} {why}")
    refusals.schedules = {sid for (sid, number) in refusals.revisions if newest[sid] == number}


def materialize(
    ledger: Ledger,
    clock: Clock,
    report: PassReport,
    *,
    fill_rows: int,
    hold: Collection[str] = (),
    unreadable: Unreadable | None = None,
) -> None:
    """First everything up to the next hour, recording long stretches of missed
    occurrences that are certain to expire as expired ranges; then at most
    ``fill_rows`` rows toward each horizon. Each call is bounded (max_rows), so a
    long outage never holds the write lock for long. Schedules in ``hold`` are
    left alone (their newest revision cannot be read).

    A schedule that fails (its revision cannot be read or expanded) is left out of
    the rest of the pass and, with ``unreadable``, held from then on, said once
    (:func:`hold_unreadable`); every other schedule goes on."""
    hold = set(hold)
    with ledger.read() as session:
        warm_counts(session)  # a new COUNT rule's first walk, outside the write lock
    for _ in range(MATERIALIZE_ROUNDS):
        with ledger.write() as session:
            results = materialize_all(
                session,
                clock,
                max_rows=FILL_CHUNK,
                lead=LEAD,
                expire=certain_expiry,
                hold=hold,
            )
        _failed(ledger, clock, report, results, hold, unreadable)
        report.materialized += sum(r.inserted for r in results)
        report.expired_ranges += sum(r.expired_ranges for r in results)
        report.expired += sum(r.expired_in_ranges for r in results)
        if not any(r.more for r in results):
            break
    left = fill_rows
    for _ in range(MATERIALIZE_ROUNDS):
        if left <= 0:
            break
        with ledger.write() as session:
            results = materialize_all(session, clock, max_rows=min(left, FILL_CHUNK), hold=hold)
        _failed(ledger, clock, report, results, hold, unreadable)
        inserted = sum(r.inserted for r in results)
        report.materialized += inserted
        left -= max(inserted, 1)
        if not any(r.more for r in results):
            break


def _failed(
    ledger: Ledger,
    clock: Clock,
    report: PassReport,
    results: list[MaterializeResult],
    hold: set[str],
    unreadable: Unreadable | None,
) -> None:
    """Hold the schedules that failed in ``results`` for the rest of the pass (and later ones)."""
    for result in results:
        if result.failed is None or result.schedule_id in hold:
            continue
        hold.add(result.schedule_id)
        number, problems = result.failed
        if unreadable is None:
            report.held.setdefault(result.schedule_id, f"revision {number} cannot be expanded: {'; '.join(problems)}")
            continue
        if any(sid == result.schedule_id for sid, _ in unreadable.revisions):
            continue  # an unreadable revision governs a stretch of it: held and said already
        unreadable.failing[result.schedule_id] = result.failed
        unreadable.schedules.add(result.schedule_id)
        _tell(ledger, clock, unreadable, report, result.schedule_id, number, problems, "cannot be expanded")
