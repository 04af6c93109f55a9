"""Read-side query objects: schedules with counts, occurrences by page, events after an id."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.clock import FixedClock
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.materialize import materialize
from core.ledger.publish import pause, publish
from core.ledger.queries import (
    OccurrenceFilter,
    PageKey,
    count_occurrences,
    events_after,
    get_occurrence,
    last_event_id,
    list_occurrences,
    list_schedules,
)
from core.ledger.states import OccurrenceKind, OccurrenceState, ScheduleState

from . import NOW, by_nominal, spec, utc

HOURLY = {"rule": "FREQ=HOURLY;BYMINUTE=0", "scheduleId": "hourly", "horizon": "P2D", "title": "Every hour"}


@pytest.fixture
def filled(ledger: Ledger, clock: FixedClock) -> Ledger:
    """Two schedules materialized; one daily occurrence DUE; the hourly one paused."""
    with ledger.write() as session:
        publish(session, spec(title="Operating summary"), clock)
        publish(session, spec(**HOURLY), clock)
        materialize(session, "daily-ops-summary", clock)
        materialize(session, "hourly", clock)
    with ledger.write() as session:
        first = by_nominal(session, "daily-ops-summary")[("2026-03-02T02:30:00", 0)]
        events.transition(session, first, OccurrenceState.DUE, NOW)
        pause(session, "hourly", clock, "night shift")
    return ledger


def test_list_schedules_counts_by_state(filled: Ledger) -> None:
    with filled.read() as session:
        daily, hourly = list_schedules(session)
    assert (daily.schedule_id, daily.title, daily.time_zone, daily.kind) == (
        "daily-ops-summary",
        "Operating summary",
        "America/New_York",
        "calendar",
    )
    assert daily.state is ScheduleState.ACTIVE and daily.active_revision == 1
    assert dict(daily.counts) == {OccurrenceState.DUE: 1, OccurrenceState.PLANNED: 12, OccurrenceState.SKIPPED_GAP: 1}
    assert daily.next_due_at == utc("2026-03-02T07:30:00Z")
    assert daily.cursor_utc == NOW + timedelta(days=14)
    assert (hourly.schedule_id, hourly.state, hourly.note, hourly.gate_version) == (
        "hourly",
        ScheduleState.PAUSED,
        "night shift",
        1,
    )
    assert dict(hourly.counts) == {OccurrenceState.PLANNED: 48}
    assert hourly.next_due_at == NOW  # the cutover itself is governed (half-open range)


def test_paging_walks_every_row_once_in_order(filled: Ledger) -> None:
    with filled.read() as session:
        everything = list_occurrences(session, limit=1000)
        assert everything.next_key is None
        seen = []
        after: PageKey | None = None
        while True:
            page = list_occurrences(session, limit=7, after=after)
            seen.extend(page.rows)
            if page.next_key is None:
                break
            after = page.next_key
    assert [r.occurrence_id for r in seen] == [r.occurrence_id for r in everything.rows]
    assert len(seen) == 14 + 48
    keys = [(r.position_utc, r.nominal_local, r.fold_ordinal) for r in seen]
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        pytest.param(OccurrenceFilter(schedule_id="daily-ops-summary"), 14, id="schedule"),
        pytest.param(OccurrenceFilter(states=frozenset({OccurrenceState.DUE})), 1, id="state"),
        pytest.param(
            OccurrenceFilter(states=frozenset({OccurrenceState.DUE, OccurrenceState.SKIPPED_GAP})), 2, id="states"
        ),
        pytest.param(OccurrenceFilter(revision=2), 0, id="revision"),
        pytest.param(OccurrenceFilter(kind=OccurrenceKind.MANUAL), 0, id="kind"),
        pytest.param(
            OccurrenceFilter(
                schedule_id="hourly", position_from=utc("2026-03-02T00:00:00Z"), position_to=utc("2026-03-02T06:00:00Z")
            ),
            6,
            id="position_range",
        ),
    ],
)
def test_filters(filled: Ledger, where: OccurrenceFilter, expected: int) -> None:
    with filled.read() as session:
        assert count_occurrences(session, where) == expected
        assert len(list_occurrences(session, where, limit=500).rows) == expected


def test_occurrence_view_json_has_the_contract_keys_first(filled: Ledger) -> None:
    with filled.read() as session:
        row = list_occurrences(session, OccurrenceFilter(states=frozenset({OccurrenceState.DUE}))).rows[0]
        assert get_occurrence(session, row.occurrence_id) == row
        assert get_occurrence(session, "occ-missing") is None
    shown = row.to_json()
    assert list(shown)[:10] == [
        "occurrenceId",
        "logicalSlotId",
        "scheduleId",
        "revision",
        "nominalLocal",
        "foldOrdinal",
        "resolvedUtc",
        "state",
        "reason",
        "attempts",
    ]
    assert (shown["nominalLocal"], shown["resolvedUtc"], shown["state"], shown["attempts"]) == (
        "2026-03-02T02:30:00",
        "2026-03-02T07:30:00Z",
        "DUE",
        0,
    )


def test_a_bad_limit_is_refused(filled: Ledger) -> None:
    with filled.read() as session, pytest.raises(ValueError, match="limit"):
        list_occurrences(session, limit=0)


def test_events_after_follows_the_log(filled: Ledger) -> None:
    with filled.read() as session:
        log = events_after(session)
        assert [e.kind for e in log] == [
            "schedule.published",
            "schedule.published",
            "occurrences.materialized",
            "occurrences.materialized",
            "occurrence.transitioned",
            "schedule.paused",
        ]
        assert [e.id for e in log] == sorted(e.id for e in log)
        assert last_event_id(session) == log[-1].id
        assert [e.kind for e in events_after(session, log[3].id)] == ["occurrence.transitioned", "schedule.paused"]
        assert [e.kind for e in events_after(session, 0, schedule_id="hourly")] == [
            "schedule.published",
            "occurrences.materialized",
            "schedule.paused",
        ]
        assert len(events_after(session, 0, limit=2)) == 2
        assert events_after(session, last_event_id(session)) == []


def test_an_empty_ledger(ledger: Ledger) -> None:
    with ledger.read() as session:
        assert list_schedules(session) == []
        assert list_occurrences(session).rows == ()
        assert last_event_id(session) == 0


# --- the next run before anything is materialized -----------------------------------------


@pytest.mark.parametrize(
    ("changes", "gate", "expected"),
    [
        # Published at NOW (2026-03-01 12:00Z): the next 02:30 in New York is 2026-03-02 07:30Z.
        ({}, None, "2026-03-02T07:30:00Z"),
        # 2026-03-08 02:30 does not exist and is skipped: from Mar 8 the next run is Mar 9 02:30 EDT.
        ({"cutoverAt": "2026-03-08T00:00:00Z"}, None, "2026-03-09T06:30:00Z"),
        ({"jitter": "PT10M"}, None, "jitter"),
        ({}, "pause", "2026-03-02T07:30:00Z"),  # paused: still materialized, so still shown
        ({}, "disable", None),
        ({"end": "2026-02-01T00:00:00"}, None, None),  # ended before now
    ],
    ids=["daily_0230", "after_the_spring_gap", "jitter_delays_dispatch", "paused", "disabled", "ended"],
)
def test_next_due_comes_from_the_revision_until_materialized(
    ledger: Ledger, clock: FixedClock, changes: dict[str, str], gate: str | None, expected: str | None
) -> None:
    from core.ledger.publish import disable

    with ledger.write() as session:
        publish(session, spec(**changes), clock)
        if gate == "pause":
            pause(session, "daily-ops-summary", clock)
        elif gate == "disable":
            disable(session, "daily-ops-summary", clock)
    with ledger.read() as session:
        [without_now] = list_schedules(session)
        [summary] = list_schedules(session, now=NOW)
    assert without_now.next_due_at is None and not without_now.next_due_expected
    if expected == "jitter":
        # The dispatch time, as the engine's due_at: the 02:30 plus the occurrence's own delay.
        assert summary.next_due_at is not None and summary.next_due_expected
        delay = summary.next_due_at - utc("2026-03-02T07:30:00Z")
        assert timedelta(0) <= delay < timedelta(minutes=10)
        with ledger.write() as session:
            materialize(session, "daily-ops-summary", clock)
        with ledger.read() as session:
            [after] = list_schedules(session, now=NOW)
        assert after.next_due_at == summary.next_due_at and not after.next_due_expected
        return
    assert summary.next_due_at == (utc(expected) if expected else None)
    assert summary.next_due_expected is (expected is not None)


def test_materialized_occurrences_win_over_the_revision(filled: Ledger) -> None:
    with filled.read() as session:
        daily, hourly = list_schedules(session, now=NOW)
    assert daily.next_due_at == utc("2026-03-02T07:30:00Z") and not daily.next_due_expected
    assert hourly.next_due_at == NOW and not hourly.next_due_expected


def test_a_cursor_ahead_of_now_is_where_the_revision_is_read_from(ledger: Ledger, clock: FixedClock) -> None:
    """Everything before the cursor is materialized already: with none of it pending, the next run is after it."""
    with ledger.write() as session:
        publish(session, spec(horizon="P2D"), clock)
        materialize(session, "daily-ops-summary", clock)
    with ledger.write() as session:
        for occ in by_nominal(session, "daily-ops-summary").values():
            events.transition(session, occ, OccurrenceState.CANCELLED, NOW, "by hand")
    with ledger.read() as session:
        [summary] = list_schedules(session, now=NOW)
    # Materialized through 2026-03-03 12:00Z (both 02:30s cancelled); the next one is on the 4th.
    assert summary.next_due_at == utc("2026-03-04T07:30:00Z") and summary.next_due_expected
