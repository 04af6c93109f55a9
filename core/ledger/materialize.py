"""Materialization: turning revisions into occurrence rows, ahead of time.

:func:`materialize` expands a schedule's governing revisions from its cursor up
to now + horizon and inserts the rows in one transaction that also advances the
cursor (invariant 1):

* every insert is ``INSERT ... ON CONFLICT DO NOTHING`` against the primary key
  (the occurrence id) and the live-slot and live-period indexes, so running it
  twice, or from two engines at once, inserts each occurrence once;
* the cursor moves by compare-and-set on (cursor, gate_version); a loser rolls
  back its savepoint, rereads and tries again, so the cursor never moves
  without its rows and rows never land under a revision that lost the gate.

With ``expire`` (the engine passes :func:`core.engine.misfire.certain_expiry`),
a long stretch of missed positions whose occurrences are all certain to expire
is recorded as expired ranges (:mod:`core.ledger.expired`) in the same
transaction, instead of being expanded row by row; the cursor then means
"materialized, or covered by an expired range".

Revision r governs positions from its cutover until a higher revision's
cutover takes over (the highest revision whose cutover is <= position wins:
docs/contract.md §2's half-open ranges, also when a later revision moves its cutover
earlier).

:func:`drift` reports future occurrences that the installed tz database would
place at another instant. It changes nothing: a new revision adopts them.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from sys import intern
from typing import Any, TypedDict, Unpack

from sqlalchemy import ColumnElement, and_, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from core.calendar import holiday_codes
from core.clock import Clock
from core.enums import Status
from core.errors import LedgerError, UnknownScheduleError
from core.ledger import events
from core.ledger.compiled import REVISION_ERRORS, compiled_revision, revision_problems
from core.ledger.db import lock_for_write, shared_write
from core.ledger.expired import RANGE_MIN_ROWS, ExpiryCut, count_rows, range_row, record_ranges
from core.ledger.id_lists import among, among_pairs
from core.ledger.models import Occurrence, Revision, Schedule
from core.ledger.occurrence_rows import (
    COLUMNS,
    KIND,
    OCCURRENCE_ID,
    PERIOD,
    PLANNED,
    POSITION,
    REASON,
    RESOLVED,
    SCHEDULE_ID,
    SLOT,
    STATE,
    build_rows,
    insert_rows,
    insert_unnest,
)
from core.ledger.period_carry import taken_periods, taken_periods_of
from core.ledger.period_resume import StoredPeriods, dump_periods, load_periods, periods_to_store
from core.ledger.states import (
    SLOT_RELEASING,
    OccurrenceKind,
    OccurrenceState,
    ScheduleState,
)
from core.recurrence.compile import CompiledSchedule, CountHint
from core.recurrence.expand import expand, iter_rows
from core.recurrence.occurrence import Occurrence as Row
from core.recurrence.periods import PeriodMarks, PeriodState
from core.time.zones import shifted, tzdb_version

#: Rows one call inserts at most (a long outage is caught up in several transactions).
MAX_ROWS = 100_000
#: Revision texts one statement reads when looking for those this Tidemark refuses.
_TEXTS_PER_READ = 500
#: Compare-and-set rounds before giving up on a schedule that keeps moving.
MAX_ROUNDS = 5
#: A count position is kept this far before the cursor's instant (no wall time lies further from its instant).
_HINT_MARGIN = timedelta(days=2)
#: How far an instant can move between tz database releases, for drift's re-expansion window.
_DRIFT_MARGIN = timedelta(days=2)


@dataclass(frozen=True)
class MaterializeResult:
    """What one call did for one schedule."""

    schedule_id: str
    #: The range of positions expanded, [from_utc, to_utc); None when nothing was to do.
    from_utc: datetime | None
    to_utc: datetime | None
    #: Rows this call inserted (0 when another engine got there first).
    inserted: int
    cursor_utc: datetime | None
    #: Why nothing was materialized, when that is the case.
    skipped: str | None = None
    #: True when max_rows cut the run short: call again to go on.
    more: bool = False
    #: Expired ranges recorded by this call, and the occurrences they stand for (those counted).
    expired_ranges: int = 0
    expired_in_ranges: int = 0
    #: Why the schedule could not be materialized at all (its revision cannot be read or
    #: expanded), with the revision that was active: the engine holds the schedule.
    failed: tuple[int, list[str]] | None = None


#: Where the occurrences certain to expire end: (active revision compiled, first
#: position to look at, now, the stored place in its count, the stored state of its
#: business periods) -> the cut, or None. See core.engine.misfire.certain_expiry.
ExpiryRule = Callable[[CompiledSchedule, datetime, datetime, CountHint | None, PeriodState | None], ExpiryCut | None]


@dataclass(frozen=True)
class _Gov:
    """A revision as materialization reads it: its number, cutover, text and pinned zone."""

    revision: int
    cutover: datetime
    spec_json: str
    #: The zone's TZif bytes under ``tzdbPolicy: PIN``; None under FOLLOW.
    tzif: bytes | None = None
    #: The tz database release it was published with.
    tzdb_version: str = ""

    def compiled(self) -> CompiledSchedule:
        return self._compiled

    @functools.cached_property
    def _compiled(self) -> CompiledSchedule:
        # Looked up once per batch: each lookup digests the revision's text, and materializing a
        # schedule asks for it some ten times.
        return compiled_revision(self.spec_json, self.tzif)

    def resolving_tzdb(self, installed: str) -> str:
        """The tz database release its rows are resolved with: the pinned one, else ``installed``."""
        return self.tzdb_version if self.tzif is not None else installed

    def deciding_holidays(self) -> str | None:
        """The holidays release that decides its rows' dates: the installed one, with a business calendar."""
        return holiday_codes.holidays_version() if self.compiled().business_days is not None else None


#: What materialization selects of a revision, in :class:`_Gov`'s order.
GOV_COLUMNS = (Revision.revision, Revision.cutover_at, Revision.spec_json, Revision.tzif, Revision.tzdb_version)


def governing_segments(
    revisions: Sequence[tuple[int, datetime]], start: datetime, end: datetime
) -> list[tuple[int, datetime, datetime]]:
    """Split [start, end) by governing revision: at each position the highest
    revision whose cutover is at or before it. Returns (revision, from, to) pieces."""
    bounds = sorted({start, end, *(c for _, c in revisions if start < c < end)})
    pieces: list[tuple[int, datetime, datetime]] = []
    for lo, hi in itertools.pairwise(bounds):
        eligible = [r for r, c in revisions if c <= lo]
        if not eligible:
            continue  # before the first cutover nothing is governed
        rev = max(eligible)
        if pieces and pieces[-1][0] == rev and pieces[-1][2] == lo:
            pieces[-1] = (rev, pieces[-1][1], hi)
        else:
            pieces.append((rev, lo, hi))
    return pieces


