"""Read-side query objects for the CLI and the GUI's models.

Each function takes a session and returns frozen values that outlive it (no
ORM objects leak out), so a Qt model can hold them while the session is gone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Boolean, Select, func, select, tuple_
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from core.errors import UserError
from core.ledger.compiled import compiled_revision, stored_spec
from core.ledger.event_types import EventKind
from core.ledger.models import EngineRow, Event, ExpiredRange, Occurrence, Revision, Schedule
from core.ledger.publishers import by_role, trusted_publisher
from core.ledger.states import EnginePresence, OccurrenceKind, OccurrenceState, ScheduleState
from core.recurrence.expand import iter_rows
from core.spec.model import ScheduleSpec
from core.team.actor import Actor
from core.team.placement import SeenEngine, Wants, waiting_text
from core.time.formats import fmt_utc

#: States that still have an execution ahead of them (for "next due").
_PENDING = (OccurrenceState.PLANNED, OccurrenceState.DUE, OccurrenceState.RETRY_WAIT)
#: Rows of a revision looked at, at most, for its next run (a rule whose runs are all skipped has none).
_NEXT_ROWS = 2000
#: Candidate dates the expansion may scan for them (a rule that matches almost never).
_NEXT_SCAN = 200_000


@dataclass(frozen=True)
class ScheduleSummary:
    """One schedule with its active revision's headline and its occurrences counted by state."""

    schedule_id: str
    title: str | None
    time_zone: str
    kind: str
    state: ScheduleState
    active_revision: int
    gate_version: int
    cursor_utc: datetime | None
    note: str | None
    updated_at: datetime
    counts: Mapping[OccurrenceState, int]
    #: The earliest dispatch time among PLANNED, DUE and RETRY_WAIT occurrences.
    next_due_at: datetime | None
    #: Expired ranges whose occurrences were not counted: MISFIRE_EXPIRED is then
    #: "at least" its count (the counted ranges are already in ``counts``).
    uncounted_ranges: int = 0
    #: The spec file the active revision was published from (absolute path) and its host;
    #: None when the ledger did not record it (standard input, or published before it did).
    source_path: str | None = None
    source_host: str | None = None
    #: True when ``next_due_at`` comes from the active revision's rule because nothing is
    #: materialized ahead yet (see :func:`list_schedules` with ``now``).
    next_due_expected: bool = False
    #: Why no live engine runs the schedule while something of it is due, in one line
    #: (:func:`core.team.placement.waiting_text`); None when one does, or nothing is due
    #: (see :func:`list_schedules` with ``stale_after``).
    waiting: str | None = None
    #: Why the engines hold the schedule (its active revision cannot be read or expanded:
    #: :func:`held_by_engines`), in one line; None when they do not.
    held: str | None = None
    #: The tz database release and the Tidemark version that published the active revision
    #: (None: a ledger from before the version was recorded).
    tzdb_version: str | None = None
    engine_version: str | None = None

    def count_text(self, state: OccurrenceState) -> str:
        """``4,321`` or, with an uncounted expired range, ``12 + a range`` (``+ 2 ranges``)."""
        text = f"{self.counts.get(state, 0):,}"
        if state is OccurrenceState.MISFIRE_EXPIRED and self.uncounted_ranges:
            n = self.uncounted_ranges
            text += " + a range" if n == 1 else f" + {n:,} ranges"
        return text


def next_from_revision(spec_json: str, start: datetime, tzif: bytes | None = None) -> datetime | None:
    """The dispatch time of the first runnable occurrence a stored revision gives at or after ``start``
    (in its pinned zone when ``tzif`` is given).

    None when there is none within a bounded look (an ended rule, or one whose
    next runnable row lies thousands of rows away): the answer is for showing,
    never for running.
    """
    try:
        rows = iter_rows(compiled_revision(spec_json, tzif), start, scan_limit=_NEXT_SCAN)
        for looked, row in enumerate(rows):
            if row.status.runnable:
                return row.dispatch
            if looked >= _NEXT_ROWS:
                break
    except (UserError, ValueError):  # the scan's bound, or a revision that cannot be expanded: no answer to show
        return None
    return None


