"""Business periods resumed from a stored state give the rows a walk from DTSTART gives.

Each case walks a schedule with ``businessPeriod`` from its start, stops at many
points, stores the state its periods had (through the ledger's JSON text), and
lists on from there: every row after the stop (id, status, reason, period,
instant) must be the walk's own. The cases use real calendars (US-NY, GB) and
rules whose moved runs land past the next day's, so that periods come back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from helpers import make_data
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ledger.period_resume import dump_periods, load_periods, periods_to_store
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import iter_rows
from core.recurrence.occurrence import Occurrence
from core.recurrence.periods import MAX_WINNERS, PeriodMarks, prunable_after
from core.spec.validation import parse_spec

DAY = "{nominal:%Y-%m-%d}"
WEEK = "{nominal:%G-W%V}"

CASES = {
    # New York's holidays, a run every 7 hours: the weekend's and a holiday's runs move onto the
    # next business day between that day's own runs, so a day's period comes back there.
    "us_ny_every_7h_next_day": dict(
        timeZone="America/New_York",
        rule="FREQ=HOURLY;INTERVAL=7",
        businessCalendar={"holidays": ["US-NY"]},
        holidayPolicy="NEXT_BUSINESS_DAY",
        businessPeriod=DAY,
    ),
    "us_ny_daily_week": dict(
        timeZone="America/New_York",
        rule="FREQ=DAILY;BYHOUR=9;BYMINUTE=30",
        businessCalendar={"holidays": ["US-NY"]},
        holidayPolicy="NEXT_BUSINESS_DAY",
        businessPeriod=WEEK,
    ),
    # England's holidays, moved back to the previous business day, every 5 hours.
    "gb_every_5h_previous_day": dict(
        timeZone="Europe/London",
        rule="FREQ=HOURLY;INTERVAL=5",
        businessCalendar={"holidays": ["GB"]},
        holidayPolicy="PREVIOUS_BUSINESS_DAY",
        businessPeriod=DAY,
    ),
    "gb_monthly_first_days": dict(
        timeZone="Europe/London",
        rule="FREQ=MONTHLY;BYMONTHDAY=1,2,3;BYHOUR=7",
        businessCalendar={"holidays": ["GB"]},
        holidayPolicy="NEXT_BUSINESS_DAY",
        businessPeriod="{nominal:%Y-%m}",
    ),
    # A closed week: each of its runs moves past the next day's own runs (every 11 hours).
    "closed_week_moved_past_next_day": dict(
        timeZone="UTC",
        rule="FREQ=HOURLY;INTERVAL=11",
        businessCalendar={"closed": [f"2024-07-{d:02d}" for d in range(8, 13)]},
        holidayPolicy="NEXT_BUSINESS_DAY",
        businessPeriod=DAY,
    ),
    # Every 20 minutes across New York's fall-back: the repeated hour's minutes come back.
    "fold_minutes_come_back": dict(
        timeZone="America/New_York",
        rule="FREQ=MINUTELY;INTERVAL=20",
        foldPolicy="BOTH",
        businessPeriod="{nominal:%Y-%m-%dT%H:%M}",
    ),
    # A template that names no unit repeats: every winner is kept.
    "weekday_names_repeat": dict(
        timeZone="UTC",
        rule="FREQ=HOURLY;INTERVAL=13",
        businessCalendar={"holidays": ["US-NY"]},
        holidayPolicy="NEXT_BUSINESS_DAY",
        businessPeriod="{nominal:%A}",
    ),
}
#: The cases where a period comes back after another one.
COME_BACK = {
    "us_ny_every_7h_next_day",
    "gb_every_5h_previous_day",
    "closed_week_moved_past_next_day",
    "fold_minutes_come_back",
}
START = {"fold_minutes_come_back": "2024-11-01T00:00:00"}
ROWS = 900


def _compiled(case: str) -> CompiledSchedule:
    data: dict[str, Any] = make_data(scheduleId="periods.resume", start=START.get(case, "2024-06-01T00:00:00"))
    data.update(CASES[case])
    return compile_schedule(parse_spec(data))


def _fields(row: Occurrence) -> tuple[Any, ...]:
    return (row.occurrence_id, row.position, row.status, row.reason, row.period, row.logical_slot_id)


def _walk(compiled: CompiledSchedule) -> tuple[list[Occurrence], list[Any]]:
    """The first ROWS rows from DTSTART, and after each one the state to store with a cursor there."""
    marks = PeriodMarks()
    rows, states = [], []
    for row in iter_rows(compiled, datetime(2000, 1, 1, tzinfo=UTC), marks=marks):
        rows.append(row)
        stored = periods_to_store(compiled, marks, row.position, "tz", None)
        states.append(load_periods(1, dump_periods(stored)) if stored is not None else None)
        if len(rows) == ROWS:
            return rows, states
    return rows, states


def _resumed(compiled: CompiledSchedule, state: Any, cursor: datetime, count: int) -> list[Occurrence]:
    rows = []
    for row in iter_rows(compiled, cursor, periods=state.state):
        rows.append(row)
        if len(rows) == count:
            break
    return rows


@pytest.fixture(scope="module")
def walks() -> dict[str, tuple[CompiledSchedule, list[Occurrence], list[Any]]]:
    out = {}
    for case in CASES:
        compiled = _compiled(case)
        rows, states = _walk(compiled)
        out[case] = (compiled, rows, states)
    return out


@pytest.mark.parametrize("case", sorted(COME_BACK))
def test_the_periods_come_back_in_each_case(
    walks: dict[str, tuple[CompiledSchedule, list[Occurrence], list[Any]]], case: str
) -> None:
    """The cases are what they say: a period's rows are not all together, and some rows yield to it."""
    _, rows, _ = walks[case]
    runnable = [r.period for r in rows if r.status.runnable or "business period" in (r.reason or "")]
    changes = [p for i, p in enumerate(runnable) if i == 0 or p != runnable[i - 1]]
    assert len(changes) > len(set(changes)), case
    assert any("same business period" in (r.reason or "") for r in rows)


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(list(CASES)), cut=st.integers(1, ROWS - 60))
def test_resuming_at_any_row_gives_the_walks_rows(
    walks: dict[str, tuple[CompiledSchedule, list[Occurrence], list[Any]]], case: str, cut: int
) -> None:
    compiled, rows, states = walks[case]
    state = states[cut - 1]
    assert state is not None
    cursor = rows[cut].position
    # the cursor lies after row ``cut - 1``: the next call lists from the next position on
    first = next(i for i, r in enumerate(rows) if r.position >= cursor)
    wanted = rows[first : first + 50]
    assert [_fields(r) for r in _resumed(compiled, state, cursor, len(wanted))] == [_fields(r) for r in wanted]
    assert len(state.state.winners) <= MAX_WINNERS


