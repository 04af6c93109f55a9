"""The plan stage: find the revisions this Tidemark cannot read (and hold what
needs them), then materialize occurrences ahead (docs/ledger.md, "Life of an
occurrence", step 1).

Both run before anything is promoted or claimed in a pass. Each write is a
short transaction of its own, so the functions take the ledger.
"""

from __future__ import annotations

import ctypes
import functools
import logging
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from sys import intern

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.clock import Clock
from core.engine.context import PassReport, Refusals, Unreadable
from core.engine.misfire import certain_expiry
from core.engine.share import Share
from core.ledger import events
from core.ledger.db import Ledger, lock_schedules
from core.ledger.id_lists import among, among_pairs
from core.ledger.materialize import (
    Drafts,
    MaterializeResult,
    draft_many,
    materialize_drafted,
    revision_mark,
    to_materialize,
    unreadable_revisions,
    warm_counts,
)
from core.ledger.models import Event, Revision, Schedule
from core.ledger.publishers import wants_columns, wants_of
from core.ledger.states import ScheduleState
from core.team.placement import Placement, refusal
from core.time.formats import fmt_utc

#: Revisions whose placement one statement reads, when an engine first decides which it refuses.
_WANTS_PER_READ = 500
#: Write transactions of materialization per pass at most.
MATERIALIZE_ROUNDS = 10_000
#: Once a pass has materialized its ``fill_rows``, the others reach only this far ahead
#: (or the horizon, if nearer): everything that can come due before the next pass.
LEAD = timedelta(hours=1)
#: A schedule is materialized this far beyond its horizon (at most the horizon again),
#: so that it comes back into the sweep once per chunk, not once per pass.
CHUNK_AHEAD = timedelta(days=1)
#: Rows per write transaction at most, so that workers recording outcomes, the window and
#: schedctl never wait long behind a pass: the rows are expanded before the transaction
#: (:func:`~core.ledger.materialize.draft_many`), which holds the write lock only to insert
#: them (about 25-30 ms for 2,000 on a quiet 2-core machine). Fewer, larger transactions
#: cost less: each commit writes the pages it touched (500 rows a transaction cost a third more).
BATCH_ROWS = 2000
#: Schedules per write transaction at most (each costs a few statements even when it
#: inserts little).
BATCH_SCHEDULES = 32

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
        mark = revision_mark(session)
        if mark != unreadable.mark:  # read again only when a revision or a gate moved
            unreadable.revisions = unreadable_revisions(session, unreadable.readable)
            unreadable.mark = mark
        active = {
            sid: number
            for sid, number in (
                session.execute(
                    select(Schedule.id, Schedule.active_revision).where(among(session, Schedule.id, unreadable.failing))
                )
                if unreadable.failing
                else ()
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


def hold_refused(
    ledger: Ledger, placement: Placement, refusals: Refusals, report: PassReport, now: datetime | None = None
) -> None:
    """Find the revisions this engine does not run: their ``runsOn`` asks for labels it
    lacks, or it does not trust their publisher (:mod:`core.team.placement`). Their
    occurrences are never claimed here, and a schedule whose newest revision it is is
    neither materialized nor promoted here either, so its misfire policy is applied by
    the engine that finally runs it, not by this one.

    ``refusals`` is updated in place: each revision is read once per engine, and the
    revisions are listed again only when a revision or a gate moved (:func:`revision_mark`).

    The report names, for each schedule, the revision that governs at ``now`` (the newest whose
    cutover has come) when this engine refuses it, else the next one it refuses and when that
    one takes over; without ``now``, the newest it refuses."""
    with ledger.read() as session:
        mark = revision_mark(session)
        if mark != refusals.mark:
            _decide_refusals(session, placement, refusals)
            refusals.mark = mark
    if now is not None:
        report.refused.update(_governing_refusals(refusals, now))
        return
    for (sid, number), why in sorted(refusals.revisions.items(), key=lambda item: (item[0][0], -item[0][1])):
        report.refused.setdefault(sid, f"revision {number} {why}")  # the newest the engine refuses


def _governing_refusals(refusals: Refusals, now: datetime) -> dict[str, str]:
    """For each schedule with a refused revision: the refused revision that governs at ``now``,
    else the first refused one still to come, with its cutover."""
    governing: dict[str, int] = {}
    for (sid, number), cutover in refusals.cutovers.items():
        if cutover <= now and number > governing.get(sid, 0):
            governing[sid] = number
    said: dict[str, str] = {}
    for (sid, number), why in sorted(refusals.revisions.items()):
        if number == governing.get(sid):
            said[sid] = f"revision {number} {why}"
        elif number > governing.get(sid, 0) and sid not in said:
            said[sid] = f"revision {number}, in force from {fmt_utc(refusals.cutovers[(sid, number)])}, {why}"
    return said


def _decide_refusals(session: Session, placement: Placement, refusals: Refusals) -> None:
    rows = session.execute(
        select(Revision.schedule_id, Revision.revision, Revision.cutover_at)
        .join(Schedule, Schedule.id == Revision.schedule_id)
        .where(Schedule.state != ScheduleState.DISABLED)
    ).all()
    # Each revision's key is one tuple, with one copy of its schedule's id, in every note kept of
    # it (an engine keeps notes on every live revision): the one decided keeps, once it has one.
    keys = {pair: pair for pair in refusals.decided}
    refusals.cutovers = {
        keys.setdefault((sid, number), (intern(sid), number)): cutover for sid, number, cutover in rows
    }
    pairs = list(refusals.cutovers)
    unknown = [pair for pair in pairs if pair not in refusals.decided]
    for i in range(0, len(unknown), _WANTS_PER_READ):  # a page at a time, not one statement per revision
        page = unknown[i : i + _WANTS_PER_READ]
        for sid, number, *wants in session.execute(
            select(Revision.schedule_id, Revision.revision, *wants_columns(session)).where(
                among_pairs(session, Revision.schedule_id, Revision.revision, page)
            )
        ):
            refusals.decided[keys[(sid, number)]] = refusal(placement, wants_of(session, *wants))
    newest: dict[str, int] = {}
    for sid, number in pairs:
        newest[sid] = max(number, newest.get(sid, number))
    refusals.revisions = {}
    for sid, number in pairs:
        why = refusals.decided[(sid, number)]
        if why is not None:
            refusals.revisions[(sid, number)] = why
    refusals.schedules = {sid for (sid, number) in refusals.revisions if newest[sid] == number}


@dataclass
class Sweep:
    """The schedules one pass materializes (:func:`select_sweep`), worked through in phases:
    before the dispatch (:func:`catch_up`), and after it the fill toward the horizons of those
    that were behind (:func:`fill`)."""

    now: datetime
    pending: list[str]
    """The schedules selected, in the order the ledger gave them."""
    cursors: dict[str, datetime | None]
    """Each one's cursor as last known (moved by each phase)."""
    hold: set[str]
    """Schedules left alone (held, or failed earlier in this pass)."""
    left: int = 0
    """Rows the pass may still write beyond the next hour."""


def select_sweep(
    ledger: Ledger,
    clock: Clock,
    *,
    hold: Collection[str] = (),
    share: Share | None = None,
    everything: bool = False,
) -> Sweep:
    """The schedules that need materializing (:func:`to_materialize`: one indexed statement; a
    schedule materialized far enough ahead is not read). Schedules in ``hold`` are left alone
    (their newest revision cannot be read), and with ``share`` so are those another engine
    materializes.

    With ``everything`` (an engine's first pass) every schedule not disabled is looked
    at, whatever its ``materialize_at`` and share: one this Tidemark cannot expand
    (a revision an older one let through) is found and held at once, not when it next
    comes into the sweep."""
    held = set(hold)
    now = clock.now()
    if share is not None:
        share.refresh(ledger, now)
    with ledger.read() as session:
        selected = [
            (sid, cursor)
            for sid, at, cursor in to_materialize(session, now, everything=everything)
            if sid not in held and (everything or share is None or share.takes(sid, at, now))
        ]
        if selected:
            warm_counts(session, now)  # a new COUNT rule's first walk, outside the write lock
    return Sweep(now, [sid for sid, _ in selected], dict(selected), held)


def catch_up(
    ledger: Ledger,
    clock: Clock,
    sweep: Sweep,
    report: PassReport,
    *,
    fill_rows: int,
    unreadable: Unreadable | None = None,
    between: Callable[[], None] | None = None,
) -> None:
    """What a sweep does before the pass promotes and dispatches. The schedules whose cursor is
    behind now (after an outage, or new) are materialized to the next hour (:data:`LEAD`) only,
    so that what is due can be dispatched before their far rows are written (:func:`fill`, after
    the dispatch). The others (in steady state, all of them) have nothing due that is not written
    yet, and are materialized in full here, as before any dispatch: one whose revision cannot be
    expanded any more is held before its rows are claimed.

    ``fill_rows``: the rows this pass may write beyond the next hour (see :func:`fill`); what this
    call leaves of them is kept for :func:`fill`."""
    behind = {sid for sid in sweep.pending if (sweep.cursors.get(sid) or sweep.now) <= sweep.now}
    first = deque(sid for sid in sweep.pending if sid in behind)
    _rounds(ledger, clock, sweep, first, report, fill_rows=0, unreadable=unreadable, between=between)
    others = deque(sid for sid in sweep.pending if sid not in behind)
    sweep.left = _rounds(
        ledger, clock, sweep, others, report, fill_rows=fill_rows, unreadable=unreadable, between=between
    )
    sweep.pending = [sid for sid in sweep.pending if sid in behind]


def fill(
    ledger: Ledger,
    clock: Clock,
    sweep: Sweep,
    report: PassReport,
    *,
    unreadable: Unreadable | None = None,
    between: Callable[[], None] | None = None,
) -> None:
    """The sweep's schedules left (after :func:`catch_up`, those that were behind), each to now +
    its horizon + :data:`CHUNK_AHEAD`, so it comes back once per chunk; a long stretch of missed
    occurrences certain to expire is recorded as expired ranges. Beyond the sweep's ``left`` rows,
    the others go only to the next hour (:data:`LEAD`): what can come due before the next pass,
    and the rest at later passes."""
    pending = deque(sweep.pending)
    sweep.pending = []
    sweep.left = _rounds(
        ledger, clock, sweep, pending, report, fill_rows=sweep.left, unreadable=unreadable, between=between
    )


def materialize(
    ledger: Ledger,
    clock: Clock,
    report: PassReport,
    *,
    fill_rows: int,
    hold: Collection[str] = (),
    unreadable: Unreadable | None = None,
    share: Share | None = None,
    between: Callable[[], None] | None = None,
    everything: bool = False,
) -> None:
    """One whole sweep (:func:`select_sweep`, then :func:`fill`), for callers that do not
    dispatch in between.

    Each write transaction materializes at most :data:`BATCH_SCHEDULES` schedules and
    about :data:`BATCH_ROWS` rows and commits, so another writer (a pause, the window)
    gets in between two; ``between`` is called after each commit. On PostgreSQL these
    transactions run beside other engines' (``write(serialize=False)``): each holds the
    rows of the schedules it materializes, and a schedule another engine holds right
    now is passed over, to that engine.

    A schedule that fails (its revision cannot be read or expanded) is left out of
    the rest of the pass and, with ``unreadable``, held from then on, said once
    (:func:`hold_unreadable`); every other schedule goes on."""
    sweep = select_sweep(ledger, clock, hold=hold, share=share, everything=everything)
    sweep.left = fill_rows
    fill(ledger, clock, sweep, report, unreadable=unreadable, between=between)


#: Rows materialized after which the C allocator is asked to hand its free pages back.
TRIM_AFTER_ROWS = BATCH_ROWS


@functools.cache
def malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where there is none (another C library, another system)."""
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def _hand_back(rows: int) -> int:
    """After :data:`TRIM_AFTER_ROWS` rows written since the last time, hand the free pages the C
    allocator keeps back to the system (glibc's ``malloc_trim``; SQLite's and the drivers' buffers
    of a large batch are freed but not returned otherwise); the rows still to count."""
    if rows < TRIM_AFTER_ROWS:
        return rows
    trim = malloc_trim()
    if trim is not None:
        trim(0)
    return 0


def _rounds(
    ledger: Ledger,
    clock: Clock,
    sweep: Sweep,
    pending: deque[str],
    report: PassReport,
    *,
    fill_rows: int,
    unreadable: Unreadable | None,
    between: Callable[[], None] | None,
) -> int:
    """Materialize ``pending`` in write transactions of a batch each (:func:`_batch`), each batch
    worked out before its transaction (:func:`~core.ledger.materialize.draft_many`, in a read);
    returns what is left of ``fill_rows``."""
    now, cursors, hold = sweep.now, sweep.cursors, sweep.hold
    left = fill_rows
    unfreed = 0
    for _ in range(MATERIALIZE_ROUNDS):
        if left <= 0:  # the fill is used: only those short of the next half hour, to the next hour
            near = now + LEAD / 2
            pending = deque(sid for sid in pending if (cursors.get(sid) or now) < near)
        if not pending:
            break
        taken = _take(pending, hold)
        lead = LEAD if left <= 0 else None
        with ledger.read() as session:  # the expansion and its rows, outside the write lock
            drafts = draft_many(
                session,
                taken,
                clock,
                max_rows=BATCH_ROWS,
                lead=lead,
                expire=certain_expiry,
                chunk=None if lead is not None else CHUNK_AHEAD,
            )
        with ledger.write(serialize=False) as session:
            results = _batch(session, drafts, taken, pending)
        _failed(ledger, clock, report, results, hold, unreadable)
        for result in results:
            if result.cursor_utc is not None and not result.more:  # one cut short stays where it was seen
                cursors[result.schedule_id] = result.cursor_utc
        inserted = sum(r.inserted for r in results)
        report.materialized += inserted
        report.expired_ranges += sum(r.expired_ranges for r in results)
        report.expired += sum(r.expired_in_ranges for r in results)
        left -= inserted
        unfreed = _hand_back(unfreed + inserted)
        if between is not None:
            between()
        if pending:
            ledger.make_way()
    return max(left, 0)


def _take(pending: deque[str], hold: set[str]) -> list[str]:
    """Up to :data:`BATCH_SCHEDULES` schedules from the front of ``pending``, but those held."""
    taken: list[str] = []
    while pending and len(taken) < BATCH_SCHEDULES:
        sid = pending.popleft()
        if sid not in hold:  # else failed earlier in this pass
            taken.append(sid)
    return taken


def _batch(session: Session, drafts: Drafts, taken: list[str], pending: deque[str]) -> list[MaterializeResult]:
    """Write what ``drafts`` worked out for ``taken`` in one transaction, up to about
    :data:`BATCH_ROWS` rows, by a fixed number of statements
    (:func:`~core.ledger.materialize.materialize_drafted`). One cut short by the rows, and those
    the rows left no room for, go back to the front of ``pending``, to go on in the next transaction."""
    held = lock_schedules(session, taken, skip_locked=True)
    # a schedule another engine is on right now (PostgreSQL) is left to it
    ids = [sid for sid in taken if sid in held]
    results = materialize_drafted(session, drafts, ids)
    done = {result.schedule_id for result in results if not result.more}
    pending.extendleft(reversed([sid for sid in ids if sid not in done]))
    return results


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