def held_by_engines(session: Session) -> dict[str, str]:
    """Schedules the engines hold because their active revision cannot be read or expanded
    (a ``schedule.unreadable`` event names it, :func:`core.engine.plan.hold_unreadable`), with
    why in one line. A new revision releases the schedule; a disabled one waits for nobody."""
    active = {
        sid: number
        for sid, number in session.execute(
            select(Schedule.id, Schedule.active_revision).where(Schedule.state != ScheduleState.DISABLED)
        )
    }
    held: dict[str, str] = {}
    for sid, data in session.execute(
        select(Event.schedule_id, Event.data)
        .where(Event.kind == EventKind.SCHEDULE_UNREADABLE.value)
        .order_by(Event.id)
    ):
        number = (data or {}).get("revision")
        if sid is not None and number is not None and active.get(sid) == number:
            problems = "; ".join(str(p) for p in (data or {}).get("problems") or [])
            held[sid] = f"held by the engines: revision {number}: {problems}; publish a corrected revision"
    return held


def _expected_next(
    schedule: Schedule, cutover: datetime, spec_json: str, now: datetime, tzif: bytes | None
) -> datetime | None:
    """A schedule's next run before it is materialized: from its active revision, at or after
    now, its cursor (what lies before it is materialized already) and the revision's cutover."""
    if schedule.state is ScheduleState.DISABLED:
        return None
    start = max(now, cutover, schedule.cursor_utc or cutover)
    return next_from_revision(spec_json, start, tzif)


def has_schedules(session: Session) -> bool:
    """Whether anything was ever published to this ledger (a new ledger has no schedule)."""
    return session.scalar(select(Schedule.id).limit(1)) is not None


def seen_engines(session: Session, now: datetime, stale_after: timedelta) -> list[SeenEngine]:
    """Every engine the ledger remembers, live when it has not retired and beat within ``stale_after``."""
    rows = session.execute(select(EngineRow.labels, EngineRow.trusts, EngineRow.last_heartbeat, EngineRow.state))
    return [
        SeenEngine(labels, trusts, beat, state is not EnginePresence.RETIRED and beat >= now - stale_after)
        for labels, trusts, beat, state in rows
    ]


def _waits(
    schedule: Schedule, due: datetime | None, expected: bool, wants: Wants, engines: list[SeenEngine], now: datetime
) -> str | None:
    """Why an active schedule with something due (or nothing materialized ahead) waits, or None."""
    if schedule.state is not ScheduleState.ACTIVE or not (expected or (due is not None and due <= now)):
        return None
    return waiting_text(wants, engines, now)


