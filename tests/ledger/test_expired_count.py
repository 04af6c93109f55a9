"""Counting the occurrences an expired range stands for (core.ledger.expired.count_rows):
exact when cheap, None otherwise, never a guess. Pure: no ledger needed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ledger.expired import count_rows
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import expand
from core.spec.validation import parse_spec

LO = datetime(2026, 1, 5, 7, 3, 20, tzinfo=UTC)


def compiled(**keys: Any) -> CompiledSchedule:
    data: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "s",
        "revision": 1,
        "timeZone": "UTC",
        "start": "2026-01-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
    }
    data.update(keys)
    return compile_schedule(parse_spec({k: v for k, v in data.items() if v is not None}))


COUNTED = [
    pytest.param({"rule": "FREQ=MINUTELY"}, id="every_minute_arithmetic"),
    pytest.param({"rule": "FREQ=MINUTELY;INTERVAL=7"}, id="every_7_minutes_arithmetic"),
    pytest.param({"rule": "FREQ=HOURLY;BYMINUTE=5,35"}, id="hourly_pattern_by_day"),
    pytest.param({"rule": "FREQ=DAILY;BYDAY=MO,WE,FR;BYHOUR=9,17"}, id="weekday_pattern_by_week"),
    pytest.param({"rule": "FREQ=WEEKLY;INTERVAL=3;BYDAY=TU"}, id="every_third_tuesday"),
    pytest.param({"rule": "FREQ=HOURLY", "timeZone": "Asia/Tokyo"}, id="fixed_offset_zone"),
    pytest.param(
        {
            "kind": "interval",
            "every": "PT25M",
            "anchor": "2026-01-02T00:10:00Z",
            "gapPolicy": None,
            "foldPolicy": None,
            "start": None,
        },
        id="interval_arithmetic",
    ),
]


@pytest.mark.parametrize("keys", COUNTED)
@settings(max_examples=8, deadline=None)
@given(days=st.integers(min_value=0, max_value=21), seconds=st.integers(min_value=0, max_value=86_399))
def test_a_count_equals_the_expansion(keys: dict[str, Any], days: int, seconds: int) -> None:
    schedule = compiled(**keys)
    hi = LO + timedelta(days=days, seconds=seconds)
    assert count_rows(schedule, LO, hi) == len(expand(schedule, LO, hi))


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param({"rule": "FREQ=HOURLY", "timeZone": "America/New_York"}, id="clocks_change_in_range"),
        pytest.param({"rule": "FREQ=DAILY", "exclude": ["2026-01-20"]}, id="exclusions"),
        pytest.param({"rule": "FREQ=MONTHLY;BYMONTHDAY=31"}, id="month_days"),
        pytest.param({"rule": "FREQ=DAILY", "businessPeriod": "{nominal:%Y-%m}"}, id="business_period"),
        pytest.param({"rule": "FREQ=DAILY", "end": "2026-02-01T00:00:00"}, id="end_bound"),
    ],
)
def test_what_is_not_cheap_is_not_counted(keys: dict[str, Any]) -> None:
    assert count_rows(compiled(**keys), LO, LO + timedelta(days=120)) is None


def test_a_year_of_minutes_is_counted_at_once() -> None:
    schedule = compiled(rule="FREQ=MINUTELY")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert count_rows(schedule, start, start + timedelta(days=365)) == 525_600
