"""describe_rule: RRULEs in plain words, with RFC 5545's defaults taken from start."""

from __future__ import annotations

from datetime import datetime

import pytest

from core.recurrence.describe import describe_bounds, describe_rule, join_words, ordinal
from core.recurrence.rules import parse_rule

# A Thursday, 09:00: what the rules below leave out comes from here.
START = datetime(2026, 1, 1, 9, 0)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        pytest.param(
            "FREQ=WEEKLY;BYDAY=MO,FR;BYHOUR=9;BYMINUTE=0", "Every Monday and Friday at 09:00", id="weekly_two_days"
        ),
        pytest.param("FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "Every day at 02:30", id="daily"),
        pytest.param("FREQ=HOURLY;BYMINUTE=15", "Every hour at :15", id="hourly_at_quarter_past"),
        pytest.param(
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU;BYHOUR=2;BYMINUTE=30", "Every 2 weeks on Sunday at 02:30", id="fortnightly"
        ),
        pytest.param(
            "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=17;BYMINUTE=0",
            "On the last weekday of every month at 17:00",
            id="last_weekday_setpos",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=18;BYMINUTE=0", "On day 31 of every month at 18:00", id="day_31"
        ),
        pytest.param(
            "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=12", "Every year on 29 February at 12:00", id="leap_day"
        ),
        pytest.param("FREQ=MINUTELY;INTERVAL=15", "Every 15 minutes", id="every_15_minutes"),
        pytest.param("FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=10", "Every day at 02:30, 10 times", id="count"),
        pytest.param("FREQ=DAILY;COUNT=1", "Every day at 09:00, once", id="count_one"),
        pytest.param("FREQ=DAILY;UNTIL=20271231", "Every day at 09:00, until 2027-12-31", id="until_date"),
        pytest.param(
            "FREQ=DAILY;UNTIL=20271231T120000Z", "Every day at 09:00, until 2027-12-31 12:00 UTC", id="until_utc"
        ),
        pytest.param("FREQ=MONTHLY;BYDAY=2TU", "On the second Tuesday of every month at 09:00", id="second_tuesday"),
        pytest.param(
            "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=16", "On the last Friday of every month at 16:00", id="last_friday"
        ),
        pytest.param(
            "FREQ=YEARLY;BYMONTH=11;BYDAY=4TH",
            "Every year on the fourth Thursday of November at 09:00",
            id="thanksgiving",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
            "On day 13 of every month at 09:00, when it is a Friday",
            id="friday_13",
        ),
        pytest.param(
            "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=8,12,17",
            "Every weekday at 08:00, 12:00 and 17:00",
            id="weekdays_three_times",
        ),
        pytest.param(
            "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=0,30",
            "Every day at :00 and :30 past hours 9–17",
            id="many_times_summarised",
        ),
        pytest.param(
            "FREQ=HOURLY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=0",
            "Every day at :00 past hours 9–17",
            id="hourly_office_hours",
        ),
        pytest.param("FREQ=HOURLY;INTERVAL=4;BYMINUTE=0", "Every 4 hours at :00", id="every_4_hours"),
        pytest.param("FREQ=YEARLY", "Every year on 1 January at 09:00", id="yearly_from_start"),
        pytest.param("FREQ=MONTHLY", "On day 1 of every month at 09:00", id="monthly_from_start"),
        pytest.param("FREQ=WEEKLY", "Every Thursday at 09:00", id="weekly_from_start"),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=6", "On days 1 and 15 of every month at 06:00", id="two_days"
        ),
        pytest.param("FREQ=MONTHLY;BYMONTHDAY=-1", "On the last day of every month at 09:00", id="last_day"),
        pytest.param("FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=1", "On day 1 of every 3 months at 09:00", id="quarterly"),
        pytest.param(
            "FREQ=YEARLY;BYMONTH=1,7;BYMONTHDAY=1", "Every year on 1 January and 1 July at 09:00", id="half_yearly"
        ),
        pytest.param(
            "FREQ=MONTHLY;BYDAY=SA,SU;BYSETPOS=1",
            "On the first weekend day of every month at 09:00",
            id="first_weekend",
        ),
        pytest.param(
            "FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3,10;BYHOUR=1",
            "Every year on the last Sunday of March and October at 01:00",
            id="eu_change_days",
        ),
        pytest.param("FREQ=YEARLY;BYYEARDAY=100", "Every year on day 100 of the year at 09:00", id="year_day"),
        pytest.param(
            "FREQ=MINUTELY;BYHOUR=9,10,11;BYDAY=MO,TU,WE,TH,FR",
            "Every minute, during hours 9–11, on weekdays",
            id="minutely_office_mornings",
        ),
        pytest.param(
            "FREQ=DAILY;INTERVAL=3;BYMONTH=6,7,8", "Every 3 days at 09:00, in June, July and August", id="summer_only"
        ),
        pytest.param(
            "RRULE:FREQ=DAILY;BYHOUR=9;BYMINUTE=0,30;BYSETPOS=1",
            "Following the rule FREQ=DAILY;BYHOUR=9;BYMINUTE=0,30;BYSETPOS=1",
            id="unusual_falls_back_to_rule",
        ),
    ],
)
def test_describe_rule(rule: str, expected: str) -> None:
    assert describe_rule(parse_rule(rule), START) == expected


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        pytest.param(datetime(2026, 1, 4, 2, 30), "Every Sunday at 02:30", id="sunday_start"),
        pytest.param(datetime(2026, 1, 5, 7, 45, 30), "Every Monday at 07:45:30", id="seconds_shown"),
    ],
)
def test_defaults_come_from_start(start: datetime, expected: str) -> None:
    assert describe_rule(parse_rule("FREQ=WEEKLY"), start) == expected


def test_bounds_can_be_left_off_and_asked_for_alone() -> None:
    parsed = parse_rule("FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=5")
    assert describe_rule(parsed, START, bounds=False) == "Every day at 02:30"
    assert describe_bounds(parsed) == ", 5 times"
    assert describe_bounds(parse_rule("FREQ=DAILY")) == ""


@pytest.mark.parametrize(
    ("n", "word"),
    [
        pytest.param(1, "first", id="first"),
        pytest.param(3, "third", id="third"),
        pytest.param(11, "11th", id="eleventh"),
        pytest.param(22, "22nd", id="twenty_second"),
        pytest.param(-1, "last", id="last"),
        pytest.param(-2, "second-to-last", id="second_to_last"),
    ],
)
def test_ordinal(n: int, word: str) -> None:
    assert ordinal(n) == word


def test_join_words() -> None:
    assert join_words([]) == ""
    assert join_words(["a"]) == "a"
    assert join_words(["a", "b"]) == "a and b"
    assert join_words(["a", "b", "c"], "or") == "a, b or c"
