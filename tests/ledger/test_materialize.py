"""Materialization (invariant 1): the right rows, once each, with the cursor moving only with them."""

from __future__ import annotations

import importlib
import subprocess
import sys
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.errors import LedgerError, UnknownScheduleError
from core.identity import jitter_seconds
from core.ledger.compiled import compiled_revision
from core.ledger.db import Ledger
from core.ledger.materialize import drift, governing_segments, materialize, materialize_all, materialize_many
from core.ledger.models import Event, Occurrence, Revision, Schedule
from core.ledger.publish import disable, pause, publish, resume
from core.ledger.states import OccurrenceState as S
from core.recurrence.expand import expand
from core.time.zones import tzdb_version

from . import NOW, by_nominal, occurrences, spec, utc

SID = "daily-ops-summary"
# The package exports the function under the module's name, so fetch the module itself.
materialize_module = importlib.import_module("core.ledger.materialize")

MINUTELY: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "every-minute",
    "revision": 1,
    "timeZone": "Europe/Berlin",
    "kind": "interval",
    "every": "PT1M",
    "anchor": "2026-01-01T00:00:00Z",
    "horizon": "P7D",
    "task": {"argv": ["/bin/true"]},
}
MINUTES_IN_A_WEEK = 7 * 24 * 60


def _publish(ledger: Ledger, clock: FixedClock, *specs: Any) -> None:
    with ledger.write() as session:
        for s in specs:
            publish(session, s, clock)


def _count(ledger: Ledger, model: Any = Occurrence) -> int:
    with ledger.read() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def _cursor(ledger: Ledger, sid: str = SID) -> datetime | None:
    with ledger.read() as session:
        return session.scalar(select(Schedule.cursor_utc).where(Schedule.id == sid))


def _materialized_events(ledger: Ledger) -> list[Event]:
    with ledger.read() as session:
        return list(session.scalars(select(Event).where(Event.kind == "occurrences.materialized").order_by(Event.id)))


# --- idempotence ---------------------------------------------------------------------------


def test_materializing_twice_inserts_each_occurrence_once(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        first = materialize(session, SID, clock)
    with ledger.write() as session:
        second = materialize(session, SID, clock)
    assert (first.from_utc, first.to_utc, first.inserted) == (NOW, NOW + timedelta(days=14), 14)
    assert second.inserted == 0 and second.skipped == "already materialized that far"
    # Enumerating the same range again (the cursor put back by hand) changes nothing either.
    with ledger.write() as session:
        session.execute(update(Schedule).values(cursor_utc=NOW))
    with ledger.write() as session:
        again = materialize(session, SID, clock)
    assert again.inserted == 0 and again.to_utc == NOW + timedelta(days=14)
    assert _count(ledger) == 14
    assert len(_materialized_events(ledger)) == 1  # no event for a batch that inserted nothing


def test_two_threads_at_once_insert_each_occurrence_once(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec(MINUTELY))
    barrier = threading.Barrier(2)
    inserted: list[int] = []
    failures: list[BaseException] = []

    def work() -> None:
        try:
            barrier.wait(timeout=30)
            with ledger.write() as session:
                inserted.append(materialize(session, "every-minute", clock).inserted)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert failures == []
    assert sorted(inserted) == [0, MINUTES_IN_A_WEEK]
    assert _count(ledger) == MINUTES_IN_A_WEEK
    assert _cursor(ledger, "every-minute") == NOW + timedelta(days=7)


_WORKER = """
import sys
from datetime import datetime
from core.clock import FixedClock
from core.ledger import materialize, open_ledger

url, schedule_id, now = sys.argv[1:4]
clock = FixedClock(datetime.fromisoformat(now))
with open_ledger(url, clock) as ledger:
    print("ready", flush=True)
    sys.stdin.readline()
    with ledger.write() as session:
        print(materialize(session, schedule_id, clock).inserted, flush=True)
"""


def test_two_processes_at_once_insert_each_occurrence_once(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec(MINUTELY))
    url = ledger.engine.url.render_as_string(hide_password=False)
    command = [sys.executable, "-W", "error", "-c", _WORKER, url, "every-minute", NOW.isoformat()]
    procs = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = []
    try:
        # Both have opened the ledger before either starts: then they race.
        for p in procs:
            assert p.stdout is not None
            assert p.stdout.readline().strip() == "ready"
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outputs]
    assert sorted(int(out) for out, _ in outputs) == [0, MINUTES_IN_A_WEEK]
    assert _count(ledger) == MINUTES_IN_A_WEEK


