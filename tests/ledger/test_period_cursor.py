"""A schedule with ``businessPeriod`` resumes at its cursor with its periods' state stored
(migration 0013): a new engine process does not settle its periods from DTSTART again,
and the rows it writes are the ones a walk from DTSTART gives (both databases)."""

from __future__ import annotations

import importlib
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.ledger.compiled import compiled_revision, forget_compiled
from core.ledger.db import Ledger
from core.ledger.models import Revision, Schedule
from core.ledger.publish import publish
from core.ledger.states import FROM_STATUS, OccurrenceState
from core.recurrence.expand import expand

from . import occurrences, spec

materialize_module = importlib.import_module("core.ledger.materialize")
SID = "periods"
#: New York's holidays, a run every 7 hours since 2020: a weekend's and a holiday's runs move onto
#: the next business day between that day's own runs, so a day's period comes back there.
SINCE_2020: dict[str, Any] = {
    "scheduleId": SID,
    "rule": "FREQ=HOURLY;INTERVAL=7",
    "start": "2020-01-01T00:00:00",
    "businessCalendar": {"holidays": ["US-NY"]},
    "holidayPolicy": "NEXT_BUSINESS_DAY",
    "businessPeriod": "{nominal:%Y-%m-%d}",
    "horizon": "P10D",
    "misfirePolicy": "SKIP",
}


def _new_process() -> None:
    """Forget what this process kept of earlier expansions, as a fresh engine would."""
    materialize_module.forget_expansions()
    forget_compiled()


def _pass(ledger: Ledger, clock: FixedClock) -> None:
    Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()


def _walked_passes(ledger: Ledger, clock: FixedClock, walked: list[int], later: timedelta, **keys: Any) -> list[int]:
    """Publish, run a pass, then a pass of a new process ``later``: the times each walked."""
    with ledger.write() as session:
        publish(session, spec(**(SINCE_2020 | keys)), clock)
    counts = []
    for step in (timedelta(0), later):
        _new_process()
        clock.advance(step)
        walked[0] = 0
        _pass(ledger, clock)
        counts.append(walked[0])
    return counts


@pytest.mark.parametrize(
    ("later", "misfire"),
    [
        pytest.param(timedelta(days=3), {}, id="3_days"),
        pytest.param(timedelta(days=40), {}, id="40_days_skip"),
        # the misfire step looks for the newest two late runs among the missed ones
        pytest.param(timedelta(days=40), {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2}, id="40_days_bounded"),
    ],
)
def test_a_new_process_does_not_settle_periods_from_dtstart(
    ledger: Ledger, clock: FixedClock, walked: list[int], later: timedelta, misfire: dict[str, Any]
) -> None:
    """Six years of runs every 7 hours (7,500 times) are walked once; the next process walks from
    the period start before its cursor: the days it writes, a few times over under CATCH_UP_BOUNDED
    (the misfire step's search for the newest late runs looks back over doubling spans)."""
    first, second = _walked_passes(ledger, clock, walked, later, **misfire)
    assert first > 7_000, first
    times = (later + timedelta(days=12)) / timedelta(hours=7)  # the runs from the cursor to the new horizon
    assert second < times * (8 if misfire else 2) + 50, (first, second)
    with ledger.read() as session:
        stored = session.execute(select(Schedule.period_revision, Schedule.period_state)).one()
    assert stored[0] == 1 and stored[1] is not None and '"winners"' in stored[1]


def test_the_resumed_rows_are_a_walk_from_dtstart(ledger: Ledger, clock: FixedClock, walked: list[int]) -> None:
    _walked_passes(ledger, clock, walked, timedelta(days=40))
    with ledger.read() as session:
        text = session.scalars(select(Revision.spec_json)).one()
        stored = [o for o in occurrences(session, SID) if o.position_utc >= clock.now()]
    assert len(stored) > 30
    wanted = expand(compiled_revision(text), stored[0].position_utc, stored[-1].position_utc + timedelta(seconds=1))
    expected = [
        (r.occurrence_id, r.period, r.reason, OccurrenceState.PLANNED if r.runnable else FROM_STATUS[r.status])
        for r in wanted
    ]
    assert [(o.occurrence_id, o.business_period, o.reason, o.state) for o in stored] == expected
    assert any("same business period" in (o.reason or "") for o in stored)


@pytest.mark.parametrize(
    "column_value",
    [
        pytest.param("{not json", id="unreadable"),
        pytest.param(
            '{"at": "2026-03-01T12:00:00+00:00", "tzdb": "1999a", "holidays": null, "winners": []}', id="old_tzdb"
        ),
    ],
)
def test_a_state_that_does_not_fit_walks_from_dtstart(
    ledger: Ledger, clock: FixedClock, walked: list[int], column_value: str
) -> None:
    """A state that cannot be read, or was settled with other data, is not used: the walk starts at
    DTSTART, as before 0013, and the rows are the same."""
    _walked_passes(ledger, clock, walked, timedelta(days=3))
    with ledger.write() as session:
        session.execute(update(Schedule).values(period_state=column_value))
    _new_process()
    clock.advance(timedelta(days=3))
    walked[0] = 0
    _pass(ledger, clock)
    assert walked[0] > 7_000
    with ledger.read() as session:
        state = session.scalars(select(Schedule.period_state)).one()
    assert state is not None and state != column_value  # the pass stored a fresh one