def _taken_slots(
    session: Session, ranges: Sequence[tuple[str, datetime, datetime]]
) -> dict[str, dict[str, tuple[str, int]]]:
    """Live slots already held in each schedule's [start, end), in one statement:
    schedule -> slot -> (occurrence id, revision).

    A slot is its resolved instant, which is its position, so the window is enough.
    """
    if not ranges:
        return {}
    values: dict[str, Any] = {}
    for i, (sid, start, end) in enumerate(ranges):
        values |= {f"p_sid_{i}": sid, f"p_lo_{i}": start, f"p_hi_{i}": end}
    taken: dict[str, dict[str, tuple[str, int]]] = {}
    for sid, slot, occ, rev in session.execute(_slots_statement(len(ranges)), values):
        if slot is not None:
            taken.setdefault(sid, {})[slot] = (occ, rev)
    return taken


@functools.lru_cache(maxsize=16)
def _slots_statement(count: int) -> Any:
    """What :func:`_taken_slots` reads for ``count`` ranges, built once: building it (the ranges
    as expressions of the mapped columns) cost more than running it."""
    table = Occurrence.metadata.tables["occurrences"]
    position = table.c.position_utc
    return select(table.c.schedule_id, table.c.logical_slot_id, table.c.occurrence_id, table.c.revision).where(
        or_(
            *(
                and_(
                    table.c.schedule_id == bindparam(f"p_sid_{i}"),
                    position >= bindparam(f"p_lo_{i}", type_=position.type),
                    position < bindparam(f"p_hi_{i}", type_=position.type),
                )
                for i in range(count)
            )
        ),
        table.c.logical_slot_id.is_not(None),
        table.c.state.not_in(SLOT_RELEASING),
    )


def _periods_wanted(rows: list[tuple[Any, ...]]) -> set[str]:
    """The business periods of the runnable ``rows``: those another occurrence may hold already."""
    return {r[PERIOD] for r in rows if r[PERIOD] is not None and r[STATE] == PLANNED}


_KEEPS_IT = ", which keeps it"
SKIPPED = OccurrenceState.SKIPPED_DUPLICATE.value
_HOLDER = re.compile(r" as (\S+) of revision \d+" + re.escape(_KEEPS_IT))


def yielded_to(reason: str | None) -> str | None:
    """The occurrence a row yielded its instant or business period to, as its reason names it
    (see :func:`_yield_to_holders`); None for a row that yielded to none."""
    found = _HOLDER.search(reason or "")
    return found[1] if found else None


def _yield_to_holders(
    session: Session,
    sid: str,
    start: datetime,
    end: datetime,
    rows: list[tuple[Any, ...]],
    slots: dict[str, tuple[str, int]] | None = None,
    held_periods: dict[str, tuple[str, int]] | None = None,
) -> None:
    """Rows whose instant or business period another live occurrence already holds
    (an older revision's run after a cutover in the past, a manual run) become
    SKIPPED_DUPLICATE naming the holder, instead of vanishing in ON CONFLICT.
    ``slots`` and ``held_periods``: the live slots held in [start, end) and the business
    periods held (:func:`_taken_slots`, :func:`_periods_wanted`), when read already."""
    if slots is None:
        slots = _taken_slots(session, [(sid, start, end)]).get(sid, {})
    if held_periods is None:
        periods = _periods_wanted(rows)
        held_periods = taken_periods(session, sid, periods) if periods else {}
    if not slots and not held_periods:
        return
    for i, r in enumerate(rows):
        if r[STATE] != PLANNED:
            continue
        holder = slots.get(r[SLOT]) if r[SLOT] else None
        why = f"resolves to the same instant ({_utc_words(r[RESOLVED])})"
        if holder is None or holder[0] == r[OCCURRENCE_ID]:
            holder = held_periods.get(r[PERIOD]) if r[PERIOD] else None
            why = f"falls in the same business period ({r[PERIOD]})"
        if holder is None or holder[0] == r[OCCURRENCE_ID]:
            continue
        reason = f"{why} as {holder[0]} of revision {holder[1]}{_KEEPS_IT}" + (f"; {r[REASON]}" if r[REASON] else "")
        rows[i] = (*r[:RESOLVED], None, r[POSITION], None, None, r[PERIOD], SKIPPED, reason, *r[REASON + 1 :])


def _utc_words(value: datetime | str) -> str:
    """An instant of a row (:func:`~core.ledger.occurrence_rows.build_rows`) as a reason names it."""
    if isinstance(value, str):  # SQLite's text: 2027-03-01 12:00:00.000000
        return f"{value[:10]}T{value[11:19]}Z"
    return f"{value:%Y-%m-%dT%H:%M:%SZ}"


def _insert_counted(session: Session, rows: list[tuple[Any, ...]], *, split: bool) -> dict[str, int]:
    """Insert ``rows`` (:func:`~core.ledger.occurrence_rows.insert_rows`), returning how many were
    new per schedule. On SQLite the rows go in one statement, and with ``split`` one per schedule:
    when some were there already (another engine or an earlier call inserted them), the one
    statement cannot say whose, and :class:`_Recount` asks the caller to roll back and insert them
    again with ``split``."""
    if not rows:
        return {}
    if session.get_bind().dialect.name == "postgresql":
        return insert_unnest(session, rows)
    counts: dict[str, int] = {}
    for sid in map(operator.itemgetter(SCHEDULE_ID), rows):
        counts[sid] = counts.get(sid, 0) + 1
    if split and len(counts) > 1:
        return {sid: insert_rows(session, [r for r in rows if r[SCHEDULE_ID] == sid]) for sid in counts}
    new = insert_rows(session, rows)
    if new == len(rows):
        return counts
    if len(counts) > 1:
        raise _Recount
    return {sid: new for sid in counts}


def expected_rows(
    session: Session,
    schedule_id: str,
    revisions: Sequence[tuple[int, datetime, str, bytes | None, str]],
    start: datetime,
    end: datetime,
    now: datetime,
) -> list[dict[str, Any]]:
    """The rows :func:`materialize` would insert for positions in [start, end) with the
    installed code and tz database (a pinned revision: its own zone): the same governing
    segments, expansion, row values and yielding to live holders. ``revisions`` are rows of
    :data:`GOV_COLUMNS` (number, cutover, spec text, pinned TZif, tzdb release). Reads only.

    :mod:`core.ledger.shadow` compares them with the rows the ledger holds.
    """
    by_number = {row[0]: _Gov(*row) for row in revisions}
    rows: list[tuple[Any, ...]] = []
    tzdb = tzdb_version()
    for number, lo, hi in governing_segments([(r[0], r[1]) for r in revisions], start, end):
        gov = by_number[number]
        batch = []
        for row in iter_rows(gov.compiled(), lo):
            if row.position >= hi:
                break
            batch.append(row)
        rows.extend(build_rows(batch, number, gov.resolving_tzdb(tzdb), now, gov.deciding_holidays(), text=False))
    _yield_to_holders(session, schedule_id, start, end, rows)
    return [
        dict(zip(COLUMNS, r, strict=True)) | {"kind": OccurrenceKind(r[KIND]), "state": OccurrenceState(r[STATE])}
        for r in rows
    ]


