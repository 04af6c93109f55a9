"""The first start of a new Tidemark version on a ledger (core.engine.first_start):
the engine compares the materialized future with what its code computes before it
materializes anything, records one attention item per differing schedule, keeps
every row as it is, and records its version once. The version is the engine's
option, so "0.1.0 then 0.2.0" runs without installing anything."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from code_change import an_hour_late, reword_gaps
from sqlalchemy import select
from tzdata_change import NEW_RELEASE, install_tzdata, new_york_a_week_late

from core.clock import FixedClock
from core.engine.context import EngineOptions
from core.engine.engine import Engine
from core.engine.first_start import Finding, FirstStart, shadow_new_version
from core.ledger import Ledger
from core.ledger.drift_attention import drift_attention, keep_materialized, record_drift, republish
from core.ledger.engine_version import ledger_engine_version
from core.ledger.event_types import EventKind
from core.ledger.materialize import drift, materialize_all
from core.ledger.models import Event
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState

from . import occurrences, spec

SID = "daily-ops-summary"
SHADOW = EventKind.SCHEDULE_SHADOW_DIFFERS.value


def _published(ledger: Ledger, clock: FixedClock) -> None:
    """New York (a DST gap with its reason ahead) and Paris, materialized."""
    with ledger.write() as session:
        publish(session, spec(), clock, check_task=False)
        publish(session, spec(scheduleId="in-paris", timeZone="Europe/Paris"), clock, check_task=False)
    with ledger.write() as session:
        materialize_all(session, clock)


def _version(ledger: Ledger) -> str | None:
    with ledger.read() as session:
        return ledger_engine_version(session)


def _events(ledger: Ledger, kind: str = SHADOW) -> list[tuple[str | None, dict[str, Any]]]:
    with ledger.read() as session:
        found = session.scalars(select(Event).where(Event.kind == kind).order_by(Event.id))
        return [(e.schedule_id, dict(e.data or {})) for e in found]


def _rows(ledger: Ledger) -> list[tuple[Any, ...]]:
    with ledger.read() as session:
        return [
            (o.occurrence_id, o.state, o.resolved_utc, o.position_utc, o.reason, o.engine_version)
            for o in occurrences(session)
        ]


def _start(ledger: Ledger, clock: FixedClock, version: str) -> FirstStart:
    return shadow_new_version(ledger, clock, version, FirstStart())


def test_the_first_engine_ever_records_its_version_and_compares_nothing(ledger: Ledger, clock: FixedClock) -> None:
    _published(ledger, clock)
    assert _version(ledger) is None
    state = _start(ledger, clock, "0.1.0")
    assert (state.found, state.previous, state.differing) == (Finding.FIRST, None, ())
    assert _version(ledger) == "0.1.0" and _events(ledger) == []


def test_a_newer_version_that_computes_the_same_records_itself_and_adds_no_item(
    ledger: Ledger, clock: FixedClock
) -> None:
    _published(ledger, clock)
    _start(ledger, clock, "0.1.0")
    before = _rows(ledger)
    state = _start(ledger, clock, "0.2.0")
    assert (state.found, state.previous, state.differing) == (Finding.SHADOWED, "0.1.0", ())
    assert _version(ledger) == "0.2.0" and _events(ledger) == [] and _rows(ledger) == before
    with ledger.read() as session:
        assert drift_attention(session) == []


def test_a_newer_version_that_computes_otherwise_adds_one_item_per_schedule_and_rewrites_nothing(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _published(ledger, clock)
    _start(ledger, clock, "0.1.0")
    before = _rows(ledger)
    reword_gaps(monkeypatch)
    engine = Engine(ledger, clock, EngineOptions(version="0.2.0"))
    engine.run_once()
    assert engine.context.first_start.found is Finding.SHADOWED
    assert engine.context.first_start.differing == (SID,)
    [(sid, data)] = _events(ledger)
    assert sid == SID
    assert data == {
        "engineVersion": "0.2.0",
        "fromEngineVersion": "0.1.0",
        "tzdbVersion": data["tzdbVersion"],
        "occurrences": 1,
        "differences": 1,
    }
    assert _version(ledger) == "0.2.0"
    assert set(before) <= set(_rows(ledger))  # every row as it was (the pass may add new ones)
    with ledger.read() as session:
        [item] = drift_attention(session)
    assert item.schedule_id == SID and item.new_code
    assert item.text == "Tidemark 0.2.0 computes 1 future run otherwise than 0.1.0; republish to follow"
    assert item.republish_label == "Republish under Tidemark 0.2.0"
    engine.run_once()  # later passes of the same engine: nothing more
    assert len(_events(ledger)) == 1


def test_occurrences_already_in_the_ledger_keep_their_instants_and_run_as_recorded(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _published(ledger, clock)
    _start(ledger, clock, "0.1.0")
    before = {row[0]: row for row in _rows(ledger)}
    an_hour_late(monkeypatch)
    engine = Engine(ledger, clock, EngineOptions(version="0.2.0"))
    engine.run_once()
    assert sorted(sid for sid, _ in _events(ledger)) == ["daily-ops-summary", "in-paris"]
    after = {row[0]: row for row in _rows(ledger)}
    assert {oid: after[oid] for oid in before} == before  # not one row rewritten
    with ledger.read() as session:
        first = next(o for o in occurrences(session, SID) if o.state is OccurrenceState.PLANNED)
    clock.set(first.resolved_utc)  # its recorded instant, an hour before the new code would place it
    engine.run_once()
    with ledger.read() as session:
        ran = next(o for o in occurrences(session, SID) if o.occurrence_id == first.occurrence_id)
    assert ran.state is OccurrenceState.SUCCEEDED and ran.resolved_utc == first.resolved_utc


def test_a_second_start_of_the_same_version_does_nothing(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _published(ledger, clock)
    _start(ledger, clock, "0.1.0")
    reword_gaps(monkeypatch)
    assert _start(ledger, clock, "0.2.0").differing == (SID,)
    keep_materialized(ledger, SID, clock, "the new wording is fine")
    again = _start(ledger, clock, "0.2.0")
    assert (again.found, again.differing) == (Finding.SAME, ())
    assert len(_events(ledger)) == 1
    with ledger.read() as session:
        assert drift_attention(session) == []
    [(_, kept)] = _events(ledger, EventKind.SCHEDULE_DRIFT_KEPT.value)
    assert kept["engineVersion"] == "0.2.0" and kept["note"] == "the new wording is fine"


def test_two_engines_of_the_new_version_starting_together_compare_once(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _published(ledger, clock)
    _start(ledger, clock, "0.1.0")
    reword_gaps(monkeypatch)
    states = [FirstStart(), FirstStart()]
    threads = [threading.Thread(target=shadow_new_version, args=(ledger, clock, "0.2.0", state)) for state in states]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(str(s.found) for s in states) == ["same", "shadowed"]
    assert len(_events(ledger)) == 1 and _version(ledger) == "0.2.0"


def test_an_older_engine_does_not_lower_the_version_and_says_so(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _published(ledger, clock)
    _start(ledger, clock, "0.10.0")
    reword_gaps(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="core.engine.first_start"):
        state = _start(ledger, clock, "0.9.2")
    assert (state.found, state.previous) == (Finding.OLDER, "0.10.0")
    assert _version(ledger) == "0.10.0" and _events(ledger) == []
    assert [r.getMessage() for r in caplog.records] == [
        "this is Tidemark 0.9.2; Tidemark 0.10.0 has run an engine on this ledger: its version stays recorded"
    ]


def test_republish_under_the_new_version_materializes_the_future_again(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _published(ledger, clock)
    _start(ledger, clock, "0.1.0")
    reword_gaps(monkeypatch)
    _start(ledger, clock, "0.2.0")
    result = republish(ledger, SID, clock)
    assert result.revision == 2
    with ledger.write() as session:
        materialize_all(session, clock)
    with ledger.read() as session:
        assert drift_attention(session) == []
        gap = [o for o in occurrences(session, SID) if o.state is OccurrenceState.SKIPPED_GAP and o.revision == 2]
    assert gap and all("is never on the clock" in (o.reason or "") for o in gap)


def test_a_shadow_item_under_the_installed_tz_release_is_not_doubled_by_the_drift_check(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """A new Tidemark that brings a new tz release: its shadow sees the drift too, and the
    drift check does not add a second item for the same schedule."""
    _published(ledger, clock)
    _start(ledger, clock, "0.1.0")
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()})
    assert _start(ledger, clock, "0.2.0").differing == (SID,)
    with ledger.read() as session:
        items = drift(session, clock)
    assert {i.schedule_id for i in items} == {SID}
    with ledger.write() as session:
        assert record_drift(session, clock.now(), items) == []
    with ledger.read() as session:
        [item] = drift_attention(session)
    assert (item.schedule_id, item.tzdb_version, item.engine_version) == (SID, NEW_RELEASE, "0.2.0")
