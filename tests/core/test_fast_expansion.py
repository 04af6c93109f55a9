"""The fast path (date arithmetic for DAILY, WEEKLY and MONTHLY rules at fixed times, and HOURLY and
MINUTELY ones whose INTERVAL divides the day) gives the
general path's rows, row for row: random rules in the zones whose clocks misbehave most, under
every gap, fold and invalid-date policy, from random points; and it never walks dateutil's rrule."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import SpecError
from core.recurrence import expand
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.fast import _paired, _second_readings, fast_nominals, fast_rule, fast_walls
from core.recurrence.occurrence import Occurrence
from core.spec.validation import parse_spec

#: Lord Howe (half-hour DST), Troll (+2 h DST from +0), Apia (the day skipped on 2011-12-30),
#: Chatham (+12:45/+13:45), New York, and Kolkata, which has no DST.
ZONES = [
    "Australia/Lord_Howe",
    "Antarctica/Troll",
    "Pacific/Apia",
    "Pacific/Chatham",
    "America/New_York",
    "Asia/Kolkata",
]
#: Starts near each zone's oddities: Apia's lost day, Lord Howe's and Chatham's changes, a leap day.
STARTS = [
    datetime(2011, 12, 25, 0, 0),
    datetime(2011, 12, 29, 23, 30),
    datetime(2026, 4, 4, 1, 45),
    datetime(2026, 9, 27, 2, 0),
    datetime(2024, 2, 29, 2, 30),
    datetime(2026, 1, 31, 9, 0),
    datetime(2026, 10, 4, 2, 15),
]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
ROWS = 120


def _rows(compiled: CompiledSchedule, start: datetime | None, *, fast: bool) -> list[Occurrence]:
    if fast:
        return list(itertools.islice(expand.iter_rows(compiled, start), ROWS))
    with mock.patch.object(expand, "fast_rule", lambda compiled: None):
        return list(itertools.islice(expand.iter_rows(compiled, start), ROWS))


@st.composite
def rules(draw: st.DrawFn) -> str:
    freq = draw(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "HOURLY", "MINUTELY"]))
    parts = [f"FREQ={freq}"]
    numbers = st.lists
    if freq in ("HOURLY", "MINUTELY") and draw(st.booleans()):  # those that divide the day and a few that do not
        parts.append(f"INTERVAL={draw(st.sampled_from([1, 2, 3, 5, 7, 8, 12, 15, 45, 90, 360]))}")
    elif draw(st.booleans()):
        parts.append(f"INTERVAL={draw(st.integers(1, 5))}")
    if draw(st.booleans()):
        hours = draw(numbers(st.sampled_from([0, 1, 2, 3, 9, 12, 23]), min_size=1, max_size=3, unique=True))
        parts.append("BYHOUR=" + ",".join(map(str, hours)))
    if draw(st.booleans()):
        minutes = draw(numbers(st.sampled_from([0, 15, 30, 45, 59]), min_size=1, max_size=2, unique=True))
        parts.append("BYMINUTE=" + ",".join(map(str, minutes)))
    if draw(st.booleans()):
        parts.append(f"BYSECOND={draw(st.sampled_from([0, 30]))}")
    if (freq != "MONTHLY" or draw(st.booleans())) and draw(st.booleans()):
        parts.append("BYDAY=" + ",".join(draw(numbers(st.sampled_from(DAYS), min_size=1, max_size=4, unique=True))))
    if freq != "WEEKLY" and draw(st.booleans()):
        days = draw(numbers(st.sampled_from([1, 2, 15, 28, 29, 30, 31, -1, -2]), min_size=1, max_size=3, unique=True))
        parts.append("BYMONTHDAY=" + ",".join(map(str, days)))
    if draw(st.booleans()):
        parts.append("BYMONTH=" + ",".join(map(str, draw(numbers(st.integers(1, 12), min_size=1, max_size=4)))))
    if freq == "WEEKLY" and draw(st.booleans()):
        parts.append(f"WKST={draw(st.sampled_from(DAYS))}")
    if draw(st.integers(0, 4)) == 0:
        parts.append(f"UNTIL={draw(st.sampled_from(['20120105', '20270101T020000', '20261005T000000Z']))}")
    return ";".join(dict.fromkeys(parts))


def _spec(rule: str, zone: str, start: datetime, **more: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "fast",
        "revision": 3,
        "timeZone": zone,
        "rule": rule,
        "start": start.isoformat(),
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        **more,
    }


def _divides_the_day(rule: str) -> bool:
    parts = dict(part.split("=") for part in rule.split(";"))
    steps = {"HOURLY": 24, "MINUTELY": 24 * 60}.get(parts["FREQ"])
    return steps is None or steps % int(parts.get("INTERVAL", "1")) == 0


#: A rule in a zone from a start, under a gap and a fold policy.
SCHEDULES = {
    "rule": rules(),
    "zone": st.sampled_from(ZONES),
    "start": st.sampled_from(STARTS),
    "gap": st.sampled_from(["SKIP", "SHIFT_FORWARD", "SHIFT_BY_GAP"]),
    "fold": st.sampled_from(["FIRST_ONLY", "SECOND_ONLY", "BOTH"]),
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    **SCHEDULES,
    invalid=st.sampled_from(["OMIT", "BACKWARD", "FORWARD"]),
    later=st.sampled_from([None, timedelta(0), timedelta(days=3, hours=5), timedelta(days=400)]),
)
def test_fast_rows_are_the_general_rows(
    rule: str, zone: str, start: datetime, gap: str, fold: str, invalid: str, later: timedelta | None
) -> None:
    more = {"gapPolicy": gap, "foldPolicy": fold, "invalidDatePolicy": invalid}
    try:
        compiled = compile_schedule(parse_spec(_spec(rule, zone, start, **more)))
    except SpecError:  # a rule that names no time (BYMONTH=2;BYMONTHDAY=30): refused whatever the path
        return
    if compiled.month_days is None and _divides_the_day(rule):
        assert fast_rule(compiled) is not None, rule
    begin = None if later is None else start.replace(tzinfo=UTC) + later
    assert _rows(compiled, begin, fast=True) == _rows(compiled, begin, fast=False)


@settings(max_examples=100, deadline=None)
@given(rule=rules(), start=st.sampled_from(STARTS), later=st.sampled_from([None, timedelta(days=3, hours=5)]))
def test_each_wall_time_comes_with_its_second_reading(rule: str, start: datetime, later: timedelta | None) -> None:
    """What the plain rows tell a time that exists once by: the same wall times as the nominals,
    each beside itself with ``fold=1`` (which equality alone would not tell apart)."""
    try:
        compiled = compile_schedule(parse_spec(_spec(rule, "America/New_York", start)))
    except SpecError:
        return
    fast = fast_rule(compiled)
    if fast is None:
        return
    after = None if later is None else start + later
    walls = list(itertools.islice(fast_walls(fast, after), ROWS))
    nominals = list(itertools.islice(fast_nominals(fast, after), ROWS))
    assert [wall for wall, _ in walls] == [nominal for nominal, _ in nominals]
    assert all(wall.fold == 0 for wall, _ in walls)
    assert [(second, second.fold) for _, second in walls] == [(wall, 1) for wall, _ in walls]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rule=rules(),
    policy=st.sampled_from(["SKIP", "NEXT_BUSINESS_DAY", "PREVIOUS_BUSINESS_DAY"]),
    excluded=st.booleans(),
)
def test_fast_rows_with_a_business_calendar_and_exclusions(rule: str, policy: str, excluded: bool) -> None:
    more: dict[str, Any] = {
        "businessCalendar": {"holidays": ["US-NY"], "closed": ["2026-12-24"]},
        "holidayPolicy": policy,
        "gapPolicy": "SHIFT_FORWARD",
        "foldPolicy": "BOTH",
    }
    if excluded:
        more["exclude"] = ["2026-12-31", "2026-11-01T01:30:00"]
    try:
        compiled = compile_schedule(parse_spec(_spec(rule, "America/New_York", datetime(2026, 10, 30, 1, 30), **more)))
    except SpecError:
        return
    start = datetime(2026, 11, 20, tzinfo=UTC)
    assert _rows(compiled, start, fast=True) == _rows(compiled, start, fast=False)


@pytest.mark.parametrize(
    ("rule", "more"),
    [
        pytest.param("FREQ=DAILY;COUNT=10", {}, id="count"),
        pytest.param("FREQ=YEARLY;BYMONTH=3", {}, id="yearly"),
        pytest.param("FREQ=HOURLY;INTERVAL=5;BYMINUTE=5", {}, id="hourly_not_dividing_the_day"),
        pytest.param("FREQ=MINUTELY;INTERVAL=7", {}, id="minutely_not_dividing_the_day"),
        pytest.param("FREQ=MONTHLY;BYDAY=-1FR", {}, id="numbered_weekday"),
        pytest.param("FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1", {}, id="setpos"),
        pytest.param("FREQ=MONTHLY;BYMONTHDAY=31", {"invalidDatePolicy": "BACKWARD"}, id="moved_month_days"),
    ],
)
def test_other_rules_keep_the_general_path(rule: str, more: dict[str, Any]) -> None:
    compiled = compile_schedule(parse_spec(_spec(rule, "Europe/Berlin", datetime(2026, 1, 1, 9), **more)))
    assert fast_rule(compiled) is None


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=9;BYMINUTE=30",
        "FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=6",
        "FREQ=HOURLY;BYMINUTE=5",
        "FREQ=MINUTELY",
        "FREQ=MINUTELY;INTERVAL=15;BYHOUR=9,10,11",
    ],
)
def test_the_fast_path_never_walks_the_rrule(rule: str) -> None:
    """Counted, not timed: after compiling, a thousand rows ask dateutil for no time at all."""
    compiled = compile_schedule(parse_spec(_spec(rule, "America/New_York", datetime(2026, 1, 1))))
    with mock.patch.object(CompiledSchedule, "nominals", side_effect=AssertionError("the rrule was walked")):
        rows = list(itertools.islice(expand.iter_rows(compiled, datetime(2026, 3, 1, tzinfo=UTC)), 1000))
    assert len(rows) == 1000
    assert rows == _rows_general(compiled, datetime(2026, 3, 1, tzinfo=UTC), 1000)


def _rows_general(compiled: CompiledSchedule, start: datetime, count: int) -> list[Occurrence]:
    with mock.patch.object(expand, "fast_rule", lambda compiled: None):
        return list(itertools.islice(expand.iter_rows(compiled, start), count))


def test_the_fast_path_ends_with_the_calendar() -> None:
    """Rows up to 9999-12-31 and no further, on both paths (no OverflowError from date arithmetic)."""
    spec = _spec("FREQ=DAILY;BYHOUR=23;BYMINUTE=59", "Asia/Kolkata", datetime(2026, 1, 1))
    compiled = compile_schedule(parse_spec(spec))
    start = datetime(9999, 12, 20, tzinfo=UTC)
    fast = _rows(compiled, start, fast=True)
    assert fast == _rows(compiled, start, fast=False)
    assert fast[-1].nominal_local == "9999-12-31T23:59:00"


def test_an_every_minute_rules_second_readings_are_built_once() -> None:
    """Counted, not timed: the 1,440 times of day with ``fold=1`` of an every-minute rule are made
    once for every expansion of it (each materialization and misfire step starts one), not again
    for each, and so are their pairs with the times (shared by the expansions kept to go on from);
    the rows are the same."""
    _second_readings.cache_clear()
    _paired.cache_clear()
    schedules = [compile_schedule(parse_spec(_spec("FREQ=MINUTELY", zone, datetime(2026, 1, 1)))) for zone in ZONES[:3]]
    starts = [datetime(2026, 3, 1, tzinfo=UTC) + timedelta(hours=7 * i) for i in range(4)]
    for compiled in schedules:
        for start in starts:
            rows = list(itertools.islice(expand.iter_rows(compiled, start), 5))
            assert rows == _rows_general(compiled, start, 5)
    assert _second_readings.cache_info().misses == 1
    assert _paired.cache_info().misses == 1
    assert _paired.cache_info().hits >= len(schedules) * len(starts) - 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**SCHEDULES, later=st.sampled_from([None, timedelta(days=3, hours=5)]))
def test_a_few_rows_a_day_held_two_days_come_out_as_with_each_years_offsets(
    rule: str, zone: str, start: datetime, gap: str, fold: str, later: timedelta | None
) -> None:
    """A fast rule with a few times a day is ordered with the two-day drift as its greatest offset
    instead of each year's (``expand._FEW_TIMES``): the rows are those the year's offsets give."""
    try:
        compiled = compile_schedule(parse_spec(_spec(rule, zone, start, gapPolicy=gap, foldPolicy=fold)))
    except SpecError:
        return
    begin = None if later is None else start.replace(tzinfo=UTC) + later
    held = _rows(compiled, begin, fast=True)
    with mock.patch.object(expand, "_FEW_TIMES", 0):
        assert held == _rows(compiled, begin, fast=True)


def test_a_daily_rule_looks_up_no_years_offsets_while_it_orders() -> None:
    """Counted, not timed: 300 years of a daily rule read the zone's offset bounds once (for where
    the rows start), where each year's ordering read them once a year; the rows are the same."""
    compiled = compile_schedule(parse_spec(_spec("FREQ=DAILY;BYHOUR=9", "America/New_York", datetime(2026, 1, 1))))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    bounds = mock.Mock(side_effect=expand._offset_bounds.__wrapped__)
    with mock.patch.object(expand, "_offset_bounds", bounds):
        rows = list(itertools.islice(expand.iter_rows(compiled, start), 300 * 365))
        assert bounds.call_count == 1
        with mock.patch.object(expand, "_FEW_TIMES", 0):
            assert rows == list(itertools.islice(expand.iter_rows(compiled, start), 300 * 365))
        assert bounds.call_count > 300