class _CursorMoved(Exception):
    """Another engine moved the cursor or the gate first."""


def _stored_hint(schedule: Any) -> tuple[int, CountHint] | None:
    if schedule.count_revision is None or schedule.count_nominal is None or schedule.count_index is None:
        return None
    return schedule.count_revision, CountHint(datetime.fromisoformat(schedule.count_nominal), schedule.count_index)


def _next_hint(revisions: list[_Gov], end: datetime, old: tuple[int, CountHint] | None) -> tuple[int, CountHint] | None:
    """Where the count of the rule governing at ``end`` stands a little before it
    (a wall time can lie up to two days from its instant), walked from ``old``."""
    governing = [r for r in revisions if r.cutover <= end]
    if not governing:
        return None
    number = max(r.revision for r in governing)
    compiled = next(r for r in revisions if r.revision == number).compiled()
    if compiled.count is None:
        return None
    local = shifted(end, -_HINT_MARGIN).replace(tzinfo=None)
    found = compiled.count_position(local, old[1] if old is not None and old[0] == number else None)
    return (number, found) if found is not None else None


def _period_seeds(stored: StoredPeriods | None, by_number: dict[int, _Gov], tzdb: str) -> dict[int, PeriodState]:
    """The stored business periods' state, by revision, when it is of a revision here and the data in use."""
    gov = by_number.get(stored.revision) if stored is not None else None
    if stored is None or gov is None:
        return {}
    state = stored.usable(gov.revision, gov.resolving_tzdb(tzdb), gov.deciding_holidays())
    return {gov.revision: state} if state is not None else {}


def _next_periods(
    revisions: list[_Gov], end: datetime, marks: dict[int, PeriodMarks], tzdb: str
) -> StoredPeriods | None:
    """The business periods' state to store with a cursor at ``end``, of the revision governing there,
    when this call's expansion of it went through a period start at or before ``end``."""
    number = max((r.revision for r in revisions if r.cutover <= end), default=None)
    found = marks.get(number) if number is not None else None
    if number is None or found is None:
        return None
    gov = next(r for r in revisions if r.revision == number)
    return periods_to_store(gov.compiled(), found, end, gov.resolving_tzdb(tzdb), gov.deciding_holidays())


def until_or_horizon(
    until: datetime | None,
    now: datetime,
    active: _Gov,
    lead: timedelta | None = None,
    chunk: timedelta | None = None,
) -> datetime:
    """Where a run stops: ``until`` when given, else now + the active revision's
    horizon (or ``lead``, when that is shorter), and with ``chunk`` that much further
    (at most the horizon again: see :func:`chunk_ahead`)."""
    if until is not None:
        return until
    ahead = active.compiled().facts.horizon
    if lead is not None:
        return now + min(ahead, lead)
    return shifted(now, ahead + (min(chunk, ahead) if chunk is not None else timedelta(0)))


def _horizon(active: _Gov) -> timedelta:
    return active.compiled().facts.horizon


def _expire_missed(
    schedule_id: str,
    revisions: list[_Gov],
    start: datetime,
    now: datetime,
    expire: ExpiryRule,
    tzdb: str,
    hint: tuple[int, CountHint] | None,
    seeds: dict[int, PeriodState],
) -> tuple[datetime, int, list[dict[str, Any]], list[events.OccurrencesExpired]]:
    """The certain-to-expire stretch from ``start`` as expired ranges when it is long
    (RANGE_MIN_ROWS or more). Returns where materialization goes on, the occurrences
    counted, the ranges to record (:func:`~core.ledger.expired.record_ranges`) and the
    events to write. A rule with
    COUNT is walked from ``hint``, the stored place in its count, and business periods
    from ``seeds``, their stored state, not from DTSTART."""
    active = revisions[-1]
    own = hint[1] if hint is not None and hint[0] == active.revision else None
    cut = expire(active.compiled(), max(start, active.cutover), now, own, seeds.get(active.revision))
    if cut is None or cut.before <= start:
        return start, 0, [], []
    by_number = {r.revision: r for r in revisions}
    segments = governing_segments([(r.revision, r.cutover) for r in revisions], start, cut.before)
    counts = [count_rows(by_number[number].compiled(), lo, hi) for number, lo, hi in segments]
    if None in counts:
        _rows, stop = _expand_bounded(segments, by_number, cut.before, RANGE_MIN_ROWS, hint, seeds)
        many = stop < cut.before
    else:
        many = sum(c or 0 for c in counts) >= RANGE_MIN_ROWS
    if not many:
        return start, 0, [], []  # few: they become MISFIRE_EXPIRED rows, one each
    counted = 0
    ranges: list[dict[str, Any]] = []
    recorded: list[events.OccurrencesExpired] = []
    for (number, lo, hi), count in zip(segments, counts, strict=True):
        ranges.append(range_row(schedule_id, number, lo, hi, cut, count, by_number[number].resolving_tzdb(tzdb), now))
        counted += count or 0
        recorded.append(
            events.OccurrencesExpired(
                at=now,
                schedule_id=schedule_id,
                revision=number,
                from_utc=lo,
                to_utc=hi,
                state=OccurrenceState.MISFIRE_EXPIRED,
                policy=cut.policy,
                reason=cut.reason,
                occurrences=count,
            )
        )
    return cut.before, counted, ranges, recorded


#: Expansions left off where a call stopped, to go on from there next time:
#: (revision text, position) -> (the row iterator, its next row, the business
#: periods it went through). An expansion
#: restarted from a position walks back two days first (a wall time can lie
#: that far from its instant); going on from where the last call stopped saves
#: that walk on every pass. The rows are the same either way: statuses never
#: depend on where an expansion starts. Each holds its rule's iterator and the rows
#: it has not yet released (some 20 KiB for a calendar rule), and a pass comes back
#: to a schedule only once per chunk: the last few are kept, enough for a schedule
#: that a batch cut short to go on in the next batch.
_RESUME: OrderedDict[tuple[str, datetime], tuple[Iterator[Row], Row, PeriodMarks | None]] = OrderedDict()
_RESUME_LOCK = threading.Lock()
_RESUME_SIZE = 32


def forget_expansions() -> None:
    """Drop the expansions kept to go on from (after the zone data in use changed)."""
    with _RESUME_LOCK:
        _RESUME.clear()


def _rows_from(
    gov: _Gov, start: datetime, hint: CountHint | None = None, periods: PeriodState | None = None
) -> tuple[Iterator[Row], PeriodMarks | None]:
    """The rows of ``gov`` from ``start``, and the business periods' marks (with ``businessPeriod``)."""
    with _RESUME_LOCK:
        kept = _RESUME.pop((gov.spec_json, start), None)
    if kept is None:
        compiled = gov.compiled()
        marks = PeriodMarks() if compiled.facts.business_period else None
        return iter_rows(compiled, start, count_hint=hint, periods=periods, marks=marks), marks
    rows, first, marks = kept
    return itertools.chain((first,), rows), marks