def list_schedules(
    session: Session, now: datetime | None = None, stale_after: timedelta | None = None
) -> list[ScheduleSummary]:
    """Every schedule, by id, with occurrence counts per state.

    ``next_due_at`` is the earliest pending occurrence's dispatch time. With
    ``now``, a schedule that has no pending occurrence yet (just published, and
    no engine has materialized it since) gets the one its active revision gives
    at or after ``now`` instead (``next_due_expected``), so that a window shows
    the next run as soon as the ledger is read rather than after the engine's
    next pass. A disabled schedule gets none.

    With ``now`` and ``stale_after`` (engines whose heartbeat is older are gone),
    an active schedule that has something due, or nothing materialized ahead,
    and that no live engine runs (labels, trust; :mod:`core.team.placement`) says so
    in ``waiting``.
    """
    counts: dict[str, dict[OccurrenceState, int]] = {}
    for sid, state, n in session.execute(
        select(Occurrence.schedule_id, Occurrence.state, func.count()).group_by(
            Occurrence.schedule_id, Occurrence.state
        )
    ):
        counts.setdefault(sid, {})[state] = n
    # Expired ranges stand for MISFIRE_EXPIRED occurrences that have no row (core.ledger.expired).
    uncounted: dict[str, int] = {}
    for sid, known, unknown in session.execute(
        select(
            ExpiredRange.schedule_id,
            func.coalesce(func.sum(ExpiredRange.occurrences), 0),
            func.count() - func.count(ExpiredRange.occurrences),
        ).group_by(ExpiredRange.schedule_id)
    ):
        if known:
            by_state = counts.setdefault(sid, {})
            by_state[OccurrenceState.MISFIRE_EXPIRED] = by_state.get(OccurrenceState.MISFIRE_EXPIRED, 0) + int(known)
        if unknown:
            uncounted[sid] = int(unknown)
    next_due: dict[str, datetime | None] = {
        sid: due
        for sid, due in session.execute(
            # A waiting retry is next due at its retry time, not its original due time.
            select(Occurrence.schedule_id, func.min(func.coalesce(Occurrence.retry_at, Occurrence.due_at)))
            .where(Occurrence.state.in_(_PENDING))
            .group_by(Occurrence.schedule_id)
        )
    }
    engines = seen_engines(session, now, stale_after) if now is not None and stale_after is not None else None
    stmt = (
        select(
            Schedule,
            Revision.spec_json,
            Revision.tzif,
            Revision.cutover_at,
            Revision.source_path,
            Revision.source_host,
            trusted_publisher(session),
            Revision.publisher_host,
            Revision.tzdb_version,
            Revision.engine_version,
        )
        .join(Revision, (Revision.schedule_id == Schedule.id) & (Revision.revision == Schedule.active_revision))
        .order_by(Schedule.id)
    )
    out = []
    held = held_by_engines(session)
    for row in session.execute(stmt):
        schedule, spec_json, tzif, cutover, source_path, source_host, publisher, host, tzdb, version = row
        spec = json.loads(spec_json)
        due = next_due.get(schedule.id)
        expected = due is None and now is not None
        if expected:
            assert now is not None
            due = _expected_next(schedule, cutover, spec_json, now, tzif)
        waiting = None
        if engines is not None:
            assert now is not None
            wants = Wants(spec.get("runsOn"), publisher, host, by_role(session))
            waiting = _waits(schedule, due, expected and due is not None, wants, engines, now)
        out.append(
            ScheduleSummary(
                schedule.id,
                spec.get("title"),
                spec.get("timeZone", ""),
                spec.get("kind", ""),
                schedule.state,
                schedule.active_revision,
                schedule.gate_version,
                schedule.cursor_utc,
                schedule.note,
                schedule.updated_at,
                counts.get(schedule.id, {}),
                due,
                uncounted.get(schedule.id, 0),
                source_path,
                source_host,
                expected and due is not None,
                waiting,
                held.get(schedule.id),
                tzdb,
                version,
            )
        )
    return out


@dataclass(frozen=True)
class PublishedSchedule:
    """What the ledger holds under one schedule id: its active revision and the file it came from."""

    schedule_id: str
    title: str | None
    state: ScheduleState
    active_revision: int
    published_at: datetime
    #: The spec file the active revision was published from and its host (None: not recorded).
    source_path: str | None
    source_host: str | None
    #: The active revision's canonical text.
    spec_json: str
    #: The next run: the earliest pending occurrence, else what the revision gives (None: none ahead).
    next_due_at: datetime | None

    def spec(self) -> ScheduleSpec:
        """The active revision as a spec."""
        return stored_spec(self.spec_json)


def published_schedule(session: Session, schedule_id: str, now: datetime) -> PublishedSchedule | None:
    """The schedule ``schedule_id`` as the ledger has it now, or None when that id was never published."""
    found = session.execute(
        select(Schedule, Revision)
        .join(Revision, (Revision.schedule_id == Schedule.id) & (Revision.revision == Schedule.active_revision))
        .where(Schedule.id == schedule_id)
    ).first()
    if found is None:
        return None
    schedule, revision = found
    due = session.scalar(
        select(func.min(func.coalesce(Occurrence.retry_at, Occurrence.due_at))).where(
            Occurrence.schedule_id == schedule_id, Occurrence.state.in_(_PENDING)
        )
    )
    if due is None:
        due = _expected_next(schedule, revision.cutover_at, revision.spec_json, now, revision.tzif)
    return PublishedSchedule(
        schedule.id,
        json.loads(revision.spec_json).get("title"),
        schedule.state,
        schedule.active_revision,
        revision.published_at,
        revision.source_path,
        revision.source_host,
        revision.spec_json,
        due,
    )


