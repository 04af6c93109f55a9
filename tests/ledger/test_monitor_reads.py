"""The monitor's questions, one read transaction each (``core.ledger.monitor_reads``): each
answers what the session-level queries it combines answer, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import socket
from datetime import timedelta

import pytest

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.engine.presence import dispatcher_besides, engine_outlook, outlook
from core.ledger import monitor_reads as reads
from core.ledger.attention_queries import attention_ids, attention_items, touches_attention
from core.ledger.crash_queries import attempts_left_by
from core.ledger.db import Ledger
from core.ledger.expired import ranges_matching
from core.ledger.future_diff import backfill_preview, future_diff
from core.ledger.health_queries import health, recent_results
from core.ledger.materialize import materialize
from core.ledger.monitor_queries import attempts_of, events_of, origin_of, schedule_zones
from core.ledger.occurrence_pages import Order, occurrence_rows, opening
from core.ledger.publish import publish, publish_new
from core.ledger.queries import EventView, OccurrenceFilter, count_occurrences, events_after, list_schedules
from core.ledger.states import OccurrenceState as S

from . import by_nominal, spec, utc

FAILING = {"argv": ["/bin/sh", "-c", "echo 'disk full' >&2; exit 3"], "effect": "idempotent"}
HOURLY = {"scheduleId": "hourly", "rule": "FREQ=HOURLY;BYMINUTE=0", "timeZone": "Europe/Paris", "horizon": "P10D"}
EVERYTHING = OccurrenceFilter()


@pytest.fixture
def two(ledger: Ledger, clock: FixedClock) -> Ledger:
    """The daily New York schedule and an hourly Paris one, materialized."""
    assert publish_new(ledger, [(spec(), None), (spec(**HOURLY), None)], clock).published
    with ledger.write() as session:
        for schedule_id in ("daily-ops-summary", "hourly"):
            materialize(session, schedule_id, clock)
    return ledger


@pytest.fixture
def failed(ledger: Ledger, clock: FixedClock) -> tuple[Ledger, str]:
    """The daily schedule with a failing task: one FAILED occurrence, in the attention queue."""
    with ledger.write() as session:
        publish(session, spec(task=FAILING, retry={"maxAttempts": 1}), clock)
    clock.set(utc("2026-03-02T07:31:00Z"))
    Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    with ledger.read() as session:
        occ = by_nominal(session, "daily-ops-summary")[("2026-03-02T02:30:00", 0)]
    assert occ.state is S.FAILED
    return ledger, occ.occurrence_id


def test_schedules_their_zones_and_what_is_due(two: Ledger, clock: FixedClock) -> None:
    now = clock.now()
    with two.read() as session:
        expected = list_schedules(session, now=now)
        due = min(s.next_due_at for s in list_schedules(session) if s.next_due_at is not None)
    assert reads.schedule_summaries(two, now) == expected
    assert reads.next_due_at(two) == due
    assert reads.schedule_zone(two, "hourly") == "Europe/Paris"
    assert reads.schedule_zone(two, "never-published") == "UTC"


def test_next_due_is_none_on_an_empty_ledger(ledger: Ledger) -> None:
    assert reads.next_due_at(ledger) is None
    assert reads.schedule_summaries(ledger) == []


def test_schedules_with_their_recent_results(failed: tuple[Ledger, str], clock: FixedClock) -> None:
    ledger, _ = failed
    found = reads.schedules_with_results(ledger, clock.now(), limit=5)
    with ledger.read() as session:
        marks = recent_results(session, limit=5)
    assert [r.summary.schedule_id for r in found] == ["daily-ops-summary"]
    assert found[0].marks == marks["daily-ops-summary"] and found[0].marks


def test_the_table_opens_and_pages_as_the_session_queries_do(two: Ledger, clock: FixedClock) -> None:
    now = clock.now()
    order = Order.NEWEST_FIRST
    first = reads.occurrences_opening(two, EVERYTHING, now, 20, order=order, lead=3, shown=30)
    with two.read() as session:
        assert first.opening == opening(session, EVERYTHING, now, 20, order=order, lead=3, shown=30)
        assert first.zones == schedule_zones(session)
        assert first.ranges == ranges_matching(session, EVERYTHING)
        total = count_occurrences(session, EVERYTHING)
        pages = {p: occurrence_rows(session, EVERYTHING, p * 20, 20, order=order, total=total) for p in (0, 2)}
    again = reads.occurrences_again(two, EVERYTHING, now, 20, [2, 10_000], order=order)
    assert again.total == total and again.pages == pages  # the first page always; a page past the end never
    assert again.now_index == first.opening.now_index and again.zones == first.zones
    by_offset = reads.occurrences_page(two, EVERYTHING, 3, 20, order=order, total=total)
    assert by_offset == occurrence_rows_now(two, 3 * 20, total)
    after_full = reads.occurrences_page(two, EVERYTHING, 3, 20, order=order, total=total, before=pages[2][:20])
    assert after_full == by_offset  # read on from the page before (a keyset)
    before_next = reads.occurrences_page(two, EVERYTHING, 1, 20, order=order, total=total, after=pages[2])
    assert before_next == occurrence_rows_now(two, 20, total)  # read back from the page after


def occurrence_rows_now(ledger: Ledger, start: int, total: int) -> list[object]:
    with ledger.read() as session:
        return list(occurrence_rows(session, EVERYTHING, start, 20, order=Order.NEWEST_FIRST, total=total))


def test_the_first_occurrence_in_the_first_state_that_has_one(failed: tuple[Ledger, str]) -> None:
    ledger, occurrence_id = failed
    found = reads.first_occurrence(ledger, (S.UNKNOWN_EFFECT, S.FAILED, S.SUCCEEDED))
    assert found is not None and found.occurrence_id == occurrence_id
    assert reads.first_occurrence(ledger, (S.UNKNOWN_EFFECT,)) is None


def test_one_occurrence_in_full(failed: tuple[Ledger, str]) -> None:
    ledger, occurrence_id = failed
    found = reads.occurrence_detail(ledger, occurrence_id)
    with ledger.read() as session:
        assert found == reads.OccurrenceDetails(
            origin_of(session, occurrence_id), attempts_of(session, occurrence_id), events_of(session, occurrence_id)
        )
    assert found.attempts and found.events
    assert reads.occurrence_detail(ledger, "no-such-occurrence") is None


def test_the_queue_health_and_the_publish_outlook(failed: tuple[Ledger, str], clock: FixedClock) -> None:
    ledger, occurrence_id = failed
    now = clock.now()
    queue = reads.attention_queue(ledger, now)
    assert [i.occurrence_id for i in queue.items] == [occurrence_id]
    start = now - timedelta(days=1)
    shown = reads.health_outlook(ledger, start, now, now)
    revised = spec(task=FAILING, retry={"maxAttempts": 1}, revision=2, rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=0")
    looked = reads.publish_outlook(ledger, revised, now)
    backfill = reads.backfill_outlook(ledger, "daily-ops-summary", utc("2026-02-25T00:00:00Z"), now, now)
    with ledger.read() as session:
        assert queue.items == attention_items(session, now) and queue.zones == schedule_zones(session)
        assert shown.series == health(session, start, now, now) and shown.waiting == len(attention_ids(session)) == 1
        assert looked.diff == future_diff(session, revised, now)
        assert backfill == backfill_preview(session, "daily-ops-summary", utc("2026-02-25T00:00:00Z"), now, now)
    assert looked.published is not None and looked.published.schedule_id == "daily-ops-summary"
    assert reads.publish_outlook(ledger, spec(scheduleId="new-one"), now).published is None


def test_attempts_left_by_ended_processes(failed: tuple[Ledger, str], clock: FixedClock) -> None:
    ledger, _ = failed
    span = reads.ProcessSpan(socket.gethostname(), os.getpid(), utc("2026-03-01T00:00:00Z"), clock.now())
    with ledger.read() as session:
        expected = attempts_left_by(session, span.host, span.pid, span.since, span.until)
    assert reads.attempts_left(ledger, [span]) == expected
    assert reads.attempts_left(ledger, []) == []


def test_following_the_event_log(failed: tuple[Ledger, str], clock: FixedClock) -> None:
    ledger, _ = failed
    start = reads.events_since(ledger, None, attention=False, batch=2, max_batches=2)
    assert start.events == [] and start.attention is None and start.last_id > 0  # a new follower starts at the end
    first = reads.events_since(ledger, 0, attention=False, batch=2, max_batches=2)
    with ledger.read() as session:
        everything = events_after(session, 0, limit=10_000)
    assert first.events == everything[:4] and first.last_id == everything[3].id  # a backlog over several calls
    rest = reads.events_since(ledger, first.last_id, attention=True, batch=1000, max_batches=1)
    assert rest.events == everything[4:] and rest.last_id == everything[-1].id
    assert rest.attention is not None and len(rest.attention) == 1


def test_which_events_touch_the_attention_queue() -> None:
    def event(kind: str, **data: object) -> EventView:
        return EventView(1, utc("2026-03-02T00:00:00Z"), "s", "o", kind, dict(data))

    assert touches_attention(event("occurrence.acknowledged"))
    assert touches_attention(event("occurrence.transitioned", **{"from": "RUNNING", "to": "FAILED"}))
    assert touches_attention(event("occurrence.transitioned", **{"from": "UNKNOWN_EFFECT", "to": "SUCCEEDED"}))
    assert not touches_attention(event("occurrence.transitioned", **{"from": "DUE", "to": "RUNNING"}))
    assert not touches_attention(event("schedule.published"))


def test_the_engine_outlook_and_other_dispatchers(failed: tuple[Ledger, str], clock: FixedClock) -> None:
    ledger, _ = failed
    with ledger.read() as session:
        assert engine_outlook(ledger, "nobody") == outlook(session, "nobody")
    assert dispatcher_besides(ledger, clock, None) is None