def _keep(spec_json: str, start: datetime, rows: Iterator[Row], first: Row, marks: PeriodMarks | None) -> None:
    """Keep an expansion for a call that starts at ``start`` (its next row is ``first``)."""
    with _RESUME_LOCK:
        _RESUME[(spec_json, start)] = (rows, first, marks)
        while len(_RESUME) > _RESUME_SIZE:
            _RESUME.popitem(last=False)


def _expand_bounded(
    segments: list[tuple[int, datetime, datetime]],
    by_number: dict[int, _Gov],
    end: datetime,
    max_rows: int,
    hint: tuple[int, CountHint] | None = None,
    seeds: dict[int, PeriodState] | None = None,
    marks: dict[int, PeriodMarks] | None = None,
) -> tuple[list[tuple[int, list[Row]]], datetime]:
    """The rows of each segment, at most about ``max_rows`` in all, and where they stop.

    A cut falls between two positions, never inside one (a duplicate shares
    its winner's position), so the next run starts exactly where this one ended.
    ``seeds``: business periods' states to start a revision's expansion from;
    ``marks`` is given each expansion's marks (see :mod:`core.ledger.period_resume`).
    """
    out: list[tuple[int, list[Row]]] = []
    total = 0
    for number, lo, hi in segments:
        batch: list[Row] = []
        out.append((number, batch))
        gov = by_number[number]
        spec_json = gov.spec_json
        own = hint[1] if hint is not None and hint[0] == number else None
        rows, found = _rows_from(gov, lo, own, (seeds or {}).get(number))
        if marks is not None and found is not None:
            marks[number] = found
        for row in rows:
            if row.position >= hi:
                _keep(spec_json, hi, rows, row, found)
                break
            if total >= max_rows and row.position != (batch[-1].position if batch else lo):
                _keep(spec_json, row.position, rows, row, found)
                return out, row.position
            batch.append(row)
            total += 1
    return out, end


class MaterializeOptions(TypedDict, total=False):
    """How much one call of :func:`materialize` does (see :func:`materialize_many`)."""

    max_rows: int
    lead: timedelta | None
    expire: ExpiryRule | None
    chunk: timedelta | None


def materialize(
    session: Session,
    schedule_id: str,
    clock: Clock,
    until: datetime | None = None,
    **options: Unpack[MaterializeOptions],
) -> MaterializeResult:
    """Materialize ``schedule_id`` from its cursor to ``until`` (default: now + the active revision's horizon).

    Runnable rows become PLANNED with their dispatch time; the others are
    stored as the terminal facts they are (SKIPPED_GAP, SKIPPED_FOLD,
    SKIPPED_DUPLICATE, EXCLUDED). A disabled schedule is left alone. One call
    inserts about ``max_rows`` rows at most, so that a long catch-up does not
    hold the write lock for minutes; ``result.more`` says to call again. With
    ``lead`` it stops at now + lead when that comes before the horizon. With
    ``expire``, a long stretch of missed occurrences certain to expire is
    recorded as expired ranges first. With ``chunk`` (and no ``until`` nor
    ``lead``) it goes that much beyond the horizon (at most the horizon again), so
    the schedule comes back only once per chunk: the cursor minus the horizon is
    recorded as the schedule's ``materialize_at`` (:func:`to_materialize`). The
    caller commits (``with ledger.write() as session``). A revision that cannot be
    read or expanded raises (:data:`~core.ledger.compiled.REVISION_ERRORS`), with
    nothing written.
    """
    return materialize_many(session, [schedule_id], clock, until, catch=False, **options)[0]


def materialize_many(
    session: Session,
    schedule_ids: Sequence[str],
    clock: Clock,
    until: datetime | None = None,
    *,
    max_rows: int = MAX_ROWS,
    lead: timedelta | None = None,
    expire: ExpiryRule | None = None,
    chunk: timedelta | None = None,
    catch: bool = True,
) -> list[MaterializeResult]:
    """:func:`materialize` for several schedules in the caller's transaction, in order, by a
    fixed number of statements whatever their number: one read of their rows, one of their
    revisions, one of the live slots in the ranges they expand, one of the business periods
    held (for schedules with ``businessPeriod``), and one statement each for
    the expired ranges, the occurrences, the cursors and the events (docs/ledger.md,
    "Life of an occurrence", step 1). ``max_rows`` bounds the rows of the call in all: the
    schedules it does not reach are left out of the result (the caller takes them up
    next), and the last one reported may be cut short (``more``).

    With ``catch``, a schedule whose revision cannot be read or expanded is reported
    ``failed`` and the others go on; without it, the error is raised. Either way nothing
    of that schedule is written. A schedule not in the ledger (deleted meanwhile) is
    reported skipped with ``catch``, else raises :class:`UnknownScheduleError`."""
    if until is not None and until.tzinfo is None:
        raise ValueError("until must be an aware datetime")
    if shared_write(session) is None:
        lock_for_write(session)
    # else an engine's pass beside others (PostgreSQL): the schedules' rows, locked below until
    # commit, keep a second engine off them; publishing and pausing wait for the commit.
    ask = _Ask(clock.now(), until, max_rows, lead, expire, chunk, catch, _stores_text(session))
    return _materialize_rounds(session, list(schedule_ids), ask, None)


def _stores_text(session: Session) -> bool:
    return session.get_bind().dialect.name == "sqlite"


def _materialize_rounds(session: Session, ids: list[str], ask: _Ask, drafts: Drafts | None) -> list[MaterializeResult]:
    for _ in range(MAX_ROUNDS):
        try:
            return _materialize_round(session, ids, ask, drafts)
        except _CursorMoved:
            continue
    raise LedgerError(f"{', '.join(ids)}: other engines kept moving the schedule while materializing it; try again")


def draft_many(
    session: Session,
    schedule_ids: Sequence[str],
    clock: Clock,
    *,
    max_rows: int = MAX_ROWS,
    lead: timedelta | None = None,
    expire: ExpiryRule | None = None,
    chunk: timedelta | None = None,
) -> Drafts:
    """Work out what :func:`materialize_many` would write for these schedules (their expired
    ranges, their expansion and its rows) from a read, before any write transaction: an engine's
    pass expands outside the write lock, which then holds only the writes
    (:func:`materialize_drafted`). A schedule whose revision cannot be read or expanded is drafted
    as failed."""
    ids = list(schedule_ids)
    ask = _Ask(clock.now(), None, max_rows, lead, expire, chunk, True, _stores_text(session))
    stored = {
        row.id: row for row in session.execute(select(*_SCHEDULE_COLUMNS).where(among(session, Schedule.id, ids)))
    }
    outcomes = _work_out(ids, stored, _read_revisions(session, list(stored)), ask, {}, let_in=True)
    return Drafts(ask, {sid: tuple(row) for sid, row in stored.items()}, outcomes)


