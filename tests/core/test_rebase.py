"""Resuming a rule near a later time names exactly the times that walking it
from its start would (core/recurrence/rebase.py)."""

from __future__ import annotations

import itertools
import time
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.recurrence.compile import compile_schedule
from core.spec.validation import parse_spec

RULES = [
    "FREQ=MINUTELY",
    "FREQ=MINUTELY;INTERVAL=7",
    "FREQ=MINUTELY;INTERVAL=45;BYHOUR=2,3",
    "FREQ=HOURLY;INTERVAL=5;BYMINUTE=15,45",
    "FREQ=HOURLY;BYHOUR=1,2,3",
    "FREQ=DAILY",
    "FREQ=DAILY;INTERVAL=3;BYHOUR=9;BYMINUTE=30",
    "FREQ=DAILY;BYMONTH=3,11;BYHOUR=2;BYMINUTE=30",
    "FREQ=WEEKLY",
    "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR",
    "FREQ=WEEKLY;INTERVAL=3;BYDAY=SU;WKST=SU;BYHOUR=2;BYMINUTE=30",
    "FREQ=WEEKLY;BYDAY=TU,TH;BYSETPOS=-1",
    "FREQ=MONTHLY",
    "FREQ=MONTHLY;INTERVAL=5",
    "FREQ=MONTHLY;BYDAY=-1FR",
    "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=17;BYMINUTE=0",
    "FREQ=MONTHLY;BYMONTHDAY=-1,15",
    "FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=31",
    "FREQ=YEARLY",
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
    "FREQ=YEARLY;INTERVAL=3;BYMONTH=7",
    "FREQ=YEARLY;BYWEEKNO=1,53;BYDAY=MO",
    "FREQ=YEARLY;BYYEARDAY=-1,100",
    "FREQ=YEARLY;BYMONTH=3;BYDAY=2SU;BYHOUR=2",
    "FREQ=DAILY;UNTIL=20300101T000000",
]


def compiled(rule: str, start: datetime):  # type: ignore[no-untyped-def]
    return compile_schedule(
        parse_spec(
            {
                "schema": "scheduleSpec.v1",
                "scheduleId": "rebase",
                "revision": 1,
                "timeZone": "America/New_York",
                "rule": rule,
                "start": start.isoformat(),
                "gapPolicy": "SKIP",
                "foldPolicy": "BOTH",
            }
        )
    )


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    rule=st.sampled_from(RULES),
    start=st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2026, 12, 31)).map(
        lambda d: d.replace(microsecond=0)
    ),
    gap_minutes=st.integers(min_value=0, max_value=60 * 24 * 365 * 2),
)
def test_resumed_rule_names_the_same_times(rule: str, start: datetime, gap_minutes: int) -> None:
    schedule = compiled(rule, start)
    after = start + timedelta(minutes=gap_minutes)
    fast = list(itertools.islice(schedule.nominals(after), 40))
    slow = list(itertools.islice(schedule.nominals(after, rebase=False), 40))
    assert fast == slow


def test_counted_rules_are_walked_from_their_start() -> None:
    schedule = compiled("FREQ=DAILY;COUNT=3", datetime(2026, 1, 1, 9))
    assert [t for t, _ in schedule.nominals(datetime(2026, 1, 2))] == [datetime(2026, 1, 2, 9), datetime(2026, 1, 3, 9)]


@pytest.mark.parametrize("rule", ["FREQ=MINUTELY", "FREQ=HOURLY;BYMINUTE=15"])
def test_an_old_schedule_resumes_without_walking_its_past(rule: str) -> None:
    """Counted in work, not time: the resumed iterator touches a handful of periods."""
    schedule = compiled(rule, datetime(2020, 1, 1))
    after = datetime(2026, 11, 30, 12, 0)
    started = time.process_time()
    first = next(schedule.nominals(after))[0]
    fast = time.process_time() - started
    started = time.process_time()
    assert next(schedule.nominals(after, rebase=False))[0] == first
    slow = time.process_time() - started
    assert first >= after
    assert fast * 20 < slow
