"""systemd calendar expressions (systemd.time(7)): each read as systemd reads it (its normalized
form) and translated into a rule whose preview runs at the instants systemd computes.

The table's expressions are those of systemd's own ``src/test/test-calendarspec.c`` and of the
issue; its normalized forms and instants are ``systemd-analyze calendar --base-time=BASE`` of
systemd 252, run with ``TZ=ZONE`` (the machine's zone: an expression naming none is read on it).
Where ``systemd-analyze`` is installed, :func:`test_systemd_analyze_agrees` asks it again.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from datetime import UTC, datetime

import pytest

from core.importing.systemd_calendar import CalendarError, calendar_rule, elapses, parse_calendar
from core.recurrence.preview import build_preview
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from core.time.zones import get_zone

#: (expression, the machine's zone, base instant (UTC), systemd's normalized form, next elapses)
TABLE = [
    (
        "Mon..Fri 09:00",
        "America/New_York",
        "2026-03-06T00:00",
        "Mon..Fri *-*-* 09:00:00",
        ["2026-03-06T14:00:00Z", "2026-03-09T13:00:00Z", "2026-03-10T13:00:00Z", "2026-03-11T13:00:00Z"],
    ),
    (
        "*-*-01 00:00:00",
        "Europe/Berlin",
        "2026-01-15T00:00",
        "*-*-01 00:00:00",
        ["2026-01-31T23:00:00Z", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z", "2026-04-30T22:00:00Z"],
    ),
    (
        "hourly",
        "Europe/Berlin",
        "2026-03-29T00:00",
        "*-*-* *:00:00",
        ["2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z", "2026-03-29T03:00:00Z", "2026-03-29T04:00:00Z"],
    ),
    (
        "*:0/15",
        "America/New_York",
        "2026-11-01T05:00",
        "*-*-* *:00/15:00",
        ["2026-11-01T05:15:00Z", "2026-11-01T05:30:00Z", "2026-11-01T05:45:00Z", "2026-11-01T07:00:00Z"],
    ),
    (
        "Sat,Sun 10:00 Europe/Paris",
        "America/New_York",
        "2026-03-27T00:00",
        "Sat,Sun *-*-* 10:00:00 Europe/Paris",
        ["2026-03-28T09:00:00Z", "2026-03-29T08:00:00Z", "2026-04-04T08:00:00Z", "2026-04-05T08:00:00Z"],
    ),
    (
        "*-*-* 02:30",
        "Europe/Berlin",
        "2026-03-28T12:00",
        "*-*-* 02:30:00",
        ["2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z", "2026-04-01T00:30:00Z", "2026-04-02T00:30:00Z"],
    ),
    (
        "*-*-* 02:30",
        "Europe/Berlin",
        "2026-10-24T12:00",
        "*-*-* 02:30:00",
        ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z", "2026-10-28T01:30:00Z"],
    ),
    (
        "*:0/30",
        "Europe/Berlin",
        "2026-10-25T00:00",
        "*-*-* *:00/30:00",
        ["2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z", "2026-10-25T03:00:00Z"],
    ),
    (
        "Sat,Thu,Mon..Wed,Sat..Sun",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Mon..Thu,Sat,Sun *-*-* 00:00:00",
        ["2026-01-02T23:00:00Z", "2026-01-03T23:00:00Z", "2026-01-04T23:00:00Z", "2026-01-05T23:00:00Z"],
    ),
    (
        "Wed *-1",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Wed *-*-01 00:00:00",
        ["2026-03-31T22:00:00Z", "2026-06-30T22:00:00Z", "2027-08-31T22:00:00Z", "2027-11-30T23:00:00Z"],
    ),
    (
        "Wed, 17:48",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Wed *-*-* 17:48:00",
        ["2026-01-07T16:48:00Z", "2026-01-14T16:48:00Z", "2026-01-21T16:48:00Z", "2026-01-28T16:48:00Z"],
    ),
    (
        "*-*-7 0:0:0",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-07 00:00:00",
        ["2026-01-06T23:00:00Z", "2026-02-06T23:00:00Z", "2026-03-06T23:00:00Z", "2026-04-06T22:00:00Z"],
    ),
    (
        "10-15",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-10-15 00:00:00",
        ["2026-10-14T22:00:00Z", "2027-10-14T22:00:00Z", "2028-10-14T22:00:00Z", "2029-10-14T22:00:00Z"],
    ),
    (
        "monday *-12-* 17:00",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Mon *-12-* 17:00:00",
        ["2026-12-07T16:00:00Z", "2026-12-14T16:00:00Z", "2026-12-21T16:00:00Z", "2026-12-28T16:00:00Z"],
    ),
    (
        "Mon,Fri *-*-3,1,2 *:30:45",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Mon,Fri *-*-01,02,03 *:30:45",
        ["2026-01-01T23:30:45Z", "2026-01-02T00:30:45Z", "2026-01-02T01:30:45Z", "2026-01-02T02:30:45Z"],
    ),
    (
        "12,14,13,12:20,10,30",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-* 12,13,14:10,20,30:00",
        ["2026-01-01T11:10:00Z", "2026-01-01T11:20:00Z", "2026-01-01T11:30:00Z", "2026-01-01T12:10:00Z"],
    ),
    (
        "mon,fri *-1/2-1,3 *:30:45",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Mon,Fri *-01/2-01,03 *:30:45",
        ["2026-04-30T22:30:45Z", "2026-04-30T23:30:45Z", "2026-05-01T00:30:45Z", "2026-05-01T01:30:45Z"],
    ),
    (
        "03-05 08:05:40",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-03-05 08:05:40",
        ["2026-03-05T07:05:40Z", "2027-03-05T07:05:40Z", "2028-03-05T07:05:40Z", "2029-03-05T07:05:40Z"],
    ),
    ("2003-03-05 05:40", "Europe/Berlin", "2002-01-01T00:00", "2003-03-05 05:40:00", ["2003-03-05T04:40:00Z"]),
    (
        "daily",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-* 00:00:00",
        ["2026-01-01T23:00:00Z", "2026-01-02T23:00:00Z", "2026-01-03T23:00:00Z", "2026-01-04T23:00:00Z"],
    ),
    (
        "monthly",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-01 00:00:00",
        ["2026-01-31T23:00:00Z", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z", "2026-04-30T22:00:00Z"],
    ),
    (
        "weekly",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Mon *-*-* 00:00:00",
        ["2026-01-04T23:00:00Z", "2026-01-11T23:00:00Z", "2026-01-18T23:00:00Z", "2026-01-25T23:00:00Z"],
    ),
    (
        "minutely",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-* *:*:00",
        ["2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z", "2026-01-01T00:04:00Z"],
    ),
    (
        "quarterly",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-01,04,07,10-01 00:00:00",
        ["2026-03-31T22:00:00Z", "2026-06-30T22:00:00Z", "2026-09-30T22:00:00Z", "2026-12-31T23:00:00Z"],
    ),
    (
        "semi-annually",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-01,07-01 00:00:00",
        ["2026-06-30T22:00:00Z", "2026-12-31T23:00:00Z", "2027-06-30T22:00:00Z", "2027-12-31T23:00:00Z"],
    ),
    (
        "semiannually",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-01,07-01 00:00:00",
        ["2026-06-30T22:00:00Z", "2026-12-31T23:00:00Z", "2027-06-30T22:00:00Z", "2027-12-31T23:00:00Z"],
    ),
    (
        "yearly",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-01-01 00:00:00",
        ["2026-12-31T23:00:00Z", "2027-12-31T23:00:00Z", "2028-12-31T23:00:00Z", "2029-12-31T23:00:00Z"],
    ),
    (
        "*:2/3",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-* *:02/3:00",
        ["2026-01-01T00:02:00Z", "2026-01-01T00:05:00Z", "2026-01-01T00:08:00Z", "2026-01-01T00:11:00Z"],
    ),
    (
        "9..11,13:00,30",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-* 09..11,13:00,30:00",
        ["2026-01-01T08:00:00Z", "2026-01-01T08:30:00Z", "2026-01-01T09:00:00Z", "2026-01-01T09:30:00Z"],
    ),
    (
        "1..3-1..3 1..3:1..3",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-01..03-01..03 01..03:01..03:00",
        ["2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z", "2026-01-01T01:01:00Z"],
    ),
    (
        "*-*~1 Utc",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*~01 00:00:00 UTC",
        ["2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z"],
    ),
    (
        "*-*~05,3 ",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*~03,05 00:00:00",
        ["2026-01-26T23:00:00Z", "2026-01-28T23:00:00Z", "2026-02-23T23:00:00Z", "2026-02-25T23:00:00Z"],
    ),
    (
        "*-02~01",
        "Europe/Berlin",
        "2027-01-01T00:00",
        "*-02~01 00:00:00",
        ["2027-02-27T23:00:00Z", "2028-02-28T23:00:00Z", "2029-02-27T23:00:00Z", "2030-02-27T23:00:00Z"],
    ),
    (
        "Mon 2027-05~01..07 UTC",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Mon 2027-05~01..07 00:00:00 UTC",
        ["2027-05-31T00:00:00Z"],
    ),
    (
        "Mon 2027-05~07/1 UTC",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "Mon 2027-05~07/1 00:00:00 UTC",
        ["2027-05-31T00:00:00Z"],
    ),
    (
        # systemd names the last value a repeated range reaches: 5, 7, 9.
        "*:5..10/2",
        "America/New_York",
        "2026-03-08T06:00",
        "*-*-* *:05..09/2:00",
        ["2026-03-08T06:05:00Z", "2026-03-08T06:07:00Z", "2026-03-08T06:09:00Z", "2026-03-08T07:05:00Z"],
    ),
    (
        "*-*-* 8..20/4:00",
        "Europe/Berlin",
        "2026-01-01T00:00",
        "*-*-* 08..20/4:00:00",
        ["2026-01-01T07:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T15:00:00Z", "2026-01-01T19:00:00Z"],
    ),
    (
        "Sun 16:00:00",
        "Europe/Paris",
        "2026-02-21T08:00",
        "Sun *-*-* 16:00:00",
        ["2026-02-22T15:00:00Z", "2026-03-01T15:00:00Z", "2026-03-08T15:00:00Z", "2026-03-15T15:00:00Z"],
    ),
    ("2026..2027-*-* 00:00", "Europe/Berlin", "2027-12-30T00:00", "2026..2027-*-* 00:00:00", ["2027-12-30T23:00:00Z"]),
]


def _spec(text: str, machine_zone: str, base: datetime) -> ScheduleSpec:
    calendar = parse_calendar(text)
    rule = calendar_rule(calendar)
    zone = calendar.zone or machine_zone
    # From the day before the base (the year's first day when its years are bounded).
    start = f"{rule.first_year}-01-01T00:00:00" if rule.first_year is not None else f"{base.date()}T00:00:00"
    document = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "t",
        "revision": 1,
        "timeZone": zone,
        "rule": rule.rule,
        "start": start,
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
    }
    if rule.last_year is not None:
        document["end"] = f"{rule.last_year}-12-31T23:59:59"
    return parse_spec(document)


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def _next(spec: ScheduleSpec, base: datetime, count: int) -> list[str]:
    rows = build_preview(spec, base, count=count + 5).rows
    runs = [r.resolved for r in rows if r.runnable and r.resolved is not None and r.resolved > base]
    return [r.strftime("%Y-%m-%dT%H:%M:%SZ") for r in runs[:count]]


@pytest.mark.parametrize(("text", "zone", "base", "normalized", "expected"), TABLE, ids=[row[0] for row in TABLE])
def test_the_rule_runs_when_systemd_does(text: str, zone: str, base: str, normalized: str, expected: list[str]) -> None:
    assert parse_calendar(text).normalized == normalized
    start = _utc(base + "Z")
    assert _next(_spec(text, zone, start), start, len(expected)) == expected


@pytest.mark.parametrize(
    ("text", "zone", "lo", "hi", "expected"),
    [
        # Clocks jump forward: 02:30 never exists, systemd runs nothing (gapPolicy SKIP).
        ("*-*-* 02:30", "Europe/Berlin", "2026-03-28T12:00Z", "2026-03-30T12:00Z", ["2026-03-30T00:30"]),
        # Clocks fall back: 02:30 happens twice, systemd runs the first (foldPolicy FIRST_ONLY).
        ("*-*-* 02:30", "Europe/Berlin", "2026-10-24T12:00Z", "2026-10-26T00:00Z", ["2026-10-25T00:30"]),
        (
            "*:0/30",
            "Europe/Berlin",
            "2026-10-25T00:00Z",
            "2026-10-25T03:00Z",
            ["2026-10-25T00:30", "2026-10-25T02:00", "2026-10-25T02:30"],
        ),
        (
            "*:0/15",
            "America/New_York",
            "2026-11-01T05:00Z",
            "2026-11-01T07:30Z",
            ["2026-11-01T05:15", "2026-11-01T05:30", "2026-11-01T05:45", "2026-11-01T07:00", "2026-11-01T07:15"],
        ),
        (
            "*:0/30",
            "Europe/Berlin",
            "2026-03-29T00:00Z",
            "2026-03-29T02:30Z",
            ["2026-03-29T00:30", "2026-03-29T01:00", "2026-03-29T01:30", "2026-03-29T02:00"],
        ),
    ],
)
def test_the_model_of_systemd_at_a_clock_change(text: str, zone: str, lo: str, hi: str, expected: list[str]) -> None:
    """The side-by-side's systemd runs, at the changes where systemd-analyze was asked (the table)."""
    runs = elapses(parse_calendar(text), get_zone(zone), _utc(lo), _utc(hi))
    after = [r for r in runs if r > _utc(lo)]
    assert [r.strftime("%Y-%m-%dT%H:%M") for r in after] == expected