def materialize_drafted(session: Session, drafts: Drafts, schedule_ids: Sequence[str]) -> list[MaterializeResult]:
    """Write, in the caller's write transaction, what :func:`draft_many` worked out for
    ``schedule_ids`` (drafted ones, in their order), as :func:`materialize_many` would: a schedule
    whose row is as it was when drafted (same gate, cursor, state and stored positions: nothing
    was published, gated or materialized since) is written as drafted, the others (and those
    after them) are worked out again here. The live slots and business periods held are read
    here, under the lock, as always."""
    if shared_write(session) is None:
        lock_for_write(session)
    return _materialize_rounds(session, list(schedule_ids), drafts.ask, drafts)


@dataclass(frozen=True)
class _Ask:
    """What a call of :func:`materialize_many` asks for."""

    now: datetime
    until: datetime | None
    max_rows: int
    lead: timedelta | None
    expire: ExpiryRule | None
    chunk: timedelta | None
    catch: bool
    #: The rows in SQLite's stored form (:func:`~core.ledger.occurrence_rows.build_rows`).
    text: bool


@dataclass
class _Plan:
    """What materializing one schedule of a batch writes, worked out before anything is."""

    schedule_id: str
    gate: int
    old: datetime | None
    start: datetime
    end: datetime
    more: bool
    rows: list[tuple[Any, ...]]
    """Its occurrence rows (:func:`~core.ledger.occurrence_rows.build_rows`)."""
    used: list[int]
    ranges: list[dict[str, Any]]
    expired: list[events.OccurrencesExpired]
    counted: int
    hint: tuple[int, CountHint] | None
    periods: StoredPeriods | None
    horizon: timedelta


#: What materialization reads of a schedule.
_SCHEDULE_COLUMNS = (
    Schedule.id,
    Schedule.state,
    Schedule.gate_version,
    Schedule.cursor_utc,
    Schedule.materialize_at,
    Schedule.active_revision,
    Schedule.count_revision,
    Schedule.count_nominal,
    Schedule.count_index,
    Schedule.period_revision,
    Schedule.period_state,
)


#: What working out one schedule came to: its plan, or its result when it writes nothing, and
#: the new mark of when to come back to it (:func:`_come_back`), when that is all it writes.
_Outcome = tuple["_Plan | MaterializeResult", dict[str, Any] | None]


@dataclass(frozen=True)
class Drafts:
    """What :func:`draft_many` worked out, to be written by :func:`materialize_drafted`."""

    ask: _Ask
    #: Each schedule's row (:data:`_SCHEDULE_COLUMNS`) as the draft read it.
    seen: dict[str, tuple[Any, ...]]
    #: Each schedule's outcome, in order (those the rows' budget did not reach have none).
    outcomes: dict[str, _Outcome]

    def still_true(self, ids: list[str], stored: dict[str, Any]) -> dict[str, _Outcome]:
        """The outcomes that hold for the rows read now: those of the schedules whose row did not
        change, up to the first that did (the budget of rows after it may differ)."""
        found: dict[str, _Outcome] = {}
        for sid in ids:
            row, seen, outcome = stored.get(sid), self.seen.get(sid), self.outcomes.get(sid)
            if row is None or outcome is None or tuple(row) != seen:
                break
            found[sid] = outcome
        return found


def _read_revisions(session: Session, ids: list[str]) -> dict[str, list[_Gov]]:
    """The revisions of these schedules, oldest first."""
    revisions: dict[str, list[_Gov]] = {}
    if not ids:
        return revisions
    for sid, number, cutover, spec_json, tzif, tzdb_release in session.execute(
        select(Revision.schedule_id, *GOV_COLUMNS)
        .where(among(session, Revision.schedule_id, ids))
        .order_by(Revision.schedule_id, Revision.revision)
    ):
        revisions.setdefault(sid, []).append(_Gov(number, cutover, spec_json, tzif, tzdb_release))
    return revisions


def _materialize_round(session: Session, ids: list[str], ask: _Ask, drafts: Drafts | None) -> list[MaterializeResult]:
    # Locking also rereads them: a row another engine changed since it was loaded must not look current.
    stored = {
        row.id: row
        for row in session.execute(select(*_SCHEDULE_COLUMNS).where(among(session, Schedule.id, ids)).with_for_update())
    }
    reuse = drafts.still_true(ids, stored) if drafts is not None else {}
    revisions = _read_revisions(session, [sid for sid in ids if sid in stored and sid not in reuse])
    outcomes = _work_out(ids, stored, revisions, ask, reuse)
    plans = [found for found, _ in outcomes.values() if isinstance(found, _Plan)]
    come_back = [back for _, back in outcomes.values() if back is not None]
    inserted = _write_plans(session, plans, come_back, ask.now) if plans or come_back else {}
    results: dict[str, MaterializeResult] = {}
    for sid, (found, _) in outcomes.items():
        results[sid] = found if isinstance(found, MaterializeResult) else _written(found, inserted)
    for sid in results:
        loaded = session.identity_map.get(Session.identity_key(Schedule, sid))
        if loaded is not None:  # its cursor moved by a statement on the table: read it again
            session.expire(loaded)
    return [results[sid] for sid in ids if sid in results]


def _written(plan: _Plan, inserted: dict[str, int]) -> MaterializeResult:
    return MaterializeResult(
        plan.schedule_id,
        plan.start,
        plan.end,
        inserted.get(plan.schedule_id, 0),
        plan.end,
        more=plan.more,
        expired_ranges=len(plan.ranges),
        expired_in_ranges=plan.counted,
    )


def _work_out(
    ids: list[str],
    stored: dict[str, Any],
    revisions: dict[str, list[_Gov]],
    ask: _Ask,
    reuse: dict[str, _Outcome],
    *,
    let_in: bool = False,
) -> dict[str, _Outcome]:
    """Each schedule's outcome, in order, within the rows' budget (``ask.max_rows``): the schedules
    it does not reach have none. ``reuse``: outcomes worked out already (:class:`Drafts`).

    With ``let_in`` (a draft, outside the write lock) the interpreter is offered to the process's
    other threads after each schedule: a thread writing meanwhile (the window's pause, beside an
    engine it hosts) would otherwise wait up to a switch interval (5 ms) at each of its statements
    while the draft computes (the longest wait of such a pause: 170-200 ms, 90 ms with this)."""
    tzdb = tzdb_version()
    outcomes: dict[str, _Outcome] = {}
    left = ask.max_rows
    for sid in ids:
        if outcomes and left <= 0:
            break  # not reached: the caller takes it up next
        row = stored.get(sid)
        if row is None:
            if not ask.catch:
                raise UnknownScheduleError(f"{sid}: no such schedule in this ledger; publish it with schedctl apply")
            outcomes[sid] = (MaterializeResult(sid, None, None, 0, None, skipped="no such schedule"), None)
            continue
        found = outcomes[sid] = reuse.get(sid) or _outcome(row, revisions[sid], ask, left, tzdb)
        if let_in:
            time.sleep(0)
        planned = found[0]
        if isinstance(planned, MaterializeResult):
            left -= planned.failed is None
            continue
        left -= len(planned.rows) + 1
        if planned.more:
            break
    return outcomes