# --- the cursor --------------------------------------------------------------------------------


def test_the_cursor_does_not_move_when_the_unit_of_work_fails(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with pytest.raises(RuntimeError), ledger.write() as session:
        assert materialize(session, SID, clock).inserted == 14
        raise RuntimeError("the engine died before committing")
    assert _cursor(ledger) == NOW
    assert _count(ledger) == 0
    assert _materialized_events(ledger) == []


def test_a_batch_counts_each_schedules_new_rows_when_some_were_there_already(ledger: Ledger, clock: FixedClock) -> None:
    """Three schedules in one batch, the rows of the middle one already in the ledger (as if
    another engine had written them and its cursor were behind): each result and event
    counts that schedule's own new rows, none of the others'."""
    ids = ["batch-a", "batch-b", "batch-c"]
    _publish(ledger, clock, *(spec(scheduleId=sid) for sid in ids))
    with ledger.write() as session:
        assert materialize(session, "batch-b", clock).inserted == 14
        session.execute(update(Schedule).where(Schedule.id == "batch-b").values(cursor_utc=NOW))
    with ledger.write() as session:
        results = materialize_many(session, ids, clock)
    assert [(r.schedule_id, r.inserted) for r in results] == [("batch-a", 14), ("batch-b", 0), ("batch-c", 14)]
    assert {sid: _cursor(ledger, sid) for sid in ids} == dict.fromkeys(ids, NOW + timedelta(days=14))
    assert [(e.schedule_id, e.data["inserted"]) for e in _materialized_events(ledger)] == [
        ("batch-b", 14),
        ("batch-a", 14),
        ("batch-c", 14),
    ]
    assert _count(ledger) == 3 * 14


def test_a_lost_compare_and_set_rolls_its_rows_back_and_tries_again(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _publish(ledger, clock, spec())
    real_insert = materialize_module._insert_counted
    rounds: list[int] = []

    def insert_then_lose_the_gate(session: Session, rows: list[dict[str, Any]], *, split: bool) -> dict[str, int]:
        n = real_insert(session, rows, split=split)
        rounds.append(sum(n.values()))
        if len(rounds) == 1:
            # As if another engine had published or gated meanwhile: the CAS must fail.
            session.execute(update(Schedule).values(gate_version=Schedule.gate_version + 1))
        return n

    monkeypatch.setattr(materialize_module, "_insert_counted", insert_then_lose_the_gate)
    with ledger.write() as session:
        result = materialize(session, SID, clock)
    assert rounds == [14, 14]  # the first round's rows were rolled back with its savepoint
    assert result.inserted == 14
    assert _count(ledger) == 14
    assert len(_materialized_events(ledger)) == 1
    assert _cursor(ledger) == NOW + timedelta(days=14)


def test_a_schedule_that_keeps_moving_gives_up_with_a_clear_error(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _publish(ledger, clock, spec())

    def always_lose(session: Session, rows: list[dict[str, Any]], *, split: bool) -> dict[str, int]:
        session.execute(update(Schedule).values(gate_version=Schedule.gate_version + 1))
        return {}

    monkeypatch.setattr(materialize_module, "_insert_counted", always_lose)
    with pytest.raises(LedgerError, match="kept moving"), ledger.write() as session:
        materialize(session, SID, clock)
    assert _cursor(ledger) == NOW


def test_materialization_is_finite_and_continues_where_it_stopped(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        materialize(session, SID, clock)
    for _ in range(3):
        clock.advance(timedelta(hours=8))
        with ledger.write() as session:
            materialize(session, SID, clock)
    assert _cursor(ledger) == NOW + timedelta(days=15)
    with ledger.read() as session:
        stored = [(o.occurrence_id, o.state.value) for o in occurrences(session, SID)]
        text = session.scalar(select(Revision.spec_json))
    assert text is not None
    expected = [
        (r.occurrence_id, "PLANNED" if r.runnable else r.status.value)
        for r in expand(compiled_revision(text), NOW, NOW + timedelta(days=15))
    ]
    assert stored == expected  # in steps == all at once


@pytest.mark.parametrize("max_rows", [1, 7, 50])
def test_a_long_run_is_cut_between_positions_and_resumes_exactly(
    ledger: Ledger, clock: FixedClock, max_rows: int
) -> None:
    # Hourly in New York with SHIFT_BY_GAP: 02:30 on the 8th lands on 03:30's instant, two rows on one position.
    _publish(ledger, clock, spec(rule="FREQ=HOURLY;BYMINUTE=30", gapPolicy="SHIFT_BY_GAP", horizon="P8D"))
    calls = 0
    while True:
        calls += 1
        with ledger.write() as session:
            result = materialize(session, SID, clock, max_rows=max_rows)
        assert result.inserted <= max_rows + 1
        if not result.more:
            break
    assert calls > 1
    assert _cursor(ledger) == NOW + timedelta(days=8)
    with ledger.read() as session:
        stored = [(o.occurrence_id, o.state.value) for o in occurrences(session, SID)]
        text = session.scalar(select(Revision.spec_json))
    assert text is not None
    expected = [
        (r.occurrence_id, "PLANNED" if r.runnable else r.status.value)
        for r in expand(compiled_revision(text), NOW, NOW + timedelta(days=8))
    ]
    assert "SKIPPED_DUPLICATE" in {state for _, state in expected}
    assert stored == expected


def test_the_next_call_goes_on_with_the_expansion_the_last_one_stopped(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An expansion restarted at a position walks two days back first; the call
    after a bounded one resumes it instead, with the same rows."""
    _publish(ledger, clock, spec(rule="FREQ=HOURLY;BYMINUTE=30", horizon="P4D"))
    starts: list[datetime] = []
    real = materialize_module.iter_rows

    def counted(compiled: Any, start: datetime, **kwargs: Any) -> Any:
        starts.append(start)
        return real(compiled, start, **kwargs)

    monkeypatch.setattr(materialize_module, "iter_rows", counted)
    materialize_module._RESUME.clear()
    with ledger.write() as session:
        first = materialize(session, SID, clock, max_rows=10)
    with ledger.write() as session:
        second = materialize(session, SID, clock, max_rows=10)
    assert first.more and second.more
    assert len(starts) == 1  # the second call resumed
    clock.advance(timedelta(hours=1))
    while True:
        with ledger.write() as session:
            if not materialize(session, SID, clock, max_rows=10).more:
                break
    assert len(starts) == 1
    with ledger.read() as session:
        stored = [o.occurrence_id for o in occurrences(session, SID)]
        text = session.scalar(select(Revision.spec_json))
    assert text is not None
    assert stored == [r.occurrence_id for r in expand(compiled_revision(text), NOW, clock.now() + timedelta(days=4))]


def test_until_bounds_a_run(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        result = materialize(session, SID, clock, until=utc("2026-03-04T00:00:00Z"))
    assert result.inserted == 2 and _cursor(ledger) == utc("2026-03-04T00:00:00Z")


# --- what gets stored ---------------------------------------------------------------------------

FALL = utc("2026-10-25T12:00:00Z")
LEAP = {"rule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "start": "2024-02-29T09:00:00", "timeZone": "Europe/London"}
MONTH_END = {"rule": "FREQ=MONTHLY;BYMONTHDAY=31", "start": "2026-01-31T09:00:00"}
Expect = dict[tuple[str, int], tuple[S, str | None]]


@pytest.mark.parametrize(
    ("overrides", "now", "until", "expected"),
    [
        pytest.param(
            {"gapPolicy": "SKIP"},
            NOW,
            None,
            {
                ("2026-03-07T02:30:00", 0): (S.PLANNED, "2026-03-07T07:30:00Z"),
                ("2026-03-08T02:30:00", 0): (S.SKIPPED_GAP, None),
                ("2026-03-09T02:30:00", 0): (S.PLANNED, "2026-03-09T06:30:00Z"),
            },
            id="spring_gap_skip",
        ),
        pytest.param(
            {"gapPolicy": "SHIFT_FORWARD"},
            NOW,
            None,
            {("2026-03-08T02:30:00", 0): (S.PLANNED, "2026-03-08T07:00:00Z")},
            id="spring_gap_shift_forward",
        ),
        pytest.param(
            {"gapPolicy": "SHIFT_BY_GAP"},
            NOW,
            None,
            {("2026-03-08T02:30:00", 0): (S.PLANNED, "2026-03-08T07:30:00Z")},
            id="spring_gap_shift_by_gap",
        ),
        pytest.param(
            {"gapPolicy": "SHIFT_BY_GAP", "rule": "FREQ=HOURLY;BYMINUTE=30", "horizon": "P8D"},
            NOW,
            None,
            {
                ("2026-03-08T01:30:00", 0): (S.PLANNED, "2026-03-08T06:30:00Z"),
                ("2026-03-08T02:30:00", 0): (S.SKIPPED_DUPLICATE, None),
                ("2026-03-08T03:30:00", 0): (S.PLANNED, "2026-03-08T07:30:00Z"),
            },
            id="hourly_shift_lands_on_a_taken_slot",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "foldPolicy": "FIRST_ONLY"},
            FALL,
            None,
            {
                ("2026-11-01T01:30:00", 0): (S.PLANNED, "2026-11-01T05:30:00Z"),
                ("2026-11-01T01:30:00", 1): (S.SKIPPED_FOLD, None),
                ("2026-11-02T01:30:00", 0): (S.PLANNED, "2026-11-02T06:30:00Z"),
            },
            id="fall_back_first_only",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "foldPolicy": "SECOND_ONLY"},
            FALL,
            None,
            {
                ("2026-11-01T01:30:00", 0): (S.SKIPPED_FOLD, None),
                ("2026-11-01T01:30:00", 1): (S.PLANNED, "2026-11-01T06:30:00Z"),
            },
            id="fall_back_second_only",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "foldPolicy": "BOTH"},
            FALL,
            None,
            {
                ("2026-11-01T01:30:00", 0): (S.PLANNED, "2026-11-01T05:30:00Z"),
                ("2026-11-01T01:30:00", 1): (S.PLANNED, "2026-11-01T06:30:00Z"),
            },
            id="fall_back_both",
        ),
        pytest.param(
            {**LEAP, "invalidDatePolicy": "OMIT"},
            NOW,
            utc("2029-01-01T00:00:00Z"),
            {("2028-02-29T09:00:00", 0): (S.PLANNED, "2028-02-29T09:00:00Z")},
            id="leap_day_omit",
        ),
        pytest.param(
            {**LEAP, "invalidDatePolicy": "BACKWARD"},
            NOW,
            utc("2029-01-01T00:00:00Z"),
            {
                ("2027-02-28T09:00:00", 0): (S.PLANNED, "2027-02-28T09:00:00Z"),
                ("2028-02-29T09:00:00", 0): (S.PLANNED, "2028-02-29T09:00:00Z"),
            },
            id="leap_day_backward",
        ),
        pytest.param(
            {**LEAP, "invalidDatePolicy": "FORWARD"},
            NOW,
            utc("2029-01-01T00:00:00Z"),
            {
                ("2027-03-01T09:00:00", 0): (S.PLANNED, "2027-03-01T09:00:00Z"),
                ("2028-02-29T09:00:00", 0): (S.PLANNED, "2028-02-29T09:00:00Z"),
            },
            id="leap_day_forward",
        ),
        pytest.param(
            {**MONTH_END, "invalidDatePolicy": "BACKWARD"},
            NOW,
            utc("2026-07-01T00:00:00Z"),
            {
                ("2026-03-31T09:00:00", 0): (S.PLANNED, "2026-03-31T13:00:00Z"),
                ("2026-04-30T09:00:00", 0): (S.PLANNED, "2026-04-30T13:00:00Z"),
                ("2026-05-31T09:00:00", 0): (S.PLANNED, "2026-05-31T13:00:00Z"),
                ("2026-06-30T09:00:00", 0): (S.PLANNED, "2026-06-30T13:00:00Z"),
            },
            id="month_end_backward",
        ),
        pytest.param(
            {**MONTH_END, "invalidDatePolicy": "OMIT"},
            NOW,
            utc("2026-07-01T00:00:00Z"),
            {
                ("2026-03-31T09:00:00", 0): (S.PLANNED, "2026-03-31T13:00:00Z"),
                ("2026-05-31T09:00:00", 0): (S.PLANNED, "2026-05-31T13:00:00Z"),
            },
            id="month_end_omit",
        ),
        pytest.param(
            {"exclude": ["2026-03-04"]},
            NOW,
            utc("2026-03-06T00:00:00Z"),
            {
                ("2026-03-02T02:30:00", 0): (S.PLANNED, "2026-03-02T07:30:00Z"),
                ("2026-03-03T02:30:00", 0): (S.PLANNED, "2026-03-03T07:30:00Z"),
                ("2026-03-04T02:30:00", 0): (S.EXCLUDED, None),
                ("2026-03-05T02:30:00", 0): (S.PLANNED, "2026-03-05T07:30:00Z"),
            },
            id="excluded_date",
        ),
    ],
)
def test_calendar_edges_materialize_the_right_states(
    ledger: Ledger, overrides: dict[str, Any], now: datetime, until: datetime | None, expected: Expect
) -> None:
    clock = FixedClock(now)
    _publish(ledger, clock, spec(**overrides))
    with ledger.write() as session:
        materialize(session, SID, clock, until=until)
    with ledger.read() as session:
        rows = by_nominal(session, SID)
    if until is not None:
        # Every stored row of these cases is listed.
        assert set(rows) == set(expected)
    for key, (state, resolved) in expected.items():
        occ = rows[key]
        assert occ.state is state, (key, occ.reason)
        assert occ.resolved_utc == (utc(resolved) if resolved else None)
        assert occ.tzdb_version == tzdb_version()
        if state is S.PLANNED:
            assert occ.logical_slot_id is not None and occ.due_at == occ.resolved_utc
        else:
            assert occ.logical_slot_id is None and occ.due_at is None and occ.reason


def test_skipped_rows_say_why(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        materialize(session, SID, clock)
    with ledger.read() as session:
        gap = by_nominal(session, SID)[("2026-03-08T02:30:00", 0)]
    assert gap.reason == (
        "02:30 does not exist on 2026-03-08 in America/New_York: clocks jump from 02:00 EST to 03:00 EDT"
    )
    assert gap.position_utc == utc("2026-03-08T07:30:00Z")


def test_jitter_delays_due_at_not_identity(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec(jitter="PT10M"))
    with ledger.write() as session:
        materialize(session, SID, clock)
    with ledger.read() as session:
        planned = [o for o in occurrences(session, SID) if o.state is S.PLANNED]
    assert planned
    for o in planned:
        assert o.resolved_utc is not None and o.due_at is not None
        assert o.due_at - o.resolved_utc == timedelta(seconds=jitter_seconds(o.occurrence_id, 600))
    assert any(o.due_at != o.resolved_utc for o in planned)


def test_interval_schedules_materialize(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec(MINUTELY, every="PT6H", horizon="P1D"))
    with ledger.write() as session:
        materialize(session, "every-minute", clock)
    with ledger.read() as session:
        rows = occurrences(session, "every-minute")
    assert [o.resolved_utc for o in rows] == [
        utc(f"2026-03-0{d}T{h:02d}:00:00Z") for d, h in ((1, 12), (1, 18), (2, 0), (2, 6))
    ]


def test_after_completion_materializes_only_the_first_appointment(ledger: Ledger, clock: FixedClock) -> None:
    first = spec(
        kind="after_completion",
        delay="PT24H",
        start="2026-03-02T09:00:00",
        rule=None,
        gapPolicy=None,
        foldPolicy=None,
    )
    _publish(ledger, clock, first)
    for _ in range(3):
        with ledger.write() as session:
            materialize(session, SID, clock)
        clock.advance(timedelta(days=5))
    with ledger.read() as session:
        rows = occurrences(session, SID)
    assert [(o.nominal_local, o.state, o.resolved_utc) for o in rows] == [
        ("2026-03-02T09:00:00", S.PLANNED, utc("2026-03-02T14:00:00Z"))
    ]


def test_a_disabled_schedule_is_left_alone_and_catches_up_on_resume(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        disable(session, SID, clock, "holiday")
    with ledger.write() as session:
        result = materialize(session, SID, clock)
    assert result.inserted == 0 and result.skipped == "the schedule is disabled"
    assert _cursor(ledger) == NOW and _count(ledger) == 0
    clock.advance(timedelta(days=3))
    with ledger.write() as session:
        resume(session, SID, clock)
        caught_up = materialize(session, SID, clock)
    # Everything missed is materialized (the misfire policy decides what runs).
    assert caught_up.from_utc == NOW and caught_up.inserted == 17


def test_a_paused_schedule_is_still_materialized(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        pause(session, SID, clock)
        assert materialize(session, SID, clock).inserted == 14


def test_materialize_all_covers_every_enabled_schedule(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec(), spec(MINUTELY, every="PT1H"), spec(scheduleId="off"))
    with ledger.write() as session:
        disable(session, "off", clock)
        results = materialize_all(session, clock)
    assert [(r.schedule_id, r.inserted) for r in results] == [("daily-ops-summary", 14), ("every-minute", 168)]


def test_an_unknown_schedule(ledger: Ledger, clock: FixedClock) -> None:
    with pytest.raises(UnknownScheduleError), ledger.write() as session:
        materialize(session, "nope", clock)


def test_a_business_period_held_by_an_older_revision_is_not_taken_twice(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec(businessPeriod="{nominal:%Y-%m-%d}"))
    with ledger.write() as session:
        materialize(session, SID, clock)
    # Revision 2 moves the run to 05:00 from 08:00Z on the 3rd, after that day's 02:30 (07:30Z).
    with ledger.write() as session:
        publish(
            session,
            spec(
                revision=2,
                rule="FREQ=DAILY;BYHOUR=5",
                businessPeriod="{nominal:%Y-%m-%d}",
                cutoverAt="2026-03-03T08:00:00Z",
            ),
            clock,
        )
        materialize(session, SID, clock)
    with ledger.read() as session:
        rows = occurrences(session, SID)
    holder = next(o for o in rows if o.revision == 1 and o.nominal_local == "2026-03-03T02:30:00")
    assert holder.state is S.PLANNED
    third = next(o for o in rows if o.revision == 2 and o.nominal_local == "2026-03-03T05:00:00")
    assert third.state is S.SKIPPED_DUPLICATE
    assert (
        third.reason
        == f"falls in the same business period (2026-03-03) as {holder.occurrence_id} of revision 1, which keeps it"
    )
    fourth = next(o for o in rows if o.revision == 2 and o.nominal_local == "2026-03-04T05:00:00")
    assert fourth.state is S.PLANNED and fourth.business_period == "2026-03-04"


def test_governing_segments_pick_the_highest_revision_in_force() -> None:
    t = [utc(f"2026-03-{d:02d}T00:00:00Z") for d in range(1, 11)]
    assert governing_segments([(1, t[0])], t[1], t[3]) == [(1, t[1], t[3])]
    assert governing_segments([(1, t[0]), (2, t[4])], t[1], t[6]) == [(1, t[1], t[4]), (2, t[4], t[6])]
    # A later revision with an earlier cutover wins from its cutover on.
    assert governing_segments([(1, t[0]), (2, t[5]), (3, t[2])], t[1], t[8]) == [(1, t[1], t[2]), (3, t[2], t[8])]
    # Nothing is governed before the first cutover.
    assert governing_segments([(1, t[5])], t[1], t[8]) == [(1, t[5], t[8])]


# --- tz database drift -------------------------------------------------------------------------


def _snapshot(ledger: Ledger) -> list[tuple[Any, ...]]:
    with ledger.read() as session:
        return [
            (o.occurrence_id, o.state.value, o.resolved_utc, o.tzdb_version, o.updated_at) for o in occurrences(session)
        ]


def test_drift_lists_future_instants_the_installed_data_moves_and_changes_nothing(
    ledger: Ledger, clock: FixedClock
) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        materialize(session, SID, clock)
    with ledger.write() as session:
        rows = by_nominal(session, SID)
        # As if resolved by an older release that had other offsets for these days.
        moved = rows[("2026-03-10T02:30:00", 0)]
        moved.resolved_utc = utc("2026-03-10T07:30:00Z")
        moved.tzdb_version = "2020a"
        unmoved = rows[("2026-03-11T02:30:00", 0)]
        unmoved.tzdb_version = "2020a"
        gap = rows[("2026-03-08T02:30:00", 0)]
        gap.tzdb_version = "2020a"
        past = rows[("2026-03-02T02:30:00", 0)]
        past.resolved_utc = utc("2026-03-02T08:30:00Z")
        past.tzdb_version = "2020a"
    clock.set(utc("2026-03-03T00:00:00Z"))  # the 2nd is history now: not reported
    before = _snapshot(ledger)
    with ledger.read() as session:
        found = drift(session, clock)
    assert [(d.nominal_local, d.stored_resolved_utc, d.current_resolved_utc) for d in found] == [
        ("2026-03-10T02:30:00", utc("2026-03-10T07:30:00Z"), utc("2026-03-10T06:30:00Z"))
    ]
    item = found[0]
    assert (item.occurrence_id, item.schedule_id, item.revision) == (moved.occurrence_id, SID, 1)
    assert (item.stored_tzdb_version, item.current_tzdb_version) == ("2020a", tzdb_version())
    assert item.state is S.PLANNED and item.current_status is not None
    assert _snapshot(ledger) == before


def test_events_record_the_materialized_batch(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, spec())
    with ledger.write() as session:
        materialize(session, SID, clock)
    [event] = _materialized_events(ledger)
    assert (event.schedule_id, event.at) == (SID, NOW)
    assert event.data == {
        "revisions": [1],
        "fromUtc": "2026-03-01T12:00:00Z",
        "toUtc": "2026-03-15T12:00:00Z",
        "inserted": 14,
        "states": {"PLANNED": 13, "SKIPPED_GAP": 1},
    }
