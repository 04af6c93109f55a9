"""Business days in the expansion (docs/decisions.md "Business days").

Hand-written cases name real days: a holiday on a Monday after a weekend,
consecutive holidays (Christmas and Boxing Day in England), a holiday on a
spring-forward day whose 02:30 does not exist, a move onto a gap day, a monthly
rule whose move crosses into the next month. Case tables for US-NY, DE-BE,
GB-ENG and JP over 2027 and 2028 under each policy are checked against the
``holidays`` package read directly (an independent reading of the same data).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import holidays
import pytest
from helpers import make_spec, rows_between

from core.enums import Status
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand
from core.recurrence.occurrence import Occurrence

ZONES = {"US-NY": "America/New_York", "DE-BE": "Europe/Berlin", "GB-ENG": "Europe/London", "JP": "Asia/Tokyo"}


def rows(
    rule: str,
    calendar: dict[str, Any],
    policy: str,
    lo: str,
    hi: str,
    zone: str = "America/New_York",
    **more: Any,
) -> list[Occurrence]:
    spec = make_spec(
        rule=rule, timeZone=zone, start="2026-01-01T00:00:00", businessCalendar=calendar, holidayPolicy=policy, **more
    )
    return expand(compile_schedule(spec), _at(lo), _at(hi))


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def table(found: list[Occurrence]) -> list[tuple[str, str, str | None, str | None]]:
    return [(r.nominal_local, r.status.value, r.resolved_utc, r.reason) for r in found]


# --- hand-written cases ----------------------------------------------------------------------

NINE = "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("SKIP", ("EXCLUDED", None, "2027-01-18 is Martin Luther King Jr. Day in US-NY")),
        ("NEXT_BUSINESS_DAY", ("SHIFTED", "2027-01-19T14:00:00Z",
                               "2027-01-18 is Martin Luther King Jr. Day in US-NY: "
                               "moved to the next business day, Tue 2027-01-19")),
        ("PREVIOUS_BUSINESS_DAY", ("SHIFTED", "2027-01-15T14:00:00Z",
                                   "2027-01-18 is Martin Luther King Jr. Day in US-NY: "
                                   "moved to the previous business day, Fri 2027-01-15")),
    ],
)  # fmt: skip
def test_a_monday_holiday_after_a_weekend(policy: str, expected: tuple[str, str | None, str]) -> None:
    found = rows(NINE, {"holidays": ["US-NY"]}, policy, "2027-01-10", "2027-01-26")
    assert table(found) == [
        ("2027-01-11T09:00:00", "SCHEDULED", "2027-01-11T14:00:00Z", None),
        ("2027-01-18T09:00:00", *expected),
        ("2027-01-25T09:00:00", "SCHEDULED", "2027-01-25T14:00:00Z", None),
    ]


def test_consecutive_holidays_christmas_and_boxing_day_in_england() -> None:
    found = rows(
        "FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=25,26;BYHOUR=9;BYMINUTE=0",
        {"holidays": ["GB-ENG"]},
        "NEXT_BUSINESS_DAY",
        "2027-12-01",
        "2029-01-01",
        zone="Europe/London",
    )
    assert table(found) == [
        ("2027-12-25T09:00:00", "SHIFTED", "2027-12-29T09:00:00Z",
         "2027-12-25 is Christmas Day in GB-ENG: moved to the next business day, Wed 2027-12-29"),
        ("2027-12-26T09:00:00", "SKIPPED_DUPLICATE", None,
         "2027-12-26 is Boxing Day in GB-ENG: moved to the next business day, Wed 2027-12-29, which already runs: "
         f"resolves to the same instant (2027-12-29T09:00:00Z) as {found[0].occurrence_id} "
         "(nominal 2027-12-25T09:00:00), which keeps it"),
        ("2028-12-25T09:00:00", "SHIFTED", "2028-12-27T09:00:00Z",
         "2028-12-25 is Christmas Day in GB-ENG: moved to the next business day, Wed 2028-12-27"),
        ("2028-12-26T09:00:00", "SKIPPED_DUPLICATE", None,
         "2028-12-26 is Boxing Day in GB-ENG: moved to the next business day, Wed 2028-12-27, which already runs: "
         f"resolves to the same instant (2028-12-27T09:00:00Z) as {found[2].occurrence_id} "
         "(nominal 2028-12-25T09:00:00), which keeps it"),
    ]  # fmt: skip


def test_a_holiday_on_a_spring_forward_day() -> None:
    """Easter Sunday 2027 is a public holiday in Brandenburg and the day Berlin's
    clocks jump from 02:00 to 03:00: the holiday decides first, so SKIP names it
    (not the gap), and a move takes the run off the gap day altogether."""
    calendar = {"holidays": ["DE-BB"], "weekend": []}
    rule = "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30"
    skipped = rows(rule, calendar, "SKIP", "2027-03-27", "2027-03-29", zone="Europe/Berlin")
    assert table(skipped) == [("2027-03-28T02:30:00", "EXCLUDED", None, "2027-03-28 is Easter Sunday in DE-BB")]
    moved = rows(rule, calendar, "NEXT_BUSINESS_DAY", "2027-03-27", "2027-03-31", zone="Europe/Berlin")
    assert table(moved) == [
        ("2027-03-28T02:30:00", "SHIFTED", "2027-03-30T00:30:00Z",
         "2027-03-28 is Easter Sunday in DE-BB: moved to the next business day, Tue 2027-03-30"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("gap", "expected"),
    [
        ("SHIFT_FORWARD", ("SHIFTED", "2027-03-14T07:00:00Z")),
        ("SKIP", ("SKIPPED_GAP", None)),
    ],
)
def test_a_move_onto_a_gap_day_then_meets_the_gap_policy(gap: str, expected: tuple[str, str | None]) -> None:
    found = rows(
        "FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=30",
        {"closed": ["2027-03-13"], "weekend": []},
        "NEXT_BUSINESS_DAY",
        "2027-03-13",
        "2027-03-15",
        gapPolicy=gap,
    )
    [row] = found
    assert (row.nominal_local, row.status.value, row.resolved_utc) == ("2027-03-13T02:30:00", *expected)
    assert row.reason is not None
    assert row.reason.startswith(
        "2027-03-13 is closed (businessCalendar.closed): moved to the next business day, Sun 2027-03-14; "
    )
    assert "02:30 does not exist on 2027-03-14 in America/New_York" in row.reason


def test_a_monthly_move_crosses_into_the_next_month() -> None:
    found = rows(
        "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=17;BYMINUTE=0", {"holidays": ["US-NY"]}, "NEXT_BUSINESS_DAY",
        "2027-07-01", "2027-08-04",
    )  # fmt: skip
    assert table(found) == [
        ("2027-07-31T17:00:00", "SHIFTED", "2027-08-02T21:00:00Z",
         "2027-07-31 is a Saturday (weekend): moved to the next business day, Mon 2027-08-02"),
    ]  # fmt: skip


def test_first_business_day_of_the_month() -> None:
    found = rows(
        "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0", {"holidays": ["US-NY"]}, "NEXT_BUSINESS_DAY",
        "2027-01-01", "2028-01-01",
    )  # fmt: skip
    runs = [r.resolved_local.date().isoformat() for r in found if r.runnable and r.resolved_local]
    assert runs == [
        "2027-01-04", "2027-02-01", "2027-03-01", "2027-04-01", "2027-05-03", "2027-06-01",
        "2027-07-01", "2027-08-02", "2027-09-01", "2027-10-01", "2027-11-01", "2027-12-01",
    ]  # fmt: skip


def test_open_overrides_and_closed_adds() -> None:
    found = rows(
        "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        {"holidays": ["US-NY"], "closed": ["2027-11-24"], "open": ["2027-11-25", "2027-11-27"]},
        "SKIP",
        "2027-11-24",
        "2027-11-29",
    )
    assert [(r.nominal_local[:10], r.status.value, r.reason) for r in found] == [
        ("2027-11-24", "EXCLUDED", "2027-11-24 is closed (businessCalendar.closed)"),
        ("2027-11-25", "SCHEDULED", None),
        ("2027-11-26", "SCHEDULED", None),
        ("2027-11-27", "SCHEDULED", None),
        ("2027-11-28", "EXCLUDED", "2027-11-28 is a Sunday (weekend)"),
    ]


def test_exclude_still_wins_over_a_move() -> None:
    found = rows(NINE, {"holidays": ["US-NY"]}, "NEXT_BUSINESS_DAY", "2027-01-17", "2027-01-20", exclude=["2027-01-18"])
    assert [(r.status.value, r.reason) for r in found] == [
        (
            "EXCLUDED",
            "excluded: 2027-01-18T09:00:00 is listed in exclude (2027-01-18 is Martin Luther King Jr. Day in US-NY: "
            "moved to the next business day, Tue 2027-01-19)",
        )
    ]


def test_a_moved_run_keeps_its_nominal_identity() -> None:
    plain = rows_between(make_spec(rule=NINE), "2027-01-10T00:00:00Z", "2027-01-26T00:00:00Z")
    moved = rows(NINE, {"holidays": ["US-NY"]}, "NEXT_BUSINESS_DAY", "2027-01-10", "2027-01-26")
    assert [r.occurrence_id for r in moved] == [r.occurrence_id for r in plain]


# --- case tables against the holidays package read directly --------------------------------------

#: Days of the month far enough apart that no move reaches the next one.
SPARSE = "FREQ=MONTHLY;BYMONTHDAY=1,10,20;BYHOUR=9;BYMINUTE=0"


def _independent_closed(code: str) -> dict[date, str]:
    country, _, sub = code.partition("-")
    return dict(holidays.country_holidays(country, subdiv=sub or None, years=[2027, 2028, 2029], language="en_US"))


def _expected_day(day: date, closed: dict[date, str], step: int) -> date:
    while day in closed or day.weekday() >= 5:
        day += timedelta(days=step)
    return day


@pytest.mark.parametrize("code", list(ZONES))
@pytest.mark.parametrize("policy", ["SKIP", "NEXT_BUSINESS_DAY", "PREVIOUS_BUSINESS_DAY"])
def test_case_table_two_years(code: str, policy: str) -> None:
    closed = _independent_closed(code)
    found = rows(SPARSE, {"holidays": [code]}, policy, "2027-01-01", "2029-01-01", zone=ZONES[code])
    nominals = [r for r in found if date(2027, 1, 2) <= r.nominal.date() <= date(2028, 12, 30)]
    assert len(nominals) == 2 * 12 * 3 - 1  # all but 2027-01-01
    touched = 0
    for row in nominals:
        day = row.nominal.date()
        is_closed = day in closed or day.weekday() >= 5
        if not is_closed:
            assert (row.status, row.reason, row.resolved_local) == (Status.SCHEDULED, None, row.nominal)
            continue
        touched += 1
        why = f"{closed[day]} in {code}" if day in closed else f"a {day:%A} (weekend)"
        assert row.reason is not None and row.reason.startswith(f"{day.isoformat()} is {why}"), row.reason
        if policy == "SKIP":
            assert (row.status, row.resolved) == (Status.EXCLUDED, None)
        else:
            target = _expected_day(day, closed, 1 if policy == "NEXT_BUSINESS_DAY" else -1)
            assert row.status is Status.SHIFTED
            assert row.resolved_local == datetime.combine(target, row.nominal.time())
    assert touched >= 15, "the table touches holidays and weekends"


@pytest.mark.parametrize(
    ("policy", "status", "reason"),
    [
        (
            "PREVIOUS_BUSINESS_DAY",
            "SHIFTED",
            "2027-04-31 does not exist: moved back to 2027-04-30, the last day of the month "
            "(invalidDatePolicy BACKWARD); 2027-04-30 is closed (businessCalendar.closed): "
            "moved to the previous business day, Thu 2027-04-29",
        ),
        (
            "SKIP",
            "EXCLUDED",
            "2027-04-31 does not exist: moved back to 2027-04-30, the last day of the month "
            "(invalidDatePolicy BACKWARD); 2027-04-30 is closed (businessCalendar.closed)",
        ),
    ],
)
def test_an_invalid_date_is_settled_first_and_its_story_told_in_order(policy: str, status: str, reason: str) -> None:
    """April 31 under BACKWARD is April 30; a closed April 30 then moves or skips it, and the
    reason says both, in the order they were decided."""
    found = rows(
        "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0",
        {"closed": ["2027-04-30"]},
        policy,
        "2027-04-01",
        "2027-05-01",
        invalidDatePolicy="BACKWARD",
    )
    [row] = found
    assert (row.status.value, row.reason) == (status, reason)
