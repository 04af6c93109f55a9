"""The monitor's queries: attempts and events of an occurrence, the attention
queue, health series, recent results, and random-access pages. Every test runs
on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.engine.reconcile import Decision, reconcile
from core.ledger import events, occurrence_pages
from core.ledger.attention_queries import PastDecision, acknowledge, attention_ids, attention_items, past_decisions
from core.ledger.db import Ledger
from core.ledger.health_queries import health, recent_results
from core.ledger.materialize import materialize
from core.ledger.models import Attempt, Occurrence
from core.ledger.monitor_queries import attempts_of, events_of, origin_of, schedule_zones
from core.ledger.occurrence_pages import Order, first_page, occurrence_rows, occurrence_rows_after
from core.ledger.publish import publish
from core.ledger.queries import OccurrenceFilter, count_occurrences, list_occurrences
from core.ledger.states import OccurrenceState as S
from core.team.actor import Actor

from . import NOW, by_nominal, spec, utc

FAILING = {"argv": ["/bin/sh", "-c", "echo started; echo 'disk full' >&2; exit 3"], "effect": "idempotent"}
HOURLY = {"scheduleId": "hourly", "rule": "FREQ=HOURLY;BYMINUTE=0", "timeZone": "Europe/Paris", "horizon": "P10D"}


def _run(ledger: Ledger, clock: FixedClock, when: str) -> None:
    clock.set(utc(when))
    Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()


@pytest.fixture
def failed(ledger: Ledger, clock: FixedClock) -> tuple[Ledger, str]:
    """The daily schedule with a task that fails twice: one FAILED occurrence with two attempts."""
    with ledger.write() as session:
        publish(session, spec(task=FAILING, retry={"maxAttempts": 2, "initialBackoff": "PT30S"}), clock)
    _run(ledger, clock, "2026-03-02T07:31:00Z")
    _run(ledger, clock, "2026-03-02T07:32:00Z")
    with ledger.read() as session:
        occ = by_nominal(session, "daily-ops-summary")[("2026-03-02T02:30:00", 0)]
        assert occ.state is S.FAILED
        return ledger, occ.occurrence_id


def _unknown_effect(ledger: Ledger, clock: FixedClock, occurrence_id: str, finished: str, attempt: int = 1) -> None:
    """Move a DUE (or retrying) occurrence through a claim whose outcome was lost, with its attempt row."""
    at = utc(finished)
    with ledger.write() as session:
        occ = session.get(Occurrence, occurrence_id)
        assert occ is not None
        events.transition(session, occ, S.DISPATCHING, at - timedelta(minutes=1))
        occ.attempt_count = attempt
        session.add(
            Attempt(
                attempt_id=f"att-{occurrence_id[-8:]}-{attempt}",
                occurrence_id=occurrence_id,
                attempt_number=attempt,
                claim_generation=attempt,
                execution_epoch=1,
                worker_host="host-a",
                worker_pid=42,
                started_at=at - timedelta(minutes=1),
                finished_at=at,
                error_class="timeout",
                input_digest="0" * 64,
                stdout_tail="half done",
                stderr_tail="",
                outcome=S.UNKNOWN_EFFECT,
            )
        )
        events.transition(session, occ, S.UNKNOWN_EFFECT, at, "the attempt timed out and was killed")


def test_attempts_carry_every_field_of_invariant_4(failed: tuple[Ledger, str]) -> None:
    ledger, occ_id = failed
    with ledger.read() as session:
        first, second = attempts_of(session, occ_id)
    assert (first.attempt_number, second.attempt_number) == (1, 2)
    assert second.claim_generation == first.claim_generation + 1
    assert first.execution_epoch == 1 and first.worker_pid > 0 and first.worker_host
    assert (first.started_at, second.started_at) == (utc("2026-03-02T07:31:00Z"), utc("2026-03-02T07:32:00Z"))
    assert first.finished_at == first.started_at
    assert (first.exit_status, first.error_class, first.ending()) == (3, None, "exit 3")
    assert len(first.input_digest) == 64 and first.input_digest == second.input_digest
    assert (first.stdout_tail, first.stderr_tail) == ("started\n", "disk full\n")
    assert (first.outcome, second.outcome) == (S.RETRY_WAIT, S.FAILED)


def test_events_of_one_occurrence_in_order(failed: tuple[Ledger, str]) -> None:
    ledger, occ_id = failed
    with ledger.read() as session:
        found = events_of(session, occ_id)
        newest_two = events_of(session, occ_id, limit=2)
    moves = [(e.data["from"], e.data["to"]) for e in found]
    assert moves == [
        ("PLANNED", "DUE"),
        ("DUE", "DISPATCHING"),
        ("DISPATCHING", "RUNNING"),
        ("RUNNING", "RETRY_WAIT"),
        ("RETRY_WAIT", "DISPATCHING"),
        ("DISPATCHING", "RUNNING"),
        ("RUNNING", "FAILED"),
    ]
    assert all(e.occurrence_id == occ_id for e in found)
    assert newest_two == found[-2:]


def test_failed_stays_in_the_queue_until_acknowledged(failed: tuple[Ledger, str], clock: FixedClock) -> None:
    ledger, occ_id = failed
    now = utc("2026-03-02T09:32:00Z")
    with ledger.read() as session:
        assert attention_ids(session) == {occ_id}
        (item,) = attention_items(session, now)
    assert (item.state, item.since, item.age) == (S.FAILED, utc("2026-03-02T07:32:00Z"), timedelta(hours=2))
    assert item.last_attempt is not None and item.last_attempt.attempt_number == 2
    with ledger.write() as session:
        acknowledge(session, occ_id, now, note="disk replaced")
    with ledger.read() as session:
        assert attention_ids(session) == set()
        last = events_of(session, occ_id)[-1]
    assert last.data == {"action": "acknowledged", "note": "disk replaced", "state": "FAILED"}


def test_acknowledging_an_unknown_occurrence_is_refused(ledger: Ledger) -> None:
    with pytest.raises(LookupError, match="occ-nope: no such occurrence"), ledger.write() as session:
        acknowledge(session, "occ-nope", NOW)


def test_unknown_effects_come_first_by_age(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
        materialize(session, "daily-ops-summary", clock)
    with ledger.write() as session:
        rows = by_nominal(session, "daily-ops-summary")
        a, b = rows[("2026-03-02T02:30:00", 0)], rows[("2026-03-03T02:30:00", 0)]
        for occ in (a, b):
            events.transition(session, occ, S.DUE, NOW)
        ids = (a.occurrence_id, b.occurrence_id)
    _unknown_effect(ledger, clock, ids[1], "2026-03-03T07:31:00Z")
    _unknown_effect(ledger, clock, ids[0], "2026-03-02T07:31:00Z")
    with ledger.read() as session:
        items = attention_items(session, utc("2026-03-04T07:31:00Z"))
        assert attention_ids(session) == set(ids)
    assert [i.occurrence_id for i in items] == list(ids)
    assert [i.age for i in items] == [timedelta(days=2), timedelta(days=1)]
    assert items[0].last_attempt is not None and items[0].last_attempt.ending() == "timeout"


def _due_occurrence(ledger: Ledger, clock: FixedClock) -> str:
    """The daily schedule published and materialized, its 2026-03-02 02:30 occurrence made DUE."""
    with ledger.write() as session:
        publish(session, spec(), clock)
        materialize(session, "daily-ops-summary", clock)
    with ledger.write() as session:
        occ = by_nominal(session, "daily-ops-summary")[("2026-03-02T02:30:00", 0)]
        events.transition(session, occ, S.DUE, NOW)
        return occ.occurrence_id


def test_an_item_knows_its_attempts_age_apart_from_its_waiting(ledger: Ledger, clock: FixedClock) -> None:
    """The attempt started at 07:25 and was killed at 07:31; at 09:31 it has waited two hours,
    and its attempt started 2 h 06 min ago."""
    occ_id = _due_occurrence(ledger, clock)
    _unknown_effect(ledger, clock, occ_id, "2026-03-02T07:31:00Z")
    with ledger.write() as session:  # a long attempt: it started six minutes before it was killed
        attempt = session.get(Attempt, f"att-{occ_id[-8:]}-1")
        assert attempt is not None
        attempt.started_at = utc("2026-03-02T07:25:00Z")
    with ledger.read() as session:
        (item,) = attention_items(session, utc("2026-03-02T09:31:00Z"))
    assert (item.age, item.attempt_age) == (timedelta(hours=2), timedelta(hours=2, minutes=6))
    assert item.decisions == () and item.older_decisions == 0


def test_earlier_decisions_on_the_same_occurrence_come_newest_last(ledger: Ledger, clock: FixedClock) -> None:
    """Said "did not happen" twice (the retries were lost again), then it came back a third time:
    the card shows the decisions with their notes, oldest first; a bound keeps the newest."""
    occ_id = _due_occurrence(ledger, clock)
    _unknown_effect(ledger, clock, occ_id, "2026-03-02T07:31:00Z")
    clock.set(utc("2026-03-02T08:00:00Z"))
    reconcile(ledger, occ_id, Decision.NOT_HAPPENED, clock, "no mail arrived", actor=Actor("alice", "alpha"))
    _unknown_effect(ledger, clock, occ_id, "2026-03-02T08:05:00Z", attempt=2)
    clock.set(utc("2026-03-02T09:00:00Z"))
    reconcile(ledger, occ_id, Decision.NOT_HAPPENED, clock, actor=Actor("bob", "beta"))
    _unknown_effect(ledger, clock, occ_id, "2026-03-02T09:05:00Z", attempt=3)
    with ledger.read() as session:
        (item,) = attention_items(session, utc("2026-03-02T10:00:00Z"))
        kept_one = past_decisions(session, [occ_id], keep=1)
        assert past_decisions(session, ["occ-none"]) == {}
    role = "postgres" if ledger.dialect == "postgresql" else None  # who decided, with the session's role
    alice, bob = Actor("alice", "alpha", role), Actor("bob", "beta", role)
    assert item.decisions == (
        PastDecision(utc("2026-03-02T08:00:00Z"), "not-happened", "no mail arrived", alice),
        PastDecision(utc("2026-03-02T09:00:00Z"), "not-happened", None, bob),
    )
    assert item.older_decisions == 0
    assert item.last_attempt is not None and item.last_attempt.attempt_number == 3
    assert kept_one == {occ_id: ((PastDecision(utc("2026-03-02T09:00:00Z"), "not-happened", None, bob),), 1)}


def test_an_abandoned_unknown_effect_shows_the_decision_on_its_failure(ledger: Ledger, clock: FixedClock) -> None:
    occ_id = _due_occurrence(ledger, clock)
    _unknown_effect(ledger, clock, occ_id, "2026-03-02T07:31:00Z")
    clock.set(utc("2026-03-02T08:00:00Z"))
    reconcile(ledger, occ_id, Decision.ABANDON, clock, "the vendor will resend", actor=Actor("alice", "alpha"))
    with ledger.read() as session:
        (item,) = attention_items(session, utc("2026-03-02T08:30:00Z"))
    assert item.state is S.FAILED
    alice = Actor("alice", "alpha", "postgres" if ledger.dialect == "postgresql" else None)
    assert item.decisions == (PastDecision(utc("2026-03-02T08:00:00Z"), "abandon", "the vendor will resend", alice),)


@pytest.fixture
def two(ledger: Ledger, clock: FixedClock) -> Ledger:
    """The daily New York schedule (14 rows) and an hourly Paris one (240 rows), materialized."""
    with ledger.write() as session:
        publish(session, spec(), clock)
        publish(session, spec(**HOURLY), clock)
        materialize(session, "daily-ops-summary", clock)
        materialize(session, "hourly", clock)
    return ledger


def _everything(ledger: Ledger, where: OccurrenceFilter | None, order: Order) -> list[str]:
    with ledger.read() as session:
        rows = [r.occurrence_id for r in list_occurrences(session, where, limit=10_000).rows]
    return rows[::-1] if order is Order.NEWEST_FIRST else rows


FILTERS: dict[str, OccurrenceFilter | None] = {
    "all": None,
    "one_schedule": OccurrenceFilter(schedule_id="hourly"),
    "skipped_only": OccurrenceFilter(states=frozenset({S.SKIPPED_GAP})),
    "due_range": OccurrenceFilter(due_from=utc("2026-03-03T00:00:00Z"), due_to=utc("2026-03-04T00:00:00Z")),
    "text_in_reason": OccurrenceFilter(text="DOES NOT EXIST"),
    "nothing": OccurrenceFilter(text="no such words 100%_"),
}


@pytest.mark.parametrize("order", list(Order), ids=[o.value for o in Order])
@pytest.mark.parametrize("name", list(FILTERS))
def test_pages_at_start_middle_and_end_match_the_full_list(two: Ledger, name: str, order: Order) -> None:
    where = FILTERS[name]
    full = _everything(two, where, order)
    with two.read() as session:
        total = count_occurrences(session, where)
        assert total == len(full)
        for start in (0, total // 2 - 3, max(total - 7, 0)):
            got = [r.occurrence.occurrence_id for r in occurrence_rows(session, where, max(start, 0), 7, order=order)]
            assert got == full[max(start, 0) : max(start, 0) + 7], start
        assert occurrence_rows(session, where, total, 7, order=order) == []


def test_filter_counts(two: Ledger) -> None:
    with two.read() as session:
        counts = {name: count_occurrences(session, f) for name, f in FILTERS.items()}
    # 14 daily rows (one a gap) and 240 hourly ones; Paris has no change in March's first ten days.
    assert counts == {
        "all": 254,
        "one_schedule": 240,
        "skipped_only": 1,
        "due_range": 25,
        "text_in_reason": 1,
        "nothing": 0,
    }


@pytest.mark.parametrize("one_read", [True, False], ids=["one_read", "count_then_page"])
@pytest.mark.parametrize("name", list(FILTERS))
def test_first_page_gives_the_count_and_the_top_rows(
    two: Ledger, name: str, one_read: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not one_read:
        monkeypatch.setattr(occurrence_pages, "ONE_READ_LIMIT", 0)
    where = FILTERS[name]
    full = _everything(two, where, Order.NEWEST_FIRST)
    with two.read() as session:
        total, rows = first_page(session, where, 3)
    assert (total, [r.occurrence.occurrence_id for r in rows]) == (len(full), full[:3])


def _positions(ledger: Ledger, ids: list[str]) -> list[Any]:
    with ledger.read() as session:
        found = {o.occurrence_id: o.position_utc for o in session.scalars(select(Occurrence))}
    return [found[i] for i in ids]


#: Where "now" falls among the two schedules' rows (2026-03-01 12:00Z to 03-11 11:00Z).
NOWS = {
    "before_everything": utc("2026-02-01T00:00:00Z"),
    "on_a_row": utc("2026-03-04T10:00:00Z"),
    "between_rows": utc("2026-03-04T10:30:00Z"),
    "after_everything": utc("2026-04-01T00:00:00Z"),
}


@pytest.mark.parametrize("order", list(Order), ids=[o.value for o in Order])
@pytest.mark.parametrize("when", list(NOWS))
@pytest.mark.parametrize("name", ["all", "one_schedule", "text_in_reason", "skipped_only"])
def test_the_table_opens_around_now(two: Ledger, name: str, when: str, order: Order) -> None:
    """The opening's pages are slices of the full order; above now's index the rows are
    later than now (newest first) or not (oldest first), below it the others."""
    where, now = FILTERS[name], NOWS[when]
    full = _everything(two, where, order)
    positions = _positions(two, full)
    with two.read() as session:
        found = occurrence_pages.opening(session, where, now, 10, order=order, lead=3, shown=25)
    assert found.total == len(full)
    index = found.now_index
    later = order is Order.NEWEST_FIRST
    assert all((p > now) is later for p in positions[:index])
    assert all((p > now) is not later for p in positions[index:])
    top = found.first_row(3)
    assert top == max(0, min(index - 3, len(full) - 1))
    assert full, name
    assert sorted(found.pages) == list(range(top // 10, (min(len(full), top + 25) - 1) // 10 + 1))
    for page, rows in found.pages.items():
        assert [r.occurrence.occurrence_id for r in rows] == full[page * 10 : page * 10 + 10]


def test_now_index_counts_the_rows_after_now(two: Ledger) -> None:
    """After 2026-03-04 10:30Z come 169 hourly Paris rows (03-04 11:00Z to 03-11 11:00Z) and 11 daily
    New York ones (03-05 to 03-15, the skipped 03-08 included): 180 of 254."""
    with two.read() as session:
        later = occurrence_pages.later_than(session, None, NOWS["between_rows"])
        total = count_occurrences(session)
    assert (total, later) == (254, 180)
    assert occurrence_pages.now_index(total, later, Order.NEWEST_FIRST) == 180
    assert occurrence_pages.now_index(total, later, Order.OLDEST_FIRST) == 74


def test_keyset_continues_where_a_page_ended(two: Ledger) -> None:
    full = _everything(two, None, Order.NEWEST_FIRST)
    with two.read() as session:
        page = occurrence_rows(session, None, 100, 10, total=len(full))
        after = occurrence_rows_after(session, None, page[-1].key, 10)
        before = occurrence_rows_after(session, None, page[0].key, 10, before=True)
    assert [r.occurrence.occurrence_id for r in after] == full[110:120]
    assert [r.occurrence.occurrence_id for r in before] == full[90:100]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.integers(0, 260), limit=st.integers(1, 120), newest=st.booleans())
def test_any_window_is_the_slice_of_the_full_order(two: Ledger, start: int, limit: int, newest: bool) -> None:
    order = Order.NEWEST_FIRST if newest else Order.OLDEST_FIRST
    full = _everything(two, None, order)
    with two.read() as session:
        got = [r.occurrence.occurrence_id for r in occurrence_rows(session, None, start, limit, order=order)]
    assert got == full[start : start + limit]


def test_ties_across_schedules_are_ordered_by_id(ledger: Ledger, clock: FixedClock) -> None:
    """Two schedules with the same instants and wall times: the id decides, the same way on every path."""
    with ledger.write() as session:
        for sid in ("hourly", "hourly-twin"):
            publish(session, spec(**{**HOURLY, "scheduleId": sid, "horizon": "P1D"}), clock)
            materialize(session, sid, clock)
    full = _everything(ledger, None, Order.NEWEST_FIRST)
    assert len(full) == 48
    with ledger.read() as session:
        pages = [occurrence_rows(session, None, start, 5, total=48) for start in range(0, 48, 5)]
        after = occurrence_rows_after(session, None, pages[1][-1].key, 7)
    assert [r.occurrence.occurrence_id for page in pages for r in page] == full
    assert [r.occurrence.occurrence_id for r in after] == full[10:17]


def test_rows_carry_their_last_attempt(failed: tuple[Ledger, str]) -> None:
    ledger, occ_id = failed
    with ledger.read() as session:
        rows = occurrence_rows(session, OccurrenceFilter(states=frozenset({S.FAILED})), 0, 10)
    assert [r.occurrence.occurrence_id for r in rows] == [occ_id]
    assert rows[0].last_attempt is not None and rows[0].last_attempt.attempt_number == 2


def test_health_series(failed: tuple[Ledger, str]) -> None:
    ledger, occ_id = failed
    start, end = utc("2026-03-02T06:00:00Z"), utc("2026-03-02T10:00:00Z")
    with ledger.read() as session:
        h = health(session, start, end, utc("2026-03-02T09:32:00Z"))
    assert h.buckets == tuple(start + timedelta(hours=i) for i in range(4))
    assert dict(h.attempts) == {"FAILED": (0, 1, 0, 0), "RETRY_WAIT": (0, 1, 0, 0)}
    # Due 07:30, the first attempt started 07:31 (the retry is not a due-to-start delay).
    assert [(d.occurrence_id, d.seconds) for d in h.delays] == [(occ_id, 60.0)]
    assert h.misfires == (0, 0, 0, 0)
    # Waiting since 07:32: nothing at 07:00, 28 min at 08:00, then 1 h 28 min, 2 h 28 min.
    assert h.oldest_unresolved == (None, 28 * 60.0, 88 * 60.0, 148 * 60.0)
    assert h.oldest_unresolved_now == 120 * 60.0


def test_health_counts_misfires_by_due_hour(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(**HOURLY, misfirePolicy="SKIP"), clock)
    _run(ledger, clock, "2026-03-01T15:30:00Z")  # 12:00 (the cutover itself) to 15:00 were missed
    with ledger.read() as session:
        h = health(session, NOW, NOW + timedelta(hours=4), clock.now())
    assert h.misfires == (1, 1, 1, 1)
    assert dict(h.attempts) == {}


def test_health_refuses_an_empty_range(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="end after it starts"), ledger.read() as session:
        health(session, NOW, NOW, NOW)


def test_recent_results_newest_last(failed: tuple[Ledger, str], clock: FixedClock) -> None:
    ledger, occ_id = failed
    _run(ledger, clock, "2026-03-03T07:31:00Z")
    with ledger.read() as session:
        marks = recent_results(session)["daily-ops-summary"]
        one = recent_results(session, limit=1)["daily-ops-summary"]
    assert [m.state for m in marks] == [S.FAILED, S.RETRY_WAIT]
    assert marks[0].occurrence_id == occ_id
    assert one == marks[-1:]


def test_origin_and_zones(two: Ledger) -> None:
    with two.read() as session:
        gap = OccurrenceFilter(states=frozenset({S.SKIPPED_GAP}))
        occ_id = occurrence_rows(session, gap, 0, 1)[0].key.occurrence_id
        origin = origin_of(session, occ_id)
        zones = schedule_zones(session)
        assert origin_of(session, "occ-nope") is None
    assert zones == {"daily-ops-summary": "America/New_York", "hourly": "Europe/Paris"}
    assert origin is not None
    assert (origin.time_zone, origin.rule, origin.occurrence.nominal_local) == (
        "America/New_York",
        "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        "2026-03-08T02:30:00",
    )
    expected: dict[str, Any] = {"gapPolicy": "SKIP", "foldPolicy": "FIRST_ONLY", "misfirePolicy": "CATCH_UP_BOUNDED"}
    assert expected.items() <= dict(origin.policies).items()
    assert origin.task["argv"] == ["/bin/true"]
