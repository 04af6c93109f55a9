"""How the monitor writes instants: real zones' transitions, zones without
abbreviations, and ages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QLocale

from scheduler_gui.monitor.timetext import age_text, local_text, nominal_text, utc_text


def _day(year: int, month: int, day: int) -> str:
    return QLocale().dayName(datetime(year, month, day).isoweekday(), QLocale.FormatType.ShortFormat)


LOCAL = [
    ("new_york_before_spring", "America/New_York", "2027-03-14T06:59:00Z", (2027, 3, 14), "01:59 EST −05:00"),
    ("new_york_after_spring", "America/New_York", "2027-03-14T07:00:00Z", (2027, 3, 14), "03:00 EDT −04:00"),
    ("new_york_fold_first", "America/New_York", "2026-11-01T05:30:00Z", (2026, 11, 1), "01:30 EDT −04:00"),
    ("new_york_fold_second", "America/New_York", "2026-11-01T06:30:00Z", (2026, 11, 1), "01:30 EST −05:00"),
    ("lord_howe_30min_summer", "Australia/Lord_Howe", "2027-01-10T00:00:00Z", (2027, 1, 10), "11:00 UTC+11:00"),
    ("lord_howe_30min_winter", "Australia/Lord_Howe", "2027-07-10T00:00:00Z", (2027, 7, 10), "10:30 UTC+10:30"),
    ("sao_paulo_numeric", "America/Sao_Paulo", "2027-03-01T12:00:00Z", (2027, 3, 1), "09:00 UTC−03:00"),
    ("kolkata_half_hour", "Asia/Kolkata", "2027-03-01T12:00:00Z", (2027, 3, 1), "17:30 IST +05:30"),
    ("utc", "UTC", "2027-03-01T12:00:00Z", (2027, 3, 1), "12:00 UTC+00:00"),
]


@pytest.mark.parametrize(("zone", "instant", "day", "expected"), [c[1:] for c in LOCAL], ids=[c[0] for c in LOCAL])
def test_local_text(zone: str, instant: str, day: tuple[int, int, int], expected: str) -> None:
    at = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    y, m, d = day
    assert local_text(at, zone) == f"{_day(y, m, d)} {y:04d}-{m:02d}-{d:02d} {expected}"


def test_missing_values_and_unknown_zones() -> None:
    at = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    assert local_text(None, "UTC") == "—" and utc_text(None) == "—"
    assert local_text(at, "Mars/Olympus_Mons") == "2027-03-01 12:00Z"
    assert nominal_text("2026-11-01T01:30:00", 1) == "2026-11-01 01:30 (2nd)"
    assert nominal_text("2026-11-01T01:30:00", 0) == "2026-11-01 01:30"


AGES = [
    ("seconds", timedelta(seconds=42), "42 s"),
    ("minutes", timedelta(minutes=3, seconds=59), "3 min"),
    ("hours", timedelta(hours=2, minutes=5), "2 h 05 min"),
    ("days", timedelta(days=4, hours=3, minutes=59), "4 d 3 h"),
    ("float_seconds", 7260.0, "2 h 01 min"),
    ("none", None, "—"),
]


@pytest.mark.parametrize(("age", "expected"), [a[1:] for a in AGES], ids=[a[0] for a in AGES])
def test_age_text(age: timedelta | float | None, expected: str) -> None:
    assert age_text(age) == expected
