"""Where a business calendar shows: ``policy_line`` (the policy in words with the next
holiday it touches), ``schedctl explain``, the preview's rows naming the holiday,
and the .ics export (moved times carried, skipped rows left out)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import make_spec
from icalendar import Calendar

from core.calendar.business_words import policy_line
from tests.core.conftest import Run

NOW = datetime(2027, 11, 12, 16, tzinfo=UTC)
THURSDAYS = "FREQ=WEEKLY;BYDAY=TH;BYHOUR=9;BYMINUTE=0"
US_NY = {"holidays": ["US-NY"]}


@pytest.mark.parametrize(
    ("policy", "line"),
    [
        ("SKIP", "On public holidays in US-NY, Saturdays and Sundays, it does not run. "
                 "Next: Thu 2027-11-25, Thanksgiving Day: does not run."),
        ("NEXT_BUSINESS_DAY", "On public holidays in US-NY, Saturdays and Sundays, a run moves to the next "
                              "business day at the same time. "
                              "Next: Thu 2027-11-25, Thanksgiving Day: runs Fri 2027-11-26 09:00 instead."),
        ("PREVIOUS_BUSINESS_DAY", "On public holidays in US-NY, Saturdays and Sundays, a run moves to the "
                                  "previous business day at the same time. "
                                  "Next: Thu 2027-11-25, Thanksgiving Day: runs Wed 2027-11-24 09:00 instead."),
    ],
)  # fmt: skip
def test_policy_line_says_the_policy_and_the_next_holiday(policy: str, line: str) -> None:
    assert policy_line(make_spec(rule=THURSDAYS, businessCalendar=US_NY, holidayPolicy=policy), NOW) == line


@pytest.mark.parametrize(
    ("weekend", "rule", "next_words"),
    [
        # A daily run's next touched date is a weekend day as much as a holiday: the first Sunday.
        (["SU"], "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "Sun 2027-11-14, a weekend day: lands on Mon 2027-11-15 09:00"),
        ([], "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "Tue 2027-11-16, a closed date: lands on Wed 2027-11-17 09:00"),
        # Runs on Saturdays and Tuesdays: the Saturday comes first, though it is no holiday.
        (["SA", "SU"], "FREQ=WEEKLY;BYDAY=TU,SA;BYHOUR=9;BYMINUTE=0", "Sat 2027-11-13, a weekend day: runs Mon "
         "2027-11-15 09:00 instead"),
    ],
    ids=["sunday", "closed_date", "saturday_run"],
)  # fmt: skip
def test_policy_line_names_the_next_moved_run_weekends_included(weekend: list[str], rule: str, next_words: str) -> None:
    spec = make_spec(
        rule=rule,
        businessCalendar={"holidays": [], "weekend": weekend, "closed": ["2027-11-16"], "open": ["2027-11-21"]},
        holidayPolicy="NEXT_BUSINESS_DAY",
    )
    line = policy_line(spec, NOW)
    assert line is not None and f" Next: {next_words}" in line, line


def test_policy_line_without_a_holiday_ahead_or_without_a_calendar() -> None:
    saturdays = make_spec(rule=THURSDAYS, businessCalendar={"weekend": ["SA"]}, holidayPolicy="SKIP")
    assert policy_line(saturdays, NOW) == (
        "On Saturdays, it does not run. No holiday, closed date or weekend day touches it in the next year."
    )
    assert policy_line(make_spec(rule=THURSDAYS), NOW) is None


SPEC = """\
schema: scheduleSpec.v1
scheduleId: invoices
revision: 1
timeZone: America/New_York
rule: FREQ=WEEKLY;BYDAY=TH;BYHOUR=9;BYMINUTE=0
start: 2027-01-01T00:00:00
gapPolicy: SHIFT_FORWARD
foldPolicy: FIRST_ONLY
businessCalendar:
  holidays: [US-NY]
holidayPolicy: {policy}
"""


def _spec(tmp_path: Path, policy: str) -> str:
    path = tmp_path / "invoices.yaml"
    path.write_text(SPEC.format(policy=policy), encoding="utf-8")
    return str(path)


def test_explain_says_the_policy(run: Run, tmp_path: Path) -> None:
    status, out, _ = run("explain", _spec(tmp_path, "NEXT_BUSINESS_DAY"), "--now", NOW.isoformat())
    assert status == 0
    assert (
        "On public holidays in US-NY, Saturdays and Sundays, a run moves to the next business day at the same "
        "time. Next: Thu 2027-11-25, Thanksgiving Day: runs Fri 2027-11-26 09:00 instead." in out
    )


def test_preview_rows_name_the_holiday(run: Run, tmp_path: Path) -> None:
    status, out, _ = run("preview", _spec(tmp_path, "SKIP"), "--now", NOW.isoformat(), "--count", "3")
    assert status == 0
    lines = out.splitlines()
    assert lines[3].startswith("Thu 2027-11-25 09:00      —")
    assert lines[3].endswith("⊘ excluded   2027-11-25 is Thanksgiving Day in US-NY")


@pytest.mark.parametrize(
    ("policy", "starts"),
    [
        ("NEXT_BUSINESS_DAY", ["2027-11-18T14:00:00+00:00", "2027-11-26T14:00:00+00:00", "2027-12-02T14:00:00+00:00"]),
        ("SKIP", ["2027-11-18T14:00:00+00:00", "2027-12-02T14:00:00+00:00"]),
    ],
)
def test_ics_carries_moved_times_and_leaves_skipped_rows_out(
    run: Run, tmp_path: Path, policy: str, starts: list[str]
) -> None:
    status, out, _ = run(
        "preview", _spec(tmp_path, policy), "--now", NOW.isoformat(), "--count", "3", "--format", "ics"
    )
    assert status == 0
    events = [c for c in Calendar.from_ical(out).walk() if c.name == "VEVENT"]
    assert [e.decoded("DTSTART").isoformat() for e in events] == starts