def _outcome(row: Any, revisions: list[_Gov], ask: _Ask, left: int, tzdb: str) -> _Outcome:
    try:
        planned = _plan_one(row, revisions, ask, left, tzdb)
    except REVISION_ERRORS as exc:  # a revision this Tidemark cannot read or expand: this schedule only
        if not ask.catch:
            raise
        problems = revision_problems(exc)
        skipped = f"a revision cannot be read or expanded: {'; '.join(problems)}"
        failed = (row.active_revision or 0, problems)
        return MaterializeResult(row.id, None, None, 0, None, skipped=skipped, failed=failed), None
    if isinstance(planned, MaterializeResult) and planned.skipped == _FAR_ENOUGH:
        return planned, _come_back(row, revisions[-1])
    return planned, None


_FAR_ENOUGH = "already materialized that far"


def _plan_one(row: Any, revisions: list[_Gov], ask: _Ask, max_rows: int, tzdb: str) -> _Plan | MaterializeResult:
    """What materializing the schedule of ``row`` (:data:`_SCHEDULE_COLUMNS`) writes, or why nothing."""
    sid, cursor = row.id, row.cursor_utc
    if row.state is ScheduleState.DISABLED:
        return MaterializeResult(sid, None, None, 0, cursor, skipped="the schedule is disabled")
    hint = _stored_hint(row)
    stored_periods = load_periods(row.period_revision, row.period_state)
    active, now = revisions[-1], ask.now
    end = until_or_horizon(ask.until, now, active, ask.lead, ask.chunk)
    start = cursor if cursor is not None else min(r.cutover for r in revisions)
    if start >= end:
        return MaterializeResult(sid, None, None, 0, cursor, skipped=_FAR_ENOUGH)
    counted, ranges, expired = 0, list[dict[str, Any]](), list[events.OccurrencesExpired]()
    by_number = {r.revision: r for r in revisions}
    seeds, marks = _period_seeds(stored_periods, by_number, tzdb), dict[int, PeriodMarks]()
    if ask.expire is not None:
        start, counted, ranges, expired = _expire_missed(sid, revisions, start, now, ask.expire, tzdb, hint, seeds)
    segments = governing_segments([(r.revision, r.cutover) for r in revisions], start, end)
    expanded, end = _expand_bounded(segments, by_number, end, max_rows, hint, seeds, marks)
    rows: list[tuple[Any, ...]] = []
    for number, batch in expanded:
        gov = by_number[number]
        holidays = gov.deciding_holidays()
        rows.extend(build_rows(batch, number, gov.resolving_tzdb(tzdb), now, holidays, text=ask.text))
    return _Plan(
        schedule_id=sid,
        gate=row.gate_version,
        old=cursor,
        start=start,
        end=end,
        more=until_or_horizon(ask.until, now, active, ask.lead, ask.chunk) > end,
        rows=rows,
        used=[number for number, _ in expanded],
        ranges=ranges,
        expired=expired,
        counted=counted,
        hint=_next_hint(revisions, end, hint),
        periods=_next_periods(revisions, end, marks, tzdb),
        horizon=_horizon(active),
    )


def _come_back(row: Any, active: _Gov) -> dict[str, Any] | None:
    """When the schedule of ``row`` (materialized far enough) needs materializing again, to be
    written when that changed (a new revision's horizon, a ledger materialized before 0012)."""
    if row.cursor_utc is None:
        return None
    at = shifted(row.cursor_utc, -_horizon(active))
    return {"b_id": row.id, "b_at": at} if row.materialize_at != at else None


class _Recount(Exception):
    """Some rows of a batch were there already: insert again schedule by schedule, to count each."""


def _write_plans(
    session: Session, plans: list[_Plan], come_back: list[dict[str, Any]], now: datetime
) -> dict[str, int]:
    """Write what ``plans`` worked out, in a savepoint (rolled back when a cursor moved under
    it); returns the rows inserted per schedule."""
    slots = _taken_slots(session, [(p.schedule_id, p.start, p.end) for p in plans if p.rows])
    wanted = {p.schedule_id: found for p in plans if (found := _periods_wanted(p.rows))}
    periods = taken_periods_of(session, wanted) if wanted else {}
    for plan in plans:
        sid = plan.schedule_id
        _yield_to_holders(session, sid, plan.start, plan.end, plan.rows, slots.get(sid, {}), periods.get(sid, {}))
    split = False
    while True:
        try:
            with session.begin_nested():
                return _write_once(session, plans, come_back, now, split=split)
        except _Recount:
            split = True


def _write_once(
    session: Session, plans: list[_Plan], come_back: list[dict[str, Any]], now: datetime, *, split: bool
) -> dict[str, int]:
    record_ranges(session, [r for plan in plans for r in plan.ranges])
    inserted = _insert_counted(session, [r for plan in plans for r in plan.rows], split=split)
    _advance_many(session, plans, now)
    if come_back:
        session.execute(_COME_BACK, come_back)
    written: list[events.NewEvent] = []
    for plan in plans:
        written.extend(plan.expired)
        if inserted.get(plan.schedule_id):
            counts: dict[str, int] = {}
            for state in map(operator.itemgetter(STATE), plan.rows):
                counts[state] = counts.get(state, 0) + 1
            written.append(
                events.OccurrencesMaterialized(
                    at=now,
                    schedule_id=plan.schedule_id,
                    revisions=plan.used,
                    from_utc=plan.start,
                    to_utc=plan.end,
                    inserted=inserted[plan.schedule_id],
                    states=counts,
                )
            )
    events.append_many(session, written)
    return inserted


_SCHEDULES = Schedule.metadata.tables["schedules"]


def _param(name: str, column: str) -> Any:
    return bindparam(name, type_=_SCHEDULES.c[column].type)


def _cursor_update(*, periods: bool) -> Any:
    """The compare-and-set of :func:`_advance_many`, for many schedules at once (executemany):
    the cursor, when to come back, the count position, with ``periods`` the business periods'
    state too (else the stored state stays: one at an earlier period start is still true)."""
    values = {
        column: _param(f"b_{column}", column)
        for column in ("cursor_utc", "materialize_at", "updated_at", "count_revision", "count_nominal", "count_index")
    }
    if periods:
        values |= {column: _param(f"b_{column}", column) for column in ("period_revision", "period_state")}
    return (
        update(_SCHEDULES)
        .where(
            _SCHEDULES.c.id == bindparam("b_id"),
            _SCHEDULES.c.gate_version == bindparam("b_gate"),
            _SCHEDULES.c.cursor_utc.is_not_distinct_from(_param("b_old", "cursor_utc")),
        )
        .values(values)
    )


