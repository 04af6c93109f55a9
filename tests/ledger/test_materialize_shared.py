"""Engines that share a ledger share its materialization (docs/ledger.md, "Engines side by
side"): each materializes the schedules that hash to it, and on PostgreSQL a schedule
another engine is materializing right now is passed over, not waited for, while a
gate change still waits for both.

The engines here are in one process and their passes are called in turn, or held open
at a chosen point by a hook: what each did is read from its report and from the
ledger, never timed.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine import plan
from core.engine.engine import Engine, EngineOptions
from core.engine.presence import announce, heartbeat
from core.ledger.db import Ledger
from core.ledger.models import Event, Occurrence, Schedule
from core.ledger.publish import pause, publish
from core.ledger.states import EngineKind, ScheduleState
from core.spec.validation import parse_spec
from core.time.formats import fmt_utc

from . import utc
from .test_engines_side_by_side import _waiting_on_a_lock as waiting_on_a_lock

T0 = utc("2026-03-01T00:00:00Z")
#: Seconds to wait for a thread to reach the point aimed at.
REACH = 60.0
SCHEDULES = 24


def _publish(ledger: Ledger, count: int) -> list[str]:
    """``count`` schedules every five minutes with a horizon of an hour."""
    ids = [f"shared-{i:02d}" for i in range(count)]
    with ledger.write() as session:
        for sid in ids:
            data = {
                "schema": "scheduleSpec.v1",
                "scheduleId": sid,
                "revision": 1,
                "timeZone": "UTC",
                "kind": "interval",
                "every": "PT5M",
                "anchor": fmt_utc(T0),
                "cutoverAt": fmt_utc(T0),
                "horizon": "PT1H",
                "task": {"argv": ["/bin/true"]},
            }
            publish(session, parse_spec(data), FixedClock(T0))
    return ids


def _materialized_by_event(ledger: Ledger, after: int) -> tuple[set[str], int]:
    """The schedules with a materialization event after event id ``after``, and the last event id."""
    with ledger.read() as session:
        rows = session.execute(
            select(Event.id, Event.schedule_id).where(Event.id > after, Event.kind == "occurrences.materialized")
        ).all()
        last = session.scalar(select(func.max(Event.id))) or 0
    return {sid for _, sid in rows if sid is not None}, last


def test_engines_side_by_side_each_materialize_the_schedules_that_hash_to_them(ledger: Ledger) -> None:
    """Four announced engines, a chunk after a first fill: each pass materializes exactly the
    schedules whose id hashes to its engine's place, and together they cover all of them once."""
    clock = FixedClock(T0)
    ids = _publish(ledger, SCHEDULES)
    Engine(ledger, clock).run_once()  # the first fill: every schedule, by whoever comes first
    engine_ids = [announce(ledger, clock, EngineKind.HEADLESS) for _ in range(4)]
    engines = [Engine(ledger, clock, EngineOptions(), engine_id=eid) for eid in engine_ids]
    for engine in engines:  # a first pass looks at everything: nothing is behind yet
        assert engine.run_once().materialized == 0
    # A chunk (the horizon, an hour, here) later every schedule comes back into the sweep, 10 s
    # behind: not yet left behind by its engine (presence.STALE_AFTER), so the split applies.
    clock.advance(timedelta(hours=1, seconds=10))
    for eid in engine_ids:
        heartbeat(ledger, clock, eid)
    order = sorted(engine_ids)
    _, mark = _materialized_by_event(ledger, 0)
    taken: dict[str, set[str]] = {}
    for eid, engine in zip(engine_ids, engines, strict=True):
        report = engine.run_once()
        taken[eid], mark = _materialized_by_event(ledger, mark)
        assert report.materialized > 0
    for eid in engine_ids:
        assert taken[eid] == {sid for sid in ids if order[zlib.crc32(sid.encode()) % 4] == eid}
    assert sorted(sid for mine in taken.values() for sid in mine) == ids, "each schedule once"


def _behind_everyone(ledger: Ledger, clock: FixedClock) -> None:
    """Fill the horizons, then move a day on: every schedule needs materializing again."""
    Engine(ledger, clock).run_once()
    clock.advance(timedelta(days=1, minutes=1))


def _cursors(ledger: Ledger) -> dict[str, Any]:
    with ledger.read() as session:
        return dict(session.execute(select(Schedule.id, Schedule.cursor_utc)).all())


@contextmanager
def _held_after_first(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, threading.Event, list[str]]]:
    """Hold the first materialization transaction of a pass open after its first batch (of two
    schedules), until released: those schedules' rows stay locked by it."""
    reached, release = threading.Event(), threading.Event()
    first: list[str] = []
    real: Callable[..., Any] = plan.materialize_drafted

    def hold_once(session: Session, drafts: Any, ids: list[str]) -> Any:
        results = real(session, drafts, ids)
        if not first and threading.current_thread().name == "held":
            first.extend(result.schedule_id for result in results)
            reached.set()
            assert release.wait(REACH)
        return results

    monkeypatch.setattr(plan, "BATCH_SCHEDULES", 2)
    monkeypatch.setattr(plan, "materialize_drafted", hold_once)
    yield reached, release, first


@pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)
def test_an_engine_passes_over_a_schedule_another_is_materializing_and_does_not_wait(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Engine A's materialization is held open with one batch's schedules' rows locked; engine B's
    whole pass ends meanwhile, having materialized every other schedule and not those. Released,
    A finds the rest done, and every occurrence is in the ledger once."""
    clock = FixedClock(T0)
    ids = _publish(ledger, 6)
    _behind_everyone(ledger, clock)
    before = _cursors(ledger)
    with _held_after_first(monkeypatch) as (reached, release, first):
        held = threading.Thread(target=lambda: Engine(ledger, clock).run_once(), name="held")
        held.start()
        assert reached.wait(REACH)
        other = threading.Thread(target=lambda: Engine(ledger, clock).run_once(), name="other")
        other.start()
        other.join(REACH)
        assert not other.is_alive(), "the second engine waited for the first"
        during = _cursors(ledger)
        release.set()
        held.join(REACH)
    assert len(first) == 2
    assert [sid for sid in ids if during[sid] == before[sid]] == first, "only the held schedules were passed over"
    after = _cursors(ledger)
    assert len(set(after.values())) == 1 and all(after[sid] > before[sid] for sid in ids)
    with ledger.read() as session:
        ids_seen = session.scalars(select(Occurrence.occurrence_id)).all()
    assert len(ids_seen) == len(set(ids_seen))


@pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)
def test_a_pause_waits_for_a_materialization_in_flight_then_wins(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pause made while an engine's materialization holds a schedule's row waits for its
    commit (gate changes still run alone), then the schedule is paused with its rows in place."""
    clock = FixedClock(T0)
    _publish(ledger, 3)
    _behind_everyone(ledger, clock)
    with _held_after_first(monkeypatch) as (reached, release, first):
        held = threading.Thread(target=lambda: Engine(ledger, clock).run_once(), name="held")
        held.start()
        assert reached.wait(REACH)
        done = threading.Event()

        def pause_it() -> None:
            with ledger.write() as session:
                pause(session, first[0], clock)
            done.set()

        pausing = threading.Thread(target=pause_it)
        pausing.start()
        waiting_on_a_lock(ledger)
        assert not done.is_set(), "the pause went in while the materialization held the schedule"
        release.set()
        held.join(REACH)
        pausing.join(REACH)
    assert done.is_set()
    with ledger.read() as session:
        state = session.scalar(select(Schedule.state).where(Schedule.id == first[0]))
    assert state is ScheduleState.PAUSED