@pytest.mark.parametrize(
    ("template", "nominal", "floor", "gone"),
    [
        pytest.param(DAY, "2024-07-08T09:00:00", "2024-07-09T00:00:00", True, id="day_after_its_day"),
        pytest.param(DAY, "2024-07-08T09:00:00", "2024-07-08T23:59:00", False, id="day_within_its_day"),
        pytest.param(WEEK, "2024-07-12T09:00:00", "2024-07-14T23:00:00", False, id="iso_week_its_sunday"),
        pytest.param(WEEK, "2024-07-12T09:00:00", "2024-07-15T00:00:00", True, id="iso_week_next_monday"),
        pytest.param("{nominal:%Y-%m}", "2024-12-31T09:00:00", "2025-01-01T00:00:00", True, id="month_at_year_end"),
        pytest.param("{nominal:%G}", "2024-12-31T09:00:00", "2025-01-01T00:00:00", False, id="iso_year_holds_dec_31"),
        pytest.param("{nominal:%Y}", "2024-12-31T09:00:00", "2025-01-01T00:00:00", True, id="year"),
        pytest.param("{nominal:%%Y-%m-%d}", "2024-07-08T09:00:00", "2030-01-01T00:00:00", False, id="escaped_year"),
        pytest.param("{nominal:%m-%d}", "2024-07-08T09:00:00", "2030-01-01T00:00:00", False, id="no_year_repeats"),
        pytest.param("{nominal:%A}", "2024-07-08T09:00:00", "2030-01-01T00:00:00", False, id="weekday_repeats"),
        pytest.param("{nominal:%F %H}", "2024-07-08T09:10:00", "2024-07-08T10:00:00", True, id="glibc_date_hour"),
        pytest.param("{nominal:%Y-%m-%d %H:%M}", "2024-07-08T09:10:00", "2024-07-08T09:10:59", False, id="minute"),
        pytest.param(DAY, "9999-12-31T09:00:00", "9999-12-31T23:00:00", False, id="calendar_end"),
    ],
)
def test_a_period_is_forgotten_only_once_no_nominal_can_name_it(
    template: str, nominal: str, floor: str, gone: bool
) -> None:
    assert prunable_after(template)(nominal, datetime.fromisoformat(floor)) is gone


def test_a_state_that_cannot_be_read_is_not_used() -> None:
    for text in ("", "{", '{"at": "2024-01-01T00:00:00"}', '{"at": "x", "winners": []}', "[]"):
        assert load_periods(1, text) is None
    naive = '{"at": "2024-01-01T00:00:00", "tzdb": "a", "holidays": null, "winners": []}'
    assert load_periods(1, naive) is None
    assert load_periods(None, naive.replace(':00"', ':00+00:00"', 1)) is None


def test_a_state_is_used_only_for_its_revision_and_data() -> None:
    text = '{"at": "2024-01-01T00:00:00+00:00", "tzdb": "2025b", "holidays": "0.6", "winners": []}'
    stored = load_periods(3, text)
    assert stored is not None
    assert stored.usable(3, "2025b", "0.6") is stored.state
    assert stored.usable(2, "2025b", "0.6") is None
    assert stored.usable(3, "2025a", "0.6") is None
    assert stored.usable(3, "2025b", "0.7") is None


def test_a_walk_from_dtstart_keeps_few_winners() -> None:
    """A daily period over two years: only the days that can still come back are stored."""
    compiled = _compiled("us_ny_every_7h_next_day")
    marks = PeriodMarks()
    end = datetime(2026, 6, 1, tzinfo=UTC)
    for row in iter_rows(compiled, datetime(2024, 6, 1, tzinfo=UTC), marks=marks):
        if row.position >= end:  # as materialization stops
            break
    stored = periods_to_store(compiled, marks, end, "tz", None)
    assert len(marks.winners) > 700  # every day of two years was settled on the way
    assert stored is not None and len(stored.state.winners) <= 4
