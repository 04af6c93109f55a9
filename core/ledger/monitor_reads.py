"""The monitor's questions, each answered in one read transaction of its own.

A front end (the window's views, its status bar, its screenshots) hands a
:class:`~core.ledger.db.Ledger` to one of these and gets plain values back: it
opens no session and decides no transaction. Each function reads what one
view shows together (the occurrences table's page with the zones and expired
ranges beside it, one occurrence's detail, the attention queue), so what it
shows comes from one snapshot. A database that fails meanwhile is a
:class:`~core.errors.LedgerUnavailable` (:mod:`core.ledger.access`).

The session-level queries they combine live in ``queries``, ``engine_queries``,
``occurrence_pages``, ``monitor_queries``, ``attention_queries``,
``health_queries``, ``crash_queries``, ``expired`` and ``future_diff``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from core.desktop.notify.needs import Need, alerts_key, held_key, needs_of
from core.ledger.access import reading
from core.ledger.alert_queries import FailingRoute, failing_routes
from core.ledger.attention_queries import AttentionItem, attention_ids, attention_items, touches_attention
from core.ledger.crash_queries import LeftAttempt, attempts_left_by
from core.ledger.db import Ledger
from core.ledger.drift_attention import (
    DRIFT_KINDS,
    DriftAttention,
    attention_key,
    drift_attention,
    republish_outlook,
)
from core.ledger.engine_queries import EngineView, engine_views
from core.ledger.event_types import EventKind
from core.ledger.expired import ExpiredRangeView, ranges_matching
from core.ledger.future_diff import BackfillPreview, FutureDiff, backfill_preview, future_diff
from core.ledger.health_queries import HealthSeries, Mark, health, recent_results
from core.ledger.monitor_queries import (
    AttemptView,
    Origin,
    attempts_of,
    events_of,
    held_by,
    origin_of,
    schedule_zones,
)
from core.ledger.occurrence_pages import (
    MonitorRow,
    Opening,
    Order,
    later_than,
    now_index,
    occurrence_rows,
    occurrence_rows_after,
    opening,
)
from core.ledger.queries import (
    EventView,
    OccurrenceFilter,
    OccurrenceView,
    PublishedSchedule,
    ScheduleSummary,
    count_occurrences,
    events_after,
    held_by_engines,
    last_event_id,
    list_occurrences,
    list_schedules,
    published_schedule,
)
from core.ledger.states import OccurrenceState
from core.spec.model import ScheduleSpec

#: Event kinds that may change the attention queue's schedules: drift's, and a schedule held or released.
_QUEUE_KINDS = DRIFT_KINDS | {EventKind.SCHEDULE_UNREADABLE.value}

# --- schedules ---------------------------------------------------------------------------------


def schedule_summaries(
    ledger: Ledger, now: datetime | None = None, stale_after: timedelta | None = None
) -> list[ScheduleSummary]:
    """Every schedule's summary (:func:`~core.ledger.queries.list_schedules`); with ``now`` and
    ``stale_after`` (:data:`core.engine.presence.STALE_AFTER`), each says whether it waits for
    an engine (``waiting``)."""
    with reading(ledger) as session:
        return list_schedules(session, now=now, stale_after=stale_after)


def engines_seen(ledger: Ledger, now: datetime, stale_after: timedelta) -> list[EngineView]:
    """Every engine the ledger remembers, with what it refuses (:func:`~core.ledger.engine_queries.engine_views`)."""
    with reading(ledger) as session:
        return engine_views(session, now, stale_after)


def next_due_at(ledger: Ledger) -> datetime | None:
    """The earliest dispatch time of any pending occurrence, or None when nothing is due."""
    due = [s.next_due_at for s in schedule_summaries(ledger) if s.next_due_at is not None]
    return min(due) if due else None


def schedule_zone(ledger: Ledger, schedule_id: str, default: str = "UTC") -> str:
    """The zone of the schedule's active revision (``default`` when it was never published)."""
    with reading(ledger) as session:
        return schedule_zones(session).get(schedule_id, default)


@dataclass(frozen=True)
class ScheduleResults:
    """A schedule's summary and its recent results, oldest first."""

    summary: ScheduleSummary
    marks: tuple[Mark, ...]


def schedules_with_results(
    ledger: Ledger, now: datetime, *, limit: int, stale_after: timedelta | None = None
) -> list[ScheduleResults]:
    """Every schedule's summary with its last ``limit`` results (the schedules view); with
    ``stale_after``, whether each waits for an engine (``ScheduleSummary.waiting``)."""
    with reading(ledger) as session:
        summaries = list_schedules(session, now=now, stale_after=stale_after)
        marks = recent_results(session, limit=limit, schedule_ids=[s.schedule_id for s in summaries])
    return [ScheduleResults(s, marks.get(s.schedule_id, ())) for s in summaries]


@dataclass(frozen=True)
class PublishOutlook:
    """What publishing ``spec`` would change, and the schedule published under its id now."""

    diff: FutureDiff
    published: PublishedSchedule | None


