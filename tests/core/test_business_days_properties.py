"""A property of business days: for random rules and calendars, no run falls on a closed
day, every skipped or moved row names a real closed day (read from the holidays package
directly), and identities stay the same when only the holiday data changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import holidays
from helpers import make_spec
from hypothesis import given, settings
from hypothesis import strategies as st

from core.enums import Status
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand

CODES = ["US-NY", "DE-BE", "GB-ENG", "JP", "FR", "CA-ON"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
RULES = [
    "FREQ=DAILY;BYHOUR={h};BYMINUTE=30",
    "FREQ=WEEKLY;BYDAY={d};BYHOUR={h};BYMINUTE=0",
    "FREQ=MONTHLY;BYMONTHDAY={m};BYHOUR={h};BYMINUTE=0",
    "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR={h};BYMINUTE=15",
]
ZONES = ["America/New_York", "Europe/Berlin", "Asia/Tokyo", "Australia/Lord_Howe"]
LO, HI = datetime(2027, 1, 1, tzinfo=UTC), datetime(2028, 1, 1, tzinfo=UTC)
YEAR_DATES = st.dates(min_value=date(2026, 12, 20), max_value=date(2028, 1, 10))


def _holidays_read_directly(code: str) -> dict[date, str]:
    country, _, sub = code.partition("-")
    return dict(holidays.country_holidays(country, subdiv=sub or None, years=[2026, 2027, 2028], language="en_US"))


READ = {code: _holidays_read_directly(code) for code in CODES}


def _closed(calendar: dict[str, Any]) -> set[date]:
    out = {d for code in calendar["holidays"] for d in READ[code]}
    out |= set(calendar["closed"])
    day = date(2026, 12, 1)
    while day < date(2028, 2, 1):
        if DAYS[day.weekday()] in calendar["weekend"]:
            out.add(day)
        day += timedelta(days=1)
    return out - set(calendar["open"])


calendars = st.fixed_dictionaries(
    {
        "holidays": st.lists(st.sampled_from(CODES), max_size=2, unique=True),
        "weekend": st.lists(st.sampled_from(DAYS), max_size=3, unique=True),
        "closed": st.lists(YEAR_DATES, max_size=6, unique=True),
        "open": st.lists(YEAR_DATES, max_size=2, unique=True),
    }
).filter(lambda c: not set(c["closed"]) & set(c["open"]))
rules = st.builds(
    lambda template, h, d, m: template.format(h=h, d=d, m=m),
    st.sampled_from(RULES),
    st.integers(0, 23),
    st.sampled_from(DAYS),
    st.integers(1, 28),
)


def _rows(rule: str, zone: str, calendar: dict[str, Any], policy: str) -> list[Any]:
    doc = {**calendar, "closed": [d.isoformat() for d in calendar["closed"]]}
    doc["open"] = [d.isoformat() for d in calendar["open"]]
    spec = make_spec(
        rule=rule,
        timeZone=zone,
        start="2026-06-01T00:00:00",
        gapPolicy="SHIFT_FORWARD",
        businessCalendar=doc,
        holidayPolicy=policy,
    )
    return expand(compile_schedule(spec), LO, HI)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    rule=rules,
    zone=st.sampled_from(ZONES),
    calendar=calendars,
    other=st.lists(st.sampled_from(CODES), max_size=2, unique=True),
    policy=st.sampled_from(["SKIP", "NEXT_BUSINESS_DAY", "PREVIOUS_BUSINESS_DAY"]),
)
def test_runs_avoid_closed_days_and_reasons_name_real_ones(
    rule: str, zone: str, calendar: dict[str, Any], other: list[str], policy: str
) -> None:
    closed = _closed(calendar)
    found = _rows(rule, zone, calendar, policy)
    for row in found:
        local = row.resolved_local
        day = row.nominal.date()
        if row.runnable:
            assert local is not None
            # These zones' gaps stay inside one day, so a run's wall date is the business day it was placed on.
            assert local.date() not in closed, row
            if local.date() != day:
                assert day in closed, row
        if row.status is Status.EXCLUDED:
            assert day in closed, row
        if row.reason is not None and f"{day.isoformat()} is " in row.reason:
            assert day in closed, row.reason
            if day in set(calendar["closed"]) - {d for c in calendar["holidays"] for d in READ[c]}:
                assert "businessCalendar.closed" in row.reason
        if day in closed:
            assert row.reason is not None and f"{day.isoformat()} is " in row.reason, row
    # Only the holiday data changes: every nominal time keeps its identity.
    changed = _rows(rule, zone, calendar | {"holidays": other}, policy)
    inner = (datetime(2027, 1, 20), datetime(2027, 12, 10))
    ids = {(r.nominal_local, r.fold_ordinal): r.occurrence_id for r in found if inner[0] <= r.nominal < inner[1]}
    again = {(r.nominal_local, r.fold_ordinal): r.occurrence_id for r in changed if inner[0] <= r.nominal < inner[1]}
    assert ids == again
