"""The ledger (docs/contract.md §4): schedules and their revisions, occurrences, attempts
and the append-only event log, on SQLite (default) or PostgreSQL.

May import the schedule layer (core/spec/, core/calendar/, core/recurrence/,
core/team/), core/time/ and the basics (docs/architecture.md), and of
core/desktop/ only notify/ (what needs a person).

Typical use, one unit of work per command::

    with open_ledger(url, clock) as ledger:
        with ledger.write() as session:
            publish(session, spec, clock)
            materialize(session, spec.schedule_id, clock)
        with ledger.read() as session:
            page = list_occurrences(session, OccurrenceFilter(schedule_id=spec.schedule_id))
"""

from core.ledger.db import Ledger, head_revision, open_ledger, upgrade_ledger
from core.ledger.events import EventKind
from core.ledger.materialize import DriftItem, MaterializeResult, drift, materialize, materialize_all
from core.ledger.publish import GateChange, PublishResult, RevisionSource, disable, pause, publish, resume
from core.ledger.queries import (
    EventView,
    OccurrenceFilter,
    OccurrencePage,
    OccurrenceView,
    PageKey,
    PublishedSchedule,
    ScheduleSummary,
    count_occurrences,
    events_after,
    get_occurrence,
    last_event_id,
    list_occurrences,
    list_schedules,
    published_schedule,
)
from core.ledger.states import OccurrenceKind, OccurrenceState, ScheduleState

__all__ = [
    "DriftItem",
    "EventKind",
    "EventView",
    "GateChange",
    "Ledger",
    "MaterializeResult",
    "OccurrenceFilter",
    "OccurrenceKind",
    "OccurrencePage",
    "OccurrenceState",
    "OccurrenceView",
    "PageKey",
    "PublishResult",
    "PublishedSchedule",
    "RevisionSource",
    "ScheduleState",
    "ScheduleSummary",
    "count_occurrences",
    "disable",
    "drift",
    "events_after",
    "get_occurrence",
    "head_revision",
    "last_event_id",
    "list_occurrences",
    "list_schedules",
    "materialize",
    "materialize_all",
    "open_ledger",
    "pause",
    "publish",
    "published_schedule",
    "resume",
    "upgrade_ledger",
]
