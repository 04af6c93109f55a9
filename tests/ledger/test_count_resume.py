"""A rule with COUNT resumes from the schedule's cursor with its place in the count
stored, instead of counting again from DTSTART on every pass (both databases)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest
from dateutil import rrule as du
from sqlalchemy import select

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.ledger.compiled import compiled_revision
from core.ledger.db import Ledger
from core.ledger.materialize import materialize
from core.ledger.models import Schedule
from core.ledger.publish import publish

from . import NOW, occurrences, spec

materialize_module = importlib.import_module("core.ledger.materialize")
SID = "counted"


def counted(rule: str, start: str, **more: Any) -> Any:
    return spec(
        scheduleId=SID, timeZone="UTC", rule=rule, start=start, gapPolicy="SKIP", foldPolicy="FIRST_ONLY", **more
    )


def _new_process() -> None:
    """Forget what this process kept of earlier expansions, as a fresh engine would."""
    materialize_module._RESUME.clear()
    compiled_revision.cache_clear()


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times dateutil produced, all rules together (one number, reset by hand)."""
    seen = [0]
    original = du.rrule._iter

    def counting(self: du.rrule) -> Iterator[datetime]:
        for when in original(self):
            seen[0] += 1
            yield when

    monkeypatch.setattr(du.rrule, "_iter", counting)
    return seen


def test_the_count_is_resumed_across_passes_and_ends_exactly(ledger: Ledger, clock: FixedClock) -> None:
    # 2,000 times every 7 minutes from a start five days before now: passes of 300 rows each.
    start = NOW - timedelta(days=5)
    with ledger.write() as session:
        publish(session, counted("FREQ=MINUTELY;INTERVAL=7;COUNT=2000", f"{start:%Y-%m-%dT%H:%M:%S}"), clock)
    inserted = []
    for _ in range(8):  # the clock moves past the end of the count meanwhile
        _new_process()
        clock.advance(timedelta(days=1))
        with ledger.write() as session:
            inserted.append(materialize(session, SID, clock, max_rows=300).inserted)
    expected = list(du.rrule(du.MINUTELY, interval=7, count=2000, dtstart=start.replace(tzinfo=None)))
    with ledger.read() as session:
        rows = occurrences(session, SID)
        stored = session.scalars(select(Schedule).where(Schedule.id == SID)).one()
        hint = (stored.count_revision, stored.count_nominal, stored.count_index)
    # Rows start at the cutover (publish time, NOW): the n-th of them is dateutil's n-th from there.
    wanted = [d for d in expected if d >= NOW.replace(tzinfo=None)]
    assert [r.nominal_local for r in rows] == [d.isoformat() for d in wanted]
    assert rows[-1].nominal_local == expected[-1].isoformat()  # the 2,000th, and nothing after it
    assert inserted[:3] == [300, 300, 300] and inserted[-1] == 0
    assert hint[0] == 1 and hint[1] is not None and hint[2] is not None
    assert expected[hint[2]].isoformat() == hint[1]


def test_a_later_pass_does_not_walk_from_dtstart(ledger: Ledger, clock: FixedClock, walked: list[int]) -> None:
    # Every minute since 2025-09-01, a billion times: half a year of minutes before the cutover.
    with ledger.write() as session:
        publish(session, counted("FREQ=MINUTELY;COUNT=1000000000", "2025-09-01T00:00:00", horizon="PT2H"), clock)
    with ledger.write() as session:
        first = materialize(session, SID, clock)
    assert first.inserted == 120
    _new_process()
    walked[0] = 0
    clock.advance(timedelta(hours=1))
    with ledger.write() as session:
        second = materialize(session, SID, clock)
    assert second.inserted == 60
    # From the stored position (two days before the cursor): a few thousand times, not 260,000.
    assert walked[0] < 10_000, walked[0]
    with ledger.read() as session:
        last = occurrences(session, SID)[-1]
        index = session.scalars(select(Schedule.count_index).where(Schedule.id == SID)).one()
    minutes = int((NOW + timedelta(hours=3) - datetime(2025, 9, 1, tzinfo=NOW.tzinfo)) / timedelta(minutes=1))
    assert last.nominal_local == f"{NOW + timedelta(hours=3) - timedelta(minutes=1):%Y-%m-%dT%H:%M:%S}"
    assert index is not None and minutes - 2 * 24 * 60 - 2 <= index <= minutes


def test_a_rule_without_count_keeps_no_position(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, counted("FREQ=HOURLY", "2026-01-01T00:00:00"), clock)
    with ledger.write() as session:
        materialize(session, SID, clock)
    with ledger.read() as session:
        stored = session.scalars(select(Schedule).where(Schedule.id == SID)).one()
    assert (stored.count_revision, stored.count_nominal, stored.count_index) == (None, None, None)


def test_the_first_pass_walks_from_dtstart_outside_the_write_lock(
    ledger: Ledger, clock: FixedClock, walked: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A COUNT rule just published has no stored place in its count: the engine finds it
    before its write transactions, which then walk only what they write."""
    with ledger.write() as session:
        publish(session, counted("FREQ=MINUTELY;COUNT=1000000000", "2025-09-01T00:00:00", horizon="PT2H"), clock)
    _new_process()
    in_writes = [0]
    original_write = Ledger.write

    @contextmanager
    def counting_write(self: Ledger, *args: Any, **kwargs: Any) -> Iterator[Any]:
        before = walked[0]
        with original_write(self, *args, **kwargs) as session:
            yield session
        in_writes[0] += walked[0] - before

    monkeypatch.setattr(Ledger, "write", counting_write)
    walked[0] = 0
    Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    assert walked[0] > 200_000  # the walk from DTSTART happened (half a year of minutes) ...
    assert in_writes[0] < 10_000, in_writes[0]  # ... but not while holding the write lock
    with ledger.read() as session:
        rows = occurrences(session, SID)
        index = session.scalars(select(Schedule.count_index).where(Schedule.id == SID)).one()
    assert rows and rows[0].nominal_local == f"{NOW:%Y-%m-%dT%H:%M:%S}"
    minutes = int((NOW + timedelta(hours=2) - datetime(2025, 9, 1, tzinfo=NOW.tzinfo)) / timedelta(minutes=1))
    assert index is not None and minutes - 2 * 24 * 60 - 2 <= index <= minutes