# The table, not the entity: the ORM's bulk update with a fetch of what changed cost as much
# again as the statement. The schedules' objects, when loaded, are expired instead.
_ADVANCE = _cursor_update(periods=False)
_ADVANCE_PERIODS = _cursor_update(periods=True)
_COME_BACK = (
    update(_SCHEDULES)
    .where(_SCHEDULES.c.id == bindparam("b_id"))
    .values(materialize_at=_param("b_at", "materialize_at"))
)


def _advance_params(plan: _Plan, now: datetime) -> dict[str, Any]:
    number, at = plan.hint if plan.hint is not None else (None, None)
    params = {
        "b_id": plan.schedule_id,
        "b_gate": plan.gate,
        "b_old": plan.old,
        "b_cursor_utc": plan.end,
        "b_materialize_at": shifted(plan.end, -plan.horizon),
        "b_updated_at": now,
        "b_count_revision": number,
        "b_count_nominal": at.nominal.isoformat() if at is not None else None,
        "b_count_index": at.index if at is not None else None,
    }
    if plan.periods is not None:
        params |= {"b_period_revision": plan.periods.revision, "b_period_state": dump_periods(plan.periods)}
    return params


def _advance_many(session: Session, plans: list[_Plan], now: datetime) -> None:
    """Move each plan's cursor from its old place to its end, by compare-and-set on the cursor
    and the gate, with the count position, the business periods' state when a new one is
    known, and when to come back: one statement for the batch (two when some store business
    periods and some do not). :class:`_CursorMoved` when one did not move."""
    for periods, stmt in ((False, _ADVANCE), (True, _ADVANCE_PERIODS)):
        params = [_advance_params(plan, now) for plan in plans if (plan.periods is not None) is periods]
        if params and session.execute(stmt, params).rowcount != len(params):  # type: ignore[attr-defined]
            raise _CursorMoved


def to_materialize(
    session: Session, now: datetime, *, everything: bool = False
) -> list[tuple[str, datetime | None, datetime | None]]:
    """The schedules not disabled that need materializing at ``now``, with their
    ``materialize_at`` and cursor: their cursor is within their horizon of now (``materialize_at`` has
    come), or they were just published (None). One statement by
    ``ix_schedules_materialize_at``: a schedule materialized far enough ahead is never
    read. Those just published first, then the furthest behind. With ``everything``, every
    schedule not disabled, in the same order."""
    stmt = select(Schedule.id, Schedule.materialize_at, Schedule.cursor_utc).where(
        Schedule.state != ScheduleState.DISABLED
    )
    if not everything:
        stmt = stmt.where(_needs_materializing(now))
    rows = session.execute(stmt.order_by(Schedule.materialize_at.nulls_first(), Schedule.id))
    return [(sid, at, cursor) for sid, at, cursor in rows]


def revision_mark(session: Session) -> tuple[object, ...]:
    """What changes whenever the set of published revisions of schedules not disabled can
    change: the revisions' count and newest publication, the schedules' count, the sum of
    their disable generations (every disable bumps one) and how many are disabled (every
    enable lowers it). One statement of aggregates: a stage that reads every revision does
    so again only when it moved. A pause or a resume moves none of them: it changes no
    revision's readability nor whom it is refused by, and a team pausing schedules all day
    would otherwise have every engine's pass read every revision again."""
    return tuple(
        session.execute(
            select(
                select(func.count()).select_from(Revision).scalar_subquery(),
                select(func.max(Revision.published_at)).scalar_subquery(),
                select(func.count()).select_from(Schedule).scalar_subquery(),
                select(func.coalesce(func.sum(Schedule.disable_generation), 0)).scalar_subquery(),
                select(func.count()).where(Schedule.state == ScheduleState.DISABLED).scalar_subquery(),
            )
        ).one()
    )


def _needs_materializing(now: datetime) -> ColumnElement[bool]:
    return or_(Schedule.materialize_at.is_(None), Schedule.materialize_at <= now)


def materialize_all(
    session: Session,
    clock: Clock,
    *,
    max_rows: int = MAX_ROWS,
    lead: timedelta | None = None,
    expire: ExpiryRule | None = None,
    hold: Collection[str] = (),
) -> list[MaterializeResult]:
    """Materialize every schedule that is not disabled, in id order (see :func:`materialize`).
    ``max_rows`` bounds the rows of this call in all: schedules it does not reach
    report nothing and are taken up by the next call. Schedules in ``hold`` are left
    alone (their revision cannot be read: see :func:`unreadable_schedules`). A schedule whose
    revision cannot be read or expanded (:data:`~core.ledger.compiled.REVISION_ERRORS`) is
    reported ``failed`` and the others go on."""
    ids = session.scalars(
        select(Schedule.id).where(Schedule.state != ScheduleState.DISABLED).order_by(Schedule.id)
    ).all()
    results: list[MaterializeResult] = []
    left = max_rows
    for sid in ids:
        if sid in hold:
            results.append(MaterializeResult(sid, None, None, 0, None, skipped="its revision cannot be read"))
            continue
        if left <= 0:
            results.append(MaterializeResult(sid, None, None, 0, None, skipped="row budget used", more=True))
            continue
        (result,) = materialize_many(session, [sid], clock, max_rows=left, lead=lead, expire=expire)
        left -= result.inserted
        results.append(result)
    return results


def warm_counts(session: Session, now: datetime | None = None) -> int:
    """Find, before any write, where the count of each COUNT rule stands at the point
    its schedule's materialization resumes, when the ledger does not store it yet
    (a schedule just published): that first walk from DTSTART can take seconds, and
    the compiled revision remembers its result, so the write that follows starts
    near it instead of holding the write lock through the walk. Returns how many
    schedules were warmed. With ``now``, only the schedules to materialize at ``now`` are
    looked at (:func:`to_materialize`)."""
    # One statement a pass: every schedule without a stored place, with its newest revision.
    stmt = (
        select(Schedule.cursor_utc, Revision.cutover_at, Revision.spec_json, Revision.tzif)
        .join(Revision, (Revision.schedule_id == Schedule.id) & (Revision.revision == Schedule.active_revision))
        .where(Schedule.state != ScheduleState.DISABLED, Schedule.count_index.is_(None))
    )
    rows = session.execute(stmt if now is None else stmt.where(_needs_materializing(now))).all()
    warmed = 0
    for cursor, cutover, spec_json, tzif in rows:
        try:
            compiled = compiled_revision(spec_json, tzif)
            if compiled.count is None:
                continue
            # A hint only: the write walks on from wherever this stops.
            start = cursor if cursor is not None else cutover
            compiled.count_position(shifted(start, -_HINT_MARGIN).replace(tzinfo=None), None)
        except REVISION_ERRORS:
            continue  # held by the engine: see unreadable_revisions and materialize_all
        warmed += 1
    return warmed


