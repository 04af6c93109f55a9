"""The zone's changes read from the wall clock in one pass are the changes the instant-by-instant
scan finds (every 12 hours, bisected), in the zones whose clocks misbehave most, over centuries;
and a year's offset bounds, read the same way, are those of the changes the scan lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.recurrence.expand import _offset_bounds
from core.time.zones import _scan, get_zone, offset_at, transitions

ZONES = [
    "Australia/Lord_Howe",  # half an hour of DST
    "Antarctica/Troll",  # +0 to +2
    "Pacific/Apia",  # the lost day of 2011
    "Pacific/Chatham",  # +12:45 / +13:45
    "Europe/Dublin",  # negative DST in the data
    "Africa/Casablanca",  # DST paused for Ramadan, several changes a year
    "America/St_Johns",  # a double summer time in 1988
    "Asia/Kolkata",  # no DST since 1945
]


@pytest.mark.parametrize("zone_name", ZONES)
@pytest.mark.parametrize(
    ("start", "end"),
    [
        pytest.param(datetime(1880, 1, 1, tzinfo=UTC), datetime(2040, 1, 1, tzinfo=UTC), id="1880_2040"),
        pytest.param(datetime(2011, 12, 29, 9, tzinfo=UTC), datetime(2012, 1, 2, tzinfo=UTC), id="four_days"),
        pytest.param(datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 2, 23, tzinfo=UTC), id="two_days"),
        pytest.param(datetime(2400, 1, 1, tzinfo=UTC), datetime(2460, 1, 1, tzinfo=UTC), id="rule_years"),
    ],
)
def test_the_wall_clock_pass_finds_what_the_instant_scan_finds(zone_name: str, start: datetime, end: datetime) -> None:
    zone = get_zone(zone_name)
    assert transitions(zone, start, end) == _scan(zone, start, end, 100_000)


@pytest.mark.parametrize("zone_name", [*ZONES, "UTC", "Pacific/Kiritimati"])
@pytest.mark.parametrize("year", [1900, 1988, 2011, 2026, 2300])
def test_offset_bounds_are_those_of_the_scanned_changes(zone_name: str, year: int) -> None:
    zone = get_zone(zone_name)
    lo = datetime(year, 1, 1, tzinfo=UTC) - timedelta(days=3)
    hi = datetime(year + 1, 1, 1, tzinfo=UTC) + timedelta(days=3)
    offsets = {offset_at(zone, lo)} | {tr.offset_after for tr in _scan(zone, lo, hi, 100_000)}
    assert _offset_bounds(zone, year) == (min(offsets), max(offsets))