@dataclass(frozen=True)
class OccurrenceFilter:
    """Which occurrences to list; every field narrows, None means any."""

    schedule_id: str | None = None
    states: frozenset[OccurrenceState] | None = None
    revision: int | None = None
    kind: OccurrenceKind | None = None
    #: Positions in [position_from, position_to).
    position_from: datetime | None = None
    position_to: datetime | None = None
    #: Dispatch times in [due_from, due_to) (rows that never run have none and are left out).
    due_from: datetime | None = None
    due_to: datetime | None = None
    #: Occurrence id, schedule id or reason contains this text (case-insensitive).
    text: str | None = None


@dataclass(frozen=True)
class OccurrenceView:
    """One occurrence as the CLI and GUI show it."""

    occurrence_id: str
    schedule_id: str
    revision: int
    kind: OccurrenceKind
    nominal_local: str
    fold_ordinal: int
    resolved_utc: datetime | None
    position_utc: datetime
    due_at: datetime | None
    logical_slot_id: str | None
    business_period: str | None
    state: OccurrenceState
    reason: str | None
    tzdb_version: str
    attempts: int
    updated_at: datetime
    #: The Tidemark version that computed the row (None: written before versions were recorded).
    engine_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``ledger --format json`` row: the contract's keys first, then the rest."""
        return {
            "occurrenceId": self.occurrence_id,
            "logicalSlotId": self.logical_slot_id,
            "scheduleId": self.schedule_id,
            "revision": self.revision,
            "nominalLocal": self.nominal_local,
            "foldOrdinal": self.fold_ordinal,
            "resolvedUtc": fmt_utc(self.resolved_utc) if self.resolved_utc else None,
            "state": self.state.value,
            "reason": self.reason,
            "attempts": self.attempts,
            "kind": self.kind.value,
            "positionUtc": fmt_utc(self.position_utc),
            "dueUtc": fmt_utc(self.due_at) if self.due_at else None,
            "businessPeriod": self.business_period,
            "tzdbVersion": self.tzdb_version,
            "engineVersion": self.engine_version,
        }


@dataclass(frozen=True)
class PageKey:
    """Where a page ended: list the next one after this row (keyset paging)."""

    position_utc: datetime
    nominal_local: str
    fold_ordinal: int
    occurrence_id: str


@dataclass(frozen=True)
class OccurrencePage:
    rows: tuple[OccurrenceView, ...]
    #: Pass as ``after`` for the next page; None on the last page.
    next_key: PageKey | None = None


_ORDER = (Occurrence.position_utc, Occurrence.nominal_local, Occurrence.fold_ordinal, Occurrence.occurrence_id)


def _filtered(stmt: Select[Any], f: OccurrenceFilter) -> Select[Any]:
    if f.schedule_id is not None:
        stmt = stmt.where(Occurrence.schedule_id == f.schedule_id)
    if f.states is not None:
        stmt = stmt.where(Occurrence.state.in_(sorted(f.states)))
    if f.revision is not None:
        stmt = stmt.where(Occurrence.revision == f.revision)
    if f.kind is not None:
        stmt = stmt.where(Occurrence.kind == f.kind)
    if f.position_from is not None:
        stmt = stmt.where(Occurrence.position_utc >= f.position_from)
    if f.position_to is not None:
        stmt = stmt.where(Occurrence.position_utc < f.position_to)
    if f.due_from is not None:
        stmt = stmt.where(Occurrence.due_at >= f.due_from)
    if f.due_to is not None:
        stmt = stmt.where(Occurrence.due_at < f.due_to)
    if f.text is not None and f.text.strip():
        pattern = "%" + _escape_like(f.text.strip()) + "%"
        stmt = stmt.where(contains_ci(Occurrence.occurrence_id, pattern) | contains_ci(Occurrence.reason, pattern))
    return stmt


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class contains_ci(FunctionElement[bool]):
    """``column LIKE pattern``, case-insensitive on both backends: SQLite's LIKE
    already is (for ASCII), and a ``lower()`` on every row would make it several
    times slower; PostgreSQL says ``ILIKE``. The pattern escapes with a backslash."""

    type = Boolean()
    inherit_cache = True


@compiles(contains_ci)
def _contains_ci_default(element: contains_ci, compiler: SQLCompiler, **kw: Any) -> str:
    column, pattern = element.clauses.clauses
    return f"({compiler.process(column, **kw)} ILIKE {compiler.process(pattern, **kw)} ESCAPE '\\')"


