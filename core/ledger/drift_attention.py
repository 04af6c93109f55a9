"""Drift as a decision: when the installed tz database would move materialized
future occurrences of a schedule, they stay as they are (a materialized
occurrence is a fact), the ledger says so once, and the schedule waits in
Needs attention until a person decides:

* **Keep as materialized** (:func:`keep_materialized`): the runs keep their
  instants; an acknowledgement is recorded and the item leaves.
* **Republish under the installed release** (:func:`republish`): a new revision
  of the same spec with its cutover now, so that the not-started future is
  cancelled and materialized again under the installed tz database.
  :func:`republish_outlook` is the diff of the future a person sees first.

A new Tidemark version is the same decision (:func:`record_shadow`): on its
first start on a ledger, the engine's shadow stage (:mod:`core.engine.first_start`)
compares the materialized future with what the new code computes, and each
schedule that differs waits in the same way, with "Republish under Tidemark
0.2.0" (the not-started future materialized again by the new code) or "Keep as
materialized". One item per schedule: the newer finding replaces the older.

The item is the event log's: a schedule waits while its newest event of
``schedule.drift_found``, ``schedule.shadow_differs``, ``schedule.drift_kept``
and ``schedule.published`` is a ``drift_found`` or a ``shadow_differs``.
:func:`record_drift` (the engine's drift check, :mod:`core.engine.drift_check`)
writes a ``drift_found`` once per installed release and revision history: not
again while the same drift persists (nor after a ``shadow_differs`` under the
same release, whose comparison saw the installed tz database too).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.calendar import holiday_codes
from core.clock import Clock
from core.counts import counted
from core.errors import UserError
from core.ledger import events
from core.ledger.access import writing
from core.ledger.db import Ledger, lock_for_write
from core.ledger.event_types import EventKind
from core.ledger.future_diff import FutureDiff, future_diff
from core.ledger.materialize import DriftItem
from core.ledger.models import Event, Revision, Schedule
from core.ledger.publish import PublishResult, get_schedule, publish
from core.ledger.shadow import ShadowReport
from core.ledger.states import ScheduleState
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from core.team.actor import Actor
from core.time.zones import tzdb_version

FOUND = EventKind.SCHEDULE_DRIFT_FOUND.value
SHADOW = EventKind.SCHEDULE_SHADOW_DIFFERS.value
KEPT = EventKind.SCHEDULE_DRIFT_KEPT.value
PUBLISHED = EventKind.SCHEDULE_PUBLISHED.value
#: The events that open an item.
OPENING = frozenset({FOUND, SHADOW})
#: The events that open or close a drift item.
DRIFT_KINDS = frozenset({FOUND, SHADOW, KEPT, PUBLISHED})


class NoDriftError(UserError):
    """A decision about drift on a schedule that has none waiting."""


def shift_text(seconds: int | None) -> str:
    """``1 h``, ``30 min``, ``1 h 30 min``, ``2 d``; ``into or out of a gap`` for None."""
    if seconds is None:
        return "into or out of a gap"
    shift = abs(seconds)
    days, rest = divmod(shift, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    text = " ".join(p for p in parts if p) or f"{secs} s"
    return text


@dataclass(frozen=True)
class DriftAttention:
    """A schedule whose materialized future the installed tz database would move, or
    (``engine_version`` set) that a newer Tidemark computes otherwise."""

    schedule_id: str
    #: The ``schedule.drift_found`` event: its id, when, and what it found.
    event_id: int
    found_at: datetime
    tzdb_version: str
    from_tzdb: tuple[str, ...]
    occurrences: int
    #: The farthest move in seconds (None: every moved run leaves or enters a gap).
    largest_shift: int | None
    #: The Tidemark version whose shadow comparison differed (None: tz database drift).
    engine_version: str | None = None
    #: The version of the engine that ran on the ledger before it.
    from_engine_version: str | None = None

    @property
    def new_code(self) -> bool:
        """Whether a newer Tidemark computes the future otherwise (else: new tz data)."""
        return self.engine_version is not None

    @property
    def holidays_data(self) -> bool:
        """Whether the runs were resolved by the installed tz release already, so that what moves
        them is the installed holidays data (a business calendar's closed days)."""
        return not self.new_code and set(self.from_tzdb) <= {self.tzdb_version}

    @property
    def text(self) -> str:
        """``tzdata 2027a moves 3 future runs by 1 h; republish to follow``,
        ``the installed holidays data changes 1 future run; republish to follow``, or
        ``Tidemark 0.2.0 computes 3 future runs otherwise than 0.1.0; republish to follow``."""
        runs = f"{self.occurrences} future run{'s' if self.occurrences != 1 else ''}"
        if self.new_code:
            return (
                f"Tidemark {self.engine_version} computes {runs} otherwise than {self.from_engine_version}; "
                "republish to follow"
            )
        if self.holidays_data:
            return f"the installed holidays data changes {runs}; republish to follow"
        by = shift_text(self.largest_shift)
        by = f"by {'up to ' if self.occurrences > 1 else ''}{by}" if self.largest_shift is not None else by
        return f"tzdata {self.tzdb_version} moves {runs} {by}; republish to follow"

    @property
    def republish_label(self) -> str:
        if self.new_code:
            return f"Republish under Tidemark {self.engine_version}"
        if self.holidays_data:
            return "Republish under the installed holidays data"
        return f"Republish under {self.tzdb_version}"

    @property
    def runs_kept(self) -> str:
        """What Keep as materialized kept: ``2 drifted runs``, ``2 runs Tidemark 0.2.0 computes otherwise``."""
        if self.new_code:
            return f"{counted(self.occurrences, 'run')} Tidemark {self.engine_version} computes otherwise"
        return counted(self.occurrences, "drifted run")


def _latest_drift_events(session: Session, schedule_ids: Iterable[str] | None = None) -> dict[str, Event]:
    """Each schedule's newest event among DRIFT_KINDS."""
    newest = select(Event.schedule_id, func.max(Event.id).label("id")).where(Event.kind.in_(sorted(DRIFT_KINDS)))
    if schedule_ids is not None:
        newest = newest.where(Event.schedule_id.in_(list(schedule_ids)))
    ids = newest.group_by(Event.schedule_id).subquery()
    return {e.schedule_id: e for e in session.scalars(select(Event).join(ids, Event.id == ids.c.id)) if e.schedule_id}


def _item(event: Event) -> DriftAttention:
    data = event.data or {}
    shift = data.get("largestShift")
    shadowed = event.kind == SHADOW
    return DriftAttention(
        str(event.schedule_id),
        event.id,
        event.at,
        str(data.get("tzdbVersion")),
        tuple(map(str, data.get("fromTzdb") or ())),
        int(data.get("occurrences") or 0),
        int(shift) if shift is not None else None,
        str(data.get("engineVersion")) if shadowed else None,
        str(data.get("fromEngineVersion")) if shadowed else None,
    )


def attention_key(schedule_id: str) -> str:
    """How a drifted schedule is named among the attention queue's occurrence ids."""
    return f"{schedule_id} (tz drift)"


def drift_attention(session: Session) -> list[DriftAttention]:
    """Schedules (not disabled) waiting for a decision about drift, the longest-waiting first."""
    live = set(session.scalars(select(Schedule.id).where(Schedule.state != ScheduleState.DISABLED)))
    items = [_item(e) for sid, e in _latest_drift_events(session).items() if e.kind in OPENING and sid in live]
    return sorted(items, key=lambda i: (i.found_at, i.schedule_id))


def open_drift(session: Session, schedule_id: str) -> DriftAttention:
    """The schedule's drift item, or :class:`NoDriftError` (an unknown schedule: its error)."""
    get_schedule(session, schedule_id)
    event = _latest_drift_events(session, [schedule_id]).get(schedule_id)
    if event is None or event.kind not in OPENING:
        raise NoDriftError(f"{schedule_id}: no drift waits for a decision (see schedctl drift)")
    return _item(event)


def record_drift(session: Session, now: datetime, items: Sequence[DriftItem]) -> list[str]:
    """Record ``schedule.drift_found`` for each schedule among ``items`` not yet told about
    this installed release since its last publish. Returns the schedules recorded."""
    by_schedule: dict[str, list[DriftItem]] = defaultdict(list)
    for item in items:
        by_schedule[item.schedule_id].append(item)
    if not by_schedule:
        return []
    lock_for_write(session)  # two engines checking at once record it once
    latest = _latest_drift_events(session, by_schedule)
    release = tzdb_version()
    installed_holidays = holiday_codes.holidays_version()
    recorded = []
    for sid, moved in sorted(by_schedule.items()):
        holidays = installed_holidays if any(m.stored_holidays_version is not None for m in moved) else None
        last = latest.get(sid)
        data = (last.data or {}) if last is not None else {}
        if (
            last is not None
            and last.kind != PUBLISHED
            and data.get("tzdbVersion") == release
            and data.get("holidaysVersion") == holidays
        ):
            continue  # told already (and perhaps kept): the same drift persists
        shifts = [
            int((m.current_resolved_utc - m.stored_resolved_utc).total_seconds())
            for m in moved
            if m.current_resolved_utc is not None and m.stored_resolved_utc is not None
        ]
        events.append(
            session,
            events.ScheduleDriftFound(
                at=now,
                schedule_id=sid,
                tzdb_version=release,
                from_tzdb=sorted({m.stored_tzdb_version for m in moved}),
                occurrences=len(moved),
                largest_shift=max(shifts, key=abs) if shifts else None,
                holidays_version=holidays,
            ),
        )
        recorded.append(sid)
    return recorded


def record_shadow(session: Session, now: datetime, report: ShadowReport, version: str, previous: str) -> list[str]:
    """Record ``schedule.shadow_differs`` for each schedule with differences in ``report``
    (the shadow comparison Tidemark ``version`` made on its first start on a ledger last
    run by ``previous``). Rows are not touched. Returns the schedules recorded."""
    by_schedule: dict[str, list[str]] = defaultdict(list)
    for difference in report.differences:
        by_schedule[difference.schedule_id].append(difference.occurrence_id)
    for sid, ids in sorted(by_schedule.items()):
        events.append(
            session,
            events.ScheduleShadowDiffers(
                at=now,
                schedule_id=sid,
                engine_version=version,
                from_engine_version=previous,
                tzdb_version=report.tzdb_version,
                occurrences=len(set(ids)),
                differences=len(ids),
            ),
        )
    return sorted(by_schedule)


def keep_materialized(
    ledger: Ledger, schedule_id: str, clock: Clock, note: str | None = None, actor: Actor | None = None
) -> DriftAttention:
    """Keep the drifted runs as they were materialized: record it; the item leaves."""
    with writing(ledger, actor) as session:
        lock_for_write(session)  # a decision taken twice at once is refused the second time
        item = open_drift(session, schedule_id)
        events.append(
            session,
            events.ScheduleDriftKept(
                at=clock.now(),
                schedule_id=schedule_id,
                tzdb_version=item.tzdb_version,
                occurrences=item.occurrences,
                note=note,
                engine_version=item.engine_version,
            ),
        )
    return item


def republish_spec(session: Session, schedule_id: str) -> ScheduleSpec:
    """The active revision's spec as the next revision: its cutover now, its tz release the installed one."""
    schedule = get_schedule(session, schedule_id)
    text = session.scalar(
        select(Revision.spec_json).where(
            Revision.schedule_id == schedule_id, Revision.revision == schedule.active_revision
        )
    )
    latest = session.scalar(select(func.max(Revision.revision)).where(Revision.schedule_id == schedule_id))
    data = json.loads(text or "{}")
    data["revision"] = int(latest or 0) + 1
    data.pop("cutoverAt", None)
    data.pop("tzdbVersion", None)
    return parse_spec(data, check_rule=False)


def republish_outlook(session: Session, schedule_id: str, now: datetime) -> tuple[DriftAttention, FutureDiff]:
    """The drift item and the diff of the future republishing would make (a read)."""
    item = open_drift(session, schedule_id)
    return item, future_diff(session, republish_spec(session, schedule_id), now)


def republish(ledger: Ledger, schedule_id: str, clock: Clock, actor: Actor | None = None) -> PublishResult:
    """Publish the schedule's spec again as a new revision with its cutover now: its
    not-started future is cancelled and materialized again under the installed tz
    database (the next engine pass), and the item leaves."""
    with writing(ledger, actor) as session:
        lock_for_write(session)
        open_drift(session, schedule_id)
        # The task was checked when it was first published, on the host that published it.
        return publish(session, republish_spec(session, schedule_id), clock, check_task=False, actor=actor)


__all__ = [
    "DRIFT_KINDS",
    "DriftAttention",
    "NoDriftError",
    "attention_key",
    "drift_attention",
    "keep_materialized",
    "open_drift",
    "record_drift",
    "record_shadow",
    "republish",
    "republish_outlook",
    "republish_spec",
    "shift_text",
]