def test_a_zone_with_a_dash() -> None:
    calendar = parse_calendar("Mon 09:00 America/Port-au-Prince")
    assert (calendar.zone, calendar.normalized) == (
        "America/Port-au-Prince",
        "Mon *-*-* 09:00:00 America/Port-au-Prince",
    )
    assert parse_calendar("Mon *-12-24").days.values == frozenset({24})


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("test", "'test' is not a weekday"),
        ("7", "neither a date (MM-DD) nor a time"),
        ("121212:1:2", "hour 121212 is out of range 0-23"),
        ("Fri..Mon", "runs backwards"),
        ("*-04-31", "never runs"),
        ("00:00:1.5", "fractions of a second"),
        ("*-*-* *:*:*", "every second"),
        ("2026/2-01-01", "years repeated without end"),
        ("2026,2028-01-01", "not one unbroken run"),
        ("*/2:00", "repeats from a value, not from *"),
        ("Mon 09:00 Mars/Olympus", "neither a date, a time nor a time zone"),
        ("", "an empty calendar expression"),
    ],
)
def test_refused_with_the_reason(text: str, why: str) -> None:
    with pytest.raises(CalendarError, match=re.escape(why)):
        calendar_rule(parse_calendar(text))


_ANALYZE = shutil.which("systemd-analyze")


def _analyze(text: str, zone: str, base: str, count: int) -> tuple[str, list[str]]:
    assert _ANALYZE is not None
    found = subprocess.run(
        [_ANALYZE, "calendar", f"--iterations={count}", f"--base-time={base.replace('T', ' ')} UTC", text],
        env={**os.environ, "TZ": zone, "LC_ALL": "C"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    normalized = re.search(r"Normalized form: (.*)", found)
    assert normalized is not None
    utc = re.findall(r"\(in UTC\): \w+ (\S+) (\S+) UTC", found)
    return normalized.group(1), [f"{d}T{t}Z" for d, t in utc]


@pytest.mark.skipif(_ANALYZE is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize(("text", "zone", "base", "normalized", "expected"), TABLE, ids=[row[0] for row in TABLE])
def test_systemd_analyze_agrees(text: str, zone: str, base: str, normalized: str, expected: list[str]) -> None:
    """systemd itself, where installed: the same normalized form and the same next elapses."""
    found, instants = _analyze(text, zone, base, len(expected) or 1)
    assert found == normalized
    start = _utc(base + "Z")
    assert _next(_spec(text, zone, start), start, len(instants)) == instants