def publish_outlook(ledger: Ledger, spec: ScheduleSpec, now: datetime) -> PublishOutlook:
    """The future's diff (:func:`~core.ledger.future_diff.future_diff`) and the schedule it would replace."""
    with reading(ledger) as session:
        return PublishOutlook(future_diff(session, spec, now), published_schedule(session, spec.schedule_id, now))


def backfill_outlook(
    ledger: Ledger, schedule_id: str, start: datetime, end: datetime, now: datetime
) -> BackfillPreview:
    """How many occurrences a backfill of [start, end) would run (:func:`~core.ledger.future_diff.backfill_preview`)."""
    with reading(ledger) as session:
        return backfill_preview(session, schedule_id, start, end, now)


# --- the occurrences table ---------------------------------------------------------------------


@dataclass(frozen=True)
class OpeningRead:
    """The table opened around now, with every schedule's zone and the expired ranges the filter shows."""

    opening: Opening
    zones: dict[str, str]
    ranges: list[ExpiredRangeView]


@dataclass(frozen=True)
class PagesRead:
    """The table counted again, the pages asked for read again, the zones and the expired ranges."""

    total: int
    now_index: int
    pages: dict[int, list[MonitorRow]]
    zones: dict[str, str]
    ranges: list[ExpiredRangeView]


def occurrences_opening(
    ledger: Ledger,
    where: OccurrenceFilter,
    now: datetime,
    page_size: int,
    *,
    order: Order,
    lead: int,
    shown: int,
) -> OpeningRead:
    """:func:`~core.ledger.occurrence_pages.opening` with what the table shows beside it."""
    with reading(ledger) as session:
        found = opening(session, where, now, page_size, order=order, lead=lead, shown=shown)
        return OpeningRead(found, schedule_zones(session), ranges_matching(session, where))


def occurrences_again(
    ledger: Ledger, where: OccurrenceFilter, now: datetime, page_size: int, pages: Iterable[int], *, order: Order
) -> PagesRead:
    """Count again and read ``pages`` again (those still within the count), and always the first."""
    with reading(ledger) as session:
        total = count_occurrences(session, where)
        later = later_than(session, where, now) if total else 0
        found = {
            p: occurrence_rows(session, where, p * page_size, page_size, order=order, total=total)
            for p in pages
            if p * page_size < total
        }
        if 0 not in found and total:
            found[0] = occurrence_rows(session, where, 0, page_size, order=order, total=total)
        return PagesRead(
            total, now_index(total, later, order), found, schedule_zones(session), ranges_matching(session, where)
        )


def occurrences_page(
    ledger: Ledger,
    where: OccurrenceFilter,
    page: int,
    page_size: int,
    *,
    order: Order,
    total: int,
    before: Sequence[MonitorRow] | None = None,
    after: Sequence[MonitorRow] | None = None,
) -> list[MonitorRow]:
    """Page ``page``: read on from the full page ``before`` it or back from the page ``after`` it
    when one is known (a keyset, cheap at any depth), else by its offset."""
    with reading(ledger) as session:
        if before is not None and len(before) == page_size:
            return occurrence_rows_after(session, where, before[-1].key, page_size, order=order)
        if after:
            return occurrence_rows_after(session, where, after[0].key, page_size, order=order, before=True)
        return occurrence_rows(session, where, page * page_size, page_size, order=order, total=total)


def first_occurrence(ledger: Ledger, states: Iterable[OccurrenceState]) -> OccurrenceView | None:
    """The first occurrence in the first of ``states`` that has one (in that order of preference)."""
    with reading(ledger) as session:
        for state in states:
            rows = list_occurrences(session, OccurrenceFilter(states=frozenset({state})), limit=1).rows
            if rows:
                return rows[0]
    return None


# --- one occurrence, the queue, health, a crash ------------------------------------------------


@dataclass(frozen=True)
class OccurrenceDetails:
    """One occurrence in full: why it exists, every attempt, its history (each event with
    who caused it), and who paused or disabled its schedule when it is held."""

    origin: Origin
    attempts: list[AttemptView]
    events: list[EventView]
    #: The event that paused or disabled the schedule (None while it is active).
    held: EventView | None = None


def occurrence_detail(ledger: Ledger, occurrence_id: str) -> OccurrenceDetails | None:
    """The occurrence's detail, or None when the ledger has no such occurrence."""
    with reading(ledger) as session:
        origin = origin_of(session, occurrence_id)
        if origin is None:
            return None
        sid = origin.occurrence.schedule_id
        held = held_by(session, [sid]).get(sid)
        return OccurrenceDetails(origin, attempts_of(session, occurrence_id), events_of(session, occurrence_id), held)


