"""What the zone picker shows: offsets and abbreviations now, the yearly DST
pattern, notes on recent rule changes, and the system's zone name (searching
is tested in test_zone_search.py).

Expectations are real zones' rules as published in the tz database, read at a
fixed instant.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.errors import ZoneError
from core.time.zone_info import (
    choice_for,
    offset_label,
    rules_note,
    signed_offset,
    system_zone_name,
    wall_time_hint,
    zone_choices,
    zone_summary,
)

WINTER = datetime(2027, 1, 15, 12, 0, tzinfo=UTC)
SUMMER = datetime(2027, 7, 15, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "now", "label"),
    [
        pytest.param("America/New_York", WINTER, "America/New_York — EST −05:00", id="new_york_winter"),
        pytest.param("America/New_York", SUMMER, "America/New_York — EDT −04:00", id="new_york_summer"),
        pytest.param("Australia/Melbourne", WINTER, "Australia/Melbourne — AEDT +11:00", id="melbourne_jan"),
        pytest.param("Asia/Kolkata", WINTER, "Asia/Kolkata — IST +05:30", id="kolkata_half_hour"),
        pytest.param("Asia/Kathmandu", WINTER, "Asia/Kathmandu — +05:45", id="kathmandu_numeric_abbreviation"),
        pytest.param("America/Sao_Paulo", WINTER, "America/Sao_Paulo — −03:00", id="sao_paulo_numeric"),
        pytest.param("UTC", SUMMER, "UTC — UTC +00:00", id="utc"),
    ],
)
def test_choice_label_shows_abbreviation_and_offset_at_now(name: str, now: datetime, label: str) -> None:
    assert choice_for(name, now).label == label
    assert next(c for c in zone_choices(now) if c.name == name).label == label


def test_choices_hold_locations_and_utc_but_no_aliases() -> None:
    names = {c.name for c in zone_choices(WINTER)}
    assert {"UTC", "America/New_York", "Europe/Kyiv", "America/Nuuk"} <= names
    assert not names & {"US/Eastern", "EST5EDT", "Europe/Kiev", "Etc/GMT+5", "America/Godthab"}


@pytest.mark.parametrize(
    ("name", "now", "summary"),
    [
        pytest.param("America/New_York", WINTER, "EST −05:00 · DST Mar–Nov", id="new_york"),
        pytest.param("America/New_York", SUMMER, "EDT −04:00 · DST Mar–Nov", id="new_york_summer"),
        pytest.param("Europe/Berlin", WINTER, "CET +01:00 · DST Mar–Oct", id="berlin"),
        pytest.param("Australia/Melbourne", WINTER, "AEDT +11:00 · DST Oct–Apr", id="melbourne_southern"),
        pytest.param("Australia/Lord_Howe", WINTER, "+11:00 · DST Oct–Apr (+30 min)", id="lord_howe_half_hour"),
        pytest.param("Asia/Tokyo", WINTER, "JST +09:00 · no DST", id="tokyo_no_dst"),
        pytest.param("America/Mexico_City", WINTER, "CST −06:00 · no DST", id="mexico_city_abolished"),
        pytest.param("UTC", WINTER, "UTC +00:00 · no DST", id="utc"),
    ],
)
def test_zone_summary_line(name: str, now: datetime, summary: str) -> None:
    assert zone_summary(name, now) == summary


@pytest.mark.parametrize(
    ("name", "note"),
    [
        pytest.param(
            "America/Mexico_City",
            "no DST since 2022: CST −06:00 all year (clocks last changed on 2022-10-30)",
            id="mexico_city_abolished_2022",
        ),
        pytest.param(
            "America/Nuuk", "rules changed in 2023: standard time moved from −03:00 to −02:00", id="nuuk_2023"
        ),
        pytest.param(
            "Asia/Almaty",
            "rules changed in 2024: on 2024-03-01 the offset moved from +06:00 to +05:00",
            id="almaty_2024",
        ),
        pytest.param(
            "America/Sao_Paulo",
            "no DST since 2019: −03:00 all year (clocks last changed on 2019-02-17)",
            id="sao_paulo_abolished_2019",
        ),
        pytest.param("Africa/Cairo", "DST since 2023: clocks now change twice a year", id="cairo_dst_back_2023"),
        pytest.param("America/New_York", None, id="new_york_unchanged"),
        pytest.param("Europe/Berlin", None, id="berlin_unchanged"),
        pytest.param("Asia/Tokyo", None, id="tokyo_no_dst_for_decades"),
        pytest.param("UTC", None, id="utc"),
    ],
)
def test_rules_note_for_recent_changes(name: str, note: str | None) -> None:
    assert rules_note(name, WINTER) == note


def test_rules_note_fades_once_the_change_is_old() -> None:
    assert rules_note("America/Mexico_City", datetime(2040, 1, 1, tzinfo=UTC)) is None


def test_unknown_zone_raises_zone_error() -> None:
    with pytest.raises(ZoneError):
        zone_summary("Mars/Olympus", WINTER)
    with pytest.raises(ZoneError):
        rules_note("EST", WINTER)


@pytest.mark.parametrize(
    ("offset", "text"),
    [
        pytest.param(timedelta(hours=-5), "−05:00", id="negative"),
        pytest.param(timedelta(hours=5, minutes=45), "+05:45", id="positive_minutes"),
        pytest.param(timedelta(0), "+00:00", id="zero"),
        pytest.param(timedelta(hours=-4, minutes=-56, seconds=-2), "−04:56:02", id="local_mean_time"),
    ],
)
def test_signed_offset_uses_a_true_minus(offset: timedelta, text: str) -> None:
    assert signed_offset(offset) == text


def test_offset_label_drops_numeric_abbreviations() -> None:
    assert offset_label("-03", timedelta(hours=-3)) == "−03:00"
    assert offset_label("EST", timedelta(hours=-5)) == "EST −05:00"


@pytest.fixture
def localtime(tmp_path: Path):
    def link(target: str) -> Path:
        path = tmp_path / "localtime"
        path.symlink_to(target)
        return path

    return link


@pytest.mark.parametrize(
    ("tz", "link", "expected"),
    [
        pytest.param("Europe/Paris", None, "Europe/Paris", id="tz_name"),
        pytest.param(":America/Chicago", None, "America/Chicago", id="tz_colon_prefix"),
        pytest.param("/usr/share/zoneinfo/Asia/Tokyo", None, "Asia/Tokyo", id="tz_file_path"),
        pytest.param("", "/usr/share/zoneinfo/Australia/Melbourne", "Australia/Melbourne", id="localtime_link"),
        pytest.param("EST5EDT", "/usr/share/zoneinfo/Europe/Oslo", "Europe/Oslo", id="posix_tz_falls_to_link"),
        pytest.param("", "/usr/share/zoneinfo/Etc/UTC", "UTC", id="etc_utc_is_utc"),
        pytest.param("", "/usr/share/zoneinfo/Nowhere/Town", "UTC", id="unknown_link_target"),
        pytest.param("", None, "UTC", id="nothing_set"),
    ],
)
def test_system_zone_name(tz: str, link: str | None, expected: str, localtime, tmp_path: Path) -> None:
    path = localtime(link) if link else tmp_path / "missing"
    assert system_zone_name({"TZ": tz}, path) == expected


def test_wall_time_hint_in_a_fold() -> None:
    hint = wall_time_hint(datetime(2026, 11, 1, 1, 30), "America/New_York")
    assert hint == "EDT −04:00 · 2026-11-01 05:30 UTC · happens twice (clocks fall back)"


def test_wall_time_hint_in_a_gap_and_plain() -> None:
    assert wall_time_hint(datetime(2027, 3, 14, 2, 30), "America/New_York") == (
        "does not exist in America/New_York (clocks jump forward)"
    )
    assert wall_time_hint(datetime(2027, 3, 15, 2, 30), "America/New_York") == "EDT −04:00 · 2027-03-15 06:30 UTC"
    assert wall_time_hint(None, "UTC") == "" and wall_time_hint(datetime(2027, 1, 1), "Mars/X") == ""
