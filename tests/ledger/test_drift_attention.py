"""Drift becomes a decision (core.ledger.drift_attention, core.engine.drift_check): when a
new tz release would move materialized future runs, the engine leaves them as they
are, records it once, and the schedule waits in Needs attention until a person keeps
them or republishes under the new release. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from tzdata_change import NEW_RELEASE, install_tzdata, new_york_a_week_late

from core.clock import FixedClock
from core.engine.drift_check import DRIFT_EVERY, DriftWatch, check_drift
from core.engine.engine import Engine
from core.ledger import Ledger
from core.ledger.drift_attention import (
    NoDriftError,
    attention_key,
    drift_attention,
    keep_materialized,
    republish,
    republish_outlook,
)
from core.ledger.event_types import EventKind
from core.ledger.materialize import drift, materialize_all
from core.ledger.models import Event
from core.ledger.monitor_reads import attention_queue, events_since, republish_preview
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState

from . import occurrences, spec

SID = "daily-ops-summary"
FOUND = EventKind.SCHEDULE_DRIFT_FOUND.value


def _published(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock, check_task=False)
        publish(session, spec(scheduleId="in-paris", timeZone="Europe/Paris"), clock, check_task=False)
    with ledger.write() as session:
        materialize_all(session, clock)


def _events(ledger: Ledger, kind: str) -> list[dict[str, Any]]:
    with ledger.read() as session:
        return [dict(e.data or {}) for e in session.scalars(select(Event).where(Event.kind == kind).order_by(Event.id))]


def _instants(ledger: Ledger) -> list[tuple[str, Any, Any]]:
    with ledger.read() as session:
        return [(o.occurrence_id, o.state, o.resolved_utc) for o in occurrences(session, SID)]


@pytest.fixture
def drifted(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Ledger:
    """A ledger materialized under the real tzdata, read under a release that moves New York's change a week."""
    _published(ledger, clock)
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()})
    return ledger


def test_the_engine_records_drift_once_and_moves_nothing(drifted: Ledger, clock: FixedClock) -> None:
    before = _instants(drifted)
    engine = Engine(drifted, clock)
    engine.run_once()
    assert _instants(drifted)[: len(before)] == before  # the materialized runs keep their instants
    [found] = _events(drifted, FOUND)
    # 03-08 leaves its gap, 03-09..03-14 move an hour, 03-15 falls into the new gap.
    assert found == {"tzdbVersion": NEW_RELEASE, "fromTzdb": ["2026f"], "occurrences": 8, "largestShift": 3600}
    with drifted.read() as session:
        [item] = drift_attention(session)
    assert item.schedule_id == SID
    assert item.text == f"tzdata {NEW_RELEASE} moves 8 future runs by up to 1 h; republish to follow"
    assert item.republish_label == f"Republish under {NEW_RELEASE}"
    # Within the hour the engine does not look again; after it, it looks and says nothing new.
    clock.advance(DRIFT_EVERY / 2)
    engine.run_once()
    clock.advance(DRIFT_EVERY)
    engine.run_once()
    assert len(_events(drifted, FOUND)) == 1


def test_the_check_runs_once_an_hour_of_clock_time(drifted: Ledger, clock: FixedClock) -> None:
    watch = DriftWatch()
    assert check_drift(drifted, clock, watch) == [SID]
    clock.advance(DRIFT_EVERY - timedelta(seconds=1))
    assert check_drift(drifted, clock, watch) is None  # not looked
    clock.advance(timedelta(seconds=1))
    assert check_drift(drifted, clock, watch) == []  # looked: the same drift persists
    assert check_drift(drifted, clock, DriftWatch(), hold={SID}) == []  # a held schedule is left out