def unreadable_revisions(
    session: Session, readable: set[tuple[str, int]]
) -> dict[tuple[str, int], tuple[bool, list[str]]]:
    """Published revisions (of schedules not disabled) this Tidemark refuses to read:
    (schedule, revision) -> (whether it is the schedule's newest, its problems).

    A revision is validated when it is published; a later Tidemark may refuse what an
    earlier one let through (a fraction of a second, a NUL byte), or its pinned zone's
    rules may not be readable here. The engine holds
    what needs such a revision (see ``Engine``) instead of stopping every other
    schedule's pass, until a corrected revision is published.

    ``readable`` holds the pairs already read without a problem; it is extended
    here, so that each revision is read once per process.
    """
    pairs = session.execute(
        select(Revision.schedule_id, Revision.revision)
        .join(Schedule, Schedule.id == Revision.schedule_id)
        .where(Schedule.state != ScheduleState.DISABLED)
        .order_by(Revision.schedule_id, Revision.revision)
    ).all()
    newest: dict[str, int] = {}
    for sid, number in pairs:
        newest[sid] = max(number, newest.get(sid, number))
    found: dict[tuple[str, int], tuple[bool, list[str]]] = {}
    # ``readable`` keeps one tuple per revision for the process's life: with the id interned, the
    # schedule's id is one string in it and in the engine's other notes (core.engine.plan).
    unknown = [(intern(sid), number) for sid, number in pairs if (sid, number) not in readable]
    for i in range(0, len(unknown), _TEXTS_PER_READ):  # their texts a page at a time, not one statement each
        page = unknown[i : i + _TEXTS_PER_READ]
        keys = {pair: pair for pair in page}
        texts = session.execute(
            select(Revision.schedule_id, Revision.revision, Revision.spec_json, Revision.tzif)
            .where(among_pairs(session, Revision.schedule_id, Revision.revision, page))
            .order_by(Revision.schedule_id, Revision.revision)
        )
        for sid, number, text, tzif in texts:
            try:
                compiled_revision(text or "", tzif)
            except REVISION_ERRORS as exc:
                found[(sid, number)] = (number == newest[sid], revision_problems(exc))
            else:
                readable.add(keys[(sid, number)])
    return found


@dataclass(frozen=True)
class DriftItem:
    """A future occurrence the installed tz database would place elsewhere."""

    occurrence_id: str
    schedule_id: str
    revision: int
    nominal_local: str
    fold_ordinal: int
    state: OccurrenceState
    stored_resolved_utc: datetime | None
    stored_tzdb_version: str
    #: None when the installed data has no instant for it (a new gap, or it is gone).
    current_resolved_utc: datetime | None
    #: The installed data's status for it; None when the occurrence would not exist at all.
    current_status: Status | None
    current_tzdb_version: str
    #: The holidays release that decided it, and the installed one (a schedule with a
    #: business calendar); None without one.
    stored_holidays_version: str | None = None
    current_holidays_version: str | None = None


_DRIFT_STATES = (
    OccurrenceState.PLANNED,
    OccurrenceState.DUE,
    OccurrenceState.SKIPPED_GAP,
    OccurrenceState.SKIPPED_FOLD,
)
#: A newer holidays release can also give back a day it skipped, or free a moved run's duplicate.
_HOLIDAY_DRIFT_STATES = (*_DRIFT_STATES, OccurrenceState.EXCLUDED, OccurrenceState.SKIPPED_DUPLICATE)


def _governing(cutovers: list[tuple[int, datetime]], position: datetime, default: int) -> int:
    """The revision that governs ``position``: the highest whose cutover is at or before it."""
    return max((r for r, c in cutovers if c <= position), default=default)


def drift(session: Session, clock: Clock, schedule_id: str | None = None) -> list[DriftItem]:
    """Future, not-started occurrences whose instant differs under the installed tz database
    or the installed holidays data.

    Only rows resolved by another tzdb release, or whose dates another holidays
    release decided, are looked at (the same releases give the same instant). A
    revision pinned to its zone's rules (``tzdbPolicy: PIN``) is resolved with
    them, so it never drifts by the tz data. Read-only: materialized instants
    are never rewritten.
    """
    current = tzdb_version()
    holidays_now = holiday_codes.holidays_version()
    stmt = select(Occurrence).where(
        Occurrence.kind == OccurrenceKind.SCHEDULED,
        Occurrence.position_utc >= clock.now(),
        or_(
            and_(Occurrence.state.in_(_DRIFT_STATES), Occurrence.tzdb_version != current),
            and_(
                Occurrence.state.in_(_HOLIDAY_DRIFT_STATES),
                Occurrence.holidays_version.is_not(None),
                Occurrence.holidays_version != holidays_now,
            ),
        ),
    )
    if schedule_id is not None:
        stmt = stmt.where(Occurrence.schedule_id == schedule_id)
    groups: dict[tuple[str, int], list[Occurrence]] = {}
    for occ in session.scalars(stmt.order_by(Occurrence.schedule_id, Occurrence.position_utc)):
        groups.setdefault((occ.schedule_id, occ.revision), []).append(occ)
    cutovers: dict[str, list[tuple[int, datetime]]] = {}
    found: list[DriftItem] = []
    for (sid, number), rows in groups.items():
        if sid not in cutovers:
            cutovers[sid] = [
                (r, c)
                for r, c in session.execute(
                    select(Revision.revision, Revision.cutover_at).where(Revision.schedule_id == sid)
                )
            ]
        # A row of a revision a later cutover superseded (a skipped one stays) is no run of the schedule's.
        stored = [
            o for o in rows if max((r for r, c in cutovers[sid] if c <= o.position_utc), default=number) == number
        ]
        found_revision = session.execute(
            select(Revision.spec_json, Revision.tzif).where(Revision.schedule_id == sid, Revision.revision == number)
        ).one_or_none()
        if not stored or found_revision is None:
            continue
        text, tzif = found_revision
        lo = min(o.position_utc for o in stored) - _DRIFT_MARGIN
        hi = max(o.position_utc for o in stored) + _DRIFT_MARGIN
        try:
            fresh = {row.occurrence_id: row for row in expand(compiled_revision(text, tzif), lo, hi)}
        except REVISION_ERRORS:
            continue  # held by the engine, and said so: see unreadable_revisions and materialize_all
        for occ in stored:
            row = fresh.get(occ.occurrence_id)
            now_at = row.resolved if row is not None else None
            if now_at != occ.resolved_utc:
                found.append(
                    DriftItem(
                        occ.occurrence_id,
                        sid,
                        number,
                        occ.nominal_local,
                        occ.fold_ordinal,
                        occ.state,
                        occ.resolved_utc,
                        occ.tzdb_version,
                        now_at,
                        row.status if row is not None else None,
                        current,
                        occ.holidays_version,
                        holidays_now if occ.holidays_version is not None else None,
                    )
                )
    return found