@compiles(contains_ci, "sqlite")
def _contains_ci_sqlite(element: contains_ci, compiler: SQLCompiler, **kw: Any) -> str:
    column, pattern = element.clauses.clauses
    return f"({compiler.process(column, **kw)} LIKE {compiler.process(pattern, **kw)} ESCAPE '\\')"


def apply_filter(stmt: Select[Any], where: OccurrenceFilter | None) -> Select[Any]:
    """``stmt`` narrowed to the occurrences ``where`` selects."""
    return _filtered(stmt, where or OccurrenceFilter())


def occurrence_view(o: Occurrence) -> OccurrenceView:
    """The frozen view of a loaded occurrence row."""
    return _view(o)


def _view(o: Occurrence) -> OccurrenceView:
    return OccurrenceView(
        o.occurrence_id,
        o.schedule_id,
        o.revision,
        o.kind,
        o.nominal_local,
        o.fold_ordinal,
        o.resolved_utc,
        o.position_utc,
        o.due_at,
        o.logical_slot_id,
        o.business_period,
        o.state,
        o.reason,
        o.tzdb_version,
        o.attempt_count,
        o.updated_at,
        o.engine_version,
    )


def list_occurrences(
    session: Session,
    where: OccurrenceFilter | None = None,
    *,
    limit: int = 100,
    after: PageKey | None = None,
) -> OccurrencePage:
    """Occurrences in (positionUtc, nominalLocal, foldOrdinal) order, one page at a time."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    stmt = _filtered(select(Occurrence), where or OccurrenceFilter())
    if after is not None:
        stmt = stmt.where(
            tuple_(*_ORDER) > tuple_(after.position_utc, after.nominal_local, after.fold_ordinal, after.occurrence_id)
        )
    found = [_view(o) for o in session.scalars(stmt.order_by(*_ORDER).limit(limit + 1))]
    rows = tuple(found[:limit])
    next_key = None
    if len(found) > limit:
        last = rows[-1]
        next_key = PageKey(last.position_utc, last.nominal_local, last.fold_ordinal, last.occurrence_id)
    return OccurrencePage(rows, next_key)


def count_occurrences(session: Session, where: OccurrenceFilter | None = None) -> int:
    """How many occurrences match (for a pager's total)."""
    return int(
        session.scalar(_filtered(select(func.count()).select_from(Occurrence), where or OccurrenceFilter())) or 0
    )


def get_occurrence(session: Session, occurrence_id: str) -> OccurrenceView | None:
    """One occurrence by id, or None."""
    found = session.get(Occurrence, occurrence_id)
    return _view(found) if found is not None else None


@dataclass(frozen=True)
class EventView:
    """One event of the outbox."""

    id: int
    at: datetime
    schedule_id: str | None
    occurrence_id: str | None
    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)
    #: Who caused it; None for an event written before actors were recorded (0008).
    actor: Actor | None = None


def event_actor(user: str | None, host: str | None, role: str | None) -> Actor | None:
    """An event's actor from its columns (None when the event predates them)."""
    if user is None and host is None:
        return None
    return Actor(user or "?", host or "?", role)


def event_view(e: Event) -> EventView:
    """One loaded event as a frozen value."""
    actor = event_actor(e.actor_user, e.actor_host, e.actor_role)
    return EventView(e.id, e.at, e.schedule_id, e.occurrence_id, e.kind, dict(e.data), actor)


def events_after(
    session: Session, after_id: int = 0, *, limit: int = 500, schedule_id: str | None = None
) -> list[EventView]:
    """Events with id > ``after_id``, oldest first (follow the log by passing the last id seen)."""
    stmt = select(Event).where(Event.id > after_id)
    if schedule_id is not None:
        stmt = stmt.where(Event.schedule_id == schedule_id)
    return [event_view(e) for e in session.scalars(stmt.order_by(Event.id).limit(limit))]


def last_event_id(session: Session) -> int:
    """The newest event's id (0 for an empty log): where a new follower starts."""
    return int(session.scalar(select(func.max(Event.id))) or 0)