@dataclass(frozen=True)
class AttentionQueue:
    """What waits for a person, and every schedule's zone to show its times in."""

    items: list[AttentionItem]
    zones: dict[str, str]
    #: For each of the items' schedules that is paused or disabled, the event that made it so.
    held: dict[str, EventView] = field(default_factory=dict)
    #: Schedules whose materialized future the installed tz database would move
    #: (:func:`~core.ledger.drift_attention.drift_attention`).
    drifts: list[DriftAttention] = field(default_factory=list)
    #: Schedules the engines hold, their revision unreadable or not expandable, with why
    #: (:func:`~core.ledger.queries.held_by_engines`).
    held_schedules: dict[str, str] = field(default_factory=dict)
    #: Alert routes that keep failing, one each however many alerts wait for it
    #: (:func:`~core.ledger.alert_queries.failing_routes`).
    failing_routes: list[FailingRoute] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.items) + len(self.drifts) + len(self.held_schedules) + len(self.failing_routes)


def attention_queue(ledger: Ledger, now: datetime) -> AttentionQueue:
    """The attention queue (:func:`~core.ledger.attention_queries.attention_items`) with the zones,
    and the schedules drifted under the installed tz database."""
    with reading(ledger) as session:
        items = attention_items(session, now)
        held = held_by(session, {item.occurrence.schedule_id for item in items})
        return AttentionQueue(
            items,
            schedule_zones(session),
            held,
            drift_attention(session),
            held_by_engines(session),
            failing_routes(session),
        )


def person_needs(ledger: Ledger, now: datetime, stale_after: timedelta) -> list[Need]:
    """What needs a person now (:func:`~core.desktop.notify.needs.needs_of`): the attention queue's runs,
    its drifted schedules and the schedules waiting for an engine (live within ``stale_after``),
    in one read."""
    with reading(ledger) as session:
        items = attention_items(session, now)
        summaries = list_schedules(session, now=now, stale_after=stale_after)
        failing = [f.route for f in failing_routes(session)]
        return needs_of(items, drift_attention(session), summaries, failing)


def republish_preview(ledger: Ledger, schedule_id: str, now: datetime) -> tuple[DriftAttention, FutureDiff]:
    """A drifted schedule's item and the diff of the future republishing it would make
    (:func:`~core.ledger.drift_attention.republish_outlook`)."""
    with reading(ledger) as session:
        return republish_outlook(session, schedule_id, now)


def _waiting_keys(session: Session) -> set[str]:
    """The queue's occurrence ids, its drifted schedules (:func:`~core.ledger.drift_attention.attention_key`),
    the schedules the engines hold (:func:`~core.desktop.notify.needs.held_key`) and the alert routes that keep
    failing (:func:`~core.desktop.notify.needs.alerts_key`)."""
    drifted = {attention_key(d.schedule_id) for d in drift_attention(session)}
    routes = {alerts_key(f.route) for f in failing_routes(session)}
    return attention_ids(session) | drifted | {held_key(sid) for sid in held_by_engines(session)} | routes


@dataclass(frozen=True)
class HealthRead:
    """The health series and how many occurrences wait for a person."""

    series: HealthSeries
    waiting: int


def health_outlook(ledger: Ledger, start: datetime, end: datetime, now: datetime) -> HealthRead:
    """The health series over [start, end) (:func:`~core.ledger.health_queries.health`) and the queue's size."""
    with reading(ledger) as session:
        return HealthRead(health(session, start, end, now), len(_waiting_keys(session)))


@dataclass(frozen=True)
class ProcessSpan:
    """An engine process that ended: where it ran, its pid, from when, and when it was last known alive."""

    host: str
    pid: int
    since: datetime
    until: datetime


def attempts_left(ledger: Ledger, processes: Iterable[ProcessSpan]) -> list[LeftAttempt]:
    """The attempts each process left unfinished (:func:`~core.ledger.crash_queries.attempts_left_by`)."""
    found: list[LeftAttempt] = []
    with reading(ledger) as session:
        for p in processes:
            found += attempts_left_by(session, p.host, p.pid, p.since, p.until)
    return found


# --- following the event log -------------------------------------------------------------------


@dataclass(frozen=True)
class EventsRead:
    """What was written since event ``since`` (None: the log was not followed yet, so only
    its end is found), the id to follow on from, and the attention queue's ids when asked."""

    since: int | None
    last_id: int
    events: list[EventView]
    attention: frozenset[str] | None


def events_since(
    ledger: Ledger,
    since: int | None,
    *,
    attention: bool,
    batch: int,
    max_batches: int,
) -> EventsRead:
    """The events after ``since`` (at most ``batch * max_batches``; the rest on the next call) and
    the attention queue's ids (with its drifted schedules' keys) when ``attention`` asks for them
    or an event found may have changed the queue (:func:`~core.ledger.attention_queries.touches_attention`,
    or an event about drift)."""
    found: list[EventView] = []
    with reading(ledger) as session:
        if since is None:
            last = last_event_id(session)
        else:
            last = since
            for _ in range(max_batches):
                page = events_after(session, last, limit=batch)
                found.extend(page)
                if page:
                    last = page[-1].id
                if len(page) < batch:
                    break
        wanted = attention or any(touches_attention(e) or e.kind in _QUEUE_KINDS for e in found)
        ids = frozenset(_waiting_keys(session)) if wanted else None
    return EventsRead(since, last, found, ids)
