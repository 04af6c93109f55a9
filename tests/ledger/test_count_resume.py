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
from core.engine.plan import CHUNK_AHEAD
from core.ledger.compiled import forget_compiled
from core.ledger.db import Ledger
from core.ledger.expired import list_expired_ranges
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
    forget_compiled()


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


def _two_passes(ledger: Ledger, clock: FixedClock, walked: list[int], rule: Any, outage: timedelta) -> None:
    """Publish ``rule``, run one engine pass, then another in a new process after ``outage``;
    ``walked`` counts the second pass only."""
    with ledger.write() as session:
        publish(session, rule, clock)
    Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    _new_process()
    walked[0] = 0
    clock.advance(outage)
    Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()


def test_the_misfire_step_of_a_pass_does_not_walk_from_dtstart(
    ledger: Ledger, clock: FixedClock, walked: list[int]
) -> None:
    """Every minute since 2020, a billion times: the second pass of a new process walks
    from the stored place in the count (two days before its cursor), not six years of
    minutes from DTSTART (3.2 million times, 16 s, before)."""
    rule = counted("FREQ=MINUTELY;COUNT=1000000000", "2020-01-01T00:00:00", horizon="PT1H", maxCatchUp=2)
    _two_passes(ledger, clock, walked, rule, timedelta(minutes=1))
    assert walked[0] < 2 * 24 * 60 + 200, walked[0]
    with ledger.read() as session:
        last = occurrences(session, SID)[-1]
    # the first pass reached its horizon and a chunk beyond it (at most the horizon again)
    assert last.nominal_local == f"{NOW + H + min(CHUNK_AHEAD, H):%Y-%m-%dT%H:%M:%S}"


H = timedelta(hours=1)
BOUNDED = {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2}


@pytest.mark.parametrize(
    ("misfire", "outage", "expired_until"),
    [
        pytest.param(BOUNDED, timedelta(minutes=1), None, id="bounded_1min"),
        # the newest 2 late ones (17:43 and 17:44) are made up; every one before them expires
        pytest.param(BOUNDED, 6 * H, NOW + timedelta(hours=5, minutes=43), id="bounded_6h"),
        pytest.param({"misfirePolicy": "SKIP"}, 24 * H, NOW + timedelta(hours=23, minutes=45), id="skip_1d"),
        pytest.param({"misfirePolicy": "CATCH_UP_ALL", "catchUpWindow": "PT1H"}, 6 * H, NOW + 5 * H, id="window_6h"),
        pytest.param({"misfirePolicy": "CATCH_UP_ALL"}, 6 * H, None, id="catch_up_all_6h"),
    ],
)
def test_after_an_outage_the_misfire_step_walks_from_the_stored_count(
    ledger: Ledger,
    clock: FixedClock,
    walked: list[int],
    misfire: dict[str, Any],
    outage: timedelta,
    expired_until: datetime | None,
) -> None:
    """Every minute since 2025-09-01 (260,000 times before now): the pass after an outage
    walks the two days before its cursor and the outage a few times, whatever the policy."""
    rule = counted("FREQ=MINUTELY;COUNT=1000000000", "2025-09-01T00:00:00", horizon="PT1H", **misfire)
    _two_passes(ledger, clock, walked, rule, outage)
    minutes = int((outage + timedelta(days=2, hours=1)) / timedelta(minutes=1))
    assert walked[0] < 4 * minutes, walked[0]
    with ledger.read() as session:
        ranges = [(r.from_utc, r.to_utc) for r in list_expired_ranges(session, SID)]
        last = occurrences(session, SID)[-1]
    # A pass materializes its horizon and a chunk beyond it, at most the horizon again: the
    # first pass's rows reach NOW + 2 h, where what the outage missed begins.
    ahead = H + min(CHUNK_AHEAD, H)
    assert ranges == ([] if expired_until is None else [(NOW + ahead, expired_until)])
    assert last.nominal_local == f"{NOW + outage + ahead - timedelta(minutes=1):%Y-%m-%dT%H:%M:%S}"