def test_keep_as_materialized_takes_the_item_away_until_a_newer_release(
    drifted: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    check_drift(drifted, clock, DriftWatch())
    before = _instants(drifted)
    clock.advance(timedelta(minutes=5))
    kept = keep_materialized(drifted, SID, clock, note="the law is not in force yet")
    assert kept.occurrences == 8
    assert _events(drifted, EventKind.SCHEDULE_DRIFT_KEPT.value) == [
        {"tzdbVersion": NEW_RELEASE, "occurrences": 8, "note": "the law is not in force yet"}
    ]
    with drifted.read() as session:
        assert drift_attention(session) == []
    assert _instants(drifted) == before
    clock.advance(DRIFT_EVERY)
    assert check_drift(drifted, clock, DriftWatch()) == []  # kept: not raised again
    with pytest.raises(NoDriftError, match="daily-ops-summary: no drift waits for a decision"):
        keep_materialized(drifted, SID, clock)
    # A newer release that moves them again raises it again.
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()}, release="2099b")
    assert check_drift(drifted, clock, DriftWatch()) == [SID]
    with drifted.read() as session:
        assert [i.tzdb_version for i in drift_attention(session)] == ["2099b"]


def test_republish_shows_the_future_first_then_follows_the_new_release(drifted: Ledger, clock: FixedClock) -> None:
    check_drift(drifted, clock, DriftWatch())
    clock.advance(timedelta(minutes=5))
    with drifted.read() as session:
        item, diff = republish_outlook(session, SID, clock.now())
    assert item.occurrences == 8
    # The diff shows the runs as materialized against the new release's: 03-09..03-14 an hour
    # later, 03-08 out of its old gap, 03-15 into the new one.
    assert [(m.before.nominal_local[:10], m.shift) for m in diff.moves] == [
        (f"2026-03-{day:02d}", timedelta(hours=1)) for day in range(9, 15)
    ]
    assert [a.nominal_local[:10] for a in diff.appear] == ["2026-03-08"]
    assert [v.nominal_local[:10] for v in diff.vanish] == ["2026-03-15"]
    result = republish(drifted, SID, clock)
    assert (result.revision, result.cutover_at, result.tzdb_version) == (2, clock.now(), NEW_RELEASE)
    with drifted.read() as session:
        assert drift_attention(session) == []
    with drifted.write() as session:
        materialize_all(session, clock)
    with drifted.read() as session:
        assert drift(session, clock) == []
        live = {
            o.nominal_local[:10]: (o.state, o.resolved_utc)
            for o in occurrences(session, SID)
            if o.revision == 2 and o.state is not OccurrenceState.CANCELLED
        }
    assert live["2026-03-09"][1] is not None and live["2026-03-09"][1].hour == 7  # EST under the new release
    assert live["2026-03-15"][0] is OccurrenceState.SKIPPED_GAP
    assert check_drift(drifted, clock, DriftWatch()) == []
    with pytest.raises(NoDriftError):
        republish(drifted, SID, clock)


def test_nothing_drifts_under_the_release_that_materialized(ledger: Ledger, clock: FixedClock) -> None:
    _published(ledger, clock)
    assert check_drift(ledger, clock, DriftWatch()) == []
    with ledger.read() as session:
        assert drift_attention(session) == []
    with pytest.raises(NoDriftError):
        keep_materialized(ledger, SID, clock)


def test_the_monitor_reads_the_drifted_schedule_with_the_queue(drifted: Ledger, clock: FixedClock) -> None:
    start = events_since(drifted, None, attention=True, batch=100, max_batches=1)
    assert start.attention == frozenset()
    check_drift(drifted, clock, DriftWatch())
    after = events_since(drifted, start.last_id, attention=False, batch=100, max_batches=1)
    assert after.attention == frozenset({attention_key(SID)})  # a drift event makes the queue read again
    queue = attention_queue(drifted, clock.now())
    assert (queue.items, [d.schedule_id for d in queue.drifts], queue.count) == ([], [SID], 1)
    item, diff = republish_preview(drifted, SID, clock.now())
    assert item == queue.drifts[0] and len(diff.moves) == 6
    keep_materialized(drifted, SID, clock)
    kept = events_since(drifted, after.last_id, attention=False, batch=100, max_batches=1)
    assert kept.attention == frozenset() and attention_queue(drifted, clock.now()).count == 0
