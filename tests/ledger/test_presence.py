"""Engine presence (core.engine.presence): announce, heartbeat, retire, and who
is live, on a fixed clock. Every test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from core.clock import FixedClock
from core.engine import presence
from core.engine.presence import EngineRunningError, Heartbeat, announce, heartbeat, live_engines, retire
from core.ledger.db import Ledger
from core.ledger.models import EngineKind, EnginePresence, EngineRow

from . import NOW


def live_ids(ledger: Ledger, clock: FixedClock, stale_after: timedelta = presence.STALE_AFTER) -> list[str]:
    with ledger.read() as session:
        return [e.engine_id for e in live_engines(session, clock.now(), stale_after)]


def test_announce_records_host_pid_kind_and_times(ledger: Ledger, clock: FixedClock) -> None:
    engine_id = announce(ledger, clock, "app", host="desk-1", pid=4242)
    with ledger.read() as session:
        row = session.get(EngineRow, engine_id)
        assert row is not None
        assert (row.host, row.pid, row.kind, row.state) == ("desk-1", 4242, EngineKind.APP, EnginePresence.RUNNING)
        assert row.started_at == NOW and row.last_heartbeat == NOW and row.retired_at is None
        [info] = live_engines(session, NOW)
    assert info.describe(NOW + timedelta(seconds=4)) == (
        "the desktop app's engine on desk-1 (pid 4242), last seen 4 s ago at 2026-03-01T12:00:00Z"
    )


@pytest.mark.parametrize(
    ("silence", "live"),
    [
        pytest.param(timedelta(seconds=0), True, id="just_announced"),
        pytest.param(timedelta(seconds=30), True, id="exactly_at_the_limit"),
        pytest.param(timedelta(seconds=31), False, id="one_second_past_the_limit"),
        pytest.param(timedelta(hours=5), False, id="long_dead"),
    ],
)
def test_an_engine_that_stops_beating_goes_stale(
    ledger: Ledger, clock: FixedClock, silence: timedelta, live: bool
) -> None:
    engine_id = announce(ledger, clock, EngineKind.HEADLESS)
    clock.advance(silence)
    assert (engine_id in live_ids(ledger, clock)) is live


def test_heartbeat_keeps_it_live_and_records_pause(ledger: Ledger, clock: FixedClock) -> None:
    engine_id = announce(ledger, clock, "headless")
    clock.advance(timedelta(seconds=25))
    assert heartbeat(ledger, clock, engine_id, EnginePresence.PAUSED)
    clock.advance(timedelta(seconds=25))
    assert live_ids(ledger, clock) == [engine_id]
    with ledger.read() as session:
        [info] = live_engines(session, clock.now())
        assert info.state is EnginePresence.PAUSED
        assert info.last_heartbeat == NOW + timedelta(seconds=25)
        assert presence.other_dispatcher(session, clock.now()) is None  # a paused engine dispatches nothing


def test_retire_is_final_and_idempotent(ledger: Ledger, clock: FixedClock) -> None:
    engine_id = announce(ledger, clock, "headless")
    clock.advance(timedelta(seconds=3))
    retire(ledger, clock, engine_id)
    retire(ledger, clock, engine_id)
    assert live_ids(ledger, clock) == []
    assert not heartbeat(ledger, clock, engine_id), "a retired engine does not come back by beating"
    with ledger.read() as session:
        row = session.get(EngineRow, engine_id)
        assert row is not None and row.state is EnginePresence.RETIRED and row.retired_at == NOW + timedelta(seconds=3)
    with pytest.raises(ValueError, match="retire"):
        heartbeat(ledger, clock, engine_id, EnginePresence.RETIRED)


def test_a_second_exclusive_engine_is_refused_naming_the_first(ledger: Ledger, clock: FixedClock) -> None:
    first = announce(ledger, clock, "headless", host="ops-box", pid=77)
    clock.advance(timedelta(seconds=12))
    with pytest.raises(EngineRunningError) as refused:
        announce(ledger, clock, "app", exclusive=True)
    assert refused.value.other.engine_id == first
    assert str(refused.value) == (
        "another engine already runs on this ledger: a headless engine (schedctl engine run) on ops-box "
        "(pid 77), last seen 12 s ago at 2026-03-01T12:00:00Z; stop it first, or pass --allow-second to run "
        "two dispatchers"
    )
    assert live_ids(ledger, clock) == [first], "nothing written for the refused one"
    second = announce(ledger, clock, "app", exclusive=False)
    assert set(live_ids(ledger, clock)) == {first, second}


@pytest.mark.parametrize(
    "how",
    [pytest.param("retired", id="after_the_first_retires"), pytest.param("stale", id="after_the_first_goes_stale")],
)
def test_an_exclusive_engine_starts_once_the_first_is_gone(ledger: Ledger, clock: FixedClock, how: str) -> None:
    first = announce(ledger, clock, "headless")
    if how == "retired":
        retire(ledger, clock, first)
    else:
        clock.advance(presence.STALE_AFTER + timedelta(seconds=1))
    second = announce(ledger, clock, "app", exclusive=True)
    assert live_ids(ledger, clock) == [second]


def test_old_rows_are_forgotten_on_announce(ledger: Ledger, clock: FixedClock) -> None:
    announce(ledger, clock, "headless")
    clock.advance(presence.FORGET_AFTER + timedelta(minutes=1))
    announce(ledger, clock, "app")
    with ledger.read() as session:
        assert session.scalar(select(func.count()).select_from(EngineRow)) == 1


def test_live_engines_excludes_the_asker_and_orders_by_freshness(ledger: Ledger, clock: FixedClock) -> None:
    a = announce(ledger, clock, "headless")
    clock.advance(timedelta(seconds=1))
    b = announce(ledger, clock, "headless")
    clock.advance(timedelta(seconds=1))
    me = announce(ledger, clock, "app")
    with ledger.read() as session:
        assert [e.engine_id for e in live_engines(session, clock.now(), exclude=me)] == [b, a]


def test_heartbeat_thread_beats_until_stopped(ledger: Ledger, clock: FixedClock) -> None:
    engine_id = announce(ledger, clock, "headless")
    clock.advance(timedelta(minutes=10))
    beat = Heartbeat(ledger, clock, engine_id, every=timedelta(milliseconds=10)).start()
    try:
        for _ in range(500):  # bounded: about 5 s at most
            if live_ids(ledger, clock):
                break
            time.sleep(0.01)
    finally:
        beat.stop()
    assert live_ids(ledger, clock) == [engine_id]
    assert beat.last_error is None


def test_outlook_names_the_next_due_and_counts_this_engines_tasks(ledger: Ledger, clock: FixedClock) -> None:
    from sqlalchemy import update

    from core.engine.presence import outlook
    from core.ledger.materialize import materialize_all
    from core.ledger.models import Occurrence
    from core.ledger.publish import pause, publish
    from core.ledger.states import OccurrenceState as S

    from . import spec, utc

    with ledger.read() as session:
        assert outlook(session, "me") == presence.Outlook(0, None, None)
    with ledger.write() as session:
        publish(session, spec(cutoverAt="2026-03-01T00:00:00Z"), clock)
        materialize_all(session, clock)
    with ledger.read() as session:
        first = outlook(session, "me")
    # 2026-03-01 02:30 EST is past but not dispatched yet (the engine has not run): it is next.
    assert (first.next_due_at, first.next_due_schedule) == (utc("2026-03-01T07:30:00Z"), "daily-ops-summary")
    with ledger.write() as session:
        session.execute(
            update(Occurrence).where(Occurrence.nominal_local == "2026-03-01T02:30:00").values(state=S.SUCCEEDED)
        )
        session.execute(
            update(Occurrence)
            .where(Occurrence.nominal_local == "2026-03-03T02:30:00")
            .values(state=S.RETRY_WAIT, retry_at=utc("2026-03-01T12:05:00Z"))
        )
        session.execute(
            update(Occurrence)
            .where(Occurrence.nominal_local == "2026-03-04T02:30:00")
            .values(state=S.RUNNING, lease_owner="me")
        )
        session.execute(
            update(Occurrence)
            .where(Occurrence.nominal_local == "2026-03-05T02:30:00")
            .values(state=S.RUNNING, lease_owner="someone else")
        )
    with ledger.read() as session:
        seen = outlook(session, "me")
    assert seen == presence.Outlook(1, utc("2026-03-01T12:05:00Z"), "daily-ops-summary")
    with ledger.write() as session:
        pause(session, "daily-ops-summary", clock)
    with ledger.read() as session:
        assert outlook(session, "me").next_due_at is None, "a paused schedule has nothing due"
